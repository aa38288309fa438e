# cython: language_level=3
"""The attribute schema (``core.schema``, generated from the header) as C tables, built once, on first use, against
the loaded cuDNN: what ``Descriptor`` checks every set, get and finalize against (a checked ``set`` is a few table
reads, a conversion loop over the values and the cuDNN call), which attribute types and values the loaded release
has, the finalize checks the operation families declare (``core.op_checks``) and the JSON checks
(``core.json_checks``)."""
import enum
import threading

from libc.stdint cimport int32_t, int64_t, uint8_t, uint64_t
from libc.stdlib cimport calloc

from cudnn_backend._bindings.cycudnn cimport cudnnBackendDescriptor_t, cudnnFraction_t, cudnnHandle_t

from cudnn_backend._bindings import enums as _enums
from cudnn_backend._bindings.enums import AttributeName, AttributeType, DescriptorType
from cudnn_backend.core import json_checks as _json_checks
from cudnn_backend.core import op_checks as _op_checks
from cudnn_backend.core import schema as _schema
from cudnn_backend.core._coerce cimport _enum_arg
from cudnn_backend.core._coerce import INT64_MIN
from cudnn_backend.core._status cimport _UNAVAILABLE, ensure_versions
from cudnn_backend.core.families import pointwise as _pointwise

_READY = False
_ENUM_CLASS = [None] * MAX_TYPES
_FINALIZE_CHECK = {}
_JSON_CHECK = {}
cdef object _TABLE_LOCK = threading.Lock()
PY_MAX_SET_ELEMENTS = MAX_SET_ELEMENTS
PY_MAX_GET_ELEMENTS = MAX_GET_ELEMENTS
PY_MAX_GET_DESCRIPTORS = MAX_GET_DESCRIPTORS

cdef dict _KIND_OF_TYPE_NAME = {
    "CUDNN_TYPE_HANDLE": K_HANDLE, "CUDNN_TYPE_BOOLEAN": K_BOOL, "CUDNN_TYPE_INT64": K_INT64,
    "CUDNN_TYPE_INT32": K_INT32, "CUDNN_TYPE_FLOAT": K_FLOAT, "CUDNN_TYPE_DOUBLE": K_DOUBLE,
    "CUDNN_TYPE_VOID_PTR": K_PTR, "CUDNN_TYPE_CHAR": K_CHAR, "CUDNN_TYPE_FRACTION": K_FRACTION,
    "CUDNN_TYPE_BACKEND_DESCRIPTOR": K_DESC,
}
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


cdef int _build_tables() except -1:
    global _ATTR, _N_ATTR, _READY
    cdef AttrSpec* spec
    cdef int t, v, i
    with _TABLE_LOCK:
        if _READY:
            return 0
        ensure_versions()
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


def attribute_io(attribute):
    """'input' or 'output' for an operation's tensor attribute, else None (from the generated schema)."""
    cdef int a = _enum_arg(attribute, AttributeName, "attribute")
    _ensure_tables()
    if a < 0 or a >= _N_ATTR:
        return None
    return (None, "input", "output")[_ATTR[a].io]
