"""What cuDNN needs to know about an array-like: shape, strides (in elements), data type, data
pointer, alignment, size. Understands numpy, torch, cupy, ``__cuda_array_interface__`` and DLPack."""
from __future__ import annotations

import ctypes
from dataclasses import dataclass

import numpy as np

from cudnn_backend._bindings.enums import DataType

D = DataType

# numpy-style type strings / names -> cuDNN data type
_BY_NAME = {
    "float16": D.CUDNN_DATA_HALF, "float32": D.CUDNN_DATA_FLOAT, "float64": D.CUDNN_DATA_DOUBLE,
    "bfloat16": D.CUDNN_DATA_BFLOAT16, "int8": D.CUDNN_DATA_INT8, "uint8": D.CUDNN_DATA_UINT8,
    "int32": D.CUDNN_DATA_INT32, "int64": D.CUDNN_DATA_INT64, "bool": D.CUDNN_DATA_BOOLEAN,
    "float8_e4m3fn": D.CUDNN_DATA_FP8_E4M3, "float8_e5m2": D.CUDNN_DATA_FP8_E5M2,
    "half": D.CUDNN_DATA_HALF, "float": D.CUDNN_DATA_FLOAT, "double": D.CUDNN_DATA_DOUBLE,
}
_TYPESTR = {
    "<f2": D.CUDNN_DATA_HALF, "<f4": D.CUDNN_DATA_FLOAT, "<f8": D.CUDNN_DATA_DOUBLE, "|i1": D.CUDNN_DATA_INT8,
    "|u1": D.CUDNN_DATA_UINT8, "<i4": D.CUDNN_DATA_INT32, "<i8": D.CUDNN_DATA_INT64, "|b1": D.CUDNN_DATA_BOOLEAN,
}
# DLPack (type code, bits) -> cuDNN data type; codes: 0 int, 1 uint, 2 float, 4 bfloat, 6 bool, 10/12 fp8
_DLPACK = {
    (2, 16): D.CUDNN_DATA_HALF, (2, 32): D.CUDNN_DATA_FLOAT, (2, 64): D.CUDNN_DATA_DOUBLE,
    (4, 16): D.CUDNN_DATA_BFLOAT16, (0, 8): D.CUDNN_DATA_INT8, (1, 8): D.CUDNN_DATA_UINT8,
    (0, 32): D.CUDNN_DATA_INT32, (0, 64): D.CUDNN_DATA_INT64, (6, 8): D.CUDNN_DATA_BOOLEAN,
    (1, 1): D.CUDNN_DATA_BOOLEAN,
}

# Bits per element of every data type with a plain per-element size (the one table of element sizes);
# vectorized and bit-packed types are left out, which turns size checks off for them.
DATA_TYPE_BITS = {
    D.CUDNN_DATA_HALF: 16, D.CUDNN_DATA_BFLOAT16: 16, D.CUDNN_DATA_FLOAT: 32, D.CUDNN_DATA_DOUBLE: 64,
    D.CUDNN_DATA_INT8: 8, D.CUDNN_DATA_UINT8: 8, D.CUDNN_DATA_INT32: 32, D.CUDNN_DATA_INT64: 64,
    D.CUDNN_DATA_BOOLEAN: 8, D.CUDNN_DATA_FP8_E4M3: 8, D.CUDNN_DATA_FP8_E5M2: 8,
}
for _name, _bits in (("CUDNN_DATA_FP8_E8M0", 8), ("CUDNN_DATA_FP8_E5M3", 8), ("CUDNN_DATA_FP4_E2M1", 4),
                     ("CUDNN_DATA_INT4", 4), ("CUDNN_DATA_UINT4", 4), ("CUDNN_DATA_UINT32", 32),
                     ("CUDNN_DATA_COMPLEX_FP32", 64), ("CUDNN_DATA_COMPLEX_FP64", 128),
                     ("CUDNN_DATA_BYTE_BOOLEAN", 8)):
    if _name in D.__members__:
        DATA_TYPE_BITS[D[_name]] = _bits
# Bytes per element where that is a whole number.
ITEMSIZE = {dt: bits // 8 for dt, bits in DATA_TYPE_BITS.items() if bits % 8 == 0}


MAX_ELEMENTS = 1 << 62  # a packed tensor's span (its largest stride times its dim) must stay well inside int64


def packed_strides(dims, order=None):
    """Fully packed strides; ``order`` lists axes from outermost to innermost (default: row-major)."""
    order = list(range(len(dims))) if order is None else list(order)
    strides = [0] * len(dims)
    acc = 1
    for axis in reversed(order):
        strides[axis] = acc
        acc *= max(dims[axis], 1)
    if acc > MAX_ELEMENTS:
        raise ValueError(f"dims: {list(dims)} spans {acc} elements; a cuDNN tensor spans at most {MAX_ELEMENTS}")
    return strides


def stride_order(strides):
    """Axes from outermost to innermost by stride (ties keep axis order)."""
    return sorted(range(len(strides)), key=lambda i: (-strides[i], i))


def strides_like(dims, ref_strides):
    """Packed strides for ``dims`` in the same axis order as ``ref_strides`` (keeps NHWC as NHWC)."""
    if len(ref_strides) != len(dims):
        return packed_strides(dims)
    return packed_strides(dims, stride_order(ref_strides))


def span_bytes(dims, strides, data_type) -> int | None:
    """Bytes a tensor spans: ``1 + sum((dim - 1) * abs(stride))`` elements; None where the size is unknown."""
    try:
        bits = DATA_TYPE_BITS.get(DataType(int(data_type)))
    except (TypeError, ValueError):
        return None
    if bits is None or not dims or len(dims) != len(strides):
        return None
    if any(d == 0 for d in dims):
        return 0
    elements = 1 + sum((d - 1) * abs(s) for d, s in zip(dims, strides))
    return (elements * bits + 7) // 8


@dataclass(frozen=True)
class ArrayInfo:
    shape: tuple
    strides: tuple  # in elements
    data_type: DataType
    ptr: int | None  # data pointer, if the object exposes one
    device: str  # "cpu", "cuda" or "unknown"
    nbytes: int  # bytes spanned by the elements (from the lowest to the highest address)

    @property
    def alignment(self) -> int:
        """The largest power of two (at most 16) dividing the pointer; 16 when unknown."""
        if not self.ptr:
            return 16
        a = 16
        while a > 1 and self.ptr % a:
            a //= 2
        return a


def data_type_of(dtype) -> DataType:
    """cuDNN data type of a numpy/torch/cupy dtype (or its name)."""
    name = str(dtype).replace("torch.", "")
    if name in _BY_NAME:
        return _BY_NAME[name]
    try:
        return _BY_NAME[np.dtype(dtype).name]
    except (TypeError, KeyError):
        raise TypeError(f"no cuDNN data type for {dtype!r}") from None


def _span(shape, strides, itemsize) -> int:
    if any(s == 0 for s in shape):
        return 0
    return (1 + sum((n - 1) * abs(st) for n, st in zip(shape, strides))) * itemsize


def _contiguous_strides(shape):
    strides, acc = [], 1
    for n in reversed(shape):
        strides.append(acc)
        acc *= max(n, 1)
    return tuple(reversed(strides))


def describe(array) -> ArrayInfo:
    """Shape, element strides, data type, pointer and device of an array-like."""
    mod = type(array).__module__.split(".")[0]
    if mod == "torch":
        dt = data_type_of(array.dtype)
        shape, strides = tuple(array.shape), tuple(array.stride())
        return ArrayInfo(shape, strides, dt, int(array.data_ptr()), "cuda" if array.is_cuda else "cpu",
                         _span(shape, strides, array.element_size()))
    cai = getattr(array, "__cuda_array_interface__", None)
    if cai is not None:
        dt = _TYPESTR.get(cai["typestr"]) or data_type_of(getattr(array, "dtype", cai["typestr"]))
        itemsize = ITEMSIZE[dt]
        shape = tuple(cai["shape"])
        strides = tuple(s // itemsize for s in cai["strides"]) if cai.get("strides") else _contiguous_strides(shape)
        return ArrayInfo(shape, strides, dt, int(cai["data"][0]), "cuda", _span(shape, strides, itemsize))
    if hasattr(array, "__array_interface__") or mod == "numpy":
        a = np.asarray(array)
        dt = data_type_of(a.dtype)
        strides = tuple(s // a.itemsize for s in a.strides)
        return ArrayInfo(a.shape, strides, dt, int(a.ctypes.data), "cpu", _span(a.shape, strides, a.itemsize))
    if hasattr(array, "__dlpack__"):
        return _describe_dlpack(array)
    raise TypeError(f"cannot describe {type(array).__name__} as an array: need numpy, torch, cupy, DLPack or "
                    f"__cuda_array_interface__")


class _DLDevice(ctypes.Structure):
    _fields_ = [("device_type", ctypes.c_int32), ("device_id", ctypes.c_int32)]


class _DLDataType(ctypes.Structure):
    _fields_ = [("code", ctypes.c_uint8), ("bits", ctypes.c_uint8), ("lanes", ctypes.c_uint16)]


class _DLTensor(ctypes.Structure):
    _fields_ = [("data", ctypes.c_void_p), ("device", _DLDevice), ("ndim", ctypes.c_int32),
                ("dtype", _DLDataType), ("shape", ctypes.POINTER(ctypes.c_int64)),
                ("strides", ctypes.POINTER(ctypes.c_int64)), ("byte_offset", ctypes.c_uint64)]


def _describe_dlpack(array) -> ArrayInfo:
    """Read a DLPack capsule without consuming it (its deleter still runs when it is collected)."""
    capsule = array.__dlpack__()
    get_pointer = ctypes.pythonapi.PyCapsule_GetPointer
    get_pointer.restype = ctypes.c_void_p
    get_pointer.argtypes = [ctypes.py_object, ctypes.c_char_p]
    ptr = get_pointer(capsule, b"dltensor")
    t = _DLTensor.from_address(ptr)  # DLManagedTensor starts with its DLTensor
    key = (t.dtype.code, t.dtype.bits)
    if key not in _DLPACK or t.dtype.lanes != 1:
        raise TypeError(f"no cuDNN data type for DLPack dtype code={t.dtype.code} bits={t.dtype.bits}")
    dt = _DLPACK[key]
    shape = tuple(t.shape[i] for i in range(t.ndim))
    strides = tuple(t.strides[i] for i in range(t.ndim)) if t.strides else _contiguous_strides(shape)
    device = {1: "cpu", 2: "cuda", 3: "cpu"}.get(t.device.device_type, "unknown")
    data = (t.data or 0) + t.byte_offset
    return ArrayInfo(shape, strides, dt, data, device, _span(shape, strides, ITEMSIZE[dt]))
