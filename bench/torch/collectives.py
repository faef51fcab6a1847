"""The same tensors through torch.distributed's tiercc and gloo process groups, in one job:
all_reduce from 1 KiB to 64 MiB, DDP-sized 25 MiB buckets, and all_to_all_single. Each size runs
both backends alternately (rounds, fastest round kept), on ordinary tensors and, for tiercc, on
tensors from tiercc.torch.empty (symmetric memory). Rank 0 prints a markdown table of busbw
(nccl-tests' definition) and the ratio to gloo. Run it under a launcher (bench/torch/run.sh).
"""
import argparse
import os
import time

import torch
import torch.distributed as dist

import tiercc.torch


def parse_size(text):
    scale = {"K": 1 << 10, "M": 1 << 20, "G": 1 << 30}.get(text[-1].upper(), 1)
    return int(text[:-1] if scale != 1 else text) * scale


def human(nbytes):
    for unit, scale in (("MiB", 1 << 20), ("KiB", 1 << 10)):
        if nbytes >= scale:
            return f"{nbytes / scale:g} {unit}"
    return f"{nbytes} B"


def timed(fn, group, iters, warmup):
    for _ in range(warmup):
        fn()
    dist.barrier(group=group)
    start = time.perf_counter()
    for _ in range(iters):
        fn()
    took = torch.tensor([(time.perf_counter() - start) / iters], dtype=torch.float64)
    dist.all_reduce(took, op=dist.ReduceOp.MAX, group=group)  # the slowest rank's time
    return took.item()


def main():
    ap = argparse.ArgumentParser(description=__doc__)
    ap.add_argument("--min", default="1K")
    ap.add_argument("--max", default="64M")
    ap.add_argument("--iters", type=int, default=0, help="per round (default: by size, ~0.2 s a round)")
    ap.add_argument("--rounds", type=int, default=3)
    ap.add_argument("--colls", default="all_reduce,bucket,all_to_all_single")
    ap.add_argument("--gloo-rail-iface", action="store_true",
                    help="gloo on interface rail<LOCAL_RANK> (bench/two-tier-net.sh's namespaces)")
    args = ap.parse_args()
    if args.gloo_rail_iface:
        os.environ["GLOO_SOCKET_IFNAME"] = f"rail{os.environ.get('LOCAL_RANK', '0')}"
    dist.init_process_group("tiercc")
    world, rank = dist.get_world_size(), dist.get_rank()
    gloo = dist.new_group(backend="gloo")
    ours = dist.distributed_c10d._get_default_group()

    sizes = []
    n = parse_size(args.min)
    while n <= parse_size(args.max):
        sizes.append(n)
        n *= 4
    plan = []
    if "all_reduce" in args.colls:
        plan += [("all_reduce", s) for s in sizes]
    if "bucket" in args.colls:
        plan.append(("all_reduce (25 MiB bucket)", 25 << 20))
    if "all_to_all_single" in args.colls:
        plan += [("all_to_all_single", s) for s in sizes if s >= 4 * world]

    rows = []
    for coll, nbytes in plan:
        count = nbytes // 4
        if coll.startswith("all_to_all"):
            count -= count % world
            factor = (world - 1) / world
        else:
            factor = 2 * (world - 1) / world
        iters = args.iters or max(3, min(200, int(0.2 / (nbytes / 0.5e9 + 50e-6))))
        warmup = max(1, iters // 10)

        def op_for(group, symmetric):
            if symmetric:
                x = tiercc.torch.empty(count)
                y = tiercc.torch.empty(count)
            else:
                x, y = torch.empty(count), torch.empty(count)
            x.fill_(1.0)
            if coll.startswith("all_to_all"):
                return lambda: dist.all_to_all_single(y, x, group=group)
            return lambda: dist.all_reduce(x, group=group)

        variants = {"tiercc": op_for(ours, False), "tiercc sym": op_for(ours, True), "gloo": op_for(gloo, False)}
        best = {k: float("inf") for k in variants}
        for _ in range(args.rounds):
            for name, fn in variants.items():
                best[name] = min(best[name], timed(fn, gloo if name == "gloo" else ours, iters, warmup))
        busbw = {k: factor * count * 4 / v / 1e9 for k, v in best.items()}
        rows.append((coll, count * 4, busbw))
        del variants

    if rank == 0:
        print(f"{world} ranks, {tiercc.torch.describe()}; busbw GB/s, fastest of {args.rounds} rounds")
        print("| collective | size | tiercc | tiercc, symmetric | gloo | tiercc / gloo | symmetric / gloo |")
        print("|---|---|---|---|---|---|---|")
        for coll, nbytes, b in rows:
            print(f"| {coll} | {human(nbytes)} | {b['tiercc']:.3f} | {b['tiercc sym']:.3f} | {b['gloo']:.3f} | "
                  f"{b['tiercc'] / b['gloo']:.2f}x | {b['tiercc sym'] / b['gloo']:.2f}x |", flush=True)
    dist.destroy_process_group()


if __name__ == "__main__":
    main()
