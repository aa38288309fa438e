"""Mixture of experts: MOE_GROUPED_MATMUL and its backward.

``Graph`` methods (the mixin): Mixture-of-experts grouped matrix multiplication, forward (cuDNN 9.15+) and weight
gradient (9.22+).

Reference ops: MOE_GROUPED_MATMUL (mode NONE): token t of tokens [1, T, K] belongs to the expert e with
first_token_offset[e] <= t < first_token_offset[e + 1] (the last expert to T); out[0, t] = tokens[0, t] @
weights[e]; tokens before the first offset give 0. MOE_GROUPED_MATMUL_BWD: dweight[e] = tokens of e^T @ doutput
of e.
"""
from __future__ import annotations

import math

import numpy as np

from cudnn_backend._bindings.enums import DataType, MoeGroupedMatmulMode
from cudnn_backend.core.families import _build
from cudnn_backend.core.families._build import as_choice, as_int, output_type, require
from cudnn_backend.core.families._family import Family
from cudnn_backend.core.families._reference import Op, Unsupported
from cudnn_backend.errors import GraphError

__all__ = ["FAMILY", "MoeOps", "MoeGroupedMatmul", "MoeGroupedMatmulBackward"]


def _grouped_operands(tokens, offsets, experts, experts_from):
    """Refuse what cuDNN (9.28.1) refuses at finalize naming nothing ("finalize_internal()", BAD_PARAM), for the
    forward and the backward alike: tokens not [1, T, K] (every expert's tokens one batch), offsets not one INT32
    per expert ([E, 1, 1]; ``experts_from`` says where E comes from)."""
    if len(tokens.shape) != 3 or tokens.shape[0] != 1:
        raise GraphError(f"tokens: {list(tokens.shape)} is not [1, T, K]: the tokens of every expert are one batch")
    if list(offsets.shape) != [experts, 1, 1] or offsets.data_type != DataType.CUDNN_DATA_INT32:
        raise GraphError(f"first_token_offset: {offsets.describe()} is not INT32 [{experts}, 1, 1] (one offset "
                         f"per expert of {experts_from})")


class MoeOps:
    """``moe_grouped_matmul``, ``moe_grouped_matmul_bwd``."""

    def moe_grouped_matmul(self, tokens, weights, first_token_offset, *, mode="none", token_index=None,
                           token_ks=None, top_k=None, output=True, output_data_type=None, compute=None, name="moe"):
        """MOE_GROUPED_MATMUL: tokens [1, T, K] grouped by expert (``first_token_offset`` [E,1,1] INT32) times
        weights [E, K, N] (column-major inner) -> [1, T, N] (T = token_index's tokens when gathering)."""
        name = _build.as_name(name, "moe")
        require("CUDNN_BACKEND_OPERATION_MOE_GROUPED_MATMUL_DESCRIPTOR", "MoE grouped matmul")
        tokens, weights = self._need_tensor(tokens, "tokens"), self._need_tensor(weights, "weights")
        offsets = self._need_tensor(first_token_offset, "first_token_offset")
        mode = as_choice(MoeGroupedMatmulMode, mode, "mode", "CUDNN_MOE_GROUPED_MATMUL_MODE_")
        if len(tokens.shape) != 3 or len(weights.shape) != 3 or tokens.shape[2] != weights.shape[1]:
            raise GraphError(f"tokens {list(tokens.shape)} [1, T, K] and weights {list(weights.shape)} [E, K, N] "
                             "do not match")
        _grouped_operands(tokens, offsets, weights.shape[0], f"weights {list(weights.shape)}")
        routed = mode != MoeGroupedMatmulMode.CUDNN_MOE_GROUPED_MATMUL_MODE_NONE
        if routed and token_index is None:
            raise GraphError(f"token_index: mode {mode.name.removeprefix('CUDNN_MOE_GROUPED_MATMUL_MODE_').lower()} "
                             "routes tokens by it; give it")
        for keyword, value in (("token_index", token_index), ("token_ks", token_ks), ("top_k", top_k)):
            if not routed and value is not None:
                raise GraphError(f"{keyword}: mode none does not read it (gather and scatter route tokens by it)")
        t = token_index.shape[1] if token_index is not None else tokens.shape[1]
        dims = [1, t, weights.shape[2]]
        y = self._output(output, dims, None, output_type(output_data_type, tokens.data_type), f"{name}_out")
        op = self._operation("MOE_GROUPED_MATMUL", mode=mode, math_prec=self._compute(compute), token_desc=tokens,
                             weight_desc=weights, first_token_offset_desc=offsets, output_desc=y)
        if token_index is not None:
            op.token_index_desc = self._need_tensor(token_index, "token_index")
        if token_ks is not None:
            op.token_ks_desc = self._need_tensor(token_ks, "token_ks")
        if top_k is not None:
            op.top_k = as_int(top_k, "top_k", 1)
        self.add(op)
        return y

    def moe_grouped_matmul_bwd(self, tokens, doutput, first_token_offset, *, num_experts, output=True,
                               output_data_type=None, compute=None, name="moe_bwd"):
        """MOE_GROUPED_MATMUL_BWD: dweight [E, K, N] (column-major inner) from tokens [1,T,K] and dOutput [1,T,N]."""
        name = _build.as_name(name, "moe_bwd")
        require("CUDNN_BACKEND_OPERATION_MOE_GROUPED_MATMUL_BWD_DESCRIPTOR", "MoE grouped matmul backward")
        tokens, dout = self._need_tensor(tokens, "tokens"), self._need_tensor(doutput, "doutput")
        offsets = self._need_tensor(first_token_offset, "first_token_offset")
        e = _build.as_sizes([num_experts], "num_experts")[0]
        _grouped_operands(tokens, offsets, e, f"num_experts={e}")
        if len(dout.shape) != 3 or dout.shape[:2] != tokens.shape[:2]:
            raise GraphError(f"doutput: {list(dout.shape)} is not [1, T, N] with the T = {tokens.shape[1]} tokens of "
                             f"tokens {list(tokens.shape)}")
        k, n = tokens.shape[2], dout.shape[2]
        dw = self._output(output, [e, k, n], None, output_type(output_data_type, tokens.data_type), f"{name}_dweight",
                          strides=[k * n, 1, k])
        self.add(self._operation("MOE_GROUPED_MATMUL_BWD", math_prec=self._compute(compute), token_desc=tokens,
                                 doutput_desc=dout, first_token_offset_desc=offsets, dweight_desc=dw))
        return dw


def _experts(offsets, tokens):
    """The expert of each token (-1 before the first offset)."""
    return np.searchsorted(np.asarray(offsets).reshape(-1).astype(np.int64), np.arange(tokens), side="right") - 1


class MoeGroupedMatmul(Op):
    def __init__(self, node, graph):
        super().__init__(node, graph)
        self.tokens, self.weights = self.need("token_desc"), self.need("weight_desc")
        self.offsets, self.out = self.need("first_token_offset_desc"), self.need("output_desc")
        mode = node.attr("mode", int(MoeGroupedMatmulMode.CUDNN_MOE_GROUPED_MATMUL_MODE_NONE))
        if int(mode) != int(MoeGroupedMatmulMode.CUDNN_MOE_GROUPED_MATMUL_MODE_NONE):
            raise Unsupported(f"mode {MoeGroupedMatmulMode(int(mode)).name}: the gather/scatter of tokens is not "
                              "documented in the header")
        self.refuse_set("token_index_desc", "token_ks_desc", "top_k", why="token routing is not modelled")
        td, wd, od = self.dims(self.tokens), self.dims(self.weights), self.dims(self.out)
        if len(td) != 3 or len(wd) != 3 or td[0] != 1 or td[2] != wd[1] or od != (1, td[1], wd[2]) or \
                math.prod(self.dims(self.offsets)) != wd[0]:
            raise Unsupported(f"tokens {list(td)}, weights {list(wd)}, output {list(od)}: not [1,T,K] @ [E,K,N]")

    def work(self) -> float:
        return float(math.prod(self.dims(self.out))) * self.dims(self.tokens)[2]

    def dense(self, values):
        tokens, weights = values[self.tokens][0], values[self.weights]
        expert = _experts(values[self.offsets], tokens.shape[0])
        out = np.zeros((tokens.shape[0], weights.shape[2]))
        for e in np.unique(expert[expert >= 0]):
            sel = expert == e
            out[sel] = tokens[sel] @ weights[e]
        return {self.out: out[None]}


class MoeGroupedMatmulBackward(Op):
    def __init__(self, node, graph):
        super().__init__(node, graph)
        self.tokens, self.dout = self.need("token_desc"), self.need("doutput_desc")
        self.offsets, self.dw = self.need("first_token_offset_desc"), self.need("dweight_desc")
        td, dd, wd = self.dims(self.tokens), self.dims(self.dout), self.dims(self.dw)
        if len(td) != 3 or len(dd) != 3 or td[:2] != dd[:2] or td[0] != 1 or wd != (wd[0], td[2], dd[2]) or \
                math.prod(self.dims(self.offsets)) != wd[0]:
            raise Unsupported(f"tokens {list(td)}, doutput {list(dd)}, dweight {list(wd)}: not [1,T,K], [1,T,N], "
                              "[E,K,N]")

    def dense(self, values):
        tokens, dout = values[self.tokens][0], values[self.dout][0]
        expert = _experts(values[self.offsets], tokens.shape[0])
        dw = np.zeros(self.dims(self.dw))
        for e in range(dw.shape[0]):
            sel = expert == e
            dw[e] = tokens[sel].T @ dout[sel]
        return {self.dw: dw}


FAMILY = Family(
    "moe", ("MOE_GROUPED_MATMUL", "MOE_GROUPED_MATMUL_BWD"),
    graph_methods=("moe_grouped_matmul", "moe_grouped_matmul_bwd"),
    graph_mixin=MoeOps,
    reference_ops={"MOE_GROUPED_MATMUL": MoeGroupedMatmul, "MOE_GROUPED_MATMUL_BWD": MoeGroupedMatmulBackward},
    doc=__doc__)
