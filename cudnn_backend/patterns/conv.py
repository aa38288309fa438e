"""Convolution patterns: forward (grouped too), backward data and filter, conv + bias + ReLU, conv + bias +
residual add + ReLU, conv + GEN_STATS, conv + concat."""
from __future__ import annotations

from cudnn_backend._bindings.enums import ConvolutionMode, DataType
from cudnn_backend.graph import Graph, shapes
from cudnn_backend.core.families.conv import conv_mode
from cudnn_backend.patterns._pattern import finish, pattern_function, size

__all__ = ["conv_fwd", "conv_bwd_data", "conv_bwd_filter", "conv_bias_relu", "conv_bias_add_relu", "bn_gen_stats",
           "concat"]

F16 = DataType.CUDNN_DATA_HALF


def _conv_sizes(n, c, h, w, k, r, s, groups):
    n, c, h, w, k, r, s = (size(v, nm) for v, nm in ((n, "n"), (c, "c"), (h, "h"), (w, "w"), (k, "k"), (r, "r"),
                                                     (s, "s")))
    groups = size(groups, "groups")
    if c % groups or k % groups:
        raise ValueError(f"groups: {groups} divides neither c={c} nor k={k}" if c % groups and k % groups else
                         f"groups: {groups} must divide c={c} and k={k}")
    return n, c, h, w, k, r, s, groups


def _conv_ref(p, torch_inputs, conv_kw):
    import torch.nn.functional as F  # optional dependency: references run where torch is

    return F.conv2d(torch_inputs["x"], torch_inputs["w"], **conv_kw) if torch_inputs["x"].dim() == 4 else \
        F.conv3d(torch_inputs["x"], torch_inputs["w"], **conv_kw)


@pattern_function
def conv_fwd(n=8, c=64, h=56, w=56, k=32, r=3, s=3, *, groups=1, padding=1, stride=1, dilation=1, data_type=F16,
             layout="nhwc", mode="cross_correlation", build=True):
    """Convolution forward alone: X [n,c,h,w] * W [k,c/groups,r,s] -> Y, fp16 NHWC, fp32 compute."""
    n, c, h, w, k, r, s, groups = _conv_sizes(n, c, h, w, k, r, s, groups)
    g = Graph("conv_fwd", io_data_type=data_type)
    x = g.tensor([n, c, h, w], layout=layout, name="x")
    wt = g.tensor([k, c // groups, r, s], layout=layout, name="w")
    y = g.conv_fwd(x, wt, padding=padding, stride=stride, dilation=dilation, mode=mode, output=True, name="y")
    kw = dict(padding=padding, stride=stride, dilation=dilation, groups=groups)
    flip = conv_mode(mode) == ConvolutionMode.CUDNN_CONVOLUTION

    def reference(t):
        if flip:  # a true convolution: the cross-correlation with the filter flipped
            t = dict(t, w=t["w"].flip(list(range(2, t["w"].dim()))))
        return {"y": _conv_ref(None, t, kw)}

    return finish("conv_fwd", g, {"x": x, "w": wt, "y": y}, build, reference=reference,
                  params=dict(n=n, c=c, h=h, w=w, k=k, r=r, s=s, groups=groups, padding=padding, stride=stride,
                              dilation=dilation, layout=layout))


@pattern_function
def conv_bwd_data(n=8, c=64, h=56, w=56, k=32, r=3, s=3, *, padding=1, stride=1, dilation=1, data_type=F16,
                  layout="nhwc", build=True):
    """Convolution backward data: dY and W -> dX (the forward conv of ``conv_fwd``, transposed)."""
    n, c, h, w, k, r, s, _ = _conv_sizes(n, c, h, w, k, r, s, 1)
    g = Graph("conv_bwd_data", io_data_type=data_type)
    ydims = shapes.conv_output_dims([n, c, h, w], [k, c, r, s], padding, stride, dilation)
    dy = g.tensor(ydims, layout=layout, name="dy")
    wt = g.tensor([k, c, r, s], layout=layout, name="w")
    dx = g.conv_bwd_data(dy, wt, [n, c, h, w], padding=padding, stride=stride, dilation=dilation, output=True,
                         name="dx")

    def reference(t):
        import torch

        return {"dx": torch.nn.grad.conv2d_input([n, c, h, w], t["w"], t["dy"], stride=stride, padding=padding,
                                                 dilation=dilation)}

    return finish("conv_bwd_data", g, {"dy": dy, "w": wt, "dx": dx}, build, reference=reference,
                  params=dict(n=n, c=c, h=h, w=w, k=k, r=r, s=s, padding=padding, stride=stride, dilation=dilation))


@pattern_function
def conv_bwd_filter(n=8, c=64, h=56, w=56, k=32, r=3, s=3, *, padding=1, stride=1, dilation=1, data_type=F16,
                    layout="nhwc", build=True):
    """Convolution backward filter: X and dY -> dW."""
    n, c, h, w, k, r, s, _ = _conv_sizes(n, c, h, w, k, r, s, 1)
    g = Graph("conv_bwd_filter", io_data_type=data_type)
    ydims = shapes.conv_output_dims([n, c, h, w], [k, c, r, s], padding, stride, dilation)
    x = g.tensor([n, c, h, w], layout=layout, name="x")
    dy = g.tensor(ydims, layout=layout, name="dy")
    dw = g.conv_bwd_filter(x, dy, [k, c, r, s], padding=padding, stride=stride, dilation=dilation, output=True,
                           name="dw")

    def reference(t):
        import torch

        return {"dw": torch.nn.grad.conv2d_weight(t["x"], [k, c, r, s], t["dy"], stride=stride, padding=padding,
                                                  dilation=dilation)}

    return finish("conv_bwd_filter", g, {"x": x, "dy": dy, "dw": dw}, build, reference=reference,
                  params=dict(n=n, c=c, h=h, w=w, k=k, r=r, s=s, padding=padding, stride=stride, dilation=dilation))


@pattern_function
def conv_bias_relu(n=8, c=64, h=56, w=56, k=32, r=3, s=3, *, groups=1, padding=1, stride=1, dilation=1,
                   data_type=F16, layout="nhwc", build=True):
    """The cuDNN guide's fusion: conv -> +bias [1,k,1,1] -> ReLU, the two intermediates virtual (fp32)."""
    n, c, h, w, k, r, s, groups = _conv_sizes(n, c, h, w, k, r, s, groups)
    g = Graph("conv_bias_relu", io_data_type=data_type)
    x = g.tensor([n, c, h, w], layout=layout, name="x")
    wt = g.tensor([k, c // groups, r, s], layout=layout, name="w")
    conv_out = g.conv_fwd(x, wt, padding=padding, stride=stride, dilation=dilation, name="conv_out")
    b = g.tensor([1, k, 1, 1], layout=layout, name="bias")
    biased = g.bias(conv_out, b, name="biased")
    y = g.relu(biased, output=True, name="y")
    kw = dict(padding=padding, stride=stride, dilation=dilation, groups=groups)

    def reference(t):
        import torch

        return {"y": torch.relu(_conv_ref(None, t, kw) + t["bias"])}

    return finish("conv_bias_relu", g, {"x": x, "w": wt, "bias": b, "conv_out": conv_out, "biased": biased, "y": y},
                  build, reference=reference,
                  params=dict(n=n, c=c, h=h, w=w, k=k, r=r, s=s, groups=groups, padding=padding, stride=stride,
                              dilation=dilation, layout=layout))


@pattern_function
def conv_bias_add_relu(n=8, c=64, h=56, w=56, k=64, r=3, s=3, *, padding=1, stride=1, data_type=F16, layout="nhwc",
                       build=True):
    """A residual block's tail: relu(conv(x, w) + bias + residual), the residual [n,k,h',w'] a real input."""
    n, c, h, w, k, r, s, _ = _conv_sizes(n, c, h, w, k, r, s, 1)
    g = Graph("conv_bias_add_relu", io_data_type=data_type)
    x = g.tensor([n, c, h, w], layout=layout, name="x")
    wt = g.tensor([k, c, r, s], layout=layout, name="w")
    conv_out = g.conv_fwd(x, wt, padding=padding, stride=stride, name="conv_out")
    b = g.tensor([1, k, 1, 1], layout=layout, name="bias")
    res = g.tensor(list(conv_out.shape), layout=layout, name="residual")
    y = g.relu(g.bias(g.bias(conv_out, b, name="biased"), res, name="summed"), output=True, name="y")

    def reference(t):
        import torch

        return {"y": torch.relu(_conv_ref(None, t, dict(padding=padding, stride=stride)) + t["bias"] + t["residual"])}

    return finish("conv_bias_add_relu", g, {"x": x, "w": wt, "bias": b, "residual": res, "y": y}, build,
                  reference=reference, params=dict(n=n, c=c, h=h, w=w, k=k, r=r, s=s, padding=padding, stride=stride))


@pattern_function
def bn_gen_stats(n=4, c=64, h=16, w=16, k=32, r=3, s=3, *, data_type=F16, build=True):
    """Batch-norm statistics fused after a convolution (cuDNN's ConvBNfprop stage): Y = conv(X, W) (real) and
    GEN_STATS' per-channel sum and sum of squares of Y, [1, k, 1, 1] fp32."""
    n, c, h, w, k, r, s, _ = _conv_sizes(n, c, h, w, k, r, s, 1)
    g = Graph("bn_gen_stats", io_data_type=data_type)
    x = g.tensor([n, c, h, w], layout="nhwc", name="x")
    wt = g.tensor([k, c, r, s], layout="nhwc", name="w")
    y = g.conv_fwd(x, wt, padding=(r - 1) // 2, output=True, name="y")
    stats = g.gen_stats(y)

    def reference(t):
        import torch

        yy = _conv_ref(None, t, dict(padding=(r - 1) // 2))
        return {"y": yy, "sum": yy.sum(dim=(0, 2, 3), keepdim=True), "sqsum": (yy * yy).sum(dim=(0, 2, 3),
                                                                                          keepdim=True)}

    return finish("bn_gen_stats", g, {"x": x, "w": wt, "y": y, **stats}, build, reference=reference,
                  params=dict(n=n, c=c, h=h, w=w, k=k, r=r, s=s))


@pattern_function
def concat(n=16, c=128, h=64, w=64, k=256, *, inplace_index=1, data_type=F16, build=True):
    """cudnn-frontend's conv + concat fusion: a 1x1 conv's virtual output [n,k,h,w] and a real [n,k,h,w] input ->
    [n,2k,h,w] along channels."""
    n, c, h, w, k, _, _, _ = _conv_sizes(n, c, h, w, k, 1, 1, 1)
    g = Graph("concat", io_data_type=data_type)
    x = g.tensor([n, c, h, w], layout="nhwc", name="x")
    wt = g.tensor([k, c, 1, 1], layout="nhwc", name="w")
    y = g.conv_fwd(x, wt, output_data_type=data_type, name="conv_y")
    other = g.tensor([n, k, h, w], layout="nhwc", name="other")
    out = g.concat([y, other], 1, inplace_index=inplace_index, name="concat")

    def reference(t):
        import torch

        return {"y": torch.cat([_conv_ref(None, t, {}), t["other"]], dim=1)}

    return finish("concat", g, {"x": x, "w": wt, "conv_y": y, "other": other, "y": out}, build, reference=reference,
                  params=dict(n=n, c=c, h=h, w=w, k=k))
