"""Errata wherever the tune layer chooses configs, offline with the real cuDNN (bundled H200): explore and its
search (denied candidates shown with their rule, never built or run), autotune, the plan cache (a denied entry is a
miss with a note), the support matrix; and rules written from findings (``errata_out``): wrong results (planted
through the injected-timings evaluator), crashes caught by the in-flight record (a process killed mid-build, a
sweep worker killed mid-build), read back by ``tune`` in a new process."""
import json
import os
import signal
import subprocess
import sys
import warnings

import pytest

import cudnn_backend as cb
from cudnn_backend.runtime import errata as E
from cudnn_backend.runtime import plans as _plans
from cudnn_backend.runtime.heuristics import get_configs
from cudnn_backend.tune import PlanCache, PlanCacheWarning, findings, graphs, results
from cudnn_backend.tune.explorer import explore
from cudnn_backend.tune.options import TuneOptions, as_options
from cudnn_backend.tune.support import probe_graph, support_matrix
from cudnn_backend.tune.sweeps import Task, WorkerPool, plan_units, run_task

from tests.helpers.crash import child_env, run_python
from tests.helpers.env import LOADED, ROOT
from tests.helpers.offline import h200
from tests.tune import fakes


def _first_config(pattern="conv_bias_relu"):
    subject = graphs.resolve(pattern, device_profile=cb.runtime.profiles.as_deviceprop(h200()))
    return subject.op_graph, get_configs(subject.op_graph, "A", h200(), errata=False)[0]


def _planted(config, path=None, **ext) -> E.Errata:
    """An errata file with one rule denying exactly ``config`` (its engine and every knob)."""
    doc = {"version": 1, "rules": [{"rule_id": "planted", "operation": E.traits_of(config.operation_graph).operation,
                                    "engine": config.engine_index, "knob": E.knob_strings(config.knobs),
                                    "cudnn_backend": dict({"exact_knobs": True, "reason": "planted"}, **ext)}]}
    if path is not None:
        path.write_text(json.dumps(doc))
    return E.Errata.from_dict(doc)


# -- explore, the search, autotune ------------------------------------------------------------------------------
def test_explore_shows_a_denied_config_with_its_rule_and_never_builds_it(tmp_path):
    og, config = _first_config()
    path = tmp_path / "errata.json"
    _planted(config, path)
    ex = explore("conv_bias_relu", device_profile="h200", errata=str(path))
    denied = [r for r in ex.results if r.status == results.DENIED]
    assert [r.key for r in denied] == [(config.engine_index, tuple(sorted(
        (cb.runtime.engines.short_name(k), v) for k, v in config.knobs.items())))]
    r = denied[0]
    assert r.denied_by == "planted" and r.status_text == "denied (rule planted)" and not r.plan_built
    assert r.plan_seconds is None and r.workspace_bytes is None and "planted" in r.reason
    assert ex.chosen is not r and ex.chosen.plan_built
    assert any("1 config denied, never built or run: rule planted (1)" in n for n in ex.notes)
    assert "denied (rule planted)" in ex.table()
    again = cb.Exploration.from_json(ex.to_json())
    assert [x.denied_by for x in again.results if x.status == "denied"] == ["planted"]
    assert ex.errata["file"] == str(path) and ex.errata["rules"] == 1
    assert ex.errata["traits"]["tag"] == "ConvFwd_ADD_RELU_FWD_" and ex.errata["target"]["sm"] == 90
    assert ex.options["errata"] == str(path)
    plain = explore("conv_bias_relu", device_profile="h200", errata="")
    assert plain.chosen.key == r.key and not any(x.status == results.DENIED for x in plain.results)


def test_the_environment_variable_is_honoured_by_explore_and_autotune(tmp_path, monkeypatch):
    og, config = _first_config()
    path = tmp_path / "errata.json"
    _planted(config, path)
    monkeypatch.setenv(E.ENV_VAR, str(path))
    ex = explore("conv_bias_relu", device_profile="h200")
    assert [r.denied_by for r in ex.results if r.status == results.DENIED] == ["planted"]
    plan, ex = cb.autotune("conv_bias_relu", device_profile="h200")
    try:
        assert (plan.engine_index, plan.knobs) != (config.engine_index, config.knobs)
    finally:
        plan.close()
    bad = tmp_path / "bad.json"
    bad.write_text("{")
    monkeypatch.setenv(E.ENV_VAR, str(bad))
    with pytest.raises(E.ErrataError, match=r"\$CUDNN_ERRATA_JSON_FILE.*not JSON"):
        explore("conv_bias_relu", device_profile="h200")


def test_options_refuse_a_bad_file_naming_the_option(tmp_path):
    bad = tmp_path / "bad.json"
    bad.write_text('{"version": 7, "rules": []}')
    with pytest.raises(ValueError, match=r"errata='.*bad.json': .*'version': 7 is not a version"):
        TuneOptions(errata=str(bad))
    with pytest.raises(ValueError, match="errata_out=.*never written over another file"):
        TuneOptions(errata_out=str(bad))
    with pytest.raises(ValueError, match="errata_out=.*folder .* does not exist"):
        TuneOptions(errata_out=str(tmp_path / "no" / "e.json"))
    with pytest.raises(TypeError, match="errata=3"):
        TuneOptions(errata=3)
    assert TuneOptions(errata=False).errata == ""


def test_the_search_never_evaluates_a_denied_candidate_and_it_takes_no_budget():
    og, config = _first_config()
    ex_ = fakes.explorer(errata=_planted(config), max_configs=3, finalists=2)
    try:
        ex = ex_.run()
        log = ex_.evaluator.log
    finally:
        ex_.close()
    denied = [r for r in ex.results if r.status == results.DENIED]
    assert len(denied) == 1 and denied[0].winner is False
    denied_key = next(k for k, r in ex_.search.results.items() if r.status == results.DENIED)
    assert denied_key not in {k for _, k, _ in log}  # never screened, checked, timed or in the final
    tried = [r for r in ex.results if r.status not in (results.DENIED, results.SKIPPED)]
    assert len(tried) == 3  # max_configs counts the configs tried, not the denied one
    assert ex.best is not None and ex.best.status == results.OK


# -- the plan cache --------------------------------------------------------------------------------------------
def test_a_cached_plan_a_rule_now_denies_is_a_miss_with_a_note(tmp_path):
    og, config = _first_config()
    plan = cb.build_plan(config, device_profile=h200())
    cache = PlanCache(tmp_path / "plans.sqlite")
    cache.put(og, plan, device_profile=h200())
    plan.close()
    errata = _planted(config)
    hit, note = cache.lookup(og, device_profile=h200(), errata=errata)
    assert hit is None and "denied by errata rule planted" in note and "a miss" in note
    with pytest.warns(PlanCacheWarning, match="denied by errata rule planted"):
        assert cache.get(og, device_profile=h200(), errata=errata) is None
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        hit = cache.get(og, device_profile=h200(), errata=False)
    assert hit is not None and hit.engine_index == config.engine_index
    hit.close()
    other = E.Errata.from_dict({"version": 1, "rules": [{"operation": "ConvFwd_ADD_RELU_FWD", "engine":
                                                         config.engine_index, "cudnn_backend": {"sm_start": 86,
                                                                                                "sm_end": 87}}]})
    hit, note = cache.lookup(og, device_profile=h200(), errata=other)  # a rule of another GPU: still a hit
    assert hit is not None and note == ""
    hit.close()


# -- support --------------------------------------------------------------------------------------------------------
def test_support_skips_a_denied_config_and_names_it(tmp_path):
    og, config = _first_config()
    errata = _planted(config)
    r = probe_graph("conv_bias_relu", "h200", errata=errata, plans="all")
    assert r.supported and r.denied == [f"engine {config.engine_index} (rule planted)"]
    assert (r.chosen["engine"], r.chosen["rank"]) != (config.engine_index, 0)
    assert r.row()["denied"] == f"engine {config.engine_index} (rule planted)"
    plain = probe_graph("conv_bias_relu", "h200", errata=False, plans="all")
    assert plain.denied == [] and plain.chosen["rank"] == 0
    cache = tmp_path / "support.sqlite"
    m1 = support_matrix([cb.tune.catalogue.CatalogueEntry.from_dict({"name": "conv_bias_relu",
                                                                     "builder": "conv_bias_relu"})],
                        "h200", cache=cache, workers=1, errata=False)
    m2 = support_matrix([cb.tune.catalogue.CatalogueEntry.from_dict({"name": "conv_bias_relu",
                                                                     "builder": "conv_bias_relu"})],
                        "h200", cache=cache, workers=1, errata=errata)
    assert m1.results[0].denied == [] and m2.cached == 0  # results with errata are cached apart
    assert m2.results[0].denied and any("config(s) denied" in n for n in m2.notes)


# -- findings recorded: wrong results ------------------------------------------------------------------------------
def test_a_planted_wrong_config_is_recorded_and_tune_in_a_new_process_honours_it(tmp_path):
    og, config = _first_config()
    out = tmp_path / "found.json"
    ex_ = fakes.explorer(wrong={config.key}, errata_out=str(out), finalists=2)  # its outputs judged wrong
    try:
        ex = ex_.run()
    finally:
        ex_.close()
    assert any(r.status == results.WRONG for r in ex.results)
    assert any(n.startswith("errata_out: 1 rule recorded in") for n in ex.notes)
    errata = E.Errata.load(out)
    (rule,) = errata.rules
    assert rule.engine == config.engine_index and rule.knobs == tuple(E.knob_strings(config.knobs))
    assert rule.reason.startswith("wrong result") and rule.sm_start == 90 and rule.runtime_start == LOADED
    assert rule.data_types == ("fp16",) and rule.families == ("conv", "pointwise")
    assert rule.data["cudnn_backend"]["evidence"][0]["status"] == "wrong result"
    assert not list(tmp_path.glob("found.json.inflight.*"))  # the in-flight record is gone
    report = tmp_path / "tune.json"
    done = subprocess.run([sys.executable, "-m", "cudnn_backend", "tune", "conv_bias_relu", "--device-profile",
                           "h200", "--errata", str(out), "--json", str(report)], capture_output=True, text=True,
                          env=child_env(COLUMNS="200"), cwd=str(ROOT), timeout=300)
    assert done.returncode == 0, done.stderr
    assert f"denied (rule {rule.rule_id})" in done.stdout
    doc = json.loads(report.read_text())
    denied = [r for r in doc["results"] if r["status"] == "denied"]
    assert [(r["engine_index"], r["denied_by"]) for r in denied] == [(config.engine_index, rule.rule_id)]
    chosen = cb.Exploration.from_dict(doc).chosen  # offline: heuristics' first config that built, not the denied
    assert chosen.status == "plan built" and chosen.rank == 1
    assert (chosen.engine_index, chosen.knobs) != (denied[0]["engine_index"], denied[0]["knobs"])


# -- findings recorded: crashes ------------------------------------------------------------------------------------
CRASH_MID_BUILD = """
import os, signal, sys
from cudnn_backend.runtime import plans
from cudnn_backend.tune.explorer import explore

def killed(*args, **kwargs):  # the process dies while cuDNN builds the first plan, as an abort in cuDNN would
    os.kill(os.getpid(), signal.SIGKILL)

plans.build_plan = killed
explore("conv_bias_relu", device_profile="h200", errata_out=sys.argv[1], build_threads=0)
"""


def test_a_process_killed_mid_build_is_recorded_by_the_next_run(tmp_path):
    og, config = _first_config()
    out = tmp_path / "found.json"
    child = run_python(CRASH_MID_BUILD, args=[out])
    assert child.signal == "SIGKILL", child.describe()
    left = findings.pending(out)
    assert len(left) == 1 and not left[0]["alive"] and left[0]["configs"][0]["stage"] == "plan build"
    assert not out.exists()
    ex = explore("conv_bias_relu", device_profile="h200", errata_out=str(out))  # the next run records it
    assert any("died during plan build of engine" in n for n in ex.notes)
    (rule,) = E.Errata.load(out).rules
    assert rule.engine == config.engine_index and rule.knobs == tuple(E.knob_strings(config.knobs))
    assert rule.reason.startswith("crashed the process") and findings.pending(out) == []
    again = explore("conv_bias_relu", device_profile="h200", errata=str(out))
    assert [r.denied_by for r in again.results if r.status == results.DENIED] == [rule.rule_id]


def test_several_configs_in_flight_name_no_culprit(tmp_path):
    og, config = _first_config()
    out = tmp_path / "found.json"
    second = get_configs(og, "A", h200(), errata=False)[1]
    record = findings.InFlight(out, "g", {"traits": E.traits_of(og).to_dict(), "target": {"sm": 90,
                                                                                        "cudnn_version": LOADED}})
    record.enter([config], "plan build")
    record.enter([second], "plan build")
    notes = findings.harvest(out, dead={os.getpid()})
    assert len(notes) == 1 and "the culprit is unknown, no rule written" in notes[0] and not out.exists()
    record.close()


def kill_on_first_build(task, job, options, worker="", part=None, parts=None):
    """A sweep worker's runner: the real search, killed when cuDNN builds its first plan."""
    def killed(*args, **kwargs):
        os.kill(os.getpid(), signal.SIGKILL)

    _plans.build_plan = killed
    return run_task(task, job, options, worker=worker, part=part, parts=parts)


def test_a_sweep_worker_killed_mid_build_is_recorded_at_once(tmp_path):
    og, config = _first_config()
    out = tmp_path / "found.json"
    opts = as_options(None, "sweep", errata_out=str(out), build_threads=0).as_kwargs()
    opts.update(cache=None, device_profile=h200())
    tasks = [Task("conv_bias_relu")]
    with WorkerPool([None]) as pool:
        got, _ = pool.run(tasks, "explore", opts, plan_units(tasks, "given"), runner=kill_on_first_build)
    assert not got[0].ok and "worker process died (exit code -9)" in got[0].error
    assert "recorded in" in got[0].error and "during plan build of engine" in got[0].error
    (rule,) = E.Errata.load(out).rules
    assert rule.engine == config.engine_index and rule.data["cudnn_backend"]["evidence"][0]["exit_code"] == -9
