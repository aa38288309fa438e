"""REDUCTION (every ``ReduceTensorOp`` over the axes where Y's dim is 1 and X's is not) and GEN_STATS (per-channel
sum and sum of squares: over every axis where the statistics' dim is 1)."""
from __future__ import annotations

import math

import numpy as np

from cudnn_backend._bindings.enums import ReduceTensorOp
from cudnn_backend.reference._blocks import Request, ravel
from cudnn_backend.reference._ops import Gather, Op, Unsupported, element_coords, register

__all__ = ["ReductionOp", "GenStatsOp", "REDUCERS", "reduced_axes"]

_R = ReduceTensorOp
REDUCERS = {
    _R.CUDNN_REDUCE_TENSOR_ADD: lambda x, ax: x.sum(axis=ax),
    _R.CUDNN_REDUCE_TENSOR_MUL: lambda x, ax: x.prod(axis=ax),
    _R.CUDNN_REDUCE_TENSOR_MIN: lambda x, ax: x.min(axis=ax),
    _R.CUDNN_REDUCE_TENSOR_MAX: lambda x, ax: x.max(axis=ax),
    _R.CUDNN_REDUCE_TENSOR_AMAX: lambda x, ax: np.abs(x).max(axis=ax),
    _R.CUDNN_REDUCE_TENSOR_AVG: lambda x, ax: x.mean(axis=ax),
    _R.CUDNN_REDUCE_TENSOR_NORM1: lambda x, ax: np.abs(x).sum(axis=ax),
    _R.CUDNN_REDUCE_TENSOR_NORM2: lambda x, ax: np.sqrt((x * x).sum(axis=ax)),
    _R.CUDNN_REDUCE_TENSOR_MUL_NO_ZEROS: lambda x, ax: np.where(x == 0, 1.0, x).prod(axis=ax),
}


def reduced_axes(x_dims, y_dims, what) -> tuple:
    """The axes X is reduced over to Y's dims (Y's dim 1, X's larger); Unsupported unless each Y dim is X's or 1."""
    if len(x_dims) != len(y_dims) or any(y != x and y != 1 for x, y in zip(x_dims, y_dims)):
        raise Unsupported(f"{what} {list(y_dims)} is not x {list(x_dims)} with some dims 1 (a partial reduction "
                          "of an axis groups elements in a way cuDNN does not document)")
    return tuple(i for i, (x, y) in enumerate(zip(x_dims, y_dims)) if y == 1 and x > 1)


def pull_reduced(x, x_dims, y_dims, axes, want, cheap, compute):
    """(needs, finish) of an operation whose output element at Y's coordinates reduces X over ``axes``:
    ``compute(blocks, axes_in_blocks)`` reduces an array (M, ...) over the given axes to (M,)."""
    rank = len(x_dims)
    coords = element_coords(y_dims, want)                                      # (M, rank)
    depth = rank - min(axes) if axes else 0
    if all(i in axes or x_dims[i] == 1 for i in range(rank - depth, rank)):
        # the reduced axes are trailing: whole blocks of X, one per output element
        keys = ravel(coords[:, :rank - depth], x_dims[:rank - depth])
        unique, inverse = np.unique(keys, return_inverse=True)
        in_block = tuple(range(1, depth + 1))

        def finish(values):
            return compute(values[x][inverse], in_block)

        return {x: Request(depth, unique)}, finish
    span = [x_dims[i] if i in axes else 1 for i in range(rank)]
    offsets = np.stack(np.unravel_index(np.arange(math.prod(span)), span), axis=-1)       # (Rn, rank)
    lin = ravel(coords[:, None, :] + offsets[None], x_dims)                               # (M, Rn)
    gather = Gather(x, x_dims, lin, cheap(x))

    def finish(values):
        return compute(gather(values), (1,))

    return {x: gather.request}, finish


@register("REDUCTION")
class ReductionOp(Op):
    def __init__(self, node, graph):
        super().__init__(node, graph)
        self.x, self.y = self.need("xdesc"), self.need("ydesc")
        self.refuse_set("group_offset_desc", "dims", "init_values", "subgraph", why="segmented and subgraph "
                        "reductions are not modelled")
        raw = node.child("desc", "operator")
        try:
            self.reduce = REDUCERS[ReduceTensorOp(int(raw))]
        except (TypeError, ValueError, KeyError):
            raise Unsupported(f"reduction operator {raw!r} is unknown") from None
        self.axes = reduced_axes(self.dims(self.x), self.dims(self.y), "y")

    def dense(self, values):
        x = values[self.x]
        return {self.y: self.reduce(x, self.axes).reshape(self.dims(self.y)) if self.axes else x.copy()}

    def pull(self, wanted, cheap):
        if self.all_whole(wanted):
            return super().pull(wanted, cheap)
        want = wanted[self.y]
        if not self.axes:
            needs = {self.x: want}
            return needs, lambda values: {self.y: values[self.x]}
        needs, finish = pull_reduced(self.x, self.dims(self.x), self.dims(self.y), self.axes, want, cheap,
                                     lambda blocks, ax: self.reduce(blocks, ax).reshape(len(blocks), -1)[:, 0])
        return needs, lambda values: {self.y: finish(values)}


@register("GEN_STATS")
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

