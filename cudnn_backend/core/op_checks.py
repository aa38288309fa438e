"""Shape checks cuDNN does not make, run before an operation descriptor is finalized (every API).

cuDNN 9.19 accepts some outputs whose shape disagrees with their inputs and then writes out of bounds at
execution (statistics of GEN_STATS, BN finalize, normalizations; pointwise outputs that are not the broadcast
shape; reduction outputs that do not divide the input; RESAMPLE_BWD max pooling without its index tensor, a
SIGSEGV in heuristics). Each check lives with its operation family in ``core.families`` (beside the shape rule the
``Graph`` builder uses); this module is the table ``Descriptor.finalize`` reads:
``FINALIZE_CHECKS[descriptor type](descriptor)``.
"""
from __future__ import annotations

from cudnn_backend.core.families import FINALIZE_CHECKS, norm
from cudnn_backend.core.families.norm import (
    check_bn_bwd_weights,
    check_bn_finalize,
    check_gen_stats,
    check_norm_backward,
    check_norm_forward,
)
from cudnn_backend.core.families.pointwise import check_pointwise
from cudnn_backend.core.families.reduction import check_reduction
from cudnn_backend.core.families.resample import check_resample_bwd, check_resample_fwd

__all__ = ["FINALIZE_CHECKS", "expected_norm_stats_dims", "check_bn_bwd_weights", "check_bn_finalize",
           "check_gen_stats", "check_norm_backward", "check_norm_forward", "check_pointwise", "check_reduction",
           "check_resample_bwd", "check_resample_fwd"]

#: the normalization statistics rule (``core.families.norm.stats_dims``), under its former name
expected_norm_stats_dims = norm.stats_dims
