"""Timings injected into a real search, offline: ``FakeTimes`` is an evaluator whose plans are real (cuDNN builds
every candidate against a device profile) and whose times come from a function of the candidate, with seeded
multiplicative noise that shrinks with the samples taken. Everything a strategy decides (candidate order,
pruning, the winner) is then testable without a GPU."""
from __future__ import annotations

import math
import random

from cudnn_backend.tune import TuneOptions, results
from cudnn_backend.tune.evaluation import Evaluator
from cudnn_backend.tune.explorer import _Explorer
from cudnn_backend.tune.search import Search
from cudnn_backend.tune.strategies import pipeline
from tests.helpers.releases import profile


def by_candidate_order(search, key):
    """The default truth: the earlier a candidate was proposed, the faster (heuristics' order, then the search's)."""
    return 10.0 + search.order[key]


class FakeTimer:
    how = "injected timings"

    def describe(self):
        return f"exhaustive timing: {self.how}"


class FakeTimes(Evaluator):
    """Real plans, injected times: ``truth(search, key) -> us``; a measurement of ``n`` samples is
    ``truth * (1 + noise * N(0, 1) / sqrt(n))`` (``noise``: the relative noise of one sample). ``wrong``: keys whose
    outputs are wrong. ``log`` records every measurement: (what, key, samples)."""

    timed = True

    def __init__(self, *, deviceprop, options, truth=by_candidate_order, noise=0.0, seed=0, wrong=()):
        super().__init__(handle=None, deviceprop=deviceprop, options=options)
        self.truth, self.noise, self.rng = truth, noise, random.Random(seed)
        self.wrong = set(wrong)
        self.log = []
        self.timer = FakeTimer()

    def _measure(self, search, key, samples, what):
        self.log.append((what, key, samples))
        t = self.truth(search, key)
        return t * (1.0 + self.noise * self.rng.gauss(0.0, 1.0) / math.sqrt(samples)) if self.noise else t

    def _judge(self, search, key):
        r = search.results[key]
        r.correct = key not in self.wrong
        r.checked_by = "fake"
        r.status = results.OK if r.correct else results.WRONG

    def screen(self, search, key, level, *, check=True):
        plan = self.build(search, key)
        if plan is None:
            return
        r = search.results[key]
        r.time_us = r.min_us = r.max_us = self._measure(search, key, level.repeats, "screen")
        if check:
            self.log.append(("check", key, 0))
            self._judge(search, key)
        else:
            r.status = results.TIMED
        self.keep(key, plan)

    def check(self, search, key):
        self.log.append(("check", key, 0))
        self._judge(search, key)

    def retime(self, search, key, level):
        r = search.results[key]
        r.time_us = r.min_us = r.max_us = self._measure(search, key, level.repeats, level.name)

    def head_to_head(self, search, keys, level, rounds):
        return {k: [self._measure(search, k, level.repeats * 4, "final") for _ in range(rounds)] for k in keys}


def explorer(graph="conv_bias_relu", *, gpu="h200", truth=by_candidate_order, noise=0.0, seed=0, wrong=(),
             **options) -> _Explorer:
    """An _Explorer of ``graph`` offline for ``gpu`` whose evaluator is a ``FakeTimes``: ``run()`` runs the whole
    search (knob search included when ``sweep=True``) on injected timings."""
    opts = TuneOptions(**options).for_job("explore")
    ex_ = _Explorer(graph, handle=None, device_profile=profile(gpu), options=opts)
    ex_.evaluator.close()
    ex_.evaluator = FakeTimes(deviceprop=ex_.deviceprop, options=opts, truth=truth, noise=noise, seed=seed,
                              wrong=wrong)
    ex_.timed, ex_.sweep = True, opts.sweep
    ex_.notes = []  # not offline after all: the times are injected
    return ex_


def search_of(ex_, *, knob_search=None) -> Search:
    """A Search over ``ex_``'s graph with ``ex_``'s evaluator and the pipeline its options give (not run)."""
    o = ex_.options
    return Search(ex_.evaluator, o, graph=ex_.op_graph, exploration=ex_.exploration(),
                  strategies=pipeline(o, knob_search=knob_search))
