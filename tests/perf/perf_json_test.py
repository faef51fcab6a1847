#!/usr/bin/python3
"""tiercc-perf's --json rows on a 2x2 job: one row per size, no wrong element, the bytes each tier
carried, and the CPU time of a call (every rank's user and system time, added up) that the
two-tier comparison reports per GB: above zero and within what the host's cores could have spent
in the wall time of the calls.

Usage: perf_json_test.py BIN_DIR."""
import json
import os
import subprocess
import sys
import tempfile

RANKS, DOMAIN_SIZE = 4, 2
SIZES = [64 << 10, 256 << 10, 1 << 20]


def main():
    bin_dir = sys.argv[1]
    failures = []
    with tempfile.TemporaryDirectory(prefix="tiercc-perf-") as work:
        out = os.path.join(work, "rows.jsonl")
        job = subprocess.run([os.path.join(bin_dir, "tiercc-run"), "-n", str(RANKS), "--domain-size", str(DOMAIN_SIZE),
                              "--timeout", "120", os.path.join(bin_dir, "tiercc-perf"), "-b", "64K", "-e", "1M", "-f",
                              "4", "-n", "20", "-w", "2", "--json", out], capture_output=True, text=True, timeout=180)
        if job.returncode != 0:
            print("tiercc-perf exited %d:\n%s%s" % (job.returncode, job.stdout, job.stderr))
            return 1
        rows = [json.loads(line) for line in open(out) if line.strip()]
    if [r["bytes"] for r in rows] != SIZES:
        failures.append("sizes %s, not %s" % ([r["bytes"] for r in rows], SIZES))
    cores = os.cpu_count() or 1
    for r in rows:
        what = "%d B" % r["bytes"]
        if r["wrong"] != 0:
            failures.append("%s: %d wrong elements" % (what, r["wrong"]))
        if not r["scaleout_bytes"] > 0 or r["scaleout_bytes"] < r["bound_bytes"]:
            failures.append("%s: %s B across domains against a bound of %s" % (what, r["scaleout_bytes"],
                                                                               r["bound_bytes"]))
        for placement in ("oop", "ip"):
            cpu, wall = r[placement + "_cpu_us"], r[placement + "_time_us"]
            # The slowest rank's time bounds the loop's; its threads on `cores` cores cannot have
            # spent more than that (10% for the clock's and getrusage's granularity).
            if not 0 < cpu <= cores * wall * 1.1 + 100:
                failures.append("%s %s: %.1f us of CPU per call in %.1f us on %d cores" % (what, placement, cpu,
                                                                                          wall, cores))
    for f in failures:
        print("FAIL:", f)
    print("%d rows checked, %d failures" % (len(rows), len(failures)))
    return 1 if failures else 0


if __name__ == "__main__":
    sys.exit(main())
