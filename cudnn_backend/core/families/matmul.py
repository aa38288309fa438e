"""MATMUL: C [..., M, N] = A [..., M, K] x B [..., K, N]; batch dims broadcast (``pointwise.broadcast_dims``)."""
from __future__ import annotations

from cudnn_backend.core.families._checks import fail
from cudnn_backend.core.families._family import Family
from cudnn_backend.core.families.pointwise import broadcast_dims

__all__ = ["FAMILY", "matmul_output_dims"]


def matmul_output_dims(a_dims, b_dims):
    """C dims of A [..., M, K] x B [..., K, N]: equal ranks, batch dims equal or 1."""
    if len(a_dims) < 2 or len(b_dims) < 2 or len(a_dims) != len(b_dims):
        fail(f"matmul: A {list(a_dims)} and B {list(b_dims)} need equal ranks >= 2")
    if a_dims[-1] != b_dims[-2]:
        fail(f"matmul: inner dims differ: A {list(a_dims)} x B {list(b_dims)}")
    batch = broadcast_dims(a_dims[:-2], b_dims[:-2], what="matmul batch") if len(a_dims) > 2 else []
    return [*batch, a_dims[-2], b_dims[-1]]


FAMILY = Family("matmul", ("MATMUL",), graph_methods=("matmul",), doc=__doc__)
