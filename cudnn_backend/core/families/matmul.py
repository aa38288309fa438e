"""MATMUL: C [..., M, N] = A [..., M, K] x B [..., K, N]; batch dims broadcast (``pointwise.broadcast_dims``)."""
from __future__ import annotations

from cudnn_backend.core.families._family import Family

FAMILY = Family('matmul', ('MATMUL',), graph_methods=('matmul',), doc=__doc__)
