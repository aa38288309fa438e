"""Execution plans built offline against the H200 profile: workspace, engine and knobs read back,
JSON round trip, runtime-compiled engines, the kernel cache, ownership; GPU: load onto a handle."""
import copy
import gc
import json

import pytest

import cudnn_backend as cb
from cudnn_backend import patterns
from cudnn_backend.graph import Graph
from cudnn_backend.runtime import plans
from cudnn_backend.runtime.engines import Config, config_from_index, make_config, make_engine
from cudnn_backend.runtime.heuristics import NoDeviceError, build_first_plan, get_configs
from cudnn_backend.runtime.plans import (
    Plan,
    PlanVersionError,
    build_plan,
    kernel_cache_json,
    load_plan,
    make_kernel_cache,
    plan_from_json,
    plan_json_info,
    save_plan,
)
from cudnn_backend.runtime.profiles import DeviceProfile
from cudnn_backend.typed import ExecutionPlan, KernelCache

from tests.helpers import generic_graphs as gg
from tests.helpers.env import HAVE_GPU
from tests.helpers.offline import matmul_relu_graph


@pytest.fixture(scope="module")
def a_configs(conv, h200):
    return get_configs(conv, "A", h200)


@pytest.fixture(scope="module")
def plan(a_configs, h200):
    return build_plan(a_configs[0], device_profile=h200)


@pytest.fixture(scope="module")
def rtc_plan(h200):
    graph = matmul_relu_graph()
    plan, _ = build_first_plan(graph, device_profile=h200)
    return plan


# -- building offline ---------------------------------------------------------------------------------------
def test_every_a_config_builds_offline(a_configs, h200):
    for cfg in a_configs:
        p = build_plan(cfg, device_profile=h200)
        assert isinstance(p, Plan) and isinstance(p.descriptor, ExecutionPlan) and p.descriptor.finalized
        assert isinstance(p.workspace_size, int) and p.workspace_size >= 0
        assert p.engine_index == cfg.engine_index and p.knobs == cfg.knobs
        assert p.handle is None


def test_plan_properties(plan, conv, a_configs):
    cfg = a_configs[0]
    assert plan.operation_graph is conv
    assert plan.handle is None
    assert plan.workspace_size == cfg.workspace_size
    assert plan.workspace_size == plan.descriptor.get(cb.CUDNN_ATTR_EXECUTION_PLAN_WORKSPACE_SIZE, cb.CUDNN_TYPE_INT64)[0]
    assert plan.engine_index == cfg.engine_index
    assert plan.knobs == cfg.knobs and all(isinstance(k, cb.KnobType) for k in plan.knobs)
    assert plan.numerical_notes == cfg.numerical_notes
    assert plan.config is cfg and plan.deviceprop is not None
    summary = plan.to_dict()
    assert summary["engine"] == cfg.engine_index and summary["device"] == "NVIDIA H200"
    assert summary["handle"] is False
    with pytest.warns(DeprecationWarning, match=r"Plan.summary\(\) is deprecated: use to_dict"):
        assert plan.summary() == summary  # the earlier name, the same data
    with pytest.warns(DeprecationWarning, match=r"Config.summary\(\) is deprecated"):
        assert cfg.summary() == cfg.to_dict()


def test_profile_is_inherited_from_the_config(a_configs):
    p = build_plan(a_configs[1])  # no handle, no profile: the heuristics' profile
    assert p.descriptor.finalized and p.engine_index == a_configs[1].engine_index
    assert p.deviceprop is a_configs[1].deviceprop


def test_plan_from_engine_and_knobs(conv, h200, a_configs):
    cfg = config_from_index(conv, a_configs[2].engine_index, a_configs[2].knobs, h200)
    p = build_plan(cfg)
    assert p.knobs == a_configs[2].knobs and p.operation_graph is conv


def test_workspace_sizes_differ_between_configs(a_configs, h200):
    sizes = {build_plan(c, device_profile=h200).workspace_size for c in a_configs}
    assert len(sizes) > 1 and 0 in sizes


def test_build_plan_argument_errors(a_configs, h200, conv):
    with pytest.raises(TypeError, match="ENGINECFG"):
        build_plan(conv, device_profile=h200)
    with pytest.raises(TypeError, match="Handle"):
        build_plan(a_configs[0], handle=42)
    unfinalized = cb.Descriptor(cb.CUDNN_BACKEND_ENGINECFG_DESCRIPTOR)
    with pytest.raises(ValueError, match="not finalized"):
        build_plan(unfinalized, device_profile=h200)


def test_run_only_intermediate_uids(h200):
    g = Graph()
    x = g.tensor([8, 64, 56, 56], layout="nhwc")
    w = g.tensor([32, 64, 3, 3], layout="nhwc")
    b = g.tensor([1, 32, 1, 1], layout="nhwc")
    y = g.conv_fwd(x, w, padding=1)
    z = g.pointwise("CUDNN_POINTWISE_ADD", y, b)
    g.pointwise("CUDNN_POINTWISE_RELU_FWD", z, output=True)
    graph = g.build()
    cfg = get_configs(graph, "A", h200)[0]
    p = build_plan(cfg, device_profile=h200, run_only_intermediate_uids=[y.uid])
    assert p.descriptor.run_only_intermediate_uids == [y.uid]
    assert p.operation_graph is graph
    # cuDNN takes any UID (an input's, one no tensor has) and computes what it computes: refused, named
    intermediates = f"its intermediates: {y.uid}, {z.uid}"
    for wrong, what in (([x.uid], f"{x.uid} is not an intermediate"), ([999, x.uid], f"999, {x.uid} are not")):
        with pytest.raises(ValueError, match=rf"^run_only_intermediate_uids: {what}.*; {intermediates}$"):
            build_plan(cfg, device_profile=h200, run_only_intermediate_uids=wrong)
    with pytest.raises(ValueError, match="^run_only_intermediate_uids: a UID is given twice"):
        build_plan(cfg, device_profile=h200, run_only_intermediate_uids=[y.uid, y.uid])
    # cuDNN's JSON leaves the setting out: saying so, since a plan loaded from it computes every intermediate
    with pytest.warns(UserWarning, match="run_only_intermediate_uids is not in cuDNN's JSON"):
        text = p.to_json()
    assert "run_only" not in text.lower() and "runOnly" not in text


# -- ownership ------------------------------------------------------------------------------------------------
def test_plan_keeps_graph_operations_and_tensors_alive(h200):
    def plan_only():
        g = Graph()
        x = g.tensor([8, 64, 56, 56], layout="nhwc")
        w = g.tensor([32, 64, 3, 3], layout="nhwc")
        g.conv_fwd(x, w, padding=1, output=True)
        graph = g.build()
        return build_first_plan(graph, device_profile=h200)[0]

    p = plan_only()
    gc.collect()
    graph = p.operation_graph
    assert graph is not None and graph.finalized and not graph.closed
    ops = graph.operations
    assert len(ops) == 1 and not ops[0].closed
    tensors = [ops[0].x, ops[0].w, ops[0].y]
    assert all(not t.closed for t in tensors) and [t.shape for t in tensors][0] == (8, 64, 56, 56)
    assert p.to_json() and p.workspace_size >= 0
    assert p.engine_index >= 0


# -- JSON --------------------------------------------------------------------------------------------------------
def test_plan_json(plan, a_configs):
    text = plan.to_json()
    data = json.loads(text)
    assert data["cudnnVersion"] == cb.get_version()
    info = plan_json_info(text)
    assert info["engine"] == plan.engine_index
    assert info["device_name"] == "NVIDIA H200" and info["device_version"] == 900
    assert info["knobs"] == {k.name[len("CUDNN_KNOB_TYPE_"):]: v for k, v in plan.knobs.items()}
    with pytest.raises(ValueError, match="not a serialized"):
        plan_json_info("{}")
    with pytest.raises(ValueError, match="not a serialized cuDNN execution plan: plan JSON: not valid JSON"):
        plan_json_info("nope")
    # read as the release its cudnnVersion names, and said to be (an edited version meets that release's members;
    # a release without a table of its own passes unknown members)
    edited = dict(data, GPUProfile=dict(data["GPUProfile"], maxGridSize="many"))
    with pytest.raises(ValueError, match=rf"^not a serialized cuDNN {cb.loaded_library().version_string} execution "
                                         r"plan: plan JSON: GPUProfile.maxGridSize: "):
        plan_json_info(json.dumps(edited))


def test_json_round_trip_offline(plan, h200, conv):
    """Deserializing works offline when given the device profile (not a handle)."""
    back = plan_from_json(plan.to_json(), device_profile=h200)
    assert back.descriptor.finalized and back.handle is None
    assert back.engine_index == plan.engine_index
    assert back.knobs == plan.knobs
    assert back.workspace_size == plan.workspace_size
    assert back.operation_graph is None  # nothing to reference: the JSON carries its own graph
    assert json.loads(back.to_json())["engine"] == json.loads(plan.to_json())["engine"]
    with_graph = plan_from_json(plan.to_json(), device_profile="h200", operation_graph=conv)
    assert with_graph.operation_graph is conv


def test_json_round_trip_every_a_config(a_configs, h200):
    for cfg in a_configs[:10]:
        p = build_plan(cfg, device_profile=h200)
        back = plan_from_json(p.to_json(), device_profile=h200)
        assert (back.engine_index, back.knobs, back.workspace_size) == (p.engine_index, p.knobs, p.workspace_size)


@pytest.mark.parametrize("make", [patterns.layer_norm_fwd, patterns.rms_norm_fwd], ids=["layer_norm", "rms_norm"])
def test_json_round_trip_of_norm_inference(make, h200):
    """An inference norm node has no statistics (no Mean, no InvVariance): its plan loads back all the same."""
    plan, _ = build_first_plan(make(training=False, build=False).graph, device_profile=h200)
    text = plan.to_json()
    (node,) = json.loads(text)["operationGraph"]["nodes"]
    assert node["fmode"] == "CUDNN_NORM_FWD_INFERENCE" and not {"Mean", "InvVariance"} & set(node)
    back = plan_from_json(text, device_profile=h200)
    assert (back.engine_index, back.workspace_size) == (plan.engine_index, plan.workspace_size)
    assert plan.knobs.items() <= back.knobs.items()  # the JSON also lists the knobs cuDNN defaulted
    assert back.to_json() == text


def test_deserializing_needs_a_handle_or_a_profile(plan):
    # cuDNN 9.19 crashes the process when given neither: refused before cuDNN is called
    with pytest.raises(ValueError, match="handle=.*device_profile="):
        plan_from_json(plan.to_json())
    with pytest.raises(TypeError):
        plan_from_json(None, device_profile="h200")


def test_plan_from_another_cudnn_version_is_refused(plan, h200):
    data = json.loads(plan.to_json())
    data["cudnnVersion"] = cb.get_version() + 900
    text = json.dumps(data)
    with pytest.raises(PlanVersionError, match="serialized by cuDNN .* loaded cuDNN is"):
        plan_from_json(text, device_profile=h200)
    # forced through, the JSON checks refuse it as cuDNN would (CUDNN_STATUS_SUBLIBRARY_VERSION_MISMATCH)
    with pytest.raises(cb.JsonCheckError, match="cudnnVersion: written by cuDNN .* own release only"):
        plan_from_json(text, device_profile=h200, allow_version_mismatch=True)


def test_an_unknown_enumerant_is_named_with_its_field(plan, h200):
    """A plan JSON with a misspelled dataType was reported as cuDNN's bare "CUDNN_STATUS_BAD_PARAM ...
    EXECUTION_PLAN_DESCRIPTOR: 1"; the field, the value and the close names are said (cuDNN's refusal kept as the
    cause)."""
    data = json.loads(plan.to_json())
    tensor = data["operationGraph"]["tensors"][0]
    good = tensor["dataType"]
    tensor["dataType"] = good + "X"
    with pytest.raises(cb.JsonCheckError) as e:
        plan_from_json(json.dumps(data), device_profile=h200)
    assert e.value.path == "operationGraph.tensors[0].dataType", e.value
    assert f"{good + 'X'!r} is not a name of cuDNN's enums; " in str(e.value) and f"did you mean {good}" in str(e.value)
    assert "CUDNN_STATUS_BAD_PARAM" in str(e.value) and isinstance(e.value.__cause__, cb.CudnnError)


@pytest.mark.parametrize("schema", [0, 5, 99])
def test_another_schema_version_is_named_with_the_one_this_cudnn_reads(plan, h200, schema):
    """cuDNN refuses a plan or kernel cache of another schemaVersion as "schema_version != ((0) * 100 + (4))"; the
    member, both values and the fix are said (cuDNN's refusal kept as the cause)."""
    data = json.loads(plan.to_json())
    reads = data["schemaVersion"]
    graph = gg.notebook_conv_graph()
    cache = json.loads(kernel_cache_json(make_kernel_cache(graph)))
    assert cache["schemaVersion"] == reads
    if schema == reads:
        pytest.skip("this cuDNN reads that schema")
    data["schemaVersion"] = cache["schemaVersion"] = schema
    loads = {"plan": lambda: plan_from_json(json.dumps(data), device_profile=h200),
             "kernel cache": lambda: make_kernel_cache(graph, json_text=json.dumps(cache)),
             "kernel cache ": lambda: make_kernel_cache(graph, json_text=memoryview(json.dumps(cache).encode()))}
    for kind, load in loads.items():
        with pytest.raises(cb.JsonCheckError) as e:
            load()
        assert e.value.kind == kind.strip() and e.value.path == "schemaVersion", e.value
        assert f"schemaVersion: {schema}: the loaded cuDNN (" in str(e.value)
        assert f"reads schemaVersion {reads}," in str(e.value) and "save it again with this cuDNN" in str(e.value)
        assert isinstance(e.value.__cause__, cb.CudnnError)


def test_save_and_load_plan_file(plan, h200, tmp_path):
    path = save_plan(plan, tmp_path / "plan.json")
    assert path.read_text() == plan.to_json()
    back = load_plan(path, device_profile=h200)
    assert back.engine_index == plan.engine_index and back.knobs == plan.knobs
    assert plan.save(tmp_path / "again.json").exists()


# -- runtime-compiled engines and the kernel cache ------------------------------------------------------------------
def test_runtime_compiled_plan_offline(rtc_plan, h200):
    assert cb.CUDNN_BEHAVIOR_NOTE_RUNTIME_COMPILATION in rtc_plan.behavior_notes
    text = rtc_plan.to_json()
    assert len(text) > 10_000  # the compiled kernel travels in the JSON
    back = plan_from_json(text, device_profile=h200)
    assert back.engine_index == rtc_plan.engine_index
    # the serialized plan also lists the knobs cuDNN defaulted (e.g. SPLIT_K_SLC = -1)
    assert rtc_plan.knobs.items() <= back.knobs.items()


def test_kernel_cache_finalizes():
    cache = make_kernel_cache(matmul_relu_graph(dynamic=True))
    assert isinstance(cache, KernelCache) and cache.finalized
    assert make_kernel_cache(gg.notebook_conv_graph()).finalized
    with pytest.raises(ValueError, match="operation_graph: make_kernel_cache needs one"):
        make_kernel_cache()


def test_kernel_cache_reuses_compiled_kernels(h200):
    import time

    first_graph = matmul_relu_graph(64, dynamic=True)
    cache = make_kernel_cache(first_graph)
    t0 = time.perf_counter()
    first = build_plan(get_configs(first_graph, "A", h200)[0], kernel_cache=cache)
    compile_s = time.perf_counter() - t0
    second_graph = matmul_relu_graph(128, dynamic=True)  # same topology, other shape
    t0 = time.perf_counter()
    second = build_plan(get_configs(second_graph, "A", h200)[0], kernel_cache=cache)
    cached_s = time.perf_counter() - t0
    assert cb.CUDNN_BEHAVIOR_NOTE_RUNTIME_COMPILATION in first.behavior_notes
    assert cached_s < compile_s / 3, (compile_s, cached_s)
    assert second.kernel_cache is cache and second.operation_graph is second_graph
    text = plans.kernel_cache_json(cache)
    assert len(text) > 1000
    restored = make_kernel_cache(matmul_relu_graph(256, dynamic=True), text)
    assert restored.finalized and len(plans.kernel_cache_json(restored)) > 0
    # a byte-order mark (some editors save one), as plans and profiles take it, in text or bytes
    for marked in ("\ufeff" + text, ("\ufeff" + text).encode()):
        assert make_kernel_cache(matmul_relu_graph(256, dynamic=True), marked).finalized


# -- on the GPU: tests/gpu/runtime/test_plans_gpu.py ---------------------------------------------------------------------
@pytest.mark.skipif(HAVE_GPU, reason="checks the GPU-less message")
def test_no_device_message_for_plans(conv, h200):
    # a config that does not know the profile it was made for (its engine was built with it)
    made = make_config(make_engine(conv, 0, h200))
    cfg = Config(made.descriptor, conv, None)
    with pytest.raises(NoDeviceError, match="device_profile="):
        build_plan(cfg)
    assert build_plan(cfg, device_profile=h200).descriptor.finalized


# -- which GPU a plan is for: the members cuDNN compares when it loads one ------------------------------------------
def _with(profile, **members) -> DeviceProfile:
    return DeviceProfile(json.dumps({**profile.properties, **members}, separators=(",", ":")),
                         cudnn_version=profile.cudnn_version)


def test_the_plan_identity_table_is_what_the_loaded_release_compares(plan, h200):
    """Each member the table says the loaded release compares refuses a plan built against another value; a member
    it does not compare (the PCI slot, the name) does not (tools/derive_json_tables.py probes the same way)."""
    from cudnn_backend.core.json_checks import plan_identity_members, plan_identity_probed

    compared = plan_identity_members()
    assert compared is not None and "multiProcessorCount" in compared and "deviceVer" in compared
    text = plan.to_json()
    props = h200.properties
    if not plan_identity_probed():  # what the probed releases beside it compare: those its profile holds
        compared = tuple(m for m in compared if m in props)
    for member in compared:
        value = props[member]
        other = [*value[:-1], value[-1] - 1] if isinstance(value, list) else value - 1 if member == "driverVer" \
            else value + 10 if member == "deviceVer" else value + 1  # (a plan for a newer driver than the GPU's is
        # refused by every release; a deviceVer is an SM version, major * 100 + minor * 10)
        with pytest.raises(cb.CudnnNotSupportedError, match=f"ARCH_MISMATCH.*they differ in {member} "):
            plan_from_json(text, device_profile=_with(h200, **{member: other}))
    for member, value in (("pciDeviceId", props["pciDeviceId"] + 1), ("deviceName", "NVIDIA H200 renamed")):
        assert member not in compared
        plan_from_json(text, device_profile=_with(h200, **{member: value})).close()


def test_a_plan_for_another_gpu_is_refused_naming_both_and_the_fix(plan, h200):
    h100 = DeviceProfile.bundled("h100")
    text = build_first_plan(gg.notebook_conv_graph(), device_profile=h100)[0].to_json()
    try:
        plan_from_json(text, device_profile=h200).close()  # where the two differ in nothing cuDNN compares
    except cb.CudnnNotSupportedError as e:
        msg = str(e)
        assert "ARCH_MISMATCH" in msg and "built for NVIDIA H100 80GB HBM3" in msg and "is NVIDIA H200" in msg
        assert "they differ in memoryBusWidth (plan 5120, the target device profile 6016)" in msg
        assert "'h100', bundled" in msg and "'h200', bundled" in msg
    else:
        from cudnn_backend.core.json_checks import plan_identity_members

        both = [m for m in plan_identity_members() if m in h100.properties and m in h200.properties]
        assert all(h100.properties[m] == h200.properties[m] for m in both)  # (one unset: cuDNN's default, as it took)


def test_files_that_never_end_are_refused_not_read_forever():
    from cudnn_backend.runtime.plans import load_plan
    from cudnn_backend.runtime.profiles import DeviceProfile, DeviceProfileError

    with pytest.raises(ValueError, match=r"^path: '/dev/zero' holds more than 268,435,456 bytes"):
        load_plan("/dev/zero", device_profile="h200")
    with pytest.raises(DeviceProfileError, match=r"'/dev/zero' holds more than 1048576 bytes"):
        DeviceProfile.load("/dev/zero")


def test_a_plan_json_padded_past_what_cudnn_gives_back_is_loaded_compact():
    plan, _ = build_first_plan(patterns.conv_bias_relu(n=1, c=8, h=8, w=8, k=8).op_graph, device_profile="h200")
    text = plan.to_json()
    loaded = plan_from_json(text + " " * (1 << 24), device_profile="h200")
    assert json.loads(loaded.to_json()) == json.loads(text)  # (it could not be read back before)


def test_a_device_profile_other_than_the_configs_is_refused(a_configs, h200):
    # cuDNN builds for the engine's device: the plan would target the H200 and say H100
    with pytest.raises(ValueError, match=r"^device_profile: the config was chosen for NVIDIA H200 \(SM 9.0, 132 SMs\), "
                                         r"and this profile describes NVIDIA H100.*\(they differ in deviceName"):
        build_plan(a_configs[0], device_profile="h100")
    same = DeviceProfile.bundled("h200").descriptor()  # the same device, another descriptor: taken
    assert build_plan(a_configs[0], device_profile=same).workspace_size >= 0


def test_a_negative_uid_is_matched_against_its_plan(h200):
    g = Graph("negative_uid")
    x = g.tensor([8, 64, 16, 16], layout="nhwc", uid=-5)
    w = g.tensor([32, 64, 3, 3], layout="nhwc")
    g.conv_fwd(x, w, padding=1, output=True)
    og = g.build()
    plan, _ = build_first_plan(og, device_profile=h200)
    loaded = plan_from_json(plan.to_json(), device_profile=h200, operation_graph=og)
    assert loaded.operation_graph is og  # (the check had read the JSON's "-5" as no UID)


def test_an_empty_plan_file_is_refused_naming_it(tmp_path, h200):
    empty = tmp_path / "plan.json"
    empty.write_text("\n")
    with pytest.raises(ValueError, match=r"^path: '.*plan\.json' is empty; a saved plan holds its JSON$"):
        plans.load_plan(empty, device_profile=h200)


def test_a_plan_cuDNN_refuses_without_a_reason_is_explained_by_its_engine_and_knobs():
    """A plan whose engine or knob choices are not its graph's (edited, or another graph's): cuDNN answers
    NOT_SUPPORTED with no message. The hint checks them against the graph's engine when the graph is given."""
    import json

    from cudnn_backend import patterns
    from cudnn_backend.errors import CudnnNotSupportedError
    from cudnn_backend.runtime.engines import engine_count
    from cudnn_backend.runtime.heuristics import get_configs
    from cudnn_backend.runtime.plans import build_plan, plan_from_json

    graph = patterns.matmul_bias_gelu().build()
    config = next(c for c in get_configs(graph, "A", "h200") if c.knobs)
    doc = json.loads(build_plan(config, device_profile="h200").to_json())
    count = engine_count(graph)
    first_knob = next(iter(doc["engine"]["knobChoices"]))
    for edit, with_graph in (
            (lambda d: d["engine"].__setitem__("engineId", count + 5),
             f"the plan's engineId {count + 5} is no engine of this graph (0 to {count - 1})"),
            (lambda d: d["engine"]["knobChoices"].__setitem__(first_knob, 1 << 20), "outside engine"),
    ):
        edited = copy.deepcopy(doc)
        edit(edited)
        text = json.dumps(edited)
        with pytest.raises(CudnnNotSupportedError) as e:
            plan_from_json(text, device_profile="h200")
        assert e.value.hint.startswith("cuDNN gives no reason. A plan's engine and knob choices") and \
            "loaded with its graph, operation_graph=, the plan's engine and knobs are checked" in e.value.hint, \
            e.value.hint
        with pytest.raises(CudnnNotSupportedError) as e:
            plan_from_json(text, device_profile="h200", operation_graph=graph)
        assert with_graph in e.value.hint and "rebuild the plan from the graph" in e.value.hint, e.value.hint


def test_one_config_builds_a_plan_as_often_as_asked():
    """cuDNN 9.19.0 fails a runtime-compiled config's second plan (COMPILATION_FAILED), which the refusal record then
    kept for the graph: each further plan of a config is built from a copy of it (its engine and knobs)."""
    from cudnn_backend.graph import Graph

    g = Graph("twice")
    g.matmul(g.tensor([1, 128, 64]), g.tensor([1, 64, 256]), output=True)
    og = g.build()
    config = cb.get_configs(og, "A", "h200")[0]
    plans = [cb.build_plan(config, device_profile="h200") for _ in range(3)]
    assert all(p.engine_index == config.engine_index and p.knobs == config.knobs for p in plans)
    assert cb.build_first_plan(og, device_profile="h200")[0].engine_index == config.engine_index


@pytest.mark.parametrize("where", ["alpha", "beta", "elu_alpha"])
@pytest.mark.parametrize("value", [float("inf"), -float("inf")])
def test_a_plan_with_an_infinite_blend_factor_saves_and_loads_back(where, value):
    """cuDNN writes an infinite alpha/beta as the literal Infinity and reads it back; the JSON checks take it."""
    g = cb.Graph("inf")
    x, w = g.tensor([1, 8, 8, 8], layout="nhwc"), g.tensor([8, 8, 3, 3], layout="nhwc")
    if where == "elu_alpha":
        y = g.conv_fwd(x, w, padding=1)
        g.pointwise("ELU_FWD", y, output=True, output_data_type=cb.CUDNN_DATA_HALF, elu_alpha=value)
    else:
        g.conv_fwd(x, w, padding=1, output=True, output_data_type=cb.CUDNN_DATA_HALF, **{where: value})
    plan, _ = cb.build_first_plan(g.build(), device_profile="h200")
    text = plan.to_json()
    assert ("-Infinity" if value < 0 else "Infinity") in text
    again = plan_from_json(text, device_profile="h200")
    assert again.engine_index == plan.engine_index and again.to_json() == text
