"""Everything the command line prints: rich tables sized to the terminal, with units on every number.

All of it goes through the consoles ``make_console`` makes. On a terminal they take its width (or ``COLUMNS``, or
``--width``); written to a file or a pipe without either, they are wide enough that a table row stays one line
(``LOG_WIDTH``), so logs and ``grep`` see whole rows instead of cells broken into fragments. Where a width is set,
text wraps at word and path boundaries (``Breakable``), never inside a name; prose is printed on its own, so it
wraps to the console's width rather than to the table above it; an empty result is one line, not an empty table.
Nothing printed is read as rich markup: messages and hints carry brackets (``pip install '.[plot]'``).
"""
from __future__ import annotations

import datetime
import errno
import math
import os
import re
import sys

from rich import box
from rich.cells import cell_len
from rich.console import Console, Group
from rich.markup import escape
from rich.measure import Measurement
from rich.panel import Panel
from rich.table import Table
from rich.text import Text

from cudnn_backend.core.names import DATA_TYPE_NAMES
from cudnn_backend.core.versions import device_words
from cudnn_backend.runtime import device_facts
from cudnn_backend.tune.options import OPTION_SETS
from cudnn_backend.tune.results import config_words, format_bytes, knob_words, plural

__all__ = ["console", "error_console", "make_console", "configure", "console_width", "LOG_WIDTH", "table",
           "exploration", "headroom", "sweep_table", "bench", "fusion", "cache_entries", "cache_entry", "profile",
           "info", "us", "knob_space", "support_summary", "support_legend", "support_rows", "support_reasons",
           "support_comparison", "explanation", "note", "warning", "problem", "prose", "table_or_line", "fit_columns",
           "stage_words", "cli_words", "FLAGS", "Breakable"]

# Written to a file or pipe (and no COLUMNS or --width): no table is wider than its content, and a line of text is
# not wrapped at all below this many columns.
LOG_WIDTH = 10_000


class _Console(Console):
    """A rich Console that leaves a closed pipe (``| head``) to the command line's one handler (``cli.main``),
    where any other write's BrokenPipeError goes: rich's own would exit there and then."""

    def on_broken_pipe(self) -> None:
        self.quiet = True
        raise BrokenPipeError(errno.EPIPE, "the reader of the output went away")


MIN_WIDTH = 40  # narrower, a table's columns are a letter wide and every cell a column of letters
MAX_WIDTH = 10000  # $COLUMNS past it: as wide as this (a line of a million spaces helps no one)


def console_width(stream, width=None, environ=None) -> int | None:
    """The width a console writing to ``stream`` uses: ``width`` (``--width``), else ``$COLUMNS`` (at least
    ``MIN_WIDTH``, as --width), else the terminal's (None: rich asks it), else, for a file or a pipe,
    ``LOG_WIDTH``."""
    if width is not None:
        return int(width)
    columns = (os.environ if environ is None else environ).get("COLUMNS", "")
    if _a_size(columns) and int(columns) > 0:
        return min(MAX_WIDTH, max(MIN_WIDTH, int(columns)))
    try:
        terminal = stream.isatty()
    except (AttributeError, ValueError):  # a closed or replaced stream
        terminal = False
    return None if terminal else LOG_WIDTH


def make_console(*, stderr=False, width=None) -> Console:
    """The one way the command line makes a console: stdout (tables, results) or stderr (notes, progress), its
    width from ``console_width``."""
    stream = sys.stderr if stderr else sys.stdout
    return _Console(stderr=stderr, highlight=False, markup=False, soft_wrap=stderr,
                    width=console_width(stream, width), _environ=_sizes_read_well(os.environ))


def _a_size(text) -> bool:
    """Whether $COLUMNS or $LINES text is a count: ASCII digits, and few ("²" is a digit to str.isdigit, and 5000 of
    them no int); any other value is read as unset."""
    return text.isascii() and text.isdigit() and len(text) <= len(str(MAX_WIDTH))


def _sizes_read_well(environ) -> dict:
    """The environment rich reads, without a $COLUMNS or $LINES that is no count (rich calls int() on any digits):
    those are read as unset, as ``console_width`` reads them."""
    bad = [k for k in ("COLUMNS", "LINES") if k in environ and not _a_size(environ[k])]
    return {k: v for k, v in environ.items() if k not in bad} if bad else environ


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


_BREAK = re.compile(r"(?<=[\s/+>,;])(?=\S)")  # after a space, a path's /, a graph's + or >, a list's , or ;


class Breakable:
    """Text (a str or a rich ``Text``) that wraps at word and path boundaries: after a space, ``/``, ``+``, ``>``,
    ``,`` or ``;``, never inside a name; only a piece wider than the room is folded. ``indent``: spaces before
    every line; ``hang``: more before each continuation line. In a table it asks for the room of its longest piece
    at least."""

    def __init__(self, text, style="", indent=0, hang=0):
        self.text = text if isinstance(text, Text) else Text(str(text), style=style)
        self.indent, self.hang = indent, hang

    def _pieces(self, line: Text) -> list:
        return list(line.divide(m.start() for m in _BREAK.finditer(line.plain)))

    def __rich_measure__(self, console, options) -> Measurement:
        lines = self.text.split("\n")
        widest = max((cell_len(line.plain) for line in lines), default=0) + self.indent
        piece = max((cell_len(p.plain.rstrip()) for line in lines for p in self._pieces(line)), default=0)
        return Measurement(min(piece + self.indent, options.max_width), min(widest, options.max_width))

    def __rich_console__(self, console, options):
        room = max(1, options.max_width - self.indent - self.hang)
        out = Text(end="")
        for line in self.text.split("\n"):
            for n, wrapped in enumerate(self._fill(line, room)):
                for m, folded in enumerate(wrapped.wrap(console, room, overflow="fold")
                                           if cell_len(wrapped.plain) > room else [wrapped]):
                    if out.plain or len(out):
                        out.append("\n")
                    out.append(" " * (self.indent + (self.hang if n or m else 0))).append_text(folded)
        out.end = "\n"
        yield out

    def _fill(self, line: Text, room: int) -> list:
        lines, current = [], Text()
        for piece in self._pieces(line):
            if current.plain.strip() and cell_len(current.plain + piece.plain.rstrip()) > room:
                current.rstrip()
                lines.append(current)
                current = Text()
            current.append_text(piece)
        current.rstrip()
        return lines + [current]


def note(text: str) -> None:
    """A note on stderr (``note: ...``), one line however long (stderr lines are not wrapped: one message, one
    line for ``grep``)."""
    error_console.print(Text("note: ", style="yellow").append(text))


def warning(text: str) -> None:
    """A warning on stderr (``warning: ...``): something the user should act on, the work still done."""
    error_console.print(Text("warning: ", style="bold yellow").append(text))


def problem(label: str, text: str) -> None:
    """A part of the work that failed, on stderr (``--heatmap: ...``), the rest still done: the one place such
    lines and their install hints (``pip install '.[plot]'``) are printed, as written."""
    error_console.print(Text(f"{label}: ", style="red").append(str(text)))


def prose(text, style="dim") -> Breakable:
    """A paragraph under a table (what its marks mean): wrapped to the console's width, not the table's."""
    return Breakable(text, style=style)


def table_or_line(t: Table, empty: str):
    """``t``, or, when it has no rows, the line ``empty`` says instead (no header over nothing)."""
    return t if t.row_count else Text(empty)


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
    # (not the KEY=VALUE an ``argument --param:`` line quotes as the user gave it)
    text = re.sub(r"(?<!--param: )\b(\w+)=(?=\S)", lambda m: f"{FLAGS[m.group(1)]} " if m.group(1) in FLAGS else
                  m.group(0), text)
    return re.sub(r"\b(\w+)=(?=[\s,;)]|$)", flag, text)


def us(value, digits=2) -> str:
    if value is None:
        return "-"
    # (a time stored by hand may be any finite number: past an hour of microseconds, in powers of ten)
    return f"{value:.{digits}f} µs" if abs(value) < 1e10 else f"{value:.3e} µs"


def knob_space(n: int) -> str:
    if not n:
        return "-"
    return f"{n:,}" if n < 100_000 else f"{n:.1e}"


def table(title=None, caption=None, **kw) -> Table:
    return Table(title=title, caption=caption, box=box.SIMPLE_HEAD, title_justify="left", caption_justify="left",
                 expand=False, **kw)


def _blank(value) -> bool:
    return value in ("", "-", None)


def fit_columns(columns: list, rows: list, *, wraps: dict, optional=(), pad_edge=True, whole=()) -> tuple:
    """How a table of ``rows`` (lists of str, one per column; a column is a name or a (name, ...) tuple) fits the
    console: (the columns to draw, their indexes, the names left out, {name: width}).

    A column blank in every row is left out. The columns named in ``wraps`` wrap (at words, ``Breakable``), each
    down to its longest word or the cells ``wraps`` gives it (a knob list's room); the others keep their width.
    While that cannot fit, the ``optional`` columns go, in that order (they stay in --csv / --json). What room is
    left goes first to the wrapping columns a few cells short of their natural width (a cell on one line for
    little), then to the others in the order of ``wraps``. A table's width: its cells, 2 of padding each (none at
    the edges without ``pad_edge``) and 1 between and around them (``box.SIMPLE_HEAD``). The columns named in
    ``whole`` (names a reader greps for) are worth the optional columns: those go until they fit unwrapped too."""
    names = [c[0] if isinstance(c, tuple) else c for c in columns]
    keep = [i for i, name in enumerate(names) if not rows or not all(_blank(r[i]) for r in rows)]
    natural = {i: max([cell_len(names[i])] + [cell_len(r[i]) for r in rows]) for i in range(len(names))}

    def narrowest(i):
        if names[i] not in wraps:
            return natural[i]
        words = [cell_len(w.rstrip()) for r in rows for w in _BREAK.split(r[i])]
        return min(natural[i], max([wraps[names[i]], cell_len(names[i])] + words))

    def room():
        return console.width - (3 * len(keep) + (1 if pad_edge else -1)) - sum(narrowest(i) for i in keep)

    def room_whole():
        return room() - sum(natural[i] - narrowest(i) for i in keep if names[i] in whole)

    dropped = []
    for name in optional:
        if room_whole() >= 0:
            break
        if name in names and names.index(name) in keep:
            keep.remove(names.index(name))
            dropped.append(name)
    widths = {}  # none when each column fits at its own width, or when even the narrowest do not (rich shares it)
    if room() >= 0 and room() + sum(narrowest(i) - natural[i] for i in keep) < 0:
        left = room()
        wrapping = [names.index(n) for n in wraps if n in names and names.index(n) in keep]
        widths = {names[i]: narrowest(i) for i in wrapping}
        gap = {i: natural[i] - narrowest(i) for i in wrapping}
        for i in sorted(wrapping, key=lambda i: (gap[i] > 8, gap[i])):  # the short gaps first
            more = max(0, min(left, natural[i] - narrowest(i)))
            widths[names[i]] += more
            left -= more
    return [columns[i] for i in keep], keep, dropped, widths


def _left_out(dropped: list) -> str:
    return (f"columns left out at this width: {', '.join(dropped)} (in --csv / --json, or give a wider --width)"
            if dropped else "")


# ---------------------------------------------------------------------------------------------
# the graph and its exploration
# ---------------------------------------------------------------------------------------------
def graph_tables(graph: dict) -> list:
    tensors = table("tensors")
    for col in ("name", "uid", "shape", "strides", "dtype", "role"):
        tensors.add_column(col, justify="right" if col == "uid" else "left")
    for t in graph.get("tensors", []):
        tensors.add_row(Breakable(str(t["name"])), str(t["uid"]), Breakable("×".join(map(str, t["dims"]))),
                        Breakable(str(t["strides"])), t["data_type"], t["role"])
    ops = table("operations (producers first)")
    for col in ("#", "operation", "reads", "writes", "compute"):
        ops.add_column(col)
    for i, o in enumerate(graph.get("operations", [])):
        ops.add_row(str(i), Breakable(o["operation"]), Breakable(o["inputs"]), Breakable(o["outputs"] or "-"),
                    o["compute"])
    return [tensors, ops]


def header(ex) -> Panel:
    d = ex.device
    where = "this GPU" if d.get("source") == "gpu" else "a device profile (offline)"
    lines = [
        f"[bold]{escape(ex.name)}[/bold]",
        f"device: {escape(device_words(d.get('name'), d.get('sm_version'), d.get('sm_count')))} from "
        f"{where} · cuDNN {ex.cudnn_version}",
        f"timing: {escape(str(ex.measured))}" if ex.timed else "timing: none (offline: plans are built, nothing runs)",
    ]
    if ex.check:
        lines.append(f"checked against: {escape(ex.check)}")
    if ex.params:
        lines.append("parameters: " + escape(", ".join(f"{k}={v}" for k, v in ex.params.items())))
    return Panel(Group(Breakable(Text.from_markup("\n".join(lines))), *graph_tables(ex.graph)), title="graph",
                 expand=False)


_AGREE = "heuristics A and B agree"


def heuristics_text(ex) -> Text:
    if not any(ex.heuristics.values()):
        return Text(f"heuristics {', '.join(ex.heuristics) or '(none asked)'} proposed no engine config")
    if ex.modes_agree:
        return Text(f"{_AGREE}: the same {plural(len(ex.heuristics['A']), 'config')} in the same order")
    parts = [plural(len(c), "config") + (f", first engine {c[0][0]}" if c else "") for c in ex.heuristics.values()]
    parts = [f"{m}: {p}" for m, p in zip(ex.heuristics, parts)]
    if ex.modes_agree is False:
        parts.append("A and B differ")
    return Text("heuristics " + "; ".join(parts))


def engines_table(ex):
    """The engines of the graph: those cuDNN accepts with their notes and knobs, then (as prose) the others by
    reason and what the knob space means."""
    supported = [e for e in ex.engines if e["supported"]]
    refused: dict = {}
    for e in ex.engines:
        if not e["supported"]:  # grouped by the reason's words, its details (in parentheses) left out
            refused.setdefault((e["reason"] or "not supported").split(" (", 1)[0], []).append(e["engine_index"])
    why = "; ".join(f"{reason}: {'engine' if len(idx) == 1 else 'engines'} {', '.join(map(str, idx))}"
                    for reason, idx in refused.items())
    title = (f"engines of this graph: {len(supported)} of {len(ex.engines)} supported (cuDNN accepts a config of "
             "theirs)")
    rows = []
    for e in supported:
        knobs = " ".join(f"{k['knob']}[{k['minimum']}..{k['maximum']}{'/' + str(k['stride']) if k['stride'] != 1 else ''}]"
                         for k in e["knobs"])
        notes = " ".join(e["numerical_notes"] + e["behavior_notes"])
        rows.append([str(e["engine_index"]), notes or "-", knobs or "-", knob_space(e["knob_space"])])
    columns = ["engine", "notes", "knobs [min..max]", "knob space"]
    _, _, _, widths = fit_columns(columns, rows, wraps={"knobs [min..max]": 0, "notes": 0})
    t = table(title)
    for col in columns:
        t.add_column(col, justify="right" if col in ("engine", "knob space") else "left", width=widths.get(col),
                     no_wrap=col in ("engine", "knob space"))
    for row in rows:
        t.add_row(row[0], Breakable(row[1]), Breakable(row[2]), row[3])
    parts = [t if supported else Text(title.replace(f"{len(supported)} of", "none of"))]
    if why:
        parts.append(prose(f"not supported — {why}"))
    if supported:
        parts.append(prose("knob space: the product of each knob's range; most combinations are invalid (cuDNN "
                           "refuses them at engine-config finalize), which is why the sweep samples around good "
                           "configs"))
    return Group(*parts)


def results_table(ex, top):
    """The configs tried (the first ``top``): a column blank in every row is left out, and at a narrow width the
    least needed ones go before the knobs are squeezed (said under the table)."""
    pick = ex.heuristics_pick
    shown = ex.results[:top]
    more = len(ex.results) - len(shown)
    cols = [("#", "right"), ("from", "left"), ("engine", "right"), ("knobs", "left"), ("status", "left")]
    if ex.timed:
        cols += [("time", "right"), ("vs pick", "right"), ("rel. error", "right"), ("checked by", "left"),
                 ("kernels", "right")]
    cols += [("workspace", "right"), ("plan build", "right"), ("reason", "left")]
    rows, styles = [], []
    for i, r in enumerate(shown):
        styles.append("bold green" if ex.best is not None and r is ex.best else ("yellow" if pick is not None and
                                                                                 r is pick else None))
        row = [str(i), r.label, str(r.engine_index), r.knobs_text(), r.status_text]
        if ex.timed:
            ratio = "-" if pick is None or pick.time_us is None or r.time_us is None else f"{pick.time_us / r.time_us:.2f}×"
            row += [us(r.time_us), ratio, "-" if r.rel_error is None else f"{r.rel_error:.1e}",
                    r.check_method or "-", "-" if r.kernel_count is None else str(r.kernel_count)]
        row += [format_bytes(r.workspace_bytes), "-" if r.plan_seconds is None else f"{r.plan_seconds * 1e3:.1f} ms",
                r.reason or ""]
        rows.append(row)
    kept, index, dropped, widths = fit_columns(
        cols, rows, wraps={"knobs": 24, "reason": 24, "checked by": 0, "status": 10},
        optional=("plan build", "workspace", "checked by", "rel. error", "kernels"))
    t = table(f"configs tried ({len(ex.results)}; {_counts(ex)})")
    for name, justify in kept:
        t.add_column(name, justify=justify, no_wrap=name not in ("knobs", "reason", "checked by", "status"),
                     width=widths.get(name))
    for row, style in zip(rows, styles):
        t.add_row(*[Breakable(row[i]) for i in index], style=style)
    notes = [f"{more} more rows in --csv / --json" if more > 0 else "", _left_out(dropped)]
    return Group(t, *(prose(n) for n in notes if n))


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
    elif ex.unknown_offline:
        out.append(f"offline, for {ex.device.get('name')}: {ex.failure()}", style="bold yellow")
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


# notes the command line says otherwise: the heuristics line says whether A and B agree, and the one-line
# "nothing found" error says why heuristics proposed nothing
_SAID_ELSEWHERE = (_AGREE, "no engine config from heuristics")


def exploration(ex, *, top=25, engines=True, out=None):
    out = out or console
    out.print(header(ex))
    out.print(heuristics_text(ex))
    if engines and ex.engines:
        out.print(engines_table(ex))
    if ex.results:  # none: the summary says nothing was found, and the notes why
        out.print(results_table(ex, top))
    out.print(Breakable(summary(ex)))
    for text in ex.notes:
        if not text.startswith(_SAID_ELSEWHERE):
            out.print(prose("note: " + cli_words(text)))


def headroom(rows, title="best config found vs heuristics' pick"):
    if not rows:
        return Text(f"{title}: no graph was timed")
    t = table(title)
    for col in rows[0]:
        t.add_column(col, justify="right" if col in ("A pick us", "best us", "headroom", "wall s", "configs timed",
                                                      "sweep timed") else "left")
    for r in rows:
        t.add_row(*[Breakable("-" if v is None else (f"{v:.3f}" if isinstance(v, float) and not math.isnan(v) else
                                                     str(v))) for v in r.values()])
    return Group(t, prose("headroom: heuristics' pick time over the best correct config's (1.000: heuristics picked "
                          "the best)"))


def sweep_table(result):
    rows = [r.row() for r in result.results]
    title = (f"{result.job} of {plural(len(rows), 'graph')}: {result.executor} executor, "
             f"{plural(result.workers, 'worker')}, {result.wall_seconds:.1f} s{' (offline)' if result.offline else ''}")
    t = table(title)
    if rows:
        for col in rows[0]:
            t.add_column(col, max_width=_cap(50) if col == "error" else None)
        for r in rows:
            t.add_row(*[Breakable(str(v)) for v in r.values()], style=None if r["ok"] == "yes" else "red")
    return table_or_line(t, f"{title}: no graph")


def bench(report) -> None:
    console.print(Panel(Breakable(f"{report.name}: {config_words(report.engine_index, report.knobs)} "
                                  f"({report.plan_source}), workspace {format_bytes(report.workspace_bytes)}\n"
                                  f"{report.device.get('name')} · cuDNN {report.cudnn_version}\n{report.measured}"),
                        title="bench", expand=False))
    t = table("per call")
    for col in ("case", "host median", "host min", "host max", "GPU median", "GPU min", "GPU max", "how"):
        t.add_column(col, justify="left" if col in ("case", "how") else "right")
    for c in report.cases:
        t.add_row(c.name, us(c.host_us["median"]), us(c.host_us["min"]), us(c.host_us["max"]), us(c.gpu_us["median"]),
                  us(c.gpu_us["min"]), us(c.gpu_us["max"]), Breakable(c.note))
    console.print(table_or_line(t, "per call: no case was measured"))


def fusion(report, title=None) -> None:
    title = title or (f"{config_words(report.engine_index, report.knobs)}: "
                      f"{plural(report.kernel_count, 'kernel')} per execute "
                      f"({'all fused into one' if report.fused else 'not fused into one'}; {report.method})")
    t = table(title)
    for col in ("#", "kernel", "grid", "block", "shared mem"):
        t.add_column(col, justify="right" if col in ("#", "shared mem") else "left")
    for i, k in enumerate(report.kernels):
        t.add_row(str(i), Breakable(k.short_name), "×".join(map(str, k.grid)), "×".join(map(str, k.block)),
                  format_bytes(k.shared_mem_bytes))
    console.print(table_or_line(t, title))


def cache_entries(entries, path) -> None:
    title = f"plan cache {path}: {plural(len(entries), 'entry', 'entries')}"
    t = table(title)
    for col in ("key", "graph", "device", "cuDNN", "engine", "knobs", "time", "stored"):
        t.add_column(col)
    for e in entries:
        when = datetime.datetime.fromtimestamp(e.stored_at).strftime("%Y-%m-%d %H:%M")
        t.add_row(e.key[:12], Breakable(str(e.info.get("name", e.fingerprint[:12]))),
                  Breakable(device_words(e.device_name, e.sm_version, e.sm_count)), e.to_dict()["cudnn_version"],
                  str(e.engine_index),
                  Breakable(knob_words(e.knobs) or "-"), us(e.time_us), when)
    console.print(table_or_line(t, f"{title} (`cudnn-backend tune` stores each winner there)"))


def cache_entry(e) -> None:
    d = e.to_dict()
    t = table(f"plan cache entry {e.key}")
    t.add_column("field", no_wrap=True)
    t.add_column("value")
    for k, v in d.items():
        if k == "plan_bytes":
            v = format_bytes(v)
        elif k == "time_us":
            v = us(v)
        t.add_row(k, Breakable(str(v)))
    console.print(t)


def profile(p) -> None:
    props = p.properties
    t = table(f"device profile: {p.device_name} ({p.origin}; {p.source})")
    t.add_column("property", no_wrap=True)
    t.add_column("value")
    for k, v in props.items():
        t.add_row(str(k), Breakable(str(v)))
    console.print(t)  # (its title's origin names each member a conversion filled, and where it came from)
    facts = table("beside cuDNN's JSON: what cuDNN reads only from the live GPU (never handed to cuDNN)")
    for col in ("fact", "value", "from"):
        facts.add_column(col)
    for name, value, source in device_facts.describe(p.device_facts, props.get("deviceVer")):
        facts.add_row(name, Breakable(value), Breakable(source))
    console.print(facts)
    risk = p.plan_risk()
    if risk is not None:
        warning(risk)


def info(d: dict) -> None:
    t = table("cudnn-backend")
    t.add_column("what", no_wrap=True)
    t.add_column("found")
    for k, v in d.items():
        if isinstance(v, dict):
            v = "\n".join(f"{name}: {text}" for name, text in v.items())
        t.add_row(k.replace("_", " "), Breakable(", ".join(v) if isinstance(v, list) else str(v)))
    console.print(t)


# ---------------------------------------------------------------------------------------------
# support matrix, comparisons, explanations
# ---------------------------------------------------------------------------------------------
_STATUS_STYLE = {"yes": "green", "yes*": "green", "unknown offline": "yellow"}
_KIND_SHORT = {"precompiled": "pre", "specialized": "spec", "runtime-compiled": "rc"}


def _kinds(kinds) -> str:
    return " ".join(f"{_KIND_SHORT.get(k, k)}:{n}" for k, n in kinds.items()) or "-"


def stage_words(counts: dict) -> str:
    """``supported: 416; refused by stage: heuristics 189, plan 3`` from ``SupportMatrix.stage_counts()``."""
    refused = ", ".join(f"{stage} {n}" for stage, n in counts.items() if stage != "supported")
    return f"supported: {counts.get('supported', 0)}" + (f"; refused by stage: {refused}" if refused else "")


def support_summary(matrix) -> Table:
    """Family x data type: supported / graphs per cell ("–": no graph of that family in that data type)."""
    summary = matrix.summary()
    unknown = matrix.unknown_summary()
    dtypes = list(dict.fromkeys(d for cols in summary.values() for d in cols))
    order = list(DATA_TYPE_NAMES.values())
    dtypes.sort(key=lambda d: order.index(d) if d in order else len(order))
    t = table(None, caption=stage_words(matrix.stage_counts()))
    t.add_column("family", no_wrap=True)
    for d in dtypes:
        t.add_column(d, justify="center", no_wrap=True)
    for family, cols in summary.items():
        cells = []
        for d in dtypes:
            if d not in cols:
                cells.append(Text("–", style="dim"))
                continue
            ok, n = cols[d]
            u = unknown.get(family, {}).get(d, 0)
            cells.append(Text(f"{ok}/{n}" + (f" +{u}?" if u else ""),
                              style="green" if ok == n else ("yellow" if ok or u else "red")))
        t.add_row(family, *cells)
    return t


def support_legend(matrix) -> Breakable:
    lines = ["summary: supported / graphs per family and data type; – : no graph of this family in this data type "
             "(not probed, which is not \"unsupported\")" + ("; +N?: N graphs unknown offline"
                                                          if matrix.unknown_summary() else "")
             + "; under it, how many graphs each stage refused"]
    lines += matrix.legend() + ["kinds and first: pre = precompiled, spec = specialized, rc = runtime-compiled; first: "
                                "the engine of the first working config"]
    return prose("\n".join(lines + [f"note: {n}" for n in matrix.notes]))


def support_rows(matrix, which="all"):
    """One row per graph: status, engine and config counts, engine kinds, the first working config, kernels (the
    reasons of refused graphs are grouped by ``support_reasons``). Graph names wrap at their ``+`` and ``>``."""
    results = [r for r in matrix.results if which == "all" or not r.supported]
    title = plural(len(results), "graph") + (" not supported" if which == "unsupported" else "")
    if not results:
        return Text(f"{title}: every graph is supported" if which == "unsupported" else title)
    columns = [("graph", "left"), ("type", "left"), ("status", "left"), ("engines", "right"), ("A+F", "right"),
               ("kinds", "left"), ("first", "left"), ("kernels", "right")]
    rows, styles = [], []
    for r in results:
        c = r.chosen or {}
        rows.append([r.name, f"{r.data_type} {r.layout}", r.status,
                     "-" if r.engines_total is None else f"{r.engines_supported}/{r.engines_total}",
                     "-" if not r.configs else f"{r.configs.get('A', 0)}+{r.configs.get('FALLBACK', 0)}",
                     _kinds(r.kinds), f"{c['engine']} {_KIND_SHORT.get(c['kind'], '')}" if c else "-",
                     "-" if r.kernel_count is None else str(r.kernel_count)])
        styles.append(_STATUS_STYLE.get(r.status, "red"))
    kept, index, dropped, widths = fit_columns(columns, rows, wraps={"graph": 24, "kinds": 0},
                                               optional=("kinds", "first", "A+F"), pad_edge=False, whole=("graph",))
    t = table(title, padding=(0, 1), pad_edge=False)
    for name, justify in kept:
        t.add_column(name, justify=justify, width=widths.get(name), no_wrap=name not in ("graph", "kinds"))
    for row, style in zip(rows, styles):
        t.add_row(*[Breakable(row[i], style=style if i == 2 else "") for i in index])
    return Group(t, *([prose(_left_out(dropped))] if dropped else []))


_CONFIG_WORDS = re.compile(r"engine \d+(?: [A-Z_]+=-?\d+)*")


def support_reasons(matrix, limit=12) -> Group:
    """The reasons of the refused graphs, each once, with the graphs refused for it; the graphs unknown offline
    apart, with what offline lacked; the caveats of supported graphs, each once."""
    groups: dict = {}
    for r in matrix.results:
        if not r.supported:
            kind = "unknown offline" if r.unknown else "refused"
            text = r.caveat if r.unknown else (r.reason or r.stage)
            groups.setdefault((kind, text), []).append(f"{r.name} [{r.data_type} {r.layout}]")
        elif r.caveat:  # grouped by what they say, whichever config they name
            said = _CONFIG_WORDS.sub("its config", r.caveat)
            groups.setdefault(("caveat", said), []).append(f"{r.name} [{r.data_type} {r.layout}]")
    out = []
    style = {"refused": "red", "unknown offline": "yellow", "caveat": "yellow"}
    for i, ((kind, reason), names) in enumerate(sorted(groups.items(), key=lambda kv: (kv[0][0] == "caveat",
                                                                                        -len(kv[1])))):
        if i == limit:
            out.append(prose(f"... {len(groups) - limit} more reasons and caveats in --csv / --json"))
            break
        shown = ", ".join(names[:6]) + (f" and {len(names) - 6} more" if len(names) > 6 else "")
        lead = f"{len(names)} {kind}: " if kind != "caveat" else f"{len(names)} supported, with a caveat: "
        out.append(Breakable(Text(lead, style=style[kind]).append(reason, style="bold")))
        out.append(Breakable(shown, style="dim", indent=4))
    return Group(*out)


def _kernels_ab(row) -> str:
    """A comparison row's kernel counts, "A/B" ("-" where a side has none)."""
    return "/".join("-" if row.get(f"{side} kernels") is None else str(row[f"{side} kernels"]) for side in "AB")


def support_comparison(comparison, everything=False):
    counts = comparison.counts()
    rows = [r for r in comparison.rows if everything or r["change"] != "same"]
    title = f"{comparison.label_a} (A) vs {comparison.label_b} (B): " + ", ".join(f"{k}: {v}" for k, v in
                                                                                  counts.items())
    if not rows:
        return Text(f"{title}: no graph gained, lost or changed its counts" + ("" if everything else
                                                                              " (--all prints every graph)"))
    t = table(title)
    kernels = any(r.get("A kernels") is not None or r.get("B kernels") is not None for r in rows)
    for col in ("change", "family", "graph", "dtype", "layout", "A", "B", "A counts", "B counts") + \
            (("kernels A/B",) if kernels else ()) + ("reason",):
        t.add_column(col, max_width=_cap(60) if col == "reason" else None)
    style = {"gained": "green", "lost": "red", "counts": "yellow", "unknown": "yellow"}
    for r in rows:
        t.add_row(Text(r["change"], style=style.get(r["change"], "")), r["family"], Breakable(r["graph"]),
                  r["data_type"], r["layout"], Breakable(r["A"]), Breakable(r["B"]), r["A counts"], r["B counts"],
                  *((_kernels_ab(r),) if kernels else ()), Breakable(r["reason"][:200]))
    return Group(t, prose("gained: supported in B only; lost: in A only; unknown: one side is unknown offline "
                          "(neither gained nor lost can be said); counts: supported (or not) in both, engine "
                          "or config counts differ, or kernels launched by the first working config (on a GPU); "
                          "counts read engines finalizing/engines, configs A+FALLBACK"
                          + ("" if everything else "; unchanged graphs left out (--all prints them)")))


def release_comparison(comparison, everything=False):
    counts = comparison.counts()
    rows = [r for r in comparison.rows if everything or r["change"] != "same"]
    title = f"{comparison.label_a} (A) vs {comparison.label_b} (B): " + ", ".join(f"{k}: {v}" for k, v in
                                                                                  counts.items())
    how = "times in us, medians on this GPU" if comparison.timed else "offline: nothing timed, the first config " \
        "that builds"
    legend = prose(f"{how}; best: the fastest correct config; pick: heuristics' first; slower/faster: the best "
                   f"differs by more than {comparison.slower:.0%}; slowed: configs correct under both, that much "
                   "slower under B; vanished: correct under A, not listed or failing under B (engines matched by "
                   "global index and knobs)" + ("" if everything else "; unchanged graphs left out (--all prints "
                                                                        "them)"))
    if not rows:
        return Group(Text(f"{title}: no graph changed"), legend)
    t = table(title)
    for col in ("change", "graph", "A best", "B best", "best B/A", "pick B/A", "kernels A/B", "slowed", "vanished",
                "reason"):
        t.add_column(col, max_width=_cap(50) if col in ("slowed", "vanished", "reason") else None)
    style = {"gained": "green", "faster": "green", "lost": "red", "slower": "red", "failed": "red"}

    def cell(v):
        return "-" if v is None else f"{v:.2f}" if isinstance(v, float) else str(v)

    def best(r, side):
        us = r.get(f"{side} best us")
        return Breakable(f"{r.get(side + ' best', '-')}" + (f" {us:.2f} us" if us is not None else ""))

    for r in rows:
        t.add_row(Text(r["change"], style=style.get(r["change"], "")), Breakable(r["graph"]), best(r, "A"),
                  best(r, "B"), cell(r.get("best B/A")), cell(r.get("pick B/A")),
                  _kernels_ab(r), Breakable(r.get("slowed", "")),
                  Breakable(r.get("vanished", "")), Breakable((r.get("reason") or "")[:300]))
    return Group(t, legend)


def explanation(ex, out=None) -> None:
    """``why``'s explanation: the verdict, each stage with cuDNN's reasons, the smallest change that works. Lines
    wrap at word boundaries to the console's width, continued under their indent."""
    out = out or console
    r = ex.result
    verdict = Text("SUPPORTED", style="bold green") if r.supported else \
        Text(f"UNKNOWN OFFLINE: refused at {r.stage} for a fact only the GPU gives", style="bold yellow") \
        if r.unknown else Text(f"NOT SUPPORTED: refused at {r.stage}", style="bold red")
    head = Text(f"{ex.name} on {ex.device}, cuDNN {ex.cudnn_version}: ")
    head.append(verdict)
    if r.supported and r.chosen:
        head.append(f"\nfirst working config: engine {r.chosen['engine']} ({r.chosen['kind']}), "
                    f"{'plan built' if r.verified == 'plan' else 'config finalized'}")
    if r.caveat:
        head.append(f"\n{r.caveat}", style="yellow")
    out.print(Panel(Breakable(head), title="why", expand=False))
    for stage, verdict_text, lines in ex.stages():
        style = "red" if verdict_text == "REFUSED" else ("yellow" if verdict_text in ("none", "UNKNOWN") else "green")
        out.print(Text(f"[{stage}] ", style="bold").append(verdict_text, style=style))
        for line in lines:
            out.print(Breakable(line.lstrip(" "), indent=4 + len(line) - len(line.lstrip(" ")), hang=2))
    if ex.minimization is not None:
        m = ex.minimization
        out.print(Breakable(Text(f"smallest change that makes it supported ({m['kind']}, cost {m['cost']}): ",
                                 style="bold").append(m["label"], style="bold green")))
        for line in m["diff"]:
            out.print(Breakable(line, style="red" if line.startswith("-") else ("green" if line.startswith("+")
                                                                               else "yellow"), indent=4))
        if m.get("verified"):
            out.print(Breakable(f"→ {m['verified']}", style="green", indent=4))
    if ex.alternatives:
        out.print(prose("other changes that work: " + "; ".join(f"{a['label']} (cost {a['cost']})"
                                                                for a in ex.alternatives[:6])))
    if not r.supported and not r.unknown and ex.minimization is None:
        out.print(prose(plural(ex.tried, "variation") + " tried"))
    for n in ex.notes:
        out.print(prose("note: " + n))
