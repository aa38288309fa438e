"""Typed descriptor classes, one per backend descriptor type, generated from the attribute schema.

``Tensor``, ``Convolution``, ``OperationConvolutionForward``, ``OperationGraph``,
``EngineHeuristics``, ``EngineConfig``, ``ExecutionPlan``, ``VariantPack``, ``DeviceProp``, ... are
made here, at import, from ``schema.DESCRIPTORS`` — none is written by hand. The class name is the
C descriptor type in CamelCase (``CUDNN_BACKEND_OPERATION_CONVOLUTION_FORWARD_DESCRIPTOR`` →
``OperationConvolutionForward``; ENGINEHEUR, ENGINECFG, OPERATIONGRAPH and DEVICEPROP are spelled
out). Keywords and properties are the attribute's C name minus the prefix all attributes of its
descriptor share, lowercased: ``CUDNN_ATTR_TENSOR_UNIQUE_ID`` → ``unique_id``.

Typed objects are ``Descriptor`` objects: ``set``/``get``/``finalize`` with C names still work.
Behaviour added on top of a few classes (tensors from arrays, graph tables) lives in the mixins of
``_typed_mixins.py``, keyed by descriptor type; the classes themselves stay generated.
"""
from __future__ import annotations

import difflib
import numbers

from cudnn_backend import schema as _schema
from cudnn_backend._descriptor import Descriptor, register_descriptor_class
from cudnn_backend._errors import CudnnError, CudnnUnsafeCallError
from cudnn_backend._generated import enums as _enums
from cudnn_backend._generated.enums import AttributeType, DescriptorType
from cudnn_backend._typed_mixins import MIXINS

_SPECIAL_WORDS = {"ENGINEHEUR": "EngineHeuristics", "ENGINECFG": "EngineConfig", "OPERATIONGRAPH": "OperationGraph",
                  "DEVICEPROP": "DeviceProp"}
_FLOATS = (AttributeType.CUDNN_TYPE_DOUBLE, AttributeType.CUDNN_TYPE_FLOAT)
_INTS = (AttributeType.CUDNN_TYPE_INT64, AttributeType.CUDNN_TYPE_INT32)


def class_name(descriptor_type) -> str:
    """CUDNN_BACKEND_OPERATION_CONVOLUTION_FORWARD_DESCRIPTOR -> OperationConvolutionForward."""
    core = DescriptorType(descriptor_type).name[len("CUDNN_BACKEND_"):-len("_DESCRIPTOR")]
    return "".join(_SPECIAL_WORDS.get(w, w.capitalize()) for w in core.split("_"))


def keyword(attribute) -> str:
    """CUDNN_ATTR_TENSOR_UNIQUE_ID -> unique_id (the C name minus its descriptor's shared prefix, lowercased)."""
    spec = _schema.attribute(attribute)
    prefix = _schema.DESCRIPTORS[spec.descriptor].attribute_prefix
    return spec.name.name[len(prefix):].lower()


def _enum_class(attribute_type):
    name = _enums.ATTRIBUTE_TYPE_ENUM.get(AttributeType(attribute_type).name)
    return getattr(_enums, name) if name else None


def _is_descriptor_value(value) -> bool:
    if isinstance(value, Descriptor):
        return True
    return isinstance(value, (list, tuple)) and len(value) > 0 and all(isinstance(v, Descriptor) for v in value)


def choose_attribute_type(spec: _schema.AttributeSpec, value) -> AttributeType:
    """The attribute type to set ``value`` with: the only one, or the one that fits the value."""
    if len(spec.types) == 1:
        return spec.types[0]
    if AttributeType.CUDNN_TYPE_BACKEND_DESCRIPTOR in spec.types and _is_descriptor_value(value):
        return AttributeType.CUDNN_TYPE_BACKEND_DESCRIPTOR
    probe = value[0] if isinstance(value, (list, tuple)) and value else value
    if isinstance(probe, numbers.Integral) and not isinstance(probe, bool):
        for t in spec.types:
            if t in _INTS:
                return t
    if isinstance(probe, numbers.Real):
        for t in spec.types:
            if t in _FLOATS:
                return t
    return next((t for t in spec.types if t != AttributeType.CUDNN_TYPE_BACKEND_DESCRIPTOR), spec.types[0])


class TypedDescriptor(Descriptor):
    """Base of the generated classes: keyword construction, checked properties, to_dict."""

    DESCRIPTOR_TYPE: DescriptorType
    ATTRIBUTES: dict  # keyword -> AttributeSpec, in schema order

    def __init__(self, **attributes):
        Descriptor.__init__(self, self.DESCRIPTOR_TYPE)
        for name, value in attributes.items():
            self.set_keyword(name, value)

    # -- state the generic layer does not keep: what was set, and with which attribute type -----------
    @property
    def _typed_state(self):
        try:
            return self.__dict__["_state"]
        except KeyError:
            state = self.__dict__["_state"] = {"values": {}, "types": {}}
            return state

    @classmethod
    def _spec_for(cls, name):
        try:
            return cls.ATTRIBUTES[name]
        except KeyError:
            close = difflib.get_close_matches(name, list(cls.ATTRIBUTES), n=3)
            hint = f"; did you mean {', '.join(close)}?" if close else f"; its attributes are {', '.join(cls.ATTRIBUTES)}"
            raise TypeError(f"{cls.__name__} ({cls.DESCRIPTOR_TYPE.name}) has no attribute {name!r}{hint}") from None

    def set_keyword(self, name, value, attribute_type=None):
        """Set an attribute by its keyword, choosing the attribute type from the schema and the value."""
        spec = self.ATTRIBUTES.get(name) or self._spec_for(name)
        if spec.role == "get_only":
            raise ValueError(f"{self.DESCRIPTOR_TYPE.name}.{spec.name.name} ({name}) is get-only")
        if attribute_type is not None:
            atype = AttributeType(attribute_type)
        elif len(spec.types) == 1:
            atype = spec.types[0]
        else:
            atype = choose_attribute_type(spec, value)
        Descriptor.set(self, spec.name, atype, value)
        state = self.__dict__.get("_state") or self._typed_state
        state["values"][name] = _normalize(spec, atype, value)
        state["types"][name] = atype

    def get_keyword(self, name):
        """An attribute by keyword: before finalize the value set, after it cuDNN's value.

        Single-element attributes come back as scalars, others as lists, CHAR as str.
        """
        spec = self._spec_for(name)
        state = self._typed_state
        if not self.finalized or self.closed:
            return state["values"].get(name)
        atype = state["types"].get(name) or spec.types[0]
        if atype == AttributeType.CUDNN_TYPE_BACKEND_DESCRIPTOR:
            if name in state["values"]:
                return state["values"][name]  # the very objects set (identity preserved)
            if spec.accepts is None or len(spec.accepts) != 1 or spec.get_unsupported:
                return None
        if atype == AttributeType.CUDNN_TYPE_HANDLE:
            return state["values"].get(name)
        try:
            values = self.get(spec.name, atype)
        except (CudnnError, CudnnUnsafeCallError):
            if name in state["values"]:
                return state["values"][name]
            raise
        if isinstance(values, str):
            return values
        return values[0] if spec.count_max == 1 and len(values) == 1 else (None if spec.count_max == 1 else values)

    def __getattr__(self, name):
        # only reached for names that are not real attributes: give keyword-style errors
        if name.startswith("_"):
            raise AttributeError(name)
        cls = type(self)
        close = difflib.get_close_matches(name, list(cls.ATTRIBUTES), n=3)
        hint = f"; did you mean {', '.join(close)}?" if close else ""
        raise AttributeError(f"{cls.__name__} has no attribute {name!r}{hint}")

    # -- introspection ---------------------------------------------------------------------------
    def attributes(self) -> dict:
        """{keyword: value} of every attribute set, read back (after finalize) from cuDNN."""
        return {name: self.get_keyword(name) for name in self.ATTRIBUTES if self._was_set(name)}

    def _was_set(self, name):
        return self.ATTRIBUTES[name].name in self.set_attributes

    def to_dict(self) -> dict:
        """This descriptor and its children as plain data (enum values by C name); see from_dict."""
        out = {}
        for name in self.ATTRIBUTES:
            if not self._was_set(name):
                continue
            atype = self._typed_state["types"].get(name)
            if atype == AttributeType.CUDNN_TYPE_HANDLE:
                continue  # a live handle is not data
            out[name] = _to_plain(self.get_keyword(name))
        return {"descriptor_type": self.DESCRIPTOR_TYPE.name, "finalized": self.finalized, "attributes": out}

    def __repr__(self):
        state = "closed" if self.closed else ("finalized" if self.finalized else "not finalized")
        if self.closed:
            return f"<{type(self).__name__} closed>"
        parts = []
        for name in self.ATTRIBUTES:
            if self._was_set(name):
                parts.append(f"{name}={_short(self._typed_state['values'].get(name))}")
        return f"{type(self).__name__}({', '.join(parts)}) <{state}>"


_PLAIN = {AttributeType.CUDNN_TYPE_INT64: int, AttributeType.CUDNN_TYPE_INT32: int,
          AttributeType.CUDNN_TYPE_DOUBLE: float, AttributeType.CUDNN_TYPE_BOOLEAN: bool}


def _normalize(spec, atype, value):
    """The value as get() would return it (enum members, ints, floats, str), scalar if single-element."""
    if atype in (AttributeType.CUDNN_TYPE_BACKEND_DESCRIPTOR, AttributeType.CUDNN_TYPE_HANDLE):
        return value
    # fast paths: values already of the type get() returns
    plain = _PLAIN.get(atype)
    if plain is not None:
        if type(value) is plain:
            return value if spec.count_max == 1 else [value]
        if type(value) in (list, tuple) and all(type(v) is plain for v in value):
            return value[0] if spec.count_max == 1 and len(value) == 1 else list(value)
    else:
        enum_cls = _enum_class(atype)
        if enum_cls is not None and type(value) is enum_cls:
            return value if spec.count_max == 1 else [value]
    if atype == AttributeType.CUDNN_TYPE_CHAR:
        return value.decode("utf-8", "replace") if isinstance(value, (bytes, bytearray)) else value
    enum_cls = _enum_class(atype)

    def one(v):
        if enum_cls is not None:
            return enum_cls[v] if isinstance(v, str) else enum_cls(int(v))
        if atype in _INTS or atype == AttributeType.CUDNN_TYPE_VOID_PTR:
            return None if v is None else int(v)
        if atype == AttributeType.CUDNN_TYPE_FLOAT:
            import struct

            return struct.unpack("f", struct.pack("f", float(v)))[0]
        if atype == AttributeType.CUDNN_TYPE_DOUBLE:
            return float(v)
        if atype == AttributeType.CUDNN_TYPE_BOOLEAN:
            return bool(v)
        if atype == AttributeType.CUDNN_TYPE_FRACTION:
            return (v.numerator, v.denominator) if hasattr(v, "numerator") else tuple(int(x) for x in v)
        return v

    if hasattr(value, "tolist") and not isinstance(value, (int, float)):
        value = value.tolist()
    if isinstance(value, (list, tuple)) and not (atype == AttributeType.CUDNN_TYPE_FRACTION and len(value) == 2
                                                 and not isinstance(value[0], (list, tuple))):
        items = [one(v) for v in value]
        return items[0] if spec.count_max == 1 and len(items) == 1 else items
    item = one(value)
    return item if spec.count_max == 1 else [item]


def _short(value):
    if isinstance(value, Descriptor):
        return f"<{type(value).__name__}>"
    if isinstance(value, (list, tuple)) and value and isinstance(value[0], Descriptor):
        return "[" + ", ".join(_short(v) for v in value) + "]"
    if hasattr(value, "name") and isinstance(value, int):
        return value.name
    text = repr(value)
    return text if len(text) <= 60 else text[:57] + "..."


def _to_plain(value):
    if isinstance(value, TypedDescriptor):
        return value.to_dict()
    if isinstance(value, Descriptor):
        return {"descriptor_type": value.descriptor_type.name, "finalized": value.finalized, "attributes": {}}
    if isinstance(value, (list, tuple)):
        return [_to_plain(v) for v in value]
    if isinstance(value, bool) or value is None or isinstance(value, str):
        return value
    if hasattr(value, "name") and isinstance(value, int):  # IntEnum member
        return value.name
    if isinstance(value, numbers.Integral):
        return int(value)
    if isinstance(value, numbers.Real):
        return float(value)
    return value


def from_dict(data: dict, finalize: bool | None = None):
    """Rebuild a descriptor (children first) from ``to_dict()`` output; finalize it if it was."""
    cls = descriptor_class(data["descriptor_type"])
    kwargs = {}
    for name, value in data["attributes"].items():
        spec = cls._spec_for(name)
        kwargs[name] = _from_plain(spec, value)
    obj = cls(**kwargs)
    if data.get("finalized", False) if finalize is None else finalize:
        obj.finalize()
    return obj


def _from_plain(spec, value):
    if isinstance(value, dict) and "descriptor_type" in value:
        return from_dict(value)
    if isinstance(value, list):
        if value and isinstance(value[0], dict):
            return [from_dict(v) for v in value]
        if spec.types and AttributeType.CUDNN_TYPE_FRACTION in spec.types and value and isinstance(value[0], list):
            return [tuple(v) for v in value]
        return [_from_plain(spec, v) for v in value]
    if isinstance(value, str):
        for t in spec.types:
            enum_cls = _enum_class(t)
            if enum_cls is not None and value in enum_cls.__members__:
                return enum_cls[value]
    return value


# ---------------------------------------------------------------------------------------------
# class generation
# ---------------------------------------------------------------------------------------------
_CLASSES: dict = {}


def _make_property(name, spec):
    def fget(self):
        return self.get_keyword(name)

    def fset(self, value):
        self.set_keyword(name, value)

    types = "/".join(t.name for t in spec.types)
    doc = f"{spec.name.name} ({types}, {spec.count_text()} element(s), {spec.role}"
    if spec.accepts:
        doc += f"; takes {'/'.join(t.name for t in spec.accepts)}"
    doc += f"; since cuDNN {spec.since})"
    return property(fget, fset if spec.settable else None, doc=doc)


def _make_class(dtype: DescriptorType):
    dspec = _schema.DESCRIPTORS[dtype]
    attributes = {keyword(a): _schema.ATTRIBUTES[a] for a in dspec.attributes}
    namespace = {
        "DESCRIPTOR_TYPE": dtype,
        "ATTRIBUTES": attributes,
        "__doc__": f"{dtype.name} (since cuDNN {dspec.since}). Keywords: {', '.join(attributes) or 'none'}.",
        "__module__": __name__,
    }
    mixin = MIXINS.get(dtype)
    for name, spec in attributes.items():
        if hasattr(TypedDescriptor, name) or name in namespace or (mixin is not None and hasattr(mixin, name)):
            raise RuntimeError(f"keyword {name} of {dtype.name} collides with a Descriptor or mixin member")
        namespace[name] = _make_property(name, spec)
    bases = (TypedDescriptor,) if dtype not in MIXINS else (MIXINS[dtype], TypedDescriptor)
    cls = type(class_name(dtype), bases, namespace)
    _CLASSES[dtype] = cls
    register_descriptor_class(dtype, cls)
    globals()[cls.__name__] = cls
    return cls


def _make_all():
    for dtype in _schema.DESCRIPTORS:
        _make_class(dtype)


def descriptor_class(descriptor_type):
    """The typed class for any CUDNN_BACKEND_*_DESCRIPTOR (enum member, int or C name)."""
    if isinstance(descriptor_type, str):
        descriptor_type = DescriptorType[descriptor_type]
    return _CLASSES[DescriptorType(descriptor_type)]


def all_classes() -> dict:
    """{DescriptorType: class} for all descriptor types of the schema."""
    return dict(_CLASSES)


_make_all()
