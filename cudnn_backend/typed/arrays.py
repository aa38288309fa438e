"""What cuDNN needs to know about an array, read through one adapter: cuda.core's ``StridedMemoryView``.

``view(array, stream=...)`` reads shape, strides (in elements), data type, data pointer and device of any object
that speaks DLPack (versioned or not; tried first) or ``__cuda_array_interface__``: torch, cupy, JAX, numba,
numpy (host), cuda.core buffers and anything else. ``stream`` is the consumer stream (the cuDNN handle's):
the producer's pending work is ordered before it (DLPack passes it to ``__dlpack__``, the CUDA array interface
makes the consumer wait on the producer's stream); ``-1`` (the default) only reads the metadata.
``layout_mismatch`` says whether an array describes exactly a tensor's elements. The host side of the data
types (``storage_dtype``, ``encode``, ``decode``: bfloat16 and fp8 as their bits) serves input generation and
checking. cuda.core comes with ``pip install 'cudnn-backend[gpu]'``.
"""
from __future__ import annotations

import threading
from dataclasses import dataclass

import numpy as np

from cudnn_backend._bindings.enums import DataType
# the stride rules live with the Graph builder's readers (core.families._build); read here by the runtime and tests
from cudnn_backend.core.names import DATA_TYPE_ALIASES, read_data_type
from cudnn_backend.core.families._build import MAX_ELEMENTS, packed_strides, stride_order, strides_like  # noqa: F401
from cudnn_backend.errors import MissingDependencyError

__all__ = ["ArrayInfo", "view", "describe", "data_type_of", "span_bytes", "layout_mismatch", "storage_dtype",
           "encode", "decode", "is_float", "DATA_TYPE_BITS", "ITEMSIZE", "HOST_DEVICE_TYPES", "CUDA_DEVICE_TYPES"]

D = DataType

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

# DLPack device types (dlpack.h): host memory, and memory the GPU reads
HOST_DEVICE_TYPES = {1: "cpu", 3: "cuda pinned host"}  # kDLCPU, kDLCUDAHost
CUDA_DEVICE_TYPES = {2: "cuda", 13: "cuda managed"}  # kDLCUDA, kDLCUDAManaged


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


def _contiguous_strides(shape) -> tuple:
    strides, acc = [], 1
    for n in reversed(shape):
        strides.append(acc)
        acc *= max(n, 1)
    return tuple(reversed(strides))


@dataclass(frozen=True)
class ArrayInfo:
    """One array as the adapter read it. ``device`` is "cpu" (host memory) or "cuda" (memory the GPU reads);
    ``device_id`` the GPU's ordinal (-1 on the host); ``data_type`` None where cuDNN has no type for the
    array's (``dtype_name`` says which it was); ``nbytes`` the bytes spanned (None when the element size is
    unknown); ``protocol`` "dlpack" or "cuda_array_interface"."""

    shape: tuple
    strides: tuple  # in elements
    data_type: DataType | None
    ptr: int | None
    device: str
    nbytes: int | None
    device_id: int = -1
    itemsize: int | None = None
    dtype_name: str = ""
    protocol: str = "dlpack"

    @property
    def alignment(self) -> int:
        """The largest power of two (at most 16) dividing the pointer; 16 when unknown."""
        if not self.ptr:
            return 16
        a = 16
        while a > 1 and self.ptr % a:
            a //= 2
        return a

    @property
    def contiguous(self) -> bool:
        """Row-major contiguous (dimensions of size 1 may have any stride)."""
        return all(n == 1 or s == c for n, s, c in zip(self.shape, self.strides, _contiguous_strides(self.shape)))

    @property
    def raw_bytes(self) -> bool:
        """A flat 1-D contiguous uint8 array: plain memory, whatever the tensor's data type."""
        return self.data_type == D.CUDNN_DATA_UINT8 and len(self.shape) == 1 and self.contiguous

    def describe(self) -> str:
        """``float16 [2, 3] strides [3, 1] on cuda:0`` (for messages)."""
        where = "the host" if self.device == "cpu" else f"cuda:{self.device_id}"
        return f"{self.dtype_name or '?'} {list(self.shape)} strides {list(self.strides)} on {where}"


def data_type_of(dtype) -> DataType:
    """cuDNN data type of a numpy/torch/cupy/JAX dtype (or its name)."""
    member = read_data_type(str(dtype).replace("torch.", ""))
    if member is not None:
        return member
    try:
        return DATA_TYPE_ALIASES[np.dtype(dtype).name]
    except (TypeError, KeyError):
        raise TypeError(f"no cuDNN data type for {dtype!r}") from None


_smv_lock = threading.Lock()
_smv = None


def _strided_memory_view():
    """``cuda.core.utils.StridedMemoryView``, imported on first use."""
    global _smv
    if _smv is None:
        with _smv_lock:
            if _smv is None:
                try:
                    from cuda.core.utils import StridedMemoryView
                except ImportError as e:
                    raise MissingDependencyError("cuda-core", "reading arrays (DLPack, __cuda_array_interface__)",
                                                 "gpu") from e
                _smv = StridedMemoryView
    return _smv


def _dlpack_device(array):
    try:
        device_type, device_id = array.__dlpack_device__()
        return int(device_type), int(device_id)
    except Exception as e:  # noqa: BLE001 - a producer's own failure, reported with the object's type
        raise TypeError(f"__dlpack_device__() of the {type(array).__name__} failed: {type(e).__name__}: {e}") from None


def _dtype(smv, array):
    """(cuDNN data type or None, item size or None, dtype name) of a view; the producer's own ``dtype`` (torch,
    JAX) names what cuda.core cannot map (bfloat16 without ml_dtypes, fp8)."""
    unmapped = ""
    try:
        dt = np.dtype(smv.dtype)
        name, itemsize = dt.name, dt.itemsize
    except Exception as e:  # noqa: BLE001 - cuda.core has no numpy dtype for it: ask the producer
        name, itemsize = str(getattr(array, "dtype", "")).replace("torch.", ""), None
        unmapped = f"a dtype cuda.core cannot read ({' '.join(str(e).split())})"
    try:
        data_type = data_type_of(name) if name else None
    except TypeError:
        data_type = None
    if itemsize is None and data_type in ITEMSIZE:
        itemsize = ITEMSIZE[data_type]
    return data_type, itemsize, name or unmapped or "unknown dtype"


def view(array, *, stream: int = -1, what: str = "array") -> ArrayInfo:
    """Read ``array`` through cuda.core's ``StridedMemoryView`` (DLPack first, then ``__cuda_array_interface__``;
    numpy-style host arrays through numpy's DLPack). ``stream``: the consumer stream's handle (an int; 0 the
    legacy default stream) that the producer's work is ordered before, or -1 for metadata only. ``what`` names
    the array in errors (TypeError for an object that is no array, or one the protocols cannot read)."""
    smv_cls = _strided_memory_view()
    protocol = "dlpack"
    try:
        if hasattr(array, "__dlpack__") and hasattr(array, "__dlpack_device__"):
            device_type, _ = _dlpack_device(array)
            if device_type in HOST_DEVICE_TYPES:
                device, smv = "cpu", smv_cls.from_dlpack(array, stream_ptr=-1)
            elif device_type in CUDA_DEVICE_TYPES:
                device, smv = "cuda", smv_cls.from_dlpack(array, stream_ptr=int(stream))
            else:
                raise TypeError(f"{what}: the {type(array).__name__} lives on DLPack device type {device_type}, "
                                "neither the host nor a CUDA GPU")
        elif hasattr(array, "__cuda_array_interface__"):
            protocol = "cuda_array_interface"
            device, smv = "cuda", smv_cls.from_cuda_array_interface(array, stream_ptr=int(stream))
        elif hasattr(array, "__array_interface__") or hasattr(array, "__array__"):
            return view(np.asarray(array), stream=-1, what=what)
        else:
            raise TypeError(f"{what}: a {type(array).__name__!r} object is no array: need an object with __dlpack__ "
                            "or __cuda_array_interface__ (torch, cupy, JAX, numba, numpy, cuda.core ...)")
    except TypeError as e:
        if str(e).startswith(what):
            raise
        raise TypeError(f"{what}: cannot read the {type(array).__name__} through {protocol}: {e}") from e
    except Exception as e:  # noqa: BLE001 - a producer's broken interface, or cuda.core's refusal: named here
        raise TypeError(f"{what}: cannot read the {type(array).__name__} through {protocol}: "
                        f"{type(e).__name__}: {e}") from e
    data_type, itemsize, name = _dtype(smv, array)
    shape = tuple(int(n) for n in smv.shape)
    strides = smv.strides
    strides = _contiguous_strides(shape) if strides is None else tuple(int(s) for s in strides)
    if itemsize is None:
        nbytes = None
    elif any(n == 0 for n in shape):
        nbytes = 0
    else:
        nbytes = (1 + sum((n - 1) * abs(s) for n, s in zip(shape, strides))) * itemsize
    return ArrayInfo(shape, strides, data_type, int(smv.ptr), device, nbytes, int(smv.device_id), itemsize, name,
                     protocol)


def describe(array) -> ArrayInfo:
    """Shape, element strides, data type, pointer and device of an array (``view`` without stream ordering)."""
    return view(array)


def layout_mismatch(info: ArrayInfo, dims, strides) -> str | None:
    """None when ``info`` describes exactly a tensor's elements, else what differs (for a message).

    Accepted: the tensor's dims and strides (dimensions of size 1 may have any stride); the same (size,
    stride) pairs in another order (e.g. an NHWC-shaped contiguous array for an NHWC tensor: the same memory);
    a flat 1-D contiguous buffer (its size is checked separately)."""
    dims, strides = tuple(int(d) for d in dims), tuple(int(s) for s in strides)
    shape, astrides = info.shape, info.strides
    if any(s < 0 for n, s in zip(shape, astrides) if n > 1):
        return f"the array has negative strides {list(astrides)}"
    if len(shape) == 1 and info.contiguous:
        return None
    pairs = sorted((n, s) for n, s in zip(shape, astrides) if n != 1)
    wanted = sorted((n, s) for n, s in zip(dims, strides) if n != 1)
    if pairs == wanted:
        return None
    if sorted(n for n in shape if n != 1) != sorted(n for n in dims if n != 1):
        return f"the array's shape {list(shape)} is not the tensor's dims {list(dims)}"
    return (f"the array's strides {list(astrides)} (in elements, shape {list(shape)}) are not the tensor's "
            f"{list(strides)} (dims {list(dims)}): a view whose elements the tensor cannot describe")


# ---------------------------------------------------------------------------------------------
# the host side of cuDNN's data types: storage, and values in float64
# ---------------------------------------------------------------------------------------------
def _fp8_values(exponent_bits, mantissa_bits, bias, ieee_specials):
    """float64 value of each of the 256 codes of an 8-bit float (NaN where the code is one)."""
    codes = np.arange(256)
    sign = np.where(codes & 0x80, -1.0, 1.0)
    exp = (codes >> mantissa_bits) & ((1 << exponent_bits) - 1)
    man = codes & ((1 << mantissa_bits) - 1)
    normal = (1 + man / (1 << mantissa_bits)) * np.exp2(exp.astype(np.float64) - bias)
    sub = man / (1 << mantissa_bits) * 2.0 ** (1 - bias)
    values = sign * np.where(exp == 0, sub, normal)
    top = exp == (1 << exponent_bits) - 1
    if ieee_specials:  # e5m2: infinities and NaNs in the top exponent
        values = np.where(top & (man == 0), sign * np.inf, np.where(top, np.nan, values))
    else:  # e4m3fn: only S.1111.111 is NaN
        values = np.where(top & (man == (1 << mantissa_bits) - 1), np.nan, values)
    return values


_FP8 = {D.CUDNN_DATA_FP8_E4M3: _fp8_values(4, 3, 7, False), D.CUDNN_DATA_FP8_E5M2: _fp8_values(5, 2, 15, True)}
if "CUDNN_DATA_FP8_E8M0" in D.__members__:  # scale factors: 2**(code - 127), 0xFF NaN
    _FP8[D.CUDNN_DATA_FP8_E8M0] = np.where(np.arange(256) == 255, np.nan, np.exp2(np.arange(256) - 127.0))

_STORAGE = {D.CUDNN_DATA_HALF: np.float16, D.CUDNN_DATA_FLOAT: np.float32, D.CUDNN_DATA_DOUBLE: np.float64,
            D.CUDNN_DATA_BFLOAT16: np.uint16, D.CUDNN_DATA_INT8: np.int8, D.CUDNN_DATA_UINT8: np.uint8,
            D.CUDNN_DATA_INT32: np.int32, D.CUDNN_DATA_INT64: np.int64, D.CUDNN_DATA_BOOLEAN: np.bool_}
_STORAGE.update({dt: np.uint8 for dt in _FP8})
if "CUDNN_DATA_UINT32" in D.__members__:
    _STORAGE[D.CUDNN_DATA_UINT32] = np.uint32


def storage_dtype(data_type) -> np.dtype:
    """The numpy dtype that holds one element of ``data_type`` on the host (bfloat16: uint16 bits, fp8:
    uint8 codes); TypeError for types without a plain per-element layout (int4, vectorized, complex)."""
    try:
        return np.dtype(_STORAGE[DataType(int(data_type))])
    except (KeyError, TypeError, ValueError):
        raise TypeError(f"no host storage for cuDNN data type {data_type!r}") from None


def _is_float(data_type) -> bool:
    return data_type in (D.CUDNN_DATA_HALF, D.CUDNN_DATA_FLOAT, D.CUDNN_DATA_DOUBLE, D.CUDNN_DATA_BFLOAT16) \
        or data_type in _FP8


def is_float(data_type) -> bool:
    """Whether ``data_type`` holds floating-point values (fp8 and bfloat16 included)."""
    try:
        return _is_float(DataType(int(data_type)))
    except (TypeError, ValueError):
        return False


def encode(values, data_type) -> np.ndarray:
    """``values`` (any real array) rounded to ``data_type`` (to nearest, ties to even) in its host storage
    (``storage_dtype``); integers are cast, booleans are ``values != 0``."""
    data_type = DataType(int(data_type))
    values = np.asarray(values)
    if data_type == D.CUDNN_DATA_BFLOAT16:
        with np.errstate(over="ignore"):  # beyond float32's range: infinity, as the hardware rounds
            f32 = np.asarray(values, dtype=np.float32)
        shape = f32.shape
        f32 = f32.reshape(-1)  # 1-D (a copy only where the values are not contiguous)
        bits = f32.view(np.uint32)
        rounded = bits >> 16  # in place from here: one temporary for arrays of many million elements
        rounded &= 1
        rounded += bits
        rounded += 0x7FFF
        rounded >>= 16
        out = rounded.astype(np.uint16)
        nan = np.isnan(f32)
        if nan.any():  # a NaN stays a NaN (quiet), whatever rounding would carry into its exponent
            out[nan] = ((bits[nan] >> 16) | 0x0040).astype(np.uint16)
        return out.reshape(shape)
    if data_type in _FP8:
        return _encode_fp8(values.astype(np.float64), _FP8[data_type])
    dtype = storage_dtype(data_type)
    if dtype == np.bool_:
        return values != 0
    return values.astype(dtype)


def _encode_fp8(x, table):
    """Nearest code (ties to the even code) of every value; beyond the largest finite value: saturated."""
    finite = np.isfinite(table)
    codes = np.flatnonzero(finite)
    order = np.argsort(table[codes], kind="stable")
    codes, vals = codes[order], table[codes][order]
    keep = np.concatenate(([True], np.diff(vals) != 0))  # +0 and -0: one entry (the +0 code comes first)
    codes, vals = codes[keep], vals[keep]
    clipped = np.clip(x, vals[0], vals[-1])
    hi = np.clip(np.searchsorted(vals, clipped), 1, len(vals) - 1)
    lo = hi - 1
    d_lo, d_hi = clipped - vals[lo], vals[hi] - clipped
    pick_hi = (d_hi < d_lo) | ((d_hi == d_lo) & (codes[hi] % 2 == 0))
    out = np.where(pick_hi, codes[hi], codes[lo]).astype(np.uint8)
    nan_code = np.flatnonzero(np.isnan(table))
    if nan_code.size:
        out = np.where(np.isnan(x), nan_code[-1], out).astype(np.uint8)
    return out


def decode(stored, data_type) -> np.ndarray:
    """The float64 values (int64 for integers, bool for booleans) of elements stored as ``storage_dtype``."""
    data_type = DataType(int(data_type))
    stored = np.asarray(stored)
    if data_type == D.CUDNN_DATA_BFLOAT16:
        return (stored.astype(np.uint32) << 16).view(np.float32).astype(np.float64)
    if data_type in _FP8:
        return _FP8[data_type][stored.astype(np.intp)]
    if stored.dtype == np.bool_:
        return stored.copy()
    if _is_float(data_type):
        return stored.astype(np.float64)
    return stored.astype(np.int64)
