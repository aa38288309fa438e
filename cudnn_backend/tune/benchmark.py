"""Microbenchmarks of one plan: host and GPU microseconds per call for

* ``execute``: ``execute(handle, plan, pack)`` with a prebuilt variant pack;
* ``bind + execute``: new device pointers bound into the pack, then execute (alternating two buffer sets);
* ``cuda graph replay``: the plan recorded once into a CUDA graph (cuDNN's native API where the engine
  supports it, stream capture otherwise), then replayed.

Each case runs ``warmup`` calls, then ``repeats`` batches of ``iterations`` calls (``BenchOptions``: a sample is
a batch, where ``TuneOptions``' ``repeats`` samples one call each). Host time is the wall time of a batch (no
synchronization inside it) per call; GPU time is CUDA events around the same batch per call.
Needs a GPU, cuda-core and cuda-bindings (the ``gpu`` extra); no torch.
"""
from __future__ import annotations

import statistics
import time
from dataclasses import dataclass, field

from cudnn_backend._bindings.enums import AttributeName
from cudnn_backend.core._handle import Handle
from cudnn_backend.core._library import get_version
from cudnn_backend.core.plain import PlainData
from cudnn_backend.core.versions import format_version
from cudnn_backend.errors import CudnnBackendError
from cudnn_backend.runtime import heuristics as _heuristics
from cudnn_backend.runtime import memory
from cudnn_backend.runtime import plans as _plans
from cudnn_backend.runtime.engines import short_name
from cudnn_backend.runtime.execution import CapturedGraph, CudaGraph, VariantPack, execute
from cudnn_backend.tune import graphs, inputs, results
from cudnn_backend.tune.cache import PlanCache
from cudnn_backend.tune.explorer import device_of
from cudnn_backend.tune.options import BenchOptions

__all__ = ["BenchCase", "BenchReport", "bench"]


@dataclass
class BenchCase(PlainData):
    """One case: per-call host and GPU microseconds (median, min, max over the batches)."""

    name: str
    host_us: dict
    gpu_us: dict
    iterations: int
    repeats: int
    note: str = ""

    def to_dict(self) -> dict:
        return {"name": self.name, "host_us": self.host_us, "gpu_us": self.gpu_us, "iterations": self.iterations,
                "repeats": self.repeats, "note": self.note}



@dataclass
class BenchReport(PlainData):
    """The cases measured for one plan, and what the plan and device were."""

    name: str
    device: dict
    cudnn_version: str
    engine_index: int | None
    knobs: dict
    workspace_bytes: int
    plan_source: str
    cases: list = field(default_factory=list)
    measured: str = ""

    def to_dict(self) -> dict:
        return {"name": self.name, "device": self.device, "cudnn_version": self.cudnn_version,
                "engine_index": self.engine_index, "knobs": self.knobs, "workspace_bytes": self.workspace_bytes,
                "plan_source": self.plan_source, "measured": self.measured, "cases": [c.to_dict() for c in self.cases]}


    def table(self) -> str:
        rows = []
        for c in self.cases:
            rows.append({"case": c.name,
                         "host median us": f"{c.host_us['median']:.2f}", "host min": f"{c.host_us['min']:.2f}",
                         "host max": f"{c.host_us['max']:.2f}", "GPU median us": f"{c.gpu_us['median']:.2f}",
                         "GPU min": f"{c.gpu_us['min']:.2f}", "GPU max": f"{c.gpu_us['max']:.2f}", "note": c.note})
        return results.plain_table(rows)


def _stats(values) -> dict:
    return {"median": statistics.median(values), "min": min(values), "max": max(values)}


def _resolve_plan(target, handle, cache, kwargs, name):
    """(plan, operation graph or None, name, where the plan came from) for a Plan or anything that names a graph."""
    if isinstance(target, _plans.Plan):
        return target, target.operation_graph, name or "plan", "given"
    subject = graphs.resolve(target, handle=handle, kwargs=kwargs, name=name)
    if cache is not None:
        hit = cache.get(subject, handle=handle)
        if hit is not None:
            return hit, subject.op_graph, subject.name, "plan cache"
    dp = None
    if subject.op_graph.values.get(AttributeName.CUDNN_ATTR_OPERATIONGRAPH_HANDLE) is None:
        dp = _plans.deviceprop_of_handle(handle)  # finalized without a handle: target this GPU explicitly
    plan, _ = _heuristics.build_first_plan(subject.op_graph, handle=handle, device_profile=dp)
    cfg = plan.config
    how = f"heuristics {short_name(cfg.mode)}#{cfg.rank}" if cfg is not None and cfg.mode is not None else "heuristics"
    return plan, subject.op_graph, subject.name, how


_BENCH = BenchOptions()  # the defaults of bench's options


def bench(target, handle=None, *, buffers=None, iterations=_BENCH.iterations, repeats=_BENCH.repeats,
          warmup=_BENCH.warmup, cache=None,
          cases=_BENCH.cases, kwargs=None, name=None) -> BenchReport:
    """Per-call host and GPU time of ``target``: a ``Plan``, or anything ``explore`` takes as a graph (then the
    plan is the plan cache's entry when ``cache`` has one, else heuristics' first working config; a builder is
    called with ``kwargs``). See the module's notes."""
    checked = BenchOptions(iterations=iterations, repeats=repeats, warmup=warmup, cases=cases)
    iterations, repeats, warmup, cases = checked.iterations, checked.repeats, checked.warmup, checked.cases
    graphs.check_reference(target, (), kwargs)  # (before the GPU is asked for)
    if cache is True:
        cache = PlanCache()
    elif cache is not None and not isinstance(cache, PlanCache):
        cache = PlanCache(cache)
    own_handle = None
    if handle is None:
        handle = getattr(target, "handle", None) if isinstance(target, _plans.Plan) else None
        if handle is None:
            handle = own_handle = Handle()
    stream = handle.stream
    packs, sets = [], []
    try:
        events = memory.EventTimer(stream)
        plan, og, name, source = _resolve_plan(target, handle, cache, kwargs, name)
        if og is None and buffers is None:
            raise ValueError("buffers: this plan's operation graph is unknown; pass buffers= or the graph")
        sets = inputs.make_buffer_sets(og, 2, user=buffers, stream=stream) if og is not None else []
        by_uid = [s.by_uid for s in sets] if sets else [buffers, buffers]
        packs = [VariantPack(plan, b) for b in by_uid]
        report = BenchReport(name, device_of(handle), format_version(get_version()), plan.engine_index,
                             {short_name(k): v for k, v in plan.knobs.items()}, int(plan.workspace_size), source,
                             measured=f"{warmup} warm-up calls, then {repeats} batches of {iterations} calls; host: "
                                      "wall time of a batch per call (no sync inside); GPU: CUDA events around the "
                                      "batch per call")

        def measure(call):
            for _ in range(warmup):
                call()
            memory.synchronize(stream)
            host, gpu = [], []
            for _ in range(repeats):
                events.start()
                t0 = time.perf_counter()
                for _ in range(iterations):
                    call()
                t1 = time.perf_counter()
                events.stop()
                host.append((t1 - t0) * 1e6 / iterations)
                gpu.append(events.elapsed_ms() * 1000.0 / iterations)
            return _stats(host), _stats(gpu)

        pack = packs[0]
        if "execute" in cases:
            h, g = measure(lambda: execute(handle, plan, pack))
            report.cases.append(BenchCase("execute", h, g, iterations, repeats, "prebuilt variant pack"))
        if "bind + execute" in cases:
            pointers = [packs[0].data_pointers, packs[1].data_pointers]
            flip = [0]

            def bind_execute():
                flip[0] ^= 1
                pack.bind_and_execute(handle, plan, pointers[flip[0]])

            h, g = measure(bind_execute)
            report.cases.append(BenchCase("bind + execute", h, g, iterations, repeats,
                                          "new pointers each call (two buffer sets alternating)"))
        if "cuda graph replay" in cases:
            report.cases.append(_graph_case(handle, plan, pack, stream, measure, iterations, repeats))
        return report
    finally:
        for p in packs:
            p.close()
        for s in sets:
            s.close()
        if own_handle is not None:
            own_handle.close()


def _graph_case(handle, plan, pack, stream, measure, iterations, repeats) -> BenchCase:
    if plan.supports_native_cuda_graph:
        try:
            g = CudaGraph(handle, plan, pack)
        except CudnnBackendError:
            g = None
        if g is not None:
            try:
                h, gp = measure(lambda: g.launch(stream))
            finally:
                g.close()
            return BenchCase("cuda graph replay", h, gp, iterations, repeats, "cuDNN's native CUDA graph API")
    execute(handle, plan, pack)  # first calls may load kernels: not inside the capture
    memory.synchronize(stream)
    with CapturedGraph(handle, lambda: execute(handle, plan, pack)) as g:
        h, gp = measure(lambda: g.launch(stream))
    return BenchCase("cuda graph replay", h, gp, iterations, repeats, "stream capture (cuda-bindings)")
