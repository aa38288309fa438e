"""Everything the command line prints: rich tables sized to the terminal, with units on every number.

All of it goes through the consoles ``make_console`` makes. On a terminal they take its width (or ``COLUMNS``, or
``--width``); written to a file or a pipe without either, they are wide enough that a table row stays one line
(``LOG_WIDTH``), so logs and ``grep`` see whole rows instead of cells broken into fragments.
"""
from __future__ import annotations

import datetime
import math
import os
import re
import sys

from rich import box
from rich.console import Console, Group
from rich.markup import escape
from rich.panel import Panel
from rich.table import Table
from rich.text import Text

from cudnn_backend.core.names import DATA_TYPE_NAMES
from cudnn_backend.tune.options import OPTION_SETS
from cudnn_backend.tune.results import config_words, format_bytes, knob_words, plural

__all__ = ["console", "error_console", "make_console", "configure", "console_width", "LOG_WIDTH", "table",
           "exploration", "headroom", "sweep_table", "bench", "fusion", "cache_entries", "cache_entry", "profile",
           "info", "us", "knob_space", "support_summary", "support_legend", "support_rows", "support_reasons",
           "support_comparison", "explanation", "note", "warning", "cli_words", "FLAGS"]

# Written to a file or pipe (and no COLUMNS or --width): no table is wider than its content, and a line of text is
# not wrapped at all below this many columns.
LOG_WIDTH = 10_000


class _Console(Console):
    """A rich Console that ends quietly (exit code 0) when the reader closes the pipe (``| head``)."""

    def on_broken_pipe(self) -> None:
        self.quiet = True
        devnull = os.open(os.devnull, os.O_WRONLY)
        os.dup2(devnull, sys.stdout.fileno())
        raise SystemExit(0)


def console_width(stream, width=None, environ=None) -> int | None:
    """The width a console writing to ``stream`` uses: ``width`` (``--width``), else ``$COLUMNS``, else the
    terminal's (None: rich asks it), else, for a file or a pipe, ``LOG_WIDTH``."""
    if width is not None:
        return int(width)
    columns = (os.environ if environ is None else environ).get("COLUMNS", "")
    if columns.isdigit() and int(columns) > 0:
        return int(columns)
    try:
        terminal = stream.isatty()
    except (AttributeError, ValueError):  # a closed or replaced stream
        terminal = False
    return None if terminal else LOG_WIDTH


def make_console(*, stderr=False, width=None) -> Console:
    """The one way the command line makes a console: stdout (tables, results) or stderr (notes, progress), its
    width from ``console_width``."""
    stream = sys.stderr if stderr else sys.stdout
    return _Console(stderr=stderr, highlight=False, soft_wrap=stderr, width=console_width(stream, width))


def configure(width=None) -> None:
    """(Re)make ``console`` and ``error_console`` for this run: ``width`` is ``--width`` (None: see
    ``console_width``); the streams are looked at now, so a redirected run gets log widths."""
    global console, error_console
    console = make_console(width=width)
    error_console = make_console(stderr=True, width=width)


console: Console
error_console: Console
configure()


def _wide() -> bool:
    """Whether the console writes a log (no column need be capped to keep rows on one line)."""
    return console.width >= LOG_WIDTH


def _cap(columns):
    """A column's max_width on a terminal; none in a log (each row stays one line)."""
    return None if _wide() else columns


def note(text: str) -> None:
    """A note on stderr (``note: ...``)."""
    error_console.print(Text("note: ", style="yellow").append(text))


def warning(text: str) -> None:
    """A warning on stderr (``warning: ...``): something the user should act on, the work still done."""
    error_console.print(Text("warning: ", style="bold yellow").append(text))


# the command line's flag for each keyword of the Python API that has one: messages written for Python users
# ("pass allow_version_mismatch=True", "max_workspace=...") reach command-line users in their words (cli_words):
# every option set's field with a flag (from its Option), and the parameters of the commands' other options
FLAGS = {f.name: cls.cli_flag(f.name) for cls in OPTION_SETS for f, _ in cls.option_fields()
         if cls.cli_flag(f.name)} | {
    "device_profile": "--device-profile", "allow_version_mismatch": "--allow-version-mismatch",
    "catalogue": "--catalogue",
}


def cli_words(text: str) -> str:
    """A message written for Python users in the command line's words: ``pass allow_version_mismatch=True`` ->
    ``give --allow-version-mismatch``, ``max_workspace=N`` -> ``--max-workspace N``, a leading ``device_profile:``
    -> ``--device-profile:`` (dropped after ``argument --device-profile:``)."""
    def flag(match):
        return FLAGS.get(match.group(1), match.group(0))

    text = re.sub(r"argument (--[\w-]+): (\w+): ",
                  lambda m: m.group(0) if FLAGS.get(m.group(2)) != m.group(1) else f"argument {m.group(1)}: ", text)
    text = re.sub(r"\bpass (\w+)=True\b", lambda m: f"give {FLAGS[m.group(1)]}" if m.group(1) in FLAGS else
                  m.group(0), text)
    text = re.sub(r"^(\w+): ", lambda m: f"{FLAGS[m.group(1)]}: " if m.group(1) in FLAGS else m.group(0), text)
    text = re.sub(r"\b(\w+)=(?=\S)", lambda m: f"{FLAGS[m.group(1)]} " if m.group(1) in FLAGS else m.group(0), text)
    return re.sub(r"\b(\w+)=(?=[\s,;)]|$)", flag, text)


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
    if ex.check:
        lines.append(f"checked against: {escape(ex.check)}")
    if ex.params:
        lines.append("parameters: " + ", ".join(f"{k}={v}" for k, v in ex.params.items()))
    return Panel(Group(Text.from_markup("\n".join(lines)), *graph_tables(ex.graph)), title="graph", expand=False)


_AGREE = "heuristics A and B agree"


def heuristics_text(ex) -> Text:
    if ex.modes_agree:
        return Text(f"{_AGREE}: the same {plural(len(ex.heuristics['A']), 'config')} in the same order")
    parts = [plural(len(c), "config") + (f", first engine {c[0][0]}" if c else "") for c in ex.heuristics.values()]
    parts = [f"{m}: {p}" for m, p in zip(ex.heuristics, parts)]
    if ex.modes_agree is False:
        parts.append("A and B differ")
    return Text("heuristics " + "; ".join(parts))


def engines_table(ex) -> Table:
    supported = [e for e in ex.engines if e["supported"]]
    refused: dict = {}
    for e in ex.engines:
        if not e["supported"]:  # grouped by the reason's words, its details (in parentheses) left out
            refused.setdefault((e["reason"] or "not supported").split(" (", 1)[0], []).append(e["engine_index"])
    why = "; ".join(f"{reason}: {'engine' if len(idx) == 1 else 'engines'} {', '.join(map(str, idx))}"
                    for reason, idx in refused.items())
    t = table(f"engines of this graph: {len(supported)} of {len(ex.engines)} supported (cuDNN accepts a config of "
              "theirs)", caption=(f"not supported — {why}\n" if why else "") + "knob space: the product of each "
              "knob's range; most combinations are invalid (cuDNN refuses them at engine-config finalize), which is "
              "why the sweep samples around good configs")
    for col, kw in (("engine", {"justify": "right"}), ("notes", {"overflow": "fold", "max_width": _cap(36)}),
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
        cols += [("time", "right"), ("vs pick", "right"), ("rel. error", "right"), ("checked by", "left"),
                 ("kernels", "right")]
    cols += [("workspace", "right"), ("plan build", "right"), ("reason", "left")]
    for name, justify in cols:
        t.add_column(name, justify=justify, overflow="fold", max_width=_cap(40) if name in ("reason", "knobs") else None)
    for i, r in enumerate(shown):
        style = "bold green" if ex.best is not None and r is ex.best else ("yellow" if pick is not None and r is pick
                                                                             else None)
        row = [str(i), r.label, str(r.engine_index), r.knobs_text(), r.status]
        if ex.timed:
            ratio = "-" if pick is None or pick.time_us is None or r.time_us is None else f"{pick.time_us / r.time_us:.2f}×"
            row += [us(r.time_us), ratio, "-" if r.rel_error is None else f"{r.rel_error:.1e}",
                    r.check_method or "-", "-" if r.kernel_count is None else str(r.kernel_count)]
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
        out.append(f"best: {best.config_text()} ({best.label}) {us(best.time_us)}",
                   style="bold green")
        if pick is not None and pick.time_us is not None:
            out.append(f"\nheuristics' pick ({pick.label}): {pick.config_text()} "
                       f"{us(pick.time_us)} → headroom {ex.headroom:.3f}×", style="yellow")
        if best.kernels:
            out.append(f"\nkernels of the best config ({len(best.kernels)}): " + ", ".join(best.kernels))
    elif ex.timed:
        out.append("no config ran correctly", style="bold red")
    elif ex.chosen is None:
        out.append(f"offline, for {ex.device.get('name')}: nothing found", style="bold red")
    else:
        built, chosen = sum(1 for r in ex.results if r.plan_built), ex.chosen
        out.append(f"offline: {built} of {plural(len(ex.results), 'config')} built a plan for "
                   f"{ex.device.get('name')}; nothing was timed")
        out.append(f"\npicked: {chosen.config_text()} ({chosen.label}), heuristics' first "
                   f"config that built a plan (the plan `tune` gives offline; --save-plan FILE.json writes it)",
                   style="bold")
    if ex.wall_seconds is not None:
        out.append(f"\nwall time: {ex.wall_seconds:.1f} s")
    return out


def exploration(ex, *, top=25, engines=True, out=None):
    out = out or console
    out.print(header(ex))
    out.print(heuristics_text(ex))
    if engines and ex.engines:
        out.print(engines_table(ex))
    if ex.results:  # none: the summary says nothing was found, and the notes why
        out.print(results_table(ex, top))
    out.print(summary(ex))
    for text in ex.notes:
        if not text.startswith(_AGREE):  # heuristics_text said it
            out.print(Text("note: " + cli_words(text), style="dim"))


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
    t = table(f"{result.job} of {plural(len(rows), 'graph')}: {result.executor} executor, "
              f"{plural(result.workers, 'worker')}, "
               f"{result.wall_seconds:.1f} s{' (offline)' if result.offline else ''}")
    if rows:
        for col in rows[0]:
            t.add_column(col, overflow="fold", max_width=_cap(50) if col == "error" else None)
        for r in rows:
            t.add_row(*[str(v) for v in r.values()], style=None if r["ok"] == "yes" else "red")
    return t


def bench(report) -> None:
    console.print(Panel(Text(f"{report.name}: {config_words(report.engine_index, report.knobs)} ({report.plan_source}), "
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
    t = table(title or (f"{config_words(report.engine_index, report.knobs)}: "
                         f"{plural(report.kernel_count, 'kernel')} per execute "
                         f"({'all fused into one' if report.fused else 'not fused into one'}; {report.method})"))
    for col in ("#", "kernel", "grid", "block", "shared mem"):
        t.add_column(col, overflow="fold", justify="right" if col in ("#", "shared mem") else "left")
    for i, k in enumerate(report.kernels):
        t.add_row(str(i), k.short_name, "×".join(map(str, k.grid)), "×".join(map(str, k.block)),
                  format_bytes(k.shared_mem_bytes))
    console.print(t)


def cache_entries(entries, path) -> None:
    t = table(f"plan cache {path}: {plural(len(entries), 'entry', 'entries')}")
    for col in ("key", "graph", "device", "cuDNN", "engine", "knobs", "time", "stored"):
        t.add_column(col, overflow="fold")
    for e in entries:
        when = datetime.datetime.fromtimestamp(e.stored_at).strftime("%Y-%m-%d %H:%M")
        t.add_row(e.key[:12], str(e.info.get("name", e.fingerprint[:12])), f"{e.device_name} ({e.sm_count} SMs)",
                  e.to_dict()["cudnn_version"], str(e.engine_index),
                  knob_words(e.knobs) or "-", us(e.time_us), when)
    console.print(t)


def cache_entry(e) -> None:
    d = e.to_dict()
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


# ---------------------------------------------------------------------------------------------
# support matrix, comparisons, explanations
# ---------------------------------------------------------------------------------------------
_STATUS_STYLE = {"yes": "green", "yes*": "green"}
_KIND_SHORT = {"precompiled": "pre", "specialized": "spec", "runtime-compiled": "rc"}


def _kinds(kinds) -> str:
    return " ".join(f"{_KIND_SHORT.get(k, k)}:{n}" for k, n in kinds.items()) or "-"


def support_summary(matrix) -> Table:
    """Family x data type: supported / graphs per cell ("–": no graph of that family in that data type)."""
    summary = matrix.summary()
    dtypes = list(dict.fromkeys(d for cols in summary.values() for d in cols))
    order = list(DATA_TYPE_NAMES.values())
    dtypes.sort(key=lambda d: order.index(d) if d in order else len(order))
    counts = matrix.stage_counts()
    t = table(None, caption=", ".join(f"{k}: {v}" for k, v in counts.items()))
    t.add_column("family")
    for d in dtypes:
        t.add_column(d, justify="center")
    for family, cols in summary.items():
        cells = []
        for d in dtypes:
            if d not in cols:
                cells.append(Text("–", style="dim"))
                continue
            ok, n = cols[d]
            cells.append(Text(f"{ok}/{n}", style="green" if ok == n else ("yellow" if ok else "red")))
        t.add_row(family, *cells)
    return t


def support_legend(matrix) -> Text:
    lines = ["summary: supported / graphs per family and data type; – : no graph of this family in this data type "
             "(not probed, which is not \"unsupported\")"]
    lines += matrix.legend() + ["kinds and first: pre = precompiled, spec = specialized, rc = runtime-compiled; first: "
                                "the engine of the first working config"]
    return Text("\n".join(lines + [f"note: {n}" for n in matrix.notes]), style="dim")


def support_rows(matrix, which="all") -> Table:
    """One row per graph: status, engine and config counts, engine kinds, the first working config, kernels (the
    reasons of refused graphs are grouped by ``support_reasons``)."""
    results = [r for r in matrix.results if which == "all" or not r.supported]
    t = table(plural(len(results), "graph") + (" not supported" if which == "unsupported" else ""), padding=(0, 1),
              pad_edge=False)
    for col, kw in (("graph", {"overflow": "fold", "min_width": 20}), ("type", {"no_wrap": True}),
                    ("status", {"no_wrap": True}), ("engines", {"justify": "right", "no_wrap": True}),
                    ("A+F", {"justify": "right", "no_wrap": True}), ("kinds", {"overflow": "fold"}),
                    ("first", {"overflow": "fold"}), ("kern", {"justify": "right"})):
        t.add_column(col, **kw)
    for r in results:
        c = r.chosen or {}
        t.add_row(r.name, f"{r.data_type} {r.layout}", Text(r.status, style=_STATUS_STYLE.get(r.status, "red")),
                  "-" if r.engines_total is None else f"{r.engines_supported}/{r.engines_total}",
                  "-" if not r.configs else f"{r.configs.get('A', 0)}+{r.configs.get('FALLBACK', 0)}",
                  _kinds(r.kinds), f"{c['engine']} {_KIND_SHORT.get(c['kind'], '')}" if c else "-",
                  "-" if r.kernel_count is None else str(r.kernel_count))
    return t


def support_reasons(matrix, limit=12) -> Text:
    """The reasons of the refused graphs, each once, with the graphs refused for it."""
    groups: dict = {}
    for r in matrix.results:
        if not r.supported:
            groups.setdefault(r.reason or r.stage, []).append(f"{r.name} [{r.data_type} {r.layout}]")
    out = Text()
    for i, (reason, names) in enumerate(sorted(groups.items(), key=lambda kv: -len(kv[1]))):
        if i == limit:
            out.append(f"... {len(groups) - limit} more reasons in --csv / --json\n", style="dim")
            break
        shown = ", ".join(names[:6]) + (f" and {len(names) - 6} more" if len(names) > 6 else "")
        out.append(f"{len(names)} refused: ", style="red")
        out.append(f"{reason}\n", style="bold")
        out.append(f"    {shown}\n", style="dim")
    return out


def support_comparison(comparison, everything=False) -> Table:
    counts = comparison.counts()
    rows = [r for r in comparison.rows if everything or r["change"] != "same"]
    t = table(f"{comparison.label_a} (A) vs {comparison.label_b} (B): " + ", ".join(f"{k}: {v}" for k, v in
                                                                                      counts.items()),
              caption="gained: supported in B only; lost: in A only; counts: supported (or not) in both, engine or "
                      "config counts differ; counts read engines finalizing/engines, configs A+FALLBACK"
                      + ("" if everything else "; unchanged graphs left out (--all prints them)"))
    for col in ("change", "family", "graph", "dtype", "layout", "A", "B", "A counts", "B counts", "reason"):
        t.add_column(col, overflow="fold", max_width=_cap(60) if col == "reason" else None)
    style = {"gained": "green", "lost": "red", "counts": "yellow"}
    for r in rows:
        t.add_row(Text(r["change"], style=style.get(r["change"], "")), r["family"], r["graph"], r["data_type"],
                  r["layout"], r["A"], r["B"], r["A counts"], r["B counts"], r["reason"][:200])
    return t


def explanation(ex, out=None) -> None:
    out = out or console
    r = ex.result
    verdict = Text("SUPPORTED", style="bold green") if r.supported else \
        Text(f"NOT SUPPORTED: refused at {r.stage}", style="bold red")
    head = Text(f"{ex.name} on {ex.device}, cuDNN {ex.cudnn_version}: ")
    head.append(verdict)
    if r.supported and r.chosen:
        head.append(f"\nfirst working config: engine {r.chosen['engine']} ({r.chosen['kind']}), "
                    f"{'plan built' if r.verified == 'plan' else 'config finalized'}")
    out.print(Panel(head, title="why", expand=False))
    for stage, verdict_text, lines in ex.stages():
        style = "red" if verdict_text == "REFUSED" else ("yellow" if verdict_text == "none" else "green")
        out.print(Text(f"[{stage}] ", style="bold").append(verdict_text, style=style))
        for line in lines:
            out.print(Text("    " + line), soft_wrap=True)
    if ex.minimization is not None:
        m = ex.minimization
        out.print(Text(f"smallest change that makes it supported ({m['kind']}, cost {m['cost']}): ", style="bold")
                  .append(m["label"], style="bold green"))
        for line in m["diff"]:
            out.print(Text("    " + line, style="red" if line.startswith("-") else ("green" if line.startswith("+")
                                                                                    else "yellow")), soft_wrap=True)
        if m.get("verified"):
            out.print(Text(f"    → {m['verified']}", style="green"))
    if ex.alternatives:
        out.print(Text("other changes that work: " + "; ".join(f"{a['label']} (cost {a['cost']})"
                                                                for a in ex.alternatives[:6]), style="dim"))
    if not r.supported and ex.minimization is None:
        out.print(Text(plural(ex.tried, "variation") + " tried", style="dim"))
    for n in ex.notes:
        out.print(Text("note: " + n, style="dim"))
