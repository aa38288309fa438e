"""The graph checks (``graph.checks`` / ``Graph.build``): in-place operations, duplicate UIDs, virtual tensors
nobody produces or consumes, consumers that read another shape than their producer writes."""
import pytest

import cudnn_backend as cb
from cudnn_backend.graph import Graph, GraphError, check_operations
from cudnn_backend.typed import OperationPointwise, Pointwise

from tests.helpers import generic_graphs as gg
from tests.helpers.offline import conv_bias_relu_graph as _cbr_graph


# ---------------------------------------------------------------------------------------------
# graph checks before finalize
# ---------------------------------------------------------------------------------------------
def _relu(g, x, y):
    pw = Pointwise(mode="CUDNN_POINTWISE_RELU_FWD", math_prec="CUDNN_DATA_FLOAT").finalize()
    return g.add(OperationPointwise(pw_descriptor=pw, xdesc=x, ydesc=y))


def test_in_place_allowed_in_a_single_node_graph():
    g = Graph()
    x = g.tensor([1, 8, 4, 4])
    _relu(g, x, x)
    check_operations(g.operations)  # no error


def test_in_place_refused_in_a_multi_node_graph():
    g = Graph()
    x = g.tensor([1, 8, 4, 4])
    y = g.tensor([1, 8, 4, 4])
    _relu(g, x, x)  # in place on x
    _relu(g, x, y)
    with pytest.raises(GraphError, match=r"reads and writes UID 1 \(t1\): in-place operations are allowed only in "
                                         r"single-node graphs"):
        g.build()


def test_duplicate_uids():
    g = Graph()
    a = gg.tensor(7, [1, 8, 4, 4], [128, 16, 4, 1])
    b = gg.tensor(7, [1, 1, 4, 4], [16, 16, 4, 1])  # broadcasts against a, but another tensor with the same UID
    out = g.tensor([1, 8, 4, 4])
    pw = Pointwise(mode="CUDNN_POINTWISE_ADD", math_prec="CUDNN_DATA_FLOAT").finalize()
    g.add(OperationPointwise(pw_descriptor=pw, xdesc=a, bdesc=b, ydesc=out))
    with pytest.raises(GraphError, match=r"duplicate UID 7"):
        g.build()


def test_virtual_tensor_nobody_produces():
    g = Graph()
    v = g.tensor([1, 8, 4, 4], virtual=True)
    y = g.tensor([1, 8, 4, 4])
    _relu(g, v, y)
    z = g.tensor([1, 8, 4, 4])
    _relu(g, y, z)
    with pytest.raises(GraphError, match=r"virtual tensor v1 \(uid 1\).*is consumed but no operation produces it"):
        g.build()


def test_virtual_tensor_nobody_consumes():
    g = Graph()
    x = g.tensor([1, 8, 4, 4])
    g.pointwise("CUDNN_POINTWISE_RELU_FWD", x)  # virtual output, never read
    with pytest.raises(GraphError, match=r"is produced by Pointwise RELU_FWD but nothing consumes it"):
        g.build()


def test_consumer_shape_differs_from_producer():
    g = Graph()
    x = g.tensor([1, 8, 4, 4])
    v = g.pointwise("CUDNN_POINTWISE_RELU_FWD", x)
    wrong = gg.tensor(v.uid, [1, 8, 2, 8], [128, 16, 8, 1], data_type=cb.CUDNN_DATA_FLOAT, virtual=True)
    y = g.tensor([1, 8, 2, 8])
    _relu(g, wrong, y)
    with pytest.raises(GraphError, match=r"reads UID 2 as .*\[1, 8, 2, 8\].* but Pointwise RELU_FWD produces .*\[1, 8, 4, 4\]"):
        g.build()


def test_renaming_a_finalized_tensor_shows_in_tables():
    g = _cbr_graph()
    g.build()
    x = g.tensors[1]
    assert "X (uid 1)" in g.table()
    x.name = "input"
    assert "input (uid 1)" in g.table() and "input" in g.to_dot()


def test_graph_checks_read_generic_operations_too():
    # operations built with the generic Descriptor (C names) are inspected like typed ones
    def relu(x, y):
        pw = cb.Descriptor(cb.CUDNN_BACKEND_POINTWISE_DESCRIPTOR)
        pw.set(cb.CUDNN_ATTR_POINTWISE_MODE, cb.CUDNN_TYPE_POINTWISE_MODE, cb.CUDNN_POINTWISE_RELU_FWD)
        pw.set(cb.CUDNN_ATTR_POINTWISE_MATH_PREC, cb.CUDNN_TYPE_DATA_TYPE, cb.CUDNN_DATA_FLOAT)
        op = cb.Descriptor(cb.CUDNN_BACKEND_OPERATION_POINTWISE_DESCRIPTOR)
        op.set(cb.CUDNN_ATTR_OPERATION_POINTWISE_PW_DESCRIPTOR, cb.CUDNN_TYPE_BACKEND_DESCRIPTOR, pw.finalize())
        op.set(cb.CUDNN_ATTR_OPERATION_POINTWISE_XDESC, cb.CUDNN_TYPE_BACKEND_DESCRIPTOR, x)
        op.set(cb.CUDNN_ATTR_OPERATION_POINTWISE_YDESC, cb.CUDNN_TYPE_BACKEND_DESCRIPTOR, y)
        return op.finalize()

    x = gg.tensor(1, [1, 8, 4, 4], [128, 16, 4, 1])
    y = gg.tensor(2, [1, 8, 4, 4], [128, 16, 4, 1])
    check_operations([relu(x, y)])  # no error
    with pytest.raises(GraphError, match="reads and writes UID 1 \\(t1\\): in-place"):
        check_operations([relu(x, x), relu(x, y)])
    with pytest.raises(GraphError, match="an operation graph needs at least one operation"):
        check_operations([])


def test_consumer_listed_before_its_producer_is_described_right():
    g = Graph()
    x = g.tensor([1, 8, 4, 4])
    v = g.pointwise("CUDNN_POINTWISE_RELU_FWD", x)
    wrong = gg.tensor(v.uid, [1, 8, 2, 8], [128, 16, 8, 1], data_type=cb.CUDNN_DATA_FLOAT, virtual=True)
    y = g.tensor([1, 8, 2, 8])
    consumer = _relu(Graph(), wrong, y)
    with pytest.raises(GraphError, match=r"reads UID 2 as .*\[1, 8, 2, 8\].* but Pointwise RELU_FWD produces .*"
                                         r"\[1, 8, 4, 4\].*consumer and producer differ"):
        check_operations([consumer, *g.operations])
