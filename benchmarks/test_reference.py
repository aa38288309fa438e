"""The fp64 reference evaluator on the CPU (no GPU): a small graph evaluated whole, a ResNet-50 layer and a long
attention sampled (1024 points each). Targets: small graphs in milliseconds, a ResNet-50 layer well under a second.

    pytest benchmarks/test_reference.py --benchmark-only
"""
import numpy as np
import pytest

import cudnn_backend as cb
from cudnn_backend.patterns import sdpa_composite_fwd, sdpa_fwd
from cudnn_backend.reference import evaluate
from cudnn_backend.reference._graph import read_graph

pytestmark = pytest.mark.cpu_benchmark


def conv_bias_relu(n, c, k, h):
    g = cb.Graph("conv_bias_relu")
    x, w = g.tensor([n, c, h, h], layout="nhwc"), g.tensor([k, c, 3, 3], layout="nhwc")
    b = g.tensor([1, k, 1, 1], layout="nhwc")
    g.relu(g.bias(g.conv_fwd(x, w, padding=1), b), output=True)
    return g.build()


def inputs_of(og):
    graph, rng = read_graph(og), np.random.default_rng(0)
    return {u: rng.standard_normal(graph.tensors[u].dims).astype(np.float32) for u in graph.inputs
            if not graph.tensors[u].by_value}


@pytest.mark.parametrize("name,make", [
    ("small conv+bias+relu whole (2x8x8x8)", lambda: conv_bias_relu(2, 8, 8, 8)),
    ("ResNet-50 3x3 layer sampled (n32 c256 k256 14x14)", lambda: conv_bias_relu(32, 256, 256, 14)),
    ("composite attention sampled (b2 h8 s4096 d64, causal)",
     lambda: sdpa_composite_fwd(b=2, h=8, s_q=4096, s_kv=4096, d=64, causal=True).op_graph),
    ("unified SDPA sampled (b2 h8 s4096 d64)", lambda: sdpa_fwd(b=2, h=8, s_q=4096, s_kv=4096, d=64).op_graph),
])
def test_evaluate(benchmark, name, make):
    og = make()
    inputs = inputs_of(og)
    result = benchmark(evaluate, og, inputs)
    benchmark.extra_info["method"] = result.method
