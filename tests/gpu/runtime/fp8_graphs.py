"""The fp8 graphs of the GPU tests, torch-free (also built offline against the H200 profile by a CPU test):
a scaled conv (fp8 E4M3 in and out: y = conv(x, w) * descale_x * descale_w * scale_y, with the amax of the
descaled conv output), and a transpose + convert + amax (bf16 x [1, M, N] -> fp8 E4M3 y = x * scale written
transposed, amax = max |x|). Scales are by-value fp32 scalars; amax outputs fp32 [1, 1, 1, 1] / [1, 1, 1]."""
from __future__ import annotations

from cudnn_backend._bindings.enums import DataType
from cudnn_backend.graph import Graph

F32, BF16 = DataType.CUDNN_DATA_FLOAT, DataType.CUDNN_DATA_BFLOAT16
E4M3, E5M2 = DataType.CUDNN_DATA_FP8_E4M3, DataType.CUDNN_DATA_FP8_E5M2


def scaled_conv(n=4, c=32, h=12, w=12, k=64, *, io=E4M3, descale_x=0.5, descale_w=0.25, scale_y=2.0):
    """conv(x, w) (fp8, NHWC, fp32 compute) * descale_x * descale_w -> amax; that * scale_y -> y (fp8)."""
    g = Graph("fp8_scaled_conv", io_data_type=io, compute_data_type=F32, intermediate_data_type=F32)
    x = g.tensor([n, c, h, w], layout="nhwc", name="x")
    wt = g.tensor([k, c, 3, 3], layout="nhwc", name="w")
    conv = g.conv_fwd(x, wt, padding=1, name="conv")
    dx = g.scalar(descale_x, name="descale_x")
    dw = g.scalar(descale_w, name="descale_w")
    sy = g.scalar(scale_y, name="scale_y")
    descaled = g.mul(g.mul(conv, dx, name="conv_dx"), dw, name="descaled")
    y = g.mul(descaled, sy, output=True, output_data_type=io, name="y")
    amax = g.reduction(descaled, "AMAX", output=True, output_data_type=F32, name="amax")
    return g, dict(x=x, w=wt, descale_x=dx, descale_w=dw, scale_y=sy, y=y, amax=amax)


def transpose_convert_amax(n=8, c=64, h=16, w=16, *, io=BF16, out=E4M3, scale=4.0):
    """y = x * scale converted to fp8 (NHWC) and amax = max |x| (fp32 [1, 1, 1, 1]) over x [n, c, h, w] read with
    NHWC strides: the transpose is in the binding (an (n, h, w, c) array bound through its permuted view), as
    cuDNN 9.19/9.28 have no Hopper engine for a pointwise whose output strides permute its input's, and run
    TRANSPOSE on Blackwell only (``transpose_in_the_graph`` is that graph, tried and reported)."""
    g = Graph("fp8_transpose_convert_amax", io_data_type=io, compute_data_type=F32, intermediate_data_type=F32)
    x = g.tensor([n, c, h, w], layout="nhwc", name="x")
    s = g.scalar(scale, name="scale")
    y = g.tensor([n, c, h, w], layout="nhwc", data_type=out, name="y")
    g.pointwise("CUDNN_POINTWISE_MUL", x, s, output=y)
    amax = g.tensor([1, 1, 1, 1], [1, 1, 1, 1], F32, name="amax")
    g.reduction(x, "AMAX", output=amax)
    return g, dict(x=x, scale=s, y=y, amax=amax)


def transpose_in_the_graph(m=64, n=128, *, io=BF16, out=E4M3, scale=4.0):
    """The transpose in the graph: x [1, m, n] row-major -> y = x * scale (fp8) with transposed strides, amax."""
    g = Graph("fp8_transpose_in_graph", io_data_type=io, compute_data_type=F32, intermediate_data_type=F32)
    x = g.tensor([1, m, n], [m * n, n, 1], io, name="x")
    s = g.scalar(scale, name="scale", rank=3)
    y = g.tensor([1, m, n], [m * n, 1, m], out, name="y")
    g.pointwise("CUDNN_POINTWISE_MUL", x, s, output=y)
    amax = g.reduction(x, "AMAX", output=True, output_data_type=F32, name="amax")
    return g, dict(x=x, scale=s, y=y, amax=amax)


FP8_GRAPHS = {"scaled_conv": scaled_conv, "transpose_convert_amax": transpose_convert_amax,
              "transpose_in_the_graph": transpose_in_the_graph}
