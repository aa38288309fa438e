# cython: language_level=3, boundscheck=False, wraparound=False, cdivision=True
"""``Descriptor``: a checked cuDNN backend descriptor of any type, and the queries of descriptors.

Every set/get/finalize is checked against the attribute schema (its C tables, ``core._tables``) before cuDNN sees it
(cuDNN aborts the process on some misuse, e.g. a descriptor of the wrong type as a child), and every non-success
status becomes a ``CudnnError`` carrying cuDNN's own message.

Speed: a checked ``set`` is a few table reads, a conversion loop over the values and the cuDNN call; the typed
classes (``cudnn_backend.typed``) call ``Descriptor._set`` with their attribute and type as constants, and plain
values of an attribute's own type take ``_set_fast``. A finalize that may take long (graphs, heuristics, plans)
releases the GIL and holds, through the call gate, everything cuDNN reads (``_hold_tree``).

Its lifetime is ``Resource``'s (``core._resource``): a descriptor supplies only its destroy call and what it keeps
(every child, handle and host-data copy set on it, in ``_vals``). The names other modules of ``core`` hold (the
call gate, versions, coercion, the library queries, ``Handle``) are re-exported here, where they were first
defined.
"""
import enum
import fractions
import importlib
import numbers

cimport cython
from cpython.bytes cimport PyBytes_AS_STRING, PyBytes_GET_SIZE
from cpython.float cimport PyFloat_AS_DOUBLE
from cpython.long cimport PyLong_AsLongLongAndOverflow, PyLong_CheckExact
from cpython.object cimport Py_TYPE
from cpython.ref cimport Py_INCREF, Py_XDECREF, PyObject
from cpython.list cimport PyList_GET_SIZE, PyList_New, PyList_SET_ITEM
from cpython.sequence cimport PySequence_Fast_ITEMS
from cpython.list cimport PyList_AsTuple
from cpython.tuple cimport PyTuple_GET_SIZE, PyTuple_New, PyTuple_SET_ITEM
from libc.stdint cimport int32_t, int64_t, intptr_t, uint8_t, uint64_t, uintptr_t
from libc.math cimport isinf
from libc.stdlib cimport free, malloc, qsort, realloc
from libc.string cimport memcpy, memset

from cudnn_backend._bindings.cycudnn cimport *
from cudnn_backend._bindings cimport cycudnn
from cudnn_backend.core._coerce cimport (
    _attr_name, _dtype_name, _enum_arg, _index, _int64, _is_int_like, _real, _w, _what,
)
from cudnn_backend.core._handle cimport Handle as _Handle  # (the name Handle: re-exported in Python)
from cudnn_backend.core._context cimport use_context
from cudnn_backend.core._fastcall cimport call_def, method_in_front
from cudnn_backend.core._gate cimport _exiting, _pending_interrupt, _raise_pending_interrupt, enter_call, leave_call
from cudnn_backend.core._status cimport _LOADED_VERSION, _UNAVAILABLE, clear_last_error, raise_status
from cudnn_backend.core._tables cimport *

import numpy as np

from cudnn_backend._bindings import enums as _enums
from cudnn_backend._bindings.enums import AttributeName, AttributeType, DataType, DescriptorType
from cudnn_backend.core import schema as _schema
from cudnn_backend.core._coerce import ADDRESS_LIMIT, _name_of, as_int
from cudnn_backend.core._status import check_available
from cudnn_backend.core import data_types as _data_types
from cudnn_backend.core import graph_crashes as _graph_crashes
from cudnn_backend.core import graph_limits as _graph_limits
from cudnn_backend.core.versions import format_version
from cudnn_backend.errors import (CudnnBadParamError, CudnnError, CudnnNotSupportedError,  # noqa: F401 - CudnnError:
                                  CudnnUnsafeCallError, CudnnVersionError, EngineError)  # a name this module has always had
from cudnn_backend.errors import GraphError
from cudnn_backend.core import names as _names

# Re-exported: what this module defined before core's split (its stub, and downstream code, name them here)
from cudnn_backend.core._coerce import INT64_MAX, INT64_MIN, user_sequence  # noqa: F401
from cudnn_backend.core._gate import EXIT_WAIT_SECONDS, calls_in_flight  # noqa: F401
from cudnn_backend.core._handle import Handle  # noqa: F401
from cudnn_backend.core._library import (  # noqa: F401
    get_cudart_version,
    get_error_string,
    get_max_device_version,
    get_property,
    get_version,
    graph_version_check,
)
from cudnn_backend.core._resource import Resource  # noqa: F401
from cudnn_backend.core._status import (  # noqa: F401
    clear_error,
    is_available,
    last_error_string,
    since_of,
    unavailable_enumerants,
)
from cudnn_backend.core._tables import (  # noqa: F401
    KIND_NAMES,
    PY_MAX_GET_DESCRIPTORS,
    PY_MAX_GET_ELEMENTS,
    PY_MAX_SET_ELEMENTS,
    attribute_io,
)
from cudnn_backend.errors import (  # noqa: F401
    DEBUG_HINT,
    CudnnBackendError,
    CudnnShutdownError,
    NoDeviceError,
    error_class,
    make_error,
)
from cudnn_backend._bindings.enums import Status  # noqa: F401
from cudnn_backend.core.versions import parse_version  # noqa: F401

cdef extern from "Python.h":
    ctypedef struct PyFloatObject:
        double ob_fval

cdef SchemaTables TABLES  # a copy of the schema's C tables (core._tables): every set, get and finalize reads it


cdef inline int _ensure_tables() except -1:
    global TABLES
    if not TABLES.ready:
        TABLES = schema_tables()[0]
    return 0


cdef extern from "Python.h":
    PyObject* _list_item "PyList_GET_ITEM"(object values, Py_ssize_t i)  # borrowed
    PyObject* _tuple_item "PyTuple_GET_ITEM"(object values, Py_ssize_t i)  # borrowed


cdef inline void _store(list vals, Py_ssize_t slot, object value) noexcept:
    """vals[slot] = value, for a slot of a descriptor's _vals (one per attribute of its type: it exists)."""
    cdef PyObject* old = _list_item(vals, slot)
    Py_INCREF(value)
    PyList_SET_ITEM(vals, slot, value)
    Py_XDECREF(old)


cdef inline bint _takes_type(AttrSpec* spec, int atype) noexcept:
    """Whether the attribute is set and read as ``atype`` (one of the types its schema entry lists)."""
    return 0 <= atype < MAX_TYPES and (spec.types >> atype) & 1


cdef object _ATTRIBUTE_NAME = AttributeName  # the enum classes, for identity tests without a global lookup
cdef object _ATTRIBUTE_TYPE = AttributeType
cdef object _DESCRIPTOR_TYPE = DescriptorType


cdef inline int _descriptor_type_arg(object descriptor_type) except? -1:
    """The ``descriptor_type`` argument of the constructor as an int (a member taken as it is)."""
    if type(descriptor_type) is _DESCRIPTOR_TYPE:
        return <int>descriptor_type
    return _enum_arg(descriptor_type, DescriptorType, "descriptor_type")


# ------------------------------------------------------------------------------------------------
# a long call holds everything it reads
# ------------------------------------------------------------------------------------------------
cdef enum:
    HELD_INLINE = 32  # a long call's held objects kept without malloc (a graph's finalize holds a dozen)


ctypedef struct HeldTree:                # what a long call holds: a strong reference to each, counted in flight
    PyObject** items                     # inline_items, or malloc'ed when more
    Py_ssize_t n, capacity
    PyObject* inline_items[HELD_INLINE]


cdef int _hold_tree(Descriptor root, HeldTree* held) except -1:
    """For a call that reads a descriptor and everything set on it, transitively (a plan's engine config, its
    graph, the graph's handle): a reference to each, counted in flight, for ``_release_tree``. Walked with borrowed
    references into a C array (no Python object made): a graph's finalize holds a dozen descriptors."""
    cdef Py_ssize_t i = 0, k
    cdef int j, dtype
    cdef PyObject* v
    cdef PyObject* x
    cdef Descriptor d
    held.items = held.inline_items
    held.n = 0
    held.capacity = HELD_INLINE
    _hold_one(held, <PyObject*>root)
    try:
        while i < held.n:
            x = held.items[i]
            i += 1
            if not isinstance(<object>x, Descriptor):
                if isinstance(<object>x, _Handle) and (<_Handle>x)._cuda.context != NULL:
                    use_context((<_Handle>x)._cuda.context)  # a plan loads its kernels into the context
                continue
            d = <Descriptor>x
            dtype = d._dtype
            if d._vals is None or dtype < 0:
                continue
            for j in range(TABLES.n_child_slots[dtype]):  # only the attributes that take descriptors or a handle
                v = _list_item(d._vals, TABLES.child_slots[dtype][j])
                if type(<object>v) is tuple:
                    for k in range(PyTuple_GET_SIZE(<object>v)):
                        _hold_one(held, _tuple_item(<object>v, k))
                else:
                    _hold_one(held, v)
    except BaseException:  # (no memory to grow into): what was counted is uncounted
        _release_tree(held)
        raise
    return 0


cdef inline int _hold_one(HeldTree* held, PyObject* x) except -1:
    cdef PyObject** grown
    if not isinstance(<object>x, _Resource):
        return 0
    if held.n == held.capacity:
        grown = <PyObject**>malloc(2 * held.capacity * sizeof(PyObject*))
        if grown == NULL:
            raise MemoryError()
        memcpy(grown, held.items, held.n * sizeof(PyObject*))
        if held.items != held.inline_items:
            free(held.items)
        held.items = grown
        held.capacity *= 2
    Py_INCREF(<object>x)
    (<_Resource>x)._enter()
    held.items[held.n] = x
    held.n += 1
    return 0


cdef void _release_tree(HeldTree* held) noexcept:
    cdef Py_ssize_t i
    for i in range(held.n):
        (<_Resource>held.items[i])._leave()
    for i in range(held.n):
        Py_XDECREF(held.items[i])
    if held.items != held.inline_items:
        free(held.items)
    held.items = held.inline_items
    held.n = 0



cdef list _none_list(Py_ssize_t n):
    """[None] * n, made directly."""
    cdef Py_ssize_t i
    cdef list out = PyList_New(n)
    for i in range(n):
        Py_INCREF(None)
        PyList_SET_ITEM(out, i, None)
    return out



# ------------------------------------------------------------------------------------------------
# the element array of one set/get call, and the elements read into it
# ------------------------------------------------------------------------------------------------
ctypedef struct ElementBuffer:
    char* data                           # inline_data, or malloc'ed when larger
    char inline_data[INLINE_BYTES]       # most attribute arrays fit: no malloc for them


cdef inline char* _elements(ElementBuffer* buf, Py_ssize_t nbytes, bint zero) except NULL:
    """The array of ``nbytes`` for one Set/GetAttribute call (``_free_elements`` after it)."""
    if nbytes <= INLINE_BYTES:
        buf.data = buf.inline_data
    else:
        buf.data = <char*>malloc(nbytes)
        if buf.data == NULL:
            raise MemoryError()
    if zero:
        memset(buf.data, 0, nbytes if nbytes > 0 else 1)
    return buf.data


cdef inline void _free_elements(ElementBuffer* buf) noexcept:
    if buf.data != NULL and buf.data != buf.inline_data:
        free(buf.data)
    buf.data = NULL


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
    if t is int or t is float or t is bool or isinstance(values, (numbers.Number, Descriptor, _Handle, str, bytes,
                                                                  bytearray, enum.Enum)):
        return (values,)
    if isinstance(values, (set, frozenset, dict)):  # (no order: which element went where would be chance)
        raise TypeError(f"{_w(what)}: a {type(values).__name__} has no order; give a list or tuple")
    if isinstance(values, np.ndarray):
        if values.ndim > 1:
            raise TypeError(f"{_w(what)}: a {values.ndim}-d array; an attribute takes one value or a flat sequence")
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
    cdef object cls = <object>TABLES.enum_class[atype]
    cdef int64_t i
    cdef int state
    if type(v) is cls:
        i = <int64_t>v
    elif PyLong_CheckExact(v):
        i = _int64(v, what)
    elif isinstance(v, str):
        try:
            i = int(cls[v])
        except KeyError:
            raise ValueError(f"{_w(what)}: {v!r} is not a name of {cls.__name__}") from None
    elif isinstance(v, bool) or isinstance(v, enum.Enum):
        raise TypeError(f"{_w(what)}: expected a {cls.__name__} member, not {type(v).__name__}"
                        f"{'.' + v.name if isinstance(v, enum.Enum) else ''}")
    else:
        i = _int64(v, what)
    state = _enum_state(atype, i)
    if state == 0:
        raise ValueError(f"{_w(what)}: {i} is not a valid {cls.__name__}")
    if state == 2:
        name = cls(i).name
        raise CudnnVersionError(name, _UNAVAILABLE[name], format_version(_LOADED_VERSION), what)
    return <int>i


cdef inline int _enum_state(int atype, int64_t value) noexcept:
    """0: no member of the attribute type's enum; 1: a member; 2: a member newer than the loaded cuDNN."""
    if value < TABLES.enum_min[atype] or value > TABLES.enum_max[atype]:
        return 0
    return TABLES.enum_ok[atype][value - TABLES.enum_min[atype]]


cdef inline int _enum_member_value(int i, int atype, int dtype, int attr) except? -1:
    """A member of the attribute type's own enum: only the loaded cuDNN's version is left to check."""
    cdef int state = _enum_state(atype, i)
    if state == 0:
        raise ValueError(f"{_what(dtype, attr)}: {i} is not a valid {(<object>TABLES.enum_class[atype]).__name__}")
    if state == 2:
        name = (<object>TABLES.enum_class[atype])(i).name
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
    first in AUTO mode (the probe, destroyed at once) and a different mode is refused, naming the detected one; a
    graph cuDNN refuses in AUTO mode is refused with cuDNN's reason.
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
        except (CudnnBadParamError, CudnnNotSupportedError) as e:
            # the explicit mode would skip the checks that refused them (9.28.1 segfaults on a lone reshape)
            raise CudnnUnsafeCallError(
                f"CUDNN_ATTR_OPERATIONGRAPH_MODE: cuDNN refuses this graph's operations when it detects the mode "
                f"itself ({e.reason}), so the graph is not finalized in mode {_graph_mode_name(mode)}, which skips "
                f"those checks; fix the operations first") from e
        detected = probe.get(AttributeName.CUDNN_ATTR_OPERATIONGRAPH_MODE,
                             AttributeType.CUDNN_TYPE_OPERATIONGRAPH_MODE)[0]
    finally:
        probe.close()
    if int(detected) != int(mode):
        declared = isinstance(_name_of(_enums.OperationGraphMode, int(detected)), _enums.OperationGraphMode)
        fix = "set the detected mode or leave it out (AUTO)" if declared else (
            "its header declares no such mode, so no mode can be set for this graph: leave it out (AUTO)")
        raise CudnnUnsafeCallError(
            f"CUDNN_ATTR_OPERATIONGRAPH_MODE: {_graph_mode_name(mode)} does not fit this graph, whose operations "
            f"cuDNN detects as {_graph_mode_name(detected)}{'' if declared else ' (a value of no declared mode)'}: "
            f"cuDNN takes a mode as given, skips its pattern matching and fails later (9.28.1 segfaults on some); "
            f"{fix}")
    return 0


cdef Py_ssize_t _MAX_ENTRANCE_OPERATIONS = _graph_limits.MAX_ENTRANCE_OPERATIONS


cdef int _check_graph_finalize_cost(Descriptor graph) except -1:
    """Nothing cuDNN's graph finalize takes exponential time or aborts on (``core.graph_limits``); a graph of at
    most MAX_ENTRANCE_OPERATIONS operations is not looked at."""
    ops = graph._value(CUDNN_ATTR_OPERATIONGRAPH_OPS)
    if type(ops) is not tuple or len(<tuple>ops) <= _MAX_ENTRANCE_OPERATIONS:
        return 0
    problem = _graph_limits.graph_problem([_tensor_io(<Descriptor>op) for op in <tuple>ops
                                           if isinstance(op, Descriptor)])
    if problem is not None:
        raise CudnnUnsafeCallError(f"CUDNN_ATTR_OPERATIONGRAPH_OPS: {problem}")
    return 0


cdef int64_t MAX_TENSOR_SPAN = _graph_limits.MAX_TENSOR_ELEMENTS  # the Graph's bound and plan JSON's too


cdef int _check_tensor_span(Descriptor t) except -1:
    """A tensor's element count and span (1 + the sum of (dim - 1) * stride: the elements from its first to its last)
    must stay within ``graph_limits.MAX_TENSOR_ELEMENTS``, as plan JSON's do (a plan that saves loads back): cuDNN
    computes offsets and byte sizes from them in 64 bits. In C, no Python object made: this runs on every tensor's
    finalize."""
    cdef Py_ssize_t i, n
    cdef int64_t span = 1, count = 1, d, st
    dims = t._value(CUDNN_ATTR_TENSOR_DIMENSIONS)
    strides = t._value(CUDNN_ATTR_TENSOR_STRIDES)
    if type(dims) is int:  # (one value set alone is kept as it was given)
        dims = (dims,)
    if type(strides) is int:
        strides = (strides,)
    if type(dims) is not tuple or type(strides) is not tuple or len(<tuple>dims) != len(<tuple>strides):
        return 0  # cuDNN's own checks say what is wrong with these
    n = len(<tuple>dims)
    for i in range(n):
        d = <int64_t>(<tuple>dims)[i]
        st = <int64_t>(<tuple>strides)[i]
        if d <= 1:
            continue
        if st > (MAX_TENSOR_SPAN - span) // (d - 1) or d > MAX_TENSOR_SPAN // count:
            raise ValueError(f"CUDNN_BACKEND_TENSOR_DESCRIPTOR (uid {t._value(CUDNN_ATTR_TENSOR_UNIQUE_ID)}): "
                             f"{_graph_limits.tensor_extent_words(dims, strides)}")
        span += (d - 1) * st
        count *= d
    return 0


cdef int _check_by_value_tensor(Descriptor t) except -1:
    """A by-value tensor is no virtual one, and its constant value is one element of its data type: cuDNN takes
    others and reads a value of its own size from the bytes given (a float64 for a FLOAT tensor read as its first
    4 bytes, 1 byte read past its end)."""
    what = f"CUDNN_BACKEND_TENSOR_DESCRIPTOR (uid {t._value(CUDNN_ATTR_TENSOR_UNIQUE_ID)})"
    if t._value(CUDNN_ATTR_TENSOR_IS_VIRTUAL) is True:
        raise ValueError(f"{what}: CUDNN_ATTR_TENSOR_IS_BY_VALUE: a by-value tensor is never virtual (its value is "
                         "given to the variant pack or held by the tensor); set one of the two")
    value = t._value(CUDNN_ATTR_TENSOR_CONSTANT_VALUE)
    data_type = t._value(CUDNN_ATTR_TENSOR_DATA_TYPE)
    size = _data_types.element_bytes(data_type) if data_type is not None else None
    if value is not None and size is not None and len(value) != size:
        raise ValueError(f"{what}: CUDNN_ATTR_TENSOR_CONSTANT_VALUE: {len(value)} bytes, but a "
                         f"{_data_type_name(data_type)} element is "
                         f"{size}: give the value in the tensor's data type (numpy.float32(2.5) for "
                         "CUDNN_DATA_FLOAT, or its bytes)")
    if value is not None and _is_nan_value(bytes(value), data_type):
        raise ValueError(f"{what}: CUDNN_ATTR_TENSOR_CONSTANT_VALUE: {_names.NAN_REFUSED}")
    return 0


_IEEE_FLOATS = {int(DataType.CUDNN_DATA_HALF): "<f2", int(DataType.CUDNN_DATA_FLOAT): "<f4",
                int(DataType.CUDNN_DATA_DOUBLE): "<f8"}


cdef bint _is_nan_value(bytes value, object data_type) except -1:
    """Whether one element's bytes of a floating data type hold a NaN (bfloat16: float32's upper half)."""
    if data_type is None:
        return False
    code = _IEEE_FLOATS.get(int(data_type))
    if code is not None:
        return bool(np.isnan(np.frombuffer(value, code)[0]))
    if int(data_type) == int(DataType.CUDNN_DATA_BFLOAT16):
        bits = int.from_bytes(value, "little")
        return (bits & 0x7f80) == 0x7f80 and (bits & 0x7f) != 0
    return False


cdef object _data_type_name(object value):
    """``CUDNN_DATA_FLOAT`` for a data type as a tensor holds it (a member or an int; a value newer than the header
    as it is)."""
    return getattr(_name_of(DataType, value), "name", value)


cdef inline bint _tensor_below(object t, int64_t floor) except -1:
    """Whether ``t``, a tensor descriptor, has fewer than ``floor`` elements (True for anything else, and a tensor
    without dims: nothing to check)."""
    cdef Py_ssize_t j
    cdef int64_t count = 1, d
    if not isinstance(t, Descriptor) or (<Descriptor>t)._dtype != CUDNN_BACKEND_TENSOR_DESCRIPTOR:
        return True
    dims = (<Descriptor>t)._value(CUDNN_ATTR_TENSOR_DIMENSIONS)
    if type(dims) is not tuple:
        return True
    for j in range(len(<tuple>dims)):
        d = <int64_t>(<tuple>dims)[j]
        if d >= floor or (d > 0 and count >= floor // d):  # (no overflow: the product stops short of floor)
            return False
        count *= d
    return True


cdef bint _tensors_below(Descriptor op, int64_t floor) except -1:
    """Whether every tensor set on ``op`` has fewer than ``floor`` elements: its family's check refuses nothing
    then (``Family.finalize_check_floors``). No Python object is made: this runs on every such finalize."""
    cdef Py_ssize_t i, k
    if op._vals is None:
        return True
    for i in range(len(op._vals)):
        value = op._vals[i]
        if value is None or TABLES.attr[TABLES.slot_attr[op._dtype][i]].io == 0:
            continue
        if type(value) is tuple:
            for k in range(len(<tuple>value)):
                if not _tensor_below((<tuple>value)[k], floor):
                    return False
        elif not _tensor_below(value, floor):
            return False
    return True


cpdef list tensor_slots_of(Descriptor op):
    """[(attribute value, tensor descriptor, is output)] of the tensors set on an operation, in schema order: its
    attributes the schema marks as inputs or outputs (one entry per tensor of a list attribute)."""
    cdef Py_ssize_t i
    cdef int attr
    cdef AttrSpec* spec
    cdef list out = []
    if op is None:
        raise TypeError("op: expected a Descriptor, not None")
    _ensure_tables()
    if op._vals is None:
        return out
    for i in range(len(op._vals)):
        value = op._vals[i]
        if value is None:
            continue
        attr = TABLES.slot_attr[op._dtype][i]
        spec = &TABLES.attr[attr]
        if spec.io == 0:
            continue
        for t in (value if type(value) is tuple else (value,)):
            if isinstance(t, Descriptor) and (<Descriptor>t)._dtype == CUDNN_BACKEND_TENSOR_DESCRIPTOR:
                out.append((attr, t, spec.io == 2))
    return out


cdef enum:
    _IO_SLOTS_MAX = 64    # tensor attributes of one operation type (SDPA forward has 24)
    _WRITES_CHECKED = 64  # tensors of one operation held on the stack (more: on the heap; a concatenation's)

# descriptor type -> the slots (places in Descriptor._vals) of its tensor attributes; -1 before first use, 0 for a
# type that is no operation (CUDNN_BACKEND_OPERATION_*)
cdef int _n_io_slots[MAX_TYPES]
cdef int _io_slots[MAX_TYPES][_IO_SLOTS_MAX]
cdef bint _is_operation[MAX_TYPES]
for _member in DescriptorType:
    if _member.name.startswith("CUDNN_BACKEND_OPERATION_") and 0 <= int(_member) < MAX_TYPES:
        _is_operation[int(_member)] = True
for _i in range(MAX_TYPES):
    _n_io_slots[_i] = -1


cdef int _find_io_slots(int dtype) except -1:
    """Fill ``_io_slots[dtype]`` from the schema tables (once per type)."""
    cdef int n = 0, i, attr
    for i in range(TABLES.n_attrs[dtype]):
        attr = TABLES.slot_attr[dtype][i]
        if TABLES.attr[attr].io != 0:
            if n == _IO_SLOTS_MAX:
                raise RuntimeError(f"{DescriptorType(dtype).name} has more than {_IO_SLOTS_MAX} tensor attributes: "
                                   "raise _IO_SLOTS_MAX")
            _io_slots[dtype][n] = i
            n += 1
    _n_io_slots[dtype] = n
    return n


cdef struct TensorUse:
    int64_t uid
    int attr         # the operation's attribute holding it
    bint output
    bint virtual
    bint by_value
    PyObject* tensor  # its descriptor (borrowed: the operation holds it)
    Py_ssize_t op     # the operation's index in its graph (set by the graph's walk)


cdef int _tensor_uses(Descriptor op, TensorUse* uses, int cap) except -1:
    """The tensors set on an operation with a UID, in schema order, read in place over borrowed references (no Python
    object made): their UIDs, attributes, descriptors, and whether each is an output, virtual and by value. Fills at
    most ``cap`` and returns how many there are (more than ``cap``: the rest left out)."""
    cdef int n = 0, attr, k, dtype = op._dtype, overflow = 0
    cdef Py_ssize_t j, count
    cdef int uid_slot = TABLES.attr[<int>CUDNN_ATTR_TENSOR_UNIQUE_ID].slot
    cdef int virtual_slot = TABLES.attr[<int>CUDNN_ATTR_TENSOR_IS_VIRTUAL].slot
    cdef int by_value_slot = TABLES.attr[<int>CUDNN_ATTR_TENSOR_IS_BY_VALUE].slot
    cdef PyObject* value
    cdef PyObject* item
    cdef PyObject* uid
    cdef list vals = op._vals
    cdef bint is_tuple
    cdef int64_t u
    if vals is None:
        return 0
    if _n_io_slots[dtype] < 0:
        _find_io_slots(dtype)
    for k in range(_n_io_slots[dtype]):
        value = _list_item(vals, _io_slots[dtype][k])
        if value == <PyObject*>None:
            continue
        attr = TABLES.slot_attr[dtype][_io_slots[dtype][k]]
        is_tuple = type(<object>value) is tuple
        count = PyTuple_GET_SIZE(<object>value) if is_tuple else 1
        for j in range(count):
            item = _tuple_item(<object>value, j) if is_tuple else value
            if type(<object>item) is not Descriptor and not isinstance(<object>item, Descriptor):
                continue
            if (<Descriptor>item)._dtype != CUDNN_BACKEND_TENSOR_DESCRIPTOR or (<Descriptor>item)._vals is None:
                continue
            uid = _list_item((<Descriptor>item)._vals, uid_slot)
            if uid == <PyObject*>None or not PyLong_CheckExact(<object>uid):
                continue
            u = PyLong_AsLongLongAndOverflow(<object>uid, &overflow)
            if overflow:
                continue
            if n < cap:
                uses[n].uid = u
                uses[n].attr = attr
                uses[n].output = TABLES.attr[attr].io == 2
                uses[n].virtual = <object>_list_item((<Descriptor>item)._vals, virtual_slot) is True
                uses[n].by_value = <object>_list_item((<Descriptor>item)._vals, by_value_slot) is True
                uses[n].tensor = item
                uses[n].op = -1
            n += 1
    return n


cdef TensorUse* _uses_of(Descriptor op, TensorUse* local, int cap, int* n, TensorUse** heap) except NULL:
    """``op``'s tensor uses (``_tensor_uses``): in ``local`` when they fit in ``cap``, else in ``*heap``, which the
    caller frees (a concatenation reads any number of tensors)."""
    n[0] = _tensor_uses(op, local, cap)
    if n[0] <= cap:
        return local
    heap[0] = <TensorUse*>malloc(n[0] * sizeof(TensorUse))
    if heap[0] == NULL:
        raise MemoryError()
    n[0] = _tensor_uses(op, heap[0], n[0])
    return heap[0]


cdef int _check_written_tensors(Descriptor op) except -1:
    """An operation writes no UID it reads, and no UID as two outputs: cuDNN 9.24 and later refuse such a graph saying
    only "buildDAG", and earlier releases plan it, racing the output over its own input (every API, the Graph builder's
    too: this is its check). Compared in C: this runs on every operation's finalize."""
    cdef TensorUse local[_WRITES_CHECKED]
    cdef TensorUse* heap = NULL
    cdef int n, a, b
    cdef TensorUse* uses = _uses_of(op, local, _WRITES_CHECKED, &n, &heap)
    try:
        for a in range(n):
            if not uses[a].output:
                continue
            if uses[a].by_value:
                _refuse_by_value_output(op, &uses[a])
            for b in range(n):
                if b != a and uses[b].uid == uses[a].uid and (not uses[b].output or b < a):
                    _refuse_written_tensor(op, uses[a].attr, uses[b].attr, uses[b].output, uses[a].uid)
    finally:
        free(heap)
    return 0


cdef int _check_graph_used_whole(object graph) except -1:
    """The checks of an operation graph that heuristics or an engine take (``graph``: their attribute's value)."""
    if isinstance(graph, Descriptor) and (<Descriptor>graph)._dtype == CUDNN_BACKEND_OPERATIONGRAPH_DESCRIPTOR:
        _check_graph_tensors(<Descriptor>graph)
        _check_graph_crashes(<Descriptor>graph)
    return 0


cdef int _check_graph_crashes(Descriptor graph) except -1:
    """``graph_crashes``: the operations counted in C, the rule asked only of a graph of the kinds it is about."""
    cdef tuple ops = _graph_operations(graph)
    cdef Py_ssize_t i, n
    cdef int matmuls = 0, reductions = 0, reshapes = 0, dtype
    n = PyTuple_GET_SIZE(ops)
    for i in range(n):
        op = <object>_tuple_item(ops, i)
        if isinstance(op, Descriptor):
            dtype = (<Descriptor>op)._dtype
            matmuls += dtype == CUDNN_BACKEND_OPERATION_MATMUL_DESCRIPTOR
            reductions += dtype == CUDNN_BACKEND_OPERATION_REDUCTION_DESCRIPTOR
            reshapes += dtype == CUDNN_BACKEND_OPERATION_RESHAPE_DESCRIPTOR
    if (matmuls < _graph_crashes.COMPOSITE_ATTENTION_BACKWARD_MATMULS or not reductions
            or reshapes < _graph_crashes.COMPOSITE_ATTENTION_BACKWARD_RESHAPES):
        return 0
    operands = []
    for op in ops:
        if isinstance(op, Descriptor) and (<Descriptor>op)._dtype == CUDNN_BACKEND_OPERATION_MATMUL_DESCRIPTOR:
            a = (<Descriptor>op)._value(CUDNN_ATTR_OPERATION_MATMUL_ADESC)
            if isinstance(a, Descriptor):
                uid = (<Descriptor>a)._value(CUDNN_ATTR_TENSOR_UNIQUE_ID)
                virtual = (<Descriptor>a)._value(CUDNN_ATTR_TENSOR_IS_VIRTUAL) is True
                operands.append((_names.operation_label(op), f"adesc {_tensor_label(a, uid, virtual)}",
                                 tuple((<Descriptor>a)._value(CUDNN_ATTR_TENSOR_DIMENSIONS) or ()), virtual))
    problem = _graph_crashes.composite_attention_backward_problem(_LOADED_VERSION, operands, reductions, reshapes)
    if problem is not None:
        raise GraphError(problem)
    return 0


cdef int _compare_uses(const void* a, const void* b) noexcept nogil:
    """By UID, then operation (a refusal names the first two uses of a UID that differ, in graph order)."""
    cdef const TensorUse* x = <const TensorUse*>a
    cdef const TensorUse* y = <const TensorUse*>b
    if x.uid != y.uid:
        return (x.uid > y.uid) - (x.uid < y.uid)
    return (x.op > y.op) - (x.op < y.op)


cdef int _check_graph_tensors(Descriptor graph) except -1:
    """A graph used whole (by heuristics and engines) names one tensor by each UID, and every virtual tensor an
    operation reads, an operation of it writes. cuDNN plans a graph whose operations give one UID different dims
    (writing out of bounds), and one reading a virtual tensor nothing writes (its kernels reading memory nobody
    wrote; its own JSON reader then refuses the plan's text). Checked here, not at the graph's own finalize: an
    SDPA's score-modifier subgraph reads the score its SDPA writes. The Graph builder checks both with the rest
    (graph.checks); this serves every API. In C: the uses sorted by UID, and descriptors of one UID compared only
    where they are not the same object."""
    cdef tuple ops = _graph_operations(graph)
    cdef TensorUse local[_WRITES_CHECKED]
    cdef TensorUse* heap = NULL
    cdef TensorUse* uses
    cdef TensorUse* every = NULL
    cdef TensorUse* grown
    cdef Py_ssize_t n_every = 0, capacity = 0, i, first
    cdef int n, k
    cdef bint written
    cdef PyObject* op
    try:
        for i in range(PyTuple_GET_SIZE(ops)):
            op = _tuple_item(ops, i)
            if not isinstance(<object>op, Descriptor):
                continue
            uses = _uses_of(<Descriptor>op, local, _WRITES_CHECKED, &n, &heap)
            if n_every + n > capacity:
                capacity = 2 * capacity + n + 16
                grown = <TensorUse*>realloc(every, capacity * sizeof(TensorUse))
                if grown == NULL:
                    raise MemoryError()
                every = grown
            for k in range(n):
                every[n_every] = uses[k]
                every[n_every].op = i
                n_every += 1
            free(heap)
            heap = NULL
        if n_every > 1:
            qsort(every, n_every, sizeof(TensorUse), _compare_uses)
        first = 0
        while first < n_every:  # each UID's run of uses
            written = False
            i = first
            while i < n_every and every[i].uid == every[first].uid:
                if every[i].tensor != every[first].tensor and not _same_tensor(<Descriptor>every[i].tensor,
                                                                               <Descriptor>every[first].tensor):
                    _refuse_two_tensors(graph, &every[first], &every[i])
                written = written or every[i].output
                i += 1
            if not written and every[first].virtual:
                _refuse_virtual_read(graph, &every[first])
            first = i
    finally:
        free(heap)
        free(every)
    return 0


cdef bint _same_tensor(Descriptor a, Descriptor b) except -1:
    """Whether two tensor descriptors of one UID describe the same tensor (dims, strides, data type, virtual, by
    value)."""
    cdef int attr
    for attr in (CUDNN_ATTR_TENSOR_DIMENSIONS, CUDNN_ATTR_TENSOR_STRIDES, CUDNN_ATTR_TENSOR_DATA_TYPE):
        if a._value(attr) != b._value(attr):
            return False
    for attr in (CUDNN_ATTR_TENSOR_IS_VIRTUAL, CUDNN_ATTR_TENSOR_IS_BY_VALUE):
        if (a._value(attr) is True) != (b._value(attr) is True):
            return False
    return True


cdef tuple _graph_operations(Descriptor graph):
    """The operations set on ``graph`` as a tuple (one set alone is kept as itself; none: empty)."""
    ops = graph._value(CUDNN_ATTR_OPERATIONGRAPH_OPS)
    if ops is None:
        return ()
    return <tuple>ops if type(ops) is tuple else (ops,)


cdef Descriptor _operation_at(Descriptor graph, Py_ssize_t index):
    """The operation at ``index`` of ``graph`` (a ``TensorUse``'s), for a refusal's words."""
    return <Descriptor>_graph_operations(graph)[index]


cdef str _use_words(Descriptor graph, const TensorUse* use):
    """``Pointwise RELU_FWD.xdesc v2 [1, 8, 4, 4] strides [...] CUDNN_DATA_HALF virtual``: a use, for a refusal."""
    cdef Descriptor t = <Descriptor>use.tensor
    op = _operation_at(graph, use.op)
    virtual = t._value(CUDNN_ATTR_TENSOR_IS_VIRTUAL) is True
    return (f"{_names.operation_label(op)}.{_keyword(op, use.attr)} "
            f"{_tensor_label(t, use.uid, virtual)} {list(t._value(CUDNN_ATTR_TENSOR_DIMENSIONS) or ())} strides "
            f"{list(t._value(CUDNN_ATTR_TENSOR_STRIDES) or ())} "
            f"{_data_type_name(t._value(CUDNN_ATTR_TENSOR_DATA_TYPE))}"
            + (" virtual" if virtual else "") + (" by value" if t._value(CUDNN_ATTR_TENSOR_IS_BY_VALUE) is True
                                                 else ""))


cdef int _refuse_two_tensors(Descriptor graph, const TensorUse* first, const TensorUse* other) except -1:
    raise GraphError(_names.uid_names_two_tensors(first.uid, _use_words(graph, first), _use_words(graph, other)))


cdef int _refuse_virtual_read(Descriptor graph, const TensorUse* use) except -1:
    """GraphError for ``_check_graph_tensors``, naming the operation, its keyword and the tensor."""
    op = _operation_at(graph, use.op)
    raise GraphError(_names.virtual_never_written(_names.operation_label(op), _keyword(op, use.attr),
                                                  _tensor_label(<object>use.tensor, use.uid, True), use.uid))


cdef int _refuse_by_value_output(Descriptor op, const TensorUse* use) except -1:
    raise GraphError(f"{_names.operation_label(op)}: its output {_keyword(op, use.attr)}, "
                     f"{_tensor_label(<object>use.tensor, use.uid, False)} (uid {use.uid}), is a by-value tensor: an "
                     "operation writes device memory (cuDNN plans it, and a variant pack cannot bind it); give it a "
                     "real tensor")


cdef str _keyword(Descriptor op, int attr):
    """An operation's attribute as the typed classes and the Graph name it (``xdesc``, ``output_desc``...)."""
    return _schema.ATTRIBUTES[AttributeName(attr)].name.name.removeprefix(
        _schema.DESCRIPTORS[DescriptorType(op._dtype)].attribute_prefix).lower()


cdef str _tensor_label(object tensor, object uid, bint virtual):
    """A tensor's name, or the name the Graph gives a tensor of ``uid`` without one."""
    label = getattr(tensor, "name", None)
    return label if isinstance(label, str) else _names.default_tensor_name(uid, virtual)


cdef int _refuse_nan(int dtype, int attr) except -1:
    """ValueError for a NaN given to a FLOAT or DOUBLE attribute: no attribute of cuDNN's means anything by it (a
    blend factor, a clip, a slope, a probability), and cuDNN takes it, computing NaN."""
    raise ValueError(f"{_what(dtype, attr)}: {_names.NAN_REFUSED}")


cdef int _refuse_written_tensor(Descriptor op, int out_attr, int other_attr, bint other_is_output,
                                int64_t uid) except -1:
    """GraphError for ``_check_written_tensors``, naming the two attributes (by keyword) and the tensor."""
    keywords = [_keyword(op, a) for a in (out_attr, other_attr)]
    tensor = None
    for attr, t, is_output in tensor_slots_of(op):
        if attr == out_attr and (<Descriptor>t)._value(CUDNN_ATTR_TENSOR_UNIQUE_ID) == uid:
            tensor = t
    label = _tensor_label(tensor, uid, tensor is not None and
                          (<Descriptor>tensor)._value(CUDNN_ATTR_TENSOR_IS_VIRTUAL) is True)
    if other_is_output:
        raise GraphError(_names.written_twice(_names.operation_label(op), label, uid, keywords[1], keywords[0]))
    raise GraphError(_names.reads_its_output(_names.operation_label(op), label, uid, keywords[0], keywords[1]))


cdef tuple _tensor_io(Descriptor op):
    """(tensors read, tensors written) of an operation, by UID (a tensor without one: the descriptor itself)."""
    cdef list reads = [], writes = []
    for _, t, is_output in tensor_slots_of(op):
        uid = (<Descriptor>t)._value(CUDNN_ATTR_TENSOR_UNIQUE_ID)
        (writes if is_output else reads).append(t if uid is None else uid)
    return reads, writes


cdef str _graph_mode_name(object mode):
    return str(getattr(_name_of(_enums.OperationGraphMode, int(mode)), "name", mode))


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


cdef int _check_engine_index(Descriptor engine) except -1:
    """An engine's global index must name one of its graph's engines: past the count cuDNN refuses it with no reason
    (NOT_SUPPORTED), which reads like an engine that does not support the graph."""
    graph = engine._value(CUDNN_ATTR_ENGINE_OPERATION_GRAPH)
    index = engine._value(CUDNN_ATTR_ENGINE_GLOBAL_INDEX)
    if index is None or not isinstance(graph, Descriptor) or not (<Descriptor>graph)._finalized:
        return 0  # (cuDNN names what is missing)
    count = graph.get(CUDNN_ATTR_OPERATIONGRAPH_ENGINE_GLOBAL_COUNT, CUDNN_TYPE_INT64)[0]
    if not 0 <= index < count:
        engines = f"engines 0..{count - 1}" if count > 0 else "no engines"
        raise EngineError(f"global_index: engine {index} is out of range: this graph has {engines} "
                          f"(CUDNN_ATTR_OPERATIONGRAPH_ENGINE_GLOBAL_COUNT = {count})")
    return 0


# The pointwise broadcast check (core.families.pointwise: check_pointwise, by the one rule broadcast_dims) runs on
# every pointwise finalize, the commonest op in fused graphs: its accepting case is done here in C, and anything
# else goes to the Python check, which raises with the tensors named (or accepts what this path leaves to it). The
# tensor slots are the family's (INPUT_SLOTS, OUTPUT_SLOTS), copied into these arrays when the tables are made.
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
    """True when the operation's tensors are those its mode takes (``pointwise.SLOTS_WANTED``), every input has
    dims of one rank that broadcast and every output has the broadcast shape."""
    cdef int64_t expected[PW_MAX_RANK]
    cdef int rank = -1, i, j, n, given = 0
    cdef long mode
    cdef int64_t size
    cdef object dims
    pw = op._value(CUDNN_ATTR_OPERATION_POINTWISE_PW_DESCRIPTOR)
    if not isinstance(pw, Descriptor):
        return False
    value = (<Descriptor>pw)._value(CUDNN_ATTR_POINTWISE_MODE)
    if not isinstance(value, int):
        return False
    mode = value
    if mode < 0 or mode >= PW_MODES or TABLES.pw_slots_wanted[mode] == 0:
        return False
    for j in range(4):
        dims = _set_tensor_dims(op, TABLES.pw_inputs[j])
        if dims is None:
            continue
        given |= 1 << j
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
        dims = _set_tensor_dims(op, TABLES.pw_outputs[j])
        if dims is None:
            continue
        given |= 16 << j
        if dims is False or len(<tuple>dims) != rank:
            return False
        for i in range(rank):
            size = (<tuple>dims)[i]  # compared as C ints: no int object made per dimension
            if size != expected[i]:
                return False
    return given == TABLES.pw_slots_wanted[mode]


cdef class Descriptor(_Resource):
    """A cuDNN backend descriptor of one ``CUDNN_BACKEND_*_DESCRIPTOR`` type.

    Created by ``cudnnBackendCreateDescriptor`` and destroyed when collected or on ``close()``.
    ``set``/``get`` take C attribute names (``CUDNN_ATTR_*``) and attribute types (``CUDNN_TYPE_*``),
    as enum members, ints or strings, and are checked against the schema before cuDNN is called.
    Everything set on a descriptor (children, handles, host data) is kept alive with it, in one
    field (one slot per attribute of its type); ``values`` shows it.
    """

    # No arguments: Cython then passes none on (and checks none), whatever the constructor is given. The other fields
    # start as tp_new leaves them (C fields zeroed, object fields None); no descriptor type is the one non-zero default.
    def __cinit__(self):
        self._dtype = -1

    def __init__(self, descriptor_type):
        self._check_new()
        self._create(_descriptor_type_arg(descriptor_type))

    cdef int _create(self, int dtype) except -1:
        cdef cudnnStatus_t status
        cdef cudnnBackendDescriptor_t p = NULL
        cdef cudnnBackendDescriptorType_t c_dtype
        _ensure_tables()
        if dtype < 0 or dtype >= MAX_TYPES or TABLES.desc_ok[dtype] == 0:
            raise ValueError(f"descriptor_type: {dtype} is not a valid DescriptorType")
        if TABLES.desc_ok[dtype] == 2:
            check_available(DescriptorType(dtype).name, "descriptor type")
        c_dtype = <cudnnBackendDescriptorType_t>dtype
        # an allocation in cuDNN: with the GIL held, as for set()
        status = cycudnn.cudnnBackendCreateDescriptor(c_dtype, &p)
        if status != CUDNN_STATUS_SUCCESS:
            if dtype == CUDNN_BACKEND_INTERMEDIATE_INFO_DESCRIPTOR:  # (its words read as memory running out)
                member = _name_of(Status, <int>status)
                raise error_class(<int>status)(member, "cudnnBackendCreateDescriptor", DescriptorType(dtype), None,
                                          last_error_string(), "cuDNN declares this descriptor type but creates none "
                                          "(9.10 to 9.28 answer so): it is not implemented, whatever memory is free")
            raise_status(status, "cudnnBackendCreateDescriptor", DescriptorType(dtype))
        self._raw = p
        self._dtype = dtype
        self._vals = _none_list(TABLES.n_attrs[dtype])
        self._mask = 0
        return 0

    def __dealloc__(self):
        self._dealloc()  # before _vals goes: the children are released after their parent, which never outlives them

    cdef cudnnStatus_t _destroy(self, void* raw) noexcept nogil:
        return cycudnn.cudnnBackendDestroyDescriptor(<cudnnBackendDescriptor_t>raw)

    cdef object _release(self):
        kept = (self._vals, self._read_from)
        self._vals = None
        self._read_from = None
        self._atypes = None
        self._mask = 0
        return kept

    cdef object _descriptor_type(self):
        return _name_of(DescriptorType, self._dtype)

    cdef str _name(self):
        return _dtype_name(self._dtype) if self._dtype >= 0 else "descriptor"

    def close(self):
        """Destroy the descriptor now and release what it kept (idempotent; at most once whatever the threads;
        while another thread's cuDNN call uses it, that call destroys it, and what it kept, when it returns)."""
        self._close()

    def __enter__(self):
        return self

    def __exit__(self, *exc):
        self.close()

    def __reduce__(self):
        raise TypeError(f"cannot pickle {_names.with_article(type(self).__name__)}: it wraps a live cuDNN descriptor "
                        "of this process (to_dict() / a plan's to_json() give plain data)")

    def __copy__(self):
        raise TypeError(f"cannot copy {_names.with_article(type(self).__name__)}: it wraps a live cuDNN descriptor; "
                        "build another one")

    def __deepcopy__(self, memo):
        return self.__copy__()

    # -- introspection ---------------------------------------------------------------------------
    @property
    def descriptor_type(self):
        if self._dtype < 0:
            raise ValueError(f"this {type(self).__name__} was never made (__new__ without __init__): it has no "
                             "descriptor type")
        return DescriptorType(self._dtype)

    @property
    def finalized(self):
        return self._finalized

    cdef list _items(self):
        """[(attribute value, value as set)] of the attributes set, in schema order."""
        cdef Py_ssize_t i
        cdef list out = []
        if self._vals is None:
            return out
        for i in range(len(self._vals)):
            v = self._vals[i]
            if v is not None:
                out.append((TABLES.slot_attr[self._dtype][i], v))
        return out

    @property
    def children(self):
        """{attribute: tuple of the descriptors and handles kept alive for it}."""
        out = {}
        for k, v in self._items():
            items = v if type(v) is tuple else (v,)
            kept = tuple(x for x in items if isinstance(x, (Descriptor, _Handle)))
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
        if 0 <= attr < TABLES.n_attr and TABLES.attr[attr].descriptor == self._dtype and self._vals is not None:
            return self._vals[TABLES.attr[attr].slot]
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
        return AttributeType(TABLES.attr[a].default_type)

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

    cdef AttrSpec* _attr_spec(self, int attr, int atype) except NULL:
        """The schema's entry for ``attr`` read or written as ``atype`` on this (open) descriptor: the checks set and
        get share (an attribute of this descriptor type, an attribute type it takes, both in the loaded cuDNN)."""
        cdef AttrSpec* spec
        _ensure_tables()
        self._check_open()
        if attr < 0 or attr >= TABLES.n_attr or TABLES.attr[attr].descriptor < 0:
            raise ValueError(f"attribute: {attr} is not a valid AttributeName")
        spec = &TABLES.attr[attr]
        if spec.descriptor != self._dtype:
            raise ValueError(f"{_attr_name(attr)} is an attribute of {DescriptorType(spec.descriptor).name}, not of "
                             f"{_name_of(DescriptorType, self._dtype).name}")
        if not _takes_type(spec, atype):
            raise TypeError(f"{_what(self._dtype, attr)} takes attribute type {_type_names(spec.types)}, not "
                            f"{getattr(_name_of(AttributeType, atype), 'name', atype)}")
        if not (spec.flags & F_AVAILABLE):
            check_available(_attr_name(attr), _what(self._dtype, attr))
        if not TABLES.type_available[atype]:
            check_available(AttributeType(atype).name, _what(self._dtype, attr))
        return spec

    cdef int _set(self, int attr, int atype, object values) except -1:
        """The checked set: the common cases through ``_set_fast``, everything else (and every error) here."""
        cdef AttrSpec* spec
        if 0 <= attr < TABLES.n_attr and TABLES.ready:
            spec = &TABLES.attr[attr]
            # the attribute's own type, or another it takes (alpha as FLOAT where DOUBLE is the default)
            if spec.flags & F_FAST and spec.descriptor == self._dtype and not self._finalized and \
                    self._raw != NULL and self._busy == 0 and (atype == spec.default_type or (
                        _takes_type(spec, atype) and TABLES.type_available[atype])):
                if _set_fast(self, spec, attr, atype, values):
                    return 0
        return self._set_checked(attr, atype, values)

    cdef int _set_checked(self, int attr, int atype, object values) except -1:
        # cudnnBackendSetAttribute copies a few values: it runs with the GIL held (releasing and taking the
        # GIL back would cost as much as the call, and no other thread can close what it reads meanwhile).
        cdef AttrSpec* spec
        cdef int kind
        cdef Py_ssize_t i, n, size
        cdef ElementBuffer buf
        cdef char* data
        cdef object items = None
        cdef PyObject** elements = NULL
        cdef int overflow = 0
        cdef object stored = None
        cdef object v
        cdef int64_t i64
        cdef cudnnStatus_t status
        cdef cudnnFraction_t* fr
        cdef Descriptor d
        cdef _Handle h
        cdef uint64_t u64
        cdef bytes raw
        cdef double dv
        spec = self._attr_spec(attr, atype)
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
        kind = TABLES.type_kind[atype]
        if kind == K_CHAR:
            raw = _char_bytes(values, attr, (self._dtype, attr))
            n = PyBytes_GET_SIZE(raw)
            stored = raw.decode("utf-8")
            status = cycudnn.cudnnBackendSetAttribute(self._raw, <cudnnBackendAttributeName_t>attr,
                                                      <cudnnBackendAttributeType_t>atype, n, PyBytes_AS_STRING(raw))
        else:
            if (type(values) is list or type(values) is tuple) and kind != K_FRACTION:
                items = values
                n = len(items)
            elif (isinstance(values, int) or type(values) is float or values is None or isinstance(values, Descriptor)
                  or isinstance(values, _Handle)):
                n = 1  # one value, taken as it is (no sequence made)
            else:
                items = _items(values, kind, (self._dtype, attr))
                n = len(items)
            if n < spec.count_min or (spec.count_max >= 0 and n > spec.count_max):
                raise ValueError(f"{_what(self._dtype, attr)} takes "
                                 f"{_schema.ATTRIBUTES[AttributeName(attr)].count_text()} element(s), got {n}")
            size = TABLES.kind_size[kind]
            data = _elements(&buf, n * size, False)
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
                        if <PyObject*>Py_TYPE(v) == TABLES.enum_class[atype]:  # a member is kept as it is (no int made)
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
                        if d._raw == NULL:
                            raise ValueError(f"{_what(self._dtype, attr)}: element {i} "
                                             f"({_dtype_name(d._dtype)}) is closed")
                        if spec.accepts and not ((spec.accepts >> d._dtype) & 1):
                            raise TypeError(f"{_what(self._dtype, attr)} takes {_descriptor_names(spec.accepts)}, "
                                            f"element {i} is a "
                                            f"{DescriptorType(d._dtype).name}")
                        if not d._finalized:
                            raise ValueError(f"{_what(self._dtype, attr)}: element {i} "
                                             f"({DescriptorType(d._dtype).name}) is not finalized; finalize it first")
                        (<cudnnBackendDescriptor_t*>data)[i] = d._raw
                    elif kind == K_FLOAT:
                        dv = PyFloat_AS_DOUBLE(v) if type(v) is float else _real(v, (self._dtype, attr))
                        if dv != dv:
                            _refuse_nan(self._dtype, attr)
                        if isinf(<float>dv) and not isinf(dv):
                            raise ValueError(f"{_what(self._dtype, attr)}: {v} does not fit in a float")
                        (<float*>data)[i] = <float>dv
                        v = <double>(<float>dv)
                    elif kind == K_DOUBLE:
                        dv = PyFloat_AS_DOUBLE(v) if type(v) is float else _real(v, (self._dtype, attr))
                        if dv != dv:
                            _refuse_nan(self._dtype, attr)
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
                        if not isinstance(v, _Handle):
                            raise TypeError(f"{_what(self._dtype, attr)} takes a cudnn_backend.Handle, not "
                                            f"{type(v).__name__}")
                        h = <_Handle>v
                        if h._raw == NULL:
                            raise ValueError(f"{_what(self._dtype, attr)}: the Handle is closed")
                        (<cudnnHandle_t*>data)[i] = <cudnnHandle_t>h._raw
                    else:
                        raise TypeError(f"{_what(self._dtype, attr)}: attribute type {AttributeType(atype).name} is "
                                        "not supported")
                    if stored is not None:
                        Py_INCREF(v)
                        PyTuple_SET_ITEM(stored, i, v)
                    else:
                        stored = v
                status = cycudnn.cudnnBackendSetAttribute(self._raw, <cudnnBackendAttributeName_t>attr,
                                                          <cudnnBackendAttributeType_t>atype, n, data)
            finally:
                _free_elements(&buf)
        return _record_set(self, spec, attr, atype, status, stored)

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
        spec = self._attr_spec(attr, atype)
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
        cdef int transport = TABLES.attr[attr].get_type if TABLES.attr[attr].get_type >= 0 else atype
        clear_last_error()
        enter_call(self, None, None)
        p = self._raw  # after the gate: open, and kept open until the call returns
        with nogil:
            status = cycudnn.cudnnBackendGetAttribute(p, <cudnnBackendAttributeName_t>attr,
                                                      <cudnnBackendAttributeType_t>transport, 0, &count, NULL)
        leave_call(self, None, None)
        _check_get_status(self, status, attr)
        if count < 0:
            # cuDNN 9.19 answers -1 for e.g. a RESAMPLE descriptor finalized without SPATIAL_DIMS; -1 is also this
            # function's error value, and taken as one it crashed the interpreter (an exception that was never set)
            raise CudnnUnsafeCallError(f"{_what(self._dtype, attr)}: cuDNN reports {count} elements")
        return count

    cdef int _read_back(self) except -1:
        """The plain values of a descriptor cuDNN filled in (a get() child), read from cuDNN and kept as set ones are:
        every check that reads what was set on a tensor or a descriptor (dims against 2**32 tiles, statistics
        shapes, ...) reads them too, where it would otherwise take them for unknown and check nothing. Child
        descriptors, handles and host pointers are not read (their own get() reads them); an attribute cuDNN does not
        give back stays unknown."""
        cdef int dtype = self._dtype
        cdef Py_ssize_t slot
        cdef int attr, kind
        cdef AttrSpec* spec
        for slot in range(TABLES.n_attrs[dtype]):
            attr = TABLES.slot_attr[dtype][slot]
            spec = &TABLES.attr[attr]
            kind = TABLES.type_kind[spec.default_type]
            if (spec.role == ROLE_GET_ONLY or spec.flags & F_GET_UNSUPPORTED or not spec.flags & F_AVAILABLE
                    or kind == K_DESC or kind == K_HANDLE or kind == K_PTR or kind == K_NONE):
                continue
            try:
                values = self.get(attr, spec.default_type)
            except (CudnnError, ValueError, TypeError):  # not given back by this descriptor type or release
                continue
            if kind == K_CHAR:
                value = values
            elif not values:
                continue
            else:
                value = values[0] if spec.count_max == 1 else tuple(values)
            _store(self._vals, spec.slot, value)
            if spec.bit >= 0:
                self._mask |= (<uint64_t>1) << spec.bit
        return 0

    def get(self, attribute, attribute_type, count=None, descriptor_type=None, cls=None):
        """cudnnBackendGetAttribute: a list of values (a str for CUDNN_TYPE_CHAR).

        ``count=None`` asks cuDNN for the element count first. For descriptor-valued attributes the
        children are created here, of the schema's descriptor type (or ``descriptor_type`` where the
        attribute accepts several), as ``cls`` (a Descriptor subclass, e.g. a typed class) or plain
        Descriptors; each keeps this descriptor alive.
        """
        cdef cudnnStatus_t status
        cdef ElementBuffer buf
        cdef char* data
        cdef int64_t requested, got = 0
        cdef Descriptor child
        cdef Py_ssize_t i, elem
        cdef int attr, atype, kind, transport, child_type
        cdef AttrSpec* spec
        cdef cudnnBackendDescriptor_t p
        attr, atype = self._get_spec(attribute, attribute_type)
        spec = &TABLES.attr[attr]
        kind = TABLES.type_kind[atype]
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
            fixed = getattr(cls, "DESCRIPTOR_TYPE", None)  # a class of one descriptor type (the typed classes)
            if fixed is not None and int(fixed) != child_type:
                raise TypeError(f"cls: {cls.__name__} wraps {_dtype_name(int(fixed))} descriptors, but "
                                f"{_what(self._dtype, attr)} gives {_dtype_name(child_type)} ones")
            for i in range(requested):
                child = (cls or Descriptor).__new__(cls or Descriptor)
                child._create(child_type)
                children.append(child)
        transport = spec.get_type if spec.get_type >= 0 else atype
        elem = max(TABLES.kind_size[kind], TABLES.kind_size[TABLES.type_kind[transport]])
        data = _elements(&buf, requested * elem + (1 if kind == K_CHAR else 0), True)
        try:
            if kind == K_DESC:
                for i in range(requested):
                    (<cudnnBackendDescriptor_t*>data)[i] = (<Descriptor>children[i])._raw
            clear_last_error()
            enter_call(self, None, None)  # (the children are new: no other thread knows them)
            p = self._raw  # after the gate: open, and kept open until the call returns
            with nogil:
                status = cycudnn.cudnnBackendGetAttribute(p, <cudnnBackendAttributeName_t>attr,
                                                          <cudnnBackendAttributeType_t>transport, requested, &got,
                                                          <void*>data if requested > 0 else NULL)
            leave_call(self, None, None)
            _check_get_status(self, status, attr)
            n = min(got, requested)
            if elem != TABLES.kind_size[kind] and n > 1:
                raise CudnnUnsafeCallError(f"{_what(self._dtype, attr)}: multi-element get through "
                                           f"{AttributeType(transport).name}")
            if kind == K_CHAR:
                return data[:n].split(b"\0", 1)[0].decode("utf-8", "replace")
            if kind == K_DESC:
                for i in range(n):
                    child = <Descriptor>children[i]
                    child._finalized = True  # cuDNN filled it in: as finalized as its parent's contents
                    child._read_from = self
                    child._read_back()
                for i in range(n, requested):
                    (<Descriptor>children[i]).close()
            return _unpack(kind, data, n, atype, children)
        finally:
            _free_elements(&buf)

    # -- finalize ----------------------------------------------------------------------------------
    @cython.binding(False)  # a plain method descriptor, as set()
    @cython.embedsignature.format("clinic")
    def finalize(self, check_required=True):
        """cudnnBackendFinalize, after checking the schema's required attributes and what cuDNN crashes on."""
        return self._finalize(check_required)

    cdef object _finalize(self, bint check_required):
        cdef cudnnStatus_t status
        cdef HeldTree held
        cdef int dtype = self._dtype
        cdef uint64_t required
        cdef cudnnBackendDescriptor_t p
        _ensure_tables()
        if self._raw == NULL:
            self._check_open()
        if self._finalized:
            raise ValueError(f"this {DescriptorType(dtype).name} is already finalized")
        if self._busy:
            _refuse_busy(self, DescriptorType(dtype).name)
        if check_required:
            required = TABLES.required_mask[dtype]
            if (self._mask & required) != required or TABLES.required_by_slot[dtype]:
                self._check_required()
        if dtype == CUDNN_BACKEND_TENSOR_DESCRIPTOR:
            _check_tensor_span(self)
            if self._value(CUDNN_ATTR_TENSOR_IS_BY_VALUE) is True:
                _check_by_value_tensor(self)
            if self._value(CUDNN_ATTR_TENSOR_UNIQUE_ID) == -1:  # (an int, or None: cuDNN names it missing)
                raise ValueError("CUDNN_ATTR_TENSOR_UNIQUE_ID: -1 is cuDNN's 'no UID': it finalizes the tensor but "
                                 "leaves it out of a plan's JSON, so the plan cannot be saved and loaded; give "
                                 "another UID")
        elif dtype == CUDNN_BACKEND_EXECUTION_PLAN_DESCRIPTOR or dtype == CUDNN_BACKEND_ENGINECFG_DESCRIPTOR:
            _check_finalize_preconditions(dtype, {a: v for a, v in self._items()})
        elif dtype == CUDNN_BACKEND_ENGINE_DESCRIPTOR:
            _check_engine_index(self)
            _check_graph_used_whole(self._value(CUDNN_ATTR_ENGINE_OPERATION_GRAPH))
        elif dtype == CUDNN_BACKEND_ENGINEHEUR_DESCRIPTOR:
            _check_graph_used_whole(self._value(CUDNN_ATTR_ENGINEHEUR_OPERATION_GRAPH))
        elif dtype == CUDNN_BACKEND_OPERATIONGRAPH_DESCRIPTOR:
            _check_graph_finalize_cost(self)
            if self._has(CUDNN_ATTR_OPERATIONGRAPH_MODE):
                _check_graph_mode(self)
        if _is_operation[dtype]:
            _check_written_tensors(self)
        if TABLES.finalize_check[dtype] != NULL:
            if not ((dtype == CUDNN_BACKEND_OPERATION_POINTWISE_DESCRIPTOR and _pointwise_broadcast_ok(self)) or
                    (TABLES.finalize_check_floor[dtype] > 0 and
                     not self._mask & TABLES.finalize_check_floor_unless[dtype] and
                     _tensors_below(self, TABLES.finalize_check_floor[dtype]))):
                (<object>TABLES.finalize_check[dtype])(self)
        self._check_open()  # the checks run Python code: another thread may have closed it meanwhile
        p = self._raw
        if TABLES.finalize_nogil[dtype]:
            # cuDNN reads everything set on it, transitively (a heuristics' graph and its handle): held meanwhile
            enter_call(None, None, None)
            try:
                _hold_tree(self, &held)
            except BaseException:  # (no memory to hold them in): the call never started
                leave_call(None, None, None)
                raise
            with nogil:
                status = cycudnn.cudnnBackendFinalize(p)
            _release_tree(&held)
            leave_call(None, None, None)
        else:
            # a few microseconds of cuDNN bookkeeping: with the GIL held, as for set() (the exit gate still refuses it)
            if _exiting:
                enter_call(None, None, None)  # raises CudnnShutdownError
            status = cycudnn.cudnnBackendFinalize(p)
            if _pending_interrupt is not None:
                _raise_pending_interrupt()
        if status != CUDNN_STATUS_SUCCESS:
            _raise_finalize_status(self, status)
        if dtype != CUDNN_BACKEND_TENSOR_DESCRIPTOR and dtype != CUDNN_BACKEND_POINTWISE_DESCRIPTOR:
            # cuDNN keeps warnings of a successful finalize as its "last error": read them away now, so a
            # later failure is never explained by this call's text (tensors and pointwise descriptors give none)
            clear_last_error()
        self._finalized = True
        return self

    cdef int _check_required(self) except -1:
        """The required attributes not set, named in a ValueError (the slow path of finalize's mask test)."""
        cdef int dtype = self._dtype
        missing = [_attr_name(TABLES.required[dtype][j]) for j in range(TABLES.n_required[dtype])
                   if not self._has(TABLES.required[dtype][j])]
        if missing:
            raise ValueError(f"{DescriptorType(dtype).name} cannot be finalized: required attribute(s) "
                             f"not set: {', '.join(missing)}")
        return 0

    def __repr__(self):
        name = _name_of(DescriptorType, self._dtype).name if self._dtype >= 0 else "?"
        state = "closed" if self._raw == NULL else ("finalized" if self._finalized else "not finalized")
        return f"<cudnn_backend.Descriptor {name} {state} at 0x{<intptr_t>self._raw:x}>"


# ------------------------------------------------------------------------------------------------
# Descriptor(descriptor_type) as one vectorcall
# ------------------------------------------------------------------------------------------------
cdef extern from "Python.h":
    ctypedef PyObject* (*_vectorcallfunc "vectorcallfunc")(PyObject*, PyObject**, size_t, PyObject*)
    ctypedef struct _TypeCallSlots "PyTypeObject":
        _vectorcallfunc tp_vectorcall
        object (*tp_call)(object, object, PyObject*)
    _TypeCallSlots PyType_Type
    Py_ssize_t PyVectorcall_NARGS(size_t nargsf)


cdef object _construct_descriptor(PyObject* cls, PyObject** args, size_t nargsf, PyObject* kwnames):
    """``Descriptor(descriptor_type)``, the usual call, made without type_call's argument tuple and its two slot
    calls (tp_new, then __init__): a graph costs a dozen creations. Any other call (keywords, another count) goes
    the usual way, refused as __init__ refuses it. Subclasses never come here: tp_vectorcall is not inherited."""
    cdef Py_ssize_t n = PyVectorcall_NARGS(nargsf)
    cdef Py_ssize_t i
    cdef Descriptor made
    if n == 1 and (kwnames == NULL or PyTuple_GET_SIZE(<object>kwnames) == 0) and cls == <PyObject*>Descriptor:
        made = Descriptor.__new__(Descriptor)
        made._create(_descriptor_type_arg(<object>args[0]))
        return made
    positional = tuple([<object>args[i] for i in range(n)])
    keywords = {} if kwnames == NULL else {(<tuple><object>kwnames)[i]: <object>args[n + i]
                                           for i in range(PyTuple_GET_SIZE(<object>kwnames))}
    return PyType_Type.tp_call(<object>cls, positional, <PyObject*>keywords if keywords else NULL)


(<_TypeCallSlots*><void*>Descriptor).tp_vectorcall = <_vectorcallfunc>_construct_descriptor


cdef object _set_def  # Descriptor.set as defined: every call _set_positional does not take


cdef object _set_positional(PyObject* self, PyObject** args, Py_ssize_t nargs, PyObject* kwnames):
    """``d.set(attribute, attribute_type, values)`` with the two enum members (core/_fastcall.pyx)."""
    if nargs == 3 and kwnames == NULL and <PyObject*>Py_TYPE(<object>args[0]) == <PyObject*>_ATTRIBUTE_NAME and \
            <PyObject*>Py_TYPE(<object>args[1]) == <PyObject*>_ATTRIBUTE_TYPE:
        (<Descriptor>self)._set(<int><object>args[0], <int><object>args[1], <object>args[2])
        return <object>self
    return call_def(_set_def, self, args, nargs, kwnames)


_set_def = method_in_front(Descriptor, "set", _set_positional)



# descriptor type -> explainer(descriptor), or the "module:function" naming it: a str saying, in the package's terms,
# what cuDNN refused at finalize, or None. Where cuDNN's own words name nothing the user set (an operation graph
# refused with "buildDAG"), the layer that knows (the graph checks) explains; the package registers it by name, so
# that core imports nothing above it and the layer loads on the first refusal only.
cdef dict _refusal_explainers = {}


def explain_finalize_refusals(descriptor_type, explainer):
    """Register ``explainer(descriptor, cudnn_message) -> str or None`` (a callable, or ``"module:function"`` imported
    on the first refusal) for the finalize refusals of ``descriptor_type``: its answer is the hint of the CudnnError,
    cuDNN's own message kept. An explainer that raises is ignored."""
    if not (callable(explainer) or (isinstance(explainer, str) and explainer.count(":") == 1)):
        raise TypeError(f"explainer: expected a callable or 'module:function', not {explainer!r}")
    _refusal_explainers[_enum_arg(descriptor_type, DescriptorType, "descriptor_type")] = explainer


cdef str _refusal_explained(Descriptor self, str message):
    """The registered explainer's answer for this refused descriptor (``message``: cuDNN's), or "" (none, nothing
    found, or it failed)."""
    explainer = _refusal_explainers.get(self._dtype)
    if explainer is None:
        return ""
    try:
        if isinstance(explainer, str):
            module, _, function = explainer.partition(":")
            explainer = _refusal_explainers[self._dtype] = getattr(importlib.import_module(module), function)
        found = explainer(self, message)
    except Exception:  # (an explanation must never hide cuDNN's refusal)
        return ""
    return found if isinstance(found, str) else ""


cdef int _raise_finalize_status(Descriptor self, cudnnStatus_t status) except -1:
    """cudnnBackendFinalize's refusal as a CudnnError. Where cuDNN gives no message, the hint lists the values set
    on the descriptor (enumerants by name; a child descriptor by its type and its own plain values), since one of
    them is what was refused. A registered explainer's answer (``explain_finalize_refusals``) is the hint."""
    message = last_error_string()  # (read once: cuDNN forgets it as it is read)
    explained = _refusal_explained(self, message or "")
    if explained:
        raise error_class(<int>status)(_name_of(Status, <int>status), "cudnnBackendFinalize",
                                       DescriptorType(self._dtype), None, message, explained)
    if message:
        raise make_error(_name_of(Status, <int>status), "cudnnBackendFinalize", DescriptorType(self._dtype), None,
                         message)
    raise error_class(<int>status)(
        _name_of(Status, <int>status), "cudnnBackendFinalize", DescriptorType(self._dtype), None, "",
        f"cuDNN gives no reason; the values set: {_settings_text(self, True) or 'none'}; {DEBUG_HINT}")


cdef str _clipped(str text):
    """A value as a message shows it: a long one (a plan's JSON, a device profile) by its start and its length."""
    if len(text) <= 160:
        return text
    return f"{text[:100]}... ({len(text):,} characters)"


cdef str _settings_text(Descriptor d, bint with_children):
    """``ATTR=value, ...`` of what is set on ``d`` (at most 8 elements a value); children as ``TYPE(...)`` with
    their own plain values when ``with_children``, else by type only."""
    settings = []
    for attr, value in d._items():
        values = value if type(value) is tuple else (value,)
        atype = d._atypes.get(attr, TABLES.attr[attr].default_type) if d._atypes else TABLES.attr[attr].default_type
        enum_class = <object>TABLES.enum_class[atype] if 0 <= atype < MAX_TYPES and TABLES.enum_class[atype] != NULL \
            else None
        shown = []
        for v in values[:8]:
            if isinstance(v, Descriptor):
                name = _dtype_name((<Descriptor>v)._dtype).removeprefix("CUDNN_BACKEND_").removesuffix("_DESCRIPTOR")
                inner = _settings_text(<Descriptor>v, False) if with_children else ""
                shown.append(f"{name}({inner})" if inner else name)
            elif isinstance(v, _Handle):
                shown.append("a Handle")
            else:
                shown.append(_clipped(str(getattr(_name_of(enum_class, v), "name", v)) if enum_class is not None
                                      else str(v)))
        text = ", ".join(shown) + (f", ... ({len(values)} values)" if len(values) > 8 else "")
        settings.append(f"{_attr_name(attr)}={text if len(values) == 1 else '[' + text + ']'}")
    return ", ".join(settings)


cdef int _check_get_status(Descriptor self, cudnnStatus_t status, int attr) except -1:
    """cudnnBackendGetAttribute's refusal as a CudnnError; NOT_INITIALIZED of a descriptor not finalized says why
    (cuDNN reads the attributes of finalized descriptors only, and its own message is one word), and NOT_SUPPORTED of
    an attribute set on this descriptor says that value_of() reads it (cuDNN gives some attributes back never)."""
    if status == CUDNN_STATUS_SUCCESS:
        return 0
    if status == CUDNN_STATUS_NOT_INITIALIZED and not self._finalized:
        raise error_class(<int>status)(
            Status(<int>status), "cudnnBackendGetAttribute", DescriptorType(self._dtype), AttributeName(attr),
            last_error_string(), "the descriptor is not finalized: cuDNN gives the attributes of finalized "
            "descriptors only (finalize() it first; value_of() reads what was set)")
    if status == CUDNN_STATUS_NOT_SUPPORTED and self._value(attr) is not None:  # set here, not given back
        raise error_class(<int>status)(
            Status(<int>status), "cudnnBackendGetAttribute", DescriptorType(self._dtype), AttributeName(attr),
            last_error_string(), f"cuDNN does not give {AttributeName(attr).name} back; value_of() reads what was "
            "set on this descriptor")
    return raise_status(status, "cudnnBackendGetAttribute", DescriptorType(self._dtype), AttributeName(attr))


cdef inline int _record_set(Descriptor self, AttrSpec* spec, int attr, int atype, cudnnStatus_t status,
                            object stored) except -1:
    """After cudnnBackendSetAttribute, for both set paths: an interrupt kept meanwhile, else cuDNN's refusal, else the
    value kept (its slot, its bit, its attribute type where not the default). The usual case inline, the rest in
    ``_record_set_rest``."""
    if _pending_interrupt is not None or status != CUDNN_STATUS_SUCCESS or atype != spec.default_type or \
            self._atypes:
        return _record_set_rest(self, spec, attr, atype, status, stored)
    _store(self._vals, spec.slot, stored)
    if spec.bit >= 0:
        self._mask |= (<uint64_t>1) << spec.bit
    return 0


cdef int _record_set_rest(Descriptor self, AttrSpec* spec, int attr, int atype, cudnnStatus_t status,
                          object stored) except -1:
    """``_record_set`` whatever the case: the interrupt, the refusal, an attribute type recorded or forgotten."""
    if _pending_interrupt is not None:
        _raise_pending_interrupt()
    if status != CUDNN_STATUS_SUCCESS:
        raise_status(status, "cudnnBackendSetAttribute", DescriptorType(self._dtype), AttributeName(attr))
    _store(self._vals, spec.slot, stored)
    if spec.bit >= 0:
        self._mask |= (<uint64_t>1) << spec.bit
    if atype != spec.default_type:
        if self._atypes is None:
            self._atypes = {}
        self._atypes[attr] = atype
    elif self._atypes is not None:
        self._atypes.pop(attr, None)
    return 0


cdef enum:
    QUICK_MAX = 8  # the most elements the quick path takes (an 8-d tensor's dims, a graph's operations); more: checked


cdef inline PyObject** _sequence_items(object values, AttrSpec* spec, Py_ssize_t* n) noexcept:
    """The elements of a list or tuple the quick path takes (1 to QUICK_MAX, a count the attribute takes), read in
    place (no len() or indexing through the object protocol: no Python code runs between here and cuDNN's call, so
    the list cannot change meanwhile); NULL for anything else."""
    if type(values) is list:
        n[0] = PyList_GET_SIZE(values)
    elif type(values) is tuple:
        n[0] = PyTuple_GET_SIZE(values)
    else:
        return NULL
    if n[0] < 1 or n[0] > QUICK_MAX or n[0] < spec.count_min or (spec.count_max >= 0 and n[0] > spec.count_max):
        return NULL
    return PySequence_Fast_ITEMS(values)


cdef inline object _kept_sequence(object values, AttrSpec* spec, PyObject** items):
    """What a descriptor keeps of a list or tuple set on it: the element, where the attribute holds one; else a
    tuple (a list is copied: the caller may change it later)."""
    if spec.count_max == 1:
        return <object>items[0]
    if type(values) is list:
        return PyList_AsTuple(values)
    return values


cdef int _set_fast(Descriptor self, AttrSpec* spec, int attr, int atype, object values) except -1:
    """Set a plain value of an attribute's own type, everything about it checked here: 1 when done, 0 (having
    touched nothing) when the value is anything else, or would be refused: ``_set_checked`` then says why."""
    cdef int kind = TABLES.type_kind[atype]
    cdef Py_ssize_t i, n
    cdef int overflow = 0
    cdef long long x
    cdef int64_t ints[QUICK_MAX]
    cdef PyObject** items
    cdef int32_t e32
    cdef float f32
    cdef uint8_t b8
    cdef cudnnBackendDescriptor_t descs[QUICK_MAX]
    cdef PyObject* one
    cdef void* handle
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
        else:
            items = _sequence_items(values, spec, &n)
            if items == NULL:
                return 0
            for i in range(n):
                if not PyLong_CheckExact(<object>items[i]):
                    return 0
                x = PyLong_AsLongLongAndOverflow(<object>items[i], &overflow)
                if overflow or x < spec.value_min:
                    return 0
                ints[i] = x
            stored = _kept_sequence(values, spec, items)
        data = ints
    elif kind == K_ENUM:
        if <PyObject*>Py_TYPE(values) != TABLES.enum_class[atype] or spec.count_min > 1 or spec.count_max == 0:
            return 0
        e32 = <int32_t><int>values
        if _enum_state(atype, e32) != 1:
            return 0
        n = 1
        data = &e32
    elif kind == K_DESC:
        if isinstance(values, Descriptor):
            if spec.count_min > 1 or spec.count_max == 0:
                return 0
            n = 1
            one = <PyObject*>values
            items = &one
        else:  # a graph's operations
            items = _sequence_items(values, spec, &n)
            if items == NULL:
                return 0
            stored = _kept_sequence(values, spec, items)
        for i in range(n):
            if not isinstance(<object>items[i], Descriptor):
                return 0
            d = <Descriptor>items[i]
            if d._raw == NULL or not d._finalized or (spec.accepts and not ((spec.accepts >> d._dtype) & 1)):
                return 0
            descs[i] = d._raw
        data = descs
    elif kind == K_HANDLE:
        if not isinstance(values, _Handle) or spec.count_min > 1 or spec.count_max == 0:
            return 0
        handle = (<_Handle>values)._raw
        if handle == NULL:
            return 0
        n = 1
        data = &handle
    elif kind == K_FLOAT:
        if type(values) is not float or spec.count_min > 1 or spec.count_max == 0:
            return 0
        f32 = <float>PyFloat_AS_DOUBLE(values)
        if (isinf(f32) and not isinf(PyFloat_AS_DOUBLE(values))) or f32 != f32:
            return 0  # past float's range, or NaN: refused on the checked path
        stored = <double>f32
        n = 1
        data = &f32
    elif kind == K_DOUBLE:
        if type(values) is not float or spec.count_min > 1 or spec.count_max == 0 or \
                (<PyFloatObject*>values).ob_fval != (<PyFloatObject*>values).ob_fval:
            return 0  # (NaN: refused on the checked path)
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
    status = cycudnn.cudnnBackendSetAttribute(self._raw, <cudnnBackendAttributeName_t>attr,
                                              <cudnnBackendAttributeType_t>atype, n, data)
    _record_set(self, spec, attr, atype, status, stored)
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


cdef list _unpack(int kind, char* data, Py_ssize_t n, int atype, list children):
    cdef Py_ssize_t i
    cdef list out = []
    cdef cudnnFraction_t fr
    enum_cls = <object>TABLES.enum_class[atype] if kind == K_ENUM else None
    for i in range(n):
        if kind == K_INT64:
            out.append((<int64_t*>data)[i])
        elif kind == K_INT32:
            out.append((<int32_t*>data)[i])
        elif kind == K_ENUM:
            v = (<int32_t*>data)[i]
            try:
                out.append(enum_cls(v))
            except ValueError:  # a value newer than our header
                out.append(v)
        elif kind == K_BOOL:
            out.append(bool((<uint8_t*>data)[i]))
        elif kind == K_FLOAT:
            out.append((<float*>data)[i])
        elif kind == K_DOUBLE:
            out.append((<double*>data)[i])
        elif kind == K_PTR:
            out.append(<uintptr_t>(<void**>data)[i])
        elif kind == K_FRACTION:
            fr = (<cudnnFraction_t*>data)[i]
            out.append((fr.numerator, fr.denominator))
        elif kind == K_DESC:
            out.append(children[i])
        elif kind == K_HANDLE:
            out.append(<uintptr_t>(<cudnnHandle_t*>data)[i])
    return out


cdef int _choose_type(int attr, object value) except -1:
    """The attribute type to set ``value`` with: the only one, or the one that fits the value."""
    cdef AttrSpec* spec
    cdef int t
    if attr < 0 or attr >= TABLES.n_attr or TABLES.attr[attr].descriptor < 0:
        raise ValueError(f"attribute: {attr} is not a valid AttributeName")
    spec = &TABLES.attr[attr]
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



# ------------------------------------------------------------------------------------------------
# queries of descriptors
# ------------------------------------------------------------------------------------------------
def get_execution_plan_workspace_size(handle, Descriptor execution_plan not None, Descriptor variant_pack=None):
    """cudnnGetExecutionPlanWorkspaceSize (cuDNN >= 9.23): the workspace (bytes) a finalized plan needs for a
    finalized variant pack, whose shape overrides may change it. cuDNN answers BAD_PARAM without a handle or a
    pack (measured, 9.28.1): both are required here, so it runs on a GPU only. (``VariantPack``'s own query
    takes raw pointers; see runtime/_execute.pyx.)"""
    cdef size_t size = 0
    cdef cudnnStatus_t status
    cdef cudnnBackendDescriptor_t pack = NULL
    cdef cudnnHandle_t c_handle = NULL
    cdef cudnnBackendDescriptor_t plan_ptr
    if handle is not None and not isinstance(handle, _Handle):
        raise TypeError(f"handle: expected a cudnn_backend.Handle, not {type(handle).__name__}")
    check_available("cudnnGetExecutionPlanWorkspaceSize", "the workspace of a plan for one variant pack")
    if handle is None:
        raise ValueError("handle: cudnnGetExecutionPlanWorkspaceSize needs a cuDNN Handle (cuDNN refuses a NULL "
                         "handle with BAD_PARAM), so the workspace of a variant pack is known on a GPU only")
    (<_Handle>handle)._check_open()
    c_handle = <cudnnHandle_t>(<_Handle>handle)._raw
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
    pack = variant_pack._raw
    plan_ptr = execution_plan._raw
    enter_call(<_Handle>handle, execution_plan, variant_pack)
    try:  # the binding raises CudnnFunctionNotFoundError on a cuDNN older than 9.23: the call count must not leak
        with nogil:
            status = cycudnn.cudnnGetExecutionPlanWorkspaceSize(c_handle, plan_ptr, pack, &size)
    finally:
        leave_call(<_Handle>handle, execution_plan, variant_pack)
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
    other_ptr = other._raw
    graph_ptr = graph._raw
    enter_call(graph, other, None)
    with nogil:
        status = cycudnn.cudnnBackendGetAttribute(graph_ptr, c_attr, CUDNN_TYPE_BACKEND_DESCRIPTOR, 1, &answer,
                                                  &other_ptr)
    leave_call(graph, other, None)
    raise_status(status, "cudnnBackendGetAttribute", graph.descriptor_type,
                 AttributeName.CUDNN_ATTR_OPERATIONGRAPH_IS_SAME_TOPOLOGY)
    return bool(answer & 0xFF)
