"""Output shapes and strides of the operations the ``Graph`` builder creates, and the one place sizes are read from
Python values (ints only: no float, bool or string is ever taken as an int; every size >= 1): the public names
(``cudnn_backend.shapes``) of rules that live with their operation family in ``core.families`` (the readers,
strides and layouts in ``core.families._build``)."""
from __future__ import annotations

from cudnn_backend.core.families._build import (
    MAX_ELEMENTS,
    MAX_RANK,
    MAX_SIZE,
    as_dims,
    as_list,
    as_sizes,
    as_strides,
    bshd_strides,
    layout_strides,
    nhwc_strides,
    packed_strides,
    pair,
    stride_order,
    strides_like,
)
from cudnn_backend.core.families.attention import softmax_stats_dims
from cudnn_backend.core.families.band import band_mask_dims
from cudnn_backend.core.families.conv import conv_output_dims
from cudnn_backend.core.families.layout import concat_output_dims, slice_output_dims, transpose_output_dims
from cudnn_backend.core.families.matmul import matmul_output_dims
from cudnn_backend.core.families.norm import norm_stats_dims, per_channel_dims
from cudnn_backend.core.families.pointwise import broadcast_dims
from cudnn_backend.core.families.reduction import reduction_output_dims
from cudnn_backend.core.families.resample import resample_output_dims
from cudnn_backend.core.families.rope import rope_dims

__all__ = [
    "as_list", "as_dims", "as_strides", "as_sizes", "pair", "conv_output_dims", "broadcast_dims", "matmul_output_dims",
    "reduction_output_dims", "resample_output_dims", "concat_output_dims", "transpose_output_dims",
    "slice_output_dims", "softmax_stats_dims", "rope_dims", "band_mask_dims", "norm_stats_dims", "per_channel_dims",
    "packed_strides", "stride_order", "strides_like", "nhwc_strides", "bshd_strides", "layout_strides", "MAX_RANK",
    "MAX_SIZE", "MAX_ELEMENTS",
]
