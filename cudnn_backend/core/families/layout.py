"""Layout operations: CONCAT, RESHAPE, TRANSPOSE, SLICE."""
from __future__ import annotations

from cudnn_backend.core.families._family import Family

FAMILY = Family('layout', ('CONCAT', 'RESHAPE', 'TRANSPOSE', 'SLICE'), graph_methods=('concat', 'reshape', 'transpose', 'slice'), doc=__doc__)
