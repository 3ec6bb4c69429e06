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
def decompose_under_compile():
    """Inside: torch.compile (Inductor) decomposes the rowops ops."""
    from torch._inductor import decomposition as inductor_decomp
    # Inductor reads select_decomp_table(): the base table, or a cached
    # copy of it (fast_random_decomps); both get the entries.
    tables = [inductor_decomp.decompositions,
              inductor_decomp.fast_random_decomps()]
    added = []
    for table in tables:
        for op, ref in _decompositions().items():
            if op not in table:
                table[op] = ref
                added.append((table, op))
    # The compile caches do not key on the decomposition table: graphs
    # compiled inside must not reuse (or leave behind) opaque artefacts.
    try:
        with torch._inductor.config.patch(fx_graph_cache=False), \
                torch._functorch.config.patch(enable_autograd_cache=False):
            yield
    finally:
        for table, op in added:
            table.pop(op, None)


def inductor_decomposed():
    """A torch.compile backend: Inductor with the rowops ops decomposed,
    whenever its graphs are compiled (no context needed)."""
    from torch._inductor.compile_fx import compile_fx
    from torch._inductor.decomposition import select_decomp_table

    table = {**select_decomp_table(), **_decompositions()}

    def backend(gm, example_inputs):
        with torch._inductor.config.patch(fx_graph_cache=False), \
                torch._functorch.config.patch(enable_autograd_cache=False):
            return compile_fx(gm, example_inputs, decompositions=table)
    return backend
