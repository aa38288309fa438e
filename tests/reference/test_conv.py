"""Convolutions against convolutions written out here as loops over output positions and their windows (and
torch's conv2d where torch is installed): forward, backward data, backward filter; groups, dilation, asymmetric
pre/post padding, strides, both modes, alpha/beta; 1-d, 2-d and 3-d."""
import itertools

import numpy as np
import pytest

import cudnn_backend as cb
from cudnn_backend.reference import evaluate

from tests.reference.helpers import assert_close, assert_sampled_matches_whole, needs_torch

# (x dims, w dims, pre, post, stride, dilation, mode)
CASES = [
    ([2, 4, 7, 6], [6, 4, 3, 3], [1, 1], [1, 1], [1, 1], [1, 1], "cross_correlation"),
    ([2, 8, 9, 7], [6, 4, 3, 2], [1, 2], [0, 1], [2, 1], [1, 2], "cross_correlation"),   # groups 2, everything odd
    ([1, 6, 8, 8], [6, 2, 3, 3], [2, 0], [0, 2], [1, 2], [2, 1], "convolution"),        # groups 3, flipped filter
    ([2, 3, 10], [4, 3, 4], [3], [1], [3], [2], "convolution"),                          # 1-d
    ([1, 2, 5, 4, 6], [3, 2, 2, 3, 2], [1, 0, 1], [0, 1, 1], [2, 1, 2], [1, 1, 2], "cross_correlation"),  # 3-d
]
IDS = ["plain", "groups-dilation-asymmetric", "conv-mode-groups3", "1d", "3d"]


def out_dims(xd, wd, pre, post, stride, dil):
    return [xd[0], wd[0]] + [(s + a + b - d * (r - 1) - 1) // st + 1
                             for s, a, b, d, r, st in zip(xd[2:], pre, post, dil, wd[2:], stride)]


def windows(xd, wd, yd, pre, stride, dil):
    """For every output position: (n, k, group channel slice, padded-input index tuple of its window)."""
    k_per_group = wd[0] // (xd[1] // wd[1])
    for n, k, *pos in itertools.product(*[range(d) for d in yd]):
        g = k // k_per_group
        sl = tuple(slice(p * st, p * st + d * (r - 1) + 1, d) for p, st, d, r in zip(pos, stride, dil, wd[2:]))
        yield (n, k, *pos), (n, slice(g * wd[1], (g + 1) * wd[1])) + sl


def padded(x, pre, post):
    return np.pad(x, [(0, 0), (0, 0)] + [(a, b) for a, b in zip(pre, post)])


def filt(w, mode):
    return w[(slice(None), slice(None)) + (slice(None, None, -1),) * (w.ndim - 2)] if mode == "convolution" else w


def loops_forward(x, w, pre, post, stride, dil, mode):
    yd = out_dims(x.shape, w.shape, pre, post, stride, dil)
    xp, wf, y = padded(x, pre, post), filt(w, mode), np.zeros(yd)
    for at, window in windows(x.shape, w.shape, yd, pre, stride, dil):
        y[at] = (xp[window] * wf[at[1]]).sum()
    return y


def loops_backward_data(dy, w, xd, pre, post, stride, dil, mode):
    dxp, wf = np.zeros(padded(np.zeros(xd), pre, post).shape), filt(w, mode)
    for at, window in windows(xd, w.shape, dy.shape, pre, stride, dil):
        dxp[window] += dy[at] * wf[at[1]]
    return dxp[(slice(None), slice(None)) + tuple(slice(a, a + s) for a, s in zip(pre, xd[2:]))]


def loops_backward_filter(x, dy, wd, pre, post, stride, dil, mode):
    xp, dw = padded(x, pre, post), np.zeros(wd)
    for at, window in windows(x.shape, wd, dy.shape, pre, stride, dil):
        dw[at[1]] += dy[at] * xp[window]
    return filt(dw, mode)


def layout(dims):
    return "nhwc" if len(dims) >= 3 else None


def build(direction, case):
    """(graph, the two operand tensors, the output) of one direction of a case."""
    xd, wd, pre, post, stride, dil, mode = case
    yd = out_dims(xd, wd, pre, post, stride, dil)
    kw = dict(padding=pre, post_padding=post, stride=stride, dilation=dil, mode=mode, output=True)
    g = cb.Graph(direction)
    if direction == "forward":
        a, b = g.tensor(xd, layout=layout(xd), name="x"), g.tensor(wd, layout=layout(wd), name="w")
        return g, a, b, g.conv_fwd(a, b, **kw)
    if direction == "backward_data":
        a, b = g.tensor(yd, layout=layout(yd), name="dy"), g.tensor(wd, layout=layout(wd), name="w")
        return g, a, b, g.conv_bwd_data(a, b, xd, **kw)
    a, b = g.tensor(xd, layout=layout(xd), name="x"), g.tensor(yd, layout=layout(yd), name="dy")
    return g, a, b, g.conv_bwd_filter(a, b, wd, **kw)


def loops(direction, av, bv, case):
    xd, wd, pre, post, stride, dil, mode = case
    if direction == "forward":
        return loops_forward(av, bv, pre, post, stride, dil, mode)
    if direction == "backward_data":
        return loops_backward_data(av, bv, xd, pre, post, stride, dil, mode)
    return loops_backward_filter(av, bv, wd, pre, post, stride, dil, mode)


@pytest.mark.parametrize("direction", ["forward", "backward_data", "backward_filter"])
@pytest.mark.parametrize("case", CASES, ids=IDS)
def test_directions(direction, case, rng):
    g, a, b, out = build(direction, case)
    og = g.build()
    av, bv = rng.standard_normal(a.shape), rng.standard_normal(b.shape)
    result = evaluate(og, {a.uid: av, b.uid: bv})
    assert_close(result.outputs[out.uid], loops(direction, av, bv, case), what=direction)
    assert_sampled_matches_whole(og, {a.uid: av, b.uid: bv})


def test_alpha_beta_blend_the_prior_output(rng):
    """y = alpha * conv + beta * (y's prior value), which then is an input the evaluator asks for."""
    g = cb.Graph("blend")
    x, w = g.tensor([1, 2, 5, 5], layout="nhwc"), g.tensor([3, 2, 3, 3], layout="nhwc")
    y = g.conv_fwd(x, w, padding=1, alpha=0.5, beta=2.0, output=True)
    og = g.build()
    xv, wv = rng.standard_normal([1, 2, 5, 5]), rng.standard_normal([3, 2, 3, 3])
    prior = rng.standard_normal([1, 3, 5, 5])
    with pytest.raises(ValueError, match="prior value"):
        evaluate(og, {x.uid: xv, w.uid: wv})
    out = evaluate(og, {x.uid: xv, w.uid: wv, y.uid: prior}).outputs[y.uid]
    assert_close(out, 0.5 * loops_forward(xv, wv, [1, 1], [1, 1], [1, 1], [1, 1], "x") + 2.0 * prior)
    assert_sampled_matches_whole(og, {x.uid: xv, w.uid: wv, y.uid: prior})


@needs_torch
@pytest.mark.parametrize("case", [c for c in CASES if len(c[0]) == 4], ids=[i for c, i in zip(CASES, IDS)
                                                                              if len(c[0]) == 4])
def test_torch_conv2d_agrees(case, rng):
    import torch
    import torch.nn.functional as F

    xd, wd, pre, post, stride, dil, mode = case
    g = cb.Graph("conv")
    x, w = g.tensor(xd, layout="nhwc"), g.tensor(wd, layout="nhwc")
    y = g.conv_fwd(x, w, padding=pre, post_padding=post, stride=stride, dilation=dil, mode=mode, output=True)
    xv, wv = rng.standard_normal(xd), rng.standard_normal(wd)
    ours = evaluate(g.build(), {x.uid: xv, w.uid: wv}).outputs[y.uid]
    xt = F.pad(torch.from_numpy(xv), (pre[1], post[1], pre[0], post[0]))
    theirs = F.conv2d(xt, torch.from_numpy(filt(wv, mode).copy()), stride=stride, dilation=dil,
                      groups=xd[1] // wd[1]).numpy()
    assert_close(ours, theirs, rtol=1e-9, atol=1e-9)
