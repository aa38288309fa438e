"""Descriptors as data: the tensors of an operation, operation order, tables, Graphviz DOT, ``to_dict``.

Works on typed and generic descriptors alike: what was set is read from the descriptor
(``Descriptor.values``) and which tensor attributes are outputs comes from the generated schema.
"""
from __future__ import annotations

import hashlib
import json
import numbers
import weakref

from cudnn_backend._bindings import enums as _enums
from cudnn_backend._bindings.enums import (
    AttributeName,
    AttributeType,
    DescriptorType,
)
from cudnn_backend.core import schema as _schema
from cudnn_backend.core._descriptor import Descriptor, tensor_slots_of
from cudnn_backend.core.names import default_tensor_name, operation_label
from cudnn_backend.errors import GraphError
from cudnn_backend.typed.tensors import describe_tensor_line, read_signature, signature_of

__all__ = [
    "tensor_slots", "signature_of", "read_signature", "describe_signature", "describe_tensor", "tensor_name",
    "operation_label", "topological_order", "operations_table", "operations_dot", "to_dict", "short",
    "keyword_of", "graph_tensors", "canonical_graph", "graph_fingerprint", "operations_of", "io_uids",
    "part_operations", "io_tensor_slots", "with_ragged_offsets",
]

A = AttributeName
T = DescriptorType
_TENSOR = int(T.CUDNN_BACKEND_TENSOR_DESCRIPTOR)
_KEYWORD: dict[int, str] = {}


def keyword_of(attribute) -> str:
    """CUDNN_ATTR_TENSOR_UNIQUE_ID -> unique_id: the attribute's typed keyword."""
    a = int(attribute)
    kw = _KEYWORD.get(a)
    if kw is None:
        spec = _schema.ATTRIBUTES[AttributeName(a)]
        kw = _KEYWORD[a] = spec.name.name[len(_schema.DESCRIPTORS[spec.descriptor].attribute_prefix):].lower()
    return kw


def tensor_slots(op) -> list:
    """[(keyword, tensor descriptor, is_output)] of an operation's tensor attributes that were set
    (``core._descriptor.tensor_slots_of``, by keyword)."""
    if not isinstance(op, Descriptor):
        raise TypeError(f"expected an operation descriptor, not {type(op).__name__}")
    return [(keyword_of(attr), t, is_out) for attr, t, is_out in tensor_slots_of(op)]


def tensor_name(t) -> str:
    """A tensor's display name: its ``name``, else its default name (``core.names.default_tensor_name``)."""
    name = getattr(t, "name", None)
    if isinstance(name, str):
        return name
    sig = signature_of(t)
    return default_tensor_name(sig.uid, sig.virtual)


def describe_signature(name, sig) -> str:
    """One line from a name and a ``TensorSignature``."""
    return describe_tensor_line(name, *sig)


def describe_tensor(t) -> str:
    """One line describing a tensor descriptor (typed or generic): name, uid, dims, strides, type."""
    return describe_signature(tensor_name(t), signature_of(t))


def operations_of(op_graph) -> tuple:
    """The operations of a finalized operation graph, typed or generic (a list of operations is its own);
    ``()`` for anything else."""
    if isinstance(op_graph, (list, tuple)):
        return tuple(op_graph)
    ops = getattr(op_graph, "operations", None)
    if ops is None:
        if not isinstance(op_graph, Descriptor):
            return ()
        ops = op_graph.values.get(AttributeName.CUDNN_ATTR_OPERATIONGRAPH_OPS, ())
    return tuple(ops) if isinstance(ops, (tuple, list)) else (ops,)


def topological_order(operations) -> list:
    """Operations ordered producers first (Kahn's algorithm over tensor UIDs); GraphError on a cycle."""
    operations = list(operations)
    slots = [[(signature_of(t).uid, out) for _, t, out in tensor_slots(op)] for op in operations]
    producers = {}
    for i, s in enumerate(slots):
        for uid, out in s:
            if out:
                producers.setdefault(uid, i)
    deps = [set() for _ in operations]
    for i, s in enumerate(slots):
        for uid, out in s:
            p = producers.get(uid)
            if not out and p is not None and p != i:
                deps[i].add(p)
    order, ready, placed = [], [i for i, d in enumerate(deps) if not d], set()
    while ready:
        i = ready.pop(0)
        order.append(i)
        placed.add(i)
        for j, d in enumerate(deps):
            if i in d:
                d.discard(i)
                if not d and j not in placed and j not in ready:
                    ready.append(j)
    if len(order) != len(operations):
        raise GraphError("the operations form a cycle (an input depends on its own output)")
    return [operations[i] for i in order]


def part_operations(op) -> list:
    """The operations set on ``op`` as parts of it (an SDPA's softmax operation, the operations of a sub-graph),
    depth first: their real tensors are the graph's too (bound in variant packs, listed in plan JSON)."""
    out = []
    for value in op.values.values():
        for d in (value if isinstance(value, tuple) else (value,)):
            if not isinstance(d, Descriptor) or d.closed or d is op:
                continue
            name = DescriptorType(int(d.descriptor_type)).name
            if name == "CUDNN_BACKEND_OPERATIONGRAPH_DESCRIPTOR":
                for part in operations_of(d):
                    out += [part, *part_operations(part)]
            elif name.startswith("CUDNN_BACKEND_OPERATION_"):
                out += [d, *part_operations(d)]
    return out


def io_tensor_slots(op) -> list:
    """``tensor_slots`` of ``op`` and of its ``part_operations``, and the ragged-offset tensors of their tensors
    (read: cuDNN reads each sequence's offset from them): every tensor a graph holding ``op`` reads or writes."""
    return with_ragged_offsets([slot for o in (op, *part_operations(op)) for slot in tensor_slots(o)])


def with_ragged_offsets(slots) -> list:
    """``slots`` (``tensor_slots``) and after them the ragged-offset tensor of each of their tensors, as read (cuDNN
    reads each sequence's offset from it): the tensors an operation's buffers are bound for."""
    slots = list(slots)
    for _, t, _ in list(slots):
        ragged = t.value_of(A.CUDNN_ATTR_TENSOR_RAGGED_OFFSET_DESC) if isinstance(t, Descriptor) else None
        if isinstance(ragged, Descriptor) and not ragged.closed:
            slots.append((keyword_of(A.CUDNN_ATTR_TENSOR_RAGGED_OFFSET_DESC), ragged, False))
    return slots


def io_uids(op_graph) -> tuple[set, set]:
    """(UIDs read and never written, UIDs written) among the real (not virtual) tensors of a graph's operations and
    their parts: written where an operation's output slot holds it (the schema's roles, ``tensor_slots``)."""
    read, written = set(), set()
    for op in operations_of(op_graph):
        for _, t, out in io_tensor_slots(op):
            sig = signature_of(t)
            if sig.virtual:
                continue
            (written if out else read).add(sig.uid)
    return read - written, written


def graph_tensors(operations) -> dict:
    """{uid: tensor descriptor} of every tensor the operations read or write (first seen per UID)."""
    out = {}
    for op in operations:
        for _, t, _ in tensor_slots(op):
            out.setdefault(signature_of(t).uid, t)
    return out


def operations_table(operations) -> str:
    """A text table of the operations in topological order with their input and output tensors."""
    rows = [("#", "operation", "inputs", "outputs")]
    for i, op in enumerate(topological_order(operations)):
        slots = tensor_slots(op)
        ins = "; ".join(f"{n}={describe_tensor(t)}" for n, t, out in slots if not out)
        outs = "; ".join(f"{n}={describe_tensor(t)}" for n, t, out in slots if out)
        rows.append((str(i), operation_label(op), ins, outs))
    widths = [max(len(r[c]) for r in rows) for c in range(3)]
    lines = ["  ".join(r[c].ljust(widths[c]) for c in range(3)) + "  " + r[3] for r in rows]
    lines.insert(1, "-" * max(len(x) for x in lines))
    return "\n".join(lines)


def _dot_quote(text: str) -> str:
    return '"' + text.replace("\\", "\\\\").replace('"', '\\"').replace("\n", "\\n") + '"'


def operations_dot(operations, name="cudnn_graph") -> str:
    """Graphviz DOT of the dataflow: tensors as ellipses (virtual ones dashed), operations as boxes."""
    lines = [f"digraph {_dot_quote(str(name))} {{", "  rankdir=LR;", '  node [fontname="Helvetica"];']
    ops = topological_order(operations)
    tensors = {}
    for op in ops:
        for _, t, _ in tensor_slots(op):
            tensors.setdefault(signature_of(t).uid, t)
    for uid, t in tensors.items():
        sig = signature_of(t)
        style = "dashed" if sig.virtual else "solid"
        label = f"{tensor_name(t)}\nuid {uid} {'x'.join(map(str, sig.dims))}"
        lines.append(f"  t{uid} [shape=ellipse, style={style}, label={_dot_quote(label)}];")
    for i, op in enumerate(ops):
        lines.append(f"  op{i} [shape=box, style=filled, fillcolor=lightblue, label={_dot_quote(operation_label(op))}];")
        for slot, t, out in tensor_slots(op):
            uid = signature_of(t).uid
            edge = f"op{i} -> t{uid}" if out else f"t{uid} -> op{i}"
            lines.append(f"  {edge} [label={_dot_quote(slot)}];")
    lines.append("}")
    return "\n".join(lines) + "\n"


def short(value) -> str:
    """A value for a repr: descriptors by class, enum members by name, long things cut."""
    if isinstance(value, Descriptor):
        return f"<{type(value).__name__}>"
    if isinstance(value, (list, tuple)) and value and isinstance(value[0], Descriptor):
        return "[" + ", ".join(short(v) for v in value) + "]"
    if hasattr(value, "name") and isinstance(value, int):
        return value.name
    text = repr(value)
    return text if len(text) <= 60 else text[:57] + "..."


def _plain(value):
    if isinstance(value, Descriptor):
        return to_dict(value)
    if isinstance(value, (list, tuple)):
        return [_plain(v) for v in value]
    if isinstance(value, bool) or value is None or isinstance(value, str):
        return value
    if hasattr(value, "name") and isinstance(value, int):  # IntEnum member
        return value.name
    if isinstance(value, numbers.Integral):
        return int(value)
    if isinstance(value, numbers.Real):
        return float(value)
    return value


def to_dict(descriptor) -> dict:
    """A descriptor and its children as plain data: ``{"descriptor_type", "finalized", "attributes"}``
    with keywords and enum values by C name (handles, live objects, are left out). A closed descriptor is refused:
    what was set on it is gone with it."""
    if descriptor.closed:
        raise ValueError(f"to_dict: the {descriptor.descriptor_type.name} is closed")
    out = {}
    keywords = getattr(type(descriptor), "KEYWORDS", None)
    for attr, value in descriptor.values.items():
        kw = keyword_of(attr)
        if descriptor.attribute_type_of(attr) == AttributeType.CUDNN_TYPE_HANDLE:
            continue  # a live handle is not data
        shown = getattr(descriptor, kw) if keywords is not None else value
        out[kw] = _plain(shown)
    return {"descriptor_type": descriptor.descriptor_type.name, "finalized": descriptor.finalized, "attributes": out}


def _canonical(descriptor, memo) -> dict:
    """A descriptor and its children as canonical plain data (for fingerprints): every attribute set, by
    C name, enum values by C name, child descriptors inline, handles and host pointers left out."""
    key = id(descriptor)
    if key in memo:
        return memo[key]
    out = {}
    for attr, value in sorted(descriptor.values.items(), key=lambda kv: int(kv[0])):
        atype = descriptor.attribute_type_of(attr)
        if atype in (AttributeType.CUDNN_TYPE_HANDLE, AttributeType.CUDNN_TYPE_VOID_PTR):
            continue
        items = value if isinstance(value, tuple) else (value,)
        shown = []
        for v in items:
            if isinstance(v, Descriptor):
                shown.append(_canonical(v, memo))
            elif isinstance(v, tuple):
                shown.append([int(x) for x in v])
            elif isinstance(v, bool) or v is None:
                shown.append(v)
            elif isinstance(v, numbers.Integral):
                shown.append(_enum_name(atype, int(v)))
            elif isinstance(v, numbers.Real):
                shown.append(repr(float(v)))
            else:
                shown.append(str(v))
        out[AttributeName(attr).name] = shown
    if int(descriptor.descriptor_type) == _TENSOR:  # unset flags are cuDNN's default, false: the same tensor
        for flag in ("CUDNN_ATTR_TENSOR_IS_VIRTUAL", "CUDNN_ATTR_TENSOR_IS_BY_VALUE"):
            out.setdefault(flag, [False])
        out = dict(sorted(out.items()))
    result = {"type": descriptor.descriptor_type.name, "attributes": out}
    memo[key] = result
    return result


def _enum_name(atype, value):
    enum_name = _ENUM_OF_TYPE.get(atype)
    if enum_name is None:
        return value
    try:
        return enum_name(value).name
    except ValueError:
        return value


def _enum_classes():
    out = {}
    for t in AttributeType:
        name = _enums.ATTRIBUTE_TYPE_ENUM.get(t.name)
        cls = getattr(_enums, name, None) if name else None
        if isinstance(cls, type) and issubclass(cls, int):
            out[t] = cls
    return out


_ENUM_OF_TYPE = _enum_classes()


def canonical_graph(operation_graph) -> dict:
    """The operation graph as canonical plain data: its operations in topological order, each with every
    attribute set (tensors: dims, strides, data type, UID, virtual, by-value, ...), handles left out."""
    memo: dict = {}
    ops = topological_order(operation_graph.operations) if hasattr(operation_graph, "operations") else []
    if not ops:
        ops = list(operation_graph.values.get(AttributeName.CUDNN_ATTR_OPERATIONGRAPH_OPS, ()))
    if not ops:
        raise GraphError("this operation graph's operations are unknown on the Python side (a graph read back "
                         "from cuDNN, e.g. from a loaded plan): it has no canonical form or fingerprint")
    out = {"operations": [_canonical(op, memo) for op in ops]}
    # the graph's own switches that change the plans cuDNN makes for it (a plan of a graph built with override shapes
    # is refused for the same graph built without): only where set, so that other graphs keep their fingerprints
    values = getattr(operation_graph, "values", None)
    switches = {}
    for attr, label in _GRAPH_SWITCHES:
        value = values.get(attr) if isinstance(values, dict) else None
        if isinstance(value, tuple):
            value = value[0] if value else None
        if value:
            switches[label] = True
    if switches:
        out["graph"] = switches
    return out


_GRAPH_SWITCHES = tuple((AttributeName[name], label) for name, label in (
    ("CUDNN_ATTR_OPERATIONGRAPH_IS_DYNAMIC_SHAPE_ENABLED", "dynamic_shape"),
    ("CUDNN_ATTR_OPERATIONGRAPH_IS_OVERRIDE_SHAPE_ENABLED", "override_shape")) if name in AttributeName.__members__)


def graph_fingerprint(operation_graph) -> str:
    """SHA-256 of ``canonical_graph``: equal for graphs that are the same computation on the same tensors,
    however they were built (generic, typed or Graph); kept on the finalized graph (it cannot change)."""
    try:
        return _FINGERPRINTS[operation_graph]
    except (KeyError, TypeError):
        pass
    text = json.dumps(canonical_graph(operation_graph), sort_keys=True, separators=(",", ":"))
    digest = hashlib.sha256(text.encode()).hexdigest()
    if operation_graph.finalized:
        _FINGERPRINTS[operation_graph] = digest
    return digest


_FINGERPRINTS: weakref.WeakKeyDictionary = weakref.WeakKeyDictionary()
