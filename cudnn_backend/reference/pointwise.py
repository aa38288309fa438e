"""POINTWISE: every ``PointwiseMode``. Inputs broadcast to the output (size-1 dims); ``alpha1``/``alpha2`` scale
the first and second operand of the forward modes; activation parameters (ReLU clips and slope, ELU alpha,
softplus and swish beta) and GEN_INDEX's axis come from the Pointwise descriptor. Comparisons and logic give 1.0
or 0.0; backward modes take X (the forward input) and dY and give dX = dY * f'(X)."""
from __future__ import annotations

import math

import numpy as np

from cudnn_backend._bindings.enums import PointwiseMode
from cudnn_backend.reference._ops import Op, Unsupported, broadcast_keys, check_broadcast, grid, pick, real, register

__all__ = ["PointwiseOp", "FUNCTIONS"]

_SQRT_2_PI = math.sqrt(2.0 / math.pi)


_ERF = np.frompyfunc(math.erf, 1, 1)  # numpy has no erf; math.erf is correctly rounded in double


def erf(x):
    """The error function, elementwise, in float64."""
    x = np.asarray(x, dtype=np.float64)
    return np.asarray(_ERF(x), dtype=np.float64) if x.size else x


def _sigmoid(x):
    return 0.5 * (1.0 + np.tanh(0.5 * x))


def _gelu(x):
    return 0.5 * x * (1.0 + erf(x / math.sqrt(2.0)))


def _gelu_bwd(x):
    return 0.5 * (1.0 + erf(x / math.sqrt(2.0))) + x * np.exp(-0.5 * x * x) / math.sqrt(2.0 * math.pi)


def _gelu_tanh(x):
    return 0.5 * x * (1.0 + np.tanh(_SQRT_2_PI * (x + 0.044715 * x ** 3)))


def _gelu_tanh_bwd(x):
    u = _SQRT_2_PI * (x + 0.044715 * x ** 3)
    th = np.tanh(u)
    return 0.5 * (1.0 + th) + 0.5 * x * (1.0 - th * th) * _SQRT_2_PI * (1.0 + 3 * 0.044715 * x * x)


def _softplus(x, beta):
    return np.logaddexp(0.0, beta * x) / beta


def _relu(x, p):
    lower, upper, slope = p["relu_lower_clip"], p["relu_upper_clip"], p["relu_lower_clip_slope"]
    return np.where(x > lower, np.minimum(x, upper), lower + slope * (x - lower))


def _relu_bwd(x, p):
    lower, upper, slope = p["relu_lower_clip"], p["relu_upper_clip"], p["relu_lower_clip_slope"]
    return np.where(x > lower, np.where(x < upper, 1.0, 0.0), slope)


def _elu(x, a):
    return np.where(x > 0, x, a * np.expm1(np.minimum(x, 0.0)))


def _floor_mod(x, b):
    return x - np.floor(x / b) * b


_M = PointwiseMode
# mode -> (arity, function of (x, b, t, params)); backward modes: function of (x, dy, params) -> f'(x) * dy
FUNCTIONS = {
    _M.CUDNN_POINTWISE_ADD: (2, lambda x, b, t, p: x + b),
    _M.CUDNN_POINTWISE_ADD_SQUARE: (2, lambda x, b, t, p: x + b * b),
    _M.CUDNN_POINTWISE_DIV: (2, lambda x, b, t, p: x / b),
    _M.CUDNN_POINTWISE_MAX: (2, lambda x, b, t, p: np.maximum(x, b)),
    _M.CUDNN_POINTWISE_MIN: (2, lambda x, b, t, p: np.minimum(x, b)),
    _M.CUDNN_POINTWISE_MOD: (2, lambda x, b, t, p: np.fmod(x, b)),
    _M.CUDNN_POINTWISE_MUL: (2, lambda x, b, t, p: x * b),
    _M.CUDNN_POINTWISE_POW: (2, lambda x, b, t, p: np.power(x, b)),
    _M.CUDNN_POINTWISE_SUB: (2, lambda x, b, t, p: x - b),
    _M.CUDNN_POINTWISE_ABS: (1, lambda x, b, t, p: np.abs(x)),
    _M.CUDNN_POINTWISE_CEIL: (1, lambda x, b, t, p: np.ceil(x)),
    _M.CUDNN_POINTWISE_COS: (1, lambda x, b, t, p: np.cos(x)),
    _M.CUDNN_POINTWISE_EXP: (1, lambda x, b, t, p: np.exp(x)),
    _M.CUDNN_POINTWISE_FLOOR: (1, lambda x, b, t, p: np.floor(x)),
    _M.CUDNN_POINTWISE_LOG: (1, lambda x, b, t, p: np.log(x)),
    _M.CUDNN_POINTWISE_NEG: (1, lambda x, b, t, p: -x),
    _M.CUDNN_POINTWISE_RSQRT: (1, lambda x, b, t, p: 1.0 / np.sqrt(x)),
    _M.CUDNN_POINTWISE_SIN: (1, lambda x, b, t, p: np.sin(x)),
    _M.CUDNN_POINTWISE_SQRT: (1, lambda x, b, t, p: np.sqrt(x)),
    _M.CUDNN_POINTWISE_TAN: (1, lambda x, b, t, p: np.tan(x)),
    _M.CUDNN_POINTWISE_ERF: (1, lambda x, b, t, p: erf(x)),
    _M.CUDNN_POINTWISE_IDENTITY: (1, lambda x, b, t, p: x),
    _M.CUDNN_POINTWISE_RECIPROCAL: (1, lambda x, b, t, p: 1.0 / x),
    _M.CUDNN_POINTWISE_ATAN2: (2, lambda x, b, t, p: np.arctan2(x, b)),
    _M.CUDNN_POINTWISE_FLOOR_MOD: (2, lambda x, b, t, p: _floor_mod(x, b)),
    _M.CUDNN_POINTWISE_RELU_FWD: (1, lambda x, b, t, p: _relu(x, p)),
    _M.CUDNN_POINTWISE_TANH_FWD: (1, lambda x, b, t, p: np.tanh(x)),
    _M.CUDNN_POINTWISE_SIGMOID_FWD: (1, lambda x, b, t, p: _sigmoid(x)),
    _M.CUDNN_POINTWISE_ELU_FWD: (1, lambda x, b, t, p: _elu(x, p["elu_alpha"])),
    _M.CUDNN_POINTWISE_GELU_FWD: (1, lambda x, b, t, p: _gelu(x)),
    _M.CUDNN_POINTWISE_SOFTPLUS_FWD: (1, lambda x, b, t, p: _softplus(x, p["softplus_beta"])),
    _M.CUDNN_POINTWISE_SWISH_FWD: (1, lambda x, b, t, p: x * _sigmoid(p["swish_beta"] * x)),
    _M.CUDNN_POINTWISE_GELU_APPROX_TANH_FWD: (1, lambda x, b, t, p: _gelu_tanh(x)),
    _M.CUDNN_POINTWISE_CMP_EQ: (2, lambda x, b, t, p: (x == b) * 1.0),
    _M.CUDNN_POINTWISE_CMP_NEQ: (2, lambda x, b, t, p: (x != b) * 1.0),
    _M.CUDNN_POINTWISE_CMP_GT: (2, lambda x, b, t, p: (x > b) * 1.0),
    _M.CUDNN_POINTWISE_CMP_GE: (2, lambda x, b, t, p: (x >= b) * 1.0),
    _M.CUDNN_POINTWISE_CMP_LT: (2, lambda x, b, t, p: (x < b) * 1.0),
    _M.CUDNN_POINTWISE_CMP_LE: (2, lambda x, b, t, p: (x <= b) * 1.0),
    _M.CUDNN_POINTWISE_LOGICAL_AND: (2, lambda x, b, t, p: ((x != 0) & (b != 0)) * 1.0),
    _M.CUDNN_POINTWISE_LOGICAL_OR: (2, lambda x, b, t, p: ((x != 0) | (b != 0)) * 1.0),
    _M.CUDNN_POINTWISE_LOGICAL_NOT: (1, lambda x, b, t, p: (x == 0) * 1.0),
    _M.CUDNN_POINTWISE_BINARY_SELECT: (3, lambda x, b, t, p: np.where(t != 0, x, b)),
}
BACKWARD = {
    _M.CUDNN_POINTWISE_RELU_BWD: lambda x, p: _relu_bwd(x, p),
    _M.CUDNN_POINTWISE_TANH_BWD: lambda x, p: 1.0 - np.tanh(x) ** 2,
    _M.CUDNN_POINTWISE_SIGMOID_BWD: lambda x, p: _sigmoid(x) * (1.0 - _sigmoid(x)),
    _M.CUDNN_POINTWISE_ELU_BWD: lambda x, p: np.where(x > 0, 1.0, p["elu_alpha"] * np.exp(np.minimum(x, 0.0))),
    _M.CUDNN_POINTWISE_GELU_BWD: lambda x, p: _gelu_bwd(x),
    _M.CUDNN_POINTWISE_SOFTPLUS_BWD: lambda x, p: _sigmoid(p["softplus_beta"] * x),
    _M.CUDNN_POINTWISE_SWISH_BWD: lambda x, p: (_sigmoid(p["swish_beta"] * x) * (
        1.0 + p["swish_beta"] * x * (1.0 - _sigmoid(p["swish_beta"] * x)))),
    _M.CUDNN_POINTWISE_GELU_APPROX_TANH_BWD: lambda x, p: _gelu_tanh_bwd(x),
}
_GEN_INDEX = _M.CUDNN_POINTWISE_GEN_INDEX
_DEFAULTS = {"relu_lower_clip": 0.0, "relu_upper_clip": math.inf, "relu_lower_clip_slope": 0.0, "elu_alpha": 1.0,
             "softplus_beta": 1.0, "swish_beta": 1.0}


@register("POINTWISE")
class PointwiseOp(Op):
    def __init__(self, node, graph):
        super().__init__(node, graph)
        raw = node.child("pw_descriptor", "mode")
        if raw is None:
            raise Unsupported("its Pointwise descriptor has no mode")
        try:
            self.mode = PointwiseMode(int(raw))
        except ValueError:
            raise Unsupported(f"pointwise mode {raw} is unknown") from None
        self.params = {k: real(node.child("pw_descriptor", k, d), k) for k, d in _DEFAULTS.items()}
        self.alpha1 = real(node.attr("alpha1", 1.0), "alpha1")
        self.alpha2 = real(node.attr("alpha2", 1.0), "alpha2")
        self.backward = self.mode in BACKWARD
        if self.backward:
            self.out = self.need("dxdesc")
            self.operands = [("x", self.need("xdesc")), ("dy", self.need("dydesc"))]
            if self.alpha1 != 1.0 or self.alpha2 != 1.0:
                raise Unsupported(f"alpha1/alpha2 of the backward mode {self.mode.name} (how they scale it is not "
                                  "documented)")
        else:
            self.out = self.need("ydesc")
            if self.mode == _GEN_INDEX:
                self.axis = int(real(node.child("pw_descriptor", "axis", 0), "axis"))
                if not 0 <= self.axis < len(self.dims(self.out)):
                    raise Unsupported(f"GEN_INDEX axis {self.axis} is outside the output's rank")
                check_broadcast(self.dims(self.need("xdesc")), self.dims(self.out), "x")
                self.operands = []  # X gives only the shape: nothing of it is read
            else:
                arity = FUNCTIONS[self.mode][0] if self.mode in FUNCTIONS else None
                if arity is None:
                    raise Unsupported(f"no reference for pointwise mode {self.mode.name}")
                slots = ["xdesc", "bdesc", "tdesc"][:arity]
                self.operands = [(s[0], self.need(s)) for s in slots]
        out_dims = self.dims(self.out)
        for name, uid in self.operands:
            check_broadcast(self.dims(uid), out_dims, f"{name} ({self.info(uid).name})")

    @property
    def inputs(self):
        return [u for _, u in self.operands]

    def _apply(self, ops, index=None):
        """The mode on operands ``{name: array}`` (broadcasting), ``index``: GEN_INDEX's values."""
        if self.mode == _GEN_INDEX:
            return index
        if self.backward:
            return BACKWARD[self.mode](ops["x"], self.params) * ops["dy"]
        x = ops["x"] * self.alpha1 if self.alpha1 != 1.0 else ops["x"]
        b = ops.get("b")
        if b is not None and self.alpha2 != 1.0:
            b = b * self.alpha2
        with np.errstate(all="ignore"):
            return FUNCTIONS[self.mode][1](x, b, ops.get("t"), self.params)

    def dense(self, values):
        dims = self.dims(self.out)
        index = None
        if self.mode == _GEN_INDEX:
            shape = [1] * len(dims)
            shape[self.axis] = dims[self.axis]
            index = np.arange(dims[self.axis], dtype=np.float64).reshape(shape)
        with np.errstate(all="ignore"):
            y = self._apply({n: values[u] for n, u in self.operands}, index)
        return {self.out: np.broadcast_to(y, dims)}

    def pull(self, wanted, cheap):
        want = wanted[self.out]
        dims = self.dims(self.out)
        if self.all_whole(wanted):
            return super().pull(wanted, cheap)
        needs, inverses = {}, {}
        for name, uid in self.operands:
            needs[uid], inverses[name] = broadcast_keys(dims, want, self.dims(uid))
        index = grid(dims, want)[self.axis].astype(np.float64) if self.mode == _GEN_INDEX else None

        def finish(values):
            ops = {name: pick(values[uid], inverses[name]) for name, uid in self.operands}
            with np.errstate(all="ignore"):
                y = self._apply(ops, index)
            return {self.out: np.broadcast_to(y, want.shape(dims))}

        return needs, finish
