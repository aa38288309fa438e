"""Numerical verification on the GPU: cuDNN's results against an upcast (fp64) torch reference.

Each case: the op graph is built with the session handle, the first plan of heuristics A (then
FALLBACK) whose engine suits the precision is built, a VariantPack binds torch tensors laid out
exactly as the cuDNN tensors (dims and strides, NHWC or NCHW), and for each of ROUNDS rounds the
inputs get fresh random values, every output is POISONED with NaN, the plan executes, and the
outputs must be finite with ||out - ref|| / ||ref|| within the precision's tolerance
(conftest.PRECISIONS: fp16/bf16 1e-2, tf32 2e-3, fp32 1e-5). fp32/tf32 cases that no engine
offers are skipped with the reason; fp16/bf16 cases must run.
"""
import pytest

torch = pytest.importorskip("torch")
import torch.nn.functional as F  # noqa: E402

from cudnn_backend.runtime.execution import VariantPack, execute  # noqa: E402

pytestmark = pytest.mark.gpu

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
        with torch.no_grad():
            ref = F.conv2d(x.double(), w.double(), padding=1)
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
        x64 = torch.zeros(tuple(dx.shape), dtype=torch.float64, device="cuda", requires_grad=True)
        F.conv2d(x64, w.double(), padding=1).backward(dy.double())
        kit.check(dx, x64.grad, p.tol, f"conv_bwd_data {precision} {layout} round {r}")


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
        w64 = torch.zeros(tuple(dw.shape), dtype=torch.float64, device="cuda", requires_grad=True)
        F.conv2d(x.double(), w64, padding=1).backward(dy.double())
        kit.check(dw, w64.grad, p.tol, f"conv_bwd_filter {precision} {layout} round {r}")


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
        with torch.no_grad():
            ref = torch.relu(F.conv2d(x.double(), w.double(), padding=1) + b.double())
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
        with torch.no_grad():
            ref = F.gelu(torch.matmul(a.double(), b.double()) + bias.double(), approximate="none")
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
        with torch.no_grad():
            ref = torch.matmul(a.double(), b.double()).sum(dim=-1, keepdim=True)
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
        with torch.no_grad():
            x64 = x.double().reshape(tokens, hidden)
            mu = x64.mean(dim=1, keepdim=True)
            var = ((x64 - mu) ** 2).mean(dim=1, keepdim=True)  # biased, as layer norm uses
            inv64 = torch.rsqrt(var + eps)
            ref = (x64 - mu) * inv64 * scale.double().reshape(1, hidden) + bias.double().reshape(1, hidden)
        kit.check(y.double().reshape(tokens, hidden), ref, p.tol, f"layer_norm y {precision} round {r}")
        if training:
            kit.check(mean.double().reshape(tokens, 1), mu, STATS_TOL, f"layer_norm mean {precision} round {r}")
            kit.check(inv.double().reshape(tokens, 1), inv64, STATS_TOL,
                      f"layer_norm inv_variance {precision} round {r}")
