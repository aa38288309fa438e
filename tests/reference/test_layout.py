"""CONCAT, RESHAPE (a view: transposes through swapped strides; the logical mode), TRANSPOSE and SLICE against
numpy written here."""
import numpy as np
import pytest

import cudnn_backend as cb
from cudnn_backend.reference import evaluate, unsupported

from tests.reference.helpers import assert_close, assert_sampled_matches_whole, needs_cudnn, newer_cudnn_skips


def test_concat_along_an_axis(rng):
    g = cb.Graph("cat", io_data_type="float")
    a, b, c = g.tensor([2, 3, 4], name="a"), g.tensor([2, 1, 4], name="b"), g.tensor([2, 5, 4], name="c")
    y = g.concat([a, b, c], 1)
    og = g.build()
    av, bv, cv = (rng.standard_normal(t.shape) for t in (a, b, c))
    inputs = {a.uid: av, b.uid: bv, c.uid: cv}
    assert_close(evaluate(og, inputs).outputs[y.uid], np.concatenate([av, bv, cv], axis=1))
    assert_sampled_matches_whole(og, inputs)


def test_reshape_of_a_matmul_output(rng):
    g = cb.Graph("reshape", io_data_type="float")
    a, b = g.tensor([4, 6, 3], name="a"), g.tensor([4, 3, 5], name="b")
    y = g.reshape(g.matmul(a, b), [1, 24, 5], output=True)
    og = g.build()
    av, bv = rng.standard_normal([4, 6, 3]), rng.standard_normal([4, 3, 5])
    assert_close(evaluate(og, {a.uid: av, b.uid: bv}).outputs[y.uid], (av @ bv).reshape(1, 24, 5))
    assert_sampled_matches_whole(og, {a.uid: av, b.uid: bv})


def test_reshape_with_swapped_strides_is_a_transpose(rng):
    """The composite attention backward's P^T: dims swapped, strides swapped, same memory."""
    g = cb.Graph("pt", io_data_type="float")
    a, b = g.tensor([2, 4, 3], name="a"), g.tensor([2, 3, 5], name="b")
    p = g.matmul(a, b)                                             # [2, 4, 5] packed
    pt = g.reshape(p, [2, 5, 4], strides=[20, 1, 5])               # P^T, a view
    c = g.tensor([2, 4, 2], name="c")
    y = g.matmul(pt, c, output=True)
    og = g.build()
    av, bv, cv = rng.standard_normal([2, 4, 3]), rng.standard_normal([2, 3, 5]), rng.standard_normal([2, 4, 2])
    inputs = {a.uid: av, b.uid: bv, c.uid: cv}
    assert_close(evaluate(og, inputs).outputs[y.uid], np.swapaxes(av @ bv, 1, 2) @ cv)
    assert_sampled_matches_whole(og, inputs)


@needs_cudnn(92200, "the reshape mode attribute")
def test_logical_reshape_reads_row_major_order(rng):
    g = cb.Graph("logical", io_data_type="float")
    a, b = g.tensor([2, 4, 3], name="a"), g.tensor([2, 3, 6], name="b")
    y = g.reshape(g.matmul(a, b), [4, 12], mode="logical", output=True)
    og = g.build()
    av, bv = rng.standard_normal([2, 4, 3]), rng.standard_normal([2, 3, 6])
    assert_close(evaluate(og, {a.uid: av, b.uid: bv}).outputs[y.uid], (av @ bv).reshape(4, 12))


@needs_cudnn(92200, "TRANSPOSE")
def test_transpose(rng):
    g = cb.Graph("transpose", io_data_type="float")
    x = g.tensor([2, 3, 4, 5], name="x")
    y = g.transpose(x, [0, 2, 3, 1], output=True)
    og = g.build()
    xv = rng.standard_normal([2, 3, 4, 5])
    assert_close(evaluate(og, {x.uid: xv}).outputs[y.uid], np.transpose(xv, [0, 2, 3, 1]))
    assert_sampled_matches_whole(og, {x.uid: xv})


@needs_cudnn(92200, "SLICE")
@pytest.mark.parametrize("start,limit,steps", [([0, 1, 0, 2], [2, 3, 4, 5], [1, 1, 1, 1]),
                                               ([1, 0, 1, 0], [2, 3, 4, 5], [1, 2, 2, 3])])
def test_slice(start, limit, steps, rng):
    g = cb.Graph("slice", io_data_type="float")
    x = g.tensor([2, 3, 4, 5], name="x")
    y = g.slice(x, start, limit, steps, output=True)  # (cuDNN 9.28 refuses a slice without strides)
    og = g.build()
    xv = rng.standard_normal([2, 3, 4, 5])
    expected = xv[tuple(slice(a, b, s) for a, b, s in zip(start, limit, steps))]
    assert_close(evaluate(og, {x.uid: xv}).outputs[y.uid], expected)


def test_a_view_between_layouts_that_do_not_pack_is_named():
    g = cb.Graph("gappy", io_data_type="float")
    a, b = g.tensor([2, 4, 3], name="a"), g.tensor([2, 3, 4], name="b")
    with newer_cudnn_skips():
        g.reshape(g.matmul(a, b), [2, 16], strides=[20, 1], output=True, name="y")
        try:
            og = g.build()
        except cb.CudnnError as e:
            pytest.skip(f"cuDNN refuses the graph itself: {e}")
    (line,) = unsupported(og)
    assert "Reshape" in line and "densely" in line
