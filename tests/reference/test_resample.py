"""Pooling (RESAMPLE_FWD / RESAMPLE_BWD) against loops over output positions written here: max with its index,
average including and excluding padding, zero / -inf / edge padding, asymmetric paddings and strides."""
import itertools

import numpy as np
import pytest

import cudnn_backend as cb
from cudnn_backend.reference import evaluate

from tests.reference.helpers import assert_close, assert_sampled_matches_whole

X = [2, 3, 7, 6]
WINDOW, STRIDE, PRE, POST = [2, 3], [2, 2], [1, 2], [1, 0]


def out_dims():
    return X[:2] + [(s + a + b - w) // st + 1 for s, a, b, w, st in zip(X[2:], PRE, POST, WINDOW, STRIDE)]


def loops(x, mode, padding):
    yd = out_dims()
    y, idx = np.zeros(yd), np.zeros(yd)
    for n, c, p, q in itertools.product(*[range(d) for d in yd]):
        vals, valid = [], []
        for r, s in itertools.product(range(WINDOW[0]), range(WINDOW[1])):
            i, j = p * STRIDE[0] - PRE[0] + r, q * STRIDE[1] - PRE[1] + s
            inside = 0 <= i < X[2] and 0 <= j < X[3]
            if inside:
                v = x[n, c, i, j]
            elif padding == "edge":
                v = x[n, c, min(max(i, 0), X[2] - 1), min(max(j, 0), X[3] - 1)]
            else:
                v = -np.inf if padding == "neg_inf" else 0.0
            vals.append(v)
            valid.append(inside)
        vals = np.array(vals)
        if mode == "max":
            y[n, c, p, q], idx[n, c, p, q] = vals.max(), int(np.argmax(vals))
        elif mode == "avg":
            y[n, c, p, q] = vals.mean()
        else:
            y[n, c, p, q] = vals[np.array(valid)].mean()
    return y, idx


MODES = [("max", "neg_inf"), ("max", "zero"), ("max", "edge"), ("avg", "zero"), ("avg", "edge"),
         ("avgpool_exclude_padding", "zero")]


def pool(g, x, mode, padding, **kw):
    pm = {"neg_inf": "CUDNN_NEG_INF_PAD", "zero": "CUDNN_ZERO_PAD", "edge": "CUDNN_EDGE_VAL_PAD"}[padding]
    return g.resample(x, mode=mode, window=WINDOW, stride=STRIDE, pre_padding=PRE, post_padding=POST,
                      padding_mode=pm, **kw)


@pytest.mark.parametrize("mode,padding", MODES)
def test_forward(mode, padding, rng):
    g = cb.Graph("pool", io_data_type="float")
    x = g.tensor(X, layout="nhwc", name="x")
    out = pool(g, x, mode, padding, index=mode == "max")
    og = g.build()
    xv = rng.standard_normal(X)
    r = evaluate(og, {x.uid: xv})
    y, idx = loops(xv, mode, padding)
    assert_close(r.outputs[out["y"].uid], y)
    if mode == "max":
        assert_close(r.outputs[out["index"].uid], idx)
    assert_sampled_matches_whole(og, {x.uid: xv})


@pytest.mark.parametrize("mode", ["max", "avg", "avgpool_exclude_padding"])
def test_backward_is_the_adjoint_of_the_forward(mode, rng):
    """<dY, pool(X)> is linear in X for average pooling (and max pooling with its index fixed): dX is its gradient,
    which the loops give by pushing each output's dY back over its window."""
    g = cb.Graph("poolbwd", io_data_type="float")
    dy = g.tensor(out_dims(), layout="nhwc", name="dy")
    index = g.tensor(out_dims(), layout="nhwc", data_type="int8", name="index") if mode == "max" else None
    padding = "neg_inf" if mode == "max" else "zero"
    pm = "CUDNN_NEG_INF_PAD" if mode == "max" else "CUDNN_ZERO_PAD"
    dx = g.resample_bwd(dy, X, mode=mode, window=WINDOW, stride=STRIDE, pre_padding=PRE, post_padding=POST,
                        padding_mode=pm, index=index)
    og = g.build()
    xv, dyv = rng.standard_normal(X), rng.standard_normal(out_dims())
    _, idx = loops(xv, "max", padding)
    inputs = {dy.uid: dyv, **({index.uid: idx} if index is not None else {})}
    out = evaluate(og, inputs).outputs[dx.uid]
    expected = np.zeros(X)
    for n, c, p, q in itertools.product(*[range(d) for d in out_dims()]):
        taps = list(itertools.product(range(WINDOW[0]), range(WINDOW[1])))
        inside = [(p * STRIDE[0] - PRE[0] + r, q * STRIDE[1] - PRE[1] + s) for r, s in taps]
        inside = [(i, j) for i, j in inside if 0 <= i < X[2] and 0 <= j < X[3]]
        if mode == "max":
            r, s = taps[int(idx[n, c, p, q])]
            expected[n, c, p * STRIDE[0] - PRE[0] + r, q * STRIDE[1] - PRE[1] + s] += dyv[n, c, p, q]
        else:
            share = dyv[n, c, p, q] / (len(taps) if mode == "avg" else len(inside))
            for i, j in inside:
                expected[n, c, i, j] += share
    assert_close(out, expected)
