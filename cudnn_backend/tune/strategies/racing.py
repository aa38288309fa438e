"""Racing (successive halving): every candidate is timed briefly, the fastest fraction is kept and timed again
with more samples, round after round, until the survivors are the final round's few.

Round 1 times each candidate as it is proposed: 2 warm-up calls, the median of ``race_samples`` samples of about
100 µs of back-to-back calls on one buffer set, outputs not checked yet. Each later round keeps the fastest
``race_keep`` of the last round's (at least ``finalists``), checks those not checked yet (a wrong one leaves the
race), and times them with ``1/race_keep`` times more samples (each round costs about the same), up to
``repeats``; the round that reaches ``repeats`` is the last. The final round (``final``) then times the fastest
``finalists`` and heuristics' pick head to head (5 warm-up calls, 5 samples of ~500 µs per round; the exhaustive
pass's final takes 20 and 5 of ~1000 µs). A candidate out of the race keeps the time of the last round it ran in
(``race_round``); one never checked ends "timed, not checked".

The defaults (``race_keep`` 0.25, ``race_samples`` 3) were chosen by simulation on recorded H200 explorations:
``benchmarks/racing_simulation.py`` and its result in ``benchmarks/results``."""
from __future__ import annotations

import math

from cudnn_backend.tune.results import plural
from cudnn_backend.tune.search import Level, Strategy

__all__ = ["Racing", "SAMPLE_US", "schedule"]

SAMPLE_US = 100.0  # the length of a racing sample (a batch of back-to-back calls)


def schedule(options, candidates: int) -> list:
    """[(round, candidates timed, samples)]: the timed rounds racing plans for ``candidates`` (counted before wrong
    ones leave; the final round follows with at most ``finalists``)."""
    floor = max(options.finalists, 1)
    rounds = [(1, candidates, options.race_samples)]
    n, samples = candidates, options.race_samples
    while n > floor and samples < options.repeats:
        keep = max(floor, math.ceil(n * options.race_keep))
        if keep >= n or (keep <= floor and options.finalists):
            break  # no cut, or the cut leaves the final round's few: it times them next
        n, samples = keep, min(options.repeats, math.ceil(samples / options.race_keep))
        rounds.append((len(rounds) + 1, n, samples))
    return rounds


class Racing(Strategy):
    name = "racing"
    checks_early = False
    holds_plans = True  # the plans of the candidates still in the race are kept until they leave it

    def screen_level(self, options):
        return Level("race 1", min(2, options.warmup), options.race_samples, SAMPLE_US, rotate=options.cold)

    def level(self, options, round_, samples):
        return Level(f"race {round_}", min(options.warmup, 2 + round_), samples, SAMPLE_US, rotate=options.cold)

    def final_level(self, options):
        return Level("final", 5, 5, 500.0)

    def describe(self, options, timer) -> str:
        sets = "the inputs rotated over the buffer sets" if options.cold else "one buffer set"
        return (f"racing: every config timed briefly (2 warm-up calls, median of {options.race_samples} samples of "
                f"~{SAMPLE_US:g} us), the fastest {options.race_keep:g} re-timed with {1 / options.race_keep:g}x the "
                f"samples each round up to {options.repeats}; CUDA events on the handle's stream, {sets}, "
                f"{timer.how}")

    def run(self, search):
        if not search.evaluator.timed:
            return
        o = search.options
        floor = max(o.finalists, 1)
        pick = search.heuristics_pick()
        alive = search.ranked()
        counts, samples, round_ = [len(alive)], o.race_samples, 1
        while len(alive) > floor and samples < o.repeats:
            keep = search.survivors(alive, o.race_keep, floor)
            if len(keep) >= len(alive):
                break
            kept = set(keep)
            search.release(k for k in alive if k not in kept and k != pick)
            alive = search.check(keep)
            counts.append(len(alive))
            if len(alive) <= floor and o.finalists:
                break  # the final round times these few next, head to head
            round_ += 1
            samples = min(o.repeats, math.ceil(samples / o.race_keep))
            search.measure(alive, self.level(o, round_, samples), race_round=round_)
            alive = search.ranked(alive)
        search.check(alive)  # every survivor checked (those of a race that never cut)
        checked = sum(1 for r in search.results.values() if r.checked_by)
        search.notes.append(f"racing: {' -> '.join(map(str, counts))} configs over {plural(round_, 'timed round')} (the "
                            f"fastest {o.race_keep:g} kept each round and timed with {1 / o.race_keep:g}x the "
                            f"samples); {checked} checked")
