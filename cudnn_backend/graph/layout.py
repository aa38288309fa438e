"""Data movement: concat, reshape, transpose, slice."""
from __future__ import annotations

import math

from cudnn_backend._bindings.enums import ReshapeMode
from cudnn_backend.core._descriptor import as_int
from cudnn_backend.errors import GraphError
from cudnn_backend.graph import shapes
from cudnn_backend.graph._util import as_choice, as_data_type, require
from cudnn_backend.typed import OperationConcat, OperationReshape, OperationSlice, OperationTranspose

__all__ = ["LayoutOps"]


class LayoutOps:
    """``concat``, ``reshape``, ``transpose`` (cuDNN 9.22+), ``slice`` (cuDNN 9.22+)."""

    def concat(self, inputs, axis, *, inplace_index=None, output=True, output_data_type=None, name="concat"):
        """CONCAT of ``inputs`` along ``axis`` (all other dims equal); ``inplace_index`` names the input already in
        place inside the output buffer."""
        inputs = [self._need_tensor(t, f"inputs[{i}]") for i, t in enumerate(inputs)]
        if not inputs:
            raise GraphError("inputs: concat needs at least one tensor")
        rank = len(inputs[0].shape)
        axis = as_int(axis, "axis", -rank, rank - 1) % rank
        dims = shapes.concat_output_dims([t.shape for t in inputs], axis)
        ref = next((t for t in inputs if not t.virtual), inputs[0])
        y = self._output(output, dims, ref, output_data_type or ref.data_type, f"{name}_y")
        op = OperationConcat(axis=axis, input_descs=inputs, output_desc=y)
        if inplace_index is not None:
            op.inplace_index = as_int(inplace_index, "inplace_index", 0, len(inputs) - 1)
        self.add(op)
        return y

    def reshape(self, x, dims, *, strides=None, mode=None, output=False, output_data_type=None, name="reshape"):
        """RESHAPE to ``dims`` (same element count; packed row-major unless ``strides`` — which is also how cuDNN 9
        graphs read a tensor transposed). The data type is x's for a real output, the intermediate type otherwise."""
        x = self._need_tensor(x, "x")
        dims = shapes.as_dims(dims, "dims")
        if math.prod(dims) != math.prod(x.shape):
            raise GraphError(f"dims: reshape {list(x.shape)} -> {dims} changes the element count")
        strides = shapes.as_strides(strides, len(dims)) if strides is not None else shapes.packed_strides(dims)
        if output_data_type is None and output is True:
            output_data_type = x.data_type
        y = self._output(output, dims, None, output_data_type, f"{name}_y", strides=strides)
        op = OperationReshape(xdesc=x, ydesc=y)
        if mode is not None:
            require("CUDNN_ATTR_OPERATION_RESHAPE_MODE", "reshape mode")
            op.mode = as_choice(ReshapeMode, mode, "mode", "CUDNN_RESHAPE_")
        self.add(op)
        return y

    def transpose(self, x, permutation, *, output=False, output_data_type=None, name="transpose"):
        """TRANSPOSE (cuDNN 9.22+): ``y.dims[i] = x.dims[p[i]]``; like cudnn-frontend a view (``y.strides[i] =
        x.strides[p[i]]``) unless a packed real output is given. cuDNN 9.28.1 runs it on Blackwell only (its
        memory-bound engines): for an H100/H200 read the tensor transposed through its strides instead."""
        require("CUDNN_BACKEND_OPERATION_TRANSPOSE_DESCRIPTOR", "Graph.transpose")
        x = self._need_tensor(x, "x")
        perm = shapes.as_sizes(permutation, "permutation", 0, len(x.shape))
        dims = shapes.transpose_output_dims(x.shape, perm)
        strides = [x.strides[p] for p in perm]
        y = self._output(output, dims, None, as_data_type(output_data_type or x.data_type), f"{name}_y",
                         strides=strides)
        self.add(OperationTranspose(xdesc=x, ydesc=y, permutation=perm))
        return y

    def slice(self, x, start, limit, strides=None, *, output=False, output_data_type=None, name="slice"):
        """SLICE (cuDNN 9.22+): ``x[start:limit:strides]`` per axis (limit exclusive); a view like cudnn-frontend
        (``y.strides[i] = x.strides[i] * strides[i]``). cuDNN 9.28.1 runs it fused into a matmul's input on an
        H100/H200 (alone on Blackwell only)."""
        require("CUDNN_BACKEND_OPERATION_SLICE_DESCRIPTOR", "Graph.slice")
        x = self._need_tensor(x, "x")
        rank = len(x.shape)
        start = shapes.as_sizes(start, "start", 0, rank)
        limit = shapes.as_sizes(limit, "limit", 1, rank)
        steps = shapes.as_sizes(strides, "strides", 1, rank) if strides is not None else [1] * rank
        dims = shapes.slice_output_dims(x.shape, start, limit, steps)
        y = self._output(output, dims, None, as_data_type(output_data_type or x.data_type), f"{name}_y",
                         strides=[s * k for s, k in zip(x.strides, steps)])
        # the strides always (as cudnn-frontend): cuDNN 9.28.1 refuses a slice without them ("strides.empty()")
        self.add(OperationSlice(xdesc=x, ydesc=y, start_indices=start, limit_indices=limit, strides=steps))
        return y
