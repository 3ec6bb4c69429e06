"""opcost_slab: memory kept under a name for a whole run, carved afresh at
every point (the in-place paths' copies of the sets, the peers' copies):
bench/python/opcost_bench.py and opcost_peers.py take their buffers
here."""

import torch

_SLABS = {}


class Slab:
    """Memory kept under a name for the whole run, carved afresh at every
    point (a new Slab of the same name starts at its beginning), so each
    point's buffers sit at the addresses the last point's did: a peer
    library that keeps state per address it is given (zentorch 2.13 keeps
    memory for every new one) sees a bounded set, where fresh buffers at
    every point grew the process by gigabytes over a run. The in-place
    paths' copies of the sets and the peers' copies come from here."""

    def __init__(self, name):
        self.name = name
        self.used = 0

    def carve(self, shape, stride, dtype, device):
        """An uninitialized tensor of shape and stride, 64-byte aligned."""
        item = torch.empty((), dtype=dtype).element_size()
        span = (1 + sum((n - 1) * st for n, st in zip(shape, stride))
                if all(n > 0 for n in shape) else 0)
        nbytes = (span * item + 63) // 64 * 64
        slab = _SLABS.get(self.name)
        if slab is None or slab.numel() < self.used + nbytes:
            # grow (what was carved so far holds the old slab)
            size = max(self.used + nbytes,
                       2 * (slab.numel() if slab is not None else 0))
            slab = _SLABS[self.name] = torch.empty(size, dtype=torch.uint8,
                                                   device=device)
            self.used = 0
        view = slab[self.used:self.used + nbytes].view(dtype)
        self.used += nbytes
        return view.as_strided(tuple(shape), tuple(stride))

    def copy_of(self, t):
        """A copy of t with t's strides."""
        return self.carve(t.shape, t.stride(), t.dtype, t.device).copy_(t)
