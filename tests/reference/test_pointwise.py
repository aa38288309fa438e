"""Every pointwise mode against its formula written here per element with Python's ``math`` (backward modes:
dY times a central difference of the forward formula), with broadcasting, alpha1/alpha2, activation parameters,
GEN_INDEX's axis, comparisons and logic giving 1/0, BINARY_SELECT."""
import math

import numpy as np
import pytest

import cudnn_backend as cb
from cudnn_backend._bindings.enums import DataType, PointwiseMode
from cudnn_backend.reference import evaluate

from tests.reference.helpers import assert_close, assert_sampled_matches_whole, newer_cudnn_skips


def sigmoid(v):
    return 1.0 / (1.0 + math.exp(-v))


# exact in float32, as the Pointwise descriptor stores them
PARAMS = dict(relu_lower_clip=-0.25, relu_upper_clip=0.75, relu_lower_clip_slope=0.125, elu_alpha=0.75,
              softplus_beta=1.75, swish_beta=0.625)


def relu(v, p):
    lo, hi = p.get("relu_lower_clip", 0.0), p.get("relu_upper_clip", math.inf)
    slope = p.get("relu_lower_clip_slope", 0.0)
    return min(v, hi) if v > lo else lo + slope * (v - lo)


FORWARD = {  # mode -> (arity, formula of scalars, input range)
    "ADD": (2, lambda x, b, p: x + b, None), "ADD_SQUARE": (2, lambda x, b, p: x + b * b, None),
    "DIV": (2, lambda x, b, p: x / b, (0.5, 2.0)), "MAX": (2, lambda x, b, p: max(x, b), None),
    "MIN": (2, lambda x, b, p: min(x, b), None), "MOD": (2, lambda x, b, p: math.fmod(x, b), (0.5, 3.0)),
    "MUL": (2, lambda x, b, p: x * b, None), "POW": (2, lambda x, b, p: x ** b, (0.5, 2.0)),
    "SUB": (2, lambda x, b, p: x - b, None), "ABS": (1, lambda x, b, p: abs(x), None),
    "CEIL": (1, lambda x, b, p: math.ceil(x), None), "COS": (1, lambda x, b, p: math.cos(x), None),
    "EXP": (1, lambda x, b, p: math.exp(x), None), "FLOOR": (1, lambda x, b, p: math.floor(x), None),
    "LOG": (1, lambda x, b, p: math.log(x), (0.1, 3.0)), "NEG": (1, lambda x, b, p: -x, None),
    "RSQRT": (1, lambda x, b, p: 1 / math.sqrt(x), (0.1, 3.0)), "SIN": (1, lambda x, b, p: math.sin(x), None),
    "SQRT": (1, lambda x, b, p: math.sqrt(x), (0.1, 3.0)), "TAN": (1, lambda x, b, p: math.tan(x), (-1.2, 1.2)),
    "ERF": (1, lambda x, b, p: math.erf(x), None), "IDENTITY": (1, lambda x, b, p: x, None),
    "RECIPROCAL": (1, lambda x, b, p: 1 / x, (0.5, 2.0)), "ATAN2": (2, lambda x, b, p: math.atan2(x, b), None),
    "FLOOR_MOD": (2, lambda x, b, p: x - math.floor(x / b) * b, (0.5, 3.0)),
    "RELU_FWD": (1, lambda x, b, p: relu(x, p), None), "TANH_FWD": (1, lambda x, b, p: math.tanh(x), None),
    "SIGMOID_FWD": (1, lambda x, b, p: sigmoid(x), None),
    "ELU_FWD": (1, lambda x, b, p: x if x > 0 else p.get("elu_alpha", 1.0) * (math.exp(x) - 1), None),
    "GELU_FWD": (1, lambda x, b, p: 0.5 * x * (1 + math.erf(x / math.sqrt(2))), None),
    "SOFTPLUS_FWD": (1, lambda x, b, p: math.log1p(math.exp(p.get("softplus_beta", 1.0) * x))
                     / p.get("softplus_beta", 1.0), None),
    "SWISH_FWD": (1, lambda x, b, p: x * sigmoid(p.get("swish_beta", 1.0) * x), None),
    "GELU_APPROX_TANH_FWD": (1, lambda x, b, p: 0.5 * x * (1 + math.tanh(math.sqrt(2 / math.pi) * (
        x + 0.044715 * x ** 3))), None),
    "CMP_EQ": (2, lambda x, b, p: float(x == b), None), "CMP_NEQ": (2, lambda x, b, p: float(x != b), None),
    "CMP_GT": (2, lambda x, b, p: float(x > b), None), "CMP_GE": (2, lambda x, b, p: float(x >= b), None),
    "CMP_LT": (2, lambda x, b, p: float(x < b), None), "CMP_LE": (2, lambda x, b, p: float(x <= b), None),
}
BACKWARD = {"RELU_BWD": "RELU_FWD", "TANH_BWD": "TANH_FWD", "SIGMOID_BWD": "SIGMOID_FWD", "ELU_BWD": "ELU_FWD",
            "GELU_BWD": "GELU_FWD", "SOFTPLUS_BWD": "SOFTPLUS_FWD", "SWISH_BWD": "SWISH_FWD",
            "GELU_APPROX_TANH_BWD": "GELU_APPROX_TANH_FWD"}
ACTIVATION_PARAMS = {"RELU": ("relu_lower_clip", "relu_upper_clip", "relu_lower_clip_slope"), "ELU": ("elu_alpha",),
                     "SOFTPLUS": ("softplus_beta",), "SWISH": ("swish_beta",)}
X_DIMS, B_DIMS = [2, 3, 4, 5], [1, 3, 1, 5]


def params_of(mode):
    names = ACTIVATION_PARAMS.get(mode.split("_")[0], ())
    return {k: PARAMS[k] for k in names}


def elementwise(f, *arrays):
    out = np.empty(np.broadcast_shapes(*[a.shape for a in arrays]))
    for idx in np.ndindex(out.shape):
        out[idx] = f(*[a[tuple(i if d > 1 else 0 for i, d in zip(idx, a.shape))] for a in arrays])
    return out


def sample(rng, dims, interval):
    if interval is not None:
        return rng.uniform(*interval, dims)
    v = rng.standard_normal(dims)
    if dims == X_DIMS:  # a few exact ties for the comparisons and the clips
        v.reshape(-1)[:4] = [0.0, 1.0, -0.25, 0.75]
    return v


@pytest.mark.parametrize("mode,parameters", [(m, False) for m in sorted(FORWARD)] +
                         [(m, True) for m in sorted(FORWARD) if params_of(m)])
def test_forward_modes(mode, parameters, rng):
    arity, formula, interval = FORWARD[mode]
    p = params_of(mode) if parameters else {}
    g = cb.Graph("pw", io_data_type="float")
    x = g.tensor(X_DIMS, name="x")
    b = g.tensor(B_DIMS, name="b") if arity == 2 else None
    with newer_cudnn_skips():
        y = g.pointwise(mode, x, b, output=True, output_data_type="float", name="y", **p)
        og = g.build()
    xv, bv = sample(rng, X_DIMS, interval), sample(rng, B_DIMS, interval)
    if mode.startswith("CMP_"):
        bv.reshape(-1)[:2] = [0.0, 1.0]  # equal to x's first elements in some positions
    inputs = {x.uid: xv, **({b.uid: bv} if b is not None else {})}
    out = evaluate(og, inputs).outputs[y.uid]
    expected = elementwise(lambda *v: formula(v[0], v[1] if arity == 2 else None, p), xv, *([bv] if b else []))
    assert_close(out, expected, rtol=1e-12, atol=1e-12, what=mode)
    assert_sampled_matches_whole(og, inputs)


@pytest.mark.parametrize("mode", sorted(BACKWARD))
def test_backward_modes_are_dy_times_the_derivative(mode, rng):
    p = params_of(mode)
    fwd = FORWARD[BACKWARD[mode]][1]
    g = cb.Graph("pwb", io_data_type="float")
    x, dy = g.tensor(X_DIMS, name="x"), g.tensor(X_DIMS, name="dy")
    dx = g.pointwise(mode, x, dy=dy, output=True, output_data_type="float", name="dx", **p)
    og = g.build()
    xv, dyv = rng.uniform(-2, 2, X_DIMS), rng.standard_normal(X_DIMS)
    if mode == "RELU_BWD":  # away from the kinks, where a difference quotient straddles them
        xv = np.where(np.abs(xv - p["relu_lower_clip"]) < 1e-3, xv + 0.01, xv)
        xv = np.where(np.abs(xv - p["relu_upper_clip"]) < 1e-3, xv + 0.01, xv)
    h = 1e-6
    slope = elementwise(lambda v: (fwd(v + h, None, p) - fwd(v - h, None, p)) / (2 * h), xv)
    out = evaluate(og, {x.uid: xv, dy.uid: dyv}).outputs[dx.uid]
    assert_close(out, dyv * slope, rtol=1e-6, atol=1e-7, what=mode)
    assert_sampled_matches_whole(og, {x.uid: xv, dy.uid: dyv})


def test_alpha1_alpha2_scale_the_operands(rng):
    g = cb.Graph("alpha", io_data_type="float")
    x, b = g.tensor(X_DIMS, name="x"), g.tensor(B_DIMS, name="b")
    y = g.pointwise("SUB", x, b, alpha1=0.5, alpha2=-3.0, output=True)
    xv, bv = rng.standard_normal(X_DIMS), rng.standard_normal(B_DIMS)
    assert_close(evaluate(g.build(), {x.uid: xv, b.uid: bv}).outputs[y.uid], 0.5 * xv - (-3.0) * bv)


@pytest.mark.parametrize("axis", [0, 1, 2, 3])
def test_gen_index_gives_the_index_along_its_axis(axis, rng):
    g = cb.Graph("gi", io_data_type="float")
    x = g.tensor(X_DIMS, name="x")
    y = g.gen_index(x, axis, output=True, output_data_type="float")
    og = g.build()
    out = evaluate(og, {x.uid: rng.standard_normal(X_DIMS)}).outputs[y.uid]
    expected = np.zeros(X_DIMS)
    for idx in np.ndindex(*X_DIMS):
        expected[idx] = idx[axis]
    assert_close(out, expected)
    assert_sampled_matches_whole(og, {x.uid: rng.standard_normal(X_DIMS)})


def test_comparisons_give_booleans_and_binary_select_picks(rng):
    """y = (x > b) ? x : fill — a BOOLEAN intermediate, the mask of attention."""
    g = cb.Graph("select", io_data_type="float")
    x, b = g.tensor(X_DIMS, name="x"), g.tensor(B_DIMS, name="b")
    fill = g.scalar(-7.5, name="fill")
    keep = g.pointwise("CMP_GT", x, b)
    assert keep.signature()[3] == DataType.CUDNN_DATA_BOOLEAN
    y = g.pointwise("BINARY_SELECT", x, fill, keep, output=True)
    og = g.build()
    xv, bv = rng.standard_normal(X_DIMS), rng.standard_normal(B_DIMS)
    assert_close(evaluate(og, {x.uid: xv, b.uid: bv}).outputs[y.uid], np.where(xv > bv, xv, -7.5))
    assert_sampled_matches_whole(og, {x.uid: xv, b.uid: bv})


@pytest.mark.parametrize("mode", ["LOGICAL_AND", "LOGICAL_OR", "LOGICAL_NOT"])
def test_logic_on_comparisons(mode, rng):
    g = cb.Graph("logic", io_data_type="float")
    x, b = g.tensor(X_DIMS, name="x"), g.tensor(B_DIMS, name="b")
    p = g.pointwise("CMP_GT", x, b)
    q = None if mode == "LOGICAL_NOT" else g.pointwise("CMP_LT", x, g.scalar(0.25, name="c"))
    y = g.pointwise(mode, p, q, output=True, output_data_type="float")
    og = g.build()
    xv, bv = rng.standard_normal(X_DIMS), rng.standard_normal(B_DIMS)
    pv, qv = xv > bv, xv < 0.25
    expected = {"LOGICAL_AND": pv & qv, "LOGICAL_OR": pv | qv, "LOGICAL_NOT": ~pv}[mode]
    assert_close(evaluate(og, {x.uid: xv, b.uid: bv}).outputs[y.uid], expected * 1.0)


def test_every_pointwise_mode_is_covered():
    tested = set(FORWARD) | set(BACKWARD) | {"GEN_INDEX", "BINARY_SELECT", "LOGICAL_AND", "LOGICAL_OR",
                                              "LOGICAL_NOT"}
    assert {m.name[len("CUDNN_POINTWISE_"):] for m in PointwiseMode} == tested
