"""The knob search around good configs, run offline against the H200 profile: cuDNN finalizes every candidate
engine config and builds every plan for real; only the timings are injected (``fakes.FakeTimes``: the earlier a
candidate was proposed, the faster, i.e. heuristics' order stands in for GPU timings).

The reason for the test: engines couple their knobs, so changing one knob of a heuristics config is usually
refused; on an H200 a search over six values of one knob at a time found nothing new for conv + bias + ReLU.
"""
import itertools
import re

import pytest

from cudnn_backend.runtime import engines
from cudnn_backend.tune import results
from cudnn_backend.tune.strategies import Heuristics, KnobSearch
from tests.helpers.releases import profile
from tests.tune import fakes

_OPTIONS = dict(modes=("A",), sweep=True, sweep_budget_s=None, compile_budget_s=30.0, finalists=0, warmup=1,
                repeats=1, buffer_sets=1, fusion=False, engines=False, strategy="exhaustive")


def _search(pattern="conv_bias_relu", gpu="h200", **overrides):
    ex_ = fakes.explorer(pattern, gpu=gpu, **{**_OPTIONS, **overrides})
    return ex_, fakes.search_of(ex_, knob_search=True)


def _ranked_by_heuristics(search):
    """Heuristics' configs proposed and evaluated: plans built, times injected in heuristics order."""
    Heuristics().run(search)
    return [k for k in search.results]


def test_sweep_finds_valid_configs_heuristics_did_not_list():
    ex_, search = _search()
    try:
        keys = _ranked_by_heuristics(search)
        KnobSearch().run(search)
        found = [k for k, r in search.results.items() if r.source == "sweep"]
        assert found, search.notes
        assert not set(found) & set(keys)
        for key in found:  # each is a finalized config of a seed's engine, and cuDNN built a plan from it
            r = search.results[key]
            assert r.plan_built and r.status == results.OK, r.reason
            assert key[0] in {k[0] for k in keys}
            # the config records the graph explored, not cuDNN's read-back copy (buffers, packs and the
            # reference check need its tensors: an example's bench of a sweep winner failed on the GPU without)
            assert search.configs[key].operation_graph is ex_.op_graph
        # every candidate differs from its seed in one or two knobs, and none is refused twice
        note = search.notes[-1]
        assert note.startswith(f"sweep: {len(found)} new configs tried around 3 seeds of engines "), note
        assert "refused at engine-config finalize" in note and "budget" not in note
        assert "before cuDNN judged" not in note, note
    finally:
        ex_.close()


def test_candidates_differ_in_one_then_two_knobs():
    ex_, search = _search()
    try:
        _ranked_by_heuristics(search)
        ks = KnobSearch()
        seed = search.ranked()[0]
        base = search.configs[seed].knobs
        specs = engines.engine_knobs(search.configs[seed].engine)
        singles = list(ks.one_knob_changes(search, seed))
        assert len(singles) == sum(len(ks.spread(search, s)) for s in specs)
        ks.neighbours(search, seed, singles)  # the single changes proposed: the pairs' tiers read them
        tiered = list(ks.knob_pair_changes(search, seed))
        pairs = [c for _, c in tiered]
        assert all(len(c) == 2 and all(base[k] != v for k, v in c.items()) for c in pairs)
        tiers = [t for t, _ in tiered]
        assert tiers == sorted(tiers, reverse=True) and set(tiers) <= {0, 1, 2}
        for tier, change in tiered:  # the tier counts the changes cuDNN accepted alone
            alone = [ks.key_of(search.configs[seed], {**base, k: v}) in search.results for k, v in change.items()]
            assert tier == sum(alone)
        # round-robin within a tier: its first candidates cover each of its pairs of knobs once
        for tier in set(tiers):
            block = [tuple(sorted(map(int, c))) for t, c in tiered if t == tier]
            n_pairs = len(set(block))
            assert len(set(block[:n_pairs])) == n_pairs
        def changed(spec):
            return sum(v != base.get(spec.knob_type) for v in ks.spread(search, spec))

        assert len(pairs) == sum(changed(a) * changed(b) for a, b in itertools.combinations(specs, 2))
        for key in ks.neighbours(search, seed, tiered):
            knobs = search.configs[key].knobs
            assert 1 <= sum(knobs.get(k) != v for k, v in base.items()) <= 2
    finally:
        ex_.close()


def test_seeds_cover_the_fastest_engines_first():
    ex_, search = _search()
    try:
        _ranked_by_heuristics(search)
        ranked = search.ranked()
        engines_by_speed = list(dict.fromkeys(k[0] for k in ranked))
        seeds = search.seed_keys(3)
        assert [k[0] for k in seeds[:min(3, len(engines_by_speed))]] == engines_by_speed[:3]
        assert seeds[0] == ranked[0] and len(set(seeds)) == len(seeds) == min(3, len(ranked))
    finally:
        ex_.close()


def test_a_spent_budget_stops_the_search_and_says_so():
    ex_, search = _search(sweep_budget_s=0.0)
    try:
        _ranked_by_heuristics(search)
        KnobSearch().run(search)
        assert not any(r.source == "sweep" and r.plan_built for r in search.results.values())
        assert "budget ran out" in search.notes[-1]
    finally:
        ex_.close()


def test_a_count_budget_stops_the_search_after_that_many_candidates():
    ex_, search = _search(sweep_configs=5, deterministic=True, sweep_budget_s=0.0)  # seconds ignored: counts rule
    try:
        _ranked_by_heuristics(search)
        KnobSearch().run(search)
        evaluated = [r for r in search.results.values() if r.source == "sweep" and r.status != results.SKIPPED]
        assert len(evaluated) == 5
        assert "budget of 5 configs ran out" in search.notes[-1], search.notes[-1]
    finally:
        ex_.close()


def test_spread_thins_long_knob_ranges_evenly():
    ex_, search = _search(knob_values=4)
    try:
        _ranked_by_heuristics(search)
        ks = KnobSearch()
        seed = search.ranked()[0]
        for s in engines.engine_knobs(search.configs[seed].engine):
            values = ks.spread(search, s)
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
    ex_, search = _search(pattern, gpu=gpu)
    try:
        keys = Heuristics().candidates(search)
        assert keys
        ks = KnobSearch()
        checked = 0
        for key in dict.fromkeys(keys):
            specs = engines.engine_knobs(search.configs[key].engine)
            changes = list(ks.one_knob_changes(search, key))
            assert len(changes) == sum(len(ks.spread(search, s)) for s in specs)
            first_round = changes[:len(specs)]
            assert [next(iter(c)) for c in first_round] == [s.knob_type for s in specs]
            for s in specs:
                if s.knob_type in TMA:  # both settings of the switch are candidates
                    assert {c[s.knob_type] for c in changes if s.knob_type in c} == set(s.values())
            checked += len(specs) > 1
        assert checked, "no engine with two knobs or more: the round-robin was not exercised"
    finally:
        ex_.close()


def test_pair_search_all_offers_every_pair_round_robin_and_the_learned_one_fewer_first():
    """``pair_search="all"`` (the search before racing): every pair of values of every pair of knobs, round-robin,
    none given up. The learned order tries a subset first, and its tiers of less likely pairs give up."""
    ex_, search = _search(pair_search="all")
    try:
        _ranked_by_heuristics(search)
        ks = KnobSearch()
        seed = search.ranked()[0]
        specs = engines.engine_knobs(search.configs[seed].engine)
        every = list(ks.knob_pair_changes(search, seed))
        assert {t for t, _ in every} == {2}
        assert len(every) == sum(len(ks.spread(search, a)) * len(ks.spread(search, b))
                                 for a, b in itertools.combinations(specs, 2))
        n_pairs = len(specs) * (len(specs) - 1) // 2
        assert len({tuple(sorted(map(int, c))) for _, c in every[:n_pairs]}) == n_pairs
    finally:
        ex_.close()
    found, refused = {}, {}
    for how in ("learned", "all"):
        ex_ = fakes.explorer("conv_fwd", gpu="h100", **{**_OPTIONS, "pair_search": how})
        try:
            ex = ex_.run()
            found[how] = {r.key for r in ex.results if r.source == "sweep"}
            note = next(n for n in ex.notes if n.startswith("sweep:"))
            refused[how] = int(re.search(r"(\d+) knob combinations refused", note).group(1))
        finally:
            ex_.close()
    # most of what every pair finds, for a fraction of the refused finalizes
    assert len(found["learned"] & found["all"]) >= 0.8 * len(found["all"]) > 0
    assert refused["learned"] < refused["all"] / 2, refused
