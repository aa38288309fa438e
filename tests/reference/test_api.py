"""The evaluator's API: what it accepts as a graph and as inputs, what it refuses and how it says so, the names
of what it cannot compute, the result's helpers, sampling's determinism."""
import numpy as np
import pytest

import cudnn_backend as cb
from cudnn_backend import (CUDNN_ATTR_ENGINE_OPERATION_GRAPH, CUDNN_ATTR_ENGINECFG_ENGINE,
                           CUDNN_BACKEND_OPERATIONGRAPH_DESCRIPTOR, CUDNN_HEUR_MODE_A, CUDNN_TYPE_BACKEND_DESCRIPTOR)
from cudnn_backend.errors import GraphError, ReferenceUnsupportedError
from cudnn_backend.patterns import conv_bias_relu, rng as rng_pattern, sdpa_composite_fwd
from cudnn_backend.reference import ReferenceResult, evaluate, unsupported

from tests.helpers import generic_graphs
from tests.reference.helpers import assert_close, random_inputs


def small():
    g = cb.Graph("small", io_data_type="float")
    x, b = g.tensor([2, 3, 4], name="x"), g.tensor([1, 3, 1], name="b")
    s = g.scalar(2.5, name="s", rank=3)
    y = g.mul(g.bias(x, b), s, output=True, name="y")
    return g, x, b, s, y


def test_a_graph_a_pattern_or_an_operation_graph(rng):
    g, x, b, s, y = small()
    xv, bv = rng.standard_normal([2, 3, 4]), rng.standard_normal([1, 3, 1])
    from_graph = evaluate(g, {x.uid: xv, b.uid: bv})            # read as it stands: not built here
    assert not g.built
    from_og = evaluate(g.build(), {x: xv, b: bv})               # tensor descriptors as keys
    assert_close(from_graph.outputs[y.uid], (xv + bv) * 2.5)
    assert_close(from_og.outputs[y.uid], from_graph.outputs[y.uid])
    p = conv_bias_relu(n=1, c=4, h=5, w=5, k=4, build=False)
    r = evaluate(p, random_inputs(p, rng))
    assert not p.built
    assert set(r.outputs) == {p.y.uid} and r.names[p.y.uid] == "y"


def test_by_value_scalars_default_to_their_recorded_value_or_take_a_number(rng):
    g, x, b, s, y = small()
    xv, bv = rng.standard_normal([2, 3, 4]), rng.standard_normal([1, 3, 1])
    assert_close(evaluate(g, {x.uid: xv, b.uid: bv, s.uid: -1.0}).outputs[y.uid], -(xv + bv))


@pytest.mark.parametrize("case,error,match", [
    ("missing", ValueError, r"inputs: missing b \(uid 2\) \[1, 3, 1\] strides \[\d+, \d+, \d+\] fp32"),
    ("shape", ValueError, r"inputs\[2\] \(b\): shape \[3, 1\] is not the tensor's dims \[1, 3, 1\]"),
    ("unknown", ValueError, r"inputs: uid 99 is no tensor of the graph"),
    ("output", ValueError, r"inputs: uid 5 \(y\) is an output the graph writes, not an input"),
    ("virtual", ValueError, r"inputs: uid 4 \(v4\) is a virtual tensor"),
    ("dtype", TypeError, r"inputs\[1\] \(x\): dtype complex128 is not a real number type"),
    ("key", TypeError, r"inputs: a key is a tensor UID \(int\) or a tensor descriptor, not str"),
    ("not a dict", TypeError, r"inputs: expected a dict"),
])
def test_bad_inputs_are_refused_naming_the_tensor(case, error, match, rng):
    g, x, b, s, y = small()
    og = g.build()
    good = {x.uid: rng.standard_normal([2, 3, 4]), b.uid: rng.standard_normal([1, 3, 1])}
    bad = {"missing": {x.uid: good[x.uid]}, "shape": {**good, b.uid: np.zeros([3, 1])},
           "unknown": {**good, 99: np.zeros(1)}, "output": {**good, y.uid: np.zeros([2, 3, 4])},
           "virtual": {**good, 4: np.zeros([2, 3, 4])}, "dtype": {**good, x.uid: np.zeros([2, 3, 4], complex)},
           "key": {**good, "x": good[x.uid]}, "not a dict": [good[x.uid]]}[case]
    with pytest.raises(error, match=match):
        evaluate(og, bad)


def test_bad_graphs_and_settings_are_refused(rng):
    g, x, b, s, y = small()
    with pytest.raises(TypeError, match="op_graph: expected a finalized OperationGraph"):
        evaluate(object(), {})
    with pytest.raises(ValueError, match="not finalized"):
        evaluate(cb.Descriptor(CUDNN_BACKEND_OPERATIONGRAPH_DESCRIPTOR), {})
    with pytest.raises(TypeError, match="not a CUDNN_BACKEND_TENSOR_DESCRIPTOR"):
        evaluate(x, {})
    og = g.build()
    for kw in (dict(samples=0), dict(max_elements=-1), dict(max_work=True)):
        with pytest.raises(ValueError, match=next(iter(kw))):
            evaluate(og, {x.uid: np.zeros([2, 3, 4]), b.uid: np.zeros([1, 3, 1])}, **kw)


@pytest.mark.skipif(cb.get_version() != 91900, reason="the bundled device profile (heuristics offline) loads into "
                    "cuDNN 9.19.0 only")
def test_a_graph_read_back_from_cudnn_has_no_operations_to_evaluate(h200_profile_json):
    og = generic_graphs.notebook_conv_graph(n=1, c=8, h=4, w=4, k=8)
    config = generic_graphs.heuristics(og, CUDNN_HEUR_MODE_A, generic_graphs.device_prop(h200_profile_json))[0]
    engine = config.get(CUDNN_ATTR_ENGINECFG_ENGINE, CUDNN_TYPE_BACKEND_DESCRIPTOR)[0]
    read_back = engine.get(CUDNN_ATTR_ENGINE_OPERATION_GRAPH, CUDNN_TYPE_BACKEND_DESCRIPTOR)[0]
    with pytest.raises(GraphError, match="operations are unknown on the Python side"):
        evaluate(read_back, {})
    (line,) = unsupported(read_back)
    assert "operations are unknown on the Python side" in line


def test_random_numbers_are_named_and_refused(rng):
    p = rng_pattern(dims=(2, 3, 4, 4))
    (line,) = unsupported(p.op_graph)
    assert line.startswith("Rng (operation 0, writes rng_y): random numbers")
    with pytest.raises(ReferenceUnsupportedError, match="cannot compute:\n  Rng \\(operation 0"):
        evaluate(p.op_graph, {})
    dropout = sdpa_composite_fwd(b=1, h=1, s_q=4, s_kv=4, d=2, dropout=0.25)
    assert [ln.split(" (")[0] for ln in unsupported(dropout.op_graph)] == ["Rng"]
    assert unsupported(sdpa_composite_fwd(b=1, h=1, s_q=4, s_kv=4, d=2).op_graph) == []


def test_result_values_and_take(rng):
    g, x, b, s, y = small()
    inputs = {x.uid: rng.standard_normal([2, 3, 4]), b.uid: rng.standard_normal([1, 3, 1])}
    whole = evaluate(g, inputs)
    actual = whole.outputs[y.uid] + 1.0
    assert_close(whole.take(y.uid, actual), actual)
    sampled = evaluate(g, inputs, max_elements=0, samples=5, seed=4)
    assert isinstance(sampled, ReferenceResult) and sampled.method == "sampled fp64 reference (5 points)"
    coords, values = sampled.samples[y.uid]
    assert_close(sampled.values(y.uid), values)
    assert_close(sampled.take(y.uid, actual), actual[tuple(coords.T)])
    with pytest.raises(KeyError, match="uid 1 is no output"):
        sampled.values(x.uid)
    with pytest.raises(ValueError, match=r"actual: shape \(6, 4\) is not output uid \d+'s dims \(2, 3, 4\)"):
        sampled.take(y.uid, np.zeros([6, 4]))
    with pytest.raises(ValueError, match=r"actual: shape \(1, 1, 1\) is not output uid \d+'s dims \(2, 3, 4\)"):
        sampled.take(y.uid, np.ones([1, 1, 1]))  # (the right rank: the sampled coordinates would lie past it)
    # the output's tensor names it, as evaluate's inputs are keyed
    assert_close(sampled.values(y), values)
    assert_close(sampled.take(y, actual), actual[tuple(coords.T)])
    assert sampled.dims == {y.uid: (2, 3, 4)}
    for bad, match in [("x", r"^seed: expected an integer >= 0 or None, not 'x'"),
                       (-1, r"^seed: expected an integer >= 0 or None, not -1")]:
        with pytest.raises(ValueError, match=match):
            evaluate(g, inputs, seed=bad)
    for name, bad in [("samples", 2.5), ("samples", 0), ("max_elements", float("nan")), ("max_work", -1)]:
        with pytest.raises(ValueError, match=f"^{name}: expected"):
            evaluate(g, inputs, **{name: bad})


def test_samples_follow_the_seed(rng):
    g, x, b, s, y = small()
    inputs = {x.uid: rng.standard_normal([2, 3, 4]), b.uid: rng.standard_normal([1, 3, 1])}
    one, same, other = (evaluate(g, inputs, max_elements=0, samples=6, seed=k) for k in (1, 1, 2))
    assert np.array_equal(one.samples[y.uid][0], same.samples[y.uid][0])
    assert not np.array_equal(one.samples[y.uid][0], other.samples[y.uid][0])


def test_vectorized_and_ragged_tensors_are_refused_naming_the_tensor():
    """The reference computes one value per position of dense tensors: a vectorized tensor (several values at each
    position) or a ragged one (rows at offsets another tensor holds) would be computed as something else."""
    from cudnn_backend import typed as T

    def int8x4(uid, dims, strides):
        return T.Tensor(unique_id=uid, data_type=cb.CUDNN_DATA_INT8, dimensions=dims, strides=strides,
                        byte_alignment=16, vector_count=4, vectorized_dimension=1).finalize()
    x, w = int8x4(1, [1, 2, 4, 4], [32, 16, 4, 1]), int8x4(2, [4, 2, 1, 1], [2, 1, 1, 1])
    y = T.Tensor(unique_id=3, data_type=cb.CUDNN_DATA_FLOAT, dimensions=[1, 4, 4, 4], strides=[64, 16, 4, 1],
                 byte_alignment=16).finalize()
    conv = T.Convolution(comp_type=cb.CUDNN_DATA_INT32, conv_mode=cb.CUDNN_CROSS_CORRELATION, spatial_dims=2,
                         pre_paddings=[0, 0], post_paddings=[0, 0], filter_strides=[1, 1], dilations=[1, 1]).finalize()
    og = T.OperationGraph(ops=[T.OperationConvolutionForward(x=x, w=w, y=y, conv_desc=conv, alpha=1.0,
                                                             beta=0.0).finalize()]).finalize()
    (line,) = unsupported(og)
    assert "is vectorized (4 values at each position along dim 1)" in line, line
    with pytest.raises(ReferenceUnsupportedError, match="vectorized"):
        evaluate(og, {1: np.ones((1, 2, 4, 4)), 2: np.ones((4, 2, 1, 1))})

    g = cb.Graph("ragged")
    offsets = g.tensor([3, 1, 1, 1], data_type=cb.CUDNN_DATA_INT32, name="offsets")
    x = g.tensor([2, 4, 8, 8], name="x", ragged_offset_desc=offsets)
    g.pointwise("CUDNN_POINTWISE_RELU_FWD", x, output=True)
    g.build()
    (line,) = unsupported(g.op_graph)
    assert f"x is ragged (its rows' offsets in offsets, uid {offsets.uid})" in line, line


def test_a_tensor_closed_after_its_operation_is_named():
    g = cb.Graph("closed")
    x = g.tensor([4, 4], name="x")
    g.pointwise("CUDNN_POINTWISE_RELU_FWD", x, output=True)
    g.build()
    x.close()
    with pytest.raises(GraphError, match="its xdesc tensor x was closed; keep the graph's tensors open"):
        evaluate(g.op_graph, {})


def test_nan_and_infinity_are_values_not_warnings():
    import warnings

    g = cb.Graph("ieee")
    x = g.tensor([1, 1, 1, 4], data_type=cb.CUDNN_DATA_FLOAT, name="x")  # (rank 4: every release finalizes it)
    y = g.pointwise("CUDNN_POINTWISE_SQRT", x, output=True)
    g.build()
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        out = evaluate(g.op_graph, {x.uid: np.array([[[[-1.0, 0.0, 4.0, np.inf]]]])}).outputs[y.uid].reshape(-1)
    assert np.isnan(out[0]) and out[1:].tolist() == [0.0, 2.0, np.inf]


@pytest.mark.parametrize("data_type", ["int4", "uint4", "fp4_e2m1", "fp8_e5m3"])
def test_a_tensor_of_a_type_without_a_host_encoding_is_named_not_computed_unrounded(data_type):
    from cudnn_backend import patterns
    from cudnn_backend.core.names import read_data_type
    from cudnn_backend.errors import ReferenceUnsupportedError
    from cudnn_backend.reference import unsupported

    if read_data_type(data_type) is None:
        pytest.skip(f"{data_type}: not in this cuDNN")
    try:
        p = patterns.matmul_bias_relu(batch=1, m=1, n=1, k=1, data_type=data_type, build=False)
    except cb.CudnnVersionError:
        pytest.skip(f"{data_type}: newer than this cuDNN")
    lines = unsupported(p)
    assert lines and all(f"is {data_type}, whose stored values the reference has no encoding for" in line
                         for line in lines), lines
    with pytest.raises(ReferenceUnsupportedError):
        evaluate(p, {p.a.uid: [[[100.3]]], p.b.uid: [[[1.0]]], p.bias.uid: [[[0.0]]]})
