"""cudnn_backend.core.json_checks: the checks of plan, kernel cache and device profile JSON before cuDNN.

Every JSON that killed cuDNN 9.19 (SIGABRT, SIGSEGV, SIGFPE, bad_alloc, double free at exit, stack
overflow) is refused with a ValueError naming the field; real JSON written by cuDNN passes, and the text
the checker returns loads into cuDNN with the same engine, knobs and workspace; hostile input (binary,
pickles, lone surrogates, deep nesting) gives ValueError and nothing else. The crash-proofing itself is
fuzzed by tests/runtime/test_json_fuzz.py.
"""
import copy
import json
import math
import pathlib
import pickle
import sys
import textwrap

import pytest

from cudnn_backend import patterns
from cudnn_backend._bindings.enums import DataType, PointwiseMode
from cudnn_backend.core import json_checks as J
from cudnn_backend.graph import Graph
from cudnn_backend.runtime.heuristics import get_configs
from cudnn_backend.runtime.plans import build_plan, kernel_cache_json, make_kernel_cache, plan_from_json
from cudnn_backend.typed import DeviceProp, OperationGraph

from tests.helpers import generic_graphs as gg
from tests.helpers import json_fuzz_worker as W
from tests.helpers.crash import run_python
from tests.helpers.env import H200_PROFILE_JSON
from tests.helpers.offline import offline_plan

MODULE = pathlib.Path(J.__file__)


# -- real documents ----------------------------------------------------------------------------------------
def _summary(plan):
    return plan.engine_index, dict(plan.knobs), plan.workspace_size


@pytest.fixture(scope="module")
def real_plans(h200):
    """{name: (text, (engine, knobs, workspace))} of plans built offline: precompiled and runtime-compiled
    engines (the latter carry their cubin)."""
    out = {}
    out["conv_generic"] = offline_plan(gg.notebook_conv_graph()).to_json()
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


def test_real_device_profile_passes(h200_profile_json):
    for canonical in (False, True):
        checked = J.check_deviceprop_json(h200_profile_json, canonical=canonical)
        dp = DeviceProp(json_representation=checked)
        dp.finalize()
        assert json.loads(dp.get_keyword("json_representation")) == json.loads(h200_profile_json)


def test_every_operation_cudnn_serializes_passes():
    """Graphs of many operations (and every pointwise mode) as cuDNN writes them pass the tables."""
    texts = []
    for make in (patterns.reduction, patterns.concat, patterns.reshape, patterns.rng, patterns.bn_gen_stats,
                 patterns.bn_finalize, patterns.layer_norm_bwd, patterns.rms_norm_fwd, patterns.sdpa_fwd,
                 patterns.sdpa_composite_bwd, patterns.block_scale_dequantize_matmul):
        texts.append(graph_json(make(build=False).operations))
    for mode in PointwiseMode:
        g = Graph("pw", io_data_type=DataType.CUDNN_DATA_FLOAT)
        x, b, t = g.tensor([2, 8, 4, 4]), g.tensor([2, 8, 4, 4]), g.tensor([2, 8, 4, 4])
        try:
            if mode.name.endswith("_BWD"):
                g.pointwise(mode, x, dy=b, output=True)
            elif mode.name == "CUDNN_POINTWISE_BINARY_SELECT":
                g.pointwise(mode, x, b, t, output=True)
            elif mode.name == "CUDNN_POINTWISE_GEN_INDEX":
                g.pointwise(mode, x, output=True, axis=1)
            else:
                g.pointwise(mode, x, b, output=True)
        except Exception:  # a mode of a later cuDNN, or a unary one given two inputs
            continue
        texts.append(graph_json(g.operations))
    assert len(texts) > 40
    for text in texts:
        J.check_kernel_cache_json(text)


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
    with pytest.raises(ValueError, match=r"nodes\[0\]\.alpha1: expected a finite number, got Infinity"):
        J.check_kernel_cache_json(text.replace('"alpha1":1.0', '"alpha1":Infinity'))


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
    assert json.loads(text)["engine"]["engineId"] == 7
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
    def change(doc):
        doc["kernel_cache"][0]["key"]["type"] = key_type
        if key_type == 2:  # a tensor-IR key: identified by a 64-bit hash (cuDNN: IsUint64)
            doc["kernel_cache"][0]["key"]["shader_hash_key"] = 2 ** 64 - 1
    make_kernel_cache(dynamic_matmul_graph(), J.check_kernel_cache_json(_mutated(real_cache, change)))


def test_nested_kernel_cache_graphs_are_checked_like_top_level_ones(real_cache):
    def change(doc):
        doc["kernel_cache"][0]["key"]["operationGraph"]["nodes"][0]["matA"] = "CUDNN_1"
    refused(J.check_kernel_cache_json, _mutated(real_cache, change),
            "kernel_cache[0].key.operationGraph.nodes[0].matA: expected a tensor name")


@pytest.mark.parametrize("depth", [33, 1000, 20_000, 200_000])
def test_deep_nesting(real_plans, real_cache, h200_profile_json, depth):
    deep = "[" * depth + "]" * depth
    for check, text in ((J.check_plan_json, real_plans["conv_generic"][0]), (J.check_kernel_cache_json, real_cache),
                        (J.check_deviceprop_json, h200_profile_json)):
        refused(check, text[:-1] + ',"zz":' + deep + "}", "nested deeper than 32 levels")
        refused(check, deep, "nested deeper than 32 levels")


def test_depth_of_real_documents_is_far_below_the_limit(real_plans, real_cache):
    for text in [t for t, _ in real_plans.values()] + [real_cache]:
        depth, _ = J._structure("x", J._cut_blobs(text)[0])
        assert depth <= 9 < J.MAX_DEPTH


@pytest.mark.parametrize("name, size", [("x" * 300, 300), ("x" * 256, 256), ("\u00e9" * 128, 256)])
def test_device_names_of_256_bytes_or_more(real_plans, h200_profile_json, name, size):
    refused(J.check_deviceprop_json, _mutated(h200_profile_json, _set("deviceName", name)),
            f"device profile JSON: deviceName: expected at most 255 bytes of UTF-8, got {size}")
    refused(J.check_plan_json, _mutated(real_plans["conv_generic"][0], _set("GPUProfile", "deviceName", name)),
            "plan JSON: GPUProfile.deviceName: expected at most 255 bytes")


def test_device_name_of_255_bytes_loads(h200_profile_json):
    text = J.check_deviceprop_json(_mutated(h200_profile_json, _set("deviceName", "\u00e9" * 127 + "x")))
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
    refused(J.check_plan_json, compact.replace('"cudnnVersion":91900', '"cudnnVersion":1e400'),
            "cudnnVersion: expected an integer")
    refused(J.check_plan_json, compact.replace('"cudnnVersion":91900', '"cudnnVersion":Infinity'),
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


def test_finalize_modes_that_need_an_operation(real_plans):
    for mode in ("CONV_FORWARD", "CONV_BWD_DATA", "CONV_BWD_FILTER", "NORM_BWD"):
        refused(J.check_plan_json, _mutated(real_plans["matmul_bias_gelu"][0], _set("operationGraph", "finalizeMode", mode)),
                f"operationGraph.finalizeMode: finalizeMode {mode} needs a")


def test_sdpa_matmul_tensors_packed_along_a_matrix_dimension(real_plans):
    text, (engine, _, _) = real_plans["sdpa_composite_fwd"]
    assert engine == 2  # the fused attention engine: SIGSEGV in cuDNN 9.19 on these layouts
    for stride in ([32768, 64, 256, 2], [1, 64, 256, 32768]):
        refused(J.check_plan_json, _mutated(text, _set("operationGraph", "tensors", 2, "stride", stride)),
                "matB: tensor 3 (dims [2, 4, 128, 64], strides " + str(stride) + ") has no stride 1 in its last two")
    J.check_plan_json(_mutated(text, _set("operationGraph", "tensors", 2, "stride", [65536, 64, 256, 1])))


def test_unknown_members_are_refused(real_plans, h200_profile_json):
    refused(J.check_plan_json, _mutated(real_plans["conv_generic"][0], _set("engine", "zz", 1)), "engine.zz: unknown member")
    refused(J.check_plan_json, _mutated(real_plans["conv_generic"][0], _set("operationGraph", "nodes", 0, "zz", 1)),
            "operationGraph.nodes[0].zz: unknown member (this convolution_forward node has: W, X, Y, alpha")
    refused(J.check_deviceprop_json, _mutated(h200_profile_json, _set("zz", 1)), "deviceName")
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
    package = {"cudnn_backend.errors", "cudnn_backend._bindings", "cudnn_backend.core.versions"}
    assert {m for m in imported if m.startswith("cudnn_backend")} == package
    assert not (imported - package) - set(sys.stdlib_module_names), imported
    assert J.check_deviceprop_json(H200_PROFILE_JSON.read_text()).startswith('{"maxGridSize"')


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


def test_fast_and_slow_paths_agree(real_plans, real_cache, h200_profile_json):
    """The fast path (compiled from the tables) never accepts what the slow one (which explains) refuses."""
    docs = {"plan": [(n, t, json.loads(t)) for n, (t, _) in real_plans.items()],
            "kernel_cache": [("cache", real_cache, json.loads(real_cache))],
            "deviceprop": [("h200", h200_profile_json, json.loads(h200_profile_json))]}
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
        schema = J._tables(None).schemas[kinds[kind]]
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
def _with(text, **members):
    doc = json.loads(text)
    doc.update(members)
    return json.dumps(doc)


def test_deviceprop_members_per_release(h200_profile_json):
    captured = list(json.loads(h200_profile_json))  # written by cuDNN 9.19.0
    assert J.deviceprop_members("9.19.0") == tuple(captured)
    assert "memoryBusWidth" in J.deviceprop_members("9.28.1") and "memoryBusWidth" not in J.deviceprop_members(91900)
    assert "maxThreadsPerBlock" not in J.deviceprop_members("9.10.2", required=False)
    assert set(J.deviceprop_members(92801)) < set(J.deviceprop_members(92801, required=False))


def test_deviceprop_for_another_release(h200_profile_json):
    refused(lambda t: J.check_deviceprop_json(t, release="9.28.1"), h200_profile_json,
            'device profile JSON: missing member "memoryBusWidth"')
    newer = _with(h200_profile_json, memoryBusWidth=6144, smCountOrigin=0, oversizedSharedMemoryPerBlock=0)
    assert J.check_deviceprop_json(newer, release="9.28.1") == newer
    refused(lambda t: J.check_deviceprop_json(t, release=91900), newer, "memoryBusWidth: unknown member")


def test_release_without_a_table_warns_once_and_passes_unknown_members(h200_profile_json, recwarn):
    newer = _with(h200_profile_json, memoryBusWidth=6144, someFutureMember={"a": [1, {"b": 2}]})
    assert J.table_release("9.99.0") == J.CUDNN_VERSION == J.TABLE_RELEASES[-1]
    assert J.check_deviceprop_json(newer, release="9.99.0") == newer
    J.check_deviceprop_json(newer, release=99900)
    warned = [w for w in recwarn.list if issubclass(w.category, J.JsonTableFallbackWarning)]
    assert len(warned) <= 1  # once per process (an earlier test may have had it)
    if warned:
        assert "cuDNN 9.99.0 is newer than every table" in str(warned[0].message)
    # the known members keep their checks, duplicate keys inside unknown members are still found
    refused(lambda t: J.check_deviceprop_json(t, release="9.99.0"), _with(newer, warpSize=0), "warpSize: expected")
    refused(lambda t: J.check_deviceprop_json(t, release="9.99.0"),
            newer.replace('{"b": 2}', '{"b": 2, "b": 3}'), 'duplicate key "b"')
    assert J.table_release("9.20.0") == 91900 and J.table_release("9.0.0") == J.TABLE_RELEASES[0]
