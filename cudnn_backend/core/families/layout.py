"""Layout operations: CONCAT, RESHAPE, TRANSPOSE, SLICE."""
from __future__ import annotations

import math

from cudnn_backend.core.families._checks import fail
from cudnn_backend.core.families._family import Family

__all__ = ["FAMILY", "concat_output_dims", "transpose_output_dims", "slice_output_dims"]


def concat_output_dims(dims_list, axis):
    """Dims of the concatenation of ``dims_list`` along ``axis`` (all other dims must agree)."""
    first = list(dims_list[0])
    total = 0
    for dims in dims_list:
        dims = list(dims)
        if len(dims) != len(first) or any(a != b for i, (a, b) in enumerate(zip(dims, first)) if i != axis):
            fail(f"concat along axis {axis}: {dims} does not match {first}")
        total += dims[axis]
    out = list(first)
    out[axis] = total
    return out


def transpose_output_dims(x_dims, permutation):
    """Y dims of a transpose: ``y[i] = x[permutation[i]]``."""
    if sorted(permutation) != list(range(len(x_dims))):
        fail(f"transpose: {list(permutation)} is not a permutation of {len(x_dims)} axes")
    return [x_dims[p] for p in permutation]


def slice_output_dims(x_dims, start, limit, strides=None):
    """Y dims of a slice ``x[start:limit:stride]`` per axis (limit exclusive)."""
    strides = [1] * len(x_dims) if strides is None else list(strides)
    if not len(start) == len(limit) == len(strides) == len(x_dims):
        fail(f"slice: start, limit and strides need {len(x_dims)} entries each")
    out = []
    for d, s, e, st in zip(x_dims, start, limit, strides):
        if not (0 <= s < e <= d) or st <= 0:
            fail(f"slice [{s}:{e}:{st}] is empty or outside an axis of size {d}")
        out.append(math.ceil((e - s) / st))
    return out


FAMILY = Family(
    "layout", ("CONCAT", "RESHAPE", "TRANSPOSE", "SLICE"),
    graph_methods=("concat", "reshape", "transpose", "slice"),
    doc=__doc__)
