"""Block-scaled quantization: BLOCK_SCALE_QUANTIZE and BLOCK_SCALE_DEQUANTIZE (MX / NVFP4 formats).

``Graph`` methods (the mixin): Block-scale quantize and dequantize (MXFP8 and friends, cuDNN 9.7+).

Reference ops: BLOCK_SCALE_DEQUANTIZE: Y = X * scale of its block (block_size: the last axis, or the last two).
BLOCK_SCALE_QUANTIZE is not computed (the kernel's rounding and scale choice are undocumented).
"""
from __future__ import annotations

import numpy as np

from cudnn_backend._bindings.enums import DataType, TensorReordering
from cudnn_backend.core.families import _build
from cudnn_backend.core.families._build import as_choice, as_data_type, as_int, require
from cudnn_backend.core.families._family import Family
from cudnn_backend.core.families._reference import (
    Gather,
    Op,
    Unsupported,
    as_tuple,
    element_coords,
    needs_of,
    not_computed,
    ravel,
)
from cudnn_backend.errors import GraphError

__all__ = ["FAMILY", "QuantizeOps", "BlockScaleDequantize", "QUANTIZE_NOT_COMPUTED"]


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
        sc = self.tensor(sdims, _build.strides_like(sdims, x.strides), as_data_type(scale_data_type, "scale_data_type"),
                         name=f"{name}_scale", reordering_mode=reordering)
        self.add(self._operation("BLOCK_SCALE_QUANTIZE", xdesc=x, ydesc=y, scale_desc=sc,
                                 math_prec=self._compute(compute), block_size=block_size))
        return {"y": y, "scale": sc}

    def block_scale_dequantize(self, x, scale, *, block_size, output=False, output_data_type=None, compute=None,
                               name="dequantize"):
        """BLOCK_SCALE_DEQUANTIZE: x scaled by ``scale``, one per block; ``block_size`` is one int (the last
        axis) or one per matrix axis (A [1, 32], B [32, 1])."""
        require("CUDNN_BACKEND_OPERATION_BLOCK_SCALE_DEQUANTIZE_DESCRIPTOR", "block-scale dequantize")
        x, scale = self._need_tensor(x, "x"), self._need_tensor(scale, "scale")
        sizes = _build.as_sizes([block_size] if isinstance(block_size, int) else block_size, "block_size")
        if not 1 <= len(sizes) <= 2:
            raise ValueError("block_size: one int, or one per matrix axis")
        y = self._output(output, x.shape, x, output_data_type, f"{name}_y", strides=x.strides)
        self.add(self._operation("BLOCK_SCALE_DEQUANTIZE", xdesc=x, scale_desc=scale, ydesc=y,
                                 math_prec=self._compute(compute), block_size=sizes))
        return y


class BlockScaleDequantize(Op):
    def __init__(self, node, graph):
        super().__init__(node, graph)
        self.x, self.scale, self.y = self.need("xdesc"), self.need("scale_desc"), self.need("ydesc")
        self.refuse_set("neg_scale", why="its meaning is not documented in the header")
        xd, sd = self.dims(self.x), self.dims(self.scale)
        sizes = tuple(int(v) for v in as_tuple(node.attr("block_size")))
        if not 1 <= len(sizes) <= 2 or len(sd) != len(xd) or self.dims(self.y) != xd:
            raise Unsupported(f"block_size {list(sizes)}, x {list(xd)}, scale {list(sd)}: not blocks of one or "
                              "two trailing axes")
        self.block = (1,) * (len(xd) - len(sizes)) + sizes
        if any(s * b != x for s, b, x in zip(sd, self.block, xd)):
            raise Unsupported(f"scale {list(sd)} is not x {list(xd)} divided by blocks {list(self.block)}")

    def dense(self, values):
        scale = values[self.scale]
        for axis, b in enumerate(self.block):
            if b > 1:
                scale = np.repeat(scale, b, axis=axis)
        return {self.y: values[self.x] * scale}

    def pull(self, wanted, cheap):
        if self.all_whole(wanted):
            return super().pull(wanted, cheap)
        coords = element_coords(self.dims(self.y), wanted[self.y])
        gx = Gather(self.x, self.dims(self.x), ravel(coords, self.dims(self.x)), cheap(self.x))
        gs = Gather(self.scale, self.dims(self.scale), ravel(coords // np.array(self.block), self.dims(self.scale)),
                    cheap(self.scale))
        return needs_of(gx, gs), lambda values: {self.y: gx(values) * gs(values)}


#: why the reference evaluator does not compute its outputs
QUANTIZE_NOT_COMPUTED = ("the fp8 values and E8M0 scales depend on the rounding and scale choice of the kernel, "
                         "which the header does not document")

FAMILY = Family(
    "quantize", ("BLOCK_SCALE_QUANTIZE", "BLOCK_SCALE_DEQUANTIZE"),
    graph_methods=("block_scale_quantize", "block_scale_dequantize"),
    graph_mixin=QuantizeOps,
    reference_ops={"BLOCK_SCALE_DEQUANTIZE": BlockScaleDequantize,
                   "BLOCK_SCALE_QUANTIZE": not_computed(QUANTIZE_NOT_COMPUTED)},
    doc=__doc__)
