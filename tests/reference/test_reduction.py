"""REDUCTION (every operator cuDNN finalizes, over trailing and leading axes, to a scalar) and GEN_STATS against
numpy written here."""
import numpy as np
import pytest

import cudnn_backend as cb
from cudnn_backend.reference import evaluate, unsupported
from cudnn_backend.typed import OperationReduction, Reduction

from tests.reference.helpers import assert_close, assert_sampled_matches_whole

EXPECTED = {
    "ADD": lambda x, ax: x.sum(axis=ax, keepdims=True), "MUL": lambda x, ax: x.prod(axis=ax, keepdims=True),
    "MIN": lambda x, ax: x.min(axis=ax, keepdims=True), "MAX": lambda x, ax: x.max(axis=ax, keepdims=True),
    "AMAX": lambda x, ax: abs(x).max(axis=ax, keepdims=True), "AVG": lambda x, ax: x.mean(axis=ax, keepdims=True),
    "NORM1": lambda x, ax: abs(x).sum(axis=ax, keepdims=True),
    "NORM2": lambda x, ax: np.sqrt((x ** 2).sum(axis=ax, keepdims=True)),
    "MUL_NO_ZEROS": lambda x, ax: np.where(x == 0, 1, x).prod(axis=ax, keepdims=True),
}
DIMS = [3, 4, 5, 6]


def build(op, axes):
    g = cb.Graph("reduce", io_data_type="float")
    x = g.tensor(DIMS, name="x")
    try:
        y = g.reduction(x, op, axes=axes, output=True, name="y")
        return g.build(), x, y
    except cb.CudnnNotSupportedError as e:
        pytest.skip(f"cuDNN {cb.get_version()} refuses the {op} reduction: {str(e).splitlines()[0]}")


@pytest.mark.parametrize("op", sorted(EXPECTED))
@pytest.mark.parametrize("axes", [[3], [2, 3], [0, 2], [0, 1, 2, 3]], ids=["last", "trailing", "leading", "all"])
def test_operators(op, axes, rng):
    og, x, y = build(op, axes)
    xv = rng.uniform(0.5, 1.5, DIMS) * rng.choice([-1, 1], DIMS)
    if op == "MUL_NO_ZEROS":
        xv.reshape(-1)[::7] = 0.0
    out = evaluate(og, {x.uid: xv}).outputs[y.uid]
    assert_close(out, EXPECTED[op](xv, tuple(axes)), rtol=1e-12, atol=1e-12)
    assert_sampled_matches_whole(og, {x.uid: xv}, samples=3)


def test_a_partial_reduction_of_an_axis_is_named_unsupported():
    """Y's dim dividing X's but not 1: cuDNN's grouping of that axis is undocumented."""
    g = cb.Graph("partial", io_data_type="float")
    x = g.tensor([4, 6], name="x")
    y = g.tensor([4, 3], name="y")
    g.add(OperationReduction(xdesc=x, ydesc=y, desc=Reduction(operator="CUDNN_REDUCE_TENSOR_ADD",
                                                               comp_type="CUDNN_DATA_FLOAT").finalize()))
    try:
        og = g.build()
    except cb.CudnnError as e:
        pytest.skip(f"cuDNN refuses the graph itself: {e}")
    (line,) = unsupported(og)
    assert line.startswith("Reduction (operation 0, writes y)") and "partial reduction" in line


def test_gen_stats_sums_per_channel(rng):
    g = cb.Graph("genstats")
    x = g.tensor([3, 8, 5, 4], layout="nhwc", name="x")
    out = g.gen_stats(x)
    og = g.build()
    xv = rng.standard_normal([3, 8, 5, 4])
    r = evaluate(og, {x.uid: xv})
    assert_close(r.outputs[out["sum"].uid], xv.sum(axis=(0, 2, 3)).reshape(1, 8, 1, 1))
    assert_close(r.outputs[out["sqsum"].uid], (xv * xv).sum(axis=(0, 2, 3)).reshape(1, 8, 1, 1))
