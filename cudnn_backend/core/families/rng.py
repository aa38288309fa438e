"""RNG: random tensors (Bernoulli dropout masks) from a seed and offset."""
from __future__ import annotations

from cudnn_backend.core.families._family import Family

FAMILY = Family("rng", ("RNG",), graph_methods=("rng",), doc=__doc__)
