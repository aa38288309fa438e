"""Band matrices: EXPAND_BAND_MATRIX, CONTRACT_BAND_MATRIX and DIAGONAL_BAND_MASK (attention masks).

``Graph`` methods (the mixin): Band matrices: expand a band-stored matrix to full, contract a full matrix to its band
(cuDNN 9.10+); the diagonal band mask of attention scores (causal and sliding-window attention, cuDNN 9.20+).

Reference ops: DIAGONAL_BAND_MASK: Y = X where the comparison of the (shifted) row and column index holds, else the
fill B — with a right bound (no left bound): CMP(row + s_kv - s_q + shift, col); with a left bound: CMP(col + left -
s_kv + s_q, row), each of s_kv, s_q, shift only when its tensor is set (cudnn-frontend's composite of this mask).
EXPAND_BAND_MATRIX and CONTRACT_BAND_MATRIX are not computed (their storage layout is undocumented)."""
from __future__ import annotations

import math
import numbers

import numpy as np

from cudnn_backend._bindings.enums import DataType, PointwiseMode
from cudnn_backend.core.families import _build
from cudnn_backend.core.families._build import as_int, require
from cudnn_backend.core.families._checks import fail
from cudnn_backend.core.families._family import Family
from cudnn_backend.core.families._reference import Op, Unsupported, full, grid, not_computed, scalar
from cudnn_backend.core.families.pointwise import FUNCTIONS, pointwise_mode
from cudnn_backend.errors import GraphError

__all__ = ["FAMILY", "band_mask_dims", "BandOps", "DiagonalBandMask"]


def band_mask_dims(x_dims, bound_dims=None, what="left_bound"):
    """Dims of a DIAGONAL_BAND_MASK's output (x's: attention scores [b, h, s_q, s_kv]); a bound or sequence-length
    tensor must be [b, 1, 1, 1] or [1, 1, 1, 1] (cuDNN 9.28.1's rule, checked first)."""
    if len(x_dims) != 4:
        fail(f"diagonal band mask: x is {list(x_dims)}; it masks attention scores [b, h, s_q, s_kv] (4-d)")
    if bound_dims is not None and (len(bound_dims) != 4 or list(bound_dims[1:]) != [1, 1, 1]
                                   or bound_dims[0] not in (1, x_dims[0])):
        fail(f"diagonal band mask: {what} is {list(bound_dims)}; it must be [b={x_dims[0]}, 1, 1, 1] or [1, 1, 1, 1]")
    return list(x_dims)


def _check_bandwidths(lower, upper, dims, axis, matrix):
    """A band of at most dims[axis] - 1 diagonals on either side: more would be diagonals past the matrix."""
    for what, width in (("lower", lower), ("upper", upper)):
        if width >= dims[axis]:
            raise GraphError(f"{what}: {width} diagonals, but {matrix} {list(dims)} has {dims[axis]} along axis "
                             f"{axis}; a bandwidth is at most {dims[axis] - 1}")


class BandOps:
    """``expand_band_matrix``, ``contract_band_matrix``, ``diagonal_band_mask``."""

    def expand_band_matrix(self, x, output_dims, *, lower, upper, axis, pad_value=None, output=False,
                           output_data_type=None, name="expand_band"):
        """EXPAND_BAND_MATRIX: x stores the band (its ``axis`` dim is lower + upper + 1) of a full matrix of
        ``output_dims``; ``pad_value`` fills outside the band."""
        require("CUDNN_BACKEND_OPERATION_EXPAND_BAND_MATRIX_DESCRIPTOR", "expand band matrix")
        x = self._need_tensor(x, "x")
        dims = _build.as_dims(output_dims, "output_dims")
        lower, upper = as_int(lower, "lower", 0), as_int(upper, "upper", 0)
        axis = as_int(axis, "axis", 0, len(x.shape) - 1)
        if x.shape[axis] != lower + upper + 1:
            raise GraphError(f"x: its axis {axis} dim {x.shape[axis]} is not lower + upper + 1 = {lower + upper + 1}")
        if len(dims) == len(x.shape):
            _check_bandwidths(lower, upper, dims, axis, "output_dims")
        y = self._output(output, dims, x, output_data_type, name)
        op = self._operation("EXPAND_BAND_MATRIX", xdesc=x, ydesc=y, lower_bandwidth=lower, upper_bandwidth=upper,
                             axis=axis)
        if pad_value is not None:
            op.pad_value = pad_value
        self.add(op)
        return y

    def contract_band_matrix(self, x, *, lower, upper, axis, pad_value=None, max_token_value=None, output=False,
                             output_data_type=None, name="contract_band"):
        """CONTRACT_BAND_MATRIX: the band (lower + upper + 1 along ``axis``) of the full matrix x."""
        require("CUDNN_BACKEND_OPERATION_CONTRACT_BAND_MATRIX_DESCRIPTOR", "contract band matrix")
        x = self._need_tensor(x, "x")
        lower, upper = as_int(lower, "lower", 0), as_int(upper, "upper", 0)
        axis = as_int(axis, "axis", 0, len(x.shape) - 1)
        dims = list(x.shape)
        _check_bandwidths(lower, upper, dims, axis, "x")
        dims[axis] = lower + upper + 1
        y = self._output(output, dims, x, output_data_type, name)
        op = self._operation("CONTRACT_BAND_MATRIX", matrix_xdesc=x, matrix_ydesc=y, matrix_lower_bandwidth=lower,
                             matrix_upper_bandwidth=upper, matrix_axis=axis)
        if pad_value is not None:
            op.matrix_pad_value = pad_value
        if max_token_value is not None:
            op.max_token_value = as_int(max_token_value, "max_token_value")
        self.add(op)
        return y

    def diagonal_band_mask(self, x, fill=-3.4e38, *, comparison="CMP_GE", left_bound=None, shift_right_bound=None,
                           seq_len_q=None, seq_len_kv=None, output=False, output_data_type=None, name="band_mask"):
        """DIAGONAL_BAND_MASK (cuDNN 9.20+) of attention scores X [b, h, s_q, s_kv]: Y = X where ``comparison``
        (a pointwise CMP mode) holds between the row and the column index, else ``fill`` (a number, or a by-value
        tensor of ones). cudnn-frontend's rule: without ``left_bound`` the test is ``row [+ s_kv - s_q]
        [+ shift_right_bound] CMP col`` (CMP_GE: causal), with it ``col + left_bound [- s_kv + s_q] CMP row``
        (sliding window); the sequence-length terms come with ``seq_len_q``/``seq_len_kv`` (INT32 [b, 1, 1, 1]).
        Bounds are ints (by-value INT32 scalars) or tensors [b or 1, 1, 1, 1]. cuDNN 9.28.1 runs it fused into
        attention (before the softmax) on an H100/H200."""
        name = _build.as_name(name, "band_mask")
        require("CUDNN_BACKEND_OPERATION_DIAGONAL_BAND_MASK_DESCRIPTOR", "Graph.diagonal_band_mask")
        x = self._need_tensor(x, "x")
        if left_bound is not None and shift_right_bound is not None:
            raise GraphError("left_bound and shift_right_bound: one or neither (cudnn-frontend's rule)")
        if (seq_len_q is None) != (seq_len_kv is None):
            raise GraphError("seq_len_q and seq_len_kv: both or neither (cuDNN 9.28.1's rule)")
        mode = pointwise_mode(comparison, "comparison")
        if not mode.name.startswith("CUDNN_POINTWISE_CMP_"):
            raise GraphError(f"comparison: {mode.name.removeprefix('CUDNN_POINTWISE_')} is no comparison (CMP_GE, "
                             "CMP_GT, CMP_LE, CMP_LT, CMP_EQ, CMP_NEQ)")
        band_mask_dims(x.shape)
        given = {}
        for arg, keyword, value in (("left_bound", "left_bound_desc", left_bound),
                                    ("shift_right_bound", "shift_right_bound_desc", shift_right_bound),
                                    ("seq_len_q", "seq_len_qdesc", seq_len_q),
                                    ("seq_len_kv", "seq_len_kvdesc", seq_len_kv)):
            if value is None:
                continue
            if isinstance(value, numbers.Integral) and not isinstance(value, bool):
                given[keyword] = as_int(value, arg, -(1 << 31), (1 << 31) - 1)
            else:
                t = given[keyword] = self._need_tensor(value, arg)
                band_mask_dims(x.shape, t.shape, arg)
        if isinstance(fill, numbers.Real) and not isinstance(fill, bool):
            fill = self.scalar(float(fill), DataType.CUDNN_DATA_FLOAT, name=f"{name}_fill")
        else:
            fill = self._need_tensor(fill, "fill")
            if any(d != 1 for d in fill.shape):
                raise GraphError(f"fill: {fill.describe()} must be one value (all dims 1): cuDNN takes a scalar")
        for keyword, value in given.items():
            if isinstance(value, int):
                given[keyword] = self.scalar(value, DataType.CUDNN_DATA_INT32, name=f"{name}_{keyword[:-5]}")
        y = self._output(output, x.shape, x, output_data_type, name, strides=x.strides)
        op = self._operation("DIAGONAL_BAND_MASK", xdesc=x, bdesc=fill, ydesc=y, comparison_mode=mode, **given)
        self.add(op)
        return y


_CMP = {int(m) for m in PointwiseMode if m.name.startswith("CUDNN_POINTWISE_CMP_")}


class DiagonalBandMask(Op):
    def __init__(self, node, graph):
        super().__init__(node, graph)
        self.x, self.fill, self.y = self.need("xdesc"), self.need("bdesc"), self.need("ydesc")
        self.refuse_set("cu_seq_len_qdesc", "cu_seq_len_kvdesc", why="ragged sequences are not modelled")
        mode = node.attr("comparison_mode")
        if mode is None or int(mode) not in _CMP:
            raise Unsupported(f"comparison mode {mode!r} is not a CMP_ pointwise mode")
        self.compare = FUNCTIONS[PointwiseMode(int(mode))][1]
        self.q_len, self.kv_len = node.uid("seq_len_qdesc"), node.uid("seq_len_kvdesc")
        self.left, self.shift = node.uid("left_bound_desc"), node.uid("shift_right_bound_desc")
        if self.left is not None and self.shift is not None:
            raise Unsupported("both a left bound and a shifted right bound")
        xd = self.dims(self.x)
        if len(xd) != 4 or self.dims(self.y) != xd:
            raise Unsupported(f"x {list(xd)} / y {list(self.dims(self.y))} are not one [b, h, s_q, s_kv]")
        if math.prod(self.dims(self.fill)) != 1:
            raise Unsupported("the fill B is not one value")
        for u in (self.q_len, self.kv_len):
            if u is not None and math.prod(self.dims(u)) != xd[0]:
                raise Unsupported(f"{self.info(u).name} has {math.prod(self.dims(u))} values for batch {xd[0]}")

    def _mask(self, x, coords, values):
        b, _, row, col = coords

        def per_batch(u):
            return np.asarray(values[u]).reshape(-1)[b] if u is not None else 0

        if self.left is None:
            r = row + per_batch(self.kv_len) - per_batch(self.q_len)
            if self.shift is not None:
                r = r + scalar(values, self.shift)
            keep = self.compare(r, col, None, None)
        else:
            c = col + scalar(values, self.left) - per_batch(self.kv_len) + per_batch(self.q_len)
            keep = self.compare(c, row, None, None)
        return np.where(keep != 0, x, scalar(values, self.fill))

    def dense(self, values):
        xd = self.dims(self.x)
        return {self.y: self._mask(values[self.x], np.ix_(*[np.arange(d) for d in xd]), values)}

    def pull(self, wanted, cheap):
        if self.all_whole(wanted):
            return super().pull(wanted, cheap)
        want = wanted[self.y]
        needs = {u: full(self.dims(u)) for u in self.inputs if u != self.x}
        needs[self.x] = want
        coords = grid(self.dims(self.y), want)
        return needs, lambda values: {self.y: self._mask(values[self.x], coords, values)}


#: why the reference evaluator does not compute its outputs
_BAND_LAYOUT_UNDOCUMENTED = "the band storage layout is not documented in the header"

FAMILY = Family(
    "band", ("EXPAND_BAND_MATRIX", "CONTRACT_BAND_MATRIX", "DIAGONAL_BAND_MASK"),
    shape_rules=(band_mask_dims,),
    graph_methods=("expand_band_matrix", "contract_band_matrix", "diagonal_band_mask"),
    graph_mixin=BandOps,
    reference_ops={"DIAGONAL_BAND_MASK": DiagonalBandMask,
                   "EXPAND_BAND_MATRIX": not_computed(_BAND_LAYOUT_UNDOCUMENTED),
                   "CONTRACT_BAND_MATRIX": not_computed(_BAND_LAYOUT_UNDOCUMENTED)},
    doc=__doc__)
