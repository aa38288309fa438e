"""Reductions: ADD, MUL, MIN, MAX, AMAX, AVG, NORM1, NORM2, MUL_NO_ZEROS over chosen axes."""
from __future__ import annotations

from cudnn_backend._bindings.enums import ReduceTensorOp
from cudnn_backend.core.families.reduction import output_divides
from cudnn_backend.errors import GraphError
from cudnn_backend.graph import shapes
from cudnn_backend.graph._util import as_choice
from cudnn_backend.typed import OperationReduction, Reduction, TensorBase

__all__ = ["ReductionOps"]


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
        if isinstance(output, TensorBase):
            dims = list(output.shape)
            if axes is not None and dims != shapes.reduction_output_dims(x.shape, axes):
                raise GraphError(f"output: {output.describe()} is not x {list(x.shape)} reduced over axes {axes}")
            if not output_divides(x.shape, dims):
                raise GraphError(f"output: {output.describe()} is no reduction of x {list(x.shape)} (same rank, each "
                                 "dim dividing x's)")
        else:
            dims = shapes.reduction_output_dims(x.shape, axes)
        desc = Reduction(operator=op, comp_type=self._compute(compute))
        if deterministic is not None:
            desc.is_deterministic = bool(deterministic)
        desc.finalize()
        y = self._output(output, dims, x, output_data_type, name)
        self.add(OperationReduction(xdesc=x, ydesc=y, desc=desc))
        return y
