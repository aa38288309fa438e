"""Output shapes and strides of the operations the ``Graph`` builder creates (each family's rule lives in its
module of ``core.families`` and is re-exported here), and the one place sizes are read from Python values: ints only (no float, bool or string is ever taken as an int),
every size >= 1."""
from __future__ import annotations

from cudnn_backend._bindings.enums import NormMode
from cudnn_backend.core._descriptor import as_int, user_sequence
from cudnn_backend.core.families import conv as _conv
from cudnn_backend.core.families import norm as _norm
from cudnn_backend.core.families.attention import softmax_stats_dims
from cudnn_backend.core.families.band import band_mask_dims
from cudnn_backend.core.families.layout import concat_output_dims, slice_output_dims, transpose_output_dims
from cudnn_backend.core.families.matmul import matmul_output_dims
from cudnn_backend.core.families.pointwise import broadcast_dims
from cudnn_backend.core.families.resample import resample_output_dims
from cudnn_backend.core.families.rope import rope_dims
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
    """Y dims of a (grouped) convolution of X ``[N, C, *spatial]`` with W ``[K, C/groups, *filter]``: the values
    read here, the rule ``core.families.conv.output_dims``."""
    nsp = _conv.spatial_dims(x_dims, w_dims)
    pre = pair(padding, nsp, "padding")
    post = pair(pre if post_padding is None else post_padding, nsp, "post_padding")
    return _conv.output_dims(x_dims, w_dims, pre, post, pair(stride, nsp, "stride", 1),
                             pair(dilation, nsp, "dilation", 1))


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

