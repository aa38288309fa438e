"""Per-call host time: cudnn-backend next to C, torch and cudnn-frontend (see conftest.py)."""
import pytest

import cudnn_backend as cb
from cudnn_backend import *  # noqa: F403 - the C names
from cudnn_backend import patterns

from percall_support import CASES, record

ITERATIONS = 1000  # calls per timed round (async launches; no sync inside a round)
ROUNDS = 30


def _pedantic(benchmark, fn, *args, **kwargs):
    # half a second of the same calls first, as the C loop gets (CPU and GPU clocks ramp up)
    import time

    end = time.perf_counter() + 0.5
    while time.perf_counter() < end:
        for _ in range(100):
            fn(*args, **kwargs)
    return benchmark.pedantic(fn, args=args, kwargs=kwargs, iterations=ITERATIONS, rounds=ROUNDS, warmup_rounds=5)


# ---------------------------------------------------------------------------------------------
# execute
# ---------------------------------------------------------------------------------------------
def test_execute_prebuilt_pack(benchmark, conv_case, handle, c_results, torch_mod):
    from cudnn_backend.runtime.execution import execute

    _pedantic(benchmark, execute, handle, conv_case.plan, conv_case.pack)
    torch_mod.cuda.synchronize()
    record(benchmark, c_results, conv_case.name, "execute_us")
    benchmark.extra_info["engine"] = conv_case.plan.engine_index


def test_bind_and_execute(benchmark, conv_case, handle, c_results, torch_mod):
    _pedantic(benchmark, conv_case.pack.bind_and_execute, handle, conv_case.plan, conv_case.pointers)
    torch_mod.cuda.synchronize()
    record(benchmark, c_results, conv_case.name, "bind_execute_us")


def test_cuda_graph_replay(benchmark, conv_case, handle, c_results, torch_mod):
    """cuDNN's native CUDA graph of the plan when the engine supports it, else a stream capture."""
    from cudnn_backend.runtime.execution import CudaGraph, NativeCudaGraphNotSupportedError, execute

    try:
        graph = CudaGraph(handle, conv_case.plan, conv_case.pack)
        launch, how = graph.launch, "native (cudnnBackendPopulateCudaGraph)"
        benchmark.extra_info["kernels"] = graph.kernel_count()
    except NativeCudaGraphNotSupportedError:
        torch = torch_mod
        side = torch.cuda.Stream()
        capture_handle = cb.Handle()
        capture_handle.stream = side.cuda_stream
        g = torch.cuda.CUDAGraph()
        execute(capture_handle, conv_case.plan, conv_case.pack)  # warm up on the side stream
        torch.cuda.synchronize()
        with torch.cuda.graph(g, stream=side):
            execute(capture_handle, conv_case.plan, conv_case.pack)
        launch, how = g.replay, "stream capture (torch.cuda.CUDAGraph)"
    _pedantic(benchmark, launch)
    torch_mod.cuda.synchronize()
    benchmark.extra_info["graph"] = how
    record(benchmark, c_results, conv_case.name, "execute_us")


# ---------------------------------------------------------------------------------------------
# the others, same conv
# ---------------------------------------------------------------------------------------------
def test_torch_conv2d(benchmark, conv_case, c_results, torch_mod):
    import torch.nn.functional as F

    torch_mod.backends.cudnn.benchmark = False
    _pedantic(benchmark, F.conv2d, conv_case.x, conv_case.w, padding=conv_case.sizes["padding"])
    torch_mod.cuda.synchronize()
    record(benchmark, c_results, conv_case.name, "execute_us")


def test_cudnn_frontend_execute(benchmark, conv_case, c_results, torch_mod):
    cudnn = pytest.importorskip("cudnn")
    torch = torch_mod
    try:
        fh = cudnn.create_handle()
        cudnn.set_stream(handle=fh, stream=torch.cuda.current_stream().cuda_stream)
        g = cudnn.pygraph(io_data_type=cudnn.data_type.HALF, intermediate_data_type=cudnn.data_type.FLOAT,
                          compute_data_type=cudnn.data_type.FLOAT, handle=fh)
        x = g.tensor_like(conv_case.x)
        w = g.tensor_like(conv_case.w)
        p = conv_case.sizes["padding"]
        y = g.conv_fprop(image=x, weight=w, padding=[p, p], stride=[1, 1], dilation=[1, 1])
        y.set_output(True).set_data_type(cudnn.data_type.HALF)
        g.build([cudnn.heur_mode.A, cudnn.heur_mode.FALLBACK])
        ws = torch.empty(max(1, g.get_workspace_size()), device="cuda", dtype=torch.uint8)
        variant = {x: conv_case.x, w: conv_case.w, y: conv_case.y}
        g.execute(variant, ws, handle=fh)
        torch.cuda.synchronize()
    except Exception as e:  # pragma: no cover - depends on the frontend build
        pytest.skip(f"cudnn-frontend could not build the conv: {e}")
    _pedantic(benchmark, g.execute, variant, ws, handle=fh)
    torch.cuda.synchronize()
    benchmark.extra_info["frontend_version"] = getattr(cudnn, "__version__", "?")
    record(benchmark, c_results, conv_case.name, "execute_us")


# ---------------------------------------------------------------------------------------------
# building and finalizing the conv + bias + ReLU graph
# ---------------------------------------------------------------------------------------------
def _nhwc(d):
    n, c, h, w = d
    return [c * h * w, 1, w * c, c]


def _tensor(uid, dims, dtype, virtual):
    t = cb.Descriptor(CUDNN_BACKEND_TENSOR_DESCRIPTOR)
    t.set(CUDNN_ATTR_TENSOR_DATA_TYPE, CUDNN_TYPE_DATA_TYPE, dtype)
    t.set(CUDNN_ATTR_TENSOR_DIMENSIONS, CUDNN_TYPE_INT64, dims)
    t.set(CUDNN_ATTR_TENSOR_STRIDES, CUDNN_TYPE_INT64, _nhwc(dims))
    t.set(CUDNN_ATTR_TENSOR_UNIQUE_ID, CUDNN_TYPE_INT64, uid)
    t.set(CUDNN_ATTR_TENSOR_BYTE_ALIGNMENT, CUDNN_TYPE_INT64, 16)
    t.set(CUDNN_ATTR_TENSOR_IS_VIRTUAL, CUDNN_TYPE_BOOLEAN, virtual)
    return t.finalize()


def _pointwise(mode, x, b, y):
    pw = cb.Descriptor(CUDNN_BACKEND_POINTWISE_DESCRIPTOR)
    pw.set(CUDNN_ATTR_POINTWISE_MODE, CUDNN_TYPE_POINTWISE_MODE, mode)
    pw.set(CUDNN_ATTR_POINTWISE_MATH_PREC, CUDNN_TYPE_DATA_TYPE, CUDNN_DATA_FLOAT)
    pw.finalize()
    op = cb.Descriptor(CUDNN_BACKEND_OPERATION_POINTWISE_DESCRIPTOR)
    op.set(CUDNN_ATTR_OPERATION_POINTWISE_PW_DESCRIPTOR, CUDNN_TYPE_BACKEND_DESCRIPTOR, pw)
    op.set(CUDNN_ATTR_OPERATION_POINTWISE_XDESC, CUDNN_TYPE_BACKEND_DESCRIPTOR, x)
    if b is not None:
        op.set(CUDNN_ATTR_OPERATION_POINTWISE_BDESC, CUDNN_TYPE_BACKEND_DESCRIPTOR, b)
    op.set(CUDNN_ATTR_OPERATION_POINTWISE_YDESC, CUDNN_TYPE_BACKEND_DESCRIPTOR, y)
    return op.finalize()


def build_conv_bias_relu_generic(handle, c):
    """The C harness's build_graph(), line for line, through the generic Descriptor API."""
    n, ch, h, w, k, r, s, pad = (c[key] for key in ("n", "c", "h", "w", "k", "r", "s", "padding"))
    yd = [n, k, h + 2 * pad - r + 1, w + 2 * pad - s + 1]
    x = _tensor(1, [n, ch, h, w], CUDNN_DATA_HALF, False)
    wt = _tensor(2, [k, ch, r, s], CUDNN_DATA_HALF, False)
    y = _tensor(3, yd, CUDNN_DATA_FLOAT, True)
    conv = cb.Descriptor(CUDNN_BACKEND_CONVOLUTION_DESCRIPTOR)
    conv.set(CUDNN_ATTR_CONVOLUTION_COMP_TYPE, CUDNN_TYPE_DATA_TYPE, CUDNN_DATA_FLOAT)
    conv.set(CUDNN_ATTR_CONVOLUTION_CONV_MODE, CUDNN_TYPE_CONVOLUTION_MODE, CUDNN_CROSS_CORRELATION)
    conv.set(CUDNN_ATTR_CONVOLUTION_SPATIAL_DIMS, CUDNN_TYPE_INT64, 2)
    conv.set(CUDNN_ATTR_CONVOLUTION_PRE_PADDINGS, CUDNN_TYPE_INT64, [pad, pad])
    conv.set(CUDNN_ATTR_CONVOLUTION_POST_PADDINGS, CUDNN_TYPE_INT64, [pad, pad])
    conv.set(CUDNN_ATTR_CONVOLUTION_FILTER_STRIDES, CUDNN_TYPE_INT64, [1, 1])
    conv.set(CUDNN_ATTR_CONVOLUTION_DILATIONS, CUDNN_TYPE_INT64, [1, 1])
    conv.finalize()
    op = cb.Descriptor(CUDNN_BACKEND_OPERATION_CONVOLUTION_FORWARD_DESCRIPTOR)
    op.set(CUDNN_ATTR_OPERATION_CONVOLUTION_FORWARD_X, CUDNN_TYPE_BACKEND_DESCRIPTOR, x)
    op.set(CUDNN_ATTR_OPERATION_CONVOLUTION_FORWARD_W, CUDNN_TYPE_BACKEND_DESCRIPTOR, wt)
    op.set(CUDNN_ATTR_OPERATION_CONVOLUTION_FORWARD_Y, CUDNN_TYPE_BACKEND_DESCRIPTOR, y)
    op.set(CUDNN_ATTR_OPERATION_CONVOLUTION_FORWARD_CONV_DESC, CUDNN_TYPE_BACKEND_DESCRIPTOR, conv)
    op.set(CUDNN_ATTR_OPERATION_CONVOLUTION_FORWARD_ALPHA, CUDNN_TYPE_FLOAT, 1.0)
    op.set(CUDNN_ATTR_OPERATION_CONVOLUTION_FORWARD_BETA, CUDNN_TYPE_FLOAT, 0.0)
    op.finalize()
    b = _tensor(4, [1, k, 1, 1], CUDNN_DATA_HALF, False)
    z = _tensor(5, yd, CUDNN_DATA_FLOAT, True)
    out = _tensor(6, yd, CUDNN_DATA_HALF, False)
    add = _pointwise(CUDNN_POINTWISE_ADD, y, b, z)
    relu = _pointwise(CUDNN_POINTWISE_RELU_FWD, z, None, out)
    graph = cb.Descriptor(CUDNN_BACKEND_OPERATIONGRAPH_DESCRIPTOR)
    graph.set(CUDNN_ATTR_OPERATIONGRAPH_OPS, CUDNN_TYPE_BACKEND_DESCRIPTOR, [op, add, relu])
    if handle is not None:  # (none offline, as in the C loop)
        graph.set(CUDNN_ATTR_OPERATIONGRAPH_HANDLE, CUDNN_TYPE_HANDLE, handle)
    return graph.finalize()


def build_conv_bias_relu_graph(handle, c):
    """The same graph through the Graph builder (its graph checks included), as a user writes it."""
    g = cb.Graph("conv_bias_relu")
    x = g.tensor([c["n"], c["c"], c["h"], c["w"]], layout="nhwc")
    w = g.tensor([c["k"], c["c"], c["r"], c["s"]], layout="nhwc")
    b = g.tensor([1, c["k"], 1, 1], layout="nhwc")
    g.relu(g.bias(g.conv_fwd(x, w, padding=c["padding"]), b), output=True)
    return g.build(handle)


def build_conv_bias_relu_pattern(handle, c):
    """The same graph from the pattern function (a Pattern, tensor names and a reference on top of the builder)."""
    p = patterns.conv_bias_relu(n=c["n"], c=c["c"], h=c["h"], w=c["w"], k=c["k"], r=c["r"], s=c["s"],
                                padding=c["padding"], build=False)
    return p.build(handle)


@pytest.mark.parametrize("case", list(CASES))
def test_build_graph_generic(benchmark, case, handle, c_results):
    benchmark.pedantic(build_conv_bias_relu_generic, args=(handle, CASES[case]), rounds=300, warmup_rounds=10)
    record(benchmark, c_results, case, "build_graph_us")
    benchmark.extra_info["api"] = "generic Descriptor.set with C names"


@pytest.mark.parametrize("case", list(CASES))
def test_build_graph_typed(benchmark, case, handle, c_results):
    benchmark.pedantic(build_conv_bias_relu_graph, args=(handle, CASES[case]), rounds=300, warmup_rounds=10)
    record(benchmark, c_results, case, "build_graph_us")
    benchmark.extra_info["api"] = "typed Graph builder with graph checks"


@pytest.mark.parametrize("case", list(CASES))
def test_build_graph_pattern(benchmark, case, handle, c_results):
    benchmark.pedantic(build_conv_bias_relu_pattern, args=(handle, CASES[case]), rounds=300, warmup_rounds=10)
    record(benchmark, c_results, case, "build_graph_us")
    benchmark.extra_info["api"] = "patterns.conv_bias_relu (the Graph builder, a Pattern on top)"
