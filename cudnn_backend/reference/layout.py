"""Data movement: CONCAT, RESHAPE, TRANSPOSE, SLICE. Each output element is one input element; ``source`` says
which, so whole and sampled evaluation share it.

RESHAPE in VIEW_ONLY mode (the default) is a view: Y's element at offset ``sum(coord * Y's stride)`` is X's element
at the same offset of X's layout (how cuDNN 9 graphs read a tensor transposed: swapped dims and strides). Both
layouts must cover the same memory densely (strides packed in some axis order). In LOGICAL mode it is the
row-major reshape of X's logical order."""
from __future__ import annotations

import math

import numpy as np

from cudnn_backend._bindings.enums import ReshapeMode
from cudnn_backend.reference._graph import as_tuple
from cudnn_backend.reference._ops import Gather, Op, Unsupported, element_coords, register
from cudnn_backend.reference._blocks import ravel

__all__ = ["IndexMap", "Concat", "Reshape", "Transpose", "Slice", "dense_order"]


def dense_order(dims, strides):
    """Axes from outermost to innermost when ``strides`` pack ``dims`` densely (size-1 axes may have any
    stride), else None."""
    order = sorted((i for i in range(len(dims)) if dims[i] > 1), key=lambda i: -strides[i])
    expected = 1
    for i in reversed(order):
        if strides[i] != expected:
            return None
        expected *= dims[i]
    return order


class IndexMap(Op):
    """An operation whose every output element copies one input element: ``source(coords)`` gives
    (input uid, the input's coordinates) per output coordinate; a single input unless ``sources`` says more."""

    def pull(self, wanted, cheap):
        if self.all_whole(wanted):
            return super().pull(wanted, cheap)
        (out, want), = wanted.items()
        coords = element_coords(self.dims(out), want)
        parts = self.source(coords)                       # [(uid, positions in coords, input coords)]
        by_uid = {}
        for uid, where, src in parts:
            by_uid.setdefault(uid, []).append((where, ravel(src, self.dims(uid))))
        gathers, placements = [], []
        for uid, pieces in by_uid.items():
            lin = np.concatenate([p[1] for p in pieces])
            gathers.append(Gather(uid, self.dims(uid), lin, cheap(uid)))
            placements.append(np.concatenate([p[0] for p in pieces]))

        def finish(values):
            y = np.empty(len(coords))
            for gather, where in zip(gathers, placements):
                y[where] = gather(values)
            return {out: y}

        return {g.uid: g.request for g in gathers}, finish


@register("CONCAT")
class Concat(IndexMap):
    def __init__(self, node, graph):
        super().__init__(node, graph)
        self.parts = node.uids("input_descs")
        self.y = self.need("output_desc")
        if not self.parts:
            raise Unsupported("no inputs")
        yd = self.dims(self.y)
        self.axis = int(node.attr("axis", 0)) % len(yd)
        sizes = []
        for u in self.parts:
            d = self.dims(u)
            if len(d) != len(yd) or any(a != b for i, (a, b) in enumerate(zip(d, yd)) if i != self.axis):
                raise Unsupported(f"input {self.info(u).name} {list(d)} does not fit output {list(yd)}")
            sizes.append(d[self.axis])
        if sum(sizes) != yd[self.axis]:
            raise Unsupported(f"the inputs' sizes along axis {self.axis} sum to {sum(sizes)}, not {yd[self.axis]}")
        self.starts = np.cumsum([0, *sizes])

    def dense(self, values):
        return {self.y: np.concatenate([values[u] for u in self.parts], axis=self.axis)}

    def source(self, coords):
        which = np.searchsorted(self.starts, coords[:, self.axis], side="right") - 1
        out = []
        for i, u in enumerate(self.parts):
            where = np.nonzero(which == i)[0]
            src = coords[where].copy()
            src[:, self.axis] -= self.starts[i]
            out.append((u, where, src))
        return out


@register("RESHAPE")
class Reshape(IndexMap):
    def __init__(self, node, graph):
        super().__init__(node, graph)
        self.x, self.y = self.need("xdesc"), self.need("ydesc")
        xi, yi = self.info(self.x), self.info(self.y)
        if xi.numel != yi.numel:
            raise Unsupported(f"x {list(xi.dims)} and y {list(yi.dims)} differ in element count")
        mode = node.attr("mode", int(ReshapeMode.CUDNN_RESHAPE_VIEW_ONLY))
        self.logical = int(mode) == int(ReshapeMode.CUDNN_RESHAPE_LOGICAL)
        if not self.logical:
            self.x_order = dense_order(xi.dims, xi.strides)
            if self.x_order is None or dense_order(yi.dims, yi.strides) is None:
                raise Unsupported(f"a view between x {list(xi.dims)} strides {list(xi.strides)} and y "
                                  f"{list(yi.dims)} strides {list(yi.strides)} that do not both pack their "
                                  "elements densely")

    def source(self, coords):
        yi, xi = self.info(self.y), self.info(self.x)
        if self.logical:
            src = np.stack(np.unravel_index(ravel(coords, yi.dims), xi.dims), axis=-1)
            return [(self.x, np.arange(len(coords)), src)]
        offset = (coords * np.array(yi.strides, dtype=np.int64)).sum(axis=1) if len(coords) else \
            np.zeros(0, dtype=np.int64)
        src = np.zeros((len(coords), len(xi.dims)), dtype=np.int64)
        for axis in self.x_order:
            src[:, axis] = offset // xi.strides[axis]
            offset = offset - src[:, axis] * xi.strides[axis]
        return [(self.x, np.arange(len(coords)), src)]

    def dense(self, values):
        yd = self.dims(self.y)
        coords = np.stack(np.unravel_index(np.arange(math.prod(yd)), yd), axis=-1).reshape(-1, len(yd))
        (_, _, src), = self.source(coords)
        return {self.y: values[self.x][tuple(src.T)].reshape(yd)}


@register("TRANSPOSE")
class Transpose(IndexMap):
    def __init__(self, node, graph):
        super().__init__(node, graph)
        self.x, self.y = self.need("xdesc"), self.need("ydesc")
        self.perm = tuple(int(p) for p in as_tuple(node.attr("permutation")))
        xd, yd = self.dims(self.x), self.dims(self.y)
        if sorted(self.perm) != list(range(len(xd))) or tuple(xd[p] for p in self.perm) != tuple(yd):
            raise Unsupported(f"permutation {list(self.perm)} does not take x {list(xd)} to y {list(yd)}")

    def dense(self, values):
        return {self.y: np.transpose(values[self.x], self.perm)}

    def source(self, coords):
        src = np.empty_like(coords)
        for i, p in enumerate(self.perm):
            src[:, p] = coords[:, i]
        return [(self.x, np.arange(len(coords)), src)]


@register("SLICE")
class Slice(IndexMap):
    def __init__(self, node, graph):
        super().__init__(node, graph)
        self.x, self.y = self.need("xdesc"), self.need("ydesc")
        xd, yd = self.dims(self.x), self.dims(self.y)
        rank = len(xd)
        self.start = tuple(int(v) for v in as_tuple(node.attr("start_indices"))) or (0,) * rank
        self.limit = tuple(int(v) for v in as_tuple(node.attr("limit_indices"))) or tuple(xd)
        self.step = tuple(int(v) for v in as_tuple(node.attr("strides"))) or (1,) * rank
        if not (len(self.start) == len(self.limit) == len(self.step) == rank) or min(self.step) < 1:
            raise Unsupported("start, limit and strides need one value per axis (strides >= 1)")
        expected = tuple(len(range(a, b, s)) for a, b, s in zip(self.start, self.limit, self.step))
        if expected != tuple(yd) or any(a < 0 or b > x for a, b, x in zip(self.start, self.limit, xd)):
            raise Unsupported(f"x {list(xd)}[{self.start}:{self.limit}:{self.step}] is not y {list(yd)}")

    def dense(self, values):
        return {self.y: values[self.x][tuple(slice(a, b, s) for a, b, s in zip(self.start, self.limit,
                                                                                 self.step))]}

    def source(self, coords):
        return [(self.x, np.arange(len(coords)), coords * np.array(self.step) + np.array(self.start))]
