"""cuDNN's native CUDA graph API: populate a CUDA graph with a plan's work, update it to other buffers,
replay it.

Needs an engine whose behavior notes include SUPPORTS_CUDA_GRAPH_NATIVE_API (cuDNN >= 9.5); for the
guide's conv + bias + ReLU on an H200 that is engine 52 of mode FALLBACK. Without a GPU it finds such a
config offline (bundled H200 profile) and says what it skipped.

    python examples/cuda_graph.py
"""
import sys

import cudnn_backend as cb
from cudnn_backend.core.device import gpu_available
from cudnn_backend.runtime import engines

from conv_bias_relu import C, H, K, N, R, S, W, graph_api

NATIVE = "SUPPORTS_CUDA_GRAPH_NATIVE_API"


# [offline]
def offline():
    """Which configs support the native API (a behavior note), and a plan of the first."""
    op_graph = graph_api().op_graph
    profile = cb.DeviceProfile.bundled()
    capable = {mode: engines.filter_configs(cb.get_configs(op_graph, mode, profile), require_behavior=NATIVE)
               for mode in ("A", "FALLBACK")}
    plan, _ = cb.build_first_plan(op_graph, device_profile=profile, require_behavior=NATIVE)
    return capable, plan
# [/offline]


# [native]
def native_graph(handle):
    """Populate, replay, update to new buffers, replay again; check both results against torch."""
    import torch

    handle.stream = torch.cuda.current_stream()
    g = graph_api(handle)
    plan, _ = cb.build_first_plan(g.op_graph, handle=handle, require_behavior=NATIVE)
    uid = {t.name: t.uid for t in g.tensors.values()}

    def buffers():
        cl = torch.channels_last
        x = torch.randn(N, C, H, W, device="cuda", dtype=torch.half).to(memory_format=cl)
        w = (0.1 * torch.randn(K, C, R, S, device="cuda", dtype=torch.half)).to(memory_format=cl)
        b = torch.randn(1, K, 1, 1, device="cuda", dtype=torch.half).to(memory_format=cl)
        y = torch.full((N, K, H, W), float("nan"), device="cuda", dtype=torch.half).to(memory_format=cl)
        ref = torch.relu(torch.nn.functional.conv2d(x.float(), w.float(), padding=1) + b.float())
        return {uid["x"]: x, uid["w"]: w, uid["b"]: b, uid["y"]: y}, y, ref

    first, y1, ref1 = buffers()
    second, y2, ref2 = buffers()
    pack1, pack2 = cb.VariantPack(plan, first), cb.VariantPack(plan, second)
    errors = []
    with cb.CudaGraph(handle, plan, pack1) as graph:   # cudnnBackendPopulateCudaGraph + instantiate
        graph.launch()                                  # cudaGraphLaunch on the handle's stream
        torch.cuda.synchronize()
        errors.append(float((y1.float() - ref1).abs().max()))
        graph.update(pack2)                             # cudnnBackendUpdateCudaGraph + cudaGraphExecUpdate
        graph.launch()
        torch.cuda.synchronize()
        errors.append(float((y2.float() - ref2).abs().max()))
        kernels = graph.kernel_count()
    return plan, errors, kernels
# [/native]


def main():
    capable, plan = offline()
    for mode, configs in capable.items():
        print(f"mode {mode}: {len(configs)} config(s) with {NATIVE}: {configs}")
    print("offline plan:", plan, "supports the native API:", plan.supports_native_cuda_graph)
    if not gpu_available():
        print("no GPU: skipped populating, updating and replaying the CUDA graph (run this on a GPU machine)")
        return 0
    with cb.Handle() as handle:
        plan, errors, kernels = native_graph(handle)
    print(f"engine {plan.engine_index}: replay max error {errors[0]:.4f}, after update {errors[1]:.4f}; "
          f"{kernels} kernel node(s)")
    return 0 if max(errors) < 0.05 else 1


if __name__ == "__main__":
    sys.exit(main())
