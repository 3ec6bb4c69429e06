"""opcost_slab: memory kept under a name for a whole run, carved afresh at
every point (the in-place paths' copies of the sets, the peers' copies):
bench/python/opcost_bench.py and opcost_peers.py take their buffers
here."""

import torch

_SLABS = {}

# The run's slabs, each shared by every path of its kind: a point's paths
# are prepared and verified one after the other and timed in alternation,
# so paths of one kind can take the same addresses (the pairing's rule:
# the same buffers), and the run holds one slab per kind instead of one
# per path (nine with two peers).
IN_PLACE_SETS = "in-place sets"  # the sets' copies the in-place forms
#                                   mutate; each path's prepare copies
#                                   the sets into them again
CALL_COPIES = "call copies"  # contiguous copies made inside a timed call
CALL_OUTPUTS = "call outputs"  # outputs a peer writes inside a call


class Slab:
    """Memory kept under a name for the whole run, carved afresh at every
    point (a new Slab of the same name starts at its beginning), so each
    point's buffers sit at the addresses the last point's did: a peer
    library that keeps state per address it is given sees a bounded set,
    and the run allocates no large block per point and path. The in-place
    paths' copies of the sets and the peers' copies come from here."""

    def __init__(self, name, device, reserve=0):
        """reserve: the bytes this point will carve (carved_bytes summed),
        so the slab grows at most once a point, before any carve (a slab
        that grew carve by carve left a block behind at every step, and a
        peer that keeps what it is handed kept them all)."""
        self.name = name
        self.key = (name, str(device))
        self.device = device
        self.used = 0
        self._grow(reserve)

    def _grow(self, need):
        slab = _SLABS.get(self.key)
        if slab is None or slab.numel() < need:
            # doubling bounds how often a run grows it; what was carved
            # from the old slab holds it; a carve keeps its offset, so a
            # later Slab of this name lays its tensors out as this one did
            # (paths sharing the slab share a tensor only with its own
            # counterpart)
            size = max(need, 2 * (slab.numel() if slab is not None else 0))
            _SLABS[self.key] = torch.empty(size, dtype=torch.uint8,
                                           device=self.device)

    def carve(self, shape, stride, dtype):
        """An uninitialized tensor of shape and stride, 64-byte aligned."""
        nbytes = carved_bytes(shape, stride, dtype)
        self._grow(self.used + nbytes)
        view = _SLABS[self.key][self.used:self.used + nbytes].view(dtype)
        self.used += nbytes
        return view.as_strided(tuple(shape), tuple(stride))

    def copy_of(self, t):
        """A copy of t with t's strides."""
        return self.carve(t.shape, t.stride(), t.dtype).copy_(t)


def carved_bytes(shape, stride, dtype):
    """What Slab.carve takes for a tensor of shape and stride."""
    item = torch.empty((), dtype=dtype).element_size()
    span = (1 + sum((n - 1) * st for n, st in zip(shape, stride))
            if all(n > 0 for n in shape) else 0)
    return (span * item + 63) // 64 * 64


def contiguous_stride(shape):
    """The strides of a contiguous tensor of shape."""
    stride, n = [], 1
    for size in reversed(shape):
        stride.insert(0, n)
        n *= max(size, 1)
    return stride
