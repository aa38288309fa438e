# cython: language_level=3
"""The typed layer's own behaviour, as the bases of the generated classes (``_classes.pyx``).

``TypedDescriptor``: keyword access by name, presentation of stored values (enum members, lists),
``attributes()``, ``to_dict()``, a readable ``repr`` and "did you mean" errors. ``TensorBase``:
display names, by-value scalars, the tensor's signature for graph checks, tensors from arrays.
``OperationGraphBase``: its operations, a table and Graphviz DOT (``introspection.py``).
Nothing here reaches above the typed layer.
"""
import difflib

from cudnn_backend._bindings.cycudnn cimport *
from cudnn_backend.typed._signature cimport TensorSignature, make_signature

from cudnn_backend._bindings.enums import AttributeName, AttributeType, DataType, DescriptorType
from cudnn_backend.core import schema as _schema
from cudnn_backend.core.families._build import as_bool as _as_bool
from cudnn_backend.core.families._build import as_data_type as _as_data_type
from cudnn_backend.errors import CudnnError, CudnnUnsafeCallError
from cudnn_backend.typed import arrays as _arrays
from cudnn_backend.core.names import default_tensor_name as _default_tensor_name
from cudnn_backend.typed import introspection as _introspection
from cudnn_backend.typed.tensors import read_signature as _read_signature
from cudnn_backend.typed.uids import default_uids

cdef enum:
    P_PLAIN = 0
    P_ENUM = 1
    P_DESC = 2


class _Unset:
    """The default of every keyword: "not given" (None can be a value)."""

    __slots__ = ()

    def __repr__(self):
        return "UNSET"

    def __reduce__(self):
        return (_unset, ())


UNSET = _Unset()


def _unset():
    return UNSET


cdef dict _CLASSES = {}  # DescriptorType value -> generated class


def register(cls):
    """Called by the generated module for each class it defines."""
    _CLASSES[int(cls.DESCRIPTOR_TYPE)] = cls
    return cls


def specs(keywords):
    """{keyword: AttributeSpec} from {keyword: AttributeName} (the generated classes' ATTRIBUTES)."""
    return {k: _schema.ATTRIBUTES[a] for k, a in keywords.items()}


def descriptor_class(descriptor_type):
    """The typed class of any CUDNN_BACKEND_*_DESCRIPTOR (enum member, int or C name)."""
    if isinstance(descriptor_type, str):
        try:
            descriptor_type = DescriptorType[descriptor_type]
        except KeyError:
            raise ValueError(f"descriptor_type: {descriptor_type!r} is not a name of DescriptorType") from None
    if isinstance(descriptor_type, bool):
        raise TypeError("descriptor_type: expected a DescriptorType, not bool")
    try:
        return _CLASSES[int(DescriptorType(descriptor_type))]
    except (ValueError, KeyError):
        raise ValueError(f"descriptor_type: {descriptor_type!r} is not a DescriptorType") from None


def all_classes():
    """{DescriptorType: class} for every descriptor type of the schema."""
    return {DescriptorType(k): v for k, v in _CLASSES.items()}


cdef object _child_class(int attr):
    spec = _schema.ATTRIBUTES[AttributeName(attr)]
    if spec.accepts is not None and len(spec.accepts) == 1:
        return _CLASSES.get(int(spec.accepts[0]))
    return None


cdef object _show(object v, int kind, object enum_cls, bint single):
    if kind == P_ENUM:
        if single and type(v) is not tuple:
            try:
                return enum_cls(v)
            except ValueError:  # a value newer than the header
                return v
        out = []
        for x in v:
            try:
                out.append(enum_cls(x))
            except ValueError:
                out.append(x)
        return out
    if type(v) is tuple and not (single and len(v) == 2 and kind == P_PLAIN and _is_pair(v)):
        return list(v)
    return v


cdef bint _is_pair(tuple v):
    # a single FRACTION value is stored as (numerator, denominator)
    return type(v[0]) is int and type(v[1]) is int


cdef class Keyword:
    """One keyword property of a generated class (a compiled descriptor): reading shows the value as set
    (or cuDNN's, for what was not set), writing is a checked set of its attribute."""

    cdef readonly str name
    cdef readonly int attribute_value
    cdef readonly int attribute_type_value
    cdef int kind
    cdef object enum_cls
    cdef bint single
    cdef bint auto
    cdef readonly bint settable

    def __cinit__(self, str name, int attr, int atype, int kind, object enum_cls, bint single, bint auto,
                  bint settable):
        self.name = name
        self.attribute_value = attr
        self.attribute_type_value = atype
        self.kind = kind
        self.enum_cls = enum_cls
        self.single = single
        self.auto = auto
        self.settable = settable

    def __get__(self, obj, objtype):
        if obj is None:
            return self
        return (<TypedDescriptor>obj)._present(self.attribute_value, self.attribute_type_value, self.kind,
                                               self.enum_cls, self.single)

    def __set__(self, obj, value):
        if not self.settable:
            raise AttributeError(f"{type(obj).__name__}.{self.name} ({_attr_c_name(self.attribute_value)}) is get-only")
        if self.auto:
            (<TypedDescriptor>obj)._set_auto(self.attribute_value, value)
        else:
            (<TypedDescriptor>obj)._set(self.attribute_value, self.attribute_type_value, value)

    def __delete__(self, obj):
        raise AttributeError(f"{type(obj).__name__}.{self.name}: a set attribute cannot be unset (make a new "
                             "descriptor)")

    @property
    def attribute(self):
        return AttributeName(self.attribute_value)

    @property
    def spec(self):
        """The AttributeSpec of the schema."""
        return _schema.ATTRIBUTES[AttributeName(self.attribute_value)]

    def __repr__(self):
        return f"<Keyword {self.name}: {_attr_c_name(self.attribute_value)}>"


cdef str _attr_c_name(int attr):
    return AttributeName(attr).name


cdef class TypedDescriptor(Descriptor):
    """Base of the generated classes: keyword construction, checked properties, ``to_dict``."""

    cdef object _present(self, int attr, int atype, int kind, object enum_cls, bint single):
        if self._raw == NULL:
            self._check_open()  # closed: what was set is gone, so None would say "not set" (get() raises too)
        v = self._value(attr)
        if v is not None:
            return _show(v, kind, enum_cls, single)
        if not self._finalized:
            return None
        spec = _schema.ATTRIBUTES[AttributeName(attr)]
        if spec.get_unsupported or atype == CUDNN_TYPE_HANDLE:
            return None
        if kind == P_DESC:
            cls = _child_class(attr)
            if cls is None:
                return None
            if spec.role == _schema.OPTIONAL and self._read_from is None:
                return None  # built here: an optional child not set is not there (cuDNN makes none itself)
        try:
            values = self.get(attr, atype, cls=cls) if kind == P_DESC else self.get(attr, atype)
        except CudnnError as e:
            # What cuDNN has no value for reads None, as an attribute never set does: an optional child it was
            # not given (DEVICEPROP of an engine made on a GPU: BAD_PARAM_NULL_POINTER), what it keeps only in
            # some states (ENGINECFG_SHARED_MEMORY_USED offline, INTERMEDIATE_INFO: NOT_SUPPORTED). get()
            # still raises with cuDNN's text; a required attribute always does.
            if spec.role != _schema.REQUIRED and int(e.status) in (CUDNN_STATUS_BAD_PARAM_NULL_POINTER,
                                                              CUDNN_STATUS_NOT_SUPPORTED):
                return None
            raise
        if isinstance(values, str):
            return values
        if single:
            return values[0] if values else None
        return values

    cdef int _unknown_keywords(self, dict unknown) except -1:
        cls = type(self)
        name = next(iter(unknown))
        if name in cls.KEYWORDS:  # a keyword the constructor leaves out: a get-only attribute
            raise ValueError(f"{cls.__name__}: {cls.KEYWORDS[name].name} ({name}) is get-only; cuDNN sets it")
        close = difflib.get_close_matches(name, list(cls.KEYWORDS), n=3)
        hint = f"; did you mean {', '.join(close)}?" if close else f"; its keywords are {', '.join(cls.KEYWORDS)}"
        raise TypeError(f"{cls.__name__} ({cls.DESCRIPTOR_TYPE.name}) has no attribute {name!r}{hint}")

    @classmethod
    def _spec_for(cls, name):
        try:
            return cls.ATTRIBUTES[name]
        except TypeError:  # (unhashable: a list)
            raise TypeError(f"{cls.__name__}: an attribute keyword is a str, not {type(name).__name__}") from None
        except KeyError:
            close = difflib.get_close_matches(str(name), list(cls.KEYWORDS), n=3)
            hint = f"; did you mean {', '.join(close)}?" if close else f"; its keywords are {', '.join(cls.KEYWORDS)}"
            raise TypeError(f"{cls.__name__} ({cls.DESCRIPTOR_TYPE.name}) has no attribute {name!r}{hint}") from None

    @classmethod
    def keywords(cls):
        """{keyword: AttributeSpec}, in schema order."""
        return dict(cls.ATTRIBUTES)

    def set_keyword(self, name, value, attribute_type=None):
        """Set an attribute by its keyword (the attribute type from the schema and the value, or given)."""
        spec = self._spec_for(name)
        if attribute_type is None:
            self.set_auto(spec.name, value)
        else:
            self.set(spec.name, attribute_type, value)

    def get_keyword(self, name):
        """An attribute by keyword, as its property shows it."""
        self._spec_for(name)
        return getattr(self, name)

    def attributes(self):
        """{keyword: value} of every attribute set."""
        return {k: getattr(self, k) for k, a in type(self).KEYWORDS.items() if self._has(int(a))}

    def to_dict(self):
        """This descriptor and its children as plain data (enum values by C name); ``from_dict`` rebuilds it."""
        self._check_open()  # closed: what was set on it is gone, refused as every other method refuses it
        return _introspection.to_dict(self)

    def __getattr__(self, name):
        # only reached for names that are no real attribute: keyword-style errors
        if name.startswith("_"):
            raise AttributeError(name)
        cls = type(self)
        close = difflib.get_close_matches(name, list(cls.KEYWORDS), n=3)
        hint = f"; did you mean {', '.join(close)}?" if close else ""
        raise AttributeError(f"{cls.__name__} has no attribute {name!r}{hint}")

    def __repr__(self):
        if self._raw == NULL:
            return f"<{type(self).__name__} closed>"
        state = "finalized" if self._finalized else "not finalized"
        parts = [f"{k}={_introspection.short(getattr(self, k))}" for k, a in type(self).KEYWORDS.items()
                 if self._has(int(a))]
        return f"{type(self).__name__}({', '.join(parts)}) <{state}>"


cdef class TensorBase(TypedDescriptor):
    """``Tensor``'s typed-layer behaviour: a display name, a by-value scalar's value, its signature."""

    @property
    def name(self):
        """The display name (tables, DOT, error messages): the one given, else ``t<uid>`` (``v<uid>`` when
        virtual; ``core.names.default_tensor_name``)."""
        if self.name_ is not None:
            return self.name_
        return _default_tensor_name(self._value(CUDNN_ATTR_TENSOR_UNIQUE_ID),
                                    self._value(CUDNN_ATTR_TENSOR_IS_VIRTUAL))

    @name.setter
    def name(self, value):
        if value is not None and not isinstance(value, str):
            raise TypeError(f"name: expected a str or None, not {type(value).__name__}")
        self.name_ = value

    @property
    def uid(self):
        """CUDNN_ATTR_TENSOR_UNIQUE_ID as set (or read from cuDNN for a tensor cuDNN made)."""
        return self.signature().uid

    @property
    def shape(self):
        """The dims as a tuple."""
        return self.signature().dims

    @property
    def virtual(self):
        return self.signature().virtual

    @property
    def by_value(self):
        return self.signature().by_value

    cpdef TensorSignature signature(self):
        """Its ``TensorSignature`` (uid, dims, strides, data type value, virtual, by value): what graph checks
        compare; kept once the tensor is finalized (it cannot change then)."""
        cdef TensorSignature sig
        if self._signature is not None:
            return self._signature
        uid = self._value(CUDNN_ATTR_TENSOR_UNIQUE_ID)  # (_value: no int object made per lookup)
        if self._finalized and uid is None:  # a tensor cuDNN made (get)
            sig = _read_signature(self)
        else:
            sig = make_signature(uid, self._value(CUDNN_ATTR_TENSOR_DIMENSIONS), self._value(CUDNN_ATTR_TENSOR_STRIDES),
                                 self._value(CUDNN_ATTR_TENSOR_DATA_TYPE), self._value(CUDNN_ATTR_TENSOR_IS_VIRTUAL),
                                 self._value(CUDNN_ATTR_TENSOR_IS_BY_VALUE))
        if self._finalized:
            self._signature = sig
        return sig

    def describe(self):
        """One line: name, uid, dims, strides, data type, virtual/by-value."""
        return _introspection.describe_signature(self.name, self.signature())

    @classmethod
    def from_array(cls, array, uid=None, name=None, *, virtual=False, by_value=False, alignment=None,
                   data_type=None, finalize=True):
        """A tensor shaped like ``array`` (numpy, torch, JAX, cupy, DLPack or __cuda_array_interface__; host arrays
        are read by numpy, without cuda-core).

        Dims, strides (in elements), data type and byte alignment (from the data pointer, at most 16) are
        inferred; ``uid`` defaults to the next free one of ``typed.uids.default_uids``. An array whose dtype cuDNN
        has no type for is refused unless ``data_type`` is given (a DataType, its name, or an array library's dtype),
        which reinterprets the memory element for element: of the array's element size only (its shape and strides
        count its elements; a vectorized type is refused). A bool array is BYTE_BOOLEAN (refused before cuDNN 9.25),
        never BOOLEAN, which cuDNN reads bit-packed.
        """
        finalize = _as_bool(finalize, "finalize")
        info = _arrays.describe(array)
        if 0 in info.shape:
            raise ValueError(f"array: a zero-sized dimension {list(info.shape)}; cuDNN tensors need sizes >= 1")
        if any(s < 1 for n, s in zip(info.shape, info.strides) if n > 1):
            raise ValueError(f"array: strides {list(info.strides)} (shape {list(info.shape)}): a reversed or "
                             "broadcast view (a stride below 1) has no cuDNN tensor, whose strides are positive; "
                             "describe a copy (numpy.ascontiguousarray, .contiguous())")
        if data_type is not None:
            data_type = _as_data_type(data_type, "data_type")
            if data_type not in _arrays.DATA_TYPE_BITS:  # (cuDNN refuses it at finalize, giving no reason)
                raise TypeError(f"data_type: {data_type.name} has no plain per-element size (a vectorized type: "
                                "its tensor needs CUDNN_ATTR_TENSOR_VECTOR_COUNT and VECTORIZED_DIMENSION); describe "
                                "it by hand, not from an array")
            conflict = (_arrays.boolean_layout_conflict(info, data_type) or
                        _arrays.element_size_conflict(info, data_type))
            if conflict is not None:
                raise TypeError(f"array: {conflict}")
        elif info.data_type is None:
            why = _arrays.no_data_type_reason(info.dtype_name)
            raise TypeError(f"array: the {info.holds()} array has no cuDNN data type{f' ({why})' if why else ''}; "
                            "pass data_type= to describe its memory as another type")
        else:
            data_type = info.data_type
        if alignment is None:
            alignment = info.alignment
            itemsize = _arrays.ITEMSIZE.get(data_type)
            if itemsize and alignment % itemsize:  # (cuDNN refuses it, naming neither the array nor the alignment)
                raise ValueError(f"array: its data pointer 0x{info.ptr:x} is {alignment}-byte aligned, not a multiple "
                                 f"of its {itemsize}-byte {data_type.name} elements, as cuDNN needs: describe an "
                                 f"aligned copy (a.copy()), or pass alignment= (a multiple of {itemsize}) for the "
                                 "memory bound later")
        t = cls(data_type=data_type,
                # (a dim of size 1 may have any stride: cuDNN's must be positive)
                dimensions=list(info.shape) or [1], strides=[max(1, s) for s in info.strides] or [1],
                unique_id=default_uids.next() if uid is None else uid,
                byte_alignment=alignment, is_virtual=_as_bool(virtual, "virtual"),
                is_by_value=_as_bool(by_value, "by_value"))
        t.name = name
        return t.finalize() if finalize else t


cdef class OperationGraphBase(TypedDescriptor):
    """``OperationGraph``'s typed-layer behaviour: its operations, a table and Graphviz DOT."""

    @property
    def operations(self):
        """The operations set on it (CUDNN_ATTR_OPERATIONGRAPH_OPS), as a tuple."""
        ops = self._value(CUDNN_ATTR_OPERATIONGRAPH_OPS)
        if ops is None:
            return ()
        return ops if type(ops) is tuple else (ops,)

    def table(self):
        """A text table of the operations in topological order with their tensors (a closed graph has none: refused)."""
        if self._raw == NULL:  # (what was set on it went with it: an empty table would say it had no operations)
            self._refuse_closed()
        return _introspection.operations_table(self.operations)

    def to_dot(self, name="cudnn_graph"):
        """Graphviz DOT of the dataflow (tensors as ellipses, virtual ones dashed; operations as boxes)."""
        if self._raw == NULL:
            self._refuse_closed()
        return _introspection.operations_dot(self.operations, name)

    def __str__(self):
        return repr(self) if self._raw == NULL else self.table()
