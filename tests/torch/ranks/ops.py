"""Every operation of the tiercc backend, in every dtype, checked against values this rank
computes itself (every rank's input is a function of its rank). Prints "ops: N checks passed"."""
import os
import signal
import sys
from datetime import timedelta

import torch
import torch.distributed as dist

import tiercc.torch

dist.init_process_group("tiercc", timeout=timedelta(seconds=120))
rank, world = dist.get_rank(), dist.get_world_size()
checks = 0

DTYPES = [torch.float32, torch.float64, torch.bfloat16, torch.float16, torch.int8, torch.uint8, torch.int32,
          torch.int64]
FLOATS = {torch.float32, torch.float64, torch.bfloat16, torch.float16}
# Small integers: sums over 4 ranks (<= 20) and products of {1, 2} (<= 16) are exact in every type.
SUMMANDS = lambda r, n, dt: ((torch.arange(n, dtype=torch.int64) * 7 + r * 3) % 5 + 1).to(dt)
FACTORS = lambda r, n, dt: ((torch.arange(n, dtype=torch.int64) + r) % 2 + 1).to(dt)


def check(name, got, want, tol=0.0):
    global checks
    if got.dtype != want.dtype or got.shape != want.shape:
        raise AssertionError(f"rank {rank}: {name}: got {got.dtype}{list(got.shape)}, want {want.dtype}{list(want.shape)}")
    ok = torch.allclose(got.double(), want.double(), rtol=tol, atol=tol) if tol else torch.equal(got, want)
    if not ok:
        bad = (got.double() - want.double()).abs().argmax().item() if got.numel() else 0
        raise AssertionError(f"rank {rank}: {name}: element {bad} is {got.flatten()[bad].item()}, "
                             f"want {want.flatten()[bad].item()}")
    checks += 1


def expect_error(name, fn, *fragments):
    """fn must raise RuntimeError whose message has every fragment."""
    global checks
    try:
        fn()
    except RuntimeError as e:
        missing = [f for f in fragments if f not in str(e)]
        if missing:
            raise AssertionError(f"rank {rank}: {name}: the error lacks {missing}: {e}")
        checks += 1
        return
    raise AssertionError(f"rank {rank}: {name}: no error")


def reference(kind, n, dt):
    gen = FACTORS if kind == "prod" else SUMMANDS
    stack = torch.stack([gen(r, n, dt).double() for r in range(world)])
    return {"sum": stack.sum(0), "prod": stack.prod(0), "min": stack.min(0).values,
            "max": stack.max(0).values, "avg": stack.mean(0)}[kind]


OPS = {"sum": dist.ReduceOp.SUM, "prod": dist.ReduceOp.PRODUCT, "min": dist.ReduceOp.MIN,
       "max": dist.ReduceOp.MAX, "avg": dist.ReduceOp.AVG}


def tolerance(dt):
    return {torch.bfloat16: 1e-2, torch.float16: 1e-3}.get(dt, 1e-6)


def reductions(dt, n):
    for kind, op in OPS.items():
        if kind == "avg" and dt not in FLOATS:
            continue  # an integer average is not defined by torch either
        gen = FACTORS if kind == "prod" else SUMMANDS
        want = reference(kind, n, dt)
        tol = tolerance(dt) if kind == "avg" else 0.0
        t = gen(rank, n, dt)
        dist.all_reduce(t, op=op)
        check(f"all_reduce {kind} {dt} x{n}", t, want.to(dt), tol)
        root = world - 1
        t = gen(rank, n, dt)
        dist.reduce(t, dst=root, op=op)
        if rank == root:
            check(f"reduce {kind} {dt} x{n}", t, want.to(dt), tol)
        # reduce_scatter: block j of rank r's input is SUMMANDS(r * world + j)
        inputs = [gen(rank * 0 + j + rank, n, dt) for j in range(world)]
        out = torch.empty(n, dtype=dt)
        dist.reduce_scatter(out, inputs, op=op)
        stack = torch.stack([gen(r + rank, n, dt).double() for r in range(world)])
        want_rs = {"sum": stack.sum(0), "prod": stack.prod(0), "min": stack.min(0).values,
                   "max": stack.max(0).values, "avg": stack.mean(0)}[kind]
        check(f"reduce_scatter {kind} {dt} x{n}", out, want_rs.to(dt), tol)
        flat = torch.cat(inputs)
        out = torch.empty(n, dtype=dt)
        dist.reduce_scatter_tensor(out, flat, op=op)
        check(f"reduce_scatter_tensor {kind} {dt} x{n}", out, want_rs.to(dt), tol)


def movement(dt, n):
    mine = SUMMANDS(rank, n, dt)
    everyone = [SUMMANDS(r, n, dt) for r in range(world)]
    for root in range(world):
        t = mine.clone()
        dist.broadcast(t, src=root)
        check(f"broadcast from {root} {dt} x{n}", t, everyone[root])
    outs = [torch.empty(n, dtype=dt) for _ in range(world)]
    dist.all_gather(outs, mine)
    for r in range(world):
        check(f"all_gather {dt} x{n} block {r}", outs[r], everyone[r])
    whole = torch.empty(world * n, dtype=dt)
    dist.all_gather_into_tensor(whole, mine)
    check(f"all_gather_into_tensor {dt} x{n}", whole, torch.cat(everyone))
    # all_to_all_single, even: block j of rank r holds 1000 r + j (mod 100 for int8/uint8)
    code = lambda r, j: (r * 10 + j) % 100
    x = torch.cat([torch.full((n,), code(rank, j)).to(dt) for j in range(world)])
    y = torch.empty_like(x)
    dist.all_to_all_single(y, x)
    check(f"all_to_all_single even {dt} x{n}", y, torch.cat([torch.full((n,), code(r, rank)).to(dt) for r in range(world)]))
    # with split sizes: rank r sends r + j + 1 rows of 3 to rank j
    rows = lambda r, j: r + j + 1
    x = torch.cat([torch.full((rows(rank, j), 3), code(rank, j)).to(dt) for j in range(world)])
    y = torch.empty((sum(rows(r, rank) for r in range(world)), 3), dtype=dt)
    dist.all_to_all_single(y, x, output_split_sizes=[rows(r, rank) for r in range(world)],
                           input_split_sizes=[rows(rank, j) for j in range(world)])
    check(f"all_to_all_single splits {dt}", y,
          torch.cat([torch.full((rows(r, rank), 3), code(r, rank)).to(dt) for r in range(world)]))
    # list all_to_all with uneven sizes
    ins = [torch.full((rows(rank, j),), code(rank, j)).to(dt) for j in range(world)]
    outs = [torch.empty(rows(r, rank), dtype=dt) for r in range(world)]
    dist.all_to_all(outs, ins)
    for r in range(world):
        check(f"all_to_all {dt} from {r}", outs[r], torch.full((rows(r, rank),), code(r, rank)).to(dt))
    root = world // 2
    gathered = [torch.empty(n, dtype=dt) for _ in range(world)] if rank == root else None
    dist.gather(mine, gathered, dst=root)
    if rank == root:
        for r in range(world):
            check(f"gather {dt} block {r}", gathered[r], everyone[r])
    out = torch.empty(n, dtype=dt)
    dist.scatter(out, [SUMMANDS(j + 10, n, dt) for j in range(world)] if rank == root else None, src=root)
    check(f"scatter {dt}", out, SUMMANDS(rank + 10, n, dt))
    if world > 1:
        got = torch.empty(n, dtype=dt)
        ops = [dist.P2POp(dist.isend, mine, (rank + 1) % world), dist.P2POp(dist.irecv, got, (rank - 1) % world)]
        for w in dist.batch_isend_irecv(ops):
            w.wait()
        check(f"batch_isend_irecv ring {dt}", got, everyone[(rank - 1) % world])
        # plain send/recv, even ranks first
        if rank % 2 == 0 and rank + 1 < world:
            dist.send(mine, rank + 1)
            got = torch.empty(n, dtype=dt)
            dist.recv(got, rank + 1)
            check(f"send/recv {dt}", got, everyone[rank + 1])
        elif rank % 2 == 1:
            got = torch.empty(n, dtype=dt)
            dist.recv(got, rank - 1)
            check(f"send/recv {dt}", got, everyone[rank - 1])
            dist.send(mine, rank - 1)


for dt in DTYPES:
    for n in (1, 37, 4099):
        reductions(dt, n)
        movement(dt, n)
dist.barrier()

# Sizes that take several fragments and the pipelined hierarchical plans.
for n in (1 << 20, 3 * (1 << 20) + 5):
    reductions(torch.float32, n) if n == 1 << 20 else None
    movement(torch.float32, n)
    t = SUMMANDS(rank, n, torch.float32)
    dist.all_reduce(t)
    check(f"all_reduce f32 x{n}", t, reference("sum", n, torch.float32).float())

# Complex travels as pairs of reals; bool min/max are logical and/or.
z = torch.complex(SUMMANDS(rank, 33, torch.float32), -SUMMANDS(rank, 33, torch.float32))
dist.all_reduce(z)
want = reference("sum", 33, torch.float32).float()
check("all_reduce complex64", z, torch.complex(want, -want))
b = torch.tensor([rank == 0, True, False])
dist.all_reduce(b, op=dist.ReduceOp.MAX)
check("all_reduce bool max", b, torch.tensor([True, True, False]))

# allreduce_coalesced (DDP's older path) and allgather_coalesced.
ts = [SUMMANDS(rank, 5, torch.float32), SUMMANDS(rank, 9, torch.float32).view(3, 3)]
dist.all_reduce_coalesced(ts)
check("all_reduce_coalesced 0", ts[0], reference("sum", 5, torch.float32).float())
check("all_reduce_coalesced 1", ts[1], reference("sum", 9, torch.float32).float().view(3, 3))
outs = [[torch.empty(5), torch.empty(9)] for _ in range(world)]
dist.all_gather_coalesced(outs, [SUMMANDS(rank, 5, torch.float32), SUMMANDS(rank + 1, 9, torch.float32)])
for r in range(world):
    check(f"all_gather_coalesced rank {r}", torch.cat(outs[r]),
          torch.cat([SUMMANDS(r, 5, torch.float32), SUMMANDS(r + 1, 9, torch.float32)]))

# Non-contiguous tensors are handled: a transposed in-place tensor, strided gather outputs.
base = SUMMANDS(rank, 12, torch.float32).view(3, 4)
t = base.t()
dist.all_reduce(t)
check("all_reduce transposed", t, reference("sum", 12, torch.float32).float().view(3, 4).t())
big = torch.zeros(world, 8)
outs = [big[r, ::2] for r in range(world)]
dist.all_gather(outs, SUMMANDS(rank, 4, torch.float32))
for r in range(world):
    check(f"all_gather strided {r}", big[r, ::2], SUMMANDS(r, 4, torch.float32))
    check(f"all_gather strided {r} leaves gaps", big[r, 1::2], torch.zeros(4))

# async_op: a Work whose wait() takes a timeout, and whose Future completes with the tensors.
t = SUMMANDS(rank, 1000, torch.float32)
work = dist.all_reduce(t, async_op=True)
fut = work.get_future()
assert work.wait(timeout=timedelta(seconds=60))
value = fut.wait()
check("async all_reduce", t, reference("sum", 1000, torch.float32).float())
assert value[0] is t or torch.equal(value[0], t), "the future's value is not the tensor"
chained = dist.all_reduce(SUMMANDS(rank, 10, torch.float32), async_op=True).get_future().then(lambda f: f.value()[0] * 2)
check("future.then", chained.wait(), reference("sum", 10, torch.float32).float() * 2)

# Zero copy: a tensor in tiercc's symmetric memory.
n = 1 << 20
s = tiercc.torch.empty(n)
s.copy_(SUMMANDS(rank, n, torch.float32))
dist.all_reduce(s)
check("all_reduce symmetric", s, reference("sum", n, torch.float32).float())
s2 = tiercc.torch.empty(4, 5, dtype=torch.bfloat16)
check("empty shape", torch.tensor(list(s2.shape)), torch.tensor([4, 5]))
local = int(tiercc.torch.describe().split("(")[1].split()[0])
if local > 1:
    path = tiercc.torch.stats()["scale_up_path"]
    # The last collective ran on symmetric memory (the shape check is local).
    assert path in ("zero_copy",), f"rank {rank}: a symmetric allreduce took the {path} path"
del s, s2

# Subgroups: each is a communicator of its own, on a prefix of torch's store.
ends = dist.new_group(sorted({0, world - 1}))
if rank in (0, world - 1):
    t = SUMMANDS(rank, 100, torch.float32)
    dist.all_reduce(t, group=ends)
    want = SUMMANDS(0, 100, torch.float32) + (SUMMANDS(world - 1, 100, torch.float32) if world > 1 else 0)
    check("all_reduce in a subgroup", t, want)
    members = [torch.empty(2) for _ in range(dist.get_world_size(ends))]
    dist.all_gather(members, torch.full((2,), float(rank)), group=ends)
    check("all_gather in a subgroup", torch.stack(members)[:, 0], torch.tensor(sorted({0.0, float(world - 1)})))

# Bad input raises, names what was wrong, and changes nothing: the group goes on working.
expect_error("wrong output count", lambda: dist.all_gather([torch.empty(3)] * (world + 1), torch.empty(3)),
             "tiercc allgather", str(world))
expect_error("type mismatch", lambda: dist.all_gather_into_tensor(torch.empty(3 * world, dtype=torch.int32),
                                                                  torch.empty(3)), "Int", "Float")
expect_error("bitwise op", lambda: dist.all_reduce(torch.ones(3, dtype=torch.int32), op=dist.ReduceOp.BAND),
             "not supported")
expect_error("bool sum", lambda: dist.all_reduce(torch.ones(3, dtype=torch.bool)), "bool")
if world > 1:
    expect_error("uneven split", lambda: dist.all_to_all_single(torch.empty(world * 2 + 1), torch.empty(world * 2 + 1)),
                 "split")
    expect_error("tag", lambda: dist.send(torch.ones(2), (rank + 1) % world, tag=7), "tag 7")
t = torch.ones(3)
dist.all_reduce(t)
check("all_reduce after errors", t, torch.full((3,), float(world)))

dist.barrier()
dist.destroy_process_group()
print(f"ops: {checks} checks passed on rank {rank} of {world}", flush=True)
