"""``explore``: every engine config cuDNN offers for a graph, built, checked and timed; ``autotune``: the
fastest correct one, built (and stored in a plan cache).

The graph may be a finalized operation graph built with any API (generic ``Descriptor``, typed classes,
``Graph``), a ``Graph``, a ``Pattern``, a pattern name of the catalogue, or a builder ``"file.py:func"``.

With a GPU (a handle given, or one made here) every config of the heuristics modes asked for is built into a
plan, run on random inputs with its outputs poisoned first, checked — against the fp64 reference evaluator
(``cudnn_backend.reference``, whole or at sampled coordinates), or, where it cannot compute the graph, against the
majority of the configs that ran, the reason said (``checking``; each result's ``checked_by``) — and timed (see
``timing.Timer``). All of it runs on cuda.core and cuda-bindings; torch is not used. ``sweep=True`` then searches
around the fastest correct configs: one knob at a time, then pairs of knobs changed together (engines couple their
knobs), within ``sweep_budget_s``. Last, a final round re-times the ``finalists`` fastest correct configs and
heuristics' pick head to head: ``final_rounds`` rounds, interleaved, each a batch of back-to-back calls on one buffer
set with the GPU kept busy; the winner is the fastest there. (The first pass rotates inputs over buffer sets and
samples briefly, which ranks configs of a few microseconds by their launch cost as much as by their kernels: two
runs disagreed by up to 20% head to head.)
Without a GPU, or with ``device_profile=``, the exploration runs offline against the device profile:
heuristics, engines, knobs and plans, no timings.

Configs cuDNN refused are remembered for the process (``runtime.plans``): cuDNN keeps about 7 KB each time
it refuses a runtime-compiled config, so none is handed to it twice.
"""
from __future__ import annotations

import itertools
import math
import statistics
import time as _time

import numpy as np

from cudnn_backend._bindings.enums import AttributeName
from cudnn_backend.core import device as _device
from cudnn_backend.core._descriptor import Handle, as_int, get_version
from cudnn_backend.core.versions import format_version
from cudnn_backend.errors import CudaError, CudnnBackendError, CudnnError, MissingDependencyError, NoWorkingPlanError
from cudnn_backend.runtime import engines as _engines
from cudnn_backend.runtime import heuristics as _heuristics
from cudnn_backend.runtime import memory
from cudnn_backend.runtime import plans as _plans
from cudnn_backend.runtime.execution import VariantPack, captured_kernels, execute
from cudnn_backend.runtime.profiles import DeviceProfile, as_deviceprop
from cudnn_backend.tune import checking, graphs, inputs, results
from cudnn_backend.tune.cache import PlanCache
from cudnn_backend.tune.results import ConfigResult, Exploration
from cudnn_backend.tune.timing import Timer

__all__ = ["explore", "autotune", "device_of"]

MODES = ("A", "B", "FALLBACK", "INSTANT")


def _modes(modes) -> tuple:
    if isinstance(modes, str):
        modes = tuple(m for m in modes.replace(" ", "").split(",") if m)
    out = []
    for m in modes:
        name = _engines.short_name(_heuristics.heur_mode(m))
        if name not in out:
            out.append(name)
    if not out:
        raise ValueError("modes: give at least one heuristics mode (A, B, FALLBACK, INSTANT)")
    return tuple(out)


def device_of(handle=None, deviceprop=None) -> dict:
    """{name, sm_version, sm_count, source}: the GPU behind a handle, or the one a device profile describes."""
    name, sm, count = _plans.device_key(handle, deviceprop)
    return {"name": name, "sm_version": sm, "sm_count": count, "source": "gpu" if deviceprop is None else "profile"}


def _knob_names(knobs: dict) -> dict:
    return {_engines.short_name(k): int(v) for k, v in knobs.items()}


def _missing_gpu_package() -> MissingDependencyError | None:
    """The error of the first GPU package (cuda-core, cuda-bindings) that cannot be imported, None when both can."""
    try:
        memory.cuda_core()
        memory.cudart()
    except MissingDependencyError as e:
        return e
    return None


def _seconds(value, what):
    if value is None:
        return None
    if isinstance(value, bool) or not isinstance(value, (int, float)) or not math.isfinite(value) or value < 0:
        raise ValueError(f"{what}: expected a number of seconds >= 0, not {value!r}")
    return float(value)


class _Explorer:
    """The state of one exploration (live descriptors, buffers and plans stay here, not in the Exploration)."""

    def __init__(self, graph, *, handle, device_profile, modes, time, sweep, max_workspace, sm_count_target,
                 max_configs, engines, sweep_seeds, pair_seeds, knob_values, sweep_budget_s, compile_budget_s,
                 finalists, final_rounds, warmup, repeats, buffer_sets, cold, cuda_graph, buffers, fusion, progress,
                 name, args, kwargs, keep_plans):
        self.t0 = _time.perf_counter()
        self.modes = _modes(modes)
        self.sweep = bool(sweep)
        self.max_workspace = None if max_workspace is None else as_int(max_workspace, "max_workspace", 0)
        self.sm_count_target = None if sm_count_target is None else as_int(sm_count_target, "sm_count_target", 1)
        self.max_configs = None if max_configs is None else as_int(max_configs, "max_configs", 1)
        self.sweep_seeds = as_int(sweep_seeds, "sweep_seeds", 1)
        self.pair_seeds = as_int(pair_seeds, "pair_seeds", 0)
        self.knob_values = as_int(knob_values, "knob_values", 2)
        self.sweep_budget = _seconds(sweep_budget_s, "sweep_budget_s")
        self.refused, self.cut_short = set(), False  # knob combinations cuDNN refused; sweep generation cut
        self.odd_refusal = None  # the first candidate refused by anything but the engine-config finalize
        self.compile_budget = _seconds(compile_budget_s, "compile_budget_s")
        self.finalists = as_int(finalists, "finalists", 0)
        self.final_rounds = as_int(final_rounds, "final_rounds", 1)
        self.want_engines = bool(engines)
        if fusion not in (True, False, "best", "all"):
            raise ValueError(f"fusion: expected True, False, 'best' or 'all', not {fusion!r}")
        self.fusion = fusion
        self.progress = progress
        self.keep_plans = keep_plans
        self.notes: list[str] = []
        self.owned_handle = None
        if handle is not None and not isinstance(handle, Handle):
            raise TypeError(f"handle: expected a cudnn_backend.Handle, not {type(handle).__name__}")
        profile = graphs.device_profile(device_profile)
        gpu = _device.gpu_available()
        if profile is None and handle is None and not gpu:
            profile = DeviceProfile.bundled("h200")
            self.notes.append(f"no GPU: offline against the bundled {profile.device_name} profile "
                              f"(cuDNN {profile.cudnn_version_string}); plans built, nothing timed")
        elif profile is not None:
            self.notes.append("offline against the device profile given: plans built, nothing timed")
        if profile is None and handle is None:
            handle = self.owned_handle = Handle()
        self.handle = handle if profile is None else None
        self.profile = profile
        self.timed = profile is None and time is not False
        missing = _missing_gpu_package() if self.timed else None
        if missing is not None:
            if time is True:
                raise missing
            self.timed = False
            self.notes.append(f"{missing.package} is not installed (pip install 'cudnn-backend[gpu]'): plans built on "
                              "the GPU, not run or timed")
        elif time is True and profile is not None:
            self.notes.append("time=True asked, but there is no GPU to time on (offline)")
        if not self.timed and self.sweep:
            self.notes.append("sweep skipped: the knob search compares timings, and nothing is timed offline")
            self.sweep = False
        if self.profile is not None:
            self.deviceprop = as_deviceprop(self.profile)
        else:
            self.deviceprop = None
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
        self.timer = None
        if self.timed:
            self.timer = Timer(self.handle, warmup=warmup, repeats=repeats, cold=cold, cuda_graph=cuda_graph)
        self.buffer_sets_n = as_int(buffer_sets, "buffer_sets", 1)
        self.user_buffers = buffers
        self.configs: dict = {}  # key -> Config
        self.results: dict = {}  # key -> ConfigResult
        self.plans: dict = {}  # key -> Plan (kept when keep_plans)
        self.compile_spent = 0.0
        self.sets = None
        self.groups = None
        self.check = None
        self.stream = 0
        self._ex = None
        self.output_uids = ()

    def exploration(self) -> Exploration:
        return Exploration(
            name=self.subject.name, device=self.device, cudnn_version=format_version(get_version()),
            timed=self.timed, graph=self.subject.summary(), params=dict(self.subject.params),
            measured=self.timer.describe() if self.timer else "not timed", fingerprint=self.subject.fingerprint)

    def say(self, done, total, text):
        if self.progress is not None:
            self.progress(done, total, text)

    def heuristics(self, ex: Exploration) -> list:
        candidates = []
        for mode in self.modes:
            try:
                cfgs = _heuristics.get_configs(self.op_graph, mode, self.deviceprop, self.sm_count_target,
                                               raise_if_empty=False)
            except CudnnBackendError as e:
                ex.notes.append(f"heuristics {mode}: {_engines.reason_of(e)}")
                cfgs = []
            ex.heuristics[mode] = [(c.engine_index, _knob_names(c.knobs)) for c in cfgs]
            for rank, cfg in enumerate(cfgs):
                key = cfg.key
                if key in self.results:
                    r = self.results[key]
                    r.modes = r.modes + (mode,)
                    continue
                r = ConfigResult(cfg.engine_index, _knob_names(cfg.knobs), mode, rank, (mode,),
                                 numerical_notes=tuple(_engines.short_name(n) for n in cfg.numerical_notes),
                                 behavior_notes=tuple(_engines.short_name(n) for n in cfg.behavior_notes))
                self.configs[key] = cfg
                self.results[key] = r
                candidates.append(key)
        if ex.modes_agree:
            ex.notes.append(f"heuristics A and B agree: the same {len(ex.heuristics['A'])} configs in the same order")
        if not candidates:
            why = _heuristics.why_no_engine(self.op_graph, self.deviceprop, tuple(m for m in self.modes))
            ex.notes.append(f"no engine config from heuristics {', '.join(self.modes)}: {why}")
        if self.max_configs is not None and len(candidates) > self.max_configs:
            ex.notes.append(f"max_configs={self.max_configs}: {len(candidates) - self.max_configs} configs of the "
                            "heuristics lists not tried")
            for key in candidates[self.max_configs:]:
                del self.results[key], self.configs[key]
            candidates = candidates[:self.max_configs]
        return candidates

    def engines(self, ex: Exploration):
        try:
            infos = _engines.list_engines(self.op_graph, self.deviceprop, sm_count_target=self.sm_count_target)
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

    def prepare_gpu(self, ex: Exploration):
        self.timer.bind()  # the CUDA context and events, after heuristics (a sweep worker makes them meanwhile)
        self.stream = self.handle.stream
        if self.subject.plan is not None:  # a saved plan: tensors from its JSON, outputs found by running it
            self.sets = inputs.make_buffer_sets(None, self.buffer_sets_n, user=self.user_buffers,
                                                plan=self.subject.plan, stream=self.stream)
        else:
            self.sets = inputs.make_buffer_sets(self.op_graph, self.buffer_sets_n, user=self.user_buffers,
                                                stream=self.stream)
        first = self.sets[0]
        self.discover = not first.outputs_known
        self.output_uids = tuple(sorted(first.outputs))
        if self.discover:
            ex.notes.append("outputs found by running the first config (the tensors it changed); the graph came "
                            "from a saved plan, whose JSON does not say which tensors are written")
        elif not self.output_uids:
            ex.notes.append("the graph writes no real tensor the explorer could check; configs are timed unchecked")
        else:
            self.choose_check(ex)

    def choose_check(self, ex: Exploration):
        """The fp64 reference of the outputs on the first buffer set's inputs, or the majority (said why)."""
        first = self.sets[0]
        specs = first.specs
        op_graph = None if self.subject.plan is not None else self.op_graph
        self.check = checking.reference_check(op_graph, first.host, specs, self.output_uids)
        self.groups = checking.AnswerGroups({u: checking.agreement_tolerance(specs[u].data_type)
                                             for u in self.output_uids})
        ex.check = self.check.label
        uids = ", ".join(str(u) for u in self.output_uids)
        if self.check.by_reference:
            ex.notes.append(f"outputs (UID {uids}) checked against the {self.check.method} of the graph, on the "
                            "first buffer set's inputs")
        else:
            ex.notes.append(f"outputs (UID {uids}) checked against the majority of the configs that ran: "
                            f"{self.check.reason}")

    def found_outputs(self, before):
        first = self.sets[0]
        changed = {u for u, raw in before.items() if not np.array_equal(raw, first.raw(u, self.stream))}
        if not changed:
            return
        self.discover = False
        self.output_uids = tuple(sorted(changed))
        for i, s in enumerate(self.sets):
            s.outputs = set(changed)
            for u in changed:
                s.host.pop(u, None)
            if i:  # set 0 holds the result just computed, checked next
                s.poison(self.stream)
        self.choose_check(self._ex)

    def check_outputs(self, r: ConfigResult, key):
        """Compare the first buffer set's outputs (just written) with the reference and the other configs."""
        if not self.output_uids or self.check is None:
            r.correct = None
            return
        first = self.sets[0]
        outs = {u: self.check.values(first, u, self.stream) for u in self.output_uids}
        self.groups.add(key, outs)
        r.checked_by = self.check.label
        if self.check.by_reference:
            worst, ok = 0.0, True
            for u in self.output_uids:
                e = checking.relative_error(outs[u], self.check.expected[u])
                worst = max(worst, e)
                if not e <= checking.tolerance(first.specs[u].data_type):
                    ok = False
            r.rel_error, r.correct = worst, ok

    def settle_correctness(self):
        """Without a reference: the majority answer group is right; everyone else is wrong."""
        if self.check is None or self.check.by_reference or self.groups is None or not self.groups.groups:
            return
        for key, r in self.results.items():
            if key not in self.groups.member_of:
                continue
            r.rel_error = self.groups.error(key)
            r.correct = self.groups.is_majority(key)
            if r.status == results.OK and not r.correct:
                r.status = results.WRONG
                r.reason = f"disagrees with the majority of configs (relative error {r.rel_error:.2e}; " \
                           f"{self.groups.summary()})"
            elif r.status == results.WRONG and r.correct:
                r.status, r.reason = results.OK, ""

    def try_config(self, key):
        r, cfg = self.results[key], self.configs[key]
        if self.max_workspace is not None:
            ws = cfg.workspace_size
            if ws is not None and ws > self.max_workspace:
                r.status, r.workspace_bytes = results.SKIPPED, ws
                r.reason = f"workspace {results.format_bytes(ws)} exceeds max_workspace {results.format_bytes(self.max_workspace)}"
                return
        if r.runtime_compiled and self.compile_budget is not None and self.compile_spent > self.compile_budget:
            r.status, r.reason = results.SKIPPED, f"runtime-compilation budget of {self.compile_budget:g} s spent"
            return
        t0 = _time.perf_counter()
        try:
            plan = _plans.build_plan(cfg, handle=self.handle, device_profile=self.deviceprop)
        except CudnnBackendError as e:
            r.status, r.reason = results.PLAN_REFUSED, _engines.reason_of(e)
            return
        finally:
            r.plan_seconds = _time.perf_counter() - t0
            if r.runtime_compiled:
                self.compile_spent += r.plan_seconds
        r.plan_built = True
        r.workspace_bytes = int(plan.workspace_size)
        if self.max_workspace is not None and r.workspace_bytes > self.max_workspace:
            r.status = results.SKIPPED
            r.reason = f"workspace {results.format_bytes(r.workspace_bytes)} exceeds max_workspace"
            plan.close()
            return
        if not self.timed:
            r.status = results.PLAN_BUILT
            self._keep(key, plan)
            return
        self.run_on_gpu(key, r, plan)

    def _keep(self, key, plan):
        if self.keep_plans:
            self.plans[key] = plan
        else:
            plan.close()

    def run_on_gpu(self, key, r, plan):
        packs, ws = [], None
        try:
            if r.workspace_bytes:
                ws = memory.DeviceBuffer(r.workspace_bytes)
            packs = [VariantPack(plan, s.by_uid, ws if ws is not None else 0) for s in self.sets]
            first = self.sets[0]
            before = None
            if self.discover:
                before = {u: first.raw(u, self.stream).copy() for u in first.ptrs}
            first.poison(self.stream)
            execute(self.handle, plan, packs[0])
            memory.synchronize(self.stream)
            if before is not None:
                self.found_outputs(before)
            self.check_outputs(r, key)
            timing = self.timer.time(plan, packs)
            r.time_us, r.min_us, r.max_us = timing.median_us, timing.min_us, timing.max_us
            if self.fusion in (True, "all"):
                self.read_kernels(r, plan, packs[0])
        except (CudnnBackendError, RuntimeError, ValueError) as e:
            r.status, r.reason = results.EXECUTE_FAILED, _engines.reason_of(e)
            self._release(packs, ws)
            plan.close()
            return
        r.status = results.OK if r.correct is not False else results.WRONG
        if r.correct is False:
            r.reason = f"relative error {r.rel_error:.2e} against the {self.check.method}"
        self._release(packs, ws)
        self._keep(key, plan)

    @staticmethod
    def _release(packs, workspace):
        for p in packs:
            p.close()
        if workspace is not None:
            workspace.close()

    def read_kernels(self, r, plan, pack):
        try:
            ks = captured_kernels(self.handle, plan, pack)
        except (CudaError, CudnnBackendError, MissingDependencyError) as e:
            r.kernels, r.kernel_count = None, None
            r.reason = r.reason or f"kernels not read: {e}"
            return
        r.kernels = [k.short_name for k in ks]
        r.kernel_count = len(ks)

    def neighbours(self, key, knob_sets, deadline=None):
        """New config keys around ``key``, at most one per entry of ``knob_sets`` ({KnobType: value} to apply).

        Each candidate is finalized as an engine config (cheap: no plan), so invalid combinations cost a
        fraction of a millisecond; generation stops at ``deadline``.
        """
        base = self.configs[key]
        engine = base.engine
        out = []
        for change in knob_sets:
            if deadline is not None and _time.perf_counter() > deadline:
                self.cut_short = True
                break
            knobs = dict(base.knobs)
            knobs.update(change)
            new_key = (base.engine_index, tuple(sorted((int(k), v) for k, v in knobs.items())))
            if new_key in self.results or new_key in self.refused:
                continue
            try:
                cfg = _engines.make_config(engine, knobs, check=True, operation_graph=base.operation_graph,
                                           deviceprop=base.deviceprop)
            except (CudnnBackendError, ValueError) as e:
                self.refused.add(new_key)
                if self.odd_refusal is None and getattr(e, "function", None) != "cudnnBackendFinalize":
                    # not cuDNN judging the knobs: say so (a bug hiding behind "refused" found nothing once)
                    self.odd_refusal = _engines.reason_of(e) if isinstance(e, CudnnError) else str(e).splitlines()[0]
                continue
            if cfg.key in self.results:
                continue
            self.configs[cfg.key] = cfg
            self.results[cfg.key] = ConfigResult(
                cfg.engine_index, _knob_names(cfg.knobs), "sweep", None, (),
                numerical_notes=self.results[key].numerical_notes, behavior_notes=self.results[key].behavior_notes)
            out.append(cfg.key)
        return out

    def spread(self, spec):
        """The knob's valid values, evenly thinned to ``knob_values`` when it has more."""
        values = list(spec.values())
        if len(values) > self.knob_values:
            step = (len(values) - 1) / (self.knob_values - 1)
            values = sorted({values[round(i * step)] for i in range(self.knob_values)})
        return values

    def one_knob_changes(self, key):
        """One knob changed at a time, round-robin over the knobs: a short budget still tries every knob, so a
        switch such as INPUT_TMA_ENABLE / OUTPUT_TMA_ENABLE (cuDNN 9.22+) is not left behind a 265-value
        KERNEL_CFG."""
        per_knob = [[{spec.knob_type: v} for v in self.spread(spec)]
                    for spec in _engines.engine_knobs(self.configs[key].engine)]
        for changes in itertools.zip_longest(*per_knob):
            yield from (c for c in changes if c is not None)

    def knob_pair_changes(self, key):
        """Two knobs changed at once, round-robin over the knob pairs so a short budget still sees every pair.

        Engines couple their knobs (a tile size admits only some tile-K and stage counts), so many configs are
        reachable from a good one only by changing two knobs together.
        """
        specs = _engines.engine_knobs(self.configs[key].engine)
        streams = [((s1.knob_type, v1), (s2.knob_type, v2))
                   for s1, s2 in itertools.combinations(specs, 2)
                   for v1, v2 in itertools.product(self.spread(s1), self.spread(s2))]
        by_pair = {}
        for (k1, v1), (k2, v2) in streams:
            by_pair.setdefault((k1, k2), []).append({k1: v1, k2: v2})
        for changes in itertools.zip_longest(*by_pair.values()):
            yield from (c for c in changes if c is not None)

    def ranked_ok(self):
        return sorted((k for k, r in self.results.items() if r.status == results.OK and r.time_us is not None),
                      key=lambda k: self.results[k].time_us)

    def seed_keys(self, n):
        """The ``n`` configs to search around: the fastest of each engine first (fastest engines first), so
        one engine's neighbourhood, often already listed by heuristics, does not take every seed."""
        ranked = self.ranked_ok()
        firsts, seen = [], set()
        for key in ranked:
            if key[0] not in seen:
                seen.add(key[0])
                firsts.append(key)
        return (firsts + [k for k in ranked if k not in firsts])[:n]

    def run_sweep(self, ex: Exploration):
        self.refused, self.cut_short, self.odd_refusal = set(), False, None
        deadline = None if self.sweep_budget is None else _time.perf_counter() + self.sweep_budget
        tried = skipped = 0
        seeds = self.seed_keys(self.sweep_seeds)
        queue = []
        for key in seeds:  # one knob at a time, each over up to knob_values of its values
            queue += self.neighbours(key, self.one_knob_changes(key), deadline)
        tried, skipped = self._run_queue(queue, deadline, "sweep: one knob", tried, skipped)
        for key in self.seed_keys(self.pair_seeds):  # around the best configs after the first pass
            queue = self.neighbours(key, self.knob_pair_changes(key), deadline)
            tried, skipped = self._run_queue(queue, deadline, "sweep: knob pairs", tried, skipped)
        note = (f"sweep: {tried} new configs tried around {len(seeds)} seeds of engines "
                f"{', '.join(sorted({str(k[0]) for k in seeds}, key=int))} (one knob at a time, then pairs around "
                f"the best {self.pair_seeds}); {len(self.refused)} knob combinations refused at engine-config "
                f"finalize")
        if skipped or self.cut_short:
            note += f"; the {self.sweep_budget:g} s budget ran out ({skipped} found but left untried)"
        if self.odd_refusal is not None:
            note += f"; some candidates failed before cuDNN judged them, the first: {self.odd_refusal}"
        ex.notes.append(note)

    def _run_queue(self, queue, deadline, label, tried, skipped):
        for i, key in enumerate(queue):
            if deadline is not None and _time.perf_counter() > deadline:
                for k in queue[i:]:
                    r = self.results[k]
                    r.status, r.reason = results.SKIPPED, "sweep budget spent"
                skipped += len(queue) - i
                break
            self.try_config(key)
            tried += 1
            self.say(i + 1, len(queue), f"{label}: engine {key[0]} {self.results[key].status}")
        return tried, skipped

    def run(self) -> Exploration:
        ex = self._ex = self.exploration()
        ex.notes.extend(self.notes)
        candidates = self.heuristics(ex)
        if self.want_engines:
            self.engines(ex)
        if self.timed and candidates:
            self.prepare_gpu(ex)
        for i, key in enumerate(candidates):
            self.try_config(key)
            r = self.results[key]
            self.say(i + 1, len(candidates), f"{r.label} engine {r.engine_index}: {r.status}")
        if self.timed:
            self.settle_correctness()
            if self.sweep:
                self.run_sweep(ex)
                self.settle_correctness()
            if self.finalists:
                self.run_final_round(ex)
        ex.results = [self.results[k] for k in self.ordered_keys()]
        if self.timed and self.fusion == "best":
            self.kernels_of_best(ex)
        if self.timed and ex.best is not None and ex.heuristics_pick is not None \
                and ex.heuristics_pick.status != results.OK:
            ex.notes.append(f"heuristics' first pick ({ex.heuristics_pick.label}) did not work: "
                            f"{ex.heuristics_pick.status}: {ex.heuristics_pick.reason}")
        ex.wall_seconds = _time.perf_counter() - self.t0
        return ex

    def key_of(self, result):
        return next((k for k, r in self.results.items() if r is result), None)

    def best_key(self):
        return self.key_of(results.fastest(self.results.values()))

    def run_final_round(self, ex: Exploration):
        """Re-time the fastest correct configs and heuristics' pick head to head (see the module's notes)."""
        keys = self.ranked_ok()[:self.finalists]
        pick = self.key_of(results.heuristics_pick(self.results.values()))
        pick_added = pick is not None and pick not in keys and self.results[pick].status == results.OK \
            and self.results[pick].time_us is not None
        if pick_added:  # the headroom compares it with the winner: both measured alike
            keys.append(pick)
        if len(keys) < 2:
            return
        timer = Timer(self.handle, warmup=20, repeats=5, target_sample_us=1000.0, cold=self.timer.cold,
                      cuda_graph=self.timer.cuda_graph)
        owned, packs, samples = [], {}, {k: [] for k in keys}
        try:
            for key in keys:
                plan = self.plans.get(key)
                if plan is None:  # explore keeps no plans: build the few finalists again
                    plan = _plans.build_plan(self.configs[key], handle=self.handle, device_profile=self.deviceprop)
                    owned.append(plan)
                ws = self.results[key].workspace_bytes or 0
                ws = memory.DeviceBuffer(ws) if ws else None
                packs[key] = (plan, [], ws)
                for s in (self.sets if timer.cold else self.sets[:1]):  # warm: one buffer set, as a layer runs
                    packs[key][1].append(VariantPack(plan, s.by_uid, ws if ws is not None else 0))
            for round_ in range(self.final_rounds):
                shift = round_ % len(keys)  # each round starts with another config
                for key in keys[shift:] + keys[:shift]:
                    plan, key_packs, _ = packs[key]
                    samples[key].append(timer.time(plan, key_packs).median_us)
        except (CudnnBackendError, RuntimeError, ValueError) as e:
            ex.notes.append(f"final round not run: {_engines.reason_of(e)}; the first pass's times decide")
            return
        finally:
            for _, key_packs, ws in packs.values():
                self._release(key_packs, ws)
            for plan in owned:
                plan.close()
            timer.close()
        for key in keys:
            r = self.results[key]
            r.first_pass_us = r.time_us
            r.time_us, r.min_us, r.max_us = statistics.median(samples[key]), min(samples[key]), max(samples[key])
        ex.notes.append(f"final round: the fastest {len(keys) - pick_added} correct configs"
                        f"{' and heuristics pick' if pick_added else ''} re-timed head to head, {self.final_rounds} "
                        f"interleaved rounds of {timer.repeats} samples (back-to-back calls, "
                        f"{'L2 flushed' if timer.cold else 'one buffer set'}); their times are that round's medians")

    def kernels_of_best(self, ex):
        key = self.best_key()
        if key is None:
            return
        r = self.results[key]
        plan = self.plans.get(key)
        own = plan is None
        try:
            if own:
                plan = _plans.build_plan(self.configs[key], handle=self.handle, device_profile=self.deviceprop)
            pack = VariantPack(plan, self.sets[0].by_uid)
            try:
                self.read_kernels(r, plan, pack)
            finally:
                pack.close()
        except CudnnBackendError as e:
            ex.notes.append(f"kernels of the best config not read: {_engines.reason_of(e)}")
        finally:
            if own and plan is not None:
                plan.close()

    def ordered_keys(self) -> list:
        """Timed correct configs fastest first (the final round's first), then the rest in heuristics order (sweep
        finds last)."""
        def order(key):
            r = self.results[key]
            timed = r.status == results.OK and r.time_us is not None
            src = MODES.index(r.source) if r.source in MODES else len(MODES)
            return (not timed, r.first_pass_us is None, r.time_us if timed else 0.0, src,
                    r.rank if r.rank is not None else 1 << 30)

        return sorted(self.results, key=order)

    def close(self):
        for p in self.plans.values():
            p.close()
        self.plans.clear()
        if self.sets is not None:
            for s in self.sets:
                s.close()
            self.sets = None
        if self.timer is not None:
            self.timer.close()
        if self.owned_handle is not None:
            self.owned_handle.close()


def explore(graph, *, handle=None, device_profile=None, modes=("A", "B"), time=None, sweep=False,
            max_workspace=None, sm_count_target=None, max_configs=None, engines=True, sweep_seeds=3, pair_seeds=2,
            knob_values=32, sweep_budget_s=4.0, compile_budget_s=30.0, finalists=4, final_rounds=3, warmup=10,
            repeats=20, buffer_sets=4, cold=False, cuda_graph=False, buffers=None, fusion=True, progress=None,
            name=None, args=(), kwargs=None) -> Exploration:
    """Explore the engine configs cuDNN offers for ``graph`` (see the module's notes).

    ``graph``: a finalized operation graph (any API), a ``Graph``, a ``Pattern``, a catalogue pattern name or
    ``"file.py:func"`` (called with ``args``/``kwargs``). ``handle``: the GPU to run on (one is made when a GPU
    is visible and neither it nor ``device_profile`` is given). ``device_profile`` ("h100", "h200", a file, a
    ``DeviceProfile``): explore offline for that GPU. ``modes``: heuristics modes whose configs are tried.
    ``time``: None times when a GPU is there, False never. ``sweep``: the knob search (``sweep_seeds`` seeds,
    ``knob_values`` values per knob, pairs around ``pair_seeds`` configs, ``sweep_budget_s`` seconds).
    ``max_workspace`` (bytes) skips configs that need more; ``sm_count_target`` asks heuristics for configs
    using at most that many SMs; ``max_configs`` caps the heuristics configs tried; ``compile_budget_s``
    caps the time spent building runtime-compiled plans. ``finalists`` fastest configs (0: none) and heuristics'
    pick are re-timed head to head over ``final_rounds`` rounds to pick the winner. Timing: ``warmup``,
    ``repeats``, ``buffer_sets`` (inputs rotated), ``cold`` (L2 flushed), ``cuda_graph`` (replayed inside a CUDA
    graph). ``buffers``
    ({uid or tensor: device buffer}) replaces the random inputs (outputs are still poisoned first).
    ``fusion``: True/"all" reads the kernel names of every config run, "best" only the best's, False none.
    ``progress(done, total, text)`` is called as configs finish.
    """
    ex_ = _Explorer(graph, handle=handle, device_profile=device_profile, modes=modes, time=time, sweep=sweep,
                    max_workspace=max_workspace, sm_count_target=sm_count_target, max_configs=max_configs,
                    engines=engines, sweep_seeds=sweep_seeds, pair_seeds=pair_seeds, knob_values=knob_values,
                    sweep_budget_s=sweep_budget_s, compile_budget_s=compile_budget_s, finalists=finalists,
                    final_rounds=final_rounds, warmup=warmup, repeats=repeats, buffer_sets=buffer_sets, cold=cold,
                    cuda_graph=cuda_graph, buffers=buffers, fusion=fusion, progress=progress, name=name, args=args,
                    kwargs=kwargs, keep_plans=False)
    try:
        return ex_.run()
    finally:
        ex_.close()


def autotune(graph, handle=None, *, cache=None, device_profile=None, store=True, **explore_kwargs):
    """The fastest correct config for ``graph`` on ``handle``'s GPU, built: ``(plan, exploration)``.

    With ``cache`` (a ``PlanCache``, a path, or True for the default cache) a stored plan for this graph,
    device and cuDNN version is loaded instead (``exploration`` is then None: the hit costs only the plan's
    deserialization), and a new winner is stored (unless ``store=False``). Offline (``device_profile=`` or no
    GPU) nothing can be timed, so the plan is heuristics' first working config, and it is not cached.
    Raises NoWorkingPlanError when no config ran correctly.
    """
    if cache is True:
        cache = PlanCache()
    elif cache is not None and not isinstance(cache, PlanCache):
        cache = PlanCache(cache)
    subject = None
    if handle is None and device_profile is None and _device.gpu_available():
        handle = Handle()  # the plan returned keeps it alive
    if cache is not None and device_profile is None:
        subject = graphs.resolve(graph, handle=handle, args=explore_kwargs.get("args", ()),
                                 kwargs=explore_kwargs.get("kwargs"), name=explore_kwargs.get("name"))
        hit = cache.get(subject, handle=handle) if handle is not None else None
        if hit is not None:
            return hit, None
    ex_ = _Explorer(subject if subject is not None else graph, handle=handle, device_profile=device_profile,
                    keep_plans=True, **_explore_defaults(explore_kwargs))
    try:
        ex = ex_.run()
        if not ex_.timed:
            ranked = [k for k in ex_.ordered_keys() if k in ex_.plans]
            if not ranked:
                raise NoWorkingPlanError(f"autotune: no config built a plan for {ex.name!r} offline", None)
            return ex_.plans.pop(ranked[0]), ex
        key = ex_.best_key()
        if key is None:
            reasons = sorted({r.reason for r in ex.results if r.reason})[:4]
            raise NoWorkingPlanError(f"autotune: no config of {ex.name!r} ran correctly: {ex.counts()}; "
                                     f"{'; '.join(reasons) or 'no reason given'}", None)
        plan = ex_.plans.pop(key)
        if cache is not None and store:
            best = ex_.results[key]
            cache.put(ex_.subject, plan, time_us=best.time_us, name=ex.name, source=best.label,
                      headroom=ex.headroom)
        return plan, ex
    finally:
        ex_.close()


def _explore_defaults(kwargs) -> dict:
    d = dict(modes=("A", "B"), time=None, sweep=False, max_workspace=None, sm_count_target=None, max_configs=None,
             engines=False, sweep_seeds=3, pair_seeds=2, knob_values=32, sweep_budget_s=4.0, compile_budget_s=30.0,
             finalists=4, final_rounds=3, warmup=10, repeats=20, buffer_sets=4, cold=False, cuda_graph=False,
             buffers=None, fusion="best", progress=None, name=None, args=(), kwargs=None)
    unknown = set(kwargs) - set(d)
    if unknown:
        raise TypeError(f"autotune: unexpected keyword argument(s) {', '.join(sorted(unknown))}")
    d.update(kwargs)
    return d

