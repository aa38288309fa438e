""""Were all my ops fused?": how many kernels one execute launches.

cuDNN fuses a graph into as few kernels as the engine can: one for conv + bias + ReLU on a fusing engine,
more on one that runs the pointwise tail separately. ``captured_kernel_count`` captures one execute
into a CUDA graph (stream capture: any engine) and counts its kernel nodes. Without a GPU nothing can
be counted: it lists the candidate engines offline and says what it skipped.

    python examples/kernel_counts.py
"""
import sys

import cudnn_backend as cb
from cudnn_backend.core.device import gpu_available
from cudnn_backend.runtime.execution import captured_kernel_count

from conv_bias_relu import C, H, K, N, R, S, W, graph_api


# [count]
def kernels_per_config(handle, modes=("A", "FALLBACK"), limit=4):
    """For the first configs of each mode: engine, knobs and kernels per execute (by stream capture)."""
    import torch

    g = graph_api(handle)
    uid = {t.name: t.uid for t in g.tensors.values()}
    cl = torch.channels_last
    buffers = {uid["x"]: torch.randn(N, C, H, W, device="cuda", dtype=torch.half).to(memory_format=cl),
               uid["w"]: torch.randn(K, C, R, S, device="cuda", dtype=torch.half).to(memory_format=cl),
               uid["b"]: torch.randn(1, K, 1, 1, device="cuda", dtype=torch.half).to(memory_format=cl),
               uid["y"]: torch.empty(N, K, H, W, device="cuda", dtype=torch.half).to(memory_format=cl)}
    rows = []
    for mode in modes:
        for config in cb.get_configs(g.op_graph, mode)[:limit]:
            try:
                plan = cb.build_plan(config, handle=handle)
            except cb.CudnnError as e:
                rows.append((mode, config.rank, config.engine_index, f"no plan: {e.reason}"))
                continue
            pack = cb.VariantPack(plan, buffers)
            rows.append((mode, config.rank, plan.engine_index, captured_kernel_count(handle, plan, pack)))
    return rows
# [/count]


def main():
    op_graph = graph_api().op_graph
    configs = cb.get_configs(op_graph, "A", cb.DeviceProfile.bundled())
    print(f"offline: mode A proposes {len(configs)} configs for {len(op_graph.operations)} operations; "
          f"first {configs[0]}")
    if not gpu_available():
        print("no GPU: skipped counting kernels per execute (stream capture needs a GPU)")
        return 0
    with cb.Handle() as handle:
        for mode, rank, engine, kernels in kernels_per_config(handle):
            print(f"mode {mode:8s} rank {rank}: engine {engine:3d} -> {kernels} kernel(s) per execute")
    return 0


if __name__ == "__main__":
    sys.exit(main())
