"""The one offline-plan helper: graphs, heuristics and execution plans built on a machine without a GPU against
the bundled H200 device profile (``DeviceProfile.bundled()``, for the loaded cuDNN), with the real cuDNN."""
from __future__ import annotations

import functools

from cudnn_backend.graph import Graph
from cudnn_backend.runtime.heuristics import get_configs
from cudnn_backend.runtime.plans import Plan, build_plan
from cudnn_backend.runtime.profiles import DeviceProfile
from cudnn_backend.typed import OperationGraph


@functools.lru_cache(maxsize=1)
def h200() -> DeviceProfile:
    """The bundled H200 profile for the loaded cuDNN (the 9.19.0 capture, converted), one per process."""
    return DeviceProfile.bundled("h200")


def conv_graph(n=8, c=64, h=56, w=56, k=32, r=3, s=3, *, padding=1, build=True):
    """The notebook's convolution (fp16 NHWC X * W -> Y) through ``Graph``; the finalized graph (or the Graph)."""
    g = Graph("conv")
    x = g.tensor([n, c, h, w], layout="nhwc", name="x")
    wt = g.tensor([k, c, r, s], layout="nhwc", name="w")
    g.conv_fwd(x, wt, padding=padding, output=True, name="y")
    return g.build() if build else g


def conv_bias_relu_graph():
    """conv -> + bias -> ReLU (two virtual intermediates), the guide's fusion."""
    g = Graph("conv_bias_relu")
    x = g.tensor([8, 64, 56, 56], layout="nhwc", name="X")
    w = g.tensor([32, 64, 3, 3], layout="nhwc", name="W")
    b = g.tensor([1, 32, 1, 1], layout="nhwc", name="B")
    y = g.conv_fwd(x, w, padding=1)
    z = g.pointwise("CUDNN_POINTWISE_ADD", y, b)
    g.pointwise("CUDNN_POINTWISE_RELU_FWD", z, output=True, name="Y")
    return g


def matmul_relu_graph(m=64, dynamic=False):
    """A matmul + ReLU fusion: cuDNN serves it with runtime-compiled (NVRTC) engines."""
    g = Graph("matmul_relu")
    a = g.tensor([1, m, 128])
    b = g.tensor([1, 128, 64])
    c = g.matmul(a, b)
    g.pointwise("CUDNN_POINTWISE_RELU_FWD", c, output=True)
    kwargs = {"is_dynamic_shape_enabled": True} if dynamic else {}
    graph = OperationGraph(ops=list(g.operations), **kwargs)
    graph.finalize()
    return graph


def offline_plan(operation_graph=None, mode="A", rank=0, profile=None, **kwargs) -> Plan:
    """The ``rank``-th config of heuristics ``mode`` for ``operation_graph`` (default: the notebook conv) as a
    Plan built offline against the H200 profile."""
    graph = conv_graph() if operation_graph is None else operation_graph
    profile = h200() if profile is None else profile
    configs = get_configs(graph, mode, profile)
    return build_plan(configs[rank], device_profile=profile, **kwargs)


def plan_json(operation_graph=None) -> str:
    """The JSON of an offline plan (default: the notebook conv graph)."""
    return offline_plan(operation_graph).to_json()
