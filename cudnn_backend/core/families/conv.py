"""Convolutions (CONVOLUTION_FORWARD, _BACKWARD_DATA, _BACKWARD_FILTER). A plan JSON finalized in one of the
convolution modes needs a node of that operation (cuDNN uses it unchecked: SIGSEGV without one, 9.10 .. 9.28.1).

``Graph`` methods (the mixin): Convolutions: forward, backward data, backward filter, in either convolution mode.

Reference ops: Convolutions: forward, backward data, backward filter; groups (X's C / W's C), dilation, pre/post
padding, strides, any number of spatial dims, both modes (CONVOLUTION flips the filter). ``alpha``/``beta`` blend the
result with the output's prior value.

X [N, C, *S], W [K, C/G, *R], Y [N, K, *P] with P = (S + pre + post - dilation * (R - 1) - 1) // stride + 1;
Y[n, k, p] = sum over c of its group and taps r of W[k, c, r] * X[n, g*C/G + c, p*stride - pre + r*dilation]
(zero outside X).
"""
from __future__ import annotations

import itertools
import math

import numpy as np

from cudnn_backend._bindings.enums import AttributeName as A
from cudnn_backend._bindings.enums import ConvolutionMode
from cudnn_backend.core import graph_limits
from cudnn_backend.core.families import _build
from cudnn_backend.core.families._build import as_choice
from cudnn_backend.core.families._checks import dims, fail, need, op_name
from cudnn_backend.core.families._family import Family
from cudnn_backend.core.families._reference import (
    Gather,
    Op,
    Unsupported,
    as_tuple,
    element_coords,
    needs_of,
    ravel_axes,
    real,
)
from cudnn_backend.errors import GraphError

__all__ = ["FAMILY", "MAX_SPATIAL_DIMS", "spatial_dims", "output_dims", "conv_mode", "conv_output_dims",
           "ConvolutionOps", "Geometry", "forward", "backward_data", "backward_filter", "ConvForward",
           "ConvBackwardData", "ConvBackwardFilter"]


MAX_SPATIAL_DIMS = 3  # cuDNN 9.10-9.28 refuse more at the operation's finalize, as NOT_INITIALIZED


def spatial_dims(x_dims, w_dims) -> int:
    """The number of spatial dims of a (grouped) convolution of X ``[N, C, *spatial]`` with W
    ``[K, C/groups, *filter]``; GraphError where X and W do not make one."""
    n, c, *spatial = x_dims
    k, cg, *filt = w_dims
    nsp = len(spatial)
    if not 1 <= nsp <= MAX_SPATIAL_DIMS:
        fail(f"convolution: X {list(x_dims)} has {nsp} spatial dims; cuDNN convolves over 1 to {MAX_SPATIAL_DIMS} "
             "(tensors of 3 to 5 dims)")
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
        if o > _build.MAX_SIZE:
            fail(f"convolution: spatial dim {i}: X's {spatial[i]} with padding {pre[i]}+{post[i]} (stride "
                 f"{stride[i]}) gives {o} output positions; a cuDNN size is at most {_build.MAX_SIZE} (int64)")
        out.append(o)
    return [n, k, *out]


_MODES = {"cross_correlation": ConvolutionMode.CUDNN_CROSS_CORRELATION, "xcorr": ConvolutionMode.CUDNN_CROSS_CORRELATION,
          "convolution": ConvolutionMode.CUDNN_CONVOLUTION, "conv": ConvolutionMode.CUDNN_CONVOLUTION}


def conv_mode(mode) -> ConvolutionMode:
    """'cross_correlation' (deep learning's convolution, the default) or 'convolution' (flipped filter)."""
    return as_choice(ConvolutionMode, mode, "mode", "CUDNN_", _MODES)



def conv_output_dims(x_dims, w_dims, padding=0, stride=1, dilation=1, post_padding=None):
    """Y dims of a (grouped) convolution of X ``[N, C, *spatial]`` with W ``[K, C/groups, *filter]``: the values
    read here, the rule ``output_dims``."""
    nsp = spatial_dims(x_dims, w_dims)
    pre = _build.pair(padding, nsp, "padding")
    post = _build.pair(pre if post_padding is None else post_padding, nsp, "post_padding")
    return output_dims(x_dims, w_dims, pre, post, _build.pair(stride, nsp, "stride", 1),
                       _build.pair(dilation, nsp, "dilation", 1))


class ConvolutionOps:
    """``conv_bwd_data`` and ``conv_bwd_filter``. ``conv_fwd`` and ``convolution_descriptor`` (the ``Convolution``
    all three use) are compiled in ``graph._core`` (``GraphCore``), the builder's hot path."""

    def _backward_convolution(self, dy, x_dims, w_dims, padding, stride, dilation, post_padding, compute, mode):
        expected = conv_output_dims(x_dims, w_dims, padding, stride, dilation, post_padding)
        if list(expected) != list(dy.shape):
            raise GraphError(f"dy: {list(dy.shape)} is not the forward output {expected} of X {list(x_dims)} and "
                             f"W {list(w_dims)}")
        return self.convolution_descriptor(len(dy.shape) - 2, padding, stride, dilation, post_padding, compute, mode)

    def conv_bwd_data(self, dy, w, x_dims, *, padding=0, stride=1, dilation=1, post_padding=None,
                      mode="cross_correlation", compute=None, output=False, output_data_type=None, alpha=1.0,
                      beta=0.0, name=None):
        """dX of the forward convolution of X (``x_dims``) with W, from dY (the forward output's shape)."""
        dy, w = self._need_tensor(dy, "dy"), self._need_tensor(w, "w")
        x_dims = _build.as_dims(x_dims, "x_dims")
        conv = self._backward_convolution(dy, x_dims, w.shape, padding, stride, dilation, post_padding, compute, mode)
        dx = self._output(output, x_dims, dy, output_data_type, name, what="output")
        self.add(self._operation("CONVOLUTION_BACKWARD_DATA", dy=dy, w=w, dx=dx, conv_desc=conv, alpha=alpha,
                                 beta=beta))
        return dx

    def conv_bwd_filter(self, x, dy, w_dims, *, padding=0, stride=1, dilation=1, post_padding=None,
                        mode="cross_correlation", compute=None, output=False, output_data_type=None, alpha=1.0,
                        beta=0.0, name=None):
        """dW of the forward convolution of X with a filter of ``w_dims``, from dY."""
        x, dy = self._need_tensor(x, "x"), self._need_tensor(dy, "dy")
        w_dims = _build.as_dims(w_dims, "w_dims")
        conv = self._backward_convolution(dy, x.shape, w_dims, padding, stride, dilation, post_padding, compute, mode)
        dw = self._output(output, w_dims, x, output_data_type, name, what="output")
        self.add(self._operation("CONVOLUTION_BACKWARD_FILTER", x=x, dy=dy, dw=dw, conv_desc=conv, alpha=alpha,
                                 beta=beta))
        return dw


class Geometry:
    """A convolution's shapes and settings, read from its Convolution descriptor and checked against X, W, Y."""

    def __init__(self, node, x_dims, w_dims, y_dims):
        nsp = len(x_dims) - 2

        def per_dim(keyword, default):
            values = as_tuple(node.child("conv_desc", keyword))
            values = values if values else (default,) * nsp
            if len(values) != nsp:
                raise Unsupported(f"conv_desc {keyword} has {len(values)} values for {nsp} spatial dims")
            if any(isinstance(v, tuple) for v in values):
                raise Unsupported(f"conv_desc {keyword} {values} is not integers")
            return tuple(int(v) for v in values)

        if nsp < 1 or len(w_dims) != len(x_dims) or len(y_dims) != len(x_dims):
            raise Unsupported(f"x {list(x_dims)}, w {list(w_dims)}, y {list(y_dims)}: not [N, C, spatial...] of "
                              "one rank")
        self.pre, self.post = per_dim("pre_paddings", 0), per_dim("post_paddings", None)
        if self.post == (None,) * nsp:
            self.post = self.pre
        self.stride, self.dilation = per_dim("filter_strides", 1), per_dim("dilations", 1)
        mode = node.child("conv_desc", "conv_mode", int(ConvolutionMode.CUDNN_CROSS_CORRELATION))
        self.flip = int(mode) == int(ConvolutionMode.CUDNN_CONVOLUTION)
        n, c = x_dims[:2]
        k, cg = w_dims[:2]
        if cg < 1 or c % cg or k % (c // cg):
            raise Unsupported(f"x channels {c} and w {list(w_dims)}: no whole number of groups")
        self.groups, self.cg, self.kg = c // cg, cg, k // (c // cg)
        self.s, self.r = tuple(x_dims[2:]), tuple(w_dims[2:])
        self.p = tuple((s + a + b - d * (r - 1) - 1) // st + 1
                       for s, a, b, d, r, st in zip(self.s, self.pre, self.post, self.dilation, self.r, self.stride))
        expected = (n, k, *self.p)
        if tuple(y_dims) != expected:
            raise Unsupported(f"the output dims {list(y_dims)} are not {list(expected)}")
        self.taps = list(itertools.product(*[range(r) for r in self.r]))

    def tap_slices(self, tap):
        """Slices of the padded input that a filter tap meets, one per output position."""
        return tuple(slice(t * d, t * d + st * (p - 1) + 1, st)
                     for t, d, st, p in zip(tap, self.dilation, self.stride, self.p))

    def filter_tap(self, tap):
        """The filter index of a tap (the flipped one in CONVOLUTION mode)."""
        return tuple(r - 1 - t for t, r in zip(tap, self.r)) if self.flip else tuple(tap)

    def macs(self, n) -> float:
        return float(n) * self.groups * self.kg * self.cg * math.prod(self.p) * math.prod(self.r)


def _padded(x, g: Geometry):
    pads = [(0, 0), (0, 0)] + [(a, max(b, 0)) for a, b in zip(g.pre, g.post)]
    return np.pad(x, pads)


def forward(x, w, g: Geometry):
    """Y of X and W (dense)."""
    n = x.shape[0]
    xg = _padded(x, g).reshape(n, g.groups, g.cg, *[s + a + max(b, 0) for s, a, b in zip(g.s, g.pre, g.post)])
    wg = w.reshape(g.groups, g.kg, g.cg, *g.r)
    y = np.zeros((n, g.groups, g.kg, math.prod(g.p)))
    for tap in g.taps:
        xt = xg[(slice(None),) * 3 + g.tap_slices(tap)].reshape(n, g.groups, g.cg, -1)
        y += np.matmul(wg[(slice(None),) * 3 + g.filter_tap(tap)][None], xt)
    return y.reshape(n, g.groups * g.kg, *g.p)


def backward_data(dy, w, g: Geometry):
    """dX of dY and W (dense): every output gradient spread back over the inputs its window read."""
    n = dy.shape[0]
    padded = [s + a + max(b, 0) for s, a, b in zip(g.s, g.pre, g.post)]
    dx = np.zeros((n, g.groups, g.cg, *padded))
    dyg = dy.reshape(n, g.groups, g.kg, -1)
    wg = w.reshape(g.groups, g.kg, g.cg, *g.r)
    for tap in g.taps:
        wt = np.swapaxes(wg[(slice(None),) * 3 + g.filter_tap(tap)], -1, -2)  # (G, Cg, Kg)
        dx[(slice(None),) * 3 + g.tap_slices(tap)] += np.matmul(wt[None], dyg).reshape(n, g.groups, g.cg, *g.p)
    crop = tuple(slice(a, a + s) for a, s in zip(g.pre, g.s))
    return dx[(slice(None),) * 3 + crop].reshape(n, g.groups * g.cg, *g.s)


def backward_filter(x, dy, g: Geometry):
    """dW of X and dY (dense)."""
    n = x.shape[0]
    xg = _padded(x, g).reshape(n, g.groups, g.cg, *[s + a + max(b, 0) for s, a, b in zip(g.s, g.pre, g.post)])
    dyr = dy.reshape(n, g.groups, g.kg, -1).transpose(1, 2, 0, 3).reshape(g.groups, g.kg, -1)
    dw = np.zeros((g.groups, g.kg, g.cg, *g.r))
    for tap in g.taps:
        xt = xg[(slice(None),) * 3 + g.tap_slices(tap)].reshape(n, g.groups, g.cg, -1)
        xr = xt.transpose(1, 0, 3, 2).reshape(g.groups, -1, g.cg)
        dw[(slice(None),) * 3 + g.filter_tap(tap)] = np.matmul(dyr, xr)
    return dw.reshape(g.groups * g.kg, g.cg, *g.r)


def _split(positions):
    """Per spatial axis, the index arrays of positions ``(..., nsp)``."""
    return [positions[..., axis] for axis in range(positions.shape[-1])]


class _Convolution(Op):
    X, W, Y = "x", "w", "y"  # the slots of this direction's operands (Y: what it writes)

    def __init__(self, node, graph):
        super().__init__(node, graph)
        self.x, self.w, self.y = self.need(self.X), self.need(self.W), self.need(self.Y)
        self.geometry = self.make_geometry()
        self.blend = {self.y: (real(node.attr("alpha", 1.0), "alpha"), real(node.attr("beta", 0.0), "beta"))}

    def work(self) -> float:
        return self.geometry.macs(self.batch)

    def _taps(self):
        """(tap offsets (T, nsp), filter tap indices (T, nsp)) as arrays."""
        g = self.geometry
        taps = np.array(g.taps, dtype=np.int64).reshape(len(g.taps), len(g.r))
        filt = np.array([g.filter_tap(t) for t in g.taps], dtype=np.int64).reshape(taps.shape)
        return taps, filt


class ConvForward(_Convolution):
    X, W, Y = "x", "w", "y"

    def make_geometry(self):
        self.out, self.batch = self.y, self.dims(self.x)[0]
        return Geometry(self.node, self.dims(self.x), self.dims(self.w), self.dims(self.y))

    def dense(self, values):
        return {self.y: forward(values[self.x], values[self.w], self.geometry)}

    def pull(self, wanted, cheap):
        if self.all_whole(wanted):
            return super().pull(wanted, cheap)
        g = self.geometry
        want = wanted[self.y]
        yc = element_coords(self.dims(self.y), want)                 # (M, 2 + nsp)
        taps, filt = self._taps()
        c = np.arange(g.cg, dtype=np.int64)
        n, k = yc[:, 0], yc[:, 1]
        grp = k // g.kg
        # input positions (M, T, nsp) and whether they fall inside X
        pos = yc[:, None, 2:] * np.array(g.stride) - np.array(g.pre) + taps[None] * np.array(g.dilation)
        inside = np.all((pos >= 0) & (pos < np.array(g.s)), axis=-1)            # (M, T)
        pos = np.where(inside[..., None], pos, 0)
        channel = grp[:, None] * g.cg + c[None, :]                               # (M, Cg)
        x_lin = ravel_axes(self.dims(self.x), [n[:, None, None], channel[:, :, None], *_split(pos[:, None])])
        w_lin = ravel_axes(self.dims(self.w), [k[:, None, None], c[None, :, None], *_split(filt[None, None])])
        gx = Gather(self.x, self.dims(self.x), x_lin, cheap(self.x))
        gw = Gather(self.w, self.dims(self.w), w_lin, cheap(self.w))

        def finish(values):
            prod = gx(values) * gw(values) * inside[:, None, :]
            return {self.y: prod.sum(axis=(1, 2))}

        return needs_of(gx, gw), finish


class ConvBackwardData(_Convolution):
    X, W, Y = "dy", "w", "dx"  # reads dY and W, writes dX

    def make_geometry(self):
        # the forward convolution's X is dX, its Y is dY
        self.out, self.batch = self.y, self.dims(self.x)[0]
        return Geometry(self.node, self.dims(self.y), self.dims(self.w), self.dims(self.x))

    def dense(self, values):
        return {self.y: backward_data(values[self.x], values[self.w], self.geometry)}

    def pull(self, wanted, cheap):
        if self.all_whole(wanted):
            return super().pull(wanted, cheap)
        g = self.geometry
        xc = element_coords(self.dims(self.y), wanted[self.y])                 # dX coords (M, 2 + nsp)
        taps, filt = self._taps()
        n, ch = xc[:, 0], xc[:, 1]
        grp, c = ch // g.cg, ch % g.cg
        num = xc[:, None, 2:] + np.array(g.pre) - taps[None] * np.array(g.dilation)   # (M, T, nsp)
        out = num // np.array(g.stride)
        hit = np.all((num % np.array(g.stride) == 0) & (out >= 0) & (out < np.array(g.p)), axis=-1)
        out = np.where(hit[..., None], out, 0)
        kk = grp[:, None] * g.kg + np.arange(g.kg, dtype=np.int64)[None, :]     # (M, Kg)
        dy_lin = ravel_axes(self.dims(self.x), [n[:, None, None], kk[:, :, None], *_split(out[:, None])])
        w_lin = ravel_axes(self.dims(self.w), [kk[:, :, None], c[:, None, None], *_split(filt[None, None])])
        gdy = Gather(self.x, self.dims(self.x), dy_lin, cheap(self.x))
        gw = Gather(self.w, self.dims(self.w), w_lin, cheap(self.w))

        def finish(values):
            return {self.y: (gdy(values) * gw(values) * hit[:, None, :]).sum(axis=(1, 2))}

        return needs_of(gdy, gw), finish


class ConvBackwardFilter(_Convolution):
    X, W, Y = "x", "dy", "dw"  # reads X and dY, writes dW

    def make_geometry(self):
        self.out, self.batch = self.y, self.dims(self.x)[0]
        return Geometry(self.node, self.dims(self.x), self.dims(self.y), self.dims(self.w))

    def dense(self, values):
        return {self.y: backward_filter(values[self.x], values[self.w], self.geometry)}

    def pull(self, wanted, cheap):
        if self.all_whole(wanted):
            return super().pull(wanted, cheap)
        g = self.geometry
        wc = element_coords(self.dims(self.y), wanted[self.y])                 # dW coords (M, 2 + nsp)
        k, c = wc[:, 0], wc[:, 1]
        grp = k // g.kg
        tap = wc[:, 2:]
        if g.flip:
            tap = np.array(g.r) - 1 - tap
        n_all = self.dims(self.x)[0]
        pp = np.stack(np.unravel_index(np.arange(math.prod(g.p)), g.p), axis=-1)   # (PP, nsp)
        pos = pp[None] * np.array(g.stride) - np.array(g.pre) + tap[:, None, :] * np.array(g.dilation)  # (M, PP, nsp)
        inside = np.all((pos >= 0) & (pos < np.array(g.s)), axis=-1)                 # (M, PP)
        pos = np.where(inside[..., None], pos, 0)
        nn = np.arange(n_all, dtype=np.int64)
        x_lin = ravel_axes(self.dims(self.x), [nn[None, :, None], (grp * g.cg + c)[:, None, None],
                                               *_split(pos[:, None])])                # (M, N, PP)
        pidx = np.arange(math.prod(g.p), dtype=np.int64)
        dy_lin = ravel_axes((n_all, g.groups * g.kg, math.prod(g.p)), [nn[None, :, None], k[:, None, None],
                                                                       pidx[None, None, :]])
        gx = Gather(self.x, self.dims(self.x), x_lin, cheap(self.x))
        gdy = Gather(self.w, self.dims(self.w), dy_lin, cheap(self.w))

        def finish(values):
            return {self.y: (gx(values) * gdy(values) * inside[:, None, :]).sum(axis=(1, 2))}

        return needs_of(gx, gdy), finish


# (activation read or written, filter, other activation) of each convolution, with their plan JSON members
_TENSORS = {
    "CONVOLUTION_FORWARD": ((A.CUDNN_ATTR_OPERATION_CONVOLUTION_FORWARD_X, "X", "xdesc"),
                            (A.CUDNN_ATTR_OPERATION_CONVOLUTION_FORWARD_W, "W", "wdesc"),
                            (A.CUDNN_ATTR_OPERATION_CONVOLUTION_FORWARD_Y, "Y", "ydesc")),
    "CONVOLUTION_BACKWARD_DATA": ((A.CUDNN_ATTR_OPERATION_CONVOLUTION_BWD_DATA_DX, "dX", "dxdesc"),
                                  (A.CUDNN_ATTR_OPERATION_CONVOLUTION_BWD_DATA_W, "W", "wdesc"),
                                  (A.CUDNN_ATTR_OPERATION_CONVOLUTION_BWD_DATA_DY, "dY", "dydesc")),
    "CONVOLUTION_BACKWARD_FILTER": ((A.CUDNN_ATTR_OPERATION_CONVOLUTION_BWD_FILTER_X, "X", "xdesc"),
                                    (A.CUDNN_ATTR_OPERATION_CONVOLUTION_BWD_FILTER_DW, "dW", "dwdesc"),
                                    (A.CUDNN_ATTR_OPERATION_CONVOLUTION_BWD_FILTER_DY, "dY", "dydesc")),
}
# each convolution's descriptor type name -> (its tensors as above, the attribute holding its geometry)
_OF_TYPE = {f"CUDNN_BACKEND_OPERATION_{short}_DESCRIPTOR": (_TENSORS[short], conv_desc) for short, conv_desc in (
    ("CONVOLUTION_FORWARD", A.CUDNN_ATTR_OPERATION_CONVOLUTION_FORWARD_CONV_DESC),
    ("CONVOLUTION_BACKWARD_DATA", A.CUDNN_ATTR_OPERATION_CONVOLUTION_BWD_DATA_CONV_DESC),
    ("CONVOLUTION_BACKWARD_FILTER", A.CUDNN_ATTR_OPERATION_CONVOLUTION_BWD_FILTER_CONV_DESC))}
_GEOMETRY = (A.CUDNN_ATTR_CONVOLUTION_PRE_PADDINGS, A.CUDNN_ATTR_CONVOLUTION_POST_PADDINGS,
             A.CUDNN_ATTR_CONVOLUTION_FILTER_STRIDES, A.CUDNN_ATTR_CONVOLUTION_DILATIONS)


def check_convolution(op):
    """The output activation (Y; dY of the backward ones) must be ``output_dims`` of the input one and the filter
    (cuDNN checks that itself as the descriptor is finalized, not for the shapes a variant pack overrides), and the
    extents of the GEMM a convolution is computed as (the positions of either activation, N * P * Q; the filter's K,
    C * R * S and K * R * S) must not wrap cuDNN's 32-bit tile counts (``graph_limits``)."""
    ((x_attr, _, x_slot), (w_attr, _, w_slot), (y_attr, _, y_slot)), conv_attr = _OF_TYPE[op.descriptor_type.name]
    y_tensor = op.value_of(y_attr)
    x, w, y = dims(op.value_of(x_attr)), dims(op.value_of(w_attr)), dims(y_tensor)
    conv = op.value_of(conv_attr)  # (a plan JSON node has none: its members)
    if conv is not None and x is not None and w is not None and y is not None:
        geometry = [conv.value_of(attr) for attr in _GEOMETRY]
        if all(isinstance(g, tuple) and len(g) == len(x) - 2 for g in geometry):
            need(op, y_tensor, y_slot, output_dims(x, w, *geometry),
                 f"the convolution of {x_slot} {list(x)} by {w_slot} {list(w)}")
    if all(d is None or math.prod(d) < graph_limits.TILE_COUNT_LOW for d in (x, w, y)):
        return
    extents = [(f"the positions of {slot} {list(d)} (N times its spatial dims)", d[0] * math.prod(d[2:]))
               for slot, d in ((x_slot, x), (y_slot, y)) if d is not None and len(d) > 2]
    if w is not None and len(w) > 2:
        extents += [(f"{w_slot} {list(w)}'s K", w[0]), (f"{w_slot} {list(w)}'s C * R * S", math.prod(w[1:])),
                    (f"{w_slot} {list(w)}'s K * R * S", w[0] * math.prod(w[2:]))]
    problem = graph_limits.tile_count_problem(extents)
    if problem is not None:
        fail(f"{op_name(op)}: {problem}")


FAMILY = Family(
    "conv", ("CONVOLUTION_FORWARD", "CONVOLUTION_BACKWARD_DATA", "CONVOLUTION_BACKWARD_FILTER"),
    finalize_checks={short: check_convolution for short in _TENSORS},
    finalize_check_floors={short: graph_limits.TILE_COUNT_LOW for short in _TENSORS},
    json_members={short: {attr: member for attr, member, _ in tensors} for short, tensors in _TENSORS.items()},
    shape_rules=(conv_output_dims,),
    graph_methods=("conv_fwd", "conv_bwd_data", "conv_bwd_filter", "convolution_descriptor"),
    finalize_modes={"CONV_FORWARD": "CONVOLUTION_FORWARD", "CONV_BWD_DATA": "CONVOLUTION_BACKWARD_DATA",
                    "CONV_BWD_FILTER": "CONVOLUTION_BACKWARD_FILTER"},
    graph_mixin=ConvolutionOps,
    reference_ops={"CONVOLUTION_FORWARD": ConvForward, "CONVOLUTION_BACKWARD_DATA": ConvBackwardData,
                   "CONVOLUTION_BACKWARD_FILTER": ConvBackwardFilter},
    doc=__doc__)
