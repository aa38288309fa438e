"""Sampled evaluation of graphs too large to evaluate whole: a ResNet-50 layer (forward and weight gradient) and
an attention over 2048 positions, each sampled point checked against its value computed here directly (a window's
dot product, a row's softmax); the output tensors are never computed whole."""
import math

import numpy as np
import pytest

import cudnn_backend as cb
from cudnn_backend.reference import evaluator
from cudnn_backend.patterns import sdpa_composite_fwd
from cudnn_backend.reference import evaluate

from tests.reference.helpers import by_name, random_inputs

N, C, K, H = 32, 256, 256, 14  # ResNet-50's conv4 3x3 layer, batch 32


def test_resnet_layer_forward_sampled(rng):
    g = cb.Graph("resnet_3x3")
    x, w = g.tensor([N, C, H, H], layout="nhwc", name="x"), g.tensor([K, C, 3, 3], layout="nhwc", name="w")
    b = g.tensor([1, K, 1, 1], layout="nhwc", name="b")
    y = g.relu(g.bias(g.conv_fwd(x, w, padding=1), b), output=True, name="y")
    xv = rng.standard_normal([N, C, H, H]).astype(np.float32)
    wv, bv = rng.standard_normal([K, C, 3, 3]).astype(np.float32), rng.standard_normal([1, K, 1, 1])
    r = evaluate(g, {x.uid: xv, w.uid: wv, b.uid: bv}, samples=256)
    assert r.method == "sampled fp64 reference (256 points)" and not r.outputs
    coords, values = r.samples[y.uid]
    xp = np.pad(xv.astype(np.float64), [(0, 0), (0, 0), (1, 1), (1, 1)])
    direct = [max((xp[n, :, p:p + 3, q:q + 3] * wv[k]).sum() + bv[0, k, 0, 0], 0.0) for n, k, p, q in coords]
    np.testing.assert_allclose(values, direct, rtol=1e-11, atol=1e-11)


@pytest.mark.parametrize("convert_whole", [0, 1 << 30])
def test_a_large_input_in_another_dtype_is_gathered_not_converted_whole(rng, monkeypatch, convert_whole):
    """An fp16 input larger than ``CONVERT_WHOLE_ELEMENTS`` is not converted to float64 whole for a sampled
    evaluation (0.6 s for a ResNet-50 layer's 25 M elements): only the elements the points need are; smaller ones
    are converted whole. Either way each point is its direct fp64 value."""
    monkeypatch.setattr(evaluator, "CONVERT_WHOLE_ELEMENTS", convert_whole)
    pulled = []
    take = evaluator._take
    monkeypatch.setattr(evaluator, "_take", lambda array, request: pulled.append(
        (array.size, len(request.keys) * math.prod(array.shape[array.ndim - request.depth:]))) or take(array, request))
    n, c, k, h = 8, 64, 32, 14
    g = cb.Graph("conv_1x1", io_data_type="half")
    x, w = g.tensor([n, c, h, h], layout="nhwc", name="x"), g.tensor([k, c, 1, 1], layout="nhwc", name="w")
    y = g.conv_fwd(x, w, output=True, name="y")
    xv, wv = rng.standard_normal([n, c, h, h]).astype(np.float16), rng.standard_normal([k, c, 1, 1]).astype(np.float16)
    r = evaluate(g, {x.uid: xv, w.uid: wv}, samples=64, max_elements=0)
    coords, values = r.samples[y.uid]
    direct = [(xv[b, :, p, q].astype(np.float64) * wv[o, :, 0, 0].astype(np.float64)).sum() for b, o, p, q in coords]
    np.testing.assert_allclose(values, direct, rtol=1e-12, atol=1e-12)
    x_pulls = [count for size, count in pulled if size == xv.size]
    assert x_pulls and all(count < xv.size / 4 if convert_whole == 0 else count == xv.size for count in x_pulls)


def test_resnet_layer_weight_gradient_sampled(rng):
    g = cb.Graph("resnet_wgrad")
    x, dy = g.tensor([N, C, H, H], layout="nhwc", name="x"), g.tensor([N, K, H, H], layout="nhwc", name="dy")
    dw = g.conv_bwd_filter(x, dy, [K, C, 3, 3], padding=1, output=True)
    xv, dyv = rng.standard_normal([N, C, H, H]), rng.standard_normal([N, K, H, H])
    r = evaluate(g, {x.uid: xv, dy.uid: dyv}, samples=64)
    coords, values = r.samples[dw.uid]
    xp = np.pad(xv, [(0, 0), (0, 0), (1, 1), (1, 1)])
    direct = [(dyv[:, k] * xp[:, c, s:s + H, t:t + H]).sum() for k, c, s, t in coords]
    np.testing.assert_allclose(values, direct, rtol=1e-11, atol=1e-9)


def test_long_attention_sampled(rng):
    s, d = 2048, 32
    p = sdpa_composite_fwd(b=1, h=2, s_q=s, s_kv=s, d=d, causal=True)
    names = by_name(p.op_graph)
    inputs = random_inputs(p.op_graph, rng)
    r = evaluate(p.op_graph, inputs, samples=64)
    assert not r.outputs and set(r.samples) == {p.o.uid, p.stats.uid}
    q, kt, v = inputs[names["q"]], inputs[names["k_t"]], inputs[names["v"]]
    for uid, column in ((p.o.uid, True), (p.stats.uid, False)):
        coords, values = r.samples[uid]
        for (b, h, i, j), value in zip(coords, values):
            scores = (q[b, h, i] @ kt[b, h])[: i + 1] / math.sqrt(d)   # the causal row
            m = scores.max()
            e = np.exp(scores - m)
            expected = (e / e.sum()) @ v[b, h, : i + 1, j] if column else m + np.log(e.sum())
            np.testing.assert_allclose(value, expected, rtol=1e-10, atol=1e-12)
