#!/usr/bin/python3
"""Debian's real Prometheus scrapes a running 2x2 tiercc job (tiercc-run --metrics-port), and the
series it returns through its HTTP API equal the job's own statistics, rank by rank.

Usage: prometheus_test.py BIN_DIR. Exits 77 (skipped, saying why) without /usr/bin/prometheus."""
import json
import os
import random
import shutil
import socket
import subprocess
import sys
import tempfile
import time
import urllib.parse
import urllib.request

PROMETHEUS = "/usr/bin/prometheus"
RANKS, DOMAIN_SIZE = 4, 2
RNG = random.Random()  # seeded from the OS: concurrent runs pick different ports


def free_ports(count):
    """A base port P with P..P+count-1 free, below the kernel's ephemeral range: ranks listen on P
    plus their index, and a port the kernel hands to the job's own connections could be taken by
    the time a rank binds it. Checked by binding each one."""
    try:
        ephemeral_low = int(open("/proc/sys/net/ipv4/ip_local_port_range").read().split()[0])
    except (OSError, ValueError, IndexError):
        ephemeral_low = 32768
    low = 10000
    for _ in range(100):
        base = RNG.randrange(low, max(low + 1000, ephemeral_low - count))
        held = []
        try:
            for p in range(base, base + count):
                t = socket.socket()
                held.append(t)
                t.bind(("127.0.0.1", p))
            return base
        except OSError:
            continue
        finally:
            for t in held:
                t.close()
    raise RuntimeError("no %d consecutive free ports" % count)


def query(web, expr):
    url = "http://%s/api/v1/query?%s" % (web, urllib.parse.urlencode({"query": expr}))
    with urllib.request.urlopen(url, timeout=5) as r:
        body = json.load(r)
    if body.get("status") != "success":
        raise RuntimeError("query %s: %s" % (expr, body))
    return body["data"]["result"]


def by_rank(results):
    out = {}
    for r in results:
        rank = int(r["metric"]["rank"])
        out[rank] = out.get(rank, 0) + float(r["value"][1])
    return out


def main():
    bin_dir = sys.argv[1]
    if not os.access(PROMETHEUS, os.X_OK):
        print("SKIPPED: %s not installed (apt-get install prometheus)" % PROMETHEUS)
        return 77
    work = tempfile.mkdtemp(prefix="tiercc-prometheus-")
    metrics_base = free_ports(RANKS)
    web_port = free_ports(1)
    while metrics_base - 1 <= web_port < metrics_base + RANKS:
        web_port = free_ports(1)
    web = "127.0.0.1:%d" % web_port
    targets = ", ".join('"127.0.0.1:%d"' % (metrics_base + i) for i in range(RANKS))
    with open(os.path.join(work, "prometheus.yml"), "w") as f:
        f.write("global:\n  scrape_interval: 1s\n  scrape_timeout: 1s\n"
                "scrape_configs:\n  - job_name: tiercc\n    static_configs:\n      - targets: [%s]\n" % targets)
    prom = subprocess.Popen([PROMETHEUS, "--config.file=" + os.path.join(work, "prometheus.yml"),
                             "--storage.tsdb.path=" + os.path.join(work, "data"), "--web.listen-address=" + web],
                            stdout=subprocess.DEVNULL, stderr=open(os.path.join(work, "prometheus.log"), "w"))
    env = dict(os.environ, TIERCC_TEST_DIR=work, TIERCC_TEST_STAY="1")
    job = subprocess.Popen([os.path.join(bin_dir, "tiercc-run"), "-n", str(RANKS), "--domain-size", str(DOMAIN_SIZE),
                            "--timeout", "120", "--metrics-port", str(metrics_base),
                            os.path.join(bin_dir, "stats_job")], env=env)
    failures = []
    try:
        stats = {}
        deadline = time.time() + 60
        while len(stats) < RANKS and time.time() < deadline and job.poll() is None:
            for r in range(RANKS):
                path = os.path.join(work, "stats-%d.json" % r)
                if r not in stats and os.path.exists(path):
                    stats[r] = json.load(open(path))
            time.sleep(0.1)
        if len(stats) < RANKS:
            raise RuntimeError("the job wrote the stats of %d of %d ranks (exit %s)" % (len(stats), RANKS, job.poll()))
        print("job stats:", json.dumps(stats, sort_keys=True))
        expected = {
            'tiercc_bytes_total{tier="scale-up"}': {r: s["scaleup_bytes"] for r, s in stats.items()},
            'tiercc_bytes_total{tier="scale-out"}': {r: s["scaleout_bytes"] for r, s in stats.items()},
            "tiercc_scaleout_bound_bytes_total": {r: s["scaleout_bound_bytes"] for r, s in stats.items()},
            "tiercc_collectives_total": {r: s["collectives"] for r, s in stats.items()},
            "tiercc_operation_seconds_count": {r: s["collectives"] for r, s in stats.items()},
            'tiercc_sequence{state="completed"}': {r: s["collectives"] - 1 for r, s in stats.items()},
            'up{job="tiercc"}': None,
        }
        got = {}
        deadline = time.time() + 45
        while time.time() < deadline:
            try:
                got = {e: query(web, e) for e in expected}
                ok = len(got['up{job="tiercc"}']) == RANKS and all(float(r["value"][1]) == 1 for r in got['up{job="tiercc"}'])
                ok = ok and all(by_rank(got[e]) == {r: float(v) for r, v in want.items()}
                                for e, want in expected.items() if want is not None)
                if ok:
                    break
            except (OSError, RuntimeError, KeyError, ValueError):
                pass  # Prometheus starting, or no scrape yet
            time.sleep(0.5)
        for e, want in expected.items():
            if want is None:
                continue
            have = by_rank(got.get(e, []))
            print("%-45s prometheus %s" % (e, json.dumps(have, sort_keys=True)))
            if have != {r: float(v) for r, v in want.items()}:
                failures.append("%s: Prometheus has %s, the job's stats say %s" % (e, have, want))
        ups = got.get('up{job="tiercc"}', [])
        if len(ups) != RANKS:
            failures.append("Prometheus sees %d targets up, not %d: %s" % (len(ups), RANKS, ups))
        # Every family is there, labelled as documented.
        for family in ["tiercc_heartbeat_age_seconds", 'tiercc_operation_seconds_bucket{coll="allreduce",size="le_1MiB"}',
                       'tiercc_collectives_total{coll="alltoall"}', "tiercc_failures_total", "tiercc_aborts_total"]:
            if not query(web, family):
                failures.append("no series for %s" % family)
    except Exception as e:  # noqa: BLE001 - reported as the test's failure
        failures.append(str(e))
    finally:
        open(os.path.join(work, "done"), "w").close()
        try:
            rc = job.wait(timeout=60)
        except subprocess.TimeoutExpired:
            job.kill()
            rc = "killed after 60 s"
        if rc != 0:
            failures.append("the job exited %s" % rc)
        prom.terminate()
        try:
            prom.wait(timeout=20)
        except subprocess.TimeoutExpired:
            prom.kill()
        if failures:
            sys.stdout.write(open(os.path.join(work, "prometheus.log")).read()[-3000:])
        shutil.rmtree(work, ignore_errors=True)
    for f in failures:
        print("FAILED:", f)
    if not failures:
        print("PASSED: Prometheus's series equal the job's stats on every rank")
    return 1 if failures else 0


if __name__ == "__main__":
    sys.exit(main())
