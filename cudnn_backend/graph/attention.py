"""Attention: softmax (the unified SOFTMAX of cuDNN 9.20+, or the composite of reductions and pointwise ops),
scaled dot-product attention forward and backward, paged KV-cache loads. (The diagonal band mask that makes
attention causal is in ``band``.)"""
from __future__ import annotations

import math

from cudnn_backend._bindings.enums import DataType
from cudnn_backend.errors import GraphError
from cudnn_backend.graph import shapes
from cudnn_backend.graph._util import require
from cudnn_backend.typed import OperationPagedCacheLoad, OperationSdpaBwd, OperationSdpaFwd, OperationSoftmax

__all__ = ["AttentionOps"]

_F32 = DataType.CUDNN_DATA_FLOAT


class AttentionOps:
    """``softmax``, ``softmax_composite``, ``sdpa_fwd``, ``sdpa_bwd``, ``paged_cache_load``."""

    def softmax(self, x, *, stats=False, max_sum=False, output=False, output_data_type=None, name="softmax"):
        """The unified SOFTMAX (cuDNN 9.20+) of attention scores X [b, h, s_q, s_kv] over the last axis:
        ``{"y", "stats", "max", "sum_exp"}`` (statistics [b, h, s_q, 1] fp32, real outputs: log-sum-exp with
        ``stats``, max and sum of exponentials with ``max_sum``). Y is laid out like X; for the P @ V matmul that
        follows, give it V's type (``output_data_type``). cuDNN 9.28.1 runs it fused into attention (Q @ K^T ->
        softmax -> @ V) on an H100/H200, not alone."""
        require("CUDNN_BACKEND_OPERATION_SOFTMAX_DESCRIPTOR", "Graph.softmax")
        x = self._need_tensor(x, "x")
        sdims = shapes.softmax_stats_dims(x.shape)
        y = self._output(output, x.shape, x, output_data_type, f"{name}_y", strides=x.strides)
        op = OperationSoftmax(xdesc=x, ydesc=y)
        out = {"y": y, "stats": None, "max": None, "sum_exp": None}
        if stats:
            out["stats"] = op.stats_desc = self.tensor(sdims, shapes.packed_strides(sdims), _F32, name=f"{name}_stats")
        if max_sum:
            out["max"] = op.max_desc = self.tensor(sdims, shapes.packed_strides(sdims), _F32, name=f"{name}_max")
            out["sum_exp"] = op.sum_exp_desc = self.tensor(sdims, shapes.packed_strides(sdims), _F32,
                                                           name=f"{name}_sum_exp")
        self.add(op)
        return out

    def softmax_composite(self, s, *, stats=True, p_data_type=None, name="softmax"):
        """Softmax over the last axis from reductions and pointwise operations (what runs on every cuDNN 9):
        max, sub, exp, sum, div; with ``stats`` also max + log(sum), a real fp32 output when ``stats`` is True
        and a virtual tensor nothing reads when it is ``"virtual"`` (the fused attention engines expect it even
        in inference). Returns ``{"p", "stats", "max", "sum_exp"}``."""
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

    def sdpa_fwd(self, q, k, v, *, attn_scale=None, stats=True, seq_len_q=None, seq_len_kv=None, output=True,
                 output_data_type=None, name="sdpa"):
        """The unified SDPA_FWD (cuDNN 9.13+): Q [b,h_q,s_q,d], K [b,h_k,s_kv,d], V [b,h_v,s_kv,d_v] ->
        ``{"o", "stats", "attn_scale"}``; O [b,h_q,s_q,d_v] in Q's layout, stats [b,h_q,s_q,1] fp32 (training)."""
        require("CUDNN_BACKEND_OPERATION_SDPA_FWD_DESCRIPTOR", "unified SDPA forward")
        q, k, v = self._need_tensor(q, "q"), self._need_tensor(k, "k"), self._need_tensor(v, "v")
        for t, nm in ((q, "q"), (k, "k"), (v, "v")):
            if len(t.shape) != 4:
                raise GraphError(f"{nm}: attention tensors are [b, h, s, d], not {list(t.shape)}")
        b, h, s_q, d = q.shape
        if k.shape[3] != d or k.shape[0] != b or v.shape[2] != k.shape[2] or h % k.shape[1] or h % v.shape[1]:
            raise GraphError(f"q {list(q.shape)}, k {list(k.shape)}, v {list(v.shape)}: batch, head counts "
                             "(h_q a multiple of h_k and h_v), sequence and head dims must agree")
        odims = [b, h, s_q, v.shape[3]]
        o = self._output(output, odims, q, output_data_type or q.data_type, f"{name}_o")
        scale = self._scalar_or_tensor(1.0 / math.sqrt(d) if attn_scale is None else attn_scale, 4,
                                       f"{name}_attn_scale")
        op = OperationSdpaFwd(qdesc=q, kdesc=k, vdesc=v, odesc=o, scaledesc=scale)
        st = None
        if stats:
            sd = [b, h, s_q, 1]
            st = op.statsdesc = self.tensor(sd, shapes.packed_strides(sd), _F32, name=f"{name}_stats")
        if seq_len_q is not None:
            op.seq_len_qdesc = self._need_tensor(seq_len_q, "seq_len_q")
        if seq_len_kv is not None:
            op.seq_len_kvdesc = self._need_tensor(seq_len_kv, "seq_len_kv")
        self.add(op)
        return {"o": o, "stats": st, "attn_scale": scale}

    def sdpa_bwd(self, q, k, v, o, do, stats, *, attn_scale=None, seq_len_q=None, seq_len_kv=None,
                 output_data_type=None, name="sdpa_bwd"):
        """The unified SDPA_BWD (cuDNN 9.17+): ``{"dq", "dk", "dv", "attn_scale"}`` shaped like Q, K, V (cuDNN
        9.19 refuses every such graph at finalize; the composite backward of the patterns runs instead)."""
        require("CUDNN_BACKEND_OPERATION_SDPA_BWD_DESCRIPTOR", "unified SDPA backward")
        q, k, v = self._need_tensor(q, "q"), self._need_tensor(k, "k"), self._need_tensor(v, "v")
        o, do, stats = self._need_tensor(o, "o"), self._need_tensor(do, "do"), self._need_tensor(stats, "stats")

        def grad(t, nm):
            return self.tensor(t.shape, t.strides, output_data_type or t.data_type, name=f"{name}_{nm}")

        dq, dk, dv = grad(q, "dq"), grad(k, "dk"), grad(v, "dv")
        scale = self._scalar_or_tensor(1.0 / math.sqrt(q.shape[3]) if attn_scale is None else attn_scale, 4,
                                       f"{name}_attn_scale")
        op = OperationSdpaBwd(qdesc=q, kdesc=k, vdesc=v, odesc=o, doddesc=do, statsdesc=stats, scaledesc=scale,
                              dqdesc=dq, dkdesc=dk, dvdesc=dv)
        if seq_len_q is not None:
            op.seq_len_qdesc = self._need_tensor(seq_len_q, "seq_len_q")
        if seq_len_kv is not None:
            op.seq_len_kvdesc = self._need_tensor(seq_len_kv, "seq_len_kv")
        self.add(op)
        return {"dq": dq, "dk": dk, "dv": dv, "attn_scale": scale}

    def paged_cache_load(self, container, page_table, seq_len, *, kind="k", max_seq_len, output=False,
                         output_data_type=None, name="paged"):
        """PAGED_CACHE_LOAD (cuDNN 9.4+): gather a K or V cache from ``container`` [blocks, H, block_size, D] through
        ``page_table`` [B, 1, ceil(max_seq_len / block_size), 1] INT32 and ``seq_len`` [B,1,1,1]. K comes out as
        K^T [B,H,D,S] (what Q @ K^T reads), V as [B,H,S,D] (cudnn-frontend's layouts)."""
        require("CUDNN_BACKEND_OPERATION_PAGED_CACHE_LOAD_DESCRIPTOR", "paged cache load")
        container = self._need_tensor(container, "container")
        page_table, seq_len = self._need_tensor(page_table, "page_table"), self._need_tensor(seq_len, "seq_len")
        from_shape = container.shape
        if len(from_shape) != 4 or len(page_table.shape) != 4:
            raise GraphError("container [blocks, H, block_size, D] and page_table [B, 1, pages, 1] are 4-d")
        s = shapes.as_sizes([max_seq_len], "max_seq_len")[0]
        b, h, d = page_table.shape[0], from_shape[1], from_shape[3]
        if kind == "k":
            dims, strides = [b, h, d, s], [d * s * h, d * s, 1, d]
        elif kind == "v":
            dims, strides = [b, h, s, d], [d * s * h, d * s, d, 1]
        else:
            raise ValueError(f"kind: 'k' or 'v', not {kind!r}")
        y = self._output(output, dims, None, output_data_type or container.data_type, f"{name}_{kind}",
                         strides=strides)
        self.add(OperationPagedCacheLoad(container_desc=container, page_table_desc=page_table, sequence_desc=seq_len,
                                         ydesc=y))
        return y
