"""What an exploration found: one ``ConfigResult`` per config tried, gathered in an ``Exploration``.

Both are plain data (they pickle, and ``to_json``/``from_json`` round-trip), so sweeps can ship them between
processes and machines. Terminal output lives in the command line; ``table()`` here is plain text for logs
and notebooks, ``to_dataframe()`` needs pandas and ``plot()`` matplotlib (optional dependencies).
"""
from __future__ import annotations

import json
from dataclasses import MISSING, asdict, dataclass, field, fields

from cudnn_backend.core._coerce import as_int
from cudnn_backend.core.json_checks import json_error_words
from cudnn_backend.core.plain import PlainData, json_ready
from cudnn_backend.errors import MissingDependencyError
from cudnn_backend.tune import plots
from cudnn_backend.tune.offline_gaps import UNKNOWN_OFFLINE, gap_caveat, gap_keys as offline_gap_keys

__all__ = ["ConfigResult", "Exploration", "ChangeRows", "headroom_rows", "format_bytes", "plain_table", "fastest",
           "heuristics_pick", "plural", "knob_words", "config_words", "check_fields"]

# statuses a result can end in
OK = "ok"                    # built, correct, timed
PLAN_BUILT = "plan built"    # offline, or not timed: the plan was built
PLAN_REFUSED = "plan refused"
EXECUTE_FAILED = "execute failed"
WRONG = "wrong result"
SKIPPED = "skipped"
TIMED = "timed, not checked"  # racing: out of the race before its outputs were checked
DENIED = "denied"  # an errata rule denies it (``denied_by``): never built or run


class ChangeRows:
    """A comparison's ``rows`` (dicts, each with its ``change``): the rows of one kind, and how many of each."""

    rows: list

    def of(self, change) -> list:
        """The rows of one kind of change."""
        return [r for r in self.rows if r["change"] == change]

    def counts(self) -> dict:
        """{change: how many rows}, in the order changes first appear."""
        out: dict = {}
        for r in self.rows:
            out[r["change"]] = out.get(r["change"], 0) + 1
        return out


_FIELD_TYPES = {"str": (str,), "dict": (dict,), "list": (list,), "tuple": (list, tuple), "bool": (bool,),
                "int": (int,), "float": (int, float), "None": (type(None),)}


def check_fields(cls, d) -> None:
    """TypeError naming the first field of ``d`` (a dataclass's ``to_dict`` read back from JSON) whose value is not of
    the field's declared type, or a field without a default that is missing."""
    if not isinstance(d, dict):
        raise TypeError(f"expected an object, not {type(d).__name__}")
    for f in fields(cls):
        if f.name not in d:
            if f.default is MISSING and f.default_factory is MISSING:
                raise TypeError(f"{f.name}: missing")
            continue
        declared = [t.strip() for t in str(f.type).split("|")]
        value = d[f.name]
        if value is None and "None" in declared:
            continue
        accepted = tuple(t for name in declared for t in _FIELD_TYPES.get(name, (object,)))
        if not isinstance(value, accepted) or (isinstance(value, bool) and bool not in accepted):
            raise TypeError(f"{f.name}: expected {' or '.join(declared)}, not {type(value).__name__}")


@dataclass
class ConfigResult(PlainData):
    """One engine config tried.

    ``source`` is where it came from: "A", "B", "FALLBACK" (heuristics modes, ``rank`` its place in that
    list; ``modes`` every mode that proposed it) or "sweep" (the knob search). ``plan_built`` and ``reason``
    (cuDNN's own message when it refused) say whether cuDNN built a plan; ``time_us`` is the median time per
    call (``min_us``/``max_us`` the spread; None offline; for the final round's finalists, the median of that
    round, and ``first_pass_us`` what the first pass measured), ``rel_error`` the relative L2 error of its outputs
    against the reference or the majority of configs, ``checked_by`` how they were checked ("fp64 reference",
    "sampled fp64 reference (N points)", or "majority (why: the operation the reference cannot compute)"; empty
    when nothing was checked), ``kernels`` the names of the kernels one call launched
    (the best config, or every config with ``fusion="all"``) and ``kernel_count``. Racing: ``race_round`` is the
    last round the config was timed in (1: every candidate's brief first timing), and a config out of the race
    before its outputs were checked ends "timed, not checked". ``winner``: the config the search chose (the
    fastest, or with ``deterministic`` the earliest of those tied with it). ``denied_by``: the errata rule that
    denies the config (status "denied": it was neither built nor run; ``status_text`` says "denied (rule X)").
    """

    engine_index: int
    knobs: dict
    source: str
    rank: int | None = None
    modes: tuple = ()
    status: str = SKIPPED
    plan_built: bool = False
    reason: str = ""
    workspace_bytes: int | None = None
    time_us: float | None = None
    min_us: float | None = None
    max_us: float | None = None
    rel_error: float | None = None
    correct: bool | None = None
    checked_by: str = ""
    kernels: list | None = None
    kernel_count: int | None = None
    numerical_notes: tuple = ()
    behavior_notes: tuple = ()
    plan_seconds: float | None = None
    first_pass_us: float | None = None
    race_round: int | None = None
    winner: bool = False
    denied_by: str = ""

    @property
    def key(self) -> tuple:
        """(engine_index, sorted knob items): the config's identity within one graph."""
        return (self.engine_index, tuple(sorted(self.knobs.items())))

    @property
    def label(self) -> str:
        """``A#0``, ``B#3``, ``sweep``: where the config came from."""
        return f"{self.source}#{self.rank}" if self.rank is not None else self.source

    @property
    def status_text(self) -> str:
        """The status as tables show it: ``"denied (rule X)"`` for a config an errata rule denies."""
        return f"{self.status} (rule {self.denied_by})" if self.status == DENIED and self.denied_by else self.status

    @property
    def check_method(self) -> str:
        """``checked_by`` without the majority's reason (for tables; the exploration's ``check`` gives it)."""
        return self.checked_by.split(" (", 1)[0] if self.checked_by.startswith("majority") else self.checked_by

    @property
    def runtime_compiled(self) -> bool:
        return "RUNTIME_COMPILATION" in self.behavior_notes

    def knobs_text(self) -> str:
        """The knobs as a table cell: ``"TILE_SIZE=5 STAGES=4"``, ``"-"`` for none."""
        return knob_words(self.knobs) or "-"

    def config_text(self) -> str:
        """``"engine 7 KERNEL_CFG=21"``; ``"engine 11"`` for an engine without knobs."""
        return config_words(self.engine_index, self.knobs)

    def to_dict(self) -> dict:
        d = asdict(self)
        d["modes"] = list(self.modes)
        d["numerical_notes"] = list(self.numerical_notes)
        d["behavior_notes"] = list(self.behavior_notes)
        return d


    @classmethod
    def from_dict(cls, d: dict) -> "ConfigResult":
        """The ConfigResult ``to_dict`` wrote (TypeError naming a field of another type, or missing)."""
        check_fields(cls, d)
        names = {f.name for f in fields(cls)}
        kw = {k: v for k, v in d.items() if k in names}
        for k in ("modes", "numerical_notes", "behavior_notes"):
            kw[k] = tuple(kw.get(k, ()))
        return cls(**kw)


@dataclass
class Exploration:
    """Everything one ``explore`` call learned about one graph.

    ``results`` (``ConfigResult``, fastest correct first when timed), ``heuristics`` ({mode: [(engine_index,
    knobs), ...]} in cuDNN's order), ``engines`` (one row per engine of the graph: supported or why not,
    notes, knobs), ``graph`` (tensors and operations), ``device`` (name, SM version, SM count, and whether
    it was a GPU or a device profile), ``measured`` (how times were taken), ``check`` (how outputs were checked:
    "fp64 reference", "sampled fp64 reference (N points)" or "majority (why)"; empty when nothing ran), ``notes``,
    ``wall_seconds``, ``options`` (the ``TuneOptions`` it searched with, as plain data), ``phases`` (seconds
    spent per kind of work: heuristics, inputs, generate, build, check, time, final, kernels) and ``previous``
    (the winner another cuDNN release stored in the plan cache, tried here: its release, engine, knobs, time then
    and now, ``ratio_to_winner``, or its status and reason when this release refused it; None when there was none).
    Offline, ``offline_gaps``: refusals only the GPU decides that heuristics met (``tune.offline_gaps``); with no
    config chosen the graph is then ``unknown_offline``; ``cuda_runtime``: the engines and heuristics modes among them
    that need the CUDA runtime (``{"engines": [...], "heuristics": [...]}``, empty when none). ``errata``: what
    errata rules are matched against for this graph and device (``runtime.errata``: the plan tag, families, data
    types, SM, cuDNN version; what ``--errata-out`` writes rules from) and the file honoured.
    """

    name: str
    device: dict
    cudnn_version: str
    timed: bool
    graph: dict = field(default_factory=dict)
    params: dict = field(default_factory=dict)
    measured: str = ""
    check: str = ""
    heuristics: dict = field(default_factory=dict)
    engines: list = field(default_factory=list)
    results: list = field(default_factory=list)
    notes: list = field(default_factory=list)
    wall_seconds: float | None = None
    fingerprint: str = ""
    options: dict = field(default_factory=dict)
    phases: dict = field(default_factory=dict)
    previous: dict | None = None
    errata: dict = field(default_factory=dict)
    offline_gaps: list = field(default_factory=list)
    cuda_runtime: dict = field(default_factory=dict)

    @property
    def unknown_offline(self) -> bool:
        """Whether nothing was found offline for a reason only the GPU decides (``offline_gaps``): the GPU may run
        the graph."""
        return not self.timed and self.chosen is None and bool(self.offline_gaps)

    @property
    def best(self) -> ConfigResult | None:
        """The fastest correct config (None when nothing was timed): the final round's winner when there was one."""
        return fastest(self.results)

    @property
    def chosen(self) -> ConfigResult | None:
        """The config this exploration picks: the best when configs were timed; offline, heuristics' first config
        that built a plan (what ``autotune`` returns offline). None when there is none: ``failure()`` says why."""
        if self.timed:
            return self.best
        return next((r for r in self.results if r.plan_built), None)

    def failure(self) -> str | None:
        """Why nothing was found (no ``chosen`` config), in one line; None when a config was chosen."""
        if self.chosen is not None:
            return None
        if self.unknown_offline:
            found = (f"heuristics proposed no engine config for {self.name}" if not self.results else
                     f"none of the {plural(len(self.results), 'config')} of {self.name} built a plan")
            return (f"{UNKNOWN_OFFLINE}: {found}, and "
                    + gap_caveat(self.offline_gaps, self.cudnn_version, refused=True, runtime=self.cuda_runtime))
        if not self.results:
            why = next((n.partition(": ")[2] for n in self.notes if n.startswith("no engine config from heuristics")),
                       "")
            modes = ", ".join(self.heuristics) or "the modes asked"
            why = "; ".join(line.strip() for line in why.splitlines() if line.strip())
            return f"heuristics {modes} proposed no engine config for {self.name}" + (f": {why}" if why else "")
        reasons = list(dict.fromkeys(r.reason for r in self.results if r.reason))
        counts = ", ".join(f"{n} {status}" for status, n in self.counts().items())
        what = "ran correctly" if self.timed else "built a plan"
        return (f"none of the {plural(len(self.results), 'config')} of {self.name} {what} ({counts})"
                + (f"; {'; '.join(reasons[:3])}" if reasons else ""))

    @property
    def heuristics_pick(self) -> ConfigResult | None:
        """Heuristics A's first config (B's, or FALLBACK's, when A was not asked), as tried."""
        return heuristics_pick(self.results)

    @property
    def headroom(self) -> float | None:
        """The heuristics pick's time over the best config's (1.0: heuristics found the best; None untimed)."""
        best, pick = self.best, self.heuristics_pick
        if best is None or pick is None or pick.time_us is None or not best.time_us:
            return None
        return pick.time_us / best.time_us

    @property
    def modes_agree(self) -> bool | None:
        """Whether heuristics A and B proposed the same configs in the same order (None unless both ran)."""
        a, b = self.heuristics.get("A"), self.heuristics.get("B")
        if a is None or b is None:
            return None
        return a == b

    def counts(self) -> dict:
        """{status: how many configs ended so}."""
        out = {}
        for r in self.results:
            out[r.status] = out.get(r.status, 0) + 1
        return out

    def to_dict(self) -> dict:
        """Everything as JSON-able plain data (``from_dict`` reads it back)."""
        d = {f.name: getattr(self, f.name) for f in fields(self) if f.name != "results"}
        d["heuristics"] = {m: [[e, dict(k)] for e, k in cfgs] for m, cfgs in self.heuristics.items()}
        d["results"] = [r.to_dict() for r in self.results]
        d["headroom"] = self.headroom
        best, pick = self.best, self.heuristics_pick
        d["best"] = None if best is None else best.to_dict()
        d["heuristics_pick"] = None if pick is None else pick.to_dict()
        return d

    def to_json(self, indent=1) -> str:
        """``to_dict()`` as JSON text (NaN and infinity written as null)."""
        return json.dumps(json_ready(self.to_dict()), indent=indent, default=str, allow_nan=False)

    @classmethod
    def from_dict(cls, d: dict) -> "Exploration":
        """The Exploration ``to_dict`` wrote (extra keys, e.g. ``headroom``, are derived again); TypeError naming a
        field of another type, or missing."""
        check_fields(cls, d)
        names = {f.name for f in fields(cls)}
        kw = {k: v for k, v in d.items() if k in names}
        results = []
        for i, r in enumerate(d.get("results", [])):
            try:
                results.append(ConfigResult.from_dict(r))
            except TypeError as e:
                raise TypeError(f"results[{i}]: {e}") from None
        kw["results"] = results
        for i, key in enumerate(kw.get("offline_gaps", [])):
            if not isinstance(key, str) or key not in offline_gap_keys():
                raise TypeError(f"offline_gaps[{i}]: {key!r} is no offline gap (known: {', '.join(offline_gap_keys())})")
        try:
            kw["heuristics"] = {m: [(int(e), dict(k)) for e, k in cfgs] for m, cfgs in d.get("heuristics", {}).items()}
        except (TypeError, ValueError, AttributeError):
            raise TypeError("heuristics: expected {mode: [[engine index, {knob: value}], ...]}") from None
        return cls(**kw)

    @classmethod
    def from_json(cls, text: str):
        """The Exploration ``to_json`` wrote; for the file ``explore --json`` writes for several graphs (a JSON list),
        the list of Explorations."""
        try:
            data = json.loads(text)
        except RecursionError:
            raise ValueError("exploration JSON: nested too deeply to be an exploration") from None
        except ValueError as e:
            raise ValueError(f"exploration JSON: not valid JSON ({json_error_words(e)})") from None
        items = data if isinstance(data, list) else [data]
        explorations = []
        for i, d in enumerate(items):
            where = f"item {i} of the list" if isinstance(data, list) else "the JSON"
            if not isinstance(d, dict) or "name" not in d or "results" not in d:
                raise ValueError(f"exploration JSON: {where} is not an exploration (an object with name, results, ...: "
                                 "what Exploration.to_json or `explore --json` writes)")
            try:
                explorations.append(cls.from_dict(d))
            except (TypeError, ValueError, KeyError, AttributeError) as e:
                raise ValueError(f"exploration JSON: {where}: {e}") from None
        return explorations if isinstance(data, list) else explorations[0]

    def rows(self) -> list[dict]:
        """One flat dict per result (for CSV, pandas); a graph unknown offline with no result gets one row saying
        so."""
        if not self.results and self.unknown_offline:
            return [{"graph": self.name, "status": UNKNOWN_OFFLINE, "reason": self.failure()}]
        out = []
        for r in self.results:
            row = {"graph": self.name, **r.to_dict()}
            row["knobs"] = r.knobs_text()
            row["kernels"] = " ".join(r.kernels) if r.kernels else ""
            row["modes"] = ",".join(r.modes)
            row["numerical_notes"] = " ".join(r.numerical_notes)
            row["behavior_notes"] = " ".join(r.behavior_notes)
            out.append(row)
        return out

    def to_dataframe(self):
        """The results as a pandas DataFrame (pandas is an optional dependency)."""
        try:
            import pandas as pd
        except ImportError as e:
            raise MissingDependencyError("pandas", "Exploration.to_dataframe()", "plot") from e
        return pd.DataFrame(self.rows())

    def table(self, limit=None) -> str:
        """The results as a plain-text table (the command line draws a richer one); ``limit``: its first rows only."""
        if limit is not None:
            limit = as_int(limit, "limit", 0)
        rows = []
        for r in self.results[:limit]:
            rows.append({
                "from": r.label, "engine": r.engine_index, "knobs": r.knobs_text(), "status": r.status_text,
                "time": "-" if r.time_us is None else f"{r.time_us:.2f} us",
                "rel err": "-" if r.rel_error is None else f"{r.rel_error:.1e}", "checked by": r.check_method or "-",
                "workspace": format_bytes(r.workspace_bytes), "kernels": "-" if r.kernel_count is None else
                str(r.kernel_count), "reason": r.reason[:60]})
        return plain_table(rows)

    def plot(self, path, *, title=None):
        """Time per config, sorted, heuristics pick marked (matplotlib; optional dependency). Nothing timed
        (offline) raises ValueError: there is nothing to draw."""
        return plots.plot_exploration(self, path, title=title)

    def __repr__(self):
        best = self.best
        what = f"best engine {best.engine_index} {best.time_us:.2f} us" if best else \
            f"{self.counts().get(PLAN_BUILT, 0)} plans built (untimed)"
        return f"<Exploration {self.name!r} on {self.device.get('name')}: {len(self.results)} configs, {what}>"


def heuristics_pick(config_results) -> ConfigResult | None:
    """Heuristics A's first config among these ConfigResults (B's, or FALLBACK's, when A was not asked)."""
    config_results = list(config_results)
    for mode in ("A", "B", "FALLBACK", "INSTANT"):
        ranked = [r for r in config_results if mode in r.modes or r.source == mode]
        if ranked:
            return min(ranked, key=lambda r: (r.source != mode, r.rank if r.rank is not None else 1 << 30))
    return None


def fastest(config_results) -> ConfigResult | None:
    """The config the search chose (``winner``), else the fastest correct, timed ConfigResult among those timed
    last: the final round's finalists (``first_pass_us`` set) when there was one, else those of the latest racing
    round (only they were measured alike at the end)."""
    ok = [r for r in config_results if r.status == OK and r.time_us is not None]
    if not ok:
        return None
    chosen = [r for r in ok if r.winner]
    if chosen:
        return chosen[0]
    finalists = [r for r in ok if r.first_pass_us is not None]
    if not finalists:
        last = max(r.race_round or 0 for r in ok)
        finalists = [r for r in ok if (r.race_round or 0) == last]
    return min(finalists, key=lambda r: r.time_us)


def knob_words(knobs: dict) -> str:
    """``"TILE_SIZE=5 STAGES=4"``; empty for no knobs."""
    return " ".join(f"{k}={v}" for k, v in knobs.items())


def config_words(engine_index, knobs: dict) -> str:
    """A config in words: ``"engine 7 KERNEL_CFG=21"``, ``"engine 11"`` for an engine without knobs."""
    return f"engine {engine_index} {knob_words(knobs)}".rstrip()


def plural(n, noun, nouns=None) -> str:
    """``"1 config"``, ``"35 configs"``, ``"0 graphs"`` (``nouns``: an irregular plural)."""
    return f"{n:,} {noun if n == 1 else (nouns or noun + 's')}"


def format_bytes(n) -> str:
    """``1.5 MiB``-style sizes ("-" for None)."""
    if n is None:
        return "-"
    n = int(n)
    for unit in ("B", "KiB", "MiB", "GiB"):
        if abs(n) < 1024 or unit == "GiB":
            return f"{n} {unit}" if unit == "B" else f"{n:.1f} {unit}"
        n /= 1024
    return str(n)


def plain_table(rows: list[dict]) -> str:
    """A fixed-width text table of dict rows."""
    if not rows:
        return "(nothing)"
    cols = list(dict.fromkeys(k for r in rows for k in r))
    cells = [[str(r.get(c, "")) for c in cols] for r in rows]
    widths = [max(len(c), *(len(row[i]) for row in cells)) for i, c in enumerate(cols)]
    lines = ["  ".join(c.ljust(w) for c, w in zip(cols, widths)), "  ".join("-" * w for w in widths)]
    lines += ["  ".join(v.ljust(w) for v, w in zip(row, widths)) for row in cells]
    return "\n".join(line.rstrip() for line in lines)


def headroom_rows(explorations) -> list[dict]:
    """One row per exploration: configs timed, heuristics A's pick and the best found (µs), the headroom."""
    rows = []
    for ex in explorations:
        pick, best = ex.heuristics_pick, ex.best
        rows.append({
            "graph": ex.name,
            "configs timed": sum(1 for r in ex.results if r.status in (OK, TIMED)),
            "sweep timed": sum(1 for r in ex.results if r.status in (OK, TIMED) and r.source == "sweep"),
            "A pick": None if pick is None else pick.config_text().removeprefix("engine "),
            "A pick us": None if pick is None or pick.time_us is None else round(pick.time_us, 2),
            "best": None if best is None else f"{best.config_text().removeprefix('engine ')} ({best.label})",
            "best us": None if best is None else round(best.time_us, 2),
            "headroom": None if ex.headroom is None else round(ex.headroom, 3),
            "wall s": None if ex.wall_seconds is None else round(ex.wall_seconds, 1),
        })
    return rows
