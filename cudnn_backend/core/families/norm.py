"""Normalizations (NORM_FORWARD, NORM_BACKWARD: layer, RMS, batch, instance, adaptive layer, group norm) and the
batch-norm pieces of fused convolutions (GEN_STATS, BN_FINALIZE_STATISTICS, BN_BWD_WEIGHTS).

``stats_dims`` is the one rule for the shape of the mean / inverse variance: the ``Graph`` builder makes them so,
the finalize checks below refuse any other (cuDNN 9.19 accepts statistics whose shape disagrees with their input and
writes out of bounds: cudnn-frontend's scale_bias_conv_genstats sample declares GEN_STATS' sums [1,32,1,1] for a
256-channel input and cuDNN writes all 256 into each), and the reference evaluator computes them so.
"""
from __future__ import annotations

from cudnn_backend._bindings.enums import AttributeName as A
from cudnn_backend._bindings.enums import NormFwdPhase, NormMode
from cudnn_backend.core.families._checks import dims, need, need_float, per_channel
from cudnn_backend.core.families._family import Family

__all__ = ["FAMILY", "stats_dims", "per_channel"]


def stats_dims(mode, x_dims, scale_dims):
    """Mean / inverse-variance dims a normalization writes (a tuple; None when this rule does not know: the mode is
    unknown, GROUP_NORM or newer, or the scale's rank differs): batch norm one value per channel, instance norm one
    per (sample, channel), layer / RMS / adaptive layer norm one per position the scale does not span, the batch
    axis always kept (x's dims with 1 wherever the scale is not 1, but axis 0): layer norm X [T, H, 1, 1] with scale
    [1, H, 1, 1] gives [T, 1, 1, 1]; adaptive layer norm X [B, S, D] with a per-sample scale [B, 1, D] gives
    [B, S, 1]."""
    x_dims = tuple(x_dims)
    try:
        mode = NormMode(int(mode))
    except (TypeError, ValueError):
        return None
    if len(x_dims) < 2:
        return None
    if mode == NormMode.CUDNN_BATCH_NORM:
        return per_channel(x_dims)
    if mode == NormMode.CUDNN_INSTANCE_NORM:
        return (x_dims[0], x_dims[1], *([1] * (len(x_dims) - 2)))
    if scale_dims is None or len(scale_dims) != len(x_dims):
        return None
    if mode in (NormMode.CUDNN_LAYER_NORM, NormMode.CUDNN_RMS_NORM) or mode.name == "CUDNN_ADA_LAYER_NORM":
        return tuple(d if i == 0 or s == 1 else 1 for i, (d, s) in enumerate(zip(x_dims, scale_dims)))
    return None  # GROUP_NORM and newer modes: cuDNN's own checks


def check_gen_stats(op):
    v = op.value_of  # one stored value, no dict of every attribute (this runs on every finalize)
    xd = dims(v(A.CUDNN_ATTR_OPERATION_GENSTATS_XDESC))
    if xd is None or len(xd) < 2:
        return
    for attr, slot in ((A.CUDNN_ATTR_OPERATION_GENSTATS_SUMDESC, "sumdesc"),
                       (A.CUDNN_ATTR_OPERATION_GENSTATS_SQSUMDESC, "sqsumdesc")):
        need(op, v(attr), slot, per_channel(xd), f"one value per channel of xdesc {list(xd)}")


_BN_FINALIZE_PER_CHANNEL = [
    (A.CUDNN_ATTR_OPERATION_BN_FINALIZE_Y_SQ_SUM_DESC, "y_sq_sum_desc"),
    (A.CUDNN_ATTR_OPERATION_BN_FINALIZE_SCALE_DESC, "scale_desc"),
    (A.CUDNN_ATTR_OPERATION_BN_FINALIZE_BIAS_DESC, "bias_desc"),
    (A.CUDNN_ATTR_OPERATION_BN_FINALIZE_PREV_RUNNING_MEAN_DESC, "prev_running_mean_desc"),
    (A.CUDNN_ATTR_OPERATION_BN_FINALIZE_PREV_RUNNING_VAR_DESC, "prev_running_var_desc"),
    (A.CUDNN_ATTR_OPERATION_BN_FINALIZE_UPDATED_RUNNING_MEAN_DESC, "updated_running_mean_desc"),
    (A.CUDNN_ATTR_OPERATION_BN_FINALIZE_UPDATED_RUNNING_VAR_DESC, "updated_running_var_desc"),
    (A.CUDNN_ATTR_OPERATION_BN_FINALIZE_SAVED_MEAN_DESC, "saved_mean_desc"),
    (A.CUDNN_ATTR_OPERATION_BN_FINALIZE_SAVED_INV_STD_DESC, "saved_inv_std_desc"),
    (A.CUDNN_ATTR_OPERATION_BN_FINALIZE_EQ_SCALE_DESC, "eq_scale_desc"),
    (A.CUDNN_ATTR_OPERATION_BN_FINALIZE_EQ_BIAS_DESC, "eq_bias_desc"),
]


def check_bn_finalize(op):
    v = op.value_of
    sd = dims(v(A.CUDNN_ATTR_OPERATION_BN_FINALIZE_Y_SUM_DESC))
    if sd is None:
        return
    for attr, slot in _BN_FINALIZE_PER_CHANNEL:
        need(op, v(attr), slot, sd, f"the per-channel shape of y_sum_desc {list(sd)}")


def check_norm_forward(op):
    v = op.value_of
    xd = dims(v(A.CUDNN_ATTR_OPERATION_NORM_FWD_XDESC))
    mode = v(A.CUDNN_ATTR_OPERATION_NORM_FWD_MODE)
    if xd is None or mode is None or len(xd) < 2:
        return
    expected = stats_dims(mode, xd, dims(v(A.CUDNN_ATTR_OPERATION_NORM_FWD_SCALE_DESC)))
    for attr, slot in ((A.CUDNN_ATTR_OPERATION_NORM_FWD_MEAN_DESC, "mean_desc"),
                       (A.CUDNN_ATTR_OPERATION_NORM_FWD_INV_VARIANCE_DESC, "inv_variance_desc")):
        need(op, v(attr), slot, expected, f"the statistics of xdesc {list(xd)} for {NormMode(mode).name}")
        need_float(op, v(attr), slot, "normalization statistics are fp32")
    if v(A.CUDNN_ATTR_OPERATION_NORM_FWD_PHASE) == NormFwdPhase.CUDNN_NORM_FWD_TRAINING and \
            int(mode) == NormMode.CUDNN_BATCH_NORM:
        for attr, slot in ((A.CUDNN_ATTR_OPERATION_NORM_FWD_OUTPUT_RUNNING_MEAN_DESC, "output_running_mean_desc"),
                           (A.CUDNN_ATTR_OPERATION_NORM_FWD_OUTPUT_RUNNING_VAR_DESC, "output_running_var_desc"),
                           (A.CUDNN_ATTR_OPERATION_NORM_FWD_INPUT_RUNNING_MEAN_DESC, "input_running_mean_desc"),
                           (A.CUDNN_ATTR_OPERATION_NORM_FWD_INPUT_RUNNING_VAR_DESC, "input_running_var_desc")):
            need(op, v(attr), slot, per_channel(xd), f"one running statistic per channel of xdesc {list(xd)}")
            need_float(op, v(attr), slot, "running statistics are fp32")
    need(op, v(A.CUDNN_ATTR_OPERATION_NORM_FWD_YDESC), "ydesc", xd, "the output has the input's shape")


def check_norm_backward(op):
    v = op.value_of
    xd = dims(v(A.CUDNN_ATTR_OPERATION_NORM_BWD_XDESC))
    mode = v(A.CUDNN_ATTR_OPERATION_NORM_BWD_MODE)
    if xd is None or mode is None or len(xd) < 2:
        return
    sd = dims(v(A.CUDNN_ATTR_OPERATION_NORM_BWD_SCALE_DESC))
    expected = stats_dims(mode, xd, sd)
    for attr, slot in ((A.CUDNN_ATTR_OPERATION_NORM_BWD_MEAN_DESC, "mean_desc"),
                       (A.CUDNN_ATTR_OPERATION_NORM_BWD_INV_VARIANCE_DESC, "inv_variance_desc")):
        need(op, v(attr), slot, expected, f"the statistics of xdesc {list(xd)} for {NormMode(mode).name}")
        need_float(op, v(attr), slot, "normalization statistics are fp32")
    for attr, slot in ((A.CUDNN_ATTR_OPERATION_NORM_BWD_DSCALE_DESC, "dscale_desc"),
                       (A.CUDNN_ATTR_OPERATION_NORM_BWD_DBIAS_DESC, "dbias_desc")):
        need(op, v(attr), slot, sd, "the gradient of the scale has the scale's shape")
    need(op, v(A.CUDNN_ATTR_OPERATION_NORM_BWD_DXDESC), "dxdesc", xd, "the gradient has the input's shape")


_BN_BWD_WEIGHTS_PER_CHANNEL = [
    (A.CUDNN_ATTR_OPERATION_BN_BWD_WEIGHTS_MEAN_DESC, "mean_desc"),
    (A.CUDNN_ATTR_OPERATION_BN_BWD_WEIGHTS_INVSTD_DESC, "invstd_desc"),
    (A.CUDNN_ATTR_OPERATION_BN_BWD_WEIGHTS_BN_SCALE_DESC, "bn_scale_desc"),
    (A.CUDNN_ATTR_OPERATION_BN_BWD_WEIGHTS_DBN_SCALE_DESC, "dbn_scale_desc"),
    (A.CUDNN_ATTR_OPERATION_BN_BWD_WEIGHTS_DBN_BIAS_DESC, "dbn_bias_desc"),
    (A.CUDNN_ATTR_OPERATION_BN_BWD_WEIGHTS_EQ_DY_SCALE_DESC, "eq_dy_scale_desc"),
    (A.CUDNN_ATTR_OPERATION_BN_BWD_WEIGHTS_EQ_X_SCALE_DESC, "eq_x_scale_desc"),
    (A.CUDNN_ATTR_OPERATION_BN_BWD_WEIGHTS_EQ_BIAS, "eq_bias"),
]


def check_bn_bwd_weights(op):
    """Every per-channel tensor (statistics, scale, the weight gradients, the equivalent scales and bias) is
    [1, C, 1, ...] with C the channels of dY (and X has dY's dims): cuDNN 9.19 checks none of them."""
    v = op.value_of
    dy = v(A.CUDNN_ATTR_OPERATION_BN_BWD_WEIGHTS_DY_DESC)
    x = v(A.CUDNN_ATTR_OPERATION_BN_BWD_WEIGHTS_X_DESC)
    ref, ref_slot = (dy, "dy_desc") if dims(dy) is not None else (x, "x_desc")
    rd = dims(ref)
    if rd is None or len(rd) < 2:
        return
    if ref is dy:
        need(op, x, "x_desc", rd, f"X has the shape of dy_desc {list(rd)}")
    for attr, slot in _BN_BWD_WEIGHTS_PER_CHANNEL:
        need(op, v(attr), slot, per_channel(rd), f"one value per channel of {ref_slot} {list(rd)}")


FAMILY = Family(
    "norm", ("NORM_FORWARD", "NORM_BACKWARD", "GEN_STATS", "BN_FINALIZE_STATISTICS", "BN_BWD_WEIGHTS"),
    graph_methods=("norm_forward", "layer_norm", "rms_norm", "batch_norm", "instance_norm", "ada_layer_norm",
                   "norm_backward", "layer_norm_bwd", "rms_norm_bwd", "batch_norm_bwd", "instance_norm_bwd",
                   "ada_layer_norm_bwd", "gen_stats", "bn_finalize", "bn_bwd_weights"),
    finalize_checks={"NORM_FORWARD": check_norm_forward, "NORM_BACKWARD": check_norm_backward,
                     "GEN_STATS": check_gen_stats, "BN_FINALIZE_STATISTICS": check_bn_finalize,
                     "BN_BWD_WEIGHTS": check_bn_bwd_weights},
    finalize_modes={"NORM_BWD": "NORM_BACKWARD"},
    doc=__doc__)
