"""Search strategies, one module each (see ``tune.search`` for the interface): ``heuristics`` (heuristics' lists),
``knobs`` (the knob search), ``racing`` and ``exhaustive`` (how candidates are timed and which go on), ``previous``
(another cuDNN release's winner), ``final`` (the head-to-head round). ``STRATEGIES`` names those that choose (``TuneOptions.strategy``); a new one is a module
with a ``Strategy`` subclass, listed here."""
from __future__ import annotations

from cudnn_backend.tune.strategies.exhaustive import Exhaustive
from cudnn_backend.tune.strategies.final import FinalRound
from cudnn_backend.tune.strategies.heuristics import Heuristics
from cudnn_backend.tune.strategies.knobs import KnobSearch
from cudnn_backend.tune.strategies.merge import Merge
from cudnn_backend.tune.strategies.previous import PreviousWinner
from cudnn_backend.tune.strategies.racing import Racing

__all__ = ["STRATEGIES", "pipeline", "Heuristics", "KnobSearch", "Racing", "Exhaustive", "FinalRound", "Merge",
           "PreviousWinner"]

STRATEGIES = {"racing": Racing, "exhaustive": Exhaustive}


def pipeline(options, *, knob_search=None, part=None, parts=None, previous=None) -> list:
    """The strategies a search with ``options`` runs, in order: heuristics' lists, the knob search (``sweep``;
    ``knob_search`` overrides it), the chosen strategy, another release's winner (``previous``, a plan-cache entry),
    the final round (``finalists``).

    A search split over GPUs: ``part`` = (i, n) runs part i of n (its share of heuristics' configs, the
    rest as above); ``parts`` (the n parts' Explorations) runs the merge: the parts' results, then the final round
    of their fastest on this GPU."""
    if parts is not None:
        return [Merge(parts, STRATEGIES[options.strategy]()), FinalRound()]
    steps = [Heuristics(part)]
    if options.sweep if knob_search is None else knob_search:
        steps.append(KnobSearch())
    steps.append(STRATEGIES[options.strategy]())
    if previous is not None:
        steps.append(PreviousWinner(previous))
    if options.finalists:
        steps.append(FinalRound())
    return steps
