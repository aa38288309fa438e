"""The graph checks: what cuDNN would refuse, misread, or run out of bounds, across operations.

Per-operation shape rules (statistics, pointwise outputs, ...) run in every API at the operation's
finalize (``core.op_checks``); these are the checks that need the whole graph:

* in-place operations (an operation reading and writing one UID) only in single-node graphs;
* one producer per UID, and one tensor per UID (a second tensor with the same UID must agree);
* a consumer reads a UID with the shape, strides and data type its producer writes;
* virtual tensors are produced, and consumed (or marked ``allow_unconsumed``);
* no cycle.
"""
from __future__ import annotations

from cudnn_backend.errors import GraphError
from cudnn_backend.typed.introspection import (
    describe_signature,
    operation_label,
    signature_of,
    tensor_name,
    tensor_slots,
    topological_order,
)

__all__ = ["check_operations", "operation_slots"]


def operation_slots(op) -> list:
    """[(keyword, tensor, signature, is_output)] of an operation's tensors."""
    return [(kw, t, signature_of(t), out) for kw, t, out in tensor_slots(op)]


def check_operations(operations, slots=None):
    """Raise GraphError, with the tensors named, for the first cross-operation problem found.

    ``slots`` (optional) is ``[operation_slots(op) for op in operations]`` already computed.
    """
    operations = list(operations)
    if not operations:
        raise GraphError("an operation graph needs at least one operation")
    if slots is None:
        slots = [operation_slots(op) for op in operations]
    many = len(operations) > 1
    producer = {}  # uid -> (operation, tensor, signature)
    for op, op_slots in zip(operations, slots):
        ins = set()
        for _, t, sig, out in op_slots:
            uid = sig.uid
            if out:
                if uid in producer and producer[uid][0] is not op:
                    raise GraphError(f"UID {uid} ({tensor_name(t)}) is produced by both "
                                     f"{operation_label(producer[uid][0])} and {operation_label(op)}")
                producer[uid] = (op, t, sig)
            else:
                ins.add(uid)
        if many:
            for _, t, sig, out in op_slots:
                if out and sig.uid in ins:
                    raise GraphError(f"{operation_label(op)} reads and writes UID {sig.uid} ({tensor_name(t)}): in-place "
                                     "operations are allowed only in single-node graphs (cuDNN treats this as a "
                                     "cycle); give the output its own tensor")
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
                raise GraphError(f"virtual tensor {describe_signature(tensor_name(t), sig)} is consumed but no "
                                 "operation produces it")
    for uid, (op, t, sig) in producer.items():
        if sig.virtual and uid not in consumed and not getattr(t, "allow_unconsumed", False):
            raise GraphError(f"virtual tensor {describe_signature(tensor_name(t), sig)} is produced by "
                             f"{operation_label(op)} but nothing consumes it; make it a real (non-virtual) output, "
                             "or mark it allow_unconsumed")
    topological_order(operations)
