"""Failures come back as RuntimeError carrying tiercc's message.

  killed VICTIM   VICTIM SIGKILLs itself in a loop of allreduces; every survivor must raise
                  within the failure detector's time, naming the victim.
  wait-timeout    rank 1 joins late: rank 0's Work.wait(timeout) raises, and aborts the group.
Prints "failures: ..." on success.
"""
import os
import signal
import sys
import time
from datetime import timedelta

import torch
import torch.distributed as dist

import tiercc.torch

mode = sys.argv[1]
dist.init_process_group("tiercc", timeout=timedelta(seconds=60))
rank, world = dist.get_rank(), dist.get_world_size()

if mode == "killed":
    victim, limit = int(sys.argv[2]), float(sys.argv[3])
    t = torch.ones(64 * 1024)
    last = time.monotonic()
    try:
        for i in range(100000):
            if i == 20 and rank == victim:
                os.kill(os.getpid(), signal.SIGKILL)
            dist.all_reduce(t)
            last = time.monotonic()
    except RuntimeError as e:
        took = time.monotonic() - last
        print(f"rank {rank} raised after {took:.2f} s: {e}", flush=True)
        assert f"rank {victim}" in str(e), f"rank {rank}: the error does not name rank {victim}"
        assert took <= limit, f"rank {rank}: raised after {took:.2f} s, more than {limit} s"
        print(f"failures: rank {rank} named rank {victim} in {took:.2f} s", flush=True)
        os._exit(0)  # the group is broken: no teardown rendezvous
    raise AssertionError(f"rank {rank}: no error after rank {victim} was killed")

if mode == "wait-timeout":
    t = torch.ones(10)
    if rank == 1:
        time.sleep(3)
    work = dist.all_reduce(t, async_op=True)
    if rank == 0:
        try:
            work.wait(timeout=timedelta(milliseconds=300))
            raise AssertionError("rank 0: wait() returned though rank 1 had not joined")
        except RuntimeError as e:
            assert "timed out" in str(e) and "allreduce" in str(e), str(e)
        try:
            dist.all_reduce(torch.ones(3))
            raise AssertionError("rank 0: an operation after the abort succeeded")
        except RuntimeError as e:
            assert "abort" in str(e), str(e)
            print(f"rank 0: after the timeout: {e}", flush=True)
    else:
        try:
            work.wait()
        except RuntimeError as e:  # rank 0 aborted: its peers hear it or time out
            print(f"rank {rank}: {e}", flush=True)
    print(f"failures: rank {rank} wait-timeout done", flush=True)
    os._exit(0)
