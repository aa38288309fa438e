"""Engine heuristics and the recommended plan-building workflow.

``get_configs(graph, "A", device_profile)`` asks cuDNN's heuristics (modes A, B, FALLBACK, INSTANT)
for engine configurations, best first, in cuDNN's order. ``build_first_plan`` is the workflow the
cuDNN developer guide recommends, in one call: query mode A (or B), take the first configuration
that builds an execution plan, fall back to mode FALLBACK when none does, and report every
configuration tried with cuDNN's reason for each failure:

    plan, report = build_first_plan(graph, device_profile=DeviceProfile.bundled("h200"))
    print(report)            # one line per config: mode, rank, engine, knobs, ok/failed, reason

Without a GPU, cuDNN's heuristics need a device profile (``profiles.DeviceProfile``); without one
they succeed but return no configs, which is raised here as ``NoDeviceError``.
"""
from __future__ import annotations

import re
import time
from dataclasses import dataclass, field, replace

from cudnn_backend._bindings.enums import AttributeName, AttributeType, DescriptorType, HeurMode
from cudnn_backend.core import device as _device
from cudnn_backend.core._coerce import as_int
from cudnn_backend.core._descriptor import Descriptor
from cudnn_backend.core._status import clear_error
from cudnn_backend.core._logging import cudnn_messages, cudnn_reasons
from cudnn_backend.core.families._build import flags_checked
from cudnn_backend.core.plain import PlainData
from cudnn_backend.errors import CudnnError, EngineError, NoDeviceError, NoWorkingPlanError, detached
from cudnn_backend.runtime import engines as _engines
from cudnn_backend.runtime import errata as _errata
from cudnn_backend.runtime.plans import build_plan, chosen_for
from cudnn_backend.runtime.profiles import as_deviceprop
from cudnn_backend.typed import EngineConfig, EngineHeuristics

__all__ = ["MODES", "heur_mode", "mode_name", "get_configs", "heuristics_configs", "build_first_plan", "Attempt",
           "PlanSearchReport", "why_no_engine", "cudnn_explanations", "engine_config_counts", "NoDeviceError",
           "NoWorkingPlanError"]

A = AttributeName
AT = AttributeType
DT = DescriptorType

#: The heuristics modes by short name: "A", "B", "FALLBACK", "INSTANT" -> ``HeurMode``.
MODES = {
    "A": HeurMode.CUDNN_HEUR_MODE_A,
    "B": HeurMode.CUDNN_HEUR_MODE_B,
    "FALLBACK": HeurMode.CUDNN_HEUR_MODE_FALLBACK,
    "INSTANT": HeurMode.CUDNN_HEUR_MODE_INSTANT,
}


def heur_mode(mode) -> HeurMode:
    """A HeurMode from "A", "B", "FALLBACK", "INSTANT", a C name, a member or an int."""
    if isinstance(mode, HeurMode) and mode != HeurMode.CUDNN_HEUR_MODES_COUNT:
        return mode
    if isinstance(mode, str):
        key = mode.strip().upper()
        if key in MODES:
            return MODES[key]
        if key in HeurMode.__members__ and key != "CUDNN_HEUR_MODES_COUNT":
            return HeurMode[key]
        raise ValueError(f"unknown heuristics mode {mode!r}; use one of {', '.join(MODES)}")
    try:
        m = HeurMode(as_int(mode, "mode"))
    except ValueError:
        raise ValueError(f"mode: unknown heuristics mode {mode!r}; use one of {', '.join(MODES)}") from None
    if m == HeurMode.CUDNN_HEUR_MODES_COUNT:
        raise ValueError("CUDNN_HEUR_MODES_COUNT is not a heuristics mode")
    return m


def mode_name(mode) -> str:
    """The short name of a heuristics mode: "A", "B", "FALLBACK" or "INSTANT"."""
    return _engines.short_name(heur_mode(mode))


def _no_device_message(what: str) -> str:
    return (f"{what}: cuDNN's heuristics returned no engine configs because no GPU is visible here "
            f"(CUDA driver: {_device.driver()}) and no device profile was given. Pass device_profile= "
            "(DeviceProfile.bundled('h200'), DeviceProfile.load('<file>.json') with a profile captured on the "
            "target GPU by DeviceProfile.capture(), or a DEVICEPROP descriptor) to choose engines for that GPU "
            "offline.")


def _results(descriptors, operation_graph, deviceprop, mode) -> list:
    """Heuristics' EngineConfig descriptors as Configs (each keeps the heuristics it was read from alive)."""
    return [_engines.Config(d, operation_graph, deviceprop, mode, rank) for rank, d in enumerate(descriptors)]


def heuristics_configs(heuristics, raise_if_empty=True) -> list:
    """The results of a finalized EngineHeuristics descriptor as Configs, in cuDNN's order."""
    if not isinstance(heuristics, Descriptor) or heuristics.descriptor_type != DT.CUDNN_BACKEND_ENGINEHEUR_DESCRIPTOR:
        raise TypeError("heuristics: expected a CUDNN_BACKEND_ENGINEHEUR_DESCRIPTOR")
    if not heuristics.finalized:
        raise ValueError("heuristics: the EngineHeuristics is not finalized; finalize it first")
    values = heuristics.values
    graph = values.get(A.CUDNN_ATTR_ENGINEHEUR_OPERATION_GRAPH)
    dp = values.get(A.CUDNN_ATTR_ENGINEHEUR_DEVICEPROP)
    mode = heur_mode(values.get(A.CUDNN_ATTR_ENGINEHEUR_MODE)
                     or heuristics.get(A.CUDNN_ATTR_ENGINEHEUR_MODE, AT.CUDNN_TYPE_HEUR_MODE)[0])
    # cuDNN's size query can overstate (83 for 74 results): Descriptor.get keeps the second call's count.
    configs = heuristics.get(A.CUDNN_ATTR_ENGINEHEUR_RESULTS, AT.CUDNN_TYPE_BACKEND_DESCRIPTOR, cls=EngineConfig)
    if not configs and dp is None and raise_if_empty and _device.driver() != "cuda":
        raise NoDeviceError(_no_device_message(f"heuristics mode {_engines.short_name(mode)}"))
    return _results(configs, graph, dp, mode)


def get_configs(operation_graph, mode="A", device_profile=None, sm_count_target=None, *,
                allow_version_mismatch=None, raise_if_empty=True, errata=None) -> list:
    """Configs from cuDNN's heuristics in ``mode`` ("A", "B", "FALLBACK", "INSTANT"), in cuDNN's order, for a
    finalized operation graph, a ``Graph`` or a ``Pattern`` (built without a handle when not built yet).

    ``device_profile`` (a DeviceProfile, DEVICEPROP descriptor, bundled name or file path) makes the
    heuristics target that GPU; it is required on a machine without a GPU (NoDeviceError otherwise).
    ``sm_count_target`` asks for configs that use at most that many SMs (cuDNN returns only the
    engines that support an SM carve-out, possibly none). ``errata`` (``runtime.errata.resolve``: None is
    ``$CUDNN_ERRATA_JSON_FILE``): each config's ``denied_by`` names the rule that denies it; none is dropped.
    """
    operation_graph = _engines.as_operation_graph(operation_graph)
    m = heur_mode(mode)
    heur = _engines.target_device(EngineHeuristics(operation_graph=operation_graph, mode=m), device_profile,
                                  sm_count_target, allow_version_mismatch)
    clear_error()
    heur.finalize()
    configs = heuristics_configs(heur, raise_if_empty)
    dp = as_deviceprop(device_profile, allow_version_mismatch)  # the one target_device aimed heuristics at
    _errata.mark(configs, _errata.resolve(errata), target=_errata.target_of(None, dp, operation_graph))
    return configs


def engine_config_counts(operation_graph, device_profile=None, modes=("A", "FALLBACK")) -> dict:
    """{mode name: number of engine configs} for each heuristics mode."""
    return {mode_name(m): len(get_configs(operation_graph, m, device_profile, raise_if_empty=False)) for m in modes}


_FRAME = re.compile(r"^[\w:.>\-\[\]]+\([^()]*\)$")  # a call on cuDNN's stack: check_for_support(), engine.finalize()
_NOISE = ("global index -1 is not found", "redirecting to", "CUDNN_INVALID_PLACE_HOLDER_ENGINE")
_STATUS = re.compile(r"(CUDNN_STATUS_\w+); Reason: (.*)$")
_ADDRESS = re.compile(r"\b0x[0-9a-fA-F]{6,}\b")


def cudnn_explanations(messages, limit=12) -> list:
    """[(status, reason)] of a captured cuDNN log, informative lines only: its conditions and sentences, not the
    calls it unwound through (``check_for_support()``), in the order cuDNN logged them, each once."""
    out = []
    for line in cudnn_reasons(messages, limit=400).splitlines():
        m = _STATUS.search(line)
        if not m:
            continue
        status, reason = m.group(1).replace("CUDNN_STATUS_", ""), m.group(2).strip()
        if _FRAME.match(reason) or reason in ("status", "false", "true") or any(n in reason for n in _NOISE):
            continue
        reason = _ADDRESS.sub("<address>", reason)  # a pointer differs from run to run: two runs would not diff
        if (status, reason) not in out:
            out.append((status, reason))
    return out[:limit]


def why_no_engine(operation_graph, device_profile=None, modes=("A", "FALLBACK")) -> str:
    """cuDNN's own reasons (its warning log) why heuristics find no viable engine configuration."""
    with cudnn_messages() as messages:
        for m in modes:
            get_configs(operation_graph, m, device_profile, raise_if_empty=False)
    return cudnn_reasons(messages) or "cuDNN gave no reason"


# ---------------------------------------------------------------------------------------------
# the recommended workflow
# ---------------------------------------------------------------------------------------------
@dataclass
class Attempt(PlainData):
    """One engine config tried by ``build_first_plan``."""

    order: int
    mode: str  # "A", "B", "FALLBACK", "INSTANT" or "prefer"
    rank: int  # position in that mode's list
    engine_index: int | None
    knobs: dict
    ok: bool
    stage: str  # "plan" when it built; else where it failed: "engine", "config", "errata", "filter", "workspace",
    # "plan" ("errata": a rule denies it, ``denied_by`` names it)
    reason: str = ""
    status: str | None = None
    workspace_size: int | None = None
    seconds: float = 0.0
    denied_by: str = ""
    config: object = field(default=None, repr=False)
    error: object = field(default=None, repr=False)

    def to_dict(self) -> dict:
        """The attempt as plain data (the config and error left out)."""
        return {
            "order": self.order, "mode": self.mode, "rank": self.rank, "engine": self.engine_index,
            "knobs": dict(self.knobs), "ok": self.ok, "stage": self.stage, "status": self.status,
            "reason": self.reason, "workspace_size": self.workspace_size, "seconds": round(self.seconds, 6),
            "denied_by": self.denied_by,
        }



@dataclass
class PlanSearchReport:
    """Every config ``build_first_plan`` tried, in order, and which one it chose."""

    attempts: list = field(default_factory=list)
    queried: dict = field(default_factory=dict)  # mode -> number of configs heuristics returned
    chosen: Attempt | None = None
    refused: dict = field(default_factory=dict)  # mode -> cuDNN's reason, where its heuristics refused the graph

    def __iter__(self):
        return iter(self.attempts)

    def __len__(self):
        return len(self.attempts)

    @property
    def failures(self) -> list:
        """The attempts that did not build a plan, in order."""
        return [a for a in self.attempts if not a.ok]

    def to_rows(self) -> list:
        """One plain dict per attempt (``Attempt.to_dict``)."""
        return [a.to_dict() for a in self.attempts]

    def plain(self) -> "PlanSearchReport":
        """A copy without the descriptors (configs), e.g. to pickle or send elsewhere."""
        attempts = [replace(a, config=None) for a in self.attempts]
        chosen = attempts[self.attempts.index(self.chosen)] if self.chosen in self.attempts else None
        return PlanSearchReport(attempts, dict(self.queried), chosen, dict(self.refused))

    def to_dataframe(self):
        """The attempts as a pandas DataFrame (pandas is optional)."""
        return _engines.to_dataframe(self.to_rows())

    def summary(self) -> str:
        """One line: how many configs were tried, what heuristics returned, which was chosen."""
        queried = ", ".join(f"{m}: {n}" + (" (refused the graph)" if m in self.refused else "")
                            for m, n in self.queried.items()) or "none"
        chosen = (f"engine {self.chosen.engine_index} {self.chosen.knobs} from mode {self.chosen.mode} "
                  f"rank {self.chosen.rank}") if self.chosen else "nothing"
        return f"{len(self.attempts)} config(s) tried (heuristics returned {queried}); chose {chosen}"

    def __str__(self):
        lines = [self.summary()]
        for a in self.attempts:
            knobs = ",".join(f"{k}={v}" for k, v in a.knobs.items()) or "-"
            verdict = "ok" if a.ok else (a.reason if a.denied_by else f"FAILED at {a.stage}: {a.reason}")
            lines.append(f"  #{a.order:<3} {a.mode:<8} rank {a.rank:<3} engine {a.engine_index!s:<4} {knobs:<40} "
                         f"{verdict}")
        return "\n".join(lines)


def _candidate_config(candidate, operation_graph, deviceprop, sm_count_target=None):
    """A user candidate (Config, EngineConfig, engine index or (index, knobs)) as (index, knobs, Config). A config
    of another graph object (even an equal one) or chosen for another device is its engine index and knobs, tried on
    this graph and device: as it is, its plan would be the other graph's, or name one device and be built for the
    other. So is any config when ``sm_count_target`` is asked for: its engine is made again with the target."""
    if isinstance(candidate, (_engines.Config, Descriptor)):
        config = _engines.as_config(candidate, "prefer")
        if config.operation_graph is operation_graph and chosen_for(config, deviceprop) and sm_count_target is None:
            return None, {}, config
        return config.engine_index, config.knobs, None
    if isinstance(candidate, int) and not isinstance(candidate, bool):
        index, knobs = candidate, {}
    elif isinstance(candidate, (tuple, list)) and len(candidate) == 2:
        index, knobs = candidate
    else:
        raise TypeError(f"prefer: takes Configs, engine indices or (index, knobs) pairs, not {candidate!r}")
    return as_int(index, "prefer: engine index", 0), _engines.normalize_knobs(knobs), None


@flags_checked
def build_first_plan(operation_graph, handle=None, device_profile=None, modes=("A",), fallback=True, *,
                     sm_count_target=None, max_workspace=None, require_numerical=(), exclude_numerical=(),
                     require_behavior=(), exclude_behavior=(), config_filter=None, prefer=(), kernel_cache=None,
                     max_attempts=None, allow_version_mismatch=None, errata=None):
    """The guide's workflow: the first config (heuristics order) that builds a plan -> ``(plan, report)``.

    Tries ``prefer`` (EngineConfigs, engine indices or ``(index, {knob: value})``; a config of another graph object
    or device by its engine index and knobs, on this graph and device) first, then the
    configs of each mode in ``modes`` (``("A",)``, ``("B",)``, ``("A", "B")``...), then, with
    ``fallback``, mode FALLBACK's. A config is skipped (and reported) when it fails the filters
    (``require_/exclude_numerical``, ``require_/exclude_behavior``, ``config_filter(cfg) -> bool``)
    or needs more than ``max_workspace`` bytes, or when a rule of ``errata`` denies it (``runtime.errata.resolve``:
    None is ``$CUDNN_ERRATA_JSON_FILE``; the attempt's ``denied_by`` names the rule); a cuDNN failure is reported
    with cuDNN's message.
    Plans are built with ``handle`` and/or the device profile (offline: the profile alone).
    Raises NoWorkingPlanError (with ``.report``) when nothing builds, NoDeviceError without GPU
    and profile.
    """
    operation_graph = _engines.as_operation_graph(operation_graph, handle=handle)
    if isinstance(modes, (str, int, HeurMode)):
        modes = (modes,)
    mode_list = [heur_mode(m) for m in _engines.user_sequence(modes, "modes", 16)]
    if isinstance(prefer, (str, bytes, dict)):  # (a str would be its characters, a dict its keys)
        raise TypeError(f"prefer: takes a list of Configs, engine indices or (index, knobs) pairs, not a "
                        f"{type(prefer).__name__}")
    prefer = _engines.user_sequence(prefer, "prefer") if prefer is not None else []
    if fallback and HeurMode.CUDNN_HEUR_MODE_FALLBACK not in mode_list:
        mode_list.append(HeurMode.CUDNN_HEUR_MODE_FALLBACK)
    if max_workspace is not None:
        max_workspace = as_int(max_workspace, "max_workspace", 0)
    if config_filter is not None and not callable(config_filter):
        raise TypeError(f"config_filter: expected a function of a Config returning a bool, not "
                        f"{type(config_filter).__name__}")
    if max_attempts is not None:
        max_attempts = as_int(max_attempts, "max_attempts", 1)
    if sm_count_target is not None:
        sm_count_target = as_int(sm_count_target, "sm_count_target", 1)
    if not mode_list and not prefer:
        raise ValueError("build_first_plan: no heuristics modes and nothing in prefer= to try")
    dp = as_deviceprop(device_profile, allow_version_mismatch)
    if dp is None and handle is None and _device.driver() != "cuda":
        raise NoDeviceError("build_first_plan: no GPU is visible here (CUDA driver: "
                            f"{_device.driver()}) and neither a handle nor a device profile was given. Pass "
                            "device_profile= (e.g. DeviceProfile.bundled('h200')) to build plans offline.")
    filters = dict(require_numerical=require_numerical, exclude_numerical=exclude_numerical,
                   require_behavior=require_behavior, exclude_behavior=exclude_behavior)
    report = PlanSearchReport()
    seen = set()
    rules = _errata.resolve(errata)
    target = _errata.target_of(handle, dp, operation_graph)

    def attempt(mode_label, rank, config, index=None, knobs=None):
        """Try one config; return the plan or None. ``config`` None: make it from (index, knobs)."""
        t0 = time.perf_counter()
        a = Attempt(order=len(report.attempts), mode=mode_label, rank=rank, engine_index=index,
                    knobs={_engines.short_name(k): v for k, v in (knobs or {}).items()}, ok=False, stage="engine")
        report.attempts.append(a)
        try:
            if config is None:
                engine = _engines.make_engine(operation_graph, index, dp, sm_count_target=sm_count_target)
                a.stage = "config"
                config = _engines.make_config(engine, knobs, check=False)
            a.config = config
            a.stage = "config"
            a.engine_index = config.engine_index
            a.knobs = {_engines.short_name(k): v for k, v in config.knobs.items()}
            key = config.key
            if key in seen:
                report.attempts.pop()  # the same config again (e.g. in A and FALLBACK): not tried twice
                return None
            seen.add(key)
            a.stage = "errata"
            denied = _errata.deny(config, rules, target=target)
            if denied is not None:
                a.denied_by = denied.name
                a.reason = f"denied (rule {denied.name})" + (f": {denied.reason}" if denied.reason else "")
                return None
            a.stage = "filter"
            why = _engines.rejection(config, **filters)
            if why is None and config_filter is not None and not config_filter(config):
                why = "rejected by config_filter"
            if why is not None:
                a.reason = why
                return None
            a.stage = "workspace"
            a.workspace_size = config.workspace_size
            if max_workspace is not None and a.workspace_size is not None and a.workspace_size > max_workspace:
                a.reason = f"workspace {a.workspace_size} bytes exceeds max_workspace={max_workspace}"
                return None
            a.stage = "plan"
            plan = build_plan(config, handle=handle, device_profile=dp, kernel_cache=kernel_cache)
            a.workspace_size = int(plan.workspace_size)
            if max_workspace is not None and a.workspace_size > max_workspace:
                a.stage = "workspace"
                a.reason = f"workspace {a.workspace_size} bytes exceeds max_workspace={max_workspace}"
                return None
            a.ok = True
            return plan
        except CudnnError as e:
            a.error, a.reason, a.status = detached(e), _engines.reason_of(e), getattr(e.status, "name", str(e.status))
            return None
        except EngineError as e:  # e.g. an engine index out of range in prefer=
            a.error, a.reason = detached(e), f"{type(e).__name__}: {e}"
            return None
        finally:
            a.seconds = time.perf_counter() - t0

    def exhausted():
        return max_attempts is not None and len(report.attempts) >= max_attempts

    for rank, candidate in enumerate(prefer):
        if exhausted():
            break
        index, knobs, config = _candidate_config(candidate, operation_graph, dp, sm_count_target)
        plan = attempt("prefer", rank, config, index, knobs)
        if plan is not None:
            report.chosen = report.attempts[-1]
            return plan, report

    for m in mode_list:
        if exhausted():
            break
        try:
            configs = get_configs(operation_graph, m, dp, sm_count_target, raise_if_empty=(handle is None),
                                  errata=rules or False)
        except CudnnError as e:  # this mode refused the graph (a value past its limits): the next mode may not
            report.queried[_engines.short_name(m)] = 0
            report.refused[_engines.short_name(m)] = _engines.reason_of(e)
            continue
        report.queried[_engines.short_name(m)] = len(configs)
        for rank, config in enumerate(configs):
            if exhausted():
                break
            plan = attempt(_engines.short_name(m), rank, config)
            if plan is not None:
                report.chosen = report.attempts[-1]
                return plan, report

    reasons = {}
    for a in report.failures:
        reasons.setdefault(a.reason, []).append(a.engine_index)
    detail = "; ".join([f"heuristics {m} refused the graph: {why}" for m, why in report.refused.items()] +
                       [f"{reason} (engines {sorted(set(e for e in idx if e is not None))})"
                        for reason, idx in list(reasons.items())[:6]]) or "heuristics returned no configs"
    raise NoWorkingPlanError(f"no engine config built an execution plan: {report.summary()}. Reasons: {detail}",
                             report)
