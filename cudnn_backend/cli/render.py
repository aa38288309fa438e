"""Everything the command line prints: rich tables sized to the terminal, with units on every number."""
from __future__ import annotations

import datetime
import math
import os
import sys

from rich import box
from rich.console import Console, Group
from rich.panel import Panel
from rich.table import Table
from rich.text import Text

from cudnn_backend.tune.results import format_bytes

__all__ = ["console", "error_console", "table", "exploration", "headroom", "sweep_table", "bench", "fusion", "cache_entries",
           "cache_entry", "profile", "info", "us", "knob_space"]

class _Console(Console):
    """A rich Console that ends quietly (exit code 0) when the reader closes the pipe (``| head``)."""

    def on_broken_pipe(self) -> None:
        self.quiet = True
        devnull = os.open(os.devnull, os.O_WRONLY)
        os.dup2(devnull, sys.stdout.fileno())
        raise SystemExit(0)


console = _Console(highlight=False)
error_console = _Console(stderr=True, highlight=False, soft_wrap=True)


def us(value, digits=2) -> str:
    return "-" if value is None else f"{value:.{digits}f} µs"


def knob_space(n: int) -> str:
    if not n:
        return "-"
    return f"{n:,}" if n < 100_000 else f"{n:.1e}"


def table(title=None, caption=None, **kw) -> Table:
    return Table(title=title, caption=caption, box=box.SIMPLE_HEAD, title_justify="left", caption_justify="left",
                 expand=False, **kw)


# ---------------------------------------------------------------------------------------------
# the graph and its exploration
# ---------------------------------------------------------------------------------------------
def graph_tables(graph: dict) -> list:
    tensors = table("tensors")
    for col in ("name", "uid", "shape", "strides", "dtype", "role"):
        tensors.add_column(col, overflow="fold", justify="right" if col == "uid" else "left")
    for t in graph.get("tensors", []):
        tensors.add_row(str(t["name"]), str(t["uid"]), "×".join(map(str, t["dims"])), str(t["strides"]),
                        t["data_type"], t["role"])
    ops = table("operations (producers first)")
    for col in ("#", "operation", "reads", "writes", "compute"):
        ops.add_column(col, overflow="fold")
    for i, o in enumerate(graph.get("operations", [])):
        ops.add_row(str(i), o["operation"], o["inputs"], o["outputs"] or "-", o["compute"])
    return [tensors, ops]


def header(ex) -> Panel:
    d = ex.device
    where = "this GPU" if d.get("source") == "gpu" else "a device profile (offline)"
    lines = [
        f"[bold]{ex.name}[/bold]",
        f"device: {d.get('name')} (SM {d.get('sm_version', 0) // 10 if d.get('sm_version') else '?'}, "
        f"{d.get('sm_count')} SMs) from {where} · cuDNN {ex.cudnn_version}",
        f"timing: {ex.measured}" if ex.timed else "timing: none (offline: plans are built, nothing runs)",
    ]
    if ex.params:
        lines.append("parameters: " + ", ".join(f"{k}={v}" for k, v in ex.params.items()))
    return Panel(Group(Text.from_markup("\n".join(lines)), *graph_tables(ex.graph)), title="graph", expand=False)


def heuristics_text(ex) -> Text:
    if ex.modes_agree:
        return Text(f"heuristics A and B agree: the same {len(ex.heuristics['A'])} configs in the same order")
    parts = [f"{m}: {len(c)} configs" + (f", first engine {c[0][0]}" if c else "") for m, c in ex.heuristics.items()]
    if ex.modes_agree is False:
        parts.append("A and B differ")
    return Text("heuristics " + "; ".join(parts))


def engines_table(ex) -> Table:
    supported = [e for e in ex.engines if e["supported"]]
    refused: dict = {}
    for e in ex.engines:
        if not e["supported"]:
            refused.setdefault(e["reason"] or "not supported", []).append(e["engine_index"])
    why = "; ".join(f"{reason}: engines {', '.join(map(str, idx))}" for reason, idx in refused.items())
    t = table(f"engines of this graph: {len(supported)} of {len(ex.engines)} supported",
              caption=(f"not supported — {why}\n" if why else "") + "knob space: the product of each knob's range; "
              "most combinations are invalid (cuDNN refuses them at engine-config finalize), which is why the sweep "
              "samples around good configs")
    for col, kw in (("engine", {"justify": "right"}), ("notes", {"overflow": "fold", "max_width": 36}),
                    ("knobs [min..max]", {"overflow": "fold"}), ("knob space", {"justify": "right"})):
        t.add_column(col, **kw)
    for e in supported:
        knobs = " ".join(f"{k['knob']}[{k['minimum']}..{k['maximum']}{'/' + str(k['stride']) if k['stride'] != 1 else ''}]"
                         for k in e["knobs"])
        notes = " ".join(e["numerical_notes"] + e["behavior_notes"])
        t.add_row(str(e["engine_index"]), notes or "-", knobs or "-", knob_space(e["knob_space"]))
    return t


def results_table(ex, top) -> Table:
    pick = ex.heuristics_pick
    shown = ex.results[:top]
    more = len(ex.results) - len(shown)
    t = table(f"configs tried ({len(ex.results)}; {_counts(ex)})",
               caption=f"{more} more rows in --csv / --json" if more > 0 else None)
    cols = [("#", "right"), ("from", "left"), ("engine", "right"), ("knobs", "left"), ("status", "left")]
    if ex.timed:
        cols += [("time", "right"), ("vs pick", "right"), ("rel. error", "right"), ("kernels", "right")]
    cols += [("workspace", "right"), ("plan build", "right"), ("reason", "left")]
    for name, justify in cols:
        t.add_column(name, justify=justify, overflow="fold", max_width=40 if name in ("reason", "knobs") else None)
    for i, r in enumerate(shown):
        style = "bold green" if ex.best is not None and r is ex.best else ("yellow" if pick is not None and r is pick
                                                                             else None)
        row = [str(i), r.label, str(r.engine_index), r.knobs_text(), r.status]
        if ex.timed:
            ratio = "-" if pick is None or pick.time_us is None or r.time_us is None else f"{pick.time_us / r.time_us:.2f}×"
            row += [us(r.time_us), ratio, "-" if r.rel_error is None else f"{r.rel_error:.1e}",
                    "-" if r.kernel_count is None else str(r.kernel_count)]
        row += [format_bytes(r.workspace_bytes), "-" if r.plan_seconds is None else f"{r.plan_seconds * 1e3:.1f} ms",
                r.reason or ""]
        t.add_row(*row, style=style)
    return t


def _counts(ex) -> str:
    return ", ".join(f"{n} {status}" for status, n in ex.counts().items())


def summary(ex) -> Text:
    best, pick = ex.best, ex.heuristics_pick
    out = Text()
    if best is not None:
        out.append(f"best: engine {best.engine_index} {best.knobs_text()} ({best.label}) {us(best.time_us)}",
                   style="bold green")
        if pick is not None and pick.time_us is not None:
            out.append(f"\nheuristics' pick ({pick.label}): engine {pick.engine_index} {pick.knobs_text()} "
                       f"{us(pick.time_us)} → headroom {ex.headroom:.3f}×", style="yellow")
        if best.kernels:
            out.append(f"\nkernels of the best config ({len(best.kernels)}): " + ", ".join(best.kernels))
    elif ex.timed:
        out.append("no config ran correctly", style="bold red")
    else:
        built = sum(1 for r in ex.results if r.plan_built)
        out.append(f"offline: {built} of {len(ex.results)} configs built a plan for {ex.device.get('name')}; "
                   "nothing was timed (no GPU here)")
    if ex.wall_seconds is not None:
        out.append(f"\nwall time: {ex.wall_seconds:.1f} s")
    return out


def exploration(ex, *, top=25, engines=True, out=None):
    out = out or console
    out.print(header(ex))
    out.print(heuristics_text(ex))
    if engines and ex.engines:
        out.print(engines_table(ex))
    out.print(results_table(ex, top))
    out.print(summary(ex))
    for note in ex.notes:
        out.print(Text("note: " + note, style="dim"))


def headroom(rows, title="best config found vs heuristics' pick") -> Table:
    t = table(title, caption="headroom: heuristics' pick time over the best correct config's (1.000: heuristics "
                              "picked the best)")
    if not rows:
        return t
    for col in rows[0]:
        t.add_column(col, overflow="fold", justify="right" if col in ("A pick us", "best us", "headroom", "wall s",
                                                                       "configs timed", "sweep timed") else "left")
    for r in rows:
        t.add_row(*["-" if v is None else (f"{v:.3f}" if isinstance(v, float) and not math.isnan(v) else str(v))
                    for v in r.values()])
    return t


def sweep_table(result) -> Table:
    rows = [r.row() for r in result.results]
    t = table(f"{result.job} of {len(rows)} graphs: {result.executor} executor, {result.workers} worker(s), "
               f"{result.wall_seconds:.1f} s{' (offline)' if result.offline else ''}")
    if rows:
        for col in rows[0]:
            t.add_column(col, overflow="fold", max_width=50 if col == "error" else None)
        for r in rows:
            t.add_row(*[str(v) for v in r.values()], style=None if r["ok"] == "yes" else "red")
    return t


def bench(report) -> None:
    console.print(Panel(Text(f"{report.name}: engine {report.engine_index} "
                             f"{' '.join(f'{k}={v}' for k, v in report.knobs.items()) or '-'} ({report.plan_source}), "
                             f"workspace {format_bytes(report.workspace_bytes)}\n{report.device.get('name')} · cuDNN "
                             f"{report.cudnn_version}\n{report.measured}"), title="bench", expand=False))
    t = table("per call")
    for col in ("case", "host median", "host min", "host max", "GPU median", "GPU min", "GPU max", "how"):
        t.add_column(col, justify="left" if col in ("case", "how") else "right")
    for c in report.cases:
        t.add_row(c.name, us(c.host_us["median"]), us(c.host_us["min"]), us(c.host_us["max"]), us(c.gpu_us["median"]),
                  us(c.gpu_us["min"]), us(c.gpu_us["max"]), c.note)
    console.print(t)


def fusion(report, title=None) -> None:
    t = table(title or (f"engine {report.engine_index} {' '.join(f'{k}={v}' for k, v in report.knobs.items())}: "
                         f"{report.kernel_count} kernel{'s' if report.kernel_count != 1 else ''} per execute "
                         f"({'all fused into one' if report.fused else 'not fused into one'}; {report.method})"))
    for col in ("#", "kernel", "grid", "block", "shared mem"):
        t.add_column(col, overflow="fold", justify="right" if col in ("#", "shared mem") else "left")
    for i, k in enumerate(report.kernels):
        t.add_row(str(i), k.short_name, "×".join(map(str, k.grid)), "×".join(map(str, k.block)),
                  format_bytes(k.shared_mem_bytes))
    console.print(t)


def cache_entries(entries, path) -> None:
    t = table(f"plan cache {path}: {len(entries)} entr{'y' if len(entries) == 1 else 'ies'}")
    for col in ("key", "graph", "device", "cuDNN", "engine", "knobs", "time", "stored"):
        t.add_column(col, overflow="fold")
    for e in entries:
        when = datetime.datetime.fromtimestamp(e.stored_at).strftime("%Y-%m-%d %H:%M")
        t.add_row(e.key[:12], str(e.info.get("name", e.fingerprint[:12])), f"{e.device_name} ({e.sm_count} SMs)",
                  e.as_dict()["cudnn_version"], str(e.engine_index),
                  " ".join(f"{k}={v}" for k, v in e.knobs.items()) or "-", us(e.time_us), when)
    console.print(t)


def cache_entry(e) -> None:
    d = e.as_dict()
    t = table(f"plan cache entry {e.key}")
    t.add_column("field")
    t.add_column("value", overflow="fold")
    for k, v in d.items():
        if k == "plan_bytes":
            v = format_bytes(v)
        elif k == "time_us":
            v = us(v)
        t.add_row(k, str(v))
    console.print(t)


def profile(p) -> None:
    props = p.properties
    t = table(f"device profile: {p.device_name} ({p.origin}; {p.source})")
    t.add_column("property")
    t.add_column("value", overflow="fold")
    for k, v in props.items():
        t.add_row(str(k), str(v))
    console.print(t)


def info(d: dict) -> None:
    t = table("cudnn-backend")
    t.add_column("what")
    t.add_column("found", overflow="fold")
    for k, v in d.items():
        if isinstance(v, dict):
            v = "\n".join(f"{name}: {text}" for name, text in v.items())
        t.add_row(k.replace("_", " "), ", ".join(v) if isinstance(v, list) else str(v))
    console.print(t)
