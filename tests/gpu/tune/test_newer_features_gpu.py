"""The newer releases' features on the GPU, checked against the fp64 reference: transpose, slice, RoPE, the diagonal
band mask and softmax patterns explored here (every config that runs is checked), and the TMA knobs in the knob
search wherever a live engine exposes them. On a release without an operation the version gate refuses it before
cuDNN sees it; where cuDNN has no engine for a pattern on this GPU, the test says so with cuDNN's reasons (the
offline side, tests/patterns/test_newer_patterns.py, records which run on Hopper). Shape overrides:
tests/gpu/runtime/test_overrides_gpu.py."""
import pytest

import cudnn_backend as cb
from cudnn_backend import patterns as P
from cudnn_backend.errors import CudnnVersionError
from cudnn_backend.runtime import engines
from cudnn_backend.runtime.heuristics import get_configs, why_no_engine

from tests.helpers.env import loaded_has
from tests.patterns.test_newer_patterns import NEWER, RUN_ON_HOPPER, _needs

TMA = ("INPUT_TMA_ENABLE", "OUTPUT_TMA_ENABLE")  # short names, as results and KnobSpec.name give them


@pytest.mark.parametrize("name", sorted(NEWER))
def test_newer_patterns_run_and_are_checked(name, results_file):
    if not loaded_has(_needs(name)):
        with pytest.raises(CudnnVersionError, match=f"needs cuDNN >= {_needs(name).rsplit('.', 1)[0]}"):
            P.CATALOGUE[name](build=False).graph.build()
        return
    pattern = P.CATALOGUE[name](build=False)
    og = pattern.graph.build(cb.Handle())
    counts = {m: len(get_configs(og, m, raise_if_empty=False)) for m in ("A", "FALLBACK")}
    if not any(counts.values()):
        reasons = why_no_engine(og)
        results_file(test="newer_features", cudnn=cb.get_version(), pattern=name, outcome="no engine", reasons=reasons)
        assert name not in RUN_ON_HOPPER, f"{name}: no engine config on this GPU: {reasons}"
        pytest.skip(f"{name}: cuDNN has no engine for it on this GPU: {reasons.splitlines()[0]}")
    ex = cb.explore(P.CATALOGUE[name](build=False), engines=False, max_configs=8)
    ok = [r for r in ex.results if r.status == "ok"]
    results_file(test="newer_features", cudnn=cb.get_version(), pattern=name, configs=counts, ok=len(ok),
                 check=ex.check, best_us=ex.best.time_us if ex.best else None)
    assert ok, ex.table()
    assert ex.check == "fp64 reference" or ex.check.startswith("sampled fp64 reference ("), ex.check
    assert all(r.correct and r.checked_by == ex.check for r in ok), ex.table()


def test_the_knob_search_tries_tma_knobs_wherever_an_engine_exposes_them(results_file):
    """Every catalogue pattern's heuristics configs on this GPU: the engines exposing a TMA knob (offline, none of the
    H100/H200 engines did on 9.28.1) are explored with the knob search, and each of their configs that runs is
    checked against the fp64 reference with its TMA knob set."""
    if not loaded_has("9.22.0"):
        pytest.skip("the TMA knobs came with cuDNN 9.22")
    exposing = {}
    handle = cb.Handle()
    for name, make in sorted(P.CATALOGUE.items()):
        try:
            og = make(build=False).graph.build(handle)
            configs = get_configs(og, "A", raise_if_empty=False)
        except cb.CudnnBackendError:
            continue
        for cfg in configs:
            knobs = {k.name for k in engines.engine_knobs(engines.make_engine(og, cfg.engine_index))}
            if knobs & set(TMA):
                exposing.setdefault(name, set()).add(cfg.engine_index)
    results_file(test="tma_knobs", cudnn=cb.get_version(), exposing={k: sorted(v) for k, v in exposing.items()})
    if not exposing:
        pytest.skip("no engine of the catalogue exposes a TMA knob on this GPU with this release (the knob search "
                    "has none to try)")
    for name in exposing:
        ex = cb.explore(P.CATALOGUE[name](build=False), engines=False, sweep=True, sweep_budget_s=3.0)
        tried = [r for r in ex.results if r.status == "ok" and set(r.knobs) & set(TMA)]
        assert tried, f"{name}: the knob search tried no TMA knob value:\n{ex.table()}"
        assert all(r.correct and "reference" in r.checked_by for r in tried), ex.table()
