"""Convolutions: forward, backward data, backward filter; groups (X's C / W's C), dilation, pre/post padding,
strides, any number of spatial dims, both modes (CONVOLUTION flips the filter). ``alpha``/``beta`` blend the
result with the output's prior value.

X [N, C, *S], W [K, C/G, *R], Y [N, K, *P] with P = (S + pre + post - dilation * (R - 1) - 1) // stride + 1;
Y[n, k, p] = sum over c of its group and taps r of W[k, c, r] * X[n, g*C/G + c, p*stride - pre + r*dilation]
(zero outside X)."""
from __future__ import annotations

import itertools
import math

import numpy as np

from cudnn_backend._bindings.enums import ConvolutionMode
from cudnn_backend.reference._blocks import ravel_axes
from cudnn_backend.reference._graph import as_tuple
from cudnn_backend.reference._ops import Gather, Op, Unsupported, element_coords, needs_of, real, register

__all__ = ["Geometry", "ConvForward", "ConvBackwardData", "ConvBackwardFilter", "forward", "backward_data",
           "backward_filter"]


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


@register("CONVOLUTION_FORWARD")
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


@register("CONVOLUTION_BACKWARD_DATA")
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


@register("CONVOLUTION_BACKWARD_FILTER")
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

