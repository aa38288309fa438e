"""Shape checks cuDNN does not make, run before an operation descriptor is finalized (every API).

cuDNN 9.19 accepts some statistics outputs whose shape disagrees with their input and then writes out
of bounds at execution: cudnn-frontend's scale_bias_conv_genstats sample declares GEN_STATS' sum and
square-sum as [1,32,1,1] for a 256-channel input, and cuDNN writes all 256 sums (1,024 bytes) into
each 128-byte buffer. So statistics tensors (GEN_STATS, BN finalize, norm mean / inverse variance,
reductions, ...) are checked against the tensor they summarize here, with the tensors named.
``Descriptor.finalize`` calls ``FINALIZE_CHECKS[descriptor type](descriptor)``.

Also refused here, for the same reason (cuDNN 9.19 accepts them and computes garbage, writes out of bounds or
crashes): a pointwise output that is not the broadcast shape of its inputs; BN_BWD_WEIGHTS per-channel tensors
that are not ``[1, C, 1, ...]``; normalization statistics that are not FLOAT; RESAMPLE_BWD max pooling without
its index tensor (SIGSEGV in heuristics); reduction outputs whose dims do not divide the input's.
"""
from __future__ import annotations

from cudnn_backend._bindings.enums import (
    AttributeName,
    DataType,
    DescriptorType,
    NormFwdPhase,
    NormMode,
    ResampleMode,
)
from cudnn_backend.errors import GraphError

__all__ = ["FINALIZE_CHECKS", "expected_norm_stats_dims"]

A = AttributeName
T = DescriptorType


def _dims(t):
    """The dims set on a tensor descriptor (None when unknown: then nothing is checked)."""
    if t is None:
        return None
    d = t.value_of(A.CUDNN_ATTR_TENSOR_DIMENSIONS)
    if d is None:
        return None
    return tuple(d) if isinstance(d, tuple) else (d,)


def _name(t, slot):
    name = getattr(t, "name", None)
    if not isinstance(name, str):
        uid = t.value_of(A.CUDNN_ATTR_TENSOR_UNIQUE_ID)
        name = f"t{uid}" if uid is not None else "tensor"
    return f"{slot} ({name})"


def _op(op):
    return op.descriptor_type.name


def _need(op, slot_t, slot, expected, reason):
    dims = _dims(slot_t)
    if dims is None or expected is None:
        return
    if tuple(dims) != tuple(expected):
        raise GraphError(f"{_op(op)}: {_name(slot_t, slot)} has dims {list(dims)} but must be {list(expected)} "
                         f"({reason}); cuDNN would accept it and write out of bounds")


def _need_float(op, slot_t, slot, reason):
    if slot_t is None:
        return
    dt = slot_t.value_of(A.CUDNN_ATTR_TENSOR_DATA_TYPE)
    if dt is not None and int(dt) != int(DataType.CUDNN_DATA_FLOAT):
        try:
            name = DataType(int(dt)).name
        except ValueError:
            name = str(dt)
        raise GraphError(f"{_op(op)}: {_name(slot_t, slot)} is {name} but must be CUDNN_DATA_FLOAT ({reason}); cuDNN "
                         "would accept it and misread it")


def _per_channel(x_dims):
    return (1, x_dims[1], *([1] * (len(x_dims) - 2)))


def check_gen_stats(op):
    v = op.value_of  # one stored value, no dict of every attribute (this runs on every finalize)
    x = v(A.CUDNN_ATTR_OPERATION_GENSTATS_XDESC)
    xd = _dims(x)
    if xd is None or len(xd) < 2:
        return
    for attr, slot in ((A.CUDNN_ATTR_OPERATION_GENSTATS_SUMDESC, "sumdesc"),
                       (A.CUDNN_ATTR_OPERATION_GENSTATS_SQSUMDESC, "sqsumdesc")):
        _need(op, v(attr), slot, _per_channel(xd), f"one value per channel of xdesc {list(xd)}")


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
    sd = _dims(v(A.CUDNN_ATTR_OPERATION_BN_FINALIZE_Y_SUM_DESC))
    if sd is None:
        return
    for attr, slot in _BN_FINALIZE_PER_CHANNEL:
        _need(op, v(attr), slot, sd, f"the per-channel shape of y_sum_desc {list(sd)}")


def expected_norm_stats_dims(mode, x_dims, scale_dims):
    """Mean / inverse-variance dims a normalization writes: batch norm one value per channel, instance
    norm one per (sample, channel), layer / RMS / adaptive layer norm one per position the scale does
    not span (x's dims with the normalized axes, where the scale is not 1, set to 1)."""
    x_dims = tuple(x_dims)
    try:
        mode = NormMode(int(mode))
    except (TypeError, ValueError):
        return None
    if mode == NormMode.CUDNN_BATCH_NORM:
        return _per_channel(x_dims)
    if mode == NormMode.CUDNN_INSTANCE_NORM:
        return (x_dims[0], x_dims[1], *([1] * (len(x_dims) - 2)))
    if scale_dims is None or len(scale_dims) != len(x_dims):
        return None
    if mode in (NormMode.CUDNN_LAYER_NORM, NormMode.CUDNN_RMS_NORM) or mode.name == "CUDNN_ADA_LAYER_NORM":
        return tuple(1 if s != 1 else d for d, s in zip(x_dims, scale_dims))
    return None  # GROUP_NORM and newer modes: cuDNN's own checks


def check_norm_forward(op):
    v = op.value_of
    xd = _dims(v(A.CUDNN_ATTR_OPERATION_NORM_FWD_XDESC))
    mode = v(A.CUDNN_ATTR_OPERATION_NORM_FWD_MODE)
    if xd is None or mode is None or len(xd) < 2:
        return
    expected = expected_norm_stats_dims(mode, xd, _dims(v(A.CUDNN_ATTR_OPERATION_NORM_FWD_SCALE_DESC)))
    for attr, slot in ((A.CUDNN_ATTR_OPERATION_NORM_FWD_MEAN_DESC, "mean_desc"),
                       (A.CUDNN_ATTR_OPERATION_NORM_FWD_INV_VARIANCE_DESC, "inv_variance_desc")):
        _need(op, v(attr), slot, expected, f"the statistics of xdesc {list(xd)} for {NormMode(mode).name}")
        _need_float(op, v(attr), slot, "normalization statistics are fp32")
    if v(A.CUDNN_ATTR_OPERATION_NORM_FWD_PHASE) == NormFwdPhase.CUDNN_NORM_FWD_TRAINING and \
            int(mode) == NormMode.CUDNN_BATCH_NORM:
        for attr, slot in ((A.CUDNN_ATTR_OPERATION_NORM_FWD_OUTPUT_RUNNING_MEAN_DESC, "output_running_mean_desc"),
                           (A.CUDNN_ATTR_OPERATION_NORM_FWD_OUTPUT_RUNNING_VAR_DESC, "output_running_var_desc"),
                           (A.CUDNN_ATTR_OPERATION_NORM_FWD_INPUT_RUNNING_MEAN_DESC, "input_running_mean_desc"),
                           (A.CUDNN_ATTR_OPERATION_NORM_FWD_INPUT_RUNNING_VAR_DESC, "input_running_var_desc")):
            _need(op, v(attr), slot, _per_channel(xd), f"one running statistic per channel of xdesc {list(xd)}")
            _need_float(op, v(attr), slot, "running statistics are fp32")
    _need(op, v(A.CUDNN_ATTR_OPERATION_NORM_FWD_YDESC), "ydesc", xd, "the output has the input's shape")


def check_norm_backward(op):
    v = op.value_of
    xd = _dims(v(A.CUDNN_ATTR_OPERATION_NORM_BWD_XDESC))
    mode = v(A.CUDNN_ATTR_OPERATION_NORM_BWD_MODE)
    if xd is None or mode is None or len(xd) < 2:
        return
    sd = _dims(v(A.CUDNN_ATTR_OPERATION_NORM_BWD_SCALE_DESC))
    expected = expected_norm_stats_dims(mode, xd, sd)
    for attr, slot in ((A.CUDNN_ATTR_OPERATION_NORM_BWD_MEAN_DESC, "mean_desc"),
                       (A.CUDNN_ATTR_OPERATION_NORM_BWD_INV_VARIANCE_DESC, "inv_variance_desc")):
        _need(op, v(attr), slot, expected, f"the statistics of xdesc {list(xd)} for {NormMode(mode).name}")
        _need_float(op, v(attr), slot, "normalization statistics are fp32")
    for attr, slot in ((A.CUDNN_ATTR_OPERATION_NORM_BWD_DSCALE_DESC, "dscale_desc"),
                       (A.CUDNN_ATTR_OPERATION_NORM_BWD_DBIAS_DESC, "dbias_desc")):
        _need(op, v(attr), slot, sd, "the gradient of the scale has the scale's shape")
    _need(op, v(A.CUDNN_ATTR_OPERATION_NORM_BWD_DXDESC), "dxdesc", xd, "the gradient has the input's shape")


def check_reduction(op):
    v = op.value_of
    x, y = v(A.CUDNN_ATTR_OPERATION_REDUCTION_XDESC), v(A.CUDNN_ATTR_OPERATION_REDUCTION_YDESC)
    xd, yd = _dims(x), _dims(y)
    if xd is None or yd is None:
        return
    # cuDNN divides each input dim by the output's (x % y: SIGFPE on 0); an output dim that divides the input's
    # is a partial (grouped) reduction, which fused graphs use
    if len(xd) != len(yd) or any(b < 1 or a % b for a, b in zip(xd, yd)):
        raise GraphError(f"{_op(op)}: {_name(y, 'ydesc')} has dims {list(yd)}, which is no reduction of "
                         f"{_name(x, 'xdesc')} {list(xd)}: each output dim must divide the input's (1: reduced, "
                         "equal: kept) and the ranks must agree")


_POINTWISE_INPUTS = ((A.CUDNN_ATTR_OPERATION_POINTWISE_XDESC, "xdesc"), (A.CUDNN_ATTR_OPERATION_POINTWISE_BDESC, "bdesc"),
                     (A.CUDNN_ATTR_OPERATION_POINTWISE_TDESC, "tdesc"), (A.CUDNN_ATTR_OPERATION_POINTWISE_DYDESC, "dydesc"))
_POINTWISE_OUTPUTS = ((A.CUDNN_ATTR_OPERATION_POINTWISE_YDESC, "ydesc"), (A.CUDNN_ATTR_OPERATION_POINTWISE_DXDESC, "dxdesc"))


def check_pointwise(op):
    """The output is the numpy-style broadcast of every input (equal ranks, size-1 dims broadcast): cuDNN 9.19
    never checks it (a smaller Y is written out of bounds, a larger one read out of bounds)."""
    v = op.value_of
    inputs = [(v(attr), slot) for attr, slot in _POINTWISE_INPUTS if v(attr) is not None]
    outputs = [(v(attr), slot) for attr, slot in _POINTWISE_OUTPUTS if v(attr) is not None]
    shapes = [(t, slot, _dims(t)) for t, slot in inputs]
    if not outputs or any(d is None for _, _, d in shapes) or not shapes:
        return

    def described():  # only for a message: building it on every finalize would cost more than the check
        return ", ".join(f"{_name(t, slot)} {list(d)}" for t, slot, d in shapes)

    ranks = {len(d) for _, _, d in shapes}
    if len(ranks) != 1:
        raise GraphError(f"{_op(op)}: the inputs {described()} have different ranks; cuDNN needs equal ranks (add "
                         "size-1 dims)")
    expected = []
    for axis in range(ranks.pop()):
        sizes = {d[axis] for _, _, d in shapes if d[axis] != 1}
        if len(sizes) > 1:
            raise GraphError(f"{_op(op)}: the inputs {described()} do not broadcast at axis {axis} ({sorted(sizes)})")
        expected.append(sizes.pop() if sizes else 1)
    for t, slot in outputs:
        dims = _dims(t)
        if dims is not None and tuple(dims) != tuple(expected):
            _need(op, t, slot, expected, f"the broadcast shape of the inputs {described()}")


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
    ref, ref_slot = (dy, "dy_desc") if _dims(dy) is not None else (x, "x_desc")
    rd = _dims(ref)
    if rd is None or len(rd) < 2:
        return
    if ref is dy:
        _need(op, x, "x_desc", rd, f"X has the shape of dy_desc {list(rd)}")
    for attr, slot in _BN_BWD_WEIGHTS_PER_CHANNEL:
        _need(op, v(attr), slot, _per_channel(rd), f"one value per channel of {ref_slot} {list(rd)}")


def check_resample_bwd(op):
    """Max pooling backward needs the forward's index tensor: without one cuDNN 9.19 crashes (SIGSEGV in
    heuristics) when xdesc/ydesc are given, and refuses it otherwise."""
    v = op.value_of
    desc = v(A.CUDNN_ATTR_OPERATION_RESAMPLE_BWD_DESC)
    mode = desc.value_of(A.CUDNN_ATTR_RESAMPLE_MODE) if desc is not None else None
    if mode is not None and int(mode) == int(ResampleMode.CUDNN_RESAMPLE_MAXPOOL) and \
            v(A.CUDNN_ATTR_OPERATION_RESAMPLE_BWD_IDXDESC) is None:
        raise GraphError(f"{_op(op)}: CUDNN_RESAMPLE_MAXPOOL backward needs idxdesc (the index tensor the forward "
                         "max pooling wrote); without it cuDNN 9.19 crashes")
    dx = v(A.CUDNN_ATTR_OPERATION_RESAMPLE_BWD_DXDESC)
    x = v(A.CUDNN_ATTR_OPERATION_RESAMPLE_BWD_XDESC)
    dy = v(A.CUDNN_ATTR_OPERATION_RESAMPLE_BWD_DYDESC)
    y = v(A.CUDNN_ATTR_OPERATION_RESAMPLE_BWD_YDESC)
    if x is not None:
        _need(op, dx, "dxdesc", _dims(x), "the gradient has the forward input's shape")
    if y is not None:
        _need(op, dy, "dydesc", _dims(y), "the incoming gradient has the forward output's shape")
    _need(op, v(A.CUDNN_ATTR_OPERATION_RESAMPLE_BWD_IDXDESC), "idxdesc", _dims(dy), "one index per element of dY")


def check_resample_fwd(op):
    v = op.value_of
    yd = _dims(v(A.CUDNN_ATTR_OPERATION_RESAMPLE_FWD_YDESC))
    _need(op, v(A.CUDNN_ATTR_OPERATION_RESAMPLE_FWD_IDXDESC), "idxdesc", yd, "one index per output element")


#: Operation descriptor type -> the shape check ``Descriptor.finalize`` runs first (see the module notes).
FINALIZE_CHECKS = {
    T.CUDNN_BACKEND_OPERATION_GEN_STATS_DESCRIPTOR: check_gen_stats,
    T.CUDNN_BACKEND_OPERATION_BN_FINALIZE_STATISTICS_DESCRIPTOR: check_bn_finalize,
    T.CUDNN_BACKEND_OPERATION_NORM_FORWARD_DESCRIPTOR: check_norm_forward,
    T.CUDNN_BACKEND_OPERATION_NORM_BACKWARD_DESCRIPTOR: check_norm_backward,
    T.CUDNN_BACKEND_OPERATION_REDUCTION_DESCRIPTOR: check_reduction,
    T.CUDNN_BACKEND_OPERATION_RESAMPLE_FWD_DESCRIPTOR: check_resample_fwd,
    T.CUDNN_BACKEND_OPERATION_RESAMPLE_BWD_DESCRIPTOR: check_resample_bwd,
    T.CUDNN_BACKEND_OPERATION_POINTWISE_DESCRIPTOR: check_pointwise,
    T.CUDNN_BACKEND_OPERATION_BN_BWD_WEIGHTS_DESCRIPTOR: check_bn_bwd_weights,
}
