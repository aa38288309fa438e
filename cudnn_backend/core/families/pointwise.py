"""POINTWISE: every ``PointwiseMode``; its shape rule is the numpy-style broadcast of equal-rank operands.

``broadcast_dims`` is the one broadcast rule: the ``Graph`` builder's output shape (``graph.shapes``, and the C
fast path of ``graph/_core.pyx`` that falls back to it), the finalize check below (and its accepting C fast path in
``core/_descriptor.pyx``), matmul's batch dims and the reference evaluator's ``broadcasts_to`` all read it.
"""
from __future__ import annotations

from cudnn_backend._bindings.enums import AttributeName as A
from cudnn_backend.core.families import _checks
from cudnn_backend.core.families._family import Family
from cudnn_backend.errors import GraphError

__all__ = ["FAMILY", "broadcast_dims", "broadcasts_to", "check_pointwise", "INPUT_SLOTS", "OUTPUT_SLOTS"]


def broadcast_dims(*dims_list, what="pointwise"):
    """Numpy-style broadcast of equal-rank dims (cuDNN wants equal ranks; size-1 dims broadcast); GraphError
    naming ``what`` otherwise."""
    if len(dims_list) == 2 and tuple(dims_list[0]) == tuple(dims_list[1]):
        return list(dims_list[0])
    ranks = {len(d) for d in dims_list}
    if len(ranks) != 1:
        raise GraphError(f"{what}: operands of ranks {sorted(ranks)} ({[list(d) for d in dims_list]}); cuDNN needs "
                         "equal ranks (add size-1 dims)")
    out = []
    for i in range(ranks.pop()):
        sizes = {d[i] for d in dims_list if d[i] != 1}
        if len(sizes) > 1:
            raise GraphError(f"{what}: dims {[list(d) for d in dims_list]} do not broadcast at axis {i}: "
                             f"{sorted(sizes)}")
        out.append(sizes.pop() if sizes else 1)
    return out


def broadcasts_to(in_dims, out_dims) -> bool:
    """Whether ``in_dims`` broadcasts to exactly ``out_dims`` (the broadcast of the two is ``out_dims``)."""
    try:
        return len(in_dims) == len(out_dims) and broadcast_dims(in_dims, out_dims) == list(out_dims)
    except GraphError:
        return False


INPUT_SLOTS = ((A.CUDNN_ATTR_OPERATION_POINTWISE_XDESC, "xdesc"), (A.CUDNN_ATTR_OPERATION_POINTWISE_BDESC, "bdesc"),
               (A.CUDNN_ATTR_OPERATION_POINTWISE_TDESC, "tdesc"), (A.CUDNN_ATTR_OPERATION_POINTWISE_DYDESC, "dydesc"))
OUTPUT_SLOTS = ((A.CUDNN_ATTR_OPERATION_POINTWISE_YDESC, "ydesc"), (A.CUDNN_ATTR_OPERATION_POINTWISE_DXDESC, "dxdesc"))


def check_pointwise(op):
    """The output is ``broadcast_dims`` of every input: cuDNN 9.19 never checks it (a smaller Y is written out of
    bounds, a larger one read out of bounds)."""
    v = op.value_of
    inputs = [(v(attr), slot) for attr, slot in INPUT_SLOTS]
    shapes = [(t, slot, _checks.dims(t)) for t, slot in inputs if t is not None]
    outputs = [(v(attr), slot) for attr, slot in OUTPUT_SLOTS if v(attr) is not None]
    if not outputs or not shapes or any(d is None for _, _, d in shapes):
        return
    def described():  # only for a message: building it on every finalize would cost more than the check
        return ", ".join(f"{_checks.name(t, slot)} {list(d)}" for t, slot, d in shapes)

    try:
        expected = broadcast_dims(*[d for _, _, d in shapes])
    except GraphError as e:
        raise GraphError(f"{_checks.op_name(op)}: the inputs {described()}: {str(e).partition(': ')[2]}") from None
    for t, slot in outputs:
        dims = _checks.dims(t)
        if dims is not None and tuple(dims) != tuple(expected):
            _checks.need(op, t, slot, expected, f"the broadcast shape of the inputs {described()}")


FAMILY = Family(
    "pointwise", ("POINTWISE",),
    graph_methods=("pointwise", "add", "mul", "sub", "div", "relu", "bias", "sigmoid", "tanh", "gelu", "exp", "log",
                   "gen_index"),
    finalize_checks={"POINTWISE": check_pointwise},
    doc=__doc__)
