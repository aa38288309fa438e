"""Heuristics (modes A, B, FALLBACK, INSTANT) against the bundled H200 profile, and the
guide's workflow (first config that builds a plan, FALLBACK, a report of every config tried)."""
import pytest

import cudnn_backend as cb
from cudnn_backend.runtime import engines
from cudnn_backend.runtime.engines import Config
from cudnn_backend.runtime.heuristics import (
    NoDeviceError,
    NoWorkingPlanError,
    PlanSearchReport,
    build_first_plan,
    get_configs,
    heur_mode,
    heuristics_configs,
)
from cudnn_backend.runtime.plans import Plan, build_plan, plan_json_info
from cudnn_backend.typed import EngineConfig, EngineHeuristics

from tests.helpers import generic_graphs as gg
from tests.helpers.env import HAVE_GPU, LOADED


# -- the four modes ----------------------------------------------------------------------------------
@pytest.mark.parametrize("mode", ["A", "B", "FALLBACK", "INSTANT"])
def test_every_mode_returns_configs(conv, h200, mode):
    configs = get_configs(conv, mode, h200)
    assert len(configs) > 0
    for rank, cfg in enumerate(configs):
        assert isinstance(cfg, Config) and isinstance(cfg.descriptor, EngineConfig) and cfg.descriptor.finalized
        assert cfg.operation_graph is conv
        assert cfg.mode == heur_mode(mode)
        assert cfg.rank == rank
        assert isinstance(cfg.engine_index, int) and cfg.engine_index >= 0


def test_mode_counts_on_cudnn_9_19(conv, h200, cudnn_version):
    if cudnn_version // 100 != 919:
        pytest.skip("counts measured with cuDNN 9.19")
    counts = {m: len(get_configs(conv, m, h200)) for m in ("A", "B", "FALLBACK", "INSTANT")}
    # B's size query says 83 but cuDNN then fills 74: the second call's count is the one kept
    assert counts == {"A": 40, "B": 74, "FALLBACK": 4, "INSTANT": 40}


def test_results_keep_cudnn_order(conv, h200):
    first = [(c.engine_index, c.knobs) for c in get_configs(conv, "A", h200)]
    again = [(c.engine_index, c.knobs) for c in get_configs(conv, "A", h200)]
    assert first == again


def test_mode_spellings():
    assert heur_mode("a") == cb.CUDNN_HEUR_MODE_A
    assert heur_mode("fallback") == cb.CUDNN_HEUR_MODE_FALLBACK
    assert heur_mode("CUDNN_HEUR_MODE_B") == cb.CUDNN_HEUR_MODE_B
    assert heur_mode(cb.CUDNN_HEUR_MODE_INSTANT) == cb.CUDNN_HEUR_MODE_INSTANT
    assert heur_mode(int(cb.CUDNN_HEUR_MODE_A)) == cb.CUDNN_HEUR_MODE_A
    with pytest.raises(ValueError, match="A, B, FALLBACK, INSTANT"):
        heur_mode("C")
    with pytest.raises(ValueError):
        heur_mode(cb.CUDNN_HEUR_MODES_COUNT)
    with pytest.raises(TypeError):
        heur_mode(True)


def test_typed_graph_and_heuristics_mixin(h200):
    from cudnn_backend.graph import Graph

    g = Graph()
    x = g.tensor([8, 64, 56, 56], layout="nhwc")
    w = g.tensor([32, 64, 3, 3], layout="nhwc")
    g.conv_fwd(x, w, padding=1, output=True)
    graph = g.build()
    heur = EngineHeuristics(operation_graph=graph, mode="CUDNN_HEUR_MODE_A", deviceprop=h200.descriptor()).finalize()
    configs = heuristics_configs(heur)
    assert len(configs) > 0 and all(c.operation_graph is graph for c in configs)
    assert [c.engine_index for c in configs] == [c.engine_index for c in get_configs(graph, "A", h200)]


def test_needs_a_finalized_graph(h200):
    g = cb.Descriptor(cb.CUDNN_BACKEND_OPERATIONGRAPH_DESCRIPTOR)
    with pytest.raises(ValueError, match="not finalized"):
        get_configs(g, "A", h200)
    with pytest.raises(TypeError, match="OPERATIONGRAPH"):
        get_configs(h200.descriptor(), "A", h200)


# -- no GPU and no profile -------------------------------------------------------------------------------
@pytest.mark.skipif(HAVE_GPU, reason="the silent 0-config answer only happens without a GPU")
def test_no_profile_without_gpu_raises_clearly(conv):
    # what cuDNN does: finalize succeeds, zero results
    assert gg.heuristics(conv, cb.CUDNN_HEUR_MODE_A) == []
    with pytest.raises(NoDeviceError, match="device_profile=.*DeviceProfile.bundled") as info:
        get_configs(conv, "A")
    assert "no GPU" in str(info.value)
    heur = EngineHeuristics(operation_graph=conv, mode="CUDNN_HEUR_MODE_A").finalize()
    with pytest.raises(NoDeviceError):
        heuristics_configs(heur)
    assert heuristics_configs(heur, raise_if_empty=False) == []
    with pytest.raises(NoDeviceError, match="device_profile="):
        build_first_plan(conv)


# -- SM-count target -------------------------------------------------------------------------------------
def test_sm_count_target(conv, h200):
    configs = get_configs(conv, "A", h200, sm_count_target=h200.sm_count)
    assert len(configs) > 0
    plan = build_plan(configs[0])
    assert plan_json_info(plan.to_json())["target_sm_count"] == h200.sm_count


# cuDNN 9.10 .. 9.22 refuse a target above the device's SM count (BAD_PARAM naming target_sm_count); from 9.24 it is
# taken and the device's count targeted (measured on 9.10.2, 9.12.0, 9.14.0, 9.17.1, 9.19.0, 9.20.0, 9.22.0 / 9.24.1,
# 9.26.1, 9.28.0, 9.28.1; 9.23 not measured: either is right there)
SM_COUNT_TARGET_REFUSED_BEFORE = 92300
SM_COUNT_TARGET_CLAMPED_SINCE = 92400


def test_sm_count_target_errors(conv, h200):
    try:
        configs = get_configs(conv, "A", h200, sm_count_target=h200.sm_count + 1)
    except cb.CudnnBadParamError as e:
        assert LOADED < SM_COUNT_TARGET_CLAMPED_SINCE and "target_sm_count" in str(e), e
    else:
        assert LOADED >= SM_COUNT_TARGET_REFUSED_BEFORE, "this release took a target above the SM count"
        assert configs and plan_json_info(build_plan(configs[0]).to_json())["target_sm_count"] == h200.sm_count
    with pytest.raises(ValueError, match="sm_count_target: 0 is below the minimum 1"):
        get_configs(conv, "A", h200, sm_count_target=0)


# -- the workflow ------------------------------------------------------------------------------------------
def test_first_config_builds(conv, h200):
    plan, report = build_first_plan(conv, device_profile=h200)
    assert isinstance(report, PlanSearchReport)
    assert isinstance(plan, Plan) and plan.descriptor.finalized and plan.operation_graph is conv
    assert plan.handle is None
    assert report.chosen is report.attempts[-1] and report.chosen.ok
    first = get_configs(conv, "A", h200)[0]
    assert plan.engine_index == first.engine_index and plan.knobs == first.knobs
    assert report.queried == {"A": 40} or report.queried["A"] > 0
    assert report.chosen.mode == "A" and report.chosen.rank == 0


def test_mode_b_workflow(conv, h200):
    plan, report = build_first_plan(conv, device_profile="h200", modes=("B",), fallback=False)
    assert report.chosen.mode == "B" and list(report.queried) == ["B"]
    assert plan.workspace_size >= 0


def test_fallback_when_a_configs_are_filtered_out(conv, h200):
    a_configs = get_configs(conv, "A", h200)
    assert all(cb.CUDNN_NUMERICAL_NOTE_TENSOR_CORE in c.numerical_notes for c in a_configs)
    plan, report = build_first_plan(conv, device_profile=h200, exclude_numerical=["TENSOR_CORE"])
    assert report.chosen.mode == "FALLBACK"
    assert cb.CUDNN_NUMERICAL_NOTE_TENSOR_CORE not in plan.numerical_notes
    tried_a = [a for a in report if a.mode == "A"]
    assert len(tried_a) == len(a_configs)
    for a in tried_a:
        assert not a.ok and a.stage == "filter"
        assert a.reason == "has excluded numerical note TENSOR_CORE"
        assert a.engine_index is not None and isinstance(a.knobs, dict)
    rows = report.to_rows()
    assert rows[0]["mode"] == "A" and rows[0]["ok"] is False and rows[0]["reason"]
    assert rows[-1]["ok"] is True and rows[-1]["mode"] == "FALLBACK"
    text = str(report)
    assert "FAILED at filter: has excluded numerical note TENSOR_CORE" in text and "ok" in text


def test_workspace_limit_failures_are_reported(conv, h200):
    fallback = get_configs(conv, "FALLBACK", h200)
    sizes = [c.workspace_size for c in fallback]
    assert any(s > 0 for s in sizes) and any(s == 0 for s in sizes)
    plan, report = build_first_plan(conv, device_profile=h200, modes=("FALLBACK",), fallback=False, max_workspace=0)
    assert plan.workspace_size == 0
    failed = report.failures
    assert failed and all(a.stage == "workspace" and "exceeds max_workspace=0" in a.reason for a in failed)
    assert all(a.workspace_size > 0 for a in failed)


def test_cudnn_failures_carry_cudnn_reason(conv, h200):
    infos = engines.list_engines(conv, h200)
    # an engine refused with NOT_SUPPORTED (cuDNN 9.10 refuses a few others with INTERNAL_ERROR: test_engines.py)
    unsupported = next(i.engine_index for i in infos
                       if not i.supported and not i.finalized and i.status == cb.CUDNN_STATUS_NOT_SUPPORTED)
    knobbed = next(i for i in infos if i.supported and i.knobs)
    spec = knobbed.knobs[0]
    prefer = [unsupported, (knobbed.engine_index, {spec.knob_type: spec.maximum + 1})]
    plan, report = build_first_plan(conv, device_profile=h200, prefer=prefer)
    engine_fail, config_fail = report.attempts[0], report.attempts[1]
    assert engine_fail.mode == "prefer" and engine_fail.stage == "engine"
    assert engine_fail.engine_index == unsupported
    assert engine_fail.status == "CUDNN_STATUS_NOT_SUPPORTED"
    assert isinstance(engine_fail.error, cb.CudnnNotSupportedError)
    assert engine_fail.reason.startswith("CUDNN_STATUS_NOT_SUPPORTED")
    assert engine_fail.error.descriptor_type == cb.CUDNN_BACKEND_ENGINE_DESCRIPTOR
    assert engine_fail.error.cudnn_message in engine_fail.reason
    assert config_fail.stage == "config" and config_fail.status == "CUDNN_STATUS_NOT_SUPPORTED"
    assert config_fail.error.descriptor_type == cb.CUDNN_BACKEND_ENGINECFG_DESCRIPTOR
    assert config_fail.knobs == {spec.name: spec.maximum + 1}
    assert report.chosen.mode == "A"


def test_preferred_config_wins(conv, h200):
    wanted = get_configs(conv, "A", h200)[3]
    plan, report = build_first_plan(conv, device_profile=h200, prefer=[wanted])
    assert len(report) == 1 and report.chosen.mode == "prefer"
    assert plan.engine_index == wanted.engine_index and plan.knobs == wanted.knobs
    plan, report = build_first_plan(conv, device_profile=h200,
                                    prefer=[(wanted.engine_index, wanted.knobs)])
    assert report.chosen.mode == "prefer" and plan.knobs == wanted.knobs


def test_a_preferred_config_of_another_graph_is_tried_on_this_one(conv, h200):
    """Its plan as it is would be of the other graph: its engine and knobs are tried here instead."""
    from tests.helpers import offline

    other = offline.matmul_relu_graph()
    theirs = get_configs(other, "A", h200)[0]
    plan, report = build_first_plan(conv, device_profile=h200, prefer=[theirs], fallback=False)
    assert report.attempts[0].mode == "prefer" and report.attempts[0].engine_index == theirs.engine_index
    assert cb.is_same_topology(plan.operation_graph, conv) and not cb.is_same_topology(plan.operation_graph, other)
    same = get_configs(conv, "A", h200)[0]
    plan, report = build_first_plan(conv, device_profile=h200, prefer=[same])
    assert report.chosen.mode == "prefer" and plan.engine_index == same.engine_index


def test_a_preferred_config_of_another_device_is_tried_on_this_one(conv, h200):
    """A config chosen for the H100 (of this graph or another) is its engine and knobs, built for the H200: as it is,
    its plan would name the one device and be built for the other (build_plan refuses it)."""
    h100 = cb.DeviceProfile.bundled("h100")
    from tests.helpers import generic_graphs

    for graph in (conv, generic_graphs.notebook_conv_graph()):
        theirs = get_configs(graph, "A", h100)[0]
        with pytest.raises(ValueError, match=r"^device_profile: the config was chosen for NVIDIA H100"):
            build_plan(theirs, device_profile=h200)
        plan, report = build_first_plan(conv, device_profile=h200, prefer=[theirs], fallback=False)
        assert report.attempts[0].mode == "prefer" and report.attempts[0].engine_index == theirs.engine_index
        assert plan.operation_graph is conv and "H200" in plan_json_info(plan.to_json())["device_name"]


def test_nothing_builds(conv, h200):
    with pytest.raises(NoWorkingPlanError) as info:
        build_first_plan(conv, device_profile=h200, config_filter=lambda cfg: False)
    report = info.value.report
    assert report.chosen is None and len(report) > 0
    assert {a.mode for a in report} == {"A", "FALLBACK"}
    assert all(a.reason == "rejected by config_filter" for a in report)
    assert "rejected by config_filter" in str(info.value)
    with pytest.raises(TypeError, match=r"^config_filter: expected a function of a Config returning a bool, not int"):
        build_first_plan(conv, device_profile=h200, config_filter=5)


def test_duplicates_are_tried_once(conv, h200):
    with pytest.raises(NoWorkingPlanError) as info:
        build_first_plan(conv, device_profile=h200, modes=("A", "INSTANT"), config_filter=lambda cfg: False)
    report = info.value.report
    keys = [(a.engine_index, tuple(sorted(a.knobs.items()))) for a in report]
    assert len(keys) == len(set(keys))
    distinct = {(c.engine_index, tuple(sorted(c.knobs.items())))
                for m in ("A", "INSTANT", "FALLBACK") for c in get_configs(conv, m, h200)}
    assert len(report) == len(distinct)


def test_max_attempts(conv, h200):
    with pytest.raises(NoWorkingPlanError) as info:
        build_first_plan(conv, device_profile=h200, config_filter=lambda cfg: False, max_attempts=3)
    assert len(info.value.report) == 3


def test_report_dataframe(conv, h200):
    pd = pytest.importorskip("pandas")
    _, report = build_first_plan(conv, device_profile=h200, exclude_numerical="TENSOR_CORE")
    df = report.to_dataframe()
    assert isinstance(df, pd.DataFrame) and len(df) == len(report)
    assert {"mode", "engine", "knobs", "ok", "reason"} <= set(df.columns)


def test_errors_pickle(conv, h200):
    import pickle

    with pytest.raises(NoWorkingPlanError) as info:
        build_first_plan(conv, device_profile=h200, prefer=[10_000], modes=(), fallback=False)
    report = info.value.report
    assert report.attempts[0].stage == "engine" and "out of range" in report.attempts[0].reason
    back = pickle.loads(pickle.dumps(info.value))
    assert str(back) == str(info.value)
    assert back.report.to_rows() == report.to_rows()
    with pytest.raises(ValueError, match="nothing in prefer"):
        build_first_plan(conv, device_profile=h200, modes=(), fallback=False)
    err = pickle.loads(pickle.dumps(NoDeviceError("no GPU")))
    assert str(err) == "no GPU"


def test_a_preferred_config_takes_the_sm_count_target_asked_for():
    """A config of this graph preferred with sm_count_target= is made again with the target (not used as it is,
    the target dropped without a word); a str or a dict is no list of candidates."""
    from cudnn_backend import patterns
    from cudnn_backend._bindings.enums import AttributeName as A

    og = patterns.conv_bias_relu().build()
    config = cb.get_configs(og, "A", "h200")[0]
    plan, report = cb.build_first_plan(og, device_profile="h200", sm_count_target=8, prefer=[config])
    assert plan.config.engine.values.get(A.CUDNN_ATTR_ENGINE_SM_COUNT_TARGET) == 8, report
    assert report.attempts[0].mode == "prefer" and report.attempts[0].engine_index == config.engine_index
    for prefer in ("10", {10: {}}):
        with pytest.raises(TypeError, match="prefer: takes a list of Configs"):
            cb.build_first_plan(og, device_profile="h200", prefer=prefer)



def test_a_mode_whose_heuristics_refuse_the_graph_is_reported_and_the_next_mode_asked():
    """A stride past int32: heuristics refuse the graph itself (NOT_SUPPORTED, no reason); build_first_plan says so
    per mode and ends in NoWorkingPlanError with its report, as when nothing builds."""
    from cudnn_backend.runtime.heuristics import NoWorkingPlanError, build_first_plan

    g = cb.Graph("huge_stride")
    x, w = g.tensor([1, 8, 8, 8], layout="nhwc"), g.tensor([8, 8, 3, 3], layout="nhwc")
    g.conv_fwd(x, w, stride=2 ** 31, output=True, output_data_type=cb.CUDNN_DATA_HALF)
    with pytest.raises(NoWorkingPlanError, match=r"heuristics A refused the graph: CUDNN_STATUS_NOT_SUPPORTED") as e:
        build_first_plan(g.build(), device_profile="h200", modes=("A",), fallback=True)
    report = e.value.report
    assert set(report.refused) == {"A", "FALLBACK"} and report.queried == {"A": 0, "FALLBACK": 0}
    assert "A: 0 (refused the graph)" in report.summary()
    assert report.plain().refused == report.refused
