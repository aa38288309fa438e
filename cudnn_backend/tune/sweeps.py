"""Sweeps: many graphs explored, tuned or benchmarked, spread over every GPU of a host or a Ray cluster.

A ``Task`` names one graph by an importable builder reference and its arguments (``Task("cudnn_backend.patterns:
conv_fwd", {"n": 32})``, a catalogue pattern name, or ``"file.py:func"``), so it pickles and can be rebuilt in
another process or on another machine. ``sweep(tasks, job="tune")`` runs them and returns a ``SweepResult``:
one ``TaskResult`` per task, in the order given. A failing task never stops the sweep; its result says what
failed and why (a worker process that dies is reported the same way, and replaced).

Executors:

* ``"serial"``: one after another, here;
* ``"processes"``: a ``WorkerPool``, one spawned process per GPU (``gpus="all"`` or a count: 2, 4, 8 GPUs of a
  host alike), each pinned to its GPU with ``CUDA_VISIBLE_DEVICES``; without a GPU, ``workers`` CPU processes
  build heuristics and plans offline. The coordinator holds one queue of units, largest estimated work first, and
  an idle worker takes the next (no static share, so a slow graph does not hold the others back). When there are
  fewer graphs than workers, or one dominates, a graph's search is split (``split_plan``): its parts search shares
  of its candidates on several workers, then one worker merges them, re-timing the parts' fastest head to head
  (``strategies.Merge``). The pool stays warm for the next sweep of the session (``shared_pool``) and closes at
  exit; ``SweepResult.worker_reports`` says where each worker's time went (start, busy, idle, longest unit);
* ``"ray"``: one Ray task per graph with ``num_gpus=1`` (``num_gpus=0`` offline), on a local ``ray.init()``
  or an existing cluster's ``ray_address``. Ray comes with the ``ray`` extra (or ``pip install ray``).

Every winner of a ``tune`` (and of a timed ``explore``) lands in the persistent plan cache (``cache``; sqlite in
WAL mode, so workers write concurrently).
"""
from __future__ import annotations

import ast
import atexit
import collections
import contextlib
import multiprocessing
import multiprocessing.connection
import os
import pathlib
import pickle
import signal
import socket
import threading
import time
import traceback
from dataclasses import dataclass, field

from cudnn_backend.core import device as _device
from cudnn_backend.core._coerce import as_int
from cudnn_backend.core._handle import Handle
from cudnn_backend.core.files import read_bounded_text
from cudnn_backend.errors import MissingDependencyError, SweepError
from cudnn_backend.patterns import CATALOGUE
from cudnn_backend.patterns.presets import preset
from cudnn_backend.runtime.engines import short_name
from cudnn_backend.tune import findings, graphs, inputs
from cudnn_backend.tune.benchmark import bench
from cudnn_backend.tune.cache import PlanCache
from cudnn_backend.tune.explorer import run_search
from cudnn_backend.tune.options import ORDERS, RayAddress, SweepOptions, as_options, progress_callback
from cudnn_backend.tune.results import Exploration, config_words, knob_words, plain_table
from cudnn_backend.tune.search import part_options

__all__ = ["Task", "TaskResult", "SweepResult", "sweep", "run_task", "dispatch_order", "tasks_from_preset",
           "tasks_from_file", "JOBS", "EXECUTORS", "ORDERS", "WorkerPool", "WorkerReport", "Unit", "shared_pool",
           "close_pools", "split_plan", "search_costs", "plan_units", "cpu_workers", "check_ray_address",
           "task_sizes"]

# the thread pools of numpy's BLAS and OpenMP, sized per worker (WorkerPool._spawn) unless the user set them
THREAD_POOL_VARIABLES = ("OMP_NUM_THREADS", "OPENBLAS_NUM_THREADS", "MKL_NUM_THREADS", "NUMEXPR_NUM_THREADS")
JOBS = ("explore", "tune", "bench")
MAX_TASKS_FILE_BYTES = 16 << 20  # a line per graph: far below this
EXECUTORS = ("serial", "processes", "ray")
_SWEEP = SweepOptions()  # the defaults of sweep's own options


@dataclass(frozen=True)
class Task:
    """One graph of a sweep: ``builder`` (a catalogue pattern name, "module:function" or "file.py:function"),
    its keyword arguments and a label."""

    builder: str
    kwargs: dict = field(default_factory=dict)
    label: str = ""
    origin: str = field(default="", compare=False, repr=False)  # where it was listed ("FILE, line N"), for errors

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
    it ``started`` (seconds after the sweep began; None where the executor cannot tell: Ray); for a search split
    over workers, the ``pieces`` (each part and the merge: unit, worker, seconds, started, ok)."""

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
    pieces: list = field(default_factory=list)  # a split search: each part's and the merge's {unit, worker, ...}

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
    worker_reports: list = field(default_factory=list)  # a WorkerReport per worker (none from Ray)
    split: dict = field(default_factory=dict)  # {task name: parts} of the searches split over workers

    @property
    def failures(self) -> list:
        return [r for r in self.results if not r.ok]

    @property
    def longest(self) -> tuple:
        """(worker, unit label, seconds) of the longest unit any worker ran (None without worker reports)."""
        return max(((w.worker, *w.longest) for w in self.worker_reports if w.units), key=lambda x: x[2],
                   default=None)

    def accounting(self) -> str:
        """Where the workers' time went: per worker its start, units, busy and idle seconds and its longest unit,
        then the sweep's longest unit and the split searches."""
        if not self.worker_reports:
            return ""
        lines = [plain_table([w.row() for w in self.worker_reports])]
        idle = sum(w.idle_s for w in self.worker_reports)
        longest = self.longest
        lines.append(f"wall {self.wall_seconds:.2f} s; workers idle {idle:.2f} s in all"
                     + (f"; longest unit: {longest[1]} on {longest[0]}, {longest[2]:.2f} s" if longest else ""))
        if self.split:
            lines.append("split searches: " + ", ".join(f"{name} over {k}" for name, k in self.split.items()))
        return "\n".join(lines)

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


def run_task(task: Task, job: str = "explore", options: dict | None = None, worker: str = "", *, part=None,
             parts=None) -> TaskResult:
    """Run one task here and return its result; every exception becomes a failed result, a SystemExit raised in the
    user's graph code too (the task failed, the sweep goes on); KeyboardInterrupt, and a SystemExit from anywhere
    else, still propagate. ``options``: ``cache`` (a path), ``device_profile``, and for explore and tune the
    ``TuneOptions`` fields (for bench, bench's keyword arguments). A search split over workers: ``part`` = (i, n)
    searches part i of n (the knob search's budgets shared out: ``search.part_options``; a tune looks the graph up
    in the cache, stores nothing); ``parts`` (the parts' Explorations) merges them, the final round here, and
    stores the winner."""
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
            if part is not None:
                tune_options = part_options(tune_options, part[1])
            handle = None if offline else Handle()
            try:
                # explore: always searches, stores its winner when given a cache; tune: a cache hit, or a search
                # whose winner is stored (autotune's path, and like autotune it fails when no config works)
                outcome = run_search(task.builder, handle, job="sweep" if job == "explore" else "autotune",
                                     options=tune_options, device_profile=device_profile, cache=cache,
                                     lookup=job == "tune" and parts is None, store=part is None,
                                     want_plan=job == "tune" and part is None, args=(), kwargs=dict(task.kwargs),
                                     name=task.name, part=part, parts=parts)
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
        elif part is not None or parts is not None:
            raise ValueError(f"job: {job!r} is not split (explore and tune are)")
        elif job == "bench":
            if offline:
                raise SweepError("bench needs a GPU: it runs the plan")
            report = bench(task.builder, kwargs=dict(task.kwargs), name=task.name, cache=cache, **options)
            result.bench = report.to_dict()
        else:
            raise ValueError(f"job: {job!r} is not one of {', '.join(JOBS)}")
        result.ok = True
    except BaseException as e:  # noqa: BLE001 - one failing task never stops the sweep
        if graphs.stops_the_work(e):
            raise
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


def tasks_from_file(path, what="tasks") -> list:
    """Tasks from a text file: one per line, ``BUILDER [key=value ...]`` (values parsed as Python literals);
    blank lines and ``#`` comments skipped. ValueError naming the file and line for a pair that is not key=value or
    a key given twice, and for a file that lists no graph."""
    tasks = []
    text = read_bounded_text(path, MAX_TASKS_FILE_BYTES, what, "a task file is a line per graph")
    for lineno, line in enumerate(text.splitlines(), 1):
        line = line.split("#", 1)[0].strip()
        if not line:
            continue
        builder, *pairs = line.split()
        kwargs = {}
        for pair in pairs:
            key, sep, value = pair.partition("=")
            if not sep or not key.isidentifier():
                raise ValueError(f"{path}:{lineno}: {pair!r} is not key=value")
            if key in kwargs:
                raise ValueError(f"{path}:{lineno}: {key} is given twice")
            try:
                kwargs[key] = ast.literal_eval(value)
            except (ValueError, SyntaxError, MemoryError, RecursionError):
                kwargs[key] = value
        tasks.append(Task(_beside(builder, path), kwargs, origin=f"{path}, line {lineno}"))
    if not tasks:
        raise ValueError(f"{what}: {str(path)!r} lists no graphs (only blank lines and # comments)")
    return tasks


def _beside(builder: str, list_file) -> str:
    """A list file's ``FILE.py:FUNC`` with a relative FILE: the file beside the list file where one is there (as a
    requirements file's paths are), else as written (from the current folder)."""
    target, sep, func = builder.rpartition(":")
    if not sep or not (target.endswith(".py") or os.sep in target or "/" in target) or os.path.isabs(target):
        return builder
    beside = pathlib.Path(list_file).parent / target
    return f"{beside}{sep}{func}" if beside.is_file() else builder


def _as_tasks(tasks) -> list:
    if tasks is None or isinstance(tasks, (bytes, dict)) or not hasattr(tasks, "__iter__"):
        raise TypeError(f"tasks: expected Tasks, builder names or (builder, kwargs) pairs (or a preset name), not "
                        f"{type(tasks).__name__}")
    if isinstance(tasks, str):
        try:
            return tasks_from_preset(tasks)
        except ValueError:
            return [Task(tasks)]
    out = []
    for i, t in enumerate(tasks):
        if isinstance(t, Task):
            out.append(t)
        elif isinstance(t, str):
            out.append(Task(t))
        elif isinstance(t, (tuple, list)) and len(t) == 2 and isinstance(t[1], dict):
            out.append(Task(t[0], dict(t[1])))
        elif isinstance(t, (tuple, list)) and len(t) == 3 and isinstance(t[1], dict):
            out.append(Task(t[0], dict(t[1]), t[2]))
        elif isinstance(t, (tuple, list)) and len(t) == 3 and isinstance(t[2], dict):
            out.append(Task(t[1], dict(t[2]), t[0]))
        else:
            raise TypeError(f"tasks[{i}]: expected a Task, a builder name, (builder, kwargs), (builder, kwargs, "
                            f"label) or (label, builder, kwargs), kwargs a dict; not {t!r}")
    if not out:
        raise SweepError("sweep: no tasks given")
    return out


def _check_shippable(tasks, executor) -> None:
    """Each task's keyword values pickle, as another process needs them (before any worker starts): a TypeError
    naming the task and the keyword, not pickle's words from the middle of the sweep."""
    for i, t in enumerate(tasks):
        for key, value in t.kwargs.items():
            try:
                pickle.dumps(value)
            except Exception as e:  # noqa: BLE001 - pickle raises many kinds (PicklingError, TypeError, ...)
                raise TypeError(f"tasks[{i}] ({t.name}): {key}={type(value).__name__}: the {executor!r} executor "
                                f"sends each task to another process, and this value does not pickle ({e}); give "
                                "plain values (numbers, strings, lists), or executor='serial'") from None


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


def dispatch_order(tasks, order=_SWEEP.order) -> list:
    """The indices of ``tasks`` in the order a parallel executor hands them out.

    ``"largest"``: largest estimated work first (``task_sizes``), so the last tasks, which leave workers idle
    while one finishes, are small ones; tasks whose size is unknown (your own graph functions among them) go first
    (they could be anything), ties keep the order given. ``"given"``: as given."""
    order = SweepOptions.check("order", order)
    if order == "given":
        return list(range(len(tasks)))
    return _order(task_sizes(tasks), order)


def task_sizes(tasks) -> list:
    """Each task's ``graphs.work_estimate``, for the package's own builders only; None (unknown) for a graph
    function of the user's: sizing it here would run it in the coordinator, where one that crashes the process (a
    segfault in native code) would end the whole sweep instead of failing its own task in a worker."""
    return [graphs.work_estimate(t.builder, t.kwargs) if _package_builder(t.builder) else None for t in tasks]


def _package_builder(builder) -> bool:
    """Whether ``builder`` names a function of this package (a catalogue pattern, or ``cudnn_backend.x:f``)."""
    module = builder.rpartition(":")[0] if ":" in builder else None
    return builder in CATALOGUE or (module is not None and module.split(".")[0] == "cudnn_backend"
                                             and not module.endswith(".py"))


def _order(sizes, order) -> list:
    if order == "given":
        return list(range(len(sizes)))
    return sorted(range(len(sizes)), key=lambda i: (sizes[i] is not None, -(sizes[i] or 0.0), i))


def sweep(tasks, *, job="explore", executor="serial", gpus=_SWEEP.gpus, workers=_SWEEP.workers,
          ray_address=_SWEEP.ray_address, device_profile=None, cache=None, progress=None, order=_SWEEP.order,
          split=_SWEEP.split, pool=None, options=None, **option_kwargs) -> SweepResult:
    """Run ``tasks`` (Tasks, builder names, a preset name) through ``job`` ("explore", "tune", "bench") with
    ``executor`` ("serial", "processes", "ray"); see the module's notes. ``device_profile`` (or no GPU here)
    makes it an offline sweep: heuristics and plans, spread over ``workers`` CPU processes or Ray workers.
    ``cache`` (a PlanCache, a path, or None: the default cache for tune, none for explore) receives the
    winners. ``order`` ("largest", "given"): the order the parallel executors hand tasks out in
    (``dispatch_order``); results always come back in the order given. ``options`` (a ``TuneOptions``) and option
    keywords go to each explore / autotune, checked here before any task starts (for bench: bench's keyword
    arguments). ``progress(done, total, result)`` is called as tasks finish.

    The processes executor runs on a ``WorkerPool``: ``pool`` (one of yours), else the session's pool for these
    GPUs or CPU workers (``shared_pool``: started by the first sweep, kept warm for the next, closed at exit).
    ``split``: whether a graph's search may be split over several workers (``split_plan``: when there are fewer
    graphs than workers, or one dominates; the parts' winners then meet head to head on one GPU); None: on GPUs for
    explore and tune, not offline (where it saves nothing). Each worker's start, busy and idle time and its longest
    unit come back in ``SweepResult.worker_reports``."""
    tasks = _as_tasks(tasks)
    progress = progress_callback(progress)
    if job not in JOBS:
        raise ValueError(f"job: {job!r} is not one of {', '.join(JOBS)}")
    if executor not in EXECUTORS:
        raise ValueError(f"executor: {executor!r} is not one of {', '.join(EXECUTORS)}")
    checked = SweepOptions(gpus=gpus, workers=workers, ray_address=ray_address, order=order, split=split)
    gpus, workers, order, split = checked.gpus, checked.workers, checked.order, checked.split
    if executor == "serial" and (gpus is not None or workers is not None):
        given = "gpus" if gpus is not None else "workers"
        raise ValueError(f"{given}: the serial executor runs every graph here, one after another; "
                         f"executor='processes' spreads them over {'GPUs' if given == 'gpus' else 'CPU workers'}")
    if isinstance(device_profile, (str, os.PathLike)):
        device_profile = graphs.device_profile(device_profile)  # checked here, shipped as data
    offline = device_profile is not None or not _device.gpu_available()
    if offline and gpus is not None and executor != "ray":
        raise SweepError("gpus: this sweep is offline (no GPU here, or a device_profile given): workers=N spreads it "
                         "over CPU processes")
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
    if pool is not None and not isinstance(pool, WorkerPool):
        raise TypeError(f"pool: expected a WorkerPool, not {type(pool).__name__}")
    if pool is not None and executor != "processes":
        raise ValueError(f"pool: runs the 'processes' executor, not {executor!r}")
    if executor == "processes":  # (Ray ships them with cloudpickle, which takes more than pickle does)
        _check_shippable(tasks, executor)
    t0 = time.perf_counter()
    reports, split_over = [], {}
    if executor == "serial":
        n_workers = 1
        results = []
        report = WorkerReport("serial")
        for i, t in enumerate(tasks):
            started = time.perf_counter() - t0
            r = run_task(t, job, opts, worker="serial")
            r.started = started
            report.units.append((t.name, started, r.seconds))
            report.busy_s += r.seconds
            results.append(r)
            if progress is not None:
                progress(i + 1, len(tasks), r)
        reports = [report]
    elif executor == "processes":
        if pool is None:
            pool = shared_pool(_pins(offline, gpus, workers, len(tasks), split))
        pool.start()  # the workers start (seconds) while the graphs are sized here
        n_workers = len(pool)
        do_split = (job in ("explore", "tune") and not offline) if split is None else split and job != "bench"
        units = plan_units(tasks, order, split=do_split, workers=n_workers)
        split_over = {tasks[u.index].name: u.parts for u in units if u.parts > 1}
        results, reports = pool.run(tasks, job, opts, units, progress, t0=t0)
    else:
        results, n_workers = _run_ray(tasks, dispatch_order(tasks, order), job, opts, offline, ray_address, workers,
                                      progress)
    return SweepResult(job, executor, n_workers, results, time.perf_counter() - t0, offline, reports, split_over)


def cpu_workers(requested, tasks=None) -> int:
    """CPU worker processes for ``tasks`` graphs (None: their searches may be split, so any number): ``requested``
    (checked), else one per core; never more than the cores, nor than the graphs, since a worker beyond either only
    waits (and thousands of processes take the host down)."""
    cores = os.cpu_count() or 1
    n = as_int(requested, "workers", 1) if requested is not None else cores
    return max(1, min(n, cores, cores if tasks is None else tasks))


def _pins(offline, gpus, workers, n_tasks, split=None) -> list:
    """The CUDA device of each worker (None: a CPU worker, offline; a search split on request may use them all)."""
    if offline:
        return [None] * cpu_workers(workers, None if split else n_tasks)
    n = _gpu_count(gpus)
    if n < 1:
        raise SweepError("executor 'processes': no GPU visible")
    visible = os.environ.get("CUDA_VISIBLE_DEVICES")
    ids = [s.strip() for s in visible.split(",")] if visible else [str(i) for i in range(n)]
    return ids[:n]


# ---------------------------------------------------------------------------------------------
# splitting a graph's search over workers
# ---------------------------------------------------------------------------------------------
SEARCH_WORK_UNIT = 2e10  # multiply-adds past which a graph's search grows with its size (a call outlasts a sample)
PART_OVERHEAD = 0.1  # of a graph's search, paid again by each part (graph built, heuristics listed, its final)
MERGE_COST = 0.1  # of a graph's search: the merge's final round, after its parts


def search_costs(sizes) -> list:
    """Relative cost of each graph's search from its ``graphs.work_estimate`` (None: unknown, taken as the mean of
    the known). A search times each candidate for about the same wall time (racing samples of ~100 us, warm-up
    calls, the plan built) until one call outlasts a sample, so graphs cost alike up to ``SEARCH_WORK_UNIT``
    multiply-adds and grow with their size past it."""
    known = [s for s in sizes if s is not None]
    fill = sum(known) / len(known) if known else 0.0
    return [1.0 + (fill if s is None else s) / SEARCH_WORK_UNIT for s in sizes]


def _loads(costs, parts, workers) -> list:
    """Each worker's load when the pieces (each part of each search) are handed out largest first, each to the
    least loaded worker (what a shared queue gives when pieces take their estimated time)."""
    pieces = sorted((c * (1.0 / k + (PART_OVERHEAD if k > 1 else 0.0)) for c, k in zip(costs, parts)
                     for _ in range(k)), reverse=True)
    loads = [0.0] * workers
    for piece in pieces:
        i = loads.index(min(loads))
        loads[i] += piece
    return loads


def _span(costs, parts, workers) -> tuple:
    """(the longest load, how many workers carry it): smaller is better, in that order."""
    loads = [round(x, 9) for x in _loads(costs, parts, workers)]
    top = max(loads)
    return top, loads.count(top)


def split_plan(costs, workers) -> list:
    """How many parts each graph's search is split into, given their ``costs`` (``search_costs``) and ``workers``.

    Greedy: while it shortens the busiest worker's load (or leaves fewer workers that busy), the search with the
    largest piece gets one more part (at most ``workers``); the plan is kept only when, with each part's overhead
    and the merge after the parts, it still beats no split. So fewer graphs than workers are split to fill them,
    a graph that dominates is split, and many like graphs are not split at all."""
    n = len(costs)
    parts = [1] * n
    if workers < 2 or not n:
        return parts
    best = _span(costs, parts, workers)
    while True:
        open_ = [i for i in range(n) if parts[i] < workers]
        if not open_:
            break
        i = max(open_, key=lambda j: (costs[j] / parts[j], -j))
        trial = parts.copy()
        trial[i] += 1
        span = _span(costs, trial, workers)
        if span >= best:
            break
        parts, best = trial, span
    if any(k > 1 for k in parts):
        merge = max(c * MERGE_COST for c, k in zip(costs, parts) if k > 1)
        if best[0] + merge >= _span(costs, [1] * n, workers)[0]:
            return [1] * n
    return parts


@dataclass(frozen=True)
class Unit:
    """One piece of work a worker takes: a whole task (``parts`` 1), part ``part`` of a search split into
    ``parts``, or the ``merge`` of those parts."""

    index: int
    part: int | None = None
    parts: int = 1
    merge: bool = False
    cost: float = 1.0

    def label(self, name=None) -> str:
        """``name`` (the task's; default "task INDEX"), and which part or the merge."""
        name = name or f"task {self.index}"
        if self.merge:
            return f"{name} (merge of {self.parts})"
        return name if self.part is None else f"{name} (part {self.part + 1}/{self.parts})"


def plan_units(tasks, order="largest", split=True, workers=1) -> list:
    """The units a parallel sweep hands out, in order (``dispatch_order``; each split task's parts together), with
    the searches split by ``split_plan`` when ``split``. Merges are not listed: each joins the queue, first, once
    its parts are in."""
    if order == "given" and not split:  # no estimate needed (a support probe's tasks are no graphs to size)
        return [Unit(i) for i in range(len(tasks))]
    sizes = task_sizes(tasks)
    costs = search_costs(sizes)
    parts = split_plan(costs, workers) if split else [1] * len(tasks)
    units = []
    for i in _order(sizes, order):
        k = parts[i]
        if k == 1:
            units.append(Unit(i, cost=costs[i]))
        else:
            units += [Unit(i, p, k, cost=costs[i] * (1.0 / k + PART_OVERHEAD)) for p in range(k)]
    if order == "largest":  # pieces largest first; unknown sizes first, as dispatch_order
        units.sort(key=lambda u: (sizes[u.index] is not None, -u.cost))
    return units


# ---------------------------------------------------------------------------------------------
# the worker pool
# ---------------------------------------------------------------------------------------------
@dataclass
class WorkerReport:
    """Where one worker's time went in a sweep: ``start_s`` (from the sweep's start until it could take work; 0
    for a worker already warm), ``busy_s`` (running units), ``idle_s`` (ready without work, up to the sweep's end),
    ``units`` ([(label, started s, seconds)]), the ``longest`` unit and its seconds."""

    worker: str
    start_s: float = 0.0
    busy_s: float = 0.0
    idle_s: float = 0.0
    units: list = field(default_factory=list)

    @property
    def longest(self) -> tuple:
        """(label, seconds) of the longest unit ("", 0.0 without any)."""
        return max(((u[0], u[2]) for u in self.units), key=lambda u: u[1], default=("", 0.0))

    def row(self) -> dict:
        label, seconds = self.longest
        return {"worker": self.worker, "start s": f"{self.start_s:.2f}", "units": len(self.units),
                "busy s": f"{self.busy_s:.2f}", "idle s": f"{self.idle_s:.2f}",
                "longest": f"{label} ({seconds:.2f} s)" if label else "-"}


@contextlib.contextmanager
def _sigint_ignored_by_children():
    """Around starting a worker: SIGINT ignored, which the child inherits from its first instruction (Python leaves an
    ignored SIGINT ignored). A Ctrl-C reaches the terminal's whole process group; a worker still importing would
    otherwise print its own KeyboardInterrupt traceback, when the coordinator alone answers it. The main thread only
    (signal handlers are its own); elsewhere a no-op."""
    if threading.current_thread() is not threading.main_thread():
        yield
        return
    previous = signal.signal(signal.SIGINT, signal.SIG_IGN)
    try:
        yield
    finally:
        signal.signal(signal.SIGINT, previous)


def _worker_main(worker_id, pin, inbox, outbox):
    # inbox / outbox: this worker's own pipes (a worker that dies, even mid-message, breaks only its own)
    """A spawned worker: pinned to one GPU (set before anything touches CUDA), runs units until the sentinel.
    Ctrl-C is the coordinator's to handle: it closes the pool."""
    signal.signal(signal.SIGINT, signal.SIG_IGN)
    if pin is not None:
        os.environ["CUDA_VISIBLE_DEVICES"] = pin
        # cuda.core and the context, while cuDNN works on the first graph
        threading.Thread(target=inputs.warm_up, name="CUDA warm-up", daemon=True).start()
    label = f"gpu {pin}" if pin is not None else f"cpu worker {worker_id}"
    try:
        outbox.send(("ready", worker_id))
        while True:
            try:
                item = inbox.recv()
            except (EOFError, OSError):  # the coordinator is gone
                return
            if item is None:
                return
            seq, unit, task, job, options, runner, parts = item
            split = {} if unit.parts == 1 else {"part": None if unit.merge else (unit.part, unit.parts),
                                                "parts": parts}
            result = (runner or run_task)(task, job, options, worker=label, **split)
            outbox.send(("done", worker_id, seq, result))
    except (BrokenPipeError, ConnectionResetError):  # the coordinator went away (killed): nobody to answer
        return


class _Worker:
    def __init__(self, worker_id, pin, process, inbox, outbox, spawned):
        self.id, self.pin, self.process, self.inbox, self.outbox = worker_id, pin, process, inbox, outbox
        self.eof = False  # its outbox ended: it is exiting
        self.spawned, self.ready = spawned, None
        self.running = None  # (seq, unit, started) of the unit it runs

    @property
    def label(self) -> str:
        return f"gpu {self.pin}" if self.pin is not None else f"cpu worker {self.id}"


class WorkerPool:
    """Worker processes kept warm across sweeps: one per GPU (``pins``: the CUDA device each is pinned to), or
    ``len(pins)`` CPU processes for offline sweeps (pins None). Started once (``start``, or the first sweep), each
    worker takes one unit at a time from the coordinator's queue when it is idle; ``close()`` (or leaving a ``with``
    block, or the interpreter's exit for the shared pools of ``shared_pool``) stops them."""

    def __init__(self, pins):
        self.pins = tuple(pins)
        if not self.pins:
            raise SweepError("a worker pool needs at least one worker")
        self._ctx = multiprocessing.get_context("spawn")
        self.workers: list = []
        self.closed = False

    @classmethod
    def on_gpus(cls, gpus="all") -> "WorkerPool":
        """A pool of one worker per GPU here (``gpus``: "all" or a count; the first of ``CUDA_VISIBLE_DEVICES``
        when it is set), not started yet."""
        return cls(_pins(False, gpus, None, 0))

    def __enter__(self):
        return self.start()

    def __exit__(self, *exc):
        self.close()

    def __len__(self):
        return len(self.pins)

    @property
    def started(self) -> bool:
        return bool(self.workers)

    @property
    def alive(self) -> bool:
        return not self.closed and (not self.workers or all(w.process.is_alive() for w in self.workers))

    def start(self, wait=False, timeout=300.0) -> "WorkerPool":
        """Start the workers (once); ``wait``: until every one is ready to take work (between sweeps: a sweep then
        counts no worker start)."""
        if self.closed:
            raise SweepError("this worker pool was closed")
        if not self.workers:
            self.workers = [self._spawn(i) for i in range(len(self.pins))]
        deadline = time.monotonic() + timeout
        while wait and any(w.ready is None for w in self.workers):
            if not all(w.process.is_alive() for w in self.workers) or time.monotonic() > deadline:
                raise SweepError("worker pool: a worker did not start (if you called this from a script, guard it "
                                 "with `if __name__ == '__main__':`: spawned workers import it)")
            for w, msg in self._receive(0.5):
                if msg[0] == "ready":
                    w.ready = time.perf_counter()
        return self

    def _spawn(self, worker_id) -> _Worker:
        pin = self.pins[worker_id]
        inbox_r, inbox_w = self._ctx.Pipe(duplex=False)
        outbox_r, outbox_w = self._ctx.Pipe(duplex=False)
        # the child inherits the environment at start: pinned before it imports anything, and its numpy's thread
        # pools sized to its share of the cores (each library's pool defaults to every core: N workers' spinning
        # BLAS threads then starve the other workers' host threads, which launch and time the kernels)
        env = {} if pin is None else {"CUDA_VISIBLE_DEVICES": pin}
        threads = str(max(1, (os.cpu_count() or 1) // len(self.pins)))
        env.update({k: threads for k in THREAD_POOL_VARIABLES if k not in os.environ})
        saved = {k: os.environ.get(k) for k in env}
        os.environ.update(env)
        try:
            p = self._ctx.Process(target=_worker_main, args=(worker_id, pin, inbox_r, outbox_w), daemon=True,
                                  name=f"cudnn-backend sweep worker {worker_id}")
            with _sigint_ignored_by_children():
                p.start()
        finally:
            for k, v in saved.items():
                if v is None:
                    os.environ.pop(k, None)
                else:
                    os.environ[k] = v
        inbox_r.close()  # the child's ends
        outbox_w.close()
        return _Worker(worker_id, pin, p, inbox_w, outbox_r, time.perf_counter())

    def _receive(self, timeout) -> list:
        """[(worker, message)] of what the workers sent, waiting up to ``timeout`` s for anything (a worker's exit
        included)."""
        conns = {w.outbox: w for w in self.workers if not w.eof}
        got = []
        for c in multiprocessing.connection.wait(list(conns) + [w.process.sentinel for w in self.workers], timeout):
            w = conns.get(c)
            if w is None:
                continue  # a worker's exit: the caller sees it
            try:
                got.append((w, c.recv()))
            except (EOFError, OSError):
                w.eof = True
        return got

    def close(self, timeout=10.0):
        """Stop the workers: each finishes its unit (none runs between sweeps) and exits; those still running after
        ``timeout`` seconds are terminated. Quiet, and safe to call twice."""
        if self.closed:
            return
        self.closed = True
        for w in self.workers:
            if w.process.is_alive():
                with contextlib.suppress(OSError):
                    w.inbox.send(None)
        deadline = time.monotonic() + timeout
        for w in self.workers:
            if not multiprocessing.connection.wait([w.process.sentinel], max(0.0, deadline - time.monotonic())):
                w.process.terminate()
            w.process.join(timeout=5)
        for w in self.workers:
            w.inbox.close()
            w.outbox.close()
        self.workers = []

    def _restart(self, w: _Worker):
        w.inbox.close()
        w.outbox.close()
        fresh = self._spawn(w.id)
        self.workers[w.id] = fresh
        return fresh

    def run(self, tasks, job, options, units, progress=None, runner=None, t0=None) -> tuple:
        """Run ``units`` (``plan_units``) of ``tasks``: each idle worker takes the next unit (a merge goes first
        once its parts are in). Returns (a TaskResult per task in the order given, a WorkerReport per worker)."""
        self.start()
        for w in list(self.workers):  # one that died between sweeps is replaced
            if not w.process.is_alive():
                self._restart(w)
        t0 = time.perf_counter() if t0 is None else t0
        pending = collections.deque(units)
        results: list = [None] * len(tasks)
        pieces = {}  # task index -> {part: TaskResult}
        results_pieces = {}  # task index -> [_piece of each part done]
        reports = {w.id: WorkerReport(w.label) for w in self.workers}
        done = 0
        seq = 0
        restarts_left = len(tasks) + len(self.workers)  # a worker dying on every start must not loop forever

        def finish(index, result):
            nonlocal done
            if results[index] is None:
                results[index] = result
                done += 1
                if progress is not None:
                    progress(done, len(tasks), result)

        def dispatch(w):
            nonlocal seq
            if not pending or w.running is not None or w.ready is None:
                return
            unit = pending.popleft()
            parts = None
            if unit.merge:
                got = pieces.pop(unit.index)
                parts = [got[p].exploration for p in sorted(got) if got[p].ok and got[p].exploration is not None]
            seq += 1
            w.running = (seq, unit, time.perf_counter())
            with contextlib.suppress(OSError):  # a worker gone meanwhile: its unit fails below, as it died
                w.inbox.send((seq, unit, tasks[unit.index], job, options, runner, parts))

        def completed(w, unit, result, started):
            now = time.perf_counter()
            if isinstance(result, TaskResult):
                result.started = started - t0
            reports[w.id].units.append((unit.label(tasks[unit.index].name), started - t0, now - started))
            reports[w.id].busy_s += now - started
            if unit.part is None and not unit.merge:
                finish(unit.index, result)
            elif unit.merge:
                result.pieces = results_pieces.pop(unit.index) + [_piece(unit, result)]
                # the task as a whole: from its first part's start to the merge's end, on the workers it took
                first = min(p["started"] for p in result.pieces)
                result.seconds, result.started = now - t0 - first, first
                result.worker = "+".join(dict.fromkeys(p["worker"] for p in result.pieces))
                failed = [p for p in result.pieces[:-1] if not p["ok"]]
                if failed and result.exploration is not None:
                    result.exploration.notes.append(f"{len(failed)} of the {unit.parts} parts failed: "
                                                    f"{failed[0]['error']}")
                finish(unit.index, result)
            else:
                got = pieces.setdefault(unit.index, {})
                got[unit.part] = result
                results_pieces.setdefault(unit.index, []).append(_piece(unit, result))
                if len(got) == unit.parts:
                    merged = _settle_parts(tasks[unit.index], got, unit.parts)
                    if merged is not None:  # a failure, or a cache hit: nothing to merge
                        pieces.pop(unit.index)
                        merged.pieces = results_pieces.pop(unit.index)
                        merged.worker = "+".join(dict.fromkeys(p["worker"] for p in merged.pieces))
                        finish(unit.index, merged)
                    else:
                        pending.appendleft(Unit(unit.index, None, unit.parts, merge=True, cost=unit.cost))

        try:
            for idle in self.workers:  # warm workers take their first unit now (no "ready" comes from them)
                dispatch(idle)
            while done < len(tasks):
                for w, msg in self._receive(0.5):
                    if msg[0] == "ready":
                        w.ready = time.perf_counter()  # started in this sweep (a warm worker sent it before)
                        reports[w.id].start_s += max(0.0, w.ready - max(w.spawned, t0))
                    elif w.running is not None and msg[2] == w.running[0]:
                        _, unit, started = w.running
                        w.running = None
                        completed(w, unit, msg[3], started)
                for w in list(self.workers):
                    if w.process.is_alive():
                        continue
                    # a worker died (a crash in native code): its unit fails, a fresh worker takes its place
                    with contextlib.suppress(EOFError, OSError):  # unless it sent its result just before
                        while w.running is not None and w.outbox.poll():
                            msg = w.outbox.recv()
                            if msg[0] == "done" and msg[2] == w.running[0]:
                                _, unit, started = w.running
                                w.running = None
                                completed(w, unit, msg[3], started)
                    if w.running is not None:
                        _, unit, started = w.running
                        w.running = None
                        error = f"worker process died (exit code {w.process.exitcode}) while running this task"
                        recorded = findings.harvest(options.get("errata_out"), dead={w.process.pid},
                                                    exit_codes={w.process.pid: w.process.exitcode}) \
                            if isinstance(options, dict) else []
                        if recorded:  # the config it died on, recorded as an errata rule (explore --errata-out)
                            error += "; " + "; ".join(recorded)
                        completed(w, unit, TaskResult(tasks[unit.index], False, error=error, worker=w.label,
                                                      seconds=time.perf_counter() - started), started)
                    if done < len(tasks) or restarts_left > 0:  # the pool kept whole for the next sweep too
                        if restarts_left <= 0:
                            why = (f"worker processes keep dying (last exit code {w.process.exitcode}); if you called "
                                   "sweep() from a script, guard it with `if __name__ == '__main__':` (spawned "
                                   "workers import it)")
                            for i, r in enumerate(results):
                                if r is None:
                                    finish(i, TaskResult(tasks[i], False, error=why, worker="none"))
                            break
                        restarts_left -= 1
                        self._restart(w)
                for idle in self.workers:
                    dispatch(idle)
        except BaseException:
            self.close(timeout=2.0)  # interrupted: the workers go with it, their units unfinished
            raise
        end = time.perf_counter()
        out = []
        for w in self.workers:
            r = reports.get(w.id) or WorkerReport(w.label)
            if w.ready is not None:
                r.idle_s = max(0.0, end - max(w.ready, t0) - r.busy_s)
            out.append(r)
        return results, out


def _run_processes(tasks, order, job, options, pins, progress, t0, runner=None) -> list:
    """``tasks`` (whole, never split) over a fresh pool of ``pins``, closed after, each through ``runner(task, job,
    options, worker=...)`` (a module-level function; default ``run_task``): the support matrix's probes."""
    with WorkerPool(pins) as pool:
        results, _ = pool.run(tasks, job, options, plan_units(tasks, order, split=False), progress, runner, t0)
    return results


def _piece(unit, result) -> dict:
    return {"unit": unit.label(), "worker": result.worker, "seconds": result.seconds, "started": result.started,
            "ok": result.ok, "error": result.error}


def _settle_parts(task, got, parts):
    """The task's result when its parts leave nothing to merge (None: merge them): every part failed (the first's
    failure is the task's), or a part found the graph in the plan cache (that part's hit is the task's)."""
    hit = next((r for r in got.values() if r.ok and r.cached == "hit"), None)
    if hit is not None:
        return hit
    if not any(r.ok for r in got.values()):
        first = got[min(got)]
        first.error = first.error or "every part of the split search failed"
        return first
    return None


_POOLS: dict = {}


def _env_key() -> tuple:
    """What a worker takes from the environment at its start (the library, the device, the cache's place)."""
    return tuple(sorted((k, v) for k, v in os.environ.items()
                        if k.startswith(("CUDNN", "CUDA_", "NVIDIA_")) or k in ("LD_LIBRARY_PATH", "PYTHONPATH")))


def shared_pool(pins) -> WorkerPool:
    """The session's pool of workers pinned so (started at the first sweep that uses it, kept warm for the next,
    closed at the interpreter's exit). A pool whose workers died, or started under another environment, is replaced."""
    key = (tuple(pins), _env_key())
    pool = _POOLS.get(key)
    if pool is None or not pool.alive:
        for k in [k for k in _POOLS if k[0] == key[0]]:
            _POOLS.pop(k).close()
        pool = _POOLS[key] = WorkerPool(pins)
    return pool


def close_pools():
    """Stop every shared worker pool of this session (``shared_pool``; also run at the interpreter's exit)."""
    while _POOLS:
        _POOLS.popitem()[1].close()


atexit.register(close_pools)


def _ray_module():
    try:
        import ray
    except ImportError as e:
        raise MissingDependencyError("ray", "the Ray executor", "ray") from e
    return ray


RAY_CONNECT_TIMEOUT_S = 5.0  # a cluster's head answers a TCP connect in milliseconds; none answering is not there


def check_ray_address(address, timeout=RAY_CONNECT_TIMEOUT_S) -> None:
    """A SweepError (``.option`` "ray_address") unless the cluster ``address`` names (or ``$RAY_ADDRESS``, which
    Ray reads for None and "auto") accepts a TCP connection within ``timeout`` seconds: ``ray.init`` itself
    retries an unreachable address for ever, printing its logs."""
    where = "ray_address"
    if address in (None, "auto") and os.environ.get("RAY_ADDRESS"):
        address, where = os.environ["RAY_ADDRESS"], "$RAY_ADDRESS"
    if address is None:
        return
    try:
        endpoint = RayAddress.endpoint(address)
    except ValueError as e:
        err = SweepError(f"{where}: {e}")
        err.option = "ray_address"
        raise err from None
    if endpoint is None:
        return
    host, port = endpoint
    try:
        socket.create_connection(endpoint, timeout=timeout).close()
    except OSError as e:
        reason = f"no answer within {timeout:g} s" if isinstance(e, TimeoutError) else \
            (e.strerror or str(e) or type(e).__name__)
        err = SweepError(f"{where}: no Ray cluster answers at {address!r} ({host} port {port}: {reason}); start "
                         "one there (`ray start --head`), or leave the address out for a local Ray")
        err.option = "ray_address"
        raise err from None


def _run_ray(tasks, dispatch, job, options, offline, address, workers, progress):
    ray = _ray_module()
    if not ray.is_initialized():
        check_ray_address(address)
        kwargs = {"address": address} if address else {}  # "local": Ray starts a local cluster
        if address in (None, "local") and workers is not None:
            kwargs["num_cpus"] = as_int(workers, "workers", 1)
        kwargs.setdefault("ignore_reinit_error", True)
        kwargs.setdefault("log_to_driver", False)
        try:
            ray.init(**kwargs)
        except ConnectionError as e:  # "auto" with no cluster running here
            # (Ray's own words name its --address flag and $RAY_ADDRESS, not this option)
            found = ("'auto' found no running Ray cluster on this machine, and $RAY_ADDRESS is not set"
                     if address == "auto" else f"Ray could not join a cluster at {address!r}")
            err = SweepError(f"ray_address: {found}; start one (`ray start --head`), give its HOST:PORT, or 'local' "
                             f"for a Ray of this process (Ray: {' '.join(str(e).split())[:200]})")
            err.option = "ray_address"
            raise err from None
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

