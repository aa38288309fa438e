"""Mixture of experts: MOE_GROUPED_MATMUL and its backward."""
from __future__ import annotations

from cudnn_backend.core.families._family import Family

FAMILY = Family(
    "moe", ("MOE_GROUPED_MATMUL", "MOE_GROUPED_MATMUL_BWD"),
    graph_methods=("moe_grouped_matmul", "moe_grouped_matmul_bwd"),
    doc=__doc__)
