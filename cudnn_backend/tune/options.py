"""The option sets of the package's functions, each one frozen dataclass: one place for each default, its help text
and its check. ``TuneOptions``: every option of ``explore``, ``autotune``, ``sweep``'s search and the command
line's explore and tune. Beside it the options of the other jobs: ``SweepOptions`` (how ``sweep`` spreads the
graphs), ``BenchOptions`` (``bench``), ``WhyOptions`` (``why``'s minimization) and ``SupportOptions``
(``support_matrix`` and ``compare_support``: which graphs, how they are probed).

Each field's metadata is an ``Option``: its ``Kind`` (what values it takes: the check a Python caller's value goes
through, the parser a command-line text goes through, and how the default is shown), its help text, its command
line flag and group. ``explore(..., race_keep=0.5)`` and ``TuneOptions(race_keep=0.5)`` are refused alike,
naming the option the Python way (``race_keep=1.5: expected a fraction in (0, 1]``); the command line derives its
options from the same fields (``cli.args.add_options``), so ``--race-keep 1.5`` is refused naming
``--race-keep``. The functions keep their keyword arguments, with these dataclasses' defaults, and check them by
making one (``SweepOptions(gpus=gpus, ...)``).

Two defaults of ``TuneOptions`` depend on the job: ``engines`` (the table of every engine; explore lists it,
autotune does not) and ``fusion`` (explore reads the kernels of every config it runs, autotune and sweeps only the
best's). Both are None here and ``for_job`` fills them from ``JOB_DEFAULTS``.
"""
from __future__ import annotations

import math
import operator
import os
import re
import urllib.parse
from dataclasses import dataclass, field, fields, replace

from cudnn_backend.runtime import engines as _engines
from cudnn_backend.runtime import errata as _errata
from cudnn_backend.runtime import heuristics as _heuristics
from cudnn_backend.tune.strategies import STRATEGIES

__all__ = ["OptionSet", "TuneOptions", "SweepOptions", "BenchOptions", "WhyOptions", "SupportOptions", "OPTION_SETS",
           "Option", "Kind", "JOB_DEFAULTS", "as_options", "option_fields", "cli_flag", "check_option",
           "default_build_threads", "ORDERS", "PLAN_MODES", "progress_callback"]


class Kind:
    """What values an option takes. ``check(value)`` returns the value normalized, or raises TypeError (wrong
    type) / ValueError (out of range) whose text says what is expected (the caller names the option);
    ``parse(text)`` reads a command-line text; ``show(value)`` writes a value as the command line takes it."""

    expected = "a value"
    optional = False  # None allowed (and means: no limit / the job's default)

    def __init__(self, *, optional=False):
        self.optional = optional

    def check(self, value):
        if value is None and self.optional:
            return None
        return self._check(value)

    def _check(self, value):
        return value

    def parse(self, text: str):
        return self.check(self._parse(text))

    def _parse(self, text: str):
        return text

    def show(self, value) -> str:
        return str(value)


class Flag(Kind):
    expected = "True or False"

    def _check(self, value):
        if type(value).__name__ in ("bool", "bool_"):
            return bool(value)
        raise TypeError(f"expected {self.expected}, not {type(value).__name__}")


class Count(Kind):
    """An int >= ``minimum`` and <= ``maximum`` where one is given (bools, floats and strings refused)."""

    def __init__(self, minimum=0, *, maximum=None, optional=False):
        super().__init__(optional=optional)
        self.minimum, self.maximum = minimum, maximum
        self.expected = f"an integer >= {minimum}" if maximum is None else f"an integer from {minimum} to {maximum}"

    def _check(self, value):
        if isinstance(value, bool):
            raise TypeError(f"expected {self.expected}, not a bool")
        try:
            v = operator.index(value)
        except TypeError:
            raise TypeError(f"expected {self.expected}, not {type(value).__name__}") from None
        if v < self.minimum or (self.maximum is not None and v > self.maximum):
            raise ValueError(f"expected {self.expected}")
        return int(v)

    def _parse(self, text):
        digits = text.strip().lstrip("+-")
        if digits.isascii() and digits.isdigit() and len(digits) > MAX_DIGITS:
            error = ValueError(f"a number of {len(digits):,} digits: expected {self.expected}"
                               + (f" (at most {self.maximum})" if self.maximum is not None else ""))
            error.names_value = True  # (its words say what it was: its digits, given back, would hide them)
            raise error
        try:
            return _read_int(text)
        except ValueError:
            raise ValueError(f"expected {self.expected}") from None


MAX_DIGITS = 40  # a count of more digits is no count (int64's largest has 19); its value is not worth reading


def _read_int(text: str) -> int:
    """An int as typed: decimal, leading zeros too (``010`` is 10), or 0x / 0o / 0b prefixed."""
    t = text.strip()
    return int(t, 10) if t.lstrip("+-").isdigit() else int(t, 0)


class Real(Kind):
    """A finite number in [low, high] (or (low, high] with ``open_low``)."""

    def __init__(self, low=0.0, high=math.inf, *, open_low=False, expected=None, optional=False):
        super().__init__(optional=optional)
        self.low, self.high, self.open_low = low, high, open_low
        self.expected = expected or (f"a number {'>' if open_low else '>='} {low:g}" +
                                     ("" if high == math.inf else f" and <= {high:g}"))

    def _check(self, value):
        # a bool is no number, numpy's bool_ neither (it is no bool subclass, and float() takes it)
        if isinstance(value, bool) or type(value).__name__ in ("bool", "bool_") or \
                not isinstance(value, (int, float)) and type(value).__module__ != "numpy":
            raise TypeError(f"expected {self.expected}, not {type(value).__name__}")
        try:
            v = float(value)
        except (TypeError, ValueError):
            raise TypeError(f"expected {self.expected}, not {type(value).__name__}") from None
        if not math.isfinite(v) or v < self.low or (self.open_low and v == self.low) or v > self.high:
            raise ValueError(f"expected {self.expected}")
        return v

    def _parse(self, text):
        try:
            return float(text)
        except ValueError:
            raise ValueError(f"expected {self.expected}") from None


def Seconds(*, optional=False) -> Real:  # noqa: N802 - reads as a kind
    return Real(0.0, expected="a finite number of seconds >= 0", optional=optional)


def Fraction() -> Real:  # noqa: N802
    return Real(0.0, 1.0, open_low=True, expected="a fraction in (0, 1]")


_BYTES = re.compile(r"^\s*(\d+)\s*([kmgt]?i?b?)?\s*$", re.IGNORECASE)


class Bytes(Count):
    """Bytes: an int >= 0; on the command line ``1048576``, ``64MiB``, ``2GB``, ``512k`` (binary multiples)."""

    MAXIMUM = (1 << 63) - 1  # cuDNN's workspace sizes are int64

    def __init__(self, *, optional=False):
        super().__init__(0, maximum=self.MAXIMUM, optional=optional)
        self.expected = f"a size in bytes from 0 to {self.MAXIMUM} (e.g. 0, 65536, 64MiB, 2GiB)"

    def _parse(self, text):
        m = _BYTES.match(text)
        if not m:
            raise ValueError(f"expected {self.expected}")
        unit = (m.group(2) or "").lower().rstrip("b").rstrip("i")
        return int(m.group(1)) << {"": 0, "k": 10, "m": 20, "g": 30, "t": 40}[unit]


class Choice(Kind):
    def __init__(self, choices, *, optional=False):
        super().__init__(optional=optional)
        self.choices = tuple(choices)
        self.expected = "one of " + ", ".join(repr(c) for c in self.choices)

    def _check(self, value):
        if isinstance(value, bool) or value not in self.choices:
            raise (ValueError if isinstance(value, str) else TypeError)(f"expected {self.expected}")
        return value


class Text(Kind):
    """A str; with ``empty=False`` not an empty (or blank) one."""

    expected = "a str"

    def __init__(self, *, optional=False, empty=True):
        super().__init__(optional=optional)
        self.empty = empty
        if not empty:
            self.expected = "a non-empty str"

    def _check(self, value):
        if not isinstance(value, str):
            raise TypeError(f"expected {self.expected}, not {type(value).__name__}")
        if not self.empty and not value.strip():
            raise ValueError(f"expected {self.expected} (leave the option out for any)")
        return value


class RayAddress(Text):
    """Where Ray runs: "local" (a local ``ray.init()``), "auto" (the cluster Ray finds itself, or
    ``$RAY_ADDRESS``), or a cluster's ``HOST:PORT`` (its GCS) or ``ray://HOST:PORT`` (Ray Client)."""

    expected = "HOST:PORT, ray://HOST:PORT, auto or local"
    CLIENT_PORT = 10001  # Ray Client's port when ray:// names none

    def _check(self, value):
        value = super()._check(value)
        self.endpoint(value)
        return value

    @classmethod
    def endpoint(cls, address):
        """(host, port) of a cluster's address, or None for "local" and "auto" (nothing to reach before Ray starts);
        a ValueError for an address of no form Ray takes."""
        if address in ("local", "auto"):
            return None
        rest = address.removeprefix("ray://")
        try:
            parts = urllib.parse.urlsplit("//" + rest)
            port = parts.port
        except ValueError:
            parts, port = None, None
        client = rest != address
        if parts is None or not parts.hostname or parts.path or parts.query or parts.fragment or \
                (port is None and not client):
            err = ValueError(f"{address!r} is not an address Ray takes: expected {cls.expected}")
            err.names_value = True
            raise err
        return parts.hostname, cls.CLIENT_PORT if port is None else port


class Names(Kind):
    """Names: one, a comma list ("a,b") or a sequence of them (kept as given: the function they are for knows
    which names exist); with ``choices``, each must be one of them, and they come back as a tuple."""

    expected = "a name, a comma list of names or a sequence of them"

    def __init__(self, choices=None, *, optional=False):
        super().__init__(optional=optional)
        self.choices = None if choices is None else tuple(choices)

    def _check(self, value):
        if isinstance(value, str):
            names = value.split(",")
        elif isinstance(value, (list, tuple)) and all(isinstance(v, str) for v in value):
            names = value
        else:
            raise TypeError(f"expected {self.expected}, not {type(value).__name__}")
        # an empty one would filter nothing out, silently: a typo or an empty variable, never meant
        if not names or any(not n.strip() for n in names):
            err = ValueError(f"expected {self.expected}; {value!r} has an empty name (leave the option out for any)")
            err.names_value = True
            raise err
        if self.choices is None:
            return value if isinstance(value, str) else tuple(value)
        names = tuple(dict.fromkeys(n.strip() for n in names))
        unknown = [n for n in names if n not in self.choices]
        if unknown:
            err = ValueError(f"{unknown[0]!r} is not one of {', '.join(self.choices)}")
            err.names_value = True
            raise err
        return names

    def show(self, value):
        return value if isinstance(value, str) else ",".join(value)


class Gpus(Kind):
    """How many GPUs: "all" or an int >= 1 (None: every GPU visible)."""

    expected = "'all' or an integer >= 1"

    def _check(self, value):
        if value == "all":
            return value
        if isinstance(value, str):
            raise ValueError(f"expected {self.expected}")
        try:
            return Count(1)._check(value)
        except (TypeError, ValueError) as e:
            raise type(e)(f"expected {self.expected}") from None

    def _parse(self, text):
        if text == "all":
            return text
        try:
            return _read_int(text)
        except ValueError:
            raise ValueError(f"expected {self.expected}") from None


class Modes(Kind):
    """Heuristics modes: "A,B", or a sequence of "A", "B", "FALLBACK", "INSTANT" (C names, members and ints too),
    as a tuple of short names without repeats."""

    expected = "heuristics modes (A, B, FALLBACK, INSTANT)"

    def _check(self, value):
        if isinstance(value, str):
            value = [m for m in value.replace(" ", "").split(",") if m]
        elif not isinstance(value, (tuple, list)):
            raise TypeError(f"expected {self.expected} as 'A,B' or a sequence, not {type(value).__name__}")
        out = []
        for m in value:
            try:
                name = _engines.short_name(_heuristics.heur_mode(m))
            except (TypeError, ValueError):
                err = ValueError(f"{m!r} is not one of the {self.expected}")
                err.names_value = True  # the command line adds no "not TEXT"
                raise err from None
            if name not in out:
                out.append(name)
        if not out:
            raise ValueError(f"give at least one of the {self.expected}")
        return tuple(out)

    def show(self, value):
        return ",".join(value)


class Tristate(Kind):
    """True, False, or None (the job's default)."""

    expected = "True, False or None"

    def _check(self, value):
        if value is None or type(value).__name__ in ("bool", "bool_"):
            return None if value is None else bool(value)
        raise TypeError(f"expected {self.expected}, not {type(value).__name__}")


class Fusion(Kind):
    expected = "True, False, 'best' or 'all' (None: the job's default)"

    def _check(self, value):
        if value is None or value is True or value is False or value in ("best", "all"):
            return value
        raise (ValueError if isinstance(value, str) else TypeError)(f"expected {self.expected}, not {value!r}")


class ErrataFile(Kind):
    """An errata file to honour (cudnn-frontend's format; checked now, refused whole when it is not valid), an
    ``Errata``, "" (none), or None (``$CUDNN_ERRATA_JSON_FILE``, read when the search starts)."""

    expected = "an errata file (cudnn-frontend's format), '' for none, or None for $CUDNN_ERRATA_JSON_FILE"

    def _check(self, value):
        if value is None or isinstance(value, _errata.Errata):
            return value
        if value is False or value == "":
            return ""
        if isinstance(value, os.PathLike):
            value = os.fspath(value)
        if not isinstance(value, str):
            raise TypeError(f"expected {self.expected}, not {type(value).__name__}")
        try:
            _errata.resolve(value)
        except _errata.ErrataError as e:
            err = ValueError(str(e))
            err.names_value = True  # the message names the file
            raise err from None
        return value

    def show(self, value):
        return "" if value is None else str(getattr(value, "source", value))


class ErrataOut(Kind):
    """Where to record the configs found bad: a path whose folder exists (an errata file there is added to; any
    other file there is refused), or None."""

    expected = "the path of an errata file to write"

    def _check(self, value):
        if value is None:
            return None
        if isinstance(value, os.PathLike):
            value = os.fspath(value)
        if not isinstance(value, str) or not value:
            err = TypeError(f"expected {self.expected}, not {value!r}")
            err.names_value = True  # (the command line would name it again)
            raise err
        folder = os.path.dirname(os.path.abspath(value))
        if not os.path.isdir(folder):
            err = ValueError(f"the folder of {value!r} does not exist")
            err.names_value = True
            raise err
        if os.path.exists(value):
            try:
                _errata.resolve(value)
            except _errata.ErrataError as e:
                err = ValueError(f"{e}; rules are added to an errata file, never written over another file")
                err.names_value = True
                raise err from None
        return value


@dataclass(frozen=True)
class Option:
    """A field's metadata: its kind, help text, command-line flag (None: not on the command line; "": the field's
    name with dashes, ``--no-`` before it for a flag that is on by default), group in ``--help``, metavar, and
    ``const``: the value of a flag given without one (its value is then optional); ``off_help``: the help of a flag on
    by default, whose ``--no-`` form turns it off."""

    kind: Kind
    help: str
    flag: str | None = ""
    group: str | None = "search"  # None: the command's own options
    metavar: str | None = None
    const: object = None
    off_help: str | None = None  # a flag on by default: what its --no- form does (``help`` says what the field does)


def _field(default, kind, help, **cli):
    return field(default=default, metadata={"option": Option(kind, help, **cli)})


_FIELDS_OF: dict = {}  # option set class -> {name: field}


class OptionSet:
    """The base of the option dataclasses: every field checked when the object is made (``__post_init__``);
    ``replace(**changes)`` gives a checked copy; the fields' ``Option`` metadata give the command line's options
    (``cli.args.add_options``)."""

    def __post_init__(self):
        for f in fields(self):
            object.__setattr__(self, f.name, type(self).check(f.name, getattr(self, f.name)))

    @classmethod
    def _fields(cls) -> dict:
        known = _FIELDS_OF.get(cls)
        if known is None:
            known = _FIELDS_OF[cls] = {f.name: f for f in fields(cls)}
        return known

    @classmethod
    def field_names(cls) -> tuple:
        """The options' names, in order."""
        return tuple(cls._fields())

    @classmethod
    def option_fields(cls) -> list:
        """The fields with their ``Option`` metadata, in order."""
        return [(f, f.metadata["option"]) for f in fields(cls)]

    @classmethod
    def cli_flag(cls, name: str) -> str | None:
        """The command-line flag of option ``name`` (None when it has none)."""
        f = cls._fields()[name]
        opt = f.metadata["option"]
        if opt.flag is None:
            return None
        if opt.flag:
            return opt.flag
        negated = isinstance(opt.kind, Flag) and f.default is True  # on by default: the flag turns it off
        return ("--no-" if negated else "--") + name.replace("_", "-")

    @classmethod
    def group_of(cls, name: str) -> str | None:
        """The ``--help`` group of option ``name``."""
        return cls._fields()[name].metadata["option"].group

    @classmethod
    def check(cls, name: str, value):
        """``value`` checked for option ``name``: a TypeError/ValueError naming it the Python way (``name=value:
        what is expected``), with ``.option`` set to the field name (the command line rewrites it with the flag)."""
        kind = cls._fields()[name].metadata["option"].kind
        try:
            return kind.check(value)
        except (TypeError, ValueError) as e:
            err = type(e)(f"{name}={value!r}: {e}")
            err.option = name
            raise err from None

    @classmethod
    def known(cls, kwargs, what):
        """Refuse names in ``kwargs`` that are not fields, naming them and the fields."""
        unknown = sorted(set(kwargs) - set(cls._fields()))
        if unknown:
            raise TypeError(f"{what}: unexpected keyword argument(s) {', '.join(unknown)} (the options are "
                            f"{cls.__name__}' fields: {', '.join(cls._fields())})")

    @classmethod
    def of(cls, options=None, what="options", **kwargs):
        """An object of this class from ``options`` (one, a dict of fields, or None) with ``kwargs`` applied over
        it; unknown names and bad values refused naming them."""
        cls.known(kwargs, what)
        if options is None:
            return cls(**kwargs)
        if isinstance(options, cls):
            return replace(options, **kwargs) if kwargs else options
        if isinstance(options, dict):
            cls.known(options, what)
            return cls(**{**options, **kwargs})
        raise TypeError(f"{what}: expected a {cls.__name__}, a dict of its fields or None, not "
                        f"{type(options).__name__}")

    def replace(self, **changes):
        """A checked copy with ``changes`` (unknown names refused naming them)."""
        type(self).known(changes, f"{type(self).__name__}.replace")
        return replace(self, **changes)

    def as_kwargs(self) -> dict:
        """{field: value}: what the class takes back (sweeps ship options to workers so)."""
        return {f.name: getattr(self, f.name) for f in fields(self)}

    def to_dict(self) -> dict:
        """Plain data (for a result's record of how it was made; an errata set as its file)."""
        return {f.name: (list(v) if isinstance(v := getattr(self, f.name), tuple) else
                         str(v.source or v) if isinstance(v, _errata.Errata) else v) for f in fields(self)}


def default_build_threads() -> int:
    """Threads building runtime-compiled plans by default: one CPU is left to the thread that times, at most 4."""
    try:
        cpus = len(os.sched_getaffinity(0))
    except AttributeError:  # not Linux
        cpus = os.cpu_count() or 1
    return max(0, min(4, cpus - 1))


@dataclass(frozen=True)
class TuneOptions(OptionSet):
    """How ``explore``, ``autotune`` and ``sweep`` search a graph's engine configs. Every field is checked when the
    object is made (``__post_init__``); ``replace(**changes)`` gives a checked copy."""

    # -- candidates --------------------------------------------------------------------------------------
    modes: tuple = _field(("A", "B"), Modes(), "heuristics modes whose configs are tried (A, B, FALLBACK, "
                          "INSTANT)", metavar="MODES")
    max_configs: int | None = _field(None, Count(1, optional=True), "try at most N heuristics configs",
                                     metavar="N")
    max_workspace: int | None = _field(None, Bytes(optional=True), "skip configs needing more workspace (bytes; "
                                       "on the command line e.g. 64MiB)", metavar="BYTES")
    sm_count_target: int | None = _field(None, Count(1, maximum=(1 << 31) - 1, optional=True),  # (cuDNN's int32)
                                         "ask heuristics for configs using at most "
                                         "N SMs", flag="--sm-count", metavar="N")
    sweep: bool = _field(False, Flag(), "search knobs around the fastest configs (one knob at a time, then pairs); "
                         "needs a GPU")
    sweep_seeds: int = _field(3, Count(1), "configs the knob search starts from (the fastest of the fastest engines)",
                              metavar="N")
    pair_seeds: int = _field(2, Count(0), "configs around which the knob search changes two knobs at once",
                             metavar="N")
    pair_search: str = _field("learned", Choice(("learned", "all")), "the knob search's pairs: learned (those "
                              "whose two changes cuDNN accepted alone first, then one, then neither, a less likely "
                              "tier left after a run of refusals) or all (every pair round-robin, each candidate "
                              "checked against KNOB_INFO: the search before racing)", metavar="HOW")
    knob_values: int = _field(32, Count(2), "values tried per knob (evenly thinned when a knob has more)",
                              metavar="N")
    sweep_budget_s: float | None = _field(2.0, Seconds(optional=True), "seconds the knob search may take (ignored "
                                          "with --deterministic; a precompiled engine's search takes well under 1 s, "
                                          "the budget bounds the runtime-compiled ones' builds)",
                                          flag="--sweep-budget", metavar="S")
    sweep_configs: int | None = _field(None, Count(0, optional=True), "candidates the knob search may try (a count: "
                                       "the budget of --deterministic)", metavar="N")
    compile_budget_s: float | None = _field(30.0, Seconds(optional=True), "seconds spent building runtime-compiled "
                                            "plans before the rest are skipped (ignored with --deterministic)",
                                            flag="--compile-budget", metavar="S")
    build_threads: int | None = _field(None, Count(0, optional=True), "threads building runtime-compiled plans "
                                       "ahead of the timing (cuDNN compiles with the GIL released; default: the "
                                       "CPUs less one, at most 4; 0: build when timed)", metavar="N")
    # -- errata ---------------------------------------------------------------------------------------------
    errata: object = _field(None, ErrataFile(optional=True), "deny the configs this errata file's rules name "
                            "(cudnn-frontend's format; default: $CUDNN_ERRATA_JSON_FILE, '' for none): each shown "
                            "as denied with its rule, never built or run", group="errata", metavar="FILE")
    errata_out: str | None = _field(None, ErrataOut(optional=True), "record the configs that gave wrong results, "
                                    "crashed the process or were refused at execute as rules in this errata file "
                                    "(created, or added to), scoped to this GPU, cuDNN release, data types and "
                                    "graph family; cudnn-frontend and PyTorch read it (CUDNN_ERRATA_JSON_FILE)",
                                    group="errata", metavar="FILE")
    errata_scope: str = _field("family", Choice(("family", "graph")), "what a recorded rule covers besides the GPU, "
                               "release and data types: family (every graph of the same operations) or graph "
                               "(this graph alone, by fingerprint)", group="errata", metavar="SCOPE")
    # -- choosing -------------------------------------------------------------------------------------------
    strategy: str = _field("racing", Choice(STRATEGIES), "how candidates are timed: racing (each timed briefly, the "
                           "fastest fraction re-timed with more samples, round after round) or exhaustive (every "
                           "candidate checked and timed fully)", group="choosing", metavar="NAME")
    race_keep: float = _field(0.25, Fraction(), "racing: the fraction of candidates kept after each round",
                              group="choosing", metavar="F")
    race_margin: float = _field(0.2, Real(0.0, 1.0, expected="a fraction >= 0 and <= 1"), "racing: the cut after "
                                "the brief first round also keeps those timed within this fraction of the last one "
                                "kept (at most 1.5 times as many), and the final round takes those within it of its "
                                "last finalist (2 more at most): a brief timing's noise cannot decide alone", group="choosing",
                                metavar="F")
    race_samples: int = _field(2, Count(1), "racing: samples per candidate in the first round (at least 3 when "
                               "deterministic; each later round takes 1/race_keep times more, up to --repeats)", group="choosing", metavar="N")
    finalists: int = _field(4, Count(0), "the fastest N configs (and heuristics' pick) re-timed head to head to "
                            "choose the winner; 0: the last timing decides", group="choosing", metavar="N")
    final_rounds: int = _field(3, Count(1), "interleaved rounds of that final", group="choosing", metavar="N")
    # -- timing ---------------------------------------------------------------------------------------------
    time: bool | None = _field(None, Tristate(), "None: time when a GPU is there; False: never", flag=None)
    warmup: int = _field(10, Count(0), "warm-up calls per config (exhaustive; racing's first round takes 2)",
                         group="timing (GPU)", metavar="N")
    repeats: int = _field(20, Count(1), "timed samples per config (the median is reported; racing's last rounds)",
                          group="timing (GPU)", metavar="N")
    buffer_sets: int = _field(4, Count(1), "buffer sets the inputs rotate over while timing (exhaustive)",
                              group="timing (GPU)", metavar="N")
    cold: bool = _field(False, Flag(), "flush L2 before every timed call", group="timing (GPU)")
    cuda_graph: bool = _field(False, Flag(), "time replays of a CUDA graph (no launch overhead)",
                              group="timing (GPU)")
    # -- reproducibility ------------------------------------------------------------------------------------
    deterministic: bool = _field(False, Flag(), "two runs choose the same winner when timings tie within --tie: "
                                 "candidates in a fixed order, count budgets only (--sweep-configs), ties broken "
                                 "by that order", group="reproducibility")
    seed: int = _field(0, Count(0), "seed of the random inputs and of the sampled reference's coordinates",
                       group="reproducibility", metavar="N")
    tie: float = _field(0.02, Real(0.0, 0.5, expected="a fraction >= 0 and <= 0.5"), "deterministic: times "
                        "within this fraction of each other count as tied", group="reproducibility", metavar="F")
    # -- outputs --------------------------------------------------------------------------------------------
    engines: bool | None = _field(None, Tristate(), "list every engine of the graph, supported or why not "
                                  "(None: explore does, autotune does not)", flag=None)
    fusion: bool | str | None = _field(None, Fusion(), "read kernel names: True/'all' of every config run, 'best' "
                                       "of the best only, False none (None: explore every config, autotune and "
                                       "sweeps the best)", flag=None)

    def for_job(self, job: str) -> "TuneOptions":
        """These options with the job's defaults for the fields left None (``JOB_DEFAULTS``)."""
        defaults = JOB_DEFAULTS[job]
        return replace(self, **{k: v for k, v in defaults.items() if getattr(self, k) is None})

    @property
    def threads(self) -> int:
        """The threads building runtime-compiled plans: ``build_threads``, or ``default_build_threads()``."""
        return default_build_threads() if self.build_threads is None else self.build_threads


# the defaults that depend on the job (``TuneOptions.for_job``): explore shows every engine and every config's
# kernel count; autotune returns a plan (no table of engines) and reads only the winner's kernels; a sweep's
# explore lists engines but reads only the best's kernels (its tables show no per-config kernels)
JOB_DEFAULTS = {
    "explore": {"engines": True, "fusion": True},
    "autotune": {"engines": False, "fusion": "best"},
    "sweep": {"engines": True, "fusion": "best"},
}


def option_fields() -> list:
    """The fields of ``TuneOptions`` with their ``Option`` metadata, in order."""
    return TuneOptions.option_fields()


def cli_flag(name: str) -> str | None:
    """The command-line flag of ``TuneOptions``' option ``name`` (None when it has none)."""
    return TuneOptions.cli_flag(name)


def check_option(name: str, value):
    """``value`` checked for ``TuneOptions``' option ``name`` (``OptionSet.check``)."""
    return TuneOptions.check(name, value)


def progress_callback(progress, what="progress"):
    """A job's ``progress`` argument: a callable (called as work finishes), or None/False for none; anything else
    refused here, naming ``what``, rather than failing at the first call deep in the job."""
    if progress is None or progress is False:
        return None
    if not callable(progress):
        raise TypeError(f"{what}: expected a callable, called as work finishes, or None/False for none; not "
                        f"{type(progress).__name__}")
    return progress


def as_options(options=None, what="options", **kwargs) -> TuneOptions:
    """A ``TuneOptions`` from ``options`` (a TuneOptions, a dict of fields, or None) with ``kwargs`` applied over
    it; unknown names and bad values refused naming them."""
    return TuneOptions.of(options, what, **kwargs)


# ---------------------------------------------------------------------------------------------
# the options of the other jobs
# ---------------------------------------------------------------------------------------------
#: the orders a sweep's parallel executors hand tasks out in (``sweeps.dispatch_order``)
ORDERS = ("largest", "given")
#: ``plans=``: which configs' execution plans a support probe builds
PLAN_MODES = ("precompiled", "all", "none")


@dataclass(frozen=True)
class SweepOptions(OptionSet):
    """How ``sweep`` spreads many graphs: over this host's GPUs or CPU workers (the processes executor), or Ray."""

    gpus: int | str | None = _field(None, Gpus(optional=True), "spread the graphs over this many GPUs (one "
                                    "process each); default: one after another here. More GPUs than this machine "
                                    "has is an error, and so is --gpus offline (no GPU, or --device-profile): "
                                    "--workers N is the offline way", group="many graphs", metavar="all|N")
    ray_address: str | None = _field(None, RayAddress(optional=True), "send the graphs to Ray: a local ray.init() "
                                     "without ADDRESS, else that cluster (HOST:PORT, ray://HOST:PORT, or auto)",
                                     flag="--ray", group="many graphs", metavar="ADDRESS", const="local")
    workers: int | None = _field(None, Count(1, optional=True), "CPU worker processes for an offline sweep (--gpus "
                                 "without a GPU); at most one per graph and per core", group="many graphs",
                                 metavar="N")
    order: str = _field("largest", Choice(ORDERS), "the order workers take the graphs in: largest estimated work "
                        "first (the default: the last graphs, run while other workers idle, are small ones) or as "
                        "given", group="many graphs")
    split: bool | None = _field(None, Tristate(), "whether one graph's search may be split over several workers "
                                "(None: on GPUs for explore and tune)", flag=None)


BENCH_CASES = ("execute", "bind + execute", "cuda graph replay")  # what bench times, in its order


@dataclass(frozen=True)
class BenchOptions(OptionSet):
    """How ``bench`` times a plan: ``warmup`` calls, then ``repeats`` batches of ``iterations`` back-to-back calls,
    each batch one sample of the per-call time. (``TuneOptions``' ``warmup`` and ``repeats`` are per config and
    time one call per sample.)"""

    iterations: int = _field(200, Count(1), "calls per timed batch", group=None)
    repeats: int = _field(7, Count(1), "timed batches (median, min and max reported)", group=None)
    warmup: int = _field(50, Count(0), "warm-up calls per case", group=None)
    cases: tuple = _field(BENCH_CASES, Names(BENCH_CASES), "the cases timed (comma list: "
                          + ", ".join(BENCH_CASES) + ")", group=None, metavar="LIST")


@dataclass(frozen=True)
class WhyOptions(OptionSet):
    """How ``why`` looks for the smallest change that makes a refused graph supported."""

    minimize: bool = _field(True, Flag(), "look for the smallest change that makes the graph supported (off: "
                            "explain only; try no variations)", group="minimization",
                            off_help="explain only; try no variations (by default why looks for the smallest change "
                                     "that makes the graph supported)")
    budget_s: float = _field(60.0, Seconds(), "seconds the variations may take", flag="--budget",
                             group="minimization", metavar="S")
    max_variations: int = _field(400, Count(1), "variations probed at most", group="minimization", metavar="N")


_WHICH = "which graphs (the default catalogue, or yours)"


@dataclass(frozen=True)
class SupportOptions(OptionSet):
    """Which graphs of a catalogue a support matrix probes (the filters: each a name, a comma list or a list; None:
    any) and how (``plans``, ``workers``)."""

    family: str | tuple | None = _field(None, Names(optional=True), "only these families (comma list: conv_fwd, "
                                        "conv_dgrad, conv_wgrad, matmul, layer_norm, rms_norm, batch_norm, sdpa, "
                                        "sdpa_composite; user for your own)", group=_WHICH, metavar="LIST")
    data_type: str | tuple | None = _field(None, Names(optional=True), "only these data types (comma list: fp16, "
                                           "bf16, fp32, fp8_e4m3, int8; half, bfloat16, float, fp8 too)",
                                           flag="--dtype", group=_WHICH, metavar="LIST")
    layout: str | tuple | None = _field(None, Names(optional=True), "only these layouts (comma list: nhwc, nchw, "
                                        "row, bshd)", group=_WHICH, metavar="LIST")
    name: str | None = _field(None, Text(optional=True, empty=False), "only graphs whose name contains TEXT (e.g. "
                              "+relu, >genstats)", group=_WHICH, metavar="TEXT")
    plans: str = _field("precompiled", Choice(PLAN_MODES), "offline, which configs' execution plans are built: "
                        "precompiled ones (runtime-compiled configs are checked up to their finalize: compiling "
                        "takes 1-4 s each), all (compiles them), none", group="probing")
    workers: int | None = _field(None, Count(1, optional=True), "CPU worker processes (default: one per 8 graphs, "
                                 "at most one per core, one at least, so that a probe that crashes is reported as a "
                                 "crash; 1 probes in this process, where a crash ends the run)",
                                 group="probing", metavar="N")


#: every option set, for what reads them all (the command line's words for the Python names)
OPTION_SETS = (TuneOptions, SweepOptions, BenchOptions, WhyOptions, SupportOptions)
