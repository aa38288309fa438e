""""Were all my ops fused?": the kernels one execute of a plan launches, by name, grid and block.

The plan's execute is recorded into a CUDA graph — through cuDNN's native CUDA graph API when the engine
supports it (``cudnnBackendPopulateCudaGraph``), by stream capture otherwise — and each kernel node is read
with the driver API (``cuGraphKernelNodeGetParams``, ``cuFuncGetName``). Needs a GPU, cuda-core and
cuda-bindings (the ``gpu`` extra); no torch.
"""
from __future__ import annotations

from dataclasses import dataclass, field

from cudnn_backend.core._handle import Handle
from cudnn_backend.core.plain import PlainData
from cudnn_backend.errors import CudnnBackendError, NativeCudaGraphNotSupportedError
from cudnn_backend.runtime import plans as _plans
from cudnn_backend.runtime.execution import CudaGraph, KernelNode, VariantPack, captured_kernels
from cudnn_backend.runtime.engines import short_name
from cudnn_backend.tune import inputs, results

__all__ = ["FusionReport", "fusion_report"]


@dataclass
class FusionReport(PlainData):
    """The kernels one execute launched (``KernelNode``: name, short name, grid, block, shared memory), how
    they were read (``method``), and the plan's engine and knobs. ``fused`` is True for a single kernel."""

    kernels: list
    method: str
    engine_index: int | None = None
    knobs: dict = field(default_factory=dict)
    operations: list = field(default_factory=list)

    @property
    def kernel_count(self) -> int:
        return len(self.kernels)

    @property
    def fused(self) -> bool:
        return len(self.kernels) == 1

    def to_dict(self) -> dict:
        return {"engine_index": self.engine_index, "knobs": self.knobs, "method": self.method,
                "operations": self.operations, "kernel_count": self.kernel_count, "fused": self.fused,
                "kernels": [k.to_dict() for k in self.kernels]}

    @classmethod
    def from_dict(cls, d: dict) -> "FusionReport":
        """The FusionReport ``to_dict`` wrote (``kernel_count`` and ``fused`` are derived again); TypeError naming a
        field of another type, or missing."""
        results.check_fields(cls, d)
        kernels = []
        for i, k in enumerate(d["kernels"]):
            try:
                kernels.append(KernelNode.from_dict(k))
            except TypeError as e:
                raise TypeError(f"kernels[{i}]: {e}") from None
        return cls(kernels, d["method"], d.get("engine_index"), dict(d.get("knobs", {})), list(d.get("operations", [])))

    def table(self) -> str:
        rows = [{"#": i, "kernel": k.short_name[:80], "grid": "x".join(map(str, k.grid)),
                 "block": "x".join(map(str, k.block)), "shared": results.format_bytes(k.shared_mem_bytes)}
                for i, k in enumerate(self.kernels)]
        head = (f"{self.kernel_count} kernel{'s' if self.kernel_count != 1 else ''} per execute "
                f"({'fused into one' if self.fused else 'not fused into one'}; read by {self.method})")
        return head + "\n" + results.plain_table(rows)


def fusion_report(plan, handle=None, pack=None, *, buffers=None, operations=()) -> FusionReport:
    """The kernels one ``execute(handle, plan, pack)`` launches.

    ``plan``: a ``Plan``; ``handle``: its GPU (default: the handle the plan was built with); ``pack``: a
    ``VariantPack`` to record with (default: one made here over random buffers, or over ``buffers``
    ({uid or tensor: buffer}))."""
    plan = _plans.as_plan(plan)
    if handle is None:
        handle = plan.handle
    if not isinstance(handle, Handle):
        raise TypeError("handle: the fusion report runs the plan on a GPU; pass a cudnn_backend.Handle "
                        f"(the plan was built {'offline' if plan.handle is None else 'with another handle'})")
    own_pack = pack is None
    sets = []
    if own_pack:
        if plan.operation_graph is None and buffers is None:
            raise ValueError("buffers: the plan's operation graph is unknown (loaded from JSON without it); pass "
                             "operation_graph= when loading it, a pack, or buffers=")
        if plan.operation_graph is not None:
            sets = inputs.make_buffer_sets(plan.operation_graph, 1, user=buffers, stream=handle.stream)
        pack = VariantPack(plan, sets[0].by_uid if sets else buffers)
    try:
        method = "stream capture"
        kernels = None
        if plan.supports_native_cuda_graph:
            try:
                with CudaGraph(handle, plan, pack, instantiate=False) as g:
                    kernels = g.kernels()
                method = "cuDNN's native CUDA graph API"
            except (NativeCudaGraphNotSupportedError, CudnnBackendError):
                kernels = None
        if kernels is None:
            kernels = captured_kernels(handle, plan, pack)
        return FusionReport(kernels, method, plan.engine_index, {short_name(k): v for k, v in plan.knobs.items()},
                            list(operations))
    finally:
        if own_pack:
            pack.close()
        for s in sets:
            s.close()
