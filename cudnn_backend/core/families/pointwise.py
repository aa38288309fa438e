"""POINTWISE: every ``PointwiseMode``; its shape rule is the numpy-style broadcast of equal-rank operands.

``broadcast_dims`` is the one broadcast rule: the ``Graph`` builder's output shape (``graph.shapes``, and the C
fast path of ``graph/_core.pyx`` that falls back to it), the finalize check below (and its accepting C fast path in
``core/_descriptor.pyx``), matmul's batch dims and the reference evaluator's ``broadcasts_to`` all read it.

``Graph`` methods (the mixin): Pointwise operations: every ``PointwiseMode`` (unary, binary, ternary BINARY_SELECT,
activation backward, GEN_INDEX, comparisons and logic), with a few named shortcuts.

Reference ops: POINTWISE: every ``PointwiseMode``. Inputs broadcast to the output (size-1 dims);
``alpha1``/``alpha2`` scale the first and second operand of the forward modes; activation parameters (ReLU clips and
slope, ELU alpha, softplus and swish beta) and GEN_INDEX's axis come from the Pointwise descriptor. Comparisons and
logic give 1.0 or 0.0; backward modes take X (the forward input) and dY and give dX = dY * f'(X)."""
from __future__ import annotations

import math

import numpy as np

from cudnn_backend._bindings.enums import AttributeName as A
from cudnn_backend._bindings.enums import PointwiseMode
from cudnn_backend.core.families import _checks
from cudnn_backend.core.families._build import as_choice, as_int
from cudnn_backend.core.families._family import Family
from cudnn_backend.core.families._reference import Op, Request, Unsupported, full, grid, outer_coords, ravel, real
from cudnn_backend.errors import GraphError

__all__ = ["FAMILY", "broadcast_dims", "broadcasts_to", "INPUT_SLOTS", "OUTPUT_SLOTS", "check_pointwise",
           "pointwise_mode", "check_broadcast", "broadcast_keys", "pick", "PointwiseOps", "FUNCTIONS", "PointwiseOp",
           "operands_problem", "PARAMETERS", "parameters_problem", "ends_problem", "output_of", "SLOTS_WANTED"]


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
    """The operands are those its mode reads (``operands_problem``: cuDNN's refusal of a plan's node names a JSON
    member or an assertion), and the output is ``broadcast_dims`` of every input: cuDNN 9.19 never checks it (a
    smaller Y is written out of bounds, a larger one read out of bounds)."""
    v = op.value_of
    inputs = [(v(attr), slot) for attr, slot in INPUT_SLOTS]
    mode = _mode_of(op)
    if mode is not None:
        problem = operands_problem(int(mode), [slot.removesuffix("desc") for t, slot in inputs[1:] if t is not None])
        if problem is None:
            problem = ends_problem(int(mode), inputs[0][0] is not None,
                                   [slot.removesuffix("desc") for attr, slot in OUTPUT_SLOTS if v(attr) is not None])
        if problem is not None:
            raise GraphError(f"{_checks.op_name(op)}: {problem}")
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


def _mode_of(op):
    """The pointwise mode of an operation: its Pointwise descriptor's, or a plan node's own member (``json_members``
    names it for the descriptor's attribute); None where unknown."""
    pw = op.value_of(A.CUDNN_ATTR_OPERATION_POINTWISE_PW_DESCRIPTOR)
    if pw is None or isinstance(pw, int):
        return pw
    return pw.value_of(A.CUDNN_ATTR_POINTWISE_MODE) if hasattr(pw, "value_of") else None


# outputs that are BOOLEAN (comparisons, logic) and modes computed in BOOLEAN (logic), by mode value
_BOOL_OUT = frozenset(int(m) for m in PointwiseMode if m.name.startswith(("CUDNN_POINTWISE_CMP_",
                                                                          "CUDNN_POINTWISE_LOGICAL_")))
_BOOL_COMPUTE = frozenset(int(m) for m in PointwiseMode if m.name.startswith("CUDNN_POINTWISE_LOGICAL_"))
_GEN_INDEX = int(PointwiseMode.CUDNN_POINTWISE_GEN_INDEX)


def pointwise_mode(mode, what="mode") -> PointwiseMode:
    """A PointwiseMode from a member, its C name or its short name ("ADD", "relu_fwd", or "relu" for the
    forward activation); ``what``: the parameter a refusal names."""
    if isinstance(mode, str) and ("CUDNN_POINTWISE_" + mode.strip().upper() + "_FWD") in PointwiseMode.__members__:
        return PointwiseMode["CUDNN_POINTWISE_" + mode.strip().upper() + "_FWD"]
    return as_choice(PointwiseMode, mode, what, "CUDNN_POINTWISE_")


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
_GELU_MODES = {"none": _MODE_GELU_FWD, "tanh": _MODE_GELU_APPROX_TANH_FWD}



def check_broadcast(in_dims, out_dims, what):
    """Unsupported unless ``in_dims`` broadcasts to ``out_dims`` (same rank; each dim equal or 1)."""
    if not broadcasts_to(in_dims, out_dims):  # the pointwise family's one broadcast rule
        raise Unsupported(f"{what} {list(in_dims)} does not broadcast to {list(out_dims)} (same rank, dims equal "
                          "or 1)")


def broadcast_keys(out_dims, want: Request, in_dims):
    """(request of the input, inverse): the blocks of a broadcast input that the output's ``want`` reads; the
    input's values ``v`` give, per wanted output block, ``v[inverse]`` (broadcasting over the block); inverse is
    None when the input's blocks are the output's (``v`` as it is)."""
    rank, depth = len(out_dims), want.depth
    if depth == rank:
        return full(in_dims), np.zeros(1, dtype=np.int64)
    if tuple(in_dims[:rank - depth]) == tuple(out_dims[:rank - depth]):
        return want, None
    coords = outer_coords(want.keys, out_dims, depth)
    outer_in = tuple(in_dims[:rank - depth])
    for axis, d in enumerate(outer_in):
        if d == 1:
            coords[:, axis] = 0
    keys = ravel(coords, outer_in)
    unique, inverse = np.unique(keys, return_inverse=True)
    return Request(depth, unique), inverse


def pick(values, inverse):
    """``values[inverse]``, or ``values`` when inverse is None (``broadcast_keys``' identity)."""
    return values if inverse is None else values[inverse]


class PointwiseOps:
    """Shortcuts of ``pointwise(mode, x, b, t)`` (``gelu``, ``sigmoid``, ``tanh``, ``exp``, ``log``, ``mul``,
    ``sub``, ``div``, ``gen_index``). ``pointwise`` itself and the ``relu`` and ``bias`` shortcuts are compiled in
    ``graph._core`` (``GraphCore``), the builder's hot path, with this module's ``pointwise_mode`` and mode tables."""

    def gelu(self, x, *, approximate="none", **kw):
        """GELU: exact (erf) with ``approximate="none"``, the tanh approximation with ``"tanh"`` (PyTorch's names,
        any case)."""
        if not isinstance(approximate, str):  # (True would otherwise pick one of them silently)
            raise TypeError(f"approximate: expected 'none' or 'tanh', not {type(approximate).__name__}")
        mode = _GELU_MODES.get(approximate.strip().lower())
        if mode is None:
            raise ValueError(f"approximate: {approximate!r} is not 'none' (exact, erf) or 'tanh'")
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
        """The index along ``axis`` (negative: from the last) of every element of x's shape (INT32)."""
        rank = len(self._need_tensor(x, "x").shape)
        return self.pointwise(_MODE_GEN_INDEX, x, axis=as_int(axis, "axis", -rank, rank - 1) % rank, **kw)


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
_GEN_INDEX_MODE = _M.CUDNN_POINTWISE_GEN_INDEX
_DEFAULTS = {"relu_lower_clip": 0.0, "relu_upper_clip": math.inf, "relu_lower_clip_slope": 0.0, "elu_alpha": 1.0,
             "softplus_beta": 1.0, "swish_beta": 1.0}


def _operands_wanted(mode):
    """The operands besides x that pointwise ``mode`` reads, or None for a mode neither table knows (a newer
    release's: left to cuDNN)."""
    if mode in BACKWARD:
        return frozenset({"dy"})
    if mode == _GEN_INDEX:
        return frozenset()
    if mode in FUNCTIONS:
        return frozenset({"b", "t"} if FUNCTIONS[mode][0] == 3 else {"b"} if FUNCTIONS[mode][0] == 2 else ())
    return None


# (worked out once: the Graph builder asks at every pointwise operation, and a mode's name costs a Python call)
_OPERANDS_WANTED = {int(m): w for m in PointwiseMode if (w := _operands_wanted(m)) is not None}


def operands_problem(mode, given) -> str | None:
    """What is wrong with the operands ``given`` ({"b", "t", "dy"}: those besides x) for pointwise ``mode``, else
    None: a binary mode needs b, BINARY_SELECT b and t, a backward activation dy, and none takes what it does not
    read (cuDNN's own words for a missing one name its ports, and an extra one became an input nothing reads).
    Modes neither table knows (newer releases') are left to cuDNN."""
    wanted = _OPERANDS_WANTED.get(mode)
    if wanted is None:
        return None
    given = frozenset(given)
    if given == wanted:
        return None
    name = PointwiseMode(mode).name.removeprefix("CUDNN_POINTWISE_")
    lacking, extra = sorted(wanted - given), sorted(given - wanted)
    if lacking:
        return f"{name} needs {' and '.join(lacking)}"
    return f"{name} takes no {' or '.join(extra)} (its operands: x{''.join(', ' + w for w in sorted(wanted))})"


def output_of(mode) -> str:
    """The tensor pointwise ``mode`` writes: dx for a backward activation, else y."""
    return "dx" if mode in BACKWARD else "y"


def ends_problem(mode, has_x, outputs) -> str | None:
    """What is wrong with x (``has_x``) and the outputs set (``outputs``, of "y" and "dx") for pointwise ``mode``,
    else None: every mode reads x and writes one output, dx for a backward activation, else y (cuDNN 9.28.1 plans an
    operation without them, and its heuristics then crash the process). Modes neither table knows are left to
    cuDNN."""
    if mode not in _OPERANDS_WANTED:
        return None
    name = PointwiseMode(mode).name.removeprefix("CUDNN_POINTWISE_")
    out = output_of(mode)
    if not has_x:
        return f"{name} needs x (xdesc: the tensor it reads)"
    if out not in outputs:
        return f"{name} needs {out} ({out}desc: the tensor it writes)"
    if len(outputs) > 1:
        return f"{name} writes {out} alone, not {' or '.join(o for o in outputs if o != out)}"
    return None


#: bits of the tensor slots each known pointwise mode takes (INPUT_SLOTS from bit 0, OUTPUT_SLOTS from bit 4, as the
#: finalize's C fast path sets them): any other set goes to ``check_pointwise``
_SLOT_BITS = {slot.removesuffix("desc"): 1 << (first + i) for first, slots in ((0, INPUT_SLOTS), (4, OUTPUT_SLOTS))
              for i, (_, slot) in enumerate(slots)}
SLOTS_WANTED = {mode: sum(_SLOT_BITS[s] for s in ("x", output_of(mode), *wanted))
                for mode, wanted in _OPERANDS_WANTED.items()}


_RELU_PARAMETERS = ("relu_lower_clip", "relu_upper_clip", "relu_lower_clip_slope")
#: the Pointwise descriptor's parameters each mode reads (cuDNN's docs of the attributes); every other mode of
#: ``FUNCTIONS``/``BACKWARD`` reads none of them (nan_propagation, which concerns every mode, is not listed)
PARAMETERS = {
    _M.CUDNN_POINTWISE_RELU_FWD: _RELU_PARAMETERS, _M.CUDNN_POINTWISE_RELU_BWD: _RELU_PARAMETERS,
    _M.CUDNN_POINTWISE_ELU_FWD: ("elu_alpha",), _M.CUDNN_POINTWISE_ELU_BWD: ("elu_alpha",),
    _M.CUDNN_POINTWISE_SOFTPLUS_FWD: ("softplus_beta",), _M.CUDNN_POINTWISE_SOFTPLUS_BWD: ("softplus_beta",),
    _M.CUDNN_POINTWISE_SWISH_FWD: ("swish_beta",), _M.CUDNN_POINTWISE_SWISH_BWD: ("swish_beta",),
    _M.CUDNN_POINTWISE_GEN_INDEX: ("axis",),
}
_MODE_PARAMETERS = frozenset(p for names in PARAMETERS.values() for p in names)


def parameters_problem(mode, params, alpha2_given) -> str | None:
    """What is wrong with the Pointwise ``params`` (keyword -> value) and ``alpha2`` for ``mode``, else None: GEN_INDEX
    without its axis, a parameter the mode does not read (``PARAMETERS``; cuDNN would keep it on the descriptor and
    ignore it), alpha2 without a second input (b, or dy). Modes neither table knows (newer releases') are left to
    cuDNN."""
    if mode not in _OPERANDS_WANTED:
        return None
    name = mode.name.removeprefix("CUDNN_POINTWISE_")
    if mode == _GEN_INDEX and params.get("axis") is None:  # (cuDNN: "axis < 0")
        return f"axis: pointwise {name} needs it (the dimension whose index each element gets)"
    reads = PARAMETERS.get(mode, ())
    for keyword in params:
        if keyword in _MODE_PARAMETERS and keyword not in reads:
            also = f"it reads {', '.join(reads)}" if reads else "it reads none of the mode parameters"
            return f"{keyword}: pointwise {name} does not read it ({also})"
    if alpha2_given and mode not in BACKWARD and (mode == _GEN_INDEX or FUNCTIONS[mode][0] < 2):
        return f"alpha2: pointwise {name} has no second input for it to scale (alpha2 scales b)"
    return None


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
            if self.mode == _GEN_INDEX_MODE:
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
        if self.mode == _GEN_INDEX_MODE:
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
        if self.mode == _GEN_INDEX_MODE:
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
        index = grid(dims, want)[self.axis].astype(np.float64) if self.mode == _GEN_INDEX_MODE else None

        def finish(values):
            ops = {name: pick(values[uid], inverses[name]) for name, uid in self.operands}
            with np.errstate(all="ignore"):
                y = self._apply(ops, index)
            return {self.out: np.broadcast_to(y, want.shape(dims))}

        return needs, finish


FAMILY = Family(
    "pointwise", ("POINTWISE",),
    shape_rules=(broadcast_dims,),
    graph_methods=("pointwise", "add", "mul", "sub", "div", "relu", "bias", "sigmoid", "tanh", "gelu", "exp", "log",
                   "gen_index"),
    finalize_checks={"POINTWISE": check_pointwise},
    json_members={"POINTWISE": {**dict(zip([attr for attr, _ in INPUT_SLOTS + OUTPUT_SLOTS],
                                           ("X", "B", "T", "dY", "Y", "dX"))),
                                # a plan's node holds the Pointwise descriptor's mode itself
                                A.CUDNN_ATTR_OPERATION_POINTWISE_PW_DESCRIPTOR: "pointwiseMode"}},
    graph_mixin=PointwiseOps,
    reference_ops={"POINTWISE": PointwiseOp},
    doc=__doc__)
