"""The search strategies offline: real candidates (heuristics' lists and the knob search, finalized and built by
cuDNN against the H200 profile) and injected timings (``fakes.FakeTimes``). What racing times, keeps, checks and
chooses; the exhaustive pass; the deterministic mode; the pieces a split search needs."""
import collections
import json
import math

import pytest

from cudnn_backend.tune import TuneOptions, results
from cudnn_backend.tune.search import merge, partition, rank
from cudnn_backend.tune.strategies import STRATEGIES, Exhaustive, FinalRound, Heuristics, KnobSearch, Racing, pipeline
from cudnn_backend.tune.strategies.racing import DETERMINISTIC_SAMPLES, first_samples, schedule
from tests.tune import fakes


def _run(**kw):
    ex_ = fakes.explorer(**kw)
    try:
        return ex_.run(), ex_.evaluator.log
    finally:
        ex_.close()


def _run_in_order(**kw):
    """(exploration, the candidates' ConfigResult keys in the order they were proposed)."""
    ex_ = fakes.explorer(**kw)
    try:
        ex = ex_.run()
        return ex, [ex_.search.results[k].key for k in sorted(ex_.search.order, key=ex_.search.order.get)]
    finally:
        ex_.close()


# ---------------------------------------------------------------------------------------------
# the pieces
# ---------------------------------------------------------------------------------------------
def test_rank_breaks_ties_by_candidate_order_only_when_asked():
    times = {"a": 10.3, "b": 10.0, "c": 10.1, "d": 12.0, "e": 12.1}
    order = {"a": 0, "b": 1, "c": 2, "d": 4, "e": 3}
    assert rank(times, times.get, order.get) == ["b", "c", "a", "d", "e"]
    # within 5% of the fastest remaining: a, b, c tie (a first), then d and e tie (e was proposed first)
    assert rank(times, times.get, order.get, tie=0.05) == ["a", "b", "c", "e", "d"]
    # 2%: b and c tie (b first); then c (10.1) and a (10.3) tie, and a was proposed first
    assert rank(times, times.get, order.get, tie=0.02) == ["b", "a", "c", "e", "d"]
    assert rank([], times.get, order.get, tie=0.1) == []


def test_partition_and_merge_split_a_candidate_list():
    keys = list(range(10))
    parts = partition(keys, 3)
    assert parts == [[0, 3, 6, 9], [1, 4, 7], [2, 5, 8]]
    assert sorted(k for p in parts for k in p) == keys
    assert partition(keys, 20)[:10] == [[k] for k in keys]
    with pytest.raises(ValueError, match="parts"):
        partition(keys, 0)
    a = results.ConfigResult(1, {"X": 1}, "A", 0, status="ok", time_us=5.0)
    b = results.ConfigResult(2, {}, "sweep", status="ok", time_us=4.0)
    a_again = results.ConfigResult(1, {"X": 1}, "A", 0, status="ok", time_us=4.5)
    merged = merge([[a, b], [a_again]])
    assert merged == {a.key: a_again, b.key: b}


def test_the_racing_schedule():
    o = TuneOptions(race_samples=3)  # keep 1/4, 3 samples, finalists 4, repeats 20
    assert schedule(TuneOptions(), 400) == [(1, 400, 2), (2, 100, 8), (3, 25, 20)]  # the defaults: 2 samples
    assert schedule(o, 400) == [(1, 400, 3), (2, 100, 12), (3, 25, 20)]
    assert schedule(o, 60) == [(1, 60, 3), (2, 15, 12)]  # then 15 -> 4: the final round times those
    assert schedule(o, 4) == [(1, 4, 3)]
    assert schedule(o.replace(finalists=0), 60) == [(1, 60, 3), (2, 15, 12), (3, 4, 20)]
    assert schedule(o.replace(race_keep=0.5, race_samples=2), 40) == [(1, 40, 2), (2, 20, 4), (3, 10, 8), (4, 5, 16)]


def test_the_pipeline_the_options_give():
    assert STRATEGIES == {"racing": Racing, "exhaustive": Exhaustive}
    names = [s.name for s in pipeline(TuneOptions(sweep=True))]
    assert names == ["heuristics", "knobs", "racing", "final"]
    names = [s.name for s in pipeline(TuneOptions(strategy="exhaustive", finalists=0))]
    assert names == ["heuristics", "exhaustive"]
    assert [type(s) for s in pipeline(TuneOptions(), knob_search=True)] == [Heuristics, KnobSearch, Racing,
                                                                             FinalRound]


# ---------------------------------------------------------------------------------------------
# racing
# ---------------------------------------------------------------------------------------------
def test_racing_times_everyone_briefly_and_only_the_fastest_longer():
    ex, log = _run(sweep=True, sweep_budget_s=None, race_margin=0.0)
    screened = [k for what, k, _ in log if what == "screen"]
    timed = [r for r in ex.results if r.time_us is not None]
    assert len(screened) == len(set(screened)) == len(timed) > 20
    assert {n for what, _, n in log if what == "screen"} == {TuneOptions().race_samples}  # race_samples each
    rounds = collections.Counter(what for what, _, _ in log)
    n = len(screened)
    assert rounds["race 2"] == math.ceil(n / 4)  # the fastest quarter, timed again
    assert {s for what, _, s in log if what == "race 2"} == {4 * TuneOptions().race_samples}
    assert "race 3" not in rounds or rounds["race 3"] == math.ceil(math.ceil(n / 4) / 4)
    # checked lazily: the fastest of the last round until the final round has its 4; the rest say so
    checked = [k for what, k, _ in log if what == "check"]
    assert len(checked) == 4 and not any(what.startswith("race") for what, _, _ in log[log.index(
        ("check", checked[0], 0)):])
    unchecked = [r for r in ex.results if r.status == results.TIMED]
    assert len(unchecked) == n - len(checked) and all(not r.checked_by for r in unchecked)
    # the final round: the 4 fastest of the last round (and heuristics' pick, the fastest here)
    finalists = [r for r in ex.results if r.first_pass_us is not None]
    assert len(finalists) == 4 and all(r.status == results.OK for r in finalists)
    # the truth is candidate order: heuristics' first config is the fastest, and wins
    assert ex.best is ex.results[0] and ex.best.source == "A" and ex.best.rank == 0 and ex.best.winner
    assert sum(r.winner for r in ex.results) == 1
    assert any(n.startswith("racing: ") for n in ex.notes) and ex.measured.startswith("racing: ")
    assert ex.options["strategy"] == "racing" and ex.options["race_keep"] == 0.25


def test_racing_keeps_those_near_the_cut_and_heuristics_first_guesses():
    """Truth = candidate order (+1 us each from 10 us): a cut at the n-th keeps the next ones within 10% of it,
    at most 1.5 times as many; round 1 also keeps heuristics' first configs, however they were timed."""
    ex_ = fakes.explorer(sweep=True, sweep_budget_s=None, finalists=4)
    try:
        search = fakes.search_of(ex_, knob_search=True)
        Heuristics().run(search)
        KnobSearch().run(search)
        ranked = search.ranked()
        n = math.ceil(len(ranked) / 4)
        cut = search.results[ranked[n - 1]].time_us
        near = [k for k in ranked[n:] if search.results[k].time_us <= cut * 1.1]
        assert near, "the graph has candidates near the cut"
        assert search.survivors(ranked, 0.25, 4) == ranked[:n]
        assert search.survivors(ranked, 0.25, 4, 0.1) == ranked[:n + min(len(near), math.ceil(1.5 * n) - n)]
        assert len(search.survivors(ranked, 0.25, 4, 1.0)) == math.ceil(1.5 * n)  # bounded
        slow_guess = ranked[-1]
        assert search.survivors(ranked, 0.25, 4, 0.1, [slow_guess])[-1] == slow_guess
        firsts = search.heuristics_firsts(2)
        assert firsts and all(search.results[k].rank < 2 and search.results[k].source != "sweep" for k in firsts)
    finally:
        ex_.close()


def test_checks_run_fastest_first_until_the_final_round_has_its_few():
    """The three fastest are wrong: racing checks them and the next four (the finalists), no more, and a wrong
    config never wins."""
    probe = fakes.explorer(modes=("A",), race_margin=0.0)
    try:
        probe.run()
        fastest = probe.search.ranked()[:3]
    finally:
        probe.close()
    ex_ = fakes.explorer(modes=("A",), race_margin=0.0, wrong=set(fastest))
    try:
        ex = ex_.run()
        checked = [k for what, k, _ in ex_.evaluator.log if what == "check"]
        assert checked[:3] == fastest and len(checked) == 3 + 4
        assert ex_.best_key() not in fastest and ex.best.status == results.OK
        assert all(ex_.search.results[k].status == results.WRONG for k in fastest)
    finally:
        ex_.close()


def test_a_wrong_survivor_leaves_the_race():
    probe = fakes.explorer(modes=("A",), finalists=2)
    try:
        ex0 = probe.run()
        first = next(k for k, r in probe.search.results.items() if r is ex0.results[0])
    finally:
        probe.close()
    ex, log = _run(modes=("A",), finalists=2, wrong={first})
    bad = next(r for r in ex.results if r.key == ex0.results[0].key)
    assert bad.status == results.WRONG and bad.correct is False
    assert ex.best is not bad and ex.best.status == results.OK and ex.best.correct
    assert bad.first_pass_us is None  # never a finalist


def _close_calls(search, key):
    """Candidate i is 0.5% x i slower than the first: within 2% of the best are the first five."""
    return 10.0 * (1 + 0.005 * search.order[key])


def test_racing_keeps_the_winner_within_2_percent_under_noise():
    """5% noise per sample (the first round's 3 samples: ~3%, more than the gaps): over seeds, the winner is
    always within 2% of the true best; the exhaustive pass under the same noise likewise."""
    for strategy in ("racing", "exhaustive"):
        for seed in range(6):
            ex_ = fakes.explorer(sweep=True, sweep_budget_s=None, noise=0.05, seed=seed, truth=_close_calls,
                                 strategy=strategy)
            try:
                ex_.run()
                winner = ex_.best_key()
                assert _close_calls(ex_.search, winner) <= 10.0 * 1.02, (strategy, seed, ex_.search.order[winner])
                assert len(ex_.search.results) > 40
            finally:
                ex_.close()


def test_exhaustive_checks_and_times_every_candidate_fully():
    ex, log = _run(strategy="exhaustive", modes=("A",), repeats=7)
    screened = [(k, n) for what, k, n in log if what == "screen"]
    checked = [k for what, k, _ in log if what == "check"]
    assert screened and {n for _, n in screened} == {7} and [k for k, _ in screened] == checked
    assert not any(r.status == results.TIMED for r in ex.results)
    assert all(r.race_round is None for r in ex.results)
    assert len([r for r in ex.results if r.first_pass_us is not None]) == 4
    assert ex.best.source == "A" and ex.best.rank == 0


def test_offline_nothing_is_raced():
    import cudnn_backend as cb

    ex = cb.explore("conv_fwd", kwargs=dict(n=1, c=8, h=8, w=8, k=8), engines=False)
    assert ex.options["strategy"] == "racing" and not ex.timed
    assert all(r.status == results.PLAN_BUILT and r.race_round is None for r in ex.results)
    assert not any(n.startswith("racing") for n in ex.notes)


# ---------------------------------------------------------------------------------------------
# the deterministic mode
# ---------------------------------------------------------------------------------------------
def _tied(search, key):
    """Three candidates (positions 2, 4, 6) tie within 0.2%; every other is >= 10% slower."""
    i = search.order[key]
    return {2: 10.01, 4: 10.0, 6: 10.02}.get(i, 11.0 + i)


def test_the_deterministic_mode_chooses_the_same_winner_when_times_tie():
    winners = {}
    for deterministic in (False, True):
        got = []
        for seed in range(6):
            ex, _ = _run(modes=("A",), noise=0.03, seed=seed, truth=_tied, deterministic=deterministic)
            got.append((ex.best.source, ex.best.rank))
        winners[deterministic] = got
    assert len(set(winners[True])) == 1, winners[True]
    assert winners[True][0] == ("A", 2)  # the earliest candidate of those tied
    assert len(set(winners[False])) > 1, winners[False]  # without it, the noise decides


def test_the_deterministic_mode_searches_the_same_candidates_in_the_same_order():
    def tied_engines(search, key):  # the first configs of three engines tie: the knob search's seeds depend on it
        r = search.results[key]
        return 10.0 if r.source == "A" and r.rank in (0, 1, 2) else 11.0 + search.order[key] / 100

    runs = []
    for seed in (1, 2, 3):
        ex, order = _run_in_order(modes=("A",), sweep=True, sweep_configs=20, noise=0.01, seed=seed,
                                  truth=tied_engines, deterministic=True)
        assert sum(r.source == "sweep" and r.status != results.SKIPPED for r in ex.results) == 20
        runs.append((order, ex.best.key))
    assert runs[0] == runs[1] == runs[2]
    # without the deterministic mode the seeds, hence the candidates, follow the noise
    free = {tuple(_run_in_order(modes=("A",), sweep=True, sweep_configs=20, noise=0.01, seed=seed,
                                truth=tied_engines)[1]) for seed in (1, 2, 3)}
    assert len(free) > 1


# ---------------------------------------------------------------------------------------------
# runtime-compiled plans built ahead, in threads, within the compilation budget
# ---------------------------------------------------------------------------------------------
MATMUL = dict(batch=2, m=64, n=64, k=64)


def test_runtime_compiled_plans_are_built_ahead_in_threads():
    import cudnn_backend as cb

    serial = cb.explore("matmul_bias_relu", kwargs=MATMUL, engines=False, build_threads=0)
    threaded = cb.explore("matmul_bias_relu", kwargs=MATMUL, engines=False, build_threads=2)
    compiled = [r for r in threaded.results if r.runtime_compiled]
    assert len(compiled) >= 2 and all(r.status == results.PLAN_BUILT and r.plan_built for r in compiled)
    assert [(r.key, r.status) for r in serial.results] == [(r.key, r.status) for r in threaded.results]
    assert any(n.startswith(f"{len(compiled)} runtime-compiled plans built ahead in 2 threads")
               for n in threaded.notes), threaded.notes
    assert not any("built ahead" in n for n in serial.notes)
    assert threaded.phases["build"] > 0


def test_the_compilation_budget_skips_the_rest_and_says_why():
    import cudnn_backend as cb

    ex = cb.explore("matmul_bias_relu", kwargs=MATMUL, engines=False, build_threads=0, compile_budget_s=0.0)
    compiled = [r for r in ex.results if r.runtime_compiled]
    assert compiled[0].status == results.PLAN_BUILT
    assert all(r.status == results.SKIPPED and r.reason == "runtime-compilation budget of 0 s spent"
               for r in compiled[1:]) and len(compiled) >= 2
    # deterministic: budgets are counts; seconds do not cut the list short
    ex = cb.explore("matmul_bias_relu", kwargs=MATMUL, engines=False, build_threads=0, compile_budget_s=0.0,
                    deterministic=True)
    assert all(r.status == results.PLAN_BUILT for r in ex.results if r.runtime_compiled)


def test_the_racing_simulation_runs_on_the_recorded_timings(tmp_path):
    """benchmarks/racing_simulation.py (its committed result: benchmarks/results/2026-11-25-cpu) still runs: the
    real strategies over recorded H200 timings, a quick run of the defaults."""
    import json
    import os
    import subprocess
    import sys

    from tests.helpers.env import ROOT

    out = tmp_path / "sim.json"
    run = subprocess.run([sys.executable, str(ROOT / "benchmarks" / "racing_simulation.py"), "--trials", "3",
                          "--graphs", "3", "--grid", "defaults", "--out", str(out)], capture_output=True, text=True,
                         timeout=600, cwd=ROOT, env=dict(os.environ, PYTHONPATH=str(ROOT)))
    assert run.returncode == 0, run.stderr[-3000:]
    data = json.loads(out.read_text())
    o = TuneOptions()
    assert data["defaults"] == f"racing keep={o.race_keep:g} samples={o.race_samples} margin={o.race_margin:g}"
    assert len(data["graphs"]) == 3
    for row in ("exhaustive", data["defaults"]):
        s = data["summary"][row]
        assert 0.0 <= s["keeps_best_worst"] <= s["keeps_best_mean"] <= 1.0 and s["cost_ms_total"] > 0
    assert data["summary"][data["defaults"]]["cost_ms_total"] < data["summary"]["exhaustive"]["cost_ms_total"]


def test_the_deterministic_mode_times_round_one_with_at_least_three_samples():
    assert first_samples(TuneOptions()) == TuneOptions().race_samples == 2
    assert first_samples(TuneOptions(deterministic=True)) == DETERMINISTIC_SAMPLES == 3
    assert first_samples(TuneOptions(deterministic=True, race_samples=5)) == 5
    assert schedule(TuneOptions(deterministic=True), 400)[0] == (1, 400, 3)


# ---------------------------------------------------------------------------------------------
# another release's winner (the plan cache's, after an upgrade)
# ---------------------------------------------------------------------------------------------
def _entry(engine_index, knobs, version=91900, time_us=9.5):
    from cudnn_backend.tune.cache import CacheEntry

    return CacheEntry("k" * 64, "fp", "NVIDIA H200", 90, 132, version, engine_index, dict(knobs), time_us, {}, 0.0, 1)


def _candidates():
    ex, order = _run_in_order()
    return ex, order


def test_another_releases_winner_is_timed_head_to_head_with_the_new_winner():
    ex, order = _candidates()
    slow = order[4]  # a config heuristics list, made the slowest of all: racing would drop it early
    truth = lambda search, key: 50.0 if search.results[key].key == slow else fakes.by_candidate_order(search, key)  # noqa: E731
    ex_ = fakes.explorer(truth=truth)
    ex_.previous = _entry(slow[0], dict(slow[1]))
    try:
        ex = ex_.run()
    finally:
        ex_.close()
    p = ex.previous
    assert p["cudnn_version"] == "9.19.0" and p["engine_index"] == slow[0] and p["time_us_then"] == 9.5
    assert p["status"] == results.OK and not p["winner"] and p["ratio_to_winner"] == pytest.approx(50.0 / 10.0)
    old = next(r for r in ex.results if r.key == slow)
    assert old.first_pass_us is not None  # a finalist: re-timed head to head, measured like the winner
    assert any(n.startswith("the cuDNN 9.19.0 winner") and "5.00x the new winner" in n for n in ex.notes), ex.notes
    assert any("another release's winner" in n for n in ex.notes if n.startswith("final round"))


def test_another_releases_winner_that_is_still_the_fastest_wins():
    ex, order = _candidates()
    fast = order[6]
    truth = lambda search, key: 1.0 if search.results[key].key == fast else fakes.by_candidate_order(search, key)  # noqa: E731
    ex_ = fakes.explorer(truth=truth)
    ex_.previous = _entry(fast[0], dict(fast[1]))
    try:
        ex = ex_.run()
    finally:
        ex_.close()
    assert ex.best.key == fast and ex.previous["winner"] and ex.previous["ratio_to_winner"] == 1.0
    assert any("still the fastest" in n for n in ex.notes)


def test_another_releases_winner_this_release_refuses_is_said_so():
    ex_ = fakes.explorer()
    ex_.previous = _entry(10_000, {"TILE_SIZE": 1})  # no such engine on this release
    try:
        ex = ex_.run()
    finally:
        ex_.close()
    assert ex.previous["status"] == "refused" and ex.previous["reason"]
    assert ex.best is not None  # the new search still chose
    assert any("(the cuDNN 9.19.0 winner, 9.50 us there): refused by this release" in n for n in ex.notes), ex.notes
    assert json.loads(ex.to_json())["previous"]["status"] == "refused"


def test_the_final_rounds_contenders_are_ordered_by_their_time_alone():
    """Heuristics' pick (or another release's winner) joins the final round after leaving the race early: timed
    head to head with the others, its time alone places it among them (not the racing round it left at)."""
    from types import SimpleNamespace

    from cudnn_backend.tune.explorer import _Explorer

    def result(engine, us, race_round, final=True, winner=False):
        return results.ConfigResult(engine, {}, "A", engine, status=results.OK, time_us=us, race_round=race_round,
                                    first_pass_us=us + 1 if final else None, winner=winner)

    res = {("won",): result(0, 5.0, 3, winner=True), ("pick",): result(1, 6.0, 1), ("third",): result(2, 7.0, 3),
           ("raced out",): result(3, 4.0, 2, final=False), ("early",): result(4, 3.0, 1, final=False)}
    explorer = object.__new__(_Explorer)
    explorer.search = SimpleNamespace(results=res)
    assert explorer.ordered_keys() == [("won",), ("pick",), ("third",), ("raced out",), ("early",)]
