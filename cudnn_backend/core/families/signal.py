"""SIGNAL: a flag set or waited on between graphs."""
from __future__ import annotations

from cudnn_backend.core.families._family import Family

FAMILY = Family("signal", ("SIGNAL",), graph_methods=("signal",), doc=__doc__)
