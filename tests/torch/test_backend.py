"""The tiercc c10d backend under pytest: each test is one multi-process job (tests/torch/ranks/),
whose ranks check their own results and print a marker line when every check passed."""
import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from launch import ROOT, build_python_dir, launch, require_success

BUILD = build_python_dir().parent

# name: (world size, domain of each rank); the shm domains are emulated hosts on this machine.
TOPOLOGIES = {"1": (1, None), "2": (2, None), "2+1": (3, [0, 0, 1]), "2x2": (4, [0, 0, 1, 1])}


@pytest.mark.parametrize("topology", TOPOLOGIES)
def test_every_operation_and_dtype(topology):
    world, domains = TOPOLOGIES[topology]
    require_success(launch("ops.py", world, domains=domains), "checks passed")


@pytest.mark.parametrize("topology", ["2", "2x2"])
def test_ddp_matches_gloo(topology):
    world, domains = TOPOLOGIES[topology]
    require_success(launch("ddp.py", world, domains=domains, env={"GLOO_SOCKET_IFNAME": "lo"}),
                    "tiercc and gloo agree")


def test_killed_rank_is_named_by_every_survivor():
    # The failure detector's time: a 5 s heartbeat timeout (a SIGKILL is seen sooner, by the
    # victim's neighbours, and reaches the others through the store's verdict).
    results = launch("failures.py", 4, domains=[0, 0, 1, 1], env={"TIERCC_HEARTBEAT_TIMEOUT": "5s"},
                     args=("killed", 3, 5.0))
    assert results[3].returncode == -9, repr(results[3])
    require_success(results[:3], "named rank 3")


def test_wait_timeout_aborts_the_group():
    require_success(launch("failures.py", 2, args=("wait-timeout",)), "wait-timeout done")


def _in_private_network(command, env, timeout=240):
    """Runs command in a network namespace of its own (only loopback), where torchrun's fixed
    ports are free by construction."""
    if shutil.which("unshare") is None:
        pytest.skip("unshare (util-linux) is missing: cannot give torchrun a network of its own")
    probe = subprocess.run(["unshare", "--net", "true"], capture_output=True, text=True)
    if probe.returncode != 0:
        pytest.skip(f"cannot create a network namespace here: {probe.stderr.strip()}")
    script = "ip link set lo up && exec " + " ".join(command)
    return subprocess.run(["unshare", "--net", "sh", "-c", script], env=env, capture_output=True, text=True,
                          timeout=timeout)


def _example_env(**extra):
    env = dict(os.environ, PYTHONPATH=str(build_python_dir()), OMP_NUM_THREADS="1", **extra)
    for name in ("TIERCC_STORE", "MASTER_ADDR", "MASTER_PORT", "RANK", "WORLD_SIZE"):
        env.pop(name, None)
    return env


def _losses(output):
    return [float(line.split("loss")[1].split()[0]) for line in output.splitlines() if " loss " in line]


def test_ddp_example_trains_under_torchrun(tmp_path):
    torchrun = [sys.executable, "-m", "torch.distributed.run", "--nproc_per_node", "4", "--master_port", "29500",
                "--redirects", "2", "--tee", "2", "--log_dir", str(tmp_path / "logs")]
    run = _in_private_network(torchrun + [str(ROOT / "examples/torch/ddp_train.py"), "--steps", "12"],
                              _example_env(TIERCC_DOMAIN_SIZE="2"))
    assert run.returncode == 0, run.stdout + run.stderr
    assert "domain 0 of 2 (2 ranks)" in run.stdout, run.stdout
    losses = _losses(run.stdout)
    assert len(losses) == 12 and losses[-1] < losses[0], run.stdout


def test_ddp_example_trains_under_tiercc_run():
    run = _in_private_network([str(BUILD / "bin/tiercc-run"), "-n", "4", "--domain-size", "2", sys.executable,
                               str(ROOT / "examples/torch/ddp_train.py"), "--steps", "12"], _example_env())
    assert run.returncode == 0, run.stdout + run.stderr
    assert "domain 0 of 2 (2 ranks)" in run.stdout, run.stdout
    losses = _losses(run.stdout)
    assert len(losses) == 12 and losses[-1] < losses[0], run.stdout
