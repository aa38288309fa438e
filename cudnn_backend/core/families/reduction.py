"""REDUCTION (ADD, MUL, MIN, MAX, AMAX, AVG, NORM1, NORM2, MUL_NO_ZEROS): the output keeps the input's rank and each
output dim divides the input's (1: reduced, equal: kept, a divisor: a partial, grouped reduction fused graphs use).
``output_divides`` is that rule, for the finalize check and the ``Graph`` builder alike.

``Graph`` methods (the mixin): Reductions: ADD, MUL, MIN, MAX, AMAX, AVG, NORM1, NORM2, MUL_NO_ZEROS over chosen
axes.

Reference ops: REDUCTION, every ``ReduceTensorOp`` over the axes where Y's dim is 1 and X's is not
(``reduced_axes`` and ``pull_reduced`` serve the norm family's GEN_STATS too).
"""
from __future__ import annotations

import math

import numpy as np

from cudnn_backend._bindings.enums import AttributeName as A
from cudnn_backend._bindings.enums import ReduceTensorOp
from cudnn_backend.core.families import _build
from cudnn_backend.core.families._build import as_bool, as_choice, as_int
from cudnn_backend.core.families._checks import dims, fail, name, op_name
from cudnn_backend.core.families._family import Family
from cudnn_backend.core.families._reference import Gather, Op, Request, Unsupported, element_coords, ravel
from cudnn_backend.errors import GraphError

__all__ = ["FAMILY", "output_divides", "check_reduction", "reduction_output_dims", "ReductionOps", "REDUCERS",
           "reduced_axes", "ReductionOp"]


def output_divides(x_dims, y_dims) -> bool:
    """Whether ``y_dims`` is a reduction of ``x_dims``: equal ranks, each output dim >= 1 dividing the input's."""
    return len(x_dims) == len(y_dims) and all(b >= 1 and a % b == 0 for a, b in zip(x_dims, y_dims))


def check_reduction(op):
    v = op.value_of
    x, y = v(A.CUDNN_ATTR_OPERATION_REDUCTION_XDESC), v(A.CUDNN_ATTR_OPERATION_REDUCTION_YDESC)
    xd, yd = dims(x), dims(y)
    if xd is None or yd is None:
        return
    # cuDNN divides each input dim by the output's (x % y: SIGFPE on 0)
    if not output_divides(xd, yd):
        raise GraphError(f"{op_name(op)}: {name(y, 'ydesc')} has dims {list(yd)}, which is no reduction of "
                         f"{name(x, 'xdesc')} {list(xd)}: each output dim must divide the input's (1: reduced, "
                         "equal: kept) and the ranks must agree")



def reduction_output_dims(x_dims, axes=None):
    """X dims with the reduced axes set to 1 (cuDNN keeps the rank); all axes when ``axes`` is None."""
    rank = len(x_dims)
    if axes is None:
        return [1] * rank
    items = [axes] if not hasattr(axes, "__iter__") else _build.as_list(axes, "axes")
    if not items:  # (cuDNN finds no engine for a reduction over nothing, and says nothing more)
        fail("axes: [] reduces no axis; name the axes to reduce, or give None for all of them")
    out = set()
    for i, a in enumerate(items):
        a = as_int(a, f"axes[{i}]")
        if not -rank <= a < rank:
            fail(f"reduction: axis {a} is out of range for {rank} dims")
        out.add(a % rank)
    return [1 if i in out else d for i, d in enumerate(x_dims)]


class ReductionOps:
    """``reduction(x, op, axes)``."""

    def reduction(self, x, op="ADD", axes=None, *, output=False, output_data_type=None, compute=None, name=None,
                  deterministic=None):
        """Reduce ``x`` with ``op`` (a ReduceTensorOp or its name: "ADD", "MAX", ...).

        The output keeps x's rank: the dims of ``output=`` when a tensor is given (each must divide x's),
        else x's dims with ``axes`` set to 1, else (no axes) every dim 1.
        """
        x = self._need_tensor(x, "x")
        op = as_choice(ReduceTensorOp, op, "op", "CUDNN_REDUCE_TENSOR_")
        if self._is_tensor(output):
            dims = list(output.shape)
            if axes is not None and dims != reduction_output_dims(x.shape, axes):
                raise GraphError(f"output: {output.describe()} is not x {list(x.shape)} reduced over axes {axes}")
            if not output_divides(x.shape, dims):
                raise GraphError(f"output: {output.describe()} is no reduction of x {list(x.shape)} (same rank, each "
                                 "dim dividing x's)")
        else:
            dims = reduction_output_dims(x.shape, axes)
        desc = self._descriptor("REDUCTION", operator=op, comp_type=self._compute(compute))
        if deterministic is not None:
            desc.is_deterministic = as_bool(deterministic, "deterministic")
        desc.finalize()
        y = self._output(output, dims, x, output_data_type, name)
        self.add(self._operation("REDUCTION", xdesc=x, ydesc=y, desc=desc))
        return y


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


FAMILY = Family(
    "reduction", ("REDUCTION",),
    shape_rules=(reduction_output_dims,),
    graph_methods=("reduction",),
    finalize_checks={"REDUCTION": check_reduction},
    json_members={"REDUCTION": {A.CUDNN_ATTR_OPERATION_REDUCTION_XDESC: "X", A.CUDNN_ATTR_OPERATION_REDUCTION_YDESC: "Y"}},
    graph_mixin=ReductionOps,
    reference_ops={"REDUCTION": ReductionOp},
    doc=__doc__)
