"""A tensor in memory holds what its data type stores, and so does the reference: an int8 output saturates, an
fp8 one rounds and saturates at its largest finite value, fp16 overflows to infinity, and an operation reading a
real tensor the graph computes reads those stored values. Each measured on an H200 (9.19.0 and 9.28.1): cuDNN
wrote 127 for every element of an int8 conv whose sums reach thousands, 448 for an fp8 exp past it, and a
reduction over a real fp8 y summed the stored y exactly (benchmarks/results/2026-11-29-h200/hunt/)."""
import numpy as np
import pytest

from cudnn_backend._bindings.enums import DataType as D
from cudnn_backend.reference import evaluate
from cudnn_backend.tune.catalogue import chain_graph
from cudnn_backend.typed import arrays

from tests.reference.helpers import random_inputs


@pytest.mark.parametrize("data_type, values, stored", [
    (D.CUDNN_DATA_INT8, [-1000.0, -128.5, -2.5, -0.5, 0.5, 1.5, 126.6, 1e9, np.nan], [-128, -128, -2, 0, 0, 2, 127, 127, 0]),
    (D.CUDNN_DATA_UINT8, [-3.0, 2.5, 3.5, 255.4, 300.0], [0, 2, 4, 255, 255]),
    (D.CUDNN_DATA_INT32, [2.0 ** 40, -(2.0 ** 40), 7.5], [2 ** 31 - 1, -(2 ** 31), 8]),
    (D.CUDNN_DATA_FP8_E4M3, [1e12, -500.0, 448.0, 17.0], [448.0, -448.0, 448.0, 16.0]),
    (D.CUDNN_DATA_HALF, [70000.0, -1e6, 1.0], [np.inf, -np.inf, 1.0]),
])
def test_values_are_stored_as_the_gpu_converts(data_type, values, stored):
    got = arrays.as_stored(np.array(values), data_type)
    np.testing.assert_array_equal(got, np.array(stored, dtype=np.float64))


def test_integers_in_range_are_encoded_exactly():
    big = np.array([2 ** 62 + 1, -(2 ** 62) - 3], dtype=np.int64)  # beyond float64's integers: not through floats
    assert arrays.encode(big, D.CUDNN_DATA_INT64).tolist() == big.tolist()
    assert arrays.encode(np.array([300, -7]), D.CUDNN_DATA_INT8).tolist() == [127, -7]


def test_an_int8_conv_saturates_as_cuDNN_writes_it(rng):
    g = chain_graph(head="conv_fwd", data_type="int8", layout="nhwc")
    r = evaluate(g, random_inputs(g, rng, 0, 8))  # sums of 576 products of 0..7: thousands
    (y,) = r.outputs.values()
    assert (y == 127).all()


def test_an_fp8_output_saturates_at_its_largest_finite_value(rng):
    g = chain_graph(head="conv_fwd", chain=["exp"], data_type="fp8_e4m3", layout="nhwc")
    r = evaluate(g, random_inputs(g, rng))
    (y,) = r.outputs.values()
    assert np.isfinite(y).all() and y.max() == 448.0 and (np.abs(y) <= 448.0).all()
    assert set(np.unique(arrays.decode(arrays.encode(y, D.CUDNN_DATA_FP8_E4M3), D.CUDNN_DATA_FP8_E4M3))) == \
        set(np.unique(y))  # every value an fp8 code


@pytest.mark.parametrize("tail", ["reduction", "genstats"])
def test_a_tail_reads_the_real_tensor_as_stored(rng, tail):
    g = chain_graph(head="conv_fwd", tail=tail, data_type="fp8_e4m3", layout="nhwc")
    r = evaluate(g, random_inputs(g, rng))
    names = {name: uid for uid, name in r.names.items()}
    y = r.outputs[names["y"]]
    s = r.outputs[names["sum" if tail == "reduction" else "genstats_sum"]]
    np.testing.assert_allclose(s, y.sum(axis=(0, 2, 3), keepdims=True), rtol=1e-12)


@pytest.mark.parametrize("data_type, given, held", [
    (D.CUDNN_DATA_INT8, [0.5, 300.0, -1000.0, 1.7], [0.0, 127.0, -128.0, 2.0]),
    (D.CUDNN_DATA_FP8_E4M3, [1e9, 17.0, -0.25], [448.0, 16.0, -0.25]),
    (D.CUDNN_DATA_HALF, [1e9, -1e9, 0.5], [np.inf, -np.inf, 0.5]),
])
def test_an_input_is_read_as_its_tensor_holds_it(data_type, given, held):
    """An input given in another dtype (floats for an int8 tensor, 1e9 for fp16) holds in memory what its data type
    stores: the reference computes with those values, as cuDNN does."""
    import cudnn_backend as cb

    def identity(n):  # (rank 4: every release finalizes it)
        g = cb.Graph("held")
        x = g.tensor([1, 1, 1, n], data_type=data_type, name="x")
        y = g.pointwise("CUDNN_POINTWISE_IDENTITY", x, output=True, output_data_type=D.CUDNN_DATA_FLOAT)
        g.build()
        return g, x, y

    g, x, y = identity(len(given))
    result = evaluate(g.op_graph, {x.uid: np.array(given).reshape(1, 1, 1, -1)})
    np.testing.assert_array_equal(result.outputs[y.uid].reshape(-1), np.array(held))
    # an array of the type's own numpy dtype holds its values already
    if data_type == D.CUDNN_DATA_HALF:
        own = np.array([60000.0, -2.0], dtype=np.float16).reshape(1, 1, 1, 2)
        g, x, y = identity(2)
        np.testing.assert_array_equal(evaluate(g.op_graph, {x.uid: own}).outputs[y.uid], own.astype(np.float64))
