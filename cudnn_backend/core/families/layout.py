"""Layout operations: CONCAT, RESHAPE, TRANSPOSE, SLICE.

``Graph`` methods (the mixin): Data movement: concat, reshape, transpose, slice.

Reference ops: Data movement: CONCAT, RESHAPE, TRANSPOSE, SLICE. Each output element is one input element; ``source``
says which, so whole and sampled evaluation share it.

RESHAPE in VIEW_ONLY mode (the default) is a view: Y's element at offset ``sum(coord * Y's stride)`` is X's element
at the same offset of X's layout (how cuDNN 9 graphs read a tensor transposed: swapped dims and strides). Both
layouts must cover the same memory densely (strides packed in some axis order). In LOGICAL mode it is the
row-major reshape of X's logical order.
"""
from __future__ import annotations

import math

import numpy as np

from cudnn_backend._bindings.enums import ReshapeMode
from cudnn_backend.core.families import _build
from cudnn_backend.core.families._build import as_choice, as_data_type, as_int, output_type, require
from cudnn_backend.core.families._checks import fail
from cudnn_backend.core.families._family import Family
from cudnn_backend.core.families._reference import Gather, Op, Unsupported, as_tuple, element_coords, ravel
from cudnn_backend.errors import GraphError

__all__ = ["FAMILY", "concat_output_dims", "transpose_output_dims", "slice_output_dims", "LayoutOps", "dense_order",
           "IndexMap", "Concat", "Reshape", "Transpose", "Slice"]


def concat_output_dims(dims_list, axis):
    """Dims of the concatenation of ``dims_list`` along ``axis`` (all other dims must agree)."""
    first = list(dims_list[0])
    total = 0
    for dims in dims_list:
        dims = list(dims)
        if len(dims) != len(first) or any(a != b for i, (a, b) in enumerate(zip(dims, first)) if i != axis):
            fail(f"concat along axis {axis}: {dims} does not match {first}")
        total += dims[axis]
    out = list(first)
    out[axis] = total
    return out


def transpose_output_dims(x_dims, permutation):
    """Y dims of a transpose: ``y[i] = x[permutation[i]]``."""
    if sorted(permutation) != list(range(len(x_dims))):
        fail(f"transpose: {list(permutation)} is not a permutation of {len(x_dims)} axes")
    return [x_dims[p] for p in permutation]


def slice_output_dims(x_dims, start, limit, strides=None):
    """Y dims of a slice ``x[start:limit:stride]`` per axis (limit exclusive)."""
    strides = [1] * len(x_dims) if strides is None else list(strides)
    if not len(start) == len(limit) == len(strides) == len(x_dims):
        fail(f"slice: start, limit and strides need {len(x_dims)} entries each")
    out = []
    for d, s, e, st in zip(x_dims, start, limit, strides):
        if not (0 <= s < e <= d) or st <= 0:
            fail(f"slice [{s}:{e}:{st}] is empty or outside an axis of size {d}")
        out.append(math.ceil((e - s) / st))
    return out


class LayoutOps:
    """``concat``, ``reshape``, ``transpose`` (cuDNN 9.22+), ``slice`` (cuDNN 9.22+)."""

    def concat(self, inputs, axis, *, inplace_index=None, output=True, output_data_type=None, name="concat"):
        """CONCAT of ``inputs`` along ``axis`` (all other dims equal); ``inplace_index`` names the input already in
        place inside the output buffer."""
        name = _build.as_name(name, "concat")
        if self._is_tensor(inputs) or isinstance(inputs, (str, bytes)) or not hasattr(inputs, "__iter__"):
            raise TypeError(f"inputs: concat takes a sequence of tensors, not {type(inputs).__name__}")
        inputs = [self._need_tensor(t, f"inputs[{i}]") for i, t in enumerate(inputs)]
        if not inputs:
            raise GraphError("inputs: concat needs at least one tensor")
        rank = len(inputs[0].shape)
        axis = as_int(axis, "axis", -rank, rank - 1) % rank
        dims = concat_output_dims([t.shape for t in inputs], axis)
        ref = next((t for t in inputs if not t.virtual), inputs[0])
        y = self._output(output, dims, ref, output_type(output_data_type, ref.data_type), f"{name}_y")
        op = self._operation("CONCAT", axis=axis, input_descs=inputs, output_desc=y)
        if inplace_index is not None:
            op.inplace_index = as_int(inplace_index, "inplace_index", 0, len(inputs) - 1)
        self.add(op)
        return y

    def reshape(self, x, dims, *, strides=None, mode=None, output=False, output_data_type=None, name="reshape"):
        """RESHAPE to ``dims`` (same element count; packed row-major unless ``strides`` — which is also how cuDNN 9
        graphs read a tensor transposed). The data type is x's for a real output, the intermediate type otherwise."""
        name = _build.as_name(name, "reshape")
        x = self._need_tensor(x, "x")
        dims = _build.as_dims(dims, "dims")
        if math.prod(dims) != math.prod(x.shape):
            raise GraphError(f"dims: reshape {list(x.shape)} -> {dims} changes the element count")
        strides = _build.as_strides(strides, len(dims)) if strides is not None else _build.packed_strides(dims)
        if output_data_type is None and output is True:
            output_data_type = x.data_type
        y = self._output(output, dims, None, output_data_type, f"{name}_y", strides=strides)
        op = self._operation("RESHAPE", xdesc=x, ydesc=y)
        if mode is not None:
            require("CUDNN_ATTR_OPERATION_RESHAPE_MODE", "reshape mode")
            op.mode = as_choice(ReshapeMode, mode, "mode", "CUDNN_RESHAPE_")
        self.add(op)
        return y

    def transpose(self, x, permutation, *, output=False, output_data_type=None, name="transpose"):
        """TRANSPOSE (cuDNN 9.22+): ``y.dims[i] = x.dims[p[i]]``; like cudnn-frontend a view (``y.strides[i] =
        x.strides[p[i]]``) unless a packed real output is given. cuDNN 9.28.1 runs it on Blackwell only (its
        memory-bound engines): for an H100/H200 read the tensor transposed through its strides instead."""
        name = _build.as_name(name, "transpose")
        require("CUDNN_BACKEND_OPERATION_TRANSPOSE_DESCRIPTOR", "Graph.transpose")
        x = self._need_tensor(x, "x")
        perm = _build.as_sizes(permutation, "permutation", 0, len(x.shape))
        dims = transpose_output_dims(x.shape, perm)
        strides = [x.strides[p] for p in perm]
        y = self._output(output, dims, None, as_data_type(output_type(output_data_type, x.data_type)), f"{name}_y",
                         strides=strides)
        self.add(self._operation("TRANSPOSE", xdesc=x, ydesc=y, permutation=perm))
        return y

    def slice(self, x, start, limit, strides=None, *, output=False, output_data_type=None, name="slice"):
        """SLICE (cuDNN 9.22+): ``x[start:limit:strides]`` per axis (limit exclusive); a view like cudnn-frontend
        (``y.strides[i] = x.strides[i] * strides[i]``). cuDNN 9.28.1 runs it fused into a matmul's input on an
        H100/H200 (alone on Blackwell only)."""
        name = _build.as_name(name, "slice")
        require("CUDNN_BACKEND_OPERATION_SLICE_DESCRIPTOR", "Graph.slice")
        x = self._need_tensor(x, "x")
        rank = len(x.shape)
        start = _build.as_sizes(start, "start", 0, rank)
        limit = _build.as_sizes(limit, "limit", 1, rank)
        steps = _build.as_sizes(strides, "strides", 1, rank) if strides is not None else [1] * rank
        dims = slice_output_dims(x.shape, start, limit, steps)
        y = self._output(output, dims, None, as_data_type(output_type(output_data_type, x.data_type)), f"{name}_y",
                         strides=[s * k for s, k in zip(x.strides, steps)])
        # the strides always (as cudnn-frontend): cuDNN 9.28.1 refuses a slice without them ("strides.empty()")
        self.add(self._operation("SLICE", xdesc=x, ydesc=y, start_indices=start, limit_indices=limit, strides=steps))
        return y


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


FAMILY = Family(
    "layout", ("CONCAT", "RESHAPE", "TRANSPOSE", "SLICE"),
    shape_rules=(concat_output_dims, slice_output_dims, transpose_output_dims),
    graph_methods=("concat", "reshape", "transpose", "slice"),
    graph_mixin=LayoutOps,
    reference_ops={"CONCAT": Concat, "RESHAPE": Reshape, "TRANSPOSE": Transpose, "SLICE": Slice},
    doc=__doc__)
