"""Ready-made operation graphs (the cuDNN / cudnn-frontend reference patterns), built from ``Graph`` methods alone.

Every pattern function makes a fresh ``Graph``, wires the operations the way cudnn-frontend does for the same
node (the layouts and data types its samples use) and returns a ``Pattern``: the graph, its important tensors by
name and, unless ``build=False``, the finalized operation graph (``pattern.op_graph``); with ``build=False`` any
descriptor can still be inspected or changed before ``Pattern.build``. Patterns whose math is known carry an fp32
``reference`` (torch), which the explorer checks every engine against.

Operations newer than the loaded cuDNN raise ``CudnnVersionError`` before any descriptor is made.
"""
from cudnn_backend.patterns._pattern import Pattern
from cudnn_backend.patterns.attention import (
    diagonal_band_mask,
    sdpa_bwd,
    sdpa_composite_bwd,
    sdpa_composite_fwd,
    sdpa_fwd,
    sdpa_softmax_fwd,
)
from cudnn_backend.patterns.conv import (
    bn_gen_stats,
    concat,
    conv_bias_add_relu,
    conv_bias_relu,
    conv_bwd_data,
    conv_bwd_filter,
    conv_fwd,
)
from cudnn_backend.patterns.matmul import matmul_bias_gelu, matmul_bias_relu
from cudnn_backend.patterns.misc import (
    block_scale_dequantize_matmul,
    block_scale_quantize,
    pooling,
    reduction,
    resample,
    reshape,
    rng,
    rope,
    rope_bwd,
    slice,
    slice_matmul,
    softmax,
    transpose,
)
from cudnn_backend.patterns.norm import (
    batch_norm_fwd,
    bn_finalize,
    layer_norm_bwd,
    layer_norm_fwd,
    rms_norm_bwd,
    rms_norm_fwd,
)

#: Every pattern function by name.
CATALOGUE = {
    "conv_fwd": conv_fwd, "conv_bwd_data": conv_bwd_data, "conv_bwd_filter": conv_bwd_filter,
    "conv_bias_relu": conv_bias_relu, "conv_bias_add_relu": conv_bias_add_relu, "bn_gen_stats": bn_gen_stats,
    "concat": concat, "matmul_bias_gelu": matmul_bias_gelu, "matmul_bias_relu": matmul_bias_relu,
    "layer_norm_fwd": layer_norm_fwd, "rms_norm_fwd": rms_norm_fwd, "layer_norm_bwd": layer_norm_bwd,
    "rms_norm_bwd": rms_norm_bwd, "batch_norm_fwd": batch_norm_fwd, "bn_finalize": bn_finalize,
    "reduction": reduction, "pooling": pooling, "reshape": reshape, "rng": rng, "transpose": transpose,
    "slice": slice, "softmax": softmax, "sdpa_fwd": sdpa_fwd, "sdpa_bwd": sdpa_bwd,
    "sdpa_composite_fwd": sdpa_composite_fwd, "sdpa_composite_bwd": sdpa_composite_bwd,
    "block_scale_quantize": block_scale_quantize, "block_scale_dequantize_matmul": block_scale_dequantize_matmul,
    "rope": rope, "rope_bwd": rope_bwd, "slice_matmul": slice_matmul, "sdpa_softmax_fwd": sdpa_softmax_fwd,
    "diagonal_band_mask": diagonal_band_mask,
}

__all__ = ["Pattern", "CATALOGUE", *CATALOGUE]
