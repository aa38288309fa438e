# cython: language_level=3, boundscheck=False, wraparound=False, cdivision=True
"""The checked core over the raw bindings: ``Handle``, the generic backend ``Descriptor``, and the call
gate every cuDNN call of the package passes.

Every set/get/finalize is checked against the generated attribute schema before cuDNN sees it
(cuDNN aborts the process on some misuse, e.g. a descriptor of the wrong type as a child), and
every non-success status becomes a ``CudnnError`` carrying cuDNN's own message.

Speed: the schema is turned into C tables on first use, so a checked ``set`` is a few table reads,
a conversion loop over the values and the cuDNN call with the GIL released. The typed classes
(``cudnn_backend.typed``) call ``Descriptor._set`` with their attribute and type as constants.

Safety (one lifetime mechanism, ``Resource``, for handles, descriptors and variant packs):

* every cuDNN call that releases the GIL passes the call gate, ``enter_call``/``leave_call``, naming the
  objects it uses: it counts the call in flight on each of them (``_busy``) and process-wide
  (``calls_in_flight()``). Nothing else counts calls.
* ``close()`` swaps the pointer out while holding the GIL, so two threads closing one object destroy
  it once; an object closed while a call uses it is destroyed by the last such call when it returns,
  and what cuDNN may still read through it (children, buffers, workspace) stays alive until then.
* at exit an ``atexit`` hook shuts the gate (new calls raise ``CudnnShutdownError``, a ``CudnnError``) and
  waits (bounded) for the calls in flight, so cuDNN's libraries are not torn down under them.
* a ``KeyboardInterrupt`` (or ``SystemExit``) raised inside cuDNN's logging callback is kept and
  raised in the calling thread when the cuDNN call returns (``note_interrupt``).
"""
import atexit
import enum
import fractions
import math
import numbers
import operator
import threading
import time

cimport cython
from cpython.bool cimport PyBool_Check
from cpython.bytes cimport PyBytes_AS_STRING, PyBytes_GET_SIZE
from cpython.float cimport PyFloat_AS_DOUBLE
from cpython.long cimport PyLong_AsLongLong, PyLong_AsLongLongAndOverflow, PyLong_AsUnsignedLongLong, PyLong_CheckExact
from cpython.ref cimport Py_INCREF, PyObject
from cpython.list cimport PyList_GET_SIZE, PyList_New, PyList_SET_ITEM
from cpython.sequence cimport PySequence_Fast_ITEMS
from cpython.list cimport PyList_AsTuple
from cpython.tuple cimport PyTuple_New, PyTuple_SET_ITEM
from libc.stdint cimport int32_t, int64_t, intptr_t, uint8_t, uint64_t, uintptr_t
from libc.stdlib cimport calloc, free, malloc
from libc.string cimport memcpy, memset

from cudnn_backend._bindings.cycudnn cimport *
from cudnn_backend._bindings cimport cycudnn

import numpy as np

from cudnn_backend._bindings import _loader
from cudnn_backend._bindings import enums as _enums
from cudnn_backend._bindings.enums import AttributeName, AttributeType, DescriptorType, Status
from cudnn_backend.core import device as _device
from cudnn_backend.core import json_checks as _json_checks
from cudnn_backend.core import op_checks as _op_checks
from cudnn_backend.core.families import pointwise as _pointwise
from cudnn_backend.core import schema as _schema
from cudnn_backend.core.versions import format_version, parse_version
from cudnn_backend.errors import (
    DEBUG_HINT,
    CudnnBackendError,
    CudnnBadParamError,
    CudnnError,
    CudnnShutdownError,
    CudnnUnsafeCallError,
    CudnnVersionError,
    NoDeviceError,
    make_error,
)

cdef extern from "Python.h":
    ctypedef struct PyFloatObject:
        double ob_fval

cdef enum:
    LAST_ERROR_SIZE = 4096
    MAX_TYPES = 64
    INLINE_BYTES = 256           # most attribute arrays fit: no malloc for them
    MAX_SET_ELEMENTS = 1 << 20   # no attribute takes more (a lying __len__ is refused before allocation)
    MAX_GET_ELEMENTS = 1 << 24
    MAX_GET_DESCRIPTORS = 1 << 14

# element kinds
cdef enum:
    K_NONE = 0
    K_HANDLE = 1
    K_BOOL = 2
    K_INT64 = 3
    K_INT32 = 4
    K_FLOAT = 5
    K_DOUBLE = 6
    K_PTR = 7
    K_CHAR = 8
    K_FRACTION = 9
    K_ENUM = 10
    K_DESC = 11

# attribute flags
cdef enum:
    F_HOST_DATA = 1
    F_SET_UNSUPPORTED = 2
    F_GET_UNSUPPORTED = 4
    F_JSON = 8
    F_AVAILABLE = 16
    F_FAST = 32          # available, settable, plain elements (ints, enums, descriptors, floats, bools): _set_fast

cdef enum:
    ROLE_REQUIRED = 0
    ROLE_OPTIONAL = 1
    ROLE_GET_ONLY = 2

ctypedef struct AttrSpec:
    int descriptor          # owning descriptor type, -1 for a value that is no attribute
    uint64_t types          # accepted attribute types (bit per type value)
    int default_type        # the preferred (first) attribute type
    int count_min
    int count_max           # -1: unbounded
    int role
    int flags
    uint64_t accepts        # descriptor types a descriptor-valued attribute takes (bit per type value)
    int get_type            # the type cuDNN's Get wants when it differs, else -1
    int get_max_count       # cuDNN's count query is wrong: ask for this many (0: ask)
    int64_t value_min       # integer elements must be >= this
    int io                  # 0: not a tensor slot, 1: input tensor, 2: output tensor
    int slot                # index among its descriptor type's attributes: its place in Descriptor._vals
    int bit                 # its Descriptor._mask bit: the slot, -1 past 63

INT64_MIN = -int("9223372036854775808")
INT64_MAX = int("9223372036854775807")
ADDRESS_LIMIT = int("18446744073709551616")  # 2**64: addresses are below it
PY_MAX_SET_ELEMENTS = MAX_SET_ELEMENTS
PY_MAX_GET_ELEMENTS = MAX_GET_ELEMENTS
PY_MAX_GET_DESCRIPTORS = MAX_GET_DESCRIPTORS


# ------------------------------------------------------------------------------------------------
# the call gate: calls in flight, the exit gate, interrupts raised inside cuDNN's callback
# ------------------------------------------------------------------------------------------------
cdef object _ATTRIBUTE_NAME = AttributeName  # the enum classes, for identity tests without a global lookup
cdef object _ATTRIBUTE_TYPE = AttributeType
cdef object _DESCRIPTOR_TYPE = DescriptorType
cdef Py_ssize_t _calls_in_flight = 0
cdef bint _exiting = False
cdef object _pending_interrupt = None
cdef object _SHUTDOWN_STATUS = Status.CUDNN_STATUS_NOT_INITIALIZED  # what CudnnShutdownError carries
EXIT_WAIT_SECONDS = 30.0  # how long the atexit hook waits for cuDNN calls in flight


cdef inline void _enter(Resource r) noexcept:
    r._busy += 1


cdef inline void _leave(Resource r) noexcept:
    """One call in flight on ``r`` returned: the last one destroys ``r`` if it was closed meanwhile."""
    cdef void* raw
    r._busy -= 1
    if r._busy == 0 and r._pending != NULL:
        raw = r._pending
        r._pending = NULL
        r._destroy(raw)  # a deferred close has no caller left to report a failure to
        r._pending_keep = None


cdef int enter_call(Resource a, Resource b, Resource c) except -1:
    """Before a cuDNN call that releases the GIL (GIL held): refused once the interpreter exits, else counted
    in flight, process-wide and on each object it uses (None for fewer than three)."""
    global _calls_in_flight
    if _exiting:
        raise CudnnShutdownError(_SHUTDOWN_STATUS)
    # open, each of them: a caller that read its object open, then let go of the GIL (a count query, say), may
    # come back to an object another thread closed meanwhile; it is refused here, by name, not sent to cuDNN
    if a is not None:
        a._check_open()
    if b is not None:
        b._check_open()
    if c is not None:
        c._check_open()
    _calls_in_flight += 1
    if a is not None:
        _enter(a)
    if b is not None:
        _enter(b)
    if c is not None:
        _enter(c)
    return 0


cdef int leave_call(Resource a, Resource b, Resource c) except -1:
    """After the call returned (GIL held again), with the objects given to enter_call; then an interrupt
    cuDNN's callback kept meanwhile is raised."""
    global _calls_in_flight, _pending_interrupt
    if a is not None:
        _leave(a)
    if b is not None:
        _leave(b)
    if c is not None:
        _leave(c)
    _calls_in_flight -= 1
    if _pending_interrupt is not None:
        exc, _pending_interrupt = _pending_interrupt, None
        raise exc
    return 0


cdef list _hold_tree(Descriptor root):
    """For a call that reads a descriptor and everything set on it, transitively (a plan's engine config, its
    graph, the graph's handle): count it in flight on all of them; returns them for ``_release_tree``. Only
    for calls that take long (finalizing graphs, heuristics, plans), where a list per call does not matter."""
    cdef list held = [root]
    cdef Py_ssize_t i = 0
    cdef int j, dtype
    cdef object r, v, x
    cdef list vals
    while i < len(held):
        r = held[i]
        i += 1
        if not isinstance(r, Descriptor):
            continue
        vals = (<Descriptor>r)._vals
        dtype = (<Descriptor>r)._dtype
        if vals is None or dtype < 0:
            continue
        for j in range(_N_CHILD_SLOTS[dtype]):  # only the attributes that take descriptors or a handle
            v = vals[_CHILD_SLOTS[dtype][j]]
            if type(v) is tuple:
                for x in <tuple>v:
                    if isinstance(x, Resource):
                        held.append(x)
            elif isinstance(v, Resource):
                held.append(v)
    for r in held:
        _enter(<Resource>r)
        if isinstance(r, Handle) and (<Handle>r)._context != NULL:  # a plan loads its kernels into the context
            use_context((<Handle>r)._context)
    return held


cdef void _release_tree(list held) noexcept:
    cdef object r
    for r in held:
        _leave(<Resource>r)


cdef int _raise_pending_interrupt() except -1:
    global _pending_interrupt
    exc, _pending_interrupt = _pending_interrupt, None
    if exc is not None:
        raise exc
    return 0


cdef void note_interrupt(object exc) noexcept:
    """Keep a KeyboardInterrupt/SystemExit raised inside a cuDNN callback for the calling thread."""
    global _pending_interrupt
    if _pending_interrupt is None:
        _pending_interrupt = exc


def calls_in_flight():
    """How many cuDNN calls are running now (with the GIL released), process-wide."""
    return _calls_in_flight


def _wait_at_exit(timeout=None):
    """The atexit hook: refuse new cuDNN calls, then wait (bounded) for those in flight to return."""
    global _exiting
    _exiting = True
    deadline = time.monotonic() + (EXIT_WAIT_SECONDS if timeout is None else timeout)
    while _calls_in_flight > 0 and time.monotonic() < deadline:
        time.sleep(0.005)
    return _calls_in_flight


atexit.register(_wait_at_exit)


# ------------------------------------------------------------------------------------------------
# errors and versions
# ------------------------------------------------------------------------------------------------
def last_error_string():
    """cuDNN's message for the last failed call on this thread (cudnnGetLastErrorString)."""
    cdef char buf[LAST_ERROR_SIZE]
    buf[0] = 0
    cycudnn.cudnnGetLastErrorString(buf, LAST_ERROR_SIZE)
    return buf[:LAST_ERROR_SIZE].split(b"\0", 1)[0].decode("utf-8", "replace").strip()


cdef int clear_last_error() except -1:
    """cuDNN keeps the last message across successful calls (warnings too): read it away, so an error is
    never explained by an older call's text."""
    cdef char buf[2]
    cycudnn.cudnnGetLastErrorString(buf, 2)
    return 0


def clear_error():
    """Forget cuDNN's last message (before a call whose failure should report its own)."""
    clear_last_error()


cdef object _status_member(int status):
    try:
        return Status(status)
    except ValueError:  # newer than the header
        return status


cdef int raise_status(cudnnStatus_t status, str function, object descriptor_type=None, object attribute=None) except -1:
    if status == CUDNN_STATUS_SUCCESS:
        return 0
    raise make_error(_status_member(<int>status), function, descriptor_type, attribute, last_error_string())


def _name_of(enum_cls, value):
    try:
        return enum_cls(value)
    except ValueError:
        return value


# ------------------------------------------------------------------------------------------------
# the schema as C tables (built on first use, against the loaded cuDNN's version)
# ------------------------------------------------------------------------------------------------
cdef AttrSpec* _ATTR = NULL
cdef int _N_ATTR = 0
cdef int _TYPE_KIND[MAX_TYPES]
cdef bint _TYPE_AVAILABLE[MAX_TYPES]
cdef uint8_t* _ENUM_OK[MAX_TYPES]       # enum types: value - _ENUM_MIN -> 0 invalid, 1 valid, 2 newer than loaded
cdef int _ENUM_MAX[MAX_TYPES]
cdef int _ENUM_MIN[MAX_TYPES]           # 0, or the lowest member (CUDNN_OPERATIONGRAPH_MODE_AUTO is -1)
cdef uint8_t _DESC_OK[MAX_TYPES]        # descriptor type -> 0 unknown, 1 available, 2 newer than loaded
cdef int* _REQUIRED[MAX_TYPES]          # descriptor type -> required attribute values
cdef int _N_REQUIRED[MAX_TYPES]
cdef uint64_t _REQUIRED_MASK[MAX_TYPES]  # descriptor type -> the _mask bits of its required attributes
cdef bint _REQUIRED_BY_SLOT[MAX_TYPES]    # a required attribute has no bit (slot > 63): checked by slot too
cdef bint _FINALIZE_NOGIL[MAX_TYPES]     # finalize may take long (plans, heuristics, graphs): release the GIL
cdef int _N_ATTRS[MAX_TYPES]             # descriptor type -> how many attributes it has (the length of _vals)
cdef int* _SLOT_ATTR[MAX_TYPES]          # descriptor type -> slot -> attribute value
cdef int* _CHILD_SLOTS[MAX_TYPES]        # descriptor type -> the slots that may hold descriptors or a handle
cdef int _N_CHILD_SLOTS[MAX_TYPES]
cdef bint _READY = False
cdef list _ENUM_CLASS = [None] * MAX_TYPES   # attribute type -> IntEnum class of its values
cdef dict _FINALIZE_CHECK = {}          # descriptor type -> Python check run before finalize
cdef bint _HAS_FINALIZE_CHECK[MAX_TYPES]
cdef dict _JSON_CHECK = {}              # attribute -> JSON checker returning canonical text
cdef dict _UNAVAILABLE = {}             # enumerant C name -> version newer than the loaded cuDNN
cdef int _LOADED_VERSION = 0
cdef object _TABLE_LOCK = threading.Lock()

cdef dict _KIND_OF_TYPE_NAME = {
    "CUDNN_TYPE_HANDLE": K_HANDLE, "CUDNN_TYPE_BOOLEAN": K_BOOL, "CUDNN_TYPE_INT64": K_INT64,
    "CUDNN_TYPE_INT32": K_INT32, "CUDNN_TYPE_FLOAT": K_FLOAT, "CUDNN_TYPE_DOUBLE": K_DOUBLE,
    "CUDNN_TYPE_VOID_PTR": K_PTR, "CUDNN_TYPE_CHAR": K_CHAR, "CUDNN_TYPE_FRACTION": K_FRACTION,
    "CUDNN_TYPE_BACKEND_DESCRIPTOR": K_DESC,
}
cdef Py_ssize_t _KIND_SIZE[12]
_KIND_SIZE[K_NONE] = 0
_KIND_SIZE[K_HANDLE] = sizeof(cudnnHandle_t)
_KIND_SIZE[K_BOOL] = sizeof(uint8_t)
_KIND_SIZE[K_INT64] = sizeof(int64_t)
_KIND_SIZE[K_INT32] = sizeof(int32_t)
_KIND_SIZE[K_FLOAT] = sizeof(float)
_KIND_SIZE[K_DOUBLE] = sizeof(double)
_KIND_SIZE[K_PTR] = sizeof(void*)
_KIND_SIZE[K_CHAR] = sizeof(char)
_KIND_SIZE[K_FRACTION] = sizeof(cudnnFraction_t)
_KIND_SIZE[K_ENUM] = sizeof(int32_t)
_KIND_SIZE[K_DESC] = sizeof(cudnnBackendDescriptor_t)
KIND_NAMES = ("none", "handle", "bool", "int64", "int32", "float", "double", "ptr", "char", "fraction", "enum",
              "descriptor")

# descriptor types whose finalize is a few microseconds of bookkeeping in cuDNN (besides every operation node)
_FINALIZE_QUICK_NAMES = frozenset({
    "CUDNN_BACKEND_TENSOR_DESCRIPTOR", "CUDNN_BACKEND_POINTWISE_DESCRIPTOR", "CUDNN_BACKEND_CONVOLUTION_DESCRIPTOR",
    "CUDNN_BACKEND_MATMUL_DESCRIPTOR", "CUDNN_BACKEND_REDUCTION_DESCRIPTOR", "CUDNN_BACKEND_RESAMPLE_DESCRIPTOR",
    "CUDNN_BACKEND_RNG_DESCRIPTOR",
})

_JSON_ATTRIBUTES = {
    "CUDNN_ATTR_EXECUTION_PLAN_JSON_REPRESENTATION": _json_checks.check_plan_json,
    "CUDNN_ATTR_KERNEL_CACHE_JSON_REPRESENTATION": _json_checks.check_kernel_cache_json,
    "CUDNN_ATTR_DEVICEPROP_JSON_REPRESENTATION": _json_checks.check_deviceprop_json,
}


cdef list _none_list(Py_ssize_t n):
    """[None] * n, made directly."""
    cdef Py_ssize_t i
    cdef list out = PyList_New(n)
    for i in range(n):
        Py_INCREF(None)
        PyList_SET_ITEM(out, i, None)
    return out


cdef inline int _ensure_tables() except -1:
    if not _READY:
        _build_tables()
    return 0


cdef int _build_tables() except -1:
    global _ATTR, _N_ATTR, _READY, _LOADED_VERSION
    cdef AttrSpec* spec
    cdef int t, v, i
    with _TABLE_LOCK:
        if _READY:
            return 0
        _LOADED_VERSION = _loader.load_cudnn().version
        for name, since in _enums.SINCE.items():
            if parse_version(since) > _LOADED_VERSION:
                _UNAVAILABLE[name] = since
        # attribute types
        for member in AttributeType:
            t = int(member)
            if t >= MAX_TYPES:
                continue
            _TYPE_AVAILABLE[t] = member.name not in _UNAVAILABLE
            kind = _KIND_OF_TYPE_NAME.get(member.name)
            enum_name = _enums.ATTRIBUTE_TYPE_ENUM.get(member.name)
            enum_cls = getattr(_enums, enum_name, None) if enum_name else None
            if kind is None and isinstance(enum_cls, type) and issubclass(enum_cls, enum.IntEnum):
                kind = K_ENUM
                _ENUM_CLASS[t] = enum_cls
                top = max(int(m) for m in enum_cls)
                low = min(0, min(int(m) for m in enum_cls))
                _ENUM_MAX[t] = top
                _ENUM_MIN[t] = low
                _ENUM_OK[t] = <uint8_t*>calloc(top - low + 1, 1)
                for m in enum_cls:
                    _ENUM_OK[t][int(m) - low] = 2 if m.name in _UNAVAILABLE else 1
            _TYPE_KIND[t] = kind if kind is not None else K_NONE
        # descriptor types and their required attributes
        for member in DescriptorType:
            t = int(member)
            if t < MAX_TYPES:
                _DESC_OK[t] = 2 if member.name in _UNAVAILABLE else 1
                dspec = _schema.DESCRIPTORS.get(member)
                required = [int(a) for a in dspec.required] if dspec is not None else []
                _N_REQUIRED[t] = len(required)
                _REQUIRED[t] = <int*>calloc(max(1, len(required)), sizeof(int))
                for i in range(len(required)):
                    _REQUIRED[t][i] = required[i]
        # attributes
        top = max(int(a) for a in AttributeName) + 1
        _ATTR = <AttrSpec*>calloc(top, sizeof(AttrSpec))
        _N_ATTR = top
        for i in range(top):
            _ATTR[i].descriptor = -1
        for attr, a in _schema.ATTRIBUTES.items():
            spec = &_ATTR[int(attr)]
            spec.descriptor = int(a.descriptor)
            spec.types = 0
            for at in a.types:
                spec.types |= (<uint64_t>1) << int(at)
            spec.default_type = int(a.types[0])
            spec.count_min = a.count_min
            spec.count_max = -1 if a.count_max is None else a.count_max
            spec.role = {"required": ROLE_REQUIRED, "optional": ROLE_OPTIONAL, "get_only": ROLE_GET_ONLY}[a.role]
            spec.flags = 0
            if a.host_data:
                spec.flags |= F_HOST_DATA
            if a.set_unsupported:
                spec.flags |= F_SET_UNSUPPORTED
            if a.get_unsupported:
                spec.flags |= F_GET_UNSUPPORTED
            if attr.name not in _UNAVAILABLE:
                spec.flags |= F_AVAILABLE
            checker = _JSON_ATTRIBUTES.get(attr.name)
            if checker is not None:
                spec.flags |= F_JSON
                _JSON_CHECK[int(attr)] = checker
            spec.accepts = 0
            for d in a.accepts or ():
                spec.accepts |= (<uint64_t>1) << int(d)
            spec.get_type = -1 if a.get_type is None else int(a.get_type)
            spec.get_max_count = a.get_max_count or 0
            spec.value_min = INT64_MIN if a.value_min is None else a.value_min
            spec.io = {None: 0, "input": 1, "output": 2}[a.io]
        # each attribute's slot among its descriptor type's attributes (schema order), and the required masks
        for t in range(MAX_TYPES):
            _N_ATTRS[t] = 0
        for attr, a in _schema.ATTRIBUTES.items():
            t = int(a.descriptor)
            spec = &_ATTR[int(attr)]
            if 0 <= t < MAX_TYPES:
                spec.slot = _N_ATTRS[t]
                spec.bit = spec.slot if spec.slot < 64 else -1
                _N_ATTRS[t] += 1
            else:
                spec.descriptor = -1  # a type past the tables: refused as no attribute
        for t in range(MAX_TYPES):
            _SLOT_ATTR[t] = <int*>calloc(max(1, _N_ATTRS[t]), sizeof(int))
        for i in range(top):
            if _ATTR[i].descriptor >= 0:
                _SLOT_ATTR[_ATTR[i].descriptor][_ATTR[i].slot] = i
        for t in range(MAX_TYPES):  # where a call holding a descriptor looks for what it holds (_hold_tree)
            _CHILD_SLOTS[t] = <int*>calloc(max(1, _N_ATTRS[t]), sizeof(int))
            _N_CHILD_SLOTS[t] = 0
            for i in range(_N_ATTRS[t]):
                spec = &_ATTR[_SLOT_ATTR[t][i]]
                if any(_TYPE_KIND[at] in (K_DESC, K_HANDLE) for at in range(MAX_TYPES) if (spec.types >> at) & 1):
                    _CHILD_SLOTS[t][_N_CHILD_SLOTS[t]] = i
                    _N_CHILD_SLOTS[t] += 1
        for dtype_member in DescriptorType:
            t = int(dtype_member)
            if t >= MAX_TYPES:
                continue
            _REQUIRED_MASK[t] = 0
            _REQUIRED_BY_SLOT[t] = False
            for i in range(_N_REQUIRED[t]):
                v = _REQUIRED[t][i]
                if _ATTR[v].bit >= 0:
                    _REQUIRED_MASK[t] |= (<uint64_t>1) << _ATTR[v].bit
                else:
                    _REQUIRED_BY_SLOT[t] = True
        # Finalizing a tensor, a pointwise/convolution/... descriptor or an operation node is a few
        # microseconds of bookkeeping in cuDNN: the GIL stays held (releasing and taking it back would cost
        # as much). Graphs, engines, heuristics, plans, kernel caches and the like may take long: GIL released.
        for member in DescriptorType:
            t = int(member)
            if t < MAX_TYPES:
                _FINALIZE_NOGIL[t] = not (member.name in _FINALIZE_QUICK_NAMES or
                                          member.name.startswith("CUDNN_BACKEND_OPERATION_"))
        for i in range(top):
            spec = &_ATTR[i]
            if spec.descriptor >= 0 and spec.flags & F_AVAILABLE and spec.role != ROLE_GET_ONLY and \
                    not spec.flags & (F_SET_UNSUPPORTED | F_HOST_DATA | F_JSON) and 0 <= spec.default_type < MAX_TYPES \
                    and _TYPE_AVAILABLE[spec.default_type] and \
                    _TYPE_KIND[spec.default_type] in (K_INT64, K_ENUM, K_DESC, K_FLOAT, K_DOUBLE, K_BOOL):
                spec.flags |= F_FAST
        for dtype, check in _op_checks.FINALIZE_CHECKS.items():
            _FINALIZE_CHECK[int(dtype)] = check
            _HAS_FINALIZE_CHECK[int(dtype)] = True
        if len(_pointwise.INPUT_SLOTS) != 4 or len(_pointwise.OUTPUT_SLOTS) != 2:
            raise RuntimeError("the pointwise family's tensor slots changed: update _PW_INPUTS/_PW_OUTPUTS' sizes")
        for i, (attr, _) in enumerate(_pointwise.INPUT_SLOTS):
            _PW_INPUTS[i] = int(attr)
        for i, (attr, _) in enumerate(_pointwise.OUTPUT_SLOTS):
            _PW_OUTPUTS[i] = int(attr)
        _READY = True
    return 0


def since_of(name):
    """The cuDNN release ("9.23.0") that introduced ``name``: an enumerant (descriptor type, attribute, attribute
    type, enum value), an enum type ("cudnnBackendOperationGraphMode_t") or a function, by its C name, from the
    header's ``@since`` (the generator's tables). ValueError for a name the header does not have."""
    if not isinstance(name, str):
        raise TypeError(f"name: expected a C name (str), not {type(name).__name__}")
    for table in (_enums.SINCE, _enums.FUNCTION_SINCE, _enums.ENUM_SINCE):
        since = table.get(name)
        if since is not None:
            return since
    raise ValueError(f"{name!r} is no enumerant, enum type or function of cudnn_graph.h")


cdef dict _SINCE_NUMBER = {}  # C name -> since_of(name) as a number: the gate runs for every knob of every config


cdef int _since_number(object name) except -1:
    v = _SINCE_NUMBER.get(name) if isinstance(name, str) else None
    if v is None:  # since_of refuses a name that is no str, or no C name of the header
        v = _SINCE_NUMBER[name] = parse_version(since_of(name))
    return v


def is_available(name):
    """Whether the loaded cuDNN has ``name`` (an enumerant, enum type or function: see ``since_of``)."""
    _ensure_tables()
    return _since_number(name) <= _LOADED_VERSION


def check_available(names, context=""):
    """The version gate: CudnnVersionError "NAME (context) needs cuDNN >= X.Y (loaded: A.B)" unless the loaded
    cuDNN has every one of ``names`` (a C name, or several: the newest one missing is named). Every feature newer
    than the oldest supported release goes through here (or through the same tables, for attributes and values
    set on a descriptor) before any descriptor is made."""
    _ensure_tables()
    missing = None
    cdef int since
    for name in ((names,) if isinstance(names, str) else tuple(names)):
        since = _since_number(name)
        if since > _LOADED_VERSION and (missing is None or since > _since_number(missing)):
            missing = name
    if missing is not None:
        raise CudnnVersionError(missing, since_of(missing), format_version(_LOADED_VERSION), context)


def unavailable_enumerants():
    """{C name: version} of every enumerant of the header newer than the loaded cuDNN."""
    _ensure_tables()
    return dict(_UNAVAILABLE)


# ------------------------------------------------------------------------------------------------
# argument coercion (no float, bool or string is ever taken as an int)
# ------------------------------------------------------------------------------------------------
cdef str _w(object what):
    """An error message's subject: a string, or (descriptor type, attribute) formatted only when needed."""
    if type(what) is tuple:
        return _what((<tuple>what)[0], (<tuple>what)[1])
    return what


cdef str _what(int dtype, int attr):
    return f"{_name_of(DescriptorType, dtype).name if dtype >= 0 else '?'}.{_attr_name(attr)}"


cdef str _dtype_name(int dtype):
    """A descriptor type's C name for messages (its number when it is none: a never-created descriptor)."""
    m = _name_of(DescriptorType, dtype)
    return m.name if isinstance(m, DescriptorType) else f"descriptor type {dtype}"


cdef str _attr_name(int attr):
    m = _name_of(AttributeName, attr)
    return m.name if isinstance(m, AttributeName) else str(attr)


cdef int _enum_arg(object value, object enum_cls, str what) except? -1:
    """An enum argument (descriptor type, attribute, attribute type) as a C int: a member of ``enum_cls``,
    its C name, or an int (not a bool, not a member of another enum)."""
    if type(value) is enum_cls:
        return <int>value
    if PyLong_CheckExact(value):
        v = value
    elif isinstance(value, str):
        try:
            return int(enum_cls[value])
        except KeyError:
            raise ValueError(f"{what}: {value!r} is not a {enum_cls.__name__} name") from None
    elif isinstance(value, bool) or isinstance(value, enum.Enum):
        raise TypeError(f"{what}: expected a {enum_cls.__name__} member, its C name or an int, not "
                        f"{type(value).__name__}{'.' + value.name if isinstance(value, enum.Enum) else ''}")
    else:
        v = _index(value, what)
    if v < 0 or v > 0x7FFFFFFF:
        raise ValueError(f"{what}: {v} is not a valid {enum_cls.__name__}")
    return <int>v


cdef object _index(object v, object what):
    """operator.index with every failure as TypeError naming ``what`` (floats, strings and bools refused)."""
    if isinstance(v, bool):
        raise TypeError(f"{_w(what)}: expected an integer, not bool")
    try:
        return operator.index(v)
    except TypeError:
        raise TypeError(f"{_w(what)}: expected an integer, not {type(v).__name__}") from None
    except Exception as e:  # a raising __index__
        raise TypeError(f"{_w(what)}: cannot read an integer from {type(v).__name__} ({type(e).__name__}: {e})") from None


def as_int(value, what, minimum=None, maximum=None):
    """An exact int from an integer-like value: floats, strings, bools and raising ``__index__`` refused with a
    TypeError naming ``what``; bounds with a ValueError."""
    v = value if PyLong_CheckExact(value) else _index(value, what)
    if minimum is not None and v < minimum:
        raise ValueError(f"{what}: {v} is below the minimum {minimum}")
    if maximum is not None and v > maximum:
        raise ValueError(f"{what}: {v} is above the maximum {maximum}")
    return v


def user_sequence(values, what, limit=4096):
    """The elements of a sequence the caller gave, read one by one (at most ``limit``): a lying ``__len__`` or a
    raising ``__iter__``/``__next__`` is a TypeError/ValueError naming ``what``, never MemoryError or IndexError.
    (``Descriptor.set`` reads its values on its own path, in C.)"""
    try:
        it = iter(values)
    except TypeError:
        raise TypeError(f"{what}: expected a sequence, not {type(values).__name__}") from None
    except Exception as e:
        raise TypeError(f"{what}: iterating failed (the {type(values).__name__} raised {type(e).__name__}: {e})") \
            from None
    out = []
    try:
        for v in it:
            out.append(v)
            if len(out) > limit:
                raise ValueError(f"{what}: more than {limit} entries")
    except (TypeError, ValueError):
        raise
    except Exception as e:
        raise TypeError(f"{what}: iterating failed (the {type(values).__name__} raised {type(e).__name__}: {e})") \
            from None
    return out


cdef inline int64_t _int64(object v, object what) except? -1:
    cdef int64_t out
    if PyLong_CheckExact(v):
        try:
            return PyLong_AsLongLong(v)
        except OverflowError:
            raise ValueError(f"{_w(what)}: {v} does not fit in 64 bits") from None
    i = _index(v, what)
    try:
        out = PyLong_AsLongLong(i)
    except OverflowError:
        raise ValueError(f"{_w(what)}: {i} does not fit in 64 bits") from None
    return out


cdef double _real(object v, object what) except? -1.0:
    if type(v) is float:
        return PyFloat_AS_DOUBLE(v)
    if isinstance(v, bool) or not isinstance(v, numbers.Real):
        raise TypeError(f"{_w(what)}: expected a real number, not {type(v).__name__}")
    try:
        return float(v)
    except OverflowError:
        raise ValueError(f"{_w(what)}: {v} does not fit in a double") from None
    except Exception as e:
        raise TypeError(f"{_w(what)}: cannot read a number from {type(v).__name__} ({type(e).__name__}: {e})") from None


cdef object _items(object values, int kind, object what):
    """The elements to set: a list or tuple as it is; one value as a 1-tuple; other sequences copied with
    a cap on their length (a lying ``__len__`` is refused before anything is allocated)."""
    cdef type t = type(values)
    if t is list or t is tuple:
        if kind == K_FRACTION and t is tuple and len(values) == 2 and _is_int_like(values[0]) and \
                _is_int_like(values[1]):
            return (values,)  # one (numerator, denominator)
        return values
    if kind == K_CHAR:
        return values
    if t is int or t is float or t is bool or isinstance(values, (numbers.Number, Descriptor, Handle, str, bytes,
                                                                  bytearray, enum.Enum)):
        return (values,)
    if isinstance(values, np.ndarray):
        if values.size > MAX_SET_ELEMENTS:
            raise ValueError(f"{_w(what)}: {values.size} elements; no attribute takes more than {MAX_SET_ELEMENTS}")
        return values.reshape(-1).tolist()
    if not hasattr(values, "__iter__"):
        return (values,)
    try:
        n = len(values)
    except TypeError:
        n = None
    except Exception as e:
        raise TypeError(f"{_w(what)}: len() of the {type(values).__name__} failed ({type(e).__name__}: {e})") from None
    if n is not None and (not isinstance(n, int) or n < 0 or n > MAX_SET_ELEMENTS):
        raise ValueError(f"{_w(what)}: the {type(values).__name__} claims {n} elements; no attribute takes more than "
                         f"{MAX_SET_ELEMENTS}")
    out = []
    try:
        for v in values:
            out.append(v)
            if len(out) > MAX_SET_ELEMENTS:
                raise ValueError(f"{_w(what)}: more than {MAX_SET_ELEMENTS} elements")
    except (ValueError, TypeError):
        raise
    except Exception as e:
        raise TypeError(f"{_w(what)}: iterating the {type(values).__name__} failed ({type(e).__name__}: {e})") from None
    return out


cdef bint _is_int_like(object v):
    return (PyLong_CheckExact(v) or isinstance(v, numbers.Integral)) and not isinstance(v, bool)


# ------------------------------------------------------------------------------------------------
# the element buffer of one set/get call
# ------------------------------------------------------------------------------------------------
@cython.freelist(8)
cdef class _Buffer:
    """The element array of one Set/GetAttribute call (inline when small, else malloc'ed)."""
    cdef char* data
    cdef Py_ssize_t nbytes
    cdef char inline_data[INLINE_BYTES]

    def __cinit__(self, Py_ssize_t nbytes):
        self.nbytes = nbytes
        if nbytes <= INLINE_BYTES:
            self.data = self.inline_data
        else:
            self.data = <char*>malloc(nbytes)
            if self.data == NULL:
                raise MemoryError()
        memset(self.data, 0, nbytes if nbytes > 0 else 1)

    def __dealloc__(self):
        if self.data != self.inline_data:
            free(self.data)


cdef object _host_copy(object v, object what):
    """Host data cuDNN reads through a VOID_PTR attribute: a private copy of a bytes-like value."""
    if v is None or (_is_int_like(v)):
        raise TypeError(f"{_w(what)}: cuDNN reads host memory at this address; pass the value's bytes (bytes, "
                        f"bytearray or a numpy value), not a raw pointer")
    try:
        data = v
        if not isinstance(v, (bytes, bytearray, memoryview)):
            data = np.asarray(v)
            if data.dtype.hasobject:  # an object array's buffer holds PyObject pointers, not the value
                raise TypeError
        raw = bytes(memoryview(data))
    except (TypeError, ValueError, BufferError):
        raise TypeError(f"{_w(what)}: expected bytes-like host data, not {type(v).__name__}") from None
    if not raw:
        raise ValueError(f"{_w(what)}: empty host data")
    return np.frombuffer(raw, dtype=np.uint8).copy()


cdef object _char_bytes(object values, int attr, object what):
    """CHAR attributes: str or bytes; JSON attributes are checked and made canonical first."""
    checker = _JSON_CHECK.get(attr)
    if checker is not None:
        if not isinstance(values, (str, bytes, bytearray, memoryview)):
            raise TypeError(f"{_w(what)}: takes JSON text (str or bytes), not {type(values).__name__}")
        values = checker(values)  # JsonCheckError (a ValueError) names the JSON field
    if isinstance(values, str):
        try:
            return values.encode("utf-8")
        except UnicodeEncodeError as e:
            raise ValueError(f"{_w(what)}: the text is not valid Unicode ({e.reason} at {e.start})") from None
    if isinstance(values, (bytes, bytearray, memoryview)):
        return bytes(values)
    raise TypeError(f"{_w(what)}: CUDNN_TYPE_CHAR takes str or bytes, not {type(values).__name__}")


cdef int _enum_element(object v, int atype, object what) except? -1:
    """One enum-typed element as an int: a member of the attribute type's enum, its C name or an int."""
    cdef object cls = _ENUM_CLASS[atype]
    cdef int64_t i
    if type(v) is cls:
        i = <int64_t>v
    elif PyLong_CheckExact(v):
        i = _int64(v, what)
    elif isinstance(v, str):
        try:
            i = int(cls[v])
        except KeyError:
            raise ValueError(f"{_w(what)}: {v!r} is not a {cls.__name__} name") from None
    elif isinstance(v, bool) or isinstance(v, enum.Enum):
        raise TypeError(f"{_w(what)}: expected a {cls.__name__} member, not {type(v).__name__}"
                        f"{'.' + v.name if isinstance(v, enum.Enum) else ''}")
    else:
        i = _int64(v, what)
    if i < _ENUM_MIN[atype] or i > _ENUM_MAX[atype] or _ENUM_OK[atype][i - _ENUM_MIN[atype]] == 0:
        raise ValueError(f"{_w(what)}: {i} is not a valid {cls.__name__}")
    if _ENUM_OK[atype][i - _ENUM_MIN[atype]] == 2:
        name = cls(i).name
        raise CudnnVersionError(name, _UNAVAILABLE[name], format_version(_LOADED_VERSION), what)
    return <int>i


cdef inline int _enum_member_value(int i, int atype, int dtype, int attr) except? -1:
    """A member of the attribute type's own enum: only the loaded cuDNN's version is left to check."""
    if i < _ENUM_MIN[atype] or i > _ENUM_MAX[atype] or _ENUM_OK[atype][i - _ENUM_MIN[atype]] == 0:
        raise ValueError(f"{_what(dtype, attr)}: {i} is not a valid {_ENUM_CLASS[atype].__name__}")
    if _ENUM_OK[atype][i - _ENUM_MIN[atype]] == 2:
        name = _ENUM_CLASS[atype](i).name
        raise CudnnVersionError(name, _UNAVAILABLE[name], format_version(_LOADED_VERSION), _what(dtype, attr))
    return i


cdef object _fraction_element(object v, object what):
    if isinstance(v, fractions.Fraction):
        return (_int64(v.numerator, what), _int64(v.denominator, what))
    if type(v) is tuple and len(v) == 2:
        num, den = _int64(v[0], what), _int64(v[1], what)
    elif _is_int_like(v):
        num, den = _int64(v, what), 1
    else:
        raise TypeError(f"{_w(what)}: CUDNN_TYPE_FRACTION takes fractions.Fraction, (numerator, denominator) or an int, "
                        f"not {type(v).__name__}")
    if den == 0:
        raise ValueError(f"{_w(what)}: fraction {num}/{den} has a zero denominator")
    return (num, den)


# ------------------------------------------------------------------------------------------------
# Handle
# ------------------------------------------------------------------------------------------------
def _stream_to_int(stream):
    """An int, a cuda-bindings or cuda.core stream, anything with __cuda_stream__, or a torch stream."""
    if stream is None:
        return 0
    if isinstance(stream, bool):
        raise TypeError("stream: expected an int, a CUDA stream object or None, not bool")
    if hasattr(stream, "__cuda_stream__"):
        proto = stream.__cuda_stream__
        proto = proto() if callable(proto) else proto
        return as_int(proto[1], "stream", 0, ADDRESS_LIMIT - 1)
    if hasattr(stream, "cuda_stream"):  # torch.cuda.Stream
        return as_int(stream.cuda_stream, "stream", 0, ADDRESS_LIMIT - 1)
    if isinstance(stream, numbers.Integral):
        return as_int(stream, "stream", 0, ADDRESS_LIMIT - 1)
    try:
        return as_int(int(stream), "stream", 0, ADDRESS_LIMIT - 1)  # cuda-bindings CUstream / cudaStream_t
    except (TypeError, ValueError):
        raise TypeError(f"stream: cannot use a {type(stream).__name__} as a CUDA stream") from None


cdef class Resource:
    """What handles, descriptors and variant packs share: the lifetime of one cuDNN object.

    Open, then in use by cuDNN calls that released the GIL (counted by the call gate, ``enter_call``), then
    closed: at once, or, when ``close()`` comes while calls use it, by the last of them as it returns (what
    cuDNN may still read through it stays alive until then). Not instantiated by itself.
    """

    # (no __cinit__: the fields start zeroed, NULL and None)

    def __dealloc__(self):
        # a call in flight holds a reference, so a pending destroy is normally done by then; C only
        if self._pending != NULL:
            self._destroy(self._pending)
            self._pending = NULL

    cdef cudnnStatus_t _destroy(self, void* raw) noexcept nogil:
        """The kind's cuDNN destroy (cudnnDestroy, cudnnBackendDestroyDescriptor)."""
        return CUDNN_STATUS_SUCCESS

    cdef int _check_open(self) except -1:
        """ValueError naming the kind once closed (each kind's own pointer); the call gate asks it of every object
        a call uses, so a call cannot start on an object another thread closed while this one held no GIL."""
        return 0

    cdef cudnnStatus_t _retire(self, void* raw, object keep) noexcept:
        """For close(), once ``raw`` is swapped out of the object (under the GIL: two closing threads destroy it
        once): destroyed now, or, while calls use the object, by the last of them, ``keep`` alive until then."""
        cdef cudnnStatus_t status
        if self._busy > 0:
            self._pending = raw
            self._pending_keep = keep
            return CUDNN_STATUS_SUCCESS
        with nogil:
            status = self._destroy(raw)
        return status


# ------------------------------------------------------------------------------------------------
# a Handle's CUDA context in the calling thread
# ------------------------------------------------------------------------------------------------
# cuDNN launches with the driver API in the calling thread, which fails (CUDA error 201, invalid context) in a
# thread that never made a context current. A Handle records the context current when it is made; the calls that
# launch make it current in a thread that has none (as torch does), and leave another one alone.
ctypedef int (*_CtxGetCurrentFn)(void** context) noexcept nogil
ctypedef int (*_CtxSetCurrentFn)(void* context) noexcept nogil
ctypedef int (*_CtxGetDeviceFn)(int* device) noexcept nogil
cdef _CtxGetCurrentFn _cuCtxGetCurrent = NULL
cdef _CtxSetCurrentFn _cuCtxSetCurrent = NULL
cdef _CtxGetDeviceFn _cuCtxGetDevice = NULL
cdef bint _context_calls_resolved = False


cdef int _resolve_context_calls() except -1:
    """The driver's (or its stand-in's) cuCtxGetCurrent, cuCtxSetCurrent and cuCtxGetDevice, once: all three, or
    none (then nothing is recorded or made current)."""
    global _cuCtxGetCurrent, _cuCtxSetCurrent, _cuCtxGetDevice, _context_calls_resolved
    cdef _CtxGetCurrentFn get_current
    cdef _CtxSetCurrentFn set_current
    cdef _CtxGetDeviceFn get_device
    if _context_calls_resolved:
        return 0
    with _loader.LOCK:
        if not _context_calls_resolved:
            get_current = <_CtxGetCurrentFn><intptr_t>_loader.driver_symbol("cuCtxGetCurrent")
            set_current = <_CtxSetCurrentFn><intptr_t>_loader.driver_symbol("cuCtxSetCurrent")
            get_device = <_CtxGetDeviceFn><intptr_t>_loader.driver_symbol("cuCtxGetDevice")
            if get_current != NULL and set_current != NULL and get_device != NULL:
                _cuCtxSetCurrent = set_current
                _cuCtxGetDevice = get_device
                _cuCtxGetCurrent = get_current  # last: use_context tests this one
            _context_calls_resolved = True
    return 0


cdef void _current_context(void** context, int* device) noexcept nogil:
    """The calling thread's current context and its device (left as they are where there is none)."""
    cdef void* c = NULL
    cdef int d = -1
    if _cuCtxGetCurrent != NULL and _cuCtxGetCurrent(&c) == 0 and c != NULL:
        context[0] = c
        if _cuCtxGetDevice(&d) == 0:
            device[0] = d


cdef int use_context(void* context) noexcept nogil:
    """Make ``context`` (a Handle's) current in a thread that has none; leave another current one alone. Returns
    which (CONTEXT_*). The common case, the context current already, is one cuCtxGetCurrent and a compare."""
    cdef void* current = NULL
    if context == NULL or _cuCtxGetCurrent == NULL or _cuCtxGetCurrent(&current) != 0:
        return CONTEXT_UNKNOWN
    if current == context:
        return CONTEXT_CURRENT
    if current != NULL:
        return CONTEXT_OTHER
    return CONTEXT_MADE_CURRENT if _cuCtxSetCurrent(context) == 0 else CONTEXT_SET_FAILED


cdef str _device_text(int device):
    return f"device {device}" if device >= 0 else "device unknown"


cdef str context_hint(Handle handle, int state):
    """For a call that failed: which device the handle belongs to, where the thread's context was not the
    handle's (None otherwise)."""
    cdef void* current = NULL
    cdef int device = -1
    mine = f"0x{<uintptr_t>handle._context:x}, {_device_text(handle._context_device)}"
    if state == CONTEXT_OTHER:
        _current_context(&current, &device)
        return (f"the handle belongs to the CUDA context {mine}, but this thread's current context is "
                f"0x{<uintptr_t>current:x} ({_device_text(device)}): make the handle's device current in this thread "
                f"first (cuda.core Device(N).set_current(), torch.cuda.set_device(N)) or use a handle made for this "
                f"thread's device; {DEBUG_HINT}")
    if state == CONTEXT_SET_FAILED:
        return (f"this thread had no current CUDA context, and making the handle's ({mine}) current failed "
                f"(cuCtxSetCurrent); {DEBUG_HINT}")
    return None


def _use_context(context, int repeat=1):
    """use_context(context) ``repeat`` times without the GIL (the context calls resolved first); returns the last
    state. For tests and for measuring the per-call cost of the check."""
    cdef void* c = <void*><uintptr_t>as_int(context, "context", 0, ADDRESS_LIMIT - 1)
    cdef int state = CONTEXT_UNKNOWN
    cdef int i
    _resolve_context_calls()
    with nogil:
        for i in range(repeat):
            state = use_context(c)
    return state


def _call_gate(Resource a, Resource b, Resource c, int repeat=1):
    """enter_call and leave_call with ``a``, ``b``, ``c`` ``repeat`` times (no cuDNN call between): for measuring the
    gate's per-call cost (benchmarks/percall_gate.py)."""
    cdef int i
    for i in range(repeat):
        enter_call(a, b, c)
        leave_call(a, b, c)
    return repeat


def _context_hint(Handle handle not None, int state):
    """context_hint for tests."""
    return context_hint(handle, state)


def _in_flight(Resource resource not None):
    """How many cuDNN calls use ``resource`` now (what its close() waits for); for tests."""
    return resource._busy


cdef class Handle(Resource):
    """A cuDNN handle (cudnnCreate/cudnnDestroy); needs a GPU.

    ``device`` selects the CUDA device first (through cuda-bindings) when given. ``close()`` is
    idempotent and safe from several threads; a handle closed while another thread's cuDNN call uses
    it is destroyed when that call returns.
    """

    def __cinit__(self, *args, **kwargs):
        self._handle = NULL
        self._stream_ref = None
        self._context = NULL
        self._context_device = -1

    def __init__(self, device=None):
        cdef cudnnStatus_t status
        cdef cudnnHandle_t h = NULL
        if self._handle != NULL:
            raise TypeError("this Handle is already created; make a new Handle")
        if device is not None:
            device = as_int(device, "device", 0, 1 << 20)
            try:
                from cuda.bindings import runtime as cudart  # optional dependency, only for device=
            except ImportError:
                raise ImportError("Handle(device=...) needs cuda-bindings: pip install 'cudnn-backend[gpu]'") from None
            err, = cudart.cudaSetDevice(device)
            if int(err) != 0:
                raise ValueError(f"device: cudaSetDevice({device}) failed with {err!r}")
        self.device = device
        enter_call(None, None, None)
        with nogil:
            status = cycudnn.cudnnCreate(&h)
        leave_call(None, None, None)
        if status != CUDNN_STATUS_SUCCESS and not _device.gpu_available():  # no driver, its stand-in, or no GPU
            raise NoDeviceError(f"Handle: no GPU is visible here (CUDA driver: {_device.driver()}), so cuDNN cannot "
                                f"make a handle (cudnnCreate returned status {<int>status}). Work offline with a "
                                "device profile instead: device_profile='h200' (or DeviceProfile.bundled('h100'), "
                                "or a file from DeviceProfile.capture on the GPU)")
        raise_status(status, "cudnnCreate")
        self._handle = h
        _resolve_context_calls()
        _current_context(&self._context, &self._context_device)  # cudnnCreate made one current (the device's)

    def __dealloc__(self):
        # Only C calls here: safe during interpreter shutdown (the library is never unloaded).
        if self._handle != NULL:
            cycudnn.cudnnDestroy(self._handle)
            self._handle = NULL

    cdef cudnnStatus_t _destroy(self, void* raw) noexcept nogil:
        return cycudnn.cudnnDestroy(<cudnnHandle_t>raw)

    def close(self):
        """Destroy the handle now (idempotent; at most once whatever the threads)."""
        cdef cudnnHandle_t h = self._handle
        if h == NULL:
            return
        self._handle = NULL  # under the GIL: no other thread can take it from here on
        keep, self._stream_ref = self._stream_ref, None
        raise_status(self._retire(<void*>h, keep), "cudnnDestroy")

    @property
    def closed(self):
        return self._handle == NULL

    @property
    def ptr(self):
        """The raw cudnnHandle_t as an int."""
        return <intptr_t>self._handle

    @property
    def context(self):
        """The CUDA context (CUcontext as an int) current when the handle was made, 0 without a GPU. Calls that
        launch work make it current in a thread that has no current context."""
        return <uintptr_t>self._context

    cdef int _check_open(self) except -1:
        if self._handle == NULL:
            raise ValueError("handle: this Handle is closed")
        return 0

    @property
    def stream(self):
        """The CUDA stream cuDNN launches on, as an int (0: the legacy default stream)."""
        cdef cudaStream_t s = NULL
        cdef cudnnStatus_t status
        cdef cudnnHandle_t h
        enter_call(self, None, None)  # refuses a closed Handle
        h = self._handle
        with nogil:
            status = cycudnn.cudnnGetStream(h, &s)
        leave_call(self, None, None)
        raise_status(status, "cudnnGetStream")
        return <intptr_t>s

    @stream.setter
    def stream(self, value):
        cdef cudnnStatus_t status
        cdef intptr_t s = _stream_to_int(value)
        cdef cudnnHandle_t h
        enter_call(self, None, None)  # refuses a closed Handle
        h = self._handle
        with nogil:
            status = cycudnn.cudnnSetStream(h, <cudaStream_t>s)
        leave_call(self, None, None)
        raise_status(status, "cudnnSetStream")
        if self._handle != NULL:  # (closed meanwhile: nothing to keep alive)
            self._stream_ref = value  # keep the stream object alive while the handle uses it

    def __enter__(self):
        return self

    def __exit__(self, *exc):
        self.close()

    def __reduce__(self):
        raise TypeError("cannot pickle a cudnn_backend.Handle: it is a live cuDNN context of this process; make a "
                        "new Handle() where it is needed")

    def __repr__(self):
        state = "closed" if self._handle == NULL else f"0x{<intptr_t>self._handle:x}"
        return f"<cudnn_backend.Handle {state} device={self.device}>"


# ------------------------------------------------------------------------------------------------
# Descriptor
# ------------------------------------------------------------------------------------------------
cdef int _refuse_busy(Descriptor d, str what) except -1:
    raise CudnnUnsafeCallError(f"{what}: the descriptor is in use by a cuDNN call on another thread; change or "
                               "finalize it after that call returns")


# the attributes an operation graph's mode probe copies (with their types): all but the mode itself
_GRAPH_PROBE_ATTRIBUTES = (
    ("CUDNN_ATTR_OPERATIONGRAPH_OPS", "CUDNN_TYPE_BACKEND_DESCRIPTOR"),
    ("CUDNN_ATTR_OPERATIONGRAPH_HANDLE", "CUDNN_TYPE_HANDLE"),
    ("CUDNN_ATTR_OPERATIONGRAPH_IS_DYNAMIC_SHAPE_ENABLED", "CUDNN_TYPE_BOOLEAN"),
    ("CUDNN_ATTR_OPERATIONGRAPH_IS_OVERRIDE_SHAPE_ENABLED", "CUDNN_TYPE_BOOLEAN"),
)


cdef int _check_graph_mode(Descriptor graph) except -1:
    """An explicit CUDNN_ATTR_OPERATIONGRAPH_MODE must be the mode cuDNN detects for the graph's operations.

    cuDNN trusts the mode it is given ("setting a wrong mode silently bypasses pattern matching and causes failures
    during plan creation or execution", cudnn_graph.h 9.28): cuDNN 9.28.1 segfaults finalizing a forward
    convolution in CONV_BWD_DATA mode, and gives BLAS_MATMUL engine configs for it. So the same graph is finalized
    first in AUTO mode (the probe, destroyed at once) and a different mode is refused, naming the detected one.
    """
    mode = graph._value(CUDNN_ATTR_OPERATIONGRAPH_MODE)
    if mode is None or int(mode) == CUDNN_OPERATIONGRAPH_MODE_AUTO:
        return 0
    probe = Descriptor(CUDNN_BACKEND_OPERATIONGRAPH_DESCRIPTOR)
    try:
        for attr_name, type_name in _GRAPH_PROBE_ATTRIBUTES:
            value = graph._value(int(AttributeName[attr_name]))
            if value is not None:
                probe.set(AttributeName[attr_name], AttributeType[type_name], value)
        try:
            probe._finalize(True)
        except CudnnError:
            return 0  # cuDNN refuses the operations themselves: the graph's own finalize says why
        detected = probe.get(AttributeName.CUDNN_ATTR_OPERATIONGRAPH_MODE,
                             AttributeType.CUDNN_TYPE_OPERATIONGRAPH_MODE)[0]
    finally:
        probe.close()
    if int(detected) != int(mode):
        cls = _enums.OperationGraphMode
        raise CudnnUnsafeCallError(
            f"CUDNN_ATTR_OPERATIONGRAPH_MODE: {getattr(_name_of(cls, int(mode)), 'name', mode)} does not fit this "
            f"graph, whose operations cuDNN detects as {getattr(_name_of(cls, int(detected)), 'name', detected)}: cuDNN takes a mode as given, skips "
            "its pattern matching and fails later (9.28.1 segfaults on some); set the detected mode or leave it "
            "out (AUTO)")
    return 0


def _check_finalize_preconditions(int dtype, dict deps):
    """Finalize calls cuDNN is known to crash on, refused first."""
    A = AttributeName
    if dtype == CUDNN_BACKEND_ENGINECFG_DESCRIPTOR:
        if int(A.CUDNN_ATTR_ENGINECFG_ENGINE) not in deps:
            # cuDNN 9.19 segfaults finalizing an engine config without an engine
            raise CudnnUnsafeCallError("CUDNN_BACKEND_ENGINECFG_DESCRIPTOR cannot be finalized without "
                                       "CUDNN_ATTR_ENGINECFG_ENGINE")
    elif dtype == CUDNN_BACKEND_EXECUTION_PLAN_DESCRIPTOR:
        if int(A.CUDNN_ATTR_EXECUTION_PLAN_ENGINE_CONFIG) not in deps:
            if int(A.CUDNN_ATTR_EXECUTION_PLAN_JSON_REPRESENTATION) not in deps:
                raise ValueError("CUDNN_BACKEND_EXECUTION_PLAN_DESCRIPTOR cannot be finalized: set "
                                 "CUDNN_ATTR_EXECUTION_PLAN_ENGINE_CONFIG, or CUDNN_ATTR_EXECUTION_PLAN_JSON_REPRESENTATION "
                                 "to deserialize a plan")
            if int(A.CUDNN_ATTR_EXECUTION_PLAN_HANDLE) not in deps and \
                    int(A.CUDNN_ATTR_EXECUTION_PLAN_DEVICEPROP) not in deps:
                # cuDNN 9.19 crashes (SIGSEGV) deserializing a plan with neither
                raise CudnnUnsafeCallError("a plan deserialized from JSON needs CUDNN_ATTR_EXECUTION_PLAN_HANDLE or "
                                           "CUDNN_ATTR_EXECUTION_PLAN_DEVICEPROP before finalize")


# The pointwise broadcast check (core.families.pointwise: check_pointwise, by the one rule broadcast_dims) runs on
# every pointwise finalize, the commonest op in fused graphs: its accepting case is done here in C, and anything
# else goes to the Python check, which raises with the tensors named (or accepts what this path leaves to it). The
# tensor slots are the family's (INPUT_SLOTS, OUTPUT_SLOTS), copied into these arrays when the tables are made.
cdef int[4] _PW_INPUTS
cdef int[2] _PW_OUTPUTS
DEF PW_MAX_RANK = 16


cdef object _set_tensor_dims(Descriptor op, int attr):
    """The dims tuple of the tensor set for ``attr``; None when none is set; False when it has no dims tuple."""
    t = op._value(attr)
    if t is None:
        return None
    if not isinstance(t, Descriptor):
        return False
    dims = (<Descriptor>t)._value(CUDNN_ATTR_TENSOR_DIMENSIONS)
    return dims if type(dims) is tuple else False


cdef bint _pointwise_broadcast_ok(Descriptor op) except -1:
    """True when every input has dims of one rank that broadcast and every output has the broadcast shape."""
    cdef int64_t expected[PW_MAX_RANK]
    cdef int rank = -1, i, j, n
    cdef int64_t size
    cdef object dims
    for j in range(4):
        dims = _set_tensor_dims(op, _PW_INPUTS[j])
        if dims is None:
            continue
        if dims is False:
            return False
        n = len(<tuple>dims)
        if n > PW_MAX_RANK or (rank != -1 and n != rank):
            return False
        if rank == -1:
            rank = n
            for i in range(n):
                expected[i] = 1
        for i in range(n):
            size = (<tuple>dims)[i]
            if size != 1:
                if expected[i] == 1:
                    expected[i] = size
                elif expected[i] != size:
                    return False
    if rank == -1:
        return False
    for j in range(2):
        dims = _set_tensor_dims(op, _PW_OUTPUTS[j])
        if dims is None:
            continue
        if dims is False or len(<tuple>dims) != rank:
            return False
        for i in range(rank):
            if (<tuple>dims)[i] != expected[i]:
                return False
    return True


@cython.freelist(16)  # a graph makes and drops a dozen descriptors: their memory is reused
cdef class Descriptor(Resource):
    """A cuDNN backend descriptor of one ``CUDNN_BACKEND_*_DESCRIPTOR`` type.

    Created by ``cudnnBackendCreateDescriptor`` and destroyed when collected or on ``close()``.
    ``set``/``get`` take C attribute names (``CUDNN_ATTR_*``) and attribute types (``CUDNN_TYPE_*``),
    as enum members, ints or strings, and are checked against the schema before cuDNN is called.
    Everything set on a descriptor (children, handles, host data) is kept alive with it, in one
    field (one slot per attribute of its type); ``values`` shows it.
    """

    def __cinit__(self, *args, **kwargs):
        self._ptr = NULL
        self._dtype = -1
        self._finalized = False
        self._vals = None
        self._read_from = None
        self._atypes = None
        self._mask = 0

    def __init__(self, descriptor_type):
        if self._ptr != NULL:
            raise TypeError(f"this {_name_of(DescriptorType, self._dtype).name} is already created; make a new "
                            "Descriptor")
        self._create(<int>descriptor_type if type(descriptor_type) is _DESCRIPTOR_TYPE else
                     _enum_arg(descriptor_type, DescriptorType, "descriptor_type"))

    cdef int _create(self, int dtype) except -1:
        cdef cudnnStatus_t status
        cdef cudnnBackendDescriptor_t p = NULL
        cdef cudnnBackendDescriptorType_t c_dtype
        _ensure_tables()
        if dtype < 0 or dtype >= MAX_TYPES or _DESC_OK[dtype] == 0:
            raise ValueError(f"descriptor_type: {dtype} is not a valid DescriptorType")
        if _DESC_OK[dtype] == 2:
            check_available(DescriptorType(dtype).name, "descriptor type")
        c_dtype = <cudnnBackendDescriptorType_t>dtype
        # an allocation in cuDNN: with the GIL held, as for set()
        status = cycudnn.cudnnBackendCreateDescriptor(c_dtype, &p)
        if status != CUDNN_STATUS_SUCCESS:
            raise_status(status, "cudnnBackendCreateDescriptor", DescriptorType(dtype))
        self._ptr = p
        self._dtype = dtype
        self._vals = _none_list(_N_ATTRS[dtype])
        self._mask = 0
        return 0

    def __dealloc__(self):
        # Only C calls: safe during interpreter shutdown (the library is never unloaded). The children
        # are released after this, when _vals goes, so a parent never outlives them.
        if self._ptr != NULL:
            cycudnn.cudnnBackendDestroyDescriptor(self._ptr)
            self._ptr = NULL

    cdef cudnnStatus_t _destroy(self, void* raw) noexcept nogil:
        return cycudnn.cudnnBackendDestroyDescriptor(<cudnnBackendDescriptor_t>raw)

    def close(self):
        """Destroy the descriptor now and release what it kept (idempotent; at most once whatever the threads;
        while another thread's cuDNN call uses it, that call destroys it, and what it kept, when it returns)."""
        cdef cudnnBackendDescriptor_t p = self._ptr
        if p == NULL:
            return
        self._ptr = NULL  # under the GIL: no other thread can take it from here on
        kept = (self._vals, self._read_from)
        self._forget()
        raise_status(self._retire(<void*>p, kept), "cudnnBackendDestroyDescriptor", _name_of(DescriptorType, self._dtype))

    def __enter__(self):
        return self

    def __exit__(self, *exc):
        self.close()

    def __reduce__(self):
        raise TypeError(f"cannot pickle a {type(self).__name__}: it wraps a live cuDNN descriptor of this process "
                        "(to_dict() / a plan's to_json() give plain data)")

    def __copy__(self):
        raise TypeError(f"cannot copy a {type(self).__name__}: it wraps a live cuDNN descriptor; build another one")

    def __deepcopy__(self, memo):
        raise TypeError(f"cannot copy a {type(self).__name__}: it wraps a live cuDNN descriptor; build another one")

    cdef int _check_open(self) except -1:
        if self._ptr == NULL:
            raise ValueError(f"this {_name_of(DescriptorType, self._dtype).name if self._dtype >= 0 else 'descriptor'} "
                             "is closed")
        return 0

    # -- introspection ---------------------------------------------------------------------------
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

    cdef void _forget(self) noexcept:
        """Drop what was set (after close)."""
        self._vals = None
        self._read_from = None
        self._atypes = None
        self._mask = 0

    cdef list _items(self):
        """[(attribute value, value as set)] of the attributes set, in schema order."""
        cdef Py_ssize_t i
        cdef list out = []
        if self._vals is None:
            return out
        for i in range(len(self._vals)):
            v = self._vals[i]
            if v is not None:
                out.append((_SLOT_ATTR[self._dtype][i], v))
        return out

    @property
    def children(self):
        """{attribute: tuple of the descriptors and handles kept alive for it}."""
        out = {}
        for k, v in self._items():
            items = v if type(v) is tuple else (v,)
            kept = tuple(x for x in items if isinstance(x, (Descriptor, Handle)))
            if kept:
                out[AttributeName(k)] = kept
        return out

    @property
    def set_attributes(self):
        """The attributes set (in no particular order)."""
        return frozenset(AttributeName(a) for a, _ in self._items())

    @property
    def values(self):
        """{attribute: value as set}: ints, floats, bools, tuples, enum values as ints, child descriptors
        (in schema order)."""
        return {AttributeName(a): v for a, v in self._items()}

    @property
    def read_from(self):
        """The descriptor this one was read from with get() (kept alive with it), or None."""
        return self._read_from

    cdef object _value(self, int attr):
        """The value set for ``attr`` (None when it is not set, or no attribute of this type)."""
        if 0 <= attr < _N_ATTR and _ATTR[attr].descriptor == self._dtype and self._vals is not None:
            return self._vals[_ATTR[attr].slot]
        return None

    cdef bint _has(self, int attr):
        return self._value(attr) is not None

    def value_of(self, attribute):
        """The value set for ``attribute`` (its int value or member), or None when it was not set."""
        cdef int a = _enum_arg(attribute, AttributeName, "attribute")
        _ensure_tables()
        return self._value(a)

    def attribute_type_of(self, attribute):
        """The attribute type ``attribute`` was set with (None when it was not set)."""
        cdef int a = _enum_arg(attribute, AttributeName, "attribute")
        _ensure_tables()
        if not self._has(a):
            return None
        if self._atypes is not None and a in self._atypes:
            return AttributeType(self._atypes[a])
        return AttributeType(_ATTR[a].default_type)

    # -- set ---------------------------------------------------------------------------------------
    @cython.binding(False)  # a plain method descriptor: the interpreter's specialized call, no function object
    @cython.embedsignature.format("clinic")  # ... with a __text_signature__ (inspect.signature)
    def set(self, attribute, attribute_type, values):
        """cudnnBackendSetAttribute: ``values`` is one value or a sequence (str/bytes for CUDNN_TYPE_CHAR).

        Returns the descriptor itself, so that sets chain: ``Descriptor(CUDNN_BACKEND_TENSOR_DESCRIPTOR)
        .set(CUDNN_ATTR_TENSOR_UNIQUE_ID, CUDNN_TYPE_INT64, 1).set(...)``."""
        cdef int attr, atype
        if type(attribute) is _ATTRIBUTE_NAME:
            attr = <int>attribute
        else:
            attr = _enum_arg(attribute, AttributeName, "attribute")
        if type(attribute_type) is _ATTRIBUTE_TYPE:
            atype = <int>attribute_type
        else:
            atype = _enum_arg(attribute_type, AttributeType, "attribute_type")
        self._set(attr, atype, values)
        return self

    cdef int _set(self, int attr, int atype, object values) except -1:
        """The checked set: the common cases through ``_set_fast``, everything else (and every error) here."""
        cdef AttrSpec* spec
        if 0 <= attr < _N_ATTR and _READY:
            spec = &_ATTR[attr]
            if spec.flags & F_FAST and atype == spec.default_type and spec.descriptor == self._dtype and \
                    not self._finalized and self._ptr != NULL and self._busy == 0:
                if _set_fast(self, spec, attr, atype, values):
                    return 0
        return self._set_checked(attr, atype, values)

    cdef int _set_checked(self, int attr, int atype, object values) except -1:
        # cudnnBackendSetAttribute copies a few values: it runs with the GIL held (releasing and taking the
        # GIL back would cost as much as the call, and no other thread can close what it reads meanwhile).
        cdef AttrSpec* spec
        cdef int kind
        cdef Py_ssize_t i, n, size
        cdef char inline_data[INLINE_BYTES]
        cdef char* data = inline_data
        cdef bint owned = False
        cdef object items = None
        cdef PyObject** elements = NULL
        cdef int overflow = 0
        cdef object stored = None
        cdef object v
        cdef int64_t i64
        cdef cudnnStatus_t status
        cdef cudnnFraction_t* fr
        cdef Descriptor d
        cdef Handle h
        cdef uint64_t u64
        cdef bytes raw
        cdef double dv
        _ensure_tables()
        if self._ptr == NULL:
            self._check_open()
        if attr < 0 or attr >= _N_ATTR or _ATTR[attr].descriptor < 0:
            raise ValueError(f"attribute: {attr} is not a valid AttributeName")
        spec = &_ATTR[attr]
        if spec.descriptor != self._dtype:
            raise ValueError(f"{_attr_name(attr)} is an attribute of {DescriptorType(spec.descriptor).name}, not of "
                             f"{_name_of(DescriptorType, self._dtype).name}")
        if atype < 0 or atype >= MAX_TYPES or not (spec.types >> atype) & 1:
            raise TypeError(f"{_what(self._dtype, attr)} takes attribute type {_type_names(spec.types)}, not "
                            f"{getattr(_name_of(AttributeType, atype), 'name', atype)}")
        if not (spec.flags & F_AVAILABLE):
            check_available(_attr_name(attr), _what(self._dtype, attr))
        if not _TYPE_AVAILABLE[atype]:
            check_available(AttributeType(atype).name, _what(self._dtype, attr))
        if spec.role == ROLE_GET_ONLY:
            raise ValueError(f"{_what(self._dtype, attr)} is get-only")
        if spec.flags & F_SET_UNSUPPORTED:
            raise CudnnUnsafeCallError(f"{_what(self._dtype, attr)} cannot be set from Python: "
                                       f"{_schema.ATTRIBUTES[AttributeName(attr)].set_unsupported}")
        if self._finalized:
            raise ValueError(f"{_what(self._dtype, attr)}: the descriptor is already finalized; set attributes before "
                             "finalize()")
        if self._busy:
            _refuse_busy(self, _what(self._dtype, attr))
        kind = _TYPE_KIND[atype]
        if kind == K_CHAR:
            raw = _char_bytes(values, attr, (self._dtype, attr))
            n = PyBytes_GET_SIZE(raw)
            stored = raw.decode("utf-8")
            status = cycudnn.cudnnBackendSetAttribute(self._ptr, <cudnnBackendAttributeName_t>attr,
                                                      <cudnnBackendAttributeType_t>atype, n, PyBytes_AS_STRING(raw))
        else:
            if (type(values) is list or type(values) is tuple) and kind != K_FRACTION:
                items = values
                n = len(items)
            elif (isinstance(values, int) or type(values) is float or values is None or isinstance(values, Descriptor)
                  or isinstance(values, Handle)):
                n = 1  # one value, taken as it is (no sequence made)
            else:
                items = _items(values, kind, (self._dtype, attr))
                n = len(items)
            if n < spec.count_min or (spec.count_max >= 0 and n > spec.count_max):
                raise ValueError(f"{_what(self._dtype, attr)} takes "
                                 f"{_schema.ATTRIBUTES[AttributeName(attr)].count_text()} element(s), got {n}")
            size = _KIND_SIZE[kind]
            if n * size > INLINE_BYTES:
                data = <char*>malloc(n * size)
                if data == NULL:
                    raise MemoryError()
                owned = True
            try:
                if items is not None:
                    if type(items) is not list and type(items) is not tuple:
                        items = list(items)
                    elements = PySequence_Fast_ITEMS(items)
                    if not (spec.count_max == 1 and n == 1):
                        stored = PyTuple_New(n)
                for i in range(n):
                    if items is None:
                        v = values
                    else:
                        if type(items) is list:  # an element's __index__ may have changed the list
                            if PyList_GET_SIZE(items) != n:
                                raise ValueError(f"{_what(self._dtype, attr)}: the list changed size while it was read")
                            elements = PySequence_Fast_ITEMS(items)
                        v = <object>elements[i]
                    if kind == K_INT64 or kind == K_INT32:
                        if PyLong_CheckExact(v):
                            i64 = PyLong_AsLongLongAndOverflow(v, &overflow)  # no exception state per element
                            if overflow:
                                raise ValueError(f"{_what(self._dtype, attr)}: {v} does not fit in 64 bits")
                        else:
                            i64 = _int64(v, (self._dtype, attr))
                            v = i64
                        if i64 < spec.value_min:
                            raise ValueError(_below_minimum(self._dtype, attr, i64, spec.value_min, i))
                        if kind == K_INT64:
                            (<int64_t*>data)[i] = i64
                        else:
                            if i64 < -2147483648 or i64 > 2147483647:
                                raise ValueError(f"{_what(self._dtype, attr)}: {i64} does not fit in 32 bits")
                            (<int32_t*>data)[i] = <int32_t>i64
                    elif kind == K_ENUM:
                        if type(v) is _ENUM_CLASS[atype]:  # a member is kept as it is (no int made)
                            i64 = _enum_member_value(<int>v, atype, self._dtype, attr)
                        else:
                            i64 = _enum_element(v, atype, (self._dtype, attr))
                            v = <int>i64
                        (<int32_t*>data)[i] = <int32_t>i64
                    elif kind == K_DESC:
                        if not isinstance(v, Descriptor):
                            raise TypeError(f"{_what(self._dtype, attr)} takes cudnn_backend.Descriptor objects, not "
                                            f"{type(v).__name__}")
                        d = <Descriptor>v
                        if d._ptr == NULL:
                            raise ValueError(f"{_what(self._dtype, attr)}: element {i} "
                                             f"({_dtype_name(d._dtype)}) is closed")
                        if spec.accepts and not ((spec.accepts >> d._dtype) & 1):
                            raise TypeError(f"{_what(self._dtype, attr)} takes {_descriptor_names(spec.accepts)}, "
                                            f"element {i} is a "
                                            f"{DescriptorType(d._dtype).name}")
                        if not d._finalized:
                            raise ValueError(f"{_what(self._dtype, attr)}: element {i} "
                                             f"({DescriptorType(d._dtype).name}) is not finalized; finalize it first")
                        (<cudnnBackendDescriptor_t*>data)[i] = d._ptr
                    elif kind == K_FLOAT:
                        dv = PyFloat_AS_DOUBLE(v) if type(v) is float else _real(v, (self._dtype, attr))
                        (<float*>data)[i] = <float>dv
                        v = <double>(<float>dv)
                    elif kind == K_DOUBLE:
                        dv = PyFloat_AS_DOUBLE(v) if type(v) is float else _real(v, (self._dtype, attr))
                        (<double*>data)[i] = dv
                        if type(v) is not float:
                            v = dv
                    elif kind == K_BOOL:
                        if v is True or v is False:
                            pass
                        elif type(v).__module__ == "numpy" and type(v).__name__ in ("bool_", "bool"):
                            v = bool(v)
                        elif PyLong_CheckExact(v) and (v == 0 or v == 1):
                            v = v == 1
                        else:
                            raise TypeError(f"{_what(self._dtype, attr)}: expected a bool, not {v!r}")
                        (<uint8_t*>data)[i] = 1 if v else 0
                    elif kind == K_FRACTION:
                        v = _fraction_element(v, (self._dtype, attr))
                        if v[0] < spec.value_min:
                            raise ValueError(_below_minimum(self._dtype, attr, v[0], spec.value_min, i))
                        fr = &(<cudnnFraction_t*>data)[i]
                        fr.numerator = v[0]
                        fr.denominator = v[1]
                    elif kind == K_PTR:
                        if spec.flags & F_HOST_DATA:
                            v = _host_copy(v, (self._dtype, attr))
                            (<void**>data)[i] = <void*><intptr_t>v.ctypes.data
                        elif v is None:
                            v = 0
                            (<void**>data)[i] = NULL
                        else:
                            v = _index(v, (self._dtype, attr))
                            if v < 0 or v >= ADDRESS_LIMIT:
                                raise ValueError(f"{_what(self._dtype, attr)}: {v} is not a valid address")
                            u64 = v
                            (<void**>data)[i] = <void*><uintptr_t>u64
                    elif kind == K_HANDLE:
                        if not isinstance(v, Handle):
                            raise TypeError(f"{_what(self._dtype, attr)} takes a cudnn_backend.Handle, not "
                                            f"{type(v).__name__}")
                        h = <Handle>v
                        if h._handle == NULL:
                            raise ValueError(f"{_what(self._dtype, attr)}: the Handle is closed")
                        (<cudnnHandle_t*>data)[i] = h._handle
                    else:
                        raise TypeError(f"{_what(self._dtype, attr)}: attribute type {AttributeType(atype).name} is "
                                        "not supported")
                    if stored is not None:
                        Py_INCREF(v)
                        PyTuple_SET_ITEM(stored, i, v)
                    else:
                        stored = v
                status = cycudnn.cudnnBackendSetAttribute(self._ptr, <cudnnBackendAttributeName_t>attr,
                                                          <cudnnBackendAttributeType_t>atype, n, data)
            finally:
                if owned:
                    free(data)
        if _pending_interrupt is not None:
            _raise_pending_interrupt()
        if status != CUDNN_STATUS_SUCCESS:
            raise_status(status, "cudnnBackendSetAttribute", DescriptorType(self._dtype), AttributeName(attr))
        self._vals[spec.slot] = stored
        if spec.bit >= 0:
            self._mask |= (<uint64_t>1) << spec.bit
        if atype != spec.default_type:
            if self._atypes is None:
                self._atypes = {}
            self._atypes[attr] = atype
        elif self._atypes is not None:
            self._atypes.pop(attr, None)
        return 0

    cdef int _set_auto(self, int attr, object values) except -1:
        """Set with the attribute type the value calls for, where the attribute takes several."""
        _ensure_tables()
        self._set(attr, _choose_type(attr, values), values)
        return 0

    def set_auto(self, attribute, values):
        """Set ``attribute`` with the attribute type its schema prefers for ``values`` (see ``choose_type``)."""
        self._set_auto(_enum_arg(attribute, AttributeName, "attribute"), values)

    # -- get ---------------------------------------------------------------------------------------
    cdef tuple _get_spec(self, object attribute, object attribute_type):
        cdef int attr = _enum_arg(attribute, AttributeName, "attribute")
        cdef int atype = _enum_arg(attribute_type, AttributeType, "attribute_type")
        cdef AttrSpec* spec
        _ensure_tables()
        self._check_open()
        if attr < 0 or attr >= _N_ATTR or _ATTR[attr].descriptor < 0:
            raise ValueError(f"attribute: {attr} is not a valid AttributeName")
        spec = &_ATTR[attr]
        if spec.descriptor != self._dtype:
            raise ValueError(f"{_attr_name(attr)} is an attribute of {DescriptorType(spec.descriptor).name}, not of "
                             f"{_name_of(DescriptorType, self._dtype).name}")
        if atype < 0 or atype >= MAX_TYPES or not (spec.types >> atype) & 1:
            raise TypeError(f"{_what(self._dtype, attr)} takes attribute type {_type_names(spec.types)}, not "
                            f"{getattr(_name_of(AttributeType, atype), 'name', atype)}")
        if not (spec.flags & F_AVAILABLE):
            check_available(_attr_name(attr), _what(self._dtype, attr))
        if not _TYPE_AVAILABLE[atype]:
            check_available(AttributeType(atype).name, _what(self._dtype, attr))
        if spec.flags & F_GET_UNSUPPORTED:
            raise CudnnUnsafeCallError(f"{_what(self._dtype, attr)} cannot be read with get(): "
                                       f"{_schema.ATTRIBUTES[AttributeName(attr)].get_unsupported}")
        return attr, atype

    def element_count(self, attribute, attribute_type):
        """How many elements cuDNN holds for an attribute (GetAttribute with requestedElementCount 0)."""
        attr, atype = self._get_spec(attribute, attribute_type)
        return self._count(attr, atype)

    cdef int64_t _count(self, int attr, int atype) except -1:
        cdef cudnnStatus_t status
        cdef int64_t count = 0
        cdef cudnnBackendDescriptor_t p
        cdef int transport = _ATTR[attr].get_type if _ATTR[attr].get_type >= 0 else atype
        clear_last_error()
        enter_call(self, None, None)
        p = self._ptr  # after the gate: open, and kept open until the call returns
        with nogil:
            status = cycudnn.cudnnBackendGetAttribute(p, <cudnnBackendAttributeName_t>attr,
                                                      <cudnnBackendAttributeType_t>transport, 0, &count, NULL)
        leave_call(self, None, None)
        raise_status(status, "cudnnBackendGetAttribute", DescriptorType(self._dtype), AttributeName(attr))
        if count < 0:
            # cuDNN 9.19 answers -1 for e.g. a RESAMPLE descriptor finalized without SPATIAL_DIMS; -1 is also this
            # function's error value, and taken as one it crashed the interpreter (an exception that was never set)
            raise CudnnUnsafeCallError(f"{_what(self._dtype, attr)}: cuDNN reports {count} elements")
        return count

    def get(self, attribute, attribute_type, count=None, descriptor_type=None, cls=None):
        """cudnnBackendGetAttribute: a list of values (a str for CUDNN_TYPE_CHAR).

        ``count=None`` asks cuDNN for the element count first. For descriptor-valued attributes the
        children are created here, of the schema's descriptor type (or ``descriptor_type`` where the
        attribute accepts several), as ``cls`` (a Descriptor subclass, e.g. a typed class) or plain
        Descriptors; each keeps this descriptor alive.
        """
        cdef cudnnStatus_t status
        cdef _Buffer buf
        cdef int64_t requested, got = 0
        cdef Descriptor child
        cdef Py_ssize_t i, elem
        cdef int attr, atype, kind, transport, child_type
        cdef AttrSpec* spec
        cdef cudnnBackendDescriptor_t p
        attr, atype = self._get_spec(attribute, attribute_type)
        spec = &_ATTR[attr]
        kind = _TYPE_KIND[atype]
        if kind == K_NONE:
            raise TypeError(f"{_what(self._dtype, attr)}: attribute type {AttributeType(atype).name} is not supported")
        if count is None and spec.get_max_count:
            requested = spec.get_max_count
        elif count is None:
            try:
                requested = self._count(attr, atype)
            except CudnnBadParamError:
                # some attributes refuse the count query (BAD_PARAM) but answer a sized get
                if spec.count_max < 0:
                    raise
                requested = spec.count_max
        else:
            wanted = as_int(count, f"{_what(self._dtype, attr)}: count", 0)
            limit = MAX_GET_DESCRIPTORS if kind == K_DESC else MAX_GET_ELEMENTS
            if wanted > limit:  # compared as Python ints: a count past 2**63 is refused, not an OverflowError
                raise ValueError(f"{_what(self._dtype, attr)}: count {wanted} is too large (at most {limit})")
            requested = wanted
        if requested < 0 or requested > (MAX_GET_DESCRIPTORS if kind == K_DESC else MAX_GET_ELEMENTS):
            raise CudnnUnsafeCallError(f"{_what(self._dtype, attr)}: cuDNN reports {requested} elements")
        children = []
        if kind == K_DESC:
            child_type = _child_type(spec, descriptor_type, _what(self._dtype, attr))
            if cls is not None and not (isinstance(cls, type) and issubclass(cls, Descriptor)):
                raise TypeError("cls: expected a Descriptor subclass")
            for i in range(requested):
                child = (cls or Descriptor).__new__(cls or Descriptor)
                child._create(child_type)
                children.append(child)
        transport = spec.get_type if spec.get_type >= 0 else atype
        elem = max(_KIND_SIZE[kind], _KIND_SIZE[_TYPE_KIND[transport]])
        buf = _Buffer(requested * elem + (1 if kind == K_CHAR else 0))
        if kind == K_DESC:
            for i in range(requested):
                (<cudnnBackendDescriptor_t*>buf.data)[i] = (<Descriptor>children[i])._ptr
        clear_last_error()
        enter_call(self, None, None)  # (the children are new: no other thread knows them)
        p = self._ptr  # after the gate: open, and kept open until the call returns
        with nogil:
            status = cycudnn.cudnnBackendGetAttribute(p, <cudnnBackendAttributeName_t>attr,
                                                      <cudnnBackendAttributeType_t>transport, requested, &got,
                                                      <void*>buf.data if requested > 0 else NULL)
        leave_call(self, None, None)
        raise_status(status, "cudnnBackendGetAttribute", DescriptorType(self._dtype), AttributeName(attr))
        n = min(got, requested)
        if elem != _KIND_SIZE[kind] and n > 1:
            raise CudnnUnsafeCallError(f"{_what(self._dtype, attr)}: multi-element get through "
                                       f"{AttributeType(transport).name}")
        if kind == K_CHAR:
            return buf.data[:n].split(b"\0", 1)[0].decode("utf-8", "replace")
        if kind == K_DESC:
            for i in range(n):
                child = <Descriptor>children[i]
                child._finalized = True  # cuDNN filled it in: as finalized as its parent's contents
                child._read_from = self
            for i in range(n, requested):
                (<Descriptor>children[i]).close()
        return _unpack(kind, buf, n, atype, children)

    # -- finalize ----------------------------------------------------------------------------------
    @cython.binding(False)  # a plain method descriptor, as set()
    @cython.embedsignature.format("clinic")
    def finalize(self, check_required=True):
        """cudnnBackendFinalize, after checking the schema's required attributes and what cuDNN crashes on."""
        return self._finalize(check_required)

    cdef object _finalize(self, bint check_required):
        cdef cudnnStatus_t status
        cdef int dtype = self._dtype
        cdef uint64_t required
        cdef cudnnBackendDescriptor_t p
        _ensure_tables()
        if self._ptr == NULL:
            self._check_open()
        if self._finalized:
            raise ValueError(f"this {DescriptorType(dtype).name} is already finalized")
        if self._busy:
            _refuse_busy(self, DescriptorType(dtype).name)
        if check_required:
            required = _REQUIRED_MASK[dtype]
            if (self._mask & required) != required or _REQUIRED_BY_SLOT[dtype]:
                self._check_required()
        if dtype == CUDNN_BACKEND_EXECUTION_PLAN_DESCRIPTOR or dtype == CUDNN_BACKEND_ENGINECFG_DESCRIPTOR:
            _check_finalize_preconditions(dtype, {a: v for a, v in self._items()})
        elif dtype == CUDNN_BACKEND_OPERATIONGRAPH_DESCRIPTOR and self._has(CUDNN_ATTR_OPERATIONGRAPH_MODE):
            _check_graph_mode(self)
        if _HAS_FINALIZE_CHECK[dtype]:
            if not (dtype == CUDNN_BACKEND_OPERATION_POINTWISE_DESCRIPTOR and _pointwise_broadcast_ok(self)):
                _FINALIZE_CHECK[dtype](self)
        self._check_open()  # the checks run Python code: another thread may have closed it meanwhile
        p = self._ptr
        if _FINALIZE_NOGIL[dtype]:
            # cuDNN reads everything set on it, transitively (a heuristics' graph and its handle): held meanwhile
            enter_call(None, None, None)
            held = _hold_tree(self)
            with nogil:
                status = cycudnn.cudnnBackendFinalize(p)
            _release_tree(held)
            leave_call(None, None, None)
        else:
            # a few microseconds of cuDNN bookkeeping: with the GIL held, as for set() (the exit gate still refuses it)
            if _exiting:
                enter_call(None, None, None)  # raises CudnnShutdownError
            status = cycudnn.cudnnBackendFinalize(p)
            if _pending_interrupt is not None:
                _raise_pending_interrupt()
        if status != CUDNN_STATUS_SUCCESS:
            raise_status(status, "cudnnBackendFinalize", DescriptorType(dtype))
        if dtype != CUDNN_BACKEND_TENSOR_DESCRIPTOR and dtype != CUDNN_BACKEND_POINTWISE_DESCRIPTOR:
            # cuDNN keeps warnings of a successful finalize as its "last error": read them away now, so a
            # later failure is never explained by this call's text (tensors and pointwise descriptors give none)
            clear_last_error()
        self._finalized = True
        return self

    cdef int _check_required(self) except -1:
        """The required attributes not set, named in a ValueError (the slow path of finalize's mask test)."""
        cdef int dtype = self._dtype
        missing = [_attr_name(_REQUIRED[dtype][j]) for j in range(_N_REQUIRED[dtype])
                   if not self._has(_REQUIRED[dtype][j])]
        if missing:
            raise ValueError(f"{DescriptorType(dtype).name} cannot be finalized: required attribute(s) "
                             f"not set: {', '.join(missing)}")
        return 0

    def __repr__(self):
        name = _name_of(DescriptorType, self._dtype).name if self._dtype >= 0 else "?"
        state = "closed" if self._ptr == NULL else ("finalized" if self._finalized else "not finalized")
        return f"<cudnn_backend.Descriptor {name} {state} at 0x{<intptr_t>self._ptr:x}>"


cdef int _set_fast(Descriptor self, AttrSpec* spec, int attr, int atype, object values) except -1:
    """Set a plain value of an attribute's own type, everything about it checked here: 1 when done, 0 (having
    touched nothing) when the value is anything else, or would be refused: ``_set_checked`` then says why."""
    cdef int kind = _TYPE_KIND[atype]
    cdef Py_ssize_t i, n
    cdef int overflow = 0
    cdef long long x
    cdef int64_t ints[8]
    cdef int32_t e32
    cdef float f32
    cdef uint8_t b8
    cdef cudnnBackendDescriptor_t dp
    cdef const void* data
    cdef object stored = values
    cdef Descriptor d
    cdef cudnnStatus_t status
    if kind == K_INT64:
        if PyLong_CheckExact(values):
            if spec.count_min > 1 or spec.count_max == 0:
                return 0
            x = PyLong_AsLongLongAndOverflow(values, &overflow)
            if overflow or x < spec.value_min:
                return 0
            ints[0] = x
            n = 1
        elif type(values) is list or type(values) is tuple:
            n = len(values)
            if n < 1 or n > 8 or n < spec.count_min or (spec.count_max >= 0 and n > spec.count_max):
                return 0
            for i in range(n):
                v = (<list>values)[i] if type(values) is list else (<tuple>values)[i]
                if not PyLong_CheckExact(v):
                    return 0
                x = PyLong_AsLongLongAndOverflow(v, &overflow)
                if overflow or x < spec.value_min:
                    return 0
                ints[i] = x
            if spec.count_max == 1:
                stored = values[0]
            elif type(values) is list:
                stored = PyList_AsTuple(values)
        else:
            return 0
        data = ints
    elif kind == K_ENUM:
        if type(values) is not _ENUM_CLASS[atype] or spec.count_min > 1 or spec.count_max == 0:
            return 0
        e32 = <int32_t><int>values
        if e32 < _ENUM_MIN[atype] or e32 > _ENUM_MAX[atype] or _ENUM_OK[atype][e32 - _ENUM_MIN[atype]] != 1:
            return 0
        n = 1
        data = &e32
    elif kind == K_DESC:
        if not isinstance(values, Descriptor) or spec.count_min > 1 or spec.count_max == 0:
            return 0
        d = <Descriptor>values
        if d._ptr == NULL or not d._finalized or (spec.accepts and not ((spec.accepts >> d._dtype) & 1)):
            return 0
        dp = d._ptr
        n = 1
        data = &dp
    elif kind == K_FLOAT:
        if type(values) is not float or spec.count_min > 1 or spec.count_max == 0:
            return 0
        f32 = <float>PyFloat_AS_DOUBLE(values)
        stored = <double>f32
        n = 1
        data = &f32
    elif kind == K_DOUBLE:
        if type(values) is not float or spec.count_min > 1 or spec.count_max == 0:
            return 0
        n = 1
        data = &(<PyFloatObject*>values).ob_fval
    elif kind == K_BOOL:
        if (values is not True and values is not False) or spec.count_min > 1 or spec.count_max == 0:
            return 0
        b8 = 1 if values is True else 0
        n = 1
        data = &b8
    else:
        return 0
    status = cycudnn.cudnnBackendSetAttribute(self._ptr, <cudnnBackendAttributeName_t>attr,
                                              <cudnnBackendAttributeType_t>atype, n, data)
    if _pending_interrupt is not None:
        _raise_pending_interrupt()
    if status != CUDNN_STATUS_SUCCESS:
        raise_status(status, "cudnnBackendSetAttribute", DescriptorType(self._dtype), AttributeName(attr))
    self._vals[spec.slot] = stored
    if spec.bit >= 0:
        self._mask |= (<uint64_t>1) << spec.bit
    if self._atypes is not None:
        self._atypes.pop(attr, None)
    return 1


cdef str _type_names(uint64_t mask):
    return " or ".join([AttributeType(t).name for t in range(MAX_TYPES) if (mask >> t) & 1])


cdef str _descriptor_names(uint64_t mask):
    return " or ".join([DescriptorType(t).name for t in range(MAX_TYPES) if (mask >> t) & 1])


cdef str _below_minimum(int dtype, int attr, int64_t value, int64_t minimum, Py_ssize_t index):
    return (f"{_what(dtype, attr)}: element {index} is {value}; it must be >= {minimum}"
            + (" (zero and negative sizes are refused: cuDNN divides by them)" if minimum == 1 else ""))


cdef int _child_type(AttrSpec* spec, object descriptor_type, str what) except -1:
    accepted = [t for t in range(MAX_TYPES) if (spec.accepts >> t) & 1]
    if descriptor_type is None:
        if len(accepted) != 1:
            raise TypeError(f"{what} can hold several descriptor types "
                            f"({', '.join(DescriptorType(t).name for t in accepted)}); pass descriptor_type=")
        return accepted[0]
    t = _enum_arg(descriptor_type, DescriptorType, f"{what}: descriptor_type")
    if accepted and t not in accepted:
        raise TypeError(f"{what} holds {' or '.join(DescriptorType(a).name for a in accepted)}, not "
                        f"{_dtype_name(t)}")
    return t


cdef list _unpack(int kind, _Buffer buf, Py_ssize_t n, int atype, list children):
    cdef Py_ssize_t i
    cdef list out = []
    cdef cudnnFraction_t fr
    enum_cls = _ENUM_CLASS[atype] if kind == K_ENUM else None
    for i in range(n):
        if kind == K_INT64:
            out.append((<int64_t*>buf.data)[i])
        elif kind == K_INT32:
            out.append((<int32_t*>buf.data)[i])
        elif kind == K_ENUM:
            v = (<int32_t*>buf.data)[i]
            try:
                out.append(enum_cls(v))
            except ValueError:  # a value newer than our header
                out.append(v)
        elif kind == K_BOOL:
            out.append(bool((<uint8_t*>buf.data)[i]))
        elif kind == K_FLOAT:
            out.append((<float*>buf.data)[i])
        elif kind == K_DOUBLE:
            out.append((<double*>buf.data)[i])
        elif kind == K_PTR:
            out.append(<uintptr_t>(<void**>buf.data)[i])
        elif kind == K_FRACTION:
            fr = (<cudnnFraction_t*>buf.data)[i]
            out.append((fr.numerator, fr.denominator))
        elif kind == K_DESC:
            out.append(children[i])
        elif kind == K_HANDLE:
            out.append(<uintptr_t>(<cudnnHandle_t*>buf.data)[i])
    return out


cdef int _choose_type(int attr, object value) except -1:
    """The attribute type to set ``value`` with: the only one, or the one that fits the value."""
    cdef AttrSpec* spec
    cdef int t
    if attr < 0 or attr >= _N_ATTR or _ATTR[attr].descriptor < 0:
        raise ValueError(f"attribute: {attr} is not a valid AttributeName")
    spec = &_ATTR[attr]
    if (spec.types & (spec.types - 1)) == 0:
        return spec.default_type
    probe = value
    if (type(value) is list or type(value) is tuple) and len(value) > 0:
        probe = value[0]
    if type(probe) is float:  # FLOAT first, as cudnn-frontend and C code set alphas: cuDNN 9.19's conv reads a
        for t in (CUDNN_TYPE_FLOAT, CUDNN_TYPE_DOUBLE):  # DOUBLE alpha as 0.0 (all-zero output, seen on an H100)
            if (spec.types >> t) & 1:
                return t
    if isinstance(probe, Descriptor) and (spec.types >> CUDNN_TYPE_BACKEND_DESCRIPTOR) & 1:
        return CUDNN_TYPE_BACKEND_DESCRIPTOR
    if (spec.types >> CUDNN_TYPE_FRACTION) & 1 and (isinstance(probe, fractions.Fraction) or type(probe) is tuple):
        return CUDNN_TYPE_FRACTION
    if _is_int_like(probe):
        for t in (CUDNN_TYPE_INT64, CUDNN_TYPE_INT32):
            if (spec.types >> t) & 1:
                return t
    if isinstance(probe, numbers.Real) and not isinstance(probe, bool):
        for t in (CUDNN_TYPE_FLOAT, CUDNN_TYPE_DOUBLE):
            if (spec.types >> t) & 1:
                return t
    return spec.default_type


def choose_type(attribute, value):
    """The attribute type ``set_auto`` uses for ``value`` (AttributeType)."""
    _ensure_tables()
    return AttributeType(_choose_type(_enum_arg(attribute, AttributeName, "attribute"), value))


def attribute_io(attribute):
    """'input' or 'output' for an operation's tensor attribute, else None (from the generated schema)."""
    cdef int a = _enum_arg(attribute, AttributeName, "attribute")
    _ensure_tables()
    if a < 0 or a >= _N_ATTR:
        return None
    return (None, "input", "output")[_ATTR[a].io]


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
    p = as_int(prop, "property", 0, 2)
    c_prop = <libraryPropertyType><int>p
    enter_call(None, None, None)
    with nogil:
        status = cycudnn.cudnnGetProperty(c_prop, &value)
    leave_call(None, None, None)
    raise_status(status, "cudnnGetProperty")
    return value


def graph_version_check():
    """cudnnGraphVersionCheck: raises if cuDNN's graph sub-library does not match."""
    cdef cudnnStatus_t status
    enter_call(None, None, None)
    with nogil:
        status = cycudnn.cudnnGraphVersionCheck()
    leave_call(None, None, None)
    raise_status(status, "cudnnGraphVersionCheck")


def get_error_string(status):
    """cudnnGetErrorString: cuDNN's name for a status code."""
    cdef const char* s = cycudnn.cudnnGetErrorString(<cudnnStatus_t><int>as_int(status, "status", 0, 0x7FFFFFFF))
    return (<bytes>s).decode() if s != NULL else ""


def get_execution_plan_workspace_size(Handle handle, Descriptor execution_plan not None, Descriptor variant_pack=None):
    """cudnnGetExecutionPlanWorkspaceSize (cuDNN >= 9.23): the workspace (bytes) a finalized plan needs for a
    finalized variant pack, whose shape overrides may change it. cuDNN answers BAD_PARAM without a handle or a
    pack (measured, 9.28.1): both are required here, so it runs on a GPU only. (``VariantPack``'s own query
    takes raw pointers; see runtime/_execute.pyx.)"""
    cdef size_t size = 0
    cdef cudnnStatus_t status
    cdef cudnnBackendDescriptor_t pack = NULL
    cdef cudnnHandle_t c_handle = NULL
    cdef cudnnBackendDescriptor_t plan_ptr
    check_available("cudnnGetExecutionPlanWorkspaceSize", "the workspace of a plan for one variant pack")
    if handle is None:
        raise ValueError("handle: cudnnGetExecutionPlanWorkspaceSize needs a cuDNN Handle (cuDNN refuses a NULL "
                         "handle with BAD_PARAM), so the workspace of a variant pack is known on a GPU only")
    handle._check_open()
    c_handle = handle._handle
    execution_plan._check_open()
    if execution_plan._dtype != CUDNN_BACKEND_EXECUTION_PLAN_DESCRIPTOR:
        raise TypeError("execution_plan: expected a CUDNN_BACKEND_EXECUTION_PLAN_DESCRIPTOR")
    if not execution_plan.finalized:
        raise ValueError("execution_plan: not finalized")
    if variant_pack is None:
        raise ValueError("variant_pack: cudnnGetExecutionPlanWorkspaceSize needs a finalized variant pack (cuDNN "
                         "refuses NULL with BAD_PARAM)")
    variant_pack._check_open()
    if variant_pack._dtype != CUDNN_BACKEND_VARIANT_PACK_DESCRIPTOR:
        raise TypeError("variant_pack: expected a CUDNN_BACKEND_VARIANT_PACK_DESCRIPTOR")
    if not variant_pack.finalized:  # cuDNN 9.28.1 aborts (std::length_error) on a pack whose finalize failed
        raise ValueError("variant_pack: not finalized")
    pack = variant_pack._ptr
    plan_ptr = execution_plan._ptr
    enter_call(handle, execution_plan, variant_pack)
    try:  # the binding raises CudnnFunctionNotFoundError on a cuDNN older than 9.23: the call count must not leak
        with nogil:
            status = cycudnn.cudnnGetExecutionPlanWorkspaceSize(c_handle, plan_ptr, pack, &size)
    finally:
        leave_call(handle, execution_plan, variant_pack)
    raise_status(status, "cudnnGetExecutionPlanWorkspaceSize", execution_plan.descriptor_type)
    return size


def is_same_topology(Descriptor graph not None, Descriptor other not None):
    """CUDNN_ATTR_OPERATIONGRAPH_IS_SAME_TOPOLOGY: whether two finalized operation graphs have the
    same topology (a query, not an attribute: cuDNN writes the answer into the element count)."""
    cdef cudnnStatus_t status
    cdef int64_t answer = 0
    cdef cudnnBackendDescriptor_t other_ptr, graph_ptr
    cdef cudnnBackendAttributeName_t c_attr = CUDNN_ATTR_OPERATIONGRAPH_IS_SAME_TOPOLOGY
    graph._check_open()
    other._check_open()
    for g in (graph, other):
        if g.descriptor_type != DescriptorType.CUDNN_BACKEND_OPERATIONGRAPH_DESCRIPTOR or not g.finalized:
            raise TypeError("is_same_topology compares two finalized CUDNN_BACKEND_OPERATIONGRAPH_DESCRIPTORs")
    check_available("CUDNN_ATTR_OPERATIONGRAPH_IS_SAME_TOPOLOGY", "is_same_topology")
    other_ptr = other._ptr
    graph_ptr = graph._ptr
    enter_call(graph, other, None)
    with nogil:
        status = cycudnn.cudnnBackendGetAttribute(graph_ptr, c_attr, CUDNN_TYPE_BACKEND_DESCRIPTOR, 1, &answer,
                                                  &other_ptr)
    leave_call(graph, other, None)
    raise_status(status, "cudnnBackendGetAttribute", graph.descriptor_type,
                 AttributeName.CUDNN_ATTR_OPERATIONGRAPH_IS_SAME_TOPOLOGY)
    return bool(answer & 0xFF)
