"""What cuDNN needs to know about an array: shape, strides (in elements), data type, data pointer and device.

``view(array, stream=...)`` reads any array through one of three routes, chosen by the array's library:

- **the producer's own reader** (``PRODUCERS``, keyed by the top-level module of the array's type or of a base
  class): torch tensors always (data_ptr, shape, stride, dtype, device: every dtype torch has, fp8 included, which
  neither cuda.core's torch path nor the CUDA array interface reads), JAX arrays when only the metadata is asked
  (JAX refuses DLPack without a real stream) or when DLPack refuses the dtype, numpy arrays always (host memory,
  read by numpy: no cuda.core needed);
- **the protocols**, through cuda.core's ``StridedMemoryView``: DLPack (versioned or not; tried first) or
  ``__cuda_array_interface__``, for every other library (cupy, numba, cuda.core, JAX with a stream, ...);
- host objects numpy reads (``__array_interface__``, ``__array__``, host DLPack): through numpy.

``stream`` is the consumer stream (the cuDNN handle's): the producer's pending work is ordered before it (DLPack
passes it to ``__dlpack__``, the CUDA array interface makes the consumer wait on the producer's stream, torch's
reader makes it wait on torch's current stream, JAX's reader waits for the array on the host); ``-1`` (the default)
only reads the metadata. Every refusal is one line naming the array, its library, its dtype and why.

Each DLPack capsule's header is read in place before cuda.core or numpy consumes it (``_CheckedDLPack``): one they
would crash on (a NULL shape) or misread (another device than ``__dlpack_device__()`` said, a pointer past the
address space, a stride whose bytes pass int64) is refused, as is anything ``__dlpack__()`` returns that is no
unconsumed DLPack capsule. Where cuda.core cannot read the dtype, the producer's ``dtype`` name is taken only if the
capsule's type code, bits and lanes agree with it; without one, the capsule's own (DLPack 1.1's fp8 codes say it
whole; other codes give a name of code, bits and lanes, no cuDNN data type, and the element's size).
``ArrayInfo.readonly`` says whether the array's owner declared its memory immutable (variant packs bind no such array
where cuDNN writes).

``layout_mismatch`` says whether an array describes exactly a tensor's elements. The host side of the data types
(``storage_dtype``, ``encode``, ``decode``: bfloat16 and fp8 as their bits; ``memory_bytes``, ``memory_elements``:
BOOLEAN packed eight elements a byte) serves input generation and checking.

**bool arrays** (one byte an element in every library) are ``CUDNN_DATA_BYTE_BOOLEAN``, never ``CUDNN_DATA_BOOLEAN``,
which cuDNN reads bit-packed; before cuDNN 9.25, which has no BYTE_BOOLEAN, they have no data type
(``byte_boolean_refusal`` says why and what to do instead). For the same reason **4-bit arrays** (int4, uint4,
float4_e2m1fn: one element a byte in numpy, ml_dtypes and JAX) have no data type: cuDNN's INT4, UINT4 and FP4_E2M1
pack two elements a byte.

cuda.core comes with the ``gpu`` extra (``pip install '.[gpu]'`` in a clone); host arrays are read without it.
"""
from __future__ import annotations

import ctypes
import functools
import math
import numbers
import operator
import struct
import sys
import threading
from dataclasses import dataclass, replace
from typing import Callable

import numpy as np

from cudnn_backend._bindings.enums import DataType
from cudnn_backend.core import device as _device
from cudnn_backend.core._status import is_available
# the stride rules live with the Graph builder's readers (core.families._build); read here by the runtime and tests
from cudnn_backend.core.names import DATA_TYPE_ALIASES, read_data_type
from cudnn_backend.core.versions import loaded_version_string
from cudnn_backend.core.data_types import DATA_TYPE_BITS  # noqa: F401 - re-exported: the one table
from cudnn_backend.core.families._build import (BOOLEAN_TYPES, MAX_ELEMENTS, packed_strides, stride_order,  # noqa: F401
                                                 strides_like)
from cudnn_backend.errors import MissingDependencyError

__all__ = ["ArrayInfo", "view", "describe", "data_type_of", "dtype_name", "no_data_type_reason", "span_bytes",
           "span_elements", "offers_array_protocol", "layout_mismatch", "storage_dtype", "encode", "decode", "is_float",
           "Producer", "PRODUCERS",
           "producer_of", "library_of", "DATA_TYPE_BITS", "ITEMSIZE", "HOST_DEVICE_TYPES", "CUDA_DEVICE_TYPES",
           "BIT_PACKED", "memory_bytes", "memory_elements", "byte_boolean_refusal", "boolean_layout_conflict",
           "element_size_conflict", "BOOLEAN_TYPES", "has_masked_elements"]

D = DataType

# dtypes that look like one of cuDNN's but are not: said in the refusal
_NOT_CUDNN = {
    "float8_e4m3": "IEEE-style e4m3 with infinities; cuDNN's FP8_E4M3 is float8_e4m3fn",
    "float8_e4m3fnuz": "the fnuz variant (no -0, another bias); cuDNN's FP8_E4M3 is float8_e4m3fn",
    "float8_e5m2fnuz": "the fnuz variant (no -0, another bias); cuDNN's FP8_E5M2 is float8_e5m2",
    "float8_e4m3b11fnuz": "cuDNN's FP8_E4M3 is float8_e4m3fn",
    "float8_e3m4": "cuDNN has no e3m4 type",
    "int16": "cuDNN has no 16-bit integer type", "uint16": "cuDNN has no 16-bit integer type",
}
# 4-bit dtypes, which numpy, ml_dtypes and JAX hold one element a byte while cuDNN packs two a byte: never the cuDNN
# type of the same name (each byte would be read as two elements, as a bool array's as eight BOOLEANs)
_ONE_ELEMENT_A_BYTE = {"int4": "INT4", "uint4": "UINT4", "float4_e2m1fn": "FP4_E2M1"}
_NOT_CUDNN["float4_e2m1fn_x2"] = ("two FP4_E2M1 elements a byte, each byte one element of the array: describe the "
                                  "tensor by hand (Graph.tensor, its last dim doubled, data_type fp4_e2m1) and bind "
                                  "the array's memory")
for _name, _cudnn in _ONE_ELEMENT_A_BYTE.items():
    _NOT_CUDNN[_name] = (f"one element a byte, while cuDNN's {_cudnn} packs two elements a byte: bind the packed bytes "
                         "as a flat uint8 array")

# Bytes per element where that is a whole number.
ITEMSIZE = {dt: bits // 8 for dt, bits in DATA_TYPE_BITS.items() if bits % 8 == 0}
# the types whose elements the host holds one a byte (``storage_dtype``) but memory holds eight a byte
BIT_PACKED = frozenset({D.CUDNN_DATA_BOOLEAN})

# DLPack device types (dlpack.h): host memory, and memory the GPU reads
HOST_DEVICE_TYPES = {1: "cpu", 3: "cuda pinned host"}  # kDLCPU, kDLCUDAHost
CUDA_DEVICE_TYPES = {2: "cuda", 13: "cuda managed"}  # kDLCUDA, kDLCUDAManaged
# DLPack type codes (dlpack.h, DLPack 1.1), by name for messages
_DLPACK_CODE_NAMES = {0: "int", 1: "uint", 2: "float", 3: "opaque handle", 4: "bfloat", 5: "complex", 6: "bool",
                      7: "float8_e3m4", 8: "float8_e4m3", 9: "float8_e4m3b11fnuz", 10: "float8_e4m3fn",
                      11: "float8_e4m3fnuz", 12: "float8_e5m2", 13: "float8_e5m2fnuz", 14: "float8_e8m0fnu",
                      15: "float6_e2m3fn", 16: "float6_e3m2fn", 17: "float4_e2m1fn"}
# The DLPack type codes an export of each cuDNN data type may carry. kDLFloat (2) is also all an fp8/fp4 export could
# say before DLPack 1.1 gave them codes of their own.
_DLPACK_CODES = {
    D.CUDNN_DATA_HALF: (2,), D.CUDNN_DATA_FLOAT: (2,), D.CUDNN_DATA_DOUBLE: (2,), D.CUDNN_DATA_BFLOAT16: (4,),
    D.CUDNN_DATA_INT8: (0,), D.CUDNN_DATA_INT32: (0,), D.CUDNN_DATA_INT64: (0,), D.CUDNN_DATA_UINT8: (1,),
    D.CUDNN_DATA_BOOLEAN: (6,), D.CUDNN_DATA_FP8_E4M3: (10, 2), D.CUDNN_DATA_FP8_E5M2: (12, 2),
}
for _name, _codes in (("CUDNN_DATA_FP8_E8M0", (14, 2)), ("CUDNN_DATA_FP4_E2M1", (17, 2)), ("CUDNN_DATA_INT4", (0,)),
                      ("CUDNN_DATA_UINT4", (1,)), ("CUDNN_DATA_UINT32", (1,)), ("CUDNN_DATA_COMPLEX_FP32", (5,)),
                      ("CUDNN_DATA_COMPLEX_FP64", (5,)), ("CUDNN_DATA_BYTE_BOOLEAN", (6,))):
    if _name in D.__members__:
        _DLPACK_CODES[D[_name]] = _codes


def span_elements(dims, strides) -> int:
    """Elements a tensor or an array spans: ``1 + sum((dim - 1) * abs(stride))``; 0 where a dim is 0."""
    if any(d == 0 for d in dims):
        return 0
    return 1 + sum((d - 1) * abs(s) for d, s in zip(dims, strides))


def span_bytes(dims, strides, data_type) -> int | None:
    """Bytes a tensor spans (``span_elements``); None where the size is unknown."""
    try:
        bits = DATA_TYPE_BITS.get(DataType(int(data_type)))
    except (TypeError, ValueError):
        return None
    if bits is None or not dims or len(dims) != len(strides):
        return None
    return (span_elements(dims, strides) * bits + 7) // 8


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
    unknown); ``protocol`` how it was read: "dlpack", "cuda_array_interface", "numpy" or "<library> attributes"
    (the producer's own reader); ``library`` the array's library ("torch", "JAX", "cupy", "numpy", ... or the
    type's name); ``readonly`` whether its owner declared its memory immutable (numpy's writeable flag off, a
    DLPack export flagged read-only, a CUDA array interface whose data is read-only, any JAX array)."""

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
    library: str = ""
    readonly: bool = False

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
    def descending(self) -> bool:
        """Some axis of more than one element has a negative stride (a reversed view): elements lie below the
        pointer, where cuDNN, reading a tensor from its pointer up, never looks."""
        return any(s < 0 for n, s in zip(self.shape, self.strides) if n > 1)

    @property
    def contiguous(self) -> bool:
        """Row-major contiguous (dimensions of size 1 may have any stride)."""
        return all(n == 1 or s == c for n, s, c in zip(self.shape, self.strides, _contiguous_strides(self.shape)))

    @property
    def raw_bytes(self) -> bool:
        """A flat 1-D contiguous uint8 array: plain memory, whatever the tensor's data type."""
        return self.data_type == D.CUDNN_DATA_UINT8 and len(self.shape) == 1 and self.contiguous

    def holds(self) -> str:
        """``torch float8_e4m3fn`` (library and dtype, for messages)."""
        return f"{self.library} {self.dtype_name or '?'}".strip()

    def describe(self) -> str:
        """``torch float16 [2, 3] strides [3, 1] on cuda:0`` (for messages)."""
        where = "the host" if self.device == "cpu" else f"cuda:{self.device_id}"
        return f"{self.holds()} {list(self.shape)} strides {list(self.strides)} on {where}"


def dtype_name(dtype) -> str:
    """The plain name of a numpy/torch/cupy/JAX/ml_dtypes dtype (``torch.float8_e4m3fn`` -> ``float8_e4m3fn``)."""
    name = getattr(dtype, "name", None)
    if not isinstance(name, str) or getattr(dtype, "fields", None) is not None:  # (a structured dtype: its fields)
        name = str(dtype)
    return name.replace("torch.", "")


def byte_boolean_refusal() -> str:
    """Why a bool array (one byte an element) has no data type in the loaded cuDNN, and what to bind instead; ""
    where it has CUDNN_DATA_BYTE_BOOLEAN (9.25 on)."""
    if is_available("CUDNN_DATA_BYTE_BOOLEAN"):
        return ""
    return (f"cuDNN {loaded_version_string()} has no CUDNN_DATA_BYTE_BOOLEAN (9.25 on), and its BOOLEAN is "
            "bit-packed, eight elements a byte: bind numpy.packbits(a, bitorder='little') as a uint8 buffer for a "
            "tensor of data_type BOOLEAN, or a uint8 view of the array (a.view(uint8)) with a uint8/int8 graph")


def data_type_of(dtype) -> DataType:
    """cuDNN data type of a numpy/torch/cupy/JAX/ml_dtypes dtype (or its name): bool is BYTE_BOOLEAN, refused
    before cuDNN 9.25 (``byte_boolean_refusal``); a DataType is itself. None is refused (numpy reads it as float64)."""
    if isinstance(dtype, DataType):
        return dtype
    if dtype is None:
        raise TypeError("no cuDNN data type for None (give a dtype, or its name)")
    name = dtype_name(dtype)
    member = read_data_type(str(dtype).replace("torch.", ""))
    if member is None:
        try:
            name = np.dtype(dtype).name
            member = DATA_TYPE_ALIASES[name]
        except (TypeError, KeyError):
            why = _NOT_CUDNN.get(name)
            raise TypeError(f"no cuDNN data type for {dtype!r}{f' ({why})' if why else ''}") from None
    if name in _ONE_ELEMENT_A_BYTE:
        raise TypeError(f"no cuDNN data type for {dtype!r} ({_NOT_CUDNN[name]})")
    if member == D.CUDNN_DATA_BYTE_BOOLEAN:
        why = byte_boolean_refusal()
        if why:
            raise TypeError(f"no cuDNN data type for {dtype!r} ({why})")
    return member


def boolean_layout_conflict(info: ArrayInfo, data_type) -> str | None:
    """Why the array ``info`` cannot hold a tensor of ``data_type`` where one side is bit-packed BOOLEAN and the
    other a byte an element (a bool array: BYTE_BOOLEAN, or no data type before cuDNN 9.25), else None. Never
    bound or described anyway: cuDNN would read each byte as eight elements."""
    try:
        data_type = DataType(int(data_type))
    except (TypeError, ValueError):
        return None
    byte_bools = info.data_type == D.CUDNN_DATA_BYTE_BOOLEAN or (info.data_type is None and info.dtype_name == "bool")
    if data_type == D.CUDNN_DATA_BOOLEAN and byte_bools:
        return (f"the array holds {info.holds()}, one byte an element, but the tensor is CUDNN_DATA_BOOLEAN, which "
                "cuDNN reads bit-packed, eight elements a byte, least significant bit first: bind "
                "numpy.packbits(a, bitorder='little') as a flat uint8 buffer, or make the tensor BYTE_BOOLEAN "
                "(cuDNN 9.25 on)")
    if info.data_type == D.CUDNN_DATA_BOOLEAN and data_type != D.CUDNN_DATA_BOOLEAN and data_type in BOOLEAN_TYPES:
        return (f"the array holds {info.holds()} (CUDNN_DATA_BOOLEAN, bit-packed, eight elements a byte) but the "
                f"tensor is {data_type.name}, one byte an element")
    return None


def element_size_conflict(info: ArrayInfo, data_type) -> str | None:
    """Why the array ``info`` cannot be described, dims for shape and strides for strides, as a tensor of
    ``data_type``: its elements are of another size (its shape and strides count its own elements, so the tensor
    would cover other memory), else None; a size unknown on either side says nothing."""
    try:
        data_type = DataType(int(data_type))
    except (TypeError, ValueError):
        return None
    bits = DATA_TYPE_BITS.get(data_type)
    if bits is None or info.itemsize is None or bits == 8 * info.itemsize:
        return None
    size = f"{bits // 8}-byte" if bits % 8 == 0 else f"{bits}-bit"
    fix = (f"view the array as {size} elements first (a.view(numpy.uint{bits}))" if bits in (8, 16, 32, 64) else
           "give the tensor its own dims and strides (Graph.tensor)")
    return (f"the array holds {info.holds()}, {info.itemsize}-byte elements, but {data_type.name} has {size} "
            f"elements: the array's shape {list(info.shape)} and strides {list(info.strides)}, counted in its own "
            f"elements, would describe other memory; {fix}")


def no_data_type_reason(name: str) -> str:
    """Why a dtype (by name) has no cuDNN data type, where that is worth saying (else "")."""
    if name == "bool":
        return byte_boolean_refusal()
    return _NOT_CUDNN.get(name, "")


def _data_type_or_none(name):
    try:
        return data_type_of(name) if name else None
    except TypeError:
        return None


def _info(shape, strides, name, itemsize, ptr, device, device_id, protocol, library, readonly=False) -> ArrayInfo:
    """An ArrayInfo from what a reader found (strides in elements; None: row-major contiguous). A producer's shape and
    strides must be integers (a float is refused, never truncated), its sizes non-negative, and the elements it spans
    at most MAX_ELEMENTS, as for a tensor the Graph makes."""
    shape = _integers(shape, "shape")
    strides = _contiguous_strides(shape) if strides is None else _integers(strides, "strides")
    if any(n < 0 for n in shape):
        raise _Refused(f"its shape {list(shape)} has a negative size")
    if device == "cuda":
        _check_ordinal(device_id, "it names")
    if len(strides) != len(shape):
        raise _Refused(f"its strides {list(strides)} do not match its shape {list(shape)}")
    elements = span_elements(shape, strides)
    if elements > MAX_ELEMENTS:
        raise _Refused(f"its shape {list(shape)} with strides {list(strides)} spans more than {MAX_ELEMENTS} "
                       "elements")
    data_type = _data_type_or_none(name)
    if itemsize is None and data_type in ITEMSIZE:
        itemsize = ITEMSIZE[data_type]
    nbytes = None if itemsize is None else elements * itemsize
    ptr = int(ptr or 0)
    if -(1 << 63) <= ptr < 0:  # cuda.core keeps an address as intptr_t: one of 2**63 or more comes back negative
        ptr += 1 << 64
    if not 0 <= ptr < 1 << 64:
        raise _Refused(f"its data pointer {ptr} is no 64-bit address")
    problem = None if ptr else _null_for_elements("its", shape)
    if problem is not None:
        raise _Refused(problem)
    return ArrayInfo(shape, strides, data_type, ptr, device, nbytes, int(device_id), itemsize, name, protocol, library,
                     bool(readonly))


_MASKED = ("a masked array with masked elements: cuDNN reads every element, the masked ones too; fill them first "
           "(a.filled(value))")


def has_masked_elements(array) -> bool:
    """Whether ``array`` is a numpy masked array with an element masked (its memory holds a value there all the same,
    which cuDNN would read)."""
    return isinstance(array, np.ma.MaskedArray) and bool(np.ma.is_masked(array))


class _Refused(TypeError):
    """A reader cannot read this array: its one-line reason (without the array's name, added by ``view``)."""


def _check_ordinal(device_id, source):
    """A CUDA array's device is an ordinal (cuda.core fails a bare assert on a negative one); ``source`` says who
    named it (``it names``, ``its __dlpack_device__() names``)."""
    if not 0 <= int(device_id) < 1 << 31:  # (a CUDA ordinal is a C int)
        raise _Refused(f"{source} CUDA device {int(device_id)}, no device ordinal")


def _integers(values, what) -> tuple:
    """A producer's shape or strides as ints; anything that is no integer (a float, a bool, a string) refused, and
    anything but a tuple or list before it is iterated (a range or a generator may never end)."""
    if not isinstance(values, (tuple, list)):
        raise _Refused(f"its {what} is a {type(values).__name__}, not a tuple of integers")
    try:
        items = tuple(values)
        if any(isinstance(v, (bool, np.bool_)) for v in items):
            raise TypeError
        return tuple(operator.index(v) for v in items)
    except TypeError:
        raise _Refused(f"its {what} {values!r} is not a sequence of integers") from None


def _plain_dtype(dt: np.dtype) -> None:
    """Refuse a structured or object dtype, and one of the other byte order: cuDNN reads the GPU's (little-endian)
    order, and the name a dtype gives (float32) does not say which order it has."""
    if dt.fields is not None or dt.hasobject or dt.subdtype is not None:
        raise _Refused("a structured or object dtype has no cuDNN data type")
    if not dt.isnative:
        raise _Refused(f"its dtype {dt.str!r} is {'big' if dt.byteorder == '>' else 'little'}-endian, not this "
                       "machine's byte order: convert it first (a.astype(a.dtype.newbyteorder('=')))")


# ---------------------------------------------------------------------------------------------
# the producers' own readers
# ---------------------------------------------------------------------------------------------
@dataclass(frozen=True)
class Producer:
    """How one library's arrays are read by their own attributes. ``first``: "always" (never through the
    protocols), "metadata" (when no stream order is asked, ``stream == -1``; the protocols otherwise) or
    "fallback" (only where the protocols refuse the array). ``read(array, stream)`` returns an ArrayInfo or
    raises ``TypeError`` with the reason. ``immutable``: the library's arrays are never written in place, whatever
    a protocol's export says (their ArrayInfo is ``readonly``)."""

    library: str
    read: Callable
    first: str = "fallback"
    immutable: bool = False
    marks: tuple = ()  # attributes every array of the library has: its other objects (torch.Size, a Module) lack one


def _read_numpy(a, stream=-1, library="numpy") -> ArrayInfo:
    """A numpy array (host memory), by numpy itself: any dtype numpy holds, ml_dtypes' bfloat16 and fp8 included."""
    dt = a.dtype
    name = dtype_name(dt)
    _plain_dtype(dt)
    item = dt.itemsize
    if not item:
        raise _Refused(f"its dtype {dt.str!r} has elements of no size")
    if has_masked_elements(a):
        raise _Refused(_MASKED)
    if any(s % item for s in a.strides):
        raise _Refused(f"its strides {list(a.strides)} (bytes) are no multiple of the item size {item}")
    return _info(a.shape, [s // item for s in a.strides], name, item, a.__array_interface__["data"][0], "cpu", -1,
                 "numpy", library, not a.flags.writeable)


def _read_torch(t, stream=-1) -> ArrayInfo:
    """A torch tensor by its own attributes (every dtype torch has, fp8 included). With a consumer ``stream`` on
    the GPU, that stream waits for torch's current stream, as torch's ``__dlpack__(stream=...)`` orders it."""
    name = dtype_name(t.dtype)
    if getattr(t, "is_nested", False):
        raise _Refused("a nested tensor (its elements of several shapes) is no strided array: bind its .values(), or "
                       "a padded tensor (.to_padded_tensor(0))")
    layout = str(getattr(t, "layout", "torch.strided"))
    if layout != "torch.strided":
        raise _Refused(f"a {layout.replace('torch.', '')} tensor; cuDNN reads strided (dense) memory (call "
                       ".to_dense())")
    for flag, fix in (("is_conj", "resolve_conj"), ("is_neg", "resolve_neg")):
        test = getattr(t, flag, None)
        if test is not None and test():
            raise _Refused(f"its lazy {flag[3:]} bit is set; call .{fix}() first")
    dev = t.device
    if dev.type == "cuda":
        device, device_id = "cuda", 0 if dev.index is None else int(dev.index)
        if stream != -1:
            _order_after_torch(t, int(stream))
    elif dev.type == "cpu":
        device, device_id = "cpu", -1
    else:
        raise _Refused(f"it lives on {dev}, neither the host nor a CUDA GPU")
    return _info(tuple(t.shape), tuple(t.stride()), name, int(t.element_size()), int(t.data_ptr()), device,
                 device_id, "torch attributes", "torch")


def _order_after_torch(t, stream: int):
    """Make the consumer ``stream`` wait for torch's current stream on the tensor's device (its pending work)."""
    torch = sys.modules.get("torch")
    try:
        producer = torch.cuda.current_stream(t.device)
        if int(producer.cuda_stream) != stream:
            torch.cuda.ExternalStream(stream, device=t.device).wait_stream(producer)
    except Exception as e:  # noqa: BLE001 - torch's own failure, said in one line
        raise _Refused(f"ordering torch's current stream before the consumer stream 0x{stream:x} failed: "
                       f"{type(e).__name__}: {' '.join(str(e).split())}") from None


def _read_jax(a, stream=-1) -> ArrayInfo:
    """A JAX array by its own attributes: shape, dtype, one device, ``unsafe_buffer_pointer()``, row-major
    strides (JAX's default layout). Used for the metadata alone (JAX refuses DLPack with stream -1) and where
    DLPack refuses the dtype; with a consumer ``stream``, the host waits for the array first (block_until_ready):
    an order without a stream JAX can take."""
    name = dtype_name(a.dtype)
    deleted = getattr(a, "is_deleted", None)
    if deleted is not None and deleted():
        raise _Refused("the array was deleted (donated to a computation?)")
    devices = list(a.devices())
    if len(devices) != 1:
        raise _Refused(f"the array is split over {len(devices)} devices; bind one shard "
                       "(array.addressable_shards[i].data)")
    dev = devices[0]
    platform = str(getattr(dev, "platform", "?"))
    if platform in ("gpu", "cuda"):
        device_id = getattr(dev, "local_hardware_id", None)  # (the ordinal the CUDA driver knows; id is JAX's own)
        if device_id is None:
            device_id = getattr(dev, "id", None)
        device, device_id = "cuda", 0 if device_id is None else int(device_id)
        if stream != -1:
            a.block_until_ready()
    elif platform == "cpu":
        device, device_id = "cpu", -1
    else:
        raise _Refused(f"it lives on {platform}, neither the host nor a CUDA GPU")
    return _info(tuple(a.shape), None, name, np.dtype(a.dtype).itemsize, int(a.unsafe_buffer_pointer()), device,
                 device_id, "JAX attributes", "JAX")


# The producer readers, by the top-level module of the array's type (or of a base class: torch.nn.Parameter, a
# user's subclass of torch.Tensor)
PRODUCERS = {
    "torch": Producer("torch", _read_torch, "always", marks=("data_ptr", "stride", "dtype")),
    # JAX arrays are immutable (XLA may share or reuse their buffers), and not every JAX flags its DLPack export so
    "jax": Producer("JAX", _read_jax, "metadata", immutable=True, marks=("unsafe_buffer_pointer", "devices", "dtype")),
    "jaxlib": Producer("JAX", _read_jax, "metadata", immutable=True,
                       marks=("unsafe_buffer_pointer", "devices", "dtype")),
    "numpy": Producer("numpy", _read_numpy, "always"),
}
# library names of the other producers, for messages
_LIBRARIES = {"cupy": "cupy", "numba": "numba", "cuda": "cuda.core", "cupy_backends": "cupy"}


def producer_of(array) -> Producer | None:
    """The producer reader of an array's library (by its type's module, or a base class's), or None. numpy's is
    for numpy's arrays and scalars only: a class taking numpy's operator mixin (NDArrayOperatorsMixin) may hold
    anything, and is read through the protocols it offers. An object of the library that is no array of it (lacking
    one of the producer's ``marks``: torch.Size, torch.device, an nn.Module) has none."""
    for cls in type(array).__mro__:
        p = PRODUCERS.get((getattr(cls, "__module__", None) or "").partition(".")[0])
        if p is not None and (isinstance(array, (np.ndarray, np.generic)) if p.library == "numpy" else
                              all(_offers(array, mark) for mark in p.marks)):
            return p
    return None


def library_of(array) -> str:
    """The name messages give an array's library: torch, JAX, cupy, numba, numpy, cuda.core, else its type's."""
    p = producer_of(array)
    if p is not None:
        return p.library
    return _LIBRARIES.get((type(array).__module__ or "").partition(".")[0], type(array).__name__)


# ---------------------------------------------------------------------------------------------
# the protocols: DLPack and the CUDA array interface through cuda.core, host memory through numpy
# ---------------------------------------------------------------------------------------------
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
                    raise MissingDependencyError("cuda-core", "reading GPU arrays (DLPack, __cuda_array_interface__)",
                                                 "gpu") from e
                _smv = StridedMemoryView
    return _smv


def _producer_dtype(array) -> str:
    """The producer's own dtype name, for messages ("" where it has none, or reading it fails)."""
    try:
        dtype = getattr(array, "dtype", None)
        return dtype_name(dtype) if dtype is not None else ""
    except Exception:  # noqa: BLE001 - a broken attribute: the message goes on without it
        return ""


def _failure(e: BaseException) -> str:
    """A reader's exception in one line: its type and text; a bare assertion (cuda.core checks a DLPack capsule or an
    interface dict with asserts) said to be the producer's malformed export."""
    text = " ".join(str(e).split())
    if not text and isinstance(e, AssertionError):
        text = "(no message: the producer's DLPack capsule or interface dict is malformed)"
    elif not text:
        text = "(no message)"
    return f"{type(e).__name__}: {text}"


def offers_array_protocol(obj) -> bool:
    """Whether ``obj`` offers an array protocol (DLPack, the CUDA array interface, numpy's): what ``view`` reads."""
    return any(_offers(obj, a) for a in ("__dlpack__", "__cuda_array_interface__", "__array_interface__",
                                         "__array__"))


def _offers(array, attribute) -> bool:
    """Whether ``array`` has ``attribute``: one whose reading raises counts as offered (its reader then says why)."""
    try:
        return hasattr(array, attribute)
    except Exception:  # noqa: BLE001 - a property that raises something else than AttributeError
        return True


def _dlpack_device(array):
    try:
        device_type, device_id = array.__dlpack_device__()
    except Exception as e:  # noqa: BLE001 - a producer's own failure, reported with the object's type
        raise _Refused(f"__dlpack_device__() failed: {type(e).__name__}: {e}") from None
    for value in (device_type, device_id):
        if isinstance(value, bool) or not isinstance(value, numbers.Integral):
            raise _Refused(f"its __dlpack_device__() gave ({device_type!r}, {device_id!r}), not two ints (a device "
                           "type and id)")
    return int(device_type), int(device_id)


# ---------------------------------------------------------------------------------------------
# DLPack capsules, their header checked before a consumer (cuda.core, numpy) trusts it
# ---------------------------------------------------------------------------------------------
class _DLDataType(ctypes.Structure):
    _fields_ = [("code", ctypes.c_uint8), ("bits", ctypes.c_uint8), ("lanes", ctypes.c_uint16)]


class _DLTensor(ctypes.Structure):  # dlpack.h's DLTensor, the same in DLPack 0.x and 1.x
    _fields_ = [("data", ctypes.c_void_p), ("device_type", ctypes.c_int32), ("device_id", ctypes.c_int32),
                ("ndim", ctypes.c_int32), ("dtype", _DLDataType), ("shape", ctypes.c_void_p),
                ("strides", ctypes.c_void_p), ("byte_offset", ctypes.c_uint64)]


class _DLManagedTensorVersioned(ctypes.Structure):  # DLPack 1.x's; the unversioned one starts with its DLTensor
    _fields_ = [("major", ctypes.c_uint32), ("minor", ctypes.c_uint32), ("manager_ctx", ctypes.c_void_p),
                ("deleter", ctypes.c_void_p), ("flags", ctypes.c_uint64), ("dl_tensor", _DLTensor)]


# private prototypes (the shared ctypes.pythonapi functions keep whatever argtypes others gave them)
_capsule_is_valid = ctypes.PYFUNCTYPE(ctypes.c_int, ctypes.py_object, ctypes.c_char_p)(
    ("PyCapsule_IsValid", ctypes.pythonapi))
_capsule_pointer = ctypes.PYFUNCTYPE(ctypes.c_void_p, ctypes.py_object, ctypes.c_char_p)(
    ("PyCapsule_GetPointer", ctypes.pythonapi))
_capsule_name = ctypes.PYFUNCTYPE(ctypes.c_char_p, ctypes.py_object)(("PyCapsule_GetName", ctypes.pythonapi))
_USED_CAPSULE_NAMES = (b"used_dltensor_versioned", b"used_dltensor")  # what a consumer renames a capsule it took
_DLPACK_MAJOR = 1  # the major version of the versioned capsule's layout (dlpack.h's DLPACK_MAJOR_VERSION)
_MAX_DLPACK_NDIM = 64  # the most dimensions numpy (NPY_MAXDIMS) and cuda.core (STRIDED_LAYOUT_MAX_NDIM) read


class _MalformedExport(BufferError):
    """A DLPack capsule whose header its consumer would crash on or misread. Raised inside ``__dlpack__``: a
    BufferError, which no consumer takes for an old producer's TypeError (on which they call again)."""


def _dlpack_device_name(device) -> str:
    """``(2, 0) (cuda)``: a DLPack (device type, device id), for messages."""
    kind = HOST_DEVICE_TYPES.get(device[0]) or CUDA_DEVICE_TYPES.get(device[0]) or "unknown device type"
    return f"({device[0]}, {device[1]}) ({kind})"


def _not_a_dlpack_capsule(obj) -> str:
    """Why ``obj``, which a ``__dlpack__()`` returned, is no unconsumed DLPack capsule: what it is."""
    try:
        name = _capsule_name(obj)
    except ValueError:  # PyCapsule_GetName refuses anything but a capsule
        got = "None" if obj is None else f"an object of type {type(obj).__name__!r}"
        return f"its __dlpack__() returned {got}, not a DLPack capsule"
    if name in _USED_CAPSULE_NAMES:
        return f"its __dlpack__() returned a capsule named {name.decode()!r}: already consumed"
    got = "a capsule without a name" if name is None else f"a capsule named {name.decode(errors='replace')!r}"
    return f"its __dlpack__() returned {got}, not a DLPack capsule ('dltensor' or 'dltensor_versioned')"


def _devices_agree(said, held) -> bool:
    """Whether a capsule's DLTensor device ``held`` is the (device type, device id) ``__dlpack_device__()`` said.
    Exact, but for kDLCPU against kDLCUDAHost with the same id: torch's ``__dlpack_device__()`` says kDLCUDAHost for
    pinned memory and its capsule kDLCPU (pytorch#136250); both are host memory, read alike."""
    if said == held:
        return True
    return said[1] == held[1] and said[0] in HOST_DEVICE_TYPES and held[0] in HOST_DEVICE_TYPES


def _dlpack_header(capsule, device):
    """The (type code, bits, lanes) of a DLPack capsule's DLTensor, read in place: the capsule stays unconsumed
    (its name unchanged). ``device``: the (device type, device id) the producer's ``__dlpack_device__()`` said.
    Raises _MalformedExport for anything that is no unconsumed DLPack capsule (its consumer would fail on a bare
    assert), and for a header whose reading crashes cuda.core and numpy (ndim > 0 and a NULL shape pointer), that
    describes no array (ndim out of range, elements of no size, NULL data for elements), that puts the memory
    elsewhere than ``device`` (the consumers bind the pointer as ``__dlpack_device__()`` says) or past the 64-bit
    address space (the consumers add byte_offset, wrapping). NULL strides are DLPack's row-major; pointers other
    than NULL cannot be checked without reading through them."""
    for name, versioned in ((b"dltensor_versioned", True), (b"dltensor", False)):
        if _capsule_is_valid(capsule, name):
            address = _capsule_pointer(capsule, name)
            break
    else:
        raise _MalformedExport(_not_a_dlpack_capsule(capsule))
    if not address:
        raise _MalformedExport(f"its DLPack capsule {name.decode()!r} holds a NULL pointer")
    if versioned:
        managed = _DLManagedTensorVersioned.from_address(address)
        if managed.major != _DLPACK_MAJOR:  # another major version lays the struct out otherwise: nothing is read
            raise _MalformedExport(f"its DLPack export is version {managed.major}.{managed.minor}; this reader knows "
                                   f"DLPack {_DLPACK_MAJOR}.x (a capsule of another major version is laid out "
                                   "otherwise)")
    t = managed.dl_tensor if versioned else _DLTensor.from_address(address)
    ndim, shape, code, bits, lanes = t.ndim, t.shape, t.dtype.code, t.dtype.bits, t.dtype.lanes
    if not 0 <= ndim <= _MAX_DLPACK_NDIM:
        raise _MalformedExport(f"its DLPack export has ndim {ndim}, not 0 to {_MAX_DLPACK_NDIM}")
    if ndim and not shape:
        raise _MalformedExport(f"its DLPack export has ndim {ndim} and a NULL shape pointer (reading it would crash "
                               "the process)")
    if not bits or not lanes:
        raise _MalformedExport(f"its DLPack export's dtype (code {code}, {bits} bits, {lanes} lanes) has elements "
                               "of no size")
    held = (t.device_type, t.device_id)
    if not _devices_agree(device, held):
        raise _MalformedExport(f"its __dlpack_device__() says device {_dlpack_device_name(device)} but its DLPack "
                               f"capsule says {_dlpack_device_name(held)}: a malformed export (the two disagree, so "
                               "neither says where the memory is)")
    dims = list((ctypes.c_int64 * ndim).from_address(shape)) if ndim else []
    if t.strides and ndim:  # in elements: numpy and cuda.core multiply them by the element's bytes, wrapping past int64
        item = max(1, bits * lanes // 8)
        for axis, stride in enumerate((ctypes.c_int64 * ndim).from_address(t.strides)):
            if not -(1 << 63) <= stride * item < 1 << 63:
                raise _MalformedExport(f"its DLPack export's stride {stride} (dimension {axis}) is {stride * item} "
                                       "bytes, past int64: its readers would wrap it to another stride")
    data, byte_offset = t.data or 0, t.byte_offset
    if not data:
        problem = _null_for_elements("its DLPack export's", dims)
        if problem is not None:
            raise _MalformedExport(problem)
    if data + byte_offset >= 1 << 64:
        raise _MalformedExport(f"its DLPack export's data pointer 0x{data:x} plus its byte_offset {byte_offset} "
                               "passes the end of the 64-bit address space")
    return code, bits, lanes


def _null_for_elements(whose, dims) -> str | None:
    """Why a NULL data pointer cannot be the memory of an export of ``dims``, or None where it holds no element (a
    negative size is refused by ``_info``)."""
    if not all(n > 0 for n in dims):
        return None
    elements = math.prod(dims)
    return f"{whose} data pointer is NULL, for {elements} element{'s' * (elements != 1)} (shape {list(dims)})"


class _CheckedDLPack:
    """A DLPack producer seen by its consumer (cuda.core, numpy) through a check of each capsule it exports
    (``_dlpack_header``): the consumer's call, its arguments and the capsule are the producer's own. ``device``: what
    the producer's ``__dlpack_device__()`` said, asked once by the reader; the consumer is told the same, so the
    capsule is checked against the device it is bound as. ``dtype``: the last capsule's (type code, bits, lanes)."""

    __slots__ = ("array", "device", "dtype")

    def __init__(self, array, device):
        self.array, self.device, self.dtype = array, device, None

    def __dlpack_device__(self):
        return self.device

    def __dlpack__(self, *args, **kwargs):
        capsule = self.array.__dlpack__(*args, **kwargs)
        self.dtype = _dlpack_header(capsule, self.device)
        return capsule


def _dtype_disagreement(name, dlpack_dtype) -> str | None:
    """Why the producer's dtype ``name`` does not describe a DLPack export's ``(type code, bits, lanes)``, else None.
    A name without a cuDNN data type is checked by nothing: its array binds nothing (no data type, no size)."""
    data_type = _data_type_or_none(name)
    if data_type is None or dlpack_dtype is None:
        return None
    code, bits, lanes = dlpack_dtype
    want_bits, want_codes = DATA_TYPE_BITS.get(data_type), _DLPACK_CODES.get(data_type, ())
    if lanes == 1 and (want_bits is None or bits == want_bits) and (not want_codes or code in want_codes):
        return None
    want = f"{want_bits} bits, " if want_bits else ""
    if want_codes:
        want += f"DLPack code {want_codes[0]} ({_DLPACK_CODE_NAMES[want_codes[0]]}), "
    return (f"its dtype attribute says {name} ({data_type.name}: {want}1 lane) but its DLPack export holds code "
            f"{code} ({_DLPACK_CODE_NAMES.get(code, 'unknown')}), {bits} bits, {lanes} lane{'s' * (lanes != 1)}: the "
            "two disagree, so neither says what the memory holds")


# The DLPack type codes whose export says its dtype whole (DLPack 1.1): named so, as their producers name them (fp6
# and fp4 are left to their code: their widths say nothing of how a byte packs them)
_DLPACK_NAMED = {(4, 16): "bfloat16", (6, 8): "bool"} | {
    (code, 8): name for code, name in _DLPACK_CODE_NAMES.items() if name.startswith("float8_")}


def _dlpack_dtype_name(code, bits, lanes) -> str:
    """The dtype of a DLPack export that cuda.core cannot read and its producer does not name: ``float8_e4m3fn`` for
    a code that says it whole, else its code, bits and lanes (a name no cuDNN data type has)."""
    if lanes == 1 and (code, bits) in _DLPACK_NAMED:
        return _DLPACK_NAMED[code, bits]
    return (f"DLPack code {code} ({_DLPACK_CODE_NAMES.get(code, 'unknown')}) of {bits} bits"
            + (f" x {lanes} lanes" if lanes != 1 else ""))


def _smv_dtype(smv, array, dlpack_dtype=None):
    """(dtype name, item size or None) of a view; the producer's own ``dtype`` names what cuda.core cannot map
    (bfloat16 without ml_dtypes, fp8), where it agrees with the DLPack export's ``dlpack_dtype`` (type code, bits,
    lanes; None: not read)."""
    try:
        dt = np.dtype(smv.dtype)
    except Exception as e:  # noqa: BLE001 - cuda.core has no numpy dtype for it: ask the producer
        name = _producer_dtype(array)
        problem = _dtype_disagreement(name, dlpack_dtype)
        if problem is not None:
            raise _Refused(problem) from None
        if dlpack_dtype is None:
            return name or f"a dtype cuda.core cannot read ({' '.join(str(e).split())})", None
        # the element's size is the export's where it says one in whole bytes
        size = dlpack_dtype[1] * dlpack_dtype[2]
        return name or _dlpack_dtype_name(*dlpack_dtype), size // 8 if size % 8 == 0 else None
    _plain_dtype(dt)
    if dlpack_dtype is not None and dlpack_dtype[1] * dlpack_dtype[2] != 8 * dt.itemsize:
        code, bits, lanes = dlpack_dtype
        raise _Refused(f"its DLPack export holds code {code} ({_DLPACK_CODE_NAMES.get(code, 'unknown')}), {bits} "
                       f"bits, {lanes} lane{'s' * (lanes != 1)}, which cuda.core reads as {dt.name} of "
                       f"{8 * dt.itemsize} bits: the two disagree on the element's size")
    return dt.name, dt.itemsize


def _read_smv(array, stream, protocol, library, device, dl_device=None):
    """Read by cuda.core; ``dl_device``: for DLPack, what ``__dlpack_device__()`` said (``_dlpack_device``)."""
    smv_cls = _strided_memory_view()
    dlpack_dtype = None
    if protocol == "dlpack":
        # DLPack names the legacy default stream 1 (0 is ambiguous, and refused by some producers); 1 is also the
        # driver's CU_STREAM_LEGACY, for producers that take the value as a stream handle
        dl_stream = (1 if int(stream) == 0 else int(stream)) if device == "cuda" else -1
        checked = _CheckedDLPack(array, dl_device)
        smv = smv_cls.from_dlpack(checked, stream_ptr=dl_stream)
        dlpack_dtype = checked.dtype
    else:
        _check_interface(array.__cuda_array_interface__)
        smv = smv_cls.from_cuda_array_interface(array, stream_ptr=int(stream))
    name, itemsize = _smv_dtype(smv, array, dlpack_dtype)
    device_id = smv.device_id if device == "cuda" else -1  # (host memory is no device's: cuda.core says 0)
    return _info(smv.shape, smv.strides, name, itemsize, smv.ptr, device, device_id, protocol, library,
                 getattr(smv, "readonly", False))


def _check_interface(interface):
    """The members of a ``__cuda_array_interface__`` that cuda.core takes on trust, checked first: it truncates a float
    (or a bool) in the shape or strides to an int, fails with Python's words on an interface that is no dict, a
    version that is no int, a value past int64 or a pointer past intptr_t, and fails a bare assert on the "stream"
    values the interface forbids (0, ambiguous) or that name no stream (negative). The rest is cuda.core's to
    refuse."""
    if not isinstance(interface, dict):
        raise _Refused(f"its __cuda_array_interface__ is a {type(interface).__name__}, not a dict")
    if interface.get("shape") is None:  # (cuda.core fails on it with Python's words: a KeyError)
        raise _Refused("its __cuda_array_interface__ has no shape (an export gives its dims)")
    shape = None
    for member in ("shape", "strides"):
        if interface.get(member) is not None:
            values = _integers(interface[member], f"__cuda_array_interface__ {member}")
            if any(not -(1 << 63) <= v < 1 << 63 for v in values):
                raise _Refused(f"its __cuda_array_interface__ {member} {list(values)} has a value past int64")
            shape = values if member == "shape" else shape
    typestr = interface.get("typestr")
    if not isinstance(typestr, str):  # (numpy reads None as float64)
        raise _Refused(f"its __cuda_array_interface__ typestr {typestr!r} is no type string (such as '<f4')")
    if interface.get("mask") is not None:
        raise _Refused(_MASKED)
    data = interface.get("data")
    if data is None:  # (cuda.core fails on it with Python's words: not iterable)
        raise _Refused("its __cuda_array_interface__ has no data (an export gives (pointer, read-only flag))")
    pointer = data[0] if isinstance(data, (tuple, list)) and len(data) == 2 else None
    if isinstance(pointer, (bool, np.bool_)) or not isinstance(pointer, (int, np.integer)) or \
            not 0 <= pointer < 1 << 63:
        # (cuda.core keeps the pointer as intptr_t; no process maps memory past 2**63)
        raise _Refused(f"its __cuda_array_interface__ data {data!r:.80} is not (pointer, read-only flag) with the "
                       "pointer an address (an int from 0 to 2**63 - 1)")
    problem = None if pointer else _null_for_elements("its __cuda_array_interface__", shape)
    if problem is not None:
        raise _Refused(problem)
    version = interface.get("version")
    if isinstance(version, (bool, np.bool_)) or not isinstance(version, (int, np.integer)):
        said = "has no version" if version is None else f"version {version!r} is no integer"
        raise _Refused(f"its __cuda_array_interface__ {said} (an export says which version it is: 3 today)")
    stream = interface.get("stream")
    if stream is None:
        return
    if isinstance(stream, (bool, np.bool_)) or not isinstance(stream, (int, np.integer)):
        raise _Refused(f"its __cuda_array_interface__ stream {stream!r} is no integer (a stream handle, or None)")
    if stream == 0:
        raise _Refused("its __cuda_array_interface__ stream is 0, which the interface forbids (ambiguous: 1 is the "
                       "legacy default stream, 2 the per-thread one)")
    if stream < 0:
        raise _Refused(f"its __cuda_array_interface__ stream is {int(stream)}, no stream handle")


def _read_host_dlpack(array, library, dl_device):
    """A host DLPack producer (``dl_device``: what its ``__dlpack_device__()`` said), read by numpy (no cuda.core);
    where numpy refuses the dtype (bfloat16, fp8), by cuda.core when it is installed."""
    try:
        return _read_numpy(np.from_dlpack(_CheckedDLPack(array, dl_device)), library=library)
    except (_Refused, _MalformedExport):
        raise
    except Exception as e:  # noqa: BLE001 - numpy's refusal: cuda.core may read it, else numpy's reason
        try:
            return _read_smv(array, -1, "dlpack", library, "cpu", dl_device)
        except MissingDependencyError:
            raise _Refused(f"numpy cannot read it ({_failure(e)}) and cuda-core "
                           "is not installed (pip install 'cudnn-backend[gpu]')") from None


def _read_protocols(array, stream, library):
    """DLPack (first), the CUDA array interface, or numpy for host objects; raises _Refused (a protocol's or
    cuda.core's refusal, one line) or MissingDependencyError (a GPU array without cuda.core)."""
    if _offers(array, "__dlpack__") and _offers(array, "__dlpack_device__"):
        dl_device = _dlpack_device(array)
        device_type = dl_device[0]
        if device_type in HOST_DEVICE_TYPES:
            return _read_host_dlpack(array, library, dl_device)
        if device_type not in CUDA_DEVICE_TYPES:
            raise _Refused(f"it lives on DLPack device type {device_type}, neither the host nor a CUDA GPU")
        _check_ordinal(dl_device[1], "its __dlpack_device__() names")
        protocol = "dlpack"
    elif _offers(array, "__cuda_array_interface__"):
        protocol, dl_device = "cuda_array_interface", None
    elif _offers(array, "__array_interface__") or _offers(array, "__array__"):
        interface = getattr(array, "__array_interface__", None)
        if isinstance(interface, dict) and interface.get("mask") is not None:  # (numpy ignores it)
            raise _Refused(_MASKED)
        try:
            host = np.asarray(array)
        except Exception as e:  # noqa: BLE001 - the object's own failure
            raise _Refused(f"numpy cannot read it: {_failure(e)}") from None
        return _read_numpy(host, library=library)
    elif _offers(array, "__dlpack__"):
        raise _Refused("it has __dlpack__ but no __dlpack_device__, which DLPack consumers ask first (where the "
                       "memory is)")
    else:
        raise _Refused("it offers no array protocol (__dlpack__, __cuda_array_interface__, __array_interface__)")
    try:
        return _read_smv(array, stream, protocol, library, "cuda", dl_device)
    except (MissingDependencyError, _Refused, _MalformedExport):
        raise
    except Exception as e:  # noqa: BLE001 - the producer's or cuda.core's refusal, named here
        driver = _device.driver()
        # (cuda.bindings' words for a driver entry point or library it could not find: not the producer's failure)
        driver_missing = type(e).__name__ in ("FunctionNotFoundError", "DynamicLibNotFoundError") or \
            "CUDA_ERROR" in str(e)
        why = "" if driver == "cuda" or not driver_missing else (
            " (cuda.core asks the CUDA driver where a device array lives, and this machine has "
            f"{'only the no-device stand-in' if driver == 'stand-in' else 'no CUDA driver'}: bind device arrays on "
            "a GPU, or give their pointers as ints offline)")
        raise _Refused(f"cannot read it through {protocol}: {_failure(e)}{why}") from None


def _subject(array, library) -> str:
    """``torch float8_e4m3fn Tensor``: the library, the producer's dtype and the type, each once."""
    parts = [library]
    dtype = _producer_dtype(array)
    if dtype:
        parts.append(dtype)
    if type(array).__name__ != library:
        parts.append(type(array).__name__)
    return " ".join(parts)


def view(array, *, stream: int = -1, what: str = "array") -> ArrayInfo:
    """Read ``array`` (see the module's docstring for the routes). ``stream``: the consumer stream's handle (an
    int; 0 the legacy default stream) that the producer's work is ordered before, or -1 for metadata only.
    ``what`` names the array in errors: a TypeError of one line, ``what: <library> <dtype> <type>: why``, for an
    object that is no array or one no route reads (MissingDependencyError for a GPU array without cuda-core)."""
    if isinstance(stream, bool) or not isinstance(stream, numbers.Integral):
        raise TypeError(f"stream: expected an int (a CUDA stream's handle, or -1), not {type(stream).__name__}")
    if not -1 <= stream < 1 << 64:
        raise ValueError(f"stream: {stream} is neither a CUDA stream's handle nor -1 (no ordering)")
    stream = int(stream)
    if isinstance(array, type):  # (a class has its instances' protocol methods, unbound)
        raise TypeError(f"{what}: the class {array.__module__}.{array.__qualname__} itself, not an array")
    producer = producer_of(array)
    if producer is None and not offers_array_protocol(array):
        raise TypeError(f"{what}: an object of type {type(array).__name__!r} is no array: need one with __dlpack__ or "
                        "__cuda_array_interface__ (torch, cupy, JAX, numba, numpy, cuda.core ...)")
    library = producer.library if producer is not None else library_of(array)
    try:
        info = _read(array, stream, producer, library)
    except _Refused as e:
        raise TypeError(f"{what}: {_subject(array, library)}: {e}") from None
    except MissingDependencyError:
        raise
    except Exception as e:  # noqa: BLE001 - a producer's broken attribute, named in one line
        raise TypeError(f"{what}: {_subject(array, library)}: cannot read it: {_failure(e)}") from None
    if producer is not None and producer.immutable and not info.readonly:
        return replace(info, readonly=True)
    return info


def _read(array, stream, producer, library) -> ArrayInfo:
    """The array read by its producer's reader or the protocols (``view``'s routes); raises _Refused."""
    if producer is not None and (producer.first == "always" or producer.first == "metadata" and stream == -1):
        return producer.read(array, stream)
    try:
        return _read_protocols(array, stream, library)
    except _MalformedExport as e:  # the export itself is broken: no other reader is asked
        raise _Refused(str(e)) from None
    except _Refused as refused:
        if producer is None:
            raise
        try:
            return producer.read(array, stream)
        except _Refused as e:
            raise _Refused(f"{e} (and {refused})") from None


def describe(array) -> ArrayInfo:
    """Shape, element strides, data type, pointer and device of an array (``view`` without stream ordering)."""
    return view(array)


def layout_mismatch(info: ArrayInfo, dims, strides) -> str | None:
    """None when ``info`` describes exactly a tensor's elements, else what differs (for a message).

    Accepted: the tensor's dims and strides, position by position (dimensions of size 1 may have any stride); an
    array in its own row-major order (strides not increasing: dense, or padded) with the same (size, stride) pairs
    in another order (an NHWC-shaped array for an NHWC tensor: the same memory); a flat 1-D contiguous buffer (its
    size is checked separately). A view out of its own row-major order (a transpose) is refused even where its
    pairs match: where sizes repeat, it would bind elements the tensor reads elsewhere. So is a row-major array
    whose shape is also the tensor's dims, position by position (its sizes repeat: a square matrix for a transposed
    operand, an NHWC array whose C, H and W are equal): read as the tensor's axes, its strides are not the tensor's,
    and nothing tells that reading from the memory-order one; a view with the tensor's strides binds."""
    dims, strides = tuple(int(d) for d in dims), tuple(int(s) for s in strides)
    shape, astrides = info.shape, info.strides
    if info.descending:
        return f"the array has negative strides {list(astrides)}"
    if len(shape) == 1 and info.contiguous:
        return None
    mine = [(n, s) for n, s in zip(shape, astrides) if n != 1]
    theirs = [(n, s) for n, s in zip(dims, strides) if n != 1]
    if mine == theirs:
        return None
    same_memory = sorted(mine) == sorted(theirs)
    if same_memory and all(a[1] >= b[1] for a, b in zip(mine, mine[1:])):  # in its own row-major order
        if [n for n, _ in mine] != [n for n, _ in theirs]:
            return None  # the tensor's memory, shaped in its memory order (an NHWC-shaped array)
        return (f"the array's shape {list(shape)} is the tensor's dims, but its strides {list(astrides)} (in "
                f"elements) are not the tensor's {list(strides)}: read as the tensor's axes it binds elements the "
                "tensor reads elsewhere, and its sizes repeat, so it cannot be told from the tensor's memory shaped "
                "in order either; bind a view with the tensor's strides (a channels-last tensor, x.permute(0, 3, 1, "
                "2) of an NHWC array, w.T of a weight)")
    if sorted(n for n, _ in mine) != sorted(n for n, _ in theirs):
        return f"the array's shape {list(shape)} is not the tensor's dims {list(dims)}"
    if same_memory:
        return (f"the array (shape {list(shape)}, strides {list(astrides)} in elements) is the tensor's memory in "
                f"another axis order; bind a view in the tensor's order (dims {list(dims)}, strides {list(strides)}: "
                "a permute/transpose of it) or a row-major array")
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
            D.CUDNN_DATA_INT32: np.int32, D.CUDNN_DATA_INT64: np.int64}
_STORAGE.update({dt: np.uint8 for dt in _FP8})
_STORAGE.update({dt: np.bool_ for dt in BOOLEAN_TYPES})  # BOOLEAN: one element a byte here, packed in memory
if "CUDNN_DATA_UINT32" in D.__members__:
    _STORAGE[D.CUDNN_DATA_UINT32] = np.uint32


def storage_dtype(data_type) -> np.dtype:
    """The numpy dtype that holds one element of ``data_type`` on the host (bfloat16: uint16 bits, fp8:
    uint8 codes, BOOLEAN: bool, packed in memory by ``memory_bytes``); TypeError for types without a plain
    per-element layout (int4, vectorized, complex)."""
    try:
        return np.dtype(_STORAGE[DataType(int(data_type))])
    except (KeyError, TypeError, ValueError):
        raise TypeError(f"no host storage for cuDNN data type {data_type!r}") from None


def memory_bytes(elements, data_type) -> np.ndarray:
    """The bytes in device memory of ``elements`` (a flat array in memory order, ``storage_dtype``): BOOLEAN
    packed eight elements a byte, least significant bit first (a last partial byte's high bits zero); every
    other type its storage's bytes."""
    elements = np.ascontiguousarray(elements).reshape(-1)
    if DataType(int(data_type)) in BIT_PACKED:
        return np.packbits(elements.astype(np.bool_, copy=False), bitorder="little")
    return elements.view(np.uint8)


def memory_elements(raw, data_type) -> np.ndarray:
    """The flat elements (``storage_dtype``, memory order) that the bytes ``raw`` hold: ``memory_bytes``'
    inverse, every element of each byte (eight a byte for BOOLEAN)."""
    raw = np.frombuffer(raw, dtype=np.uint8) if not isinstance(raw, np.ndarray) else raw.reshape(-1).view(np.uint8)
    dtype = storage_dtype(data_type)
    if DataType(int(data_type)) in BIT_PACKED:
        return np.unpackbits(raw, bitorder="little").view(np.bool_)
    return raw[:raw.nbytes // dtype.itemsize * dtype.itemsize].view(dtype)


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
    (``storage_dtype``), as the GPU converts: fp8 saturated to its largest finite value, fp16 and bfloat16 past
    theirs infinite, integers saturated to their range (NaN: 0); booleans are ``values != 0``."""
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
    if dtype.kind in "iu":
        info = np.iinfo(dtype)
        if values.dtype.kind in "biu":  # (integers are not taken through float64: they stay exact)
            return np.clip(values, info.min, info.max).astype(dtype)
        values = np.nan_to_num(np.rint(values.astype(np.float64)), nan=0.0)
        # int64's largest value has no float64: its bound rounds up to 2**63, which would wrap to the most negative
        past = values >= float(info.max)
        out = np.clip(np.where(past, 0.0, values), info.min, info.max).astype(dtype)
        return np.where(past, dtype.type(info.max), out)
    with np.errstate(over="ignore"):  # beyond fp16's range: infinity, as the hardware rounds
        return values.astype(dtype)


def as_stored(values, data_type) -> np.ndarray:
    """float64 ``values`` as a tensor of ``data_type`` holds them (``encode`` then ``decode``: rounded, saturated),
    in float64: what cuDNN writes, and what an operation reading a tensor the graph stores reads."""
    if DataType(int(data_type)) == D.CUDNN_DATA_DOUBLE:
        return np.asarray(values, dtype=np.float64)
    return np.asarray(decode(encode(values, data_type), data_type), dtype=np.float64)


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


# ------------------------------------------------------------------------------------------------
# a by-value scalar: one number in its type's bytes (what packs bind, and what Graph.scalar checks)
# ------------------------------------------------------------------------------------------------
_SCALAR_FORMAT = {
    D.CUDNN_DATA_FLOAT: "<f", D.CUDNN_DATA_DOUBLE: "<d", D.CUDNN_DATA_HALF: "<e", D.CUDNN_DATA_INT8: "<b",
    D.CUDNN_DATA_UINT8: "<B", D.CUDNN_DATA_INT32: "<i", D.CUDNN_DATA_INT64: "<q", D.CUDNN_DATA_BOOLEAN: "<?",
}
for _name, _fmt in (("CUDNN_DATA_UINT32", "<I"), ("CUDNN_DATA_BYTE_BOOLEAN", "<?")):
    if _name in D.__members__:
        _SCALAR_FORMAT[D[_name]] = _fmt
_FLOAT_LARGEST = {D.CUDNN_DATA_HALF: float(np.finfo(np.float16).max), D.CUDNN_DATA_FLOAT: float(np.finfo(np.float32).max),
                  D.CUDNN_DATA_DOUBLE: float(np.finfo(np.float64).max)}


@functools.cache
def _float8_table(data_type) -> np.ndarray:
    """The float64 value of each of the 256 codes of an 8-bit float type (NaN for a NaN code)."""
    return decode(np.arange(256, dtype=np.uint8), data_type)


def _beyond(value, data_type, what, why) -> ValueError:
    return ValueError(f"{what}: {value!r} does not fit in {data_type.name}{why}")


def _finite_past_double(value, as_float) -> bool:
    """Whether ``float()`` made a finite ``value`` infinite (a longdouble or a Decimal past a double's range)."""
    if not math.isinf(as_float):
        return False
    try:
        return bool(np.isfinite(value))
    except TypeError:  # (a Decimal)
        is_infinite = getattr(value, "is_infinite", None)
        return callable(is_infinite) and not is_infinite()


def scalar_code(value, data_type, what="scalar") -> bytes:
    """The bytes (little-endian) of one real number as a by-value scalar of ``data_type``, for every type with a host
    encoding (``storage_dtype``): rounded to nearest, ties to even, as ``encode`` rounds arrays, but refused (a
    ValueError naming ``what``) where it does not fit, never saturated, since a scalar is typed by hand: a value that
    rounds to infinity (half, bfloat16, float, double), one past the finite values of an 8-bit float (they saturate;
    fp8 E8M0 holds powers of two from 2**-127 to 2**127 only), an infinity the type has no code for, a fraction for an
    integer type. Variant packs bind this; ``Graph.scalar`` calls it as the graph is built, so a graph never holds a
    scalar its packs would refuse."""
    data_type = DataType(int(data_type))
    try:
        storage_dtype(data_type)
    except TypeError:
        raise TypeError(f"{what}: by-value scalars of {data_type.name} are not supported; pass the raw bytes") from None
    largest = _FLOAT_LARGEST.get(data_type)
    to_infinity = "" if largest is None else f" (it rounds to infinity; its largest finite value is {largest:g})"
    try:
        as_float = float(value)
    except OverflowError:  # an int beyond any float
        raise _beyond(value, data_type, what, to_infinity) from None
    if _finite_past_double(value, as_float):
        raise _beyond(value, data_type, what, to_infinity or " (it is past a double's range)")
    if data_type == D.CUDNN_DATA_BFLOAT16:
        code = None if math.isfinite(as_float) and abs(as_float) > _FLOAT_LARGEST[D.CUDNN_DATA_FLOAT] else \
            encode(np.float32(as_float), data_type)
        if code is None or (math.isfinite(as_float) and math.isinf(decode(code, data_type)[()])):
            raise _beyond(value, data_type, what, " (it rounds to infinity)")
        return code.tobytes()
    fmt = _SCALAR_FORMAT.get(data_type)
    if fmt is None:  # the 8-bit floats: the host holds their codes
        table = _float8_table(data_type)
        if math.isinf(as_float):
            codes = np.flatnonzero(table == as_float)
            if not codes.size:
                raise _beyond(value, data_type, what, ": it has no infinity")
            return bytes([int(codes[0])])
        finite = table[np.isfinite(table)]
        if not math.isnan(as_float) and not finite.min() <= as_float <= finite.max():
            raise _beyond(value, data_type, what, f" (its finite values are {finite.min():g} to {finite.max():g})")
        return encode(np.float64(as_float), data_type).tobytes()
    given = value
    if fmt[-1] == "?":
        if not isinstance(value, (bool, np.bool_)) and as_float not in (0.0, 1.0):  # (NaN and 0.5 are no truth value)
            raise ValueError(f"{what}: {value!r} is no truth value ({data_type.name} takes True, False, 0 or 1)")
        value = bool(value)
    elif fmt[-1] in "bBiIq":
        if isinstance(value, numbers.Integral):
            value = int(value)
        elif as_float.is_integer():
            value = int(as_float)
        else:
            raise ValueError(f"{what}: {value} is not an integer ({data_type.name})")
    else:
        value = as_float
    try:
        return struct.pack(fmt, value)
    except OverflowError as e:  # (struct rounds a half or a float to nearest, and refuses what rounds to infinity)
        raise _beyond(given, data_type, what, to_infinity or f" ({e})") from None
    except struct.error as e:
        raise _beyond(given, data_type, what, f" ({e})") from None


def scalar_of_code(raw: bytes, data_type):
    """The Python value of a by-value scalar's bytes (``scalar_code``'s inverse; bytes for a type without a host
    encoding)."""
    data_type = DataType(int(data_type)) if data_type is not None else D.CUDNN_DATA_FLOAT
    if data_type == D.CUDNN_DATA_BFLOAT16:
        return float(decode(np.frombuffer(raw[:2], "<u2"), data_type)[0])
    fmt = _SCALAR_FORMAT.get(data_type)
    if fmt is None and is_float(data_type):  # an 8-bit float's code
        return float(_float8_table(data_type)[raw[0]])
    if fmt is None:
        return bytes(raw)
    return struct.unpack(fmt, raw[:struct.calcsize(fmt)])[0]
