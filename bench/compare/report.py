#!/usr/bin/env python3
"""bench/compare/report.py: joins the JSON lines that run.sh collected (tiercc-perf with
ordinary and with symmetric buffers, mpi_coll_bench, machine_limit) by message size and prints
one busbw table per collective under a machine-limit line; also writes results.json
(everything, for docs and scripts) and table.md (the tables in Markdown)."""
import argparse
import datetime
import json
import statistics
import os
import platform
import sys

PEERS = [("openmpi", "Open MPI"), ("mpich", "MPICH")]
VARIANTS = [("plain", "p"), ("tuned", "t")]
TUNED_MALLOC = "glibc.malloc.mmap_threshold=1073741824:glibc.malloc.trim_threshold=4294967296"


def first_key(record, *names):
    for name in names:
        if record.get(name) is not None:
            return record[name]
    return None


def normalise(record):
    """Maps one JSON line to {bytes, count, time_us, algbw, busbw, wrong}; tolerates the key
    spellings tiercc-perf might end up with (out-of-place preferred, as the MPI side measures)."""
    oop = record.get("oop") if isinstance(record.get("oop"), dict) else {}
    size = first_key(record, "bytes", "size")
    time_us = first_key(record, "oop_time_us", "time_us", "oop_time")
    time_us = oop.get("time_us") if time_us is None else time_us
    busbw = first_key(record, "oop_busbw", "busbw")
    busbw = oop.get("busbw") if busbw is None else busbw
    algbw = first_key(record, "oop_algbw", "algbw")
    algbw = oop.get("algbw") if algbw is None else algbw
    if size is None or time_us is None:
        return None
    return {
        "bytes": int(size),
        "count": first_key(record, "count"),
        "time_us": float(time_us),
        "algbw": None if algbw is None else float(algbw),
        "busbw": None if busbw is None else float(busbw),
        "ip_busbw": first_key(record, "ip_busbw"),
        "ip_time_us": first_key(record, "ip_time_us"),
        "wrong": int(first_key(record, "wrong", "#wrong", "oop_wrong") or 0),
        "extra": {k: v for k, v in record.items()
                  if k.endswith("_bytes") or k in ("algo", "domains")},
    }


def load(raw_dir, coll, lib, variant):
    path = os.path.join(raw_dir, f"{coll}.{lib}.{variant}.jsonl")
    rows = {}
    if not os.path.exists(path):
        return rows
    with open(path) as f:
        for line in f:
            line = line.strip()
            if not line:
                continue
            try:
                row = normalise(json.loads(line))
            except (ValueError, TypeError):
                print(f"report: skipping a line of {path} that is not JSON: {line[:80]}",
                      file=sys.stderr)
                continue
            if row is None or row["bytes"] == 0:  # nccl-tests prints 0 B rows; nothing moved
                continue
            # Several launches: keep the fastest, every launch's time, and the worst #wrong.
            kept = rows.get(row["bytes"])
            samples = (kept["samples_us"] if kept else []) + [row["time_us"]]
            ip_samples = (kept["ip_samples_us"] if kept else []) + (
                [float(row["ip_time_us"])] if row["ip_time_us"] is not None else [])
            wrong = max(row["wrong"], kept["wrong"] if kept else 0)
            if kept is None or row["time_us"] < kept["time_us"]:
                kept = row
            rows[row["bytes"]] = dict(kept, samples_us=samples, ip_samples_us=ip_samples, wrong=wrong)
    return rows


def best_variant(by_variant, size):
    """The faster of plain and tuned malloc at this size, as (letter, row), or (None, None)."""
    best = (None, None)
    for variant, letter in VARIANTS:
        row = by_variant.get(variant, {}).get(size)
        if row and (best[1] is None or row["time_us"] < best[1]["time_us"]):
            best = (letter, row)
    return best


def human(size):
    for unit, shift in (("G", 30), ("M", 20), ("K", 10)):
        if size >= 1 << shift and size % (1 << shift) == 0:
            return f"{size >> shift}{unit}"
    return str(size)


def build_collective(raw_dir, coll):
    tiercc = load(raw_dir, coll, "tiercc", "plain")
    tiercc_sym = load(raw_dir, coll, "tiercc-sym", "plain")
    previous = load(raw_dir, coll, "tiercc-prev", "plain")
    previous_sym = load(raw_dir, coll, "tiercc-prev-sym", "plain")
    peers = {lib: {v: load(raw_dir, coll, lib, v) for v, _ in VARIANTS} for lib, _ in PEERS}
    sizes = set(tiercc) | set(tiercc_sym)
    for by_variant in peers.values():
        for rows in by_variant.values():
            sizes |= set(rows)
    rows = []
    for size in sorted(sizes):
        entry = {"bytes": size, "tiercc": tiercc.get(size), "tiercc_sym": tiercc_sym.get(size),
                 "peers": {}}
        if previous or previous_sym:  # another build's launches (run.sh --previous)
            entry["previous"], entry["previous_sym"] = previous.get(size), previous_sym.get(size)
            for key in ("tiercc", "tiercc_sym"):
                now, before = entry[key], entry["previous" + key[len("tiercc"):]]
                # Medians of the launches: the fastest of a few launches is luck as much as speed.
                entry[f"{key}_time_over_previous"] = (
                    statistics.median(now["samples_us"]) / statistics.median(before["samples_us"])
                    if now and before else None)
        best_peer = None
        for lib, _ in PEERS:
            letter, row = best_variant(peers[lib], size)
            entry["peers"][lib] = {
                "best": None if row is None else dict(row, variant=letter),
                "plain": peers[lib]["plain"].get(size),
                "tuned": peers[lib]["tuned"].get(size),
            }
            if row is not None and (best_peer is None or row["time_us"] < best_peer[1]["time_us"]):
                best_peer = (lib, row)
        entry["count"] = next((r["count"] for r in [entry["tiercc"]] + [
            p["best"] for p in entry["peers"].values()] if r and r.get("count") is not None), None)
        entry["best_peer"] = None if best_peer is None else best_peer[0]
        # Same bytes on both sides, so the busbw ratio is the inverse time ratio (exact even where
        # busbw rounds to 0.00).
        for key in ("tiercc", "tiercc_sym"):
            entry[f"{key}_over_best_peer"] = (
                best_peer[1]["time_us"] / entry[key]["time_us"]
                if best_peer is not None and entry[key] else None)
        # In place (tiercc-perf's second half): the fastest launch, and its median over the previous.
        now, before = entry["tiercc"], entry.get("previous")
        if now and now["ip_samples_us"]:
            entry["tiercc_ip_time_us"] = min(now["ip_samples_us"])
            entry["tiercc_ip_over_best_peer"] = (best_peer[1]["time_us"] / entry["tiercc_ip_time_us"]
                                                 if best_peer is not None else None)
            if before and before["ip_samples_us"]:
                entry["previous_ip_time_us"] = min(before["ip_samples_us"])
                entry["tiercc_ip_time_over_previous"] = (statistics.median(now["ip_samples_us"]) /
                                                         statistics.median(before["ip_samples_us"]))
        rows.append(entry)
    return rows


def cell_bw(row, letter=None):
    if row is None:
        return "-"
    text = f"{row['busbw']:.2f}" if row.get("busbw") is not None else "?"
    if row.get("wrong"):
        text += "!"
    return f"{text} {letter}" if letter else text


def table_lines(rows, markdown):
    head = ["size (B)", "tiercc busbw", "tiercc sym busbw", "Open MPI busbw", "MPICH busbw",
            "tiercc / best peer", "sym / best peer"]
    with_previous = any("previous" in entry for entry in rows)
    if with_previous:
        head += ["previous busbw", "previous sym busbw", "median time / previous", "sym median time / previous"]
    body = []
    for entry in rows:
        cells = [human(entry["bytes"]), cell_bw(entry["tiercc"]), cell_bw(entry.get("tiercc_sym"))]
        for lib, _ in PEERS:
            best = entry["peers"][lib]["best"]
            cells.append(cell_bw(best, best["variant"] if best else None))
        for key in ("tiercc_over_best_peer", "tiercc_sym_over_best_peer"):
            ratio = entry.get(key)
            cells.append("-" if ratio is None else f"{ratio:.2f}")
        if with_previous:
            cells += [cell_bw(entry.get("previous")), cell_bw(entry.get("previous_sym"))]
            for key in ("tiercc_time_over_previous", "tiercc_sym_time_over_previous"):
                ratio = entry.get(key)
                cells.append("-" if ratio is None else f"{ratio:.3f}")
        body.append(cells)
    return render(head, body, markdown)


def render(head, body, markdown):
    """A table's lines: Markdown, or plain text in right-aligned columns."""
    if markdown:
        lines = ["| " + " | ".join(head) + " |", "|" + "---:|" * len(head)]
        lines += ["| " + " | ".join(cells) + " |" for cells in body]
        return lines
    widths = [max(len(r[i]) for r in body + [head]) for i in range(len(head))]
    fmt = lambda cells: "  ".join(c.rjust(w) for c, w in zip(cells, widths))
    return [fmt(head)] + [fmt(cells) for cells in body]


# MPI_Bcast has one buffer: the root's is the source, the others' the destination. That is
# tiercc's broadcast in place; out of place its root also copies its send buffer to its receive
# buffer, work the MPI call does not do. So broadcast gets a second table, in place.
IN_PLACE_TABLES = ("broadcast",)


def in_place_lines(rows, markdown):
    head = ["size (B)", "tiercc in place busbw", "best peer busbw", "in place / best peer"]
    with_previous = any("previous_ip_time_us" in entry for entry in rows)
    if with_previous:
        head += ["previous in place busbw", "in place median time / previous"]
    # Bytes over time: algbw, which is broadcast's busbw (factor 1; another collective would
    # need its nccl-tests factor here).
    gbps = lambda size, us: f"{size / us / 1e3:.2f}" if us else "-"
    body = []
    for entry in rows:
        if "tiercc_ip_time_us" not in entry:
            continue
        peer = entry["peers"].get(entry["best_peer"], {}).get("best") if entry["best_peer"] else None
        ratio = entry.get("tiercc_ip_over_best_peer")
        cells = [human(entry["bytes"]), gbps(entry["bytes"], entry["tiercc_ip_time_us"]),
                 cell_bw(peer, peer["variant"] if peer else None), "-" if ratio is None else f"{ratio:.2f}"]
        if with_previous:
            over = entry.get("tiercc_ip_time_over_previous")
            cells += [gbps(entry["bytes"], entry.get("previous_ip_time_us")), "-" if over is None else f"{over:.3f}"]
        body.append(cells)
    return render(head, body, markdown) if body else []


def latency_line(rows):
    if not rows:
        return "latency: no data"
    entry = rows[0]
    parts = [f"{name} {entry[key]['time_us']:.1f}" if entry.get(key) else f"{name} -"
             for key, name in (("tiercc", "tiercc"), ("tiercc_sym", "tiercc sym"))]
    for lib, name in PEERS:
        best = entry["peers"][lib]["best"]
        parts.append(f"{name} {best['time_us']:.1f} ({best['variant']})" if best else f"{name} -")
    return f"time at {human(entry['bytes'])} B (us): " + " | ".join(parts)


def wrong_lines(coll, rows):
    lines = []
    for entry in rows:
        sources = [("tiercc", entry["tiercc"]), ("tiercc sym", entry.get("tiercc_sym"))]
        for lib, _ in PEERS:
            sources += [(f"{lib} {v}", entry["peers"][lib][v]) for v, _ in VARIANTS]
        for name, row in sources:
            if row and row["wrong"]:
                lines.append(f"WRONG RESULTS: {coll} {name} at {entry['bytes']} B: "
                             f"{row['wrong']} elements")
    return lines


def machine_limit(raw_dir):
    """The better of the machine_limit runs (before and after the sweep), or None."""
    best = None
    path = os.path.join(raw_dir, "machine.jsonl")
    if os.path.exists(path):
        with open(path) as f:
            for line in f:
                try:
                    row = json.loads(line)
                except ValueError:
                    continue
                if best is None or row["allreduce2_limit_GBps"] > best["allreduce2_limit_GBps"]:
                    best = row
    return best


def machine_line(limit):
    if limit is None:
        return "machine limit: not measured"
    return (f"machine limit (one core, {human(limit['bytes'])} B buffers): memcpy "
            f"{limit['memcpy_GBps']:.2f} GB/s, f32 c = a + b {limit['add_GBps']:.2f} GB/s (bytes of c); "
            f"two-shot allreduce of 2 ranks, each on its own core, at most "
            f"{limit['allreduce2_limit_GBps']:.2f} GB/s busbw (2 / (1/add + 1/memcpy))")


def main():
    parser = argparse.ArgumentParser(description=__doc__)
    for name in ("raw", "out", "colls", "command", "versions", "load-before", "load-after",
                 "ompi-single-copy", "bands"):
        parser.add_argument(f"--{name}", required=True)
    for name in ("ranks", "domain-size", "cores", "seconds", "idle-before", "others-pct", "repeat"):
        parser.add_argument(f"--{name}", type=int, required=True)
    args = parser.parse_args()

    meta = {
        "command": args.command,
        "date": datetime.datetime.now(datetime.timezone.utc).isoformat(timespec="seconds"),
        "host": platform.node(),
        "cores": args.cores,
        "ranks": args.ranks,
        "domain_size": args.domain_size,
        "type": "f32",
        "versions": args.versions,
        "busbw": "out-of-place, GB/s (1e9 B/s); nccl-tests factors: allreduce 2(n-1)/n, "
                 "allgather, alltoall and reduce_scatter (n-1)/n, broadcast and reduce 1",
        "tuned_malloc": "GLIBC_TUNABLES=" + TUNED_MALLOC,
        "openmpi_single_copy": args.ompi_single_copy,
        "bands (first last iters warmup)": [b.split() for b in args.bands.split(";") if b.strip()],
        "launches": f"{args.repeat} per MPI and malloc variant, {2 * args.repeat} for tiercc; "
                    "the fastest launch per size is shown; tiercc sym = tiercc-perf --symmetric",
        "load_before": args.load_before,
        "load_after": args.load_after,
        "cpu_idle_pct_before": args.idle_before,
        "cpu_pct_taken_by_other_processes": args.others_pct,
        "seconds": args.seconds,
    }
    limit = machine_limit(args.raw)
    meta["machine_limit"] = limit
    results = {"meta": meta, "collectives": {}}
    text, markdown, problems = [machine_line(limit)], ["", machine_line(limit)], []
    legend = (f"busbw in GB/s, out-of-place, fastest of {2 * args.repeat} launches per column; "
              "p/t: the fastest MPI launch ran with plain (p) or tuned (t) malloc; "
              "! = wrong results")
    for coll in [c for c in args.colls.split(",") if c]:
        rows = build_collective(args.raw, coll)
        results["collectives"][coll] = rows
        title = f"{coll}, {args.ranks} ranks on one host, f32"
        text += ["", f"== {title} ({legend})"] + table_lines(rows, False)
        text.append(latency_line(rows))
        markdown += ["", f"**{title}**", ""] + table_lines(rows, True)
        markdown += ["", latency_line(rows)]
        if coll in IN_PLACE_TABLES:
            in_place = in_place_lines(rows, False)
            if in_place:
                note = f"{title}, in place, as MPI_Bcast works (busbw in GB/s, fastest launch)"
                text += ["", f"== {note}"] + in_place
                markdown += ["", f"**{note}**", ""] + in_place_lines(rows, True)
        problems += wrong_lines(coll, rows)

    load_note = (f"CPUs {args.idle_before}% idle before; other processes took {args.others_pct}% "
                 f"of the CPU time during the sweep; load average {meta['load_before']} before, "
                 f"{meta['load_after']} after; {meta['cores']} cores")
    text += ["", f"{meta['versions']}; Open MPI single copy: {meta['openmpi_single_copy']}; "
             f"{load_note}; {meta['seconds']} s"]
    if args.idle_before < 90 or args.others_pct > 10:
        text.append("WARNING: other work was running on this host (under 90% idle before, or "
                    "over 10% of the CPU time taken by others); these timings are unreliable")
    text += problems
    print("\n".join(text))

    os.makedirs(args.out, exist_ok=True)
    with open(os.path.join(args.out, "results.json"), "w") as f:
        json.dump(results, f, indent=1)
        f.write("\n")
    with open(os.path.join(args.out, "table.md"), "w") as f:
        f.write(f"Command: `{meta['command']}` ({meta['date']}, {meta['host']}, {load_note}; "
                f"{meta['versions']})\n")
        f.write(f"\n{legend}.\n")
        f.write("\n".join(markdown) + "\n")
    print(f"\nwritten: {os.path.join(args.out, 'results.json')}, "
          f"{os.path.join(args.out, 'table.md')}")
    return 1 if problems else 0


if __name__ == "__main__":
    sys.exit(main())
