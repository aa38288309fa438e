"""Rotary position embedding: ROPE_FWD and ROPE_BWD.

``Graph`` methods (the mixin): Rotary position embeddings, forward and backward: the dedicated ROPE_FWD (cuDNN 9.24+)
and ROPE_BWD (9.25+) operations. On cuDNN 9.28.1 no engine runs them for an H100 or H200 (cuDNN: "only Blackwell is
supported"), alone or fused; they finalize offline on every release that has them.

Reference ops: ROPE_FWD (cuDNN's RoPE page): X [b, h, s, D] splits its last axis into a leading pass-through segment
of D - rope_dim and a trailing rope segment of rope_dim (0 or unset: all of D) whose halves lo, hi rotate: y_lo = a
(x_lo cos t - x_hi sin t), y_hi = a (x_hi cos t + x_lo sin t), y_pass = a x_pass, a = output_scale; the angle of each
element is freqs [s, 1, 1, F] at its sequence position and its own index in the last axis (F = D) or in the rope
segment (F = rope_dim) — with TransformerEngine's freqs (the angles of lo repeated for hi) that is the one angle per
pair. ROPE_BWD is the same with sin negated (rotation by -t)."""
from __future__ import annotations

import numpy as np

from cudnn_backend.core.families import _build
from cudnn_backend.core.families._build import as_int, output_type, require
from cudnn_backend.core.families._checks import fail
from cudnn_backend.core.families._family import Family
from cudnn_backend.core.families._reference import Op, Request, Unsupported, element_coords, full, ravel, real

__all__ = ["FAMILY", "rope_dims", "RopeOps", "Rope"]


def rope_dims(x_dims, freqs_dims, rope_dim=None):
    """The checked ``rope_dim`` of a RoPE over ``x_dims`` [b, h, s, d] with ``freqs_dims`` [s, 1, 1, >= rope_dim]
    (fp32 angles): even, in [2, d]; default d (cuDNN 9.28.1's own rules, checked before a descriptor is made)."""
    if len(x_dims) != 4:
        fail(f"RoPE: x is {list(x_dims)}; RoPE rotates [b, h, s, d] tensors (4-d)")
    d = x_dims[3]
    rope_dim = d if rope_dim is None else rope_dim
    if rope_dim < 2 or rope_dim > d or rope_dim % 2:
        fail(f"RoPE: rope_dim {rope_dim} must be even and in [2, head dim {d}]")
    if len(freqs_dims) != 4 or freqs_dims[0] != x_dims[2] or freqs_dims[3] < rope_dim:
        fail(f"RoPE: freqs is {list(freqs_dims)}; it must be [s={x_dims[2]}, 1, 1, >= rope_dim {rope_dim}] "
              "(one angle per position and rotated slot)")
    return rope_dim


class RopeOps:
    """``rope_fwd``, ``rope_bwd``."""

    def rope_fwd(self, x, freqs, *, rope_dim=None, output_scale=None, output=True, output_data_type=None, name="rope"):
        """ROPE_FWD (cuDNN 9.24+): rotate ``rope_dim`` (even; default: all D) of the D slots of X [B, H, S, D] by
        the angles ``freqs`` (fp32 [S, 1, 1, >= rope_dim]); ``output_scale`` scales the result. Y is shaped and laid
        out like X."""
        return self._rope("ROPE_FWD", ("x", "y"), x, freqs, rope_dim, output_scale, output, output_data_type,
                          _build.as_name(name, "rope"))

    def rope_bwd(self, dy, freqs, *, rope_dim=None, output_scale=None, output=True, output_data_type=None,
                 name="rope_bwd"):
        """ROPE_BWD (cuDNN 9.25+): dX from dY [B, H, S, D] with the same ``freqs`` and ``rope_dim`` as the forward."""
        return self._rope("ROPE_BWD", ("dy", "dx"), dy, freqs, rope_dim, output_scale, output, output_data_type,
                          _build.as_name(name, "rope_bwd"))

    def _rope(self, op_name, slots, source, freqs, rope_dim, output_scale, output, output_data_type, name):
        """Either direction: the result shaped and laid out like ``source`` (X, or dY), in slots ``slots``."""
        require(f"CUDNN_BACKEND_OPERATION_{op_name}_DESCRIPTOR", f"Graph.{op_name.lower()}")
        source, freqs = self._need_tensor(source, slots[0]), self._need_tensor(freqs, "freqs")
        if rope_dim is not None:
            rope_dim = as_int(rope_dim, "rope_dim", 1, source.shape[-1])
        rope_dims(source.shape, freqs.shape, rope_dim)
        result = self._output(output, source.shape, source, output_type(output_data_type, source.data_type),
                              f"{name}_{slots[1]}", strides=source.strides)
        tensors = {f"{slots[0]}desc": source, f"{slots[1]}desc": result, "freqsdesc": freqs}
        op = self._operation(op_name, **tensors)  # (a dict display in the call trips Cython 3.3's code generation)
        if rope_dim is not None:
            op.rope_dim = rope_dim
        if output_scale is not None:
            op.output_scale = output_scale
        self.add(op)
        return result


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


FAMILY = Family(
    "rope", ("ROPE_FWD", "ROPE_BWD"),
    shape_rules=(rope_dims,),
    graph_methods=("rope_fwd", "rope_bwd"),
    graph_mixin=RopeOps,
    reference_ops={"ROPE_FWD": Rope, "ROPE_BWD": Rope},
    doc=__doc__)
