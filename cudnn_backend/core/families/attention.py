"""Attention: SDPA_FWD, SDPA_BWD, SOFTMAX and PAGED_CACHE_LOAD (the paged K/V cache read).

``Graph`` methods (the mixin): Attention: softmax (the unified SOFTMAX of cuDNN 9.20+, or the composite of reductions
and pointwise ops), scaled dot-product attention forward and backward, paged KV-cache loads. (The diagonal band mask
that makes attention causal is in ``band``.)

Reference ops: the unified SOFTMAX, SDPA_FWD and SDPA_BWD (the composite attention is matmuls, pointwise
operations and reductions: those families compute it); PAGED_CACHE_LOAD is not computed.

SOFTMAX over the last axis: Y = exp(X - max) / sum; statistics [..., 1]: ``stats`` the log-sum-exp max + log(sum)
(times log2(e) with ``stats_log2``), ``max``, ``sum_exp`` = sum(exp(X - max)).
SDPA_FWD: Q [b, h_q, s_q, d], K [b, h_k, s_kv, d], V [b, h_v, s_kv, d_v] (query head h reads K head
h // (h_q / h_k), V head h // (h_q / h_v)); S = Q K^T * scale, O = softmax(S) V, stats = log-sum-exp of S's rows.
``seq_len_kv`` [b, 1, 1, 1] masks the keys at and past it; query rows at and past ``seq_len_q`` give O = 0 and
stats = 0. SDPA_BWD: dQ, dK, dV of that forward from dO, O and the saved stats.
"""
from __future__ import annotations

import math

import numpy as np

from cudnn_backend._bindings.enums import AttributeName as A
from cudnn_backend._bindings.enums import DataType
from cudnn_backend.core import graph_limits
from cudnn_backend.core.families import _build
from cudnn_backend.core.families._build import as_bool, output_type, require
from cudnn_backend.core.families._checks import dims, fail, need, need_float, op_name
from cudnn_backend.core.families._family import Family
from cudnn_backend.core.families._reference import (
    Op,
    Request,
    Unsupported,
    element_coords,
    full,
    not_computed,
    ravel,
    scalar,
)
from cudnn_backend.errors import GraphError

__all__ = ["FAMILY", "attention_scale", "softmax_stats_dims", "AttentionOps",
           "softmax_rows", "Softmax", "attention", "SdpaForward",
           "SdpaBackward", "PAGED_CACHE_LOAD_NOT_COMPUTED"]


def attention_scale(attn_scale, d):
    """The scale of attention scores: ``1/sqrt(d)`` for None, a tensor as it is, a number when finite (an infinite
    one makes every score infinite, and every output NaN; NaN is refused where the scalar is made)."""
    if attn_scale is None:
        return 1.0 / math.sqrt(d)
    if isinstance(attn_scale, (int, float, np.floating, np.integer)) and not isinstance(attn_scale, bool) and \
            math.isinf(attn_scale):
        raise ValueError(f"attn_scale: {float(attn_scale)} makes every score infinite (and every output NaN); give "
                         "a finite scale")
    return attn_scale


def softmax_stats_dims(x_dims):
    """Dims of the unified SOFTMAX's statistics (log-sum-exp, max, sum of exponentials) of scores ``x_dims``
    [b, h, s_q, s_kv], or SDPA's of its queries [b, h, s_q, d]: [b, h, s_q, 1] (cuDNN 9.28.1 takes 4-d tensors
    only, the last dim 1)."""
    if len(x_dims) != 4:
        fail(f"softmax: x is {list(x_dims)}; the unified SOFTMAX takes attention scores [b, h, s_q, s_kv] (4-d)")
    return [*x_dims[:3], 1]


_F32 = DataType.CUDNN_DATA_FLOAT


def attention_problem(q_dims, k_dims, v_dims) -> str | None:
    """What keeps Q, K, V from being one attention's (SDPA_FWD's and SDPA_BWD's rule), else None: each
    [b, h, s, d]; K and V of Q's batch, K of Q's head dim, V of K's sequence length, h_q a multiple of h_k and
    h_v."""
    for d, nm in ((q_dims, "q"), (k_dims, "k"), (v_dims, "v")):
        if len(d) != 4:
            return f"{nm}: attention tensors are [b, h, s, d], not {list(d)}"
    b, h, _, d = q_dims
    if k_dims[3] != d or k_dims[0] != b or v_dims[0] != b or v_dims[2] != k_dims[2] or h % k_dims[1] or \
            h % v_dims[1]:
        return (f"q {list(q_dims)}, k {list(k_dims)}, v {list(v_dims)}: batch, head counts (h_q a multiple of h_k "
                "and h_v), sequence and head dims must agree")
    return None


def _attention_dims(q, k, v):
    """(b, h_q, s_q, d, d_v) of Q, K, V; GraphError where ``attention_problem`` finds one."""
    problem = attention_problem(q.shape, k.shape, v.shape)
    if problem is not None:
        raise GraphError(problem)
    return (*q.shape, v.shape[3])


class AttentionOps:
    """``softmax``, ``softmax_composite``, ``sdpa_fwd``, ``sdpa_bwd``, ``paged_cache_load``."""

    def softmax(self, x, *, stats=False, max_sum=False, output=False, output_data_type=None, name="softmax"):
        """The unified SOFTMAX (cuDNN 9.20+) of attention scores X [b, h, s_q, s_kv] over the last axis:
        ``{"y", "stats", "max", "sum_exp"}`` (statistics [b, h, s_q, 1] fp32, real outputs: log-sum-exp with
        ``stats``, max and sum of exponentials with ``max_sum``). Y is laid out like X; for the P @ V matmul that
        follows, give it V's type (``output_data_type``). cuDNN 9.28.1 runs it fused into attention (Q @ K^T ->
        softmax -> @ V) on an H100/H200, not alone."""
        name = _build.as_name(name, "softmax")
        require("CUDNN_BACKEND_OPERATION_SOFTMAX_DESCRIPTOR", "Graph.softmax")
        x = self._need_tensor(x, "x")
        sdims = softmax_stats_dims(x.shape)
        y = self._output(output, x.shape, x, output_data_type, f"{name}_y", strides=x.strides)
        op = self._operation("SOFTMAX", xdesc=x, ydesc=y)
        out = {"y": y, "stats": None, "max": None, "sum_exp": None}
        if as_bool(stats, "stats"):
            out["stats"] = op.stats_desc = self.tensor(sdims, _build.packed_strides(sdims), _F32, name=f"{name}_stats")
        if as_bool(max_sum, "max_sum"):
            out["max"] = op.max_desc = self.tensor(sdims, _build.packed_strides(sdims), _F32, name=f"{name}_max")
            out["sum_exp"] = op.sum_exp_desc = self.tensor(sdims, _build.packed_strides(sdims), _F32,
                                                           name=f"{name}_sum_exp")
        self.add(op)
        return out

    def softmax_composite(self, s, *, stats=True, p_data_type=None, name="softmax"):
        """Softmax over the last axis from reductions and pointwise operations (what runs on every cuDNN 9):
        max, sub, exp, sum, div; with ``stats`` also max + log(sum), a real fp32 output when ``stats`` is True
        and a virtual tensor nothing reads when it is ``"virtual"`` (the fused attention engines expect it even
        in inference). Returns ``{"p", "stats", "max", "sum_exp"}``."""
        name = _build.as_name(name, "softmax")
        s = self._need_tensor(s, "s")
        axis = len(s.shape) - 1
        mx = self.reduction(s, "MAX", axes=[axis], name=f"{name}_max")
        e = self.exp(self.sub(s, mx, name=f"{name}_sub"), name=f"{name}_exp")
        sm = self.reduction(e, "ADD", axes=[axis], name=f"{name}_sum_exp")
        st = None
        if stats:
            lg = self.log(sm, name=f"{name}_log")
            if stats == "virtual":
                st = self.allow_unconsumed(self.bias(mx, lg, name=f"{name}_stats"))
            else:
                st = self.bias(mx, lg, output=True, output_data_type=_F32, name=f"{name}_stats")
        p = self.div(e, sm, output_data_type=p_data_type, name=f"{name}_p")
        return {"p": p, "stats": st, "max": mx, "sum_exp": sm}

    def _sequence_lengths(self, seq_len_q, seq_len_kv):
        """(seq_len_q, seq_len_kv), both given: cuDNN 9.28 refuses one alone, and 9.19 plans it (what its mask then
        is, no document says)."""
        if seq_len_q is None or seq_len_kv is None:
            given, missing = ("seq_len_q", "seq_len_kv") if seq_len_kv is None else ("seq_len_kv", "seq_len_q")
            raise GraphError(f"{missing}: {given} is given without it; padding masks both sides: give both (the "
                             "full length for the side that is not padded) or neither")
        return self._need_tensor(seq_len_q, "seq_len_q"), self._need_tensor(seq_len_kv, "seq_len_kv")

    def sdpa_fwd(self, q, k, v, *, attn_scale=None, stats=True, seq_len_q=None, seq_len_kv=None, output=True,
                 output_data_type=None, name="sdpa"):
        """The unified SDPA_FWD (cuDNN 9.13+): Q [b,h_q,s_q,d], K [b,h_k,s_kv,d], V [b,h_v,s_kv,d_v] ->
        ``{"o", "stats", "attn_scale"}``; O [b,h_q,s_q,d_v] in Q's layout, stats [b,h_q,s_q,1] fp32 (training)."""
        name = _build.as_name(name, "sdpa")
        require("CUDNN_BACKEND_OPERATION_SDPA_FWD_DESCRIPTOR", "unified SDPA forward")
        q, k, v = self._need_tensor(q, "q"), self._need_tensor(k, "k"), self._need_tensor(v, "v")
        b, h, s_q, d, d_v = _attention_dims(q, k, v)
        stats = as_bool(stats, "stats")
        o = self._output(output, [b, h, s_q, d_v], q, output_type(output_data_type, q.data_type), f"{name}_o")
        scale = self._scalar_or_tensor(attention_scale(attn_scale, d), 4,
                                       f"{name}_attn_scale", what="attn_scale")
        op = self._operation("SDPA_FWD", qdesc=q, kdesc=k, vdesc=v, odesc=o, scaledesc=scale)
        st = None
        if stats:
            sd = [b, h, s_q, 1]
            st = op.statsdesc = self.tensor(sd, _build.packed_strides(sd), _F32, name=f"{name}_stats")
        if seq_len_q is not None or seq_len_kv is not None:
            op.seq_len_qdesc, op.seq_len_kvdesc = self._sequence_lengths(seq_len_q, seq_len_kv)
        self.add(op)
        return {"o": o, "stats": st, "attn_scale": scale}

    def sdpa_bwd(self, q, k, v, o, do, stats, *, attn_scale=None, seq_len_q=None, seq_len_kv=None,
                 output_data_type=None, name="sdpa_bwd"):
        """The unified SDPA_BWD (cuDNN 9.17+): ``{"dq", "dk", "dv", "attn_scale"}`` shaped like Q, K, V (cuDNN
        9.19 refuses every such graph at finalize; the composite backward of the patterns runs instead)."""
        name = _build.as_name(name, "sdpa_bwd")
        require("CUDNN_BACKEND_OPERATION_SDPA_BWD_DESCRIPTOR", "unified SDPA backward")
        q, k, v = self._need_tensor(q, "q"), self._need_tensor(k, "k"), self._need_tensor(v, "v")
        o, do, stats = self._need_tensor(o, "o"), self._need_tensor(do, "do"), self._need_tensor(stats, "stats")
        b, h, s_q, d, d_v = _attention_dims(q, k, v)
        for t, nm in ((o, "o"), (do, "do")):
            if list(t.shape) != [b, h, s_q, d_v]:
                raise GraphError(f"{nm}: {t.describe()} is not [b, h_q, s_q, d_v] = {[b, h, s_q, d_v]}, the "
                                 f"forward's output of q {list(q.shape)} and v {list(v.shape)}")
        if list(stats.shape) != [b, h, s_q, 1] or stats.data_type != _F32:
            raise GraphError(f"stats: {stats.describe()} is not CUDNN_DATA_FLOAT [b, h_q, s_q, 1] = "
                             f"{[b, h, s_q, 1]}, the statistics the forward writes for q {list(q.shape)}")

        def grad(t, nm):
            return self.tensor(t.shape, t.strides, output_type(output_data_type, t.data_type), name=f"{name}_{nm}")

        dq, dk, dv = grad(q, "dq"), grad(k, "dk"), grad(v, "dv")
        scale = self._scalar_or_tensor(attention_scale(attn_scale, d), 4,
                                       f"{name}_attn_scale", what="attn_scale")
        op = self._operation("SDPA_BWD", qdesc=q, kdesc=k, vdesc=v, odesc=o, doddesc=do, statsdesc=stats,
                             scaledesc=scale, dqdesc=dq, dkdesc=dk, dvdesc=dv)
        if seq_len_q is not None or seq_len_kv is not None:
            op.seq_len_qdesc, op.seq_len_kvdesc = self._sequence_lengths(seq_len_q, seq_len_kv)
        self.add(op)
        return {"dq": dq, "dk": dk, "dv": dv, "attn_scale": scale}

    def paged_cache_load(self, container, page_table, seq_len, *, kind="k", max_seq_len, output=False,
                         output_data_type=None, name="paged"):
        """PAGED_CACHE_LOAD (cuDNN 9.4+): gather a K or V cache from ``container`` [blocks, H, block_size, D] through
        ``page_table`` [B, 1, ceil(max_seq_len / block_size), 1] INT32 and ``seq_len`` [B,1,1,1]. K comes out as
        K^T [B,H,D,S] (what Q @ K^T reads), V as [B,H,S,D] (cudnn-frontend's layouts)."""
        name = _build.as_name(name, "paged")
        require("CUDNN_BACKEND_OPERATION_PAGED_CACHE_LOAD_DESCRIPTOR", "paged cache load")
        container = self._need_tensor(container, "container")
        page_table, seq_len = self._need_tensor(page_table, "page_table"), self._need_tensor(seq_len, "seq_len")
        from_shape = container.shape
        if len(from_shape) != 4 or len(page_table.shape) != 4:
            raise GraphError("container [blocks, H, block_size, D] and page_table [B, 1, pages, 1] are 4-d")
        s = _build.as_sizes([max_seq_len], "max_seq_len")[0]
        b, h, d = page_table.shape[0], from_shape[1], from_shape[3]
        if kind == "k":
            dims, strides = [b, h, d, s], [d * s * h, d * s, 1, d]
        elif kind == "v":
            dims, strides = [b, h, s, d], [d * s * h, d * s, d, 1]
        else:
            raise ValueError(f"kind: 'k' or 'v', not {kind!r}")
        y = self._output(output, dims, None, output_type(output_data_type, container.data_type), f"{name}_{kind}",
                         strides=strides)
        self.add(self._operation("PAGED_CACHE_LOAD", container_desc=container, page_table_desc=page_table,
                                 sequence_desc=seq_len, ydesc=y))
        return y


_LOG2_E = 1.0 / math.log(2.0)


def softmax_rows(x):
    """(Y, log-sum-exp, max, sum of exp) over the last axis (statistics keep it as size 1)."""
    m = x.max(axis=-1, keepdims=True)
    e = np.exp(x - m)
    s = e.sum(axis=-1, keepdims=True)
    return e / s, m + np.log(s), m, s


class Softmax(Op):
    def __init__(self, node, graph):
        super().__init__(node, graph)
        self.x, self.y = self.need("xdesc"), self.need("ydesc")
        self.refuse_set("sink_desc", why="how an attention sink enters the softmax is not documented in the header")
        self.stats, self.max, self.sum_exp = node.uid("stats_desc"), node.uid("max_desc"), node.uid("sum_exp_desc")
        self.log2 = bool(node.attr("stats_log2", False))
        xd = self.dims(self.x)
        if self.dims(self.y) != xd:
            raise Unsupported(f"y {list(self.dims(self.y))} is not x's dims {list(xd)}")
        for u in (self.stats, self.max, self.sum_exp):
            if u is not None and self.dims(u) != (*xd[:-1], 1):
                raise Unsupported(f"{self.info(u).name} {list(self.dims(u))} is not x's dims with the last 1")

    def _outputs(self, x):
        y, lse, m, s = softmax_rows(x)
        out = {self.y: y}
        for u, v in ((self.stats, lse * _LOG2_E if self.log2 else lse), (self.max, m), (self.sum_exp, s)):
            if u is not None:
                out[u] = v
        return out

    def dense(self, values):
        return self._outputs(values[self.x])

    def pull(self, wanted, cheap):
        if self.all_whole(wanted):
            return super().pull(wanted, cheap)
        xd = self.dims(self.x)
        picks = {u: element_coords(self.dims(u), r) for u, r in wanted.items()}
        rows = np.unique(np.concatenate([ravel(c[:, :-1], xd[:-1]) for c in picks.values()]))

        def finish(values):
            out = self._outputs(values[self.x])                                     # (R, L) / (R, 1)
            result = {}
            for u, c in picks.items():
                at = np.searchsorted(rows, ravel(c[:, :-1], xd[:-1]))
                result[u] = out[u][at, c[:, -1]]
            return result

        return {self.x: Request(1, rows)}, finish


def attention(q, k, v, scale, kv_len=None, q_len=None):
    """(O, stats) of one head's query rows (u, d) against its K (s_kv, d) and V (s_kv, d_v); ``kv_len`` masks
    keys at and past it; ``q_len`` is per query row (u,) or None: rows at or past it give zeros."""
    s = (q @ k.T) * scale
    if kv_len is not None:
        s = np.where(np.arange(k.shape[0])[None, :] < kv_len, s, -np.inf)
    p, lse, _, _ = softmax_rows(s)
    o = p @ v
    if q_len is not None:
        o = np.where(q_len[:, None], o, 0.0)
        lse = np.where(q_len[:, None], lse, 0.0)
    return o, lse


class _Sdpa(Op):
    REFUSED = ()

    def read(self, node):
        self.refuse_set(*self.REFUSED, why="not modelled (masks, paging, dropout, fp8 scaling and score "
                        "subgraphs are other operations' math)")
        self.q, self.k, self.v = self.need("qdesc"), self.need("kdesc"), self.need("vdesc")
        self.scale = self.need("scaledesc")
        self.q_len, self.kv_len = node.uid("seq_len_qdesc"), node.uid("seq_len_kvdesc")
        qd, kd, vd = self.dims(self.q), self.dims(self.k), self.dims(self.v)
        if not (len(qd) == len(kd) == len(vd) == 4):
            raise Unsupported("q, k, v are not [b, h, s, d]")
        b, hq, sq, d = qd
        if kd[0] != b or vd[0] != b or kd[3] != d or vd[2] != kd[2] or hq % kd[1] or hq % vd[1]:
            raise Unsupported(f"q {list(qd)}, k {list(kd)}, v {list(vd)} do not fit together")
        for u in (self.q_len, self.kv_len):
            if u is not None and math.prod(self.dims(u)) != b:
                raise Unsupported(f"{self.info(u).name} has {math.prod(self.dims(u))} values for batch {b}")
        self.kgroup, self.vgroup = hq // kd[1], hq // vd[1]

    def lengths(self, values):
        def per_batch(u):
            return None if u is None else np.asarray(values[u]).reshape(-1).astype(np.int64)
        return per_batch(self.q_len), per_batch(self.kv_len)

    def work(self) -> float:
        b, h, sq, d = self.dims(self.q)
        return float(b * h * sq) * self.dims(self.k)[2] * (d + self.dims(self.v)[3])


class SdpaForward(_Sdpa):
    REFUSED = ("block_mask_desc", "page_table_kdesc", "page_table_vdesc", "subgraph", "softmax_desc",
               "dropout_seed_desc", "dropout_offset_desc", "dropout_rng_dump_desc", "dropout_probability",
               "cu_seq_len_qdesc", "cu_seq_len_kvdesc", "descale_qdesc", "descale_kdesc", "descale_vdesc",
               "descale_sdesc", "scale_sdesc", "scale_odesc", "amax_sdesc", "amax_odesc")

    def __init__(self, node, graph):
        super().__init__(node, graph)
        self.read(node)
        self.o, self.stats = self.need("odesc"), node.uid("statsdesc")
        b, hq, sq, _ = self.dims(self.q)
        if self.dims(self.o) != (b, hq, sq, self.dims(self.v)[3]):
            raise Unsupported(f"o {list(self.dims(self.o))} is not [b, h_q, s_q, d_v]")
        if self.stats is not None and self.dims(self.stats) != (b, hq, sq, 1):
            raise Unsupported(f"stats {list(self.dims(self.stats))} is not [b, h_q, s_q, 1]")

    def _heads(self, rows, q_rows, values, k_index, v_index):
        """(O (R, d_v), stats (R,)) of query rows (R, 3) = (b, h, i) with their Q rows (R, d); ``k_index(b, h)`` and
        ``v_index(b, h)`` give a head's K and V."""
        scale = scalar(values, self.scale)
        q_len, kv_len = self.lengths(values)
        o = np.empty((len(rows), self.dims(self.v)[3]))
        stats = np.empty(len(rows))
        heads = rows[:, 0] * self.dims(self.q)[1] + rows[:, 1]
        for head in np.unique(heads):
            sel = np.nonzero(heads == head)[0]
            b, h = divmod(int(head), self.dims(self.q)[1])
            valid = None if q_len is None else rows[sel, 2] < q_len[b]
            oh, lse = attention(q_rows[sel], k_index(b, h // self.kgroup), v_index(b, h // self.vgroup), scale,
                                None if kv_len is None else kv_len[b], valid)
            o[sel], stats[sel] = oh, lse[:, 0]
        return o, stats

    def dense(self, values):
        b, hq, sq, _ = self.dims(self.q)
        rows = np.stack(np.unravel_index(np.arange(b * hq * sq), (b, hq, sq)), axis=-1)
        k, v = values[self.k], values[self.v]
        o, stats = self._heads(rows, values[self.q].reshape(b * hq * sq, -1), values, lambda i, h: k[i, h],
                               lambda i, h: v[i, h])
        out = {self.o: o.reshape(self.dims(self.o))}
        if self.stats is not None:
            out[self.stats] = stats.reshape(self.dims(self.stats))
        return out

    def pull(self, wanted, cheap):
        if self.all_whole(wanted) or len({self.q, self.k, self.v}) < 3:
            return super().pull(wanted, cheap)
        qd, kd, vd = self.dims(self.q), self.dims(self.k), self.dims(self.v)
        picks = {u: element_coords(self.dims(u), r) for u, r in wanted.items()}
        rows = np.unique(np.concatenate([ravel(c[:, :3], qd[:3]) for c in picks.values()]))
        row_coords = np.stack(np.unravel_index(rows, qd[:3]), axis=-1).reshape(-1, 3)
        needs = {self.q: Request(1, rows), self.scale: full(self.dims(self.scale))}
        heads = {}
        for uid, dims, group in ((self.k, kd, self.kgroup), (self.v, vd, self.vgroup)):
            if cheap(uid):
                needs[uid], heads[uid] = full(dims), None
            else:
                heads[uid] = np.unique(row_coords[:, 0] * dims[1] + row_coords[:, 1] // group)
                needs[uid] = Request(2, heads[uid])
        for u in (self.q_len, self.kv_len):
            if u is not None:
                needs[u] = full(self.dims(u))

        def head_of(values, uid, dims):
            keys, stack = heads[uid], np.asarray(values[uid])
            if keys is None:
                whole = stack.reshape(dims)
                return lambda b, h: whole[b, h]
            return lambda b, h: stack[np.searchsorted(keys, b * dims[1] + h)]

        def finish(values):
            o, stats = self._heads(row_coords, np.asarray(values[self.q]), values, head_of(values, self.k, kd),
                                   head_of(values, self.v, vd))
            out = {}
            for u, c in picks.items():
                at = np.searchsorted(rows, ravel(c[:, :3], qd[:3]))
                out[u] = o[at, c[:, 3]] if u == self.o else stats[at]
            return out

        return needs, finish


class SdpaBackward(_Sdpa):
    REFUSED = ("sink_desc", "dsink_desc", "subgraph", "cu_seq_len_qdesc", "cu_seq_len_kvdesc", "dropout_seed_desc",
               "dropout_offset_desc", "dropout_probability", "dbias_desc")

    def __init__(self, node, graph):
        super().__init__(node, graph)
        self.read(node)
        self.o, self.do, self.stats = self.need("odesc"), self.need("doddesc"), self.need("statsdesc")
        self.dq, self.dk, self.dv = self.need("dqdesc"), self.need("dkdesc"), self.need("dvdesc")

    def dense(self, values):
        q, k, v, o, do = (values[u] for u in (self.q, self.k, self.v, self.o, self.do))
        stats = values[self.stats]
        scale = scalar(values, self.scale)
        q_len, kv_len = self.lengths(values)
        kf = np.repeat(k, self.kgroup, axis=1)
        vf = np.repeat(v, self.vgroup, axis=1)
        s = np.matmul(q, np.swapaxes(kf, -1, -2)) * scale
        b, hq, sq, skv = s.shape
        keep = np.ones((b, 1, sq, skv), dtype=bool)
        if kv_len is not None:
            keep &= np.arange(skv)[None, None, None, :] < kv_len[:, None, None, None]
        if q_len is not None:
            keep &= np.arange(sq)[None, None, :, None] < q_len[:, None, None, None]
        p = np.where(keep, np.exp(s - stats), 0.0)
        dvf = np.matmul(np.swapaxes(p, -1, -2), do)
        dp = np.matmul(do, np.swapaxes(vf, -1, -2))
        delta = (do * o).sum(axis=-1, keepdims=True)
        ds = p * (dp - delta)
        dq = np.matmul(ds, kf) * scale
        dkf = np.matmul(np.swapaxes(ds, -1, -2), q) * scale
        kd, vd = self.dims(self.k), self.dims(self.v)
        return {self.dq: dq, self.dk: dkf.reshape(b, kd[1], self.kgroup, skv, -1).sum(axis=2),
                self.dv: dvf.reshape(b, vd[1], self.vgroup, skv, -1).sum(axis=2)}


#: why the reference evaluator does not compute its outputs
PAGED_CACHE_LOAD_NOT_COMPUTED = ("reads pages through a page table up to per-sequence lengths; what lies past a "
                                 "sequence and the layout of K^T are not documented in the header")

_MISREAD = "misread it (past its end where it is smaller)"
# SDPA_BWD's tensors: (attribute, plan JSON member, slot name)
_BWD = {name: (getattr(A, f"CUDNN_ATTR_OPERATION_SDPA_BWD_{attr}"), member, slot) for name, attr, member, slot in (
    ("q", "QDESC", "qDesc", "qdesc"), ("k", "KDESC", "kDesc", "kdesc"), ("v", "VDESC", "vDesc", "vdesc"),
    ("o", "ODESC", "oDesc", "odesc"), ("do", "DODDESC", "dODesc", "doddesc"), ("stats", "STATSDESC", "statsDesc",
    "statsdesc"), ("dq", "DQDESC", "dQDesc", "dqdesc"), ("dk", "DKDESC", "dKDesc", "dkdesc"),
    ("dv", "DVDESC", "dVDesc", "dvdesc"))}


# SDPA_FWD's tensors the tile counts read: (attribute, plan JSON member, slot name)
_FWD = {name: (getattr(A, f"CUDNN_ATTR_OPERATION_SDPA_FWD_{attr}"), member, slot) for name, attr, member, slot in (
    ("q", "QDESC", "Q", "qdesc"), ("k", "KDESC", "K", "kdesc"), ("v", "VDESC", "V", "vdesc"),
    ("o", "ODESC", "O", "odesc"))}


def _check_tile_counts(op, tensors):
    """Each dim of the ``(slot, dims)`` tensors (batch, heads, sequence, head dim) must not wrap cuDNN's 32-bit tile
    counts (``graph_limits``): a sequence or head count of 2^32 crashes SDPA's engine configs (SIGFPE, forward on
    cuDNN 9.19.0 and 9.28.1, backward on 9.28.1)."""
    if all(d is None or max(d, default=0) < graph_limits.TILE_COUNT_LOW for _, d in tensors):
        return  # (the usual case: no label made)
    extents = [(f"dim {i} of {slot} {list(d)}", n) for slot, d in tensors if d is not None for i, n in enumerate(d)]
    problem = graph_limits.tile_count_problem(extents)
    if problem is not None:
        fail(f"{op_name(op)}: {problem}")


def check_sdpa_forward(op):
    """SDPA_FWD's extents must not wrap cuDNN's tile counts (``_check_tile_counts``), and the statistics it writes are
    fp32 [b, h_q, s_q, 1]: cuDNN 9.19.0 and 9.28.1 plan a half or a smaller statistics tensor and write fp32 rows
    past it. cuDNN checks the other shapes."""
    tensors = [(slot, dims(op.value_of(attr))) for attr, _, slot in _FWD.values()]
    _need_statistics(op, op.value_of(A.CUDNN_ATTR_OPERATION_SDPA_FWD_STATSDESC), tensors[0][1],
                     "a row's statistics per query", "cuDNN writes fp32 statistics", "write out of bounds",
                     "write past it")
    _check_tile_counts(op, tensors)


def _need_statistics(op, stats, q, whose, why_float, harm, float_harm):
    """SDPA's softmax statistics (``statsdesc``): fp32, one per query row of ``q`` (``softmax_stats_dims``)."""
    if stats is None:
        return
    if q is not None and len(q) == 4:
        need(op, stats, "statsdesc", softmax_stats_dims(q), f"{whose} of qdesc {list(q)}", harm)
    need_float(op, stats, "statsdesc", why_float, float_harm)


def check_sdpa_backward(op):
    """SDPA_BWD reads Q, K, V of one attention (``attention_problem``), the forward's O [b, h_q, s_q, d_v] and fp32
    statistics [b, h_q, s_q, 1] and dO of O's shape, and writes dQ, dK, dV of Q's, K's and V's: cuDNN 9.28.1 builds
    plans of other shapes (a [b, h, 1, 1] or [b, h, s_q, d] stats tensor, an O of another s_q or d_v, a K of
    another head dim, half statistics) and reads or writes past them or misreads them."""
    t = {name: op.value_of(attr) for name, (attr, _, _) in _BWD.items()}
    q, k, v = dims(t["q"]), dims(t["k"]), dims(t["v"])
    if q is not None and k is not None and v is not None:
        problem = attention_problem(q, k, v)
        if problem is not None:
            fail(f"{op_name(op)}: {problem}")
        need(op, t["o"], "odesc", (*q[:3], v[3]), f"the forward's output of qdesc {list(q)} and vdesc {list(v)}",
             _MISREAD)
    _need_statistics(op, t["stats"], q, "the forward's statistics", "the forward writes fp32 statistics", _MISREAD,
                     "misread it")
    need(op, t["do"], "doddesc", dims(t["o"]), "the gradient of O has O's shape", _MISREAD)
    for grad, of in (("dq", "q"), ("dk", "k"), ("dv", "v")):
        need(op, t[grad], _BWD[grad][2], dims(t[of]), f"the gradient of {of.upper()} has its shape")
    _check_tile_counts(op, [(_BWD[name][2], dims(t[name])) for name in ("q", "k", "v", "o", "do")])


FAMILY = Family(
    "attention", ("SDPA_FWD", "SDPA_BWD", "SOFTMAX", "PAGED_CACHE_LOAD"),
    finalize_checks={"SDPA_FWD": check_sdpa_forward, "SDPA_BWD": check_sdpa_backward},
    json_members={"SDPA_FWD": {attr: member for attr, member, _ in _FWD.values()},
                  "SDPA_BWD": {attr: member for attr, member, _ in _BWD.values()}},
    shape_rules=(softmax_stats_dims,),
    graph_methods=("sdpa_fwd", "sdpa_bwd", "softmax", "softmax_composite", "paged_cache_load"),
    graph_mixin=AttentionOps,
    reference_ops={"SOFTMAX": Softmax, "SDPA_FWD": SdpaForward, "SDPA_BWD": SdpaBackward,
                   "PAGED_CACHE_LOAD": not_computed(PAGED_CACHE_LOAD_NOT_COMPUTED)},
    doc=__doc__)
