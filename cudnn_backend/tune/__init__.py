"""The main job on the user's own graphs: ``explore`` every engine config, ``autotune`` to the fastest correct
one, keep it in a persistent ``PlanCache``, ``bench`` a plan per call, ask ``fusion_report`` which kernels ran,
and ``sweep`` many graphs over every GPU of a host or a Ray cluster. Which graphs cuDNN supports (fuses) on a
GPU and release: ``support_matrix`` over a catalogue, ``compare_support``, and ``why`` for a refused graph.

Timing and checking need a GPU, cuda-core and cuda-bindings (the ``gpu`` extra; torch is not
used); outputs are checked against the fp64 reference evaluator. Everything else also runs offline against a
device profile.
"""
from cudnn_backend.tune.benchmark import BenchCase, BenchReport, bench
from cudnn_backend.tune.cache import CacheEntry, PlanCache, PlanCacheWarning, cache_dir, default_cache_path
from cudnn_backend.tune.catalogue import CatalogueEntry, default_catalogue, load_catalogue
from cudnn_backend.tune.explorer import autotune, device_of, explore
from cudnn_backend.tune.fusion import FusionReport, fusion_report
from cudnn_backend.tune.options import TuneOptions
from cudnn_backend.tune.graphs import (
    Subject,
    describe_graph,
    describe_operations,
    graph_summary,
    load_builder,
    work_estimate,
)
from cudnn_backend.tune.results import ConfigResult, Exploration, headroom_rows
from cudnn_backend.tune.support import (
    SupportCache,
    SupportComparison,
    SupportMatrix,
    SupportResult,
    compare_matrices,
    compare_support,
    probe_graph,
    support_matrix,
)
from cudnn_backend.tune.sweeps import (
    SweepResult,
    Task,
    TaskResult,
    WorkerPool,
    WorkerReport,
    close_pools,
    dispatch_order,
    run_task,
    shared_pool,
    split_plan,
    sweep,
    tasks_from_file,
    tasks_from_preset,
)
from cudnn_backend.tune.timing import Timer, Timing
from cudnn_backend.tune.explain import Explanation, GraphDescription, why

__all__ = [
    "explore", "autotune", "Exploration", "ConfigResult", "headroom_rows", "PlanCache", "CacheEntry",
    "PlanCacheWarning", "default_cache_path", "fusion_report", "FusionReport", "bench", "BenchReport", "BenchCase",
    "sweep", "Task", "TaskResult", "SweepResult", "run_task", "tasks_from_preset", "tasks_from_file", "Timer",
    "Timing", "Subject", "describe_graph", "describe_operations", "graph_summary", "load_builder", "device_of",
    "dispatch_order", "work_estimate", "cache_dir", "CatalogueEntry", "default_catalogue", "load_catalogue",
    "SupportCache", "SupportComparison", "SupportMatrix", "SupportResult", "compare_matrices", "compare_support",
    "probe_graph", "support_matrix", "Explanation", "GraphDescription", "why", "TuneOptions", "WorkerPool",
    "WorkerReport", "shared_pool", "close_pools", "split_plan",
]
