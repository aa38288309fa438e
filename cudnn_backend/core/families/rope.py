"""Rotary position embedding: ROPE_FWD and ROPE_BWD."""
from __future__ import annotations

from cudnn_backend.core.families._family import Family

FAMILY = Family('rope', ('ROPE_FWD', 'ROPE_BWD'), graph_methods=('rope_fwd', 'rope_bwd'), doc=__doc__)
