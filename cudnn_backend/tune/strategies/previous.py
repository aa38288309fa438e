"""The winner another cuDNN release stored for this graph and device (``PlanCache.previous``), tried in the new
release's search: its engine (by global index) and knobs made into a config of this release, built, checked and
timed like the others, then re-timed head to head with the finalists (``FinalRound`` takes it), so a search after
an upgrade says whether the new release made the old winner slower, or refused it. A stored plan itself never loads
on another release; its engine and knobs are what carries over."""
from __future__ import annotations

from cudnn_backend.core.versions import format_version
from cudnn_backend.errors import CudnnBackendError
from cudnn_backend.runtime import engines as _engines
from cudnn_backend.tune import results
from cudnn_backend.tune.results import ConfigResult, config_words
from cudnn_backend.tune.search import Strategy
from cudnn_backend.tune.strategies.heuristics import knob_names

__all__ = ["PreviousWinner"]

SOURCE = "previous"


class PreviousWinner(Strategy):
    """``entry``: the ``CacheEntry`` of the other release's winner."""

    name = "previous"

    def __init__(self, entry):
        self.entry = entry
        self.key = None  # its config's key in the search, once made
        self.record = None  # what the exploration says of it (``Exploration.previous``)

    def run(self, search):
        e = self.entry
        words = f"{config_words(e.engine_index, e.knobs)} (the cuDNN {format_version(e.cudnn_version)} winner" + \
            (f", {e.time_us:.2f} us there)" if e.time_us is not None else ")")
        record = {"cudnn_version": format_version(e.cudnn_version), "engine_index": e.engine_index,
                  "knobs": dict(e.knobs), "time_us_then": e.time_us}
        search.exploration.previous = self.record = record
        try:
            config = _engines.config_from_index(search.graph, e.engine_index, e.knobs, search.evaluator.deviceprop)
        except (CudnnBackendError, ValueError) as err:
            record.update(status="refused", reason=_engines.reason_of(err))
            search.notes.append(f"{words}: refused by this release: {record['reason']}")
            return
        known = search.results.get(config.key)
        if known is None:
            search.add(config, ConfigResult(config.engine_index, knob_names(config.knobs), SOURCE))
            search.screen([config.key], SOURCE)
        search.check([config.key])
        r = search.results[config.key]
        self.key = config.key
        record["label"] = r.label
        if r.status == results.OK and search.evaluator.timed:
            search.reference_keys.append(config.key)  # re-timed head to head in the final round
        else:
            record.update(status=r.status, reason=r.reason)
            search.notes.append(f"{words}: {r.status} on this release" + (f": {r.reason}" if r.reason else ""))

    def finish(self, search):
        """After the final round: the old winner's time now against the new winner's (the record and a note)."""
        record, key = self.record, self.key
        if key is None or "status" in record:
            return
        r = search.results[key]
        winner = next((x for x in search.results.values() if x.winner), None)
        record.update(status=r.status, time_us=r.time_us, winner=r.winner)
        if r.time_us is None or winner is None or winner.time_us is None:
            return
        record["ratio_to_winner"] = r.time_us / winner.time_us
        then = f"{record['time_us_then']:.2f} us on cuDNN {record['cudnn_version']}, " if record["time_us_then"] else ""
        verdict = "still the fastest" if r.winner else \
            f"{record['ratio_to_winner']:.2f}x the new winner ({winner.config_text()}, {winner.time_us:.2f} us)"
        search.notes.append(f"the cuDNN {record['cudnn_version']} winner ({r.config_text()}): {then}"
                            f"{r.time_us:.2f} us now, {verdict}")
