#!/usr/bin/python3
"""tiercc-trace: draws a tiercc timeline (the trace.json tiercc-run --trace merges, or one rank's
file) as a PNG: a band per rank with a lane per tier, each step part a box coloured by its kind,
and the operations as bars above. For docs and CI artifacts; open trace.json in Perfetto
(ui.perfetto.dev) or chrome://tracing to explore it instead.

  tiercc-trace TRACE.json -o timeline.png [--call "allreduce #2"] [--from MS --to MS]
"""
import argparse
import json
import sys


def load(path):
    with open(path) as f:
        text = f.read()
    try:
        data = json.loads(text)
    except json.JSONDecodeError:
        # A rank's own file: "[" and events with trailing commas, maybe cut short.
        data = json.loads("[" + text.strip().lstrip("[").rstrip().rstrip(",") + "]")
    return data["traceEvents"] if isinstance(data, dict) else data


def main(argv):
    ap = argparse.ArgumentParser(prog="tiercc-trace", description=__doc__.split("\n\n")[0])
    ap.add_argument("trace", help="trace.json from tiercc-run --trace DIR (or a rank's file)")
    ap.add_argument("-o", "--output", default="timeline.png", help="PNG to write (default timeline.png)")
    ap.add_argument("--call", help='only this operation, as named in the trace (e.g. "allreduce #2")')
    ap.add_argument("--from", dest="start", type=float, help="start of the window, ms from the first event")
    ap.add_argument("--to", dest="end", type=float, help="end of the window, ms from the first event")
    ap.add_argument("--title", help="title above the plot")
    ap.add_argument("--width", type=float, default=14, help="figure width in inches (default 14)")
    args = ap.parse_args(argv)
    try:
        import matplotlib
        matplotlib.use("Agg")
        import matplotlib.pyplot as plt
        from matplotlib.patches import Patch
    except ImportError:
        print("tiercc-trace: needs matplotlib (apt-get install python3-matplotlib)", file=sys.stderr)
        return 2
    try:
        events = load(args.trace)
    except (OSError, ValueError, KeyError) as e:
        print("tiercc-trace: cannot read %s: %s" % (args.trace, e), file=sys.stderr)
        return 2
    spans = [e for e in events if e.get("ph") == "X"]
    names = {e["pid"]: e["args"]["name"] for e in events if e.get("ph") == "M" and e.get("name") == "process_name"}
    if args.call:
        spans = [e for e in spans if e["name"] == args.call or e.get("args", {}).get("call") == args.call]
    if not spans:
        print("tiercc-trace: no spans to draw%s" % (" for " + args.call if args.call else ""), file=sys.stderr)
        return 1
    t0 = min(e["ts"] for e in spans)
    if args.start is not None or args.end is not None:
        lo = t0 + 1000 * (args.start or 0)
        hi = t0 + 1000 * args.end if args.end is not None else float("inf")
        spans = [e for e in spans if e["ts"] + e["dur"] >= lo and e["ts"] <= hi]
    ranks = sorted({e["pid"] for e in spans})
    kinds = sorted({e["name"].replace(" (wait)", "") for e in spans if e.get("cat") == "step"})
    palette = plt.get_cmap("tab20")
    colour = {k: palette(i % 20) for i, k in enumerate(kinds)}
    lanes = 3  # operations, scale-up, scale-out
    fig, ax = plt.subplots(figsize=(args.width, 0.9 + 0.75 * len(ranks)))
    for row, rank in enumerate(ranks):
        top = (len(ranks) - 1 - row) * (lanes + 0.6)
        for e in spans:
            if e["pid"] != rank:
                continue
            x, w = (e["ts"] - t0) / 1000.0, e["dur"] / 1000.0
            if e.get("cat") == "step":
                lane = 1 if e["tid"] == 1 else 0  # scale-up above scale-out
                wait = e["name"].endswith("(wait)")
                ax.broken_barh([(x, w)], (top + lane + 0.1, 0.8), facecolors=colour[e["name"].replace(" (wait)", "")],
                               alpha=0.45 if wait else 1.0, hatch="//" if wait else None, linewidth=0)
            else:
                ax.broken_barh([(x, w)], (top + 2.2, 0.5), facecolors="0.55", linewidth=0)
                if args.call or len(spans) < 400:
                    ax.text(x, top + 2.8, e["name"], fontsize=6, va="bottom")
    ticks, ticklabels = [], []
    for row, rank in enumerate(ranks):
        top = (len(ranks) - 1 - row) * (lanes + 0.6)
        name = names.get(rank, "rank %d" % rank).split(" (")[0]
        ticks += [top + 0.5, top + 1.5, top + 2.45]
        ticklabels += [name + "  scale-out", name + "  scale-up", name + "  operations"]
    ax.set_yticks(ticks)
    ax.set_yticklabels(ticklabels, fontsize=6)
    ax.set_xlabel("ms since the first span")
    ax.set_xlim(left=0)
    handles = [Patch(facecolor=colour[k], label=k) for k in kinds]
    handles.append(Patch(facecolor="white", edgecolor="0.3", hatch="//", label="(wait): completing posted transfers"))
    ax.legend(handles=handles, loc="upper center", bbox_to_anchor=(0.5, -0.08 - 0.2 / max(1, len(ranks))),
              ncol=min(6, len(handles)), fontsize=7, frameon=False)
    ax.set_title(args.title or ("tiercc timeline" + (": " + args.call if args.call else "")), fontsize=9)
    fig.subplots_adjust(left=0.14, right=0.99)
    fig.savefig(args.output, dpi=130, bbox_inches="tight")
    print("tiercc-trace: %d spans of %d ranks drawn into %s" % (len(spans), len(ranks), args.output))
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
