"""``python -m cudnn_backend explore``: every engine and knob cuDNN offers for a graph, and — on a
GPU — how fast each one runs.

Without a GPU the exploration runs offline against the bundled H200 device profile (heuristics,
engines, knobs, plans; no timings). With a GPU every config of heuristics A and B is built, checked
(against an fp32 torch reference where one is known: conv, conv + bias + ReLU, matmul + bias + GELU;
else against the first working config) and timed (CUDA events, median after warm-up, inputs rotated
so caches don't flatter); ``--sweep`` adds a neighbourhood search around those configs (one knob at a time),
rejecting invalid knob combinations at engine-config finalize, before any plan is built.
"""
from __future__ import annotations

import argparse
import csv
import json
import math
import statistics
import sys
import time
from dataclasses import asdict, dataclass, field

from cudnn_backend import engines as _engines
from cudnn_backend import heuristics as _heuristics
from cudnn_backend import patterns as _patterns
from cudnn_backend import plans as _plans
from cudnn_backend._errors import CudnnBackendError, CudnnError
from cudnn_backend._generated.enums import DataType
from cudnn_backend.profiles import DeviceProfile

DTYPES = {"half": DataType.CUDNN_DATA_HALF, "bfloat16": DataType.CUDNN_DATA_BFLOAT16,
          "float": DataType.CUDNN_DATA_FLOAT}
TOLERANCE = {DataType.CUDNN_DATA_HALF: 2e-2, DataType.CUDNN_DATA_BFLOAT16: 5e-2, DataType.CUDNN_DATA_FLOAT: 5e-3}


# ---------------------------------------------------------------------------------------------
# the built-in patterns and their sizes
# ---------------------------------------------------------------------------------------------
def make_pattern(name: str, dtype="half", layout="nhwc", **sizes):
    """An unbuilt Pattern: conv_bias_relu, conv, conv_dgrad, conv_wgrad, matmul_bias_gelu, layernorm."""
    p = _make_pattern(name, dtype, layout, **sizes)
    p.params.update({k: v for k, v in sizes.items() if v is not None})
    return p


def _make_pattern(name, dtype, layout, **sizes):
    dt = DTYPES[dtype] if isinstance(dtype, str) else DataType(dtype)
    conv_keys = ("n", "c", "h", "w", "k", "r", "s")
    conv = {k: v for k, v in sizes.items() if k in conv_keys and v is not None}
    conv_opts = {k: sizes[k] for k in ("padding", "stride") if sizes.get(k) is not None}
    if name == "conv_bias_relu":
        return _patterns.conv_bias_relu(**conv, **conv_opts, data_type=dt, layout=layout, build=False)
    if name == "conv":
        return _patterns.conv_fwd(**conv, **conv_opts, data_type=dt, layout=layout, build=False)
    if name == "conv_dgrad":
        return _patterns.conv_bwd_data(**conv, **conv_opts, data_type=dt, layout=layout, build=False)
    if name == "conv_wgrad":
        return _patterns.conv_bwd_filter(**conv, **conv_opts, data_type=dt, layout=layout, build=False)
    if name == "matmul_bias_gelu":
        mm = {k: sizes[k] for k in ("batch", "m", "n", "k") if sizes.get(k) is not None}
        return _patterns.matmul_bias_gelu(**mm, data_type=dt, build=False)
    if name == "layernorm":
        ln = {k: sizes[k] for k in ("tokens", "hidden") if sizes.get(k) is not None}
        return _patterns.layer_norm_fwd(**ln, data_type=dt, build=False)
    raise ValueError(f"unknown pattern {name!r}; choose from {', '.join(PATTERNS)}")


PATTERNS = ("conv_bias_relu", "conv", "conv_dgrad", "conv_wgrad", "matmul_bias_gelu", "layernorm")

# ResNet-50's convolutions (stride 1 versions): (C, K, H=W, R=S)
RESNET50_LAYERS = [
    (64, 64, 56, 1), (64, 64, 56, 3), (64, 256, 56, 1), (256, 64, 56, 1),
    (256, 128, 28, 1), (128, 128, 28, 3), (128, 512, 28, 1), (512, 128, 28, 1),
    (256, 256, 14, 3), (256, 1024, 14, 1), (1024, 256, 14, 1), (512, 512, 7, 3),
]


# ---------------------------------------------------------------------------------------------
# results
# ---------------------------------------------------------------------------------------------
@dataclass
class ConfigResult:
    source: str  # "A#0", "B#3", "sweep"
    engine: int
    knobs: dict
    numerical_notes: list = field(default_factory=list)
    behavior_notes: list = field(default_factory=list)
    workspace: int | None = None
    status: str = "untested"  # ok / plan failed / execute failed / wrong result / invalid knobs / skipped
    reason: str = ""
    time_us: float | None = None
    rel_error: float | None = None
    kernels: int | None = None
    plan_seconds: float | None = None
    speedup: float | None = None  # over heuristics A's first working pick

    def key(self):
        return (self.engine, tuple(sorted(self.knobs.items())))

    def row(self) -> dict:
        d = asdict(self)
        d["knobs"] = " ".join(f"{k}={v}" for k, v in self.knobs.items())
        d["numerical_notes"] = " ".join(self.numerical_notes)
        d["behavior_notes"] = " ".join(self.behavior_notes)
        return d


@dataclass
class Exploration:
    pattern: str
    params: dict
    device: str
    cudnn_version: str
    timed: bool
    heuristics: dict = field(default_factory=dict)  # mode -> [ConfigResult]
    engines: list = field(default_factory=list)  # rows
    results: list = field(default_factory=list)  # ConfigResult, timed ones ranked
    notes: list = field(default_factory=list)

    def best(self):
        ok = [r for r in self.results if r.status == "ok" and r.time_us is not None]
        return min(ok, key=lambda r: r.time_us) if ok else None

    def heuristics_pick(self):
        ok = [r for r in self.results if r.status == "ok" and r.source.startswith("A#")]
        return min(ok, key=lambda r: int(r.source[2:])) if ok else None

    def headroom(self) -> float | None:
        """How much faster the best config found is than heuristics A's pick (1.0: no headroom)."""
        best, pick = self.best(), self.heuristics_pick()
        if best is None or pick is None or not best.time_us:
            return None
        return pick.time_us / best.time_us

    def to_dict(self) -> dict:
        return {
            "pattern": self.pattern, "params": self.params, "device": self.device,
            "cudnn_version": self.cudnn_version, "timed": self.timed, "notes": self.notes,
            "heuristics": {m: [r.row() for r in rs] for m, rs in self.heuristics.items()},
            "engines": self.engines, "results": [r.row() for r in self.results], "headroom": self.headroom(),
        }


# ---------------------------------------------------------------------------------------------
# output
# ---------------------------------------------------------------------------------------------
def table(rows, columns, headers=None) -> str:
    """A text table (tabulate when installed)."""
    data = [[_cell(r.get(c)) for c in columns] for r in rows]
    headers = headers or columns
    try:
        from tabulate import tabulate

        return tabulate(data, headers=headers, tablefmt="simple", disable_numparse=True)
    except ImportError:
        widths = [max(len(str(h)), *(len(str(row[i])) for row in data)) if data else len(str(h))
                  for i, h in enumerate(headers)]
        lines = ["  ".join(str(h).ljust(w) for h, w in zip(headers, widths)),
                 "  ".join("-" * w for w in widths)]
        lines += ["  ".join(str(v).ljust(w) for v, w in zip(row, widths)) for row in data]
        return "\n".join(lines)


def _cell(v):
    if v is None:
        return ""
    if isinstance(v, float):
        return f"{v:.3g}" if abs(v) < 1e-2 else f"{v:.2f}"
    return v


def _progress(msg: str, quiet: bool):
    if not quiet:
        print(msg, file=sys.stderr, flush=True)


# ---------------------------------------------------------------------------------------------
# GPU side: buffers, reference, timing
# ---------------------------------------------------------------------------------------------
def _gpu_available() -> bool:
    from cudnn_backend._bindings import _loader

    if _loader.ensure_driver() != "cuda":
        return False
    try:
        import torch

        return torch.cuda.is_available()
    except ImportError:
        return False


_TORCH_DTYPES = {}


def _torch_dtype(dt):
    import torch

    if not _TORCH_DTYPES:
        _TORCH_DTYPES.update({DataType.CUDNN_DATA_HALF: torch.float16, DataType.CUDNN_DATA_BFLOAT16: torch.bfloat16,
                              DataType.CUDNN_DATA_FLOAT: torch.float32, DataType.CUDNN_DATA_DOUBLE: torch.float64,
                              DataType.CUDNN_DATA_INT32: torch.int32, DataType.CUDNN_DATA_INT64: torch.int64,
                              DataType.CUDNN_DATA_INT8: torch.int8, DataType.CUDNN_DATA_UINT8: torch.uint8,
                              DataType.CUDNN_DATA_BOOLEAN: torch.bool})
    return _TORCH_DTYPES[DataType(dt)]


class _Buffers:
    """One set of device tensors for a pattern's non-virtual tensors (inputs random, outputs poisoned)."""

    def __init__(self, pattern, seed):
        import torch

        self.by_uid = {}
        self.outputs = set(_output_uids(pattern))
        gen = torch.Generator(device="cuda").manual_seed(seed)
        for uid, t in pattern.graph.tensors.items():
            if t.get_keyword("is_virtual"):
                continue
            if t.get_keyword("is_by_value"):
                v = t.__dict__.get("scalar_value")
                self.by_uid[uid] = 1e-5 if v is None else float(v)
                continue
            dims, strides = t.get_keyword("dimensions"), t.get_keyword("strides")
            tt = torch.empty_strided(dims, strides, dtype=_torch_dtype(t.get_keyword("data_type")), device="cuda")
            if uid in self.outputs:
                tt.fill_(float("nan"))
            else:
                tt.copy_(torch.randn(dims, generator=gen, device="cuda", dtype=torch.float32) * 0.5)
            self.by_uid[uid] = tt

    def poison(self):
        for uid in self.outputs:
            self.by_uid[uid].fill_(float("nan"))


def _output_uids(pattern):
    from cudnn_backend.graph import tensor_descriptors

    out = []
    for op in pattern.graph.operations:
        for name, t, is_out in tensor_descriptors(op):
            if is_out and not t.get_keyword("is_virtual"):
                out.append(t.get_keyword("unique_id"))
    return out


def _reference(pattern, bufs):
    """An fp32 torch reference of the pattern's main output, or None where no formula is known."""
    import torch
    import torch.nn.functional as F

    p, b = pattern, bufs.by_uid
    u = lambda name: b[p.tensors[name].get_keyword("unique_id")].float()  # noqa: E731
    conv = dict(padding=p.params.get("padding", 1), stride=p.params.get("stride", 1),
                dilation=p.params.get("dilation", 1))
    if p.name == "conv_bias_relu":
        return torch.relu(F.conv2d(u("x"), u("w"), **conv) + u("bias"))
    if p.name == "conv_fwd":
        return F.conv2d(u("x"), u("w"), **conv)
    if p.name == "matmul_bias_gelu":
        mode = "tanh" if "tanh" in str(p.params.get("gelu", "tanh")) else "none"
        return F.gelu(torch.matmul(u("a"), u("b")) + u("bias"), approximate=mode)
    return None


def _main_output(pattern):
    for name in ("y", "dx", "dw", "out"):
        if name in pattern.tensors and not pattern.tensors[name].get_keyword("is_virtual"):
            return pattern.tensors[name].get_keyword("unique_id")
    outs = _output_uids(pattern)
    return outs[0] if outs else None


def _rel_error(out, ref) -> float:
    import torch

    out = out.float()
    if not torch.isfinite(out).all():
        return math.inf
    return float((out - ref).norm() / max(float(ref.norm()), 1e-30))


class _Timer:
    """Median per-call time of execute() with CUDA events, inputs rotated across buffer sets."""

    def __init__(self, handle, warmup=10, repeats=20, target_batch_us=300.0):
        import torch

        self.handle = handle
        self.stream = torch.cuda.current_stream()
        self.warmup, self.repeats, self.target = warmup, repeats, target_batch_us

    def time(self, plan, packs) -> float:
        import torch

        from cudnn_backend.execution import execute

        h = self.handle
        for i in range(self.warmup):
            execute(h, plan, packs[i % len(packs)])
        torch.cuda.synchronize()
        # calibrate a batch size so one event pair spans ~target_batch_us
        start, end = torch.cuda.Event(enable_timing=True), torch.cuda.Event(enable_timing=True)
        start.record(self.stream)
        execute(h, plan, packs[0])
        end.record(self.stream)
        end.synchronize()
        one_us = max(start.elapsed_time(end) * 1000.0, 1.0)
        batch = max(1, min(200, int(self.target / one_us)))
        samples = []
        for r in range(self.repeats):
            start.record(self.stream)
            for i in range(batch):
                execute(h, plan, packs[(r * batch + i) % len(packs)])
            end.record(self.stream)
            end.synchronize()
            samples.append(start.elapsed_time(end) * 1000.0 / batch)
        return statistics.median(samples)


def _kernel_count(handle, plan, pack):
    """Kernel nodes of one execute (cuDNN's native CUDA graph, else a stream capture)."""
    from cudnn_backend.execution import CudaGraph, NativeCudaGraphNotSupportedError, captured_kernel_count

    try:
        with CudaGraph(handle, plan, pack, instantiate=False) as g:
            return g.kernel_count()
    except NativeCudaGraphNotSupportedError:
        pass
    except Exception:  # noqa: BLE001 - a count is informative only
        return None
    try:
        return captured_kernel_count(handle, plan, pack)
    except Exception:  # noqa: BLE001
        return None


# ---------------------------------------------------------------------------------------------
# the exploration
# ---------------------------------------------------------------------------------------------
def _config_result(config, source) -> ConfigResult:
    s = _engines.config_summary(config)
    return ConfigResult(source=source, engine=s["engine"], knobs=s["knobs"], numerical_notes=s["numerical_notes"],
                        behavior_notes=s["behavior_notes"], workspace=s["workspace_size"])


def _neighbours(config, limit_per_knob=6):
    """Configs one knob away from ``config`` (each knob over up to ``limit_per_knob`` valid values)."""
    engine = _engines.config_engine(config)
    current = _engines.config_knobs(config)
    out = []
    for spec in _engines.engine_knobs(engine):
        values = list(spec.values())
        if len(values) > limit_per_knob:
            step = (len(values) - 1) / (limit_per_knob - 1)
            values = sorted({values[round(i * step)] for i in range(limit_per_knob)})
        for v in values:
            if current.get(spec.knob_type) == v:
                continue
            knobs = dict(current)
            knobs[spec.knob_type] = v
            out.append((engine, knobs))
    return out


def explore(pattern_name="conv_bias_relu", *, dtype="half", layout="nhwc", modes=("A", "B"), time_configs=None,
            sweep=False, max_configs=None, sweep_seeds=4, compile_budget_s=60.0, repeats=20, warmup=10,
            device_profile=None, quiet=False, **sizes) -> Exploration:
    """Explore one pattern; see the module doc. ``time_configs=None`` times when a GPU is there."""
    from cudnn_backend._descriptor import get_version
    from cudnn_backend._bindings._loader import format_version

    gpu = _gpu_available()
    timed = gpu if time_configs is None else (time_configs and gpu)
    pattern = make_pattern(pattern_name, dtype=dtype, layout=layout, **sizes)
    params = {"dtype": dtype, "layout": layout, **{k: v for k, v in sizes.items() if v is not None}}
    handle = None
    if gpu:
        import torch

        from cudnn_backend._descriptor import Handle

        handle = Handle()
        handle.stream = torch.cuda.current_stream().cuda_stream
        device = torch.cuda.get_device_name()
        profile = None
    else:
        profile = device_profile or DeviceProfile.bundled("h200")
        profile.check_version()  # a profile only loads into the cuDNN version that wrote it
        device = f"no GPU: offline against the {profile.device_name} profile (cuDNN {profile.cudnn_version_string})"
    ex = Exploration(pattern_name, params, device, format_version(get_version()), bool(timed))
    op_graph = pattern.build(handle)

    # heuristics rankings
    configs_by_mode = {}
    for mode in modes:
        try:
            cfgs = _heuristics.get_configs(op_graph, mode, profile)
        except CudnnBackendError as e:
            ex.notes.append(f"heuristics {mode}: {e}")
            cfgs = []
        configs_by_mode[mode] = cfgs
        ex.heuristics[mode] = [_config_result(c, f"{mode}#{i}") for i, c in enumerate(cfgs)]

    # every engine
    for info in _engines.list_engines(op_graph, profile):
        row = info.as_dict()
        ex.engines.append({
            "engine": row["engine"], "supported": row["supported"],
            "reason": "" if row["supported"] else str(row["status"] or row["reason"]),
            "numerical_notes": " ".join(row["numerical_notes"]),
            "behavior_notes": " ".join(row["behavior_notes"]),
            "knobs": " ".join(f"{k}[{lo}..{hi}/{st}]" for k, (lo, hi, st) in row["knobs"].items()),
            "knob_space": row["knob_space_size"],
        })

    # candidates: heuristics configs (deduplicated), then the neighbourhood of the best seeds
    candidates, seen = [], set()
    for mode, cfgs in configs_by_mode.items():
        for i, cfg in enumerate(cfgs):
            r = _config_result(cfg, f"{mode}#{i}")
            if r.key() not in seen:
                seen.add(r.key())
                candidates.append((cfg, r))
    if max_configs:
        candidates = candidates[:max_configs]

    if not timed:
        # plans only, no timings: against the profile without a GPU, with the handle on one
        for cfg, r in candidates:
            t0 = time.perf_counter()
            try:
                plan = _plans.build_plan(cfg, handle=handle, device_profile=profile)
                r.status, r.workspace = "plan ok", plan.workspace_size
            except CudnnBackendError as e:
                r.status, r.reason = "plan failed", _short_reason(e)
            r.plan_seconds = time.perf_counter() - t0
            ex.results.append(r)
        if handle is not None:
            handle.close()
            ex.notes.append("plans built on the GPU, not timed (--no-time)")
        else:
            ex.notes.append("no GPU: offline exploration against the bundled device profile, no timings")
        return ex
    try:
        return _timed(ex, pattern, candidates, seen, handle, dtype, sweep, sweep_seeds, compile_budget_s, repeats,
                      warmup, quiet)
    finally:
        handle.close()


def _timed(ex, pattern, candidates, seen, handle, dtype, sweep, sweep_seeds, compile_budget_s, repeats, warmup,
           quiet):
    """Build, check and time every candidate on the GPU (and the sweep's neighbours)."""

    import torch

    sets = [_Buffers(pattern, seed) for seed in range(4)]
    out_uid = _main_output(pattern)
    ref = _reference(pattern, sets[0])
    timer = _Timer(handle, warmup=warmup, repeats=repeats)
    compile_spent = 0.0
    baseline_out = None

    def run(cfg, r):
        nonlocal compile_spent, baseline_out
        from cudnn_backend.execution import VariantPack, execute

        runtime = "RUNTIME_COMPILATION" in r.behavior_notes
        if runtime and compile_spent > compile_budget_s:
            r.status, r.reason = "skipped", "compile budget spent"
            return
        t0 = time.perf_counter()
        try:
            plan = _plans.build_plan(cfg, handle=handle)
        except CudnnBackendError as e:
            r.status, r.reason = "plan failed", _short_reason(e)
            return
        finally:
            r.plan_seconds = time.perf_counter() - t0
            if runtime:
                compile_spent += r.plan_seconds
        r.workspace = plan.workspace_size
        try:
            packs = [VariantPack(plan, s.by_uid) for s in sets]
            sets[0].poison()
            execute(handle, plan, packs[0])
            torch.cuda.synchronize()
        except (CudnnBackendError, ValueError, RuntimeError) as e:
            r.status, r.reason = "execute failed", _short_reason(e)
            return
        try:
            out = sets[0].by_uid[out_uid].float()
            if ref is not None:
                r.rel_error = _rel_error(out, ref)
            elif baseline_out is None:
                baseline_out, r.rel_error = out.clone(), 0.0
            else:
                r.rel_error = _rel_error(out, baseline_out)
        except RuntimeError as e:  # e.g. a reference of another shape
            r.status, r.reason = "wrong result", _short_reason(e)
            return
        if not (r.rel_error <= TOLERANCE.get(DTYPES.get(dtype), 2e-2)):
            r.status, r.reason = "wrong result", f"relative error {r.rel_error:.3g}"
            return
        try:
            r.time_us = timer.time(plan, packs)
        except (CudnnBackendError, RuntimeError) as e:
            r.status, r.reason = "execute failed", _short_reason(e)
            return
        r.kernels = _kernel_count(handle, plan, packs[0])
        r.status = "ok"

    n = len(candidates)
    for i, (cfg, r) in enumerate(candidates):
        run(cfg, r)
        ex.results.append(r)
        _progress(f"[{i + 1}/{n}] {r.source} engine {r.engine} {r.status} "
                  f"{'' if r.time_us is None else f'{r.time_us:.2f} us'}", quiet)

    if sweep:
        seeds = sorted((r for r in ex.results if r.status == "ok"), key=lambda r: r.time_us)[:sweep_seeds]
        seed_cfgs = [cfg for cfg, r in candidates if r in seeds]
        invalid = 0
        neighbours = []
        for cfg in seed_cfgs:
            for engine, knobs in _neighbours(cfg):
                try:
                    c = _engines.make_config(engine, knobs, check=True)  # cheap: finalize only
                except (CudnnBackendError, ValueError):
                    invalid += 1
                    continue
                r = _config_result(c, "sweep")
                if r.key() in seen:
                    continue
                seen.add(r.key())
                neighbours.append((c, r))
        ex.notes.append(f"sweep: {len(neighbours)} new valid configs around {len(seed_cfgs)} seeds, "
                        f"{invalid} knob combinations rejected at engine-config finalize")
        for i, (cfg, r) in enumerate(neighbours):
            run(cfg, r)
            ex.results.append(r)
            _progress(f"[sweep {i + 1}/{len(neighbours)}] engine {r.engine} {r.status} "
                      f"{'' if r.time_us is None else f'{r.time_us:.2f} us'}", quiet)

    pick = ex.heuristics_pick()
    for r in ex.results:
        if pick is not None and r.time_us:
            r.speedup = pick.time_us / r.time_us
    ex.results.sort(key=lambda r: (r.time_us is None, r.time_us or 0.0))
    return ex


def _short_reason(e: BaseException) -> str:
    if isinstance(e, CudnnError):
        name = getattr(e.status, "name", str(e.status))
        return f"{name}: {e.cudnn_message}"[:120] if e.cudnn_message else name
    return str(e).splitlines()[0][:120]


# ---------------------------------------------------------------------------------------------
# report
# ---------------------------------------------------------------------------------------------
def report(ex: Exploration, show_engines=True) -> str:
    out = [f"pattern {ex.pattern} {ex.params}", f"device  {ex.device}; cuDNN {ex.cudnn_version}", ""]
    for mode, rows in ex.heuristics.items():
        out.append(f"heuristics {mode}: {len(rows)} configs")
        out.append(table([r.row() for r in rows[:20]], ["source", "engine", "knobs", "workspace", "numerical_notes",
                                                          "behavior_notes"]))
        if len(rows) > 20:
            out.append(f"... {len(rows) - 20} more")
        out.append("")
    if show_engines and ex.engines:
        supported = [e for e in ex.engines if e["supported"]]
        out.append(f"engines: {len(ex.engines)} for this graph, {len(supported)} supported:")
        out.append(table(supported, ["engine", "numerical_notes", "behavior_notes", "knobs", "knob_space"]))
        reasons = {}
        for e in ex.engines:
            if not e["supported"]:
                reasons.setdefault(e["reason"], []).append(str(e["engine"]))
        for reason, idx in sorted(reasons.items(), key=lambda kv: -len(kv[1])):
            out.append(f"  not supported ({reason}): engines {', '.join(idx)}")
        out.append("")
    if ex.timed:
        out.append("timed configs, fastest first (speedup over heuristics A's first working pick):")
        out.append(table([r.row() for r in ex.results], ["source", "engine", "knobs", "time_us", "speedup", "kernels",
                                                         "workspace", "rel_error", "status", "reason"]))
        h = ex.headroom()
        if h is not None:
            best = ex.best()
            out.append(f"\nbest: engine {best.engine} {best.row()['knobs']} at {best.time_us:.2f} us; "
                       f"heuristics A's pick {ex.heuristics_pick().time_us:.2f} us; headroom {h:.3f}x")
    else:
        built = sum(1 for r in ex.results if r.status == "plan ok")
        out.append(f"plans built offline: {built}/{len(ex.results)}")
        out.append(table([r.row() for r in ex.results], ["source", "engine", "knobs", "workspace", "status", "reason",
                                                         "plan_seconds"]))
    out += [""] + [f"note: {n}" for n in ex.notes]
    return "\n".join(out)


def write_csv(ex_list, path):
    rows = []
    for ex in ex_list:
        for r in ex.results:
            rows.append({"pattern": ex.pattern, **{f"param_{k}": v for k, v in ex.params.items()}, **r.row()})
    if not rows:
        return
    keys = list(dict.fromkeys(k for r in rows for k in r))
    with open(path, "w", newline="") as f:
        w = csv.DictWriter(f, fieldnames=keys)
        w.writeheader()
        w.writerows(rows)


def plot(ex: Exploration, path):
    """A bar chart of the timed configs (matplotlib, optional)."""
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    ok = [r for r in ex.results if r.time_us is not None]
    fig, ax = plt.subplots(figsize=(max(6, len(ok) * 0.25), 4))
    colors = ["tab:orange" if r.source.startswith("A#0") else ("tab:green" if r.source == "sweep" else "tab:blue")
              for r in ok]
    ax.bar(range(len(ok)), [r.time_us for r in ok], color=colors)
    ax.set_xticks(range(len(ok)))
    ax.set_xticklabels([f"e{r.engine}" for r in ok], rotation=90, fontsize=6)
    ax.set_ylabel("time per call (us)")
    ax.set_title(f"{ex.pattern} {ex.params} on {ex.device}")
    fig.tight_layout()
    fig.savefig(path, dpi=120)


def headroom_table(explorations) -> str:
    rows = []
    for ex in explorations:
        pick, best = ex.heuristics_pick(), ex.best()
        n_ok = sum(1 for r in ex.results if r.status == "ok")
        n_sweep = sum(1 for r in ex.results if r.source == "sweep" and r.status == "ok")
        rows.append({"case": f"{ex.pattern} {ex.params}", "configs_timed": n_ok, "sweep_timed": n_sweep,
                     "A_pick_us": pick.time_us if pick else None, "best_us": best.time_us if best else None,
                     "best_engine": f"{best.engine} {best.row()['knobs']}" if best else None,
                     "best_from": best.source if best else None,
                     "headroom": ex.headroom()})
    return table(rows, list(rows[0]) if rows else [])


# ---------------------------------------------------------------------------------------------
# command line
# ---------------------------------------------------------------------------------------------
def add_arguments(p: argparse.ArgumentParser):
    p.add_argument("--pattern", default="conv_bias_relu", choices=PATTERNS)
    p.add_argument("--dtype", default="half", choices=list(DTYPES))
    p.add_argument("--layout", default="nhwc", choices=["nhwc", "nchw"])
    for k in ("n", "c", "h", "w", "k", "r", "s", "padding", "stride", "batch", "m", "tokens", "hidden"):
        p.add_argument(f"--{k}", type=int, default=None)
    p.add_argument("--modes", default="A,B", help="heuristics modes to rank and time (default A,B)")
    g = p.add_mutually_exclusive_group()
    g.add_argument("--time", dest="time_configs", action="store_true", default=None, help="time configs (needs a GPU)")
    g.add_argument("--no-time", dest="time_configs", action="store_false")
    p.add_argument("--sweep", action="store_true", help="neighbourhood knob search around the fastest configs")
    p.add_argument("--max-configs", type=int, default=None)
    p.add_argument("--compile-budget", type=float, default=60.0, help="seconds for runtime-compiled plans")
    p.add_argument("--repeats", type=int, default=20)
    p.add_argument("--preset", choices=["resnet50"], help="the ResNet-50-like conv layers at batch 32 and 1")
    p.add_argument("--csv", help="write the results as CSV")
    p.add_argument("--json", help="write the results as JSON")
    p.add_argument("--plot", help="save a bar chart of the timed configs (matplotlib)")
    p.add_argument("--quiet", action="store_true", help="no progress on stderr")


def main_explore(args) -> int:
    from cudnn_backend.profiles import DeviceProfileError

    try:
        return _main_explore(args)
    except DeviceProfileError as e:
        print(f"explore: {e}\n\nWithout a GPU, exploration runs against a device profile captured with the same "
              "cuDNN version: the bundled H200 profile needs cuDNN 9.19.0 (pip install nvidia-cudnn-cu13==9.19.0.56), "
              "or capture one on a GPU with DeviceProfile.capture() and pass it to explore().", file=sys.stderr)
        return 2


def _main_explore(args) -> int:
    modes = tuple(m.strip().upper() for m in args.modes.split(",") if m.strip())
    common = dict(dtype=args.dtype, layout=args.layout, modes=modes, time_configs=args.time_configs,
                  sweep=args.sweep, max_configs=args.max_configs, compile_budget_s=args.compile_budget,
                  repeats=args.repeats, quiet=args.quiet)
    if args.preset == "resnet50":
        results = []
        for batch in (32, 1):
            for c, k, hw, rs in RESNET50_LAYERS:
                ex = explore("conv", n=batch, c=c, h=hw, w=hw, k=k, r=rs, s=rs, padding=rs // 2, **common)
                results.append(ex)
                h = ex.headroom()
                print(f"conv N{batch} C{c} K{k} {hw}x{hw} {rs}x{rs}: "
                      f"{'offline' if not ex.timed else f'headroom {h:.3f}x' if h else 'no timing'}", flush=True)
        print()
        print(headroom_table(results))
    else:
        sizes = {k: getattr(args, k) for k in ("n", "c", "h", "w", "k", "r", "s", "padding", "stride", "batch", "m",
                                               "tokens", "hidden")}
        ex = explore(args.pattern, **common, **sizes)
        results = [ex]
        print(report(ex))
        if args.plot:
            plot(ex, args.plot)
    if args.csv:
        write_csv(results, args.csv)
    if args.json:
        with open(args.json, "w") as f:
            json.dump([ex.to_dict() for ex in results], f, indent=1, default=str)
    return 0
