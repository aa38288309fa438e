"""RESAMPLE_FWD and RESAMPLE_BWD for pooling: max, average including padding, average excluding padding; padding
with zeros, -inf or the edge value; integer windows, strides and paddings, any number of spatial dims.

Y[n, c, p] reduces the window of X at ``p * stride - pre_padding + tap`` (tap over the window, row-major). Max
pooling's index output is the tap number of the first maximum. The backward spreads dY back over the window:
average pooling evenly (divided as the forward divides), max pooling to the tap the index tensor names.
Up/down-sampling (NEAREST, BILINEAR) and fractional windows are not modelled."""
from __future__ import annotations

import itertools
import math

import numpy as np

from cudnn_backend._bindings.enums import PaddingMode, ResampleMode
from cudnn_backend.reference._blocks import ravel_axes
from cudnn_backend.reference._graph import as_tuple
from cudnn_backend.reference._ops import Gather, Op, Unsupported, element_coords, real, register

__all__ = ["Window", "ResampleForward", "ResampleBackward"]

_MAX = ResampleMode.CUDNN_RESAMPLE_MAXPOOL
_AVG = ResampleMode.CUDNN_RESAMPLE_AVGPOOL
_AVG_EXCLUDE = ResampleMode.CUDNN_RESAMPLE_AVGPOOL_EXCLUDE_PADDING


class Window:
    """A pooling's window, strides, paddings, mode and padding mode from its Resample descriptor."""

    def __init__(self, node, x_dims, y_dims):
        nsp = len(x_dims) - 2
        try:
            self.mode = ResampleMode(int(node.child("desc", "mode")))
        except (TypeError, ValueError):
            raise Unsupported(f"resample mode {node.child('desc', 'mode')!r} is unknown") from None
        if self.mode not in (_MAX, _AVG, _AVG_EXCLUDE):
            raise Unsupported(f"{self.mode.name}: up/down-sampling grids are not modelled (pooling only)")
        default_pad = PaddingMode.CUDNN_NEG_INF_PAD if self.mode == _MAX else PaddingMode.CUDNN_ZERO_PAD
        self.padding = PaddingMode(int(node.child("desc", "padding_mode", int(default_pad))))

        def ints(keyword, default):
            values = as_tuple(node.child("desc", keyword)) or (default,) * nsp
            out = []
            for v in values:
                if isinstance(v, tuple):
                    if len(v) != 2 or v[1] == 0 or v[0] % v[1]:
                        raise Unsupported(f"{keyword} {values}: fractional windows are not modelled")
                    v = v[0] // v[1]
                out.append(int(v))
            if len(out) != nsp:
                raise Unsupported(f"{keyword} has {len(out)} values for {nsp} spatial dims")
            return tuple(out)

        self.window, self.stride = ints("window_dims", 1), ints("strides", 1)
        self.pre = ints("pre_paddings", 0)
        self.post = ints("post_paddings", 0) if as_tuple(node.child("desc", "post_paddings")) else self.pre
        self.s = tuple(x_dims[2:])
        self.p = tuple((s + a + b - w) // st + 1 for s, a, b, w, st in zip(self.s, self.pre, self.post, self.window,
                                                                           self.stride))
        if nsp < 1 or tuple(y_dims) != (*x_dims[:2], *self.p):
            raise Unsupported(f"y {list(y_dims)} is not the pooled x {list(x_dims)} "
                              f"({list(x_dims[:2]) + list(self.p)})")
        self.taps = np.array(list(itertools.product(*[range(w) for w in self.window])),
                             dtype=np.int64).reshape(-1, nsp)

    def positions(self, out_coords):
        """(input positions (M, T, nsp) clamped into X, inside (M, T)) of output spatial coordinates (M, nsp)."""
        pos = out_coords[:, None, :] * np.array(self.stride) - np.array(self.pre) + self.taps[None]
        inside = np.all((pos >= 0) & (pos < np.array(self.s)), axis=-1)
        return np.clip(pos, 0, np.array(self.s) - 1), inside

    def pool(self, vals, inside):
        """(Y, index) from the window values (M, T) (clamped positions) and which taps are inside X."""
        if self.padding == PaddingMode.CUDNN_EDGE_VAL_PAD:
            padded = vals
        else:
            fill = -np.inf if self.padding == PaddingMode.CUDNN_NEG_INF_PAD else 0.0
            padded = np.where(inside, vals, fill)
        if self.mode == _MAX:
            return padded.max(axis=1), np.argmax(padded, axis=1).astype(np.float64)
        if self.mode == _AVG_EXCLUDE:
            return np.where(inside, vals, 0.0).sum(axis=1) / np.maximum(inside.sum(axis=1), 1), None
        return padded.sum(axis=1) / len(self.taps), None

    def divisor(self, inside):
        """What average pooling divides each output by (M,)."""
        return np.maximum(inside.sum(axis=1), 1) if self.mode == _AVG_EXCLUDE else np.full(len(inside),
                                                                                           len(self.taps))


def _spatial_lin(nc, pos, s):
    """Linear indices into X [N, C, *s] of (n*C + c) (M,) and positions (M, T, nsp)."""
    return ravel_axes((None, *s), [nc[:, None], *[pos[..., axis] for axis in range(len(s))]])


@register("RESAMPLE_FWD")
class ResampleForward(Op):
    def __init__(self, node, graph):
        super().__init__(node, graph)
        self.x, self.y, self.index = self.need("xdesc"), self.need("ydesc"), node.uid("idxdesc")
        self.window = Window(node, self.dims(self.x), self.dims(self.y))
        if self.index is not None and self.window.mode != _MAX:
            raise Unsupported("an index output of average pooling")
        self.blend = {self.y: (real(node.attr("alpha", 1.0), "alpha"), real(node.attr("beta", 0.0), "beta"))}

    def work(self) -> float:
        return float(math.prod(self.dims(self.y))) * len(self.window.taps)

    def _compute(self, coords, gather_values):
        """{output: values} at output coordinates (M, rank), ``gather_values(lin)`` reading X."""
        w = self.window
        x_dims = self.dims(self.x)
        pos, inside = w.positions(coords[:, 2:])
        vals = gather_values(_spatial_lin(coords[:, 0] * x_dims[1] + coords[:, 1], pos, w.s))
        y, index = w.pool(vals, inside)
        return y, index

    def dense(self, values):
        yd = self.dims(self.y)
        coords = np.stack(np.unravel_index(np.arange(math.prod(yd)), yd), axis=-1).reshape(-1, len(yd))
        flat = values[self.x].reshape(-1)
        y, index = self._compute(coords, lambda lin: flat[lin])
        out = {self.y: y.reshape(yd)}
        if self.index is not None:
            out[self.index] = index.reshape(yd)
        return out

    def pull(self, wanted, cheap):
        if self.all_whole(wanted):
            return super().pull(wanted, cheap)
        picks = {u: element_coords(self.dims(u), r) for u, r in wanted.items()}
        coords = np.concatenate(list(picks.values()))
        w = self.window
        pos, _ = w.positions(coords[:, 2:])
        lin = _spatial_lin(coords[:, 0] * self.dims(self.x)[1] + coords[:, 1], pos, w.s)
        gather = Gather(self.x, self.dims(self.x), lin, cheap(self.x))

        def finish(values):
            flat = gather(values)
            y, index = self._compute(coords, lambda _lin: flat)
            out, start = {}, 0
            for u, c in picks.items():
                out[u] = (y if u == self.y else index)[start:start + len(c)]
                start += len(c)
            return out

        return {self.x: gather.request}, finish


@register("RESAMPLE_BWD")
class ResampleBackward(Op):
    def __init__(self, node, graph):
        super().__init__(node, graph)
        self.dy, self.dx, self.index = self.need("dydesc"), self.need("dxdesc"), node.uid("idxdesc")
        self.window = Window(node, self.dims(self.dx), self.dims(self.dy))
        if self.window.mode == _MAX and self.index is None:
            raise Unsupported("max-pooling backward without the forward's index tensor")
        self.blend = {self.dx: (real(node.attr("alpha", 1.0), "alpha"), real(node.attr("beta", 0.0), "beta"))}

    @property
    def inputs(self):
        return [self.dy] + ([self.index] if self.window.mode == _MAX else [])

    def dense(self, values):
        w = self.window
        dyd, dxd = self.dims(self.dy), self.dims(self.dx)
        coords = np.stack(np.unravel_index(np.arange(math.prod(dyd)), dyd), axis=-1).reshape(-1, len(dyd))
        pos, inside = w.positions(coords[:, 2:])
        lin = _spatial_lin(coords[:, 0] * dxd[1] + coords[:, 1], pos, w.s)          # (M, T)
        dy = values[self.dy].reshape(-1)
        if w.mode == _MAX:
            tap = values[self.index].reshape(-1).astype(np.int64)
            take = np.zeros(lin.shape, dtype=bool)
            take[np.arange(len(tap)), tap] = True
            share = np.where(take, dy[:, None], 0.0)
        else:
            share = np.broadcast_to((dy / w.divisor(inside))[:, None], lin.shape)
        if w.padding != PaddingMode.CUDNN_EDGE_VAL_PAD:
            share = np.where(inside, share, 0.0)  # what fell on padding goes nowhere
        dx = np.zeros(math.prod(dxd))
        np.add.at(dx, lin.reshape(-1), np.asarray(share).reshape(-1))
        return {self.dx: dx.reshape(dxd)}
