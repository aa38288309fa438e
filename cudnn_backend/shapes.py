"""Output shapes and strides of the operations graph builders create (pure arithmetic)."""
from __future__ import annotations


def _pair(v, n):
    if isinstance(v, int):
        return [v] * n
    v = list(v)
    if len(v) != n:
        raise ValueError(f"expected {n} values, got {v}")
    return v


def conv_output_dims(x_dims, w_dims, padding=0, stride=1, dilation=1, post_padding=None, groups=1):
    """Y dims of a cross-correlation of X [N, C, *spatial] with W [K, C/groups, *filter]."""
    n, c, *spatial = x_dims
    k, cg, *filt = w_dims
    nsp = len(spatial)
    if len(filt) != nsp:
        raise ValueError(f"X has {nsp} spatial dims, W has {len(filt)}")
    if cg * groups != c:
        raise ValueError(f"W's input channels {cg} x groups {groups} != X's channels {c}")
    if k % groups:
        raise ValueError(f"output channels {k} not divisible by groups {groups}")
    pre = _pair(padding, nsp)
    post = _pair(pre if post_padding is None else post_padding, nsp)
    st, dl = _pair(stride, nsp), _pair(dilation, nsp)
    out = []
    for i in range(nsp):
        eff = dl[i] * (filt[i] - 1) + 1
        o = (spatial[i] + pre[i] + post[i] - eff) // st[i] + 1
        if o <= 0:
            raise ValueError(f"spatial dim {i}: input {spatial[i]} too small for filter {filt[i]} "
                             f"(dilation {dl[i]}, padding {pre[i]}+{post[i]})")
        out.append(o)
    return [n, k, *out]


def broadcast_dims(*dims_list):
    """Numpy-style broadcast of equal-rank dims (cuDNN wants equal ranks; size-1 dims broadcast)."""
    rank = max(len(d) for d in dims_list)
    padded = [[1] * (rank - len(d)) + list(d) for d in dims_list]
    out = []
    for i in range(rank):
        sizes = {d[i] for d in padded if d[i] != 1}
        if len(sizes) > 1:
            raise ValueError(f"dims {dims_list} do not broadcast at axis {i}: {sorted(sizes)}")
        out.append(sizes.pop() if sizes else 1)
    return out


def matmul_output_dims(a_dims, b_dims):
    """C dims of A [..., M, K] x B [..., K, N], batch dims broadcast."""
    if len(a_dims) < 2 or len(b_dims) < 2:
        raise ValueError("matmul operands need at least 2 dims")
    if a_dims[-1] != b_dims[-2]:
        raise ValueError(f"matmul inner dims differ: A {list(a_dims)} x B {list(b_dims)}")
    batch = broadcast_dims(a_dims[:-2], b_dims[:-2]) if len(a_dims) > 2 or len(b_dims) > 2 else []
    return [*batch, a_dims[-2], b_dims[-1]]


def reduction_output_dims(x_dims, axes):
    """X dims with the reduced axes set to 1 (cuDNN keeps the rank)."""
    axes = {a % len(x_dims) for a in ([axes] if isinstance(axes, int) else axes)}
    return [1 if i in axes else d for i, d in enumerate(x_dims)]


def packed_strides(dims, order=None):
    """Fully packed strides; ``order`` lists axes from outermost to innermost (default: row-major)."""
    order = list(range(len(dims))) if order is None else list(order)
    strides = [0] * len(dims)
    acc = 1
    for axis in reversed(order):
        strides[axis] = acc
        acc *= max(dims[axis], 1)
    return strides


def stride_order(strides):
    """Axes from outermost to innermost by stride (ties keep axis order)."""
    return sorted(range(len(strides)), key=lambda i: (-strides[i], i))


def strides_like(dims, ref_strides):
    """Packed strides for ``dims`` in the same axis order as ``ref_strides`` (keeps NHWC as NHWC)."""
    if len(ref_strides) != len(dims):
        return packed_strides(dims)
    return packed_strides(dims, stride_order(ref_strides))


def nhwc_strides(dims):
    """Channels-last packed strides for [N, C, *spatial]."""
    return packed_strides(dims, [0, *range(2, len(dims)), 1])
