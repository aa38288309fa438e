# cython: language_level=3
"""Checked wrappers over the raw bindings: ``Handle`` and the generic backend ``Descriptor``.

Every call is checked against the generated attribute schema before cuDNN sees it (cuDNN aborts
the process on some misuse, e.g. a descriptor of the wrong type where a tensor is expected), and
every non-success status becomes a ``CudnnError`` carrying cuDNN's own message.
"""
import enum
import fractions
import numbers
import operator

import numpy as np

cimport cython

from cpython.bytes cimport PyBytes_AsString
from libc.stdint cimport int32_t, int64_t, intptr_t, uint8_t
from libc.stdlib cimport free, malloc
from libc.string cimport memcpy, memset

from cudnn_backend._bindings.cycudnn cimport *
from cudnn_backend._bindings cimport cycudnn

from cudnn_backend import schema as _schema
from cudnn_backend._bindings import _loader
from cudnn_backend._errors import CudnnBadParamError, CudnnUnsafeCallError, CudnnVersionError, make_error
from cudnn_backend._generated import enums as _enums
from cudnn_backend._generated.enums import AttributeName, AttributeType, DescriptorType

cdef enum:
    LAST_ERROR_SIZE = 4096


# ------------------------------------------------------------------------------------------------
# errors and versions
# ------------------------------------------------------------------------------------------------
def last_error_string():
    """cuDNN's message for the last failed call on this thread (cudnnGetLastErrorString)."""
    cdef char buf[LAST_ERROR_SIZE]
    buf[0] = 0
    cycudnn.cudnnGetLastErrorString(buf, LAST_ERROR_SIZE)
    return buf[:LAST_ERROR_SIZE].split(b"\0", 1)[0].decode("utf-8", "replace").strip()


cdef inline int clear_last_error() except -1:
    """cuDNN keeps the last message across successful calls (warnings too): read it away first, so
    an error is never explained by an older call's text."""
    cdef char buf[2]
    cycudnn.cudnnGetLastErrorString(buf, 2)
    return 0


cdef int raise_status(cudnnStatus_t status, str function, object descriptor_type=None, object attribute=None) except -1:
    if status == CUDNN_STATUS_SUCCESS:
        return 0
    raise make_error(<int>status, function, descriptor_type, attribute, last_error_string())


cdef dict _UNAVAILABLE = None  # enumerant name -> the version that introduced it, newer than the loaded cuDNN


cdef dict _unavailable():
    global _UNAVAILABLE
    if _UNAVAILABLE is None:
        loaded = _loader.load_cudnn().version
        _UNAVAILABLE = {name: since for name, since in _enums.SINCE.items() if _loader.parse_version(since) > loaded}
    return _UNAVAILABLE


def check_available(name, context=""):
    """Raise CudnnVersionError if the enumerant ``name`` is newer than the loaded cuDNN."""
    since = _unavailable().get(name)
    if since is not None:
        raise CudnnVersionError(name, since, _loader.load_cudnn().version_string, context)


def _as_enum(enum_cls, value, what):
    if isinstance(value, enum.Enum) and not isinstance(value, enum_cls):
        raise TypeError(f"{what}: expected a {enum_cls.__name__}, not {type(value).__name__}.{value.name}")
    if isinstance(value, str):
        try:
            return enum_cls[value]
        except KeyError:
            raise ValueError(f"{what}: {value!r} is not a {enum_cls.__name__} name") from None
    if isinstance(value, bool) or not isinstance(value, (int, numbers.Integral)):
        raise TypeError(f"{what}: expected a {enum_cls.__name__} member, its C name or an int, "
                        f"not {type(value).__name__}")
    try:
        return enum_cls(int(value))
    except ValueError:
        raise ValueError(f"{what}: {int(value)} is not a valid {enum_cls.__name__}") from None


# ------------------------------------------------------------------------------------------------
# Handle
# ------------------------------------------------------------------------------------------------
def _stream_to_int(stream):
    """An int, a cuda-bindings or cuda.core stream, anything with __cuda_stream__, or a torch stream."""
    if stream is None:
        return 0
    if hasattr(stream, "__cuda_stream__"):
        proto = stream.__cuda_stream__
        proto = proto() if callable(proto) else proto
        return int(proto[1])
    if hasattr(stream, "cuda_stream"):  # torch.cuda.Stream
        return int(stream.cuda_stream)
    if isinstance(stream, bool):
        raise TypeError("a stream must be an int, a CUDA stream object or None, not bool")
    try:
        return int(stream)  # ints and cuda-bindings CUstream / cudaStream_t
    except (TypeError, ValueError):
        raise TypeError(f"cannot use {type(stream).__name__} as a CUDA stream") from None


cdef class Handle:
    """A cuDNN handle (cudnnCreate/cudnnDestroy); needs a GPU.

    ``device`` selects the CUDA device first (through cuda-bindings) when given.
    """

    def __cinit__(self):
        self._handle = NULL
        self._stream_ref = None

    def __init__(self, device=None):
        cdef cudnnStatus_t status
        cdef cudnnHandle_t h = NULL
        if self._handle != NULL:
            raise TypeError("this Handle is already created; make a new Handle")
        self.device = device
        if device is not None:
            from cuda.bindings import runtime as cudart

            err, = cudart.cudaSetDevice(int(device))
            if int(err) != 0:
                raise RuntimeError(f"cudaSetDevice({device}) failed: {err!r}")
        with nogil:
            status = cycudnn.cudnnCreate(&h)
        raise_status(status, "cudnnCreate")
        self._handle = h

    def __dealloc__(self):
        # Only C calls here: safe during interpreter shutdown (the library is never unloaded).
        if self._handle != NULL:
            cycudnn.cudnnDestroy(self._handle)
            self._handle = NULL

    def close(self):
        """Destroy the handle now; idempotent."""
        cdef cudnnStatus_t status
        if self._handle != NULL:
            if self._busy:
                raise RuntimeError("this Handle is in use by a cuDNN call on another thread; close it after that")
            with nogil:
                status = cycudnn.cudnnDestroy(self._handle)
            self._handle = NULL
            self._stream_ref = None
            raise_status(status, "cudnnDestroy")

    @property
    def closed(self):
        return self._handle == NULL

    @property
    def ptr(self):
        """The raw cudnnHandle_t as an int."""
        return <intptr_t>self._handle

    cdef int _need_open(self) except -1:
        if self._handle == NULL:
            raise ValueError("this Handle is closed")
        return 0

    @property
    def stream(self):
        """The CUDA stream cuDNN launches on, as an int (0: the legacy default stream)."""
        cdef cudaStream_t s = NULL
        cdef cudnnStatus_t status
        self._need_open()
        self._busy += 1
        try:
            with nogil:
                status = cycudnn.cudnnGetStream(self._handle, &s)
        finally:
            self._busy -= 1
        raise_status(status, "cudnnGetStream")
        return <intptr_t>s

    @stream.setter
    def stream(self, value):
        cdef cudnnStatus_t status
        cdef intptr_t s = _stream_to_int(value)
        self._need_open()
        self._busy += 1
        try:
            with nogil:
                status = cycudnn.cudnnSetStream(self._handle, <cudaStream_t>s)
        finally:
            self._busy -= 1
        raise_status(status, "cudnnSetStream")
        self._stream_ref = value  # keep the stream object alive while the handle uses it

    def __enter__(self):
        return self

    def __exit__(self, *exc):
        self.close()

    def __repr__(self):
        state = "closed" if self._handle == NULL else f"0x{<intptr_t>self._handle:x}"
        return f"<cudnn_backend.Handle {state} device={self.device}>"


# ------------------------------------------------------------------------------------------------
# attribute value conversion
# ------------------------------------------------------------------------------------------------
# element kind of each attribute type
cdef dict _KIND = {}
for _t in AttributeType:
    _KIND[int(_t)] = "enum" if _t.name in _enums.ATTRIBUTE_TYPE_ENUM else None
_KIND.update({
    int(CUDNN_TYPE_HANDLE): "handle",
    int(CUDNN_TYPE_BOOLEAN): "bool",
    int(CUDNN_TYPE_INT64): "int64",
    int(CUDNN_TYPE_INT32): "int32",
    int(CUDNN_TYPE_FLOAT): "float",
    int(CUDNN_TYPE_DOUBLE): "double",
    int(CUDNN_TYPE_VOID_PTR): "ptr",
    int(CUDNN_TYPE_CHAR): "char",
    int(CUDNN_TYPE_FRACTION): "fraction",
    int(CUDNN_TYPE_BACKEND_DESCRIPTOR): "descriptor",
})

cdef dict _SIZE = {
    "handle": sizeof(cudnnHandle_t), "bool": sizeof(uint8_t), "int64": sizeof(int64_t), "int32": sizeof(int32_t),
    "float": sizeof(float), "double": sizeof(double), "ptr": sizeof(void*), "char": sizeof(char),
    "fraction": sizeof(cudnnFraction_t), "enum": sizeof(int32_t), "descriptor": sizeof(cudnnBackendDescriptor_t),
}


def _enum_class_of(attribute_type):
    return getattr(_enums, _enums.ATTRIBUTE_TYPE_ENUM[AttributeType(attribute_type).name])


cdef dict _ENUM_TABLES = {}  # attribute type -> (enum class, valid values, {newer-than-loaded value: name})


def _enum_value(attribute_type, v, what):
    """An enum-typed element as an int, checked against its enum and the loaded cuDNN's version."""
    table = _ENUM_TABLES.get(attribute_type)
    if table is None:
        enum_cls = _enum_class_of(attribute_type)
        unavailable = _unavailable()
        table = (enum_cls, frozenset(int(m) for m in enum_cls),
                 {int(m): m.name for m in enum_cls if m.name in unavailable})
        _ENUM_TABLES[attribute_type] = table
    enum_cls, valid, newer = table
    if type(v) is not int and not isinstance(v, enum_cls):
        v = _as_enum(enum_cls, v, what)
    i = int(v)
    if i not in valid:
        raise ValueError(f"{what}: {i} is not a valid {enum_cls.__name__}")
    if i in newer:
        check_available(newer[i], what)
    return i


cdef enum:
    _INLINE_BYTES = 128  # most attribute arrays fit: no malloc for them


@cython.freelist(16)
cdef class _Buffer:
    """The element array of one Set/GetAttribute call (inline when small, else malloc'ed)."""
    cdef char* data
    cdef Py_ssize_t nbytes
    cdef char inline_data[_INLINE_BYTES]

    def __cinit__(self, Py_ssize_t nbytes):
        self.nbytes = nbytes
        if nbytes <= _INLINE_BYTES:
            self.data = self.inline_data
        else:
            self.data = <char*>malloc(nbytes)
            if self.data == NULL:
                raise MemoryError()
        memset(self.data, 0, nbytes if nbytes > 0 else 1)

    def __dealloc__(self):
        if self.data != self.inline_data:
            free(self.data)


cdef object _as_sequence(object values, str kind):
    cdef type t = type(values)
    if kind == "char":
        return values
    if kind == "fraction" and t is tuple and len(values) == 2 and all(
            isinstance(v, numbers.Integral) for v in values):
        return [values]
    if t is list or t is tuple:
        return values
    if t is int or t is float or t is bool or isinstance(values, int):
        return (values,)
    if isinstance(values, (str, bytes)) or not hasattr(values, "__len__") and not hasattr(values, "__iter__"):
        return [values]
    if isinstance(values, np.ndarray):
        return values.reshape(-1).tolist()
    return list(values)


MAX_GET_ELEMENTS = 1 << 24  # a get() asks for at most this many elements
MAX_GET_DESCRIPTORS = 1 << 14  # ... and at most this many child descriptors
INT64_MIN, INT64_MAX = -(1 << 63), (1 << 63) - 1


def _int_value(v, what):
    if isinstance(v, bool):
        raise TypeError(f"{what}: expected an integer, not bool")
    try:
        return operator.index(v)
    except TypeError:
        raise TypeError(f"{what}: expected an integer, not {type(v).__name__}") from None


def _real_value(v, what):
    if isinstance(v, bool) or not isinstance(v, numbers.Real):
        raise TypeError(f"{what}: expected a real number, not {type(v).__name__}")
    try:
        return float(v)
    except OverflowError:
        raise ValueError(f"{what}: {v} does not fit in a double") from None


def _int64_value(v, what):
    """An int that fits in int64_t (ValueError otherwise, never OverflowError)."""
    i = _int_value(v, what)
    if i < INT64_MIN or i > INT64_MAX:
        raise ValueError(f"{what}: {i} does not fit in 64 bits")
    return i


_STOLL = None  # what std::stoll reads: optional leading white space, a sign, digits


def _check_serialized_graph(text, what):
    """cuDNN 9.19 kills the process (an uncaught std::stoll exception, or a segfault) deserializing a
    plan or kernel cache whose operationGraph has tensors/nodes that are not arrays, or tensor names
    that are not integers: refuse those here. Text that is not JSON at all cuDNN rejects cleanly."""
    global _STOLL
    import json
    import re

    if _STOLL is None:
        _STOLL = re.compile(r"[ \t\n\v\f\r]*([+-]?[0-9]+)")
    if isinstance(text, (bytes, bytearray, memoryview)):
        text = bytes(text).decode("utf-8", "replace")
    try:
        doc = json.loads(text)
    except (ValueError, RecursionError):
        return
    graph = doc.get("operationGraph") if isinstance(doc, dict) else None
    if not isinstance(graph, dict):
        return
    tensors, nodes = graph.get("tensors"), graph.get("nodes")
    for key, value in (("tensors", tensors), ("nodes", nodes)):
        if value is not None and not isinstance(value, list) and value:
            raise CudnnUnsafeCallError(f"{what}: operationGraph.{key} must be an array (cuDNN 9.19 crashes on this)")
    names = [t.get("name") for t in (tensors or []) if isinstance(t, dict)]

    def references(o):
        if isinstance(o, dict):
            for v in o.values():
                yield from references(v)
        elif isinstance(o, list):
            for v in o:
                yield from references(v)
        elif isinstance(o, str) and not o.startswith("CUDNN_"):  # enumerant names (op types, modes) are not tensors
            yield o

    for name in names + list(references(nodes or [])):
        if not isinstance(name, str):
            continue
        m = _STOLL.match(name)
        if m is None or not (INT64_MIN <= int(m.group(1)) <= INT64_MAX):
            raise CudnnUnsafeCallError(f"{what}: tensor name {name!r} in operationGraph is not an integer UID "
                                       "(cuDNN 9.19 aborts the process deserializing it)")


def _host_copies(items, what, keep):
    """For host-data VOID_PTR attributes: copy each bytes-like value, keep the copy, pass its address."""
    addresses = []
    for v in items:
        if isinstance(v, numbers.Integral) and not isinstance(v, bool) or v is None:
            raise TypeError(f"{what}: cuDNN reads host memory at this address; pass the value's bytes "
                            f"(bytes, bytearray or a numpy value), not a raw pointer")
        try:
            copy = np.frombuffer(bytes(memoryview(np.asarray(v) if not isinstance(v, (bytes, bytearray, memoryview))
                                                  else v)), dtype=np.uint8).copy()
        except (TypeError, ValueError):
            raise TypeError(f"{what}: expected bytes-like host data, not {type(v).__name__}") from None
        if copy.size == 0:
            raise ValueError(f"{what}: empty host data")
        keep.append(copy)
        addresses.append(int(copy.ctypes.data))
    return addresses


cdef _Buffer _pack(str kind, object items, object attribute_type, str what, list keep):
    """Convert Python values to a C array of the attribute type's elements."""
    cdef Py_ssize_t i, n
    cdef _Buffer buf
    cdef bytes raw
    cdef int64_t i64
    cdef cudnnFraction_t* fr
    cdef Descriptor d
    cdef Handle h
    if kind == "char":
        if isinstance(items, str):
            raw = items.encode("utf-8")
        elif isinstance(items, (bytes, bytearray, memoryview)):
            raw = bytes(items)
        else:
            raise TypeError(f"{what}: CUDNN_TYPE_CHAR takes str or bytes, not {type(items).__name__}")
        buf = _Buffer(len(raw))
        if len(raw):
            memcpy(buf.data, PyBytes_AsString(raw), len(raw))
        return buf
    n = len(items)
    buf = _Buffer(n * _SIZE[kind])
    for i in range(n):
        v = items[i]
        if kind == "int64":
            if type(v) is int and INT64_MIN <= v <= INT64_MAX:
                i64 = v
            else:
                i64 = _int64_value(v, what)
            (<int64_t*>buf.data)[i] = i64
        elif kind == "int32" or kind == "enum":
            if kind == "enum":
                v = _enum_value(attribute_type, v, what)
            i64 = _int64_value(v, what)
            if i64 < -2147483648 or i64 > 2147483647:
                raise ValueError(f"{what}: {i64} does not fit in 32 bits")
            (<int32_t*>buf.data)[i] = <int32_t>i64
        elif kind == "bool":
            is_np_bool = type(v).__module__ == "numpy" and type(v).__name__ in ("bool_", "bool")  # np.bool_
            if not (isinstance(v, bool) or is_np_bool or (isinstance(v, int) and v in (0, 1))):
                raise TypeError(f"{what}: expected a bool, not {v!r}")
            (<uint8_t*>buf.data)[i] = 1 if v else 0
        elif kind == "float":
            (<float*>buf.data)[i] = <float>(v if type(v) is float else _real_value(v, what))  # inf beyond float32
        elif kind == "double":
            (<double*>buf.data)[i] = v if type(v) is float else _real_value(v, what)
        elif kind == "ptr":
            if v is None:
                i64 = 0
            else:
                i64 = _int64_value(v, what)
            (<void**>buf.data)[i] = <void*><intptr_t>i64
        elif kind == "fraction":
            if isinstance(v, fractions.Fraction):
                num, den = _int64_value(v.numerator, what), _int64_value(v.denominator, what)
            elif isinstance(v, tuple) and len(v) == 2:
                num, den = _int64_value(v[0], what), _int64_value(v[1], what)
            else:
                raise TypeError(f"{what}: CUDNN_TYPE_FRACTION takes fractions.Fraction or (numerator, denominator)")
            fr = &(<cudnnFraction_t*>buf.data)[i]
            fr.numerator = num
            fr.denominator = den
        elif kind == "handle":
            if not isinstance(v, Handle):
                raise TypeError(f"{what}: CUDNN_TYPE_HANDLE takes a cudnn_backend.Handle, not {type(v).__name__}")
            h = <Handle>v
            if h._handle == NULL:
                raise ValueError(f"{what}: the Handle is closed")
            (<cudnnHandle_t*>buf.data)[i] = h._handle
            keep.append(h)
        elif kind == "descriptor":
            if not isinstance(v, Descriptor):
                raise TypeError(f"{what}: CUDNN_TYPE_BACKEND_DESCRIPTOR takes cudnn_backend.Descriptor objects, "
                                f"not {type(v).__name__}")
            d = <Descriptor>v
            if d._ptr == NULL:
                raise ValueError(f"{what}: element {i} ({DescriptorType(d._dtype).name}) is closed")
            (<cudnnBackendDescriptor_t*>buf.data)[i] = d._ptr
            keep.append(d)
        else:
            raise TypeError(f"{what}: attribute type {AttributeType(attribute_type).name} cannot be converted")
    return buf


cdef list _unpack(str kind, _Buffer buf, Py_ssize_t n, object attribute_type, list children):
    cdef Py_ssize_t i
    cdef list out = []
    cdef cudnnFraction_t fr
    enum_cls = _enum_class_of(attribute_type) if kind == "enum" else None
    for i in range(n):
        if kind == "int64":
            out.append((<int64_t*>buf.data)[i])
        elif kind == "int32":
            out.append((<int32_t*>buf.data)[i])
        elif kind == "enum":
            v = (<int32_t*>buf.data)[i]
            try:
                out.append(enum_cls(v))
            except ValueError:  # a value newer than our header
                out.append(v)
        elif kind == "bool":
            out.append(bool((<uint8_t*>buf.data)[i]))
        elif kind == "float":
            out.append((<float*>buf.data)[i])
        elif kind == "double":
            out.append((<double*>buf.data)[i])
        elif kind == "ptr":
            out.append(<intptr_t>(<void**>buf.data)[i])
        elif kind == "fraction":
            fr = (<cudnnFraction_t*>buf.data)[i]
            out.append((fr.numerator, fr.denominator))
        elif kind == "descriptor":
            out.append(children[i])
        elif kind == "handle":
            out.append(<intptr_t>(<cudnnHandle_t*>buf.data)[i])
    return out


# ------------------------------------------------------------------------------------------------
# Descriptor
# ------------------------------------------------------------------------------------------------
def _check_finalize_preconditions(dtype, set_attributes):
    """Finalize calls cuDNN is known to crash on, refused first."""
    A = AttributeName
    if dtype == DescriptorType.CUDNN_BACKEND_ENGINECFG_DESCRIPTOR:
        if int(A.CUDNN_ATTR_ENGINECFG_ENGINE) not in set_attributes:
            # cuDNN 9.19 segfaults finalizing an engine config without an engine
            raise CudnnUnsafeCallError("CUDNN_BACKEND_ENGINECFG_DESCRIPTOR cannot be finalized without "
                                       "CUDNN_ATTR_ENGINECFG_ENGINE")
    if dtype == DescriptorType.CUDNN_BACKEND_EXECUTION_PLAN_DESCRIPTOR:
        has = lambda a: int(a) in set_attributes  # noqa: E731
        if not has(A.CUDNN_ATTR_EXECUTION_PLAN_ENGINE_CONFIG):
            if not has(A.CUDNN_ATTR_EXECUTION_PLAN_JSON_REPRESENTATION):
                raise ValueError("CUDNN_BACKEND_EXECUTION_PLAN_DESCRIPTOR cannot be finalized: set "
                                 "CUDNN_ATTR_EXECUTION_PLAN_ENGINE_CONFIG, or CUDNN_ATTR_EXECUTION_PLAN_JSON_REPRESENTATION "
                                 "to deserialize a plan")
            if not (has(A.CUDNN_ATTR_EXECUTION_PLAN_HANDLE) or has(A.CUDNN_ATTR_EXECUTION_PLAN_DEVICEPROP)):
                # cuDNN 9.19 crashes (SIGSEGV) deserializing a plan with neither
                raise CudnnUnsafeCallError("a plan deserialized from JSON needs CUDNN_ATTR_EXECUTION_PLAN_HANDLE or "
                                           "CUDNN_ATTR_EXECUTION_PLAN_DEVICEPROP before finalize")


_descriptor_classes = {}  # DescriptorType -> class that get() instantiates for child descriptors


def register_descriptor_class(descriptor_type, cls):
    """Make ``get`` return ``cls`` instances for children of this descriptor type (used by the typed layer)."""
    _descriptor_classes[DescriptorType(descriptor_type)] = cls


cdef dict _SPEC_CACHE = {}
cdef dict _SET_CACHE = {}
cdef set _CREATABLE = set()  # descriptor type values already validated (exist and are available)
cdef dict _REQUIRED = {}  # descriptor type value -> tuple of required attribute values


cdef object _call_key(int dtype, object attribute, object attribute_type):
    """A cache key for (descriptor type, attribute, attribute type): one int when both are small
    non-negative ints (IntEnum's Python-level __hash__ would cost more than the cuDNN call),
    else the tuple itself."""
    cdef long long a, t
    if ((type(attribute) is int or type(attribute) is AttributeName)
            and (type(attribute_type) is int or type(attribute_type) is AttributeType)):
        try:
            a = attribute
            t = attribute_type
        except OverflowError:
            return (dtype, attribute, attribute_type)
        if 0 <= a < 0x7FFFFFFF and 0 <= t < 0xFF:
            return ((<long long>dtype) << 40) | (a << 8) | t
    return (dtype, attribute, attribute_type)


cdef inline void _hold(Descriptor d, list children, int delta):
    """Count a cuDNN call in flight on ``d`` and on the descriptors/handles it reads (see close())."""
    d._busy += delta
    for c in children:
        if isinstance(c, Descriptor):
            (<Descriptor>c)._busy += delta
        elif isinstance(c, Handle):
            (<Handle>c)._busy += delta


cdef inline bint _cacheable(object key, object attribute, object attribute_type):
    """Whether validation of these arguments may be cached: the packed int key, or exact ints/strs only
    (a float or bool equal to a valid value must never hit a cached entry)."""
    if type(key) is not tuple:
        return True
    return (type(attribute) is str or type(attribute) is int) and (
        type(attribute_type) is str or type(attribute_type) is int)


cdef class Descriptor:
    """A cuDNN backend descriptor of one ``CUDNN_BACKEND_*_DESCRIPTOR`` type.

    Created by ``cudnnBackendCreateDescriptor`` and destroyed when collected or on ``close()``.
    ``set``/``get`` take C attribute names (``CUDNN_ATTR_*``) and attribute types (``CUDNN_TYPE_*``)
    and are checked against the schema before cuDNN is called. Children set on a descriptor stay
    alive as long as it does.
    """

    def __cinit__(self, *args, **kwargs):
        self._ptr = NULL
        self._dtype = -1
        self._finalized = False
        self._children = {}
        self._set_attributes = set()

    def __init__(self, descriptor_type):
        cdef cudnnStatus_t status
        cdef cudnnBackendDescriptor_t p = NULL
        cdef cudnnBackendDescriptorType_t c_dtype
        cdef int dt
        if self._ptr != NULL:
            raise TypeError(f"this {DescriptorType(self._dtype).name} is already created; make a new Descriptor")
        if (type(descriptor_type) is int or type(descriptor_type) is DescriptorType) and descriptor_type in _CREATABLE:
            dt = descriptor_type  # validated before: skip the enum round trip
        else:
            dtype = _as_enum(DescriptorType, descriptor_type, "descriptor type")
            check_available(dtype.name, "descriptor type")
            dt = int(dtype)
            _CREATABLE.add(dt)
        c_dtype = <cudnnBackendDescriptorType_t>dt
        with nogil:
            status = cycudnn.cudnnBackendCreateDescriptor(c_dtype, &p)
        if status != CUDNN_STATUS_SUCCESS:
            raise_status(status, "cudnnBackendCreateDescriptor", DescriptorType(dt))
        self._ptr = p
        self._dtype = dt

    def __dealloc__(self):
        # Only a C call: safe during interpreter shutdown (the library is never unloaded). Children
        # are released after this, when the dict is cleared, so a parent never outlives them.
        if self._ptr != NULL:
            cycudnn.cudnnBackendDestroyDescriptor(self._ptr)
            self._ptr = NULL

    def close(self):
        """Destroy the descriptor now and release its children; idempotent."""
        cdef cudnnStatus_t status
        if self._ptr != NULL:
            if self._busy:
                raise RuntimeError(f"this {DescriptorType(self._dtype).name} is in use by a cuDNN call on another "
                                   "thread; close it after that")
            with nogil:
                status = cycudnn.cudnnBackendDestroyDescriptor(self._ptr)
            self._ptr = NULL
            self._children = {}
            raise_status(status, "cudnnBackendDestroyDescriptor", self.descriptor_type)

    def __enter__(self):
        return self

    def __exit__(self, *exc):
        self.close()

    cdef int _check_open(self) except -1:
        if self._ptr == NULL:
            raise ValueError(f"this {DescriptorType(self._dtype).name if self._dtype >= 0 else 'descriptor'} is closed")
        return 0

    @property
    def descriptor_type(self):
        return DescriptorType(self._dtype)

    @property
    def finalized(self):
        return self._finalized

    @property
    def closed(self):
        return self._ptr == NULL

    @property
    def ptr(self):
        """The raw cudnnBackendDescriptor_t as an int (for interop)."""
        return <intptr_t>self._ptr

    @property
    def children(self):
        """{attribute: tuple of objects this descriptor keeps alive for it}."""
        return {AttributeName(k): v for k, v in self._children.items()}

    @property
    def set_attributes(self):
        """The attributes set through ``set`` (in no particular order)."""
        return frozenset(AttributeName(a) for a in self._set_attributes)

    def _spec(self, attribute, attribute_type, str action):
        """Validate (attribute, attribute_type) for this descriptor; return (spec, attr, atype, kind, what).

        Successful validations are cached per (descriptor type, attribute, attribute type)."""
        key = _call_key(self._dtype, attribute, attribute_type)
        cacheable = _cacheable(key, attribute, attribute_type)
        if cacheable:
            entry = _SPEC_CACHE.get(key)
            if entry is not None:
                return entry
        entry = self._validate_spec(attribute, attribute_type)
        if cacheable:
            _SPEC_CACHE[key] = entry
        return entry

    def _validate_spec(self, attribute, attribute_type):
        attr = _as_enum(AttributeName, attribute, "attribute")
        dtype = DescriptorType(self._dtype)
        what = f"{dtype.name}.{attr.name}"
        atype = _as_enum(AttributeType, attribute_type, f"{what}: attribute type")
        spec = _schema.ATTRIBUTES[attr]
        if spec.descriptor != dtype:
            raise ValueError(f"{attr.name} is an attribute of {spec.descriptor.name}, not of {dtype.name}")
        if atype not in spec.types:
            raise TypeError(f"{what} takes attribute type {' or '.join(t.name for t in spec.types)}, not {atype.name}")
        check_available(attr.name, what)
        check_available(atype.name, what)
        kind = _KIND.get(int(atype))
        if kind is None:
            raise TypeError(f"{what}: attribute type {atype.name} is not supported")
        return spec, attr, atype, kind, what

    def set(self, attribute, attribute_type, values):
        """cudnnBackendSetAttribute: ``values`` is one value or a sequence (str/bytes for CUDNN_TYPE_CHAR)."""
        cdef cudnnStatus_t status
        cdef _Buffer buf
        cdef int64_t n
        cdef int c_attr_i
        cdef cudnnBackendAttributeName_t c_attr
        cdef cudnnBackendAttributeType_t c_type
        cdef tuple plan
        self._check_open()
        key = _call_key(self._dtype, attribute, attribute_type)
        cacheable = _cacheable(key, attribute, attribute_type)
        plan = <tuple>_SET_CACHE.get(key) if cacheable else None
        if plan is None:
            plan = self._set_plan(attribute, attribute_type)
            if cacheable:
                _SET_CACHE[key] = plan
        attr, atype, kind, what, count_min, count_max, accepts, host_data = plan
        if attr == CUDNN_ATTR_EXECUTION_PLAN_JSON_REPRESENTATION or attr == CUDNN_ATTR_KERNEL_CACHE_JSON_REPRESENTATION:
            _check_serialized_graph(values, what)
        if self._finalized:
            raise ValueError(f"{what}: the descriptor is already finalized; set attributes before finalize()")
        items = _as_sequence(values, kind)
        keep = []
        if host_data:
            items = _host_copies(items, what, keep)
        buf = _pack(kind, items, atype, what, keep)
        n = buf.nbytes // _SIZE[kind]
        if kind != "char" and (n < count_min or (count_max is not None and n > count_max)):
            raise ValueError(f"{what} takes {_schema.ATTRIBUTES[attr].count_text()} element(s), got {n}")
        if kind == "descriptor":
            for i, child in enumerate(keep):
                cdtype = (<Descriptor>child)._dtype
                if accepts is not None and cdtype not in accepts:
                    raise TypeError(f"{what} takes {' or '.join(DescriptorType(t).name for t in sorted(accepts))}, "
                                    f"element {i} is a {DescriptorType(cdtype).name}")
                if not (<Descriptor>child)._finalized:
                    raise ValueError(f"{what}: element {i} ({DescriptorType(cdtype).name}) is not finalized; "
                                     "finalize it first")
        c_attr_i = attr
        c_attr = <cudnnBackendAttributeName_t>c_attr_i
        c_type = <cudnnBackendAttributeType_t><int>atype
        _hold(self, keep, 1)  # the children cuDNN reads must not be closed meanwhile either
        try:
            with nogil:
                status = cycudnn.cudnnBackendSetAttribute(self._ptr, c_attr, c_type, n, buf.data)
        finally:
            _hold(self, keep, -1)
        if status != CUDNN_STATUS_SUCCESS:
            raise_status(status, "cudnnBackendSetAttribute", DescriptorType(self._dtype), AttributeName(attr))
        if keep:
            self._children[attr] = tuple(keep)
        elif self._children:
            self._children.pop(attr, None)
        self._set_attributes.add(attr)

    def _set_plan(self, attribute, attribute_type):
        """What set() needs to know, validated once per (descriptor type, attribute, attribute type)."""
        spec, attr, atype, kind, what = self._spec(attribute, attribute_type, "set")
        if not spec.settable:
            raise ValueError(f"{what} is get-only")
        if spec.set_unsupported:
            raise CudnnUnsafeCallError(f"{what} cannot be set from Python: {spec.set_unsupported}")
        accepts = None if spec.accepts is None else frozenset(int(t) for t in spec.accepts)
        return (int(attr), atype, kind, what, spec.count_min, spec.count_max, accepts, spec.host_data)

    def element_count(self, attribute, attribute_type):
        """How many elements cuDNN holds for an attribute (GetAttribute with requestedElementCount 0)."""
        cdef cudnnStatus_t status
        cdef int64_t count = 0
        cdef cudnnBackendAttributeName_t c_attr
        cdef cudnnBackendAttributeType_t c_type
        self._check_open()
        spec, attr, atype, kind, what = self._spec(attribute, attribute_type, "get")
        if spec.get_unsupported:
            raise CudnnUnsafeCallError(f"{what} cannot be read with get(): {spec.get_unsupported}")
        c_attr = <cudnnBackendAttributeName_t><int>attr
        c_type = <cudnnBackendAttributeType_t><int>(spec.get_type if spec.get_type is not None else atype)
        clear_last_error()
        self._busy += 1
        try:
            with nogil:
                status = cycudnn.cudnnBackendGetAttribute(self._ptr, c_attr, c_type, 0, &count, NULL)
        finally:
            self._busy -= 1
        raise_status(status, "cudnnBackendGetAttribute", DescriptorType(self._dtype), attr)
        return count

    def get(self, attribute, attribute_type, count=None, descriptor_type=None):
        """cudnnBackendGetAttribute: a list of values (a str for CUDNN_TYPE_CHAR).

        ``count=None`` asks cuDNN for the element count first. For descriptor-valued attributes
        the children are created here, of the schema's descriptor type, or of ``descriptor_type``
        where the attribute accepts several.
        """
        cdef cudnnStatus_t status
        cdef _Buffer buf
        cdef int64_t requested, got = 0
        cdef cudnnBackendAttributeName_t c_attr
        cdef cudnnBackendAttributeType_t c_type
        cdef Descriptor child
        cdef Py_ssize_t i
        self._check_open()
        spec, attr, atype, kind, what = self._spec(attribute, attribute_type, "get")
        if spec.get_unsupported:
            raise CudnnUnsafeCallError(f"{what} cannot be read with get(): {spec.get_unsupported}")
        if count is None and spec.get_max_count:
            requested = spec.get_max_count
        elif count is None:
            try:
                requested = self.element_count(attr, atype)
            except CudnnBadParamError:
                # some attributes refuse the count query (BAD_PARAM) but answer a sized get
                if spec.count_max is None:
                    raise
                requested = spec.count_max
        else:
            py_count = _int_value(count, f"{what}: count")
            if py_count < 0:
                raise ValueError(f"{what}: count must be >= 0, got {py_count}")
            # no attribute holds more: refuse before allocating (or creating child descriptors for) them
            limit = MAX_GET_DESCRIPTORS if kind == "descriptor" else MAX_GET_ELEMENTS
            if py_count > limit:
                raise ValueError(f"{what}: count {py_count} is too large (at most {limit})")
            requested = py_count
        children = []
        if kind == "descriptor":
            if descriptor_type is None:
                if spec.accepts is None or len(spec.accepts) != 1:
                    raise TypeError(f"{what} can hold several descriptor types "
                                    f"({', '.join(t.name for t in spec.accepts or ())}); pass descriptor_type=")
                child_type = spec.accepts[0]
            else:
                child_type = _as_enum(DescriptorType, descriptor_type, f"{what}: descriptor_type")
                if spec.accepts is not None and child_type not in spec.accepts:
                    raise TypeError(f"{what} holds {' or '.join(t.name for t in spec.accepts)}, not {child_type.name}")
            cls = _descriptor_classes.get(child_type)
            for i in range(requested):
                children.append(cls.__new__(cls) if cls is not None else Descriptor(child_type))
                if cls is not None:
                    Descriptor.__init__(children[i], child_type)
        # cuDNN's Get of a few attributes wants another attribute type of the same values
        transport = spec.get_type if spec.get_type is not None else atype
        elem = max(_SIZE[kind], _SIZE[_KIND[int(transport)]])
        buf = _Buffer(requested * elem + (1 if kind == "char" else 0))
        if kind == "descriptor":
            for i in range(requested):
                child = <Descriptor>children[i]
                (<cudnnBackendDescriptor_t*>buf.data)[i] = child._ptr
        c_attr = <cudnnBackendAttributeName_t><int>attr
        c_type = <cudnnBackendAttributeType_t><int>transport
        clear_last_error()
        self._busy += 1
        try:
            with nogil:
                status = cycudnn.cudnnBackendGetAttribute(self._ptr, c_attr, c_type, requested, &got,
                                                          <void*>buf.data if requested > 0 else NULL)
        finally:
            self._busy -= 1
        raise_status(status, "cudnnBackendGetAttribute", DescriptorType(self._dtype), attr)
        n = min(got, requested)
        if elem != _SIZE[kind] and n > 1:
            raise CudnnUnsafeCallError(f"{what}: multi-element get through {AttributeType(transport).name}")
        if kind == "char":
            return buf.data[:n].split(b"\0", 1)[0].decode("utf-8", "replace")
        if kind == "descriptor":
            for i in range(n):
                # cuDNN filled these in; they are as finalized as their parent's contents
                (<Descriptor>children[i])._finalized = True
            for i in range(n, requested):
                (<Descriptor>children[i]).close()
        return _unpack(kind, buf, n, atype, children[:n])

    def finalize(self, check_required=True):
        """cudnnBackendFinalize, after checking that the schema's required attributes were set."""
        cdef cudnnStatus_t status
        cdef tuple required
        self._check_open()
        if self._finalized:
            raise ValueError(f"this {DescriptorType(self._dtype).name} is already finalized")
        if check_required:
            required = _REQUIRED.get(self._dtype)
            if required is None:
                required = _REQUIRED[self._dtype] = tuple(
                    int(a) for a in _schema.DESCRIPTORS[DescriptorType(self._dtype)].required)
            for a in required:
                if a not in self._set_attributes:
                    missing = [AttributeName(m).name for m in required if m not in self._set_attributes]
                    raise ValueError(f"{DescriptorType(self._dtype).name} cannot be finalized: required attribute(s) "
                                     f"not set: {', '.join(missing)}")
        if self._dtype == CUDNN_BACKEND_EXECUTION_PLAN_DESCRIPTOR or self._dtype == CUDNN_BACKEND_ENGINECFG_DESCRIPTOR:
            _check_finalize_preconditions(DescriptorType(self._dtype), self._set_attributes)
        self._busy += 1
        try:
            with nogil:
                status = cycudnn.cudnnBackendFinalize(self._ptr)
        finally:
            self._busy -= 1
        if status != CUDNN_STATUS_SUCCESS:
            raise_status(status, "cudnnBackendFinalize", DescriptorType(self._dtype))
        # cuDNN keeps warnings of a successful finalize as its "last error": read them away now, so a
        # later failure is never explained by this call's text
        clear_last_error()
        self._finalized = True
        return self

    def __repr__(self):
        name = DescriptorType(self._dtype).name if self._dtype >= 0 else "?"
        state = "closed" if self._ptr == NULL else ("finalized" if self._finalized else "not finalized")
        return f"<cudnn_backend.Descriptor {name} {state} at 0x{<intptr_t>self._ptr:x}>"


# ------------------------------------------------------------------------------------------------
# library-level queries
# ------------------------------------------------------------------------------------------------
def get_version():
    """cudnnGetVersion of the loaded library (MAJOR*10000 + MINOR*100 + PATCH)."""
    return cycudnn.cudnnGetVersion()


def get_cudart_version():
    """cudnnGetCudartVersion: the CUDA runtime version cuDNN was built against."""
    return cycudnn.cudnnGetCudartVersion()


def get_max_device_version():
    """cudnnGetMaxDeviceVersion: the newest compute capability the library supports (e.g. 1200)."""
    return cycudnn.cudnnGetMaxDeviceVersion()


def get_property(prop):
    """cudnnGetProperty(MAJOR_VERSION=0 / MINOR_VERSION=1 / PATCH_LEVEL=2)."""
    cdef int value = 0
    cdef cudnnStatus_t status
    cdef libraryPropertyType c_prop
    p = _int_value(prop, "property")
    if p not in (0, 1, 2):
        raise ValueError(f"property must be 0 (major), 1 (minor) or 2 (patch), not {p}")
    c_prop = <libraryPropertyType><int>p
    with nogil:
        status = cycudnn.cudnnGetProperty(c_prop, &value)
    raise_status(status, "cudnnGetProperty")
    return value


def graph_version_check():
    """cudnnGraphVersionCheck: raises if cuDNN's graph sub-library does not match."""
    cdef cudnnStatus_t status
    with nogil:
        status = cycudnn.cudnnGraphVersionCheck()
    raise_status(status, "cudnnGraphVersionCheck")


def get_error_string(status):
    """cudnnGetErrorString: cuDNN's name for a status code."""
    cdef const char* s = cycudnn.cudnnGetErrorString(<cudnnStatus_t><int>_int_value(status, "status"))
    return (<bytes>s).decode() if s != NULL else ""


def get_execution_plan_workspace_size(Handle handle, Descriptor execution_plan, Descriptor variant_pack=None):
    """cudnnGetExecutionPlanWorkspaceSize (cuDNN >= 9.23): the workspace a plan needs for a variant pack."""
    cdef size_t size = 0
    cdef cudnnStatus_t status
    cdef cudnnBackendDescriptor_t pack = NULL
    cdef cudnnHandle_t c_handle = NULL
    if handle is not None:
        handle._need_open()
        c_handle = handle._handle
    execution_plan._check_open()
    if variant_pack is not None:
        variant_pack._check_open()
        pack = variant_pack._ptr
    with nogil:
        status = cycudnn.cudnnGetExecutionPlanWorkspaceSize(c_handle, execution_plan._ptr, pack, &size)
    raise_status(status, "cudnnGetExecutionPlanWorkspaceSize", execution_plan.descriptor_type)
    return size


def is_same_topology(Descriptor graph not None, Descriptor other not None):
    """CUDNN_ATTR_OPERATIONGRAPH_IS_SAME_TOPOLOGY: whether two finalized operation graphs have the
    same topology (a query, not an attribute: cuDNN writes the answer into the element count)."""
    cdef cudnnStatus_t status
    cdef int64_t answer = 0
    cdef cudnnBackendDescriptor_t other_ptr
    cdef cudnnBackendAttributeName_t c_attr = CUDNN_ATTR_OPERATIONGRAPH_IS_SAME_TOPOLOGY
    graph._check_open()
    other._check_open()
    for g in (graph, other):
        if g.descriptor_type != DescriptorType.CUDNN_BACKEND_OPERATIONGRAPH_DESCRIPTOR or not g.finalized:
            raise TypeError("is_same_topology compares two finalized CUDNN_BACKEND_OPERATIONGRAPH_DESCRIPTORs")
    check_available("CUDNN_ATTR_OPERATIONGRAPH_IS_SAME_TOPOLOGY", "is_same_topology")
    other_ptr = other._ptr
    with nogil:
        status = cycudnn.cudnnBackendGetAttribute(graph._ptr, c_attr, CUDNN_TYPE_BACKEND_DESCRIPTOR, 1, &answer,
                                                  &other_ptr)
    raise_status(status, "cudnnBackendGetAttribute", graph.descriptor_type,
                 AttributeName.CUDNN_ATTR_OPERATIONGRAPH_IS_SAME_TOPOLOGY)
    return bool(answer & 0xFF)
