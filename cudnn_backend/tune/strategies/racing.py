"""Racing (successive halving): every candidate is timed briefly, the fastest fraction is kept and timed again
with more samples, round after round, until the survivors are the final round's few.

Round 1 times each candidate as it is proposed: 2 warm-up calls and more up to ~50 us of GPU time (after the GPU
sat idle, 2 ms: ``evaluation.WAKE_US``), then the median of ``race_samples`` samples of about 100 us of
back-to-back calls on one buffer set, each sample behind a call it does not measure (no sample counts a launch
from an idle GPU), outputs not checked yet. Each later round keeps the fastest ``race_keep`` of the last round's
(at least ``finalists``); the cut after round 1 also keeps those timed within ``race_margin`` of the last one
kept (at most 1.5 times as many: a brief timing's noise cannot cut alone) and heuristics' first ``finalists``
configs of each mode. The kept are timed with ``1/race_keep`` times more samples (each round costs about the
same), up to ``repeats``; the round that reaches ``repeats`` is the last. Then the outputs are checked lazily,
fastest first, until ``finalists`` are correct and on while the next is within ``race_margin`` of the last of
them (2 more at most): the fp64 reference runs only where it can change the outcome, a wrong one leaves and the
next is checked, no unchecked config can win. The final round (``final``) times those and heuristics' pick head
to head (5 warm-up calls and ~200 us more, 5 samples of ~500 us per round; the exhaustive pass's final takes the
fastest ``finalists``, 20 warm-up calls and 5 samples of ~1000 us). A candidate out of the race keeps the time
of the last round it ran in (``race_round``); one never checked ends "timed, not checked".

The defaults (``race_keep`` 0.25, ``race_samples`` 2, ``race_margin`` 0.2): simulation on recorded H200
explorations (``benchmarks/racing_simulation.py``, its result in ``benchmarks/results``) found every setting
near 0.25 and 2-3 samples matching the exhaustive pass about as often as the exhaustive pass matches itself (~96%
of graphs within 2%: the timing noise's own limit); on an H100 the ResNet-50 preset then took 0.214x of the
exhaustive pass with 2 samples and the 20% margin, against 0.263x with 3 and 10%, in the same run
(``benchmarks/results/2026-11-25-h100/run6``)."""
from __future__ import annotations

import math

from cudnn_backend.tune.results import plural
from cudnn_backend.tune.search import Level, Strategy

__all__ = ["Racing", "SAMPLE_US", "schedule", "first_samples", "DETERMINISTIC_SAMPLES"]

SAMPLE_US = 100.0  # the length of a racing sample (a batch of back-to-back calls)
WARMUP_US = 50.0  # round 1's warm-up in GPU time (later rounds and the final take more)


DETERMINISTIC_SAMPLES = 3  # round 1's samples at least, in the deterministic mode


def first_samples(options) -> int:
    """Round 1's samples per candidate: ``race_samples``; in the deterministic mode at least
    ``DETERMINISTIC_SAMPLES``, so that times tie or part (``tie``) alike from run to run more often (with 2 the
    median is the mean of two noisy samples, and the knob search's seeds, hence its candidates, moved with it)."""
    return max(options.race_samples, DETERMINISTIC_SAMPLES) if options.deterministic else options.race_samples


def schedule(options, candidates: int) -> list:
    """[(round, candidates timed, samples)]: the timed rounds racing plans for ``candidates`` (counted before wrong
    ones leave and without the margin's extra survivors; the final round follows with at most ``finalists``)."""
    floor = max(options.finalists, 1)
    n, samples = candidates, first_samples(options)
    rounds = [(1, n, samples)]
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
        return Level("race 1", min(2, options.warmup), first_samples(options), SAMPLE_US, rotate=options.cold,
                     warmup_us=WARMUP_US, lead_in=True)

    def level(self, options, round_, samples):
        return Level(f"race {round_}", min(options.warmup, 2 + round_), samples, SAMPLE_US, rotate=options.cold,
                     warmup_us=2 * WARMUP_US, lead_in=True)

    def final_level(self, options):
        return Level("final", 5, 5, 500.0, warmup_us=4 * WARMUP_US, lead_in=True)

    def final_margin(self, options) -> float:
        return options.race_margin

    def describe(self, options, timer) -> str:
        sets = "the inputs rotated over the buffer sets" if options.cold else "one buffer set"
        return (f"racing: every config timed briefly (2 warm-up calls and ~{WARMUP_US:g} us more, median of "
                f"{first_samples(options)} samples of ~{SAMPLE_US:g} us, each behind an unmeasured call), the fastest "
                f"{options.race_keep:g} (after round 1 also those within {options.race_margin:.0%} of the cut) re-timed with "
                f"{1 / options.race_keep:g}x the samples each round up to {options.repeats}; outputs checked fastest "
                f"first until the final round has its few; CUDA events on the handle's stream, {sets}, {timer.how}")

    def run(self, search):
        if not search.evaluator.timed:
            return
        o = search.options
        floor = max(o.finalists, 1)
        pick = search.heuristics_pick()
        protected = search.heuristics_firsts(o.finalists)
        alive = search.ranked()
        counts, samples, round_ = [len(alive)], first_samples(o), 1
        while len(alive) > floor and samples < o.repeats:
            first = round_ == 1  # the brief round: its cut keeps the margin and heuristics' first guesses
            keep = search.survivors(alive, o.race_keep, floor, o.race_margin if first else 0.0,
                                    protected if first else ())
            if len(keep) >= len(alive):
                break
            kept = set(keep)
            search.release(k for k in alive if k not in kept and k != pick)
            alive = keep
            counts.append(len(alive))
            if len(alive) <= floor and o.finalists:
                break  # the final round times these few next, head to head
            round_ += 1
            samples = min(o.repeats, math.ceil(samples / o.race_keep))
            search.measure(alive, self.level(o, round_, samples), race_round=round_)
            alive = search.ranked(alive)
        # lazily checked, fastest first: the last round's, then (when too few of them are correct) the rest
        wanted = max(o.finalists, 1)
        correct = search.check_in_order(alive, wanted, o.race_margin, wanted + 2)
        if len(correct) < wanted:
            rest = [k for k in search.ranked() if k not in set(alive)]
            correct += search.check_in_order(rest, wanted - len(correct))
        checked = sum(1 for r in search.results.values() if r.checked_by)
        search.notes.append(f"racing: {' -> '.join(map(str, counts))} configs over "
                            f"{plural(round_, 'timed round')} (the fastest {o.race_keep:g} kept each round, after "
                            f"round 1 also those within "
                            f"{o.race_margin:.0%} of the cut and heuristics' first guesses, and timed with "
                            f"{1 / o.race_keep:g}x the samples); {checked} checked (fastest first, until {wanted} "
                            "were correct)")
