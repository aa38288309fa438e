"""Attention: the unified SOFTMAX, SDPA_FWD and SDPA_BWD, and DIAGONAL_BAND_MASK. (The composite attention is
matmuls, pointwise operations and reductions: those families compute it.)

SOFTMAX over the last axis: Y = exp(X - max) / sum; statistics [..., 1]: ``stats`` the log-sum-exp max + log(sum)
(times log2(e) with ``stats_log2``), ``max``, ``sum_exp`` = sum(exp(X - max)).
SDPA_FWD: Q [b, h_q, s_q, d], K [b, h_k, s_kv, d], V [b, h_v, s_kv, d_v] (query head h reads K head
h // (h_q / h_k), V head h // (h_q / h_v)); S = Q K^T * scale, O = softmax(S) V, stats = log-sum-exp of S's rows.
``seq_len_kv`` [b, 1, 1, 1] masks the keys at and past it; query rows at and past ``seq_len_q`` give O = 0 and
stats = 0. SDPA_BWD: dQ, dK, dV of that forward from dO, O and the saved stats.
DIAGONAL_BAND_MASK: Y = X where the comparison of the (shifted) row and column index holds, else the fill B —
with a right bound (no left bound): CMP(row + s_kv - s_q + shift, col); with a left bound: CMP(col + left - s_kv
+ s_q, row), each of s_kv, s_q, shift only when its tensor is set (cudnn-frontend's composite of this mask)."""
from __future__ import annotations

import math

import numpy as np

from cudnn_backend._bindings.enums import PointwiseMode
from cudnn_backend.reference._blocks import Request, full, ravel
from cudnn_backend.reference._ops import Op, Unsupported, element_coords, grid, register, scalar
from cudnn_backend.reference.pointwise import FUNCTIONS

__all__ = ["Softmax", "SdpaForward", "SdpaBackward", "DiagonalBandMask", "softmax_rows", "attention"]

_LOG2_E = 1.0 / math.log(2.0)


def softmax_rows(x):
    """(Y, log-sum-exp, max, sum of exp) over the last axis (statistics keep it as size 1)."""
    m = x.max(axis=-1, keepdims=True)
    e = np.exp(x - m)
    s = e.sum(axis=-1, keepdims=True)
    return e / s, m + np.log(s), m, s


@register("SOFTMAX")
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


@register("SDPA_FWD")
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


@register("SDPA_BWD")
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


_CMP = {int(m) for m in PointwiseMode if m.name.startswith("CUDNN_POINTWISE_CMP_")}


@register("DIAGONAL_BAND_MASK")
class DiagonalBandMask(Op):
    def __init__(self, node, graph):
        super().__init__(node, graph)
        self.x, self.fill, self.y = self.need("xdesc"), self.need("bdesc"), self.need("ydesc")
        self.refuse_set("cu_seq_len_qdesc", "cu_seq_len_kvdesc", why="ragged sequences are not modelled")
        mode = node.attr("comparison_mode")
        if mode is None or int(mode) not in _CMP:
            raise Unsupported(f"comparison mode {mode!r} is not a CMP_ pointwise mode")
        self.compare = FUNCTIONS[PointwiseMode(int(mode))][1]
        self.q_len, self.kv_len = node.uid("seq_len_qdesc"), node.uid("seq_len_kvdesc")
        self.left, self.shift = node.uid("left_bound_desc"), node.uid("shift_right_bound_desc")
        if self.left is not None and self.shift is not None:
            raise Unsupported("both a left bound and a shifted right bound")
        xd = self.dims(self.x)
        if len(xd) != 4 or self.dims(self.y) != xd:
            raise Unsupported(f"x {list(xd)} / y {list(self.dims(self.y))} are not one [b, h, s_q, s_kv]")
        if math.prod(self.dims(self.fill)) != 1:
            raise Unsupported("the fill B is not one value")
        for u in (self.q_len, self.kv_len):
            if u is not None and math.prod(self.dims(u)) != xd[0]:
                raise Unsupported(f"{self.info(u).name} has {math.prod(self.dims(u))} values for batch {xd[0]}")

    def _mask(self, x, coords, values):
        b, _, row, col = coords

        def per_batch(u):
            return np.asarray(values[u]).reshape(-1)[b] if u is not None else 0

        if self.left is None:
            r = row + per_batch(self.kv_len) - per_batch(self.q_len)
            if self.shift is not None:
                r = r + scalar(values, self.shift)
            keep = self.compare(r, col, None, None)
        else:
            c = col + scalar(values, self.left) - per_batch(self.kv_len) + per_batch(self.q_len)
            keep = self.compare(c, row, None, None)
        return np.where(keep != 0, x, scalar(values, self.fill))

    def dense(self, values):
        xd = self.dims(self.x)
        return {self.y: self._mask(values[self.x], np.ix_(*[np.arange(d) for d in xd]), values)}

    def pull(self, wanted, cheap):
        if self.all_whole(wanted):
            return super().pull(wanted, cheap)
        want = wanted[self.y]
        needs = {u: full(self.dims(u)) for u in self.inputs if u != self.x}
        needs[self.x] = want
        coords = grid(self.dims(self.y), want)
        return needs, lambda values: {self.y: self._mask(values[self.x], coords, values)}

