"""One graph's search, and the interface every search strategy implements.

A ``Search`` holds the candidates (engine configs, keyed by ``(engine_index, sorted knob items)``, in the order
they were proposed) with their ``ConfigResult``s, and asks an *evaluator* to do the work: build a plan, run and
check it, time it at a ``Level`` (warm-up calls, samples, sample length), or time a few head to head. The
evaluator is the one seam between the decisions and the GPU: ``evaluation.GpuEvaluator`` on a GPU,
``evaluation.Evaluator`` offline (plans built, nothing timed), or a test's fake that injects timings.

A ``Strategy`` is one step of a search (``strategies``): heuristics' lists, the knob search, racing, the
exhaustive pass, the final round. ``run(search)`` proposes candidates (``Search.add``, ``Search.screen``), or
decides which to time again and how long (``Search.measure``), from what the search knows. The strategy that
chooses says how a new candidate is first timed (``screen_level``) and whether it is checked then or only if it
survives (``checks_early``).

A search can be split over processes: candidates are plain keys that any process holding the graph rebuilds
(``engines.config_from_index``), ``partition`` deals a list of them out, and the ``ConfigResult``s that come back
are merged by key (``merge``); the strategies decide from merged results only.
"""
from __future__ import annotations

import contextlib
import math
import time as _time
from dataclasses import dataclass

from cudnn_backend.runtime import errata as _errata
from cudnn_backend.tune import results
from cudnn_backend.tune.results import ConfigResult

__all__ = ["Level", "Strategy", "Search", "rank", "partition", "merge", "part_options", "RANKED", "MARGIN_CAP"]

MARGIN_CAP = 1.5  # a cut's margin keeps at most this many times the fraction kept (``Search.survivors``)
RANKED = (results.OK, results.TIMED)  # statuses with a time a strategy may rank (TIMED: not checked yet)


@dataclass(frozen=True)
class Level:
    """How long a candidate is timed: ``warmup`` calls (and more up to ``warmup_us`` of GPU time), then the median
    of ``repeats`` samples of about ``target_sample_us`` each (batches of back-to-back calls, each behind an
    unmeasured call with ``lead_in``: ``timing.Timer.time``); ``rotate``: the inputs rotate over every buffer set
    (else the first set only, as a layer runs)."""

    name: str
    warmup: int
    repeats: int
    target_sample_us: float = 300.0
    rotate: bool = False
    warmup_us: float = 0.0
    lead_in: bool = False


class Strategy:
    """One step of a search (see the module's notes). Subclasses set ``name`` and implement ``run``."""

    name = ""

    def screen_level(self, options) -> Level | None:
        """How each new candidate is first timed when this strategy chooses the winner; None: it does not."""
        return None

    checks_early = True  # a candidate's outputs are checked when it is first run (else when it survives)
    holds_plans = False  # the evaluator keeps the plans of the candidates it timed (until released)

    def final_level(self, options) -> Level:
        """How the final round times its few, head to head."""
        return Level("final", 20, 5, 1000.0)

    def final_margin(self, options) -> float:
        """The final round also takes those within this fraction of its last finalist (``Search.near``)."""
        return 0.0

    def describe(self, options, timer) -> str:
        """How times were taken, in words (``timer``: the ``timing.Timer`` used)."""
        return timer.describe()

    def run(self, search: "Search") -> None:
        raise NotImplementedError

    def finish(self, search: "Search") -> None:
        """After the winner is chosen: what this strategy reports about it (nothing by default)."""

    def __repr__(self):
        return f"<{type(self).__name__} {self.name!r}>"


def rank(keys, time_of, order_of, tie=0.0) -> list:
    """``keys`` fastest first. With ``tie`` > 0 the times within ``tie`` (a fraction) of the fastest remaining one
    count as equal and the earliest in candidate order (``order_of``) goes first: two runs whose timings differ
    within the tie rank alike."""
    remaining = sorted(keys, key=lambda k: (time_of(k), order_of(k)))
    if not tie:
        return remaining
    out = []
    while remaining:
        limit = time_of(remaining[0]) * (1.0 + tie)
        end = 1
        while end < len(remaining) and time_of(remaining[end]) <= limit:
            end += 1
        pick = min(range(end), key=lambda i: order_of(remaining[i]))
        out.append(remaining.pop(pick))
    return out


def partition(keys, parts: int) -> list:
    """``keys`` dealt round-robin into ``parts`` lists (each gets a like mix of engines and heuristics ranks)."""
    if parts < 1:
        raise ValueError(f"parts: expected an integer >= 1, not {parts!r}")
    return [list(keys[i::parts]) for i in range(parts)]


def part_options(options, parts: int):
    """The options of one of ``parts`` parts of a split search: the knob search's budgets and seeds shared out
    (each part searches around its own fastest, so together the parts spend what one search would)."""
    if parts <= 1:
        return options
    def share(v):
        return v if not v else math.ceil(v / parts)  # None (no limit) and 0 stay

    return options.replace(sweep_budget_s=None if options.sweep_budget_s is None else options.sweep_budget_s / parts,
                           sweep_configs=share(options.sweep_configs), sweep_seeds=share(options.sweep_seeds),
                           pair_seeds=share(options.pair_seeds))


def merge(parts, key=None) -> dict:
    """{key: ConfigResult} of the results of every part (a later part's result of a key wins); ``key(result)``:
    the key (default ``ConfigResult.key``; a Search files results under ``strategies.merge.search_key``)."""
    key = key or (lambda r: r.key)
    return {key(r): r for part in parts for r in part}


class Search:
    """The candidates of one graph and what is known about them; see the module's notes.

    ``graph`` (the finalized operation graph), ``configs`` ({key: Config}), ``results`` ({key: ConfigResult};
    insertion order is candidate order), ``exploration`` (the Exploration being filled: its ``notes`` are
    ``notes``), ``phases`` (seconds spent per kind of work), ``options`` (``TuneOptions``), ``evaluator``.
    ``chooser`` is the strategy that chooses; ``screen_level``/``checks_early`` come from it. ``errata``: the rules
    honoured (``options.errata``, else ``$CUDNN_ERRATA_JSON_FILE``): a candidate one denies is recorded "denied"
    with the rule when it is added, and never evaluated."""

    def __init__(self, evaluator, options, *, graph, exploration, strategies=(), progress=None):
        self.evaluator = evaluator
        self.options = options
        self.graph = graph
        self.exploration = exploration
        self.strategies = list(strategies)
        self.configs: dict = {}
        self.results: dict = {}
        self.order: dict = {}  # key -> position in candidate order
        self.notes: list[str] = exploration.notes
        self.phases: dict = {}
        self.reference_keys: list = []  # configs the final round re-times beside the fastest (another release's winner)
        self.progress = progress
        # offline, the steps that start the CUDA runtime (tune.offline_gaps.runtime_steps), found by whoever runs
        # cuDNN first for this graph in this process (the explorer, before its engine table); None: not yet
        self.runtime_steps = None
        self.errata = _errata.resolve(options.errata, "errata")
        # rules are matched against a graph (a search over recorded timings has none)
        self.traits = _errata.traits_of(graph) if graph is not None else None
        self.target = _errata.target_of(evaluator.handle, evaluator.deviceprop, graph) if graph is not None else None
        self.denied: dict = {}  # rule name -> configs it denied
        self.chooser = next((s for s in self.strategies if s.screen_level(options) is not None), Strategy())
        self.screen_level = self.chooser.screen_level(options) if evaluator.timed else None
        self.checks_early = self.chooser.checks_early
        evaluator.hold = evaluator.keep_plans or (self.chooser.holds_plans and evaluator.timed)

    def run(self):
        """Every strategy in turn, then the winner chosen (``choose``), then each strategy's ``finish``."""
        for strategy in self.strategies:
            strategy.run(self)
        self.choose()
        if self.denied:
            self.notes.append(f"errata ({', '.join(sorted({self.errata.origin(name) for name in self.denied}))}): "
                              f"{results.plural(sum(self.denied.values()), 'config')} denied, never built or run: "
                              + ", ".join(f"rule {name} ({n})" for name, n in self.denied.items()))
        for strategy in self.strategies:
            strategy.finish(self)

    # -- bookkeeping ------------------------------------------------------------------------------------------
    @contextlib.contextmanager
    def phase(self, name):
        """Adds the time spent inside to ``phases[name]``."""
        t0 = _time.perf_counter()
        try:
            yield
        finally:
            self.phases[name] = self.phases.get(name, 0.0) + _time.perf_counter() - t0

    def say(self, done, total, text):
        if self.progress is not None:
            self.progress(done, total, text)

    def add(self, config, result: ConfigResult):
        """A new candidate (its Config and the ConfigResult to fill in); False when the key is known already."""
        key = config.key
        if key in self.results:
            return False
        self.configs[key] = config
        self.results[key] = result
        self.order[key] = len(self.order)
        if self.traits is not None:
            rule = self.errata.deny(_errata.plan_tag(self.traits.tag, config.engine_index, config.knobs),
                                    self.traits, self.target) if self.traits.tag is not None else None
            if rule is not None:
                result.status, result.denied_by = results.DENIED, rule.name
                result.reason = rule.reason or f"errata rule {rule.name}"  # the status names the rule
                self.denied[rule.name] = self.denied.get(rule.name, 0) + 1
        return True

    def is_denied(self, key) -> bool:
        """Whether an errata rule denies the candidate ``key``."""
        return self.results[key].status == results.DENIED

    def drop(self, keys):
        """Forget candidates never evaluated (e.g. past ``max_configs``)."""
        for key in keys:
            self.results.pop(key, None)
            self.configs.pop(key, None)
            self.order.pop(key, None)

    def deadline(self, seconds):
        """A perf_counter deadline ``seconds`` from now, or None for no limit (always None when deterministic:
        budgets are counts there)."""
        if seconds is None or self.options.deterministic:
            return None
        return _time.perf_counter() + seconds

    @staticmethod
    def past(deadline) -> bool:
        return deadline is not None and _time.perf_counter() > deadline

    # -- work, done by the evaluator -----------------------------------------------------------------------------
    def screen(self, keys, label, *, deadline=None, limit=None, label_of=None) -> tuple[int, int]:
        """Evaluate new candidates in order: build each plan (runtime-compiled ones ahead, in threads), and with a
        GPU run and time it at ``screen_level`` (checked now when ``checks_early``). Past ``deadline`` or after
        ``limit`` candidates the rest are marked skipped. Returns (tried, skipped)."""
        keys = [k for k in keys if not self.is_denied(k)]  # denied: recorded as such, never built or run
        if not keys:
            return 0, 0
        self.evaluator.start(self)
        self.evaluator.prefetch(self, keys)
        tried = skipped = 0
        raced = not self.checks_early and self.screen_level is not None
        for i, key in enumerate(keys):
            if self.past(deadline) or (limit is not None and tried >= limit):
                why = "sweep budget spent" if limit is None else f"sweep budget of {limit} configs spent"
                for k in keys[i:]:
                    r = self.results[k]
                    r.status, r.reason = results.SKIPPED, why
                self.evaluator.cancel(keys[i:])
                skipped = len(keys) - i
                break
            self.evaluator.screen(self, key, self.screen_level, check=self.checks_early)
            r = self.results[key]
            if raced and r.time_us is not None:
                r.race_round = 1
            tried += 1
            self.say(i + 1, len(keys), label_of(r) if label_of else f"{label}: engine {key[0]} {r.status}")
        self.evaluator.settle(self)
        return tried, skipped

    def check(self, keys) -> list:
        """Check the outputs of those not checked yet (run once, compared with the reference); returns the keys
        still correct and timed."""
        for key in keys:
            if self.results[key].status == results.TIMED:
                self.evaluator.check(self, key)
        return [k for k in keys if self.results[k].status == results.OK]

    def measure(self, keys, level: Level, race_round=None):
        """Time ``keys`` again at ``level`` (their ``time_us``, ``min_us``, ``max_us`` replaced)."""
        for i, key in enumerate(keys):
            self.evaluator.retime(self, key, level)
            if race_round is not None:
                self.results[key].race_round = race_round
            self.say(i + 1, len(keys), f"{level.name}: engine {key[0]}")

    def release(self, keys):
        """The plans of candidates out of the running may go."""
        for key in keys:
            self.evaluator.release(key)

    # -- what is known ----------------------------------------------------------------------------------------------
    def ranked(self, keys=None, statuses=RANKED) -> list:
        """Keys with a time, fastest first (``keys``: among those; tie-aware when deterministic, see ``rank``)."""
        pool = self.results if keys is None else keys
        timed = [k for k in pool if self.results[k].status in statuses and self.results[k].time_us is not None]
        tie = self.options.tie if self.options.deterministic else 0.0
        return rank(timed, lambda k: self.results[k].time_us, self.order.__getitem__, tie)

    def seed_keys(self, n) -> list:
        """The ``n`` configs to search around: the fastest of each engine first (fastest engines first), so one
        engine's neighbourhood, often listed by heuristics already, does not take every seed."""
        ranked = self.ranked()
        firsts, seen = [], set()
        for key in ranked:
            if key[0] not in seen:
                seen.add(key[0])
                firsts.append(key)
        return (firsts + [k for k in ranked if k not in firsts])[:n]

    def heuristics_pick(self):
        """The key of heuristics' pick (A's first, else B's, ...), None when there is none."""
        pick = results.heuristics_pick(self.results.values())
        return None if pick is None else next(k for k, r in self.results.items() if r is pick)

    def contenders(self) -> list:
        """The correct configs timed last, fastest first: the final round's finalists when it ran, else those of
        the latest racing round, else every timed correct config (``results.fastest`` takes the same view)."""
        ok = [k for k, r in self.results.items() if r.status == results.OK and r.time_us is not None]
        last = [k for k in ok if self.results[k].first_pass_us is not None]
        if not last:
            top = max((self.results[k].race_round or 0 for k in ok), default=0)
            last = [k for k in ok if (self.results[k].race_round or 0) == top]
        return self.ranked(last, statuses=(results.OK,))

    def choose(self):
        """Mark the winner: the first of ``contenders`` (the fastest; deterministic: the earliest of the tied)."""
        for r in self.results.values():
            r.winner = False
        contenders = self.contenders()
        if contenders:
            self.results[contenders[0]].winner = True
        return contenders[0] if contenders else None

    def near(self, ranked, n, margin=0.0, cap=None) -> list:
        """The first ``n`` of ``ranked`` (fastest first) and the next ones timed within ``margin`` (a fraction) of
        the ``n``-th, at most ``cap`` in all: a cut that noise cannot move by itself."""
        out = list(ranked[:n])
        if margin and len(out) == n and n:
            limit = self.results[out[-1]].time_us * (1.0 + margin)
            cap = len(ranked) if cap is None else cap
            for key in ranked[n:]:
                if len(out) >= cap or self.results[key].time_us > limit:
                    break
                out.append(key)
        return out

    def survivors(self, keys, fraction, floor, margin=0.0, protected=()) -> list:
        """The fastest ``ceil(len * fraction)`` of ``keys`` (at least ``floor``), then those within ``margin`` of
        the cut (at most ``MARGIN_CAP`` times as many in all), then ``protected`` ones not in yet; in rank order."""
        ranked = self.ranked(keys)
        n = max(floor, math.ceil(len(ranked) * fraction))
        kept = self.near(ranked, n, margin, math.ceil(MARGIN_CAP * n))
        chosen = set(kept) | (set(protected) & set(ranked))
        return [k for k in ranked if k in chosen]

    def heuristics_firsts(self, n) -> list:
        """The keys of the first ``n`` configs of each heuristics mode's list (its best guesses)."""
        return [k for k, r in self.results.items() if r.rank is not None and r.rank < n and r.source != "sweep"]

    def check_in_order(self, keys, n, margin=0.0, cap=None) -> list:
        """Check ``keys`` (fastest first) one by one until ``n`` are correct, and on while the next one is timed
        within ``margin`` of the ``n``-th correct one (``near``; at most ``cap`` correct): the reference check
        runs only where it can change who goes on. Returns the correct ones, fastest first."""
        ok = []
        cap = n if cap is None else cap
        for key in keys:
            if len(ok) >= cap:
                break
            if len(ok) >= n and self.results[key].time_us > self.results[ok[n - 1]].time_us * (1.0 + margin):
                break
            if self.check([key]):
                ok.append(key)
        return ok
