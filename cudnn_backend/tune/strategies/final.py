"""The final round: the ``finalists`` fastest correct configs of the last timing, heuristics' pick and any
``Search.reference_keys`` (another release's winner), re-timed
head to head in ``final_rounds`` interleaved rounds (each a batch of back-to-back calls on one buffer set with the
GPU kept busy, each round starting with another config); the winner is the fastest there. (A first pass that
rotates inputs and samples briefly ranks configs of a few microseconds by their launch cost as much as by their
kernels: two runs disagreed by up to 20% head to head before this round existed.)"""
from __future__ import annotations

import statistics

from cudnn_backend.errors import CudnnBackendError
from cudnn_backend.runtime import engines as _engines
from cudnn_backend.tune import results
from cudnn_backend.tune.search import Strategy

__all__ = ["FinalRound"]


class FinalRound(Strategy):
    name = "final"

    def run(self, search):
        o = search.options
        if not search.evaluator.timed or not o.finalists:
            return
        keys = search.near(search.contenders(), o.finalists, search.chooser.final_margin(o), o.finalists + 2)
        pick = search.heuristics_pick()
        if pick is not None and pick not in keys and search.results[pick].time_us is not None:
            search.check([pick])
        pick_added = pick is not None and pick not in keys and search.results[pick].status == results.OK \
            and search.results[pick].time_us is not None
        if pick_added:  # the headroom compares it with the winner: both measured alike
            keys.append(pick)
        references = [k for k in search.reference_keys if k not in keys]
        keys += references
        if len(keys) < 2:
            return
        level = search.chooser.final_level(o)
        try:
            samples = search.evaluator.head_to_head(search, keys, level, o.final_rounds)
        except (CudnnBackendError, RuntimeError, ValueError) as e:
            search.notes.append(f"final round not run: {_engines.reason_of(e)}; the first pass's times decide")
            return
        for key in keys:
            r = search.results[key]
            r.first_pass_us = r.time_us
            s = samples[key]
            r.time_us, r.min_us, r.max_us = statistics.median(s), min(s), max(s)
        extra = (["heuristics pick"] if pick_added else []) + (["another release's winner"] if references else [])
        search.notes.append(f"final round: the fastest {len(keys) - pick_added - len(references)} correct configs"
                            f"{' and ' + ' and '.join(extra) if extra else ''} re-timed head to head, {o.final_rounds} "
                            f"interleaved rounds of {level.repeats} samples (back-to-back calls, "
                            f"{'L2 flushed' if o.cold else 'one buffer set'}); their times are that round's medians")
