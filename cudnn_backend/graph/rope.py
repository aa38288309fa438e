"""Rotary position embeddings, forward and backward: the dedicated ROPE_FWD (cuDNN 9.24+) and ROPE_BWD (9.25+)
operations. On cuDNN 9.28.1 no engine runs them for an H100 or H200 (cuDNN: "only Blackwell is supported"), alone
or fused; they finalize offline on every release that has them."""
from __future__ import annotations

from cudnn_backend.core._descriptor import as_int
from cudnn_backend.graph import shapes
from cudnn_backend.graph._util import require
from cudnn_backend.typed import OperationRopeBwd, OperationRopeFwd

__all__ = ["RopeOps"]


class RopeOps:
    """``rope_fwd``, ``rope_bwd``."""

    def rope_fwd(self, x, freqs, *, rope_dim=None, output_scale=None, output=True, output_data_type=None, name="rope"):
        """ROPE_FWD (cuDNN 9.24+): rotate ``rope_dim`` (even; default: all D) of the D slots of X [B, H, S, D] by
        the angles ``freqs`` (fp32 [S, 1, 1, >= rope_dim]); ``output_scale`` scales the result. Y is shaped and laid
        out like X."""
        require("CUDNN_BACKEND_OPERATION_ROPE_FWD_DESCRIPTOR", "Graph.rope_fwd")
        x, freqs = self._need_tensor(x, "x"), self._need_tensor(freqs, "freqs")
        if rope_dim is not None:
            rope_dim = as_int(rope_dim, "rope_dim", 1, x.shape[-1])
        shapes.rope_dims(x.shape, freqs.shape, rope_dim)
        y = self._output(output, x.shape, x, output_data_type or x.data_type, f"{name}_y", strides=x.strides)
        op = OperationRopeFwd(xdesc=x, ydesc=y, freqsdesc=freqs)
        if rope_dim is not None:
            op.rope_dim = rope_dim
        if output_scale is not None:
            op.output_scale = output_scale
        self.add(op)
        return y

    def rope_bwd(self, dy, freqs, *, rope_dim=None, output_scale=None, output=True, output_data_type=None,
                 name="rope_bwd"):
        """ROPE_BWD (cuDNN 9.25+): dX from dY [B, H, S, D] with the same ``freqs`` and ``rope_dim`` as the forward."""
        require("CUDNN_BACKEND_OPERATION_ROPE_BWD_DESCRIPTOR", "Graph.rope_bwd")
        dy, freqs = self._need_tensor(dy, "dy"), self._need_tensor(freqs, "freqs")
        if rope_dim is not None:
            rope_dim = as_int(rope_dim, "rope_dim", 1, dy.shape[-1])
        shapes.rope_dims(dy.shape, freqs.shape, rope_dim)
        dx = self._output(output, dy.shape, dy, output_data_type or dy.data_type, f"{name}_dx", strides=dy.strides)
        op = OperationRopeBwd(dydesc=dy, dxdesc=dx, freqsdesc=freqs)
        if rope_dim is not None:
            op.rope_dim = rope_dim
        if output_scale is not None:
            op.output_scale = output_scale
        self.add(op)
        return dx
