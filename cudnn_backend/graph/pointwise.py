"""Pointwise operations: every ``PointwiseMode`` (unary, binary, ternary BINARY_SELECT, activation backward,
GEN_INDEX, comparisons and logic), with a few named shortcuts."""
from __future__ import annotations

from cudnn_backend._bindings.enums import PointwiseMode
from cudnn_backend.graph._util import as_choice

__all__ = ["PointwiseOps", "pointwise_mode"]

# outputs that are BOOLEAN (comparisons, logic) and modes computed in BOOLEAN (logic), by mode value
_BOOL_OUT = frozenset(int(m) for m in PointwiseMode if m.name.startswith(("CUDNN_POINTWISE_CMP_",
                                                                          "CUDNN_POINTWISE_LOGICAL_")))
_BOOL_COMPUTE = frozenset(int(m) for m in PointwiseMode if m.name.startswith("CUDNN_POINTWISE_LOGICAL_"))
_GEN_INDEX = int(PointwiseMode.CUDNN_POINTWISE_GEN_INDEX)


def pointwise_mode(mode) -> PointwiseMode:
    """A PointwiseMode from a member, its C name or its short name ("ADD", "relu_fwd", or "relu" for the
    forward activation)."""
    if isinstance(mode, str) and ("CUDNN_POINTWISE_" + mode.strip().upper() + "_FWD") in PointwiseMode.__members__:
        return PointwiseMode["CUDNN_POINTWISE_" + mode.strip().upper() + "_FWD"]
    return as_choice(PointwiseMode, mode, "mode", "CUDNN_POINTWISE_")


# the modes of the shortcuts (module constants: no enum attribute lookup per call)
_MODE_DIV = PointwiseMode.CUDNN_POINTWISE_DIV
_MODE_EXP = PointwiseMode.CUDNN_POINTWISE_EXP
_MODE_GELU_APPROX_TANH_FWD = PointwiseMode.CUDNN_POINTWISE_GELU_APPROX_TANH_FWD
_MODE_GELU_FWD = PointwiseMode.CUDNN_POINTWISE_GELU_FWD
_MODE_GEN_INDEX = PointwiseMode.CUDNN_POINTWISE_GEN_INDEX
_MODE_LOG = PointwiseMode.CUDNN_POINTWISE_LOG
_MODE_MUL = PointwiseMode.CUDNN_POINTWISE_MUL
_MODE_SIGMOID_FWD = PointwiseMode.CUDNN_POINTWISE_SIGMOID_FWD
_MODE_SUB = PointwiseMode.CUDNN_POINTWISE_SUB
_MODE_TANH_FWD = PointwiseMode.CUDNN_POINTWISE_TANH_FWD


class PointwiseOps:
    """Shortcuts of ``pointwise(mode, x, b, t)`` (``gelu``, ``sigmoid``, ``tanh``, ``exp``, ``log``, ``mul``,
    ``sub``, ``div``, ``gen_index``). ``pointwise`` itself and the ``relu`` and ``bias`` shortcuts are compiled in
    ``graph._core`` (``GraphCore``), the builder's hot path, with this module's ``pointwise_mode`` and mode tables."""

    def gelu(self, x, *, approximate="none", **kw):
        """GELU: exact (erf), or ``approximate="tanh"``."""
        mode = _MODE_GELU_APPROX_TANH_FWD if approximate == "tanh" else _MODE_GELU_FWD
        return self.pointwise(mode, x, **kw)

    def sigmoid(self, x, **kw):
        """Sigmoid: 1 / (1 + exp(-x)). Keywords as in ``pointwise``."""
        return self.pointwise(_MODE_SIGMOID_FWD, x, **kw)

    def tanh(self, x, **kw):
        """tanh(x). Keywords as in ``pointwise``."""
        return self.pointwise(_MODE_TANH_FWD, x, **kw)

    def exp(self, x, **kw):
        """exp(x). Keywords as in ``pointwise``."""
        return self.pointwise(_MODE_EXP, x, **kw)

    def log(self, x, **kw):
        """Natural logarithm of x. Keywords as in ``pointwise``."""
        return self.pointwise(_MODE_LOG, x, **kw)

    def mul(self, x, b, **kw):
        """x * b (b broadcast). Keywords as in ``pointwise``."""
        return self.pointwise(_MODE_MUL, x, b, **kw)

    def sub(self, x, b, **kw):
        """x - b (b broadcast). Keywords as in ``pointwise``."""
        return self.pointwise(_MODE_SUB, x, b, **kw)

    def div(self, x, b, **kw):
        """x / b (b broadcast). Keywords as in ``pointwise``."""
        return self.pointwise(_MODE_DIV, x, b, **kw)

    def gen_index(self, x, axis, **kw):
        """The index along ``axis`` of every element of x's shape (INT32)."""
        return self.pointwise(_MODE_GEN_INDEX, x, axis=axis, **kw)


