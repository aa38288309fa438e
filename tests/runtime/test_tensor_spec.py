"""One tensor description (``typed.tensors.TensorSpec``): read from a descriptor or from a plan's JSON it is the same
value; packs, tables, the reference evaluator and messages all read it; a plan's JSON is parsed once."""
import dataclasses

import pytest

from cudnn_backend._bindings.enums import DataType, TensorReordering
from cudnn_backend.graph import Graph
from cudnn_backend.reference._graph import read_graph
from cudnn_backend.runtime import _packing
from cudnn_backend.runtime.execution import TensorSpec as ExportedSpec
from cudnn_backend.runtime.heuristics import get_configs
from cudnn_backend.runtime.plans import build_plan
from cudnn_backend.tune import graphs
from cudnn_backend.typed.introspection import describe_tensor, signature_of
from cudnn_backend.typed.tensors import TensorSpec, data_type_name
from cudnn_backend.core.names import default_tensor_name

from tests.helpers.releases import profile


@pytest.fixture(scope="module")
def built():
    dp = profile("h200").descriptor(fresh=True)
    g = Graph("conv_relu")
    x = g.tensor([2, 16, 8, 8], layout="nhwc", name="x")
    w = g.tensor([16, 16, 3, 3], layout="nhwc", name="w")
    conv = g.conv_fwd(x, w, padding=1, name="conv_out")
    g.pointwise("CUDNN_POINTWISE_RELU_FWD", conv, output=True, name="y")
    og = g.build()
    configs = get_configs(og, "CUDNN_HEUR_MODE_A", dp, raise_if_empty=False)
    return x, og, build_plan(configs[0], device_profile=dp)


@pytest.mark.parametrize(("value", "expected"), [
    (DataType.CUDNN_DATA_HALF, "fp16"), (int(DataType.CUDNN_DATA_BFLOAT16), "bf16"), ("half", "fp16"),
    ("float16", "fp16"), ("CUDNN_DATA_FLOAT", "fp32"), ("float", "fp32"), ("bfloat16", "bf16"), ("double", "fp64"),
    ("CUDNN_DATA_FP8_E4M3", "fp8_e4m3"), ("fp8", "fp8_e4m3"), (DataType.CUDNN_DATA_INT8, "int8"), (None, "?"),
    (10_000, "10000"), ("-", "-"),
])
def test_data_type_name(value, expected):
    """One printed name per data type, whatever name it is given by."""
    assert data_type_name(value) == expected


def test_one_class_everywhere():
    assert ExportedSpec is TensorSpec is _packing.TensorSpec


def test_descriptor_and_plan_json_give_the_same_spec(built):
    _, og, plan = built
    from_graph = _packing.graph_tensor_specs(og)
    from_json = _packing.plan_json_tensor_specs(plan)
    assert set(from_graph) == set(from_json) and len(from_graph) == 4
    for uid, spec in from_graph.items():
        # every field but the name (the JSON knows only the UID: the default name) is the same value, read either way
        assert dataclasses.replace(spec, name=default_tensor_name(uid, spec.virtual)) == from_json[uid]
        assert spec.reordering == TensorReordering.CUDNN_TENSOR_REORDERING_NONE and spec.vectorized_dimension == -1
    # and written back as JSON it is the entry cuDNN wrote, member for member
    entries = {int(t["name"]): t for t in _packing.plan_document(plan)["operationGraph"]["tensors"]}
    for uid, spec in from_graph.items():
        assert spec.to_json() == entries[uid]
        assert TensorSpec.from_json(spec.to_json()) == from_json[uid]


def test_tables_and_messages_read_the_spec(built):
    x, og, plan = built
    rows = {r["uid"]: r for r in graphs.describe_graph(og)}
    json_rows = {r["uid"]: r for r in graphs.graph_summary(_packing.plan_document(plan)["operationGraph"])["tensors"]}
    for uid, spec in _packing.graph_tensor_specs(og).items():
        for key in ("dims", "strides", "data_type"):
            assert rows[uid][key] == json_rows[uid][key] == spec.row()[key]
    roles = {r["name"]: r["role"] for r in rows.values()}
    assert roles == {"x": "input", "w": "input", "conv_out": "virtual", "y": "output"}
    assert TensorSpec.from_descriptor(x).signature == signature_of(x)
    assert describe_tensor(x) == TensorSpec.from_descriptor(x).describe()
    assert describe_tensor(x) == "x (uid 1) [2, 16, 8, 8] strides [1024, 1, 128, 16] fp16"
    assert read_graph(og).tensors[1] == TensorSpec.from_descriptor(x)


def test_one_default_name_for_a_tensor_without_one():
    """A tensor given no name is t<uid> (v<uid> when virtual) wherever it is read: the typed tensor, a generic
    descriptor, its spec read from the descriptor or from a plan's JSON, the reference's graph, tables, messages."""
    import cudnn_backend as cb
    from cudnn_backend.typed.introspection import tensor_name

    g = Graph("unnamed")
    x = g.tensor([2, 16, 8, 8], layout="nhwc")
    w = g.tensor([16, 16, 3, 3], layout="nhwc")
    conv = g.conv_fwd(x, w, padding=1)
    y = g.pointwise("CUDNN_POINTWISE_RELU_FWD", conv, output=True)
    og = g.build()
    generic = cb.Descriptor(cb.CUDNN_BACKEND_TENSOR_DESCRIPTOR)
    generic.set(cb.CUDNN_ATTR_TENSOR_UNIQUE_ID, cb.CUDNN_TYPE_INT64, 7)
    dp = profile("h200").descriptor(fresh=True)
    plan = build_plan(get_configs(og, "CUDNN_HEUR_MODE_A", dp, raise_if_empty=False)[0], device_profile=dp)
    from_json = _packing.plan_json_tensor_specs(plan)
    graph = read_graph(og)
    for t, expected in ((x, "t1"), (w, "t2"), (conv, "v3"), (y, "t4")):
        uid = t.uid
        assert t.name == tensor_name(t) == TensorSpec.from_descriptor(t).name == from_json[uid].name == \
            graph.tensors[uid].name == default_tensor_name(uid, t.virtual) == expected
        assert t.describe().startswith(f"{expected} (uid {uid})")
    assert tensor_name(generic) == "t7" and default_tensor_name(None) == "tensor"


def test_a_plans_json_is_parsed_once(built, monkeypatch):
    _, og, _ = built
    configs = get_configs(og, "CUDNN_HEUR_MODE_A", profile("h200").descriptor(fresh=True), raise_if_empty=False)
    plan = build_plan(configs[0], device_profile=profile("h200").descriptor(fresh=True))
    calls = []
    real = _packing.check_plan_json
    monkeypatch.setattr(_packing, "check_plan_json", lambda text, *a, **k: calls.append(1) or real(text, *a, **k))
    specs = _packing.plan_json_tensor_specs(plan)
    assert _packing.plan_override_enabled(plan.descriptor) is False
    subject = graphs.resolve(plan)
    assert plan.json_info["engine"] == plan.engine_index and plan.json_info["cudnn_version"]
    assert subject.json_graph["tensors"][0]["name"] == str(min(specs))
    assert len(calls) == 1
