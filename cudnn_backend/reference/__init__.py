"""An fp64 reference evaluator for backend operation graphs (numpy, on the CPU).

``evaluate(op_graph, inputs)`` computes what a finalized operation graph — built with the generic API, the typed
classes or ``Graph`` — computes, in float64, reading every dim, stride, data type and attribute from the graph's own
descriptors; outputs too large to evaluate whole are evaluated exactly at a random sample of coordinates, pulling
back only the input elements those coordinates need. ``unsupported(op_graph)`` names the operations it cannot
compute (random numbers, signals, ...), one line each.

The layer sits beside ``graph`` and ``runtime``: it needs only ``typed`` and ``core``. It reads the graph
(``_graph``) and runs it (``evaluator``); each operation's math is an ``Op`` of its family module in
``core/families`` (declared in its ``Family``'s ``reference_ops``), on the blocks of ``core.families._reference``.
"""
from cudnn_backend.reference.evaluator import ReferenceResult, estimated_work, evaluate, unsupported

__all__ = ["ReferenceResult", "evaluate", "unsupported", "estimated_work"]
