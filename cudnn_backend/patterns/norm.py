"""Normalization patterns: layer / RMS norm forward and backward, batch-norm finalize statistics."""
from __future__ import annotations

from cudnn_backend._bindings.enums import DataType
from cudnn_backend.graph import Graph
from cudnn_backend.patterns._pattern import finish, pattern_function, size

__all__ = ["layer_norm_fwd", "rms_norm_fwd", "layer_norm_bwd", "rms_norm_bwd", "bn_finalize", "batch_norm_fwd"]

F16 = DataType.CUDNN_DATA_HALF
F32 = DataType.CUDNN_DATA_FLOAT


def _norm_inputs(g, tokens, hidden, data_type):
    """cudnn-frontend's norm layout: X [tokens, hidden, 1, 1] (hidden innermost), per-feature [1, hidden, 1, 1] fp32."""
    xs = [hidden, 1, hidden, hidden]
    return g.tensor([tokens, hidden, 1, 1], xs, data_type, name="x"), xs


@pattern_function
def layer_norm_fwd(tokens=4 * 1024, hidden=128, *, training=True, epsilon=1e-5, data_type=F16, build=True):
    """Layer norm forward over ``hidden``: training gives Y, mean and inv_variance (fp32), inference Y only."""
    tokens, hidden = size(tokens, "tokens"), size(hidden, "hidden")
    g = Graph("layer_norm_fwd", io_data_type=data_type)
    x, xs = _norm_inputs(g, tokens, hidden, data_type)
    scale = g.tensor([1, hidden, 1, 1], xs, F32, name="scale")
    bias = g.tensor([1, hidden, 1, 1], xs, F32, name="bias")
    out = g.layer_norm(x, scale, bias, epsilon=epsilon, training=training, name="ln")

    def reference(t):
        import torch

        xx = t["x"]
        mean = xx.mean(dim=1, keepdim=True)
        var = xx.var(dim=1, unbiased=False, keepdim=True)
        inv = torch.rsqrt(var + epsilon)
        res = {"y": (xx - mean) * inv * t["scale"] + t["bias"]}
        if training:
            res.update(mean=mean, inv_variance=inv)
        return res

    return finish("layer_norm_fwd", g, {"x": x, "scale": scale, "bias": bias, **out}, build, reference=reference,
                  params=dict(tokens=tokens, hidden=hidden, training=training, epsilon=epsilon))


@pattern_function
def rms_norm_fwd(tokens=4 * 1024, hidden=128, *, training=True, bias=False, epsilon=1e-5, data_type=F32,
                 build=True):
    """RMS norm forward: training gives Y and inv_variance (fp32); ``bias`` adds the optional bias."""
    tokens, hidden = size(tokens, "tokens"), size(hidden, "hidden")
    g = Graph("rms_norm_fwd", io_data_type=data_type)
    x, xs = _norm_inputs(g, tokens, hidden, data_type)
    scale = g.tensor([1, hidden, 1, 1], xs, F32, name="scale")
    b = g.tensor([1, hidden, 1, 1], xs, F32, name="bias") if bias else None
    out = g.rms_norm(x, scale, b, epsilon=epsilon, training=training, name="rms")

    def reference(t):
        import torch

        xx = t["x"]
        inv = torch.rsqrt((xx * xx).mean(dim=1, keepdim=True) + epsilon)
        y = xx * inv * t["scale"] + (t["bias"] if bias else 0)
        return {"y": y, "inv_variance": inv} if training else {"y": y}

    return finish("rms_norm_fwd", g, {"x": x, "scale": scale, "bias": b, **out}, build, reference=reference,
                  params=dict(tokens=tokens, hidden=hidden, training=training, bias=bias, epsilon=epsilon))


@pattern_function
def layer_norm_bwd(tokens=4 * 1024, hidden=128, *, data_type=F16, build=True):
    """Layer norm backward: dY, X, scale, saved mean and inv_variance -> dX, dscale, dbias."""
    return _norm_bwd("layer_norm_bwd", tokens, hidden, data_type, build)


@pattern_function
def rms_norm_bwd(tokens=4 * 1024, hidden=128, *, data_type=F32, build=True):
    """RMS norm backward: dY, X, scale, saved inv_variance -> dX, dscale (no dbias)."""
    return _norm_bwd("rms_norm_bwd", tokens, hidden, data_type, build)


def _norm_bwd(name, tokens, hidden, data_type, build):
    """The backward of layer norm (with the saved mean) or RMS norm (without): ``name`` is the pattern and the
    ``Graph`` method."""
    tokens, hidden = size(tokens, "tokens"), size(hidden, "hidden")
    g = Graph(name, io_data_type=data_type)
    x, xs = _norm_inputs(g, tokens, hidden, data_type)
    dy = g.tensor([tokens, hidden, 1, 1], xs, data_type, name="dy")
    scale = g.tensor([1, hidden, 1, 1], xs, F32, name="scale")
    saved = {"mean": g.tensor([tokens, 1, 1, 1], [1, 1, 1, 1], F32, name="mean")} if name == "layer_norm_bwd" else {}
    saved["inv_variance"] = g.tensor([tokens, 1, 1, 1], [1, 1, 1, 1], F32, name="inv_variance")
    out = getattr(g, name)(dy, x, scale, *saved.values(), name="ln_bwd" if name == "layer_norm_bwd" else "rms_bwd")
    return finish(name, g, {"x": x, "dy": dy, "scale": scale, **saved, **out}, build,
                  params=dict(tokens=tokens, hidden=hidden))


@pattern_function
def batch_norm_fwd(n=8, c=64, h=16, w=16, *, epsilon=1e-5, momentum=None, running_stats=True, data_type=F16,
                   build=True):
    """Batch norm training forward on NHWC X: Y, per-channel saved mean / inv_variance [1,c,1,1] fp32, and the
    updated running statistics ``next_running_mean`` / ``next_running_var`` of the ``running_mean`` / ``running_var``
    read (weighed by ``momentum``: None means 0.1; refused without them)."""
    n, c, h, w = size(n, "n"), size(c, "c"), size(h, "h"), size(w, "w")
    g = Graph("batch_norm_fwd", io_data_type=data_type)
    x = g.tensor([n, c, h, w], layout="nhwc", name="x")

    def pc(name):
        return g.tensor([1, c, 1, 1], layout="nhwc", data_type=F32, name=name)

    scale, bias = pc("scale"), pc("bias")
    rm = pc("running_mean") if running_stats else None
    rv = pc("running_var") if running_stats else None
    out = g.batch_norm(x, scale, bias, epsilon=epsilon, momentum=momentum, running_mean=rm, running_var=rv, name="bn")
    # the updated statistics by bn_finalize's names: "running_mean" / "running_var" are the ones read
    out["next_running_mean"], out["next_running_var"] = out.pop("running_mean"), out.pop("running_var")
    return finish("batch_norm_fwd", g, {"x": x, "scale": scale, "bias": bias, "running_mean": rm,
                                        "running_var": rv, **out}, build, params=dict(n=n, c=c, h=h, w=w))


@pattern_function
def bn_finalize(c=32, *, accum_count=64, epsilon=1e-3, momentum=1e-3, running_stats=True, build=True):
    """BN_FINALIZE_STATISTICS (fp32, [1,c,1,1] per-channel tensors), as cudnn-frontend's BN finalize sample."""
    c = size(c, "c")
    accum_count = size(accum_count, "accum_count")
    g = Graph("bn_finalize", io_data_type=F32)

    def pc(name):
        return g.tensor([1, c, 1, 1], [c, 1, c, c], F32, name=name)

    sum_, sqsum, scale, bias = pc("sum"), pc("sqsum"), pc("scale"), pc("bias")
    prm = pc("prev_running_mean") if running_stats else None
    prv = pc("prev_running_var") if running_stats else None
    out = g.bn_finalize(sum_, sqsum, scale, bias, accum_count=accum_count, epsilon=epsilon, momentum=momentum,
                        prev_running_mean=prm, prev_running_var=prv)
    return finish("bn_finalize", g, {"sum": sum_, "sqsum": sqsum, "scale": scale, "bias": bias,
                                     "prev_running_mean": prm, "prev_running_var": prv, **out}, build,
                  params=dict(c=c, accum_count=accum_count))
