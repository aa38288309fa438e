"""Matmul patterns: matmul + bias + GELU (the runtime-fusion engine's pattern), batched matmul + bias + ReLU."""
from __future__ import annotations

from cudnn_backend._bindings.enums import DataType, PointwiseMode
from cudnn_backend.graph import Graph
from cudnn_backend.core.families.pointwise import pointwise_mode
from cudnn_backend.patterns._pattern import finish, pattern_function, size

__all__ = ["matmul_bias_gelu", "matmul_bias_relu", "GELU_MODES"]

F16 = DataType.CUDNN_DATA_HALF
#: ``matmul_bias_gelu``'s ``gelu=`` by name ("erf" or "exact", "tanh") -> its pointwise mode.
GELU_MODES = {"erf": PointwiseMode.CUDNN_POINTWISE_GELU_FWD, "exact": PointwiseMode.CUDNN_POINTWISE_GELU_FWD,
              "tanh": PointwiseMode.CUDNN_POINTWISE_GELU_APPROX_TANH_FWD}


def _gelu_mode(gelu) -> PointwiseMode:
    """``gelu=`` as its pointwise mode: a name of GELU_MODES (any case), or a GELU mode by member, C name or value;
    another mode (TANH_FWD, ERF, RELU_FWD ...) is no GELU, and refused."""
    if isinstance(gelu, str) and gelu.lower() in GELU_MODES:
        return GELU_MODES[gelu.lower()]
    try:
        mode = pointwise_mode(gelu)
    except (TypeError, ValueError):
        mode = None
    if mode not in GELU_MODES.values():
        kind = ValueError if isinstance(gelu, (str, PointwiseMode)) else TypeError
        raise kind(f"gelu: {gelu!r} is no GELU: give {', '.join(map(repr, GELU_MODES))}, or "
                   f"{' or '.join(sorted({m.name for m in GELU_MODES.values()}))}")
    return mode


def _mm(batch, m, n, k, name, data_type):
    batch, m, n, k = size(batch, "batch"), size(m, "m"), size(n, "n"), size(k, "k")
    g = Graph(name, io_data_type=data_type)
    return g, (batch, m, n, k), g.tensor([batch, m, k], name="a"), g.tensor([batch, k, n], name="b"), \
        g.tensor([1, 1, n], name="bias")


@pattern_function
def matmul_bias_gelu(batch=16, m=128, n=256, k=64, *, gelu="tanh", data_type=F16, build=True):
    """A [b,m,k] @ B [b,k,n] + bias [1,1,n] -> GELU (``gelu``: "erf"/"tanh" or a PointwiseMode); intermediates
    virtual fp32."""
    mode = _gelu_mode(gelu)
    g, sizes, a, b, bias = _mm(batch, m, n, k, "matmul_bias_gelu", data_type)
    c = g.matmul(a, b, name="c")
    biased = g.bias(c, bias, name="biased")
    y = g.pointwise(mode, biased, output=True, name="y")

    def reference(t):
        import torch
        import torch.nn.functional as F

        approx = "tanh" if mode == PointwiseMode.CUDNN_POINTWISE_GELU_APPROX_TANH_FWD else "none"
        return {"y": F.gelu(torch.matmul(t["a"], t["b"]) + t["bias"], approximate=approx)}

    return finish("matmul_bias_gelu", g, {"a": a, "b": b, "bias": bias, "c": c, "biased": biased, "y": y}, build,
                  reference=reference, params=dict(batch=sizes[0], m=sizes[1], n=sizes[2], k=sizes[3], gelu=mode.name))


@pattern_function
def matmul_bias_relu(batch=8, m=256, n=256, k=128, *, data_type=F16, build=True):
    """A batched matmul + bias + ReLU: relu(A [b,m,k] @ B [b,k,n] + bias [1,1,n])."""
    g, sizes, a, b, bias = _mm(batch, m, n, k, "matmul_bias_relu", data_type)
    y = g.relu(g.bias(g.matmul(a, b, name="c"), bias, name="biased"), output=True, name="y")

    def reference(t):
        import torch

        return {"y": torch.relu(torch.matmul(t["a"], t["b"]) + t["bias"])}

    return finish("matmul_bias_relu", g, {"a": a, "b": b, "bias": bias, "y": y}, build, reference=reference,
                  params=dict(batch=sizes[0], m=sizes[1], n=sizes[2], k=sizes[3]))
