"""Sweeps: many graphs explored, tuned or benchmarked, spread over every GPU of a host or a Ray cluster.

A ``Task`` names one graph by an importable builder reference and its arguments (``Task("cudnn_backend.patterns:
conv_fwd", {"n": 32})``, a catalogue pattern name, or ``"file.py:func"``), so it pickles and can be rebuilt in
another process or on another machine. ``sweep(tasks, job="tune")`` runs them and returns a ``SweepResult``:
one ``TaskResult`` per task, in the order given. A failing task never stops the sweep; its result says what
failed and why (a worker process that dies is reported the same way, and replaced).

Executors:

* ``"serial"``: one after another, here;
* ``"processes"``: one spawned process per GPU (``gpus="all"`` or a count), each pinned to its GPU with
  ``CUDA_VISIBLE_DEVICES``, pulling tasks from one queue so that a slow task does not hold the others back;
  without a GPU, ``workers`` CPU processes build heuristics and plans offline;
* ``"ray"``: one Ray task per graph with ``num_gpus=1`` (``num_gpus=0`` offline), on a local ``ray.init()``
  or an existing cluster's ``ray_address``. Ray is an optional extra (``pip install 'cudnn-backend[ray]'``).

Every winner of a ``tune`` (and of a timed ``explore``) lands in the persistent plan cache (``cache``; sqlite in
WAL mode, so workers write concurrently).
"""
from __future__ import annotations

import ast
import multiprocessing
import multiprocessing.connection
import os
import queue as _queue
import threading
import time
import traceback
from dataclasses import dataclass, field

from cudnn_backend.core import device as _device
from cudnn_backend.core._descriptor import Handle, as_int
from cudnn_backend.errors import MissingDependencyError, SweepError
from cudnn_backend.patterns.presets import preset
from cudnn_backend.runtime.engines import short_name
from cudnn_backend.tune import graphs, inputs
from cudnn_backend.tune.benchmark import bench
from cudnn_backend.tune.cache import PlanCache
from cudnn_backend.tune.explorer import run_search
from cudnn_backend.tune.options import as_options
from cudnn_backend.tune.results import Exploration, config_words, knob_words, plain_table

__all__ = ["Task", "TaskResult", "SweepResult", "sweep", "run_task", "dispatch_order", "tasks_from_preset",
           "tasks_from_file", "JOBS", "EXECUTORS", "ORDERS"]

JOBS = ("explore", "tune", "bench")
EXECUTORS = ("serial", "processes", "ray")
ORDERS = ("largest", "given")


@dataclass(frozen=True)
class Task:
    """One graph of a sweep: ``builder`` (a catalogue pattern name, "module:function" or "file.py:function"),
    its keyword arguments and a label."""

    builder: str
    kwargs: dict = field(default_factory=dict)
    label: str = ""

    def __post_init__(self):
        if not isinstance(self.builder, str) or not self.builder:
            raise TypeError(f"builder: expected a pattern name or 'module:function', not {self.builder!r}")
        if not isinstance(self.kwargs, dict):
            raise TypeError(f"kwargs: expected a dict, not {type(self.kwargs).__name__}")

    @property
    def name(self) -> str:
        return self.label or (self.builder + (" " + " ".join(f"{k}={v}" for k, v in self.kwargs.items())
                                              if self.kwargs else ""))

    def __hash__(self):
        return hash((self.builder, tuple(sorted(self.kwargs.items(), key=str)), self.label))


@dataclass
class TaskResult:
    """What one task gave: ``ok``; on failure ``error`` (type and message) and ``traceback``; the
    ``exploration`` (explore, tune), the ``bench`` report (bench); the ``winner`` ({engine_index, knobs,
    time_us}) and whether it came from or went to the plan cache; the ``worker``, ``seconds`` it took, and when
    it ``started`` (seconds after the sweep began; None where the executor cannot tell: Ray)."""

    task: Task
    ok: bool
    error: str = ""
    traceback: str = ""
    exploration: Exploration | None = None
    bench: dict | None = None
    winner: dict | None = None
    cached: str = ""  # "hit" (tune found it in the cache), "stored", ""
    worker: str = ""
    seconds: float = 0.0
    started: float | None = None

    def row(self) -> dict:
        ex = self.exploration
        w = self.winner or {}
        return {
            "graph": self.task.name, "ok": "yes" if self.ok else "FAILED",
            "configs": "-" if ex is None else len(ex.results),
            "winner": "-" if not w else config_words(w.get("engine_index"), w.get("knobs") or {}),
            "time us": "-" if w.get("time_us") is None else f"{w['time_us']:.2f}",
            "headroom": "-" if ex is None or ex.headroom is None else f"{ex.headroom:.3f}",
            "cache": self.cached or "-", "worker": self.worker, "s": f"{self.seconds:.1f}",
            "error": self.error[:80],
        }


@dataclass
class SweepResult:
    """The results of a sweep, in task order, and how it ran."""

    job: str
    executor: str
    workers: int
    results: list
    wall_seconds: float
    offline: bool

    @property
    def failures(self) -> list:
        return [r for r in self.results if not r.ok]

    def table(self) -> str:
        return plain_table([r.row() for r in self.results])

    def winners(self) -> dict:
        """{task name: winner dict} of the tasks that have one."""
        return {r.task.name: r.winner for r in self.results if r.winner}

    def __iter__(self):
        return iter(self.results)

    def __len__(self):
        return len(self.results)


# ---------------------------------------------------------------------------------------------
# one task, anywhere
# ---------------------------------------------------------------------------------------------
def _winner_of(ex: Exploration) -> dict | None:
    best = ex.chosen  # offline: heuristics' first config that built a plan
    if best is None:
        return None
    return {"engine_index": best.engine_index, "knobs": dict(best.knobs), "knobs_text": knob_words(best.knobs),
            "time_us": best.time_us, "rel_error": best.rel_error, "source": best.label}


def _winner_of_plan(plan) -> dict:
    knobs = {short_name(k): v for k, v in plan.knobs.items()}
    return {"engine_index": plan.engine_index, "knobs": knobs,
            "knobs_text": knob_words(knobs), "time_us": None, "source": "plan cache"}


def run_task(task: Task, job: str = "explore", options: dict | None = None, worker: str = "") -> TaskResult:
    """Run one task here and return its result; every exception becomes a failed result (KeyboardInterrupt and
    SystemExit still propagate). ``options``: ``cache`` (a path), ``device_profile``, and for explore and tune the
    ``TuneOptions`` fields (for bench, bench's keyword arguments)."""
    options = dict(options or {})
    t0 = time.perf_counter()
    result = TaskResult(task, False, worker=worker or f"pid {os.getpid()}")
    try:
        cache_path = options.pop("cache", None)
        cache = PlanCache(cache_path) if cache_path is not None else None
        device_profile = options.pop("device_profile", None)
        offline = device_profile is not None or not _device.gpu_available()
        if job in ("explore", "tune"):
            tune_options = as_options(options.pop("options", None), "sweep", **options)
            handle = None if offline else Handle()
            try:
                # explore: always searches, stores its winner when given a cache; tune: a cache hit, or a search
                # whose winner is stored (autotune's path, and like autotune it fails when no config works)
                outcome = run_search(task.builder, handle, job="sweep" if job == "explore" else "autotune",
                                     options=tune_options, device_profile=device_profile, cache=cache,
                                     lookup=job == "tune", store=True, want_plan=job == "tune", args=(),
                                     kwargs=dict(task.kwargs), name=task.name)
                if outcome.plan is not None:
                    if outcome.cached == "hit":
                        result.winner = _winner_of_plan(outcome.plan)
                    outcome.plan.close()
            finally:
                if handle is not None:
                    handle.close()
            result.exploration, result.cached = outcome.exploration, outcome.cached
            if outcome.exploration is not None:
                result.winner = _winner_of(outcome.exploration)
        elif job == "bench":
            if offline:
                raise SweepError("bench needs a GPU: it runs the plan")
            report = bench(task.builder, kwargs=dict(task.kwargs), name=task.name, cache=cache, **options)
            result.bench = report.to_dict()
        else:
            raise ValueError(f"job: {job!r} is not one of {', '.join(JOBS)}")
        result.ok = True
    except (KeyboardInterrupt, SystemExit):
        raise
    except BaseException as e:  # noqa: BLE001 - one failing task never stops the sweep
        result.error = graphs.user_error_line(e)  # where in the user's graph file, when it raised there
        result.traceback = traceback.format_exc(limit=12)
    result.seconds = time.perf_counter() - t0
    return result


# ---------------------------------------------------------------------------------------------
# tasks
# ---------------------------------------------------------------------------------------------
def tasks_from_preset(name: str) -> list:
    """The Tasks of a preset (``patterns.presets``: resnet50, resnet50_b32, resnet50_b1, fused, user)."""
    return [Task(builder, dict(kwargs), label) for label, builder, kwargs in preset(name)]


def tasks_from_file(path) -> list:
    """Tasks from a text file: one per line, ``BUILDER [key=value ...]`` (values parsed as Python literals);
    blank lines and ``#`` comments skipped."""
    tasks = []
    with open(path, encoding="utf-8") as f:
        for lineno, line in enumerate(f, 1):
            line = line.split("#", 1)[0].strip()
            if not line:
                continue
            builder, *pairs = line.split()
            kwargs = {}
            for pair in pairs:
                key, sep, value = pair.partition("=")
                if not sep or not key.isidentifier():
                    raise ValueError(f"{path}:{lineno}: {pair!r} is not key=value")
                try:
                    kwargs[key] = ast.literal_eval(value)
                except (ValueError, SyntaxError):
                    kwargs[key] = value
            tasks.append(Task(builder, kwargs))
    return tasks


def _as_tasks(tasks) -> list:
    if isinstance(tasks, str):
        try:
            return tasks_from_preset(tasks)
        except ValueError:
            return [Task(tasks)]
    out = []
    for t in tasks:
        if isinstance(t, Task):
            out.append(t)
        elif isinstance(t, str):
            out.append(Task(t))
        elif isinstance(t, (tuple, list)) and len(t) in (2, 3):
            out.append(Task(t[0], dict(t[1]), t[2] if len(t) == 3 else "") if isinstance(t[1], dict)
                       else Task(t[1], dict(t[2]), t[0]))
        else:
            raise TypeError(f"tasks: expected Tasks, builder names or (builder, kwargs) pairs, not {t!r}")
    if not out:
        raise SweepError("sweep: no tasks given")
    return out


# ---------------------------------------------------------------------------------------------
# executors
# ---------------------------------------------------------------------------------------------
def _gpu_count(gpus) -> int:
    have = _device.gpu_count()
    if gpus is None or gpus == "all":
        return have
    n = as_int(gpus, "gpus", 1)
    if n > have:
        raise SweepError(f"gpus: {n} asked for, {have} visible")
    return n


def dispatch_order(tasks, order="largest") -> list:
    """The indices of ``tasks`` in the order a parallel executor hands them out.

    ``"largest"``: largest estimated work first (``graphs.work_estimate``), so the last tasks, which leave
    workers idle while one finishes, are small ones; tasks whose size is unknown go first (they could be
    anything), ties keep the order given. ``"given"``: as given."""
    if order == "given":
        return list(range(len(tasks)))
    if order != "largest":
        raise ValueError(f"order: {order!r} is not one of {', '.join(ORDERS)}")
    sizes = [graphs.work_estimate(t.builder, t.kwargs) for t in tasks]
    return sorted(range(len(tasks)), key=lambda i: (sizes[i] is not None, -(sizes[i] or 0.0), i))


def sweep(tasks, *, job="explore", executor="serial", gpus="all", workers=None, ray_address=None,
          device_profile=None, cache=None, progress=None, order="largest", options=None, **option_kwargs
          ) -> SweepResult:
    """Run ``tasks`` (Tasks, builder names, a preset name) through ``job`` ("explore", "tune", "bench") with
    ``executor`` ("serial", "processes", "ray"); see the module's notes. ``device_profile`` (or no GPU here)
    makes it an offline sweep: heuristics and plans, spread over ``workers`` CPU processes or Ray workers.
    ``cache`` (a PlanCache, a path, or None: the default cache for tune, none for explore) receives the
    winners. ``order`` ("largest", "given"): the order the parallel executors hand tasks out in
    (``dispatch_order``); results always come back in the order given. ``options`` (a ``TuneOptions``) and option
    keywords go to each explore / autotune, checked here before any task starts (for bench: bench's keyword
    arguments). ``progress(done, total, result)`` is called as tasks finish."""
    tasks = _as_tasks(tasks)
    if job not in JOBS:
        raise ValueError(f"job: {job!r} is not one of {', '.join(JOBS)}")
    if executor not in EXECUTORS:
        raise ValueError(f"executor: {executor!r} is not one of {', '.join(EXECUTORS)}")
    if order not in ORDERS:
        raise ValueError(f"order: {order!r} is not one of {', '.join(ORDERS)}")
    if isinstance(device_profile, (str, os.PathLike)):
        device_profile = graphs.device_profile(device_profile)  # checked here, shipped as data
    offline = device_profile is not None or not _device.gpu_available()
    if cache is None and job == "tune" and not offline:
        cache = PlanCache()
    cache_path = str(cache.path) if isinstance(cache, PlanCache) else (None if cache is None else os.fspath(cache))
    if job == "bench":
        if options is not None:
            raise TypeError("options: bench takes its own keyword arguments (iterations, repeats, warmup), not "
                            "TuneOptions")
        opts = dict(option_kwargs)
    else:  # checked once here, shipped as plain fields
        opts = as_options(options, "sweep", **option_kwargs).as_kwargs()
    opts["cache"] = cache_path
    if device_profile is not None:
        opts["device_profile"] = device_profile
    t0 = time.perf_counter()
    if executor == "serial":
        n_workers = 1
        results = []
        for i, t in enumerate(tasks):
            started = time.perf_counter() - t0
            r = run_task(t, job, opts, worker="serial")
            r.started = started
            results.append(r)
            if progress is not None:
                progress(i + 1, len(tasks), r)
    elif executor == "processes":
        if offline:
            n_workers = as_int(workers, "workers", 1) if workers is not None else max(1, min(len(tasks),
                                                                                         os.cpu_count() or 1))
            pins = [None] * n_workers
        else:
            n_workers = _gpu_count(gpus)
            if n_workers < 1:
                raise SweepError("executor 'processes': no GPU visible")
            visible = os.environ.get("CUDA_VISIBLE_DEVICES")
            ids = [s.strip() for s in visible.split(",")] if visible else [str(i) for i in range(n_workers)]
            pins = ids[:n_workers]
        results = _run_processes(tasks, order, job, opts, pins, progress, t0)
    else:
        results, n_workers = _run_ray(tasks, dispatch_order(tasks, order), job, opts, offline, ray_address, workers,
                                      progress)
    return SweepResult(job, executor, n_workers, results, time.perf_counter() - t0, offline)


def _worker_main(worker_id, pin, job, options, task_queue, result_queue, runner=None):
    """A spawned worker: pinned to one GPU (set before anything touches CUDA), runs tasks until the sentinel
    (through ``runner(task, job, options, worker=...)``, a module-level function; default ``run_task``)."""
    if pin is not None:
        os.environ["CUDA_VISIBLE_DEVICES"] = pin
        if job != "explore" or options.get("time") is not False:  # cuda.core and the context meet cuDNN's first work
            threading.Thread(target=inputs.warm_up, name="CUDA warm-up", daemon=True).start()
    label = f"gpu {pin}" if pin is not None else f"cpu worker {worker_id}"
    while True:
        item = task_queue.get()
        if item is None:
            return
        index, task = item
        result_queue.put(("start", worker_id, index))
        result = (runner or run_task)(task, job, options, worker=label)
        result_queue.put(("done", worker_id, index, result))


def _run_processes(tasks, order, job, options, pins, progress, t0, runner=None) -> list:
    ctx = multiprocessing.get_context("spawn")
    task_queue, result_queue = ctx.Queue(), ctx.Queue()
    procs, running = {}, {}

    def start(worker_id):
        pin = pins[worker_id]
        saved = os.environ.get("CUDA_VISIBLE_DEVICES")
        if pin is not None:  # the child inherits the environment at start: pinned before it imports anything
            os.environ["CUDA_VISIBLE_DEVICES"] = pin
        try:
            p = ctx.Process(target=_worker_main, args=(worker_id, pin, job, options, task_queue, result_queue,
                                                       runner), daemon=True)
            p.start()
        finally:
            if pin is not None:
                if saved is None:
                    os.environ.pop("CUDA_VISIBLE_DEVICES", None)
                else:
                    os.environ["CUDA_VISIBLE_DEVICES"] = saved
        procs[worker_id] = p

    results: list = [None] * len(tasks)
    done = 0
    restarts_left = len(tasks) + len(pins)  # a worker dying on every start must not loop forever
    # A worker that dies right after taking a task may never have sent its "start" (queues write from a thread):
    # then nobody knows that task. Once such a death was seen and nothing is queued, running or reported for a
    # while, the tasks still missing were taken by it: each is queued once more, then failed.
    unknown_deaths, quiet, requeued = 0, 0, set()
    try:
        for w in range(len(pins)):
            start(w)
        for i in dispatch_order(tasks, order):  # while the workers start (they take seconds)
            task_queue.put((i, tasks[i]))
        while done < len(tasks):
            try:
                msg = result_queue.get(timeout=0.5)
            except _queue.Empty:
                msg = None
            if msg is not None:
                quiet = 0
                if msg[0] == "start":
                    running[msg[1]] = (msg[2], time.perf_counter())
                else:
                    _, w, index, result = msg
                    started = running.pop(w, (None, None))[1]
                    result.started = None if started is None else started - t0
                    if results[index] is None:
                        results[index] = result
                        done += 1
                        if progress is not None:
                            progress(done, len(tasks), result)
                continue
            for w, p in list(procs.items()):
                if p.is_alive():
                    continue
                # a worker died (a crash in native code): its task fails, a fresh worker takes its place
                if w in running:
                    index, started = running.pop(w)
                    if results[index] is None:
                        results[index] = TaskResult(tasks[index], False, error=f"worker process died "
                                                    f"(exit code {p.exitcode}) while running this task",
                                                    worker=f"gpu {pins[w]}" if pins[w] else f"cpu worker {w}",
                                                    seconds=time.perf_counter() - started, started=started - t0)
                        done += 1
                        if progress is not None:
                            progress(done, len(tasks), results[index])
                else:
                    unknown_deaths += 1
                if done < len(tasks):
                    if restarts_left <= 0:
                        why = (f"worker processes keep dying (last exit code {p.exitcode}); if you called sweep() from "
                               "a script, guard it with `if __name__ == '__main__':` (spawned workers import it)")
                        for i, r in enumerate(results):
                            if r is None:
                                results[i] = TaskResult(tasks[i], False, error=why, worker="none")
                                done += 1
                        break
                    restarts_left -= 1
                    start(w)
            busy = {index for index, _ in running.values()}
            missing = [i for i, r in enumerate(results) if r is None and i not in busy]
            quiet = quiet + 1 if unknown_deaths and missing and task_queue.empty() else 0
            if quiet >= 4:
                for i in missing:
                    if i in requeued:
                        results[i] = TaskResult(tasks[i], False, error="a worker process died after taking this "
                                                "task, twice, before reporting it (a crash in native code)",
                                                worker="unknown")
                        done += 1
                        if progress is not None:
                            progress(done, len(tasks), results[i])
                    else:
                        requeued.add(i)
                        task_queue.put((i, tasks[i]))
                unknown_deaths, quiet = 0, 0
    finally:
        for _ in procs:
            task_queue.put(None)
        task_queue.cancel_join_thread()
        # every result is in: the workers' exits (CUDA contexts torn down) need not hold the caller up
        reaper = threading.Thread(target=_reap, args=(list(procs.values()),), name="sweep worker reaper", daemon=True)
        reaper.start()
        if done < len(tasks):  # interrupted: the workers are gone before the caller goes on
            reaper.join()
    return results


def _reap(procs):
    """Wait for the workers to exit; terminate those still running after 10 s. A worker's sentinel, not its
    exit code, says whether it is gone (another thread may have collected the exit code first)."""
    deadline = time.monotonic() + 10
    for p in procs:
        if not multiprocessing.connection.wait([p.sentinel], max(0.0, deadline - time.monotonic())):
            p.terminate()
        p.join(timeout=5)


def _ray_module():
    try:
        import ray
    except ImportError as e:
        raise MissingDependencyError("ray", "the Ray executor", "ray") from e
    return ray


def _run_ray(tasks, dispatch, job, options, offline, address, workers, progress):
    ray = _ray_module()
    if not ray.is_initialized():
        kwargs = {"address": address} if address else {}
        if not address and workers is not None:
            kwargs["num_cpus"] = as_int(workers, "workers", 1)
        kwargs.setdefault("ignore_reinit_error", True)
        kwargs.setdefault("log_to_driver", False)
        ray.init(**kwargs)
    remote = ray.remote(num_gpus=0 if offline else 1, num_cpus=1, max_retries=0)(run_task)
    refs = [remote.remote(tasks[i], job, options, f"ray task {i}") for i in dispatch]  # Ray starts them in turn
    index_of = {ref: i for ref, i in zip(refs, dispatch)}
    results: list = [None] * len(tasks)
    pending = list(refs)
    done = 0
    while pending:
        ready, pending = ray.wait(pending, num_returns=1)
        for ref in ready:
            i = index_of[ref]
            try:
                results[i] = ray.get(ref)
            except Exception as e:  # noqa: BLE001 - a dead Ray worker fails its task only
                results[i] = TaskResult(tasks[i], False, error=f"Ray task failed: {type(e).__name__}: {e}"[:2000],
                                        worker="ray")
            done += 1
            if progress is not None:
                progress(done, len(tasks), results[i])
    resources = ray.cluster_resources()
    n = int(resources.get("CPU" if offline else "GPU", 0) or 0)
    return results, n

