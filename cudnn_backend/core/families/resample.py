"""RESAMPLE_FWD / RESAMPLE_BWD (pooling and interpolation): the index tensor max pooling writes has the output's
shape, and the backward's gradients have the forward's shapes.

``Graph`` methods (the mixin): Resampling: pooling (max, average) and up/down-sampling, forward and backward.

Reference ops: RESAMPLE_FWD and RESAMPLE_BWD for pooling: max, average including padding, average excluding padding;
padding with zeros, -inf or the edge value; integer windows, strides and paddings, any number of spatial dims.

Y[n, c, p] reduces the window of X at ``p * stride - pre_padding + tap`` (tap over the window, row-major). Max
pooling's index output is the tap number of the first maximum. The backward spreads dY back over the window:
average pooling evenly (divided as the forward divides), max pooling to the tap the index tensor names.
Up/down-sampling (NEAREST, BILINEAR) and fractional windows are not modelled.
"""
from __future__ import annotations

import fractions
import itertools
import math

import numpy as np

from cudnn_backend._bindings.enums import AttributeName as A
from cudnn_backend._bindings.enums import DataType, DescriptorType, NanPropagation, PaddingMode, ResampleMode
from cudnn_backend.core import graph_limits
from cudnn_backend.core.families import _build
from cudnn_backend.core.families._build import as_bool, as_choice, as_data_type, as_int, int_range, output_type
from cudnn_backend.core.families._checks import dims, fail, need, op_name
from cudnn_backend.core.families._family import Family
from cudnn_backend.core.families._reference import (
    Gather,
    Op,
    Unsupported,
    as_tuple,
    element_coords,
    ravel_axes,
    real,
)
from cudnn_backend.errors import GraphError

__all__ = ["FAMILY", "check_resample_bwd", "check_resample_fwd", "explain_resample_refusal", "resample_output_dims",
           "resample_mode", "ResampleOps", "Window", "ResampleForward", "ResampleBackward"]


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
    problem = graph_limits.resample_extent_problem(yd)  # (the backward and the input were measured not to wrap)
    if problem is not None:
        fail(f"{op_name(op)}: {problem}")


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


def explain_resample_refusal(op, cudnn_message="") -> str | None:
    """What may be why cuDNN refused to finalize a RESAMPLE_FWD or RESAMPLE_BWD set by hand, saying only
    "finalize_internal()": an output (the backward's dY) whose dims are not those of the input (dX) pooled with the
    descriptor's window, stride and paddings, as cudnn-frontend infers them; None where they are (or are unknown)."""
    v = op.value_of
    forward = int(op.descriptor_type) == int(DescriptorType.CUDNN_BACKEND_OPERATION_RESAMPLE_FWD_DESCRIPTOR)
    desc = v(A.CUDNN_ATTR_OPERATION_RESAMPLE_FWD_DESC if forward else A.CUDNN_ATTR_OPERATION_RESAMPLE_BWD_DESC)
    x_slot, y_slot = ("xdesc", "ydesc") if forward else ("dxdesc", "dydesc")
    xd = dims(v(A.CUDNN_ATTR_OPERATION_RESAMPLE_FWD_XDESC if forward else A.CUDNN_ATTR_OPERATION_RESAMPLE_BWD_DXDESC))
    yd = dims(v(A.CUDNN_ATTR_OPERATION_RESAMPLE_FWD_YDESC if forward else A.CUDNN_ATTR_OPERATION_RESAMPLE_BWD_DYDESC))
    if desc is None or xd is None or yd is None or len(xd) < 3:
        return None
    geometry = [desc.value_of(a) for a in (A.CUDNN_ATTR_RESAMPLE_WINDOW_DIMS, A.CUDNN_ATTR_RESAMPLE_STRIDES,
                                           A.CUDNN_ATTR_RESAMPLE_PRE_PADDINGS, A.CUDNN_ATTR_RESAMPLE_POST_PADDINGS)]
    geometry = [g if isinstance(g, tuple) else (g,) for g in geometry if g is not None]
    if len(geometry) != 4 or any(len(g) != len(xd) - 2 for g in geometry):
        return None
    try:
        expected = resample_output_dims(xd, *geometry)
    except GraphError as e:
        return str(e)
    if list(yd) == expected:
        return None
    window, stride, pre, post = ([f"{x[0]}/{x[1]}" if isinstance(x, tuple) else x for x in g] for g in geometry)
    return (f"{y_slot} has dims {list(yd)}, but {x_slot} {list(xd)} pooled with window {window}, stride {stride} "
            f"and paddings {pre} / {post} gives {expected} (as cudnn-frontend infers it)")


_MODES = {"max": ResampleMode.CUDNN_RESAMPLE_MAXPOOL, "maxpool": ResampleMode.CUDNN_RESAMPLE_MAXPOOL,
          "avg": ResampleMode.CUDNN_RESAMPLE_AVGPOOL, "avgpool": ResampleMode.CUDNN_RESAMPLE_AVGPOOL,
          "nearest": ResampleMode.CUDNN_RESAMPLE_NEAREST, "bilinear": ResampleMode.CUDNN_RESAMPLE_BILINEAR}


def resample_mode(mode) -> ResampleMode:
    return as_choice(ResampleMode, mode, "mode", "CUDNN_RESAMPLE_", _MODES)


def _sizes(v, n, what, minimum):
    """One value per spatial dim: a list of ints, fractions.Fraction or (numerator, denominator) pairs, or one
    int / Fraction for every dim."""
    items = list(v) if isinstance(v, (list, tuple)) else [v] * n
    if len(items) != n:
        raise ValueError(f"{what}: expected {n} values (one per spatial dim), got {len(items)}")
    out = []
    for i, x in enumerate(items):
        if isinstance(x, fractions.Fraction):
            x = (x.numerator, x.denominator)
        if isinstance(x, tuple):
            if len(x) != 2:
                raise ValueError(f"{what}[{i}]: a fraction is (numerator, denominator)")
            num, den = as_int(x[0], f"{what}[{i}] numerator"), as_int(x[1], f"{what}[{i}] denominator", 1)
            if num / den < minimum:
                raise ValueError(f"{what}[{i}] is {num}/{den}; it must be >= {minimum}")
            out.append((num, den))
        else:
            out.append(as_int(x, f"{what}[{i}]", minimum))
    return out


def check_index_type(index_type, window, what="index_data_type"):
    """Refuse an integer index type too narrow for the window: max pooling's index is a tap of the window (0 to
    prod(window) - 1), and cuDNN plans an INT8 index for a 16x16 window, whose taps past 127 it cannot hold."""
    span = int_range(index_type)
    taps = math.prod(-(-w[0] // w[1]) if isinstance(w, tuple) else w for w in window)
    if span is not None and taps - 1 > span[1]:
        raise GraphError(f"{what}: {index_type.name} holds taps up to {span[1]}, but window {list(window)} has "
                         f"{taps}; give " + ("an index tensor of a wider data type" if what == "index" else
                                             "a wider index_data_type") + " (or a smaller window)")


class ResampleOps:
    """``resample`` (pooling, alias ``pool``) and ``resample_bwd``."""

    def resample_descriptor(self, nsp, *, mode="maxpool", window=2, stride=2, pre_padding=0, post_padding=None,
                            padding_mode=None, compute=None):
        """``(descriptor, (window, stride, pre, post))``: a finalized ``Resample`` and its geometry per spatial dim
        as set (window, stride, paddings given as ints, Fractions or (num, den), one or per dim)."""
        mode = resample_mode(mode)
        if padding_mode is None:
            padding_mode = PaddingMode.CUDNN_NEG_INF_PAD if mode == ResampleMode.CUDNN_RESAMPLE_MAXPOOL else \
                PaddingMode.CUDNN_ZERO_PAD
        pre = _sizes(pre_padding, nsp, "pre_padding", 0)
        post = pre if post_padding is None else _sizes(post_padding, nsp, "post_padding", 0)
        w, s = _sizes(window, nsp, "window", 1), _sizes(stride, nsp, "stride", 1)
        desc = self._descriptor("RESAMPLE", mode=mode, comp_type=self._compute(compute),
                                nan_propagation=NanPropagation.CUDNN_PROPAGATE_NAN,
                                padding_mode=as_choice(PaddingMode, padding_mode, "padding_mode", "CUDNN_"),
                                spatial_dims=nsp, window_dims=w, strides=s, pre_paddings=pre,
                                post_paddings=post).finalize()
        return desc, (w, s, pre, post)

    def resample(self, x, *, mode="maxpool", window=2, stride=2, pre_padding=0, post_padding=None, padding_mode=None,
                 index=False, index_data_type=DataType.CUDNN_DATA_INT8, compute=None, output=True,
                 output_data_type=None, name="resample"):
        """RESAMPLE_FWD (pooling): ``{"y", "index"}``; ``index=True`` (max pooling, training) also writes the
        index tensor (INT8 by default)."""
        name = _build.as_name(name, "resample")
        x = self._need_tensor(x, "x")
        index = as_bool(index, "index")
        nsp = len(x.shape) - 2
        if nsp < 1:
            raise GraphError(f"x: resampling needs [N, C, spatial...], not {list(x.shape)}")
        desc, (w, s, pre, post) = self.resample_descriptor(nsp, mode=mode, window=window, stride=stride,
                                                           pre_padding=pre_padding, post_padding=post_padding,
                                                           padding_mode=padding_mode, compute=compute)
        dims = resample_output_dims(x.shape, w, s, pre, post)
        y = self._output(output, dims, x, output_type(output_data_type, x.data_type), f"{name}_y")
        op = self._operation("RESAMPLE_FWD", xdesc=x, ydesc=y, desc=desc, alpha=1.0, beta=0.0)
        idx = None
        if index:
            if resample_mode(mode) != ResampleMode.CUDNN_RESAMPLE_MAXPOOL:
                raise GraphError("index: an index tensor is written by max pooling only")
            index_type = as_data_type(index_data_type, "index_data_type")
            check_index_type(index_type, w)
            idx = op.idxdesc = self.tensor(dims, _build.strides_like(dims, x.strides), index_type,
                                           name=f"{name}_index")
        self.add(op)
        return {"y": y, "index": idx}

    pool = resample

    def resample_bwd(self, dy, x_dims, *, mode="maxpool", window=2, stride=2, pre_padding=0, post_padding=None,
                     padding_mode=None, index=None, x=None, y=None, compute=None, output=True, output_data_type=None,
                     name="resample_bwd"):
        """RESAMPLE_BWD: dX (the forward input's ``x_dims``) from dY; max pooling needs the forward ``index``."""
        name = _build.as_name(name, "resample_bwd")
        dy = self._need_tensor(dy, "dy")
        x_dims = _build.as_dims(x_dims, "x_dims")
        nsp = len(x_dims) - 2
        desc, (w, s, pre, post) = self.resample_descriptor(nsp, mode=mode, window=window, stride=stride,
                                                           pre_padding=pre_padding, post_padding=post_padding,
                                                           padding_mode=padding_mode, compute=compute)
        expected = resample_output_dims(x_dims, w, s, pre, post)
        if list(dy.shape) != expected:
            raise GraphError(f"dy: {list(dy.shape)} is not the forward output {expected} of X {x_dims}")
        if resample_mode(mode) == ResampleMode.CUDNN_RESAMPLE_MAXPOOL and not self._is_tensor(index):
            # cuDNN 9.19 crashes (SIGSEGV in heuristics) on a max-pool backward without the index
            raise GraphError("index: max pooling backward needs the forward index tensor (resample(..., index=True))")
        dx = self._output(output, x_dims, dy, output_type(output_data_type, dy.data_type), f"{name}_dx")
        op = self._operation("RESAMPLE_BWD", dydesc=dy, dxdesc=dx, desc=desc, alpha=1.0, beta=0.0)
        if index is not None:
            op.idxdesc = self._need_tensor(index, "index")
            check_index_type(op.idxdesc.data_type, w, "index")
        if x is not None:
            op.xdesc = self._need_tensor(x, "x")
        if y is not None:
            op.ydesc = self._need_tensor(y, "y")
        self.add(op)
        return dx


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
            chosen = np.zeros(lin.shape, dtype=bool)
            chosen[np.arange(len(tap)), tap] = True
            share = np.where(chosen, dy[:, None], 0.0)
        else:
            share = np.broadcast_to((dy / w.divisor(inside))[:, None], lin.shape)
        if w.padding != PaddingMode.CUDNN_EDGE_VAL_PAD:
            share = np.where(inside, share, 0.0)  # what fell on padding goes nowhere
        dx = np.zeros(math.prod(dxd))
        np.add.at(dx, lin.reshape(-1), np.asarray(share).reshape(-1))
        return {self.dx: dx.reshape(dxd)}


FAMILY = Family(
    "resample", ("RESAMPLE_FWD", "RESAMPLE_BWD"),
    shape_rules=(resample_output_dims,),
    graph_methods=("resample", "resample_bwd", "pool", "resample_descriptor"),
    finalize_checks={"RESAMPLE_FWD": check_resample_fwd, "RESAMPLE_BWD": check_resample_bwd},
    json_members={"RESAMPLE_FWD": {A.CUDNN_ATTR_OPERATION_RESAMPLE_FWD_YDESC: "Y",
                                   A.CUDNN_ATTR_OPERATION_RESAMPLE_FWD_IDXDESC: "Idx"},
                  "RESAMPLE_BWD": {A.CUDNN_ATTR_OPERATION_RESAMPLE_BWD_DXDESC: "dX",
                                   A.CUDNN_ATTR_OPERATION_RESAMPLE_BWD_DYDESC: "dY",
                                   A.CUDNN_ATTR_OPERATION_RESAMPLE_BWD_XDESC: "X",
                                   A.CUDNN_ATTR_OPERATION_RESAMPLE_BWD_YDESC: "Y",
                                   A.CUDNN_ATTR_OPERATION_RESAMPLE_BWD_IDXDESC: "Idx"}},
    graph_mixin=ResampleOps,
    reference_ops={"RESAMPLE_FWD": ResampleForward, "RESAMPLE_BWD": ResampleBackward},
    doc=__doc__)
