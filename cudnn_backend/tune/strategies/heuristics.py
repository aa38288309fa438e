"""Heuristics' lists: every config of the heuristics modes asked for (A, B, FALLBACK, INSTANT), in cuDNN's order,
each proposed once (a config two modes list records both), up to ``max_configs``; then each is evaluated.

Offline, refusals only the GPU decides (``tune.offline_gaps``) are recorded on the exploration (``offline_gaps``, and
``cuda_runtime``: the engines and heuristics modes that need the CUDA runtime): no config then makes the graph unknown
offline rather than unsupported, and a list may differ from the GPU's."""
from __future__ import annotations

from cudnn_backend.core._logging import cudnn_messages
from cudnn_backend.errors import CudnnBackendError
from cudnn_backend.runtime import engines as _engines
from cudnn_backend.runtime import heuristics as _heuristics
from cudnn_backend.tune import graphs as _graphs
from cudnn_backend.tune.offline_gaps import (
    RUNTIME_UNOBSERVED,
    gap_caveat,
    gaps_in,
    offline_labels,
    runtime_steps,
    silent_gaps,
)
from cudnn_backend.tune.results import ConfigResult
from cudnn_backend.tune.search import Strategy, partition

__all__ = ["Heuristics", "knob_names"]


def knob_names(knobs: dict) -> dict:
    """{knob short name: value} of a Config's {KnobType: value}."""
    return {_engines.short_name(k): int(v) for k, v in knobs.items()}


class Heuristics(Strategy):
    """``part``: (i, parts) of a search split over several GPUs (``search.partition``): every part lists the same
    configs (heuristics are deterministic for one graph and device) and keeps its own share of them."""

    name = "heuristics"

    def __init__(self, part=None):
        self.part = part

    def candidates(self, search) -> list:
        """The keys of heuristics' configs, proposed to ``search`` (the exploration records each mode's list)."""
        o, ex = search.options, search.exploration
        graph, dp = search.graph, search.evaluator.deviceprop
        offline = search.evaluator.handle is None
        keys, messages, proposed = [], [], set()
        # before this strategy runs cuDNN: which steps start the CUDA runtime (seen only until one does)
        runtime = None
        if offline:
            runtime = search.runtime_steps or runtime_steps(graph, dp, tuple(o.modes), o.sm_count_target)
        for mode in o.modes:
            with cudnn_messages() as log:
                try:
                    cfgs = _heuristics.get_configs(graph, mode, dp, o.sm_count_target, raise_if_empty=False,
                                                   errata=False)  # the search judges each candidate it adds
                except CudnnBackendError as e:
                    search.notes.append(f"heuristics {mode}: {_engines.reason_of(e)}")
                    cfgs = []
            messages.extend(log)
            proposed.update(c.engine_index for c in cfgs)
            ex.heuristics[mode] = [(c.engine_index, knob_names(c.knobs)) for c in cfgs]
            for rank, cfg in enumerate(cfgs):
                known = search.results.get(cfg.key)
                if known is not None:
                    known.modes = known.modes + (mode,)
                    continue
                search.add(cfg, ConfigResult(
                    cfg.engine_index, knob_names(cfg.knobs), mode, rank, (mode,),
                    numerical_notes=tuple(_engines.short_name(n) for n in cfg.numerical_notes),
                    behavior_notes=tuple(_engines.short_name(n) for n in cfg.behavior_notes)))
                if not search.is_denied(cfg.key):  # a denied config is listed, takes no place of max_configs
                    keys.append(cfg.key)
        if ex.modes_agree and ex.heuristics["A"]:
            search.notes.append(f"heuristics A and B agree: the same {len(ex.heuristics['A'])} configs in the same "
                                "order")
        if not keys:
            raw = _heuristics.why_no_engine(graph, dp, tuple(o.modes))
            why = "; ".join(f"{status}: {reason}" for status, reason in _heuristics.cudnn_explanations([raw], 4))
            search.notes.append(f"no engine config from heuristics {', '.join(o.modes)}: {why or raw}")
        if offline:
            self.offline_gaps(search, messages, proposed, refused=not keys, runtime=runtime)
        if o.max_configs is not None and len(keys) > o.max_configs:
            search.notes.append(f"max_configs={o.max_configs}: {len(keys) - o.max_configs} configs of the "
                                "heuristics lists not tried")
            search.drop(keys[o.max_configs:])
            keys = keys[:o.max_configs]
        if self.part is not None:
            i, parts = self.part
            mine = partition(keys, parts)[i]
            kept = set(mine)
            search.drop([k for k in keys if k not in kept])
            search.notes.append(f"split search, part {i + 1} of {parts}: {len(mine)} of the {len(keys)} heuristics "
                                "configs (dealt round-robin), the knob search around this part's fastest")
            keys = mine
        return keys

    @staticmethod
    def offline_gaps(search, messages, proposed, refused, runtime):
        """Record on the exploration the refusals only the GPU decides that heuristics met (or left silent), the steps
        that need the CUDA ``runtime`` (None: not observable here), heuristics' lists chosen against the
        cluster layout it has offline, and say what they mean."""
        ex, graph, dp = search.exploration, search.graph, search.evaluator.deviceprop
        gaps = gaps_in(messages)
        if not gaps:
            infos = [_engines.inspect_engine(graph, i, dp, probe_configs=False)
                     for i in range(_engines.engine_count(graph))]
            gaps = silent_gaps([i for i in infos if i.supported], proposed)
        ex.offline_gaps, record = offline_labels(
            gaps, runtime, lambda i: _engines.inspect_engine(graph, i, dp, probe_configs=False).supported,
            supported=not refused, release=ex.cudnn_version, lists=ex.heuristics,
            operations=[row["operation"] for row in _graphs.describe_operations(graph)])
        ex.cuda_runtime = record or {}
        if ex.offline_gaps:
            search.notes.append(("unknown offline: " if refused else "") + gap_caveat(
                ex.offline_gaps, ex.cudnn_version, refused=refused, runtime=ex.cuda_runtime))
        if runtime is None:
            search.notes.append(RUNTIME_UNOBSERVED)

    def run(self, search):
        with search.phase("heuristics"):
            keys = self.candidates(search)
        search.screen(keys, "heuristics", label_of=lambda r: f"{r.label} engine {r.engine_index}: {r.status}")
