"""Mixture-of-experts grouped matrix multiplication, forward (cuDNN 9.15+) and weight gradient (9.22+)."""
from __future__ import annotations

from cudnn_backend._bindings.enums import MoeGroupedMatmulMode

from cudnn_backend.core._descriptor import as_int
from cudnn_backend.errors import GraphError
from cudnn_backend.graph import shapes
from cudnn_backend.graph._util import as_choice, require
from cudnn_backend.typed import OperationMoeGroupedMatmul, OperationMoeGroupedMatmulBwd

__all__ = ["MoeOps"]


class MoeOps:
    """``moe_grouped_matmul``, ``moe_grouped_matmul_bwd``."""

    def moe_grouped_matmul(self, tokens, weights, first_token_offset, *, mode="none", token_index=None,
                           token_ks=None, top_k=None, output=True, output_data_type=None, compute=None, name="moe"):
        """MOE_GROUPED_MATMUL: tokens [1, T, K] grouped by expert (``first_token_offset`` [E,1,1] INT32) times
        weights [E, K, N] (column-major inner) -> [1, T, N] (T = token_index's tokens when gathering)."""
        require("CUDNN_BACKEND_OPERATION_MOE_GROUPED_MATMUL_DESCRIPTOR", "MoE grouped matmul")
        tokens, weights = self._need_tensor(tokens, "tokens"), self._need_tensor(weights, "weights")
        offsets = self._need_tensor(first_token_offset, "first_token_offset")
        mode = as_choice(MoeGroupedMatmulMode, mode, "mode", "CUDNN_MOE_GROUPED_MATMUL_MODE_")
        if len(tokens.shape) != 3 or len(weights.shape) != 3 or tokens.shape[2] != weights.shape[1]:
            raise GraphError(f"tokens {list(tokens.shape)} [1, T, K] and weights {list(weights.shape)} [E, K, N] "
                             "do not match")
        t = token_index.shape[1] if token_index is not None else tokens.shape[1]
        dims = [1, t, weights.shape[2]]
        y = self._output(output, dims, None, output_data_type or tokens.data_type, f"{name}_out")
        op = OperationMoeGroupedMatmul(mode=mode, math_prec=self._compute(compute), token_desc=tokens,
                                       weight_desc=weights, first_token_offset_desc=offsets, output_desc=y)
        if token_index is not None:
            op.token_index_desc = self._need_tensor(token_index, "token_index")
        if token_ks is not None:
            op.token_ks_desc = self._need_tensor(token_ks, "token_ks")
        if top_k is not None:
            op.top_k = as_int(top_k, "top_k", 1)
        self.add(op)
        return y

    def moe_grouped_matmul_bwd(self, tokens, doutput, first_token_offset, *, num_experts, output=True,
                               output_data_type=None, compute=None, name="moe_bwd"):
        """MOE_GROUPED_MATMUL_BWD: dweight [E, K, N] (column-major inner) from tokens [1,T,K] and dOutput [1,T,N]."""
        require("CUDNN_BACKEND_OPERATION_MOE_GROUPED_MATMUL_BWD_DESCRIPTOR", "MoE grouped matmul backward")
        tokens, dout = self._need_tensor(tokens, "tokens"), self._need_tensor(doutput, "doutput")
        offsets = self._need_tensor(first_token_offset, "first_token_offset")
        e = shapes.as_sizes([num_experts], "num_experts")[0]
        k, n = tokens.shape[2], dout.shape[2]
        dw = self._output(output, [e, k, n], None, output_data_type or tokens.data_type, f"{name}_dweight",
                          strides=[k * n, 1, k])
        self.add(OperationMoeGroupedMatmulBwd(math_prec=self._compute(compute), token_desc=tokens, doutput_desc=dout,
                                              first_token_offset_desc=offsets, dweight_desc=dw))
        return dw


