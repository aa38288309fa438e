"""Other single-family patterns: reduction, pooling, reshape, RNG, transpose, slice (alone and into a matmul),
softmax, block-scale quantize and dequantize + matmul, RoPE forward and backward."""
from __future__ import annotations

from cudnn_backend._bindings.enums import DataType, ReduceTensorOp, TensorReordering
from cudnn_backend.core.families._build import as_choice
from cudnn_backend.core.families.quantize import f8_128x4_scale
from cudnn_backend.graph import Graph, shapes
from cudnn_backend.patterns._pattern import finish, pattern_function, size

__all__ = ["reduction", "pooling", "resample", "reshape", "rng", "transpose", "slice", "slice_matmul", "softmax",
           "block_scale_quantize", "block_scale_dequantize_matmul", "rope", "rope_bwd"]

F16 = DataType.CUDNN_DATA_HALF
F32 = DataType.CUDNN_DATA_FLOAT
BF16 = DataType.CUDNN_DATA_BFLOAT16


def _dims(dims, what="dims"):
    return shapes.as_dims(dims, what)


@pattern_function
def reduction(dims=(8, 64, 56, 56), axes=(0, 2, 3), *, op="ADD", layout="nhwc", data_type=F16,
              output_data_type=F32, build=True):
    """Reduce X over ``axes`` (kept as size-1 dims), e.g. the per-channel sum of an NHWC activation (fp32 out)."""
    dims = _dims(dims)
    shapes.layout_strides([1] * 4, layout)  # a layout name checked whatever the rank (below 3 dims it has no use)
    g = Graph("reduction", io_data_type=data_type)
    x = g.tensor(dims, layout=layout if len(dims) >= 3 else None, name="x")
    if hasattr(axes, "__iter__") and not isinstance(axes, (str, bytes)):
        axes = shapes.as_list(axes, "axes")
    # (None: every axis, as Graph.reduction takes it)
    y = g.reduction(x, op, axes=axes, output=True, output_data_type=output_data_type, name="y")  # checks the axes
    ax = sorted({int(a) % len(dims) for a in (axes if isinstance(axes, list) else [axes])}) if axes is not None \
        else list(range(len(dims)))
    op_name = as_choice(ReduceTensorOp, op, "op", "CUDNN_REDUCE_TENSOR_").name.removeprefix("CUDNN_REDUCE_TENSOR_")

    def reference(t):
        xx = t["x"]
        reduce_ = {"ADD": lambda v: v.sum(dim=ax, keepdim=True), "AVG": lambda v: v.mean(dim=ax, keepdim=True),
                   "MIN": lambda v: v.amin(dim=ax, keepdim=True), "MAX": lambda v: v.amax(dim=ax, keepdim=True),
                   "AMAX": lambda v: v.abs().amax(dim=ax, keepdim=True),
                   "NORM1": lambda v: v.abs().sum(dim=ax, keepdim=True),
                   "NORM2": lambda v: (v * v).sum(dim=ax, keepdim=True).sqrt(),
                   "MUL": lambda v: _product(v, ax), "MUL_NO_ZEROS": lambda v: _product(v.masked_fill(v == 0, 1), ax)}
        return {"y": reduce_[op_name](xx)}

    return finish("reduction", g, {"x": x, "y": y}, build, reference=reference,
                  params=dict(dims=tuple(dims), axes=tuple(ax), op=op_name))


def _product(values, axes):
    """The product over ``axes``, kept as size-1 dims (torch's prod takes one axis at a time)."""
    for a in axes:
        values = values.prod(dim=a, keepdim=True)
    return values


@pattern_function
def pooling(n=8, c=8, h=56, w=56, *, mode="maxpool", window=(2, 3), stride=(4, 5), pre_padding=(2, 3),
            post_padding=(4, 5), index=False, data_type=F16, build=True):
    """Pooling via RESAMPLE_FWD on NHWC X (cudnn-frontend's resample sample); ``index=True`` (max pooling,
    training) also writes the int8 index tensor."""
    n, c, h, w = size(n, "n"), size(c, "c"), size(h, "h"), size(w, "w")
    g = Graph("pooling", io_data_type=data_type)
    x = g.tensor([n, c, h, w], layout="nhwc", name="x")
    out = g.resample(x, mode=mode, window=window, stride=stride, pre_padding=pre_padding, post_padding=post_padding,
                     index=index)
    return finish("pooling", g, {"x": x, **out}, build, params=dict(n=n, c=c, h=h, w=w, mode=str(mode)))


resample = pooling


@pattern_function
def reshape(b=4, m=16, k=8, n=8, *, data_type=F16, build=True):
    """A batched matmul's virtual output [b,m,n] reshaped to [1,b*m,n] (RESHAPE alone gets no engine)."""
    b, m, k, n = size(b, "b"), size(m, "m"), size(k, "k"), size(n, "n")
    g = Graph("reshape", io_data_type=data_type)
    a, bm = g.tensor([b, m, k], name="a"), g.tensor([b, k, n], name="b")
    c = g.matmul(a, bm, name="c")
    y = g.reshape(c, [1, b * m, n], output=True, name="y")
    return finish("reshape", g, {"a": a, "b": bm, "c": c, "y": y}, build, params=dict(b=b, m=m, k=k, n=n))


@pattern_function
def rng(dims=(4, 16, 8, 8), *, probability=0.5, data_type=F32, build=True):
    """RNG (Bernoulli) alone writing a real mask (cuDNN runs it fused, as attention dropout)."""
    g = Graph("rng", io_data_type=data_type)
    out = g.rng(_dims(dims), probability=probability, output_data_type=data_type)
    return finish("rng", g, out, build, params=dict(dims=tuple(dims), probability=probability))


@pattern_function
def transpose(dims=(4, 16, 8, 8), permutation=(0, 2, 3, 1), *, data_type=F16, build=True):
    """TRANSPOSE alone (cuDNN 9.22+), Y laid out as cudnn-frontend infers it (X's strides permuted): a memory-bound
    graph (cuDNN 9.28.1: Blackwell engines only, none for an H100/H200)."""
    g = Graph("transpose", io_data_type=data_type)
    x = g.tensor(_dims(dims), name="x")
    perm = shapes.as_sizes(permutation, "permutation", 0, len(x.shape))
    y = g.transpose(x, perm, output=True, name="y")
    return finish("transpose", g, {"x": x, "y": y}, build, reference=lambda t: {"y": t["x"].permute(*perm)},
                  params=dict(dims=tuple(x.shape), permutation=tuple(perm)))


@pattern_function
def slice(dims=(4, 16, 8, 8), start=(0, 4, 0, 0), limit=(4, 12, 8, 8), strides=None, *, data_type=F16,  # noqa: A001
          build=True):
    """SLICE alone (cuDNN 9.22+): a memory-bound graph (cuDNN 9.28.1: Blackwell engines only); ``slice_matmul``
    is the slice an H100/H200 runs."""
    g = Graph("slice", io_data_type=data_type)
    x = g.tensor(_dims(dims), name="x")
    return finish("slice", g, {"x": x, "y": g.slice(x, start, limit, strides, output=True, name="y")}, build)


@pattern_function
def slice_matmul(b=8, m=16, n=32, k=64, *, margin=(1, 3), data_type=F16, build=True):
    """cudnn-frontend's slice + GEMM sample: A [b + 3*margin[0], m + 2*margin[1], k] sliced to [b, m, k] (a
    strided view, no copy) -> @ B [b, k, n] -> ReLU -> C [b, m, n] (fp32 matmul output, the I/O type after the
    ReLU). cuDNN 9.22+; 9.28.1 runs it on an H100/H200."""
    b, m, n, k = size(b, "b"), size(m, "m"), size(n, "n"), size(k, "k")
    margins = shapes.as_list(margin, "margin")
    if len(margins) != 2:
        raise ValueError(f"margin: expected two margins (of the batch and of m), not {len(margins)}")
    mb, mm = (size(x, "margin", 0) for x in margins)
    g = Graph("slice_matmul", io_data_type=data_type)
    a = g.tensor([b + 3 * mb, m + 2 * mm, k], name="a")
    a_slice = g.slice(a, [mb, mm, 0], [mb + b, mm + m, k], name="a_slice")
    bm = g.tensor([b, k, n], name="b")
    c = g.matmul(a_slice, bm, name="c")
    y = g.relu(c, output=True, name="y")

    def reference(t):
        return {"y": (t["a"][mb:mb + b, mm:mm + m, :] @ t["b"]).relu()}

    return finish("slice_matmul", g, {"a": a, "a_slice": a_slice, "b": bm, "c": c, "y": y}, build,
                  reference=reference, params=dict(b=b, m=m, n=n, k=k, margin=(mb, mm)))


@pattern_function
def softmax(dims=(2, 4, 128, 128), *, stats=True, data_type=F16, build=True):
    """The unified SOFTMAX (cuDNN 9.20+) over the last axis, alone (cuDNN 9.28.1: no engine for an H100/H200;
    ``sdpa_softmax_fwd`` is the softmax they run)."""
    g = Graph("softmax", io_data_type=data_type)
    x = g.tensor(_dims(dims), name="x")
    out = g.softmax(x, stats=stats, output=True)
    return finish("softmax", g, {"x": x, **out}, build)


@pattern_function
def block_scale_quantize(m=256, n=256, *, block_size=32, matmul=False, k=128, data_type=BF16, build=True):
    """MXFP8 block-scale quantize: X [1,m,n] -> Y fp8 E4M3 and E8M0 scales [1,m,n/32] (F8_128x4 layout, which
    cuDNN requires for 3-d tensors); ``matmul=True`` quantizes a matmul's output (A [1,m,k] @ B [1,k,n]).
    cuDNN's quantize engines target sm100/sm120."""
    m, n, k = size(m, "m"), size(n, "n"), size(k, "k")
    g = Graph("block_scale_quantize", io_data_type=data_type)
    tensors = {}
    if matmul:
        a, b = g.tensor([1, m, k], name="a"), g.tensor([1, k, n], name="b")
        x = g.matmul(a, b, name="c")
        tensors.update(a=a, b=b, c=x)
    else:
        x = tensors["x"] = g.tensor([1, m, n], name="x")
    out = g.block_scale_quantize(x, block_size=block_size)
    return finish("block_scale_quantize", g, {**tensors, **out}, build, params=dict(m=m, n=n, matmul=matmul))


@pattern_function
def block_scale_dequantize_matmul(m=256, n=256, k=256, *, block_size=32, reordering=None, data_type=BF16,
                                  build=True):
    """MXFP8 matmul: A [1,m,k] and B [1,k,n] fp8 E4M3 with E8M0 block scales along k, each dequantized (virtual
    fp32) into a matmul -> C [1,m,n]. ``reordering`` of the scales: none (row-major; what sm80/sm90 engines take)
    or F8_128x4 (the Blackwell swizzle, in whole 128 x 4 tiles: m and n padded to 128, the k blocks to 4)."""
    m, n, k, block_size = size(m, "m"), size(n, "n"), size(k, "k"), size(block_size, "block_size")
    if k % block_size:
        raise ValueError(f"block_size: {block_size} must divide k={k}")
    g = Graph("block_scale_dequantize_matmul", io_data_type=data_type)
    e4m3, e8m0 = DataType.CUDNN_DATA_FP8_E4M3, DataType.CUDNN_DATA_FP8_E8M0
    reordering = TensorReordering.CUDNN_TENSOR_REORDERING_NONE if reordering is None else \
        as_choice(TensorReordering, reordering, "reordering", "CUDNN_TENSOR_REORDERING_")
    kb = k // block_size
    if reordering == TensorReordering.CUDNN_TENSOR_REORDERING_F8_128x4:  # whole 128 x 4 tiles, the k blocks innermost
        sa_dims, sa_strides = f8_128x4_scale([1, m, k], 2, block_size)
        sb_dims, sb_strides = f8_128x4_scale([1, k, n], 1, block_size)
    else:
        sa_dims, sa_strides = [1, m, kb], None
        sb_dims, sb_strides = [1, kb, n], [kb * n, 1, kb]
    a = g.tensor([1, m, k], data_type=e4m3, name="a")
    sa = g.tensor(sa_dims, sa_strides, e8m0, reordering_mode=reordering, name="a_scale")
    b = g.tensor([1, k, n], [k * n, 1, k], e4m3, name="b")  # column-major: k innermost, the block axis
    sb = g.tensor(sb_dims, sb_strides, e8m0, reordering_mode=reordering, name="b_scale")
    da = g.block_scale_dequantize(a, sa, block_size=[1, block_size], name="a_dq")
    db = g.block_scale_dequantize(b, sb, block_size=[block_size, 1], name="b_dq")
    c = g.matmul(da, db, output=True, name="c")
    return finish("block_scale_dequantize_matmul", g, {"a": a, "a_scale": sa, "b": b, "b_scale": sb, "a_dq": da,
                                                       "b_dq": db, "c": c}, build, params=dict(m=m, n=n, k=k))


def _rope_graph(name, b, h, s, d, rope_dim, data_type, backward):
    b, h, s, d = size(b, "b"), size(h, "h"), size(s, "s"), size(d, "d")
    g = Graph(name, io_data_type=data_type)
    x = g.tensor([b, h, s, d], name="dy" if backward else "x")
    freqs = g.tensor([s, 1, 1, d], [d, d, d, 1], F32, name="freqs")
    if backward:
        return g, {"dy": x, "freqs": freqs, "dx": g.rope_bwd(x, freqs, rope_dim=rope_dim, name="dx")}
    return g, {"x": x, "freqs": freqs, "y": g.rope_fwd(x, freqs, rope_dim=rope_dim, name="y")}


@pattern_function
def rope(b=2, h=4, s=128, d=64, *, rope_dim=None, data_type=BF16, build=True):
    """Rotary position embedding (ROPE_FWD, cuDNN 9.24+): X [b,h,s,d] BHSD, freqs [s,1,1,d] fp32 (cuDNN 9.28.1:
    Blackwell engines only, none for an H100/H200, alone or fused)."""
    g, tensors = _rope_graph("rope", b, h, s, d, rope_dim, data_type, False)
    return finish("rope", g, tensors, build, params=dict(b=b, h=h, s=s, d=d))


@pattern_function
def rope_bwd(b=2, h=4, s=128, d=64, *, rope_dim=None, data_type=BF16, build=True):
    """The gradient of ``rope`` (ROPE_BWD, cuDNN 9.25+): dX from dY [b,h,s,d] and the same freqs (cuDNN 9.28.1:
    Blackwell engines only)."""
    g, tensors = _rope_graph("rope_bwd", b, h, s, d, rope_dim, data_type, True)
    return finish("rope_bwd", g, tensors, build, params=dict(b=b, h=h, s=s, d=d))
