"""The compiler boundary of the rowops ops, selectable by the user.

By default ``torch.compile`` keeps ``rowops::fused_add_rms_norm`` (and
``rms_norm_rows`` and their backward ops) opaque: one call of the fused
kernel in the generated code. ``decompose_under_compile()`` registers, for
as long as it is active, decompositions of those ops into their aten
references in Inductor's decomposition table, so graphs compiled inside it
trace through them and Inductor may fuse them with their neighbours.
Compile inside the context (a graph compiled outside keeps its boundary)."""

import contextlib

import torch

_ops = torch.ops.rowops


def _decompositions():
    return {
        _ops.fused_add_rms_norm.default:
            _ops.fused_add_rms_norm_reference.default,
        _ops.rms_norm_rows.default: _ops.rms_norm_rows_reference.default,
        _ops.fused_add_rms_norm_backward.default:
            _ops.fused_add_rms_norm_backward_reference.default,
        _ops.rms_norm_rows_backward.default:
            _ops.rms_norm_rows_backward_reference.default,
    }


def decompositions():
    """{rowops op: its aten decomposition}, e.g. for aot_autograd."""
    return {op: ref for op, ref in _decompositions().items()}


@contextlib.contextmanager
def _in_inductor_tables():
    """The rowops decompositions in Inductor's own decomposition tables
    while inside. Inductor reads select_decomp_table(): the base table, or
    a cached copy of it (fast_random_decomps); both get the entries."""
    from torch._inductor import decomposition as inductor_decomp
    tables = [inductor_decomp.decompositions,
              inductor_decomp.fast_random_decomps()]
    added = []
    for table in tables:
        for op, ref in _decompositions().items():
            if op not in table:
                table[op] = ref
                added.append((table, op))
    try:
        yield
    finally:
        for table, op in added:
            table.pop(op, None)


# Which compile caches may serve a decomposed graph. The AOTAutograd cache
# keys on the graph before decomposition (the rowops call in it), so an
# opaque artefact would answer a decomposed compile: it stays off inside.
# Inductor's FX graph cache keys on the graph after it (aten ops only, the
# rowops call gone), so its entries are right for either boundary and it
# stays on: a decomposed graph compiled again is loaded (about 0.5 s) instead
# of compiled (1.3-1.5 s). A decomposition table handed to compile_fx would
# make every such compile bypass that cache (its key cannot pickle the
# table), so the entries go into Inductor's tables instead.
def _no_autograd_cache():
    return torch._functorch.config.patch(enable_autograd_cache=False)


@contextlib.contextmanager
def decompose_under_compile():
    """Inside: torch.compile (Inductor) decomposes the rowops ops."""
    with _in_inductor_tables(), _no_autograd_cache():
        yield


def inductor_decomposed():
    """A torch.compile backend: Inductor with the rowops ops decomposed,
    whenever its graphs are compiled (no context needed)."""
    from torch._inductor.compile_fx import compile_fx

    def backend(gm, example_inputs):
        with decompose_under_compile():
            return compile_fx(gm, example_inputs)
    return backend
