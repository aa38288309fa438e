"""The work a search asks for, one candidate at a time: build its plan, run it, check its outputs, time it.

``Evaluator`` works offline (plans built against a device profile, or on the GPU with ``time=False``; nothing
run); ``GpuEvaluator`` runs on the GPU: random inputs in buffer sets (``inputs``), outputs poisoned then checked
against the fp64 reference or the majority (``checking``), CUDA-event timing (``timing.Timer``) at the ``Level``
the search asks for, and head-to-head rounds. A test injects timings by overriding ``screen``, ``check``,
``retime`` and ``head_to_head`` (the search decides from the ``ConfigResult``s they fill in).

``PlanBuilder`` builds plans. Runtime-compiled ones (tens to hundreds of milliseconds of NVRTC each) are built
ahead in threads while the calling thread times others: cuDNN finalizes a plan with the GIL released
(``core._descriptor``: ``cudnnBackendFinalize`` runs ``with nogil`` for execution plans), and each thread uses
its own cuDNN handle on the same device (a handle is not to be used by two threads at once). A plan built there
keeps that handle; it runs with any handle of the device. The time spent compiling is summed over the threads
and capped by ``compile_budget_s``.

While a search records its findings (``errata_out``), ``inflight`` (a ``findings.InFlight``) names the configs
being built or run at each moment, so that a crash of the process is attributed to its config.
"""
from __future__ import annotations

import collections
import contextlib
import math
import threading
import time as _time
from concurrent.futures import ThreadPoolExecutor

import numpy as np

from cudnn_backend.core._handle import Handle
from cudnn_backend.errors import CudaError, CudnnBackendError, MissingDependencyError
from cudnn_backend.runtime import engines as _engines
from cudnn_backend.runtime import memory
from cudnn_backend.runtime import plans as _plans
from cudnn_backend.runtime.execution import VariantPack, captured_kernels, execute
from cudnn_backend.tune import checking, inputs, results
from cudnn_backend.tune.timing import Timer

__all__ = ["Evaluator", "GpuEvaluator", "PlanBuilder", "IDLE_S", "WAKE_US"]

IDLE_S = 0.02  # the GPU idle this long before a timing: it warms up for WAKE_US first (``GpuEvaluator._timing``)
WAKE_US = 2000.0


class PlanBuilder:
    """Builds plans for a search; runtime-compiled ones ahead in ``threads`` threads (see the module's notes)."""

    def __init__(self, *, handle, deviceprop, threads, compile_budget_s):
        self.handle, self.deviceprop = handle, deviceprop
        self.threads = int(threads)
        self.budget = compile_budget_s
        self.spent = 0.0  # seconds of runtime compilation, summed over threads
        self.built = 0
        self.parallel = 0  # plans built in a thread
        self._queue = collections.deque()  # (key, config) waiting to be handed to a thread
        self._futures: dict = {}
        self._pool = None
        self._local = threading.local()
        self.inflight = None  # findings.InFlight while findings are recorded
        self._ordinal = None
        if handle is not None and self.threads:
            self._ordinal = handle.device if handle.device is not None else memory.current_device_ordinal()

    @property
    def budget_spent(self) -> bool:
        return self.budget is not None and self.spent > self.budget

    def _thread_handle(self):
        if self.handle is None:
            return None
        h = getattr(self._local, "handle", None)
        if h is None:
            h = self._local.handle = Handle(device=self._ordinal)
        return h

    def _build(self, config, handle):
        t0 = _time.perf_counter()
        record = self.inflight.attempt([config], "plan build") if self.inflight is not None else \
            contextlib.nullcontext()
        try:
            with record:
                plan = _plans.build_plan(config, handle=handle, device_profile=self.deviceprop)
        except CudnnBackendError as e:
            return None, e, _time.perf_counter() - t0
        return plan, None, _time.perf_counter() - t0

    def _in_thread(self, config):
        return self._build(config, self._thread_handle())

    def prefetch(self, items):
        """Start building these (key, config) of runtime-compiled configs ahead, in order, a few at a time."""
        if not self.threads:
            return
        self._queue.extend((k, c) for k, c in items if k not in self._futures)
        self._top_up()

    def _top_up(self):
        if self._pool is None and self._queue:
            self._pool = ThreadPoolExecutor(self.threads, thread_name_prefix="cudnn-backend plan build")
        while self._queue and len(self._futures) < 2 * self.threads and not self.budget_spent:
            key, config = self._queue.popleft()
            if key not in self._futures:
                self._futures[key] = self._pool.submit(self._in_thread, config)

    def build(self, key, config, runtime_compiled):
        """(plan or None, cuDNN's error or None, seconds) for ``config``; (None, None, 0.0) when the compilation
        budget is spent before it was built."""
        future = self._futures.pop(key, None)
        if future is not None:
            plan, error, seconds = future.result()
            self.parallel += 1
        else:
            self._queue = collections.deque((k, c) for k, c in self._queue if k != key)
            if runtime_compiled and self.budget_spent:
                return None, None, 0.0
            plan, error, seconds = self._build(config, self.handle)
        if runtime_compiled:
            self.spent += seconds
        self.built += 1
        self._top_up()
        return plan, error, seconds

    def cancel(self, keys):
        """Builds no longer needed: not started, or their plans closed when done."""
        keys = set(keys)
        self._queue = collections.deque((k, c) for k, c in self._queue if k not in keys)
        for key in keys:
            future = self._futures.pop(key, None)
            if future is not None and not future.cancel():
                future.add_done_callback(_close_built)

    def close(self):
        self._queue.clear()
        self.cancel(list(self._futures))
        if self._pool is not None:
            self._pool.shutdown(wait=True)
            self._pool = None


def _close_built(future):
    plan = future.result()[0]
    if plan is not None:
        plan.close()


class Evaluator:
    """Builds each candidate's plan and times nothing (offline). ``plans`` holds the plans kept: all of them with
    ``keep_plans``, else those the search still needs (``hold``), until ``release``/``close``."""

    timed = False

    def __init__(self, *, handle, deviceprop, options, keep_plans=False):
        self.handle, self.deviceprop, self.options = handle, deviceprop, options
        self.keep_plans = keep_plans
        self.hold = keep_plans
        self.plans: dict = {}
        budget = None if options.deterministic else options.compile_budget_s
        self.builder = PlanBuilder(handle=handle, deviceprop=deviceprop, threads=options.threads,
                                   compile_budget_s=budget)

    @property
    def inflight(self):
        """The ``findings.InFlight`` record of the configs being built or run (None: none kept)."""
        return self.builder.inflight

    @inflight.setter
    def inflight(self, record):
        self.builder.inflight = record

    def attempt(self, search, keys, stage):
        """A context naming ``keys``' configs in flight at ``stage`` (nothing when no record is kept)."""
        if self.builder.inflight is None:
            return contextlib.nullcontext()
        return self.builder.inflight.attempt([search.configs[k] for k in keys], stage)

    def start(self, search):
        """Before the first candidate is evaluated (a GPU evaluator makes its buffers and its check)."""

    def prefetch(self, search, keys):
        self.builder.prefetch([(k, search.configs[k]) for k in keys if search.results[k].runtime_compiled])

    def cancel(self, keys):
        self.builder.cancel(keys)

    def build(self, search, key):
        """The candidate's plan, or None with its result saying why (refused, workspace, budget)."""
        r, cfg = search.results[key], search.configs[key]
        limit = self.options.max_workspace
        if limit is not None:
            ws = cfg.workspace_size
            if ws is not None and ws > limit:
                self.builder.cancel([key])
                r.status, r.workspace_bytes = results.SKIPPED, ws
                r.reason = f"workspace {results.format_bytes(ws)} exceeds max_workspace {results.format_bytes(limit)}"
                return None
        with search.phase("build"):
            plan, error, seconds = self.builder.build(key, cfg, r.runtime_compiled)
        if plan is None and error is None:
            r.status = results.SKIPPED
            r.reason = f"runtime-compilation budget of {self.builder.budget:g} s spent"
            return None
        r.plan_seconds = seconds
        if error is not None:
            r.status, r.reason = results.PLAN_REFUSED, _engines.reason_of(error)
            return None
        r.plan_built = True
        r.workspace_bytes = int(plan.workspace_size)
        if limit is not None and r.workspace_bytes > limit:
            r.status = results.SKIPPED
            r.reason = f"workspace {results.format_bytes(r.workspace_bytes)} exceeds max_workspace"
            plan.close()
            return None
        return plan

    def keep(self, key, plan):
        if self.hold:
            self.plans[key] = plan
        else:
            plan.close()

    def plan_of(self, search, key):
        """(plan, owned): the kept plan, or one built again (owned: the caller closes it)."""
        plan = self.plans.get(key)
        if plan is not None:
            return plan, False
        return _plans.build_plan(search.configs[key], handle=self.handle, device_profile=self.deviceprop), True

    def screen(self, search, key, level, *, check=True):
        """Evaluate a new candidate: offline, build its plan."""
        plan = self.build(search, key)
        if plan is not None:
            search.results[key].status = results.PLAN_BUILT
            self.keep(key, plan)

    def check(self, search, key):
        """Check a candidate's outputs (nothing to do offline)."""

    def retime(self, search, key, level):
        """Time a candidate again at ``level`` (nothing to do offline)."""

    def head_to_head(self, search, keys, level, rounds) -> dict:
        """{key: [per-round median us]} of ``keys`` timed in interleaved rounds (offline: nothing)."""
        return {}

    def settle(self, search):
        """Decide correctness where it needs every config's answer (the majority)."""

    def kernels(self, search, key):
        """Read the kernel names of one config's plan (GPU only)."""

    def release(self, key):
        plan = self.plans.pop(key, None)
        if plan is not None:
            plan.close()

    def close(self):
        self.builder.close()
        for plan in self.plans.values():
            plan.close()
        self.plans.clear()


class GpuEvaluator(Evaluator):
    """Runs, checks and times candidates on the handle's GPU (see the module's notes)."""

    timed = True

    def __init__(self, subject, *, handle, deviceprop, options, keep_plans=False, buffers=None):
        super().__init__(handle=handle, deviceprop=deviceprop, options=options, keep_plans=keep_plans)
        self.subject = subject
        self.op_graph = subject.op_graph
        self.user_buffers = buffers
        self.timer = Timer(handle, warmup=options.warmup, repeats=options.repeats, cold=options.cold,
                           cuda_graph=options.cuda_graph)
        self.sets = None
        self.check_ = None
        self.groups = None
        self.discover = False
        self.output_uids = ()
        self.stream = 0
        self._workspace = None
        self._started = False
        self._last_timed = -math.inf  # perf_counter when the GPU last timed something (``_timing``)

    # -- buffers and the check -------------------------------------------------------------------------------------
    def start(self, search):
        if self._started:
            return
        self._started = True
        with search.phase("inputs"):
            self.timer.bind()  # the CUDA context and events, after heuristics (a sweep worker makes them meanwhile)
            self.stream = self.handle.stream
            level = search.screen_level
            # the inputs rotate over several sets only where a timing asks for it (the exhaustive pass, cold runs);
            # racing and the final round time on the first set, as a layer runs
            rotate = self.options.cold or (level is not None and level.rotate)
            n = self.options.buffer_sets if rotate else 1
            seed = self.options.seed
            if self.subject.plan is not None:  # a saved plan: tensors from its JSON, outputs found by running it
                self.sets = inputs.make_buffer_sets(None, n, seed=seed, user=self.user_buffers,
                                                    plan=self.subject.plan, stream=self.stream)
            else:
                self.sets = inputs.make_buffer_sets(self.op_graph, n, seed=seed, user=self.user_buffers,
                                                    stream=self.stream)
            first = self.sets[0]
            self.discover = not first.outputs_known
            self.output_uids = self._checkable(search, first.outputs)
            if self.discover:
                search.notes.append("outputs found by running the first config (the tensors it changed); the graph "
                                    "came from a saved plan, whose JSON does not say which tensors are written")
            elif not self.output_uids:
                search.notes.append("the graph writes no real tensor the explorer could check; configs are timed "
                                    "unchecked")
            else:
                self._choose_check(search)

    def _checkable(self, search, outputs) -> tuple:
        """The outputs the check compares, in UID order. One in a tiled layout (a dQ accumulator) cannot be read
        element by element: it is left out, and said so (the outputs computed from it are checked)."""
        specs = self.sets[0].specs or {}
        tiled = [specs[u] for u in sorted(outputs) if u in specs and specs[u].tiled]
        if tiled:
            search.notes.append("not checked: " + ", ".join(
                f"{t.name} (UID {t.uid}), stored in cuDNN's "
                f"{t.reordering.name.removeprefix('CUDNN_TENSOR_REORDERING_')} tiled layout" for t in tiled)
                + " (the outputs computed from it are)")
        return tuple(u for u in sorted(outputs) if not (u in specs and specs[u].tiled))

    def _choose_check(self, search):
        """The fp64 reference of the outputs on the first buffer set's inputs, or the majority (said why)."""
        first = self.sets[0]
        specs = first.specs
        op_graph = None if self.subject.plan is not None else self.op_graph
        self.check_ = checking.reference_check(op_graph, first.host, specs, self.output_uids,
                                               seed=self.options.seed)
        self.groups = checking.AnswerGroups({u: checking.agreement_tolerance(specs[u].data_type)
                                             for u in self.output_uids})
        search.exploration.check = self.check_.label
        uids = ", ".join(str(u) for u in self.output_uids)
        if self.check_.by_reference:
            search.notes.append(f"outputs (UID {uids}) checked against the {self.check_.method} of the graph, on "
                                "the first buffer set's inputs")
        else:
            search.notes.append(f"outputs (UID {uids}) checked against the majority of the configs that ran: "
                                f"{self.check_.reason}")

    @property
    def checks_every_config(self) -> bool:
        """The majority, or outputs yet to be found, need every config's outputs as it runs."""
        return self.discover or (self.check_ is not None and not self.check_.by_reference)

    def _found_outputs(self, search, before):
        first = self.sets[0]
        changed = {u for u, raw in before.items() if not np.array_equal(raw, first.raw(u, self.stream))}
        if not changed:
            return
        self.discover = False
        self.output_uids = self._checkable(search, changed)
        for i, s in enumerate(self.sets):
            s.outputs = set(changed)
            for u in changed:
                s.host.pop(u, None)
            if i:  # set 0 holds the result just computed, checked next
                s.poison(self.stream)
        self._choose_check(search)

    def _check_outputs(self, r, key):
        """Compare the first buffer set's outputs (just written) with the reference and the other configs."""
        if not self.output_uids or self.check_ is None:
            r.correct = None
            return
        first = self.sets[0]
        outs = {u: self.check_.values(first, u, self.stream) for u in self.output_uids}
        self.groups.add(key, outs)
        r.checked_by = self.check_.label
        if self.check_.by_reference:
            worst, ok = 0.0, True
            for u in self.output_uids:
                e = checking.relative_error(outs[u], self.check_.expected[u])
                worst = max(worst, e)
                if not e <= checking.tolerance(first.specs[u].data_type):
                    ok = False
            r.rel_error, r.correct = worst, ok

    def _run_and_check(self, search, key, plan, pack):
        with search.phase("check"):
            first = self.sets[0]
            before = None
            if self.discover:
                before = {u: first.raw(u, self.stream).copy() for u in first.ptrs}
            first.poison(self.stream)
            execute(self.handle, plan, pack)
            memory.synchronize(self.stream)
            if before is not None:
                self._found_outputs(search, before)
            self._check_outputs(search.results[key], key)

    def _settle_status(self, r):
        r.status = results.OK if r.correct is not False else results.WRONG
        if r.correct is False:
            r.reason = f"relative error {r.rel_error:.2e} against the {self.check_.method}"

    def settle(self, search):
        """Without a reference: the majority answer group is right; everyone else is wrong."""
        if self.check_ is None or self.check_.by_reference or self.groups is None or not self.groups.groups:
            return
        for key, r in search.results.items():
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

    # -- packs ----------------------------------------------------------------------------------------------------
    def _workspace_for(self, nbytes):
        """One workspace for every config, grown as needed (configs run one after another on one stream)."""
        if not nbytes:
            return 0
        if self._workspace is None or self._workspace.nbytes < nbytes:
            if self._workspace is not None:
                memory.synchronize(self.stream)
                self._workspace.close()
            self._workspace = memory.DeviceBuffer(nbytes)
        return self._workspace

    def _packs(self, plan, workspace, rotate):
        sets = self.sets if rotate else self.sets[:1]
        return [VariantPack(plan, s.by_uid, workspace) for s in sets]

    @staticmethod
    def _close(packs):
        for p in packs:
            p.close()

    def _timing(self, plan, packs, level):
        """``level``'s timing of ``plan``; after the GPU sat idle (heuristics, the knob search's generation, the
        checks) the warm-up lasts at least ``WAKE_US`` of GPU time, so the first candidates after a pause are not
        timed on a GPU still clocking up."""
        warmup_us = level.warmup_us
        if warmup_us and _time.perf_counter() - self._last_timed > IDLE_S:  # levels warming up by time (racing's)
            warmup_us = max(warmup_us, WAKE_US)
        try:
            return self.timer.time(plan, packs, warmup=level.warmup, repeats=level.repeats,
                                   target_sample_us=level.target_sample_us, warmup_us=warmup_us,
                                   lead_in=level.lead_in)
        finally:
            self._last_timed = _time.perf_counter()

    def _time(self, search, plan, packs, level):
        with search.phase("time"):
            return self._timing(plan, packs, level)

    # -- the work ------------------------------------------------------------------------------------------------
    def screen(self, search, key, level, *, check=True):
        plan = self.build(search, key)
        if plan is None:
            return
        r = search.results[key]
        check = check or self.checks_every_config
        packs = []
        try:
            with self.attempt(search, [key], "run"):
                self._screen_run(search, key, plan, packs, level, check)
        except (CudnnBackendError, RuntimeError, ValueError) as e:
            r.status, r.reason = results.EXECUTE_FAILED, _engines.reason_of(e)
            self._close(packs)
            plan.close()
            return
        self._close(packs)
        if check or self.check_ is None:
            self._settle_status(r)
        else:
            r.status = results.TIMED
        self.keep(key, plan)

    def _screen_run(self, search, key, plan, packs, level, check):
        """Run (and with ``check`` check) a new candidate, time it at ``level``; ``packs`` (a list) receives the
        variant packs made, which the caller closes whatever happens."""
        r = search.results[key]
        packs += self._packs(plan, self._workspace_for(r.workspace_bytes), level.rotate or self.options.cold)
        if check:
            self._run_and_check(search, key, plan, packs[0])
        timing = self._time(search, plan, packs, level)
        r.time_us, r.min_us, r.max_us = timing.median_us, timing.min_us, timing.max_us
        if self.options.fusion in (True, "all"):
            with search.phase("kernels"):
                self._read_kernels(r, plan, packs[0])

    def _on_plan(self, search, key, rotate, work):
        """(``work(plan, packs)``, True) on the candidate's plan (kept, or built again) and packs; a failure marks
        the candidate execute failed: (None, False)."""
        r = search.results[key]
        packs, owned = [], None
        try:
            with self.attempt(search, [key], "run"):
                plan, own = self.plan_of(search, key)
                owned = plan if own else None
                packs = self._packs(plan, self._workspace_for(r.workspace_bytes), rotate)
                return work(plan, packs), True
        except (CudnnBackendError, RuntimeError, ValueError) as e:
            r.status, r.reason = results.EXECUTE_FAILED, _engines.reason_of(e)
            return None, False
        finally:
            self._close(packs)
            if owned is not None:
                owned.close()

    def check(self, search, key):
        _, ok = self._on_plan(search, key, False, lambda plan, packs: self._run_and_check(search, key, plan,
                                                                                            packs[0]))
        if ok:
            self._settle_status(search.results[key])

    def retime(self, search, key, level):
        timing, ok = self._on_plan(search, key, level.rotate or self.options.cold,
                                   lambda plan, packs: self._time(search, plan, packs, level))
        if ok:
            r = search.results[key]
            r.time_us, r.min_us, r.max_us = timing.median_us, timing.min_us, timing.max_us

    def head_to_head(self, search, keys, level, rounds) -> dict:
        """Interleaved rounds, each round starting with another config; raises what cuDNN or CUDA raised."""
        owned, packs, samples = [], {}, {k: [] for k in keys}
        workspace = self._workspace_for(max(search.results[k].workspace_bytes or 0 for k in keys))
        try:
            for key in keys:
                plan, own = self.plan_of(search, key)
                if own:
                    owned.append(plan)
                packs[key] = (plan, self._packs(plan, workspace, level.rotate or self.options.cold))
            with search.phase("final"), self.attempt(search, keys, "final round"):
                for round_ in range(rounds):
                    shift = round_ % len(keys)
                    for key in keys[shift:] + keys[:shift]:
                        plan, key_packs = packs[key]
                        samples[key].append(self._timing(plan, key_packs, level).median_us)
        finally:
            for _, key_packs in packs.values():
                self._close(key_packs)
            for plan in owned:
                plan.close()
        return samples

    def _read_kernels(self, r, plan, pack):
        try:
            ks = captured_kernels(self.handle, plan, pack)
        except (CudaError, CudnnBackendError, MissingDependencyError) as e:
            r.kernels, r.kernel_count = None, None
            r.reason = r.reason or f"kernels not read: {e}"
            return
        r.kernels = [k.short_name for k in ks]
        r.kernel_count = len(ks)

    def kernels(self, search, key):
        r = search.results[key]
        plan, own, pack = None, False, None
        try:
            with search.phase("kernels"), self.attempt(search, [key], "kernels"):
                plan, own = self.plan_of(search, key)
                pack = VariantPack(plan, self.sets[0].by_uid)
                self._read_kernels(r, plan, pack)
        except CudnnBackendError as e:
            search.notes.append(f"kernels of the best config not read: {_engines.reason_of(e)}")
        finally:
            if pack is not None:
                pack.close()
            if plan is not None and own:
                plan.close()

    def close(self):
        super().close()
        if self.sets is not None:
            for s in self.sets:
                s.close()
            self.sets = None
        if self._workspace is not None:
            self._workspace.close()
            self._workspace = None
        self.timer.close()

