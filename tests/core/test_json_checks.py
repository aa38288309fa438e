"""cudnn_backend.core.json_checks: the checks of plan, kernel cache and device profile JSON before cuDNN.

Every JSON that killed cuDNN 9.19 (SIGABRT, SIGSEGV, SIGFPE, bad_alloc, double free at exit, stack
overflow; most still kill 9.28.1, see tools/json_observations) is refused with a ValueError naming the field;
real JSON written by the loaded cuDNN passes (the whole corpus of tests/helpers/json_corpus.py), and the text
the checker returns loads into cuDNN with the same engine, knobs and workspace; hostile input (binary,
pickles, lone surrogates, deep nesting) gives ValueError and nothing else. Each release is checked with its
own table; a release without one falls back, warns once and lets unknown members through. The crash-proofing
itself is fuzzed by tests/runtime/test_json_fuzz.py.
"""
import base64
import copy
import json
import math
import pathlib
import pickle
import struct
import sys
import textwrap

import pytest

from cudnn_backend import is_available, patterns
from cudnn_backend.core import json_checks as J
from cudnn_backend.graph import Graph
from cudnn_backend.runtime.heuristics import get_configs
from cudnn_backend.errors import PlanVersionError
from cudnn_backend.runtime.plans import build_plan, kernel_cache_json, make_kernel_cache, plan_from_json, plan_json_info
from cudnn_backend.typed import DeviceProp, OperationGraph

from tests.helpers import generic_graphs as gg
from tests.helpers import json_corpus
from tests.helpers import json_fuzz_worker as W
from tests.helpers.crash import run_python
from tests.helpers.env import H200_PROFILE_JSON, LOADED, VERIFIED, version_text
from tests.helpers.offline import offline_plan
from tests.helpers.releases import profile

MODULE = pathlib.Path(J.__file__)


@pytest.fixture(scope="module")
def h200():
    """The H200 profile for the loaded release (tests.helpers.releases)."""
    return profile("h200")


@pytest.fixture(scope="module")
def profile_json(h200):
    """The device profile JSON the loaded release takes."""
    return h200.deviceprop_json


# -- real documents ----------------------------------------------------------------------------------------
def _summary(plan):
    return plan.engine_index, dict(plan.knobs), plan.workspace_size


@pytest.fixture(scope="module")
def real_plans(h200):
    """{name: (text, (engine, knobs, workspace))} of plans built offline: precompiled and runtime-compiled
    engines (the latter carry their cubin)."""
    out = {}
    out["conv_generic"] = offline_plan(gg.notebook_conv_graph(), profile=h200).to_json()
    for name, make in (("conv_dgrad", patterns.conv_bwd_data), ("conv_wgrad", patterns.conv_bwd_filter),
                       ("conv_bias_relu", patterns.conv_bias_relu), ("matmul_bias_gelu", patterns.matmul_bias_gelu),
                       ("layer_norm_fwd", patterns.layer_norm_fwd), ("pooling", patterns.pooling),
                       ("sdpa_composite_fwd", patterns.sdpa_composite_fwd)):
        graph = make().build()
        out[name] = build_plan(get_configs(graph, "A", h200)[0], device_profile=h200).to_json()
    return {name: (text, _summary(plan_from_json(text, device_profile=h200))) for name, text in out.items()}


def dynamic_matmul_graph(m=64):
    g = Graph()
    a, b = g.tensor([1, m, 128]), g.tensor([1, 128, 64])
    g.pointwise("CUDNN_POINTWISE_RELU_FWD", g.matmul(a, b), output=True)
    graph = OperationGraph(ops=list(g.operations), is_dynamic_shape_enabled=True)
    graph.finalize()
    return graph


@pytest.fixture(scope="module")
def real_cache(h200):
    graph = dynamic_matmul_graph()
    cache = make_kernel_cache(graph)
    build_plan(get_configs(graph, "A", h200)[0], device_profile=h200, kernel_cache=cache)
    return kernel_cache_json(cache)


def graph_json(ops):
    """Any finalized graph, serialized by cuDNN (through an empty kernel cache): every operation type."""
    graph = OperationGraph(ops=list(ops))
    graph.finalize()  # the typed OperationGraph: no Graph checks
    return kernel_cache_json(make_kernel_cache(graph))


@pytest.mark.parametrize("canonical", [False, True])
def test_real_plans_pass_and_load_alike(real_plans, h200, canonical):
    for name, (text, summary) in real_plans.items():
        checked = J.check_plan_json(text, canonical=canonical)
        assert json.loads(checked) == json.loads(text), name
        if not canonical:
            assert checked == text  # cuDNN's own compact ASCII text goes through unchanged
        assert _summary(plan_from_json(checked, device_profile=h200)) == summary, name


def test_runtime_compiled_plans_carry_cubins(real_plans):
    text = real_plans["matmul_bias_gelu"][0]
    assert '"cubin":"f0VMR' in text and len(text) > 30_000
    assert J.check_plan_json(text.encode()) == text  # bytes in, the same text out


def test_real_kernel_cache_passes_and_restores(real_cache, h200):
    assert json.loads(real_cache)["kernel_cache"]
    for canonical in (False, True):
        checked = J.check_kernel_cache_json(real_cache, canonical=canonical)
        assert json.loads(checked) == json.loads(real_cache)
        restored = make_kernel_cache(dynamic_matmul_graph(128), checked)
        graph = dynamic_matmul_graph(128)
        build_plan(get_configs(graph, "A", h200)[0], device_profile=h200, kernel_cache=restored)


def test_real_device_profile_passes(profile_json):
    for canonical in (False, True):
        checked = J.check_deviceprop_json(profile_json, canonical=canonical)
        dp = DeviceProp(json_representation=checked)
        dp.finalize()
        assert json.loads(dp.get_keyword("json_representation")) == json.loads(profile_json)


def test_what_the_loaded_release_writes_its_table_accepts(h200):
    """The whole corpus the tables are derived from (the pattern catalogue, the tests' graphs, one graph per
    operation the catalogue lacks), serialized by the loaded cuDNN: every graph, and a plan of each pattern that
    gets one, passes the loaded release's table."""
    graphs = plans = 0
    for source, make in json_corpus.graphs().items():
        try:
            graph = OperationGraph(ops=list(make()))
            graph.finalize()  # the typed OperationGraph: no Graph checks
        except Exception:  # noqa: BLE001 - an operation this release lacks, a graph it refuses
            continue
        text = kernel_cache_json(make_kernel_cache(graph))
        assert J.check_kernel_cache_json(text) == text, source
        graphs += 1
        if source.startswith("pattern"):
            configs = get_configs(graph, "A", h200, raise_if_empty=False)
            for config in configs[:1]:
                try:
                    plan = build_plan(config, device_profile=h200)
                except Exception:  # noqa: BLE001 - a config refused offline
                    continue
                assert J.check_plan_json(plan.to_json()) == plan.to_json(), source
                plans += 1
    assert graphs >= 60 and plans >= 10, (graphs, plans)


def test_infinite_clip_passes_and_loads():
    """cuDNN writes a ReLU's +inf upper clip as the literal Infinity: accepted there (and loaded)."""
    g = Graph("relu", io_data_type="CUDNN_DATA_FLOAT")
    g.pointwise("CUDNN_POINTWISE_RELU_FWD", g.tensor([2, 8, 4, 4]), output=True, relu_upper_clip=math.inf)
    text = graph_json(g.operations)
    assert '"upperClip":Infinity' in text
    for canonical in (False, True):
        checked = J.check_kernel_cache_json(text, canonical=canonical)
        assert "Infinity" in checked
        make_kernel_cache(dynamic_matmul_graph(), checked)
    # a blend factor too: cuDNN writes an infinite one so, and reads it back
    infinite_alpha = J.check_kernel_cache_json(text.replace('"alpha1":1.0', '"alpha1":-Infinity'))
    make_kernel_cache(dynamic_matmul_graph(), infinite_alpha)
    with pytest.raises(ValueError, match=r"nodes\[0\]\.alpha1: expected a number, got NaN"):
        J.check_kernel_cache_json(text.replace('"alpha1":1.0', '"alpha1":NaN'))
    with pytest.raises(ValueError, match=r"nodes\[0\]\.alpha1: expected a number that fits in a double"):
        J.check_kernel_cache_json(text.replace('"alpha1":1.0', '"alpha1":1e400'))


# -- the known killers ------------------------------------------------------------------------------------
def _mutated(text, change):
    doc = json.loads(text)
    change(doc)
    return json.dumps(doc, separators=(",", ":"))


def _set(*path_and_value):
    *path, value = path_and_value

    def change(doc):
        o = doc
        for k in path[:-1]:
            o = o[k]
        o[path[-1]] = value
    return change


def refused(check, text, field):
    with pytest.raises(ValueError) as info:
        check(text)
    assert type(info.value) is J.JsonCheckError
    assert field in str(info.value), str(info.value)
    return str(info.value)


@pytest.mark.parametrize("value", ["CUDNN_1", "abc", "", " 1x", "1\x00", "1" + "0" * 30, "-", "1.5", 1, None])
def test_tensor_names_and_references_must_be_int64_strings(real_plans, value):
    text = real_plans["conv_generic"][0]
    refused(J.check_plan_json, _mutated(text, _set("operationGraph", "tensors", 0, "name", value)),
            "plan JSON: operationGraph.tensors[0].name: expected a tensor name")
    refused(J.check_plan_json, _mutated(text, _set("operationGraph", "nodes", 0, "X", value)),
            "plan JSON: operationGraph.nodes[0].X: ")


def test_references_must_name_a_tensor_of_the_graph(real_plans):
    text = real_plans["conv_generic"][0]
    refused(J.check_plan_json, _mutated(text, _set("operationGraph", "nodes", 0, "X", "99")),
            "operationGraph.nodes[0].X: no tensor named 99")


@pytest.mark.parametrize("value", [0, {}, [2], "2", None, 2.5, -1, 2 ** 64, True])
def test_matmul_operand_dims_must_be_positive_int64(real_plans, value):
    text = real_plans["matmul_bias_gelu"][0]  # engine 7: SIGFPE in cuDNN 9.19 on these
    assert json.loads(text)["engine"]["engineId"] == 7 or LOADED != VERIFIED
    refused(J.check_plan_json, _mutated(text, _set("operationGraph", "tensors", 1, "dim", 0, value)),
            "plan JSON: operationGraph.tensors[1].dim[0]: expected an integer in [1, 9223372036854775807]")


def test_the_example_message_from_the_spec(real_plans):
    text = _mutated(real_plans["matmul_bias_gelu"][0], _set("operationGraph", "tensors", 1, "dim", 0, 0))
    assert refused(J.check_plan_json, text, "") == \
        "plan JSON: operationGraph.tensors[1].dim[0]: expected an integer in [1, 9223372036854775807], got 0"


@pytest.mark.parametrize("key_type", [3, 4, -1, 2 ** 31 - 1, 2 ** 31, 1.0, True, "1"])
def test_kernel_cache_key_types_outside_cudnn_enum(real_cache, key_type):
    def change(doc):
        doc["kernel_cache"][0]["key"]["type"] = key_type
    refused(J.check_kernel_cache_json, _mutated(real_cache, change),
            "kernel cache JSON: kernel_cache[0].key.type: expected an integer in [0, 2]")


@pytest.mark.parametrize("key_type", [0, 1, 2])
def test_kernel_cache_key_types_cudnn_knows(real_cache, key_type):
    """Types 0 and 1 everywhere; a tensor-IR key (type 2) only where the release does not crash on one (cuDNN 9.10.2
    does, SIGSEGV: the JSON fuzz found it, the crash probes of tools/derive_json_tables.py say where)."""
    def change(doc):
        doc["kernel_cache"][0]["key"]["type"] = key_type
        if key_type == 2:  # a tensor-IR key: identified by a 64-bit hash (cuDNN: IsUint64)
            doc["kernel_cache"][0]["key"]["shader_hash_key"] = 2 ** 64 - 1
    text = _mutated(real_cache, change)
    if key_type == 2 and J._in(J.table_release(), J._tables_data.GUARDS["no tensor-IR kernel cache key"]):
        bare = _mutated(real_cache, lambda doc: doc["kernel_cache"][0]["key"].update(type=2))
        for t in (text, bare):  # (9.10.2 writes and reads no shader_hash_key: refused as unknown first)
            refused(J.check_kernel_cache_json, t, "kernel_cache[0].key.")
        refused(J.check_kernel_cache_json, bare, "kernel_cache[0].key.type: a tensor-IR kernel cache key (type 2): "
                f"cuDNN {version_text()} crashes on one")
    else:
        make_kernel_cache(dynamic_matmul_graph(), J.check_kernel_cache_json(text))


def test_tensor_ir_cache_keys_are_refused_where_the_release_crashes_on_them():
    guarded = J._tables_data.GUARDS["no tensor-IR kernel cache key"]
    crashed = [J._tables_data.CRASHES[p] for p in ("kernel cache key type 2",
                                                    "kernel cache key type 2 with a shader hash key")]
    assert J._in(91002, guarded) and all(J._in(91002, c) for c in crashed)
    for release in J.TABLE_RELEASES:
        assert J._in(release, guarded) == any(J._in(release, c) for c in crashed), release


def test_nested_kernel_cache_graphs_are_checked_like_top_level_ones(real_cache):
    def change(doc):
        doc["kernel_cache"][0]["key"]["operationGraph"]["nodes"][0]["matA"] = "CUDNN_1"
    refused(J.check_kernel_cache_json, _mutated(real_cache, change),
            "kernel_cache[0].key.operationGraph.nodes[0].matA: expected a tensor name")


@pytest.mark.parametrize("depth", [33, 1000, 20_000, 200_000])
def test_deep_nesting(real_plans, real_cache, profile_json, depth):
    deep = "[" * depth + "]" * depth
    for check, text in ((J.check_plan_json, real_plans["conv_generic"][0]), (J.check_kernel_cache_json, real_cache),
                        (J.check_deviceprop_json, profile_json)):
        refused(check, text[:-1] + ',"zz":' + deep + "}", "nested deeper than 32 levels")
        refused(check, deep, "nested deeper than 32 levels")


def test_depth_of_real_documents_is_far_below_the_limit(real_plans, real_cache):
    for text in [t for t, _ in real_plans.values()] + [real_cache]:
        depth, _ = J._structure("x", J._cut_blobs(text)[0])
        assert depth <= 9 < J.MAX_DEPTH


@pytest.mark.parametrize("name, size", [("x" * 300, 300), ("x" * 256, 256), ("\u00e9" * 128, 256)])
def test_device_names_of_256_bytes_or_more(real_plans, profile_json, name, size):
    refused(J.check_deviceprop_json, _mutated(profile_json, _set("deviceName", name)),
            f"device profile JSON: deviceName: expected at most 255 bytes of UTF-8, got {size}")
    refused(J.check_plan_json, _mutated(real_plans["conv_generic"][0], _set("GPUProfile", "deviceName", name)),
            "plan JSON: GPUProfile.deviceName: expected at most 255 bytes")


@pytest.mark.parametrize("member, value, problem", [
    ("deviceVer", 1234, "1234 is no SM version cuDNN 9 runs on"), ("deviceVer", 0, "0 is no SM"),
    ("warpSize", 64, "64; every CUDA GPU's is 32")])
def test_a_deviceprop_no_gpu_has_is_refused_in_a_profile_and_in_a_plan(real_plans, profile_json, member, value,
                                                                       problem):
    refused(J.check_deviceprop_json, _mutated(profile_json, _set(member, value)), f"{member}: {problem}")
    refused(J.check_plan_json, _mutated(real_plans["conv_generic"][0], _set("GPUProfile", member, value)),
            f"plan JSON: GPUProfile.{member}: {problem}")


def test_an_engine_targets_one_sm_or_more(real_plans):
    text = real_plans["conv_generic"][0]
    refused(J.check_plan_json, _mutated(text, _set("engine", "targetSMcount", 0)), "engine.targetSMcount: expected")
    if "targetSMcount" in J.KINDS["engine"] and J._in(J.table_release(), J.KINDS["engine"]["targetSMcount"][1]):
        J.check_plan_json(_mutated(text, _set("engine", "targetSMcount", 1)))


def test_device_name_of_255_bytes_loads(profile_json):
    text = J.check_deviceprop_json(_mutated(profile_json, _set("deviceName", "\u00e9" * 127 + "x")))
    DeviceProp(json_representation=text).finalize()


@pytest.mark.parametrize("member", ["tensors", "nodes"])
@pytest.mark.parametrize("value", ["abc", 5, 1e308, {}, None, []])
def test_tensors_and_nodes_must_be_arrays(real_plans, member, value):
    refused(J.check_plan_json, _mutated(real_plans["conv_generic"][0], _set("operationGraph", member, value)),
            f"operationGraph.{member}: expected an array")


def test_python_side_errors_become_value_errors(real_plans):
    text = real_plans["conv_generic"][0]
    refused(J.check_plan_json, '{"engine":{},"GPUProfile":[1]}', "plan JSON: ")
    refused(J.check_plan_json, _mutated(text, _set("engine", "knobChoices", 5)), "engine.knobChoices: expected an object")
    compact = text
    version = f'"cudnnVersion":{LOADED}'
    refused(J.check_plan_json, compact.replace(version, '"cudnnVersion":1e400'), "cudnnVersion: expected an integer")
    refused(J.check_plan_json, compact.replace(version, '"cudnnVersion":Infinity'),
            "cudnnVersion: expected an integer in [0, 2147483647], got Infinity")
    refused(J.check_plan_json, compact.replace('"alpha":1.0', '"alpha":NaN'), "nodes[0].alpha: expected a number, got NaN")
    refused(J.check_plan_json, compact.replace('"alpha":1.0', '"alpha":1e400'), "fits in a double")
    refused(J.check_plan_json, compact.replace('"alpha":1.0', '"alpha":1'), "nodes[0].alpha: expected a JSON float")


def test_duplicate_keys(real_plans):
    text = real_plans["conv_generic"][0]
    # cuDNN reads the first "name" (SIGABRT on "x"), Python the last
    refused(J.check_plan_json, text.replace('"name":"1",', '"name":"x","name":"1",', 1),
            'operationGraph.tensors[0]: duplicate key "name"')
    refused(J.check_plan_json, text.replace('"engineId":', '"engineId":1,"engineId":', 1), 'engine: duplicate key')


def test_nodes_in_topological_order(real_plans):
    def reverse(doc):
        doc["operationGraph"]["nodes"].reverse()
    refused(J.check_plan_json, _mutated(real_plans["matmul_bias_gelu"][0], reverse),
            "is read here but written by a later node")


@pytest.mark.parametrize("node,mode,problem", [
    (1, "CUDNN_POINTWISE_RELU_FWD", "RELU_FWD takes no b (its operands: x)"),  # conv -> ADD -> RELU: the ADD
    (1, "CUDNN_POINTWISE_BINARY_SELECT", "BINARY_SELECT needs t"),
    (2, "CUDNN_POINTWISE_ADD", "ADD needs b"),
    (2, "CUDNN_POINTWISE_RELU_BWD", "RELU_BWD needs dy"),
])
def test_a_pointwise_node_has_the_operands_its_mode_reads(real_plans, node, mode, problem):
    # cuDNN's own refusal names a JSON member it could not find, or an assertion on a port
    text = _mutated(real_plans["conv_bias_relu"][0], _set("operationGraph", "nodes", node, "pointwiseMode", mode))
    refused(J.check_plan_json, text, f"operationGraph.nodes[{node}]: CUDNN_BACKEND_OPERATION_POINTWISE_DESCRIPTOR: "
                                     f"{problem}")


def test_finalize_modes_that_need_an_operation(real_plans):
    for mode in ("CONV_FORWARD", "CONV_BWD_DATA", "CONV_BWD_FILTER", "NORM_BWD"):
        refused(J.check_plan_json, _mutated(real_plans["matmul_bias_gelu"][0], _set("operationGraph", "finalizeMode", mode)),
                f"operationGraph.finalizeMode: finalizeMode {mode} needs a")


_SDPA_FWD = "CUDNN_BACKEND_OPERATION_SDPA_FWD_DESCRIPTOR"
_SUB = "operationGraph.nodes[0].subgraph"


def _sub_tensor(name, dims, virtual):
    return {"name": name, "dataType": "CUDNN_DATA_FLOAT", "dim": dims, "stride": [65536, 16384, 128, 1][-len(dims):]
            if len(dims) == 4 and dims[-1] == 128 else [1] * len(dims), "isVirtual": virtual, "isByValue": False,
            "vectCount": 1, "vectDim": -1, "ptrAlignment": 16, "reordering": "CUDNN_TENSOR_REORDERING_NONE"}


@pytest.fixture(scope="module")
def sdpa_subgraph_plan(h200):
    """A plan of one SDPA_FWD node (built by the loaded release) given a score-modifier subgraph (S + B, written as
    cuDNN 9.22+ writes one) in mode GENERIC_POINTWISE_FUSION: a dict, to mutate."""
    if not is_available("CUDNN_BACKEND_OPERATION_SDPA_FWD_DESCRIPTOR"):
        pytest.skip("the unified SDPA forward came with cuDNN 9.13")
    g = Graph("sdpa")
    q, k, v = (g.tensor([2, 4, 128, 64]) for _ in range(3))
    g.sdpa_fwd(q, k, v)
    doc = json.loads(build_plan(get_configs(g.build(), "A", h200)[0], device_profile=h200).to_json())
    node = doc["operationGraph"]["nodes"][0]
    assert node["operation"] == _SDPA_FWD
    node.update(subgraphInputUid=100, subgraphOutputUid=101, subgraph={
        "finalizeMode": "GENERIC_POINTWISE_FUSION",
        "tensors": [_sub_tensor("100", [2, 4, 128, 128], True), _sub_tensor("101", [2, 4, 128, 128], True),
                    _sub_tensor("102", [1, 1, 1, 1], False)],
        "nodes": [{"operation": "CUDNN_BACKEND_OPERATION_POINTWISE_DESCRIPTOR", "pointwiseMode": "CUDNN_POINTWISE_ADD",
                   "mathPrec": "CUDNN_DATA_FLOAT", "alpha1": 1.0, "alpha2": 1.0, "X": "100", "Y": "101", "B": "102"}]})
    return doc


def _as_9281(doc, change=None):
    """The plan, its graph as a kernel cache's and as a cache key's, all said written by cuDNN 9.28.1 (whose table
    has the SDPA subgraph, whichever release is loaded), after ``change`` (on the subgraph): {kind: text}."""
    doc = copy.deepcopy(doc)
    doc["cudnnVersion"] = 92801
    clean = copy.deepcopy(doc["operationGraph"])
    if change is not None:
        change(doc["operationGraph"]["nodes"][0]["subgraph"])
    og = doc["operationGraph"]
    key = {"type": 0, "engineId": 0, "knobChoices": {}, "operationGraph": og}
    return {"plan": json.dumps(doc), "cache": json.dumps({"cudnnVersion": 92801, "schemaVersion": 4,
                                                          "operationGraph": og, "kernel_cache": []}),
            "cache key": json.dumps({"cudnnVersion": 92801, "schemaVersion": 4, "operationGraph": clean,
                                     "kernel_cache": [{"key": key, "value": []}]})}


def _loaded_has_subgraphs():
    return J._in(J.table_release(), J.NODE_TABLES[_SDPA_FWD]["subgraph"][1])


def _refused_9281(texts, field):
    refused(lambda t: J.check_plan_json(t, release=92801), texts["plan"], "plan JSON: operationGraph." + field)
    refused(lambda t: J.check_kernel_cache_json(t, release=92801), texts["cache"],
            "kernel cache JSON: operationGraph." + field)
    refused(lambda t: J.check_kernel_cache_json(t, release=92801), texts["cache key"],
            "kernel cache JSON: kernel_cache[0].key.operationGraph." + field)


def test_subgraph_finalize_modes_that_need_an_operation(sdpa_subgraph_plan):
    """An SDPA subgraph's finalizeMode takes the top-level graph's rules: CONV_FORWARD, CONV_BWD_DATA, CONV_BWD_FILTER
    and NORM_BWD without such a node segfault cuDNN 9.28.1 in plan finalize (9.19 refuses the subgraph member)."""
    texts = _as_9281(sdpa_subgraph_plan)  # the subgraph as cuDNN writes it passes (a plan: of the loaded release)
    for kind in ("cache", "cache key"):
        J.check_kernel_cache_json(texts[kind], release=92801)
    if _loaded_has_subgraphs():
        plan_text = json.dumps(sdpa_subgraph_plan)
        assert J.check_plan_json(plan_text) == plan_text
    assert set(J.FINALIZE_MODE_NEEDS) == {"CONV_FORWARD", "CONV_BWD_DATA", "CONV_BWD_FILTER", "NORM_BWD"}
    for mode in J.FINALIZE_MODE_NEEDS:
        _refused_9281(_as_9281(sdpa_subgraph_plan, lambda sub: sub.update(finalizeMode=mode)),
                      f"nodes[0].subgraph.finalizeMode: finalizeMode {mode} needs a")
    for mode in ("BOGUS", "generic_pointwise_fusion", "", 1):
        _refused_9281(_as_9281(sdpa_subgraph_plan, lambda sub: sub.update(finalizeMode=mode)),
                      "nodes[0].subgraph.finalizeMode: expected one of")


@pytest.mark.parametrize("member, value, problem", [
    ("dim", [2, 4, 0, 128], "dim[2]: expected an integer in [1, 9223372036854775807], got 0"),
    ("dim", [], "dim: expected an array of 1 to 8"),
    ("dim", [1] * 9, "dim: expected an array of 1 to 8"),
    ("stride", [65536, 16384, 0, 1], "stride[2]: expected an integer in [1, 9223372036854775807], got 0"),
    ("stride", [1, 1, 1], "stride: expected 4 strides (one per dimension), got 3"),
    ("vectCount", 0, "vectCount: expected an integer in [1, 64], got 0"),
    ("vectDim", 4, "vectDim: expected -1 or a dimension index below 4, got 4"),
    ("vectDim", -2, "vectDim: expected an integer in [-1, 7], got -2"),
    ("ptrAlignment", 0, "ptrAlignment: expected a power of two"),
])
def test_subgraph_tensors_take_the_top_level_tensor_rules(sdpa_subgraph_plan, member, value, problem):
    """One rule for a graph's tensors, at the top and in an SDPA subgraph (whose table alone let 0 dims, strides,
    vectCount and ptrAlignment through, any vectDim, and no dims/strides agreement or extent check)."""
    _refused_9281(_as_9281(sdpa_subgraph_plan, lambda sub: sub["tensors"][0].update({member: value})),
                  "nodes[0].subgraph.tensors[0]." + problem)
    refused(lambda t: J.check_plan_json(t, release=92801),
            _mutated(_as_9281(sdpa_subgraph_plan)["plan"], _set("operationGraph", "tensors", 0, member, value)),
            "plan JSON: operationGraph.tensors[0]." + problem)


def test_a_tensor_past_two_to_the_56_elements_is_refused_at_the_top_and_in_a_subgraph(sdpa_subgraph_plan):
    """The descriptor's extent rule (its span or its count, graph_limits.MAX_TENSOR_ELEMENTS): a plan that saves loads
    back, and no plan JSON holds a tensor the descriptors refuse."""
    big = [2 ** 62, 1, 1, 1]
    sub_dims = sdpa_subgraph_plan["operationGraph"]["nodes"][0]["subgraph"]["tensors"][0]["dim"]
    _refused_9281(_as_9281(sdpa_subgraph_plan, lambda sub: sub["tensors"][0].update(stride=big)),
                  f"nodes[0].subgraph.tensors[0].dim: dims {sub_dims} with strides {big} hold or span more than 2**56 "
                  "elements")
    top_dims = sdpa_subgraph_plan["operationGraph"]["tensors"][0]["dim"]
    overlapping = [1] * len(top_dims)  # a small span, and 2**58 elements
    for stride, dims in ((big, top_dims), (overlapping, [2 ** 29, 2 ** 29] + top_dims[2:])):
        refused(lambda t: J.check_plan_json(t, release=92801),
                _mutated(_as_9281(sdpa_subgraph_plan)["plan"], lambda d: d["operationGraph"]["tensors"][0].update(
                    dim=dims, stride=stride)),
                f"plan JSON: operationGraph.tensors[0].dim: dims {dims} with strides {stride} hold or span more than "
                "2**56 elements")


def test_subgraph_finalize_mode_crash_is_refused_on_every_route(sdpa_subgraph_plan):
    """The plan of cuDNN 9.28.1's SIGSEGV, through each way JSON reaches cuDNN (in a child: a regression crashes):
    a JsonCheckError naming the subgraph (its finalizeMode where the loaded release's table has subgraphs)."""
    doc = copy.deepcopy(sdpa_subgraph_plan)
    doc["operationGraph"]["nodes"][0]["subgraph"]["finalizeMode"] = "CONV_FORWARD"
    result = run_python("""
        import json, sys, tempfile
        import cudnn_backend as cb
        from cudnn_backend.errors import JsonCheckError
        from cudnn_backend.runtime.plans import make_kernel_cache
        text = sys.stdin.read()
        d = json.loads(text)
        og = cb.Graph("c"); x = og.tensor([2, 8, 8, 8]); w = og.tensor([8, 8, 3, 3]); og.conv_fwd(x, w, padding=1, output=True)
        og = og.build()
        key = {"type": 0, "engineId": 0, "knobChoices": {}, "operationGraph": d["operationGraph"]}
        cache = {"cudnnVersion": d["cudnnVersion"], "schemaVersion": 4}
        def generic():
            p = cb.Descriptor("CUDNN_BACKEND_EXECUTION_PLAN_DESCRIPTOR")
            p.set("CUDNN_ATTR_EXECUTION_PLAN_JSON_REPRESENTATION", "CUDNN_TYPE_CHAR", text)
            p.set("CUDNN_ATTR_EXECUTION_PLAN_DEVICEPROP", "CUDNN_TYPE_BACKEND_DESCRIPTOR",
                  cb.DeviceProfile.bundled("h200").descriptor())
            p.finalize()
        def load():
            with tempfile.NamedTemporaryFile("w", suffix=".json") as f:
                f.write(text); f.flush()
                cb.load_plan(f.name, device_profile="h200")
        routes = {"plan_from_json": lambda: cb.plan_from_json(text, device_profile="h200"), "generic": generic,
                  "load_plan": load,
                  "cache": lambda: make_kernel_cache(og, json_text=json.dumps(
                      dict(cache, operationGraph=d["operationGraph"], kernel_cache=[]))),
                  "cache key": lambda: make_kernel_cache(og, json_text=json.dumps(
                      dict(cache, operationGraph=og_json, kernel_cache=[{"key": key, "value": []}])))}
        og_json = json.loads(cb.runtime.plans.kernel_cache_json(make_kernel_cache(og)))["operationGraph"]
        for name, route in routes.items():
            try:
                route()
                print(name, "LOADED")
            except JsonCheckError as e:
                print(name, "|", e)
    """, input_text=json.dumps(doc), timeout=240)
    assert result.returncode == 0, result.stderr[-3000:]
    lines = result.stdout.strip().splitlines()
    assert len(lines) == 5, result.stdout
    for line in lines:
        assert " | " in line and "operationGraph.nodes[0].subgraph" in line, line
        # (a release without a table of its own passes the unknown member, and its crash rule still holds)
        assert ("subgraph.finalizeMode: finalizeMode CONV_FORWARD needs a convolution_forward node" in line
                if _loaded_has_subgraphs() or LOADED not in J.TABLE_RELEASES else "unknown member" in line), line


def test_sdpa_matmul_tensors_packed_along_a_matrix_dimension(real_plans):
    text, (engine, _, _) = real_plans["sdpa_composite_fwd"]
    assert engine == 2 or LOADED != VERIFIED  # the fused attention engine: SIGSEGV in cuDNN 9.19 on these layouts
    for stride in ([32768, 64, 256, 2], [1, 64, 256, 32768]):
        refused(J.check_plan_json, _mutated(text, _set("operationGraph", "tensors", 2, "stride", stride)),
                "matB: tensor 3 (dims [2, 4, 128, 64], strides " + str(stride) + ") has no stride 1 in its last two")
    J.check_plan_json(_mutated(text, _set("operationGraph", "tensors", 2, "stride", [65536, 64, 256, 1])))


OWN_TABLE = pytest.mark.skipif(LOADED not in J.TABLE_RELEASES, reason="the loaded release has no table of its own: "
                               "its documents' unknown members pass (test_release_without_a_table_...)")


@OWN_TABLE
def test_unknown_members_are_refused(real_plans, profile_json):
    refused(J.check_plan_json, _mutated(real_plans["conv_generic"][0], _set("engine", "zz", 1)), "engine.zz: unknown member")
    refused(J.check_plan_json, _mutated(real_plans["conv_generic"][0], _set("operationGraph", "nodes", 0, "zz", 1)),
            "operationGraph.nodes[0].zz: unknown member (this convolution_forward node has: W, X, Y, alpha")
    refused(J.check_deviceprop_json, _mutated(profile_json, _set("zz", 1)), "deviceName")
    refused(J.check_plan_json, _mutated(real_plans["conv_generic"][0], _set("engine", "knobChoices", "CUDNN_KNOB_TYPE_BOGUS", 1)),
            "engine.knobChoices.CUDNN_KNOB_TYPE_BOGUS: unknown knob")


def test_cubins_and_kernel_parameters(real_plans):
    text = real_plans["matmul_bias_gelu"][0]

    def kernel(doc):
        return doc["engine"]["payload"]["kernels"][0]
    refused(J.check_plan_json, _mutated(text, lambda d: kernel(d).__setitem__("cubin", "!!!!")),
            "payload.kernels[0].cubin: expected base64")
    refused(J.check_plan_json, _mutated(text, lambda d: kernel(d).__setitem__("cubin", "QUJD")),
            "expected the base64 of an ELF image")
    refused(J.check_plan_json, _mutated(text, lambda d: kernel(d)["kernelParams"]["offsets"][0].__setitem__("value", 10 ** 6)),
            "kernelParams.offsets[0]: patches bytes 1000000")
    cubin = base64.b64decode(kernel(json.loads(text))["cubin"])

    def with_cubin(image):
        return _mutated(text, lambda d: kernel(d).__setitem__("cubin", base64.b64encode(image).decode()))
    # the driver reads as far as the ELF headers say: each must lie inside the image
    refused(J.check_plan_json, with_cubin(cubin[:-1]), "of a %d-byte image (the driver would read past its end)"
            % (len(cubin) - 1))
    refused(J.check_plan_json, with_cubin(cubin[:40]), "cubin: ELF image of 40 bytes is shorter than an ELF header")
    refused(J.check_plan_json, with_cubin(cubin[:18] + b"\x3e\x00" + cubin[20:]), "got class 2, data 1, machine 62")
    shoff, shnum = struct.unpack_from("<Q", cubin, 0x28)[0], struct.unpack_from("<H", cubin, 0x3c)[0]
    refused(J.check_plan_json, with_cubin(cubin[:0x28] + struct.pack("<Q", len(cubin)) + cubin[0x30:]),
            "ELF section headers at bytes %d" % len(cubin))
    last = shoff + 64 * (shnum - 1)  # the last section's size grown past the end (unless it takes no bytes)
    grown = cubin[:last + 32] + struct.pack("<Q", len(cubin)) + cubin[last + 40:]
    if struct.unpack_from("<I", cubin, last + 4)[0] != 8:
        refused(J.check_plan_json, with_cubin(grown), f"ELF section {shnum - 1} at bytes")
    assert J.check_plan_json(with_cubin(cubin))
    # a cubin that the fast path did not cut out of the text is checked all the same
    refused(J.check_plan_json, text.replace('"cubin":"f0VMR', '"cubin":"\\u0066!VMR', 1), "cubin: expected base64")
    assert J.check_plan_json(text.replace('"cubin":"f0VMR', '"cubin":"\\u00660VMR', 1))


# -- hostile input: ValueError only --------------------------------------------------------------------------
HOSTILE = [b"\x80\x81\xff", b"\xed\xa0\x80", pickle.dumps({"operationGraph": 1}), bytes(range(256)), b"", "", " ",
           "null", "[]", "{}", "\x00", "\ufeff{}", '{"a":1}{', "[" * 100_000, "{" * 50_000, '"\\ud800"',
           '{"cudnnVersion":"\ud800"}', "NaN", "1e400", "1" * 5000, '{"a":' * 1000 + "1" + "}" * 1000]


@pytest.mark.parametrize("check", [J.check_plan_json, J.check_kernel_cache_json, J.check_deviceprop_json])
def test_hostile_input_gives_value_error_only(check):
    for value in HOSTILE:
        with pytest.raises(ValueError):
            check(value)
        with pytest.raises(ValueError):
            check(bytearray(value.encode("utf-8", "surrogatepass") if isinstance(value, str) else value))
    for value in (None, 5, 1.5, [], {}, object()):
        with pytest.raises(TypeError):
            check(value)


def test_lone_surrogates(real_plans):
    text = real_plans["conv_generic"][0]
    refused(J.check_plan_json, text.replace('"NVIDIA H200"', '"NVIDIA \ud800"'), "not valid Unicode")
    refused(J.check_plan_json, text.replace('"NVIDIA H200"', '"NVIDIA \\ud800"'), "GPUProfile.deviceName: lone surrogate")
    refused(J.check_plan_json, text.encode().replace(b"NVIDIA H200", b"NVIDIA \xed\xa0\x80"), "not UTF-8")


def test_deep_input_on_a_small_stack_thread():
    """The checker on a 256 KiB thread: deep nesting is refused, nothing overflows (in a subprocess: a
    crash must not take pytest down)."""
    code = textwrap.dedent("""
        import threading
        from cudnn_backend.core import json_checks as jc
        out = []
        def run():
            for text in ("[" * 200000 + "]" * 200000, '{"a":' * 20000 + "1" + "}" * 20000, "[" * 5000):
                try:
                    jc.check_plan_json(text)
                except ValueError as e:
                    out.append(type(e).__name__)
        threading.stack_size(256 * 1024)
        t = threading.Thread(target=run); t.start(); t.join()
        print(out)
    """)
    r = run_python(code, timeout=120)
    assert r.returncode == 0 and r.stdout.strip() == str(["JsonCheckError"] * 3), r.describe()


def test_module_imports_only_the_standard_library_and_errors():
    """Pure Python: the standard library, cudnn_backend.errors (the lowest layer), the loader and the version
    parser (which release is loaded) are all it imports."""
    import ast

    tree = ast.parse(MODULE.read_text())
    imported = set()
    for node in ast.walk(tree):
        if isinstance(node, ast.Import):
            imported.update(a.name.split(".")[0] for a in node.names)
        elif isinstance(node, ast.ImportFrom) and node.module:
            imported.add(node.module if node.module.startswith("cudnn_backend") else node.module.split(".")[0])
    package = {"cudnn_backend.errors", "cudnn_backend._bindings", "cudnn_backend.core.versions",
               "cudnn_backend.core"}  # core: its generated _json_tables (plain data, no imports)
    assert "import" not in pathlib.Path(J._tables_data.__file__).read_text().split('"""', 2)[2]
    assert {m for m in imported if m.startswith("cudnn_backend")} == package
    assert not (imported - package) - set(sys.stdlib_module_names), imported
    assert J.check_deviceprop_json(H200_PROFILE_JSON.read_text(), release=91900).startswith('{"maxGridSize"')


# -- canonical text -------------------------------------------------------------------------------------------
def test_canonical_text(real_plans, h200):
    text = real_plans["conv_generic"][0]
    pretty = json.dumps(json.loads(text), indent=2)
    assert J.check_plan_json(pretty) == pretty  # pretty-printed ASCII JSON goes through: both parsers read it alike
    pretty = pretty.replace("NVIDIA H200", "NVIDIA H200 \u00e9")
    out = J.check_plan_json(pretty)  # not ASCII: re-serialized
    assert out == J.check_plan_json(pretty, canonical=True)
    assert out.isascii() and "\\u00e9" in out and ": " not in out and "\n" not in out
    assert json.loads(out) == json.loads(pretty)
    assert _summary(plan_from_json(out, device_profile=h200)) == real_plans["conv_generic"][1]
    minus_zero = text.replace('"vectDim":-1', '"vectDim":-0', 1)  # -0: an int for Python, a double for cuDNN
    assert '"vectDim":0' in J.check_plan_json(minus_zero)


@pytest.mark.filterwarnings("ignore::cudnn_backend.errors.JsonTableFallbackWarning")
@pytest.mark.parametrize("release", [None, 91002, 99900])  # the loaded one, the oldest table, a lenient one
def test_fast_and_slow_paths_agree(real_plans, real_cache, profile_json, release):
    """The fast path (compiled from the tables) never accepts what the slow one (which explains) refuses."""
    docs = {"plan": [(n, t, json.loads(t)) for n, (t, _) in real_plans.items()],
            "kernel_cache": [("cache", real_cache, json.loads(real_cache))],
            "deviceprop": [("h200", profile_json, json.loads(profile_json))]}
    mutator = W.Mutator(docs)
    kinds = {"plan": "plan", "kernel_cache": "kernel cache", "deviceprop": "device profile"}
    compared = 0
    for index in range(1500):
        kind, _, payload, _ = mutator.mutant(7, index, W.KINDS)
        try:
            text = J._as_text("x", payload)
            small, blobs = J._cut_blobs(text)
            if J._structure("x", small)[0] > J.MAX_DEPTH:
                continue
            doc = J._DECODER.decode(small)
        except (ValueError, TypeError):
            continue
        schema = J._tables(release).schemas[kinds[kind]]
        fast = J._Fast(blobs)
        fast_ok = schema.predicate()(copy.deepcopy(doc), fast) and len(fast.used) == len(blobs)
        ctx = J._Context("x", blobs)
        try:
            schema(doc, (), ctx)
            slow_ok = len(ctx.used) == len(blobs)
        except J.JsonCheckError:
            slow_ok = False
        assert slow_ok or not fast_ok, (kind, index)
        compared += 1
    assert compared > 500


# -- releases ----------------------------------------------------------------------------------------------
CAPTURE_9190 = H200_PROFILE_JSON.read_text()  # the H200 profile as cuDNN 9.19.0 wrote it


def _with(text, **members):
    doc = json.loads(text)
    doc.update(members)
    return json.dumps(doc)


def _for(release):
    return {"plan": lambda t: J.check_plan_json(t, release=release),
            "kernel cache": lambda t: J.check_kernel_cache_json(t, release=release),
            "device profile": lambda t: J.check_deviceprop_json(t, release=release)}


def test_the_tables_and_the_loaded_release():
    assert J.TABLE_RELEASES == tuple(sorted(J.TABLE_RELEASES)) and J.CUDNN_VERSION == J.TABLE_RELEASES[-1]
    assert {91002, 91900, 92801} <= set(J.TABLE_RELEASES)  # the oldest supported, the GPU machines', the newest
    assert J.table_release() == J.table_release(LOADED) == (LOADED if LOADED in J.TABLE_RELEASES else
                                                            J.table_release(LOADED))
    assert J.table_release("9.19.0") == J.table_release(91900) == J.table_release((9, 19, 0)) == 91900
    assert J.table_release([9, 28, 1]) == 92801
    for bad in ("9.x", -1, 1.5, True, {}):
        with pytest.raises((TypeError, ValueError), match="release"):
            J.check_deviceprop_json(CAPTURE_9190, release=bad)


def test_deviceprop_members_per_release():
    assert J.deviceprop_members("9.19.0") == tuple(json.loads(CAPTURE_9190))  # all of the capture, in its order
    assert "memoryBusWidth" in J.deviceprop_members("9.28.1") and "memoryBusWidth" not in J.deviceprop_members(91900)
    assert "maxThreadsPerBlock" not in J.deviceprop_members("9.10.2", required=False)  # 9.10 neither writes nor reads it
    assert set(J.deviceprop_members(92801)) < set(J.deviceprop_members(92801, required=False))  # + smCountOrigin...
    assert J.deviceprop_members(92801, required=False).index("memoryBusWidth") > \
        J.deviceprop_members(92801, required=False).index("memClockRateKHz")  # cuDNN's own order


def test_deviceprop_for_another_release():
    check_9281 = _for("9.28.1")["device profile"]
    refused(check_9281, CAPTURE_9190, 'device profile JSON: missing member "memoryBusWidth"')
    newer = _with(CAPTURE_9190, memoryBusWidth=6144, smCountOrigin=0, oversizedSharedMemoryPerBlock=0)
    assert check_9281(newer) == newer
    refused(_for(91900)["device profile"], newer, "memoryBusWidth: unknown member")
    refused(_for(91002)["device profile"], CAPTURE_9190, "maxThreadsPerBlock: unknown member")


def _softmax_graph_cache(text, release):
    """A kernel cache whose graph is one SOFTMAX node (cuDNN 9.20+), written as cuDNN 9.28 writes it."""
    doc = json.loads(text)
    doc["cudnnVersion"] = release
    g = doc["operationGraph"]
    x, y = g["tensors"][0], dict(g["tensors"][0], name="999", isVirtual=False)
    g.update(tensors=[x, y], finalizeMode="GENERIC_POINTWISE_FUSION",
             nodes=[{"operation": "CUDNN_BACKEND_OPERATION_SOFTMAX_DESCRIPTOR", "X": x["name"], "Y": "999"}])
    doc["kernel_cache"] = []
    return json.dumps(doc, separators=(",", ":"))


def test_node_tables_follow_the_release(real_cache):
    text = _softmax_graph_cache(real_cache, 92801)
    assert _for(92801)["kernel cache"](text) == text
    refused(_for(91900)["kernel cache"], _softmax_graph_cache(real_cache, 91900),
            "operationGraph.nodes[0].operation: expected one of")
    # the roles come along: a softmax reading the tensor it writes is out of order
    bad = text.replace('"Y":"999"', '"Y":"' + json.loads(text)["operationGraph"]["tensors"][0]["name"] + '"')
    refused(_for(92801)["kernel cache"], bad, "is read here but written by this node")


def test_release_without_a_table_warns_once_in_a_process():
    code = """
        import json, warnings
        from cudnn_backend.core import json_checks as J
        from tests.helpers.env import H200_PROFILE_JSON
        text = H200_PROFILE_JSON.read_text()
        with warnings.catch_warnings(record=True) as caught:
            warnings.simplefilter("always")
            for release in ("9.99.0", 99900, "9.99.0", "9.20.1"):
                J.check_deviceprop_json(text, release=release)
        print(json.dumps([(w.category.__name__, str(w.message)) for w in caught]))
    """
    r = run_python(code, timeout=120)
    assert r.returncode == 0, r.describe()
    caught = json.loads(r.stdout.strip().splitlines()[-1])
    assert [c for c, _ in caught] == ["JsonTableFallbackWarning"] * 2, caught
    assert "cuDNN 9.99.0 is newer than every table" in caught[0][1] and "9.28.1 table" in caught[0][1]
    nearest = version_text(J.table_release("9.20.1"))  # (the table of the release below it)
    assert "cuDNN 9.20.1 has no table of its own" in caught[1][1] and f"{nearest} table" in caught[1][1]


@pytest.mark.filterwarnings("ignore::cudnn_backend.errors.JsonTableFallbackWarning")
def test_release_without_a_table_passes_unknown_members_and_keeps_the_guards(real_plans, real_cache):
    future = _for("9.99.0")
    # what the loaded release writes, checked strictly where it has a table of its own (else as leniently as 9.99)
    strict = _for(LOADED) if LOADED in J.TABLE_RELEASES else None
    profile = _with(CAPTURE_9190, memoryBusWidth=6144, someFutureMember={"a": [1, {"b": 2}]})
    assert future["device profile"](profile) == profile
    written = json.dumps(json.loads(real_plans["conv_generic"][0])["GPUProfile"])  # by the loaded release
    if strict:
        refused(strict["device profile"], _with(written, someFutureMember=1), "someFutureMember: unknown member")
    # unknown members anywhere, an unknown operation, knob and finalize mode: through
    doc = json.loads(_softmax_graph_cache(real_cache, 99900))
    doc["operationGraph"]["nodes"].append({"operation": "CUDNN_BACKEND_OPERATION_FUTURE_DESCRIPTOR", "Q": "1"})
    doc["operationGraph"]["tensors"][0]["futureMember"] = [{"x": 1}]
    doc["operationGraph"]["finalizeMode"] = "FUTURE_FUSION"
    doc["futureTop"] = {"a": {"b": [1, 2]}}
    text = json.dumps(doc)
    assert future["kernel cache"](text) == text
    if strict:
        refused(strict["kernel cache"], text.replace("99900", str(LOADED)), "finalizeMode: expected one of")
    plan = json.loads(real_plans["conv_generic"][0])
    plan["engine"]["knobChoices"]["CUDNN_KNOB_TYPE_FUTURE"] = 1
    plan["cudnnVersion"] = 99900
    assert future["plan"](json.dumps(plan))
    plan["cudnnVersion"] = LOADED
    if strict:
        refused(strict["plan"], json.dumps(plan), "unknown knob")
    # the known members keep their checks, the crash guards hold, duplicate keys inside unknown members are found
    refused(future["device profile"], _with(profile, warpSize=0), "warpSize: expected")
    refused(future["device profile"], _with(profile, deviceName="x" * 256), "deviceName: expected at most 255")
    refused(future["device profile"], profile.replace('{"b": 2}', '{"b": 2, "b": 3}'), 'duplicate key "b"')
    refused(future["kernel cache"], text.replace('"Q": "1"', '"Q": "1", "Q": "2"'), 'duplicate key "Q"')
    doc["operationGraph"]["tensors"][0]["name"] = "abc"
    refused(future["kernel cache"], json.dumps(doc), "tensors[0].name: expected a tensor name")
    refused(future["plan"], '{"a":' + "[" * 40 + "]" * 40 + "}", "nested deeper than 32 levels")
    below = [r for r in J.TABLE_RELEASES if r <= 92001]
    assert J.table_release("9.20.1") == below[-1] and J.table_release("9.0.0") == J.TABLE_RELEASES[0]


@pytest.mark.filterwarnings("ignore::cudnn_backend.errors.JsonTableFallbackWarning")
def test_release_without_a_table_keeps_the_order_and_subgraph_guards(sdpa_subgraph_plan):
    """A release without a table of its own (9.21.0: read with 9.20.0's, which knows no SDPA subgraph; 9.22.1: with
    9.22.0's, which does) keeps the guards of cuDNN's segfaults on a subgraph whose finalizeMode needs a node it lacks,
    and (9.10 .. 9.21) on nodes out of order; an unknown member anywhere must not turn either guard off (both crashed
    through plan_from_json before)."""
    for release in (92100, 92201):  # tableless, one of each side of the first table that knows subgraph (9.21.1)
        doc = copy.deepcopy(sdpa_subgraph_plan)
        doc["cudnnVersion"] = release
        doc["operationGraph"]["nodes"][0]["subgraph"]["finalizeMode"] = "CONV_FORWARD"
        refused(_for(release)["plan"], json.dumps(doc), "plan JSON: operationGraph.nodes[0].subgraph.finalizeMode: "
                "finalizeMode CONV_FORWARD needs a convolution_forward node")
    doc = json.loads(_chain_plan_json())
    doc["cudnnVersion"] = 92100
    nodes = doc["operationGraph"]["nodes"]
    doc["operationGraph"]["nodes"] = nodes[::-1]
    doc["operationGraph"]["nodes"][0]["comment"] = "an unknown member"
    refused(_for(92100)["plan"], json.dumps(doc), "cuDNN needs the nodes in topological order")
    doc["operationGraph"]["nodes"] = nodes
    assert _for(92100)["plan"](json.dumps(doc))  # in order, the unknown member passes


def _chain_plan_json():
    """A plan of two nodes or more, the second reading the first's output (matmul + bias + GELU), for an H200."""
    from cudnn_backend import patterns
    from cudnn_backend.runtime.heuristics import build_first_plan

    plan, _ = build_first_plan(patterns.matmul_bias_gelu(build=False).build(), device_profile="h200")
    return plan.to_json()


def test_documents_of_another_release_are_refused_naming_both(real_plans, real_cache, h200):
    """Each release refuses every other's plans and kernel caches (CUDNN_STATUS_SUBLIBRARY_VERSION_MISMATCH, found
    for every pair of the tables' releases): refused before cuDNN, naming both releases and the fix."""
    other = 91900 if LOADED != 91900 else 92801
    plan = json.loads(real_plans["conv_generic"][0])
    plan["cudnnVersion"] = other
    plan["GPUProfile"] = dict(json.loads(CAPTURE_9190), **({"memoryBusWidth": 6144} if other >= 92800 else {}))
    text = json.dumps(plan)
    message = refused(J.check_plan_json, text, "plan JSON: cudnnVersion: written by cuDNN")
    assert f"written by cuDNN {version_text(other)}, but meant for cuDNN {version_text(LOADED)}" in message
    assert f"Rebuild it with cuDNN {version_text(LOADED)}" in message
    assert J.document_release(text) == other and J.document_release(text.encode()) == other
    assert J.document_release("{}") is None and J.document_release(5) is None
    # checked as its own release reads it; plan_json_info reads a plan of any release
    assert J.check_plan_json(text, release=other) == text
    assert plan_json_info(text)["cudnn_version"] == other
    with pytest.raises(PlanVersionError, match="serialized by cuDNN"):
        plan_from_json(text, device_profile=h200)
    cache = json.loads(real_cache)
    cache["cudnnVersion"] = other
    refused(J.check_kernel_cache_json, json.dumps(cache), "kernel cache JSON: cudnnVersion: written by cuDNN")
    refused(J.check_plan_json, real_plans["conv_generic"][0].replace(f'"cudnnVersion":{LOADED}', '"cudnnVersion":7'),
            "cudnnVersion: written by cuDNN 7, but meant for")


@pytest.mark.parametrize("value", ["2.5", "3", "-7", "true", "1e+300", "Infinity", "NaN"])
def test_constant_tensor_values(real_cache, value):
    """A constant tensor (cuDNN 9.22+) carries its value as its data type reads it: a number or a bool."""
    doc = json.loads(real_cache)
    doc.update(cudnnVersion=92801, kernel_cache=[])
    doc["operationGraph"]["tensors"][0].update(isByValue=True, hasConstValue=True, constValue=0)
    text = json.dumps(doc).replace('"constValue": 0', f'"constValue": {value}')  # the JSON text of the value
    assert _for(92801)["kernel cache"](text) == text
    refused(_for(91900)["kernel cache"], text.replace("92801", "91900"), "hasConstValue: unknown member")
    refused(_for(92801)["kernel cache"], text.replace(f'"constValue": {value}', '"constValue": {}'),
            "constValue: expected a number or true/false")


@pytest.mark.slow
def test_every_installed_release_accepts_what_it_writes():
    """The corpus test above on every release installed: CUDNN_BACKEND_RELEASES names their libcudnn.so.9 files
    (os.pathsep-separated; CUDNN_BACKEND_RELEASES_LD_PATH the CUDA libraries cu12 releases need), each run in a child
    process with that release loaded."""
    import os

    libs = [p for p in os.environ.get("CUDNN_BACKEND_RELEASES", "").split(os.pathsep) if p]
    if not libs:
        pytest.skip("set CUDNN_BACKEND_RELEASES to the libcudnn.so.9 files of the releases to try")
    ld = os.environ.get("CUDNN_BACKEND_RELEASES_LD_PATH", "")
    for lib in libs:
        env = {"CUDNN_BACKEND_LIBCUDNN": lib, "LD_LIBRARY_PATH": os.pathsep.join(
            p for p in (ld, os.environ.get("LD_LIBRARY_PATH", "")) if p)}
        r = run_python("import sys, pytest; sys.exit(pytest.main(['-q', '-p', 'no:cacheprovider', '-k', "
                       "'loaded_release_writes or another_release or follow_the_release', sys.argv[1]]))",
                       args=[str(MODULE.parents[2] / "tests" / "core" / "test_json_checks.py")], env=env, timeout=900)
        assert r.returncode == 0, f"{lib}: {r.describe()}"


def test_one_kernel_per_attention_plan_where_the_release_crashes_on_more(real_plans):
    """cuDNN 9.10 .. 9.28.0's fused attention engines crash (SIGSEGV) on a plan whose payload holds its one kernel
    twice (found by the JSON fuzz on 9.19.0, probed on every release): refused there, accepted where fixed."""
    guarded = J._tables_data.GUARDS["one kernel per attention plan"]
    assert J._in(91900, guarded) and not J._in(92801, guarded)
    doc = json.loads(real_plans["sdpa_composite_fwd"][0])
    assert doc["operationGraph"]["finalizeMode"] in J.ATTENTION_MODES and len(doc["engine"]["payload"]["kernels"]) == 1
    doc["engine"]["payload"]["kernels"] *= 2
    text = json.dumps(doc)
    if J._in(J.table_release(), guarded):
        refused(J.check_plan_json, text, "engine.payload.kernels: a fused attention plan (")
    else:
        assert J.check_plan_json(text) == text
