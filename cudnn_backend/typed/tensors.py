"""One description of a tensor: ``TensorSpec`` (UID, name, dims, strides, data type, virtual, by-value, byte
alignment, vectorization, reordering, a by-value scalar's value), read from a tensor descriptor (typed or
generic, set here or read back from cuDNN) or from a plan's JSON, shown as one line or as a table row.

Every reader of a tensor reads this: variant packs (``runtime._packing``), the explorer's inputs
(``tune.inputs``), graph tables (``tune.graphs``), the reference evaluator (``reference._graph``) and messages.
``TensorSignature`` (compiled, ``typed._signature``) is its compact form, what graph building compares (typed
tensors keep it once finalized): ``signature_of`` reads it from any tensor descriptor, and ``TensorSignature.of``
is the one rule that turns attribute values, as set or as read back, into one. Names and data types print
through ``core.names`` (``default_tensor_name``, ``data_type_name``).
"""
from __future__ import annotations

import dataclasses
import math
from dataclasses import dataclass

from cudnn_backend._bindings.enums import AttributeName as A
from cudnn_backend._bindings.enums import AttributeType, DataType, TensorReordering
from cudnn_backend.core.names import DATA_TYPE_PREFIX, data_type_name, default_tensor_name
from cudnn_backend.typed import arrays
from cudnn_backend.typed._signature import TensorSignature

__all__ = ["TensorSpec", "TensorSignature", "data_type_name", "DATA_TYPE_PREFIX", "signature_of", "read_signature",
           "describe_tensor_line"]

_NO_REORDERING = TensorReordering.CUDNN_TENSOR_REORDERING_NONE


def read_signature(t) -> TensorSignature:
    """The signature of a tensor read back from cuDNN (one cuDNN made)."""
    def one(attr, atype):
        try:
            values = t.get(attr, atype)
        except Exception:  # noqa: BLE001 - an attribute cuDNN does not report: unknown
            return None
        return values[0] if values else None

    def many(attr):
        try:
            return tuple(int(x) for x in t.get(attr, AttributeType.CUDNN_TYPE_INT64))
        except Exception:  # noqa: BLE001
            return None

    uid, dt = one(A.CUDNN_ATTR_TENSOR_UNIQUE_ID, AttributeType.CUDNN_TYPE_INT64), \
        one(A.CUDNN_ATTR_TENSOR_DATA_TYPE, AttributeType.CUDNN_TYPE_DATA_TYPE)
    return TensorSignature.of(None if uid is None else int(uid), many(A.CUDNN_ATTR_TENSOR_DIMENSIONS),
                              many(A.CUDNN_ATTR_TENSOR_STRIDES), None if dt is None else int(dt),
                              one(A.CUDNN_ATTR_TENSOR_IS_VIRTUAL, AttributeType.CUDNN_TYPE_BOOLEAN),
                              one(A.CUDNN_ATTR_TENSOR_IS_BY_VALUE, AttributeType.CUDNN_TYPE_BOOLEAN))


def signature_of(t) -> TensorSignature:
    """The signature of any tensor descriptor, typed (kept once finalized) or generic."""
    sig = getattr(t, "signature", None)
    if sig is not None:
        return sig()
    values = t.values
    if t.finalized and A.CUDNN_ATTR_TENSOR_UNIQUE_ID not in values:
        return read_signature(t)
    return TensorSignature.of(values.get(A.CUDNN_ATTR_TENSOR_UNIQUE_ID), values.get(A.CUDNN_ATTR_TENSOR_DIMENSIONS),
                              values.get(A.CUDNN_ATTR_TENSOR_STRIDES), values.get(A.CUDNN_ATTR_TENSOR_DATA_TYPE),
                              values.get(A.CUDNN_ATTR_TENSOR_IS_VIRTUAL), values.get(A.CUDNN_ATTR_TENSOR_IS_BY_VALUE))


def _data_type(value) -> DataType | None:
    if value is None:
        return None
    try:
        return DataType[value] if isinstance(value, str) else DataType(int(value))
    except (KeyError, TypeError, ValueError):
        return None


def _reordering(value) -> TensorReordering | None:
    if value is None:
        return None
    try:
        return TensorReordering[value] if isinstance(value, str) else TensorReordering(int(value))
    except (KeyError, TypeError, ValueError):
        return None


def describe_tensor_line(name, uid, dims, strides, data_type, virtual, by_value) -> str:
    """One line: ``name (uid U) [dims] strides [strides] type[ virtual| by-value]`` (``name``: the tensor's, else
    its default name)."""
    kind = " virtual" if virtual else (" by-value" if by_value else "")
    label = name if name else default_tensor_name(uid, virtual)
    return f"{label} (uid {uid}) {list(dims)} strides {list(strides)} {data_type_name(data_type)}{kind}"


@dataclass(frozen=True)
class TensorSpec:
    """One tensor of a graph: what packs check buffers against, what tables show, what references compute on."""

    uid: int
    name: str
    dims: tuple
    strides: tuple
    data_type: DataType | None
    virtual: bool = False
    by_value: bool = False
    alignment: int | None = None  # CUDNN_ATTR_TENSOR_BYTE_ALIGNMENT, when known
    vector_count: int = 1  # CUDNN_ATTR_TENSOR_VECTOR_COUNT
    vectorized_dimension: int = -1  # CUDNN_ATTR_TENSOR_VECTORIZED_DIMENSION (-1: none, cuDNN's default)
    reordering: TensorReordering | None = _NO_REORDERING  # CUDNN_ATTR_TENSOR_REORDERING_MODE (None: unknown)
    value: object = None  # a by-value tensor's value when the graph gave it one (Graph.scalar, patterns)

    @property
    def tiled(self) -> bool:
        """Stored in one of cuDNN's tiled layouts (INT8x32, F16x16, F8_128x4): its strides do not say where each
        element lies, so its memory cannot be filled or read element by element."""
        return self.reordering is not None and self.reordering != _NO_REORDERING

    # --- readers ------------------------------------------------------------------------------------------
    @classmethod
    def from_descriptor(cls, tensor) -> TensorSpec:
        """The spec of a tensor descriptor (typed ``Tensor`` or generic ``Descriptor``; one cuDNN made is read
        back from cuDNN); without a name, its default name (``core.names.default_tensor_name``)."""
        uid, dims, strides, dt, virtual, by_value = signature_of(tensor)
        values = tensor.values
        align = values.get(A.CUDNN_ATTR_TENSOR_BYTE_ALIGNMENT)
        vc = values.get(A.CUDNN_ATTR_TENSOR_VECTOR_COUNT, 1)
        vd = values.get(A.CUDNN_ATTR_TENSOR_VECTORIZED_DIMENSION)
        name = getattr(tensor, "name", None)
        value = getattr(tensor, "scalar_value", None) if by_value else None
        return cls(int(uid), name if isinstance(name, str) else default_tensor_name(uid, virtual),
                   tuple(int(d) for d in dims),
                   tuple(int(s) for s in strides), _data_type(dt), bool(virtual), bool(by_value),
                   int(align) if align else None, int(vc) if vc else 1, -1 if vd is None else int(vd),
                   _reordering(values.get(A.CUDNN_ATTR_TENSOR_REORDERING_MODE, _NO_REORDERING)), value)

    @classmethod
    def from_json(cls, entry: dict) -> TensorSpec:
        """The spec of one entry of a plan JSON's ``operationGraph.tensors`` (already checked by
        ``core.json_checks``), named by its UID (cuDNN's ``name`` member) as ``core.names.default_tensor_name``
        does."""
        uid = int(entry["name"])
        vd = entry.get("vectDim")
        virtual = bool(entry.get("isVirtual", False))
        return cls(uid, default_tensor_name(uid, virtual), tuple(int(x) for x in entry.get("dim", ())),
                   tuple(int(x) for x in entry.get("stride", ())), _data_type(entry.get("dataType")),
                   virtual, bool(entry.get("isByValue", False)),
                   int(entry["ptrAlignment"]) if entry.get("ptrAlignment") else None,
                   int(entry.get("vectCount", 1) or 1), -1 if vd is None else int(vd),
                   _reordering(entry.get("reordering", _NO_REORDERING.name)))

    def to_json(self) -> dict:
        """The spec as an entry of a plan JSON's ``operationGraph.tensors`` (cuDNN's member names; the name is the
        UID; an unknown data type or reordering is left out)."""
        out = {"name": str(self.uid), "dim": list(self.dims), "stride": list(self.strides),
               "isVirtual": self.virtual, "isByValue": self.by_value, "vectCount": self.vector_count,
               "vectDim": self.vectorized_dimension}
        if self.data_type is not None:
            out["dataType"] = self.data_type.name
        if self.alignment:
            out["ptrAlignment"] = self.alignment
        if self.reordering is not None:
            out["reordering"] = self.reordering.name
        return out

    # --- views ----------------------------------------------------------------------------------------------
    @property
    def signature(self) -> TensorSignature:
        """The compact form ``signature_of`` gives."""
        return TensorSignature(self.uid, self.dims, self.strides, self.data_type, self.virtual, self.by_value)

    def with_shape(self, dims, strides) -> TensorSpec:
        """The same tensor with other dims and strides (a variant pack's shape override)."""
        return dataclasses.replace(self, dims=tuple(dims), strides=tuple(strides))

    @property
    def numel(self) -> int:
        """Elements of the dims."""
        return math.prod(self.dims)

    @property
    def rank(self) -> int:
        return len(self.dims)

    @property
    def itemsize(self) -> float | None:
        """Bytes per element of the data type (0.5 for 4-bit types); None if unknown."""
        bits = arrays.DATA_TYPE_BITS.get(self.data_type)
        return None if bits is None else bits / 8

    @property
    def nbytes(self) -> int | None:
        """Bytes the tensor spans: ``1 + sum((dim - 1) * abs(stride))`` elements; None if unknown."""
        if self.vector_count not in (None, 1) or self.data_type is None:
            return None
        return arrays.span_bytes(self.dims, self.strides, self.data_type)

    @property
    def kind(self) -> str:
        """``virtual``, ``scalar`` (by value) or ``tensor``."""
        return "virtual" if self.virtual else ("scalar" if self.by_value else "tensor")

    def describe(self) -> str:
        """One line: name, uid, dims, strides, data type and kind (virtual, by-value), for messages."""
        return describe_tensor_line(self.name, self.uid, self.dims, self.strides, self.data_type, self.virtual,
                                    self.by_value)

    def row(self, role: str | None = None) -> dict:
        """The spec as a table row: name, uid, dims, strides, short data type, role (``role`` when given for a
        real tensor, e.g. input/output; else ``kind``)."""
        kind = self.kind
        return {"name": self.name, "uid": self.uid, "dims": list(self.dims), "strides": list(self.strides),
                "data_type": data_type_name(self.data_type), "role": role if role and kind == "tensor" else kind}
