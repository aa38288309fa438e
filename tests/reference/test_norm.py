"""Normalizations against their formulas written here with numpy's mean and var over named axes, and the
backward passes against central differences of those formulas: layer, RMS, batch (with running statistics),
instance norm forward (training and inference); layer, RMS and batch norm backward; BN finalize
and BN backward weights."""
import numpy as np
import pytest

import cudnn_backend as cb
from cudnn_backend.reference import evaluate

from tests.reference.helpers import assert_close, assert_sampled_matches_whole, numeric_grad

EPS = 0.0625


def forward(x, scale, bias, axes, rms=False):
    mean = 0.0 if rms else x.mean(axis=axes, keepdims=True)
    var = (x * x).mean(axis=axes, keepdims=True) if rms else x.var(axis=axes, keepdims=True)
    inv = 1.0 / np.sqrt(var + EPS)
    y = (x - mean) * inv * scale + (0.0 if bias is None else bias)
    return y, (None if rms else mean), inv, var


def graph(x_dims, scale_dims, **kw):
    g = cb.Graph("norm", io_data_type="float")
    x, scale = g.tensor(x_dims, name="x"), g.tensor(scale_dims, name="scale")
    bias = g.tensor(scale_dims, name="bias") if kw.pop("bias", True) else None
    return g, x, scale, bias


@pytest.mark.parametrize("mode,x_dims,scale_dims,axes", [
    ("layer", [4, 6, 3, 2], [1, 6, 3, 2], (1, 2, 3)),
    ("rms", [5, 8, 1, 1], [1, 8, 1, 1], (1, 2, 3)),
    ("instance", [3, 4, 5, 2], [1, 4, 1, 1], (2, 3)),
])
@pytest.mark.parametrize("training", [True, False], ids=["training", "inference"])
def test_forward(mode, x_dims, scale_dims, axes, training, rng):
    rms = mode == "rms"
    g, x, scale, bias = graph(x_dims, scale_dims, bias=not rms)
    out = g.norm_forward(x, scale, bias, mode=mode, phase="training" if training else "inference", epsilon=EPS)
    og = g.build()
    xv, sv = rng.standard_normal(x_dims), rng.standard_normal(scale_dims)
    inputs = {x.uid: xv, scale.uid: sv}
    bv = None
    if bias is not None:
        bv = inputs[bias.uid] = rng.standard_normal(scale_dims)
    y, mean, inv, _ = forward(xv, sv, bv, axes, rms)
    r = evaluate(og, inputs)
    assert_close(r.outputs[out["y"].uid], y)
    if training:
        assert_close(r.outputs[out["inv_variance"].uid], inv)
        if not rms:
            assert_close(r.outputs[out["mean"].uid], mean)
    assert_sampled_matches_whole(og, inputs, samples=5)


def test_batch_norm_training_with_running_statistics(rng):
    dims = [4, 3, 5, 2]
    g = cb.Graph("bn", io_data_type="float")
    x = g.tensor(dims, layout="nhwc", name="x")
    scale, bias, rm, rv = (g.tensor([1, 3, 1, 1], name=n) for n in ("scale", "bias", "rm", "rv"))
    out = g.batch_norm(x, scale, bias, epsilon=EPS, momentum=0.25, running_mean=rm, running_var=rv)
    og = g.build()
    xv = rng.standard_normal(dims)
    sv, bv, rmv, rvv = (rng.standard_normal([1, 3, 1, 1]) for _ in range(4))
    rvv = abs(rvv)
    r = evaluate(og, {x.uid: xv, scale.uid: sv, bias.uid: bv, rm.uid: rmv, rv.uid: rvv})
    y, mean, inv, var = forward(xv, sv, bv, (0, 2, 3))
    n = 4 * 5 * 2
    assert_close(r.outputs[out["y"].uid], y)
    assert_close(r.outputs[out["mean"].uid], mean)
    assert_close(r.outputs[out["inv_variance"].uid], inv)
    assert_close(r.outputs[out["running_mean"].uid], 0.75 * rmv + 0.25 * mean)
    assert_close(r.outputs[out["running_var"].uid], 0.75 * rvv + 0.25 * var * n / (n - 1))


@pytest.mark.parametrize("mode,x_dims,scale_dims,axes", [
    ("layer", [4, 6, 1, 1], [1, 6, 1, 1], (1, 2, 3)),
    ("rms", [3, 5, 1, 1], [1, 5, 1, 1], (1, 2, 3)),
    ("batch", [4, 3, 2, 2], [1, 3, 1, 1], (0, 2, 3)),
])
def test_backward_is_the_gradient_of_the_forward(mode, x_dims, scale_dims, axes, rng):
    rms = mode == "rms"
    g = cb.Graph("normbwd", io_data_type="float")
    x, scale, dy = g.tensor(x_dims, name="x"), g.tensor(scale_dims, name="scale"), g.tensor(x_dims, name="dy")
    sdims = [1 if i in axes else d for i, d in enumerate(x_dims)]
    mean = None if rms else g.tensor(sdims, name="mean")
    inv = g.tensor(sdims, name="inv")
    out = g.norm_backward(dy, x, scale, mean, inv, mode=mode, dbias=not rms)
    og = g.build()
    xv, sv, dyv = rng.standard_normal(x_dims), rng.standard_normal(scale_dims), rng.standard_normal(x_dims)
    bv = np.zeros(scale_dims)
    _, mv, iv, _ = forward(xv, sv, None, axes, rms)
    inputs = {x.uid: xv, scale.uid: sv, dy.uid: dyv, inv.uid: iv}
    if mean is not None:
        inputs[mean.uid] = mv
    r = evaluate(og, inputs)

    def loss(xx=xv, ss=sv, bb=bv):
        return (dyv * forward(xx, ss, bb, axes, rms)[0]).sum()

    assert_close(r.outputs[out["dx"].uid], numeric_grad(lambda a: loss(xx=a), xv), rtol=1e-6, atol=1e-7)
    assert_close(r.outputs[out["dscale"].uid], numeric_grad(lambda a: loss(ss=a), sv), rtol=1e-6, atol=1e-7)
    if not rms:
        assert_close(r.outputs[out["dbias"].uid], numeric_grad(lambda a: loss(bb=a), bv), rtol=1e-6, atol=1e-7)


def test_bn_finalize_statistics(rng):
    g = cb.Graph("bnf", io_data_type="float")
    s, sq, scale, bias, rm, rv = (g.tensor([1, 4, 1, 1], name=n) for n in ("sum", "sqsum", "scale", "bias", "rm",
                                                                            "rv"))
    out = g.bn_finalize(s, sq, scale, bias, accum_count=20, epsilon=EPS, momentum=0.125, prev_running_mean=rm,
                        prev_running_var=rv)
    og = g.build()
    data = rng.standard_normal([20, 4])
    inputs = {s.uid: data.sum(0).reshape(1, 4, 1, 1), sq.uid: (data ** 2).sum(0).reshape(1, 4, 1, 1)}
    sv, bv, rmv, rvv = (rng.standard_normal([1, 4, 1, 1]) for _ in range(4))
    inputs.update({scale.uid: sv, bias.uid: bv, rm.uid: rmv, rv.uid: rvv})
    r = evaluate(og, inputs)
    mean, var = data.mean(0).reshape(1, 4, 1, 1), data.var(0).reshape(1, 4, 1, 1)
    inv = 1 / np.sqrt(var + EPS)
    assert_close(r.outputs[out["saved_mean"].uid], mean)
    assert_close(r.outputs[out["saved_inv_std"].uid], inv)
    assert_close(r.outputs[out["eq_scale"].uid], sv * inv)
    assert_close(r.outputs[out["eq_bias"].uid], bv - mean * sv * inv)
    assert_close(r.outputs[out["next_running_mean"].uid], 0.875 * rmv + 0.125 * mean)
    assert_close(r.outputs[out["next_running_var"].uid], 0.875 * rvv + 0.125 * var * 20 / 19)


def test_bn_backward_weights_fold_the_batch_norm_gradient(rng):
    dims = [3, 4, 2, 2]
    g = cb.Graph("dbn", io_data_type="float")
    x, dy = g.tensor(dims, layout="nhwc", name="x"), g.tensor(dims, layout="nhwc", name="dy")
    mean, inv, scale = (g.tensor([1, 4, 1, 1], name=n) for n in ("mean", "inv", "scale"))
    out = g.bn_bwd_weights(x, dy, mean, inv, scale)
    og = g.build()
    xv, dyv, sv = rng.standard_normal(dims), rng.standard_normal(dims), rng.standard_normal([1, 4, 1, 1])
    _, mv, iv, _ = forward(xv, sv, None, (0, 2, 3))
    r = evaluate(og, {x.uid: xv, dy.uid: dyv, mean.uid: mv, inv.uid: iv, scale.uid: sv})
    dx = numeric_grad(lambda a: (dyv * forward(a, sv, None, (0, 2, 3))[0]).sum(), xv)
    folded = r.outputs[out["eq_dy_scale"].uid] * dyv + r.outputs[out["eq_x_scale"].uid] * xv + \
        r.outputs[out["eq_bias"].uid]
    assert_close(folded, dx, rtol=1e-6, atol=1e-7)
    assert_close(r.outputs[out["dscale"].uid], (dyv * (xv - mv) * iv).sum(axis=(0, 2, 3), keepdims=True))
    assert_close(r.outputs[out["dbias"].uid], dyv.sum(axis=(0, 2, 3), keepdims=True))
