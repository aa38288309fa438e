"""The graph checks (``graph.checks`` / ``Graph.build``): in-place operations, duplicate UIDs, virtual tensors
nobody produces or consumes, consumers that read another shape than their producer writes; and what the builder
refuses as an operation is added (an output it also reads, a second producer, a cycle, a tensor of another Graph)."""
import subprocess
import sys
import textwrap

import pytest

import cudnn_backend as cb
from cudnn_backend.graph import Graph, GraphError, check_operations
from cudnn_backend.typed import OperationConcat, OperationGraph, OperationPointwise, Pointwise
from cudnn_backend.typed.introspection import tensor_slots

from tests.helpers import generic_graphs as gg
from tests.helpers.env import ROOT
from tests.helpers.offline import conv_bias_relu_graph as _cbr_graph


# ---------------------------------------------------------------------------------------------
# graph checks before finalize
# ---------------------------------------------------------------------------------------------
def _relu_op(x, y):
    pw = Pointwise(mode="CUDNN_POINTWISE_RELU_FWD", math_prec="CUDNN_DATA_FLOAT").finalize()
    return OperationPointwise(pw_descriptor=pw, xdesc=x, ydesc=y)


def _relu(g, x, y):
    return g.add(_relu_op(x, y))


IN_PLACE = r"Pointwise RELU_FWD: t1 \(uid 1\) is both its output ydesc and its input xdesc: an operation cannot " \
           r"write a tensor it reads"


def test_in_place_refused_by_the_checks_even_alone():
    # cuDNN 9.28 refuses the graph (BAD_PARAM, buildDAG), 9.19 finalizes it: refused on every release
    x = gg.tensor(1, [1, 8, 4, 4], [128, 16, 4, 1])
    y = gg.tensor(2, [1, 8, 4, 4], [128, 16, 4, 1])
    with pytest.raises(GraphError, match=IN_PLACE):
        check_operations([_relu_op(x, x).finalize()])
    with pytest.raises(GraphError, match=IN_PLACE):
        check_operations([_relu_op(x, x).finalize(), _relu_op(x, y).finalize()])


def test_in_place_refused_as_the_operation_is_added():
    g = Graph()
    x = g.tensor([1, 8, 4, 4])
    with pytest.raises(GraphError, match=IN_PLACE):
        _relu(g, x, x)
    x = g.tensor([1, 8, 4, 4], name="x")
    with pytest.raises(GraphError, match=r"x \(uid 2\) is both its output ydesc and its input xdesc.*give the "
                                         r"output a tensor of its own$"):
        g.relu(x, output=x)
    b = g.tensor([1, 8, 4, 4], name="b")
    with pytest.raises(GraphError, match=r"Pointwise ADD: b \(uid 3\) is both its output ydesc and its input "
                                         r"bdesc"):
        g.bias(x, b, output=b)
    a, m = g.tensor([1, 64, 64], name="a"), g.tensor([1, 64, 64], name="m")
    with pytest.raises(GraphError, match=r"Matmul: a \(uid 4\) is both its output cdesc and its input adesc"):
        g.matmul(a, m, output=a)  # cuDNN 9.19 finalizes and plans it (an engine racing its own input)
    assert g.operations == []  # nothing refused was added


def test_duplicate_uids():
    g = Graph()
    a = gg.tensor(7, [1, 8, 4, 4], [128, 16, 4, 1])
    b = gg.tensor(7, [1, 1, 4, 4], [16, 16, 4, 1])  # broadcasts against a, but another tensor with the same UID
    out = g.tensor([1, 8, 4, 4])
    pw = Pointwise(mode="CUDNN_POINTWISE_ADD", math_prec="CUDNN_DATA_FLOAT").finalize()
    op = OperationPointwise(pw_descriptor=pw, xdesc=a, bdesc=b, ydesc=out)
    with pytest.raises(GraphError, match=r"^bdesc: t7 \(uid 7\) \[1, 1, 4, 4\] .* has a UID this graph gives to "
                                         r"another tensor, t7 \(uid 7\) \[1, 8, 4, 4\]"):
        g.add(op)  # refused as the operation is added
    with pytest.raises(GraphError, match=r"duplicate UID 7"):
        check_operations([op])  # and by the checks of a list of operations


def test_virtual_tensor_nobody_produces():
    g = Graph()
    v = g.tensor([1, 8, 4, 4], virtual=True)
    y = g.tensor([1, 8, 4, 4])
    _relu(g, v, y)
    z = g.tensor([1, 8, 4, 4])
    _relu(g, y, z)
    with pytest.raises(GraphError, match=r"^Pointwise RELU_FWD.xdesc reads the virtual tensor v1 \(uid 1\), but no "
                                         r"operation of the graph writes it: a virtual tensor holds only what an "
                                         r"operation writes"):
        g.build()


@pytest.mark.parametrize("api", ["typed", "generic"])
def test_a_graph_reading_a_virtual_tensor_nothing_writes_is_refused_by_heuristics_and_engines(api, h200):
    """cuDNN plans it (its kernels reading memory nobody wrote) and refuses to load the plan's JSON. The graph itself
    finalizes: an SDPA's score-modifier subgraph reads the score its SDPA writes."""
    from cudnn_backend.runtime import engines, heuristics

    v = gg.tensor(1, [1, 8, 4, 4], [128, 16, 4, 1], virtual=True)
    y = gg.tensor(2, [1, 8, 4, 4], [128, 16, 4, 1])
    z = gg.tensor(3, [1, 8, 4, 4], [128, 16, 4, 1])
    ops = [_relu_op(y, z).finalize(), _relu_op(v, y).finalize()]
    graph = OperationGraph(ops=ops) if api == "typed" else cb.Descriptor(cb.CUDNN_BACKEND_OPERATIONGRAPH_DESCRIPTOR)
    if api == "generic":
        graph.set(cb.CUDNN_ATTR_OPERATIONGRAPH_OPS, cb.CUDNN_TYPE_BACKEND_DESCRIPTOR, ops)
    graph.finalize()
    refusal = (r"^Pointwise RELU_FWD.xdesc reads the virtual tensor v1 \(uid 1\), but no operation of the graph writes "
               r"it")
    with pytest.raises(GraphError, match=refusal):
        heuristics.get_configs(graph, "A", h200)
    with pytest.raises(GraphError, match=refusal):
        engines.make_engine(graph, 0, h200)
    written = gg.tensor(1, [1, 8, 4, 4], [128, 16, 4, 1], virtual=True)  # one writes it: cuDNN is asked
    x = gg.tensor(4, [1, 8, 4, 4], [128, 16, 4, 1])
    fine = OperationGraph(ops=[_relu_op(x, written).finalize(), _relu_op(written, y).finalize()]).finalize()
    heuristics.get_configs(fine, "A", h200)
    engines.make_engine(fine, 0, h200, finalize=False).finalize()


def test_the_virtual_read_check_holds_any_number_of_tensors_and_names_a_uid_given_two_tensors(h200):
    from cudnn_backend.runtime import heuristics

    def t(uid, virtual=False):
        return gg.tensor(uid, [1, 8, 4, 4], [128, 16, 4, 1], virtual=virtual)

    # a chain of 300 operations through 299 virtual tensors, the last read of one nothing writes
    chain = [_relu_op(t(1), t(2, True))] + [_relu_op(t(u, True), t(u + 1, True)) for u in range(2, 300)]
    chain = [op.finalize() for op in chain + [_relu_op(t(300, True), t(1000))]]
    assert heuristics.get_configs(OperationGraph(ops=chain).finalize(), "A", h200) == []  # cuDNN is asked: no engine
    unwritten = chain[:150] + [_relu_op(t(5000, True), t(1001)).finalize()] + chain[150:]
    with pytest.raises(GraphError, match=r"reads the virtual tensor v5000 \(uid 5000\), but no operation"):
        heuristics.get_configs(OperationGraph(ops=unwritten).finalize(), "A", h200)
    # one UID, two tensors: written stored and read virtual, or written and read with other dims (an
    # out-of-bounds plan on 9.28.1); 9.19 refuses some graphs itself (its hint says why)
    wide, wide_out = gg.tensor(2, [1, 8, 8, 8], [512, 64, 8, 1], virtual=True), gg.tensor(3, [1, 8, 8, 8], [512, 64, 8, 1])
    clashes = (([_relu_op(t(1), t(2)), _relu_op(t(2, True), t(3))], r"v2 \[1, 8, 4, 4\] strides \[128, 16, 4, 1\]"),
               ([_relu_op(t(1), t(2, True)), _relu_op(wide, wide_out)], r"v2 \[1, 8, 8, 8\] strides \[512, 64, 8, 1\]"))
    for clash, reader in clashes:
        try:
            clashing = OperationGraph(ops=[op.finalize() for op in clash]).finalize()
        except cb.CudnnError as error:
            assert "consumer and producer differ" in str(error)
            continue
        with pytest.raises(GraphError, match=r"^uid 2 names two different tensors: Pointwise RELU_FWD.ydesc .*, and "
                                             r"Pointwise RELU_FWD.xdesc " + reader + r" CUDNN_DATA_HALF virtual \(cuDNN would "):
            heuristics.get_configs(clashing, "A", h200)


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
    with pytest.raises(GraphError, match=r"^xdesc: v2 \(uid 2\) \[1, 8, 2, 8\] .* has a UID this graph gives to another "
                                         r"tensor, .*\(uid 2\) \[1, 8, 4, 4\]"):
        _relu(g, wrong, y)  # refused as the operation is added
    op = _relu_op(wrong, y).finalize()
    with pytest.raises(GraphError, match=r"reads UID 2 as .*\[1, 8, 2, 8\].* but Pointwise RELU_FWD produces .*\[1, 8, 4, 4\]"):
        check_operations(g.operations + [op])  # and by the checks of a list of operations


def test_the_builder_reads_an_operations_tensors_as_core_does():
    # off core's tables, as core's tensor_slots_of: generic tensor descriptors in a list attribute included
    g = Graph()
    x = gg.tensor(1, [1, 8, 4, 4], [128, 16, 4, 1])
    v = gg.tensor(2, [1, 8, 4, 4], [128, 16, 4, 1], virtual=True)
    op = g.add(OperationConcat(axis=1, input_descs=[x, v], output_desc=g.tensor([1, 16, 4, 4], uid=3)))
    assert [(kw, t) for kw, t, _, _ in g.slots[0]] == [(kw, t) for kw, t, _ in tensor_slots(op)]
    assert [kw for kw, _, _, _ in g.slots[0]] == ["input_descs", "input_descs", "output_desc"]
    with pytest.raises(GraphError, match=r"^Concat.input_descs reads the virtual tensor v2 \(uid 2\), but no "
                                         r"operation of the graph writes it"):
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
    with pytest.raises(GraphError, match=IN_PLACE):
        check_operations([relu(x, x), relu(x, y)])
    with pytest.raises(GraphError, match="an operation graph needs at least one operation"):
        check_operations([])


def test_consumer_listed_before_its_producer_is_described_right():
    g = Graph()
    x = g.tensor([1, 8, 4, 4])
    v = g.pointwise("CUDNN_POINTWISE_RELU_FWD", x)
    wrong = gg.tensor(v.uid, [1, 8, 2, 8], [128, 16, 8, 1], data_type=cb.CUDNN_DATA_FLOAT, virtual=True)
    y = gg.tensor(9, [1, 8, 2, 8], [128, 16, 8, 1])
    consumer = _relu_op(wrong, y).finalize()
    with pytest.raises(GraphError, match=r"reads UID 2 as .*\[1, 8, 2, 8\].* but Pointwise RELU_FWD produces .*"
                                         r"\[1, 8, 4, 4\].*consumer and producer differ"):
        check_operations([consumer, *g.operations])


# ---------------------------------------------------------------------------------------------
# refused as the operation is added (cuDNN refuses each only when the whole graph is finalized)
# ---------------------------------------------------------------------------------------------
def test_a_second_producer_is_refused_as_it_is_added():
    g = Graph(io_data_type="float")
    x = g.tensor([1, 4, 8, 8], name="x")
    y = g.relu(x, output=True, name="y")
    with pytest.raises(GraphError, match=r"Pointwise ADD: its output ydesc, y \(uid 2\), is written by Pointwise "
                                         r"RELU_FWD already: a tensor has one producer"):
        g.bias(x, x, output=y)
    assert len(g.operations) == 1


@pytest.mark.parametrize("length", [2, 3])
def test_a_cycle_is_refused_as_it_is_closed(length):
    g = Graph(io_data_type="float")
    a = g.tensor([1, 4, 8, 8], name="a", virtual=True)
    t = a
    for _ in range(length - 1):
        t = g.relu(t)
    with pytest.raises(GraphError, match=rf"its output ydesc, a \(uid 1\), is what its input xdesc \({t.name}\) is "
                                         r"computed from: the operations would form a cycle"):
        g.relu(t, output=a)
    assert len(g.operations) == length - 1


def test_writing_a_tensor_read_before_is_no_cycle():
    # a consumer added before its producer: a DAG, not a cycle
    g = Graph(io_data_type="float")
    x = g.tensor([1, 4, 8, 8], name="x")
    a = g.tensor([1, 4, 8, 8], name="a", virtual=True)
    g.relu(a, output=True, name="y")
    g.relu(x, output=a)
    g.build()


def test_tensors_of_another_graph_are_refused_naming_the_parameter_and_both_graphs():
    g1, g2 = Graph("first", io_data_type="float"), Graph("second", io_data_type="float")
    x = g1.tensor([1, 4, 8, 8], name="x")
    own = g2.tensor([1, 4, 8, 8], name="own")
    foreign = r"{}: x \(uid 1\) is a tensor of another Graph, 'first', not of this one, 'second'"
    with pytest.raises(GraphError, match=foreign.format("x")):
        g2.relu(x)  # its UID 1 is nothing in g2
    with pytest.raises(GraphError, match=foreign.format("b")):
        g2.bias(own, x)  # its UID 1 is another tensor of g2
    with pytest.raises(GraphError, match=foreign.format("output")):
        g2.relu(own, output=x)
    with pytest.raises(GraphError, match=foreign.format("tensor")):
        g2.allow_unconsumed(x)
    with pytest.raises(GraphError, match=foreign.format(r"inputs\[1\]")):
        g2.concat([own, x], 1)
    with pytest.raises(GraphError, match=foreign.format("w")):
        g2.conv_fwd(own, x)
    with pytest.raises(GraphError, match=foreign.format("xdesc")):
        g2.add(_relu_op(x, g2.tensor([1, 4, 8, 8])))  # an operation built by hand
    assert g2.operations == []
    g2.relu(own, output=True)  # its own tensors still pass
    assert not any(t is x for t in g2.tensors.values())


def test_hand_made_tensors_may_serve_several_graphs():
    # their UIDs are the user's, and cuDNN takes one tensor descriptor in several operation graphs
    x = gg.tensor(1, [1, 8, 4, 4], [128, 16, 4, 1])
    y = gg.tensor(2, [1, 8, 4, 4], [128, 16, 4, 1])
    g1, g2 = Graph("first"), Graph("second")
    _relu(g1, x, y)  # a tensor of no graph: taken
    _relu(g2, x, gg.tensor(3, [1, 8, 4, 4], [128, 16, 4, 1]))  # and again, while the first graph lives
    made = g1.tensor([1, 8, 4, 4], [128, 16, 4, 1], name="made")  # one a Graph made stays that graph's
    with pytest.raises(GraphError, match=r"xdesc: made \(uid 3\) is a tensor of another Graph, 'first'"):
        _relu(g2, made, gg.tensor(4, [1, 8, 4, 4], [128, 16, 4, 1]))
    g1.allow_unconsumed(made)
    g1.build()
    g2.build()
    assert g1.tensors[1] is x and g2.tensors[1] is x


def test_a_hand_made_tensor_may_not_take_a_uid_the_graph_gives_another():
    g = Graph("g")
    x = g.tensor([1, 8, 4, 4], [128, 16, 4, 1], name="x")  # UID 1
    with pytest.raises(GraphError, match=r"^xdesc: t1 \(uid 1\) .* has a UID this graph gives to another tensor, x "
                                         r"\(uid 1\) .*: UIDs are unique in a graph"):
        _relu(g, gg.tensor(1, [1, 8, 4, 4], [128, 16, 4, 1]), g.tensor([1, 8, 4, 4], [128, 16, 4, 1]))
    taken = gg.tensor(99, [1, 8, 4, 4], [128, 16, 4, 1])
    _relu(g, x, taken)
    assert 99 in g.uids_used and g.tensors[99] is taken  # taken: later tensors get other UIDs
    # (two objects described alike: the message says which is the graph's, not the same text twice)
    with pytest.raises(GraphError, match=r"^xdesc: t99 \(uid 99\) .* has a UID this graph gives to another tensor "
                                         r"object, the graph's own, which reads the same: UIDs"):
        _relu(g, gg.tensor(99, [1, 8, 4, 4], [128, 16, 4, 1]), g.tensor([1, 8, 4, 4], [128, 16, 4, 1]))
    _relu(g, taken, g.tensor([1, 8, 4, 4], [128, 16, 4, 1], name="y"))  # the taken one itself is this graph's
    g.build()


def test_an_operation_may_not_write_one_tensor_as_two_outputs():
    # cuDNN plans it (9.19 and 9.28): mean and inverse variance would be written to one buffer
    g = Graph("stats", io_data_type="float")
    x = g.tensor([2, 16, 4, 4], name="x")
    s = g.tensor([1, 16, 1, 1], name="s")
    op = g._operation("GEN_STATS", mode="CUDNN_GENSTATS_SUM_SQSUM", math_prec="CUDNN_DATA_FLOAT", xdesc=x, sumdesc=s,
                      sqsumdesc=s)
    twice = r"GenStats: s \(uid 2\) is both its output sumdesc and its output sqsumdesc"
    with pytest.raises(GraphError, match=twice):
        g.add(op)
    assert g.operations == []
    with pytest.raises(GraphError, match=twice):
        check_operations([op])


@pytest.mark.parametrize("rank", [6, 8])
def test_a_convolution_of_more_than_three_spatial_dims_is_refused_naming_them(rank):
    # cuDNN 9.10-9.28 refuse it at the operation's finalize as NOT_INITIALIZED, naming nothing
    g = Graph("conv")
    x, w = g.tensor([1, 8] + [4] * (rank - 2)), g.tensor([8, 8] + [1] * (rank - 2))
    with pytest.raises(GraphError, match=rf"X \[1, 8, 4, .*\] has {rank - 2} spatial dims; cuDNN convolves over 1 "
                                         r"to 3"):
        g.conv_fwd(x, w)
    with pytest.raises(GraphError, match="spatial dims"):
        g.conv_bwd_data(x, w, [1, 8] + [4] * (rank - 2))


def test_a_padding_past_int64_is_named():
    g = Graph("conv")
    x, w = g.tensor([1, 8, 8, 8]), g.tensor([8, 8, 3, 3])
    with pytest.raises(GraphError, match=r"spatial dim 0: X's 8 with padding 4611686018427387904\+4611686018427387904 "
                                         r"\(stride 1\) gives 9223372036854775814 output positions; a cuDNN size is "
                                         r"at most 9223372036854775807"):
        g.conv_fwd(x, w, padding=2**62)


def test_uid_minus_one_is_refused_everywhere():
    """cuDNN finalizes a tensor of UID -1 but writes a plan's JSON without it ('no UID'): the plan would not load."""
    with pytest.raises(GraphError, match=r"^uid: -1 is cuDNN's 'no UID'"):
        Graph("u").tensor([1, 2], uid=-1)
    assert Graph("u").tensor([1, 2], uid=-2).uid == -2  # other negative UIDs serialize
    d = cb.Descriptor(cb.CUDNN_BACKEND_TENSOR_DESCRIPTOR)
    for attr, atype, value in ((cb.CUDNN_ATTR_TENSOR_UNIQUE_ID, cb.CUDNN_TYPE_INT64, -1),
                               (cb.CUDNN_ATTR_TENSOR_DATA_TYPE, cb.CUDNN_TYPE_DATA_TYPE, cb.CUDNN_DATA_HALF),
                               (cb.CUDNN_ATTR_TENSOR_DIMENSIONS, cb.CUDNN_TYPE_INT64, [1, 2]),
                               (cb.CUDNN_ATTR_TENSOR_STRIDES, cb.CUDNN_TYPE_INT64, [2, 1]),
                               (cb.CUDNN_ATTR_TENSOR_BYTE_ALIGNMENT, cb.CUDNN_TYPE_INT64, 2)):
        d.set(attr, atype, value)
    with pytest.raises(ValueError, match=r"^CUDNN_ATTR_TENSOR_UNIQUE_ID: -1 is cuDNN's 'no UID'"):
        d.finalize()


@pytest.mark.parametrize("strides", [[1, 1, 1], [8, 1, 1], [1, 8, 2]])
def test_an_output_whose_elements_share_memory_is_refused(strides):
    # cuDNN refuses it for convolutions only; a matmul (and an SDPA) writing it got a plan on 9.28.1
    g = Graph("alias")
    a, b = g.tensor([1, 16, 32]), g.tensor([1, 32, 8])
    with pytest.raises(GraphError, match=r"^Matmul: its output cdesc, .* has strides that give two elements one "
                                         r"address .* give the output packed strides"):
        g.matmul(a, b, output=g.tensor([1, 16, 8], strides))
    assert g.operations == []
    g.matmul(a, b, output=g.tensor([1, 16, 8], [256, 16, 1]))  # padded rows: no element shares memory
    generic = [op for op in g.operations]
    check_operations(generic)


def test_elements_alias_is_exact_on_small_tensors():
    import itertools

    from cudnn_backend.core.families._build import elements_alias
    for dims in itertools.product([1, 2, 3], [1, 2, 3], [1, 2]):
        for strides in itertools.product(range(7), range(7), range(4)):
            offsets = [i * strides[0] + j * strides[1] + k * strides[2]
                       for i in range(dims[0]) for j in range(dims[1]) for k in range(dims[2])]
            expected = len(set(offsets)) != len(offsets)
            # lists are worked out each time, a signature's tuples of ints once (then remembered): asked first,
            # after lists, and again, the same answer
            if sum(strides) % 2:
                assert elements_alias(dims, strides) == expected, (dims, strides)
            assert elements_alias(list(dims), list(strides)) == expected, (dims, strides)
            assert elements_alias(dims, strides) == expected, (dims, strides)
            assert elements_alias(dims, strides) == expected, (dims, strides)
    assert elements_alias([1 << 12, 1 << 12], [3, 4])  # interleaved past the exact check's size: taken to alias
    assert not elements_alias([1 << 12, 1 << 12], [1 << 12, 1])
    assert elements_alias((1 << 12, 1 << 12), (3, 4)) and not elements_alias((1 << 12, 1 << 12), (1 << 12, 1))


def test_elements_alias_remembers_plain_ints_only():
    """Tuples of other numbers are worked out each time: an int32 equal to an int (the same key) computes otherwise,
    and an array has no hash."""
    import numpy as np

    from cudnn_backend.core.families._build import elements_alias
    dims, strides = (2, 2, 2), (1, 2**31 - 1, 2**31 - 1)  # two axes of one stride: they alias
    elements_alias(tuple(np.int32(v) for v in dims), tuple(np.int32(v) for v in strides))  # (int32 arithmetic wraps)
    assert elements_alias(dims, strides) and elements_alias(list(dims), list(strides))
    assert elements_alias((2, 2), (np.array(1), np.array(2))) is False  # no hash: answered all the same
    assert elements_alias((2, 2), (np.array(1), np.array(1))) is True


def test_pointwise_operands_are_checked_for_every_mode():
    """The operands each mode reads (worked out once, by mode) against the reference tables themselves: every mode
    and every combination of b, t and dy."""
    import itertools

    from cudnn_backend.core.families.pointwise import BACKWARD, FUNCTIONS, operands_problem
    for mode in cb.PointwiseMode:
        if mode in BACKWARD:
            wanted = {"dy"}
        elif mode == cb.CUDNN_POINTWISE_GEN_INDEX:
            wanted = set()
        elif mode in FUNCTIONS:
            wanted = {1: set(), 2: {"b"}, 3: {"b", "t"}}[FUNCTIONS[mode][0]]
        else:
            for n in range(4):
                for given in itertools.combinations(("b", "t", "dy"), n):
                    assert operands_problem(mode, list(given)) is None  # left to cuDNN
            continue
        name = mode.name.removeprefix("CUDNN_POINTWISE_")
        for n in range(4):
            for given in itertools.combinations(("b", "t", "dy"), n):
                problem = operands_problem(mode, list(given))
                lacking, extra = sorted(wanted - set(given)), sorted(set(given) - wanted)
                if lacking:
                    assert problem == f"{name} needs {' and '.join(lacking)}", (mode, given)
                elif extra:
                    assert problem.startswith(f"{name} takes no {' or '.join(extra)} (its operands: x"), (mode, given)
                else:
                    assert problem is None, (mode, given)
                assert operands_problem(int(mode), given) == problem  # the mode as an int reads alike


def test_builder_mistakes_name_the_parameter():
    g = Graph("m")
    x = g.tensor([1, 2, 8, 8])
    from tests.helpers.env import loaded_has
    if loaded_has("9.20.0"):  # (the band mask came with cuDNN 9.20)
        with pytest.raises(GraphError, match=r"^comparison: ADD is no comparison \(CMP_GE, "):
            g.diagonal_band_mask(x, comparison="ADD")
    with pytest.raises(TypeError, match=r"^inputs: concat takes a sequence of tensors, not Tensor"):
        g.concat(x, 0)
    assert list(g.gen_index(x, -1, output=True).shape) == [1, 2, 8, 8]
    pw = g.operations[-1].values[cb.CUDNN_ATTR_OPERATION_POINTWISE_PW_DESCRIPTOR]
    assert pw.values[cb.CUDNN_ATTR_POINTWISE_AXIS] == 3  # the last axis, as other ops read -1
    with pytest.raises(TypeError, match=r"^deterministic: expected True or False, not str"):
        g.reduction(x, deterministic="no", output=True)
    with pytest.raises(GraphError, match=r"^mean: the bernoulli distribution does not read it \(it reads probability\)"):
        g.rng([2, 2], distribution="bernoulli", mean=0.0, std=1.0)
    with pytest.raises(GraphError, match=r"^probability: the normal distribution does not read it \(it reads mean and "
                                         r"std\)"):
        g.rng([2, 2], distribution="normal", probability=0.3)
    assert list(g.rng([2, 2])["y"].shape) == [2, 2]  # bernoulli, 0.5


def test_moe_mistakes_cuDNN_names_nothing_for_are_named():
    # cuDNN 9.28.1 refuses each at finalize as "finalize_internal()"
    from tests.helpers.env import loaded_has
    if not loaded_has("9.23.0"):
        pytest.skip("MoE grouped matmul came with cuDNN 9.23")
    g = Graph("moe", io_data_type="float")
    weights = g.tensor([4, 64, 32], [64 * 32, 1, 64])
    offsets = g.tensor([4, 1, 1], data_type="int32")
    with pytest.raises(GraphError, match=r"^tokens: \[2, 256, 64\] is not \[1, T, K\]"):
        g.moe_grouped_matmul(g.tensor([2, 256, 64]), weights, offsets)
    tokens = g.tensor([1, 256, 64])
    with pytest.raises(GraphError, match=r"^first_token_offset: .* is not INT32 \[4, 1, 1\]"):
        g.moe_grouped_matmul(tokens, weights, g.tensor([4, 1, 1], data_type="int64"))
    with pytest.raises(GraphError, match=r"^token_index: mode gather routes tokens by it; give it"):
        g.moe_grouped_matmul(tokens, weights, offsets, mode="gather")
    with pytest.raises(GraphError, match=r"^top_k: mode none does not read it"):
        g.moe_grouped_matmul(tokens, weights, offsets, top_k=2)
    assert list(g.moe_grouped_matmul(tokens, weights, offsets).shape) == [1, 256, 32]


def _refusal_of(ops):
    g = cb.Descriptor(cb.CUDNN_BACKEND_OPERATIONGRAPH_DESCRIPTOR)
    g.set(cb.CUDNN_ATTR_OPERATIONGRAPH_OPS, cb.CUDNN_TYPE_BACKEND_DESCRIPTOR, ops)
    with pytest.raises(cb.CudnnError) as refused:
        g.finalize()
    return refused.value


def test_an_operation_graph_cuDNN_refuses_by_hand_is_explained_by_the_graph_checks():
    # cuDNN says only "buildDAG" for each of these; the hint names the operations and tensors
    shape, strides = [1, 8, 4, 4], [128, 16, 4, 1]
    x, y = gg.tensor(1, shape, strides, cb.CUDNN_DATA_FLOAT), gg.tensor(2, shape, strides, cb.CUDNN_DATA_FLOAT)
    a, b = (gg.tensor(u, shape, strides, cb.CUDNN_DATA_FLOAT, virtual=True) for u in (3, 4))
    relu, tanh, add = cb.CUDNN_POINTWISE_RELU_FWD, cb.CUDNN_POINTWISE_TANH_FWD, cb.CUDNN_POINTWISE_ADD
    two_producers = _refusal_of([gg.pointwise_op(relu, x, y), gg.pointwise_op(tanh, x, y)])
    assert "its output ydesc, t2 (uid 2), is written by Pointwise RELU_FWD already" in two_producers.hint
    cycle = _refusal_of([gg.pointwise_op(add, x, a, b), gg.pointwise_op(relu, a, b), gg.pointwise_op(relu, a, y)])
    assert "cycle" in cycle.hint
    op = gg.pointwise_op(relu, x, y)
    assert "lists one Pointwise RELU_FWD twice (operations 0 and 1)" in _refusal_of([op, op]).hint


def test_an_operation_writing_its_own_input_is_refused_at_its_finalize_in_every_api():
    # cuDNN 9.19 to 9.22 finalize and plan it (the output racing over its input); 9.24 on refuse only the graph
    shape, strides = [1, 16, 16], [256, 16, 1]
    a, b = (gg.tensor(u, shape, strides) for u in (1, 2))
    with pytest.raises(GraphError, match=r"^Pointwise ADD: t2 \(uid 2\) is both its output ydesc and its input bdesc: "
                                         r"an operation cannot write a tensor it reads"):
        gg.pointwise_op(cb.CUDNN_POINTWISE_ADD, a, b, b)
    op = cb.typed.OperationMatmul(adesc=a, bdesc=b, cdesc=a,
                                  desc=cb.typed.Matmul(comp_type="CUDNN_DATA_FLOAT").finalize())
    with pytest.raises(GraphError, match=r"^Matmul: t1 \(uid 1\) is both its output cdesc and its input adesc"):
        op.finalize()
    twice = cb.typed.OperationConcat(input_descs=[a, b], axis=1, output_desc=a)
    with pytest.raises(GraphError, match=r"is both its output output_desc and its input input_descs"):
        twice.finalize()
    many = [gg.tensor(u, [1, 1, 16], [16, 16, 1]) for u in range(3, 70)]  # more tensors than fit on the stack
    last = cb.typed.OperationConcat(input_descs=[*many, a], axis=1, output_desc=a)
    with pytest.raises(GraphError, match=r"is both its output output_desc and its input input_descs"):
        last.finalize()
    out = gg.tensor(99, [1, 67 + 16, 16], [83 * 16, 16, 1])
    assert cb.typed.OperationConcat(input_descs=[*many, a], axis=1, output_desc=out).finalize().finalized


def test_the_explanation_needs_no_import_of_the_graph_layer():
    # a user of the generic API alone: the graph checks load on the refusal
    code = textwrap.dedent('''
        import sys
        import cudnn_backend as cb
        from tests.helpers import generic_graphs as gg

        x, y = (gg.tensor(u, [1, 8, 4, 4], [128, 16, 4, 1], cb.CUDNN_DATA_FLOAT) for u in (1, 2))
        g = cb.Descriptor(cb.CUDNN_BACKEND_OPERATIONGRAPH_DESCRIPTOR)
        g.set(cb.CUDNN_ATTR_OPERATIONGRAPH_OPS, cb.CUDNN_TYPE_BACKEND_DESCRIPTOR,
              [gg.pointwise_op(cb.CUDNN_POINTWISE_RELU_FWD, x, y), gg.pointwise_op(cb.CUDNN_POINTWISE_TANH_FWD, x, y)])
        assert "cudnn_backend.graph" not in sys.modules
        try:
            g.finalize()
        except cb.CudnnError as e:
            print(e.hint)
    ''')
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, cwd=ROOT, timeout=120)
    assert out.returncode == 0, out.stderr
    assert "is written by Pointwise RELU_FWD already" in out.stdout


def test_the_graph_explanation_speaks_only_to_refusals_of_the_graphs_shape():
    from cudnn_backend.graph.checks import explain_graph_refusal

    shape, strides = [1, 8, 4, 4], [128, 16, 4, 1]
    x, y = (gg.tensor(u, shape, strides, cb.CUDNN_DATA_FLOAT) for u in (1, 2))
    g = cb.Descriptor(cb.CUDNN_BACKEND_OPERATIONGRAPH_DESCRIPTOR)
    g.set(cb.CUDNN_ATTR_OPERATIONGRAPH_OPS, cb.CUDNN_TYPE_BACKEND_DESCRIPTOR,
          [gg.pointwise_op(cb.CUDNN_POINTWISE_RELU_FWD, x, y), gg.pointwise_op(cb.CUDNN_POINTWISE_TANH_FWD, x, y)])
    found = explain_graph_refusal(g, "outputGraph.buildDAG()")
    assert "is written by Pointwise RELU_FWD already" in found and "(output=)" not in found
    assert explain_graph_refusal(g, "node->linkEdges(peerNode.get())") == found  # (9.19's words)
    assert explain_graph_refusal(g, "some other check failed") is None


def test_the_graph_checks_come_before_cudnns_finalize_of_the_operation():
    # cuDNN's conv finalize refuses an output whose strides overlap with a bare "hasOverlappingStrides()": the
    # builder's check, which runs first, says what to give instead
    g = Graph()
    x, w = g.tensor([1, 8, 4, 4]), g.tensor([8, 8, 3, 3])
    with pytest.raises(GraphError, match=r"has strides that give two elements one address"):
        g.conv_fwd(x, w, padding=1, output=g.tensor([1, 8, 4, 4], strides=[1, 1, 1, 1]))
    # an operation writing what it reads, its input already read by another: said as such, not as a cycle
    a = g.tensor([1, 8, 4, 4], name="a")
    g.relu(a, name="b")
    with pytest.raises(GraphError, match=r"^Pointwise RELU_FWD: a \(uid \d+\) is both its output ydesc and its input "
                                         r"xdesc"):
        g.relu(a, output=a)
    assert len(g.operations) == 1


def test_a_refused_operation_call_leaves_the_graph_as_it_was():
    g = Graph()
    x = g.tensor([2, 8, 4, 4], name="x")
    w = g.tensor([8, 8, 3, 3], name="w")
    g.relu(x, name="kept")
    wrong = g.tensor([1, 3, 1, 1], data_type="float", name="wrong")  # (made before the call: the user's, kept)
    before = (dict(g.tensors), list(g.operations))
    refusals = [
        # refused by a family's check after its outputs were made (y, epsilon, statistics)
        lambda: g.norm_forward(x, wrong, mode="instance", phase="training"),
        # refused by core as an attribute is set, after the output was made (the compiled hot methods)
        lambda: g.conv_fwd(x, w, padding=1, alpha=float("nan")),
        lambda: g.relu(x, relu_lower_clip=float("nan")),
        lambda: g.bias(x, g.tensors[1], output_data_type="no such type"),
    ]
    for call in refusals:
        with pytest.raises((GraphError, ValueError, TypeError)):
            call()
        assert (dict(g.tensors), list(g.operations)) == before
    # a composite method refused part way: the operations it added before are forgotten too
    g.div = lambda *a, **k: (_ for _ in ()).throw(GraphError("refused here"))
    with pytest.raises(GraphError, match="refused here"):
        g.softmax_composite(x)
    assert (dict(g.tensors), list(g.operations)) == before
    del g.div
    assert g.softmax_composite(x) is not None and len(g.operations) > len(before[1])
    u = g.tensor([2, 8, 4, 4], name="after")  # the UIDs of what was forgotten are free again, none taken twice
    assert len({t.unique_id for t in g.tensors.values()}) == len(g.tensors) and u.name == "after"


def test_a_ragged_offset_tensor_is_one_of_the_graphs_tensors():
    """A ragged tensor's offsets are read: their UID is checked with the graph's other tensors as the graph is made,
    not found two tensors under one UID when a plan is built."""
    from cudnn_backend import typed as T

    g = cb.Graph("ragged")
    x0, y = g.tensor([2, 4, 8, 8], name="x0"), g.tensor([2, 4, 8, 8], name="y")
    clash = T.Tensor(unique_id=y.uid, data_type=cb.CUDNN_DATA_INT32, dimensions=[3, 1, 1, 1], strides=[1, 1, 1, 1],
                     byte_alignment=16).finalize()
    x = g.tensor([2, 4, 8, 8], name="x", ragged_offset_desc=clash)
    with pytest.raises(GraphError, match=r"^ragged_offset_desc: t\d+ \(uid \d+\) \[3, 1, 1, 1\].* has a UID this "
                                         r"graph gives to another tensor, y"):
        g.pointwise("CUDNN_POINTWISE_ADD", x, x0, output=y)
    g2 = cb.Graph("ragged ok")
    offsets = g2.tensor([3, 1, 1, 1], data_type=cb.CUDNN_DATA_INT32, name="offsets")
    x = g2.tensor([2, 4, 8, 8], name="x", ragged_offset_desc=offsets)
    g2.pointwise("CUDNN_POINTWISE_RELU_FWD", x, output=True)
    assert [kw for kw, *_ in g2.slots[0]] == ["xdesc", "ydesc", "ragged_offset_desc"]
    g2.build()
