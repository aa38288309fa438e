"""The package's known errata (cudnn_backend/data/known_errata.json): configs cuDNN releases compute wrong, denied
wherever errata are honoured, with no file given. Offline, on the real cuDNN of each release in the matrix.

The rules so far, each wrong on an H200 and visible offline in the compiled kernel's parameters (the tensor's layout
as the kernel reads it):

* from cuDNN 9.20, engine 1 of a graph of pointwise operations is offered for a tensor whose strides leave gaps, and
  reads it as if it were packed (wrong with 9.28.1 for every data type);
* from cuDNN 9.11, engine 7 of a convolution over FP8 tensors in NCHW reads them as NHWC (wrong with 9.19.0 and
  9.28.1; 9.10.2 offers no engine for them);
* from cuDNN 9.11, engine 71 of a convolution over INT8 tensors in NCHW reads them as NHWC (wrong with 9.19.0 and
  9.28.1; 9.10.2 offers no engine 71 for them).

Three more, wrong on an H200 with nothing to see offline (tests/gpu/tune/test_known_errata_gpu.py runs them):
engine 7 of the composite attention backward computes dK and dQ wrong with 9.19.0 (KERNEL_CFG 26 and 28, offered up
to 9.22.0 at least), right with 9.28.1, whose engine 7 has other knobs; engine 4 of a weight gradient followed by
pointwise operations, and engine 2 of one followed by GEN_STATS, compute wrong with 9.19.0 and 9.28.1."""
from __future__ import annotations

import base64
import json
import struct

import pytest

import cudnn_backend as cb
from cudnn_backend._bindings.enums import DataType
from cudnn_backend.errors import ErrataError, NoWorkingPlanError
from cudnn_backend.graph import Graph, shapes
from cudnn_backend.patterns import matmul_bias_relu, sdpa_composite_bwd
from cudnn_backend.tune.catalogue import chain_graph
from cudnn_backend.runtime import errata as E
from cudnn_backend.runtime.heuristics import build_first_plan, get_configs
from cudnn_backend.runtime.plans import build_plan
from cudnn_backend.tune.support import support_matrix
from tests.helpers.env import LOADED

DIMS = [2, 8, 4, 6]
PACKED = shapes.layout_strides(DIMS, "nhwc")  # [192, 1, 48, 8]
GAPPED = [384, 1, 96, 16]  # every other W of an NHWC array twice as wide
RULE = "pointwise_gapped_strides_eng1"
F32 = DataType.CUDNN_DATA_FLOAT


def _scale_graph(x_strides, data_type=DataType.CUDNN_DATA_HALF, op="CUDNN_POINTWISE_MUL"):
    g = Graph("x_times_s", io_data_type=F32, compute_data_type=F32)
    x = g.tensor(DIMS, x_strides, data_type, name="x")
    y = g.tensor(DIMS, PACKED, F32, name="y")
    if op == "CUDNN_POINTWISE_MUL":
        s = g.tensor([1, 1, 1, 1], [1, 1, 1, 1], F32, by_value=True, name="s")
        g.pointwise(op, x, s, output=y)
    else:
        g.pointwise(op, x, output=y)
    return g.build(), x.uid


@pytest.mark.parametrize(("dims", "strides", "gapped"), [
    (DIMS, PACKED, False), (DIMS, [192, 24, 6, 1], False), (DIMS, [384, 1, 96, 16], True),
    (DIMS, [256, 32, 8, 1], True), ([1, 8, 1, 1], [8, 1, 8, 8], False), (DIMS, [0, 1, 0, 0], False),
    (DIMS, [0, 1, 0, 16], True), ([4, 1, 6], [6, 99, 1], False), (None, None, False)])
def test_gaps_are_found_whatever_the_axis_order(dims, strides, gapped):
    assert E.has_gaps(dims, strides) is gapped


@pytest.mark.parametrize(("dims", "strides", "first"), [
    ([2, 8, 4, 6], [192, 24, 6, 1], True), ([2, 8, 4, 6], [192, 1, 48, 8], False), ([2, 1, 4, 6], [24, 24, 6, 1], False),
    ([2, 8, 3, 4, 6], [576, 72, 24, 6, 1], True), ([8, 6], [6, 1], False), (None, None, False)])
def test_channels_first_is_nchw_with_more_than_one_channel(dims, strides, first):
    assert E.is_channels_first(dims, strides) is first


# the channels-first rules: (data type, the engine that reads NCHW as NHWC, the rule's id)
CHANNELS_FIRST = [(DataType.CUDNN_DATA_FP8_E4M3, 7, "conv_fp8_e4m3_channels_first_eng7"),
                  (DataType.CUDNN_DATA_FP8_E5M2, 7, "conv_fp8_e5m2_channels_first_eng7"),
                  (DataType.CUDNN_DATA_INT8, 71, "conv_int8_channels_first_eng71")]


def _conv(layout, data_type=DataType.CUDNN_DATA_FP8_E4M3):
    n, c, h, w, k = 2, 8, 4, 6, 8
    compute = DataType.CUDNN_DATA_INT32 if data_type == DataType.CUDNN_DATA_INT8 else F32
    g = Graph("conv", io_data_type=F32, compute_data_type=compute)
    x = g.tensor([n, c, h, w], shapes.layout_strides([n, c, h, w], layout), data_type, name="x")
    wt = g.tensor([k, c, 3, 3], shapes.layout_strides([k, c, 3, 3], layout), data_type, name="w")
    g.conv_fwd(x, wt, padding=1, output=True, output_data_type=F32, name="y")
    return g.build(), x.uid


@pytest.mark.parametrize(("data_type", "engine", "rule"), CHANNELS_FIRST)
def test_the_engine_over_nchw_is_denied_and_nhwc_keeps_it(data_type, engine, rule):
    og, _ = _conv("nchw", data_type)
    configs = get_configs(og, "A", "h200", raise_if_empty=False)
    if not any(c.engine_index == engine for c in configs):
        pytest.skip(f"cuDNN {cb.get_version()} offers no engine {engine} for a {data_type.name} convolution in NCHW")
    assert all(c.denied_by is not None and c.denied_by.name == rule for c in configs if c.engine_index == engine)
    nhwc, _ = _conv("nhwc", data_type)
    plan, _ = build_first_plan(nhwc, device_profile="h200")
    assert plan.engine_index == engine


@pytest.mark.skipif(LOADED < 91100, reason="cuDNN 9.10 offers no engine 7 or 71 for these convolutions in NCHW")
@pytest.mark.parametrize(("data_type", "engine", "rule"), CHANNELS_FIRST[::2])
def test_the_channels_first_errata_still_hold_in_the_loaded_release(data_type, engine, rule):
    """The evidence, offline: the engine's kernel for x in NCHW gets the parameters of x in NHWC. When this fails, the
    loaded release reads the NCHW layout: measure it on a GPU and end the rule's window there."""
    got = {}
    for layout in ("nchw", "nhwc"):
        og, x_uid = _conv(layout, data_type)
        config = next((c for c in get_configs(og, "A", "h200", errata="", raise_if_empty=False)
                       if c.engine_index == engine), None)
        if config is None:
            pytest.skip(f"cuDNN {cb.get_version()} offers no engine {engine} for this convolution in {layout}")
        got[layout] = _x_parameters(build_plan(config, device_profile="h200"), x_uid, count=18)
    if None in got.values():
        pytest.skip("this release's plan JSON has no single kernel with parameters to compare")
    assert got["nchw"] == got["nhwc"], (f"cuDNN {cb.get_version()} now reads x in NCHW ({got}): measure engine "
                                        f"{engine} on a GPU and end the window of {rule} (and its kin) there")


def test_the_int8_rule_leaves_fp16_in_nchw_alone():
    """Engine 71 computes FP16 and BF16 convolutions in NCHW right (the array matrix on an H200): the INT8 rule is a
    data-type rule, and FP16's configs of engine 71 stay allowed."""
    og, _ = _conv("nchw", DataType.CUDNN_DATA_HALF)
    configs = [c for mode in ("A", "FALLBACK") for c in get_configs(og, mode, "h200", raise_if_empty=False)
               if c.engine_index == 71]
    if not configs:
        pytest.skip(f"cuDNN {cb.get_version()} offers no engine 71 for an FP16 convolution in NCHW")
    assert all(c.denied_by is None for c in configs)


def test_the_known_errata_load_and_name_their_evidence():
    known = E.known_errata()
    assert len(known) >= 1 and not known.warnings and known is E.known_errata()
    rule = known.rule(RULE)
    assert rule.operation == E.ANY_OPERATION and rule.engine == 1 and rule.gapped_strides
    assert rule.only_families == ("pointwise",) and "wrong results" in rule.reason and rule.data["cudnn_backend"]["evidence"]
    assert known.frontend_denies("MUL_eng1_k24=35", 92801) is None  # cudnn-frontend's own match never takes "*"


@pytest.mark.skipif(LOADED < 92000, reason="the rule's window starts at cuDNN 9.20")
@pytest.mark.parametrize("op", ["CUDNN_POINTWISE_MUL", "CUDNN_POINTWISE_RELU_FWD"])
def test_engine_1_over_gapped_strides_is_denied_with_no_errata_file(op, monkeypatch):
    monkeypatch.delenv(E.ENV_VAR, raising=False)
    og, _ = _scale_graph(GAPPED, op=op)
    configs = get_configs(og, "A", "h200", raise_if_empty=False)
    if not any(c.engine_index == 1 for c in configs):
        pytest.skip(f"cuDNN {cb.get_version()} offers no engine 1 for this graph")
    assert all(c.denied_by is not None and c.denied_by.name == RULE for c in configs if c.engine_index == 1)
    with pytest.raises(NoWorkingPlanError, match=rf"denied \(rule {RULE}\): engine 1 of a graph of pointwise"):
        build_first_plan(og, device_profile="h200", errata="")  # no file: the known errata still apply
    packed, _ = _scale_graph(PACKED, op=op)  # the same graph packed keeps its engine
    plan, _ = build_first_plan(packed, device_profile="h200")
    assert plan.engine_index == 1


def test_the_rule_leaves_other_graphs_and_releases_alone():
    known = E.known_errata()
    og, _ = _scale_graph(GAPPED)
    traits = E.traits_of(og)
    assert traits.gapped and traits.families == ("pointwise",) and not traits.other_families
    target = E.target_of(None, cb.runtime.profiles.as_deviceprop("h200"), og)
    tag = E.plan_tag(traits.tag, 1, {})
    assert known.deny(tag, traits, target) is not None if LOADED >= 92000 else known.deny(tag, traits, target) is None
    older = E.Target(version=91900, sm=target.sm, device=target.device)
    assert known.deny(tag, traits, older) is None
    assert known.deny(E.plan_tag(traits.tag, 2, {}), traits, target) is None  # another engine
    packed, _ = _scale_graph(PACKED)
    assert known.deny(tag, E.traits_of(packed), target) is None
    conv = E.GraphTraits("ConvFwd_ADD_", ("conv", "pointwise"), ("fp16",), gapped=True)
    assert known.deny("ConvFwd_ADD_eng1", conv, target) is None  # not pointwise alone


def test_the_extension_keys_are_checked(tmp_path):
    bad = tmp_path / "bad.json"
    bad.write_text(json.dumps({"version": 1, "rules": [{"rule_id": "r", "operation": "*", "engine": 1,
                                                        "cudnn_backend": {"gapped_strides": "yes",
                                                                          "only_families": ["pointwize"]}}]}))
    with pytest.raises(ErrataError) as e:
        E.Errata.load(bad)
    assert "field 'cudnn_backend.gapped_strides': expected true or false, not a string" in str(e.value)
    assert "'pointwize' is no operation family; did you mean pointwise?" in str(e.value)


def _x_parameters(plan, x_uid, count=4):
    """The ``count`` 64-bit words of kernel parameters after x's pointer in the plan's compiled kernel (x's dims and
    strides as the kernel reads them), words that cannot be sizes (pointers, padding) left out; None where the plan's
    JSON has no such kernel."""
    data = json.loads(plan.to_json())
    kernels = data.get("engine", {}).get("payload", {}).get("kernels") or []
    if len(kernels) != 1:
        return None
    params = kernels[0].get("kernelParams", {})
    at = next((o["value"] for o in params.get("offsets", []) if o.get("uid") == x_uid), None)
    raw = base64.b64decode(params.get("rawData", ""))
    if at is None or len(raw) < at + 8 + 8 * count:
        return None
    return tuple(v for v in struct.unpack(f"<{count}q", raw[at + 8:at + 8 + 8 * count]) if 0 < v < 1 << 20)


@pytest.mark.skipif(LOADED < 92000, reason="cuDNN 9.19 and older offer no engine for gapped pointwise graphs")
def test_the_erratum_still_holds_in_the_loaded_release():
    """The evidence, offline: the kernel engine 1 compiles for x over gapped strides gets x's packed layout. When
    this fails, the loaded release compiles the gaps: measure it on a GPU and end the rule's window there."""
    packed, x_uid = _scale_graph(PACKED)
    gapped, _ = _scale_graph(GAPPED)
    config = next((c for c in get_configs(gapped, "A", "h200", errata="", raise_if_empty=False)
                   if c.engine_index == 1), None)
    if config is None:
        pytest.skip(f"cuDNN {cb.get_version()} offers no engine 1 for the gapped graph")
    want = next(c for c in get_configs(packed, "A", "h200") if c.engine_index == 1)
    ours = _x_parameters(build_plan(config, device_profile="h200"), x_uid)
    theirs = _x_parameters(build_plan(want, device_profile="h200"), x_uid)
    if ours is None or theirs is None:
        pytest.skip("this release's plan JSON has no single kernel with parameters to compare")
    assert ours == theirs, (f"cuDNN {cb.get_version()} now compiles x's gapped strides ({ours} against the packed "
                            f"{theirs}): measure engine 1 on a GPU and end the window of rule {RULE} there")


def test_the_known_errata_are_named_and_keyed_as_honoured(tmp_path):
    known = E.known_errata()
    none = E.resolve(False)
    assert none.origin(RULE) == "the package's known errata" and none.origin(known.rule(RULE)) == "the package's known errata"
    planted = tmp_path / "planted.json"
    planted.write_text(json.dumps({"version": 1, "rules": [{"rule_id": "planted", "operation": "ConvFwd", "engine": 0}]}))
    own = E.Errata.load(planted)
    assert own.origin("planted") == str(planted) and own.origin(RULE) == "the package's known errata"
    # caches key on what is honoured: a file's rules and the known ones, so a change of either is a new key
    assert none.digest == known.digest != own.digest


def test_support_notes_errata_only_when_a_file_has_rules_or_something_was_denied(monkeypatch, tmp_path):
    monkeypatch.delenv(E.ENV_VAR, raising=False)
    m = support_matrix(None, "h200", family="matmul", data_type="fp16", name="matmul+bias", cache=False, workers=1,
                       plans="none")
    assert len(m) >= 1 and not any("errata" in n for n in m.notes), m.notes


SDPA_BWD_RULE = "sdpa_composite_bwd_eng7"
SDPA_BWD_WINDOW = (91900, 92800)  # measured wrong with 9.19.0, right with 9.28.1 (another knob space from 9.28.0)


def _engines(og, errata):
    configs = get_configs(og, "A", "h200", raise_if_empty=False, errata=errata)
    return [(c.engine_index, c.denied_by.name if c.denied_by is not None else None) for c in configs]


@pytest.mark.parametrize("dq_accumulator", [True, False])
def test_engine_7_of_the_composite_attention_backward_is_denied_where_it_was_measured_wrong(dq_accumulator,
                                                                                            monkeypatch):
    monkeypatch.delenv(E.ENV_VAR, raising=False)
    og = sdpa_composite_bwd(b=1, h=2, s_q=128, s_kv=128, d=64, dq_accumulator=dq_accumulator, build=False).build()
    offered = _engines(og, "")
    if SDPA_BWD_WINDOW[0] <= LOADED < SDPA_BWD_WINDOW[1]:
        assert 7 in [e for e, _ in offered], offered
        assert all((rule == SDPA_BWD_RULE) == (engine == 7) for engine, rule in offered), offered
        plan, _ = build_first_plan(og, device_profile="h200", modes=("B",))
        assert plan.engine_index != 7
    else:
        assert all(rule is None for _, rule in offered), offered


def test_the_attention_backward_rule_leaves_engine_7_of_other_matmul_graphs_alone():
    og = matmul_bias_relu(build=False).build()
    offered = _engines(og, "")
    assert offered and all(rule is None for _, rule in offered), offered
    known = E.known_errata()
    rule = known.rule(SDPA_BWD_RULE)
    assert (rule.version_start, rule.version_end) == SDPA_BWD_WINDOW and rule.engine == 7
    assert rule.families == ("matmul", "reduction", "layout") and "dK and dQ" in rule.reason


@pytest.mark.parametrize(("head", "chain", "tail", "engine", "rule"), [
    ("conv_wgrad", ["bias", "relu"], None, 4, "conv_wgrad_pointwise_eng4"),
    ("conv_wgrad", ["scale", "bias", "relu"], None, 4, "conv_wgrad_pointwise_eng4"),
    ("conv_wgrad", [], "genstats", 2, "conv_wgrad_genstats_eng2"),
])
@pytest.mark.parametrize("data_type", ["fp16", "bf16"])
def test_the_fused_weight_gradient_engines_are_denied(head, chain, tail, engine, rule, data_type, monkeypatch):
    monkeypatch.delenv(E.ENV_VAR, raising=False)
    og = chain_graph(head=head, chain=chain, tail=tail, data_type=data_type, layout="nhwc").build()
    configs = get_configs(og, "A", "h200", raise_if_empty=False) + get_configs(og, "FALLBACK", "h200",
                                                                                raise_if_empty=False)
    if not any(c.engine_index == engine for c in configs):
        pytest.skip(f"cuDNN {cb.get_version()} offers no engine {engine} for this graph")
    for c in configs:
        denied = c.denied_by.name if c.denied_by is not None else None
        assert denied == (rule if c.engine_index == engine and LOADED >= 91900 else None), (c.engine_index, denied)


@pytest.mark.parametrize(("head", "chain", "tail"), [
    ("conv_wgrad", [], None), ("conv_fwd", ["bias", "relu"], None), ("conv_dgrad", ["bias", "relu"], None),
    ("conv_fwd", [], "genstats"), ("matmul", ["bias", "relu"], None)])
def test_the_weight_gradient_rules_leave_other_convolutions_alone(head, chain, tail):
    og = chain_graph(head=head, chain=chain, tail=tail, data_type="fp16",
                     layout="row" if head == "matmul" else "nhwc").build()
    configs = get_configs(og, "A", "h200", raise_if_empty=False)
    assert configs and all(c.denied_by is None for c in configs), [(c.engine_index, c.denied_by) for c in configs]
