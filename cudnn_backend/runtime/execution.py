"""Executing plans: variant packs, ``execute``, cuDNN's native CUDA graph API, and kernel counts.

    pack = VariantPack(plan, {x: x_gpu, w: w_gpu, y: y_gpu})   # checked once against the plan's graph
    execute(handle, plan, pack)                               # GIL released, no per-call Python objects
    pack.bind_and_execute(handle, plan, (x2_ptr, w2_ptr, y2_ptr))   # new pointers, in pack.pointer_uids order

    g = CudaGraph(handle, plan, pack)      # cudnnBackendPopulateCudaGraph + instantiate
    g.launch(); g.update(other_pack); g.kernel_count()
    g = CapturedGraph(handle, lambda: execute(handle, plan, pack))   # stream capture: any engine

A buffer is an int (a device address), an array of any GPU library (DLPack or ``__cuda_array_interface__``:
torch, cupy, JAX, numba ..., read by ``typed.arrays.view`` with the handle's stream as the consumer stream and
checked against its tensor), a cuda.core ``Buffer`` or a ``memory.DeviceBuffer``. By-value tensors take a number
(packed into a small host buffer the pack owns, in the tensor's data type).

The plan's graph (``plan.operation_graph``, or the tensors in the plan's JSON, or ``operation_graph=``
/ ``tensors=`` given explicitly) tells which UIDs must be bound, which are by value, their byte
alignment and size; with no graph known the UIDs are taken as given, all as device pointers.
"""
from __future__ import annotations

import re
from collections import Counter
from dataclasses import dataclass

from cudnn_backend.core._coerce import stream_address
from cudnn_backend.core.plain import PlainData
from cudnn_backend.errors import CudaError, NativeCudaGraphNotSupportedError
from cudnn_backend.runtime import memory
from cudnn_backend.runtime._execute import VariantPack, execute, populate_cuda_graph, update_cuda_graph
from cudnn_backend.runtime._packing import (
    TensorSpec,
    plan_descriptor,
    plan_handle,
    plan_supports_native_cuda_graph,
    resolve_buffer,
    tensor_specs,
)

__all__ = [
    "CudaGraph", "CapturedGraph", "NativeCudaGraphNotSupportedError", "TensorSpec", "VariantPack",
    "captured_kernel_count", "KernelNode", "graph_kernels", "captured_kernels", "demangle_short",
    "count_kernel_nodes", "execute", "graph_node_types", "plan_descriptor", "plan_supports_native_cuda_graph",
    "populate_cuda_graph", "resolve_buffer",
    "tensor_specs", "update_cuda_graph", "variant_pack", "CudaError",
]


def variant_pack(plan, buffers, workspace=None, **kwargs) -> VariantPack:
    """``VariantPack(plan, buffers, workspace, **kwargs)``: a checked variant pack for ``plan``."""
    return VariantPack(plan, buffers, workspace, **kwargs)


# ---------------------------------------------------------------------------------------------
# CUDA graphs
# ---------------------------------------------------------------------------------------------
def _rt():
    return memory.cudart()


def _nodes(rt, graph, depth=0):
    """(node, node type) of every node of a CUDA graph, child graphs walked into (not listed themselves)."""
    if depth > 32:
        raise CudaError("cudaGraphGetNodes", -1, "nesting", "CUDA graph nesting deeper than 32 levels")
    _, n = memory.check(rt.cudaGraphGetNodes(graph, 0), "cudaGraphGetNodes")
    if not n:
        return
    nodes, _ = memory.check(rt.cudaGraphGetNodes(graph, n), "cudaGraphGetNodes")
    child_type = rt.cudaGraphNodeType.cudaGraphNodeTypeGraph
    for node in nodes[:n]:
        if node is None or int(node) == 0:
            continue
        node_type = memory.check(rt.cudaGraphNodeGetType(node), "cudaGraphNodeGetType")
        if node_type == child_type:
            child = memory.check(rt.cudaGraphChildGraphNodeGetGraph(node), "cudaGraphChildGraphNodeGetGraph")
            yield from _nodes(rt, child, depth + 1)
        else:
            yield node, node_type


def graph_node_types(graph) -> Counter:
    """Counter of node type names (e.g. 'cudaGraphNodeTypeKernel') of a CUDA graph, child graphs included."""
    return Counter(getattr(t, "name", str(t)) for _, t in _nodes(_rt(), graph))


@dataclass(frozen=True)
class KernelNode(PlainData):
    """One kernel a CUDA graph launches: its (mangled) name, a short readable name, grid, block and dynamic
    shared memory in bytes."""

    name: str
    grid: tuple
    block: tuple
    shared_mem_bytes: int

    @property
    def short_name(self) -> str:
        return demangle_short(self.name)

    def to_dict(self) -> dict:
        return {"name": self.name, "short_name": self.short_name, "grid": list(self.grid), "block": list(self.block),
                "shared_mem_bytes": self.shared_mem_bytes}

    @classmethod
    def from_dict(cls, d) -> "KernelNode":
        """The KernelNode ``to_dict`` wrote (``short_name`` is derived again); a TypeError naming a field that is
        missing or not what a launch has: a str name, three ints >= 1 for grid and block, bytes >= 0."""
        if not isinstance(d, dict):
            raise TypeError(f"expected an object, not {type(d).__name__}")
        if not isinstance(d.get("name"), str):
            raise TypeError(f"name: expected str, not {type(d.get('name')).__name__}")
        sizes = {}
        for key in ("grid", "block"):
            v = d.get(key)
            if not isinstance(v, (list, tuple)) or len(v) != 3 or not all(type(x) is int and x >= 1 for x in v):
                raise TypeError(f"{key}: expected three integers >= 1 (x, y, z), not {v!r:.80}")
            sizes[key] = tuple(v)
        shared = d.get("shared_mem_bytes")
        if type(shared) is not int or shared < 0:
            raise TypeError(f"shared_mem_bytes: expected an integer >= 0, not {shared!r:.80}")
        return cls(d["name"], sizes["grid"], sizes["block"], shared)



_LENGTH_PREFIXED = re.compile(r"(\d+)")


def demangle_short(name: str) -> str:
    """The qualified function name of an Itanium-mangled C++ symbol (``_ZN4cask6kernelEv`` -> ``cask::kernel``),
    template and parameter lists dropped; other names unchanged. Enough to tell cuDNN's kernels apart without a
    demangler."""
    if not name.startswith("_Z"):
        return name
    i = 2
    nested = name.startswith("N", i)
    if nested:
        i += 1
        while i < len(name) and name[i] in "rVKL":  # cv-qualifiers of a nested name
            i += 1
    parts = []
    while i < len(name) and name[i].isdigit():
        m = _LENGTH_PREFIXED.match(name, i)
        n = int(m.group(1))
        start = m.end()
        parts.append(name[start:start + n])
        i = start + n
        if not nested:
            break
    return "::".join(parts) if parts else name


def _kernel_name(driver, params) -> str:
    for attr, getter in (("func", "cuFuncGetName"), ("kern", "cuKernelGetName")):
        handle = getattr(params, attr, None)
        if handle is None or int(handle) == 0 or not hasattr(driver, getter):
            continue
        err, raw = getattr(driver, getter)(handle)
        if int(err) == 0 and raw:
            return raw.decode(errors="replace") if isinstance(raw, bytes) else str(raw)
    return "<unnamed kernel>"


def graph_kernels(graph) -> list:
    """The kernels of a CUDA graph (child graphs included) as ``KernelNode``s, in node order: names read with
    the driver API (``cuGraphKernelNodeGetParams``, ``cuFuncGetName``)."""
    rt = _rt()
    driver = memory.cudriver()
    out = []
    for node, node_type in _nodes(rt, graph):
        if node_type != rt.cudaGraphNodeType.cudaGraphNodeTypeKernel:
            continue
        err, params = driver.cuGraphKernelNodeGetParams(driver.CUgraphNode(int(node)))
        if int(err) != 0:
            raise CudaError("cuGraphKernelNodeGetParams", err, getattr(err, "name", ""))
        out.append(KernelNode(_kernel_name(driver, params),
                              (int(params.gridDimX), int(params.gridDimY), int(params.gridDimZ)),
                              (int(params.blockDimX), int(params.blockDimY), int(params.blockDimZ)),
                              int(params.sharedMemBytes)))
    return out


def count_kernel_nodes(graph) -> int:
    """Kernel nodes in a CUDA graph, recursing into child graphs: how many kernels one replay launches."""
    return graph_node_types(graph).get("cudaGraphNodeTypeKernel", 0)


def captured_kernel_count(handle, plan, pack) -> int:
    """Kernels one execute() of ``plan`` launches, by stream capture into a CUDA graph: for any engine
    (the native CUDA graph API needs SUPPORTS_CUDA_GRAPH_NATIVE_API). The handle's stream is restored."""
    return _captured(handle, plan, pack, count_kernel_nodes)


def captured_kernels(handle, plan, pack) -> list:
    """The ``KernelNode``s one execute() of ``plan`` launches, by stream capture into a CUDA graph (any engine)."""
    return _captured(handle, plan, pack, graph_kernels)


def _captured(handle, plan, pack, read):
    with CapturedGraph(handle, lambda: execute(handle, plan, pack), instantiate=False) as g:
        return read(g.graph)


class _GraphParts:
    """What a CUDA graph object owns, shared with its release (which must not refer to the object itself): the
    graph (destroyed with it only when made here), its executable, a capture stream."""

    __slots__ = ("rt", "graph", "exec", "owns_graph", "stream")

    def __init__(self, rt, graph, owns_graph=True, stream=None):
        self.rt, self.graph, self.exec, self.owns_graph, self.stream = rt, graph, None, owns_graph, stream


def _destroy_graph_parts(parts):
    """The executable, the graph (if made here), the capture stream: each destroyed, the first failure raised."""
    rt, first = parts.rt, None
    exec_, parts.exec = parts.exec, None
    graph, parts.graph = parts.graph, None
    stream, parts.stream = parts.stream, None
    steps = [(rt.cudaGraphExecDestroy, exec_, "cudaGraphExecDestroy"),
             (rt.cudaGraphDestroy, graph if parts.owns_graph else None, "cudaGraphDestroy"),
             (rt.cudaStreamDestroy, stream, "cudaStreamDestroy")]
    for destroy, what, name in steps:
        if what is None:
            continue
        try:
            memory.check(destroy(what), name)
        except Exception as e:  # noqa: BLE001 - the others are destroyed all the same; the first is raised
            first = first or e
    if first is not None:
        raise first


class _Graph(memory.CudaResource):
    """A CUDA graph and its executable (cuda-bindings' runtime API): what cuDNN populated, or what stream capture
    recorded. ``launch(stream)`` replays it (default: the handle's stream); ``kernel_count()`` / ``kernels()`` /
    ``node_types()`` read its nodes; ``close()`` destroys the executable, and the graph if this object made it."""

    handle = None
    _parts = None

    def _adopt(self, rt, graph, owns_graph=True, stream=None):
        """Own ``graph`` (and ``stream``): destroyed on close() or collection."""
        self._parts = _GraphParts(rt, graph, owns_graph, stream)
        self._own(_destroy_graph_parts, self._parts, name=f"{type(self).__name__} (CUDA graph 0x{int(graph):x})")

    @property
    def graph(self):
        """The CUDA graph (cudaGraph_t), None once closed."""
        return None if self._parts is None else self._parts.graph

    @property
    def closed(self) -> bool:
        """Whether the graph has been closed."""
        return self.graph is None

    def _need_open(self):
        if self.graph is None:
            raise ValueError(f"this {type(self).__name__} is closed")

    def instantiate(self):
        """(Re)create the executable graph from the graph."""
        self._need_open()
        self._destroy_exec()
        self._parts.exec = memory.check(self._parts.rt.cudaGraphInstantiate(self.graph, 0), "cudaGraphInstantiate")
        return self._parts.exec

    @property
    def graph_exec(self):
        """The executable graph (cudaGraphExec_t), None before instantiate() and once closed."""
        return None if self._parts is None else self._parts.exec

    def launch(self, stream=None):
        """cudaGraphLaunch on ``stream`` (an int, a CUDA stream object; default: the handle's stream)."""
        self._need_open()
        if self._parts.exec is None:
            self.instantiate()
        s = self.handle.stream if stream is None else stream_address(stream)
        memory.check(self._parts.rt.cudaGraphLaunch(self._parts.exec, s), "cudaGraphLaunch")

    def node_types(self) -> Counter:
        """How many nodes of each type the graph has (child graphs included)."""
        self._need_open()
        return graph_node_types(self.graph)

    def kernel_count(self) -> int:
        """Kernel nodes recorded (child graphs included): 1 means cuDNN fused everything into one kernel."""
        self._need_open()
        return count_kernel_nodes(self.graph)

    def kernels(self) -> list:
        """The ``KernelNode``s recorded: names, grids and blocks."""
        self._need_open()
        return graph_kernels(self.graph)

    def _destroy_exec(self):
        e, self._parts.exec = self._parts.exec, None
        if e is not None:
            memory.check(self._parts.rt.cudaGraphExecDestroy(e), "cudaGraphExecDestroy")

    def __repr__(self):
        state = "closed" if self.graph is None else f"graph 0x{int(self.graph):x}"
        return f"<cudnn_backend.{type(self).__name__} {state}>"


class CapturedGraph(_Graph):
    """What ``record()`` queues on ``handle``'s stream, recorded by stream capture (thread-local mode) into a CUDA
    graph on a stream of its own, and instantiated (``instantiate=False``: not). Works for any engine; the
    handle's stream is restored. Run ``record()`` once outside the capture first: first calls may load kernels.

        g = CapturedGraph(handle, lambda: execute(handle, plan, pack))
        g.launch()           # on the handle's stream
    """

    def __init__(self, handle, record, *, instantiate=True):
        rt = memory.cudart()
        self.handle = handle
        stream = memory.check(rt.cudaStreamCreateWithFlags(rt.cudaStreamNonBlocking), "cudaStreamCreateWithFlags")
        old = handle.stream
        graph = None
        try:
            handle.stream = int(stream)
            memory.check(rt.cudaStreamBeginCapture(stream, rt.cudaStreamCaptureMode.cudaStreamCaptureModeThreadLocal),
                         "cudaStreamBeginCapture")
            try:
                record()
            finally:
                graph = memory.check(rt.cudaStreamEndCapture(stream), "cudaStreamEndCapture")
        except BaseException:
            handle.stream = old
            if graph is not None:
                rt.cudaGraphDestroy(graph)
            rt.cudaStreamDestroy(stream)
            raise
        handle.stream = old
        self._adopt(rt, graph, stream=stream)
        if instantiate:
            self.instantiate()


class CudaGraph(_Graph):
    """A CUDA graph that cuDNN populated for one plan and variant pack, and its executable.

    ``launch(stream)`` replays it (default: the handle's stream); ``update(pack)`` points it at the
    buffers of another pack (cudnnBackendUpdateCudaGraph, then cudaGraphExecUpdate, re-instantiating
    if that fails); ``kernel_count()`` counts its kernel nodes. The packs bound stay alive with it.
    """

    def __init__(self, handle, plan, pack, graph=None, instantiate=True):
        rt = _rt()
        if handle is None:
            handle = plan_handle(plan)
            if handle is None:
                raise ValueError("no cuDNN handle: pass one (the plan was not built with one)")
        self.handle, self.plan, self.pack = handle, plan, pack
        self._adopt(rt, populate_cuda_graph(handle, plan, pack, graph), owns_graph=graph is None)
        if instantiate:
            self.instantiate()

    def update(self, pack):
        """Rebind the graph to ``pack``'s buffers (same plan, same UIDs) and update the executable."""
        self._need_open()
        update_cuda_graph(self.handle, self.plan, pack, self.graph)
        self.pack = pack
        if self._parts.exec is not None:
            result = self._parts.rt.cudaGraphExecUpdate(self._parts.exec, self.graph)
            if int(result[0]) != 0:
                self.instantiate()
