"""Convolutions (CONVOLUTION_FORWARD, _BACKWARD_DATA, _BACKWARD_FILTER). A plan JSON finalized in one of the
convolution modes needs a node of that operation (cuDNN uses it unchecked: SIGSEGV without one, 9.10 .. 9.28.1)."""
from __future__ import annotations

from cudnn_backend.core.families._checks import fail
from cudnn_backend.core.families._family import Family

__all__ = ["FAMILY", "spatial_dims", "output_dims"]


def spatial_dims(x_dims, w_dims) -> int:
    """The number of spatial dims of a (grouped) convolution of X ``[N, C, *spatial]`` with W
    ``[K, C/groups, *filter]``; GraphError where X and W do not make one."""
    n, c, *spatial = x_dims
    k, cg, *filt = w_dims
    nsp = len(spatial)
    if nsp < 1:
        fail(f"convolution: X {list(x_dims)} needs at least one spatial dim")
    if len(filt) != nsp:
        fail(f"convolution: X {list(x_dims)} has {nsp} spatial dims, W {list(w_dims)} has {len(filt)}")
    if c % cg:
        fail(f"convolution: X's channels {c} are no multiple of W's channels per group {cg} (W {list(w_dims)})")
    groups = c // cg
    if k % groups:
        fail(f"convolution: W's output channels {k} are not divisible by the {groups} groups")
    return nsp


def output_dims(x_dims, w_dims, pre, post, stride, dilation) -> list:
    """Y dims ``[N, K, *out]`` of the convolution, from per-spatial-dim paddings, strides and dilations (ints)."""
    nsp = spatial_dims(x_dims, w_dims)
    n, spatial = x_dims[0], x_dims[2:]
    k, filt = w_dims[0], w_dims[2:]
    out = []
    for i in range(nsp):
        eff = dilation[i] * (filt[i] - 1) + 1
        o = (spatial[i] + pre[i] + post[i] - eff) // stride[i] + 1
        if o <= 0:
            fail(f"convolution: spatial dim {i} of X ({spatial[i]}) is too small for a filter of {filt[i]} "
                 f"(dilation {dilation[i]}, padding {pre[i]}+{post[i]})")
        out.append(o)
    return [n, k, *out]


FAMILY = Family(
    "conv", ("CONVOLUTION_FORWARD", "CONVOLUTION_BACKWARD_DATA", "CONVOLUTION_BACKWARD_FILTER"),
    graph_methods=("conv_fwd", "conv_bwd_data", "conv_bwd_filter", "convolution_descriptor"),
    finalize_modes={"CONV_FORWARD": "CONVOLUTION_FORWARD", "CONV_BWD_DATA": "CONVOLUTION_BACKWARD_DATA",
                    "CONV_BWD_FILTER": "CONVOLUTION_BACKWARD_FILTER"},
    doc=__doc__)
