"""Shared pieces of the reference tests: random inputs for a graph, the whole/sampled agreement check, cuDNN
version gates, torch when the environment has it."""
import importlib.util

import numpy as np
import pytest

import cudnn_backend as cb
from cudnn_backend.reference import evaluate
from cudnn_backend.reference._graph import read_graph

HAVE_TORCH = importlib.util.find_spec("torch") is not None
needs_torch = pytest.mark.skipif(not HAVE_TORCH, reason="torch is not installed here (CPU cross-checks only)")


def needs_cudnn(version: int, what: str):
    """Skip unless the loaded cuDNN is at least ``version`` (e.g. 92200), naming what needs it."""
    loaded = cb.get_version()
    return pytest.mark.skipif(loaded < version, reason=f"{what} finalizes on cuDNN >= {version} only (loaded: "
                              f"{loaded}; run with CUDNN_BACKEND_LIBCUDNN=/work/cudnn/cu13-9.28.1.4/...)")


def random_inputs(op_graph, rng, low=None, high=None, **override):
    """{uid: array} of every input of the graph: standard normal (uniform in [low, high) when given), by-value
    scalars left to their recorded values; ``override`` by tensor name."""
    graph = read_graph(op_graph)
    out = {}
    for uid in graph.inputs:
        info = graph.tensors[uid]
        if info.name in override:
            out[uid] = override[info.name]
        elif info.by_value and info.value is not None:
            continue
        elif low is not None:
            out[uid] = rng.uniform(low, high, info.dims)
        else:
            out[uid] = rng.standard_normal(info.dims)
    return out


def numeric_grad(f, a, h=1e-6):
    """The gradient of the scalar function ``f`` at array ``a`` by central differences (independent of any
    backward formula)."""
    g = np.zeros_like(a)
    for i in np.ndindex(a.shape):
        up, down = a.copy(), a.copy()
        up[i] += h
        down[i] -= h
        g[i] = (f(up) - f(down)) / (2 * h)
    return g


def by_name(op_graph):
    """{name: uid} of the graph's tensors."""
    return {t.name: u for u, t in read_graph(op_graph).tensors.items()}


def assert_close(actual, expected, rtol=1e-10, atol=1e-10, what=""):
    actual, expected = np.asarray(actual, dtype=np.float64), np.asarray(expected, dtype=np.float64)
    assert actual.shape == expected.shape, f"{what}: shape {actual.shape} != {expected.shape}"
    np.testing.assert_allclose(actual, expected, rtol=rtol, atol=atol, err_msg=what)


def assert_sampled_matches_whole(op_graph, inputs, samples=17, seed=1):
    """Sampled evaluation (every output forced to be sampled) equals the whole evaluation at its coordinates."""
    whole = evaluate(op_graph, inputs)
    assert whole.method == "fp64 reference" and not whole.samples
    sampled = evaluate(op_graph, inputs, max_elements=0, samples=samples, seed=seed)
    assert set(sampled.samples) | set(sampled.outputs) == set(whole.outputs)
    for uid, (coords, values) in sampled.samples.items():
        assert coords.shape == (samples, len(whole.outputs[uid].shape)) and values.shape == (samples,)
        assert len({tuple(c) for c in coords}) == samples, "sampled coordinates repeat"
        np.testing.assert_allclose(values, whole.outputs[uid][tuple(coords.T)], rtol=1e-12, atol=1e-12,
                                   err_msg=f"sampled output uid {uid}")
    for uid, array in sampled.outputs.items():  # outputs of at most ``samples`` elements: whole
        np.testing.assert_allclose(array, whole.outputs[uid], rtol=1e-12, atol=1e-12)
    return whole, sampled


class newer_cudnn_skips:
    """``with newer_cudnn_skips():`` around building a graph: an operation or mode newer than the loaded cuDNN
    skips the test, naming it (the same test runs on a newer cuDNN)."""

    def __enter__(self):
        return self

    def __exit__(self, kind, exc, tb):
        if kind is not None and issubclass(kind, cb.CudnnVersionError):
            pytest.skip(f"needs a newer cuDNN: {exc}")
        return False
