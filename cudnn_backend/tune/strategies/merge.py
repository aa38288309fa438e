"""The last step of a search split over several GPUs: each part searched its share of heuristics'
configs (and the knob search around its own fastest) on its own GPU, raced them and ran its own final round; here,
on one GPU, the parts' results are merged by key and the fastest ``share`` of each part, with heuristics' pick,
go to one final round head to head (``FinalRound``, after this step), so the winner is measured like an unsplit
search's, against the others on the same GPU. Offline (nothing timed) the merged results are only gathered, and
the first config of heuristics' order that built a plan is built again here (what ``autotune`` returns offline).
"""
from __future__ import annotations

import math

from cudnn_backend.errors import CudnnBackendError
from cudnn_backend.runtime import engines as _engines
from cudnn_backend.tune import results
from cudnn_backend.tune.search import Strategy, merge

__all__ = ["Merge", "search_key", "part_finalists"]

_MODES = ("A", "B", "FALLBACK", "INSTANT")  # heuristics' order (offline, the first that built is the choice)


def search_key(r) -> tuple:
    """The key a Search files ``r`` (a ConfigResult) under: (engine_index, sorted (knob type value, value))."""
    return (r.engine_index, tuple(sorted((int(_engines.knob_type(k)), int(v)) for k, v in r.knobs.items())))


def part_finalists(part_results, share) -> list:
    """The ConfigResults a part sends to the merge's final round: its first ``share`` correct timed configs, in the
    order its exploration lists them (its winner, then its final round's and its race's fastest)."""
    return [r for r in part_results if r.status == results.OK and r.time_us is not None][:share]


def _heuristics_position(r) -> tuple:
    """Where ``r`` stands in heuristics' order (the knob search's finds after every listed config)."""
    listed = r.source in _MODES and r.rank is not None
    return (not listed, _MODES.index(r.source) if listed else 0, r.rank if listed else 0)


class Merge(Strategy):
    """Merges ``parts`` (the Explorations of the parts, in part order) into the search; see the module's notes.
    Times and checks like the strategy of ``options.strategy`` (its final round's level)."""

    name = "merge"
    holds_plans = False

    def __init__(self, parts, strategy):
        self.parts = list(parts)
        self.inner = strategy  # the strategy the parts chose with
        self.checks_early = strategy.checks_early

    def screen_level(self, options):
        return self.inner.screen_level(options)

    def final_level(self, options):
        return self.inner.final_level(options)

    def describe(self, options, timer) -> str:
        return (f"split over {len(self.parts)} GPUs, each part {self.inner.describe(options, timer)}; the parts' "
                "fastest re-timed head to head on one GPU")

    def share(self, options) -> int:
        """How many of each part's fastest go to the final round: the finalists shared out (at least 1 each)."""
        return max(1, math.ceil(options.finalists / max(1, len(self.parts))))

    def run(self, search):
        ex, o = search.exploration, search.options
        merged = merge([part.results for part in self.parts], search_key)
        first = self.parts[0] if self.parts else None
        if first is not None:
            ex.heuristics = dict(first.heuristics)
            ex.engines = list(first.engines)
            ex.check = first.check
        shared = set.intersection(*(set(p.notes) for p in self.parts)) if self.parts else set()
        search.notes.extend(n for n in (self.parts[0].notes if self.parts else ()) if n in shared
                            and n not in search.notes)  # what every part says, once
        for i, part in enumerate(self.parts):
            search.notes.extend(f"part {i + 1}: {n}" for n in part.notes if n not in shared)
            for name, seconds in (part.phases or {}).items():
                search.phases[name] = search.phases.get(name, 0.0) + seconds
        timed = search.evaluator.timed
        finalists = []
        if timed:
            for part in self.parts:
                for r in part_finalists(part.results, self.share(o)):
                    merged[search_key(r)] = r  # the part's own result, where another part tried it too
                    finalists.append(search_key(r))
        # candidate order as one search would have it (heuristics' order, then the knob search's finds): the
        # deterministic mode breaks ties by it
        for key in sorted(merged, key=lambda k: _heuristics_position(merged[k])):
            r = merged[key]
            r.winner = False
            if key not in finalists:
                r.first_pass_us = None  # out of the running: only the final round's contenders carry it
            elif r.first_pass_us is None:  # a part too small for its own final round: a contender all the same
                r.first_pass_us = r.time_us
            search.results[key] = r
            search.order[key] = len(search.order)
        if len(finalists) > o.finalists:  # every part's share meets in the final round
            search.options = o = o.replace(finalists=len(finalists))
        pick = search.heuristics_pick()
        live = finalists + ([pick] if pick is not None and pick not in finalists else [])
        if not timed:
            live = [k for k in search.results if search.results[k].plan_built][:1]
        for key in live:
            try:
                search.configs[key] = _engines.config_from_index(
                    search.graph, key[0], {_engines.knob_type(k): v for k, v in key[1]}, search.evaluator.deviceprop,
                    sm_count_target=o.sm_count_target)
            except CudnnBackendError as e:  # a config a part built and this process cannot: it leaves the final
                r = search.results[key]
                r.status, r.reason = results.PLAN_REFUSED, f"merge: {_engines.reason_of(e)}"
        live = [k for k in live if k in search.configs]
        if timed:
            search.evaluator.start(search)
        else:
            for key in live:  # offline: the chosen config's plan, built again here (autotune returns it)
                search.evaluator.screen(search, key, None)
        search.notes.append(f"split search: {len(self.parts)} parts merged ({len(merged)} configs); "
                            + (f"the fastest {self.share(o)} of each part and heuristics' pick go to the final round"
                               if timed else "offline: heuristics' first config that built is the choice"))
