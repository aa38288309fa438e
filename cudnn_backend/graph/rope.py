"""Rotary position embeddings, forward and backward (cuDNN 9.24+ / 9.25+)."""
from __future__ import annotations

from cudnn_backend.core._descriptor import as_int
from cudnn_backend.graph._util import require
from cudnn_backend.typed import OperationRopeBwd, OperationRopeFwd

__all__ = ["RopeOps"]


class RopeOps:
    """``rope_fwd``, ``rope_bwd``."""

    def rope_fwd(self, x, freqs, *, rope_dim=None, output_scale=None, output=True, output_data_type=None, name="rope"):
        """ROPE_FWD: rotate the last ``rope_dim`` (default: all) slots of X [B, H, S, D] by the angles ``freqs``
        (fp32 [S, 1, 1, D]); ``output_scale`` scales the result."""
        require("CUDNN_BACKEND_OPERATION_ROPE_FWD_DESCRIPTOR", "RoPE")
        x, freqs = self._need_tensor(x, "x"), self._need_tensor(freqs, "freqs")
        y = self._output(output, x.shape, x, output_data_type or x.data_type, f"{name}_y", strides=x.strides)
        op = OperationRopeFwd(xdesc=x, ydesc=y, freqsdesc=freqs)
        if rope_dim is not None:
            op.rope_dim = as_int(rope_dim, "rope_dim", 1, x.shape[-1])
        if output_scale is not None:
            op.output_scale = output_scale
        self.add(op)
        return y

    def rope_bwd(self, dy, freqs, *, rope_dim=None, output_scale=None, output=True, output_data_type=None,
                 name="rope_bwd"):
        """ROPE_BWD: dX from dY with the same ``freqs``."""
        require("CUDNN_BACKEND_OPERATION_ROPE_BWD_DESCRIPTOR", "RoPE backward")
        dy, freqs = self._need_tensor(dy, "dy"), self._need_tensor(freqs, "freqs")
        dx = self._output(output, dy.shape, dy, output_data_type or dy.data_type, f"{name}_dx", strides=dy.strides)
        op = OperationRopeBwd(dydesc=dy, dxdesc=dx, freqsdesc=freqs)
        if rope_dim is not None:
            op.rope_dim = as_int(rope_dim, "rope_dim", 1, dy.shape[-1])
        if output_scale is not None:
            op.output_scale = output_scale
        self.add(op)
        return dx
