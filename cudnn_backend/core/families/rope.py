"""Rotary position embedding: ROPE_FWD and ROPE_BWD."""
from __future__ import annotations

from cudnn_backend.core.families._checks import fail
from cudnn_backend.core.families._family import Family

__all__ = ["FAMILY", "rope_dims"]


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


FAMILY = Family("rope", ("ROPE_FWD", "ROPE_BWD"), graph_methods=("rope_fwd", "rope_bwd"), doc=__doc__)
