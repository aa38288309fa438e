"""Kernel counts by stream capture (any engine), against cuDNN's native CUDA graph where both apply."""
import pytest

from cudnn_backend import patterns
from cudnn_backend.runtime.execution import CudaGraph, NativeCudaGraphNotSupportedError, VariantPack, captured_kernel_count
from cudnn_backend.runtime.heuristics import build_first_plan


@pytest.mark.parametrize("modes", [("A",), ("FALLBACK",)])
def test_captured_kernel_count_of_conv_bias_relu(gpu_kit, modes, results_file):
    kit = gpu_kit
    p = patterns.conv_bias_relu(n=2, c=16, h=8, w=8, k=16, build=False)
    og = p.build(kit.handle)
    plan, _ = build_first_plan(og, handle=kit.handle, modes=modes, fallback=False)
    bufs = {p.x: kit.alloc(p.x, "randn"), p.w: kit.alloc(p.w, "randn"), p.bias: kit.alloc(p.bias, "randn"),
            p.y: kit.alloc(p.y, "nan")}
    pack = VariantPack(plan, bufs)
    stream_before = kit.handle.stream
    count = captured_kernel_count(kit.handle, plan, pack)
    assert kit.handle.stream == stream_before
    assert count >= 1
    try:
        with CudaGraph(kit.handle, plan, pack, instantiate=False) as g:
            assert g.kernel_count() == count  # both ways see the same kernels
    except NativeCudaGraphNotSupportedError:
        pass
    results_file(test="captured_kernel_count", modes=modes, engine=plan.engine_index, kernels=count)
