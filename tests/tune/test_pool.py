"""Sweeps over a pool of workers, on the CPU: how searches are split (``split_plan``, ``plan_units``), which
worker takes which unit (scripted runners in real spawned workers: ``pool_runners``), the split search's parts and
merge (real candidates and plans against a device profile, injected timings: ``fakes.FakeTimes``), and the pool
kept warm across sweeps and closed quietly at exit. Decisions only: nothing here asserts a time."""
import os
import zlib

import pytest

import cudnn_backend as cb
from cudnn_backend.tune import Task
from cudnn_backend.tune.search import part_options
from cudnn_backend.tune.strategies.merge import part_finalists, search_key
from cudnn_backend.tune.sweeps import THREAD_POOL_VARIABLES, WorkerPool, plan_units, search_costs, split_plan
from tests.helpers.crash import run_python
from tests.tune import fakes
from tests.tune.pool_runners import scripted, thread_pools

offline_only = pytest.mark.skipif(cb.core.device.gpu_available(), reason="offline sweeps (a GPU times instead)")
CONV = Task("conv_fwd", dict(n=1, c=8, h=8, w=8, k=8))


# -- the plan ---------------------------------------------------------------------------------------------------------
def test_split_plan_fills_the_workers_and_splits_a_dominant_search():
    assert split_plan([1.0], 1) == [1]  # one worker: nothing to split for
    assert split_plan([1.0], 2) == [2]  # fewer graphs than workers: each split to fill them
    assert split_plan([1.0], 8) == [8]
    assert split_plan([1.0] * 3, 8) == [3, 3, 2]
    assert split_plan([1.0] * 24, 8) == [1] * 24  # many like graphs: the shared queue alone spreads them
    assert split_plan([1.0] * 24, 2) == [1] * 24
    assert split_plan([1.0, 1.0], 3) == [1, 1]  # a split whose parts and merge cost more than it saves: none
    assert split_plan([5.0, 1.0, 1.0, 1.0], 4)[0] == 4  # one graph dominates: it is split over every worker


def test_search_costs_grow_past_a_racing_sample():
    assert search_costs([0.0, 2e10, None]) == [1.0, 2.0, 1.5]  # unknown: the mean of the known
    assert search_costs([None]) == [1.0]


def test_plan_units_hands_out_the_parts_of_a_split_search():
    units = plan_units([CONV], "largest", split=True, workers=3)
    assert [(u.index, u.part, u.parts, u.merge) for u in units] == [(0, 0, 3, False), (0, 1, 3, False),
                                                                      (0, 2, 3, False)]  # the merge joins later
    assert units[1].label("conv") == "conv (part 2/3)"
    assert [u.parts for u in plan_units([CONV], "largest", split=False, workers=3)] == [1]
    tasks = [CONV, Task("conv_fwd", dict(n=8, c=64, h=56, w=56, k=64)), Task("x.py:unknown")]
    assert [u.index for u in plan_units(tasks, "largest", split=False, workers=2)] == [2, 1, 0]  # unknown size first
    assert [u.index for u in plan_units(tasks, "given", split=False, workers=2)] == [0, 1, 2]


def test_part_options_share_out_the_knob_search():
    o = cb.TuneOptions(sweep=True, sweep_budget_s=1.0, sweep_configs=10, sweep_seeds=3, pair_seeds=0)
    p = part_options(o, 2)
    assert (p.sweep_budget_s, p.sweep_configs, p.sweep_seeds, p.pair_seeds) == (0.5, 5, 2, 0)
    assert part_options(o, 1) is o
    assert part_options(o.replace(sweep_budget_s=None, sweep_configs=None), 4).sweep_configs is None


# -- the split search, in process (real candidates, injected timings) ---------------------------------------------------
def _truth(search, key):
    """A time per candidate that does not depend on which part proposed it."""
    return 10.0 + zlib.crc32(repr(key).encode()) % 1000 / 10.0


def _search(part=None, parts=None, n=1, truth=_truth, **kw):
    ex_ = fakes.explorer("conv_bias_relu", truth=truth, **kw)
    ex_.options = ex_.evaluator.options = part_options(ex_.options, n)
    ex_.part, ex_.parts = part, parts
    try:
        return ex_.run(), ex_.evaluator.log
    finally:
        ex_.close()


def test_heuristics_parts_deal_the_configs_out_once():
    whole, _ = _search()
    listed = {r.key for r in whole.results}
    parts = [{r.key for r in _search((i, 3), n=3)[0].results} for i in range(3)]
    assert set.union(*parts) == listed and sum(map(len, parts)) == len(listed)


@pytest.mark.parametrize("n", [2, 3])
def test_split_search_merges_to_the_same_winner(n):
    # the fastest candidate is a config heuristics list (each is dealt to one part): the split search must find it
    # whichever part it falls to. (A knob-search find need not be proposed by any part: each part searches around
    # its own fastest configs, so the two searches may find different knob values.)
    listed = sorted((search_key(r) for r in _search()[0].results), key=repr)
    fastest = listed[len(listed) // 2]

    def truth(search, key):
        return 1.0 if key == fastest else _truth(search, key)

    opts = dict(sweep=True, deterministic=True, sweep_configs=40, truth=truth)
    whole, _ = _search(**opts)
    parts = [_search((i, n), n=n, **opts)[0] for i in range(n)]
    merged, log = _search(parts=parts, **opts)
    assert search_key(merged.best) == search_key(whole.best) == fastest  # whichever part found it
    final = {key for what, key, _ in log if what == "final"}
    assert search_key(merged.best) == min(final, key=lambda k: truth(None, k))  # the merge: the final's fastest
    share = -(-4 // n)
    each = [{search_key(r) for r in part_finalists(p.results, share)} for p in parts]
    assert all(len(f) == share for f in each)  # finalists=4 shared out: the fastest 2 of each part (of 3: 2 each)
    finalists = set.union(*each)  # (two parts' knob searches may find one candidate: it is timed once)
    pick = merged.heuristics_pick
    timed_in_final = {key for what, key, _ in log if what == "final"}
    assert timed_in_final == finalists | {search_key(pick)}  # one final round on one GPU: parts' fastest and the pick
    assert {r.key for r in merged.results} == {r.key for p in parts for r in p.results}  # every part's results
    assert [r.winner for r in merged.results].count(True) == 1 and merged.results[0].winner
    assert any(f"{n} parts merged" in note for note in merged.notes)


# -- workers: who takes what ----------------------------------------------------------------------------------------
@pytest.fixture(scope="module")
def pool():
    with WorkerPool([None, None]) as p:
        yield p.start(wait=True)


def test_an_idle_worker_takes_the_next_unit(pool):
    tasks = [Task("long", {"sleep": 3.0}, "long")] + [Task("short", {"sleep": 0.02}, f"short{i}") for i in range(6)]
    results, reports = pool.run(tasks, "explore", {}, plan_units(tasks, "given"), runner=scripted)
    assert all(r.ok for r in results)
    long_worker = results[0].worker
    assert all(r.worker != long_worker for r in results[1:])  # no static share: the other worker took every short one
    ran = {w.worker: [u[0] for u in w.units] for w in reports}
    assert ran[long_worker] == ["long"] and sorted(sum(ran.values(), [])) == sorted(t.name for t in tasks)
    assert all(w.start_s == 0.0 for w in reports)  # warm: no start to wait for
    assert max(reports, key=lambda w: w.longest[1]).longest[0] == "long"


def test_workers_get_their_share_of_the_cores_for_numpys_thread_pools(pool, monkeypatch):
    # N workers each with BLAS/OpenMP pools of every core starve one another's host threads (kernel launches and
    # timings); each gets cores // N unless the user set the variable, which is then passed on as it is
    tasks = [Task("probe", {}, "probe")]
    results, _ = pool.run(tasks, "explore", {}, plan_units(tasks, "given"), runner=thread_pools)
    share = str(max(1, (os.cpu_count() or 1) // 2))
    given = {k: os.environ[k] for k in THREAD_POOL_VARIABLES if k in os.environ}
    assert results[0].exploration.notes == [f"{k}={given.get(k, share)}" for k in THREAD_POOL_VARIABLES]
    monkeypatch.setenv("OMP_NUM_THREADS", "3")
    with WorkerPool([None]) as one:
        results, _ = one.start(wait=True).run(tasks, "explore", {}, plan_units(tasks, "given"), runner=thread_pools)
    assert "OMP_NUM_THREADS=3" in results[0].exploration.notes
    assert os.environ["OMP_NUM_THREADS"] == "3"  # the coordinator's own environment is left as it was


def test_parts_go_to_both_workers_then_one_merges(pool):
    tasks = [Task("big", {"sleep": 1.0})]
    units = plan_units(tasks, "largest", split=True, workers=2)
    results, reports = pool.run(tasks, "explore", {}, units, runner=scripted)
    r = results[0]
    assert r.ok and sorted(p["unit"] for p in r.pieces[:2]) == ["task 0 (part 1/2)", "task 0 (part 2/2)"]
    assert r.pieces[2]["unit"] == "task 0 (merge of 2)"
    assert len({p["worker"] for p in r.pieces[:2]}) == 2  # the parts ran side by side
    assert r.exploration.notes == ["merge", "part 0", "part 1"]  # the merge got both parts, in part order
    assert sum(len(w.units) for w in reports) == 3


def test_a_dying_worker_fails_its_unit_only(pool):
    tasks = [Task("a"), Task("crash", {"die": "whole"}), Task("b"), Task("c")]
    results, _ = pool.run(tasks, "explore", {}, plan_units(tasks, "given"), runner=scripted)
    assert [r.ok for r in results] == [True, False, True, True]
    assert "worker process died (exit code 3)" in results[1].error
    split = [Task("half", {"die": "part 0"})]  # a part dies: the merge takes the other part, and says so
    results, _ = pool.run(split, "explore", {}, plan_units(split, "given", split=True, workers=2), runner=scripted)
    assert results[0].ok and results[0].exploration.notes[:2] == ["merge", "part 1"]
    assert "1 of the 2 parts failed: worker process died" in results[0].exploration.notes[-1]
    assert len(pool.workers) == 2 and all(w.process.is_alive() for w in pool.workers)  # replaced


# -- sweeps through the real run_task, offline -----------------------------------------------------------------------
@offline_only
def test_offline_split_sweep_agrees_with_serial():
    serial = cb.sweep([CONV], job="tune", executor="serial", engines=False)
    with WorkerPool([None, None]) as pool:
        split = cb.sweep([CONV], job="tune", executor="processes", pool=pool, split=True, engines=False)
        again = cb.sweep([CONV], job="tune", executor="processes", pool=pool, split=False, engines=False)
        processes = [w.process for w in pool.workers]
    assert split.split == {CONV.name: 2} and not again.split
    for result in (split, again):
        a, b = serial.results[0], result.results[0]
        assert b.ok and b.winner == a.winner  # offline: heuristics' first config that built, either way
        assert sorted(c.key for c in b.exploration.results) == sorted(c.key for c in a.exploration.results)
    assert [p["unit"].split(" (")[1] for p in split.results[0].pieces][-1] == "merge of 2)"
    assert {w.worker for w in split.worker_reports} == {"cpu worker 0", "cpu worker 1"}
    assert "split searches: conv_fwd n=1 c=8 h=8 w=8 k=8 over 2" in split.accounting()
    assert not any(p.is_alive() for p in processes)  # the pool closed with its block


@offline_only
def test_shared_pool_kept_warm_and_closed_quietly_at_exit():
    out = run_python("""
        import cudnn_backend as cb
        from cudnn_backend.tune.sweeps import shared_pool
        if __name__ == "__main__":
            tasks = [cb.Task("conv_fwd", dict(n=1, c=8, h=8, w=8, k=8)), cb.Task("layer_norm_fwd", dict(tokens=64,
                                                                                                     hidden=64))]
            first = cb.sweep(tasks, executor="processes", workers=2, engines=False)
            pids = [w.process.pid for w in shared_pool([None, None]).workers]
            second = cb.sweep(tasks, executor="processes", workers=2, engines=False)
            assert [w.process.pid for w in shared_pool([None, None]).workers] == pids
            assert all(w.start_s == 0 for w in second.worker_reports), second.accounting()
            assert any(w.start_s > 0 for w in first.worker_reports), first.accounting()
            print("ok", all(r.ok for r in first) and all(r.ok for r in second))
    """)
    assert out.returncode == 0, out.stderr
    assert out.stdout.strip() == "ok True" and out.stderr == ""  # the workers closed at exit, without a word
