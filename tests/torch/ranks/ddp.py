"""DDP trained through tiercc and through gloo, from the same start on the same data: the final
parameters must agree (bit for bit with 2 ranks, where a sum of two values has one rounding
whatever the order; to 1e-5 relative beyond). Prints "ddp: ... agree"."""
import os
from datetime import timedelta

import torch
import torch.distributed as dist
import torch.nn as nn
import torch.nn.functional as F
from torch.nn.parallel import DistributedDataParallel as DDP

import tiercc.torch

dist.init_process_group("tiercc", timeout=timedelta(seconds=120))
rank, world = dist.get_rank(), dist.get_world_size()
gloo = dist.new_group(backend="gloo")
STEPS = 20


def train(group):
    torch.manual_seed(0)
    model = nn.Sequential(nn.Linear(16, 64), nn.Tanh(), nn.Linear(64, 64), nn.Tanh(), nn.Linear(64, 4))
    # Small buckets: several allreduces per step, overlapping the backward pass.
    ddp = DDP(model, process_group=group, bucket_cap_mb=0.01)
    opt = torch.optim.SGD(ddp.parameters(), lr=0.05, momentum=0.9)
    data = torch.Generator().manual_seed(1000 + rank)
    for step in range(STEPS):
        x, y = torch.randn(8, 16, generator=data), torch.randn(8, 4, generator=data)
        loss = F.mse_loss(ddp(x), y)
        opt.zero_grad()
        loss.backward()
        opt.step()
    return torch.cat([p.detach().flatten() for p in model.parameters()])


ours = train(None)  # the default group: tiercc
theirs = train(gloo)
if world == 2:
    assert torch.equal(ours, theirs), f"rank {rank}: max difference {(ours - theirs).abs().max().item()}"
else:
    assert torch.allclose(ours, theirs, rtol=1e-5, atol=1e-7), \
        f"rank {rank}: max difference {(ours - theirs).abs().max().item()}"
# DDP keeps the replicas identical: every rank holds rank 0's parameters.
first = ours.clone()
dist.broadcast(first, src=0)
assert torch.equal(first, ours), f"rank {rank}: the replicas differ"
dist.destroy_process_group()
print(f"ddp: {STEPS} steps on {world} ranks, {ours.numel()} parameters: tiercc and gloo agree", flush=True)
