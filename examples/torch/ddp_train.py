"""Trains a small MLP with DistributedDataParallel on synthetic data through tiercc (or gloo, to
compare), printing the loss per step on rank 0.

    # under tiercc-run (2 domains of 2 ranks on this machine):
    PYTHONPATH=build/python build/bin/tiercc-run -n 4 --domain-size 2 /usr/bin/python3 examples/torch/ddp_train.py
    # under torchrun (Debian's 1.13 on Python 3.11 needs --redirects/--tee/--log_dir, see docs/torch.md):
    PYTHONPATH=build/python TIERCC_DOMAIN_SIZE=2 torchrun --nproc_per_node 4 --redirects 2 --tee 2 \\
        --log_dir /tmp/torchrun-logs examples/torch/ddp_train.py

Each rank draws its own batches; the targets come from a fixed random "teacher" network, so the
loss goes down. --params 25M sizes the model like a DDP workload worth timing (--backend gloo for
the same run through gloo).
"""
import argparse
import time

import torch
import torch.distributed as dist
import torch.nn as nn
import torch.nn.functional as F
from torch.nn.parallel import DistributedDataParallel as DDP

import tiercc.torch  # registers the backend "tiercc"


def parse_count(text):
    scale = {"K": 1e3, "M": 1e6, "G": 1e9}.get(text[-1].upper(), 1)
    return int(float(text[:-1] if scale != 1 else text) * scale)


def model_of(params, inputs, outputs):
    """Three linear layers whose hidden width gives about `params` parameters."""
    # params ~ inputs*h + h*h + h*outputs: solve h^2 + (inputs + outputs) h = params.
    b = inputs + outputs
    hidden = max(8, int((-b + (b * b + 4 * params) ** 0.5) / 2))
    return nn.Sequential(nn.Linear(inputs, hidden), nn.ReLU(), nn.Linear(hidden, hidden), nn.ReLU(),
                         nn.Linear(hidden, outputs))


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--backend", default="tiercc", help="tiercc (default) or gloo")
    ap.add_argument("--steps", type=int, default=20)
    ap.add_argument("--params", type=parse_count, default=parse_count("200K"), help="model size, e.g. 200K, 25M")
    ap.add_argument("--batch", type=int, default=32, help="samples per rank per step")
    ap.add_argument("--bucket-mb", type=float, default=25, help="DDP bucket size (bucket_cap_mb)")
    ap.add_argument("--lr", type=float, default=0.05)
    ap.add_argument("--warmup", type=int, default=3, help="steps left out of the mean step time")
    args = ap.parse_args()

    dist.init_process_group(args.backend)
    rank, world = dist.get_rank(), dist.get_world_size()
    torch.manual_seed(0)  # the same initial model everywhere (DDP also broadcasts rank 0's)
    inputs, outputs = 64, 8
    teacher = nn.Sequential(nn.Linear(inputs, 32), nn.Tanh(), nn.Linear(32, outputs))
    model = model_of(args.params, inputs, outputs)
    ddp = DDP(model, bucket_cap_mb=args.bucket_mb)
    opt = torch.optim.SGD(ddp.parameters(), lr=args.lr, momentum=0.9)
    data = torch.Generator().manual_seed(1000 + rank)
    nparams = sum(p.numel() for p in model.parameters())
    where = tiercc.torch.describe() if args.backend == "tiercc" else f"{world} ranks"
    if rank == 0:
        print(f"ddp_train: {args.backend}, {where}; {nparams / 1e6:.2f}M parameters, batch {args.batch} per rank",
              flush=True)
    times = []
    for step in range(args.steps):
        start = time.perf_counter()
        x = torch.randn(args.batch, inputs, generator=data)
        with torch.no_grad():
            y = teacher(x)
        loss = F.mse_loss(ddp(x), y)
        opt.zero_grad(set_to_none=True)
        loss.backward()  # DDP allreduces the gradient buckets as they fill
        opt.step()
        times.append(time.perf_counter() - start)
        # The mean over ranks, for the printout (not part of the timed step).
        shown = loss.detach().clone()
        dist.all_reduce(shown, op=dist.ReduceOp.SUM)
        if rank == 0:
            print(f"step {step:3d}  loss {shown.item() / world:.5f}  ({times[-1] * 1e3:.1f} ms)", flush=True)
    timed = times[args.warmup:] or times
    if rank == 0:
        print(f"ddp_train: {args.backend}: mean step {sum(timed) / len(timed) * 1e3:.1f} ms over {len(timed)} steps",
              flush=True)
    dist.destroy_process_group()


if __name__ == "__main__":
    main()
