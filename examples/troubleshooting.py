"""Troubleshooting: version mismatches, NOT_SUPPORTED and its reasons, ARCH_MISMATCH.

* Device profiles are converted for the loaded cuDNN release; one that needs a fact nobody recorded (a member
  the release requires, of a GPU the facts table does not know) is refused, and serialized plans load only into
  the cuDNN version that wrote them: the package says so before cuDNN is asked (DeviceProfileVersionError,
  PlanVersionError).
* A graph no engine supports: heuristics return nothing; ``why_no_engine`` collects cuDNN's reasons.
* CUDNN_STATUS_NOT_SUPPORTED_ARCH_MISMATCH: without a GPU, every engine asked without a device profile;
  on a GPU, plans of a graph finalized without its handle fail at execute (the GPU part shows it).

    python examples/troubleshooting.py
"""
import json
import sys

import cudnn_backend as cb
from cudnn_backend.core.device import gpu_available
from cudnn_backend.runtime import engines

from conv_bias_relu import C, H, K, N, R, S, W, graph_api

PROFILE = cb.DeviceProfile.bundled()


# [versions]
def version_mismatches():
    """A 9.19.0 profile of a GPU the facts table does not know, for cuDNN 9.28.1 (which requires memoryBusWidth),
    and a plan whose JSON says cuDNN 9.18.0: both refused up front, with the fix."""
    props = cb.DeviceProfile.bundled("h100", "9.19.0").properties
    props["deviceName"] = "ACME GPU"
    acme = cb.DeviceProfile(json.dumps(props), cudnn_version="9.19.0")
    messages = []
    try:
        acme.for_release("9.28.1")
    except cb.DeviceProfileVersionError as e:
        messages.append(str(e))
    plan, _ = cb.build_first_plan(graph_api().op_graph, device_profile=PROFILE)
    data = json.loads(plan.to_json())
    data["cudnnVersion"] = 91800
    try:
        cb.plan_from_json(json.dumps(data), device_profile=PROFILE)
    except cb.PlanVersionError as e:
        messages.append(str(e))
    return messages
# [/versions]


# [not_supported]
def not_supported():
    """Two convolutions in one graph: no engine fuses them. Heuristics return no configs; cuDNN's warning
    log says why (its Reason lines), and list_engines gives each engine's status."""
    g = cb.Graph("two_convs")
    x = g.tensor([N, C, H, W], layout="nhwc", name="x")
    w1 = g.tensor([C, C, R, S], layout="nhwc", name="w1")
    w2 = g.tensor([K, C, R, S], layout="nhwc", name="w2")
    g.conv_fwd(g.conv_fwd(x, w1, padding=1), w2, padding=1, output=True, name="y")
    op_graph = g.build()
    counts = cb.heuristics.engine_config_counts(op_graph, PROFILE)
    reasons = cb.heuristics.why_no_engine(op_graph, PROFILE)
    statuses = {}
    for info in cb.list_engines(op_graph, PROFILE):
        key = "finalizes" if info.finalized else info.reason
        statuses[key] = statuses.get(key, 0) + 1
    try:
        cb.build_first_plan(op_graph, device_profile=PROFILE)
    except cb.NoWorkingPlanError as e:
        report = e.report
    return counts, reasons, statuses, report
# [/not_supported]


# [arch_offline]
def arch_mismatch_offline():
    """No GPU and no device profile: cuDNN refuses every engine with ARCH_MISMATCH."""
    op_graph = graph_api().op_graph
    try:
        engines.make_engine(op_graph, 10)                  # device_profile= left out
    except cb.CudnnNotSupportedError as e:
        return e.reason
# [/arch_offline]


# [arch_gpu]
def arch_mismatch_gpu(handle):
    """On a GPU: the same plan, from a graph finalized without the handle, then with it."""
    import torch

    results = {}
    for with_handle in (False, True):
        g = graph_api(handle if with_handle else None)
        plan, _ = cb.build_first_plan(g.op_graph, handle=handle)
        uid = {t.name: t.uid for t in g.tensors.values()}
        cl = torch.channels_last
        buffers = {uid["x"]: torch.randn(N, C, H, W, device="cuda", dtype=torch.half).to(memory_format=cl),
                   uid["w"]: torch.randn(K, C, R, S, device="cuda", dtype=torch.half).to(memory_format=cl),
                   uid["b"]: torch.randn(1, K, 1, 1, device="cuda", dtype=torch.half).to(memory_format=cl),
                   uid["y"]: torch.empty(N, K, H, W, device="cuda", dtype=torch.half).to(memory_format=cl)}
        try:
            cb.execute(handle, plan, cb.VariantPack(plan, buffers))
            torch.cuda.synchronize()
            results[with_handle] = "executed"
        except cb.CudnnError as e:
            results[with_handle] = e.reason
    return results
# [/arch_gpu]


def main():
    for message in version_mismatches():
        print(message.splitlines()[0][:160])
    counts, reasons, statuses, report = not_supported()
    print("configs per mode:", counts)
    print("cuDNN's reasons:\n  " + "\n  ".join(reasons.splitlines()[:3]))
    print("engines by status:", statuses)
    print("build_first_plan:", report.summary())
    print("no GPU, no profile:", arch_mismatch_offline())
    if not gpu_available():
        print("no GPU: skipped executing a plan of a graph finalized without its handle")
        return 0
    with cb.Handle() as handle:
        for with_handle, outcome in arch_mismatch_gpu(handle).items():
            print(f"graph {'with' if with_handle else 'without'} the handle: {outcome}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
