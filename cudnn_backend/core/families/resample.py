"""RESAMPLE_FWD / RESAMPLE_BWD (pooling and interpolation): the index tensor max pooling writes has the output's
shape, and the backward's gradients have the forward's shapes."""
from __future__ import annotations

import math

from cudnn_backend._bindings.enums import AttributeName as A
from cudnn_backend._bindings.enums import ResampleMode
from cudnn_backend.core.families._checks import dims, fail, need, op_name
from cudnn_backend.core.families._family import Family
from cudnn_backend.errors import GraphError

__all__ = ["FAMILY", "check_resample_fwd", "check_resample_bwd", "resample_output_dims"]


def check_resample_bwd(op):
    """Max pooling backward needs the forward's index tensor: without one cuDNN 9.19 crashes (SIGSEGV in
    heuristics) when xdesc/ydesc are given, and refuses it otherwise."""
    v = op.value_of
    desc = v(A.CUDNN_ATTR_OPERATION_RESAMPLE_BWD_DESC)
    mode = desc.value_of(A.CUDNN_ATTR_RESAMPLE_MODE) if desc is not None else None
    if mode is not None and int(mode) == int(ResampleMode.CUDNN_RESAMPLE_MAXPOOL) and \
            v(A.CUDNN_ATTR_OPERATION_RESAMPLE_BWD_IDXDESC) is None:
        raise GraphError(f"{op_name(op)}: CUDNN_RESAMPLE_MAXPOOL backward needs idxdesc (the index tensor the forward "
                         "max pooling wrote); without it cuDNN 9.19 crashes")
    dx = v(A.CUDNN_ATTR_OPERATION_RESAMPLE_BWD_DXDESC)
    x = v(A.CUDNN_ATTR_OPERATION_RESAMPLE_BWD_XDESC)
    dy = v(A.CUDNN_ATTR_OPERATION_RESAMPLE_BWD_DYDESC)
    y = v(A.CUDNN_ATTR_OPERATION_RESAMPLE_BWD_YDESC)
    if x is not None:
        need(op, dx, "dxdesc", dims(x), "the gradient has the forward input's shape")
    if y is not None:
        need(op, dy, "dydesc", dims(y), "the incoming gradient has the forward output's shape")
    need(op, v(A.CUDNN_ATTR_OPERATION_RESAMPLE_BWD_IDXDESC), "idxdesc", dims(dy), "one index per element of dY")


def check_resample_fwd(op):
    v = op.value_of
    yd = dims(v(A.CUDNN_ATTR_OPERATION_RESAMPLE_FWD_YDESC))
    need(op, v(A.CUDNN_ATTR_OPERATION_RESAMPLE_FWD_IDXDESC), "idxdesc", yd, "one index per output element")


def resample_output_dims(x_dims, window, stride, pre_padding, post_padding):
    """Y dims of a pooling window over X ``[N, C, *spatial]`` (as cudnn-frontend infers them); window, stride and
    paddings are ints or (numerator, denominator) pairs."""
    n, c, *spatial = x_dims

    def value(v):
        return v[0] / v[1] if isinstance(v, tuple) else v

    out = []
    for i in range(len(spatial)):
        o = 1 + math.floor((spatial[i] + value(pre_padding[i]) + value(post_padding[i]) - value(window[i]))
                           / value(stride[i]))
        if o <= 0:
            fail(f"resample: spatial dim {i} of X ({spatial[i]}) is too small for a window of {window[i]}")
        out.append(int(o))
    return [n, c, *out]


FAMILY = Family("resample", ("RESAMPLE_FWD", "RESAMPLE_BWD"),
                graph_methods=("resample", "resample_bwd", "pool", "resample_descriptor"),
                finalize_checks={"RESAMPLE_FWD": check_resample_fwd, "RESAMPLE_BWD": check_resample_bwd},
                doc=__doc__)
