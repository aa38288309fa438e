"""Attention: SDPA_FWD, SDPA_BWD, SOFTMAX and PAGED_CACHE_LOAD (the paged K/V cache read)."""
from __future__ import annotations

from cudnn_backend.core.families._checks import fail
from cudnn_backend.core.families._family import Family

__all__ = ["FAMILY", "softmax_stats_dims"]


def softmax_stats_dims(x_dims):
    """Dims of the unified SOFTMAX's statistics (log-sum-exp, max, sum of exponentials) of scores ``x_dims``
    [b, h, s_q, s_kv]: [b, h, s_q, 1] (cuDNN 9.28.1 takes 4-d tensors only, the last dim 1)."""
    if len(x_dims) != 4:
        fail(f"softmax: x is {list(x_dims)}; the unified SOFTMAX takes attention scores [b, h, s_q, s_kv] (4-d)")
    return [*x_dims[:3], 1]


FAMILY = Family(
    "attention", ("SDPA_FWD", "SDPA_BWD", "SOFTMAX", "PAGED_CACHE_LOAD"),
    graph_methods=("sdpa_fwd", "sdpa_bwd", "softmax", "softmax_composite", "paged_cache_load"),
    doc=__doc__)
