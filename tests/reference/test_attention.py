"""Attention against softmax(Q K^T * scale) V written here: the composite graphs (matmuls, pointwise, reductions:
causal mask, training stats, the backward), the unified SDPA forward (grouped heads, padding masks) and backward,
the unified SOFTMAX and DIAGONAL_BAND_MASK, and RoPE."""
import math

import numpy as np
import pytest

import cudnn_backend as cb
from cudnn_backend.patterns import sdpa_bwd, sdpa_composite_bwd, sdpa_composite_fwd
from cudnn_backend.reference import evaluate
from cudnn_backend.typed import OperationSoftmax

from tests.reference.helpers import assert_close, assert_sampled_matches_whole, by_name, needs_cudnn, \
    newer_cudnn_skips, numeric_grad, random_inputs


def attention(q, k, v, scale, causal=False, kv_len=None, q_len=None):
    """(O, stats) of [b, h, s, d] tensors, K and V heads shared by groups of query heads."""
    k = np.repeat(k, q.shape[1] // k.shape[1], axis=1)
    v = np.repeat(v, q.shape[1] // v.shape[1], axis=1)
    s = np.einsum("bhid,bhjd->bhij", q, k) * scale
    i, j = np.arange(s.shape[2])[:, None], np.arange(s.shape[3])[None, :]
    keep = np.ones(s.shape, dtype=bool)
    if causal:
        keep &= i >= j
    if kv_len is not None:
        keep &= j[None, None] < kv_len.reshape(-1, 1, 1, 1)
    s = np.where(keep, s, -np.inf)
    m = s.max(axis=-1, keepdims=True)
    e = np.exp(s - m)
    o = np.einsum("bhij,bhjd->bhid", e / e.sum(-1, keepdims=True), v)
    stats = m + np.log(e.sum(-1, keepdims=True))
    if q_len is not None:
        rows = (np.arange(q.shape[2])[None, None, :, None] < q_len.reshape(-1, 1, 1, 1))
        o, stats = np.where(rows, o, 0.0), np.where(rows, stats, 0.0)
    return o, stats


@pytest.mark.parametrize("causal", [False, True], ids=["full", "causal"])
def test_composite_forward(causal, rng):
    p = sdpa_composite_fwd(b=2, h=3, s_q=6, s_kv=6, d=4, causal=causal)
    names = by_name(p.op_graph)
    inputs = random_inputs(p.op_graph, rng)
    q, kt, v = (inputs[names[n]] for n in ("q", "k_t", "v"))
    r = evaluate(p.op_graph, inputs)
    o, stats = attention(q, np.swapaxes(kt, -1, -2), v, 1 / math.sqrt(4), causal)
    assert_close(r.outputs[p.o.uid], o)
    assert_close(r.outputs[p.stats.uid], stats)
    assert_sampled_matches_whole(p.op_graph, inputs)


@pytest.mark.parametrize("causal", [False, True], ids=["full", "causal"])
def test_composite_backward_is_the_gradient(causal, rng):
    b, h, s, d = 1, 2, 4, 3
    p = sdpa_composite_bwd(b=b, h=h, s_q=s, s_kv=s, d=d, causal=causal)
    names = by_name(p.op_graph)
    q, k, v, do = (rng.standard_normal([b, h, s, d]) for _ in range(4))
    scale = 1 / math.sqrt(d)
    o, stats = attention(q, k, v, scale, causal)
    inputs = {names["q"]: q, names["k_t"]: np.swapaxes(k, -1, -2), names["v_t"]: np.swapaxes(v, -1, -2),
              names["o"]: o, names["do"]: do, names["stats"]: stats}
    r = evaluate(p.op_graph, inputs)

    def loss(qq=q, kk=k, vv=v):
        return (do * attention(qq, kk, vv, scale, causal)[0]).sum()

    tol = dict(rtol=1e-6, atol=1e-7)
    assert_close(r.outputs[p.dq.uid], numeric_grad(lambda a: loss(qq=a), q), **tol, what="dq")
    assert_close(r.outputs[p.dq_accum.uid], r.outputs[p.dq.uid], what="dq_accum")
    assert_close(r.outputs[p.dk.uid], numeric_grad(lambda a: loss(kk=a), k), **tol, what="dk")
    assert_close(r.outputs[p.dv.uid], numeric_grad(lambda a: loss(vv=a), v), **tol, what="dv")
    assert_sampled_matches_whole(p.op_graph, inputs)


def unified_forward(b, h_q, h_kv, s_q, s_kv, d, padded=False):
    g = cb.Graph("sdpa", io_data_type="float")
    q, k, v = g.tensor([b, h_q, s_q, d], name="q"), g.tensor([b, h_kv, s_kv, d], name="k"), \
        g.tensor([b, h_kv, s_kv, d], name="v")
    lens = {}
    if padded:
        lens = dict(seq_len_q=g.tensor([b, 1, 1, 1], data_type="int32", name="len_q"),
                    seq_len_kv=g.tensor([b, 1, 1, 1], data_type="int32", name="len_kv"))
    with newer_cudnn_skips():
        out = g.sdpa_fwd(q, k, v, attn_scale=0.375, **lens)
    return g, q, k, v, out, lens


@pytest.mark.parametrize("h_kv", [4, 2, 1], ids=["mha", "gqa", "mqa"])
def test_unified_forward_with_grouped_heads(h_kv, rng):
    g, q, k, v, out, _ = unified_forward(2, 4, h_kv, 5, 7, 3)
    og = g.build()
    qv, kv, vv = rng.standard_normal(q.shape), rng.standard_normal(k.shape), rng.standard_normal(v.shape)
    r = evaluate(og, {q.uid: qv, k.uid: kv, v.uid: vv})
    o, stats = attention(qv, kv, vv, 0.375)
    assert_close(r.outputs[out["o"].uid], o)
    assert_close(r.outputs[out["stats"].uid], stats)
    assert_sampled_matches_whole(og, {q.uid: qv, k.uid: kv, v.uid: vv})


def test_unified_forward_padding_masks(rng):
    g, q, k, v, out, lens = unified_forward(3, 2, 2, 6, 5, 4, padded=True)
    og = g.build()
    q_len, kv_len = np.array([6, 3, 1]), np.array([5, 2, 4])
    inputs = {q.uid: rng.standard_normal(q.shape), k.uid: rng.standard_normal(k.shape),
              v.uid: rng.standard_normal(v.shape), lens["seq_len_q"].uid: q_len.reshape(3, 1, 1, 1),
              lens["seq_len_kv"].uid: kv_len.reshape(3, 1, 1, 1)}
    r = evaluate(og, inputs)
    o, stats = attention(inputs[q.uid], inputs[k.uid], inputs[v.uid], 0.375, kv_len=kv_len, q_len=q_len)
    assert_close(r.outputs[out["o"].uid], o)
    assert_close(r.outputs[out["stats"].uid], stats)
    assert_sampled_matches_whole(og, inputs)


@needs_cudnn(92000, "the unified SDPA backward")
def test_unified_backward_is_the_gradient(rng):
    try:
        p = sdpa_bwd(b=1, h=2, s_q=4, s_kv=5, d=3, data_type="float")
    except cb.CudnnError as e:
        pytest.skip(f"cuDNN {cb.get_version()} refuses the unified SDPA backward: {str(e).splitlines()[0]}")
    names = by_name(p.op_graph)
    scale = 1 / math.sqrt(3)
    q, k, v = rng.standard_normal([1, 2, 4, 3]), rng.standard_normal([1, 2, 5, 3]), rng.standard_normal([1, 2, 5, 3])
    do = rng.standard_normal([1, 2, 4, 3])
    o, stats = attention(q, k, v, scale)
    r = evaluate(p.op_graph, {names["q"]: q, names["k"]: k, names["v"]: v, names["o"]: o, names["do"]: do,
                              names["stats"]: stats})

    def loss(qq=q, kk=k, vv=v):
        return (do * attention(qq, kk, vv, scale)[0]).sum()

    for out, arg, a in ((p.dq, "qq", q), (p.dk, "kk", k), (p.dv, "vv", v)):
        assert_close(r.outputs[out.uid], numeric_grad(lambda x: loss(**{arg: x}), a), rtol=1e-6, atol=1e-7)


@needs_cudnn(92000, "the unified SOFTMAX")
@pytest.mark.parametrize("log2", [False, True], ids=["natural", "log2"])
def test_unified_softmax_and_its_statistics(log2, rng):
    g = cb.Graph("softmax", io_data_type="float")
    x = g.tensor([2, 3, 4, 9], name="x")
    stats_dims = [2, 3, 4, 1]
    out = {"y": g.tensor([2, 3, 4, 9], name="y"), **{n: g.tensor(stats_dims, name=n) for n in ("stats", "max",
                                                                                               "sum_exp")}}
    op = OperationSoftmax(xdesc=x, ydesc=out["y"], stats_desc=out["stats"], max_desc=out["max"],
                          sum_exp_desc=out["sum_exp"])  # the typed class: STATS_LOG2 has no Graph keyword
    with newer_cudnn_skips():
        if log2:
            op.stats_log2 = True
        g.add(op)
        og = g.build()
    xv = rng.standard_normal([2, 3, 4, 9])
    r = evaluate(og, {x.uid: xv})
    m = xv.max(-1, keepdims=True)
    e = np.exp(xv - m)
    lse = m + np.log(e.sum(-1, keepdims=True))
    assert_close(r.outputs[out["y"].uid], e / e.sum(-1, keepdims=True))
    assert_close(r.outputs[out["stats"].uid], lse / math.log(2) if log2 else lse)
    assert_close(r.outputs[out["max"].uid], m)
    assert_close(r.outputs[out["sum_exp"].uid], e.sum(-1, keepdims=True))
    assert_sampled_matches_whole(og, {x.uid: xv})


@needs_cudnn(92000, "DIAGONAL_BAND_MASK")
@pytest.mark.parametrize("bound", ["causal", "shifted", "left", "padded"])
def test_diagonal_band_mask(bound, rng):
    g = cb.Graph("band", io_data_type="float")
    x = g.tensor([2, 2, 5, 7], name="x")
    fill = g.scalar(-1000.0, name="fill")
    kw = {}
    if bound == "shifted":
        kw["shift_right_bound"] = 2
    if bound == "left":
        kw.update(left_bound=3, comparison="CMP_GT")
    if bound == "padded":
        kw.update(seq_len_q=g.tensor([2, 1, 1, 1], data_type="int32", name="len_q"),
                  seq_len_kv=g.tensor([2, 1, 1, 1], data_type="int32", name="len_kv"))
    with newer_cudnn_skips():
        y = g.diagonal_band_mask(x, fill, output=True, **kw)
        og = g.build()
    xv = rng.standard_normal([2, 2, 5, 7])
    inputs = {x.uid: xv}
    row, col = np.arange(5)[:, None], np.arange(7)[None, :]
    if bound == "causal":
        keep = row >= col
    elif bound == "shifted":
        keep = row + 2 >= col
    elif bound == "left":
        keep = col + 3 > row
    else:
        lq, lkv = np.array([5, 3]), np.array([7, 4])
        inputs[kw["seq_len_q"].uid], inputs[kw["seq_len_kv"].uid] = lq.reshape(2, 1, 1, 1), lkv.reshape(2, 1, 1, 1)
        keep = (row + lkv.reshape(2, 1, 1, 1) - lq.reshape(2, 1, 1, 1)) >= col  # bottom-right aligned causal
    assert_close(evaluate(og, inputs).outputs[y.uid], np.where(keep, xv, -1000.0))
    assert_sampled_matches_whole(og, inputs)


@needs_cudnn(92400, "ROPE_FWD / ROPE_BWD")
@pytest.mark.parametrize("rope_dim", [None, 4], ids=["full", "partial"])
@pytest.mark.parametrize("backward", [False, True], ids=["fwd", "bwd"])
def test_rope(rope_dim, backward, rng):
    b, h, s, d = 2, 3, 5, 8
    g = cb.Graph("rope", io_data_type="float")
    x = g.tensor([b, h, s, d], name="x")
    freqs = g.tensor([s, 1, 1, d], [d, d, d, 1], "float", name="freqs")
    with newer_cudnn_skips():
        method = g.rope_bwd if backward else g.rope_fwd
        y = method(x, freqs, rope_dim=rope_dim, output_scale=0.5)
        og = g.build()
    r = rope_dim or d
    half = r // 2
    angles = rng.uniform(-3, 3, [s, half])
    fv = np.zeros([s, d])
    fv[:, d - r:] = np.concatenate([angles, angles], axis=1)  # TransformerEngine's layout: lo's angles repeated
    xv = rng.standard_normal([b, h, s, d])
    theta = angles[None, None]
    sign = -1.0 if backward else 1.0
    lo, hi = xv[..., d - r:d - half], xv[..., d - half:]
    expected = 0.5 * np.concatenate([xv[..., :d - r], lo * np.cos(theta) - sign * hi * np.sin(theta),
                                     hi * np.cos(theta) + sign * lo * np.sin(theta)], axis=-1)
    inputs = {x.uid: xv, freqs.uid: fv.reshape(s, 1, 1, d)}
    assert_close(evaluate(og, inputs).outputs[y.uid], expected)
    assert_sampled_matches_whole(og, inputs)
