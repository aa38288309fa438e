"""Other single-family patterns: reduction, pooling, reshape, RNG, transpose, slice, softmax, block-scale
quantize and dequantize + matmul, RoPE."""
from __future__ import annotations

from cudnn_backend._bindings.enums import DataType, TensorReordering
from cudnn_backend.graph import Graph, shapes
from cudnn_backend.patterns._pattern import finish, size

__all__ = ["reduction", "pooling", "resample", "reshape", "rng", "transpose", "slice", "softmax",
           "block_scale_quantize", "block_scale_dequantize_matmul", "rope"]

F16 = DataType.CUDNN_DATA_HALF
F32 = DataType.CUDNN_DATA_FLOAT
BF16 = DataType.CUDNN_DATA_BFLOAT16


def _dims(dims, what="dims"):
    return shapes.as_dims(dims, what)


def reduction(dims=(8, 64, 56, 56), axes=(0, 2, 3), *, op="ADD", layout="nhwc", data_type=F16,
              output_data_type=F32, build=True):
    """Reduce X over ``axes`` (kept as size-1 dims), e.g. the per-channel sum of an NHWC activation (fp32 out)."""
    dims = _dims(dims)
    g = Graph("reduction", io_data_type=data_type)
    x = g.tensor(dims, layout=layout if len(dims) >= 3 else None, name="x")
    if hasattr(axes, "__iter__") and not isinstance(axes, (str, bytes)):
        axes = shapes.as_list(axes, "axes")
    y = g.reduction(x, op, axes=axes, output=True, output_data_type=output_data_type, name="y")  # checks the axes
    ax = [int(a) % len(dims) for a in (axes if isinstance(axes, list) else [axes])]
    op_name = str(getattr(op, "name", op)).upper()

    def reference(t):
        xx = t["x"]
        if "MAX" in op_name and "AMAX" not in op_name:
            return {"y": xx.amax(dim=ax, keepdim=True)}
        if "AMAX" in op_name:
            return {"y": xx.abs().amax(dim=ax, keepdim=True)}
        if "MIN" in op_name:
            return {"y": xx.amin(dim=ax, keepdim=True)}
        return {"y": xx.sum(dim=ax, keepdim=True)} if op_name.endswith("ADD") else None

    return finish("reduction", g, {"x": x, "y": y}, build, reference=reference,
                  params=dict(dims=tuple(dims), axes=tuple(ax), op=op_name))


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


def reshape(b=4, m=16, k=8, n=8, *, data_type=F16, build=True):
    """A batched matmul's virtual output [b,m,n] reshaped to [1,b*m,n] (RESHAPE alone gets no engine)."""
    b, m, k, n = size(b, "b"), size(m, "m"), size(k, "k"), size(n, "n")
    g = Graph("reshape", io_data_type=data_type)
    a, bm = g.tensor([b, m, k], name="a"), g.tensor([b, k, n], name="b")
    c = g.matmul(a, bm, name="c")
    y = g.reshape(c, [1, b * m, n], output=True, name="y")
    return finish("reshape", g, {"a": a, "b": bm, "c": c, "y": y}, build, params=dict(b=b, m=m, k=k, n=n))


def rng(dims=(4, 16, 8, 8), *, probability=0.5, data_type=F32, build=True):
    """RNG (Bernoulli) alone writing a real mask (cuDNN runs it fused, as attention dropout)."""
    g = Graph("rng", io_data_type=data_type)
    out = g.rng(_dims(dims), probability=probability, output_data_type=data_type)
    return finish("rng", g, out, build, params=dict(dims=tuple(dims), probability=probability))


def transpose(dims=(4, 16, 8, 8), permutation=(0, 2, 3, 1), *, data_type=F16, build=True):
    """TRANSPOSE alone (cuDNN 9.22+)."""
    g = Graph("transpose", io_data_type=data_type)
    x = g.tensor(_dims(dims), name="x")
    return finish("transpose", g, {"x": x, "y": g.transpose(x, permutation, output=True, name="y")}, build)


def slice(dims=(4, 16, 8, 8), start=(0, 4, 0, 0), limit=(4, 12, 8, 8), strides=None, *, data_type=F16,  # noqa: A001
          build=True):
    """SLICE alone (cuDNN 9.22+)."""
    g = Graph("slice", io_data_type=data_type)
    x = g.tensor(_dims(dims), name="x")
    return finish("slice", g, {"x": x, "y": g.slice(x, start, limit, strides, output=True, name="y")}, build)


def softmax(dims=(2, 4, 128, 128), *, stats=True, data_type=F16, build=True):
    """The unified SOFTMAX (cuDNN 9.20+) over the last axis."""
    g = Graph("softmax", io_data_type=data_type)
    x = g.tensor(_dims(dims), name="x")
    out = g.softmax(x, stats=stats, output=True)
    return finish("softmax", g, {"x": x, **out}, build)


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


def block_scale_dequantize_matmul(m=256, n=256, k=256, *, block_size=32, reordering=None, data_type=BF16,
                                  build=True):
    """MXFP8 matmul: A [1,m,k] and B [1,k,n] fp8 E4M3 with E8M0 block scales along k, each dequantized (virtual
    fp32) into a matmul -> C [1,m,n]. ``reordering`` of the scales: none (row-major; what sm80/sm90 engines take)
    or F8_128x4 (the Blackwell swizzle)."""
    m, n, k, block_size = size(m, "m"), size(n, "n"), size(k, "k"), size(block_size, "block_size")
    if k % block_size:
        raise ValueError(f"block_size: {block_size} must divide k={k}")
    g = Graph("block_scale_dequantize_matmul", io_data_type=data_type)
    e4m3, e8m0 = DataType.CUDNN_DATA_FP8_E4M3, DataType.CUDNN_DATA_FP8_E8M0
    reordering = TensorReordering.CUDNN_TENSOR_REORDERING_NONE if reordering is None else reordering
    kb = k // block_size
    a = g.tensor([1, m, k], data_type=e4m3, name="a")
    sa = g.tensor([1, m, kb], data_type=e8m0, reordering_mode=reordering, name="a_scale")
    b = g.tensor([1, k, n], [k * n, 1, k], e4m3, name="b")  # column-major: k innermost, the block axis
    sb = g.tensor([1, kb, n], [kb * n, 1, kb], e8m0, reordering_mode=reordering, name="b_scale")
    da = g.block_scale_dequantize(a, sa, block_size=[1, block_size], name="a_dq")
    db = g.block_scale_dequantize(b, sb, block_size=[block_size, 1], name="b_dq")
    c = g.matmul(da, db, output=True, name="c")
    return finish("block_scale_dequantize_matmul", g, {"a": a, "a_scale": sa, "b": b, "b_scale": sb, "a_dq": da,
                                                       "b_dq": db, "c": c}, build, params=dict(m=m, n=n, k=k))


def rope(b=2, h=4, s=128, d=64, *, rope_dim=None, data_type=BF16, build=True):
    """Rotary position embedding (cuDNN 9.24+): X [b,h,s,d] BHSD, freqs [s,1,1,d] fp32."""
    b, h, s, d = size(b, "b"), size(h, "h"), size(s, "s"), size(d, "d")
    g = Graph("rope", io_data_type=data_type)
    x = g.tensor([b, h, s, d], name="x")
    freqs = g.tensor([s, 1, 1, d], [d, d, d, 1], F32, name="freqs")
    return finish("rope", g, {"x": x, "freqs": freqs, "y": g.rope_fwd(x, freqs, rope_dim=rope_dim, name="y")}, build)
