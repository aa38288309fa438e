"""MATMUL against einsum: batched with broadcast batch dims, operands read transposed through their strides,
per-batch M/N/K overrides with a padding value, and a matmul + bias + ReLU chain."""
import numpy as np
import pytest

import cudnn_backend as cb
from cudnn_backend.reference import evaluate

from tests.reference.helpers import assert_close, assert_sampled_matches_whole, newer_cudnn_skips


@pytest.mark.parametrize("a_dims,b_dims", [([5, 7], [7, 3]), ([4, 6, 5], [4, 5, 3]), ([2, 1, 4, 5], [1, 3, 5, 6]),
                                           ([3, 4, 5], [1, 5, 2])],
                         ids=["2d", "batched", "broadcast-both", "broadcast-b"])
def test_batched_with_broadcast(a_dims, b_dims, rng):
    g = cb.Graph("mm", io_data_type="float")
    a, b = g.tensor(a_dims, name="a"), g.tensor(b_dims, name="b")
    c = g.matmul(a, b, output=True, name="c")
    og = g.build()
    av, bv = rng.standard_normal(a_dims), rng.standard_normal(b_dims)
    batch = np.broadcast_shapes(a_dims[:-2], b_dims[:-2])
    ab = np.broadcast_to(av, (*batch, *a_dims[-2:]))
    bb = np.broadcast_to(bv, (*batch, *b_dims[-2:]))
    expected = np.einsum("...mk,...kn->...mn", ab, bb)
    assert_close(evaluate(og, {a.uid: av, b.uid: bv}).outputs[c.uid], expected)
    assert_sampled_matches_whole(og, {a.uid: av, b.uid: bv})


def test_operand_read_transposed_through_strides(rng):
    """K^T [b, d, s] stored as K [b, s, d]: the logical values are what counts."""
    g = cb.Graph("qk", io_data_type="float")
    q = g.tensor([2, 4, 3], name="q")
    kt = g.tensor([2, 3, 5], [15, 1, 3], name="k_t")
    s = g.matmul(q, kt, output=True)
    og = g.build()
    qv, ktv = rng.standard_normal([2, 4, 3]), rng.standard_normal([2, 3, 5])
    assert_close(evaluate(og, {q.uid: qv, kt.uid: ktv}).outputs[s.uid], np.einsum("bmk,bkn->bmn", qv, ktv))


def test_matmul_bias_relu_chain(rng):
    g = cb.Graph("mbr", io_data_type="float")
    a, b, bias = g.tensor([3, 8, 6], name="a"), g.tensor([3, 6, 5], name="b"), g.tensor([1, 1, 5], name="bias")
    y = g.relu(g.bias(g.matmul(a, b), bias), output=True)
    og = g.build()
    av, bv, biasv = rng.standard_normal([3, 8, 6]), rng.standard_normal([3, 6, 5]), rng.standard_normal([1, 1, 5])
    expected = np.maximum(np.einsum("bmk,bkn->bmn", av, bv) + biasv, 0)
    assert_close(evaluate(og, {a.uid: av, b.uid: bv, bias.uid: biasv}).outputs[y.uid], expected)
    assert_sampled_matches_whole(og, {a.uid: av, b.uid: bv, bias.uid: biasv})


def test_per_batch_overrides_and_padding_value(rng):
    g = cb.Graph("ragged", io_data_type="float")
    a, b = g.tensor([3, 6, 5], name="a"), g.tensor([3, 5, 4], name="b")
    m = g.tensor([3, 1, 1], data_type="int32", name="m")
    k = g.tensor([3, 1, 1], data_type="int32", name="k")
    with newer_cudnn_skips():
        c = g.matmul(a, b, m_override=m, k_override=k, padding_value=-1.5, output=True)
        og = g.build()
    av, bv = rng.standard_normal([3, 6, 5]), rng.standard_normal([3, 5, 4])
    ms, ks = np.array([6, 2, 4]), np.array([5, 1, 3])
    out = evaluate(og, {a.uid: av, b.uid: bv, m.uid: ms.reshape(3, 1, 1), k.uid: ks.reshape(3, 1, 1)}).outputs[c.uid]
    expected = np.full([3, 6, 4], -1.5)
    for i in range(3):
        expected[i, :ms[i]] = av[i, :ms[i], :ks[i]] @ bv[i, :ks[i]]
    assert_close(out, expected)
