"""Racing, the exhaustive pass, the deterministic mode and runtime-compiled plans built in threads, on a GPU. What
is asserted is what they decide and record, not how fast (``benchmarks/tune_racing_gpu.py`` measures that)."""
import pytest

import cudnn_backend as cb
from cudnn_backend.tune import results
from cudnn_backend.tune.inputs import make_buffer_sets
from cudnn_backend.tune.timing import Timer


CONV = dict(n=8, c=64, h=28, w=28, k=64)


def test_racing_checks_the_fastest_survivors_and_times_them_longer():
    ex = cb.explore("conv_bias_relu", kwargs=CONV, engines=False, sweep=True, sweep_budget_s=3.0)
    timed = [r for r in ex.results if r.time_us is not None]
    unchecked = [r for r in ex.results if r.status == results.TIMED]
    checked = [r for r in ex.results if r.checked_by]
    assert len(timed) > 20 and unchecked and checked
    assert all(not r.checked_by for r in unchecked)
    assert max(r.race_round or 1 for r in unchecked) > 1  # checked lazily: survivors of later rounds unchecked too
    ok = [r for r in checked if r.status == results.OK]
    assert ok and all(r.correct and r.rel_error < 5e-3 and r.checked_by == ex.check for r in ok)
    # the fastest first, until the final round has its 4 (and 2 more within the margin), plus heuristics' pick
    assert len(ok) <= 4 + 2 + 1, [r.label for r in ok]
    finalists = [r for r in ex.results if r.first_pass_us is not None]
    assert 2 <= len(finalists) <= 7 and all(r.status == results.OK for r in finalists)
    assert ex.best.winner and ex.best in finalists and ex.best.time_us == min(r.time_us for r in finalists)
    assert ex.best.kernels  # explore reads the kernels of every config it runs (fusion=True)
    assert any(n.startswith("racing: ") for n in ex.notes) and ex.measured.startswith("racing: ")
    assert {"heuristics", "inputs", "build", "time", "check", "final"} <= set(ex.phases)


def test_exhaustive_checks_every_config():
    ex = cb.explore("conv_fwd", kwargs=CONV, engines=False, strategy="exhaustive", max_configs=10)
    ran = [r for r in ex.results if r.time_us is not None]
    assert ran and all(r.status in (results.OK, results.WRONG) and r.checked_by for r in ran)
    assert not any(r.race_round for r in ex.results)
    assert ex.best.correct and ex.best.winner


def test_the_deterministic_winner_is_the_earliest_of_those_tied():
    ex = cb.explore("conv_fwd", kwargs=CONV, engines=False, deterministic=True, tie=0.05)
    finalists = [r for r in ex.results if r.first_pass_us is not None]
    fastest = min(r.time_us for r in finalists)
    tied = [r for r in finalists if r.time_us <= fastest * 1.05]
    order = {id(r): i for i, r in enumerate(sorted(ex.results, key=lambda r: (r.source != "A", r.rank or 0)))}
    assert ex.best in tied and ex.best is min(tied, key=lambda r: order[id(r)])
    assert any(n.startswith("deterministic: ") for n in ex.notes)


def test_runtime_compiled_plans_built_in_threads_run_on_the_gpu():
    ex = cb.explore("layer_norm_fwd", kwargs=dict(tokens=256, hidden=512), engines=False, build_threads=2,
                    modes=("A", "B", "FALLBACK"))
    compiled = [r for r in ex.results if r.runtime_compiled and r.plan_built]
    assert compiled, ex.table()
    assert all(r.time_us is not None and r.status in (results.OK, results.TIMED) for r in compiled)
    assert ex.best is not None and ex.best.correct
    plan, tuned = cb.autotune("layer_norm_fwd", kwargs=dict(tokens=256, hidden=512), build_threads=2)
    try:
        assert plan.engine_index == tuned.best.engine_index and plan.handle is not None
    finally:
        plan.close()


def test_lead_in_samples_time_what_plain_samples_time():
    """Racing's samples each start behind a call they do not measure (``lead_in``); the exhaustive pass's do not.
    Both must measure the plan's own calls: the same count of samples, each positive, medians within 1.5x of each
    other (an event read before its sample finished, or a sample spanning other work, would be far off)."""
    # GPU-bound (about 0.1 ms a call): a sample then times the GPU's work, not how fast this host launches, which
    # other load on the host can shift by more than 1.5x between two timings of a launch-bound conv
    plan, _ = cb.autotune("conv_fwd", kwargs=dict(n=32, c=256, h=56, w=56, k=256), sweep=False)
    handle = plan.handle
    sets = make_buffer_sets(plan.operation_graph, 1, stream=handle.stream)
    pack = cb.VariantPack(plan, sets[0].by_uid)  # its workspace allocated as needed
    try:
        timer = Timer(handle)
        plain = timer.time(plan, [pack], warmup=5, repeats=9, target_sample_us=200.0)
        lead_in = timer.time(plan, [pack], warmup=5, repeats=9, target_sample_us=200.0, lead_in=True)
        again = timer.time(plan, [pack], warmup=2, repeats=21, target_sample_us=100.0, warmup_us=50.0, lead_in=True)
        for t, n in ((plain, 9), (lead_in, 9), (again, 21)):
            assert t.samples == n and 0 < t.min_us <= t.median_us <= t.max_us and t.calls_per_sample >= 1
        assert 1 / 1.5 < lead_in.median_us / plain.median_us < 1.5, (lead_in, plain)
        assert 1 / 1.5 < again.median_us / plain.median_us < 1.5, (again, plain)
    finally:
        pack.close()
        for s in sets:
            s.close()
        plan.close()
