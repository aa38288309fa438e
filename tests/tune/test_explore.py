"""explore and autotune offline (no GPU: against the bundled H200 profile, against the real cuDNN)."""
import json
import pickle
import sys

import pytest

import cudnn_backend as cb
from cudnn_backend.tune import ConfigResult, Exploration
from cudnn_backend.tune import graphs as tune_graphs
from tests.tune import three_ways

pytestmark = pytest.mark.skipif(cb.core.device.gpu_available(), reason="offline behaviour (a GPU times instead)")


@pytest.fixture(scope="module")
def explored():
    """conv + bias + ReLU built three ways, each explored offline."""
    return {how: cb.explore(build(), engines=(how == "graph"))
            for how, build in (("generic", three_ways.generic), ("typed", three_ways.typed_classes),
                               ("graph", three_ways.graph_builder))}


def test_one_graph_three_apis_same_exploration(explored):
    fps = {ex.fingerprint for ex in explored.values()}
    assert len(fps) == 1, "the same computation must have one fingerprint whatever API built it"
    configs = {how: [(r.engine_index, tuple(sorted(r.knobs.items()))) for r in ex.results]
               for how, ex in explored.items()}
    assert configs["generic"] == configs["typed"] == configs["graph"]
    for ex in explored.values():
        assert not ex.timed and ex.device["source"] == "profile" and ex.device["name"] == "NVIDIA H200"
        assert len(ex.results) >= 10
        assert all(r.status == "plan built" and r.plan_built and r.time_us is None for r in ex.results)
        assert ex.best is None and ex.headroom is None
        assert ex.heuristics_pick.source == "A" and ex.heuristics_pick.rank == 0
        assert any("no GPU" in n for n in ex.notes)


def test_header_describes_the_graph(explored):
    g = explored["graph"].graph
    by_name = {t["name"]: t for t in g["tensors"]}
    assert by_name["x"]["dims"] == [1, 8, 8, 8] and by_name["x"]["strides"] == [512, 1, 64, 8]
    assert by_name["x"]["data_type"] == "fp16" and by_name["conv_out"]["role"] == "virtual"
    assert by_name["y"]["role"] == "output" and by_name["b"]["uid"] == 3
    assert [o["operation"] for o in g["operations"]] == ["ConvolutionForward", "Pointwise ADD", "Pointwise RELU_FWD"]
    assert all(o["compute"] == "fp32" for o in g["operations"])


def test_engines_listed_with_reasons(explored):
    engines = explored["graph"].engines
    assert engines and any(e["supported"] for e in engines)
    unsupported = [e for e in engines if not e["supported"]]
    assert unsupported and all(e["reason"].startswith("CUDNN_STATUS_") for e in unsupported)
    assert all(e["knob_space"] >= 1 for e in engines if e["supported"])


def test_modes_agreement_said(explored):
    ex = explored["typed"]
    assert ex.modes_agree is (ex.heuristics["A"] == ex.heuristics["B"])
    if ex.modes_agree:
        assert any("A and B agree" in n for n in ex.notes)


def test_exploration_is_plain_data(explored):
    ex = explored["generic"]
    again = pickle.loads(pickle.dumps(ex))
    assert again.results == ex.results and again.fingerprint == ex.fingerprint
    back = Exploration.from_json(ex.to_json())
    assert [r.key for r in back.results] == [r.key for r in ex.results]
    assert json.loads(ex.to_json())["heuristics_pick"]["engine_index"] == ex.heuristics_pick.engine_index
    text = ex.table()
    assert "plan built" in text and str(ex.results[0].engine_index) in text


def test_best_and_headroom_come_from_the_final_round():
    def result(engine, us, source="A", rank=None, first_pass=None, status="ok"):
        return ConfigResult(engine, {}, source, rank, (source,) if source != "sweep" else (), status=status,
                            time_us=us, first_pass_us=first_pass)

    pick = result(1, 9.0, rank=0, first_pass=12.0)
    finalist = result(2, 6.0, rank=1, first_pass=7.0)
    fast_first_pass_only = result(3, 5.5, rank=2)  # slower than the finalists in the first pass? not re-timed
    ex = Exploration("g", {}, "9.19.0", True, results=[fast_first_pass_only, finalist, pick])
    assert ex.best is finalist  # only the finalists were measured head to head
    assert ex.heuristics_pick is pick and ex.headroom == pytest.approx(9.0 / 6.0)
    ex.results = [fast_first_pass_only, result(4, 4.0, status="wrong result")]
    assert ex.best is fast_first_pass_only  # no final round: the first pass decides; wrong results never win
    back = Exploration.from_json(Exploration("g", {}, "9.19.0", True, results=[pick, finalist]).to_json())
    assert [r.first_pass_us for r in back.results] == [12.0, 7.0] and back.best.engine_index == 2


def test_explore_pattern_name_builder_file_and_saved_plan(tmp_path):
    by_name = cb.explore("conv_fwd", kwargs=dict(n=1, c=8, h=8, w=8, k=8), engines=False)
    assert by_name.name == "conv_fwd" and by_name.results
    src = tmp_path / "my_graphs.py"
    src.write_text("import cudnn_backend as cb\n"
                   "def small(n=2):\n"
                   "    g = cb.Graph('mine')\n"
                   "    x = g.tensor([n, 16, 32]); w = g.tensor([n, 32, 8])\n"
                   "    g.relu(g.matmul(x, w), output=True)\n"
                   "    return g\n")
    mine = cb.explore(f"{src}:small", kwargs={"n": 4}, engines=False)
    assert mine.results and all(r.plan_built for r in mine.results if r.status != "plan refused")
    assert mine.graph["tensors"][0]["dims"][0] == 4
    plan, _ = cb.autotune(f"{src}:small")
    path = plan.save(tmp_path / "plan.json")
    from_plan = cb.explore(str(path), engines=False)
    assert from_plan.fingerprint.startswith("json:")
    assert any(r.engine_index == plan.engine_index for r in from_plan.results)
    assert [o["operation"] for o in from_plan.graph["operations"]][0] == "MATMUL"


def test_bad_graphs_and_options_refused():
    with pytest.raises(TypeError, match="graph"):
        cb.explore(42)
    with pytest.raises(ValueError, match="FILE.py:FUNC|not a file"):
        cb.explore("no_such_pattern")
    with pytest.raises(ValueError, match=r"\bn\b"):
        cb.explore("conv_fwd", kwargs=dict(n=0))
    with pytest.raises(ValueError, match="hidden"):
        cb.explore("layer_norm_fwd", kwargs=dict(hidden=0))
    with pytest.raises(ValueError, match="max_workspace"):
        cb.explore("conv_fwd", max_workspace=-1)
    with pytest.raises(TypeError, match="max_workspace"):
        cb.explore("conv_fwd", max_workspace=1.5)
    with pytest.raises(ValueError, match="modes"):
        cb.explore("conv_fwd", modes=())
    with pytest.raises(ValueError, match="sweep_budget_s"):
        cb.explore("conv_fwd", sweep_budget_s=float("nan"))
    with pytest.raises(TypeError, match="handle"):
        cb.explore("conv_fwd", handle="gpu0")


def test_offline_sweep_and_workspace_limit_said():
    ex = cb.explore("conv_fwd", kwargs=dict(n=1, c=8, h=8, w=8, k=8), sweep=True, max_workspace=0, engines=False)
    assert any("sweep skipped" in n for n in ex.notes)
    assert all(r.source != "sweep" for r in ex.results)
    for r in ex.results:
        if r.workspace_bytes:
            assert r.status == "skipped" and "max_workspace" in r.reason


def test_autotune_offline_gives_heuristics_pick():
    plan, ex = cb.autotune("matmul_bias_relu", kwargs=dict(batch=2, m=64, n=64, k=64))
    try:
        assert plan.engine_index == ex.heuristics_pick.engine_index
        assert not ex.timed
    finally:
        plan.close()


def test_plot_refuses_untimed_and_missing_matplotlib(tmp_path, monkeypatch, explored):
    with pytest.raises(ValueError, match="nothing was timed"):
        explored["graph"].plot(tmp_path / "x.png")
    monkeypatch.setitem(sys.modules, "matplotlib", None)
    timed = _fake_timed()
    with pytest.raises(cb.MissingDependencyError, match="matplotlib") as e:
        timed.plot(tmp_path / "x.png")
    assert isinstance(e.value, ImportError) and e.value.extra == "plot"


def _fake_timed() -> Exploration:
    """An exploration as a GPU run returns it (made by hand: plots need no GPU)."""
    results = []
    for i, (t, tile, stages) in enumerate([(12.0, 1, 2), (10.0, 2, 2), (11.0, 2, 3), (9.5, 3, 3), (14.0, 1, 3)]):
        results.append(ConfigResult(7, {"TILE_SIZE": tile, "STAGES": stages}, "A" if i < 2 else "sweep",
                                    i if i < 2 else None, ("A",) if i < 2 else (), status="ok", plan_built=True,
                                    time_us=t, rel_error=1e-4, correct=True))
    return Exploration("fake", {"name": "GPU", "sm_version": 900, "sm_count": 132, "source": "gpu"}, "9.19.0", True,
                       heuristics={"A": [(7, {"TILE_SIZE": 1, "STAGES": 2}), (7, {"TILE_SIZE": 2, "STAGES": 2})]},
                       results=results)


def test_plots_of_a_timed_exploration(tmp_path):
    pytest.importorskip("matplotlib")
    ex = _fake_timed()
    assert ex.best.time_us == 9.5 and ex.heuristics_pick.time_us == 12.0
    assert ex.headroom == pytest.approx(12.0 / 9.5)
    bars = ex.plot(tmp_path / "bars.png")
    heat = cb.tune.plots.plot_knob_heatmap(ex, tmp_path / "heat.png")
    for p in (bars, heat):
        assert p.read_bytes()[:8] == b"\x89PNG\r\n\x1a\n" and p.stat().st_size > 2000


def test_subject_resolution_refuses_unfinalized_descriptor():
    g = cb.Descriptor(cb.CUDNN_BACKEND_OPERATIONGRAPH_DESCRIPTOR)
    with pytest.raises(ValueError, match="not finalized"):
        tune_graphs.resolve(g)
