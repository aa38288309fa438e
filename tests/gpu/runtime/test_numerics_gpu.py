"""Numerical verification on the GPU: cuDNN's results against fp64 references written out in numpy (the kit's:
conv2d and its gradients, GELU, layer norm by formula; independent of cuDNN and of the graph as cuDNN reads it).

Each case: the op graph is built with the session handle, the first plan of heuristics A (then
FALLBACK) whose engine suits the precision is built, a VariantPack binds device tensors laid out
exactly as the cuDNN tensors (dims and strides, NHWC or NCHW), and for each of ROUNDS rounds the
inputs get fresh random values, every output is POISONED with NaN, the plan executes, and the
outputs must be finite with ||out - ref|| / ||ref|| within the precision's tolerance
(conftest.PRECISIONS: fp16/bf16 1e-2, tf32 2e-3, fp32 1e-5). fp32/tf32 cases that no engine
offers are skipped with the reason; fp16/bf16 cases must run.
"""
import numpy as np
import pytest

from cudnn_backend.runtime.execution import VariantPack, execute

from tests.gpu.kit import conv2d, conv2d_bwd_data, conv2d_bwd_filter, gelu, relu

ROUNDS = 2
CONV_PRECISIONS = ["fp16", "bf16", "fp32", "tf32"]
LAYOUTS = ["nhwc", "nchw"]
STATS_TOL = 1e-4  # layer-norm mean / inv_variance are fp32 outputs computed in fp32


def _run(kit, plan, pack):
    execute(kit.handle, plan, pack)


# ---------------------------------------------------------------------------------------------
# convolutions
# ---------------------------------------------------------------------------------------------
@pytest.mark.parametrize("layout", LAYOUTS)
@pytest.mark.parametrize("precision", CONV_PRECISIONS)
def test_conv_fwd(gpu_kit, precision, layout):
    kit, p = gpu_kit, gpu_kit.PRECISIONS[precision]
    case = kit.conv_fwd_case(p.io, layout)
    plan = kit.plan(case, p)
    x, w, y = kit.alloc(case.x), kit.alloc(case.w), kit.alloc(case.y)
    pack = VariantPack(plan, {case.x: x, case.w: w, case.y: y})
    for r in range(ROUNDS):
        kit.randn_(x), kit.randn_(w), kit.poison_(y)
        _run(kit, plan, pack)
        ref = conv2d(x.values, w.values, padding=1)
        kit.check(y, ref, p.tol, f"conv_fwd {precision} {layout} round {r}")


@pytest.mark.parametrize("layout", LAYOUTS)
@pytest.mark.parametrize("precision", CONV_PRECISIONS)
def test_conv_bwd_data(gpu_kit, precision, layout):
    kit, p = gpu_kit, gpu_kit.PRECISIONS[precision]
    case = kit.conv_bwd_data_case(p.io, layout)
    plan = kit.plan(case, p)
    dy, w, dx = kit.alloc(case.dy), kit.alloc(case.w), kit.alloc(case.dx)
    pack = VariantPack(plan, {case.dy: dy, case.w: w, case.dx: dx})
    for r in range(ROUNDS):
        kit.randn_(dy), kit.randn_(w), kit.poison_(dx)
        _run(kit, plan, pack)
        ref = conv2d_bwd_data(dy.values, w.values, padding=1)
        kit.check(dx, ref, p.tol, f"conv_bwd_data {precision} {layout} round {r}")


@pytest.mark.parametrize("layout", LAYOUTS)
@pytest.mark.parametrize("precision", CONV_PRECISIONS)
def test_conv_bwd_filter(gpu_kit, precision, layout):
    kit, p = gpu_kit, gpu_kit.PRECISIONS[precision]
    case = kit.conv_bwd_filter_case(p.io, layout)
    plan = kit.plan(case, p)
    x, dy, dw = kit.alloc(case.x), kit.alloc(case.dy), kit.alloc(case.dw)
    pack = VariantPack(plan, {case.x: x, case.dy: dy, case.dw: dw})
    for r in range(ROUNDS):
        kit.randn_(x), kit.randn_(dy), kit.poison_(dw)
        _run(kit, plan, pack)
        ref = conv2d_bwd_filter(x.values, dy.values, dw.shape[2:], padding=1)
        kit.check(dw, ref, p.tol, f"conv_bwd_filter {precision} {layout} round {r}")


@pytest.mark.parametrize("layout", LAYOUTS)
@pytest.mark.parametrize("precision", CONV_PRECISIONS)
def test_conv_bias_relu(gpu_kit, precision, layout):
    kit, p = gpu_kit, gpu_kit.PRECISIONS[precision]
    case = kit.conv_bias_relu_case(p.io, layout)
    plan = kit.plan(case, p)
    x, w, b, y = kit.alloc(case.x), kit.alloc(case.w), kit.alloc(case.bias), kit.alloc(case.y)
    pack = VariantPack(plan, {case.x: x, case.w: w, case.bias: b, case.y: y})
    for r in range(ROUNDS):
        kit.randn_(x), kit.randn_(w), kit.randn_(b), kit.poison_(y)
        _run(kit, plan, pack)
        ref = relu(conv2d(x.values, w.values, padding=1) + b.values)
        kit.check(y, ref, p.tol, f"conv_bias_relu {precision} {layout} round {r}")


# ---------------------------------------------------------------------------------------------
# matmul, reduction
# ---------------------------------------------------------------------------------------------
@pytest.mark.parametrize("precision", CONV_PRECISIONS)
def test_matmul_bias_gelu(gpu_kit, precision):
    kit, p = gpu_kit, gpu_kit.PRECISIONS[precision]
    case = kit.matmul_bias_gelu_case(p.io)
    plan = kit.plan(case, p)
    a, b, bias, y = kit.alloc(case.a), kit.alloc(case.b), kit.alloc(case.bias), kit.alloc(case.y)
    pack = VariantPack(plan, {case.a: a, case.b: b, case.bias: bias, case.y: y})
    for r in range(ROUNDS):
        kit.randn_(a, 0.5), kit.randn_(b, 0.5), kit.randn_(bias), kit.poison_(y)
        _run(kit, plan, pack)
        ref = gelu(np.matmul(a.values, b.values) + bias.values)  # the erf GELU
        kit.check(y, ref, p.tol, f"matmul_bias_gelu {precision} round {r}")


@pytest.mark.parametrize("precision", CONV_PRECISIONS)
def test_reduction_after_matmul(gpu_kit, precision):
    """Row sums of A @ B (REDUCTION ADD fused after the matmul), fp32 output."""
    kit, p = gpu_kit, gpu_kit.PRECISIONS[precision]
    case = kit.matmul_row_sum_case(p.io)
    plan = kit.plan(case, p)
    a, b, y = kit.alloc(case.a), kit.alloc(case.b), kit.alloc(case.y)
    pack = VariantPack(plan, {case.a: a, case.b: b, case.y: y})
    for r in range(ROUNDS):
        kit.randn_(a), kit.randn_(b), kit.poison_(y)
        _run(kit, plan, pack)
        ref = np.matmul(a.values, b.values).sum(axis=-1, keepdims=True)
        kit.check(y, ref, p.tol, f"matmul row sum {precision} round {r}")


# ---------------------------------------------------------------------------------------------
# layer norm
# ---------------------------------------------------------------------------------------------
@pytest.mark.parametrize("training", [True, False], ids=["training", "inference"])
@pytest.mark.parametrize("precision", ["fp16", "bf16", "fp32"])
def test_layer_norm_fwd(gpu_kit, precision, training):
    kit, p = gpu_kit, gpu_kit.PRECISIONS[precision]
    eps = 1e-5
    case = kit.layer_norm_case(p.io, training, epsilon=eps)
    plan = kit.plan(case, p)
    x, scale, bias, y = kit.alloc(case.x), kit.alloc(case.scale), kit.alloc(case.bias), kit.alloc(case.y)
    buffers = {case.x: x, case.scale: scale, case.bias: bias, case.y: y, case.epsilon: eps}
    mean = inv = None
    if training:
        mean, inv = kit.alloc(case.mean), kit.alloc(case.inv_variance)
        buffers.update({case.mean: mean, case.inv_variance: inv})
    pack = VariantPack(plan, buffers)
    assert pack.scalars[case.epsilon.uid] == pytest.approx(eps)
    tokens, hidden = x.shape[0], x.shape[1]
    for r in range(ROUNDS):
        kit.randn_(x, 2.0, 0.5), kit.randn_(scale), kit.randn_(bias), kit.poison_(y)
        for t in (mean, inv):
            if t is not None:
                kit.poison_(t)
        _run(kit, plan, pack)
        x64 = x.values.reshape(tokens, hidden)
        mu = x64.mean(axis=1, keepdims=True)
        var = ((x64 - mu) ** 2).mean(axis=1, keepdims=True)  # biased, as layer norm uses
        inv64 = 1.0 / np.sqrt(var + eps)
        ref = (x64 - mu) * inv64 * scale.values.reshape(1, hidden) + bias.values.reshape(1, hidden)
        kit.check(kit.read(y).reshape(tokens, hidden), ref, p.tol, f"layer_norm y {precision} round {r}")
        if training:
            kit.check(kit.read(mean).reshape(tokens, 1), mu, STATS_TOL, f"layer_norm mean {precision} round {r}")
            kit.check(kit.read(inv).reshape(tokens, 1), inv64, STATS_TOL,
                      f"layer_norm inv_variance {precision} round {r}")
