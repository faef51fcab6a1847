#!/usr/bin/python3
"""bench/paths.py: inside one domain of this host, each collective on the staged path and on
cross-memory attach side by side (TIERCC_PATH=staged, cma), and the path the cost model chooses
by itself (auto), size by size. The paths take turns launch by launch, --repeat times each; the
table shows each one's best busbw (GB/s, out-of-place, ordinary buffers) and the choice, marked
with the ratio of its busbw to the better path's where it is under 0.9.

  bench/paths.py [--ranks 2] [--colls allgather,...] [--min 64K] [--max 64M] [--iters 20]
                 [--repeat 2] [--build build]
"""
import argparse
import collections
import os
import subprocess
import sys

COLLS = "allgather,alltoall,allreduce,reduce_scatter,broadcast"


def sweep(build, ranks, coll, path, lo, hi, iters):
    """{size: (busbw, path taken)} of one tiercc-perf launch."""
    env = dict(os.environ, TIERCC_PATH=path)
    cmd = [os.path.join(build, "bin", "tiercc-run"), "-n", str(ranks), os.path.join(build, "bin", "tiercc-perf"),
           "--coll", coll, "-b", lo, "-e", hi, "-f", "2", "-n", str(iters), "-w", "3", "-c", "0"]
    out = subprocess.run(cmd, env=env, capture_output=True, text=True, timeout=600)
    if out.returncode != 0:
        sys.exit(f"{' '.join(cmd)} (TIERCC_PATH={path}) failed:\n{out.stdout}{out.stderr}")
    rows = {}
    for line in out.stdout.splitlines():
        f = line.split()
        if len(f) > 10 and f[0] == "[r0.d0]" and f[1].isdigit():
            rows[int(f[1])] = (float(f[8]), f[-1])
    return rows


def human(b):
    return f"{b >> 20}M" if b >= 1 << 20 else f"{b >> 10}K" if b >= 1 << 10 else str(b)


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--ranks", type=int, default=2)
    ap.add_argument("--colls", default=COLLS)
    ap.add_argument("--min", default="64K")
    ap.add_argument("--max", default="64M")
    ap.add_argument("--iters", type=int, default=20)
    ap.add_argument("--repeat", type=int, default=2)
    ap.add_argument("--build", default=os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "build"))
    a = ap.parse_args()
    colls = [c for c in a.colls.split(",") if c]
    best = collections.defaultdict(float)  # (coll, size, path) -> busbw
    chosen = {}
    for coll in colls:
        for _ in range(a.repeat):
            for path in ("staged", "cma", "auto"):
                for size, (bw, took) in sweep(a.build, a.ranks, coll, path, a.min, a.max, a.iters).items():
                    best[coll, size, path] = max(best[coll, size, path], bw)
                    if path == "auto":
                        chosen[coll, size] = took
    sizes = sorted({s for (_, s) in chosen})
    print("| size (B) | " + " | ".join(f"{c}: staged / cma, chosen" for c in colls) + " |")
    print("|---:|" + "---:|" * len(colls))
    for s in sizes:
        cells = []
        for c in colls:
            staged, cma, took = best[c, s, "staged"], best[c, s, "cma"], chosen.get((c, s), "?")
            got = {"staged": staged, "cma": cma}.get(took)
            mark = f" ({got / max(staged, cma):.2f})" if got and got < 0.9 * max(staged, cma) else ""
            cells.append(f"{staged:.1f} / {cma:.1f}, {took}{mark}")
        print(f"| {human(s)} | " + " | ".join(cells) + " |")


if __name__ == "__main__":
    main()
