"""Shape checks cuDNN does not make, run before an operation descriptor is finalized (every API).

cuDNN 9.19 accepts some outputs whose shape disagrees with their inputs and then writes out of bounds at
execution (statistics of GEN_STATS, BN finalize, normalizations; pointwise outputs that are not the broadcast
shape; reduction outputs that do not divide the input; RESAMPLE_BWD max pooling without its index tensor, a
SIGSEGV in heuristics). Each check lives with its operation family in ``core.families`` (beside the shape rule the
``Graph`` builder uses); this module is the table ``Descriptor.finalize`` reads:
``FINALIZE_CHECKS[descriptor type](descriptor)``, skipped for an operation whose tensors all have fewer elements
than ``FINALIZE_CHECK_FLOORS[descriptor type]`` (where the family declares one: below it, cuDNN's own finalize
refuses all the check would) and setting none of the attributes listed with it.
"""
from __future__ import annotations

from cudnn_backend.core.families import FINALIZE_CHECK_FLOORS, FINALIZE_CHECKS

__all__ = ["FINALIZE_CHECKS", "FINALIZE_CHECK_FLOORS"]
