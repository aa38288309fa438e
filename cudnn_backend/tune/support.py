"""Which graphs fuse, on which GPU and cuDNN release: the support matrix, and comparisons of two.

``probe_graph(graph, device_profile)`` takes one graph through the stages cuDNN can refuse it at and says where it
stopped (``SupportResult.stage``):

========== ===========================================================================================
stage      what refused the graph
========== ===========================================================================================
builder    the function that builds the graph raised (an error of its own, not a refusal)
checks     the package's checks, before cuDNN saw the graph (shapes cuDNN would misread or write out of bounds)
unavailable an operation or enum value newer than the loaded cuDNN
finalize   cuDNN, finalizing an operation or the operation graph
heuristics cuDNN's heuristics (modes A and FALLBACK) returned no engine config
plan       every engine config heuristics returned was refused at execution-plan build
crash      the worker process probing it died (cuDNN aborted or crashed): the graph is reported, the rest go on
========== ===========================================================================================

Offline, a graph cuDNN refused at heuristics or plan build for a fact only a live GPU gives (``offline_gaps``: the
GPU's cluster layout on cuDNN 9.19, ...) is **unknown offline**, never "not supported": the GPU may run it
(``SupportResult.verdict``; the reason says what offline lacked).

A graph that passes is supported: some config built a plan (``verified == "plan"``) or, for a runtime-compiled
config offline, finalized without its plan being compiled (``verified == "config"``, "yes*": its ``caveat`` says
what was not verified): compiling one kernel takes cuDNN's NVRTC 1-4 s, so offline ``plans="precompiled"`` (the
default) builds the plans of precompiled configs only; ``plans="all"`` compiles too, ``plans="none"`` builds none.
Every result counts the engines (cuDNN's global engine count, which finalize for the graph), the configs of
heuristics modes A and FALLBACK (and B with ``modes=MODES``), records heuristics' first config per mode, and
classifies the engines heuristics proposed from the notes cuDNN reports: **runtime-compiled** (behavior
note RUNTIME_COMPILATION: the kernel is generated for this graph), **specialized** (a precompiled engine that
runs a graph of several operations: one of cuDNN's fixed fusion patterns), **precompiled** (a precompiled
engine for a single operation). On a GPU (``kernels=True``) plans are always built and the first working
config is run once: its kernel count (1 = fully fused) and kernel names come from ``fusion_report``.

``support_matrix(catalogue, device_profile)`` probes a catalogue (``tune.catalogue``) over worker processes,
caching each result per (cuDNN release, device) in the package's cache folder, and returns a ``SupportMatrix``:
a table, CSV, JSON and a family x data type heatmap. ``compare_support`` compares two matrices (two device
profiles in this process, or two cuDNN releases, each probed in its own process with
``CUDNN_BACKEND_LIBCUDNN``): which graphs gained or lost support, and how the engine and config counts moved.
"""
from __future__ import annotations

import contextlib
import hashlib
import inspect
import json
import math
import os
import pathlib
import sqlite3
import subprocess
import sys
import tempfile
import threading
import time
import traceback
import warnings
from dataclasses import asdict, dataclass, field, fields

from cudnn_backend._bindings._loader import release_library
from cudnn_backend._bindings.enums import BehaviorNote
from cudnn_backend.core import device as _device
from cudnn_backend.core._descriptor import Descriptor
from cudnn_backend.core._handle import Handle
from cudnn_backend.core._logging import cudnn_messages, cudnn_reasons
from cudnn_backend.core.families._build import flags_checked
from cudnn_backend.core.files import environment_path, file_path, read_bounded_text, write_csv, write_whole
from cudnn_backend.core.json_checks import control_character_at
from cudnn_backend.core.plain import PlainData, json_ready
from cudnn_backend.core.versions import format_version, loaded_version, sm_words
from cudnn_backend.errors import (
    CudnnBackendError,
    CudnnError,
    CudnnUnsafeCallError,
    CudnnVersionError,
    GraphError,
)
from cudnn_backend.graph import Graph
from cudnn_backend.patterns import CATALOGUE as PATTERNS
from cudnn_backend.patterns import Pattern
from cudnn_backend.runtime import engines as _engines
from cudnn_backend.runtime import errata as _errata
from cudnn_backend.runtime import heuristics as _heuristics
from cudnn_backend.runtime.heuristics import cudnn_explanations
from cudnn_backend.runtime import plans as _plans
from cudnn_backend.runtime.profiles import DeviceProfile, as_deviceprop
from cudnn_backend.tune import catalogue as _catalogue
from cudnn_backend.tune import graphs, plots
from cudnn_backend.tune.cache import cache_dir, is_busy
from cudnn_backend.tune.catalogue import CatalogueEntry
from cudnn_backend.tune.fusion import fusion_report
from cudnn_backend.tune.offline_gaps import (
    RUNTIME_UNOBSERVED,
    UNKNOWN_OFFLINE,
    gap_caveat,
    gaps_in,
    offline_labels,
    run_observed,
    runtime_steps,
    silent_gaps,
)
from cudnn_backend.tune.options import PLAN_MODES, SupportOptions, progress_callback
from cudnn_backend.tune.results import ChangeRows, plain_table
from cudnn_backend.tune.sweeps import TaskResult, _run_processes, cpu_workers
from cudnn_backend.typed.introspection import graph_fingerprint, signature_of, tensor_slots, topological_order
from cudnn_backend.typed.tensors import data_type_name

__all__ = ["STAGES", "KINDS", "PLAN_MODES", "MODES", "VERDICTS", "SupportResult", "SupportMatrix", "SupportComparison",
           "SupportCache", "SupportCacheWarning", "probe_graph", "check_modes", "support_matrix", "compare_support", "compare_matrices",
           "default_support_cache_path", "engine_kind", "graph_labels", "plot_support_heatmap", "cudnn_explanations",
           "materialize", "PROBE_VERSION"]

#: the stages a graph can be refused at, in order (see the module's notes)
STAGES = ("builder", "checks", "unavailable", "finalize", "heuristics", "plan", "crash")
#: the engine kinds, from cuDNN's engine notes (see the module's notes)
KINDS = ("precompiled", "specialized", "runtime-compiled")
#: the heuristics modes a probe can count (``modes=``): A and FALLBACK always (their configs are the ones tried), B
#: when asked
MODES = ("A", "B", "FALLBACK")
#: a graph's verdict: supported, not supported, or not decidable offline (``SupportResult.verdict``)
VERDICTS = ("yes", "no", UNKNOWN_OFFLINE)
#: bumped whenever what a probe records changes: cached results of another version are not used
PROBE_VERSION = 3
_MODES = ("A", "FALLBACK")
MAX_MATRIX_FILE_BYTES = 1 << 28  # 256 MiB: far above any matrix (every family and data type is a few MB)
_RC = BehaviorNote.CUDNN_BEHAVIOR_NOTE_RUNTIME_COMPILATION


def engine_kind(config_or_notes, operation_count: int) -> str:
    """"runtime-compiled", "specialized" or "precompiled" for a Config (or its behavior notes) in a graph of
    ``operation_count`` operations (see the module's notes)."""
    notes = config_or_notes.behavior_notes if hasattr(config_or_notes, "behavior_notes") else config_or_notes
    if _RC in tuple(notes):
        return "runtime-compiled"
    return "specialized" if operation_count > 1 else "precompiled"


# ---------------------------------------------------------------------------------------------
# one graph
# ---------------------------------------------------------------------------------------------
@dataclass
class SupportResult(PlainData):
    """Where one graph stands (plain data: it pickles, and ``to_dict``/``from_dict`` round-trip through JSON).

    ``supported``; ``stage`` where it was refused (None when supported) and ``reason`` (cuDNN's own words where
    it gave some); ``verified``: "plan" (a plan was built), "config" (a runtime-compiled config finalized, its
    plan not compiled) or "" (not supported); ``engines_total`` (cuDNN's engine count for the graph),
    ``engines_supported`` and ``engines_finalized`` (how many and which engines finalize for it); ``configs`` per
    heuristics mode and ``first_configs`` ({mode: heuristics' first config}); ``kinds``: {kind: distinct engines
    heuristics proposed}; ``chosen``: the first working config (engine, kind, knobs, mode, rank); on a GPU
    ``kernel_count`` and ``kernels`` of that config (None / [] offline); ``detail``: per stage, what ``why`` shows
    (filled with ``detail=True``). Offline, ``offline_gaps``: the kinds of refusal met that only the GPU decides
    (``tune.offline_gaps``), ``cuda_runtime``: the engines that did not finalize and the heuristics modes that
    consulted it because they start the CUDA runtime (``{"engines": [...], "heuristics": [...]}``, empty when none;
    ``{"observed": False}`` where this process could not see it, which the matrix's notes say), and ``caveat``:
    what the answer did not verify or could not decide, in words."""

    name: str
    family: str = "user"
    data_type: str = "-"
    layout: str = "-"
    ops: str = ""
    supported: bool = False
    stage: str | None = None
    reason: str = ""
    verified: str = ""
    engines_total: int | None = None
    engines_supported: int | None = None
    configs: dict = field(default_factory=dict)
    kinds: dict = field(default_factory=dict)
    chosen: dict | None = None
    kernel_count: int | None = None
    kernels: list = field(default_factory=list)
    kernel_error: str = ""
    operations: int = 0
    fingerprint: str = ""
    seconds: float = 0.0
    cached: bool = False
    detail: dict = field(default_factory=dict)
    engines_finalized: list = field(default_factory=list)
    first_configs: dict = field(default_factory=dict)
    offline_gaps: list = field(default_factory=list)
    caveat: str = ""
    denied: list = field(default_factory=list)  # "engine E (rule X)" of each config an errata rule denied
    cuda_runtime: dict = field(default_factory=dict)

    @property
    def key(self) -> str:
        """What tells results apart: ``"name [data type layout]"`` (a catalogue entry's key)."""
        return f"{self.name} [{self.data_type} {self.layout}]"

    @property
    def unknown(self) -> bool:
        """Whether offline could not decide: refused for a fact only the GPU gives (``offline_gaps``)."""
        return not self.supported and bool(self.offline_gaps)

    @property
    def verdict(self) -> str:
        """"yes", "no" or "unknown offline" (``VERDICTS``)."""
        return "yes" if self.supported else (UNKNOWN_OFFLINE if self.unknown else "no")

    @property
    def status(self) -> str:
        """"yes" (a plan built), "yes*" (a runtime-compiled config finalized; its plan not compiled), "unknown
        offline" (refused for a fact only the GPU gives: the GPU may run it), or the stage that refused it ("no:
        heuristics")."""
        if self.supported:
            return "yes" if self.verified == "plan" else "yes*"
        if self.unknown:
            return UNKNOWN_OFFLINE
        return f"no: {self.stage}"

    def to_dict(self) -> dict:
        """The result as JSON-able plain data (with its ``status``); ``from_dict`` reads it back."""
        d = asdict(self)
        d["status"] = self.status
        return d

    @classmethod
    def from_dict(cls, d: dict) -> "SupportResult":
        """A result from ``to_dict`` output (unknown keys ignored); a ValueError naming the field whose value is not
        of its type (a file edited by hand, or another program's)."""
        if not isinstance(d, dict):
            raise ValueError(f"expected a probe result (a JSON object), not {type(d).__name__}")
        if "name" not in d:
            raise ValueError("name: missing")
        kept = {}
        for f in fields(cls):
            if f.name in d:
                kept[f.name] = _typed(f.name, d[f.name], f.type)
        stage = kept.get("stage")
        if stage is not None and stage not in STAGES:
            raise ValueError(f"stage: {stage!r} is not one of {', '.join(STAGES)} (or null: supported)")
        counts = [(f"{name}.{k}", v) for name in ("configs", "kinds") for k, v in kept.get(name, {}).items()]
        counts += [(f"first_configs.{k}.engine", v.get("engine") if isinstance(v, dict) else v)
                   for k, v in kept.get("first_configs", {}).items()]
        counts += [(f"engines_finalized[{i}]", v) for i, v in enumerate(kept.get("engines_finalized", []))]
        for where, v in counts:  # counts and engine indexes
            if isinstance(v, bool) or not isinstance(v, int):
                raise ValueError(f"{where}: expected an int, not {type(v).__name__}")
        for name in ("kernels", "denied", "offline_gaps"):  # words, joined in tables and CSV rows
            bad = next((i for i, v in enumerate(kept.get(name, [])) if not isinstance(v, str)), None)
            if bad is not None:
                raise ValueError(f"{name}[{bad}]: expected a str, not {type(kept[name][bad]).__name__}")
        if not math.isfinite(kept.get("seconds", 0.0)):
            raise ValueError(f"seconds: expected a finite number, not {kept['seconds']!r}")
        control = control_character_at(kept, lines=True)
        if control is not None:  # (tables print the results to terminals: an escape sequence would act there)
            raise ValueError(f"{control[0]}: control character {control[1]!r}")
        return cls(**kept)

    def row(self) -> dict:
        """The result as one flat row (the table's and the CSV's columns)."""
        c = self.chosen or {}
        return {
            "family": self.family, "graph": self.name, "data_type": self.data_type, "layout": self.layout,
            "status": self.status, "stage": self.stage or "",
            "engines": "-" if self.engines_total is None else f"{self.engines_supported}/{self.engines_total}",
            "configs_A": self.configs.get("A", ""), "configs_FALLBACK": self.configs.get("FALLBACK", ""),
            "kinds": " ".join(f"{k}:{n}" for k, n in self.kinds.items()),
            "engine": "" if not c else c.get("engine"), "engine_kind": c.get("kind", ""),
            "kernels": "" if self.kernel_count is None else self.kernel_count,
            "kernel_names": " ".join(self.kernels), "reason": self.reason, "caveat": self.caveat,
            "denied": ", ".join(self.denied),
        }


def call_builder(builder, kwargs):
    """The graph object a builder makes (a pattern name, "FILE.py:FUNC", "module:FUNC" or a callable), unfinalized
    where the builder takes ``build=``."""
    fn = builder if callable(builder) else (PATTERNS.get(builder) or graphs.load_builder(builder))
    kw = dict(kwargs or {})
    if "build" not in kw:
        try:
            if "build" in inspect.signature(fn).parameters:
                kw["build"] = False
        except (TypeError, ValueError):
            pass
    return fn(**kw)


def _refusal_stage(error) -> str:
    """The stage an exception raised while building a graph belongs to."""
    if isinstance(error, CudnnVersionError):
        return "unavailable"
    if isinstance(error, (GraphError, CudnnUnsafeCallError)):
        return "checks"
    if isinstance(error, CudnnError):
        return "finalize"
    return "builder"


def _message(error) -> str:
    text = " ".join(str(error).split())
    text = text.split(" hint: ")[0]
    return f"{type(error).__name__}: {text}"[:600]


def materialize(graph, kwargs=None, handle=None):
    """(Graph or None, finalized operation graph or None, stage, error) for a graph, Pattern, finalized operation
    graph or builder: building, the package's checks and cuDNN's finalize kept apart, so the stage that refused
    it is known."""
    obj = graph
    if isinstance(graph, str) or (callable(graph) and not isinstance(graph, (Graph, Pattern, Descriptor))):
        try:
            obj = call_builder(graph, kwargs)
        except BaseException as e:  # noqa: BLE001 - the builder's failure is the probe's answer
            if graphs.stops_the_work(e):
                raise
            return None, None, _refusal_stage(e), e
    if isinstance(obj, Pattern):
        obj = obj.graph
    if obj is graph and not isinstance(graph, (Graph, Pattern, Descriptor)):
        return None, None, "builder", graphs.not_a_graph(graph)
    if isinstance(obj, Descriptor):
        try:
            _engines.check_graph(obj, "graph")
        except (TypeError, ValueError) as e:
            return None, None, "builder", e
        return None, obj, None, None
    if not isinstance(obj, Graph):
        return None, None, "builder", TypeError(f"the builder returned a {type(obj).__name__}, not a Graph, a "
                                                "Pattern or a finalized operation graph")
    if obj.op_graph is not None:
        return obj, obj.op_graph, None, None
    try:
        obj.check()
    except (GraphError, CudnnUnsafeCallError) as e:
        return obj, None, "checks", e
    try:
        return obj, obj.build(handle, check=False), None, None
    except CudnnBackendError as e:
        return obj, None, _refusal_stage(e), e


def graph_labels(operations) -> tuple:
    """(data type label, layout label) of a graph from its first operation's first real input: its data type
    (fp16, bf16, fp32, fp8_e4m3, int8, ...) and layout (nhwc / nchw for 4-d and wider tensors by their strides, "row"
    for others)."""
    try:
        ops = topological_order(operations)
    except Exception:  # noqa: BLE001 - a graph we cannot order: its own order
        ops = list(operations)
    for op in ops:
        for _, t, out in tensor_slots(op):
            uid, dims, strides, dt, virtual, by_value = signature_of(t)
            if out or virtual or by_value:
                continue
            label = "-" if dt is None else data_type_name(dt)
            layout = "row"
            if len(dims) >= 4 and len(strides) == len(dims):
                layout = "nhwc" if strides[1] == 1 and dims[1] > 1 else "nchw"
            return label, layout
    return "-", "-"


def _stage_reason(messages, fallback="", limit=3) -> str:
    """cuDNN's first informative reasons of a captured log, on one line (``cudnn_explanations``)."""
    found = cudnn_explanations(messages, limit)
    return "; ".join(f"{status}: {reason}" for status, reason in found) if found else fallback


def check_modes(modes) -> tuple:
    """The heuristics modes a probe counts, in ``MODES`` order: A and FALLBACK always (their configs are tried), and
    B when given (ValueError naming ``modes`` for anything else)."""
    if isinstance(modes, str):
        modes = [m.strip() for m in modes.split(",") if m.strip()]
    try:
        given = {str(m).upper() for m in modes}
    except TypeError:
        raise TypeError(f"modes: expected heuristics mode names ({', '.join(MODES)}), not {type(modes).__name__}") \
            from None
    unknown = sorted(given - set(MODES))
    if unknown:
        raise ValueError(f"modes: {', '.join(unknown)} is not one of {', '.join(MODES)}")
    given |= set(_MODES)
    return tuple(m for m in MODES if m in given)


_SUPPORT = SupportOptions()  # the defaults of the support matrix's options


@flags_checked
def probe_graph(graph, device_profile=None, *, handle=None, kwargs=None, plans=_SUPPORT.plans, kernels=False,
          detail=False, allow_version_mismatch=None, entry: CatalogueEntry | None = None,
          modes=_MODES, errata=None) -> SupportResult:
    """One graph through every stage (see the module's notes) -> ``SupportResult``.

    ``graph``: a ``Graph``, ``Pattern``, finalized operation graph, pattern name or "FILE.py:FUNC" (called with
    ``kwargs``). Offline ``device_profile`` (a DeviceProfile, bundled name or file) is the target; on a GPU pass
    ``handle`` (``kernels=True`` runs the first working config once and names its kernels). ``plans``: "precompiled"
    (offline default), "all" or "none" (on a GPU plans are always built). ``detail=True`` keeps, per stage, cuDNN's
    log and each engine's and config's refusal (what ``why`` prints). ``modes``: the heuristics modes counted
    (``check_modes``: A and FALLBACK, and B when given). ``errata`` (``runtime.errata.resolve``: None is
    ``$CUDNN_ERRATA_JSON_FILE``): a config a rule denies is not tried (``denied`` lists it with the rule)."""
    plans = SupportOptions.check("plans", plans)
    modes = check_modes(modes)
    if handle is None and device_profile is None and _device.gpu_available():
        raise ValueError("probe_graph: on a GPU pass handle= (or a device_profile= to probe another GPU offline)")
    t0 = time.perf_counter()
    e = entry
    r = SupportResult(name=e.name if e else (graph if isinstance(graph, str) else getattr(graph, "name", "graph")),
                      family=e.family if e else "user", data_type=e.data_type if e else "-",
                      layout=e.layout if e else "-", ops=e.ops if e else "")
    dp = None if device_profile is None else as_deviceprop(graphs.device_profile(device_profile), allow_version_mismatch)
    try:
        _probe(r, graph, kwargs, dp, handle, plans, kernels, detail, modes, _errata.resolve(errata))
    finally:
        r.seconds = time.perf_counter() - t0
    return r


def _config_summary(c) -> dict:
    return {"engine": c.engine_index, "knobs": {_engines.short_name(k): int(v) for k, v in c.knobs.items()}}


def _offline_gaps(r, met, silent, lists, operations, release, *, runtime):
    """Record on ``r`` what offline could not decide (``offline_gaps``, ``cuda_runtime``: ``offline_labels``) and say
    so (``caveat``): the refusals cuDNN's messages ``met`` name (else the ``silent`` ones), the steps that started the
    CUDA ``runtime`` (None: not observable here), heuristics' ``lists``."""
    r.offline_gaps, record = offline_labels(gaps_in(met) or silent, runtime, r.engines_finalized.__contains__,
                                            supported=r.supported, release=release, lists=lists,
                                            operations=operations)
    # not observable: the process's fact, not the graph's: recorded, said by the matrix's notes
    r.cuda_runtime = {"observed": False} if record is None else record
    r.caveat = _offline_caveat(r, r.offline_gaps, release)


def _offline_caveat(r, gaps, release) -> str:
    """What an offline answer did not verify (a runtime-compiled config not compiled) or could not decide (a refusal
    only the GPU decides: ``offline_gaps``), in words; "" for a plan built with nothing of the kind met."""
    parts = [gap_caveat(gaps, release, refused=not r.supported, runtime=r.cuda_runtime)] if gaps else []
    if r.supported and r.verified == "config" and r.chosen:
        c = r.chosen
        config = f"engine {c['engine']} {' '.join(f'{k}={v}' for k, v in c['knobs'].items())}".rstrip()
        if c["kind"] == "runtime-compiled":
            parts.append(f"not verified: {config} finalized, but its kernel is compiled only when its plan is built, "
                         "which offline skips, and cuDNN's compiler may refuse it (plans='all' / --plans all compiles "
                         "it here)")
        else:
            parts.append(f"not verified: {config} finalized; no plan was built (plans='none')")
    return "; ".join(parts)


def _probe(r, graph, kwargs, dp, handle, plans, kernels, detail, modes=_MODES, rules=None):
    with cudnn_messages() as log:
        g, og, stage, error = materialize(graph, kwargs, handle)
    operations = graphs.operations_of(og) if og is not None else (g.operations if g is not None else ())
    r.operations = len(operations)
    if operations and (r.data_type == "-" or r.layout == "-"):
        dt, lay = graph_labels(operations)
        r.data_type = dt if r.data_type == "-" else r.data_type
        r.layout = lay if r.layout == "-" else r.layout
    if not r.ops and og is not None:
        r.ops = " → ".join(row["operation"] for row in graphs.describe_operations(og))
    if stage is not None:
        r.stage, r.reason = stage, _message(error)
        if stage == "finalize":
            why = _stage_reason(log)
            if why:
                r.reason += f" (cuDNN: {why})"
        if detail:
            r.detail[stage] = {"error": _message(error), "log": list(log),
                               "traceback": "".join(traceback.format_exception(type(error), error, error.__traceback__,
                                                                               limit=6)) if stage == "builder" else ""}
        return
    r.fingerprint = graph_fingerprint(og)
    if handle is not None:
        _probe_graph(r, og, dp, handle, plans, kernels, detail, modes, rules)
        return
    # offline: the rest in a copy of this process, so that the CUDA runtime's start stays observable here; only when
    # the copy's runtime asked are the steps that start it found, here (runtime_steps: the engines that did not
    # finalize, and heuristics)
    def rest():
        gap_inputs = _probe_graph(r, og, dp, handle, plans, kernels, detail, modes, rules)
        return r, gap_inputs

    (done, gap_inputs), asked = run_observed(rest)
    r.__dict__.update(done.__dict__)
    runtime = {"engines": [], "heuristics": []} if asked is False else runtime_steps(
        og, dp, MODES if detail else modes,
        engines=[i for i in range(r.engines_total or 0) if i not in r.engines_finalized])
    _offline_gaps(r, *gap_inputs, runtime=runtime)


def _probe_graph(r, og, dp, handle, plans, kernels, detail, modes, rules):
    """The stages after the graph's finalize, for ``_probe``; offline, what ``_offline_gaps`` reads: (cuDNN's messages
    met, the silent gaps, heuristics' lists, the operations' labels, the release)."""
    offline = handle is None
    # engines: how many cuDNN has for this graph, how many finalize for it
    r.engines_total = _engines.engine_count(og)
    engine_rows = []
    finalized = []  # EngineInfos of the engines that finalize (offline: read again for silent refusals)
    supported = 0
    for index in range(r.engines_total):
        if detail:  # engines that finalize (whether a config of theirs does is the heuristics' and plans' stage)
            with cudnn_messages() as elog:
                info = _engines.inspect_engine(og, index, dp, probe_configs=False)
        else:
            info = _engines.inspect_engine(og, index, dp, probe_configs=False)
        supported += info.supported
        if info.supported:
            r.engines_finalized.append(index)
            finalized.append(info)
        if detail:
            engine_rows.append({"engine": index, "supported": info.supported,
                                "kind": engine_kind(info.behavior_notes, r.operations) if info.supported else "",
                                "status": getattr(info.status, "name", info.status) if not info.supported else "",
                                "reason": info.reason, "cudnn": _stage_reason(elog) if not info.supported else ""})
    r.engines_supported = supported
    if detail:
        r.detail["engines"] = engine_rows
    # heuristics
    configs, seen = [], set()
    heur_detail = {}
    lists = {}  # offline: heuristics' configs per mode, (engine, {knob: value}), read for the offline cluster layout
    met = []  # cuDNN's messages offline, read for refusals only the GPU decides (offline_gaps)
    refused = {}  # mode -> cuDNN's refusal of the heuristics query itself (a graph it cannot rank)
    for mode in (MODES if detail else modes):
        refusal = None
        with cudnn_messages() as hlog:
            try:
                found = _heuristics.get_configs(og, mode, dp, raise_if_empty=False, errata=rules or False)
            except CudnnError as err:
                found, refusal = [], err
        if refusal is not None:  # (without words of its own, its words went to the log)
            said = "" if refusal.cudnn_message else _stage_reason(cudnn_reasons(hlog, limit=40).splitlines())
            refused[mode] = _engines.reason_of(refusal) + (f" ({said})" if said else "")
        if offline:
            met.extend(hlog)
        lists[mode] = [(c.engine_index, _config_summary(c)["knobs"]) for c in found]
        if mode in modes:
            r.configs[mode] = len(found)
            if found:
                r.first_configs[mode] = _config_summary(found[0])
        heur_detail[mode] = {"configs": len(found), "reasons": ([refused[mode]] if mode in refused else [])
                             + cudnn_reasons(hlog, limit=40).splitlines(),
                             "first": [c.engine_index for c in found[:8]]}
        if mode == "B":
            continue
        for c in found:
            if c.key not in seen:
                seen.add(c.key)
                configs.append(c)
    if detail:
        r.detail["heuristics"] = heur_detail
    kinds: dict = {}
    engines_seen = set()
    for c in configs:
        if c.engine_index not in engines_seen:
            engines_seen.add(c.engine_index)
            kind = engine_kind(c, r.operations)
            kinds[kind] = kinds.get(kind, 0) + 1
    r.kinds = {k: kinds[k] for k in KINDS if k in kinds}
    release = format_version(loaded_version())
    operations = [row["operation"] for row in graphs.describe_operations(og)] if offline else []
    silent = silent_gaps(finalized, {c.engine_index for c in configs}) if offline and not gaps_in(met) else []
    if not configs:
        r.stage = "heuristics"
        reasons = [line for m in _MODES for line in heur_detail[m]["reasons"]]
        if refused:
            r.reason = (f"cuDNN refused the heuristics query (mode{'s' * (len(refused) > 1)} "
                        f"{', '.join(refused)}): {next(iter(refused.values()))}")
        else:
            r.reason = "heuristics returned no engine config" + (
                f" (cuDNN: {_stage_reason(reasons)})" if reasons else "")
        return met, silent, lists, operations, release
    # plans
    attempts = []
    on_gpu = handle is not None
    for c in configs:
        kind = engine_kind(c, r.operations)
        summary = {"engine": c.engine_index, "kind": kind, "knobs": {_engines.short_name(k): v for k, v in c.knobs.items()},
                   "mode": _engines.short_name(c.mode) if c.mode is not None else "", "rank": c.rank}
        rule = c.denied_by  # get_configs marked it
        if rule is not None:  # never tried: shown with its rule
            r.denied.append(f"engine {c.engine_index} (rule {rule.name})")
            attempts.append(dict(summary, ok=False, stage="errata", reason=f"denied (rule {rule.name})"))
            continue
        if not on_gpu and (plans == "none" or (plans == "precompiled" and kind == "runtime-compiled")):
            r.supported, r.verified, r.chosen = True, "config", summary
            attempts.append(dict(summary, ok=True, stage="config", reason="plan not built (" + (
                "plans='none'" if plans == "none" else "runtime-compiled: plans='all' compiles it") + ")"))
            break
        with cudnn_messages() as plog:
            try:
                plan = _plans.build_plan(c, handle=handle, device_profile=dp)
            except CudnnError as err:
                attempts.append(dict(summary, ok=False, stage="plan", reason=_engines.reason_of(err),
                                     cudnn=_stage_reason(plog)))
                if offline:
                    met.extend(plog)
                    met.append(str(err))
                continue
        try:
            r.supported, r.verified, r.chosen = True, "plan", summary
            attempts.append(dict(summary, ok=True, stage="plan", reason=""))
            if kernels and on_gpu:
                try:
                    report = fusion_report(plan, handle)
                    r.kernel_count = report.kernel_count
                    r.kernels = [k.short_name for k in report.kernels]
                except BaseException as err:  # noqa: BLE001 - the kernels are extra: reported, the rest stands
                    if graphs.stops_the_work(err):
                        raise
                    r.kernel_error = _message(err)
        finally:
            plan.close()
        break
    if detail:
        r.detail["plans"] = attempts
    if not r.supported:
        r.stage = "plan"
        reasons = {}
        for a in attempts:
            reasons.setdefault(a["reason"], []).append(a["engine"])
        refused = "refused at plan build or denied by errata" if r.denied else "refused at plan build"
        r.reason = f"every config ({len(attempts)}) was {refused}: " + "; ".join(
            f"{why} (engines {', '.join(map(str, sorted(set(idx))))})" for why, idx in list(reasons.items())[:3])
    return met, silent, lists, operations, release


# ---------------------------------------------------------------------------------------------
# the cache
# ---------------------------------------------------------------------------------------------
SUPPORT_CACHE_ENV = "CUDNN_BACKEND_SUPPORT_CACHE"


def default_support_cache_path() -> pathlib.Path:
    """``$CUDNN_BACKEND_SUPPORT_CACHE``, else ``support.sqlite`` in the package's cache folder (``cache_dir``)."""
    return environment_path(SUPPORT_CACHE_ENV) or cache_dir() / "support.sqlite"


class SupportCacheWarning(UserWarning):
    """The support cache cannot be used now (a folder, a file of another kind, a path the system refuses): the
    graphs are probed without it."""


class SupportCache:
    """Probe results on disk (sqlite, WAL), keyed by graph fingerprint, cuDNN release, device (a profile's JSON,
    or a GPU's name, SM version and count), plan mode and ``PROBE_VERSION``. A corrupt or foreign file is used as
    no cache, with a warning (a ``RuntimeWarning``), never a crash."""

    LOCK_TIMEOUT_S = 30  # how long a write waits for another process's lock

    def __init__(self, path=None):
        named = file_path(path, "cache") if path is not None else environment_path(SUPPORT_CACHE_ENV)
        self.path = named or default_support_cache_path()
        # the default place's folders are made as needed; a path the caller (or the environment) names is taken as
        # given (a typo there would otherwise grow a tree of folders)
        self._named_by = "cache" if path is not None else (f"${SUPPORT_CACHE_ENV}" if named else "")
        self._make_folder = named is None
        if not self._make_folder and not self.path.parent.is_dir():
            raise ValueError(f"{self._named_by}: the folder of {str(self.path)!r} does not exist")
        self._usable = None
        self._lock = threading.Lock()

    def __repr__(self):
        return f"<SupportCache {str(self.path)!r}>"

    @contextlib.contextmanager
    def _connect(self):
        con = sqlite3.connect(str(self.path), timeout=self.LOCK_TIMEOUT_S)
        try:
            yield con
        finally:
            con.close()

    def _ready(self) -> bool:
        with self._lock:
            if self._usable is None:
                try:
                    if self._make_folder:
                        self.path.parent.mkdir(parents=True, exist_ok=True)
                    with self._connect() as con:
                        con.execute("PRAGMA journal_mode=WAL")
                        con.execute("CREATE TABLE IF NOT EXISTS results (key TEXT PRIMARY KEY, cudnn_version INTEGER "
                                    "NOT NULL, device TEXT NOT NULL, result TEXT NOT NULL, stored_at REAL NOT NULL)")
                        con.execute("SELECT key, result FROM results LIMIT 1").fetchall()
                        con.commit()
                    self._usable = True
                except (sqlite3.Error, OSError) as e:
                    named = f" ({self._named_by})" if self._named_by.startswith("$") else ""
                    warnings.warn(f"support cache {str(self.path)!r}{named} is not usable ({e}); probing without it",
                                  SupportCacheWarning, stacklevel=4)
                    self._usable = False
            return self._usable

    @staticmethod
    def key(fingerprint, cudnn_version, device, plans) -> str:
        """The key of one result: graph fingerprint, cuDNN version, device identity, plan mode, PROBE_VERSION."""
        text = json.dumps([PROBE_VERSION, fingerprint, int(cudnn_version), device, plans])
        return hashlib.sha256(text.encode()).hexdigest()

    def get_many(self, keys) -> dict:
        """{key: result dict} of the keys stored."""
        if not keys or not self._ready():
            return {}
        out = {}
        keys = list(keys)
        try:
            with self._connect() as con:
                for i in range(0, len(keys), 500):
                    chunk = keys[i:i + 500]
                    rows = con.execute(f"SELECT key, result FROM results WHERE key IN ({','.join('?' * len(chunk))})",
                                       chunk).fetchall()
                    for k, text in rows:
                        try:  # a row edited or damaged: a miss (probed again, then stored over), said once
                            d = json.loads(text)
                            SupportResult.from_dict(d)
                            out[k] = d
                        except (ValueError, TypeError, RecursionError) as e:
                            what = "nested too deeply" if isinstance(e, RecursionError) else \
                                " ".join(str(e).split())[:200]
                            warnings.warn(f"support cache {str(self.path)!r}: entry {k[:12]} is not a probe result "
                                          f"({what}); probing that graph again", SupportCacheWarning, stacklevel=3)
        except sqlite3.Error as e:
            warnings.warn(f"support cache {str(self.path)!r}: {e}; probing without it", RuntimeWarning, stacklevel=3)
            return {}
        return out

    def put_many(self, items) -> int:
        """Store ``[(key, cudnn_version, device, result dict)]``; how many were written."""
        items = list(items)
        if not items or not self._ready():
            return 0
        now = time.time()
        try:
            with self._connect() as con:
                con.executemany("INSERT OR REPLACE INTO results VALUES (?, ?, ?, ?, ?)",
                                [(k, int(v), d, json.dumps(r), now) for k, v, d, r in items])
                con.commit()
        except sqlite3.Error as e:
            warnings.warn(f"support cache {str(self.path)!r}: {e}; results not stored", RuntimeWarning, stacklevel=3)
            return 0
        return len(items)

    def clear(self) -> int:
        """Remove every stored result; how many there were."""
        if not self.path.exists() or not self._ready():
            return 0
        try:
            with self._connect() as con:
                n = con.execute("SELECT COUNT(*) FROM results").fetchone()[0]
                con.execute("DELETE FROM results")
                con.commit()
        except sqlite3.Error as e:  # (a lock held past the timeout; a file edited so that it cannot be written)
            why = f"support cache {str(self.path)!r}: could not clear it ({e})"
            if is_busy(e):
                why += f": another process held its write lock for more than {self.LOCK_TIMEOUT_S} s (timeout); try again"
            raise OSError(why) from None
        return int(n)


def _device_identity(profile, handle) -> tuple:
    """(cache identity, description dict) of what the probes target."""
    if profile is not None:
        doc = json.loads(profile.deviceprop_json)
        digest = hashlib.sha256(json.dumps(doc, sort_keys=True).encode()).hexdigest()[:16]
        return f"profile:{digest}", {"name": profile.device_name, "source": profile.source or "device profile",
                                     "sm": doc.get("deviceVer"), "sm_count": doc.get("multiProcessorCount"),
                                     "profile_cudnn_version": profile.cudnn_version, "offline": True}
    name, sm, count = _plans.device_key(handle=handle)
    return f"gpu:{name}:{sm}:{count}", {"name": name, "source": "gpu", "sm": sm, "sm_count": count, "offline": False}


MATRIX_FORMAT_VERSION = 1  # of the JSON ``SupportMatrix.to_dict`` writes
_PLAIN_TYPES = {"str": (str,), "bool": (bool,), "int": (int,), "float": (int, float), "dict": (dict,),
                "list": (list,), "None": (type(None),)}


def _typed(name, value, annotation: str):
    """``value`` when it is of the plain type ``annotation`` names (``"int | None"``; a bool is no number), else a
    ValueError naming the field ``name``."""
    kinds = [k.strip() for k in annotation.split("|")]
    types = tuple(t for k in kinds for t in _PLAIN_TYPES[k])
    if isinstance(value, types) and not (isinstance(value, bool) and "bool" not in kinds):
        return value
    raise ValueError(f"{name}: expected {' or '.join(kinds)}, not {type(value).__name__} ({str(value)[:40]!r})")


# ---------------------------------------------------------------------------------------------
# the matrix
# ---------------------------------------------------------------------------------------------
@dataclass
class SupportMatrix:
    """Probe results of a catalogue on one device and cuDNN release: ``results`` (``SupportResult``, catalogue
    order), the ``device`` ({name, source, sm, sm_count, offline}), ``cudnn_version`` ("9.19.0"), ``plans`` (the
    plan mode), ``kernels`` (whether kernel counts were measured), ``filters``, ``notes`` (duplicates dropped,
    entries filtered after building, ...), ``wall_seconds`` and how many results came from the cache."""

    results: list
    device: dict
    cudnn_version: str
    plans: str = "precompiled"
    kernels: bool = False
    filters: dict = field(default_factory=dict)
    notes: list = field(default_factory=list)
    wall_seconds: float = 0.0
    cached: int = 0
    workers: int = 1

    def __iter__(self):
        return iter(self.results)

    def __len__(self):
        return len(self.results)

    def __getitem__(self, key) -> SupportResult:
        """The result of an entry by its key (``"name [fp16 nhwc]"``) or index."""
        if isinstance(key, int):
            return self.results[key]
        for r in self.results:
            if r.key == key:
                return r
        raise KeyError(f"no entry {key!r} in this matrix")

    @property
    def supported(self) -> list:
        """The results of the supported graphs."""
        return [r for r in self.results if r.supported]

    def rows(self) -> list:
        """One flat row per graph (``SupportResult.row``): the table's and the CSV's."""
        return [r.row() for r in self.results]

    def summary(self) -> dict:
        """{family: {data type: (supported, entries)}} in catalogue order."""
        out: dict = {}
        for r in self.results:
            cell = out.setdefault(r.family, {}).setdefault(r.data_type, [0, 0])
            cell[0] += r.supported
            cell[1] += 1
        return {f: {d: tuple(c) for d, c in cols.items()} for f, cols in out.items()}

    def unknown_summary(self) -> dict:
        """{family: {data type: graphs unknown offline}}, the cells that have any."""
        out: dict = {}
        for r in self.results:
            if r.unknown:
                cols = out.setdefault(r.family, {})
                cols[r.data_type] = cols.get(r.data_type, 0) + 1
        return out

    def stage_counts(self) -> dict:
        """{"supported": n, "unknown offline": n, stage: n, ...}: how many graphs passed, how many offline could not
        decide, and how many each stage refused."""
        out = {"supported": sum(r.supported for r in self.results)}
        unknown = sum(r.unknown for r in self.results)
        if unknown:
            out[UNKNOWN_OFFLINE] = unknown
        for s in STAGES:
            n = sum(1 for r in self.results if r.stage == s and not r.unknown)
            if n:
                out[s] = n
        return out

    def legend(self) -> list:
        """What every mark means (printed under tables and written into the JSON)."""
        lines = ["yes: some engine config heuristics returned built an execution plan",
                 "yes*: a runtime-compiled config finalized; its plan was not compiled, so whether cuDNN's compiler "
                 "accepts its kernel is not verified (plans='all' / --plans all compiles it)" if self.plans != "none"
                 else "yes*: heuristics returned a config that finalized; no plan was built (plans='none')",
                 "no: <stage>: refused at that stage (" + ", ".join(STAGES) + ")",
                 f"{UNKNOWN_OFFLINE}: refused offline for a fact only the GPU gives (the caveat says which): the GPU "
                 "may run it; probe it there",
                 "engines: engines that finalize for the graph / cuDNN's engine count for it",
                 "configs: engine configs heuristics modes A and FALLBACK returned",
                 "caveat: what an offline answer did not verify or could not decide",
                 "kinds: distinct engines heuristics proposed, by kind: runtime-compiled (behavior note "
                 "RUNTIME_COMPILATION), specialized (precompiled, several operations), precompiled (one operation)"]
        if self.kernels:
            lines.append("kernels: kernels one execute of the first working config launched (1 = fully fused)")
        else:
            lines.append("kernels: measured only on a GPU (--kernels); offline nothing runs, and tables leave the "
                         "column out")
        return lines

    def to_dict(self) -> dict:
        """The matrix as JSON-able data, with its legend (``from_dict`` / ``load`` read it back)."""
        return {"format": "cudnn-backend support matrix", "version": MATRIX_FORMAT_VERSION, "device": dict(self.device),
                "cudnn_version": self.cudnn_version, "plans": self.plans, "kernels": self.kernels,
                "filters": dict(self.filters), "notes": list(self.notes), "legend": self.legend(),
                "wall_seconds": round(self.wall_seconds, 3), "cached": self.cached, "workers": self.workers,
                "results": [r.to_dict() for r in self.results]}

    @classmethod
    def from_dict(cls, d: dict) -> "SupportMatrix":
        """A matrix from ``to_dict`` output (ValueError for anything else)."""
        if not isinstance(d, dict) or d.get("format") != "cudnn-backend support matrix":
            raise ValueError("not a support matrix (expected the JSON `support --json` writes)")
        if d.get("version", MATRIX_FORMAT_VERSION) != MATRIX_FORMAT_VERSION or isinstance(d.get("version"), bool):
            raise ValueError(f"version: {d.get('version')!r} is not a version of the matrix format this package reads "
                             f"({MATRIX_FORMAT_VERSION})")

        def get(name, annotation, default):
            return _typed(name, d.get(name, default), annotation)

        plans = get("plans", "str", "precompiled")
        if plans not in PLAN_MODES:
            raise ValueError(f"plans: {plans!r} is not one of {', '.join(PLAN_MODES)}")
        results = []
        for i, r in enumerate(get("results", "list", [])):
            try:
                results.append(SupportResult.from_dict(r))
            except ValueError as e:
                raise ValueError(f"results[{i}]: {e}") from None
        notes = get("notes", "list", [])
        if not all(isinstance(n, str) for n in notes):
            raise ValueError("notes: expected a list of str")
        device = dict(get("device", "dict", {}))
        for name, annotation in (("name", "str | None"), ("source", "str | None"), ("sm", "int | None"),
                                 ("sm_count", "int | None")):
            _typed(f"device.{name}", device.get(name), annotation)
        control = control_character_at({"device": device, "cudnn_version": get("cudnn_version", "str", "?"),
                                        "notes": notes, "filters": get("filters", "dict", {})}, lines=True)
        if control is not None:
            raise ValueError(f"{control[0]}: control character {control[1]!r}")
        return cls(results, device, get("cudnn_version", "str", "?"), plans,
                   get("kernels", "bool", False), dict(get("filters", "dict", {})), list(notes),
                   float(get("wall_seconds", "float", 0.0)), get("cached", "int", 0), get("workers", "int", 1))

    @classmethod
    def load(cls, path) -> "SupportMatrix":
        """A matrix from the JSON file ``write_json`` (or ``cudnn-backend support --json``) wrote."""
        text = read_bounded_text(path, MAX_MATRIX_FILE_BYTES, "matrix", "a support matrix of every family is a few MB")
        p = file_path(path, "matrix")
        try:
            return cls.from_dict(json.loads(text))
        except ValueError as e:
            raise ValueError(f"matrix: {str(p)!r}: {e}") from None
        except RecursionError:  # json.loads on nesting deeper than the interpreter's stack
            raise ValueError(f"matrix: {str(p)!r}: nested too deeply to be a support matrix") from None
        except (TypeError, KeyError, AttributeError) as e:  # JSON, but not a matrix's
            raise ValueError(f"matrix: {str(p)!r}: not a support matrix ({type(e).__name__}: {e})") from None

    def write_json(self, path) -> pathlib.Path:
        """Write ``to_dict()`` as JSON; the path written."""
        return write_whole(path, json.dumps(json_ready(self.to_dict()), indent=1, allow_nan=False) + "\n", "json")

    def write_csv(self, path) -> pathlib.Path:
        """Write ``rows()`` as CSV (a header, one line per graph); the path written."""
        return write_csv(path, self.rows(), "csv")

    def table(self) -> str:
        """A plain-text table of every row (the command line prints a rich one)."""
        return plain_table(self.rows())

    def title(self) -> str:
        """One line: the device, where it came from, the cuDNN release, how many graphs and how many supported."""
        d = self.device
        where = "measured on the GPU" if not d.get("offline", True) else "offline, device profile"
        return (f"{d.get('name', '?')} (SM {sm_words(d.get('sm'))}, {where}) · cuDNN {self.cudnn_version} · "
                f"{len(self.results)} graphs, {sum(r.supported for r in self.results)} supported")


def plot_support_heatmap(matrix: SupportMatrix, path, *, title=None) -> pathlib.Path:
    """Family x data type heatmap of the share of supported graphs (each cell annotated supported/entries);
    a cell with no entry is grey and marked "–" (not probed, which is not "unsupported")."""
    summary = matrix.summary()
    unknown = matrix.unknown_summary()
    if not summary:
        raise ValueError("the matrix is empty: nothing to plot")
    plt = plots.pyplot()
    import numpy as np

    families = list(summary)
    order = list(_catalogue.DATA_TYPES) + ["-"]
    dtypes = [d for d in order if any(d in cols for cols in summary.values())]
    dtypes += sorted({d for cols in summary.values() for d in cols} - set(dtypes))
    values = np.full((len(families), len(dtypes)), np.nan)
    for i, f in enumerate(families):
        for j, d in enumerate(dtypes):
            if d in summary[f]:
                ok, n = summary[f][d]
                values[i, j] = ok / n
    fig, ax = plt.subplots(figsize=(1.4 + 1.1 * len(dtypes), 1.2 + 0.45 * len(families)))
    cmap = plt.get_cmap("RdYlGn").copy()
    cmap = cmap.with_extremes(bad="#d9d9d9")
    im = ax.imshow(np.ma.masked_invalid(values), cmap=cmap, vmin=0.0, vmax=1.0, aspect="auto")
    for i, f in enumerate(families):
        for j, d in enumerate(dtypes):
            text = "–" if d not in summary[f] else "{}/{}".format(*summary[f][d])
            if unknown.get(f, {}).get(d):
                text += f"\n+{unknown[f][d]}?"
            ax.text(j, i, text, ha="center", va="center", fontsize=8)
    ax.set_xticks(range(len(dtypes)))
    ax.set_xticklabels(dtypes)
    ax.set_yticks(range(len(families)))
    ax.set_yticklabels(families)
    fig.colorbar(im, ax=ax, label="share of graphs supported")
    star = "; yes* (runtime-compiled, plan not compiled) counts as supported" if matrix.plans != "all" else ""
    ax.set_title(title or f"{matrix.device.get('name', '?')}, cuDNN {matrix.cudnn_version}: supported / graphs",
                 fontsize=9)
    unsure = f"; +N?: N graphs {UNKNOWN_OFFLINE} (the GPU may run them)" if unknown else ""
    fig.text(0.01, 0.01, f"– : no graph of this family in this data type (not probed){star}{unsure}", fontsize=6)
    fig.tight_layout(rect=(0, 0.04, 1, 1))
    p = pathlib.Path(path)
    fig.savefig(p, dpi=120)
    plt.close(fig)
    return p


# ---------------------------------------------------------------------------------------------
# probing a catalogue
# ---------------------------------------------------------------------------------------------
def _probe_task(task, job, options, worker=""):
    """A worker's runner (``sweeps``' process executor): one catalogue entry probed here."""
    entry = CatalogueEntry.from_dict(options["entries"][task.label])
    handle = None
    try:
        if options.get("gpu"):
            handle = Handle()
        return probe_graph(entry.builder, options.get("device_profile"), handle=handle, kwargs=entry.kwargs,
                           plans=options.get("plans", "precompiled"), kernels=options.get("kernels", False),
                           allow_version_mismatch=options.get("allow_version_mismatch"), entry=entry,
                           modes=options.get("modes", _MODES), errata=options.get("errata") or False)
    except BaseException as e:  # noqa: BLE001 - one entry's failure never stops the others
        if graphs.stops_the_work(e):
            raise
        return SupportResult(entry.name, entry.family, entry.data_type, entry.layout, entry.ops, stage="builder",
                             reason=f"probe failed: {_message(e)}")
    finally:
        if handle is not None:
            handle.close()


def _as_entries(catalogue) -> list:
    if catalogue is None:
        return _catalogue.default_catalogue()
    if isinstance(catalogue, (str, os.PathLike)):
        return _catalogue.load_catalogue(catalogue)
    if not isinstance(catalogue, (list, tuple)):
        raise TypeError(f"catalogue: expected None (the default catalogue), a file or a list of CatalogueEntry, not "
                        f"{type(catalogue).__name__}")
    out = []
    for i, item in enumerate(catalogue):
        if isinstance(item, CatalogueEntry):
            out.append(item)
        elif isinstance(item, dict):
            out.append(CatalogueEntry.from_dict(item))
        else:
            raise TypeError(f"catalogue[{i}]: expected a CatalogueEntry, not {type(item).__name__}")
        if len(out) > _catalogue.MAX_ENTRIES:
            raise ValueError(f"catalogue: more than {_catalogue.MAX_ENTRIES} entries; split it")
    return out


def support_matrix(catalogue=None, device_profile=None, *, family=_SUPPORT.family, data_type=_SUPPORT.data_type,
                   layout=_SUPPORT.layout, name=_SUPPORT.name, plans=_SUPPORT.plans, kernels=None,
                   workers=_SUPPORT.workers, cache=True, progress=None, allow_version_mismatch=None, modes=_MODES,
                   errata=None) -> SupportMatrix:
    """Probe a catalogue -> ``SupportMatrix`` (see the module's notes).

    ``catalogue``: None (the default catalogue), a file (``catalogue.load_catalogue``) or ``CatalogueEntry``s.
    ``device_profile``: the target offline (a DeviceProfile, bundled name or file); None: this machine's GPU,
    else the bundled h200. ``family``/``data_type``/``layout``/``name``: filters (``catalogue.filter_entries``).
    ``kernels`` (GPU only; default: on when probing this GPU) runs each first working config once.
    ``workers``: CPU processes (default: one per 8 graphs, up to one per core, and one at least: a probe that crashes
    is reported as such; 1 probes in this process, where a crash ends it);
    ``cache``: True (the default cache), False, a path or a ``SupportCache``. ``progress(done, total, text)``.
    ``modes``: the heuristics modes counted per graph (``check_modes``). ``errata`` (``runtime.errata.resolve``:
    None is ``$CUDNN_ERRATA_JSON_FILE``): configs its rules deny are not tried, each result lists them (``denied``);
    results are cached per errata file content."""
    t0 = time.perf_counter()
    progress = progress_callback(progress)
    rules = _errata.resolve(errata)
    checked = SupportOptions(family=family, data_type=data_type, layout=layout, name=name, plans=plans,
                             workers=workers)
    plans, workers = checked.plans, checked.workers
    modes = check_modes(modes)
    entries = _as_entries(catalogue)
    total_given = len(entries)
    entries = _catalogue.filter_entries(entries, family=family, data_type=data_type, layout=layout, name=name)
    filters = {k: v for k, v in (("family", family), ("data_type", data_type), ("layout", layout), ("name", name))
               if v is not None}
    if not entries:
        raise ValueError(f"no catalogue entry to probe: the catalogue has {total_given} entr"
                         f"{'y' if total_given == 1 else 'ies'}" + (f" and none passes the filters {filters}"
                                                                     if filters else ""))
    notes = []
    unique, seen = [], set()
    for e in entries:
        if e.key in seen:
            continue
        seen.add(e.key)
        unique.append(e)
    if len(unique) < len(entries):
        notes.append(f"{len(entries) - len(unique)} duplicate entr{'y' if len(entries) - len(unique) == 1 else 'ies'} "
                     "(same name, data type and layout) probed once")
    entries = unique
    on_gpu = device_profile is None and _device.gpu_available()
    profile = None if on_gpu else graphs.device_profile(device_profile or "h200")
    if isinstance(profile, Descriptor):
        raise TypeError("device_profile: pass a DeviceProfile, a bundled name or a file (a DEVICEPROP descriptor "
                        "cannot be sent to worker processes)")
    if profile is not None and allow_version_mismatch is not None:
        profile = DeviceProfile(profile.deviceprop_json, profile.cudnn_version, profile.source,
                                allow_version_mismatch=bool(allow_version_mismatch))
    kernels = on_gpu if kernels is None else bool(kernels)
    if kernels and not on_gpu:
        raise ValueError("kernels: kernel counts are measured by running the plans on this machine's GPU; offline "
                         "(a device profile, or no GPU) there is nothing to run")
    handle = Handle() if on_gpu else None
    try:
        if profile is not None:
            as_deviceprop(profile)  # refuse a profile this cuDNN cannot take now, not once per entry
        identity, device = _device_identity(profile, handle)
        version = loaded_version()
        store = None if cache is False or cache is None else (cache if isinstance(cache, SupportCache) else
                                                              SupportCache(None if cache is True else cache))
        plan_mode = ("gpu" if on_gpu else plans) + ("" if modes == _MODES else "+" + ",".join(modes)) \
            + f"+errata:{rules.digest[:16]}"
        results: list = [None] * len(entries)
        in_process = workers is not None and cpu_workers(workers, len(entries)) <= 1
        # the graphs' fingerprints key the cache (hits need nothing else): built where the probes are, so that a
        # builder or a finalize that crashes takes a worker down (its probe then says so), never this process
        fingerprints = _fingerprints(entries, handle, in_process, workers, on_gpu) if store is not None else []
        keys = [SupportCache.key(fp, version, identity, plan_mode) if fp else None for fp in fingerprints] or \
            [None] * len(entries)
        hits = store.get_many([k for k in keys if k]) if store is not None else {}
        todo = []
        for i, (e, k) in enumerate(zip(entries, keys)):
            if k in hits:
                r = SupportResult.from_dict(hits[k])
                r.name, r.family, r.cached = e.name, e.family, True
                r.data_type = e.data_type if e.data_type != "-" else r.data_type
                r.layout = e.layout if e.layout != "-" else r.layout
                r.ops = e.ops or r.ops
                results[i] = r
            else:
                todo.append(i)
        cached = len(entries) - len(todo)
        if progress is not None and cached:
            progress(cached, len(entries), f"{cached} from the cache")
        n_workers = _worker_count(workers, len(todo))
        options = {"device_profile": profile, "plans": plans, "kernels": kernels, "gpu": on_gpu,
                   "allow_version_mismatch": allow_version_mismatch, "modes": modes, "errata": rules,
                   "entries": {entries[i].key: entries[i].to_dict() for i in todo}}

        def keep(result):
            """Store a result as it arrives (an interrupted run keeps what it probed)."""
            if store is not None and isinstance(result, SupportResult) and result.fingerprint:
                store.put_many([(SupportCache.key(result.fingerprint, version, identity, plan_mode), version,
                                 identity, result.to_dict())])

        if in_process:  # asked for: probed here (a crash then ends the process)
            for done, i in enumerate(todo, 1):
                e = entries[i]
                results[i] = probe_graph(e.builder, None if on_gpu else profile, handle=handle, kwargs=e.kwargs,
                                         plans=plans, kernels=kernels, allow_version_mismatch=allow_version_mismatch,
                                         entry=e, modes=modes, errata=rules or False)
                keep(results[i])
                if progress is not None:
                    progress(cached + done, len(entries), e.key)
        elif todo:
            order = sorted(todo, key=lambda i: -_cost_estimate(entries[i]))
            tasks = [entries[i].task for i in order]

            def relay(done, total, result):
                keep(result)
                if progress is not None:
                    progress(cached + done, len(entries), getattr(result, "key", ""))

            out = _run_processes(tasks, "given", "support", options, _pins(n_workers, on_gpu), relay,
                                 time.perf_counter(), runner=_probe_task)
            for i, res in zip(order, out):
                e = entries[i]
                if isinstance(res, TaskResult):  # the worker died while probing this entry
                    res = SupportResult(e.name, e.family, e.data_type, e.layout, e.ops, stage="crash",
                                        reason=f"the probe crashed: {res.error}")
                results[i] = res
        results = [r for r in results if r is not None]
        kept = [r for r in results if _catalogue.label_matches(r.data_type, r.layout, data_types=data_type,
                                                               layouts=layout)]
        if len(kept) < len(results):
            notes.append(f"{len(results) - len(kept)} graph(s) whose data type or layout was known only once built "
                         "did not pass the filters and were left out")
        denied = sum(len(r.denied) for r in kept)
        if len(rules) or denied:  # a file's rules, or the package's known errata at work
            honoured = str(rules) if len(rules) else "the package's known errata"
            notes.append(f"{honoured}: honoured, {denied} config(s) denied (each result's denied column names them)")
        unobserved = sum(r.cuda_runtime.get("observed") is False for r in kept)
        if unobserved:  # a fact of the process, not of each graph: said once
            notes.append(f"{unobserved} graph(s) probed here: {RUNTIME_UNOBSERVED}")
        return SupportMatrix(kept, device, format_version(version), plans if not on_gpu else "all", kernels, filters,
                             notes, time.perf_counter() - t0, cached, max(1, n_workers))
    finally:
        if handle is not None:
            handle.close()


def _pins(n_workers, on_gpu) -> list:
    """The device of each worker process: the first visible GPU for each (probes on a GPU), else none."""
    return [os.environ.get("CUDA_VISIBLE_DEVICES", "0").split(",")[0]] * n_workers if on_gpu else [None] * n_workers


def _fingerprints(entries, handle, in_process, workers, on_gpu) -> list:
    """The fingerprint of each entry's graph (None: it does not build), made here or in worker processes."""
    if in_process:
        return [_fingerprint_of(e, handle) for e in entries]
    options = {"gpu": on_gpu, "entries": {e.key: e.to_dict() for e in entries}}
    got = _run_processes([e.task for e in entries], "given", "support", options,
                         _pins(_worker_count(workers, len(entries)), on_gpu), None, time.perf_counter(),
                         runner=_fingerprint_task)
    return [fp if isinstance(fp, str) else None for fp in got]  # (a worker that died: probed, and said, below)


def _fingerprint_of(entry, handle) -> str | None:
    """The fingerprint of a catalogue entry's graph, None where it does not build."""
    _, og, _, _ = materialize(entry.builder, entry.kwargs, handle)
    return graph_fingerprint(og) if og is not None else None


def _fingerprint_task(task, job, options, worker=""):
    """A worker's runner: the fingerprint of one catalogue entry's graph, None where it does not build."""
    entry = CatalogueEntry.from_dict(options["entries"][task.label])
    handle = Handle() if options.get("gpu") else None
    try:
        return _fingerprint_of(entry, handle)
    except BaseException as e:  # noqa: BLE001 - the probe says what went wrong
        if graphs.stops_the_work(e):
            raise
        return None
    finally:
        if handle is not None:
            handle.close()


def _worker_count(workers, todo) -> int:
    """Worker processes: ``workers`` (checked; 1 probes in this process), else one per 8 graphs up to the cores, and
    one at least, so that a probe that crashes is reported as a "crash" result and the rest go on."""
    if workers is not None:
        return cpu_workers(workers, todo)
    if todo <= 8:
        return 1
    return max(1, min(os.cpu_count() or 1, math.ceil(todo / 8)))


def _cost_estimate(entry) -> float:
    """Roughly how long an entry's probe takes (slow ones are handed out first, so no worker finishes last)."""
    heavy = {"conv_dgrad": 3.0, "conv_fwd": 2.0, "conv_wgrad": 1.5, "sdpa_composite": 2.0}
    return heavy.get(entry.family, 1.0) + 0.1 * len(entry.kwargs.get("chain", ()) or ())


# ---------------------------------------------------------------------------------------------
# comparisons
# ---------------------------------------------------------------------------------------------
@dataclass
class SupportComparison(ChangeRows):
    """Two matrices side by side: ``rows`` (one per entry in either: key, status in each, engine and config
    counts in each, ``change``: gained, lost, unknown (one side could not decide offline), counts changed, same,
    only in A, only in B), and their labels."""

    a: SupportMatrix
    b: SupportMatrix
    label_a: str
    label_b: str
    rows: list

    @property
    def gained(self) -> list:
        """The rows of graphs supported in B only."""
        return self.of("gained")

    @property
    def lost(self) -> list:
        """The rows of graphs supported in A only."""
        return self.of("lost")

    def to_dict(self) -> dict:
        """The comparison as JSON-able data: both labels, devices, releases, counts and rows."""
        return {"format": "cudnn-backend support comparison", "a": self.label_a, "b": self.label_b,
                "a_matrix": {"device": self.a.device, "cudnn_version": self.a.cudnn_version},
                "b_matrix": {"device": self.b.device, "cudnn_version": self.b.cudnn_version},
                "counts": self.counts(), "rows": self.rows}

    @flags_checked
    def table(self, changed_only=True) -> str:
        """A plain-text table of the rows (the changed ones unless ``changed_only=False``)."""
        rows = [r for r in self.rows if not changed_only or r["change"] != "same"]
        return plain_table(rows)


def compare_matrices(a: SupportMatrix, b: SupportMatrix, label_a="A", label_b="B") -> SupportComparison:
    """Every entry of either matrix: gained (supported in B only), lost (in A only), unknown (one side is unknown
    offline: neither gained nor lost can be said), "counts" (supported in both, engine or config counts differ, or
    the kernel count of the first working config where both matrices ran it on a GPU), same, only in A, only in B."""
    index_b = {r.key: r for r in b.results}
    rows = []
    for ra in a.results:
        rb = index_b.pop(ra.key, None)
        rows.append(_comparison_row(ra, rb))
    for rb in index_b.values():
        rows.append(_comparison_row(None, rb))
    return SupportComparison(a, b, label_a, label_b, rows)


def _counts(r) -> str:
    if r is None or r.engines_total is None:
        return "-"
    return f"{r.engines_supported}/{r.engines_total} e, {r.configs.get('A', 0)}+{r.configs.get('FALLBACK', 0)} c"


def _comparison_row(ra, rb) -> dict:
    any_r = ra or rb
    if ra is None:
        change = "only in B"
    elif rb is None:
        change = "only in A"
    elif ra.unknown != rb.unknown:  # one side could not decide offline: no gain or loss can be claimed
        change = "unknown"
    elif ra.supported and not rb.supported:
        change = "lost"
    elif rb.supported and not ra.supported:
        change = "gained"
    elif (ra.engines_supported, ra.engines_total, ra.configs, ra.stage) != (rb.engines_supported, rb.engines_total,
                                                                            rb.configs, rb.stage) or \
            None not in (ra.kernel_count, rb.kernel_count) and ra.kernel_count != rb.kernel_count:
        change = "counts"
    else:
        change = "same"
    return {"family": any_r.family, "graph": any_r.name, "data_type": any_r.data_type, "layout": any_r.layout,
            "change": change, "A": "-" if ra is None else ra.status, "B": "-" if rb is None else rb.status,
            "A counts": _counts(ra), "B counts": _counts(rb),
            "A kernels": None if ra is None else ra.kernel_count, "B kernels": None if rb is None else rb.kernel_count,
            "A engine": "" if ra is None or not ra.chosen else ra.chosen.get("engine"),
            "B engine": "" if rb is None or not rb.chosen else rb.chosen.get("engine"),
            "reason": (rb.reason if change == "lost" and rb is not None else
                       ra.reason if change == "gained" and ra is not None else
                       next(r.caveat for r in (ra, rb) if r.unknown) if change == "unknown" else "")}




def _package_root() -> str:
    return str(pathlib.Path(__file__).resolve().parent.parent.parent)


def _release_path(library) -> pathlib.Path:
    """The libcudnn.so.9 of a release spec (``_loader.release_library``: a file, a folder, "9.28.1", "default")."""
    found = release_library(library)
    if found is None:
        raise ValueError("release: 'default' is the cuDNN this process loads; give None for it here")
    return pathlib.Path(found)


def _matrix_in_process(library, device_profile, options, timeout) -> SupportMatrix:
    """A matrix probed in a child process with ``CUDNN_BACKEND_LIBCUDNN=library`` (None: the default cuDNN)."""
    env = dict(os.environ)
    if library is not None:
        env["CUDNN_BACKEND_LIBCUDNN"] = str(_release_path(library))
    env["PYTHONPATH"] = os.pathsep.join([_package_root(), *[p for p in [env.get("PYTHONPATH")] if p]])
    with tempfile.TemporaryDirectory(prefix="cudnn-backend-support-") as tmp:
        out = pathlib.Path(tmp) / "matrix.json"
        cmd = [sys.executable, "-m", "cudnn_backend", "support", "--quiet", "--json", str(out), "--rows", "none"]
        if device_profile is not None:
            if isinstance(device_profile, DeviceProfile):
                path = pathlib.Path(tmp) / "profile.json"
                device_profile.save(path)
                device_profile = str(path)
            cmd += ["--device-profile", str(device_profile)]
        for key, value in options.items():
            if value is None or value is False:
                continue
            flag = SupportOptions.cli_flag(key) if key in SupportOptions.field_names() else \
                f"--{key.replace('_', '-')}"
            cmd += [flag] + ([] if value is True else [str(value)])
        try:
            done = subprocess.run(cmd, env=env, capture_output=True, text=True, timeout=timeout)
        except subprocess.TimeoutExpired:
            raise CudnnBackendError(f"probing with {library or 'the default cuDNN'} took longer than {timeout} s "
                                    "(timeout=); nothing compared") from None
        if done.returncode != 0 or not out.is_file():
            tail = (done.stderr or done.stdout).strip().splitlines()
            raise CudnnBackendError(f"probing with {library or 'the default cuDNN'} failed (exit code "
                                    f"{done.returncode}): {tail[-1] if tail else 'no output'}")
        return SupportMatrix.load(out)


def compare_support(*, profiles=None, releases=None, device_profile=None, catalogue=None, family=_SUPPORT.family,
                    data_type=_SUPPORT.data_type, layout=_SUPPORT.layout, name=_SUPPORT.name, plans=_SUPPORT.plans,
                    workers=_SUPPORT.workers, cache=True, allow_version_mismatch=None, timeout=1800,
                    progress=None) -> SupportComparison:
    """Compare support between two device ``profiles`` (probed here, one after the other) or two cuDNN
    ``releases`` (each what ``_loader.release_library`` takes: a libcudnn.so.9, a folder, "9.28.1"; or None for
    the default; each probed in its own process with
    ``CUDNN_BACKEND_LIBCUDNN``, against ``device_profile``). The catalogue, filters and options are
    ``support_matrix``'s."""
    progress = progress_callback(progress)
    if (profiles is None) == (releases is None):
        raise ValueError("compare_support: give profiles=(A, B) or releases=(A, B)")
    pair = profiles if profiles is not None else releases
    if isinstance(pair, (str, os.PathLike)):
        raise TypeError(f"compare_support: {'profiles' if profiles is not None else 'releases'} takes two items (A, B), "
                        "not one name")
    try:
        pair = list(pair)
    except TypeError:
        raise TypeError("compare_support: profiles/releases take two items") from None
    if len(pair) != 2:
        raise ValueError(f"compare_support: two items to compare, not {len(pair)}")
    common = SupportOptions(family=family, data_type=data_type, layout=layout, name=name, plans=plans,
                            workers=workers).as_kwargs()
    if profiles is not None:
        matrices = [support_matrix(catalogue, p, **common, cache=cache, progress=progress,
                                   allow_version_mismatch=allow_version_mismatch) for p in pair]
        labels = [_label(p) for p in pair]
    else:
        if catalogue is not None and not isinstance(catalogue, (str, os.PathLike)):
            raise TypeError("compare_support: releases are probed in other processes; pass the catalogue as a file")
        options = dict(common, catalogue=None if catalogue is None else os.fspath(catalogue),
                       no_cache=(cache is False) or None, cache=_cache_file(cache),
                       allow_version_mismatch=allow_version_mismatch or None)
        options = {k: (",".join(v) if isinstance(v, (list, tuple)) else v) for k, v in options.items()}
        for lib in pair:
            if lib is not None:
                _release_path(lib)  # every path checked before the first (long) probe starts
        matrices = []
        for lib in pair:
            if progress is not None:
                progress(len(matrices), 2, f"probing {lib or 'the default cuDNN'}")
            # no profile: each release probes this machine's GPU (kernel counts included), or offline the bundled
            # h200 profile, as `support` does by itself
            matrices.append(_matrix_in_process(lib, device_profile, options, timeout))
        labels = [f"cuDNN {m.cudnn_version}" for m in matrices]
        if labels[0] == labels[1]:
            labels = [f"{labels[0]} ({pathlib.Path(str(lib)).parent.parent.parent.parent.name if lib else 'default'})"
                      for lib in pair]
    return compare_matrices(matrices[0], matrices[1], labels[0], labels[1])


def _cache_file(cache) -> str | None:
    """The support cache file a child process is told (``--cache``): None for True (its default) or False (none)."""
    if cache is True or cache is False or cache is None:
        return None
    return str(cache.path if isinstance(cache, SupportCache) else SupportCache(cache).path)


def _label(profile) -> str:
    if isinstance(profile, DeviceProfile):
        return profile.device_name
    return str(profile)
