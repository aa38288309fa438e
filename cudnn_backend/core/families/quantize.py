"""Block-scaled quantization: BLOCK_SCALE_QUANTIZE and BLOCK_SCALE_DEQUANTIZE (MX / NVFP4 formats).

``Graph`` methods (the mixin): Block-scale quantize and dequantize (MXFP8 and friends, cuDNN 9.7+).

Scales in the F8_128x4 layout (Blackwell's swizzle: tiles of 128 x 4 scales) come in whole tiles: ``f8_128x4_scale``
is the shape cuDNN reads and writes, for the quantize method's scale tensor and the dequantize finalize check alike
(cuDNN 9.19 takes an unpadded one for dequantize, smaller than what it reads).

Reference ops: BLOCK_SCALE_DEQUANTIZE: Y = X * scale of its block (block_size: the last axis, or the last two).
BLOCK_SCALE_QUANTIZE is not computed (the kernel's rounding and scale choice are undocumented).
"""
from __future__ import annotations

import numbers

import numpy as np

from cudnn_backend._bindings.enums import AttributeName, DataType, TensorReordering
from cudnn_backend.core.families import _build
from cudnn_backend.core.families._build import as_choice, as_data_type, as_int, require
from cudnn_backend.core.families._checks import dims, name, op_name
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

__all__ = ["FAMILY", "QuantizeOps", "BlockScaleDequantize", "QUANTIZE_NOT_COMPUTED", "f8_128x4_scale",
           "check_block_scale_dequantize", "plain_scale_dims"]

A = AttributeName
_F8_128X4 = TensorReordering.CUDNN_TENSOR_REORDERING_F8_128x4
_TILE_ROWS, _TILE_BLOCKS = 128, 4  # an F8_128x4 tile: 128 rows (or columns) of 4 scales each


def _round_up(value, multiple):
    return -(-value // multiple) * multiple


def f8_128x4_scale(x_dims, block_axis, block_size):
    """(dims, strides) of the scale tensor of a 3-d x [batch, rows, columns] scaled in blocks of ``block_size`` along
    ``block_axis`` (1 or 2), in the F8_128x4 layout: that axis's block count padded to a multiple of 4 and the other
    matrix axis to a multiple of 128 (whole tiles), packed with the blocked axis innermost. cuDNN requires exactly
    these (9.19 and 9.28 refuse any other for quantize; 9.28 for dequantize)."""
    other = 3 - block_axis
    sdims = [x_dims[0], 0, 0]
    sdims[block_axis] = _round_up(-(-x_dims[block_axis] // block_size), _TILE_BLOCKS)
    sdims[other] = _round_up(x_dims[other], _TILE_ROWS)
    return sdims, _build.packed_strides(sdims, [0, other, block_axis])


def check_block_scale_dequantize(op):
    """A scale of one per block of x (``plain_scale_dims``), or, in F8_128x4, of a 3-d x, ``f8_128x4_scale``'s
    shape (either's batch may be 1: broadcast)."""
    v = op.value_of
    x = v(A.CUDNN_ATTR_OPERATION_BLOCK_SCALE_DEQUANTIZE_XDESC)
    scale = v(A.CUDNN_ATTR_OPERATION_BLOCK_SCALE_DEQUANTIZE_SCALE_DESC)
    if scale is None:
        return
    xd, sd = dims(x), dims(scale)
    sizes = tuple(int(b) for b in as_tuple(v(A.CUDNN_ATTR_OPERATION_BLOCK_SCALE_DEQUANTIZE_BLOCK_SIZE)))
    if xd is None or sd is None or not 1 <= len(sizes) <= min(2, len(xd)):
        return
    block = (1,) * (len(xd) - len(sizes)) + sizes
    if scale.value_of(A.CUDNN_ATTR_TENSOR_REORDERING_MODE) != _F8_128X4:
        _check_plain_scale(op, scale, xd, sd, block)
        return
    if len(xd) != 3 or len(sd) != 3:
        return
    axes = [a for a in (1, 2) if block[a] > 1]
    if len(axes) != 1:
        return  # no single blocked matrix axis: cuDNN's own checks decide
    expected, strides = f8_128x4_scale(xd, axes[0], block[axes[0]])
    st = tuple(as_tuple(scale.value_of(A.CUDNN_ATTR_TENSOR_STRIDES)))
    if sd[0] in (1, xd[0]) and list(sd[1:]) == expected[1:] and (not st or list(st) == strides):
        return
    batch = f"{xd[0]} or 1" if xd[0] != 1 else "1"
    raise GraphError(f"{op_name(op)}: {name(scale, 'scale_desc')} has dims {list(sd)} and strides {list(st)}, but the "
                     f"F8_128x4 scale of x {list(xd)} in blocks {list(block)} has dims [{batch}, {expected[1]}, "
                     f"{expected[2]}] and strides {strides} (whole 128 x 4 tiles, the blocked axis innermost): cuDNN "
                     "9.28 refuses any other, 9.19 accepts a smaller one, which cannot hold the tiles it reads")


def plain_scale_dims(x_dims, block) -> list | None:
    """The dims of a plain (not reordered) scale of x in ``block`` (one size per axis of x): one scale a block, or
    None where x is no whole number of blocks."""
    if any(n % b for n, b in zip(x_dims, block)):
        return None
    return [n // b for n, b in zip(x_dims, block)]


def _check_plain_scale(op, scale, xd, sd, block):
    """A plain scale holds one scale per block of x (its batch may be 1: broadcast). cuDNN finalizes and plans a
    larger one, whose extra scales nothing reads, and gets no engine for a smaller one, naming nothing."""
    expected = plain_scale_dims(xd, block)
    if expected is None:
        raise GraphError(f"{op_name(op)}: x {list(xd)} is no whole number of blocks {list(block)} (block_size)")
    if len(sd) == len(xd) and all(s == e or (axis == 0 and s == 1 and block[0] == 1)
                                  for axis, (s, e) in enumerate(zip(sd, expected))):
        return
    raise GraphError(f"{op_name(op)}: {name(scale, 'scale_desc')} has dims {list(sd)}, but x {list(xd)} in blocks "
                     f"{list(block)} has one scale a block: dims {expected}"
                     + (" (or a batch of 1)" if len(xd) > 2 and block[0] == 1 and xd[0] != 1 else ""))


class QuantizeOps:
    """``block_scale_quantize``, ``block_scale_dequantize``."""

    def block_scale_quantize(self, x, *, block_size=32, y_data_type=DataType.CUDNN_DATA_FP8_E4M3,
                             scale_data_type=DataType.CUDNN_DATA_FP8_E8M0, axis=-1, reordering=None, compute=None,
                             name="quantize"):
        """BLOCK_SCALE_QUANTIZE: ``{"y", "scale"}``; one scale per ``block_size`` elements along ``axis`` (MXFP8
        by default: E4M3 values, E8M0 scales). ``reordering`` defaults to what cuDNN requires: F8_128x4 for a 3-d x
        (``axis`` then x's innermost axis; the scale tensor in whole 128 x 4 tiles, ``f8_128x4_scale``: larger than
        x's block count where rows are no multiple of 128 or block counts no multiple of 4), none for other ranks
        (one scale per block, in x's axis order)."""
        name = _build.as_name(name, "quantize")
        require("CUDNN_BACKEND_OPERATION_BLOCK_SCALE_QUANTIZE_DESCRIPTOR", "block-scale quantize")
        x = self._need_tensor(x, "x")
        block_size = as_int(block_size, "block_size", 1)
        rank = len(x.shape)
        axis = as_int(axis, "axis", -rank, rank - 1) % rank
        if reordering is None:  # cuDNN 9.19 and 9.28 refuse a 3-d x without F8_128x4 scales, and any other with them
            reordering = _F8_128X4 if rank == 3 else TensorReordering.CUDNN_TENSOR_REORDERING_NONE
        else:
            reordering = as_choice(TensorReordering, reordering, "reordering", "CUDNN_TENSOR_REORDERING_")
            if (reordering == _F8_128X4) != (rank == 3):
                raise GraphError(f"reordering: cuDNN quantizes a 3-d x with F8_128x4 scales only, and another rank "
                                 f"without them; x {list(x.shape)} is {rank}-d, so not {reordering.name} (leave "
                                 "reordering out)")
        tiled = reordering == _F8_128X4  # (then x is 3-d: checked above)
        if tiled:
            rows, columns = x.strides[1], x.strides[2]
            innermost = 1 if rows < columns else 2 if columns < rows else axis
            if axis != innermost:  # cuDNN takes the blocked axis to be x's innermost one
                raise GraphError(f"axis: F8_128x4 scales block x's innermost axis, {innermost} for {x.describe()}, "
                                 f"not axis {axis}: quantize along axis {innermost}, or give x strides with axis "
                                 f"{axis} innermost")
        if x.shape[axis] % block_size:
            raise GraphError(f"block_size: axis {axis} of x {list(x.shape)} is no multiple of {block_size}")
        if tiled:
            sdims, sstrides = f8_128x4_scale(x.shape, axis, block_size)
        else:
            sdims = list(x.shape)
            sdims[axis] //= block_size
            sstrides = _build.strides_like(sdims, x.strides)
        y = self.tensor(x.shape, x.strides, as_data_type(y_data_type, "y_data_type"), name=f"{name}_y")
        sc = self.tensor(sdims, sstrides, as_data_type(scale_data_type, "scale_data_type"), name=f"{name}_scale",
                         reordering_mode=reordering)
        self.add(self._operation("BLOCK_SCALE_QUANTIZE", xdesc=x, ydesc=y, scale_desc=sc,
                                 math_prec=self._compute(compute), block_size=block_size))
        return {"y": y, "scale": sc}

    def block_scale_dequantize(self, x, scale, *, block_size, output=False, output_data_type=None, compute=None,
                               name="dequantize"):
        """BLOCK_SCALE_DEQUANTIZE: x scaled by ``scale``, one per block; ``block_size`` is one int (the last
        axis) or one per matrix axis (A [1, 32], B [32, 1])."""
        name = _build.as_name(name, "dequantize")
        require("CUDNN_BACKEND_OPERATION_BLOCK_SCALE_DEQUANTIZE_DESCRIPTOR", "block-scale dequantize")
        x, scale = self._need_tensor(x, "x"), self._need_tensor(scale, "scale")
        sizes = _build.as_sizes([block_size] if isinstance(block_size, numbers.Integral) else block_size,
                                "block_size")
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
        if list(sd) != plain_scale_dims(xd, self.block):
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
    finalize_checks={"BLOCK_SCALE_DEQUANTIZE": check_block_scale_dequantize},
    reference_ops={"BLOCK_SCALE_DEQUANTIZE": BlockScaleDequantize,
                   "BLOCK_SCALE_QUANTIZE": not_computed(QUANTIZE_NOT_COMPUTED)},
    doc=__doc__)
