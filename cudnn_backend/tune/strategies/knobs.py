"""The knob search: new configs around the fastest ones, which heuristics did not list.

The seeds are the fastest config of each of the fastest engines (``sweep_seeds``). Around each, every knob is
changed alone over up to ``knob_values`` of its valid values, round-robin over the knobs (a short budget still
tries every knob, so a switch such as INPUT_TMA_ENABLE / OUTPUT_TMA_ENABLE of cuDNN 9.22+ is not left behind a
265-value KERNEL_CFG); then, around the best ``pair_seeds``, two knobs change together, round-robin over the
pairs of knobs (engines couple their knobs: a tile size admits only some tile-K and stage counts, so many valid
configs lie two changes away). Each candidate is finalized as an engine config first (cheap: no plan), so an
invalid combination costs a fraction of a millisecond and is never offered twice. All of it within
``sweep_budget_s`` seconds, or ``sweep_configs`` candidates (the budget of the deterministic mode).

The pairs learn from the single changes' refusals (most pairs are refused: on an H100 ResNet-50 layer 2-20% of
one engine's pairs finalize, and under 2% of another's): a pair whose two changes were each accepted alone is
tried first (on the H100 profile these are ~10% of the pairs and hold ~80% of the valid ones), then pairs with
one change accepted alone, last those with neither (the coupled values: a tile size valid only with another
stage count). A tier after the first stops after ``PAIR_REFUSAL_STREAK`` refusals in a row. The values come from
the engine's own KNOB_INFO, so a candidate is not checked against it again (``make_config(check=False)``).
``pair_search="all"`` is the search before: every pair round-robin, none given up, each candidate checked."""
from __future__ import annotations

import itertools
import time as _time

from cudnn_backend.errors import CudnnBackendError, CudnnError
from cudnn_backend.runtime import engines as _engines
from cudnn_backend.tune.results import ConfigResult
from cudnn_backend.tune.search import Strategy
from cudnn_backend.tune.strategies.heuristics import knob_names

__all__ = ["KnobSearch", "spread", "PAIR_REFUSAL_STREAK"]

PAIR_REFUSAL_STREAK = 48  # a tier of less likely pairs stops after this many refusals in a row


def spread(spec, n) -> list:
    """The knob's valid values, evenly thinned to ``n`` when it has more (the first and last kept)."""
    values = list(spec.values())
    if len(values) > n:
        step = (len(values) - 1) / (n - 1)
        values = sorted({values[round(i * step)] for i in range(n)})
    return values


class KnobSearch(Strategy):
    name = "knobs"

    def __init__(self):
        self.refused: set = set()  # knob combinations cuDNN refused
        self.cut_short = False  # generation stopped at the deadline
        self.odd_refusal = None  # the first candidate refused by anything but the engine-config finalize
        self.gave_up = 0  # tiers of pairs left after a streak of refusals

    def spread(self, search, spec) -> list:
        return spread(spec, search.options.knob_values)

    def one_knob_changes(self, search, key):
        """One knob changed at a time, round-robin over the knobs (see the module's notes)."""
        per_knob = [[{spec.knob_type: v} for v in self.spread(search, spec)]
                    for spec in _engines.engine_knobs(search.configs[key].engine)]
        for changes in itertools.zip_longest(*per_knob):
            yield from (c for c in changes if c is not None)

    def knob_pair_changes(self, search, key):
        """Two knobs changed at once, in tiers by how their single changes fared (see the module's notes), each
        tier round-robin over the knob pairs so a short budget still sees every pair. Yields (tier, change):
        tier 2 both single changes accepted alone, 1 one of them, 0 neither (or not tried); with
        ``pair_search="all"`` every pair round-robin as tier 2 (never given up)."""
        base = search.configs[key]
        specs = _engines.engine_knobs(base.engine)
        if search.options.pair_search == "all":  # every pair round-robin, none given up (the search before)
            by_pair = {}
            for s1, s2 in itertools.combinations(specs, 2):
                for v1, v2 in itertools.product(self.spread(search, s1), self.spread(search, s2)):
                    by_pair.setdefault((s1.knob_type, s2.knob_type), []).append({s1.knob_type: v1, s2.knob_type: v2})
            for changes in itertools.zip_longest(*by_pair.values()):
                yield from ((2, c) for c in changes if c is not None)
            return
        accepted = {}  # (knob type, value) -> the single change is a known candidate
        for spec in specs:
            for v in self.spread(search, spec):
                single = dict(base.knobs)
                single[spec.knob_type] = v
                accepted[spec.knob_type, v] = self.key_of(base, single) in search.results
        tiers = ({}, {}, {})
        for s1, s2 in itertools.combinations(specs, 2):
            for v1, v2 in itertools.product(self.spread(search, s1), self.spread(search, s2)):
                if base.knobs.get(s1.knob_type) == v1 or base.knobs.get(s2.knob_type) == v2:
                    continue  # a single change: the one-knob pass's
                tier = accepted[s1.knob_type, v1] + accepted[s2.knob_type, v2]
                tiers[tier].setdefault((s1.knob_type, s2.knob_type), []).append({s1.knob_type: v1, s2.knob_type: v2})
        for tier in (2, 1, 0):
            for changes in itertools.zip_longest(*tiers[tier].values()):
                yield from ((tier, c) for c in changes if c is not None)

    @staticmethod
    def key_of(base, knobs) -> tuple:
        return base.engine_index, tuple(sorted((int(k), v) for k, v in knobs.items()))

    def neighbours(self, search, key, knob_sets, deadline=None, limit=None) -> list:
        """New candidate keys around ``key``, at most one per entry of ``knob_sets`` ({KnobType: value} to apply,
        or (tier, change) pairs: a tier below 2 stops after ``PAIR_REFUSAL_STREAK`` refusals in a row), proposed to
        the search; generation stops at ``deadline`` or after ``limit`` new ones."""
        base = search.configs[key]
        engine = base.engine
        out = []
        streak, given_up = 0, set()
        check = search.options.pair_search == "all"
        with search.phase("generate"):
            for change in knob_sets:
                tier, change = change if isinstance(change, tuple) else (2, change)
                if tier in given_up:
                    continue
                if search.past(deadline) or (limit is not None and len(out) >= limit):
                    self.cut_short = True
                    break
                knobs = dict(base.knobs)
                knobs.update(change)
                new_key = self.key_of(base, knobs)
                if new_key in search.results or new_key in self.refused:
                    continue
                try:  # the values are the engine's own (its KNOB_INFO): "learned" does not check them again
                    cfg = _engines.make_config(engine, knobs, check=check, operation_graph=base.operation_graph,
                                               deviceprop=base.deviceprop)
                    streak = 0
                except (CudnnBackendError, ValueError) as e:
                    self.refused.add(new_key)
                    streak += 1
                    if tier < 2 and streak >= PAIR_REFUSAL_STREAK:
                        given_up.add(tier)
                        self.gave_up += 1
                        streak = 0
                    if self.odd_refusal is None and getattr(e, "function", None) != "cudnnBackendFinalize":
                        # not cuDNN judging the knobs: say so (a bug hiding behind "refused" found nothing once)
                        self.odd_refusal = _engines.reason_of(e) if isinstance(e, CudnnError) else \
                            str(e).splitlines()[0]
                    continue
                seed = search.results[key]
                if search.add(cfg, ConfigResult(cfg.engine_index, knob_names(cfg.knobs), "sweep", None, (),
                                                numerical_notes=seed.numerical_notes,
                                                behavior_notes=seed.behavior_notes)):
                    out.append(cfg.key)
        return out

    def run(self, search):
        o = search.options
        self.refused, self.cut_short, self.odd_refusal, self.gave_up = set(), False, None, 0
        deadline = search.deadline(o.sweep_budget_s)
        left = o.sweep_configs  # None: no count limit
        tried = skipped = 0
        seeds = search.seed_keys(o.sweep_seeds)
        queue = []
        for key in seeds:  # one knob at a time, each over up to knob_values of its values
            queue += self.neighbours(search, key, self.one_knob_changes(search, key), deadline,
                                     None if left is None else left - len(queue))
        t, s = search.screen(queue, "sweep: one knob", deadline=deadline, limit=left)
        tried, skipped = tried + t, skipped + s
        for key in search.seed_keys(o.pair_seeds):  # around the best configs after the first pass
            remaining = None if left is None else left - tried
            if remaining is not None and remaining <= 0:
                break
            # a seed the one-knob pass did not search around: its single changes first (the pairs' tiers need them)
            queue = [] if key in seeds or o.pair_search == "all" else self.neighbours(search, key, self.one_knob_changes(search, key), deadline,
                                                            remaining)
            queue += self.neighbours(search, key, self.knob_pair_changes(search, key), deadline,
                                     None if remaining is None else remaining - len(queue))
            t, s = search.screen(queue, "sweep: knob pairs", deadline=deadline, limit=remaining)
            tried, skipped = tried + t, skipped + s
        note = (f"sweep: {tried} new configs tried around {len(seeds)} seeds of engines "
                f"{', '.join(sorted({str(k[0]) for k in seeds}, key=int))} (one knob at a time, then pairs around "
                f"the best {o.pair_seeds}); {len(self.refused)} knob combinations refused at engine-config "
                f"finalize")
        if self.gave_up:
            note += (f" ({self.gave_up} tier(s) of less likely pairs left after {PAIR_REFUSAL_STREAK} refusals in a "
                     "row)")
        if skipped or self.cut_short:
            if left is not None and tried >= left:
                note += f"; the budget of {left} configs ran out ({skipped} found but left untried)"
            else:
                note += f"; the {o.sweep_budget_s:g} s budget ran out ({skipped} found but left untried)"
        if self.odd_refusal is not None:
            note += f"; some candidates failed before cuDNN judged them, the first: {self.odd_refusal}"
        search.notes.append(note)
