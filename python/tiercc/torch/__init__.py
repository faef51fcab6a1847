"""tiercc as a torch.distributed backend.

    import tiercc.torch
    torch.distributed.init_process_group("tiercc")   # under torchrun or tiercc-run

The backend meets its peers through the store torch hands it (no store or port of its own);
ranks group into scale-up domains by host, or by TIERCC_DOMAIN_SIZE / TIERCC_DOMAIN_ID.
"""
import torch
import torch.distributed as dist

from tiercc import _torch as _ext

ProcessGroupTiercc = _ext.ProcessGroupTiercc


def _create(store, rank, size, timeout):
    return _ext.create_process_group(store, rank, size, timeout)


if "TIERCC" not in dist.Backend._plugins:
    dist.Backend.register_backend("tiercc", _create)


def _tiercc_group(group):
    pg = group if group is not None else dist.distributed_c10d._get_default_group()
    if not isinstance(pg, ProcessGroupTiercc):
        raise RuntimeError(f"tiercc.torch: {pg!r} is not a tiercc process group "
                           "(init_process_group('tiercc') or new_group(backend='tiercc') makes one)")
    return pg


def empty(*size, dtype=torch.float32, group=None):
    """A CPU tensor in tiercc's symmetric memory: every rank of the domain maps it, so collectives
    on it inside the domain are zero copy. Collective: every rank of the group calls it with the
    same size, in the same order; the memory goes back when the tensor dies (free tensors in the
    same order on every rank, as with any collective)."""
    if len(size) == 1 and isinstance(size[0], (tuple, list, torch.Size)):
        size = tuple(size[0])
    return _tiercc_group(group).empty_shared(list(size), dtype)


def stats(group=None):
    """Bytes this rank moved on each tier so far, against the slow-tier lower bound."""
    return _tiercc_group(group).stats()


def describe(group=None):
    """E.g. 'rank 3 of 4, domain 1 of 2 (2 ranks), scale-out tcp'."""
    return _tiercc_group(group).describe()
