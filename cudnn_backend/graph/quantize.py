"""Block-scale quantize and dequantize (MXFP8 and friends, cuDNN 9.7+)."""
from __future__ import annotations

from cudnn_backend._bindings.enums import DataType, TensorReordering
from cudnn_backend.core._descriptor import as_int
from cudnn_backend.errors import GraphError
from cudnn_backend.graph import shapes
from cudnn_backend.graph._util import as_choice, as_data_type, require
from cudnn_backend.typed import OperationBlockScaleDequantize, OperationBlockScaleQuantize

__all__ = ["QuantizeOps"]


class QuantizeOps:
    """``block_scale_quantize``, ``block_scale_dequantize``."""

    def block_scale_quantize(self, x, *, block_size=32, y_data_type=DataType.CUDNN_DATA_FP8_E4M3,
                             scale_data_type=DataType.CUDNN_DATA_FP8_E8M0, axis=-1, reordering=None, compute=None,
                             name="quantize"):
        """BLOCK_SCALE_QUANTIZE: ``{"y", "scale"}``; one scale per ``block_size`` elements along ``axis`` (MXFP8
        by default: E4M3 values, E8M0 scales in the F8_128x4 layout cuDNN requires for 3-d tensors)."""
        require("CUDNN_BACKEND_OPERATION_BLOCK_SCALE_QUANTIZE_DESCRIPTOR", "block-scale quantize")
        x = self._need_tensor(x, "x")
        block_size = as_int(block_size, "block_size", 1)
        rank = len(x.shape)
        axis = as_int(axis, "axis", -rank, rank - 1) % rank
        if x.shape[axis] % block_size:
            raise GraphError(f"block_size: axis {axis} of x {list(x.shape)} is no multiple of {block_size}")
        y = self.tensor(x.shape, x.strides, as_data_type(y_data_type, "y_data_type"), name=f"{name}_y")
        sdims = list(x.shape)
        sdims[axis] //= block_size
        reordering = TensorReordering.CUDNN_TENSOR_REORDERING_F8_128x4 if reordering is None else \
            as_choice(TensorReordering, reordering, "reordering", "CUDNN_TENSOR_REORDERING_")
        sc = self.tensor(sdims, shapes.strides_like(sdims, x.strides), as_data_type(scale_data_type, "scale_data_type"),
                         name=f"{name}_scale", reordering_mode=reordering)
        self.add(OperationBlockScaleQuantize(xdesc=x, ydesc=y, scale_desc=sc, math_prec=self._compute(compute),
                                             block_size=block_size))
        return {"y": y, "scale": sc}

    def block_scale_dequantize(self, x, scale, *, block_size, output=False, output_data_type=None, compute=None,
                               name="dequantize"):
        """BLOCK_SCALE_DEQUANTIZE: x scaled by ``scale``, one per block; ``block_size`` is one int (the last
        axis) or one per matrix axis (A [1, 32], B [32, 1])."""
        require("CUDNN_BACKEND_OPERATION_BLOCK_SCALE_DEQUANTIZE_DESCRIPTOR", "block-scale dequantize")
        x, scale = self._need_tensor(x, "x"), self._need_tensor(scale, "scale")
        sizes = shapes.as_sizes([block_size] if isinstance(block_size, int) else block_size, "block_size")
        if not 1 <= len(sizes) <= 2:
            raise ValueError("block_size: one int, or one per matrix axis")
        y = self._output(output, x.shape, x, output_data_type, f"{name}_y", strides=x.strides)
        self.add(OperationBlockScaleDequantize(xdesc=x, scale_desc=scale, ydesc=y, math_prec=self._compute(compute),
                                               block_size=sizes))
        return y
