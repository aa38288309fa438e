"""Engine errata (``runtime.errata``): cudnn-frontend's sample files read unchanged and matched as cudnn-frontend
matches them (a transliteration of its ``check_rule`` below is the reference, on recorded plan tags), the package's
plan tags, the extensions, refused files, and rules written and read back. Real cuDNN, offline (bundled H200)."""
import json
import os
import warnings

import pytest

import cudnn_backend as cb
from cudnn_backend.errors import ErrataError
from cudnn_backend.runtime import errata as E
from cudnn_backend.runtime.heuristics import build_first_plan, get_configs

from tests.helpers.env import DATA, LOADED
from tests.helpers.offline import conv_bias_relu_graph, h200, matmul_relu_graph

SAMPLES = DATA / "errata"
PLAIN = SAMPLES / "frontend_block_using_errata.json"
SHAPE = SAMPLES / "frontend_block_using_errata_shape.json"
WILDCARDS = SAMPLES / "frontend_block_using_errata_shape_wildcards.json"
INT8 = SAMPLES / "frontend_dp4a_int8.json"
U64 = (1 << 64) - 1


def frontend_blocks(doc: dict, tag: str, compile_version: int) -> bool:
    """cudnn-frontend's ``check_errata`` without an operation graph (what PyTorch's ``plan_errata_exception``
    calls, with a predicate returning true), written from its C++: ``operation`` and ``engine`` read, the version
    window as uint64 (-1 is the largest), the prefix ``<operation>_eng<engine>_`` against the tag with ``_``
    appended, then every knob string a substring of the tag; the first rule that blocks decides."""
    for rule in doc["rules"]:
        start = rule.get("cudnn_version_start", 0) % (1 << 64)
        end = rule.get("cudnn_version_end", U64) % (1 << 64)
        prefix = f"{rule['operation']}_eng{rule['engine']}_"
        blocked = (tag + "_").startswith(prefix) and start <= compile_version < end
        if blocked and "knob" in rule:
            blocked = all(k in tag for k in rule["knob"])
        if blocked:
            return True
    return False


RECORDED_TAGS = [
    "ConvBwdFilter_eng20", "ConvBwdFilter_eng20_k2=1_k3=0", "ConvBwdFilter_eng2_k2=1", "ConvBwdFilter_eng200_k1=0",
    "ConvBwdFilter_ADD_eng20_k2=1", "ConvBwdData_eng1_k2=4_k3=0", "ConvBwdData_eng1_k3=0_k2=4",
    "ConvBwdData_eng1_k2=40_k3=0", "ConvBwdData_eng1_k2=4", "ConvBwdData_eng1_k2=4_k3=01", "ConvBwdData_eng10_k2=4_k3=0",
    "ConvFwd_eng0", "ConvFwd_eng0_k2=4_k3=0", "ConvFwd_eng00", "ConvFwd_ADD_RELU_FWD_eng0_k2=2", "Matmul_eng0_k2=4",
    "ConvFwd_eng1_k2=4_k3=0", "_eng20", "ConvBwdFilter_eng20_k12=-1",
]


def _doc(path):
    return json.loads(path.read_text())


# -- cudnn-frontend's sample files ------------------------------------------------------------------
@pytest.mark.parametrize("path", [PLAIN, SHAPE, WILDCARDS, INT8], ids=lambda p: p.stem)
def test_frontend_sample_files_are_read_unchanged(path):
    text = path.read_text()
    errata = E.Errata.load(path)
    doc = json.loads(text)
    assert len(errata) == len(doc["rules"]) and errata.warnings == ()
    for rule, raw in zip(errata, doc["rules"]):
        assert rule.rule_id == raw["rule_id"] and rule.operation == raw["operation"]
        assert rule.engine == raw["engine"] and rule.knobs == tuple(raw.get("knob", ()))
        assert rule.version_start == raw["cudnn_version_start"]
        assert rule.version_end == (None if raw["cudnn_version_end"] == -1 else raw["cudnn_version_end"])
        assert rule.to_dict() == raw  # written back as read
    assert errata.to_dict() == doc


@pytest.mark.parametrize("path", [PLAIN, SHAPE, WILDCARDS, INT8], ids=lambda p: p.stem)
@pytest.mark.parametrize("version", [8200, 8300, 90000, LOADED])
def test_recorded_tags_are_denied_exactly_as_cudnn_frontend_would(path, version):
    errata, doc = E.Errata.load(path), _doc(path)
    denied = 0
    for tag in RECORDED_TAGS:
        want = frontend_blocks(doc, tag, version)
        got = errata.frontend_denies(tag, version)
        assert (got is not None) == want, (tag, version)
        denied += want
    assert denied or (path == INT8 and version >= 8300)  # the tags exercise every file where its window holds


def test_the_sample_rules_on_recorded_tags_say_which_rule():
    plain = E.Errata.load(PLAIN)
    assert plain.frontend_denies("ConvBwdFilter_eng20_k2=1_k3=0", LOADED).rule_id == "ConvBwdFilter_eng20"
    assert plain.frontend_denies("ConvBwdData_eng1_k3=0_k2=4", LOADED).rule_id == "ConvBwdData_eng1_k2=2_k3=0"
    assert plain.frontend_denies("ConvBwdData_eng1_k2=40_k3=0", LOADED) is not None  # substrings, as cudnn-frontend
    assert plain.frontend_denies("ConvBwdFilter_eng200_k2=1", LOADED) is None
    int8 = E.Errata.load(INT8)
    assert int8.frontend_denies("ConvFwd_eng0_k2=1", 8200) is not None
    assert int8.frontend_denies("ConvFwd_eng0_k2=1", 8300) is None and int8.frontend_denies("ConvFwd_eng0", LOADED) is None


# -- the package's plan tags ----------------------------------------------------------------------------
def _wgrad(h=128, data_type="CUDNN_DATA_FLOAT"):
    """cudnn-frontend's errata sample graph: wgrad of X [1, 32, h, h] and a 3x3 filter, NCHW."""
    g = cb.Graph("wgrad")
    x = g.tensor([1, 32, h, h], layout="nchw", data_type=data_type, name="x")
    dy = g.tensor([1, 32, h - 2, h - 2], layout="nchw", data_type=data_type, name="dy")
    g.conv_bwd_filter(x, dy, [32, 32, 3, 3], output=True, output_data_type=data_type, name="dw")
    return g.build()


def test_plan_tags_are_cudnn_frontends():
    og = conv_bias_relu_graph().build()
    traits = E.traits_of(og)
    assert traits.tag == "ConvFwd_ADD_RELU_FWD_" and traits.operation == "ConvFwd_ADD_RELU_FWD"
    assert traits.families == ("conv", "pointwise") and traits.data_types == ("fp16",)
    assert traits.fingerprint == cb.typed.introspection.graph_fingerprint(og)
    for c in get_configs(og, "A", h200())[:8]:
        tag = E.plan_tag(traits.tag, c.engine_index, c.knobs)
        knobs = "".join(f"_k{int(k)}={v}" for k, v in c.knobs.items())  # cuDNN's order, KnobType numbers
        assert tag == f"ConvFwd_ADD_RELU_FWD_eng{c.engine_index}{knobs}"
    assert E.traits_of(_wgrad()).tag == "ConvBwdFilter_"
    mm = E.traits_of(matmul_relu_graph())
    assert mm.tag == "Matmul_RELU_FWD_" and mm.families == ("matmul", "pointwise")


def test_sample_shape_rules_match_the_sample_graph_and_no_other():
    """The shape and wildcard samples deny engine 20's plans of the sample's graph (X 1x32x128x128, W 32x32x3x3)
    and, unlike the plain sample, not those of a 64x64 input."""
    target = E.target_of(None, cb.runtime.profiles.as_deviceprop(h200()))
    tag = "ConvBwdFilter_eng20_k2=1_k3=0"
    sample, other = E.traits_of(_wgrad(128)), E.traits_of(_wgrad(64))
    assert E.Errata.load(SHAPE).deny(tag, sample, target).rule_id == "ConvBwdFilter_eng20"
    assert E.Errata.load(WILDCARDS).deny(tag, sample, target).rule_id == "ConvBwdFilter_eng20"
    assert E.Errata.load(SHAPE).deny(tag, other, target) is None
    assert E.Errata.load(WILDCARDS).deny(tag, other, target) is None
    assert E.Errata.load(PLAIN).deny(tag, other, target).rule_id == "ConvBwdFilter_eng20"
    nhwc = E.Errata.from_dict({"version": 1, "rules": [{"operation": "ConvBwdFilter", "engine": 20, "shape_format":
                                                        "NHWC", "input_shape": [-1, 128, 128, 32]}]})
    assert nhwc.deny(tag, sample, target) is not None and nhwc.deny(tag, other, target) is None


# -- a rule denies real configs -------------------------------------------------------------------------
def _rule_for(config, **extra) -> dict:
    og = config.operation_graph
    rule = {"rule_id": "planted", "operation": E.traits_of(og).operation, "engine": config.engine_index,
            "knob": E.knob_strings(config.knobs)}
    rule.update(extra)
    return {"version": 1, "rules": [rule]}


def test_heuristics_listing_marks_denied_configs_and_drops_none():
    og = conv_bias_relu_graph().build()
    plain = get_configs(og, "A", h200(), errata=False)
    errata = E.Errata.from_dict(_rule_for(plain[0], cudnn_backend={"exact_knobs": True}))
    marked = get_configs(og, "A", h200(), errata=errata)
    assert [c.key for c in marked] == [c.key for c in plain]  # none dropped
    denied = [c for c in marked if c.denied_by is not None]
    assert [c.key for c in denied] == [plain[0].key] and denied[0].denied_by.name == "planted"
    assert "denied (rule planted)" in repr(denied[0]) and denied[0].to_dict()["denied_by"] == "planted"


def test_build_first_plan_skips_a_denied_config_and_reports_it():
    og = conv_bias_relu_graph().build()
    first = get_configs(og, "A", h200(), errata=False)[0]
    errata = E.Errata.from_dict(_rule_for(first, cudnn_backend={"exact_knobs": True, "reason": "planted"}))
    plan, report = build_first_plan(og, device_profile=h200(), errata=errata)
    assert report.attempts[0].denied_by == "planted" and report.attempts[0].stage == "errata"
    assert not report.attempts[0].ok and report.attempts[0].reason == "denied (rule planted): planted"
    assert report.chosen is not report.attempts[0] and (plan.engine_index, plan.knobs) != (first.engine_index,
                                                                                          first.knobs)
    assert "denied (rule planted)" in str(report)
    plan, report = build_first_plan(og, device_profile=h200(), errata=False)
    assert report.chosen is report.attempts[0]


def test_every_config_denied_is_no_working_plan_naming_the_rule():
    og = conv_bias_relu_graph().build()
    rules = [{"rule_id": f"all{e}", "operation": "ConvFwd_ADD_RELU_FWD", "engine": e} for e in range(200)]
    with pytest.raises(cb.NoWorkingPlanError, match=r"denied \(rule all\d+\)"):
        build_first_plan(og, device_profile=h200(), errata=E.Errata.from_dict({"version": 1, "rules": rules}))


# -- the extensions ---------------------------------------------------------------------------------------
@pytest.fixture(scope="module")
def cbr():
    og = conv_bias_relu_graph().build()
    config = get_configs(og, "A", h200(), errata=False)[0]
    return og, config


@pytest.mark.parametrize("ext, denies", [
    ({"sm_start": 90, "sm_end": 91}, True), ({"sm_start": 86, "sm_end": 87}, False), ({"sm_start": 100}, False),
    ({"sm_start": 80, "sm_end": -1}, True),
    ({"runtime_version_start": LOADED, "runtime_version_end": LOADED + 1}, True),
    ({"runtime_version_start": 90000, "runtime_version_end": LOADED}, False),
    ({"data_types": ["half"]}, True), ({"data_types": ["CUDNN_DATA_HALF"]}, True), ({"data_types": ["int8"]}, False),
    ({"families": ["conv"]}, True), ({"families": ["conv", "pointwise"]}, True), ({"families": ["matmul"]}, False),
    ({"shapes": [{"operation": "CONVOLUTION_FORWARD", "tensor": "w", "dims": [32, -1, 3, 3]}]}, True),
    ({"shapes": [{"operation": "CONVOLUTION_FORWARD", "tensor": "w", "dims": [64, -1, 3, 3]}]}, False),
    ({"reason": "only words", "found_by": "a person", "evidence": [{"x": 1}]}, True),
])
def test_extensions_scope_a_rule(cbr, ext, denies):
    og, config = cbr
    errata = E.Errata.from_dict(_rule_for(config, cudnn_backend=ext))
    assert (E.deny(config, errata) is not None) == denies
    # cudnn-frontend reads the same file and ignores the extensions: its match is the tag's alone
    tag = E.plan_tag(E.traits_of(og).tag, config.engine_index, config.knobs)
    assert frontend_blocks(errata.to_dict(), tag, LOADED)


def test_fingerprint_and_exact_knobs(cbr):
    og, config = cbr
    fp = E.traits_of(og).fingerprint
    assert E.deny(config, E.Errata.from_dict(_rule_for(config, cudnn_backend={"graph_fingerprint": fp})))
    assert not E.deny(config, E.Errata.from_dict(_rule_for(config, cudnn_backend={"graph_fingerprint": "0" * 64})))
    tile = int(cb.KnobType.CUDNN_KNOB_TYPE_TILE_SIZE)
    value = config.knobs.get(cb.KnobType.CUDNN_KNOB_TYPE_TILE_SIZE)
    if value is None:
        pytest.skip("heuristics' first config has no TILE_SIZE here")
    prefix = {"version": 1, "rules": [{"operation": "ConvFwd_ADD_RELU_FWD", "engine": config.engine_index,
                                       "knob": [f"k{tile}={str(value)[:1]}"]}]}
    loose = E.Errata.from_dict(prefix)
    exact = E.Errata.from_dict(json.loads(json.dumps(prefix).replace('"]}', '"], "cudnn_backend": {"exact_knobs": '
                                                                      'true}}')))
    assert E.deny(config, loose) is not None  # a substring of k2=<value>, as cudnn-frontend matches
    assert (E.deny(config, exact) is not None) == (str(value)[:1] == str(value))


def test_target_of_the_profile_and_the_loaded_release():
    t = E.target_of(None, cb.runtime.profiles.as_deviceprop(h200()))
    assert t.sm == 90 and t.version == LOADED and "H200" in t.device


# -- bad files: refused whole, naming the rule and the field ----------------------------------------------------
GOOD = {"rule_id": "r", "operation": "ConvFwd", "engine": 3}


@pytest.mark.parametrize("doc, words", [
    ("{not json", "not JSON"),
    ("", "not JSON"),
    ("[1, 2]", "expected a JSON object"),
    ({"version": 2, "rules": [GOOD]}, "field 'version': 2 is not a version"),
    ({"version": "1", "rules": [GOOD]}, "field 'version': '1'"),
    ({"version": True, "rules": [GOOD]}, "field 'version': True"),
    ({"version": 1}, "has no 'rules'"),
    ({"version": 1, "rules": {"a": GOOD}}, "field 'rules': expected a list"),
    ({"version": 1, "rules": [GOOD, {"rule_id": "x", "operation": "ConvFwd"}]}, "rule 1 ('x'): has no 'engine'"),
    ({"version": 1, "rules": [{"engine": 1}]}, "rule 0: has no 'operation'"),
    ({"version": 1, "rules": [dict(GOOD, engine="3")]}, "rule 0 ('r'): field 'engine': expected an integer, not a string"),
    ({"version": 1, "rules": [dict(GOOD, engine=-2)]}, "field 'engine': expected an integer >= 0"),
    ({"version": 1, "rules": [dict(GOOD, engine=True)]}, "field 'engine': expected an integer, not a boolean"),
    ({"version": 1, "rules": [dict(GOOD, knob="k2=4")]}, "field 'knob': expected a list of strings"),
    ({"version": 1, "rules": [dict(GOOD, knob=["k2=4", 3])]}, "field 'knob[1]': expected a string"),
    ({"version": 1, "rules": [dict(GOOD, cudnn_version_end=-5)]}, "field 'cudnn_version_end': expected an integer >= 0"),
    ({"version": 1, "rules": [dict(GOOD, cudnn_version_start=9000, cudnn_version_end=8000)]}, "the window is empty"),
    ({"version": 1, "rules": [dict(GOOD, input_shape=[1, 2, 3, 4])]}, "field 'input_shape': needs a shape_format"),
    ({"version": 1, "rules": [dict(GOOD, shape_format="NCWH", input_shape=[1, 2, 3, 4])]}, "field 'shape_format'"),
    ({"version": 1, "rules": [dict(GOOD, shape_format="NCHW", input_shape=[1, 2, 3])]}, "expected 4 or 5 sizes"),
    ({"version": 1, "rules": [dict(GOOD, filter_shape=[1, 0, 3, 3])]}, "field 'filter_shape[1]': expected a size"),
    ({"version": 1, "rules": [dict(GOOD, cudnn_backend={"sm_start": "9.0"})]}, "'cudnn_backend.sm_start'"),
    ({"version": 1, "rules": [dict(GOOD, cudnn_backend={"families": ["convs"]})]}, "'convs' is no operation family"),
    ({"version": 1, "rules": [dict(GOOD, cudnn_backend={"data_types": ["fp17"]})]}, "'fp17' is no cuDNN data type"),
    ({"version": 1, "rules": [dict(GOOD, cudnn_backend={"sm_min": 90})]}, "'cudnn_backend.sm_min': not an extension"),
    ({"version": 1, "rules": [dict(GOOD, cudnn_backend=[1])]}, "field 'cudnn_backend': expected an object"),
    ({"version": 1, "rules": [dict(GOOD, cudnn_backend={"graph_fingerprint": "abc"})]}, "64 lower-case hex"),
    ({"version": 1, "rules": [dict(GOOD, cudnn_backend={"shapes": [{"operation": "MATMUL", "tensor": "a"}]})]},
     "exactly operation, tensor and dims"),
    ({"version": 1, "rules": [dict(GOOD, rule_id=7)]}, "field 'rule_id': expected a string"),
    ({"version": 1, "rules": [7]}, "rule 0: expected an object"),
])
def test_bad_files_are_refused_whole_naming_rule_and_field(tmp_path, doc, words):
    path = tmp_path / "bad.json"
    path.write_text(doc if isinstance(doc, str) else json.dumps(doc))
    with pytest.raises(ErrataError, match=None) as info:
        E.Errata.load(path)
    assert words in str(info.value) and str(path) in str(info.value)
    assert isinstance(info.value, ValueError)  # also a ValueError, as every bad input is


def test_huge_and_deep_files_are_refused_before_parsing(tmp_path):
    huge = tmp_path / "huge.json"
    with open(huge, "wb") as f:
        f.truncate(E.MAX_FILE_BYTES + 1)
    with pytest.raises(ErrataError, match="more than"):
        E.Errata.load(huge)
    deep = tmp_path / "deep.json"
    deep.write_text("[" * 200_000 + "]" * 200_000)
    with pytest.raises(ErrataError, match="nested deeper"):
        E.Errata.load(deep)
    shallow_but_nested = {"version": 1, "rules": [dict(GOOD, cudnn_backend={"evidence": [[[[[[[[[[[[[[[[1]]]]]]]]]]]]]]]]})]}
    deep.write_text(json.dumps(shallow_but_nested))
    with pytest.raises(ErrataError, match=f"deeper than {E.MAX_DEPTH}"):
        E.Errata.load(deep)
    with pytest.raises(ErrataError, match="not UTF-8"):
        (tmp_path / "bin.json").write_bytes(b"\xff\xfe\x00{")
        E.Errata.load(tmp_path / "bin.json")
    with pytest.raises(ErrataError, match="no such file"):
        E.Errata.load(tmp_path / "missing.json")
    with pytest.raises(ErrataError, match="rules, more than"):
        E.Errata.from_dict({"version": 1, "rules": [GOOD] * (E.MAX_RULES + 1)})


def test_warnings_do_not_refuse(tmp_path):
    rules, errors, warnings = E.check_file(text=json.dumps({"rules": [
        {"operation": "Matmul", "engine": 1, "knob": ["tile=3"], "input_shape": [1, 2, 3, 4], "shape_format": "NCHW",
         "extra": 1}, dict(GOOD), dict(GOOD)]}))
    assert not errors and len(rules) == 3
    text = "\n".join(warnings)
    for words in ("has no 'version'", "rule 0: has no rule_id", "field 'extra': not a field", "not of the form",
                  "shape filters apply to the operations", "the same rule_id as rule 1"):
        assert words in text


def test_rules_that_match_no_graph_warn_and_duplicate_keys_refuse_the_file():
    def warned(**fields):
        rules, errors, warnings = E.check_file(text=json.dumps({"version": 1, "rules": [dict(GOOD, **fields)]}))
        assert not errors and len(rules) == 1
        return "\n".join(warnings)

    # an operation is the graph's tag: operation tags joined by '_' (an untagged operation's place empty); a typo
    # matches nothing
    assert "'ConvFWD' matches no graph" in warned(operation="ConvFWD") and "did you mean ConvFwd?" in \
        warned(operation="ConvFWD")
    assert "matches no graph" in warned(operation="ConvFwd_ADD_RELUFWD")
    for fine in ("ConvFwd", "ConvFwd_ADD_RELU_FWD", "Matmul_ADD", "Dgrad_Drelu_BN_Bwd", E.ANY_OPERATION,
                 "ConvFwd_ADD_RELU_FWD_", "_ADD", "Matmul__ADD"):
        assert warned(operation=fine) == "", fine
    shapes = {"shapes": [{"operation": "CONVOLUTION_FORWARD", "tensor": "zz", "dims": [1, 2, 3, 4]}]}
    assert "'zz' is no tensor of CONVOLUTION_FORWARD (it has w, x, y)" in warned(cudnn_backend=shapes)
    _, errors, _ = E.check_file(text=json.dumps({"version": 1, "rules": [dict(GOOD, engine=2 ** 70)]}))
    assert errors and "field 'engine': expected an integer <= 9223372036854775807" in errors[0]
    # json keeps the last of two keys, silently: the rule would not be the one written
    for text, where in (('{"version": 1, "rules": [{"rule_id": "r", "operation": "ConvFwd", "engine": 32, '
                         '"engine": 999}]}', r'rules\[0\]: duplicate key "engine"'),
                        ('{"version": 1, "rules": [], "rules": []}', 'duplicate key "rules"')):
        with pytest.raises(ErrataError, match=rf"^errata text: {where}: refused$"):
            E.check_file(text=text)


def test_a_bad_errata_file_denies_nothing_and_the_environment_variable_too(tmp_path, monkeypatch):
    og = conv_bias_relu_graph().build()
    bad = tmp_path / "bad.json"
    bad.write_text('{"version": 1, "rules": [{"operation": "ConvFwd_ADD_RELU_FWD"}]}')
    with pytest.raises(ErrataError, match="has no 'engine'"):
        get_configs(og, "A", h200(), errata=bad)
    monkeypatch.setenv(E.ENV_VAR, str(bad))
    with pytest.raises(ErrataError, match=r"\$CUDNN_ERRATA_JSON_FILE: errata .*has no 'engine'"):
        build_first_plan(og, device_profile=h200())
    assert get_configs(og, "A", h200(), errata="")[0].denied_by is None  # "" turns the variable off
    monkeypatch.setenv(E.ENV_VAR, "")
    none = E.resolve()  # no file: no rules of its own, the package's known errata still apply
    assert isinstance(none, E.Errata) and len(none) == 0 and none and none.source == ""
    good = tmp_path / "good.json"
    first = get_configs(og, "A", h200(), errata=False)[0]
    good.write_text(json.dumps(_rule_for(first)))
    monkeypatch.setenv(E.ENV_VAR, str(good))
    assert get_configs(og, "A", h200())[0].denied_by.name == "planted"
    with pytest.raises(TypeError, match="errata: expected an Errata"):
        E.resolve(3)


# -- writing ------------------------------------------------------------------------------------------------
def test_new_rules_are_recorded_merged_and_read_by_both_readers(tmp_path, cbr):
    og, config = cbr
    traits, target = E.traits_of(og), E.target_of(None, config.deviceprop)
    path = tmp_path / "out.json"
    rule = E.new_rule(traits=traits, target=target, engine_index=config.engine_index, knobs=config.knobs,
                      kind="wrong result", reason="relative error 1.0e+00", evidence={"graph": "cbr"})
    E.record(path, [rule])
    E.record(path, [dict(rule, cudnn_backend=dict(rule["cudnn_backend"], evidence=[{"graph": "again"}]))])
    errata = E.Errata.load(path)
    assert len(errata) == 1 and not errata.warnings
    r = errata.rules[0]
    assert [e["graph"] for e in r.data["cudnn_backend"]["evidence"]] == ["cbr", "again"]
    assert r.sm_start == 90 and r.sm_end == 91 and r.runtime_start == LOADED and r.runtime_end == LOADED + 1
    assert r.data_types == ("fp16",) and r.families == ("conv", "pointwise") and r.exact_knobs
    assert r.reason == "wrong result: relative error 1.0e+00" and "explore --errata-out" in r.found_by
    assert E.deny(config, errata) is r
    others = get_configs(og, "A", h200(), errata=False)[1:]
    assert all(E.deny(c, errata) is None or c.key == config.key for c in others)
    # cudnn-frontend's reader: version 1, rules with operation, engine, knob strings, its window; extras ignored
    doc = json.loads(path.read_text())
    assert doc["version"] == 1
    raw = doc["rules"][0]
    assert isinstance(raw["operation"], str) and isinstance(raw["engine"], int)
    assert all(isinstance(k, str) for k in raw["knob"])
    tag = E.plan_tag(traits.tag, config.engine_index, config.knobs)
    assert frontend_blocks(doc, tag, LOADED) and not frontend_blocks(doc, tag, LOADED + 1)
    # a graph-scoped rule carries the fingerprint
    scoped = E.new_rule(traits=traits, target=target, engine_index=config.engine_index, knobs=config.knobs,
                        kind="crashed the process", reason="x", evidence={}, scope="graph")
    assert scoped["cudnn_backend"]["graph_fingerprint"] == traits.fingerprint


def test_record_never_writes_over_another_file(tmp_path):
    path = tmp_path / "notes.json"
    path.write_text('{"my": "notes"}')
    with pytest.raises(ErrataError, match="has no 'rules'"):
        E.record(path, [])
    assert path.read_text() == '{"my": "notes"}'


def test_errata_pickle_and_compare():
    import pickle

    errata = E.Errata.load(PLAIN)
    again = pickle.loads(pickle.dumps(errata))
    assert again == errata and again.digest == errata.digest and len(again) == 2
    assert E.Errata.load(SHAPE).digest != errata.digest
    err = pickle.loads(pickle.dumps(ErrataError("m", "s", ("a",))))
    assert err.source == "s" and err.problems == ("a",)
    assert os.fspath(PLAIN) in repr(errata)


def test_shape_filters_of_a_rule_for_a_chain_warn_as_the_file_is_loaded(tmp_path):
    """cudnn-frontend reads input_shape and filter_shape for a lone convolution's tag only: a rule for a chain
    denies every shape, which the loader says once and the rule's text shows."""
    path = tmp_path / "chain.json"
    path.write_text(json.dumps({"version": 1, "rules": [{"rule_id": "r1", "operation": "ConvFwd_ADD_RELU_FWD",
                                                         "engine": 32, "shape_format": "NCHW",
                                                         "input_shape": [1, 2, 3, 4]}]}))
    with pytest.warns(UserWarning, match=r"rule 0 \('r1'\): shape filters apply to the operations ConvFwd, "
                                         r"ConvBwdData, ConvBwdFilter only; .* so the rule denies every shape"):
        errata = E.resolve(str(path))
    assert "input [1, 2, 3, 4] NCHW (ignored: shape filters apply to a lone convolution)" in errata.rules[0].describe()
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        assert E.resolve(str(path)) is errata  # said once a file
