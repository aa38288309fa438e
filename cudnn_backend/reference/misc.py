"""RoPE, block-scale dequantize, MoE grouped matmul (plain mode), and the operations whose outputs the evaluator
does not compute, each with its reason.

ROPE_FWD (cuDNN's RoPE page): X [b, h, s, D] splits its last axis into a leading pass-through segment of
D - rope_dim and a trailing rope segment of rope_dim (0 or unset: all of D) whose halves lo, hi rotate:
y_lo = a (x_lo cos t - x_hi sin t), y_hi = a (x_hi cos t + x_lo sin t), y_pass = a x_pass, a = output_scale; the
angle of each element is freqs [s, 1, 1, F] at its sequence position and its own index in the last axis (F = D)
or in the rope segment (F = rope_dim) — with TransformerEngine's freqs (the angles of lo repeated for hi) that is
the one angle per pair. ROPE_BWD is the same with sin negated (rotation by -t).
BLOCK_SCALE_DEQUANTIZE: Y = X * scale of its block (block_size: the last axis, or the last two).
MOE_GROUPED_MATMUL (mode NONE): token t of tokens [1, T, K] belongs to the expert e with
first_token_offset[e] <= t < first_token_offset[e + 1] (the last expert to T); out[0, t] = tokens[0, t] @
weights[e]; tokens before the first offset give 0. MOE_GROUPED_MATMUL_BWD: dweight[e] = tokens of e^T @ doutput
of e."""
from __future__ import annotations

import math

import numpy as np

from cudnn_backend._bindings.enums import MoeGroupedMatmulMode
from cudnn_backend.reference._blocks import Request, full, ravel
from cudnn_backend.reference._graph import as_tuple
from cudnn_backend.reference._ops import Gather, Op, Unsupported, element_coords, needs_of, real, register

__all__ = ["Rope", "BlockScaleDequantize", "MoeGroupedMatmul", "MoeGroupedMatmulBackward", "NOT_COMPUTED"]


@register("ROPE_FWD", "ROPE_BWD")
class Rope(Op):
    def __init__(self, node, graph):
        super().__init__(node, graph)
        self.backward = node.kind.name.startswith("CUDNN_BACKEND_OPERATION_ROPE_BWD")
        x_slot, y_slot = ("dydesc", "dxdesc") if self.backward else ("xdesc", "ydesc")
        self.x, self.y, self.freqs = self.need(x_slot), self.need(y_slot), self.need("freqsdesc")
        xd, fd = self.dims(self.x), self.dims(self.freqs)
        if len(xd) != 4 or self.dims(self.y) != xd:
            raise Unsupported(f"x {list(xd)} / y {list(self.dims(self.y))} are not one [b, h, s, d]")
        d = xd[3]
        rope_dim = int(real(node.attr("rope_dim", 0), "rope_dim"))
        self.rope_dim = d if rope_dim == 0 else rope_dim
        self.scale = real(node.attr("output_scale", 1.0), "output_scale")
        if not 0 < self.rope_dim <= d or self.rope_dim % 2:
            raise Unsupported(f"rope_dim {self.rope_dim} is not an even number up to {d}")
        if len(fd) != 4 or fd[0] != xd[2] or fd[1] != 1 or fd[2] != 1 or fd[3] not in (d, self.rope_dim):
            raise Unsupported(f"freqs {list(fd)} is not [s, 1, 1, D or rope_dim] for x {list(xd)}")

    def _rotate(self, x, seq, freqs):
        """Y of rows X (..., D) at sequence positions ``seq`` (broadcast against ...) with freqs [s, F]."""
        d, r = x.shape[-1], self.rope_dim
        nope, half = d - r, r // 2
        theta = freqs[seq]                                                          # (..., F)
        if theta.shape[-1] == d:
            theta = theta[..., nope:]
        sign = -1.0 if self.backward else 1.0
        lo, hi = x[..., nope:nope + half], x[..., nope + half:]
        cos, sin = np.cos(theta), sign * np.sin(theta)
        y = np.concatenate([x[..., :nope], lo * cos[..., :half] - hi * sin[..., :half],
                            hi * cos[..., half:] + lo * sin[..., half:]], axis=-1)
        return self.scale * y

    def dense(self, values):
        xd = self.dims(self.x)
        freqs = values[self.freqs].reshape(xd[2], -1)
        seq = np.arange(xd[2]).reshape(1, 1, -1)
        return {self.y: self._rotate(values[self.x], seq, freqs)}

    def pull(self, wanted, cheap):
        if self.all_whole(wanted):
            return super().pull(wanted, cheap)
        xd = self.dims(self.x)
        coords = element_coords(xd, wanted[self.y])
        rows, inverse = np.unique(ravel(coords[:, :3], xd[:3]), return_inverse=True)
        seq = rows % xd[2]

        def finish(values):
            y = self._rotate(np.asarray(values[self.x]), seq, np.asarray(values[self.freqs]).reshape(xd[2], -1))
            return {self.y: y[inverse, coords[:, 3]]}

        return {self.x: Request(1, rows), self.freqs: full(self.dims(self.freqs))}, finish


@register("BLOCK_SCALE_DEQUANTIZE")
class BlockScaleDequantize(Op):
    def __init__(self, node, graph):
        super().__init__(node, graph)
        self.x, self.scale, self.y = self.need("xdesc"), self.need("scale_desc"), self.need("ydesc")
        self.refuse_set("neg_scale", why="its meaning is not documented in the header")
        xd, sd = self.dims(self.x), self.dims(self.scale)
        sizes = tuple(int(v) for v in as_tuple(node.attr("block_size")))
        if not 1 <= len(sizes) <= 2 or len(sd) != len(xd) or self.dims(self.y) != xd:
            raise Unsupported(f"block_size {list(sizes)}, x {list(xd)}, scale {list(sd)}: not blocks of one or "
                              "two trailing axes")
        self.block = (1,) * (len(xd) - len(sizes)) + sizes
        if any(s * b != x for s, b, x in zip(sd, self.block, xd)):
            raise Unsupported(f"scale {list(sd)} is not x {list(xd)} divided by blocks {list(self.block)}")

    def dense(self, values):
        scale = values[self.scale]
        for axis, b in enumerate(self.block):
            if b > 1:
                scale = np.repeat(scale, b, axis=axis)
        return {self.y: values[self.x] * scale}

    def pull(self, wanted, cheap):
        if self.all_whole(wanted):
            return super().pull(wanted, cheap)
        coords = element_coords(self.dims(self.y), wanted[self.y])
        gx = Gather(self.x, self.dims(self.x), ravel(coords, self.dims(self.x)), cheap(self.x))
        gs = Gather(self.scale, self.dims(self.scale), ravel(coords // np.array(self.block), self.dims(self.scale)),
                    cheap(self.scale))
        return needs_of(gx, gs), lambda values: {self.y: gx(values) * gs(values)}


def _experts(offsets, tokens):
    """The expert of each token (-1 before the first offset)."""
    return np.searchsorted(np.asarray(offsets).reshape(-1).astype(np.int64), np.arange(tokens), side="right") - 1


@register("MOE_GROUPED_MATMUL")
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


@register("MOE_GROUPED_MATMUL_BWD")
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


NOT_COMPUTED = {
    "RNG": "random numbers (Philox with a seed and offset): no reference values",
    "SIGNAL": "a flag set or awaited between graphs: synchronization, not math",
    "PAGED_CACHE_LOAD": "reads pages through a page table up to per-sequence lengths; what lies past a sequence "
                        "and the layout of K^T are not documented in the header",
    "BLOCK_SCALE_QUANTIZE": "the fp8 values and E8M0 scales depend on the rounding and scale choice of the "
                            "kernel, which the header does not document",
    "EXPAND_BAND_MATRIX": "the band storage layout is not documented in the header",
    "CONTRACT_BAND_MATRIX": "the band storage layout is not documented in the header",
}


def _refusing(reason):
    class NotComputed(Op):
        def __init__(self, node, graph):
            raise Unsupported(reason)

    return NotComputed


for _name, _reason in NOT_COMPUTED.items():
    register(_name)(_refusing(_reason))
