"""The graph checks: what cuDNN would refuse, misread, or run out of bounds, across operations.

Per-operation shape rules (statistics, pointwise outputs, ...) run in every API at the operation's
finalize (``core.op_checks``); these are the checks that need the whole graph:

* no operation writes a UID it reads (cuDNN 9.28 refuses it even alone; 9.19 finalizes it alone and plans a
  matmul writing its own input);
* one producer per UID, and one tensor per UID (a second tensor with the same UID must agree);
* a consumer reads a UID with the shape, strides and data type its producer writes;
* virtual tensors are produced, and consumed (or marked ``allow_unconsumed``);
* no real output's strides give two of its elements one address (cuDNN refuses that for convolutions only, and
  plans a matmul or an attention writing such a tensor);
* no cycle.
"""
from __future__ import annotations

from cudnn_backend._bindings.enums import AttributeName
from cudnn_backend.core import names as _names
from cudnn_backend.core.versions import format_version, loaded_version
from cudnn_backend.core.families._build import elements_alias
from cudnn_backend.errors import GraphError
from cudnn_backend.typed.introspection import (
    describe_signature,
    describe_tensor,
    operation_label,
    signature_of,
    tensor_name,
    tensor_slots,
    topological_order,
    with_ragged_offsets,
)

__all__ = ["check_operations", "explain_graph_refusal", "operation_slots", "reads_its_output", "written_twice", "second_producer",
           "closes_a_cycle", "foreign_tensor", "uid_taken", "aliased_output"]

# where a refusal says what to do instead: the builder's methods take the output as ``output=``
_OWN_OUTPUT = "give the output (output=) a tensor of its own"


def operation_slots(op) -> list:
    """[(keyword, tensor, signature, is_output)] of an operation's tensors, their ragged-offset tensors among them."""
    return [(kw, t, signature_of(t), out) for kw, t, out in with_ragged_offsets(tensor_slots(op))]


def reads_its_output(op, out_keyword, in_keyword, t, uid) -> str:
    """The refusal of an operation whose output ``out_keyword`` is the tensor it reads as ``in_keyword``."""
    return _names.reads_its_output(operation_label(op), tensor_name(t), uid, out_keyword, in_keyword)


def written_twice(op, first_keyword, out_keyword, t, uid) -> str:
    """The refusal of an operation writing one tensor as two of its outputs (``first_keyword``, ``out_keyword``)."""
    return _names.written_twice(operation_label(op), tensor_name(t), uid, first_keyword, out_keyword)


def aliased_output(op, out_keyword, t, sig):
    """None, or the refusal of a real output (``out_keyword``) whose strides give two elements one address: the
    operation would write them over each other."""
    if sig.virtual or not elements_alias(sig.dims, sig.strides):
        return None
    return (f"{operation_label(op)}: its output {out_keyword}, {describe_signature(tensor_name(t), sig)}, has strides "
            "that give two elements one address (a stride 0, or axes stepping inside each other): each element it "
            "writes needs memory of its own; give the output packed strides")


def second_producer(op, out_keyword, t, uid, first) -> str:
    """The refusal of an operation writing (as ``out_keyword``) a UID that operation ``first`` writes already."""
    return (f"{operation_label(op)}: its output {out_keyword}, {tensor_name(t)} (uid {uid}), is written by "
            f"{operation_label(first)} already: a tensor has one producer; {_OWN_OUTPUT}")


def closes_a_cycle(op, out_keyword, t, uid, in_keyword, source) -> str:
    """The refusal of an operation whose output is a tensor its input ``in_keyword`` (``source``) is computed from."""
    return (f"{operation_label(op)}: its output {out_keyword}, {tensor_name(t)} (uid {uid}), is what its input "
            f"{in_keyword} ({tensor_name(source)}) is computed from: the operations would form a cycle; {_OWN_OUTPUT}")


def uid_taken(what, t, uid, other) -> str:
    """The refusal of a tensor made by hand (parameter ``what``) whose UID this graph gives another tensor (``other``;
    None: one it reserved)."""
    given = describe_tensor(t)
    if other is None:
        holder = "to another tensor"
    elif describe_tensor(other) == given:  # e.g. a tensor of a Graph gone, made like one of this graph's
        holder = "to another tensor object, the graph's own, which reads the same"
    else:
        holder = f"to another tensor, {describe_tensor(other)}"
    return (f"{what}: {given} has a UID this graph gives {holder}: UIDs are unique in a graph; give "
            "the tensor another uid, or make it with this graph (Graph.tensor), or pass the graph's own tensor")


def foreign_tensor(what, t, uid, owner_name, graph_name) -> str:
    """The refusal of a tensor (parameter ``what``) that another Graph, ``owner_name``, made or took."""
    return (f"{what}: {tensor_name(t)} (uid {uid}) is a tensor of another Graph, {owner_name!r}, not of this one, "
            f"{graph_name!r}: UIDs are numbered per graph, so an operation takes only its own graph's tensors; make "
            "the tensor with this graph")


def check_operations(operations, slots=None):
    """Raise GraphError, with the tensors named, for the first cross-operation problem found.

    ``slots`` (optional) is ``[operation_slots(op) for op in operations]`` already computed.
    """
    operations = list(operations)
    if not operations:
        raise GraphError("an operation graph needs at least one operation")
    if slots is None:
        slots = [operation_slots(op) for op in operations]
    producer = {}  # uid -> (operation, tensor, signature, output keyword)
    for op, op_slots in zip(operations, slots):
        ins = {}
        for kw, t, sig, out in op_slots:
            if not out:
                ins.setdefault(sig.uid, kw)
        for kw, t, sig, out in op_slots:
            uid = sig.uid
            if not out:
                continue
            if uid in ins:
                raise GraphError(reads_its_output(op, kw, ins[uid], t, uid))
            aliased = aliased_output(op, kw, t, sig)
            if aliased is not None:
                raise GraphError(aliased)
            if uid in producer:
                first_op, _, _, first_kw = producer[uid]
                raise GraphError(written_twice(op, first_kw, kw, t, uid) if first_op is op else
                                 second_producer(op, kw, t, uid, first_op))
            producer[uid] = (op, t, sig, kw)
    seen = {}  # uid -> (tensor, signature) of the first non-produced occurrence
    consumed = set()
    for op, op_slots in zip(operations, slots):
        for kw, t, sig, out in op_slots:
            uid = sig.uid
            if not out:
                consumed.add(uid)
            p = producer.get(uid)
            if p is not None:
                if not out and not p[2].same_tensor(sig):
                    raise GraphError(f"{operation_label(op)}.{kw} reads UID {uid} as "
                                     f"{describe_signature(tensor_name(t), sig)} but {operation_label(p[0])} produces "
                                     f"{describe_signature(tensor_name(p[1]), p[2])}: consumer and producer differ")
                continue
            first = seen.get(uid)
            if first is None:
                seen[uid] = (t, sig)
            elif not first[1].same_tensor(sig):
                raise GraphError(f"duplicate UID {uid}: {describe_signature(tensor_name(first[0]), first[1])} and "
                                 f"{describe_signature(tensor_name(t), sig)} are different tensors")
            if sig.virtual:  # never produced
                raise GraphError(_names.virtual_never_written(operation_label(op), kw, tensor_name(t), uid))
    for uid, (op, t, sig, _) in producer.items():
        if sig.virtual and uid not in consumed and not getattr(t, "allow_unconsumed", False):
            raise GraphError(f"virtual tensor {describe_signature(tensor_name(t), sig)} is produced by "
                             f"{operation_label(op)} but nothing consumes it; make it a real (non-virtual) output, "
                             "or mark it allow_unconsumed")
    topological_order(operations)


# cuDNN's words for a graph it cannot order (9.28: "buildDAG"; 9.19: "linkEdges"; 9.10: its graph's finalize, named
# and no more); nothing: no message at all
_DAG_REFUSALS = ("buildDAG", "linkEdges", "ptrDesc->finalize()")
# the releases seen to finalize no operation graph holding SDPA_BWD (9.19.0; 9.22 on finalize them), saying buildDAG
_SDPA_BWD_REFUSED = (91900, 92000)


def explain_graph_refusal(op_graph, cudnn_message="") -> str | None:
    """What the graph checks find in an operation graph whose finalize cuDNN refused for its shape (one set by hand,
    through the generic or the typed API), or None: for a UID written twice, an operation reading its own output, a
    cycle or an operation listed twice, cuDNN says only "buildDAG". The hint of that CudnnError
    (``explain_finalize_refusals``); a refusal in other words is cuDNN's to explain."""
    if cudnn_message and not any(words in cudnn_message for words in _DAG_REFUSALS):
        return None
    ops = op_graph.value_of(AttributeName.CUDNN_ATTR_OPERATIONGRAPH_OPS)
    if ops is None:
        return None
    ops = list(ops) if isinstance(ops, tuple) else [ops]
    position = {}
    for i, op in enumerate(ops):
        if id(op) in position:
            return (f"CUDNN_ATTR_OPERATIONGRAPH_OPS lists one {operation_label(op)} twice (operations "
                    f"{position[id(op)]} and {i}): give each operation once")
        position[id(op)] = i
    try:
        check_operations(ops)
    except GraphError as e:  # (the builder's keyword for the fix means nothing here)
        return f"the graph checks find: {str(e).replace(_OWN_OUTPUT, 'give the output a tensor of its own')}"
    release = loaded_version()
    if _SDPA_BWD_REFUSED[0] <= release < _SDPA_BWD_REFUSED[1] and any(
            op.descriptor_type.name == "CUDNN_BACKEND_OPERATION_SDPA_BWD_DESCRIPTOR" for op in ops):
        return (f"cuDNN {format_version(release)} finalizes no graph holding an SDPA_BWD operation (seen on every "
                "such graph on 9.19.0); build the backward from its parts (patterns.sdpa_composite_bwd), or use a "
                "newer cuDNN")
    return None
