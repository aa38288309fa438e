"""One place per operation family (``core.families``): each family's module declares its operations, shape rules,
finalize checks and JSON node schema; the op checks, the JSON checks and the ``Graph`` methods read from it."""
import pytest
from hypothesis import assume, given, settings
from hypothesis import strategies as st

import cudnn_backend as cb
from cudnn_backend._bindings.enums import AttributeName, DescriptorType, NormMode
from cudnn_backend.core import _json_tables, families, json_checks, op_checks
from cudnn_backend.core.families import FAMILIES, Family, FamilyError, _reference, register
from cudnn_backend.core.families import norm as norm_family
from cudnn_backend.core.families import pointwise as pointwise_family
from cudnn_backend.errors import GraphError
from cudnn_backend.graph import Graph, shapes

from tests.helpers import generic_graphs as gg


@pytest.mark.skipif("CUDNN_ADA_LAYER_NORM" not in NormMode.__members__, reason="no adaptive layer norm in this release")
def test_ada_layer_norm_statistics_per_batch_pass_the_finalize_check():
    """Graph.ada_layer_norm writes statistics [B, S, 1] (one per sample and position); the finalize check used to
    want [1, S, 1] and refused every batch larger than 1."""
    g = Graph("ada")
    x = g.tensor([2, 64, 128], name="x")
    scale = g.tensor([2, 1, 128], data_type="float", name="scale")
    bias = g.tensor([2, 1, 128], data_type="float", name="bias")
    out = g.ada_layer_norm(x, scale, bias)
    assert out["mean"].shape == (2, 64, 1) and out["inv_variance"].shape == (2, 64, 1)


# --------------------------------------------------------------------------------------------------------------
# the registry: every operation is owned by exactly one family, checked at import
# --------------------------------------------------------------------------------------------------------------
# what every Graph has besides the methods that build one family's operations
GRAPH_GENERAL = {"allow_unconsumed", "build", "built", "check", "compute_data_type", "from_array", "graph_tensors",
                 "intermediate_data_type", "io_data_type", "name", "op_graph", "operations", "scalar", "slots", "table",
                 "tensor", "tensors", "to_dot", "uids_used"}


def test_the_real_families_cover_every_operation_once():
    owned = [op for f in FAMILIES for op in f.operations]
    assert len(owned) == len(set(owned))
    enum_ops = {m.name for m in DescriptorType if m.name.startswith("CUDNN_BACKEND_OPERATION_")}
    assert enum_ops | set(_json_tables.NODES) <= set(families.FAMILY_OF)


def test_a_missing_family_fails_at_import_not_when_a_plan_is_loaded():
    without_signal = [f for f in FAMILIES if f.name != "signal"]
    with pytest.raises(FamilyError, match="CUDNN_BACKEND_OPERATION_SIGNAL_DESCRIPTOR .*belongs to no family"):
        register(without_signal)
    # an operation only a (newer) release's JSON tables name: refused too, before any plan is read
    tables = dict(_json_tables.NODES, CUDNN_BACKEND_OPERATION_NEW_THING_DESCRIPTOR={})
    with pytest.raises(FamilyError, match="NEW_THING_DESCRIPTOR \\(a JSON node table\\) belongs to no family"):
        register(FAMILIES, node_tables=tables)
    # and a new family module declaring it is all it takes
    checks, owner, _ = register([*FAMILIES, Family("new", ("NEW_THING",))], node_tables=tables)
    assert owner["CUDNN_BACKEND_OPERATION_NEW_THING_DESCRIPTOR"] == "new" and checks == families.FINALIZE_CHECKS


def test_duplicates_and_foreign_checks_are_refused():
    with pytest.raises(FamilyError, match="owned by the families pointwise and copy"):
        register([*FAMILIES, Family("copy", ("POINTWISE",))])
    with pytest.raises(FamilyError, match="family odd has a check or finalize mode for MATMUL"):
        register([*FAMILIES, Family("odd", ("NEW_THING",), finalize_checks={"MATMUL": print})],
                 node_tables=dict(_json_tables.NODES))



def test_reference_ops_and_graph_methods_belong_to_one_family():
    with pytest.raises(FamilyError, match="family odd has a reference op for MATMUL, which it does not own"):
        register([*FAMILIES, Family("odd", ("NEW_THING",), reference_ops={"MATMUL": object})],
                 node_tables=dict(_json_tables.NODES))
    with pytest.raises(FamilyError, match="Graph.matmul is declared by the families matmul and twin"):
        register([*FAMILIES, Family("twin", ("NEW_THING",), graph_methods=("matmul",))],
                 node_tables=dict(_json_tables.NODES))
    declared = {}
    for f in FAMILIES:
        for t in f.descriptor_types():
            short = t.name[len("CUDNN_BACKEND_OPERATION_"):-len("_DESCRIPTOR")]
            if short in f.reference_ops:
                declared[int(t)] = f.reference_ops[short]
    assert families.REFERENCE_OPS == declared  # what the evaluator reads: the families' declarations, nothing else
    assert Graph.__bases__[1:] == families.GRAPH_MIXINS == tuple(f.graph_mixin for f in FAMILIES)

def test_graph_methods_are_declared_by_their_family():
    declared = [m for f in FAMILIES for m in f.graph_methods]
    assert len(declared) == len(set(declared))
    public = {n for n in dir(Graph) if not n.startswith("_")}
    assert set(declared) <= public
    assert public - GRAPH_GENERAL == set(declared), "a Graph method that builds operations belongs to a family"


def test_op_checks_and_json_checks_read_the_families():
    assert op_checks.FINALIZE_CHECKS is families.FINALIZE_CHECKS
    assert json_checks.FINALIZE_MODE_NEEDS is families.FINALIZE_MODE_NEEDS
    assert json_checks.NODE_TABLES == _json_tables.NODES  # the generated data, reached through each family
    for op, schema in json_checks.NODE_TABLES.items():
        assert families.family_of(op).node_schema(op[len("CUDNN_BACKEND_OPERATION_"):-len("_DESCRIPTOR")]) is schema
    assert families.family_of("NORM_FORWARD").name == "norm"
    assert DescriptorType.CUDNN_BACKEND_OPERATION_NORM_FORWARD_DESCRIPTOR in families.family_of("NORM_FORWARD") \
        .descriptor_types()
    assert AttributeName.CUDNN_ATTR_OPERATION_NORM_FWD_XDESC in families.family_of("NORM_FORWARD").attributes(
        "NORM_FORWARD")
    with pytest.raises(ValueError, match="no operation of any family"):
        families.family_of("NOPE")


def test_one_broadcast_rule():
    assert shapes.broadcast_dims is pointwise_family.broadcast_dims
    assert shapes.broadcast_dims([2, 1, 4], [1, 3, 4]) == [2, 3, 4]
    assert pointwise_family.broadcasts_to([1, 3, 1], [2, 3, 4]) and not pointwise_family.broadcasts_to([2, 3], [2, 1])
    with pytest.raises(_reference.Unsupported, match="does not broadcast"):
        pointwise_family.check_broadcast([3, 2], [3, 1], "b")


@pytest.mark.parametrize(("mode", "x", "scale", "stats"), [
    ("layer", [4096, 128, 1, 1], [1, 128, 1, 1], [4096, 1, 1, 1]),
    ("rms", [8, 16, 32], [1, 1, 32], [8, 16, 1]),
    ("batch", [8, 64, 16, 16], [1, 64, 1, 1], [1, 64, 1, 1]),
    ("instance", [8, 64, 16, 16], [1, 64, 1, 1], [8, 64, 1, 1]),
])
def test_one_norm_statistics_rule(mode, x, scale, stats):
    assert shapes.norm_stats_dims(mode, x, scale) == stats
    assert list(norm_family.stats_dims(norm_family._NORM_MODES[mode], x, scale)) == stats


def test_every_family_operation_is_known_to_the_reference_evaluator():
    """A new family's operations need a reference Op (one that evaluates them or says why it cannot)."""
    missing = [t.name for f in FAMILIES for t in f.descriptor_types() if int(t) not in families.REFERENCE_OPS]
    assert not missing


@settings(max_examples=150, deadline=None)
@given(st.integers(1, 4).flatmap(lambda rank: st.tuples(st.lists(st.sampled_from([1, 2, 3]), min_size=rank,
                                                                  max_size=rank),
                                                         st.lists(st.sampled_from([1, 2, 3]), min_size=1, max_size=4))))
def test_the_graph_builder_broadcasts_by_the_one_rule(dims):
    """``Graph.pointwise``'s output shape (a C fast path in graph/_core.pyx) is ``broadcast_dims``, refusals alike."""
    x_dims, b_dims = dims
    try:
        expected = pointwise_family.broadcast_dims(x_dims, b_dims)
    except GraphError:
        expected = None
    g = Graph("broadcast")
    try:
        x, b = g.tensor(x_dims, name="x"), g.tensor(b_dims, name="b")
    except cb.CudnnError:  # (cuDNN 9.10 refuses a tensor of rank 1: nothing of the builder's rule to see)
        assume(False)
    try:
        y = g.pointwise("CUDNN_POINTWISE_ADD", x, b, output=True)
    except GraphError:
        assert expected is None
    else:
        assert list(y.shape) == expected


def _pooling_op(forward, x_dims, y_dims):
    A, T = cb.AttributeName, cb.AttributeType
    x = gg.tensor(1, x_dims, gg.nhwc_strides(*x_dims))
    y = gg.tensor(2, y_dims, gg.nhwc_strides(*y_dims))
    r = cb.Descriptor(cb.CUDNN_BACKEND_RESAMPLE_DESCRIPTOR)
    r.set(A.CUDNN_ATTR_RESAMPLE_MODE, T.CUDNN_TYPE_RESAMPLE_MODE, cb.CUDNN_RESAMPLE_AVGPOOL_INCLUDE_PADDING)
    r.set(A.CUDNN_ATTR_RESAMPLE_COMP_TYPE, T.CUDNN_TYPE_DATA_TYPE, cb.CUDNN_DATA_FLOAT)
    r.set(A.CUDNN_ATTR_RESAMPLE_NAN_PROPAGATION, T.CUDNN_TYPE_NAN_PROPOGATION, cb.CUDNN_PROPAGATE_NAN)
    r.set(A.CUDNN_ATTR_RESAMPLE_PADDING_MODE, T.CUDNN_TYPE_PADDING_MODE, cb.CUDNN_ZERO_PAD)
    r.set(A.CUDNN_ATTR_RESAMPLE_SPATIAL_DIMS, T.CUDNN_TYPE_INT64, 2)
    for attr in (A.CUDNN_ATTR_RESAMPLE_WINDOW_DIMS, A.CUDNN_ATTR_RESAMPLE_STRIDES):
        r.set(attr, T.CUDNN_TYPE_INT64, [2, 2])
    for attr in (A.CUDNN_ATTR_RESAMPLE_PRE_PADDINGS, A.CUDNN_ATTR_RESAMPLE_POST_PADDINGS):
        r.set(attr, T.CUDNN_TYPE_INT64, [0, 0])
    r.finalize()
    kind = "FWD" if forward else "BWD"
    op = cb.Descriptor(getattr(cb, f"CUDNN_BACKEND_OPERATION_RESAMPLE_{kind}_DESCRIPTOR"))
    op.set(getattr(A, f"CUDNN_ATTR_OPERATION_RESAMPLE_{kind}_DESC"), T.CUDNN_TYPE_BACKEND_DESCRIPTOR, r)
    for slot, t in ((("XDESC", x), ("YDESC", y)) if forward else (("DXDESC", x), ("DYDESC", y))):
        op.set(getattr(A, f"CUDNN_ATTR_OPERATION_RESAMPLE_{kind}_{slot}"), T.CUDNN_TYPE_BACKEND_DESCRIPTOR, t)
    return op


@pytest.mark.parametrize("forward", [True, False], ids=["forward", "backward"])
def test_a_pooling_whose_output_does_not_fit_its_window_is_explained(forward):
    # cuDNN says only "finalize_internal()"; the hint gives the dims the window makes
    _pooling_op(forward, [1, 8, 8, 8], [1, 8, 4, 4]).finalize()
    with pytest.raises(cb.CudnnError) as refused:
        _pooling_op(forward, [1, 8, 8, 8], [1, 8, 3, 3]).finalize()
    y, x = ("ydesc", "xdesc") if forward else ("dydesc", "dxdesc")
    assert refused.value.hint == (f"{y} has dims [1, 8, 3, 3], but {x} [1, 8, 8, 8] pooled with window [2, 2], "
                                  "stride [2, 2] and paddings [0, 0] / [0, 0] gives [1, 8, 4, 4] (as cudnn-frontend "
                                  "infers it)")
