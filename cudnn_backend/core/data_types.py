"""The sizes of cuDNN's data types: the one table of element sizes (arrays, variant packs and the descriptors'
checks read it)."""
from __future__ import annotations

from cudnn_backend._bindings.enums import DataType as D

__all__ = ["DATA_TYPE_BITS", "element_bytes"]

# Bits per element of every data type with a plain per-element size; vectorized types are left out, which turns size
# checks off for them. BOOLEAN is one bit: cuDNN's kernels read it packed, eight elements a byte, least significant
# bit first (the SASS of the x * s pointwise kernel, 9.28.1).
DATA_TYPE_BITS = {
    D.CUDNN_DATA_HALF: 16, D.CUDNN_DATA_BFLOAT16: 16, D.CUDNN_DATA_FLOAT: 32, D.CUDNN_DATA_DOUBLE: 64,
    D.CUDNN_DATA_INT8: 8, D.CUDNN_DATA_UINT8: 8, D.CUDNN_DATA_INT32: 32, D.CUDNN_DATA_INT64: 64,
    D.CUDNN_DATA_BOOLEAN: 1, D.CUDNN_DATA_FP8_E4M3: 8, D.CUDNN_DATA_FP8_E5M2: 8,
}
for _name, _bits in (("CUDNN_DATA_FP8_E8M0", 8), ("CUDNN_DATA_FP8_E5M3", 8), ("CUDNN_DATA_FP4_E2M1", 4),
                     ("CUDNN_DATA_INT4", 4), ("CUDNN_DATA_UINT4", 4), ("CUDNN_DATA_UINT32", 32),
                     ("CUDNN_DATA_COMPLEX_FP32", 64), ("CUDNN_DATA_COMPLEX_FP64", 128),
                     ("CUDNN_DATA_BYTE_BOOLEAN", 8)):
    if _name in D.__members__:
        DATA_TYPE_BITS[D[_name]] = _bits


def element_bytes(data_type) -> int | None:
    """Bytes one value of ``data_type`` takes alone (a sub-byte type: one byte), or None where the size is not plain."""
    try:
        bits = DATA_TYPE_BITS.get(D(int(data_type)))
    except (TypeError, ValueError):
        return None
    return None if bits is None else (bits + 7) // 8
