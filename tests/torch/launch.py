"""Starts the ranks of a torch.distributed job as torchrun's agent would: this process hosts the
c10d store (on a port the kernel picks), and each rank finds it through torchrun's variables
(TORCHELASTIC_USE_AGENT_STORE: every rank is a client), so init_process_group("tiercc") runs
unchanged."""
import os
import subprocess
import sys
import time
from datetime import timedelta
from pathlib import Path

import torch.distributed as dist

HERE = Path(__file__).resolve().parent
ROOT = HERE.parent.parent


def build_python_dir():
    """build/python, or TIERCC_BUILD_DIR/python (ctest sets it)."""
    build = Path(os.environ.get("TIERCC_BUILD_DIR", ROOT / "build"))
    return build / "python"


class Rank:
    def __init__(self, rank, returncode, output, seconds):
        self.rank, self.returncode, self.output, self.seconds = rank, returncode, output, seconds

    def __repr__(self):
        return f"rank {self.rank} (exit {self.returncode}, {self.seconds:.1f} s):\n{self.output}"


def launch(script, world, domains=None, env=None, args=(), timeout=180):
    """Runs `script` as `world` ranks; domains[r] is rank r's domain (TIERCC_DOMAIN_ID), or all
    ranks share one. Returns one Rank per rank, after every rank ended or was killed at the
    timeout (a rank still running then gets returncode None)."""
    store = dist.TCPStore("127.0.0.1", 0, world, True, timedelta(seconds=timeout), wait_for_workers=False)
    procs = []
    start = time.monotonic()
    for r in range(world):
        e = dict(os.environ)
        e.update({
            "PYTHONPATH": os.pathsep.join([str(build_python_dir()), str(HERE)]),
            "MASTER_ADDR": "127.0.0.1", "MASTER_PORT": str(store.port),
            "RANK": str(r), "WORLD_SIZE": str(world), "LOCAL_RANK": str(r), "LOCAL_WORLD_SIZE": str(world),
            "TORCHELASTIC_USE_AGENT_STORE": "True", "TORCHELASTIC_RESTART_COUNT": "0",
            "OMP_NUM_THREADS": "1",
        })
        e.pop("TIERCC_STORE", None)
        if domains is not None:
            e["TIERCC_DOMAIN_ID"] = str(domains[r])
        e.update(env or {})
        procs.append(subprocess.Popen([sys.executable, str(HERE / "ranks" / script), *map(str, args)], env=e,
                                      stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True))
    results = [None] * world
    deadline = start + timeout
    for r, p in enumerate(procs):
        try:
            out, _ = p.communicate(timeout=max(0.1, deadline - time.monotonic()))
            results[r] = Rank(r, p.returncode, out, time.monotonic() - start)
        except subprocess.TimeoutExpired:
            pass
    for r, p in enumerate(procs):
        if results[r] is None:
            p.kill()
            out, _ = p.communicate()
            results[r] = Rank(r, None, out + f"\n[killed after {timeout} s]", time.monotonic() - start)
    del store
    return results


def require_success(results, marker):
    """Every rank exited 0 and printed `marker` (its last check)."""
    for r in results:
        assert r.returncode == 0 and marker in r.output, repr(r)
