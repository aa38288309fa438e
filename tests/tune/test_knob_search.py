"""The knob search around good configs, run offline against the H200 profile: cuDNN finalizes every candidate
engine config for real; only the ranking (normally GPU timings) is stood in for by the heuristics order.

The reason for the test: engines couple their knobs, so changing one knob of a heuristics config is usually
refused; on an H200 a search over six values of one knob at a time found nothing new for conv + bias + ReLU.
"""
import pytest

from cudnn_backend.tune import explorer, results
from cudnn_backend.runtime import engines
from tests.helpers.releases import profile

_OPTIONS = dict(handle=None, device_profile=None, modes=("A",), time=False, sweep=False, max_workspace=None,
                sm_count_target=None, max_configs=None, engines=False, sweep_seeds=3, pair_seeds=2,
                knob_values=32, sweep_budget_s=None, compile_budget_s=30.0, finalists=0, final_rounds=1,
                warmup=1, repeats=1, buffer_sets=1, cold=False, cuda_graph=False, buffers=None, fusion=False,
                progress=None, name=None, args=(), kwargs={}, keep_plans=False)


def _explorer(**overrides):
    return explorer._Explorer("conv_bias_relu", **{**_OPTIONS, **overrides})


def _ranked_by_heuristics(ex_):
    """Mark the configs that built a plan as timed, in heuristics order (what a GPU run would measure)."""
    exploration = ex_.exploration()
    keys = ex_.heuristics(exploration)
    for key in keys:
        ex_.try_config(key)
    for i, key in enumerate(keys):
        r = ex_.results[key]
        if r.status == results.PLAN_BUILT:
            r.status, r.time_us = results.OK, 10.0 + i
    return exploration, keys


def test_sweep_finds_valid_configs_heuristics_did_not_list():
    ex_ = _explorer()
    try:
        exploration, keys = _ranked_by_heuristics(ex_)
        ex_.run_sweep(exploration)
        found = [k for k, r in ex_.results.items() if r.source == "sweep"]
        assert found, exploration.notes
        assert not set(found) & set(keys)
        for key in found:  # each is a finalized config of a seed's engine, and cuDNN built a plan from it
            assert ex_.results[key].status == results.PLAN_BUILT, ex_.results[key].reason
            assert key[0] in {k[0] for k in keys}
            # the config records the graph explored, not cuDNN's read-back copy (buffers, packs and the
            # reference check need its tensors: an example's bench of a sweep winner failed on the GPU without)
            assert ex_.configs[key].operation_graph is ex_.op_graph
        # every candidate differs from its seed in one or two knobs, and none is refused twice
        note = exploration.notes[-1]
        assert note.startswith(f"sweep: {len(found)} new configs tried around 3 seeds of engines "), note
        assert "refused at engine-config finalize" in note and "budget" not in note
        assert "before cuDNN judged" not in note, note
    finally:
        ex_.close()


def test_candidates_differ_in_one_then_two_knobs():
    ex_ = _explorer()
    try:
        _ranked_by_heuristics(ex_)
        seed = ex_.ranked_ok()[0]
        base = ex_.configs[seed].knobs
        specs = engines.engine_knobs(ex_.configs[seed].engine)
        singles = list(ex_.one_knob_changes(seed))
        assert len(singles) == sum(len(ex_.spread(s)) for s in specs)
        pairs = list(ex_.knob_pair_changes(seed))
        assert all(len(c) == 2 for c in pairs)
        # round-robin: the first len(pairs of knobs) candidates cover every pair of knobs once
        n_pairs = len(specs) * (len(specs) - 1) // 2
        assert len({tuple(sorted(map(int, c))) for c in pairs[:n_pairs]}) == n_pairs
        for key in ex_.neighbours(seed, pairs):
            knobs = ex_.configs[key].knobs
            assert 1 <= sum(knobs.get(k) != v for k, v in base.items()) <= 2
    finally:
        ex_.close()


def test_seeds_cover_the_fastest_engines_first():
    ex_ = _explorer()
    try:
        _ranked_by_heuristics(ex_)
        ranked = ex_.ranked_ok()
        engines_by_speed = list(dict.fromkeys(k[0] for k in ranked))
        seeds = ex_.seed_keys(3)
        assert [k[0] for k in seeds[:min(3, len(engines_by_speed))]] == engines_by_speed[:3]
        assert seeds[0] == ranked[0] and len(set(seeds)) == len(seeds) == min(3, len(ranked))
    finally:
        ex_.close()


def test_a_spent_budget_stops_the_search_and_says_so():
    ex_ = _explorer(sweep_budget_s=0.0)
    try:
        exploration, _ = _ranked_by_heuristics(ex_)
        ex_.run_sweep(exploration)
        assert not any(r.source == "sweep" and r.status == results.PLAN_BUILT for r in ex_.results.values())
        assert "budget ran out" in exploration.notes[-1]
    finally:
        ex_.close()


def test_spread_thins_long_knob_ranges_evenly():
    ex_ = _explorer(knob_values=4)
    try:
        _ranked_by_heuristics(ex_)
        seed = ex_.ranked_ok()[0]
        for s in engines.engine_knobs(ex_.configs[seed].engine):
            values = ex_.spread(s)
            assert len(values) == min(4, len(s))
            assert values[0] == s.values()[0] and values[-1] == s.values()[-1]
    finally:
        ex_.close()


TMA = {engines.KnobType.CUDNN_KNOB_TYPE_INPUT_TMA_ENABLE, engines.KnobType.CUDNN_KNOB_TYPE_OUTPUT_TMA_ENABLE}


@pytest.mark.parametrize("gpu", ["h100", "h200"])
@pytest.mark.parametrize("pattern", ["conv_bias_relu", "conv_fwd", "matmul_bias_relu"])
def test_the_first_round_of_one_knob_changes_tries_every_knob(pattern, gpu):
    """One knob at a time goes round-robin over the knobs: the first candidates cover every knob of the engine, so a
    spent budget never leaves a knob untried behind a long one (a 265-value KERNEL_CFG before the INPUT_TMA_ENABLE /
    OUTPUT_TMA_ENABLE switches of cuDNN 9.22+, which the search tries on every engine that exposes them)."""
    ex_ = explorer._Explorer(pattern, **{**_OPTIONS, "device_profile": profile(gpu)})
    try:
        keys = ex_.heuristics(ex_.exploration())
        assert keys
        checked = 0
        for key in dict.fromkeys(keys):
            specs = engines.engine_knobs(ex_.configs[key].engine)
            changes = list(ex_.one_knob_changes(key))
            assert len(changes) == sum(len(ex_.spread(s)) for s in specs)
            first_round = changes[:len(specs)]
            assert [next(iter(c)) for c in first_round] == [s.knob_type for s in specs]
            for s in specs:
                if s.knob_type in TMA:  # both settings of the switch are candidates
                    assert {c[s.knob_type] for c in changes if s.knob_type in c} == set(s.values())
            checked += len(specs) > 1
        assert checked, "no engine with two knobs or more: the round-robin was not exercised"
    finally:
        ex_.close()
