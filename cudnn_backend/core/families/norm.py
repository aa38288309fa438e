"""Normalizations (NORM_FORWARD, NORM_BACKWARD: layer, RMS, batch, instance, adaptive layer, group norm) and the
batch-norm pieces of fused convolutions (GEN_STATS, BN_FINALIZE_STATISTICS, BN_BWD_WEIGHTS).

``stats_dims`` is the one rule for the shape of the mean / inverse variance: the ``Graph`` builder makes them so,
the finalize checks below refuse any other (cuDNN 9.19 accepts statistics whose shape disagrees with their input and
writes out of bounds: cudnn-frontend's scale_bias_conv_genstats sample declares GEN_STATS' sums [1,32,1,1] for a
256-channel input and cuDNN writes all 256 into each), and the reference evaluator computes them so.

``Graph`` methods (the mixin): Normalizations (layer, RMS, batch, instance, adaptive layer norm; forward and
backward) and the batch-norm pieces of fused convolutions: GEN_STATS, BN finalize statistics, BN backward weights.

Reference ops: Normalizations: NORM_FORWARD (layer, RMS, batch, instance, group, adaptive layer norm; training with
the saved mean and inverse standard deviation and batch norm's running statistics, and inference), NORM_BACKWARD, and
the batch-norm pieces of fused convolutions (BN_FINALIZE_STATISTICS, BN_BWD_WEIGHTS).

The statistics' dims say what is normalized together: an axis where they equal X's is kept, where they are 1 is
reduced, where they divide X's (group norm's groups of channels) is split into groups of consecutive indices.
Without statistics tensors (inference) the mode says it: layer, RMS and adaptive layer norm reduce the axes the
scale spans (all but the first), instance norm the spatial ones. Variances are biased (divided by the count);
running variances use the unbiased one (count / (count - 1)), as cuDNN and PyTorch do.
GEN_STATS: per-channel sum and sum of squares (over every axis where the statistics' dim is 1).
"""
from __future__ import annotations

import math
import numbers

import numpy as np

from cudnn_backend._bindings.enums import AttributeName as A
from cudnn_backend._bindings.enums import BnFinalizeStatsMode, DataType, GenStatsMode, NormFwdPhase, NormMode
from cudnn_backend.core.families import _build
from cudnn_backend.core.families._build import as_bool, as_choice, as_data_type, as_int, output_type, real_number
from cudnn_backend.core.families._checks import dims, fail, need, need_float, op_name, per_channel
from cudnn_backend.core.families._checks import name as slot_name
from cudnn_backend.core.families._family import Family
from cudnn_backend.core.families._reference import Op, Request, Unsupported, element_coords, ravel, scalar
from cudnn_backend.core.families.pointwise import broadcast_keys, check_broadcast, pick
from cudnn_backend.core.families.reduction import reduced_axes
from cudnn_backend.errors import GraphError

__all__ = ["FAMILY", "FORWARD_PHASE_OF_FINALIZE_MODE", "stats_dims", "built_stats_dims", "norm_mode", "norm_stats_dims",
           "per_channel_dims", "NormOps",
           "normalize", "NormForward", "NormBackward", "BnFinalize", "BnBackwardWeights", "GenStatsOp"]


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


# the modes whose scale and bias hold one value per channel (cuDNN reads C of them whatever their dims say)
_PER_CHANNEL_AFFINE = frozenset((NormMode.CUDNN_BATCH_NORM, NormMode.CUDNN_INSTANCE_NORM))


def check_scale_and_bias(op, mode, xd, scale, bias, slots):
    """A normalization's scale and bias, read by cuDNN as the mode says: batch and instance norm one value per
    channel (a smaller scale, cuDNN 9.10-9.28 accept and read past); layer, RMS and adaptive layer norm over the
    axes the scale spans, so each of its dims is 1 or X's (cuDNN refuses others only as the graph is finalized,
    naming nothing); the bias has the scale's shape."""
    scale_slot, bias_slot = slots
    sd = dims(scale)
    try:
        mode = NormMode(int(mode))
    except (TypeError, ValueError):
        return
    what = f"{mode.name} of xdesc {list(xd)}"
    if mode in _PER_CHANNEL_AFFINE:
        need(op, scale, scale_slot, per_channel(xd), f"one value per channel for {what}", "read out of bounds")
    elif sd is not None and stats_dims(mode, xd, sd) is not None and any(s not in (1, x) for s, x in zip(sd, xd)):
        fail(f"{op_name(op)}: {slot_name(scale, scale_slot)} has dims {list(sd)}, which do not broadcast to xdesc "
             f"{list(xd)} (each must be 1 or xdesc's) for {mode.name}")
    need(op, bias, bias_slot, sd, "the bias has the scale's shape", "refuse it only at finalize")


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
    """Every per-channel tensor has one shape: the one most of them have (y_sum_desc's among equals) is taken as meant,
    and each other is named."""
    v = op.value_of
    given = [(slot, v(attr)) for attr, slot in [(A.CUDNN_ATTR_OPERATION_BN_FINALIZE_Y_SUM_DESC, "y_sum_desc"),
                                                 *_BN_FINALIZE_PER_CHANNEL]]
    shapes = [tuple(d) for d in (dims(t) for _, t in given) if d is not None]
    if len(set(shapes)) <= 1:
        return
    common = max(shapes, key=shapes.count)  # (the first of the most common: y_sum_desc's among equals)
    agree = [slot for slot, t in given if dims(t) is not None and tuple(dims(t)) == common]
    for slot, t in given:
        need(op, t, slot, common, f"the per-channel shape of {', '.join(agree)}")


def explain_bn_finalize_refusal(op, cudnn_message="") -> str | None:
    """What may be why cuDNN refused to finalize a BN_FINALIZE_STATISTICS: it computes in fp32 only, and reads and
    writes fp32 statistics only (cuDNN 9.10 to 9.28 refuse another math_prec, NOT_SUPPORTED with no reason, and
    another tensor type with a bare "!hasYSum || ..."); None where those are fp32."""
    v = op.value_of
    problems = []
    prec = v(A.CUDNN_ATTR_OPERATION_BN_FINALIZE_MATH_PREC)
    if prec is not None and int(prec) != int(DataType.CUDNN_DATA_FLOAT):
        problems.append(f"math_prec is {DataType(int(prec)).name}")
    for attr, slot in [(A.CUDNN_ATTR_OPERATION_BN_FINALIZE_Y_SUM_DESC, "y_sum_desc")] + _BN_FINALIZE_PER_CHANNEL:
        t = v(attr)
        dt = t.value_of(A.CUDNN_ATTR_TENSOR_DATA_TYPE) if t is not None and hasattr(t, "value_of") else None
        if dt is not None and int(dt) != int(DataType.CUDNN_DATA_FLOAT):
            problems.append(f"{slot} is {DataType(int(dt)).name}")
    if not problems:
        return None
    return (f"{', '.join(problems)}: BN_FINALIZE_STATISTICS computes in CUDNN_DATA_FLOAT and reads and writes "
            "CUDNN_DATA_FLOAT statistics only")


def check_norm_forward(op):
    v = op.value_of
    xd = dims(v(A.CUDNN_ATTR_OPERATION_NORM_FWD_XDESC))
    mode = v(A.CUDNN_ATTR_OPERATION_NORM_FWD_MODE)
    if xd is None or mode is None or len(xd) < 2:
        return
    scale = v(A.CUDNN_ATTR_OPERATION_NORM_FWD_SCALE_DESC)
    check_scale_and_bias(op, mode, xd, scale, v(A.CUDNN_ATTR_OPERATION_NORM_FWD_BIAS_DESC), ("scale_desc", "bias_desc"))
    expected = stats_dims(mode, xd, dims(scale))
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
    scale = v(A.CUDNN_ATTR_OPERATION_NORM_BWD_SCALE_DESC)
    check_scale_and_bias(op, mode, xd, scale, None, ("scale_desc", None))
    sd = dims(scale)
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


_F32 = DataType.CUDNN_DATA_FLOAT
_I64 = DataType.CUDNN_DATA_INT64
_MODES = {"layer": NormMode.CUDNN_LAYER_NORM, "layer_norm": NormMode.CUDNN_LAYER_NORM,
          "rms": NormMode.CUDNN_RMS_NORM, "rms_norm": NormMode.CUDNN_RMS_NORM,
          "batch": NormMode.CUDNN_BATCH_NORM, "batch_norm": NormMode.CUDNN_BATCH_NORM,
          "instance": NormMode.CUDNN_INSTANCE_NORM, "instance_norm": NormMode.CUDNN_INSTANCE_NORM,
          "group": NormMode.CUDNN_GROUP_NORM, "group_norm": NormMode.CUDNN_GROUP_NORM}


if "CUDNN_ADA_LAYER_NORM" in NormMode.__members__:
    _MODES.update(ada=NormMode["CUDNN_ADA_LAYER_NORM"], ada_layer_norm=NormMode["CUDNN_ADA_LAYER_NORM"],
                  adaptive_layer_norm=NormMode["CUDNN_ADA_LAYER_NORM"])


_PHASES = {"training": NormFwdPhase.CUDNN_NORM_FWD_TRAINING, "train": NormFwdPhase.CUDNN_NORM_FWD_TRAINING,
           "inference": NormFwdPhase.CUDNN_NORM_FWD_INFERENCE, "infer": NormFwdPhase.CUDNN_NORM_FWD_INFERENCE}
# the norm forward phase each finalize mode of a norm forward graph runs: a plan whose node says the other one is
# refused (cuDNN 9.10.2 to 9.28.1 segfault loading a NORM_FWD_TRAIN plan whose node is an inference one)
FORWARD_PHASE_OF_FINALIZE_MODE = {"NORM_FWD_INFER": "CUDNN_NORM_FWD_INFERENCE",
                                  "NORM_FWD_TRAIN": "CUDNN_NORM_FWD_TRAINING"}
_NORM_MODES = {"layer": NormMode.CUDNN_LAYER_NORM, "rms": NormMode.CUDNN_RMS_NORM,
                "batch": NormMode.CUDNN_BATCH_NORM, "instance": NormMode.CUDNN_INSTANCE_NORM}


def norm_mode(mode) -> NormMode:
    """'layer', 'rms', 'batch', 'instance', 'ada_layer_norm', 'group', a NormMode or its C name."""
    return as_choice(NormMode, mode, "mode", "CUDNN_", _MODES)


def _built_mode(mode) -> NormMode:
    """``norm_mode`` for the builder, which has no groups parameter: group norm's statistics would come out one per
    position (what cuDNN then refuses naming nothing), so it is refused here."""
    mode = norm_mode(mode)
    if mode == NormMode.CUDNN_GROUP_NORM:
        raise GraphError("mode: group norm needs a number of groups, and the builder has no groups parameter yet; "
                         "build it from reductions and pointwise operations, or as an operation made by hand")
    return mode


def _phase(training) -> str:
    return "training" if as_bool(training, "training") else "inference"


def built_stats_dims(mode: NormMode, x_dims, scale_dims):
    """Mean / inverse-variance dims (a list) the builder makes: the norm family's one rule (``stats_dims``, which the
    finalize check reads too): batch norm one value per channel, instance norm one per (sample, channel), layer /
    RMS / adaptive layer norm one per row (x's dims with 1 wherever the scale spans an axis, the batch axis kept)."""
    if mode not in (NormMode.CUDNN_BATCH_NORM, NormMode.CUDNN_INSTANCE_NORM) and len(scale_dims) != len(x_dims):
        raise GraphError(f"scale: {list(scale_dims)} needs x's rank ({list(x_dims)})")
    dims = stats_dims(mode, x_dims, scale_dims)
    if dims is None:  # group norm and newer modes: the batch axis kept, the scale's axes reduced (cuDNN checks)
        dims = [d if i == 0 or s == 1 else 1 for i, (d, s) in enumerate(zip(x_dims, scale_dims))]
    return list(dims)



def _refuse_normalizing_nothing(mode, x_dims, scale_dims):
    """Layer, RMS and adaptive layer norm normalize over the axes their scale spans: a scale spanning none of x's
    axes but the batch normalizes each element by itself (layer norm gives the bias, RMS norm the sign), which cuDNN
    plans all the same."""
    if mode in (NormMode.CUDNN_BATCH_NORM, NormMode.CUDNN_INSTANCE_NORM) or math.prod(x_dims[1:]) <= 1:
        return
    dims = stats_dims(mode, x_dims, scale_dims)
    if dims is not None and math.prod(dims) == math.prod(x_dims):
        raise GraphError(f"scale: {list(scale_dims)} spans no axis of x {list(x_dims)} but the batch: each element "
                         "would be normalized by itself; give the scale the sizes of the axes to normalize over "
                         "(x [T, H, 1, 1]: scale [1, H, 1, 1])")


def norm_stats_dims(mode, x_dims, scale_dims):
    """Mean / inverse-variance dims of a normalization (``mode``: 'layer', 'batch', ... or a NormMode): the norm
    family's one rule, ``stats_dims``; GraphError where it does not apply."""
    mode = _NORM_MODES.get(mode, mode) if isinstance(mode, str) else mode
    dims = stats_dims(mode, x_dims, scale_dims)
    if dims is None:
        fail(f"normalization statistics: no rule for {mode!r} with x {list(x_dims)} and scale "
              f"{None if scale_dims is None else list(scale_dims)} (the scale needs x's rank)")
    return list(dims)


def per_channel_dims(x_dims):
    """``[1, C, 1, ...]``: one value per channel of ``[N, C, ...]``."""
    return list(per_channel(x_dims))


def _epsilon(value, what="epsilon"):
    """A normalization's epsilon: a Tensor, or a finite number >= 0 (cuDNN adds it to the variance as given: a NaN
    or a negative one makes every output NaN or infinite)."""
    if value is None or isinstance(value, (bool, str, bytes)):
        raise TypeError(f"{what}: expected a number >= 0 or a Tensor, not {type(value).__name__}")
    if real_number(value) and not (value >= 0 and (isinstance(value, numbers.Integral) or math.isfinite(value))):
        raise ValueError(f"{what}: {value!r}; it must be a finite number >= 0")
    return value


def _momentum(value, what="momentum"):
    """A running-statistics weight: a Tensor, or a number from 0 to 1 (running = (1 - momentum) * running + momentum
    * batch: outside that range, or NaN, the running statistics diverge or turn NaN)."""
    if value is None or isinstance(value, (bool, str, bytes)):
        raise TypeError(f"{what}: expected a number from 0 to 1 or a Tensor, not {type(value).__name__}")
    if real_number(value) and not 0 <= value <= 1:
        raise ValueError(f"{what}: {value!r}; it must be a number from 0 to 1 (the weight of the batch's statistics)")
    return value


class NormOps:
    """``norm_forward``/``norm_backward`` and the named norms, ``gen_stats``, ``bn_finalize``, ``bn_bwd_weights``."""

    # -- forward ---------------------------------------------------------------------------------
    def norm_forward(self, x, scale, bias=None, *, mode="layer", phase="training", epsilon=1e-5, momentum=None,
                     running_mean=None, running_var=None, output=True, output_data_type=None, stats_data_type=_F32,
                     name="norm"):
        """NORM_FORWARD: ``{"y", "mean", "inv_variance", "epsilon", "running_mean", "running_var"}``.

        Training writes the statistics (fp32; RMS norm has no mean) shaped as ``stats_dims`` says, in x's
        axis order; batch norm training with ``running_mean``/``running_var`` (and ``momentum``) also
        updates running statistics. ``epsilon``/``momentum`` are numbers (by-value fp32 scalars) or tensors;
        ``momentum`` (default 0.1) weighs the running statistics, and is refused without them.
        """
        name = _build.as_name(name, "norm")
        mode = _built_mode(mode)
        phase = as_choice(NormFwdPhase, phase, "phase", "CUDNN_NORM_FWD_", _PHASES)
        x, scale = self._need_tensor(x, "x"), self._need_tensor(scale, "scale")
        rank = len(x.shape)
        _refuse_normalizing_nothing(mode, x.shape, scale.shape)
        if mode == NormMode.CUDNN_BATCH_NORM and phase == NormFwdPhase.CUDNN_NORM_FWD_INFERENCE:
            raise GraphError("batch norm forward inference is no NORM_FORWARD in cuDNN 9 (heuristics find no "
                             "engine): fold the statistics into a scale and bias (pointwise ops)")
        running = running_mean is not None or running_var is not None
        if running and (mode != NormMode.CUDNN_BATCH_NORM or running_mean is None or running_var is None):
            raise GraphError("running_mean and running_var: both, and for batch norm only")
        if momentum is not None and not running:  # it would be dropped: nothing reads it
            raise GraphError(f"momentum: {mode.name} {phase.name.removeprefix('CUDNN_NORM_FWD_').lower()} reads it "
                             "only to update running statistics; give running_mean and running_var (batch norm "
                             "training), or no momentum")
        stats_type = as_data_type(stats_data_type, "stats_data_type")
        if stats_type != _F32:
            raise GraphError(f"stats_data_type: {stats_type.name}, but normalization statistics must be "
                             "CUDNN_DATA_FLOAT")
        epsilon = _epsilon(epsilon)  # (numbers checked before any tensor is made)
        if momentum is not None:
            momentum = _momentum(momentum)
        y = self._output(output, x.shape, x, output_type(output_data_type, x.data_type), f"{name}_y", strides=x.strides,
                         what="output")
        op = self._operation("NORM_FORWARD", mode=mode, phase=phase, xdesc=x, scale_desc=scale, ydesc=y,
                             epsilon_desc=self._scalar_or_tensor(epsilon, rank, f"{name}_epsilon",
                                                                  what="epsilon"))
        out = {"y": y, "mean": None, "inv_variance": None, "epsilon": op.epsilon_desc, "running_mean": None,
               "running_var": None}
        if bias is not None:
            op.bias_desc = self._need_tensor(bias, "bias")
        if phase == NormFwdPhase.CUDNN_NORM_FWD_TRAINING:
            sdims = built_stats_dims(mode, x.shape, scale.shape)
            sstrides = _build.strides_like(sdims, x.strides)
            out["inv_variance"] = op.inv_variance_desc = self.tensor(sdims, sstrides, stats_type,
                                                                     name=f"{name}_inv_variance")
            if mode != NormMode.CUDNN_RMS_NORM:
                out["mean"] = op.mean_desc = self.tensor(sdims, sstrides, stats_type, name=f"{name}_mean")
            if running:
                op.input_running_mean_desc = self._need_tensor(running_mean, "running_mean")
                op.input_running_var_desc = self._need_tensor(running_var, "running_var")
                op.exp_avg_factor_desc = self._scalar_or_tensor(0.1 if momentum is None else momentum, rank,
                                                                f"{name}_momentum", what="momentum")
                pc = per_channel_dims(x.shape)
                out["running_mean"] = op.output_running_mean_desc = self.tensor(
                    pc, running_mean.strides, running_mean.data_type, name=f"{name}_running_mean_out")
                out["running_var"] = op.output_running_var_desc = self.tensor(
                    pc, running_var.strides, running_var.data_type, name=f"{name}_running_var_out")
        # bias is optional in cuDNN (RMS norm, bias-less layer norm) though its docs call it required
        op.finalize(check_required=bias is not None)
        self.add(op)
        return out

    def layer_norm(self, x, scale, bias=None, *, epsilon=1e-5, training=True, **kw):
        """Layer norm over the axes the scale spans (cudnn-frontend: X [T, H, 1, 1], scale [1, H, 1, 1])."""
        return self.norm_forward(x, scale, bias, mode="layer", phase=_phase(training),
                                 epsilon=epsilon, **kw)

    def rms_norm(self, x, scale, bias=None, *, epsilon=1e-5, training=True, **kw):
        """RMS norm (no mean; the bias is optional)."""
        return self.norm_forward(x, scale, bias, mode="rms", phase=_phase(training),
                                 epsilon=epsilon, **kw)

    def batch_norm(self, x, scale, bias, *, epsilon=1e-5, momentum=None, running_mean=None, running_var=None, **kw):
        """Batch norm training: per-channel statistics [1, C, 1, 1] (and, with ``running_mean``/``running_var``,
        updated running statistics, weighed by ``momentum``: None means 0.1)."""
        return self.norm_forward(x, scale, bias, mode="batch", phase="training", epsilon=epsilon, momentum=momentum,
                                 running_mean=running_mean, running_var=running_var, **kw)

    def instance_norm(self, x, scale, bias, *, epsilon=1e-5, training=True, **kw):
        """Instance norm: statistics per (sample, channel) [N, C, 1, 1]."""
        return self.norm_forward(x, scale, bias, mode="instance", phase=_phase(training),
                                 epsilon=epsilon, **kw)

    def ada_layer_norm(self, x, scale, bias=None, *, epsilon=1e-5, training=True, **kw):
        """Adaptive layer norm (cuDNN 9.7+): X [B, S, D], per-batch scale/bias [B, 1, D], statistics [B, S, 1]."""
        return self.norm_forward(x, scale, bias, mode="ada_layer_norm",
                                 phase=_phase(training), epsilon=epsilon, **kw)

    # -- backward --------------------------------------------------------------------------------
    def norm_backward(self, dy, x, scale, mean=None, inv_variance=None, *, mode="layer", dbias=True, epsilon=None,
                      output_data_type=None, grad_data_type=_F32, name="norm_bwd"):
        """NORM_BACKWARD: ``{"dx", "dscale", "dbias"}`` (dscale/dbias shaped like the scale, fp32)."""
        name = _build.as_name(name, "norm_bwd")
        mode = _built_mode(mode)
        dbias = as_bool(dbias, "dbias")
        dy, x, scale = self._need_tensor(dy, "dy"), self._need_tensor(x, "x"), self._need_tensor(scale, "scale")
        if mode != NormMode.CUDNN_RMS_NORM and mean is None:
            raise GraphError(f"mean: {mode.name} backward needs the saved mean")
        if inv_variance is None:
            raise GraphError("inv_variance: the backward needs the saved inverse variance")
        dx = self.tensor(x.shape, x.strides, output_type(output_data_type, x.data_type), name=f"{name}_dx")
        grad_type = as_data_type(grad_data_type, "grad_data_type")
        dscale = self.tensor(scale.shape, scale.strides, grad_type, name=f"{name}_dscale")
        op = self._operation("NORM_BACKWARD", mode=mode, xdesc=x, dydesc=dy, scale_desc=scale,
                             inv_variance_desc=self._need_tensor(inv_variance, "inv_variance"), dscale_desc=dscale,
                             dxdesc=dx)
        if mean is not None:
            op.mean_desc = self._need_tensor(mean, "mean")
        db = None
        if dbias:
            db = op.dbias_desc = self.tensor(scale.shape, scale.strides, grad_type, name=f"{name}_dbias")
        eps = self._scalar_or_tensor(epsilon, len(x.shape), f"{name}_epsilon", what="epsilon")
        if eps is not None:
            op.epsilon_desc = eps
        op.finalize(check_required=db is not None)  # RMS norm backward has no dbias
        self.add(op)
        return {"dx": dx, "dscale": dscale, "dbias": db}

    def layer_norm_bwd(self, dy, x, scale, mean, inv_variance, **kw):
        """Layer norm backward: ``norm_backward`` with mode LAYER_NORM (the forward's saved mean and inverse variance)."""
        return self.norm_backward(dy, x, scale, mean, inv_variance, mode="layer", **kw)

    def rms_norm_bwd(self, dy, x, scale, inv_variance, *, dbias=False, **kw):
        """RMS norm backward: ``norm_backward`` with mode RMS_NORM (no mean; no dbias unless asked)."""
        return self.norm_backward(dy, x, scale, None, inv_variance, mode="rms", dbias=dbias, **kw)

    def batch_norm_bwd(self, dy, x, scale, mean, inv_variance, **kw):
        """Batch norm backward: ``norm_backward`` with mode BATCH_NORM."""
        return self.norm_backward(dy, x, scale, mean, inv_variance, mode="batch", **kw)

    def instance_norm_bwd(self, dy, x, scale, mean, inv_variance, **kw):
        """Instance norm backward: ``norm_backward`` with mode INSTANCE_NORM."""
        return self.norm_backward(dy, x, scale, mean, inv_variance, mode="instance", **kw)

    def ada_layer_norm_bwd(self, dy, x, scale, mean, inv_variance, **kw):
        """Adaptive layer norm backward: ``norm_backward`` with mode ADA_LAYER_NORM."""
        return self.norm_backward(dy, x, scale, mean, inv_variance, mode="ada_layer_norm", **kw)

    # -- batch-norm pieces of fused convolutions ------------------------------------------------------
    def gen_stats(self, x, *, compute=None, stats_data_type=_F32, name="genstats"):
        """GEN_STATS: per-channel sum and sum of squares of X, ``{"sum", "sqsum"}`` [1, C, 1, 1] fp32 (cuDNN runs it
        after a convolution with a real output)."""
        name = _build.as_name(name, "genstats")
        x = self._need_tensor(x, "x")
        dims = per_channel_dims(x.shape)
        strides = _build.strides_like(dims, x.strides)
        dt = as_data_type(stats_data_type, "stats_data_type")
        s = self.tensor(dims, strides, dt, name=f"{name}_sum")
        sq = self.tensor(dims, strides, dt, name=f"{name}_sqsum")
        self.add(self._operation("GEN_STATS", mode=GenStatsMode.CUDNN_GENSTATS_SUM_SQSUM,
                                 math_prec=self._compute(compute), xdesc=x, sumdesc=s, sqsumdesc=sq))
        return {"sum": s, "sqsum": sq}

    def bn_finalize(self, sum_, sqsum, scale, bias, *, accum_count, epsilon=1e-5, momentum=0.1,
                    prev_running_mean=None, prev_running_var=None, inference=False, compute=None, name="bn_finalize"):
        """BN_FINALIZE_STATISTICS: equivalent scale/bias and saved mean / inverse std (and updated running
        statistics) from GEN_STATS' sums. ``accum_count`` (N*H*W) is a by-value int64 scalar; epsilon and
        momentum fp32 scalars (numbers or tensors)."""
        name = _build.as_name(name, "bn_finalize")
        sum_, sqsum = self._need_tensor(sum_, "sum_"), self._need_tensor(sqsum, "sqsum")
        scale, bias = self._need_tensor(scale, "scale"), self._need_tensor(bias, "bias")
        rank = len(sum_.shape)
        # the numbers checked before any tensor is made (a tensor of another graph is refused as it is used)
        if not self._is_tensor(accum_count):
            accum_count = as_int(accum_count, "accum_count", 1)  # N*H*W: cuDNN divides by it
        epsilon, momentum = _epsilon(epsilon), _momentum(momentum)
        mode = BnFinalizeStatsMode.CUDNN_BN_FINALIZE_STATISTICS_INFERENCE if as_bool(inference, "inference") else \
            BnFinalizeStatsMode.CUDNN_BN_FINALIZE_STATISTICS_TRAINING
        compute = self._compute(compute)

        def like(nm):
            return self.tensor(sum_.shape, sum_.strides, _F32, name=f"{name}_{nm}")

        out = {n: like(n) for n in ("eq_scale", "eq_bias", "saved_mean", "saved_inv_std")}
        out["accum_count"] = self._scalar_or_tensor(accum_count, rank, f"{name}_accum_count", _I64,
                                                    what="accum_count")
        out["epsilon"] = self._scalar_or_tensor(epsilon, rank, f"{name}_epsilon", what="epsilon")
        out["momentum"] = self._scalar_or_tensor(momentum, rank, f"{name}_momentum", what="momentum")
        op = self._operation("BN_FINALIZE_STATISTICS", stats_mode=mode, math_prec=compute,
                             y_sum_desc=sum_, y_sq_sum_desc=sqsum, scale_desc=scale, bias_desc=bias,
                             saved_mean_desc=out["saved_mean"], saved_inv_std_desc=out["saved_inv_std"],
                             eq_scale_desc=out["eq_scale"], eq_bias_desc=out["eq_bias"],
                             accum_count_desc=out["accum_count"], epsilon_desc=out["epsilon"],
                             exp_averate_factor_desc=out["momentum"])
        if (prev_running_mean is None) != (prev_running_var is None):
            raise GraphError("prev_running_mean and prev_running_var: both or neither")
        if prev_running_mean is not None:
            op.prev_running_mean_desc = self._need_tensor(prev_running_mean, "prev_running_mean")
            op.prev_running_var_desc = self._need_tensor(prev_running_var, "prev_running_var")
            out["next_running_mean"] = op.updated_running_mean_desc = like("next_running_mean")
            out["next_running_var"] = op.updated_running_var_desc = like("next_running_var")
        self.add(op)
        return out

    def bn_bwd_weights(self, x, dy, mean, inv_std, scale, *, compute=None, name="dbn"):
        """BN_BWD_WEIGHTS: ``{"dscale", "dbias", "eq_dy_scale", "eq_x_scale", "eq_bias"}``, each [1, C, 1, 1] fp32
        (the equivalent scales fold dX = eq_dy_scale * dY + eq_x_scale * X + eq_bias into the next dgrad)."""
        name = _build.as_name(name, "dbn")
        x, dy = self._need_tensor(x, "x"), self._need_tensor(dy, "dy")
        pc = per_channel_dims(dy.shape)
        strides = _build.strides_like(pc, dy.strides)
        out = {n: self.tensor(pc, strides, _F32, name=f"{name}_{n}")
               for n in ("dscale", "dbias", "eq_dy_scale", "eq_x_scale", "eq_bias")}
        self.add(self._operation("BN_BWD_WEIGHTS", math_prec=self._compute(compute), x_desc=x, dy_desc=dy,
                                 mean_desc=self._need_tensor(mean, "mean"),
                                 invstd_desc=self._need_tensor(inv_std, "inv_std"),
                                 bn_scale_desc=self._need_tensor(scale, "scale"), dbn_scale_desc=out["dscale"],
                                 dbn_bias_desc=out["dbias"], eq_dy_scale_desc=out["eq_dy_scale"],
                                 eq_x_scale_desc=out["eq_x_scale"], eq_bias=out["eq_bias"]))
        return out


def normalize(x, stats_dims, scale, bias, eps, rms):
    """(y, mean, inverse std, variance) of X normalized per group of ``stats_dims`` (each dividing X's; RMS: the
    mean is 0 and the variance the mean square); the statistics come in ``stats_dims``."""
    shape = x.shape
    groups = [(d, s) for d, s in zip(shape, stats_dims)]
    split = []
    for d, s in groups:
        split += [s, d // s]
    axes = tuple(2 * i + 1 for i in range(len(shape)))
    xs = x.reshape(split)
    if rms:
        mean = np.zeros_like(xs.mean(axis=axes, keepdims=True))
        var = (xs * xs).mean(axis=axes, keepdims=True)
    else:
        mean = xs.mean(axis=axes, keepdims=True)
        var = ((xs - mean) ** 2).mean(axis=axes, keepdims=True)
    inv = 1.0 / np.sqrt(var + eps)
    y = ((xs - mean) * inv).reshape(shape) * scale
    if bias is not None:
        y = y + bias
    stats_shape = tuple(s for _, s in groups)
    return y, mean.reshape(stats_shape), inv.reshape(stats_shape), var.reshape(stats_shape)


def _check_stats(x_dims, stats_dims, what):
    if len(stats_dims) != len(x_dims) or any(s < 1 or x % s for x, s in zip(x_dims, stats_dims)):
        raise Unsupported(f"{what} {list(stats_dims)} do not divide x {list(x_dims)} axis by axis")


def _sum_to(a, dims):
    """``a`` summed over the axes where ``dims`` is 1 (and ``a``'s is not)."""
    axes = tuple(i for i, (x, d) in enumerate(zip(a.shape, dims)) if d == 1 and x != 1)
    return a.sum(axis=axes, keepdims=True).reshape(dims)


class NormForward(Op):
    def __init__(self, node, graph):
        super().__init__(node, graph)
        self.refuse_set("peer_stat_descs", why="statistics shared between GPUs")
        try:
            self.mode = NormMode(int(node.attr("mode")))
            self.phase = NormFwdPhase(int(node.attr("phase", int(NormFwdPhase.CUDNN_NORM_FWD_TRAINING))))
        except (TypeError, ValueError):
            raise Unsupported(f"norm mode {node.attr('mode')!r} or phase {node.attr('phase')!r} is unknown") from None
        self.x, self.scale, self.y = self.need("xdesc"), self.need("scale_desc"), self.need("ydesc")
        self.bias, self.eps = node.uid("bias_desc"), node.uid("epsilon_desc")
        self.mean, self.inv = node.uid("mean_desc"), node.uid("inv_variance_desc")
        self.rm_in, self.rv_in = node.uid("input_running_mean_desc"), node.uid("input_running_var_desc")
        self.rm_out, self.rv_out = node.uid("output_running_mean_desc"), node.uid("output_running_var_desc")
        self.factor = node.uid("exp_avg_factor_desc")
        self.rms = self.mode == NormMode.CUDNN_RMS_NORM
        xd = self.dims(self.x)
        if self.mode == NormMode.CUDNN_BATCH_NORM and self.phase == NormFwdPhase.CUDNN_NORM_FWD_INFERENCE:
            raise Unsupported("batch-norm inference reads saved statistics cuDNN 9 has no NORM_FORWARD for")
        if self.inv is not None or self.mean is not None:
            self.stats_dims = self.dims(self.inv if self.inv is not None else self.mean)
        elif self.mode != NormMode.CUDNN_BATCH_NORM and \
                stats_dims(self.mode, xd, self.dims(self.scale)) is not None:  # the norm family's one rule
            self.stats_dims = stats_dims(self.mode, xd, self.dims(self.scale))
        else:
            raise Unsupported(f"{self.mode.name} without statistics outputs: its groups are unknown")
        _check_stats(xd, self.stats_dims, "the statistics")
        for name, uid in (("scale", self.scale), ("bias", self.bias)):
            if uid is not None:
                check_broadcast(self.dims(uid), xd, name)
        if (self.rm_out is None) != (self.rv_out is None) or (self.rm_out is not None and (
                self.rm_in is None or self.rv_in is None)):
            raise Unsupported("running statistics need both inputs and both outputs")
        if self.eps is None:
            raise Unsupported("its epsilon tensor is not set")

    def _stat_outputs(self, mean, inv):
        out = {}
        if self.mean is not None:
            out[self.mean] = mean
        if self.inv is not None:
            out[self.inv] = inv
        return out

    def dense(self, values):
        x = values[self.x]
        bias = values[self.bias] if self.bias is not None else None
        y, mean, inv, var = normalize(x, self.stats_dims, values[self.scale], bias, scalar(values, self.eps),
                                      self.rms)
        out = {self.y: y, **self._stat_outputs(mean.reshape(self.stats_dims), inv.reshape(self.stats_dims))}
        if self.rm_out is not None:
            f = scalar(values, self.factor) if self.factor is not None else 0.1
            n = math.prod(self.dims(self.x)) // math.prod(self.stats_dims)
            rd, vd = self.dims(self.rm_out), self.dims(self.rv_out)
            out[self.rm_out] = ((1 - f) * values[self.rm_in] + f * mean.reshape(rd))
            out[self.rv_out] = ((1 - f) * values[self.rv_in] + f * var.reshape(vd) * n / max(n - 1, 1))
        return out

    def pull(self, wanted, cheap):
        xd = self.dims(self.x)
        rank = len(xd)
        kept = next((i for i, (x, s) in enumerate(zip(xd, self.stats_dims)) if x != s), rank)
        if self.all_whole(wanted) or kept == 0 or self.rm_out is not None:
            return super().pull(wanted, cheap)
        depth = rank - kept  # the groups lie inside X's blocks of this depth
        picks = {}
        keys = []
        for u, r in wanted.items():
            coords = element_coords(self.dims(u), r)
            picks[u] = coords
            keys.append(ravel(coords[:, :kept], xd[:kept]))
        unique = np.unique(np.concatenate(keys))
        block = Request(depth, unique)
        needs = {self.x: block}
        inverses = {}
        for name, uid in (("scale", self.scale), ("bias", self.bias)):
            if uid is not None:
                needs[uid], inverses[name] = broadcast_keys(xd, block, self.dims(uid))
        needs[self.eps] = Request(len(self.dims(self.eps)), np.zeros(1, dtype=np.int64))
        sub_stats = (len(unique), *self.stats_dims[kept:])  # the outer axes, all kept, collapsed into one

        def finish(values):
            x = values[self.x]                                                     # (U, *block)
            scale = pick(values[self.scale], inverses["scale"])
            bias = pick(values[self.bias], inverses["bias"]) if self.bias is not None else None
            eps = float(np.asarray(values[self.eps]).reshape(-1)[0])
            y, mean, inv, _ = normalize(x, sub_stats, scale, bias, eps, self.rms)
            mean, inv = mean.reshape(len(unique), -1), inv.reshape(len(unique), -1)
            out = {}
            for u, coords in picks.items():
                row = np.searchsorted(unique, ravel(coords[:, :kept], xd[:kept]))
                if u == self.y:
                    out[u] = y.reshape(len(unique), -1)[row, ravel(coords[:, kept:], xd[kept:])]
                else:
                    src = mean if u == self.mean else inv
                    out[u] = src[row, ravel(coords[:, kept:], self.stats_dims[kept:])]
            return out

        return needs, finish


class NormBackward(Op):
    def __init__(self, node, graph):
        super().__init__(node, graph)
        self.refuse_set("peer_stat_descs", why="statistics shared between GPUs")
        try:
            self.mode = NormMode(int(node.attr("mode")))
        except (TypeError, ValueError):
            raise Unsupported(f"norm mode {node.attr('mode')!r} is unknown") from None
        self.x, self.dy, self.scale = self.need("xdesc"), self.need("dydesc"), self.need("scale_desc")
        self.inv, self.mean = self.need("inv_variance_desc"), node.uid("mean_desc")
        self.dx, self.dscale, self.dbias = self.need("dxdesc"), node.uid("dscale_desc"), node.uid("dbias_desc")
        self.rms = self.mode == NormMode.CUDNN_RMS_NORM
        if self.mean is None and not self.rms:
            raise Unsupported(f"{self.mode.name} backward without the saved mean")
        xd = self.dims(self.x)
        self.stats_dims = self.dims(self.inv)
        _check_stats(xd, self.stats_dims, "inv_variance")
        check_broadcast(self.dims(self.scale), xd, "scale")

    def dense(self, values):
        x, dy, scale = values[self.x], values[self.dy], values[self.scale]
        sd = self.stats_dims
        split = []
        for d, s in zip(x.shape, sd):
            split += [s, d // s]
        axes = tuple(2 * i + 1 for i in range(x.ndim))
        inv = values[self.inv].reshape([v for s in sd for v in (s, 1)])
        mean = 0.0 if self.rms else values[self.mean].reshape([v for s in sd for v in (s, 1)])
        xs = x.reshape(split)
        xhat = (xs - mean) * inv
        g = (dy * scale).reshape(split)
        proj = (g * xhat).mean(axis=axes, keepdims=True)
        dx = g - xhat * proj if self.rms else g - g.mean(axis=axes, keepdims=True) - xhat * proj
        out = {self.dx: (inv * dx).reshape(x.shape)}
        xhat = xhat.reshape(x.shape)
        if self.dscale is not None:
            out[self.dscale] = _sum_to(dy * xhat, self.dims(self.dscale))
        if self.dbias is not None:
            out[self.dbias] = _sum_to(dy, self.dims(self.dbias))
        return out


class BnFinalize(Op):
    def __init__(self, node, graph):
        super().__init__(node, graph)
        self.sum, self.sqsum = self.need("y_sum_desc"), self.need("y_sq_sum_desc")
        self.scale, self.bias = self.need("scale_desc"), self.need("bias_desc")
        self.count, self.eps = self.need("accum_count_desc"), self.need("epsilon_desc")
        self.factor = node.uid("exp_averate_factor_desc")
        self.rm_in, self.rv_in = node.uid("prev_running_mean_desc"), node.uid("prev_running_var_desc")
        self.rm_out, self.rv_out = node.uid("updated_running_mean_desc"), node.uid("updated_running_var_desc")
        self.outs = {k: node.uid(f"{k}_desc") for k in ("saved_mean", "saved_inv_std", "eq_scale", "eq_bias")}
        mode = node.attr("stats_mode", int(BnFinalizeStatsMode.CUDNN_BN_FINALIZE_STATISTICS_TRAINING))
        self.inference = int(mode) == int(BnFinalizeStatsMode.CUDNN_BN_FINALIZE_STATISTICS_INFERENCE)
        if self.inference and (self.rm_in is None or self.rv_in is None):
            raise Unsupported("inference mode without the running statistics")
        if self.rm_out is not None and (self.rm_in is None or self.factor is None):
            raise Unsupported("updated running statistics without the previous ones or the factor")

    def dense(self, values):
        n, eps = scalar(values, self.count), scalar(values, self.eps)
        if self.inference:
            mean, var = values[self.rm_in], values[self.rv_in]
        else:
            mean = values[self.sum] / n
            var = values[self.sqsum] / n - mean * mean
        inv = 1.0 / np.sqrt(var + eps)
        eq_scale = values[self.scale] * inv
        computed = {"saved_mean": mean, "saved_inv_std": inv, "eq_scale": eq_scale,
                    "eq_bias": values[self.bias] - mean * eq_scale}
        out = {u: np.broadcast_to(computed[k], self.dims(u)) for k, u in self.outs.items() if u is not None}
        if self.rm_out is not None:
            f = scalar(values, self.factor)
            out[self.rm_out] = (1 - f) * values[self.rm_in] + f * mean
            out[self.rv_out] = (1 - f) * values[self.rv_in] + f * var * n / max(n - 1, 1)
        return out


class BnBackwardWeights(Op):
    def __init__(self, node, graph):
        super().__init__(node, graph)
        self.x, self.dy = self.need("x_desc"), self.need("dy_desc")
        self.mean, self.inv, self.scale = self.need("mean_desc"), self.need("invstd_desc"), self.need("bn_scale_desc")
        self.outs = {"dscale": node.uid("dbn_scale_desc"), "dbias": node.uid("dbn_bias_desc"),
                     "eq_dy_scale": node.uid("eq_dy_scale_desc"), "eq_x_scale": node.uid("eq_x_scale_desc"),
                     "eq_bias": node.uid("eq_bias")}
        _check_stats(self.dims(self.x), self.dims(self.mean), "mean")

    def dense(self, values):
        x, dy, mean, inv, scale = (values[u] for u in (self.x, self.dy, self.mean, self.inv, self.scale))
        pd = self.dims(self.mean)
        n = math.prod(self.dims(self.x)) // math.prod(pd)
        xhat = (x - mean) * inv
        dscale, dbias = _sum_to(dy * xhat, pd), _sum_to(dy, pd)
        # dX = scale * inv * (dY - dbias / n - xhat * dscale / n) = eq_dy_scale * dY + eq_x_scale * X + eq_bias
        eq_dy = scale * inv
        eq_x = -scale * inv * inv * dscale / n
        eq_b = -scale * inv * dbias / n + scale * inv * inv * dscale * mean / n
        computed = {"dscale": dscale, "dbias": dbias, "eq_dy_scale": eq_dy, "eq_x_scale": eq_x, "eq_bias": eq_b}
        return {u: np.broadcast_to(computed[k], self.dims(u)) for k, u in self.outs.items() if u is not None}


class GenStatsOp(Op):
    def __init__(self, node, graph):
        super().__init__(node, graph)
        self.x, self.sum, self.sqsum = self.need("xdesc"), self.need("sumdesc"), self.need("sqsumdesc")
        self.axes = reduced_axes(self.dims(self.x), self.dims(self.sum), "sum")
        if self.dims(self.sqsum) != self.dims(self.sum):
            raise Unsupported("sum and sqsum have different dims")

    def dense(self, values):
        x = values[self.x]
        d = self.dims(self.sum)
        return {self.sum: x.sum(axis=self.axes).reshape(d), self.sqsum: (x * x).sum(axis=self.axes).reshape(d)}


FAMILY = Family(
    "norm", ("NORM_FORWARD", "NORM_BACKWARD", "GEN_STATS", "BN_FINALIZE_STATISTICS", "BN_BWD_WEIGHTS"),
    shape_rules=(norm_stats_dims, per_channel_dims),
    graph_methods=("norm_forward", "layer_norm", "rms_norm", "batch_norm", "instance_norm", "ada_layer_norm",
                   "norm_backward", "layer_norm_bwd", "rms_norm_bwd", "batch_norm_bwd", "instance_norm_bwd",
                   "ada_layer_norm_bwd", "gen_stats", "bn_finalize", "bn_bwd_weights"),
    finalize_checks={"NORM_FORWARD": check_norm_forward, "NORM_BACKWARD": check_norm_backward,
                     "GEN_STATS": check_gen_stats, "BN_FINALIZE_STATISTICS": check_bn_finalize,
                     "BN_BWD_WEIGHTS": check_bn_bwd_weights},
    finalize_modes={"NORM_BWD": "NORM_BACKWARD"},
    json_members={
        "NORM_FORWARD": {A.CUDNN_ATTR_OPERATION_NORM_FWD_MODE: "mode", A.CUDNN_ATTR_OPERATION_NORM_FWD_PHASE: "fmode",
                         A.CUDNN_ATTR_OPERATION_NORM_FWD_XDESC: "X", A.CUDNN_ATTR_OPERATION_NORM_FWD_MEAN_DESC: "Mean",
                         A.CUDNN_ATTR_OPERATION_NORM_FWD_INV_VARIANCE_DESC: "InvVariance",
                         A.CUDNN_ATTR_OPERATION_NORM_FWD_SCALE_DESC: "Scale",
                         A.CUDNN_ATTR_OPERATION_NORM_FWD_INPUT_RUNNING_MEAN_DESC: "InRunningMean",
                         A.CUDNN_ATTR_OPERATION_NORM_FWD_INPUT_RUNNING_VAR_DESC: "InRunningVar",
                         A.CUDNN_ATTR_OPERATION_NORM_FWD_OUTPUT_RUNNING_MEAN_DESC: "OutRunningMean",
                         A.CUDNN_ATTR_OPERATION_NORM_FWD_OUTPUT_RUNNING_VAR_DESC: "OutRunningVar",
                         A.CUDNN_ATTR_OPERATION_NORM_FWD_YDESC: "Y"},
        "NORM_BACKWARD": {A.CUDNN_ATTR_OPERATION_NORM_BWD_MODE: "mode", A.CUDNN_ATTR_OPERATION_NORM_BWD_XDESC: "X",
                          A.CUDNN_ATTR_OPERATION_NORM_BWD_MEAN_DESC: "Mean",
                          A.CUDNN_ATTR_OPERATION_NORM_BWD_INV_VARIANCE_DESC: "InvVariance",
                          A.CUDNN_ATTR_OPERATION_NORM_BWD_SCALE_DESC: "Scale",
                          A.CUDNN_ATTR_OPERATION_NORM_BWD_DSCALE_DESC: "DScale",
                          A.CUDNN_ATTR_OPERATION_NORM_BWD_DBIAS_DESC: "DBias",
                          A.CUDNN_ATTR_OPERATION_NORM_BWD_DXDESC: "DX"},
        "GEN_STATS": {A.CUDNN_ATTR_OPERATION_GENSTATS_XDESC: "X", A.CUDNN_ATTR_OPERATION_GENSTATS_SUMDESC: "Sum",
                      A.CUDNN_ATTR_OPERATION_GENSTATS_SQSUMDESC: "SqSum"},
        "BN_FINALIZE_STATISTICS": {
            A.CUDNN_ATTR_OPERATION_BN_FINALIZE_Y_SUM_DESC: "ySum",
            A.CUDNN_ATTR_OPERATION_BN_FINALIZE_Y_SQ_SUM_DESC: "ySqSum",
            A.CUDNN_ATTR_OPERATION_BN_FINALIZE_SCALE_DESC: "bnScale",
            A.CUDNN_ATTR_OPERATION_BN_FINALIZE_BIAS_DESC: "bnBias",
            A.CUDNN_ATTR_OPERATION_BN_FINALIZE_PREV_RUNNING_MEAN_DESC: "bnPrevRunningMean",
            A.CUDNN_ATTR_OPERATION_BN_FINALIZE_PREV_RUNNING_VAR_DESC: "bnPrevRunningVar",
            A.CUDNN_ATTR_OPERATION_BN_FINALIZE_UPDATED_RUNNING_MEAN_DESC: "bnUpdatedRunningMean",
            A.CUDNN_ATTR_OPERATION_BN_FINALIZE_UPDATED_RUNNING_VAR_DESC: "bnUpdatedRunningVar",
            A.CUDNN_ATTR_OPERATION_BN_FINALIZE_SAVED_MEAN_DESC: "bnSavedMean",
            A.CUDNN_ATTR_OPERATION_BN_FINALIZE_SAVED_INV_STD_DESC: "bnSavedInvStd",
            A.CUDNN_ATTR_OPERATION_BN_FINALIZE_EQ_SCALE_DESC: "bnEqScale",
            A.CUDNN_ATTR_OPERATION_BN_FINALIZE_EQ_BIAS_DESC: "bnEqBias"},
        "BN_BWD_WEIGHTS": {
            A.CUDNN_ATTR_OPERATION_BN_BWD_WEIGHTS_X_DESC: "xDesc",
            A.CUDNN_ATTR_OPERATION_BN_BWD_WEIGHTS_DY_DESC: "dyDesc",
            A.CUDNN_ATTR_OPERATION_BN_BWD_WEIGHTS_MEAN_DESC: "BNmeanDesc",
            A.CUDNN_ATTR_OPERATION_BN_BWD_WEIGHTS_INVSTD_DESC: "BNinvstdDesc",
            A.CUDNN_ATTR_OPERATION_BN_BWD_WEIGHTS_BN_SCALE_DESC: "BNscaleDesc",
            A.CUDNN_ATTR_OPERATION_BN_BWD_WEIGHTS_DBN_SCALE_DESC: "dGammaDesc",
            A.CUDNN_ATTR_OPERATION_BN_BWD_WEIGHTS_DBN_BIAS_DESC: "dBetaDesc",
            A.CUDNN_ATTR_OPERATION_BN_BWD_WEIGHTS_EQ_DY_SCALE_DESC: "eqDyScaleDesc",
            A.CUDNN_ATTR_OPERATION_BN_BWD_WEIGHTS_EQ_X_SCALE_DESC: "eqXScaleDesc",
            A.CUDNN_ATTR_OPERATION_BN_BWD_WEIGHTS_EQ_BIAS: "eqBiasDesc"}},
    graph_mixin=NormOps,
    reference_ops={"NORM_FORWARD": NormForward, "NORM_BACKWARD": NormBackward, "GEN_STATS": GenStatsOp,
                   "BN_FINALIZE_STATISTICS": BnFinalize, "BN_BWD_WEIGHTS": BnBackwardWeights},
    doc=__doc__)
