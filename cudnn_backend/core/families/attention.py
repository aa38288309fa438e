"""Attention: SDPA_FWD, SDPA_BWD, SOFTMAX and PAGED_CACHE_LOAD (the paged K/V cache read)."""
from __future__ import annotations

from cudnn_backend.core.families._family import Family

FAMILY = Family('attention', ('SDPA_FWD', 'SDPA_BWD', 'SOFTMAX', 'PAGED_CACHE_LOAD'), graph_methods=('sdpa_fwd', 'sdpa_bwd', 'softmax', 'softmax_composite', 'paged_cache_load'), doc=__doc__)
