"""Attention patterns: the unified SDPA operations (cuDNN 9.13+ / 9.17+), the composite graphs every cuDNN 9
runs (cudnn-frontend's SDPA before the unified operations): forward with causal mask and dropout, backward; and the
composite forward around the dedicated SOFTMAX and DIAGONAL_BAND_MASK operations (cuDNN 9.20+)."""
from __future__ import annotations

import numbers

from cudnn_backend._bindings.enums import DataType, TensorReordering
from cudnn_backend.core.families.attention import attention_scale
from cudnn_backend.graph import Graph, shapes
from cudnn_backend.patterns._pattern import finish, pattern_function, size

__all__ = ["sdpa_fwd", "sdpa_bwd", "sdpa_composite_fwd", "sdpa_composite_bwd", "sdpa_softmax_fwd",
           "diagonal_band_mask"]

F16 = DataType.CUDNN_DATA_HALF
F32 = DataType.CUDNN_DATA_FLOAT


def _dropout(value):
    """The dropout probability: a real number in [0, 1) (TypeError/ValueError naming it, whatever the object)."""
    if isinstance(value, bool) or not isinstance(value, numbers.Real):
        raise TypeError(f"dropout: expected a probability (a real number), not {type(value).__name__}")
    try:
        p = float(value)
    except Exception as e:  # a Real whose __float__ fails
        raise TypeError(f"dropout: cannot read a number from {type(value).__name__} ({type(e).__name__}: {e})") from None
    if not 0.0 <= p < 1.0:
        raise ValueError(f"dropout: a probability in [0, 1), not {value!r}")
    return p


def _sizes(b, h, s_q, s_kv, d):
    return size(b, "b"), size(h, "h"), size(s_q, "s_q"), size(s_kv, "s_kv"), size(d, "d")


def _bshd(g, dims, name, data_type=None):
    return g.tensor(dims, shapes.bshd_strides(dims), data_type, name=name)


def _transposed(strides):
    return [strides[0], strides[1], strides[3], strides[2]]


def _attention_reference(t, scale, causal, kt_name="k_t"):
    import torch

    q, kt, v = t["q"], t[kt_name], t["v"]
    s = torch.matmul(q, kt) * scale
    if causal:
        s_q, s_kv = s.shape[-2], s.shape[-1]
        keep = torch.ones(s_q, s_kv, dtype=torch.bool, device=s.device).tril()
        s = s.masked_fill(~keep, float("-inf"))
    mx = s.amax(dim=-1, keepdim=True)
    e = torch.exp(s - mx)
    sm = e.sum(dim=-1, keepdim=True)
    return {"o": torch.matmul(e / sm, v), "stats": mx + torch.log(sm)}


@pattern_function
def sdpa_fwd(b=2, h=4, s_q=128, s_kv=128, d=64, *, training=True, attn_scale=None, data_type=F16, build=True):
    """Scaled dot-product attention forward through the unified SDPA_FWD (cuDNN 9.13+): Q/K/V/O [b,h,s,d] stored
    BSHD, stats [b,h,s_q,1] fp32 when ``training``."""
    b, h, s_q, s_kv, d = _sizes(b, h, s_q, s_kv, d)
    g = Graph("sdpa_fwd", io_data_type=data_type)
    q, k, v = _bshd(g, [b, h, s_q, d], "q"), _bshd(g, [b, h, s_kv, d], "k"), _bshd(g, [b, h, s_kv, d], "v")
    out = g.sdpa_fwd(q, k, v, attn_scale=attn_scale, stats=training)
    scale = attention_scale(attn_scale, d)

    def reference(t):
        r = _attention_reference(dict(t, k_t=t["k"].transpose(-1, -2)), scale, False)
        return r if training else {"o": r["o"]}

    return finish("sdpa_fwd", g, {"q": q, "k": k, "v": v, **out}, build, reference=reference,
                  params=dict(b=b, h=h, s_q=s_q, s_kv=s_kv, d=d, training=training))


@pattern_function
def sdpa_bwd(b=2, h=4, s_q=128, s_kv=128, d=64, *, attn_scale=None, data_type=F16, build=True):
    """Attention backward through the unified SDPA_BWD (cuDNN 9.17+; cuDNN 9.19 refuses every such graph)."""
    b, h, s_q, s_kv, d = _sizes(b, h, s_q, s_kv, d)
    g = Graph("sdpa_bwd", io_data_type=data_type)
    q, k, v = _bshd(g, [b, h, s_q, d], "q"), _bshd(g, [b, h, s_kv, d], "k"), _bshd(g, [b, h, s_kv, d], "v")
    o, do = _bshd(g, [b, h, s_q, d], "o"), _bshd(g, [b, h, s_q, d], "do")
    stats = g.tensor([b, h, s_q, 1], data_type=F32, name="stats")
    out = g.sdpa_bwd(q, k, v, o, do, stats, attn_scale=attn_scale)
    return finish("sdpa_bwd", g, {"q": q, "k": k, "v": v, "o": o, "do": do, "stats": stats, **out}, build,
                  params=dict(b=b, h=h, s_q=s_q, s_kv=s_kv, d=d))


def _causal_mask(g, s, tensors):
    row = g.gen_index(s, 2, name="row")
    col = g.gen_index(s, 3, name="col")
    keep = g.pointwise("CMP_GE", row, col, name="causal")
    neg = tensors["neg_inf"] = g.scalar(-3.4e38, name="neg_inf")
    return g.pointwise("BINARY_SELECT", s, neg, keep, name="s_masked")


def _composite_start(name, b, h, s_q, s_kv, d, dropout, data_type):
    """What both composite SDPA graphs begin with: (the graph, the sizes checked, the dropout checked, Q in BSHD,
    K^T read through K's BSHD strides)."""
    sizes = b, h, s_q, s_kv, d = _sizes(b, h, s_q, s_kv, d)
    g = Graph(name, io_data_type=data_type)
    q = _bshd(g, [b, h, s_q, d], "q")
    kt = g.tensor([b, h, d, s_kv], _transposed(shapes.bshd_strides([b, h, s_kv, d])), name="k_t")
    return g, sizes, _dropout(dropout), q, kt


@pattern_function
def sdpa_composite_fwd(b=2, h=4, s_q=128, s_kv=128, d=64, *, training=True, causal=False, dropout=0.0,
                       attn_scale=None, data_type=F16, build=True):
    """The classic fused-attention graph (cudnn-frontend's composite SDPA): S = Q @ K^T (K read transposed through
    its strides) * scale; optional causal mask (GEN_INDEX row >= col, BINARY_SELECT with -inf); softmax as
    max/sub/exp/sum/div with stats = max + log(sum) (a real fp32 output when ``training``; in inference a virtual
    tensor nothing reads, which the fused engines expect); optional dropout (RNG Bernoulli(1-p) mask, * 1/(1-p));
    O = P @ V."""
    g, (b, h, s_q, s_kv, d), dropout, q, kt = _composite_start("sdpa_composite_fwd", b, h, s_q, s_kv, d, dropout,
                                                                data_type)
    v = _bshd(g, [b, h, s_kv, d], "v")
    tensors = {"q": q, "k_t": kt, "v": v}
    scale_value = attention_scale(attn_scale, d)
    scale = tensors["attn_scale"] = g.scalar(scale_value, name="attn_scale")
    s = g.mul(g.matmul(q, kt, name="s"), scale, name="s_scaled")
    if causal:
        s = _causal_mask(g, s, tensors)
    sm = g.softmax_composite(s, stats=True if training else "virtual", p_data_type=data_type if not dropout else None)
    p = sm["p"]
    tensors["stats"] = sm["stats"]
    if dropout:
        r = g.rng(list(p.shape), probability=1.0 - dropout, output=False, name="dropout")
        dscale = g.scalar(1.0 / (1.0 - dropout), name="dropout_scale")
        p = g.mul(g.mul(p, r["y"], name="p_dropped"), dscale, output_data_type=data_type, name="p_scaled")
        tensors.update(dropout_seed=r["seed"], dropout_offset=r["offset"], dropout_scale=dscale)
    tensors["p"] = p
    tensors["o"] = g.matmul(p, v, output=_bshd(g, [b, h, s_q, d], "o", data_type))

    def reference(t):
        r = _attention_reference(t, scale_value, causal)
        return r if training else {"o": r["o"]}

    return finish("sdpa_composite_fwd", g, tensors, build, reference=None if dropout else reference,
                  notes="" if training else "inference keeps cuDNN's virtual softmax stats (allow_unconsumed)",
                  params=dict(b=b, h=h, s_q=s_q, s_kv=s_kv, d=d, training=training, causal=causal, dropout=dropout))


@pattern_function
def sdpa_softmax_fwd(b=2, h=4, s_q=128, s_kv=128, d=64, *, training=True, causal=False, attn_scale=None,
                     data_type=F16, build=True, name="sdpa_softmax_fwd"):
    """Attention forward around the dedicated SOFTMAX (cuDNN 9.20+; cudnn-frontend's graph from 9.21): S = Q @ K^T
    (K read transposed through its strides) * scale; with ``causal`` a DIAGONAL_BAND_MASK keeping row >= column;
    P = SOFTMAX(S) in the I/O type, with its fp32 log-sum-exp stats as a real output when ``training``; O = P @ V.
    cuDNN 9.28.1 runs it with its fused attention engines on an H100/H200."""
    b, h, s_q, s_kv, d = _sizes(b, h, s_q, s_kv, d)
    g = Graph(name, io_data_type=data_type)
    q = _bshd(g, [b, h, s_q, d], "q")
    kt = g.tensor([b, h, d, s_kv], _transposed(shapes.bshd_strides([b, h, s_kv, d])), name="k_t")
    v = _bshd(g, [b, h, s_kv, d], "v")
    tensors = {"q": q, "k_t": kt, "v": v}
    scale_value = attention_scale(attn_scale, d)
    scale = tensors["attn_scale"] = g.scalar(scale_value, name="attn_scale")
    s = tensors["s"] = g.mul(g.matmul(q, kt, name="s_raw"), scale, name="s")
    if causal:
        fill = tensors["band_fill"] = g.scalar(-3.4e38, name="band_fill")
        s = tensors["s_masked"] = g.diagonal_band_mask(s, fill, comparison="CMP_GE", name="s_masked")
    sm = g.softmax(s, stats=training, output_data_type=g.io_data_type, name="softmax")
    tensors.update(p=sm["y"], stats=sm["stats"])
    tensors["o"] = g.matmul(sm["y"], v, output=_bshd(g, [b, h, s_q, d], "o", data_type))

    def reference(t):
        r = _attention_reference(t, scale_value, causal)
        return r if training else {"o": r["o"]}

    return finish(name, g, tensors, build, reference=reference,
                  params=dict(b=b, h=h, s_q=s_q, s_kv=s_kv, d=d, training=training, causal=causal))


@pattern_function
def diagonal_band_mask(b=2, h=4, s_q=128, s_kv=128, d=64, *, training=True, attn_scale=None, data_type=F16,
                       build=True):
    """The causal attention forward of ``sdpa_softmax_fwd``: its DIAGONAL_BAND_MASK (cuDNN 9.20+) keeps row >=
    column of the scores before the SOFTMAX (what the mask alone does not get: an engine of its own)."""
    return sdpa_softmax_fwd(b, h, s_q, s_kv, d, training=training, causal=True, attn_scale=attn_scale,
                            data_type=data_type, build=build, name="diagonal_band_mask")


@pattern_function
def sdpa_composite_bwd(b=2, h=4, s_q=128, s_kv=128, d=64, *, causal=False, dropout=0.0, attn_scale=None,
                       dq_accumulator=True, data_type=F16, build=True):
    """The classic fused-attention backward graph (cudnn-frontend's composite SDPA backward): softmax_sum =
    sum_d(dO * O); P = exp(Q @ K^T * scale [masked] - stats) [* dropout mask / (1-p)]; dV = P^T @ dO;
    dS = (dO @ V^T [* mask] - softmax_sum) * P [/ (1-p)] * scale; dK = dS^T @ Q; dQ = dS @ K. The transposes are
    RESHAPE operations with swapped strides; with ``dq_accumulator`` dQ goes through a real fp32 accumulator
    (F16x16 reordering) and an IDENTITY to dQ."""
    g, (b, h, s_q, s_kv, d), dropout, q, kt = _composite_start("sdpa_composite_bwd", b, h, s_q, s_kv, d, dropout,
                                                                data_type)
    kvs = shapes.bshd_strides([b, h, s_kv, d])
    vt = g.tensor([b, h, d, s_kv], _transposed(kvs), name="v_t")
    o, do = _bshd(g, [b, h, s_q, d], "o"), _bshd(g, [b, h, s_q, d], "do")
    stats = g.tensor([b, h, s_q, 1], data_type=F32, name="stats")
    scale = g.scalar(attention_scale(attn_scale, d), name="attn_scale")
    tensors = {"q": q, "k_t": kt, "v_t": vt, "o": o, "do": do, "stats": stats, "attn_scale": scale}
    mask = None
    if dropout:
        r = g.rng([b, h, s_q, s_kv], probability=1.0 - dropout, output=False, name="dropout")
        mask = r["y"]
        drop_scale = g.scalar(1.0 / (1.0 - dropout), name="dropout_scale")
        keep_scale = g.scalar(1.0 - dropout, name="dropout_scale_inv")
        tensors.update(dropout_seed=r["seed"], dropout_offset=r["offset"], dropout_scale=drop_scale,
                       dropout_scale_inv=keep_scale)
    else:
        keep_scale = tensors["one"] = g.scalar(1.0, name="one")
    softmax_sum = g.mul(g.reduction(g.mul(do, o, name="do_o"), "ADD", axes=[3], name="do_o_sum"), keep_scale,
                        name="softmax_sum")
    s = g.mul(g.matmul(q, kt, name="s"), scale, name="s_scaled")
    if causal:
        s = _causal_mask(g, s, tensors)
    exp_s = g.exp(g.sub(s, stats, name="s_minus_stats"), name="exp_s")
    p = exp_s
    if mask is not None:
        p = g.mul(g.mul(p, mask, name="p_dropped"), tensors["dropout_scale"], name="p_scaled")
    t_strides = [h * s_q * s_kv, s_q * s_kv, 1, s_kv]
    p_t = g.reshape(p, [b, h, s_kv, s_q], strides=t_strides, output_data_type=data_type, name="p_t")
    dv = g.matmul(p_t, do, output=g.tensor([b, h, s_kv, d], kvs, data_type, name="dv"))
    dp = g.mul(g.matmul(do, vt, name="dp"), mask if mask is not None else keep_scale, name="dp_masked")
    ds = g.mul(g.sub(dp, softmax_sum, name="dp_minus_sum"), exp_s, name="ds_unscaled")
    if mask is not None:
        ds = g.mul(ds, tensors["dropout_scale"], name="ds_dropout")
    ds = g.mul(ds, scale, name="ds")
    ds_t = g.reshape(ds, [b, h, s_kv, s_q], strides=t_strides, output_data_type=data_type, name="ds_t")
    dk = g.matmul(ds_t, q, output=g.tensor([b, h, s_kv, d], kvs, data_type, name="dk"))
    k = g.reshape(kt, [b, h, s_kv, d], strides=kvs, output_data_type=data_type, name="k")
    dq_dims = [b, h, s_q, d]
    if dq_accumulator:
        acc = g.tensor(dq_dims, shapes.packed_strides(dq_dims), F32, name="dq_accum",
                       reordering_mode=TensorReordering.CUDNN_TENSOR_REORDERING_F16x16)
        g.matmul(ds, k, output=acc)
        dq = g.pointwise("IDENTITY", acc, output=_bshd(g, dq_dims, "dq", data_type))
        tensors["dq_accum"] = acc
    else:
        dq = g.matmul(ds, k, output=_bshd(g, dq_dims, "dq", data_type))
    tensors.update(softmax_sum=softmax_sum, exp_s=exp_s, p_t=p_t, ds=ds, ds_t=ds_t, k=k, dq=dq, dk=dk, dv=dv)
    return finish("sdpa_composite_bwd", g, tensors, build,
                  params=dict(b=b, h=h, s_q=s_q, s_kv=s_kv, d=d, causal=causal, dropout=dropout,
                              dq_accumulator=dq_accumulator))


