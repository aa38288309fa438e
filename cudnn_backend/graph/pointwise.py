"""Pointwise operations: every ``PointwiseMode`` (unary, binary, ternary BINARY_SELECT, activation backward,
GEN_INDEX, comparisons and logic), with a few named shortcuts."""
from __future__ import annotations

from cudnn_backend._bindings.enums import DataType, PointwiseMode
from cudnn_backend.graph import shapes
from cudnn_backend.graph._util import as_choice
from cudnn_backend.typed import OperationPointwise, Pointwise

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


class PointwiseOps:
    """``pointwise(mode, x, b, t)`` and shortcuts (``relu``, ``gelu``, ``sigmoid``, ``tanh``, ``exp``, ``log``,
    ``mul``, ``sub``, ``div``)."""

    def pointwise(self, mode, x, b=None, t=None, *, dy=None, output=False, output_data_type=None, compute=None,
                  name=None, alpha1=None, alpha2=None, **params):
        """A pointwise operation. ``mode`` is a PointwiseMode or its name; binary modes take ``b``
        (broadcast against ``x``), BINARY_SELECT also ``t`` (the boolean predicate: y = t ? x : b); backward
        activations take ``dy`` and produce dX. ``params`` are ``Pointwise`` keywords (relu_lower_clip,
        elu_alpha, axis for GEN_INDEX, ...). The output has the broadcast shape of the inputs; comparisons and
        logic give BOOLEAN, GEN_INDEX INT32 unless ``output_data_type`` says otherwise."""
        if type(mode) is not PointwiseMode:
            mode = pointwise_mode(mode)
        x = self._need_tensor(x, "x")
        dims = x.shape
        like = x
        for operand, what in ((b, "b"), (t, "t"), (dy, "dy")):
            if operand is not None:
                shape = self._need_tensor(operand, what).shape
                if shape != dims:
                    dims = shapes.broadcast_dims(dims, shape, what=f"pointwise {mode.name}")
                    if shape == tuple(dims):
                        like = operand
        if output_data_type is None:
            if mode in _BOOL_OUT:
                output_data_type = DataType.CUDNN_DATA_BOOLEAN
            elif mode == _GEN_INDEX:
                output_data_type = DataType.CUDNN_DATA_INT32
        if compute is None and mode in _BOOL_COMPUTE:
            compute = DataType.CUDNN_DATA_BOOLEAN
        out = self._output(output, dims, like, output_data_type, name)
        pw = Pointwise(mode=mode, math_prec=self.compute_data_type if compute is None else self._compute(compute),
                       **params).finalize()
        op = OperationPointwise(pw_descriptor=pw, xdesc=x)
        if b is not None:
            op.bdesc = b
        if t is not None:
            op.tdesc = t
        if dy is not None:
            op.dydesc = dy
            op.dxdesc = out
        else:
            op.ydesc = out
        if alpha1 is not None:
            op.alpha1 = alpha1
        if alpha2 is not None:
            op.alpha2 = alpha2
        self.add(op)
        return out

    def relu(self, x, **kw):
        """ReLU: max(x, 0) (``relu_lower_clip``/``relu_upper_clip``/``relu_lower_clip_slope`` as keywords for clipped and leaky ReLU). Other keywords as in ``pointwise``."""
        return self.pointwise(PointwiseMode.CUDNN_POINTWISE_RELU_FWD, x, **kw)

    def gelu(self, x, *, approximate="none", **kw):
        """GELU: exact (erf), or ``approximate="tanh"``."""
        mode = PointwiseMode.CUDNN_POINTWISE_GELU_APPROX_TANH_FWD if approximate == "tanh" else \
            PointwiseMode.CUDNN_POINTWISE_GELU_FWD
        return self.pointwise(mode, x, **kw)

    def sigmoid(self, x, **kw):
        """Sigmoid: 1 / (1 + exp(-x)). Keywords as in ``pointwise``."""
        return self.pointwise(PointwiseMode.CUDNN_POINTWISE_SIGMOID_FWD, x, **kw)

    def tanh(self, x, **kw):
        """tanh(x). Keywords as in ``pointwise``."""
        return self.pointwise(PointwiseMode.CUDNN_POINTWISE_TANH_FWD, x, **kw)

    def exp(self, x, **kw):
        """exp(x). Keywords as in ``pointwise``."""
        return self.pointwise(PointwiseMode.CUDNN_POINTWISE_EXP, x, **kw)

    def log(self, x, **kw):
        """Natural logarithm of x. Keywords as in ``pointwise``."""
        return self.pointwise(PointwiseMode.CUDNN_POINTWISE_LOG, x, **kw)

    def mul(self, x, b, **kw):
        """x * b (b broadcast). Keywords as in ``pointwise``."""
        return self.pointwise(PointwiseMode.CUDNN_POINTWISE_MUL, x, b, **kw)

    def sub(self, x, b, **kw):
        """x - b (b broadcast). Keywords as in ``pointwise``."""
        return self.pointwise(PointwiseMode.CUDNN_POINTWISE_SUB, x, b, **kw)

    def div(self, x, b, **kw):
        """x / b (b broadcast). Keywords as in ``pointwise``."""
        return self.pointwise(PointwiseMode.CUDNN_POINTWISE_DIV, x, b, **kw)

    def bias(self, x, b, **kw):
        """x + b (b broadcast): a pointwise ADD."""
        return self.pointwise(PointwiseMode.CUDNN_POINTWISE_ADD, x, b, **kw)

    def gen_index(self, x, axis, **kw):
        """The index along ``axis`` of every element of x's shape (INT32)."""
        return self.pointwise(PointwiseMode.CUDNN_POINTWISE_GEN_INDEX, x, axis=axis, **kw)


