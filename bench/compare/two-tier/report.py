#!/usr/bin/env python3
"""report.py: the tables of bench/compare/two-tier.sh. Reads
raw/<layout>.<coll>.<lib>.<band>.<run>.json (JSON lines, one per size, from tiercc-perf,
mpi_coll_bench or gloo_bench) and raw/<layout>.<coll>.<lib>.counters ("d<D>:<iface> bytes sent"
per launch), keeps the best launch per size, and writes one table per (layout, collective) to
table.md and results.json in --out (table.md is also printed), with the CPU time every rank
spent on the best launch's calls (getrusage, user and system) per GB of the collective's size."""
import argparse
import collections
import glob
import json
import os
import re

DOMAINS, WORLD = 2, 4
RANKS_PER_DOMAIN = WORLD // DOMAINS
LABELS = {
    "tiercc": "tiercc",
    "tiercc-prev": "tiercc previous",
    "tiercc-linear": "tiercc linear",
    "openmpi": "Open MPI tuned",
    "openmpi-rabenseifner": "Open MPI Rabenseifner",
    "openmpi-han": "Open MPI HAN",
    "openmpi-han-default": "Open MPI HAN (stock)",
    "mpich": "MPICH",
    "gloo-hd": "Gloo halving-doubling",
    "gloo-ring": "Gloo ring-chunked",
    "gloo": "Gloo",
}
# What each peer does on this network (the counters below the tables show the rails carried it).
NOTES = {
    "tiercc": "shared memory inside a domain, TCP between domains, each rank on its own rail address; the cost "
    "model picks the algorithm (docs/design.md)",
    "tiercc-prev": "tiercc as above, from the --previous build, launched in turns with the others",
    "tiercc-linear": "tiercc as above, with the linear all-to-all asked for (TIERCC_ALGO=alltoall:linear: every "
    "block straight from buffer to buffer across domains, no packing)",
    "openmpi": "ob1 + TCP BTL between the two domain nodes (btl_tcp_if_include 198.18.0.0/16: every rank opens "
    "one TCP module per rail and stripes large messages over both), vader inside a node; tuned's fixed rules; single link: one address per node (Open MPI 4.1 cannot use an interface with two)",
    "openmpi-rabenseifner": "as Open MPI tuned, allreduce forced to Rabenseifner (coll_tuned_allreduce_algorithm 6)",
    "openmpi-han": "HAN (node-aware: tuned inside a node, adapt between nodes, 1 MiB segments)",
    "openmpi-han-default": "HAN with its stock settings (libnbc between nodes, 64 KiB segments)",
    "mpich": "ch4:ucx, UCX TCP transport offered both rail devices (UCX_NET_DEVICES), ch4 shared memory inside a "
    "node; UCX puts all traffic to one peer on one TCP lane (one rail), and which rail varies by launch (a test "
    "launch used rail 1 only; see the counters)",
    "gloo-hd": "TCP device on the rank's rail address; in place; cross-domain partners share a rail",
    "gloo-ring": "TCP device on the rank's rail address; in place; the kernel routes by destination, so "
    "both cross-domain ring hops use rail 0",
    "gloo": "gloo::alltoall (posts all n-1 sends and receives at once, unbound buffers), TCP device on the rank's "
    "rail address, out of place. A connection is made from the address of the interface that reaches the peer, "
    "so it stays on the rail of the address it was made to: 3 of the 4 cross-domain pairs use rail 0 (see the "
    "counters); pairs inside a domain use loopback TCP. Slow from 16 MiB even on 127.0.0.1 without rate limits "
    "(its allreduce is not), so not the links' doing; upstream pytorch/gloo#335 reports a slow alltoall too",
}
# Size and busbw conventions (nccl-tests'), the same in tiercc-perf, mpi_coll_bench and gloo_bench.
CONVENTIONS = {
    "allreduce": "size = buffer per rank; busbw = algbw x 2(n-1)/n",
    "alltoall": "size = total bytes each rank sends (size/n to each rank, itself included); "
    "busbw = algbw x (n-1)/n",
}


def parse_args():
    p = argparse.ArgumentParser()
    for name in ("raw", "out", "rate", "layouts", "command", "versions", "host"):
        p.add_argument("--" + name, required=True)
    p.add_argument("--columns", action="append", required=True, help="COLL:LIB,LIB,... (once per collective)")
    p.add_argument("--seconds", type=int, default=0)
    p.add_argument("--repeat", type=int, default=1)
    p.add_argument("--iters", type=int, default=1)
    for name in ("load", "skipped", "failed"):
        p.add_argument("--" + name, action="append", default=[])
    return p.parse_args()


def link_bytes_per_s(rate):
    number, unit = re.fullmatch(r"(\d+)(kbit|mbit|gbit)", rate).groups()
    return int(number) * {"kbit": 1e3, "mbit": 1e6, "gbit": 1e9}[unit] / 8


def bound_gbs(layout, coll, rate):
    """The busbw the links allow. Each domain of k ranks has L links (k rails, or 1), each carrying
    the link rate per direction. allreduce: every domain sends at least 2(D-1)/D x S out, so
    t >= 2(D-1)/D x S / (L link). alltoall: each of the k ranks sends S/N to each of the N-k ranks
    outside, so t >= k(N-k) S/N / (L link). busbw = S/t x the collective's bus factor."""
    links = RANKS_PER_DOMAIN if layout == "rails" else 1
    out_of_domain = {"allreduce": 2 * (DOMAINS - 1) / DOMAINS,
                     "alltoall": RANKS_PER_DOMAIN * (WORLD - RANKS_PER_DOMAIN) / WORLD}[coll]
    factor = {"allreduce": 2 * (WORLD - 1) / WORLD, "alltoall": (WORLD - 1) / WORLD}[coll]
    return links * link_bytes_per_s(rate) / out_of_domain * factor / 1e9


def load_results(raw):
    """{(layout, coll, lib): {bytes: {"busbw": best, "time_us": best, "wrong": total, "launches": n}}}"""
    best = collections.defaultdict(dict)
    for path in sorted(glob.glob(os.path.join(raw, "*.json"))):
        key = tuple(os.path.basename(path).split(".")[:3])
        with open(path) as f:
            for line in f:
                if not line.strip():
                    continue
                row = json.loads(line)
                cell = best[key].setdefault(row["bytes"], {"busbw": 0.0, "time_us": float("inf"),
                                                                     "wrong": 0, "launches": 0, "cpu_us": None})
                cell["busbw"] = max(cell["busbw"], row["oop_busbw"])
                if row["oop_time_us"] < cell["time_us"]:  # the CPU time of the launch kept
                    cell["cpu_us"] = row.get("oop_cpu_us")
                cell["time_us"] = min(cell["time_us"], row["oop_time_us"])
                cell["wrong"] += row.get("wrong", 0) or 0
                cell["launches"] += 1
    return best


def load_counters(raw):
    """{(layout, coll, lib): {"d0:rail0": bytes sent, ...}} summed over all launches."""
    sums = collections.defaultdict(collections.Counter)
    for path in glob.glob(os.path.join(raw, "*.counters")):
        key = tuple(os.path.basename(path).split(".")[:3])
        with open(path) as f:
            for line in f:
                iface, sent = line.split()
                sums[key][iface] += int(float(sent))
    return sums


def size_label(n):
    return f"{n >> 20} MiB" if n >= 1 << 20 else f"{n} B"


def size_table(key, columns, best, bound):
    """The markdown rows and results.json rows of one (layout, collective) table; key = (layout, coll)."""
    cells_of = {c: best.get(key + (c,), {}) for c in columns}
    sizes = sorted({s for cells in cells_of.values() for s in cells})
    peers = [c for c in columns if c not in ("tiercc", "tiercc-prev", "tiercc-linear")]
    head = ["size"] + [LABELS[c] for c in columns] + ["bound", "tiercc % of bound", "tiercc / best peer"]
    if "tiercc-prev" in columns:
        head.append("tiercc time / previous")
    if "tiercc-linear" in columns:
        head.append("tiercc linear / best peer")
    lines = ["| " + " | ".join(head) + " |", "|" + "---:|" * len(head)]
    rows = []
    for size in sizes:
        small = size < 1 << 20  # reported as latency (us), lower is better
        unit = "time_us" if small else "busbw"
        values = {c: cells_of[c].get(size, {}).get(unit) for c in columns}
        cells = [size_label(size)]
        for c in columns:
            v, wrong = values[c], cells_of[c].get(size, {}).get("wrong", 0)
            cells.append("—" if v is None else (f"{v:.1f} us" if small else f"{v:.3f}") + (" WRONG" if wrong else ""))
        peer_values = [values[c] for c in peers if values[c] is not None]
        t = values.get("tiercc")
        if small:
            cells += ["—", "—", f"{min(peer_values) / t:.2f}x" if t and peer_values else "—"]
        else:
            cells += [f"{bound:.3f}", f"{100 * t / bound:.0f}%" if t else "—",
                      f"{t / max(peer_values):.2f}x" if t and peer_values and max(peer_values) > 0 else "—"]
        if "tiercc-prev" in columns:
            p = values.get("tiercc-prev")
            cells.append(f"{(t / p if small else p / t):.3f}" if t and p else "—")
        if "tiercc-linear" in columns:
            v = values.get("tiercc-linear")
            cells.append(f"{v / max(peer_values):.2f}x" if v and not small and peer_values and max(peer_values) > 0
                         else "—")
        lines.append("| " + " | ".join(cells) + " |")
        rows.append({"bytes": size, "unit": "us" if small else "GB/s busbw", "values": values,
                     "bound": None if small else bound})
    return lines, rows


def cpu_table(key, columns, best):
    """CPU seconds per GB moved (the collective's size; below 1 MiB CPU us per call), of the launch kept
    for each size, every rank's added up; lower is better."""
    cells_of = {c: best.get(key + (c,), {}) for c in columns}
    sizes = sorted({s for cells in cells_of.values() for s in cells})
    peers = [c for c in columns if c not in ("tiercc", "tiercc-prev", "tiercc-linear")]
    lines = ["| size | " + " | ".join(LABELS[c] for c in columns) + " | tiercc / least of the peers |",
             "|" + "---:|" * (len(columns) + 2)]
    rows = []
    for size in sizes:
        small = size < 1 << 20  # a latency point: CPU time per call, not per GB
        per_gb = {}
        for c in columns:
            cpu = cells_of[c].get(size, {}).get("cpu_us")
            per_gb[c] = None if cpu is None else cpu if small else cpu * 1e-6 / (size / 1e9)
        peer_values = [per_gb[c] for c in peers if per_gb[c] is not None]
        t = per_gb.get("tiercc")
        unit = " us/call" if small else ""
        cells = [size_label(size)] + ["—" if per_gb[c] is None else f"{per_gb[c]:.3g}{unit}" for c in columns]
        cells.append(f"{t / min(peer_values):.2f}x" if t is not None and peer_values and min(peer_values) > 0 else "—")
        lines.append("| " + " | ".join(cells) + " |")
        rows.append({"bytes": size, "cpu_us_per_call" if small else "cpu_s_per_gb": per_gb})
    return lines, rows


def counter_table(key, columns, counters):
    ifaces = sorted({i for c in columns for i in counters.get(key + (c,), {})})
    lines = ["| library | " + " | ".join(f"{i} sent (MB)" for i in ifaces) + " |", "|---|" + "---:|" * len(ifaces)]
    for c in columns:
        sent = counters.get(key + (c,), {})
        lines.append(f"| {LABELS[c]} | " + " | ".join(f"{sent.get(i, 0) / 1e6:.0f}" for i in ifaces) + " |")
    return lines


def section(layout, coll, columns, best, counters, rate):
    """One (layout, collective): its markdown and its results.json entry."""
    bound = bound_gbs(layout, coll, rate)
    title = "rails (one link per local rank)" if layout == "rails" else "single link per domain"
    key = (layout, coll)
    lines, rows = size_table(key, columns, best, bound)
    md = [f"## {coll} f32, {title}: bound {bound:.3f} GB/s busbw", "", f"{CONVENTIONS[coll]}", ""] + lines
    cpu_lines, cpu_rows = cpu_table(key, columns, best)
    md += ["", "CPU seconds per GB of the collective's size, at 8 B CPU us per call (every rank's user and system "
           "time during the timed calls, getrusage, added up; lower is better):", ""] + cpu_lines
    md += ["", "Bytes each interface sent, all launches:", ""] + counter_table(key, columns, counters) + [""]
    entry = {"layout": layout, "coll": coll, "convention": CONVENTIONS[coll], "bound_gbs": bound, "rows": rows,
             "cpu": cpu_rows, "bytes_sent": {c: dict(counters.get(key + (c,), {})) for c in columns}}
    return md, entry


def header(a, colls):
    return [f"# {' and '.join(colls)} f32, {DOMAINS} domains x {RANKS_PER_DOMAIN} ranks, two-tier test network, "
            f"{a.rate} per link", "", f"command: `{a.command}`  ", f"versions: {a.versions}  ",
            f"host: {a.host}; {a.seconds} s; best of {a.repeat} launches per size; {a.iters} timed calls per size "
            f"from 1 MiB, {20 * a.iters} at 8 B (allreduce only)  ",
            "load average: " + "; ".join(a.load) + "  ",
            "busbw in GB/s, nccl-tests' sizes and bus factors (each table says which), the same for every library; "
            "out of place except Gloo's allreduce (in place); 8 B: time per call; tiercc / best peer: busbw ratio, "
            "at 8 B the best peer's time over tiercc's (above 1: tiercc is faster)", ""]


def main():
    a = parse_args()
    columns = {}  # coll: [lib column, ...], in the order of --columns
    for spec in a.columns:
        coll, libs = spec.split(":", 1)
        columns[coll] = [c for c in libs.split(",") if c]
    best, counters = load_results(a.raw), load_counters(a.raw)
    md = header(a, list(columns))
    all_columns = list(dict.fromkeys(c for cs in columns.values() for c in cs))
    result = {"command": a.command, "versions": a.versions, "rate": a.rate, "host": a.host, "load": a.load,
              "repeat": a.repeat, "iters": a.iters, "skipped": a.skipped, "failed": a.failed,
              "notes": {c: NOTES[c] for c in all_columns}, "tables": []}
    for layout in [x for x in a.layouts.split(",") if x]:
        for coll, cols in columns.items():
            lines, entry = section(layout, coll, cols, best, counters, a.rate)
            md += lines
            result["tables"].append(entry)
    md += ["What each library does here:", ""] + [f"- {LABELS[c]}: {NOTES[c]}" for c in all_columns]
    if a.skipped:
        md += ["", "Left out:", ""] + [f"- {s}" for s in a.skipped]
    if a.failed:
        md += ["", "Failed launches:", ""] + [f"- {s}" for s in a.failed]
    text = "\n".join(md) + "\n"
    with open(os.path.join(a.out, "table.md"), "w") as f:
        f.write(text)
    with open(os.path.join(a.out, "results.json"), "w") as f:
        json.dump(result, f, indent=1)
    print(text)


if __name__ == "__main__":
    main()
