"""The operation graph as the evaluator reads it, from the finalized descriptors themselves: every tensor (UID,
dims, strides, data type, virtual, by-value and a by-value scalar's recorded value) and every operation (its tensor
slots by keyword and its attributes, its child descriptors' attributes), producers first."""
from __future__ import annotations

from dataclasses import dataclass, field

from cudnn_backend._bindings.enums import AttributeName, DescriptorType
from cudnn_backend.core import schema as _schema
from cudnn_backend.core._descriptor import Descriptor
from cudnn_backend.core.families._reference import as_tuple
from cudnn_backend.errors import GraphError
from cudnn_backend.typed.tensors import TensorSpec
from cudnn_backend.typed.introspection import (
    keyword_of,
    operation_label,
    operations_of,
    signature_of,
    tensor_slots,
    topological_order,
)

__all__ = ["Node", "ReadGraph", "read_graph", "as_tuple"]

_GRAPH = DescriptorType.CUDNN_BACKEND_OPERATIONGRAPH_DESCRIPTOR
_KEYWORDS: dict = {}  # descriptor type -> {keyword: AttributeName}


def _keywords(descriptor_type) -> dict:
    table = _KEYWORDS.get(int(descriptor_type))
    if table is None:
        spec = _schema.DESCRIPTORS[DescriptorType(int(descriptor_type))]
        table = _KEYWORDS[int(descriptor_type)] = {keyword_of(a): AttributeName(a) for a in spec.attributes}
    return table


def attribute(descriptor, keyword, default=None):
    """The value set for a descriptor's attribute named by its keyword (``default`` when unset)."""
    value = descriptor.values.get(_keywords(descriptor.descriptor_type)[keyword])
    return default if value is None else value


class Node:
    """One operation: its descriptor, type, label, and tensor slots ``(keyword, uid, is_output)``."""

    def __init__(self, op, index):
        self.op = op
        self.index = index
        self.kind = DescriptorType(int(op.descriptor_type))
        self.label = operation_label(op)
        self.slots = [(kw, int(signature_of(t).uid), bool(out)) for kw, t, out in tensor_slots(op)]

    def uid(self, keyword):
        """The UID in slot ``keyword`` (None when unset)."""
        return next((u for kw, u, _ in self.slots if kw == keyword), None)

    def uids(self, keyword) -> list:
        """Every UID in slot ``keyword`` (a list attribute, as CONCAT's inputs)."""
        return [u for kw, u, _ in self.slots if kw == keyword]

    @property
    def inputs(self) -> list:
        return list(dict.fromkeys(u for _, u, out in self.slots if not out))

    @property
    def outputs(self) -> list:
        return list(dict.fromkeys(u for _, u, out in self.slots if out))

    def attr(self, keyword, default=None):
        """An attribute of the operation by keyword (``alpha``, ``conv_desc``, ...)."""
        return attribute(self.op, keyword, default)

    def child(self, keyword, child_keyword, default=None):
        """An attribute of the child descriptor in ``keyword`` (``conv_desc`` -> ``pre_paddings``)."""
        child = self.attr(keyword)
        if not isinstance(child, Descriptor):
            return default
        return attribute(child, child_keyword, default)

    def __repr__(self):
        return f"<{self.label} #{self.index}>"


@dataclass
class ReadGraph:
    """Operations producers first, tensors by UID, which operation writes each UID, and the ragged tensors' offset
    tensors by UID."""

    nodes: list
    tensors: dict
    producer: dict
    ragged: dict = field(default_factory=dict)

    @property
    def outputs(self) -> list:
        """UIDs of the real (non-virtual) tensors the graph writes, in UID order."""
        return sorted(u for u in self.producer if not self.tensors[u].virtual)

    @property
    def inputs(self) -> list:
        """UIDs of the tensors the graph reads and does not write, in UID order."""
        read = {u for n in self.nodes for u in n.inputs}
        return sorted(u for u in read if u not in self.producer)


def _operations(op_graph) -> list:
    """The operations of a finalized OperationGraph, or of a ``Graph`` / ``Pattern`` as it stands: one not built
    yet is read without being built here (finalizing it without the handle its plans will run with would leave
    it unusable for those plans on a GPU)."""
    if not isinstance(op_graph, Descriptor):
        built = getattr(op_graph, "op_graph", None)
        if isinstance(built, Descriptor):
            op_graph = built
        elif isinstance(getattr(op_graph, "operations", None), (list, tuple)):
            return list(op_graph.operations)
        else:
            raise TypeError(f"op_graph: expected a finalized OperationGraph descriptor, a Graph or a Pattern, not "
                            f"{type(op_graph).__name__}")
    if op_graph.closed:
        raise ValueError("op_graph: the operation graph descriptor is closed")
    if int(op_graph.descriptor_type) != int(_GRAPH):
        raise TypeError(f"op_graph: expected an OperationGraph, not a {op_graph.descriptor_type.name}")
    if not op_graph.finalized:
        raise ValueError("op_graph: the operation graph is not finalized; finalize it first")
    return list(operations_of(op_graph))


def read_graph(op_graph) -> ReadGraph:
    """The graph's operations (producers first) and tensors, read from its descriptors."""
    ops = [op for op in _operations(op_graph) if isinstance(op, Descriptor)]
    if not ops:
        raise GraphError("op_graph: its operations are unknown on the Python side (a graph read back from cuDNN, "
                         "e.g. from a loaded plan): the reference evaluator reads the operations it was built from")
    nodes = [Node(op, i) for i, op in enumerate(topological_order(ops))]
    tensors, producer, ragged = {}, {}, {}
    for node in nodes:
        for kw, t, out in tensor_slots(node.op):
            if t.closed:  # (cuDNN holds its own copy: the graph still plans, but its dims are gone here)
                raise GraphError(f"{node.label} (operation {node.index}): its {kw} tensor "
                                 f"{getattr(t, 'name', None) or ''} was closed; keep the graph's tensors open to "
                                 "evaluate it".replace("  ", " "))
            spec = TensorSpec.from_descriptor(t)
            uid = spec.uid
            if uid not in tensors:
                tensors[uid] = spec
                offsets = t.values.get(AttributeName.CUDNN_ATTR_TENSOR_RAGGED_OFFSET_DESC)
                if isinstance(offsets, Descriptor):
                    ragged[uid] = TensorSpec.from_descriptor(offsets)
            if out:
                producer.setdefault(uid, node)
    return ReadGraph(nodes, tensors, producer, ragged)
