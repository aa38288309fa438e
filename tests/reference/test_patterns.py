"""Cross-checks with the patterns' own torch references (``Pattern.reference``) where torch is installed, at
small sizes, in float64; and the same conv + bias + ReLU built three ways (generic API, typed classes, Graph)
gives one reference."""
import numpy as np
import pytest

from cudnn_backend import patterns
from cudnn_backend.reference import evaluate
from cudnn_backend.reference._graph import read_graph

from tests.reference.helpers import assert_close, needs_torch, newer_cudnn_skips, random_inputs
from tests.tune import three_ways

CASES = [
    ("conv_fwd", dict(n=2, c=8, h=6, w=5, k=4, groups=2, padding=1, stride=2)),
    ("conv_fwd", dict(n=1, c=4, h=5, w=5, k=4, mode="convolution", dilation=2, padding=2)),
    ("conv_bwd_data", dict(n=2, c=4, h=6, w=6, k=6, stride=2)),
    ("conv_bwd_filter", dict(n=2, c=4, h=6, w=6, k=6)),
    ("conv_bias_relu", dict(n=2, c=4, h=5, w=5, k=4)),
    ("conv_bias_add_relu", dict(n=2, c=4, h=5, w=5, k=4)),
    ("bn_gen_stats", dict(n=2, c=4, h=5, w=5, k=4)),
    ("concat", dict(n=2, c=4, h=5, w=5, k=4)),
    ("matmul_bias_gelu", dict(batch=2, m=6, n=5, k=4)),
    ("matmul_bias_gelu", dict(batch=2, m=6, n=5, k=4, gelu="erf")),
    ("matmul_bias_relu", dict(batch=2, m=6, n=5, k=4)),
    ("layer_norm_fwd", dict(tokens=6, hidden=16)),
    ("layer_norm_fwd", dict(tokens=6, hidden=16, training=False)),
    ("rms_norm_fwd", dict(tokens=6, hidden=16, bias=True)),
    ("reduction", dict(dims=(2, 6, 3, 3), axes=(0, 2, 3))),
    ("reduction", dict(dims=(2, 6, 3, 3), axes=(3,), op="MAX")),
    ("sdpa_fwd", dict(b=1, h=2, s_q=6, s_kv=7, d=4)),
    ("sdpa_composite_fwd", dict(b=1, h=2, s_q=6, s_kv=6, d=4, causal=True)),
]


@needs_torch
@pytest.mark.parametrize("name,kwargs", CASES, ids=[f"{n}-{i}" for i, (n, _) in enumerate(CASES)])
def test_pattern_torch_references_agree(name, kwargs, rng):
    import torch

    with newer_cudnn_skips():
        p = patterns.CATALOGUE[name](**kwargs)
    assert p.reference is not None, f"{name} has no torch reference"
    inputs = random_inputs(p.op_graph, rng)
    graph = read_graph(p.op_graph)
    named = {n: torch.from_numpy(np.asarray(inputs[t.uid])) for n, t in p.inputs().items() if t.uid in inputs}
    named.update({n: torch.tensor(float(graph.tensors[t.uid].value), dtype=torch.float64).reshape(t.shape)
                  for n, t in p.inputs().items() if t.uid not in inputs})
    theirs = p.reference(named)
    ours = evaluate(p.op_graph, inputs)
    assert theirs, "the torch reference computed nothing"
    for out_name, value in theirs.items():
        assert_close(ours.outputs[p[out_name].uid], value.double().numpy(), rtol=1e-9, atol=1e-9, what=out_name)


def test_three_ways_give_one_reference(rng):
    generic, typed, graph = three_ways.generic(), three_ways.typed_classes(), three_ways.graph_builder()
    dims = three_ways.SMALL
    x = rng.standard_normal([dims["n"], dims["c"], dims["h"], dims["w"]])
    w = rng.standard_normal([dims["k"], dims["c"], 3, 3])
    b = rng.standard_normal([1, dims["k"], 1, 1])
    results = [evaluate(og, {1: x, 2: w, 3: b}).outputs[6] for og in (generic, typed, graph.op_graph)]
    assert_close(results[0], results[1], rtol=0, atol=0)
    assert_close(results[0], results[2], rtol=0, atol=0)
    # and what they compute: ReLU(conv(x, w) + b), padding 1, written out here
    xp = np.pad(x, [(0, 0), (0, 0), (1, 1), (1, 1)])
    conv = np.zeros(results[0].shape)
    for r in range(3):
        for s in range(3):
            conv += np.einsum("nchw,kc->nkhw", xp[:, :, r:r + dims["h"], s:s + dims["w"]], w[:, :, r, s])
    assert_close(results[0], np.maximum(conv + b, 0))
