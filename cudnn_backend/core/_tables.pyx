# cython: language_level=3
"""The attribute schema (``core.schema``, generated from the header) as C tables, built once, on first use, against
the loaded cuDNN: what ``Descriptor`` checks every set, get and finalize against (a checked ``set`` is a few table
reads, a conversion loop over the values and the cuDNN call), which attribute types and values the loaded release
has, the finalize checks the operation families declare (``core.op_checks``) and the JSON checks
(``core.json_checks``)."""
import enum
import threading

from cpython.ref cimport PyObject
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

cdef SchemaTables TABLES                  # zeroed: not ready
cdef list _ENUM_CLASS = [None] * MAX_TYPES  # what the tables' borrowed enum classes and checks are kept alive by
cdef dict _FINALIZE_CHECK = {}
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


cdef void _kind_sizes(SchemaTables* t) noexcept:
    t.kind_size[K_NONE] = 0
    t.kind_size[K_HANDLE] = sizeof(cudnnHandle_t)
    t.kind_size[K_BOOL] = sizeof(uint8_t)
    t.kind_size[K_INT64] = sizeof(int64_t)
    t.kind_size[K_INT32] = sizeof(int32_t)
    t.kind_size[K_FLOAT] = sizeof(float)
    t.kind_size[K_DOUBLE] = sizeof(double)
    t.kind_size[K_PTR] = sizeof(void*)
    t.kind_size[K_CHAR] = sizeof(char)
    t.kind_size[K_FRACTION] = sizeof(cudnnFraction_t)
    t.kind_size[K_ENUM] = sizeof(int32_t)
    t.kind_size[K_DESC] = sizeof(cudnnBackendDescriptor_t)


cdef SchemaTables* schema_tables() except NULL:
    if not TABLES.ready:
        _build_tables(&TABLES)
    return &TABLES


cdef int _build_tables(SchemaTables* t) except -1:
    cdef AttrSpec* spec
    cdef int ty, v, i
    with _TABLE_LOCK:
        if t.ready:
            return 0
        ensure_versions()
        _kind_sizes(t)
        # attribute types
        for member in AttributeType:
            ty = int(member)
            if ty >= MAX_TYPES:
                continue
            t.type_available[ty] = member.name not in _UNAVAILABLE
            kind = _KIND_OF_TYPE_NAME.get(member.name)
            enum_name = _enums.ATTRIBUTE_TYPE_ENUM.get(member.name)
            enum_cls = getattr(_enums, enum_name, None) if enum_name else None
            if kind is None and isinstance(enum_cls, type) and issubclass(enum_cls, enum.IntEnum):
                kind = K_ENUM
                _ENUM_CLASS[ty] = enum_cls
                t.enum_class[ty] = <PyObject*>enum_cls  # kept alive by _ENUM_CLASS
                top = max(int(m) for m in enum_cls)
                low = min(0, min(int(m) for m in enum_cls))
                t.enum_max[ty] = top
                t.enum_min[ty] = low
                t.enum_ok[ty] = <uint8_t*>calloc(top - low + 1, 1)
                for m in enum_cls:
                    t.enum_ok[ty][int(m) - low] = 2 if m.name in _UNAVAILABLE else 1
            t.type_kind[ty] = kind if kind is not None else K_NONE
        # descriptor types and their required attributes
        for member in DescriptorType:
            ty = int(member)
            if ty < MAX_TYPES:
                t.desc_ok[ty] = 2 if member.name in _UNAVAILABLE else 1
                dspec = _schema.DESCRIPTORS.get(member)
                required = [int(a) for a in dspec.required] if dspec is not None else []
                t.n_required[ty] = len(required)
                t.required[ty] = <int*>calloc(max(1, len(required)), sizeof(int))
                for i in range(len(required)):
                    t.required[ty][i] = required[i]
        # attributes
        top = max(int(a) for a in AttributeName) + 1
        t.attr = <AttrSpec*>calloc(top, sizeof(AttrSpec))
        t.n_attr = top
        for i in range(top):
            t.attr[i].descriptor = -1
        for attr, a in _schema.ATTRIBUTES.items():
            spec = &t.attr[int(attr)]
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
        for ty in range(MAX_TYPES):
            t.n_attrs[ty] = 0
        for attr, a in _schema.ATTRIBUTES.items():
            ty = int(a.descriptor)
            spec = &t.attr[int(attr)]
            if 0 <= ty < MAX_TYPES:
                spec.slot = t.n_attrs[ty]
                spec.bit = spec.slot if spec.slot < 64 else -1
                t.n_attrs[ty] += 1
            else:
                spec.descriptor = -1  # a type past the tables: refused as no attribute
        for ty in range(MAX_TYPES):
            t.slot_attr[ty] = <int*>calloc(max(1, t.n_attrs[ty]), sizeof(int))
        for i in range(top):
            if t.attr[i].descriptor >= 0:
                t.slot_attr[t.attr[i].descriptor][t.attr[i].slot] = i
        for ty in range(MAX_TYPES):  # where a call holding a descriptor looks for what it holds (_hold_tree)
            t.child_slots[ty] = <int*>calloc(max(1, t.n_attrs[ty]), sizeof(int))
            t.n_child_slots[ty] = 0
            for i in range(t.n_attrs[ty]):
                spec = &t.attr[t.slot_attr[ty][i]]
                for v in range(MAX_TYPES):
                    if (spec.types >> v) & 1 and (t.type_kind[v] == K_DESC or t.type_kind[v] == K_HANDLE):
                        t.child_slots[ty][t.n_child_slots[ty]] = i
                        t.n_child_slots[ty] += 1
                        break
        for dtype_member in DescriptorType:
            ty = int(dtype_member)
            if ty >= MAX_TYPES:
                continue
            t.required_mask[ty] = 0
            t.required_by_slot[ty] = False
            for i in range(t.n_required[ty]):
                v = t.required[ty][i]
                if t.attr[v].bit >= 0:
                    t.required_mask[ty] |= (<uint64_t>1) << t.attr[v].bit
                else:
                    t.required_by_slot[ty] = True
        # Finalizing a tensor, a pointwise/convolution/... descriptor or an operation node is a few
        # microseconds of bookkeeping in cuDNN: the GIL stays held (releasing and taking it back would cost
        # as much). Graphs, engines, heuristics, plans, kernel caches and the like may take long: GIL released.
        for member in DescriptorType:
            ty = int(member)
            if ty < MAX_TYPES:
                t.finalize_nogil[ty] = not (member.name in _FINALIZE_QUICK_NAMES or
                                          member.name.startswith("CUDNN_BACKEND_OPERATION_"))
        for i in range(top):
            spec = &t.attr[i]
            if spec.descriptor >= 0 and spec.flags & F_AVAILABLE and spec.role != ROLE_GET_ONLY and \
                    not spec.flags & (F_SET_UNSUPPORTED | F_HOST_DATA | F_JSON) and 0 <= spec.default_type < MAX_TYPES \
                    and t.type_available[spec.default_type] and \
                    t.type_kind[spec.default_type] in (K_INT64, K_ENUM, K_DESC, K_FLOAT, K_DOUBLE, K_BOOL, K_HANDLE):
                spec.flags |= F_FAST
        for dtype, check in _op_checks.FINALIZE_CHECKS.items():
            _FINALIZE_CHECK[int(dtype)] = check
            t.finalize_check[int(dtype)] = <PyObject*>check  # kept alive by _FINALIZE_CHECK
        for dtype, (floor, unless) in _op_checks.FINALIZE_CHECK_FLOORS.items():
            t.finalize_check_floor[int(dtype)] = floor
            for attr in unless:
                if t.attr[int(attr)].bit < 0:  # (no bit to test: the check always runs)
                    t.finalize_check_floor[int(dtype)] = 0
                else:
                    t.finalize_check_floor_unless[int(dtype)] |= (<uint64_t>1) << t.attr[int(attr)].bit
        if len(_pointwise.INPUT_SLOTS) != 4 or len(_pointwise.OUTPUT_SLOTS) != 2:
            raise RuntimeError("the pointwise family's tensor slots changed: update SchemaTables.pw_inputs/pw_outputs")
        for i, (attr, _) in enumerate(_pointwise.INPUT_SLOTS):
            t.pw_inputs[i] = int(attr)
        for i, (attr, _) in enumerate(_pointwise.OUTPUT_SLOTS):
            t.pw_outputs[i] = int(attr)
        for mode, bits in _pointwise.SLOTS_WANTED.items():
            if 0 <= mode < PW_MODES:
                t.pw_slots_wanted[mode] = bits
        t.ready = True
    return 0


def attribute_io(attribute):
    """'input' or 'output' for an operation's tensor attribute, else None (from the generated schema)."""
    cdef int a = _enum_arg(attribute, AttributeName, "attribute")
    cdef SchemaTables* t = schema_tables()
    if a < 0 or a >= t.n_attr:
        return None
    return (None, "input", "output")[t.attr[a].io]
