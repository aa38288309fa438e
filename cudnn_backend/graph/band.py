"""Band matrices: expand a band-stored matrix to full, contract a full matrix to its band (cuDNN 9.10+)."""
from __future__ import annotations

from cudnn_backend.core._descriptor import as_int
from cudnn_backend.errors import GraphError
from cudnn_backend.graph import shapes
from cudnn_backend.graph._util import require
from cudnn_backend.typed import OperationContractBandMatrix, OperationExpandBandMatrix

__all__ = ["BandOps"]


class BandOps:
    """``expand_band_matrix``, ``contract_band_matrix``."""

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
