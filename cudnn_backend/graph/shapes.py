"""Output shapes and strides of the operations the ``Graph`` builder creates (pure arithmetic), and the one
place sizes are read from Python values: ints only (no float, bool or string is ever taken as an int),
every size >= 1."""
from __future__ import annotations

import math

from cudnn_backend._bindings.enums import NormMode
from cudnn_backend.core._descriptor import as_int, user_sequence
from cudnn_backend.core.families import norm as _norm
from cudnn_backend.core.families.pointwise import broadcast_dims
from cudnn_backend.errors import GraphError
from cudnn_backend.typed.arrays import MAX_ELEMENTS, packed_strides, stride_order, strides_like

__all__ = [
    "as_list", "as_dims", "as_strides", "as_sizes", "pair", "conv_output_dims", "broadcast_dims", "matmul_output_dims",
    "reduction_output_dims", "resample_output_dims", "concat_output_dims", "transpose_output_dims",
    "slice_output_dims", "softmax_stats_dims", "rope_dims", "band_mask_dims", "norm_stats_dims", "per_channel_dims",
    "packed_strides", "stride_order", "strides_like", "nhwc_strides", "bshd_strides", "layout_strides", "MAX_RANK",
    "MAX_SIZE", "MAX_ELEMENTS",
]

MAX_RANK = 8  # CUDNN_DIM_MAX
_NORM_MODES = {"layer": NormMode.CUDNN_LAYER_NORM, "rms": NormMode.CUDNN_RMS_NORM, "batch": NormMode.CUDNN_BATCH_NORM,
               "instance": NormMode.CUDNN_INSTANCE_NORM}
MAX_SIZE = (1 << 63) - 1  # sizes and strides are int64 in cuDNN


def _sequence(values, what):
    if isinstance(values, (str, bytes)) or not hasattr(values, "__iter__"):
        raise TypeError(f"{what}: expected a sequence of ints, not {type(values).__name__}")
    try:
        n = len(values)
    except TypeError:
        n = None
    except Exception as e:  # a raising __len__
        raise TypeError(f"{what}: len() failed ({type(e).__name__}: {e})") from None
    if n is not None and (not isinstance(n, int) or n > MAX_RANK * 8):
        raise ValueError(f"{what}: {n} entries; cuDNN tensors have at most {MAX_RANK} dims")
    return user_sequence(values, what, MAX_RANK * 8)


def as_list(values, what) -> list:
    """The entries of a sequence the caller gave, read one by one (a lying or raising ``__len__``/``__iter__`` is a
    TypeError/ValueError naming ``what``)."""
    return _sequence(values, what)


def as_sizes(values, what, minimum=1, rank=None) -> list:
    """A list of exact ints >= ``minimum`` (and ``rank`` of them when given), or TypeError/ValueError naming ``what``."""
    items = _sequence(values, what)
    out = [as_int(v, f"{what}[{i}]") for i, v in enumerate(items)]
    for i, v in enumerate(out):
        if v < minimum:
            extra = " (zero and negative sizes are refused: cuDNN divides by them)" if minimum == 1 else ""
            raise ValueError(f"{what}[{i}] is {v}; it must be >= {minimum}{extra}")
        if v > MAX_SIZE:
            raise ValueError(f"{what}[{i}] is {v}; it must be at most {MAX_SIZE} (cuDNN sizes are int64)")
    if rank is not None and len(out) != rank:
        raise ValueError(f"{what}: expected {rank} entries, got {len(out)}")
    return out


def as_dims(dims, what="dims") -> list:
    """Tensor dims: 1 to 8 ints, each >= 1."""
    out = as_sizes(dims, what)
    if not 1 <= len(out) <= MAX_RANK:
        raise ValueError(f"{what}: {len(out)} dims; cuDNN tensors have 1 to {MAX_RANK}")
    return out


def as_strides(strides, rank, what="strides") -> list:
    """Tensor strides: ``rank`` ints, each >= 1."""
    return as_sizes(strides, what, 1, rank)


def pair(v, n, what="value", minimum=0) -> list:
    """One int for every spatial dim, or a sequence of exactly ``n`` ints (each >= ``minimum``)."""
    if type(v) is int and minimum <= v <= MAX_SIZE:
        return [v] * n
    if (type(v) is list or type(v) is tuple) and len(v) == n and \
            all(type(x) is int and minimum <= x <= MAX_SIZE for x in v):
        return list(v)
    if isinstance(v, (list, tuple)) or (hasattr(v, "__iter__") and not isinstance(v, (str, bytes))):
        return as_sizes(v, what, minimum, n)
    x = as_int(v, what)
    if x < minimum:
        raise ValueError(f"{what} is {x}; it must be >= {minimum}")
    if x > MAX_SIZE:
        raise ValueError(f"{what} is {x}; it must be at most {MAX_SIZE} (cuDNN sizes are int64)")
    return [x] * n


def _fail(message):
    raise GraphError(message)


def conv_output_dims(x_dims, w_dims, padding=0, stride=1, dilation=1, post_padding=None):
    """Y dims of a (grouped) convolution of X ``[N, C, *spatial]`` with W ``[K, C/groups, *filter]``."""
    n, c, *spatial = x_dims
    k, cg, *filt = w_dims
    nsp = len(spatial)
    if nsp < 1:
        _fail(f"convolution: X {list(x_dims)} needs at least one spatial dim")
    if len(filt) != nsp:
        _fail(f"convolution: X {list(x_dims)} has {nsp} spatial dims, W {list(w_dims)} has {len(filt)}")
    if c % cg:
        _fail(f"convolution: X's channels {c} are no multiple of W's channels per group {cg} (W {list(w_dims)})")
    groups = c // cg
    if k % groups:
        _fail(f"convolution: W's output channels {k} are not divisible by the {groups} groups")
    pre = pair(padding, nsp, "padding")
    post = pair(pre if post_padding is None else post_padding, nsp, "post_padding")
    st = pair(stride, nsp, "stride", 1)
    dl = pair(dilation, nsp, "dilation", 1)
    out = []
    for i in range(nsp):
        eff = dl[i] * (filt[i] - 1) + 1
        o = (spatial[i] + pre[i] + post[i] - eff) // st[i] + 1
        if o <= 0:
            _fail(f"convolution: spatial dim {i} of X ({spatial[i]}) is too small for a filter of {filt[i]} "
                  f"(dilation {dl[i]}, padding {pre[i]}+{post[i]})")
        out.append(o)
    return [n, k, *out]


def matmul_output_dims(a_dims, b_dims):
    """C dims of A [..., M, K] x B [..., K, N]: equal ranks, batch dims equal or 1."""
    if len(a_dims) < 2 or len(b_dims) < 2 or len(a_dims) != len(b_dims):
        _fail(f"matmul: A {list(a_dims)} and B {list(b_dims)} need equal ranks >= 2")
    if a_dims[-1] != b_dims[-2]:
        _fail(f"matmul: inner dims differ: A {list(a_dims)} x B {list(b_dims)}")
    batch = broadcast_dims(a_dims[:-2], b_dims[:-2], what="matmul batch") if len(a_dims) > 2 else []
    return [*batch, a_dims[-2], b_dims[-1]]


def reduction_output_dims(x_dims, axes=None):
    """X dims with the reduced axes set to 1 (cuDNN keeps the rank); all axes when ``axes`` is None."""
    rank = len(x_dims)
    if axes is None:
        return [1] * rank
    items = [axes] if not hasattr(axes, "__iter__") else _sequence(axes, "axes")
    out = set()
    for i, a in enumerate(items):
        a = as_int(a, f"axes[{i}]")
        if not -rank <= a < rank:
            _fail(f"reduction: axis {a} is out of range for {rank} dims")
        out.add(a % rank)
    return [1 if i in out else d for i, d in enumerate(x_dims)]


def resample_output_dims(x_dims, window, stride, pre_padding, post_padding):
    """Y dims of a pooling window over X ``[N, C, *spatial]`` (as cudnn-frontend infers them); window, stride and
    paddings are ints or (numerator, denominator) pairs."""
    n, c, *spatial = x_dims

    def value(v):
        return v[0] / v[1] if isinstance(v, tuple) else v

    out = []
    for i in range(len(spatial)):
        o = 1 + math.floor((spatial[i] + value(pre_padding[i]) + value(post_padding[i]) - value(window[i]))
                           / value(stride[i]))
        if o <= 0:
            _fail(f"resample: spatial dim {i} of X ({spatial[i]}) is too small for a window of {window[i]}")
        out.append(int(o))
    return [n, c, *out]


def concat_output_dims(dims_list, axis):
    """Dims of the concatenation of ``dims_list`` along ``axis`` (all other dims must agree)."""
    first = list(dims_list[0])
    total = 0
    for dims in dims_list:
        dims = list(dims)
        if len(dims) != len(first) or any(a != b for i, (a, b) in enumerate(zip(dims, first)) if i != axis):
            _fail(f"concat along axis {axis}: {dims} does not match {first}")
        total += dims[axis]
    out = list(first)
    out[axis] = total
    return out


def transpose_output_dims(x_dims, permutation):
    """Y dims of a transpose: ``y[i] = x[permutation[i]]``."""
    if sorted(permutation) != list(range(len(x_dims))):
        _fail(f"transpose: {list(permutation)} is not a permutation of {len(x_dims)} axes")
    return [x_dims[p] for p in permutation]


def slice_output_dims(x_dims, start, limit, strides=None):
    """Y dims of a slice ``x[start:limit:stride]`` per axis (limit exclusive)."""
    strides = [1] * len(x_dims) if strides is None else list(strides)
    if not len(start) == len(limit) == len(strides) == len(x_dims):
        _fail(f"slice: start, limit and strides need {len(x_dims)} entries each")
    out = []
    for d, s, e, st in zip(x_dims, start, limit, strides):
        if not (0 <= s < e <= d) or st <= 0:
            _fail(f"slice [{s}:{e}:{st}] is empty or outside an axis of size {d}")
        out.append(math.ceil((e - s) / st))
    return out


def softmax_stats_dims(x_dims):
    """Dims of the unified SOFTMAX's statistics (log-sum-exp, max, sum of exponentials) of scores ``x_dims``
    [b, h, s_q, s_kv]: [b, h, s_q, 1] (cuDNN 9.28.1 takes 4-d tensors only, the last dim 1)."""
    if len(x_dims) != 4:
        _fail(f"softmax: x is {list(x_dims)}; the unified SOFTMAX takes attention scores [b, h, s_q, s_kv] (4-d)")
    return [*x_dims[:3], 1]


def rope_dims(x_dims, freqs_dims, rope_dim=None):
    """The checked ``rope_dim`` of a RoPE over ``x_dims`` [b, h, s, d] with ``freqs_dims`` [s, 1, 1, >= rope_dim]
    (fp32 angles): even, in [2, d]; default d (cuDNN 9.28.1's own rules, checked before a descriptor is made)."""
    if len(x_dims) != 4:
        _fail(f"RoPE: x is {list(x_dims)}; RoPE rotates [b, h, s, d] tensors (4-d)")
    d = x_dims[3]
    rope_dim = d if rope_dim is None else rope_dim
    if rope_dim < 2 or rope_dim > d or rope_dim % 2:
        _fail(f"RoPE: rope_dim {rope_dim} must be even and in [2, head dim {d}]")
    if len(freqs_dims) != 4 or freqs_dims[0] != x_dims[2] or freqs_dims[3] < rope_dim:
        _fail(f"RoPE: freqs is {list(freqs_dims)}; it must be [s={x_dims[2]}, 1, 1, >= rope_dim {rope_dim}] "
              "(one angle per position and rotated slot)")
    return rope_dim


def band_mask_dims(x_dims, bound_dims=None, what="left_bound"):
    """Dims of a DIAGONAL_BAND_MASK's output (x's: attention scores [b, h, s_q, s_kv]); a bound or sequence-length
    tensor must be [b, 1, 1, 1] or [1, 1, 1, 1] (cuDNN 9.28.1's rule, checked first)."""
    if len(x_dims) != 4:
        _fail(f"diagonal band mask: x is {list(x_dims)}; it masks attention scores [b, h, s_q, s_kv] (4-d)")
    if bound_dims is not None and (len(bound_dims) != 4 or list(bound_dims[1:]) != [1, 1, 1]
                                   or bound_dims[0] not in (1, x_dims[0])):
        _fail(f"diagonal band mask: {what} is {list(bound_dims)}; it must be [b={x_dims[0]}, 1, 1, 1] or [1, 1, 1, 1]")
    return list(x_dims)


def norm_stats_dims(mode, x_dims, scale_dims):
    """Mean / inverse-variance dims of a normalization (``mode``: 'layer', 'batch', ... or a NormMode): the norm
    family's one rule, ``core.families.norm.stats_dims``; GraphError where it does not apply."""
    mode = _NORM_MODES.get(mode, mode) if isinstance(mode, str) else mode
    dims = _norm.stats_dims(mode, x_dims, scale_dims)
    if dims is None:
        _fail(f"normalization statistics: no rule for {mode!r} with x {list(x_dims)} and scale "
              f"{None if scale_dims is None else list(scale_dims)} (the scale needs x's rank)")
    return list(dims)


def per_channel_dims(x_dims):
    """``[1, C, 1, ...]``: one value per channel of ``[N, C, ...]``."""
    return list(_norm.per_channel(x_dims))


def nhwc_strides(dims):
    """Channels-last packed strides for ``[N, C, *spatial]``."""
    if len(dims) < 3:
        raise ValueError(f"layout: 'nhwc' needs [N, C, spatial...] (rank >= 3), not {len(dims)} dims {list(dims)}")
    return packed_strides(dims, [0, *range(2, len(dims)), 1])


def bshd_strides(dims):
    """Strides of a [B, H, S, D] attention tensor stored interleaved as B, S, H, D (cudnn-frontend's default)."""
    b, h, s, d = dims
    return [s * h * d, d, h * d, 1]


_LAYOUTS = {"nhwc": nhwc_strides, "channels_last": nhwc_strides, "nchw": packed_strides,
            "row_major": packed_strides, "packed": packed_strides, "bshd": bshd_strides}


def layout_strides(dims, layout):
    """Strides of a named layout: 'nhwc' (channels last), 'nchw'/'row_major' (packed), 'bshd' (attention)."""
    if not isinstance(layout, str) or layout.lower() not in _LAYOUTS:
        raise ValueError(f"layout: {layout!r} is not one of {', '.join(_LAYOUTS)}")
    if layout.lower() == "bshd" and len(dims) != 4:
        raise ValueError(f"layout: 'bshd' needs [B, H, S, D], not {list(dims)}")
    return _LAYOUTS[layout.lower()](list(dims))

