"""``explore``: every engine config cuDNN offers for a graph, built, checked and timed; ``autotune``: the
fastest correct one, built (and stored in a plan cache).

The graph may be a finalized operation graph built with any API (generic ``Descriptor``, typed classes,
``Graph``), a ``Graph``, a ``Pattern``, a pattern name of the catalogue, or a builder ``"file.py:func"``.

How the search goes is set by one ``TuneOptions`` (``options=``, or its fields as keyword arguments) and runs as
a list of strategies over a ``Search`` (``tune.search``, ``tune.strategies``): heuristics' lists; with
``sweep=True`` the knob search around the fastest configs; the chosen strategy — ``"racing"`` (the default: every
candidate timed briefly, the fastest fraction re-timed with more samples round after round, outputs checked as a
config survives) or ``"exhaustive"`` (every candidate checked and timed fully); last the final round, which
re-times the ``finalists`` fastest correct configs and heuristics' pick head to head (the winner is the fastest
there). The GPU work is done by an evaluator (``tune.evaluation``): each plan runs on random inputs with its
outputs poisoned first, is checked against the fp64 reference evaluator (``cudnn_backend.reference``, whole or at
sampled coordinates) or, where it cannot compute the graph, against the majority of the configs that ran, the
reason said (``checking``; each result's ``checked_by``), and is timed with CUDA events (``timing.Timer``). All of
it runs on cuda.core and cuda-bindings; torch is not used. Without a GPU, or with ``device_profile=``, the
exploration runs offline against the device profile: heuristics, engines, knobs and plans, no timings.

Configs cuDNN refused are remembered for the process (``runtime.plans``): cuDNN keeps about 7 KB each time
it refuses a runtime-compiled config, so none is handed to it twice.
"""
from __future__ import annotations

import time as _time
from dataclasses import dataclass

from cudnn_backend._bindings.enums import AttributeName
from cudnn_backend.core import device as _device
from cudnn_backend.core._handle import Handle
from cudnn_backend.core._library import get_version
from cudnn_backend.core.families._build import flags_checked
from cudnn_backend.core.versions import format_version
from cudnn_backend.errors import CudnnBackendError, MissingDependencyError, NoWorkingPlanError
from cudnn_backend.runtime import engines as _engines
from cudnn_backend.runtime import errata as _errata
from cudnn_backend.runtime import memory
from cudnn_backend.runtime import plans as _plans
from cudnn_backend.runtime.profiles import DeviceProfile, as_deviceprop
from cudnn_backend.tune import findings, graphs, results
from cudnn_backend.tune.cache import PlanCache
from cudnn_backend.tune.evaluation import Evaluator, GpuEvaluator
from cudnn_backend.tune.offline_gaps import runtime_steps
from cudnn_backend.tune.options import TuneOptions, as_options, progress_callback
from cudnn_backend.tune.results import Exploration, plural
from cudnn_backend.tune.search import Search
from cudnn_backend.tune.strategies import pipeline

__all__ = ["explore", "autotune", "device_of", "run_search", "SearchOutcome"]

MODES = ("A", "B", "FALLBACK", "INSTANT")


def device_of(handle=None, deviceprop=None) -> dict:
    """{name, sm_version, sm_count, source}: the GPU behind a handle, or the one a device profile describes."""
    name, sm, count = _plans.device_key(handle, deviceprop)
    return {"name": name, "sm_version": sm, "sm_count": count, "source": "gpu" if deviceprop is None else "profile"}


def _missing_gpu_package() -> MissingDependencyError | None:
    """The error of the first GPU package (cuda-core, cuda-bindings) that cannot be imported, None when both can."""
    try:
        memory.cuda_core()
        memory.cudart()
    except MissingDependencyError as e:
        return e
    return None


class _Explorer:
    """One exploration: where it runs (GPU or device profile), the graph, and the evaluator holding the live
    descriptors, buffers and plans (none of which go into the Exploration)."""

    def __init__(self, graph, *, handle, device_profile, options: TuneOptions, buffers=None, progress=None, name=None,
                 args=(), kwargs=None, keep_plans=False, part=None, parts=None, previous=None, job="explore"):
        self.t0 = _time.perf_counter()
        self.previous = previous  # another cuDNN release's winner (a plan-cache entry), tried in the search
        self.job = job
        self.part, self.parts = part, parts  # a search split over GPUs: this part (i, n), or the parts to merge
        self.options = o = options
        self.progress = progress_callback(progress)
        self.notes: list[str] = []
        self.owned_handle = None
        if handle is not None and not isinstance(handle, Handle):
            raise TypeError(f"handle: expected a cudnn_backend.Handle, not {type(handle).__name__}")
        profile = graphs.device_profile(device_profile)
        gpu = _device.gpu_available()
        if profile is None and handle is None and not gpu:
            profile = DeviceProfile.bundled("h200")
            self.notes.append(f"no GPU: offline against the bundled {profile.device_name} profile "
                              f"({profile.origin}); plans built, nothing timed")
        elif profile is not None:
            self.notes.append(f"offline against the device profile given ({profile.device_name}, "
                              f"{profile.for_release().origin if not profile.allow_version_mismatch else profile.origin}"
                              "): plans built, nothing timed")
        if profile is None and handle is None:
            handle = self.owned_handle = Handle()
        self.handle = handle if profile is None else None
        self.timed = profile is None and o.time is not False
        missing = _missing_gpu_package() if self.timed else None
        if missing is not None:
            if o.time is True:
                raise missing
            self.timed = False
            self.notes.append(f"{missing.package} is not installed (pip install {missing.package}, or the [gpu] "
                              "extra): plans built on the GPU, not run or timed")
        elif o.time is True and profile is not None:
            self.notes.append("time=True asked, but there is no GPU to time on (offline)")
        self.sweep = o.sweep
        if not self.timed and self.sweep:
            self.notes.append("sweep skipped: the knob search compares timings, and nothing is timed offline")
            self.sweep = False
        if self.timed and o.deterministic:
            budget = "no limit" if o.sweep_configs is None else f"{o.sweep_configs} configs"
            self.notes.append(f"deterministic: candidates in a fixed order, times within {o.tie:.1%} of each other "
                              f"taken as tied (the earliest candidate first), seed {o.seed}; budgets are counts "
                              f"(the knob search: {budget}), time budgets ignored")
        self.deviceprop = as_deviceprop(profile) if profile is not None else None
        if isinstance(graph, graphs.Subject):
            self.subject = graph
        else:
            self.subject = graphs.resolve(graph, handle=self.handle, args=args, kwargs=kwargs, name=name,
                                          device_profile=self.deviceprop)
        self.op_graph = self.subject.op_graph
        if self.handle is not None and self.op_graph.values.get(AttributeName.CUDNN_ATTR_OPERATIONGRAPH_HANDLE) is None:
            # a graph finalized without a handle: heuristics and plans target this GPU through its properties
            self.deviceprop = _plans.deviceprop_of_handle(self.handle)
        self.device = device_of(self.handle, None) if self.handle is not None else device_of(None, self.deviceprop)
        if self.timed:
            self.evaluator = GpuEvaluator(self.subject, handle=self.handle, deviceprop=self.deviceprop, options=o,
                                          keep_plans=keep_plans, buffers=buffers)
        else:
            self.evaluator = Evaluator(handle=self.handle, deviceprop=self.deviceprop, options=o,
                                       keep_plans=keep_plans)
        self.search = None

    def exploration(self) -> Exploration:
        return Exploration(
            name=self.subject.name, device=self.device, cudnn_version=format_version(get_version()),
            timed=self.timed, graph=self.subject.summary(), params=dict(self.subject.params),
            measured="not timed", fingerprint=self.subject.fingerprint)

    def engines(self, ex: Exploration):
        try:
            infos = _engines.list_engines(self.op_graph, self.deviceprop, sm_count_target=self.options.sm_count_target)
        except CudnnBackendError as e:
            ex.notes.append(f"engines: {_engines.reason_of(e)}")
            return
        for info in infos:
            knobs = [{"knob": s.name, "minimum": s.minimum, "maximum": s.maximum, "stride": s.stride,
                      "values": len(s)} for s in info.knobs]
            ex.engines.append({
                "engine_index": info.engine_index, "supported": info.supported,
                "reason": "" if info.supported else info.reason,
                "numerical_notes": [_engines.short_name(n) for n in info.numerical_notes],
                "behavior_notes": [_engines.short_name(n) for n in info.behavior_notes],
                "knobs": knobs, "knob_space": info.knob_space_size if info.supported else 0,
            })

    def errata_scope(self) -> dict:
        """What errata rules are matched against here (``Exploration.errata``): the graph's traits and the target,
        with the errata file honoured."""
        honoured = _errata.resolve(self.options.errata)
        return {"traits": _errata.traits_of(self.op_graph).to_dict(),
                "target": _errata.target_of(self.handle, self.deviceprop, self.op_graph).to_dict(),
                "file": honoured.source, "rules": len(honoured)}

    def run(self) -> Exploration:
        o = self.options
        ex = self.exploration()
        ex.notes.extend(self.notes)
        ex.errata = self.errata_scope()
        steps = pipeline(o, knob_search=self.sweep, part=self.part, parts=self.parts,
                         previous=self.previous if self.timed else None)
        self.search = search = Search(self.evaluator, o, graph=self.op_graph, exploration=ex, strategies=steps,
                                      progress=self.progress)
        if self.handle is None:  # before the engine table runs cuDNN: which steps start the CUDA runtime
            search.runtime_steps = runtime_steps(self.op_graph, self.deviceprop, tuple(o.modes), o.sm_count_target)
        if o.errata_out is not None:  # a crash left by an earlier run is recorded first; this run's are caught
            ex.notes.extend(findings.harvest(o.errata_out))
            self.evaluator.inflight = findings.InFlight(o.errata_out, ex.name, ex.errata, ex.fingerprint,
                                                        self.device.get("name", ""), o.errata_scope, self.job)
        if o.engines and self.parts is None:  # a merge takes the first part's table
            self.engines(ex)
        search.run()
        if self.timed:
            ex.measured = search.chooser.describe(o, self.evaluator.timer)
        ex.results = [search.results[k] for k in self.ordered_keys()]
        key = self.best_key()
        if self.timed and o.fusion == "best" and key is not None:
            self.evaluator.kernels(search, key)
        pick = ex.heuristics_pick
        if self.timed and ex.best is not None and pick is not None and pick.status not in (results.OK,
                                                                                          results.TIMED):
            ex.notes.append(f"heuristics' first pick ({pick.label}) did not work: {pick.status}: {pick.reason}")
        if self.evaluator.builder.parallel:
            b = self.evaluator.builder
            ex.notes.append(f"{plural(b.parallel, 'runtime-compiled plan')} built ahead in {plural(o.threads, 'thread')} "
                            f"({b.spent:.1f} s of compilation)")
        ex.options = o.to_dict()
        ex.phases = {k: round(v, 4) for k, v in search.phases.items()}
        if o.errata_out is not None and self.part is None:  # a split search's findings are recorded at its merge
            findings.record_exploration(o.errata_out, ex, o.errata_scope, self.job)
        ex.wall_seconds = _time.perf_counter() - self.t0
        return ex

    def best_key(self):
        """The key of the winner (None when nothing timed ran correctly)."""
        if self.search is None:
            return None
        return next((k for k, r in self.search.results.items() if r.winner), None)

    def ordered_keys(self) -> list:
        """The winner first, then the correct configs timed last fastest first (the final round's, then racing's
        later rounds), configs timed and not checked, then the rest in heuristics order (sweep finds last)."""
        res = self.search.results

        def order(key):
            r = res[key]
            group = 0 if r.status == results.OK and r.time_us is not None else \
                1 if r.status == results.TIMED and r.time_us is not None else 2
            src = MODES.index(r.source) if r.source in MODES else len(MODES)
            if group == 2:
                return (2, False, False, 0, 0.0, src, r.rank if r.rank is not None else 1 << 30)
            # the final round's contenders were all timed head to head: their times alone order them, whichever
            # racing round each left the race at (heuristics' pick, another release's winner)
            final = r.first_pass_us is not None
            return (group, not r.winner, not final, 0 if final else -(r.race_round or 0), r.time_us, src,
                    r.rank if r.rank is not None else 1 << 30)

        return sorted(res, key=order)

    def close(self):
        self.evaluator.close()
        if self.evaluator.inflight is not None:
            self.evaluator.inflight.close()
        if self.owned_handle is not None:
            self.owned_handle.close()


def explore(graph, *, handle=None, device_profile=None, options=None, buffers=None, progress=None, name=None,
            args=(), kwargs=None, **option_kwargs) -> Exploration:
    """Explore the engine configs cuDNN offers for ``graph`` (see the module's notes).

    ``graph``: a finalized operation graph (any API), a ``Graph``, a ``Pattern``, a catalogue pattern name or
    ``"file.py:func"`` (called with ``args``/``kwargs``; ``name`` names the exploration). ``handle``: the GPU to
    run on (one is made when a GPU is visible and neither it nor ``device_profile`` is given). ``device_profile``
    ("h100", "h200", a file, a ``DeviceProfile``): explore offline for that GPU. ``options``: a ``TuneOptions``;
    its fields may also be given as keyword arguments (``sweep=True``, ``strategy="exhaustive"``, ``modes=...``,
    ``finalists=``, ...: see ``TuneOptions``), which override ``options``. ``buffers`` ({uid or tensor: device
    buffer}) replaces the random inputs (outputs are still poisoned first). ``progress(done, total, text)`` is
    called as configs finish.
    """
    opts = as_options(options, "explore", **option_kwargs).for_job("explore")
    ex_ = _Explorer(graph, handle=handle, device_profile=device_profile, options=opts, buffers=buffers,
                    progress=progress, name=name, args=args, kwargs=kwargs, keep_plans=False)
    try:
        return ex_.run()
    finally:
        ex_.close()


@dataclass
class SearchOutcome:
    """What ``run_search`` gave: the winner's ``plan`` (or the cache's, on a hit; None when not asked for), the
    ``exploration`` (None on a hit) and ``cached``: "hit", "stored" or ""."""

    plan: object
    exploration: Exploration | None
    cached: str = ""


def run_search(graph, handle=None, *, job="autotune", options=None, device_profile=None, cache=None, lookup=True,
               store=True, want_plan=True, buffers=None, progress=None, name=None, args=(), kwargs=None, part=None,
               parts=None) -> SearchOutcome:
    """The one path of ``autotune`` and of the sweeps' explore and tune jobs: with a ``cache`` (a PlanCache, a path,
    or True: the default cache) and a GPU, a stored plan for this graph, device and cuDNN version is taken instead
    of searching (``lookup``), and a new winner is stored (``store``). Offline nothing is cached, and the plan is
    heuristics' first config that builds. ``want_plan``: return the winner's plan (else it is closed); a search
    that must give a plan and found no working config raises NoWorkingPlanError. ``part`` / ``parts``: one part of
    a search split over GPUs, or the merge of the parts' Explorations (``strategies.pipeline``)."""
    opts = as_options(options).for_job("autotune" if job == "tune" else job)
    cache = PlanCache.of(cache)
    if handle is None and device_profile is None and _device.gpu_available():
        handle = Handle()  # the plan returned keeps it alive
    subject = None
    online = device_profile is None and handle is not None
    denied_note = ""
    if cache is not None and online:
        subject = graphs.resolve(graph, handle=handle, args=args, kwargs=kwargs, name=name)
        hit, denied_note = cache.lookup(subject, handle=handle, errata=opts.errata) if lookup else (None, "")
        if hit is not None:
            if not want_plan:
                hit.close()
            return SearchOutcome(hit if want_plan else None, None, "hit")
    # a miss on this release: another release's winner for this graph and GPU is tried against the new search
    previous = cache.previous(subject, handle=handle) if subject is not None and parts is None else None
    ex_ = _Explorer(subject if subject is not None else graph, handle=handle, device_profile=device_profile,
                    options=opts, buffers=buffers, progress=progress, name=name, args=args, kwargs=kwargs,
                    keep_plans=want_plan or (cache is not None and store), part=part, parts=parts,
                    previous=previous, job="tune" if job == "autotune" else "explore")
    try:
        ex = ex_.run()
        if denied_note:
            ex.notes.insert(0, f"plan cache: {denied_note}; searched again")
        if not ex_.timed:
            if not want_plan:
                return SearchOutcome(None, ex)
            ranked = [k for k in ex_.ordered_keys() if k in ex_.evaluator.plans]
            if not ranked:
                raise NoWorkingPlanError(f"autotune: no config built a plan for {ex.name!r} offline: {ex.failure()}",
                                         None)
            return SearchOutcome(ex_.evaluator.plans.pop(ranked[0]), ex)
        key = ex_.best_key()
        if key is None:
            if want_plan:
                reasons = sorted({r.reason for r in ex.results if r.reason})[:4]
                raise NoWorkingPlanError(f"autotune: no config of {ex.name!r} ran correctly: {ex.counts()}; "
                                         f"{'; '.join(reasons) or 'no reason given'}", None)
            return SearchOutcome(None, ex)
        cached = ""
        plan = None
        if want_plan or (cache is not None and store):
            plan = ex_.evaluator.plans.pop(key, None)
            if plan is None:  # not kept (the exhaustive pass closes its plans): built again
                plan = _plans.build_plan(ex_.search.configs[key], handle=ex_.handle, device_profile=ex_.deviceprop)
        if cache is not None and store:
            best = ex_.search.results[key]
            cache.put(ex_.subject, plan, handle=ex_.handle, time_us=best.time_us, name=ex.name, source=best.label,
                      headroom=ex.headroom)
            cached = "stored"
        if not want_plan and plan is not None:
            plan.close()
            plan = None
        return SearchOutcome(plan, ex, cached)
    finally:
        ex_.close()


@flags_checked
def autotune(graph, handle=None, *, cache=None, device_profile=None, store=True, options=None, buffers=None,
             progress=None, name=None, args=(), kwargs=None, **option_kwargs):
    """The fastest correct config for ``graph`` on ``handle``'s GPU, built: ``(plan, exploration)``.

    With ``cache`` (a ``PlanCache``, a path, or True for the default cache) a stored plan for this graph,
    device and cuDNN version is loaded instead (``exploration`` is then None: the hit costs only the plan's
    deserialization), and a new winner is stored (unless ``store=False``). Offline (``device_profile=`` or no
    GPU) nothing can be timed, so the plan is heuristics' first working config, and it is not cached.
    ``options`` / option keywords: as for ``explore`` (``TuneOptions``). A plan built ahead in a build thread
    (runtime-compiled engines) holds that thread's handle, of the same GPU. Raises NoWorkingPlanError when no
    config ran correctly.
    """
    opts = as_options(options, "autotune", **option_kwargs)
    outcome = run_search(graph, handle, job="autotune", options=opts, device_profile=device_profile, cache=cache,
                         lookup=True, store=store, want_plan=True, buffers=buffers, progress=progress, name=name,
                         args=args, kwargs=kwargs)
    return outcome.plan, outcome.exploration
