"""REDUCTION (ADD, MUL, MIN, MAX, AMAX, AVG, NORM1, NORM2, MUL_NO_ZEROS): the output keeps the input's rank and each
output dim divides the input's (1: reduced, equal: kept, a divisor: a partial, grouped reduction fused graphs use).
``output_divides`` is that rule, for the finalize check and the ``Graph`` builder alike."""
from __future__ import annotations

from cudnn_backend._bindings.enums import AttributeName as A
from cudnn_backend.core.families._checks import dims, name, op_name
from cudnn_backend.core.families._family import Family
from cudnn_backend.errors import GraphError

__all__ = ["FAMILY", "output_divides", "check_reduction"]


def output_divides(x_dims, y_dims) -> bool:
    """Whether ``y_dims`` is a reduction of ``x_dims``: equal ranks, each output dim >= 1 dividing the input's."""
    return len(x_dims) == len(y_dims) and all(b >= 1 and a % b == 0 for a, b in zip(x_dims, y_dims))


def check_reduction(op):
    v = op.value_of
    x, y = v(A.CUDNN_ATTR_OPERATION_REDUCTION_XDESC), v(A.CUDNN_ATTR_OPERATION_REDUCTION_YDESC)
    xd, yd = dims(x), dims(y)
    if xd is None or yd is None:
        return
    # cuDNN divides each input dim by the output's (x % y: SIGFPE on 0)
    if not output_divides(xd, yd):
        raise GraphError(f"{op_name(op)}: {name(y, 'ydesc')} has dims {list(yd)}, which is no reduction of "
                         f"{name(x, 'xdesc')} {list(xd)}: each output dim must divide the input's (1: reduced, "
                         "equal: kept) and the ranks must agree")


FAMILY = Family("reduction", ("REDUCTION",), graph_methods=("reduction",),
                finalize_checks={"REDUCTION": check_reduction}, doc=__doc__)
