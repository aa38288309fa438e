"""Band matrices: expand a band-stored matrix to full, contract a full matrix to its band (cuDNN 9.10+); the
diagonal band mask of attention scores (causal and sliding-window attention, cuDNN 9.20+)."""
from __future__ import annotations

import numbers

from cudnn_backend._bindings.enums import DataType
from cudnn_backend.core._descriptor import as_int
from cudnn_backend.errors import GraphError
from cudnn_backend.graph import shapes
from cudnn_backend.graph._util import require
from cudnn_backend.graph.pointwise import pointwise_mode
from cudnn_backend.typed import OperationContractBandMatrix, OperationDiagonalBandMask, OperationExpandBandMatrix

__all__ = ["BandOps"]


class BandOps:
    """``expand_band_matrix``, ``contract_band_matrix``, ``diagonal_band_mask``."""

    def expand_band_matrix(self, x, output_dims, *, lower, upper, axis, pad_value=None, output=False,
                           output_data_type=None, name="expand_band"):
        """EXPAND_BAND_MATRIX: x stores the band (its ``axis`` dim is lower + upper + 1) of a full matrix of
        ``output_dims``; ``pad_value`` fills outside the band."""
        require("CUDNN_BACKEND_OPERATION_EXPAND_BAND_MATRIX_DESCRIPTOR", "expand band matrix")
        x = self._need_tensor(x, "x")
        dims = shapes.as_dims(output_dims, "output_dims")
        lower, upper = as_int(lower, "lower", 0), as_int(upper, "upper", 0)
        axis = as_int(axis, "axis", 0, len(x.shape) - 1)
        if x.shape[axis] != lower + upper + 1:
            raise GraphError(f"x: its axis {axis} dim {x.shape[axis]} is not lower + upper + 1 = {lower + upper + 1}")
        y = self._output(output, dims, x, output_data_type, name)
        op = OperationExpandBandMatrix(xdesc=x, ydesc=y, lower_bandwidth=lower, upper_bandwidth=upper, axis=axis)
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
        dims[axis] = lower + upper + 1
        y = self._output(output, dims, x, output_data_type, name)
        op = OperationContractBandMatrix(matrix_xdesc=x, matrix_ydesc=y, matrix_lower_bandwidth=lower,
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
        require("CUDNN_BACKEND_OPERATION_DIAGONAL_BAND_MASK_DESCRIPTOR", "Graph.diagonal_band_mask")
        x = self._need_tensor(x, "x")
        if left_bound is not None and shift_right_bound is not None:
            raise GraphError("left_bound and shift_right_bound: one or neither (cudnn-frontend's rule)")
        if (seq_len_q is None) != (seq_len_kv is None):
            raise GraphError("seq_len_q and seq_len_kv: both or neither (cuDNN 9.28.1's rule)")
        mode = pointwise_mode(comparison)
        shapes.band_mask_dims(x.shape)
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
                shapes.band_mask_dims(x.shape, t.shape, arg)
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
        op = OperationDiagonalBandMask(xdesc=x, bdesc=fill, ydesc=y, comparison_mode=mode, **given)
        self.add(op)
        return y
