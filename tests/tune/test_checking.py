"""How the explorer checks configs, without a GPU: the fp64 reference turned into a Check (whole or sampled), the
visible fallback to the majority with its reason, reading outputs at the check's coordinates from the bytes a
GPU would hand back, relative errors and answer groups on numpy arrays, the host layout of random inputs, and
how a result says how it was checked (object, JSON, table)."""
import json

import numpy as np
import pytest

import cudnn_backend as cb
from cudnn_backend.graph import Graph
from cudnn_backend.runtime._packing import TensorSpec, tensor_specs
from cudnn_backend.tune import checking, inputs
from cudnn_backend.tune.results import ConfigResult, Exploration
from cudnn_backend.typed import arrays

D = cb.DataType


# ---------------------------------------------------------------------------------------------
# relative errors and answer groups
# ---------------------------------------------------------------------------------------------
def test_relative_error_against_a_reference():
    ref = np.array([3.0, 4.0, np.nan])  # a non-finite reference element is not compared
    assert checking.relative_error(np.array([3.0, 4.0, 0.0]), ref) == 0.0
    assert checking.relative_error(np.array([3.0, 4.5, 0.0]), ref) == pytest.approx(0.5 / 5.0)
    assert checking.relative_error(np.array([3.0, np.nan, 0.0]), ref) == float("inf")  # poisoned, not written
    assert checking.relative_error(np.zeros(2), np.zeros(3)) == float("inf")
    assert checking.relative_error(np.array([1, 2, 3, 4]), np.array([1, 2, 0, 4])) == 0.25
    assert checking.relative_error(np.array([0.5]), np.array([0.0])) == 0.5  # against zeros: the absolute error


def test_answer_groups_find_the_majority_and_the_odd_one_out():
    groups = checking.AnswerGroups({1: 1e-3})
    base = np.linspace(-1, 1, 100)
    assert groups.add("a", {1: base}) == 0
    assert groups.add("b", {1: base * (1 + 1e-5)}) == 0
    assert groups.add("c", {1: np.maximum(base, 0.01 * base)}) == 1  # a leaky slope ignored: another answer
    assert groups.add("d", {1: base + 1e-6}) == 0
    assert groups.is_majority("a") and groups.is_majority("d") and not groups.is_majority("c")
    assert groups.error("c") > 0.1 and groups.error("b") < 1e-4
    assert groups.summary() == "2 answer group(s) of sizes [3, 1]"


# ---------------------------------------------------------------------------------------------
# the reference, or the majority with its reason
# ---------------------------------------------------------------------------------------------
@pytest.fixture(scope="module")
def cbr():
    g = Graph("cbr")
    x = g.tensor([2, 8, 4, 4], layout="nhwc", name="x")
    w = g.tensor([8, 8, 3, 3], layout="nhwc", name="w")
    b = g.tensor([1, 8, 1, 1], layout="nhwc", name="b")
    y = g.relu(g.bias(g.conv_fwd(x, w, padding=1), b), output=True, name="y")
    og = g.build()
    return og, tensor_specs(operation_graph=og), y.uid


class FakeBufferSet:
    """What a BufferSet hands the check: the stored elements of an output (its dims, storage dtype)."""

    def __init__(self, specs, stored):
        self.specs, self._stored = specs, stored

    def stored(self, uid, stream=0):
        return self._stored[uid]


def test_a_whole_reference_becomes_an_fp64_check(cbr, monkeypatch):
    og, specs, y = cbr
    want = np.random.default_rng(0).standard_normal((2, 8, 4, 4))
    calls = []

    def evaluate(op_graph, inputs_, **kw):
        calls.append((op_graph, inputs_, kw))
        return cb.ReferenceResult(outputs={y: want}, method="fp64 reference")

    monkeypatch.setattr(checking, "unsupported", lambda g: [])
    monkeypatch.setattr(checking, "evaluate", evaluate)
    check = checking.reference_check(og, {"inputs": 1}, specs, (y,))
    assert calls[0][0] is og and calls[0][1] == {"inputs": 1}
    assert check.method == check.label == "fp64 reference" and check.by_reference and check.coords[y] is None
    # the output as a GPU hands it back: NHWC-strided fp16 storage; read whole, in logical order
    raw = inputs.host_layout(arrays.encode(want, D.CUDNN_DATA_HALF), specs[y])
    got = check.values(FakeBufferSet(specs, {y: inputs.stored_view(raw, specs[y])}), y)
    assert got.shape == (want.size,)
    assert checking.relative_error(got, check.expected[y]) < 1e-3


def test_a_sampled_reference_is_read_at_its_coordinates(cbr, monkeypatch):
    og, specs, y = cbr
    rng = np.random.default_rng(1)
    full = rng.standard_normal((2, 8, 4, 4)).astype(np.float16)
    coords = np.stack([rng.integers(0, d, 50) for d in (2, 8, 4, 4)], axis=1)
    values = full[tuple(coords.T)].astype(np.float64)
    monkeypatch.setattr(checking, "unsupported", lambda g: [])
    monkeypatch.setattr(checking, "evaluate", lambda *a, **k: cb.ReferenceResult(
        samples={y: (coords, values)}, method="sampled fp64 reference (50 points)"))
    check = checking.reference_check(og, {}, specs, (y,))
    assert check.label == "sampled fp64 reference (50 points)" and check.by_reference
    raw = inputs.host_layout(full, specs[y])
    got = check.values(FakeBufferSet(specs, {y: inputs.stored_view(raw, specs[y])}), y)
    assert np.array_equal(got, values)


def test_an_operation_the_reference_cannot_compute_falls_back_to_the_majority_visibly(cbr, monkeypatch):
    og, specs, y = cbr
    line = "operation 2 (Pointwise RELU_FWD): not computable here"
    monkeypatch.setattr(checking, "unsupported", lambda g: [line])
    monkeypatch.setattr(checking, "evaluate", lambda *a, **k: pytest.fail("evaluated an unsupported graph"))
    check = checking.reference_check(og, {}, specs, (y,), max_elements=100, samples=64)
    assert check.method == "majority" and not check.by_reference and not check.expected
    assert check.label == f"majority (the fp64 reference cannot compute {line})"
    assert check.coords[y].shape == (64, 4)  # 256 elements > 100: compared at 64 fixed coordinates
    assert (check.coords[y] < np.array([2, 8, 4, 4])).all()


@pytest.mark.parametrize("failure,reason", [
    (cb.ReferenceUnsupportedError("SDPA with dropout: random numbers"), "the fp64 reference cannot compute SDPA"),
    (MemoryError("too big"), "the fp64 reference failed: MemoryError: too big"),
])
def test_a_reference_that_fails_says_so(cbr, monkeypatch, failure, reason):
    og, specs, y = cbr

    def evaluate(*a, **k):
        raise failure

    monkeypatch.setattr(checking, "unsupported", lambda g: [])
    monkeypatch.setattr(checking, "evaluate", evaluate)
    check = checking.reference_check(og, {}, specs, (y,))
    assert check.method == "majority" and check.reason.startswith(reason)


def test_a_saved_plan_is_checked_by_the_majority(cbr):
    og, specs, y = cbr
    check = checking.reference_check(None, {}, specs, (y,))
    assert check.label == "majority (the graph is known only from a saved plan, whose operations cannot be read)"


# ---------------------------------------------------------------------------------------------
# random inputs on the host, laid out as the device holds them
# ---------------------------------------------------------------------------------------------
@pytest.mark.parametrize("data_type", [D.CUDNN_DATA_HALF, D.CUDNN_DATA_BFLOAT16, D.CUDNN_DATA_FLOAT,
                                       D.CUDNN_DATA_FP8_E4M3, D.CUDNN_DATA_INT32, D.CUDNN_DATA_BOOLEAN,
                                       D.CUDNN_DATA_BYTE_BOOLEAN])
def test_random_inputs_in_the_tensors_layout(data_type):
    spec = TensorSpec(1, "x", (2, 3, 4, 5), (60, 1, 15, 3), data_type)  # NHWC
    values = inputs.random_values(spec, np.random.default_rng(0))
    assert values.shape == (2, 3, 4, 5) and values.dtype == arrays.storage_dtype(data_type)
    raw = inputs.host_layout(values, spec)
    assert raw.nbytes == spec.nbytes
    back = inputs.stored_view(raw, spec)
    assert np.array_equal(back, values)
    offset = 1 * 60 + 2 * 1 + 3 * 15 + 4 * 3  # element (1, 2, 3, 4) at its NHWC offset
    if data_type == D.CUDNN_DATA_BOOLEAN:  # bit-packed: bit offset % 8 of byte offset // 8
        assert raw.nbytes == (2 * 3 * 4 * 5 + 7) // 8
        assert [(raw[o // 8] >> (o % 8)) & 1 for o in range(raw.nbytes * 8)][offset] == values[1, 2, 3, 4]
    else:
        assert raw.view(arrays.storage_dtype(data_type))[offset] == values[1, 2, 3, 4]
    decoded = arrays.decode(values, data_type)
    if arrays.is_float(data_type):
        assert 0.2 < float(np.std(decoded)) < 0.8  # standard normal * 0.5, rounded to the type
    elif data_type == D.CUDNN_DATA_INT32:
        assert decoded.min() >= 0 and decoded.max() < 8
    else:
        assert 0 < decoded.mean() < 1


def test_poison_is_nan_in_every_float_type():
    for data_type in (D.CUDNN_DATA_HALF, D.CUDNN_DATA_BFLOAT16, D.CUDNN_DATA_FLOAT, D.CUDNN_DATA_DOUBLE,
                      D.CUDNN_DATA_FP8_E4M3, D.CUDNN_DATA_FP8_E5M2):
        raw = np.full(8, inputs.POISON_BYTE, np.uint8)
        assert np.isnan(arrays.decode(raw.view(arrays.storage_dtype(data_type)), data_type)).all(), data_type


# ---------------------------------------------------------------------------------------------
# results say how they were checked
# ---------------------------------------------------------------------------------------------
def test_results_say_how_they_were_checked():
    reason = "the fp64 reference cannot compute operation 0 (Rng): random numbers"
    ex = Exploration("g", {"name": "GPU"}, "9.19.0", True, check=f"majority ({reason})")
    ex.results = [ConfigResult(1, {}, "A", 0, ("A",), status="ok", time_us=3.0, rel_error=0.0, correct=True,
                               checked_by=f"majority ({reason})"),
                  ConfigResult(2, {}, "A", 1, ("A",), status="ok", time_us=4.0, rel_error=1e-4, correct=True,
                               checked_by="sampled fp64 reference (4096 points)")]
    back = Exploration.from_json(ex.to_json())
    assert back.check == ex.check and [r.checked_by for r in back.results] == [r.checked_by for r in ex.results]
    assert json.loads(ex.to_json())["results"][1]["checked_by"] == "sampled fp64 reference (4096 points)"
    assert ex.results[0].check_method == "majority"
    table = ex.table()
    assert "checked by" in table and "sampled fp64 reference (4096 points)" in table and "majority" in table


def test_the_command_line_shows_how_results_were_checked():
    from rich.console import Console

    from cudnn_backend.cli import render

    reason = "the fp64 reference cannot compute operation 0 (Rng): random numbers"
    ex = Exploration("g", {"name": "GPU", "source": "gpu"}, "9.19.0", True, check=f"majority ({reason})")
    ex.results = [ConfigResult(1, {}, "A", 0, ("A",), status="ok", time_us=3.0, rel_error=0.0, correct=True,
                               checked_by=f"majority ({reason})"),
                  ConfigResult(2, {}, "A", 1, ("A",), status="ok", time_us=4.0, rel_error=1e-4, correct=True,
                               checked_by="sampled fp64 reference (1024 points)")]
    console = Console(record=True, width=220)
    console.print(render.header(ex))
    console.print(render.results_table(ex, 10))
    text = console.export_text()
    assert f"checked against: majority ({reason})" in text
    assert "checked by" in text and "sampled fp64 reference (1024 points)" in text
    assert text.count("majority") >= 2  # the header's reason, and the row's method
