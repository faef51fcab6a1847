#!/usr/bin/python3
"""The timeline of a 2x2 job (tiercc-run --trace DIR): DIR/trace.json is valid trace-event JSON
with a process per rank; every step span lies inside the operation it belongs to; per rank and
tier the steps' bytes add up to the job's own statistics, and the operations to its count; and
tiercc-trace draws it as a PNG.

Usage: trace_test.py BIN_DIR. Exits 77 (skipped, saying why) when only the PNG cannot be made."""
import json
import os
import shutil
import subprocess
import sys
import tempfile

RANKS, DOMAIN_SIZE = 4, 2


def main():
    bin_dir = sys.argv[1]
    work = tempfile.mkdtemp(prefix="tiercc-trace-")
    trace_dir = os.path.join(work, "trace")
    failures = []
    skipped = None
    try:
        env = dict(os.environ, TIERCC_TEST_DIR=work)
        env.pop("TIERCC_TEST_STAY", None)
        job = subprocess.run([os.path.join(bin_dir, "tiercc-run"), "-n", str(RANKS), "--domain-size", str(DOMAIN_SIZE),
                              "--timeout", "120", "--trace", trace_dir, os.path.join(bin_dir, "stats_job")],
                             env=env, capture_output=True, text=True, timeout=180)
        if job.returncode != 0:
            raise RuntimeError("the job exited %d:\n%s%s" % (job.returncode, job.stdout, job.stderr))
        stats = {r: json.load(open(os.path.join(work, "stats-%d.json" % r))) for r in range(RANKS)}
        events = json.load(open(os.path.join(trace_dir, "trace.json")))["traceEvents"]
        processes = {e["pid"] for e in events if e.get("ph") == "M" and e["name"] == "process_name"}
        if processes != set(range(RANKS)):
            failures.append("process names for ranks %s, not 0..%d" % (sorted(processes), RANKS - 1))
        spans = [e for e in events if e.get("ph") == "X"]
        for rank in range(RANKS):
            # The stats were taken before the job's last barrier: compare the operations before it.
            counted = stats[rank]["collectives"]
            calls = {e["name"]: e for e in spans if e["pid"] == rank and e.get("cat") != "step"}
            if len(calls) != counted + 1:
                failures.append("rank %d: %d operations in the trace, %d + the last barrier in its stats"
                                % (rank, len(calls), counted))
            calls = {n: e for n, e in calls.items() if int(n.rsplit("#", 1)[1]) < counted}
            steps = [e for e in spans if e["pid"] == rank and e.get("cat") == "step" and e["args"]["call"] in calls]
            outside = 0
            for s in [e for e in spans if e["pid"] == rank and e.get("cat") == "step"]:
                c = next((e for e in spans if e["pid"] == rank and e["name"] == s["args"]["call"]), None)
                if c is None or s["ts"] < c["ts"] - 0.001 or s["ts"] + s["dur"] > c["ts"] + c["dur"] + 0.001:
                    outside += 1
            if outside or not steps:
                failures.append("rank %d: %d of %d step spans lie outside their operation" % (rank, outside, len(steps)))
            for tier, key, lane in (("scale-up", "scaleup_bytes", 1), ("scale-out", "scaleout_bytes", 2)):
                total = sum(s["args"][key] for s in steps)
                if total != stats[rank][key]:
                    failures.append("rank %d: the steps moved %d %s bytes, its stats say %d"
                                    % (rank, total, tier, stats[rank][key]))
                in_calls = sum(c["args"][key] for c in calls.values())
                if in_calls != total:
                    failures.append("rank %d: the operations say %d %s bytes, their steps %d" % (rank, in_calls, tier, total))
                wrong_lane = [s["name"] for s in steps if s["args"]["tier"] == tier and s["tid"] != lane]
                wrong_rail = [s["name"] for s in steps if s["args"]["rail"] != rank % DOMAIN_SIZE]
                if wrong_rail:
                    failures.append("rank %d: steps not on its rail %d: %s" % (rank, rank % DOMAIN_SIZE, wrong_rail[:3]))
                if wrong_lane:
                    failures.append("rank %d: %s steps off the %s lane: %s" % (rank, tier, tier, wrong_lane[:3]))
            print("rank %d: %d operations, %d step spans, %d B scale-up, %d B scale-out, as its stats say"
                  % (rank, len(calls), len(steps), stats[rank]["scaleup_bytes"], stats[rank]["scaleout_bytes"]))
        png = os.path.join(work, "timeline.png")
        draw = subprocess.run([sys.executable, os.path.join(bin_dir, "tiercc-trace"), os.path.join(trace_dir, "trace.json"),
                               "-o", png, "--call", "allreduce #0"], capture_output=True, text=True, timeout=120)
        if draw.returncode == 2 and "matplotlib" in draw.stderr:
            skipped = draw.stderr.strip()
        elif draw.returncode != 0:
            failures.append("tiercc-trace exited %d: %s" % (draw.returncode, draw.stderr))
        else:
            with open(png, "rb") as f:
                head = f.read(8)
            size = os.path.getsize(png)
            if head != b"\x89PNG\r\n\x1a\n" or size < 10000:
                failures.append("tiercc-trace wrote %d bytes that are not a PNG timeline" % size)
            else:
                print(draw.stdout.strip(), "(%d bytes)" % size)
    except Exception as e:  # noqa: BLE001 - reported as the test's failure
        failures.append(str(e))
    finally:
        shutil.rmtree(work, ignore_errors=True)
    for f in failures:
        print("FAILED:", f)
    if failures:
        return 1
    if skipped:
        print("SKIPPED (the PNG only; the trace checks passed):", skipped)
        return 77
    print("PASSED")
    return 0


if __name__ == "__main__":
    sys.exit(main())
