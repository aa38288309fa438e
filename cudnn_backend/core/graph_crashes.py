"""Whole graphs that crash cuDNN where no single operation's check can see it, refused before cuDNN is handed them.

Checked where heuristics or an engine take a graph (the finalize of an ENGINEHEUR or ENGINE descriptor), so every API
is covered: the Graph builder, the typed classes and the generic descriptors.

The composite attention backward (cudnn-frontend's classic fused-attention backward graph, ``patterns.
sdpa_composite_bwd``: five matmuls, a reduction, transposes as reshapes) whose queries are one row in all (batch,
heads and query length all 1) crashes the process (SIGSEGV) in the isSupported check of its runtime-compiled engine
(engine 7), reached by every heuristics mode and by that engine's config. Measured offline on the H200 profile:
cuDNN 9.26.1, 9.27.0, 9.28.0 and 9.28.1 crash; 9.17.1, 9.19.0, 9.20.0, 9.22.0 and 9.24.1 do not. Two rows (any of the
three sizes 2) do not crash, and neither does the SDPA_BWD operation on the same sizes. Nothing is known of 9.25, so
it is refused from there on, and in every later release until one is measured not to crash.
"""
from __future__ import annotations

from math import prod

from cudnn_backend.core.versions import format_version

__all__ = ["COMPOSITE_ATTENTION_BACKWARD_CRASHES", "COMPOSITE_ATTENTION_BACKWARD_MATMULS",
           "COMPOSITE_ATTENTION_BACKWARD_RESHAPES", "composite_attention_backward_problem"]

COMPOSITE_ATTENTION_BACKWARD_CRASHES = (92500, None)  # the releases (first, last; None: every later one)
COMPOSITE_ATTENTION_BACKWARD_MATMULS = 5  # S = Q K^T, dP = dO V^T, dV, dK, dQ
COMPOSITE_ATTENTION_BACKWARD_RESHAPES = 2  # P^T and dS^T (K from K^T is a third)


def _crashes_in(version, releases) -> bool:
    first, last = releases
    return version >= first and (last is None or version <= last)


def composite_attention_backward_problem(version, matmul_operands, reductions, reshapes) -> str | None:
    """Why cuDNN ``version`` would crash on a graph of these operations, or None. ``matmul_operands``: each matmul's
    (operation label, A's name, A's dims, whether A is virtual); ``reductions`` and ``reshapes``: how many the graph
    has. A graph of the composite backward's kinds and counts of operations one of whose matmuls reads a stored A of
    one row in all (the queries, or dO) is refused: that engine takes such graphs whatever their other operations."""
    if (not _crashes_in(version, COMPOSITE_ATTENTION_BACKWARD_CRASHES) or reductions < 1
            or reshapes < COMPOSITE_ATTENTION_BACKWARD_RESHAPES
            or len(matmul_operands) < COMPOSITE_ATTENTION_BACKWARD_MATMULS):
        return None
    for label, name, dims, virtual in matmul_operands:
        if not virtual and dims and len(dims) >= 2 and prod(dims[:-1]) == 1:
            return (f"{label} reads {name} {list(dims)}: a single row of queries (batch, heads and query length all "
                    f"1) in a composite attention backward ({len(matmul_operands)} matmuls, {reductions} "
                    f"reduction{'s' if reductions != 1 else ''}, {reshapes} reshapes), which crashes cuDNN "
                    f"{format_version(version)} (SIGSEGV in its composite attention engine, engine 7, from heuristics "
                    "and that engine's config; measured in 9.26.1 to 9.28.1). Refused before cuDNN sees it: use the "
                    "SDPA_BWD operation (Graph.sdpa_bwd, patterns.sdpa_bwd), which takes these sizes, or batch two "
                    "rows or more")
    return None
