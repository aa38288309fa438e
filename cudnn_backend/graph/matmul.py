"""Matrix multiplication (batched, with optional per-batch M/N/K overrides)."""
from __future__ import annotations

from cudnn_backend.graph import shapes
from cudnn_backend.typed import Matmul, OperationMatmul

__all__ = ["MatmulOps"]


class MatmulOps:
    """``matmul(a, b)``."""

    def matmul(self, a, b, *, output=False, output_data_type=None, compute=None, name=None, padding_value=None,
               m_override=None, n_override=None, k_override=None):
        """C = A @ B: A [..., M, K], B [..., K, N] (equal ranks; batch dims equal or 1), C [..., M, N] row-major.
        ``m/n/k_override`` are INT32 [B,1,1,1] tensors of per-batch sizes (attention with padding);
        ``padding_value`` fills what lies beyond them."""
        a, b = self._need_tensor(a, "a"), self._need_tensor(b, "b")
        dims = shapes.matmul_output_dims(a.shape, b.shape)
        desc = Matmul(comp_type=self._compute(compute))
        if padding_value is not None:
            desc.padding_value = padding_value
        desc.finalize()
        c = self._output(output, dims, None, output_data_type, name)
        op = OperationMatmul(adesc=a, bdesc=b, cdesc=c, desc=desc)
        for keyword, t in (("gemm_m_override_desc", m_override), ("gemm_n_override_desc", n_override),
                           ("gemm_k_override_desc", k_override)):
            if t is not None:
                setattr(op, keyword, self._need_tensor(t, keyword))
        self.add(op)
        return c
