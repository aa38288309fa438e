"""Errata on the GPU: a wrong config planted by corrupting its outputs between execute and the check (its buffer
poisoned again after it ran: the fp64 reference check fails for it alone), found by ``explore --errata-out`` and
written as a rule that ``tune`` in a new process honours (the config shown denied, never run, not the winner); and
a plan-cache entry a rule now denies is a miss with a note, replaced by a config the rules allow."""
import json
import os
import subprocess
import sys

import cudnn_backend as cb
from cudnn_backend.cli.app import main
from cudnn_backend.runtime import errata as E
from cudnn_backend.runtime import memory
from cudnn_backend.tune import PlanCache
from cudnn_backend.tune.evaluation import GpuEvaluator

from tests.helpers.crash import child_env
from tests.helpers.env import ROOT

SIZES = ["--n", "1", "--c", "64", "--h", "28", "--w", "28", "--k", "64"]
KWARGS = dict(n=1, c=64, h=28, w=28, k=64)


def _cli(*args, timeout=600):
    return subprocess.run([sys.executable, "-m", "cudnn_backend", *args], capture_output=True, text=True,
                          cwd=str(ROOT), env=child_env(COLUMNS="200", CUDNN_ERRATA_JSON_FILE=""), timeout=timeout)


def test_a_wrong_config_found_on_the_gpu_is_denied_by_tune_in_a_new_process(tmp_path, monkeypatch):
    monkeypatch.setenv(E.ENV_VAR, "")
    real = GpuEvaluator._check_outputs

    def corrupting(self, r, key):  # heuristics' first config: its outputs poisoned after it ran, before the check
        if (r.source, r.rank) == ("A", 0):
            self.sets[0].poison(self.stream)
            memory.synchronize(self.stream)
        return real(self, r, key)

    monkeypatch.setattr(GpuEvaluator, "_check_outputs", corrupting)
    found, report = tmp_path / "found.json", tmp_path / "explore.json"
    code = main(["explore", "conv_fwd", *SIZES, "--strategy", "exhaustive", "--max-configs", "8", "--no-engines",
                 "--quiet", "--errata-out", str(found), "--json", str(report)])
    assert code == 0
    monkeypatch.setattr(GpuEvaluator, "_check_outputs", real)
    ex = cb.Exploration.from_json(report.read_text())
    wrong = [r for r in ex.results if r.status == "wrong result"]
    assert [(r.source, r.rank) for r in wrong] == [("A", 0)], ex.table()
    errata = E.Errata.load(found)
    rules = [r for r in errata.rules if r.reason.startswith("wrong result")]
    assert len(rules) == 1 and len(errata) == sum(r.status in ("wrong result", "execute failed") for r in ex.results)
    rule = rules[0]
    target = ex.errata["target"]
    assert rule.engine == wrong[0].engine_index and rule.reason.startswith("wrong result")
    assert rule.sm_start == target["sm"] and rule.sm_end == target["sm"] + 1
    assert rule.runtime_start == cb.get_version() == rule.version_start
    assert rule.data_types == ("fp16",) and rule.families == ("conv",)
    evidence = rule.data["cudnn_backend"]["evidence"][0]
    assert evidence["status"] == "wrong result" and evidence["checked_by"] == ex.check
    print(json.dumps(errata.to_dict(), indent=1))  # the rule as written, for the run's log

    # a new process: tune honours the file, the config is denied (never run) and is not the winner
    out = tmp_path / "tune.json"
    done = _cli("tune", "conv_fwd", *SIZES, "--strategy", "exhaustive", "--max-configs", "8", "--no-engines",
                "--quiet", "--no-cache", "--errata", str(found), "--json", str(out), "--width", "400")
    assert done.returncode == 0, done.stderr
    assert f"denied (rule {rule.rule_id})" in done.stdout
    tuned = cb.Exploration.from_json(out.read_text())
    denied = [r for r in tuned.results if r.status == "denied" and r.denied_by == rule.rule_id]
    assert [(r.source, r.rank) for r in denied] == [("A", 0)], tuned.table()
    assert denied[0].time_us is None and not denied[0].plan_built
    assert tuned.best is not None and tuned.best.status == "ok" and tuned.best.key != denied[0].key
    assert not [r for r in tuned.results if r.status == "wrong result"]  # the corruption was this test's alone

    # the same through the environment variable cudnn-frontend and PyTorch read
    env_done = subprocess.run([sys.executable, "-m", "cudnn_backend", "tune", "conv_fwd", *SIZES, "--max-configs",
                               "8", "--no-engines", "--quiet", "--no-cache", "--width", "400"], capture_output=True,
                              text=True, cwd=str(ROOT),
                              env=child_env(COLUMNS="200", CUDNN_ERRATA_JSON_FILE=str(found)), timeout=600)
    assert env_done.returncode == 0, env_done.stderr
    assert f"denied (rule {rule.rule_id})" in env_done.stdout


def test_a_cached_winner_a_rule_now_denies_is_searched_again(tmp_path, monkeypatch):
    monkeypatch.setenv(E.ENV_VAR, "")
    cache = PlanCache(tmp_path / "plans.sqlite")
    plan, ex = cb.autotune("conv_fwd", kwargs=KWARGS, cache=cache, max_configs=8, errata="")
    first = (plan.engine_index, dict(plan.knobs))
    plan.close()
    assert ex is not None and len(cache) == 1
    traits = E.GraphTraits.from_dict(ex.errata["traits"])
    deny = {"version": 1, "rules": [{"rule_id": "cached-winner", "operation": traits.operation, "engine": first[0],
                                     "knob": E.knob_strings(first[1]), "cudnn_backend": {"exact_knobs": True}}]}
    rules = tmp_path / "deny.json"
    rules.write_text(json.dumps(deny))
    plan, ex = cb.autotune("conv_fwd", kwargs=KWARGS, cache=cache, max_configs=8, errata=str(rules))
    try:
        assert ex is not None, "a cached plan the rules deny must not be a hit"
        assert any("plan cache:" in n and "denied by errata rule cached-winner" in n for n in ex.notes)
        assert (plan.engine_index, dict(plan.knobs)) != first
        assert [r.denied_by for r in ex.results if r.status == "denied"] in ([], ["cached-winner"])
    finally:
        plan.close()
    plan, ex = cb.autotune("conv_fwd", kwargs=KWARGS, cache=cache, max_configs=8, errata=str(rules))
    try:
        assert ex is None and (plan.engine_index, dict(plan.knobs)) != first  # the allowed winner, now a hit
    finally:
        plan.close()
    assert os.environ.get(E.ENV_VAR) == ""
