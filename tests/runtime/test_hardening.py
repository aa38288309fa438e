"""Hardening of the runtime: races on close(), serialized plans / kernel caches / device profiles that
crash cuDNN 9.19, foreign exceptions, argument types, pickling, knob -1, the memory of refused runtime-compiled
configs, and interpreter exit while daemon threads build runtime-compiled plans.

Everything that could crash runs in a child process (``tests.helpers.crash``) that reports the signal.
"""
import copy
import json
import math
import pickle

import pytest

import cudnn_backend as cb
from cudnn_backend.errors import JsonCheckError
from cudnn_backend.runtime import plans
from cudnn_backend.runtime.engines import EngineInfo, list_engines, make_config
from cudnn_backend.runtime.execution import VariantPack
from cudnn_backend.runtime.heuristics import NoWorkingPlanError, build_first_plan, get_configs
from cudnn_backend.runtime.plans import (
    build_plan,
    forget_refusals,
    kernel_cache_json,
    make_kernel_cache,
    plan_from_json,
    refused,
)
from cudnn_backend.runtime.profiles import DeviceProfile, DeviceProfileError
from cudnn_backend.typed import ExecutionPlan

from tests.helpers.crash import assert_survives, run_python
from tests.helpers.env import LOADED
from tests.helpers.offline import conv_graph, h200, matmul_relu_graph, offline_plan

FOREIGN = (AttributeError, OverflowError, RecursionError, UnicodeDecodeError, ZeroDivisionError, IndexError,
           MemoryError, UnicodeEncodeError, KeyError, SystemError)


def refused_with(call, exc, match):
    """The call raises ``exc`` (a CudnnBackendError or a TypeError/ValueError) matching ``match``; never a foreign
    exception (AttributeError, OverflowError, RecursionError, UnicodeDecodeError, ...)."""
    with pytest.raises(exc, match=match) as info:
        call()
    assert isinstance(info.value, (cb.CudnnBackendError, TypeError, ValueError)), repr(info.value)
    assert not isinstance(info.value, FOREIGN) or isinstance(info.value, cb.CudnnBackendError), repr(info.value)
    return info.value


@pytest.fixture(scope="module")
def conv_plan():
    return offline_plan(conv_graph())


@pytest.fixture(scope="module")
def matmul_plan_json():
    return offline_plan(matmul_relu_graph()).to_json()


def _mutated(text, change):
    doc = json.loads(text)
    change(doc)
    return json.dumps(doc, separators=(",", ":"))


# ---------------------------------------------------------------------------------------------
# close() from two threads at once
# ---------------------------------------------------------------------------------------------
def test_two_threads_close_one_plan_and_one_variant_pack_200_rounds():
    assert_survives("""
        from cudnn_backend.runtime.execution import VariantPack
        from cudnn_backend.runtime.plans import plan_from_json
        from tests.helpers.offline import conv_graph, h200, offline_plan
        from tests.helpers.races import close_race
        text = offline_plan(conv_graph()).to_json()
        errors = []
        for i in range(200):
            plan = offline_plan(conv_graph()) if i % 40 == 0 else plan_from_json(text, device_profile=h200())
            pack = VariantPack(plan, {1: 0x10000, 2: 0x20000, 3: 0x30000}, workspace=0x40000)
            errors += close_race(pack.close, [lambda: pack.uids])
            errors += close_race(plan.close, [lambda: plan.descriptor.get_keyword("workspace_size")])
            assert pack.closed and plan.closed
        assert not errors, errors[:3]
        print("ok")
        """, expect_stdout="ok", timeout=300)


def test_a_variant_pack_closed_while_threads_read_and_rebind_its_slots():
    # close() destroys the descriptor without the GIL; it used to free the slot arrays there too, while other
    # threads read them (pointers) or wrote them (rebind_pointers) under the GIL: a use-after-free, SIGSEGV (the
    # API fuzz's thread cases found it, about one run of 3000 cases in five)
    assert_survives("""
        from cudnn_backend.runtime.execution import VariantPack
        from tests.helpers.offline import conv_graph, offline_plan
        from tests.helpers.races import close_race
        plan = offline_plan(conv_graph())
        errors = []
        for _ in range(1500):
            pack = VariantPack(plan, {1: 0x10000, 2: 0x20000, 3: 0x30000}, workspace=0x40000)
            errors += close_race(pack.close, [lambda: pack.rebind_pointers((0x50000, 0x60000, 0x70000)),
                                              lambda: pack.pointers, lambda: pack.data_pointers, lambda: pack.uids],
                                 calls=5)
            assert pack.closed
        assert not errors, errors[:3]
        print("ok")
        """, expect_stdout="ok", timeout=300)


# ---------------------------------------------------------------------------------------------
# serialized plans, kernel caches, device profiles
# ---------------------------------------------------------------------------------------------
def test_tensor_reference_cudnn_1_is_refused(conv_plan):
    text = conv_plan.to_json().replace('"X":"1"', '"X":"CUDNN_1"')
    e = refused_with(lambda: plan_from_json(text, device_profile=h200()), JsonCheckError,
                     r'operationGraph.nodes\[0\].X: expected a tensor name, a decimal int64 string like "1", got '
                     r'"CUDNN_1"')
    assert e.path == "operationGraph.nodes[0].X" and e.kind == "plan"


@pytest.mark.parametrize("value", [0, {}, [2], "2", None, -1, 2.0, True, 2 ** 63])
def test_matmul_plan_operand_dims_are_refused_naming_the_field(matmul_plan_json, value):
    """cuDNN 9.19's runtime-compiled matmul engine divides by these (SIGFPE) or crashes reading them."""
    def change(doc):
        doc["operationGraph"]["tensors"][1]["dim"][0] = value
    e = refused_with(lambda: plan_from_json(_mutated(matmul_plan_json, change), device_profile=h200()), ValueError,
                     r"operationGraph\.tensors\[1\]\.dim\[0\]: expected an integer in \[1, 9223372036854775807\]")
    assert isinstance(e, JsonCheckError)


@pytest.fixture(scope="module")
def kernel_cache_text():
    graph = matmul_relu_graph(dynamic=True)
    cache = make_kernel_cache(graph)
    build_plan(get_configs(graph, "A", h200())[0], device_profile=h200(), kernel_cache=cache)
    text = kernel_cache_json(cache)
    assert json.loads(text)["kernel_cache"]
    return text


def test_kernel_cache_nested_key_graph_is_checked(kernel_cache_text):
    def change(doc):
        doc["kernel_cache"][0]["key"]["operationGraph"]["nodes"][0]["matA"] = "CUDNN_1"
    text = _mutated(kernel_cache_text, change)
    refused_with(lambda: make_kernel_cache(matmul_relu_graph(dynamic=True), text), JsonCheckError,
                 r"kernel cache JSON: kernel_cache\[0\]\.key\.operationGraph\.nodes\[0\]\.matA: expected a tensor name")


@pytest.mark.parametrize("key_type", [3, 4, -1, 2 ** 31 - 1])
def test_kernel_cache_key_types_outside_cudnns_enum_are_refused(kernel_cache_text, key_type):
    def change(doc):
        doc["kernel_cache"][0]["key"]["type"] = key_type
    text = _mutated(kernel_cache_text, change)
    refused_with(lambda: make_kernel_cache(matmul_relu_graph(dynamic=True), text), JsonCheckError,
                 r"kernel_cache\[0\]\.key\.type: expected an integer in \[0, 2\]")


def test_a_real_kernel_cache_restores(kernel_cache_text):
    restored = make_kernel_cache(matmul_relu_graph(128, dynamic=True), kernel_cache_text)
    assert restored.finalized


DEEP = "[" * 200_000 + "]" * 200_000


def test_200000_levels_of_brackets_are_refused(conv_plan, kernel_cache_text):
    refused_with(lambda: plan_from_json(DEEP, device_profile=h200()), JsonCheckError, "nested deeper than 32 levels")
    refused_with(lambda: plan_from_json(conv_plan.to_json()[:-1] + ',"zz":' + DEEP + "}", device_profile=h200()),
                 JsonCheckError, "nested deeper than 32 levels")
    refused_with(lambda: make_kernel_cache(matmul_relu_graph(dynamic=True), DEEP), JsonCheckError, "nested deeper")
    refused_with(lambda: DeviceProfile.from_json(DEEP, 91900), DeviceProfileError, "nested too deeply")
    refused_with(lambda: DeviceProfile(DEEP, 91900), DeviceProfileError, "nested deeper than 32 levels")
    refused_with(lambda: plan_from_json("[" * 200_000, device_profile=h200()), JsonCheckError, "not valid JSON")


def test_200000_levels_on_a_thread_with_a_256_kib_stack():
    assert_survives("""
        import threading
        import cudnn_backend as cb
        from cudnn_backend.runtime.plans import plan_from_json, make_kernel_cache
        from cudnn_backend.runtime.profiles import DeviceProfile
        from tests.helpers.offline import h200, matmul_relu_graph
        deep = "[" * 200000 + "]" * 200000
        profile, graph = h200(), matmul_relu_graph(dynamic=True)  # made on the main thread
        out = []
        def run():
            for call in (lambda: plan_from_json(deep, device_profile=profile),
                         lambda: make_kernel_cache(graph, deep),
                         lambda: DeviceProfile.from_json(deep, 91900),
                         lambda: DeviceProfile(deep, 91900)):
                try:
                    call()
                except cb.CudnnBackendError as e:
                    out.append(type(e).__name__)
        threading.stack_size(256 * 1024)
        t = threading.Thread(target=run)
        t.start(); t.join()
        print(",".join(out))
        """, expect_stdout="JsonCheckError,JsonCheckError,DeviceProfileError,DeviceProfileError", timeout=120)


@pytest.mark.parametrize("length", [256, 300])
def test_device_names_of_256_bytes_or_more_are_refused(conv_plan, length):
    """cuDNN 9.19: a 256-byte deviceName is a double free at exit, 300 bytes bad_alloc / SIGSEGV."""
    profile = json.loads(h200().deviceprop_json)
    profile["deviceName"] = "x" * length
    refused_with(lambda: DeviceProfile(json.dumps(profile), h200().cudnn_version), DeviceProfileError,
                 f"deviceName: expected at most 255 bytes of UTF-8, got {length}")
    refused_with(lambda: DeviceProfile.from_json(json.dumps(profile), h200().cudnn_version), DeviceProfileError, "deviceName")

    def change(doc):
        doc["GPUProfile"]["deviceName"] = "x" * length
    refused_with(lambda: plan_from_json(_mutated(conv_plan.to_json(), change), device_profile=h200()), JsonCheckError,
                 f"GPUProfile.deviceName: expected at most 255 bytes of UTF-8, got {length}")


def test_a_255_byte_device_name_survives_interpreter_exit():
    assert_survives("""
        import json
        from cudnn_backend.runtime.profiles import DeviceProfile
        from tests.helpers.offline import h200
        doc = json.loads(h200().deviceprop_json)
        doc["deviceName"] = "x" * 255
        print(DeviceProfile(json.dumps(doc), h200().cudnn_version).descriptor().finalized)
        """, expect_stdout="True", timeout=120)


# ---------------------------------------------------------------------------------------------
# foreign exceptions
# ---------------------------------------------------------------------------------------------
class LyingLen:
    def __len__(self):
        return 2 ** 62

    def __iter__(self):
        return iter([1, 2])

    def __getitem__(self, i):
        return 1


def test_malformed_plans_raise_only_our_errors(conv_plan):
    text = conv_plan.to_json()
    assert f'"cudnnVersion":{LOADED}' in text  # the two cases that replace it below
    profile = h200()
    cases = [
        ('{"engine":{},"GPUProfile":[1]}', "plan JSON: "),
        (_mutated(text, lambda d: d["engine"].__setitem__("knobChoices", 5)), "engine.knobChoices: expected an object"),
        (text.replace(f'"cudnnVersion":{LOADED}', '"cudnnVersion":1e400'), "cudnnVersion: expected an integer"),
        (text.replace(f'"cudnnVersion":{LOADED}', '"cudnnVersion":Infinity'), "cudnnVersion: expected an integer"),
        (text.replace("NVIDIA H200", "NVIDIA \ud800"), "not valid Unicode"),
        (text.encode().replace(b"NVIDIA H200", b"NVIDIA \xed\xa0\x80"), "not UTF-8"),
        ("\ud800", "not valid Unicode"), ("", "the plan JSON is empty"), (" \n", "the plan JSON is empty"),
        (b"\x80\x81", "not UTF-8"),
    ]
    for bad, match in cases:
        refused_with(lambda: plan_from_json(bad, device_profile=profile), (TypeError, ValueError), match)
    refused_with(lambda: plan_from_json(LyingLen(), device_profile=profile), TypeError, r"text: expected the plan JSON \(Plan.to_json\(\)\) \(str or bytes\), not LyingLen")
    refused_with(lambda: plan_from_json(text), ValueError, "needs handle= .* or device_profile=")
    refused_with(lambda: plans.plan_json_info('{"engine":{"engineId":1,"knobChoices":{"CUDNN_KNOB_TYPE_TILE_SIZE":'
                                              '1e400}}}'), ValueError, "not a serialized cuDNN execution plan")


def test_malformed_profiles_raise_only_our_errors(tmp_path):
    wrapped = json.dumps({"format": "cudnn_backend.device_profile", "cudnn_version": 91900,
                          "deviceprop": json.loads(h200().deviceprop_json)})
    for version in ("Infinity", "-Infinity", "NaN", "1e400", '"\\ud800"', "true", "[]", "91900.5"):
        refused_with(lambda: DeviceProfile.from_json(wrapped.replace("91900", version, 1)), DeviceProfileError,
                     "cudnn_version")
    # a wrapper member written twice, a filled member the deviceprop lacks, a source that is no short text
    refused_with(lambda: DeviceProfile.from_json(wrapped.replace('"format"', '"cudnn_version": 92801, "format"', 1)),
                 DeviceProfileError, r'^the device profile: duplicate key "cudnn_version"$')
    refused_with(lambda: DeviceProfile.from_json(wrapped.replace('"deviceName"', '"deviceName": "X", "deviceName"', 1)),
                 DeviceProfileError, r'^the device profile: deviceprop: duplicate key "deviceName"$')
    text, release = h200().deviceprop_json, h200().cudnn_version
    refused_with(lambda: DeviceProfile(text, cudnn_version=release, filled={"bogus": "given"}), DeviceProfileError,
                 r"^filled: 'bogus' is no member of the deviceprop$")
    refused_with(lambda: DeviceProfile(text, cudnn_version=release, source=5), TypeError, r"^source: expected a str")
    refused_with(lambda: DeviceProfile(text, cudnn_version=release, source="s" * 5000), DeviceProfileError,
                 r"^source: 5,000 characters")
    # an integer past the interpreter's digit limit: said as one, without the advice to raise the limit
    digits = "9" * 5000
    refused_with(lambda: DeviceProfile.from_json(wrapped.replace("91900", digits, 1)), DeviceProfileError,
                 "not valid JSON: an integer of 5,000 digits, more than 4,300: no member holds such a number$")
    refused_with(lambda: plan_from_json('{"cudnnVersion": ' + digits + '}', device_profile=h200()), ValueError,
                 r"not valid JSON \(an integer of 5,000 digits, more than 4,300: no member holds such a number\)$")
    binary = tmp_path / "binary_cudnn91900.json"
    binary.write_bytes(bytes(range(256)) * 4)
    refused_with(lambda: DeviceProfile.load(binary), DeviceProfileError, "not UTF-8 text")
    huge = tmp_path / "huge_cudnn91900.json"
    huge.write_bytes(b" " * (2 << 20))
    refused_with(lambda: DeviceProfile.load(huge), DeviceProfileError, "a device profile is about 1 KB")
    refused_with(lambda: DeviceProfile.load(tmp_path / "\ud800.json"), ValueError, "device profile: .* no file name")
    refused_with(lambda: DeviceProfile.load(str(tmp_path / "nul\x00.json")), ValueError, "device profile: a file path cannot")
    refused_with(lambda: DeviceProfile.load(5), TypeError, "device profile: expected a file path")
    refused_with(lambda: h200().save(tmp_path / "\ud800.json"), ValueError, "path: ")
    refused_with(lambda: DeviceProfile(h200().deviceprop_json, cudnn_version=math.inf), DeviceProfileError,
                 "cudnn_version")
    refused_with(lambda: DeviceProfile(h200().deviceprop_json.replace("NVIDIA H200", "\ud800"), h200().cudnn_version),
                 DeviceProfileError, "not valid Unicode")


def test_plan_files_with_strange_paths(conv_plan, tmp_path):
    refused_with(lambda: conv_plan.save(tmp_path / "\ud800.json"), ValueError, "path: .* no file name")
    refused_with(lambda: plans.load_plan(tmp_path / "\udcff\ud800.json", device_profile=h200()), ValueError, "path: ")
    refused_with(lambda: plans.load_plan(tmp_path / "missing.json", device_profile=h200()), ValueError, "cannot read")
    assert plans.load_plan(conv_plan.save(tmp_path / "plan.json"), device_profile=h200()).engine_index == \
        conv_plan.engine_index


def test_numbers_are_never_floats_or_bools():
    og = conv_graph()
    profile = h200()
    refused_with(lambda: get_configs(og, 1.5, profile), TypeError, "mode: expected an integer, not float")
    refused_with(lambda: get_configs(og, "A", profile, sm_count_target=1.5), TypeError,
                 "sm_count_target: expected an integer, not float")
    refused_with(lambda: get_configs(og, "A", profile, sm_count_target=True), TypeError, "sm_count_target")
    refused_with(lambda: build_first_plan(og, device_profile=profile, max_workspace=1.5), TypeError,
                 "max_workspace: expected an integer, not float")
    refused_with(lambda: build_first_plan(og, device_profile=profile, max_attempts="3"), TypeError, "max_attempts")
    config = get_configs(og, "A", profile)[0]
    refused_with(lambda: build_plan(config, device_profile=profile, run_only_intermediate_uids=[1.5]), TypeError,
                 "run_only_intermediate_uids: expected an integer, not float")
    refused_with(lambda: make_config(list_engines(og, profile, supported_only=True)[0], {"TILE_SIZE": 1.5}),
                 (TypeError, cb.errors.EngineError), "knob TILE_SIZE|has no knob")

    class RaisingLen:  # the API fuzz's: its truth (len) raises
        def __len__(self):
            raise OverflowError("len overflows")

        def __iter__(self):
            return iter([])

    class NegativeLen(RaisingLen):
        def __len__(self):
            return -1

    engine = list_engines(og, profile, supported_only=True)[0]
    # read as user_sequence reads every caller's sequence: element by element, its __len__ never asked (these
    # iterate to nothing: no knobs, as for []), never a foreign exception
    for knobs in (RaisingLen(), NegativeLen()):
        for check in (True, False):
            assert make_config(engine, knobs, check=check).knobs == make_config(engine, [], check=check).knobs


def test_variant_packs_refuse_hostile_buffers(conv_plan):
    class BadIndex:
        def __index__(self):
            raise OverflowError("no")

    for buffers, exc, match in (({1: 0x10000, 2: 0x20000, 3: -1}, ValueError, "UID 3"),
                                ({1: 0x10000, 2: 0x20000, 3: 2 ** 64}, ValueError, "UID 3"),
                                ({1: 0x10000, 2: 0x20000, 3: 1.5}, TypeError, "UID 3"),
                                ({1: 0x10000, 2: 0x20000, 3: BadIndex()}, TypeError, "UID 3"),
                                ({1: 0x10000, 2: 0x20000, 3: "0x30000"}, TypeError, "UID 3"),
                                ({True: 0x10000, 2: 0x20000, 3: 0x30000}, TypeError, "not a bool")):
        refused_with(lambda: VariantPack(conv_plan, buffers, workspace=0x40000), exc, match)
    pack = VariantPack(conv_plan, {1: 0x10000, 2: 0x20000, 3: 0x30000}, workspace=0x40000)
    refused_with(lambda: pack.rebind_pointers(LyingLen()), (TypeError, ValueError), "pointer")
    refused_with(lambda: pack.rebind_pointers([0x10000, 0x20000, "x"]), TypeError, "UID 3|pointer|buffer")


# ---------------------------------------------------------------------------------------------
# pickling and copying
# ---------------------------------------------------------------------------------------------
def test_live_runtime_objects_refuse_pickling_naming_the_class(conv_plan):
    config = get_configs(conv_graph(), "A", h200())[0]
    pack = VariantPack(conv_plan, {1: 0x10000, 2: 0x20000, 3: 0x30000}, workspace=0x40000)
    for obj, name in ((conv_plan, "Plan"), (config, "Config"), (pack, "VariantPack"),
                      (conv_plan.descriptor, "ExecutionPlan"), (config.descriptor, "EngineConfig")):
        refused_with(lambda: pickle.dumps(obj), TypeError, rf"cannot pickle an? {name}")
    for obj, name in ((conv_plan, "Plan"), (config, "Config")):  # a copy is refused in its own words
        for copier in (copy.copy, copy.deepcopy):
            refused_with(lambda: copier(obj), TypeError, rf"^cannot copy a {name}: it holds live cuDNN descriptors; "
                                                         r"(plan|config)\.to_")


def test_device_profiles_pickle_and_deep_copy():
    profile = h200()
    profile.descriptor()  # a cached descriptor is left behind
    for clone in (pickle.loads(pickle.dumps(profile)), copy.deepcopy(profile), copy.copy(profile)):
        assert clone == profile and clone is not profile
        assert clone.descriptor().finalized and clone.descriptor() is not profile.descriptor()
        assert len(get_configs(conv_graph(), "A", clone)) > 0


def test_engine_infos_and_reports_pickle_as_plain_data():
    og = conv_graph()
    info = list_engines(og, h200(), supported_only=True)[0]
    back = pickle.loads(pickle.dumps(info))
    assert isinstance(back, EngineInfo) and back.engine is None and back.knobs == info.knobs
    _, report = build_first_plan(og, device_profile=h200())
    plain = pickle.loads(pickle.dumps(report.plain()))
    assert plain.to_rows() == report.to_rows()


# ---------------------------------------------------------------------------------------------
# knob -1
# ---------------------------------------------------------------------------------------------
def test_knob_value_minus_one_means_unset():
    og = conv_graph()
    info = next(i for i in list_engines(og, h200(), supported_only=True) if i.knobs)
    spec = info.knobs[0]
    config = make_config(info, {spec.knob_type: -1})
    assert config.knobs.get(spec.knob_type, -1) == -1
    plan = build_plan(config, device_profile=h200())
    assert plan.descriptor.finalized
    refused_with(lambda: make_config(info, {spec.knob_type: -2}), cb.errors.EngineError, r"or -1 for the engine's default")
    assert spec.check(-1) == -1


# ---------------------------------------------------------------------------------------------
# refused runtime-compiled configs are not rebuilt
# ---------------------------------------------------------------------------------------------
def test_a_refused_runtime_compiled_config_is_not_built_again(refusing, monkeypatch):
    graph, config, sm80_profile = refusing
    finalized = []

    class CountingPlan(ExecutionPlan):
        def finalize(self, check_required=True):
            finalized.append(self)
            return super().finalize(check_required)

    monkeypatch.setattr(plans, "ExecutionPlan", CountingPlan)
    with pytest.raises(cb.CudnnError) as first:
        build_plan(config, device_profile=sm80_profile)
    assert "COMPILATION_FAILED" in first.value.status.name and len(finalized) == 1
    assert refused(config, device_profile=sm80_profile).reason == first.value.reason
    for _ in range(300):  # remembered: cuDNN (which keeps ~7 KB per refusal) is not asked again
        with pytest.raises(cb.CudnnError) as again:
            build_plan(config, device_profile=sm80_profile)
        assert again.value is not first.value and again.value.reason == first.value.reason
    assert len(finalized) == 1
    assert refused(config, device_profile=h200()) is None  # another device: cuDNN is asked there
    try:
        build_plan(config, device_profile=h200())
    except cb.CudnnError:
        pass  # (cuDNN 9.19 may refuse it there too now: what counts is that it was asked)
    assert len(finalized) == 2
    with pytest.raises(cb.CudnnError) as retried:
        build_plan(config, device_profile=sm80_profile, retry_refused=True)
    assert retried.value is not first.value and len(finalized) == 3
    forget_refusals()
    assert refused(config, device_profile=sm80_profile) is None


def test_build_first_plan_reports_a_remembered_refusal_without_asking_cudnn(refusing, monkeypatch):
    graph, config, sm80_profile = refusing
    with pytest.raises(NoWorkingPlanError) as first:
        build_first_plan(graph, device_profile=sm80_profile, prefer=[config], modes=(), fallback=False)
    tried = [a for a in first.value.report if a.stage == "plan"]
    assert tried and all("COMPILATION_FAILED" in a.reason for a in tried)
    finalized = []

    class CountingPlan(ExecutionPlan):
        def finalize(self, check_required=True):
            finalized.append(self)
            return super().finalize(check_required)

    monkeypatch.setattr(plans, "ExecutionPlan", CountingPlan)
    with pytest.raises(NoWorkingPlanError) as second:
        build_first_plan(graph, device_profile=sm80_profile, prefer=[config], modes=(), fallback=False)
    assert finalized == []  # every config was refused before: cuDNN compiled nothing this time
    assert [a.reason for a in second.value.report if a.stage == "plan"] == [a.reason for a in tried]


# ---------------------------------------------------------------------------------------------
# interpreter exit while daemon threads build runtime-compiled plans
# ---------------------------------------------------------------------------------------------
def test_exit_while_daemon_threads_build_runtime_compiled_plans():
    """The atexit hook refuses new cuDNN calls and waits for those in flight: no crash at exit, 6 runs."""
    code = """
        import threading, time
        import cudnn_backend as cb
        from cudnn_backend.runtime.heuristics import get_configs
        from cudnn_backend.runtime.plans import build_plan
        from tests.helpers.offline import h200, matmul_relu_graph
        profile = h200()
        started = threading.Event()
        def work(m):
            graph = matmul_relu_graph(64 + 16 * m)
            config = get_configs(graph, "A", profile)[0]
            started.set()
            while True:
                try:
                    build_plan(config, device_profile=profile, retry_refused=True)
                except cb.CudnnShutdownError:
                    return
        for m in range(3):
            threading.Thread(target=work, args=(m,), daemon=True).start()
        started.wait(60)
        time.sleep(0.3)
        print("exiting", flush=True)
        """
    for run in range(6):
        out = run_python(code, timeout=180)
        assert out.returncode == 0 and out.stdout.strip() == "exiting", f"run {run}: {out.describe()}"


def test_flag_parameters_take_only_a_bool_naming_the_parameter(tmp_path):
    """"no" or 0 given for a flag would act as its truth value (a filter or a check silently on or off)."""
    from cudnn_backend.runtime import errata
    from cudnn_backend.runtime.engines import inspect_engine_descriptor, iter_configs

    g, dp = matmul_relu_graph(), h200()
    engine = next(i for i in list_engines(g, dp) if i.supported)
    calls = {
        "supported_only": lambda v: list_engines(g, dp, supported_only=v),
        "probe_configs": lambda v: inspect_engine_descriptor(engine.live_engine(), probe_configs=v),
        "check": lambda v: make_config(engine, check=v),
        "finalize": lambda v: make_config(engine, finalize=v),
        "skip_unsupported": lambda v: iter_configs(engine, skip_unsupported=v),  # (before the first config)
        "fallback": lambda v: build_first_plan(g, device_profile=dp, fallback=v),
        "lock": lambda v: errata.record(tmp_path / "errata.json", [], lock=v),
    }
    for name, call in calls.items():
        for bad in ("no", 0, None):
            refused_with(lambda: call(bad), TypeError, f"^{name}: expected True or False, not ")
    with pytest.raises(TypeError, match="^check: expected True or False, not int"):
        engine.config(check=1)
    assert not (tmp_path / "errata.json").exists()
