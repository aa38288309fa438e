"""The command line's parser: subcommands, options with help and defaults, and argument types that refuse
bad values with a one-line error naming the option (exit code 2)."""
from __future__ import annotations

import argparse
import ast
import inspect
import sys

from cudnn_backend._version import __version__
from cudnn_backend.cli.render import MIN_WIDTH
from cudnn_backend.core.names import read_data_type
from cudnn_backend.errors import did_you_mean
from cudnn_backend.patterns import CATALOGUE
from cudnn_backend.patterns.presets import PRESETS
from cudnn_backend.tune.options import (
    BenchOptions,
    Choice,
    Count,
    Flag,
    SupportOptions,
    SweepOptions,
    TuneOptions,
    WhyOptions,
)

__all__ = ["build_parser", "size_options", "builder_kwargs", "add_options", "options_from", "tune_options",
           "UsageError", "SIZE_OPTIONS", "param_options"]


class UsageError(Exception):
    """A command-line mistake found after parsing (exit code 2, one line)."""


class Parser(argparse.ArgumentParser):
    """An ArgumentParser whose errors are one line (``prog: error: ...``) and exit code 2, and whose options are
    taken only as written: a prefix of one is no abbreviation (``why --n 0`` would otherwise be ``--no-minimize``
    and a stray ``0``)."""

    def __init__(self, *args, **kwargs):
        kwargs.setdefault("allow_abbrev", False)
        super().__init__(*args, **kwargs)
        self.register("action", None, _StoreOnce)  # (what add_argument uses where no action is named)
        self.register("action", "store", _StoreOnce)

    def parse_known_args(self, args=None, namespace=None):
        # a command's parser: an option it does not have is named as such, first (argparse would take the value
        # after it for the next positional argument, and blame that: "argument PATTERN: invalid choice: '5'")
        if args is not None and not any(isinstance(a, argparse._SubParsersAction) for a in self._actions):
            for token in args:
                if token == "--":
                    break
                name = token.split("=", 1)[0]
                if name.startswith("--") and name not in self._option_string_actions:
                    known = [o for o in self._option_string_actions if o.startswith("--")]
                    began = sorted(o for o in known if o.startswith(name))  # a prefix: what it begins
                    hint = f"; did you mean {' or '.join(began[:3])}?" if began else \
                        did_you_mean(name, known, listing=False)
                    self.error(f"unrecognized arguments: {name}{hint}")
        return super().parse_known_args(args, namespace)

    def error(self, message):
        wrong, _, choices = message.partition("invalid choice: ")[2].partition(" (choose from ")
        if wrong and choices:  # argparse lists the choices; say which one was meant
            names = [c.strip().strip("'") for c in choices.rstrip(")").split(",")]
            message += did_you_mean(wrong.strip("'"), names, listing=False)
        commands = [a for a in self._actions if isinstance(a, argparse._SubParsersAction)]
        if commands and message.startswith("the following arguments are required"):  # a command without its action
            message += f" (one of: {', '.join(commands[0].choices)}; `{self.prog} --help` says what each does)"
        sys.stderr.write(f"{self.prog}: error: {message}\n")
        raise SystemExit(2)


class _StoreOnce(argparse._StoreAction):
    """An option of one value given twice is refused (argparse would keep the last: which one was meant is not for
    the parser to guess)."""

    def __call__(self, parser, namespace, values, option_string=None):
        given = namespace.__dict__.setdefault("_options_given", {})
        if self.dest in given and self.option_strings:
            aliases = "" if given[self.dest] == option_string else f" (as {given[self.dest]} and {option_string})"
            parser.error(f"argument {option_string}: given twice{aliases}; give it once")
        given[self.dest] = option_string
        super().__call__(parser, namespace, values, option_string)


class Formatter(argparse.RawDescriptionHelpFormatter):
    """Help text with every default shown (options off by default say so once) and descriptions kept as
    written."""

    def _get_help_string(self, action):
        text = action.help or ""
        if "%(default)" in text or action.default is argparse.SUPPRESS or not action.option_strings:
            return text
        if action.default is None:
            return text
        # a flag's help says what giving it does: not given is its default (a --no-X flag's X then on)
        if action.default is False or isinstance(action, argparse._StoreFalseAction):
            return text + " (default: off)"
        return text + " (default: %(default)s)"


def arg_type(kind):
    """An argparse type from an options ``Kind``: its parser, its refusal as argparse's one-line error."""
    def convert(text):
        try:
            return kind.parse(text)
        except (TypeError, ValueError) as e:
            raise argparse.ArgumentTypeError(str(e) if getattr(e, "names_value", False) else f"{e}, not {text!r}") \
                from None

    convert.__name__ = kind.expected
    return convert


positive = arg_type(Count(1))
non_negative = arg_type(Count(0))


def key_value(text):
    key, sep, value = text.partition("=")
    if not sep or not key.isidentifier():
        raise argparse.ArgumentTypeError(f"expected KEY=VALUE, not {text!r}")
    try:
        return key, ast.literal_eval(value)
    except (ValueError, SyntaxError) as e:
        if "Exceeds the limit" in str(e):  # (digits past what int() reads: a number, not the string it would be)
            raise argparse.ArgumentTypeError(f"{key}: a number of {len(value.strip()):,} characters is past any "
                                             "parameter's range") from None
        return key, value
    except (RecursionError, MemoryError):  # (a value nested past the parser's depth: "-" * 5000 + "1")
        raise argparse.ArgumentTypeError(f"{key}: the value is nested too deeply to read ({len(value)} "
                                         "characters)") from None


# size options: (flag, type, help)
SIZE_OPTIONS = (
    ("n", positive, "batch size N (conv) or the matmul's N"),
    ("c", positive, "input channels C"),
    ("h", positive, "height H (conv) or heads (SDPA)"),
    ("w", positive, "width W"),
    ("k", positive, "output channels K (conv) or the matmul's K"),
    ("r", positive, "filter height R"),
    ("s", positive, "filter width S"),
    ("groups", positive, "convolution groups"),
    ("padding", non_negative, "convolution padding (each spatial side)"),
    ("stride", positive, "convolution stride"),
    ("dilation", positive, "convolution dilation"),
    ("batch", positive, "matmul batch"),
    ("m", positive, "matmul M"),
    ("tokens", positive, "norm rows (tokens)"),
    ("hidden", positive, "norm row length (hidden size)"),
)
_SIZE_NAMES = frozenset(name for name, _, _ in SIZE_OPTIONS)
COMMON_DATA_TYPES = "fp16, bf16, fp32"  # the names --help shows; any name core.names reads is taken


def data_type(text):
    """--dtype: any data type name ``core.names`` reads (fp16 or half, bf16 or bfloat16, fp32 or float, ...), as
    the C name builders take."""
    member = read_data_type(text)
    if member is None:
        raise argparse.ArgumentTypeError(f"expected a data type ({COMMON_DATA_TYPES}, ...), not {text!r}")
    return member.name


def size_options(args) -> dict:
    """The size options given on the command line (None ones left out), plus ``--param`` pairs and --dtype."""
    out = {name: getattr(args, name) for name, _, _ in SIZE_OPTIONS if getattr(args, name, None) is not None}
    given_by = {name: f"--{name}" for name in out}
    for option, key, value in (("--dtype", "data_type", getattr(args, "dtype", None)),
                               ("--layout", "layout", getattr(args, "layout", None))):
        if value:
            out[key], given_by[key] = value, option
    for key, value in param_options(args).items():  # a parameter two options give: which one was meant?
        if key in given_by:
            raise UsageError(f"argument --param: {key} is given by {given_by[key]} too ({out[key]!r} and "
                             f"{value!r}); give it once")
        out[key] = value
    return out


def param_options(args) -> dict:
    """The ``--param KEY=VALUE`` pairs; a key given twice is a UsageError (which value was meant?)."""
    out = {}
    for key, value in getattr(args, "param", None) or ():
        if key in out:
            raise UsageError(f"argument --param: {key} is given by --param twice ({out[key]!r} and {value!r}); give "
                             "it once")
        out[key] = value
    return out


def builder_kwargs(fn, name, options: dict, *, size_options=True, where=None) -> dict:
    """The options a builder takes; a UsageError naming the option for one it does not take, or for a parameter
    without a default that none gives (``size_options``: whether the command has --n, --dtype, ...; ``where``: the
    task file's task the options come from, said instead of an option)."""
    try:
        params = inspect.signature(fn).parameters
    except (TypeError, ValueError):
        return dict(options)
    if any(p.kind == p.VAR_KEYWORD for p in params.values()):
        return dict(options)
    accepted = [p for p in params if params[p].kind in (params[p].POSITIONAL_OR_KEYWORD, params[p].KEYWORD_ONLY)
                and p != "build"]
    out = {}
    takes = ", ".join(accepted) or "nothing"
    for key, value in options.items():
        if key not in accepted:
            close = did_you_mean(key, accepted, listing=False)
            if where is not None:
                raise UsageError(f"{where}: {name} has no parameter {key!r}{close} (its parameters: {takes})")
            if size_options and (key in _SIZE_NAMES or key in ("data_type", "layout")):
                flag = "--dtype" if key == "data_type" else f"--{key}"
                raise UsageError(f"option {flag} does not apply to {name} (its parameters: {takes}){close}")
            raise UsageError(f"argument --param: {name} has no parameter {key!r}{close} (its parameters: {takes})")
        out[key] = value
    missing = [p for p in accepted if params[p].default is params[p].empty and p not in out]
    if missing:  # said with the options that give them, before Python's "takes() missing ... arguments"
        if where is not None:
            raise UsageError(f"{where}: {name} needs {_and(missing)}: add {' '.join(f'{p}=VALUE' for p in missing)}")
        raise UsageError(f"{name} needs {_and(missing)}: give {_and([_option_of(p, size_options) for p in missing])}")
    return out


def _option_of(parameter: str, size_options=True) -> str:
    """The option that gives a builder's ``parameter`` on the command line."""
    if not size_options:
        return f"--param {parameter}=VALUE"
    if parameter in _SIZE_NAMES:
        return f"--{parameter} N"
    if parameter == "data_type":
        return "--dtype " + "|".join(COMMON_DATA_TYPES.split(", "))
    if parameter == "layout":
        return "--layout nhwc|nchw"
    return f"--param {parameter}=VALUE"


def _and(words: list) -> str:
    return words[0] if len(words) == 1 else ", ".join(words[:-1]) + " and " + words[-1]


# ---------------------------------------------------------------------------------------------
def _graph_inputs(p, *, many=True):
    g = p.add_argument_group("what to run on (one of)")
    g.add_argument("pattern", nargs="?", metavar="PATTERN", choices=sorted(CATALOGUE),
                   help="a built-in pattern: " + ", ".join(sorted(CATALOGUE)) + " (default: conv_bias_relu)")
    g.add_argument("--graph", action="append", metavar="FILE.py:FUNC",
                   help="your own graph: FUNC returns a Graph, a Pattern or a finalized operation graph (module:FUNC "
                        "works too)" + ("; repeat for several" if many else ""))
    g.add_argument("--plan", metavar="FILE.json", help="a saved execution plan (its graph is explored)")
    if many:
        g.add_argument("--preset", choices=sorted(PRESETS), help="a list of graphs: " + ", ".join(sorted(PRESETS)))
        g.add_argument("--tasks", metavar="FILE", help="a file listing graphs, one per line: BUILDER [key=value ...]")
    s = p.add_argument_group("sizes (passed to the pattern or FUNC when it takes them)")
    for name, typ, help_text in SIZE_OPTIONS:
        s.add_argument(f"--{name}", type=typ, default=None, metavar="N", help=help_text)
    s.add_argument("--param", action="append", type=key_value, metavar="KEY=VALUE",
                   help="any other parameter of the pattern or FUNC (value as a Python literal)")
    s.add_argument("--dtype", type=data_type, default=None, metavar="TYPE",
                   help=f"input/output data type: {COMMON_DATA_TYPES}, ... (half, bfloat16, float too) (pattern default)")
    s.add_argument("--layout", choices=["nhwc", "nchw"], default=None, help="tensor layout (pattern default)")
    p.add_argument("--device-profile", metavar="h100|h200|FILE",
                   help="work offline for this GPU (a bundled profile or a file from `profile capture`), converted "
                        "for the loaded cuDNN; default: this machine's GPU, or the bundled h200 profile without one")
    p.add_argument("--allow-version-mismatch", action="store_true",
                   help="give cuDNN the --device-profile as it is, unconverted, even if another cuDNN release wrote it "
                        "(cuDNN may refuse or misread it)")


def add_options(p, cls, groups=None, names=None):
    """Every field of the option set ``cls`` (``tune.options``) that has a flag (``names``: only these), as an
    option of ``p``: its flag, help, default, metavar and check all read from the field and its ``Option``.
    ``groups`` ({title: argument group}) collects the groups made, so options of several sets (and the command's
    own) can share one."""
    groups = {} if groups is None else groups
    for f, opt in cls.option_fields():
        flag = cls.cli_flag(f.name)
        if flag is None or (names is not None and f.name not in names):
            continue
        g = p if opt.group is None else (groups.get(opt.group) or
                                         groups.setdefault(opt.group, p.add_argument_group(opt.group)))
        if isinstance(opt.kind, Flag):
            g.add_argument(flag, dest=f.name, action="store_false" if f.default else "store_true",
                           help=opt.off_help or opt.help if f.default else opt.help)
        elif isinstance(opt.kind, Choice) and opt.metavar is None:  # argparse lists the choices, says "did you mean"
            g.add_argument(flag, dest=f.name, choices=opt.kind.choices, default=f.default, help=opt.help)
        else:  # a default given as text is parsed like the user's: shown as it is typed (e.g. A,B)
            default = None if f.default is None else opt.kind.show(f.default)
            optional = {} if opt.const is None else {"nargs": "?", "const": opt.const}
            g.add_argument(flag, dest=f.name, type=arg_type(opt.kind), default=default, metavar=opt.metavar,
                           help=opt.help, **optional)
    return groups


def options_from(args, cls, **extra):
    """The option set ``cls`` of the command line's options (``extra``: fields set by the command); a value they
    refuse together is a UsageError naming its flag."""
    given = {f.name: getattr(args, f.name) for f, _ in cls.option_fields()
             if cls.cli_flag(f.name) and hasattr(args, f.name)}
    try:
        return cls(**given, **extra)
    except (TypeError, ValueError) as e:
        name = getattr(e, "option", None)
        if name is None or cls.cli_flag(name) is None:
            raise
        raise UsageError(f"argument {cls.cli_flag(name)}: {str(e).partition(': ')[2]}") from None


def _explore_options(p, tune=False):
    add_options(p, TuneOptions)
    add_options(p, SweepOptions)
    o = p.add_argument_group("output")
    o.add_argument("--top", type=positive, default=25, metavar="N", help="rows of the results table")
    o.add_argument("--no-engines", action="store_true", help="leave out the table of every engine")
    o.add_argument("--csv", metavar="FILE", help="write every result as CSV")
    o.add_argument("--json", metavar="FILE", help="write the exploration(s) as JSON")
    o.add_argument("--plot", metavar="FILE.png", help="plot time per config (matplotlib)")
    o.add_argument("--heatmap", metavar="FILE.png", help="plot the best time over a knob pair of the best engine "
                   "(after --sweep; matplotlib)")
    o.add_argument("--save-plan", metavar="FILE.json", help="write the chosen config's execution plan as JSON (the "
                   "best with a GPU; offline, heuristics' first config that builds a plan); --plan FILE.json reads it")
    o.add_argument("--quiet", action="store_true", help="no progress bars")
    if tune:
        c = p.add_argument_group("plan cache")
        c.add_argument("--cache", metavar="FILE", help="the plan cache file (default: the user cache directory, "
                       "or $CUDNN_BACKEND_PLAN_CACHE)")
        c.add_argument("--no-cache", action="store_true", help="do not read or write the plan cache")


def tune_options(args, **extra) -> TuneOptions:
    """The ``TuneOptions`` of the command line's search options (``options_from``)."""
    return options_from(args, TuneOptions, **extra)


EXIT_CODES = """exit codes (every command):
  0  done (why: the graph is supported)
  1  the answer is "no" or the work failed: why on a graph cuDNN refuses; explore or tune finding no
     config; a graph, plan or output that failed; a command that runs plans (bench, fusion, profile
     capture) on a machine without a GPU (one line says why; CUDNN_BACKEND_DEBUG=1 shows the traceback)
  2  a usage mistake, found before any work: one line naming the option (an option that needs a GPU,
     given offline, is one)
  130  interrupted (Ctrl-C)
  141  the reader of the output went away (`| head`): the answer was not all written"""


def build_parser() -> argparse.ArgumentParser:
    parser = Parser(prog="cudnn-backend", formatter_class=Formatter,
                    description="Explore, tune, cache and benchmark cuDNN backend-API plans for your own graphs.\n"
                                "Run `cudnn-backend COMMAND --help` for a command's options.",
                    epilog=EXIT_CODES)
    parser.add_argument("--version", action="version", version=f"%(prog)s {__version__}")
    sub = parser.add_subparsers(dest="command", metavar="COMMAND", parser_class=Parser)  # none given: the help

    p = sub.add_parser("info", help="package and cuDNN versions, cuDNN's path, CUDA runtime, GPUs",
                       formatter_class=Formatter, description="What cudnn-backend found on this machine.")
    p.add_argument("--json", action="store_true", help="print JSON")

    p = sub.add_parser("explore", help="every engine config of a graph: heuristics, engines, knobs, plans; with a "
                       "GPU, each checked and timed", formatter_class=Formatter,
                       description="Explore the engine configs cuDNN offers for a graph. With a GPU every config of "
                                   "the heuristics modes is built and timed, and the winner is chosen among configs "
                                   "checked against a reference (or the majority of configs): by racing (each timed "
                                   "briefly, the fastest checked and re-timed longer) or, with --strategy "
                                   "exhaustive, every config checked and timed fully. Offline (no GPU, or "
                                   "--device-profile) plans are built against a device profile and nothing is "
                                   "timed.")
    _graph_inputs(p)
    _explore_options(p)

    p = sub.add_parser("tune", help="autotune on the GPU: the fastest correct config, stored in the plan cache",
                       formatter_class=Formatter,
                       description="Autotune: explore on the GPU, keep the fastest correct config in the persistent plan "
                                   "cache (a cache hit skips the search), and print it against heuristics' pick. "
                                   "Offline (no GPU, or --device-profile) nothing is timed: the pick is heuristics' "
                                   "first config that builds, and the plan cache is neither read nor written.")
    _graph_inputs(p)
    _explore_options(p, tune=True)

    p = sub.add_parser("bench", help="per-call host and GPU µs of one plan: execute, bind + execute, CUDA-graph "
                       "replay", formatter_class=Formatter,
                       description="Microbenchmark one plan: the plan cache's (after `tune`) or heuristics' first "
                                   "working config, or a saved --plan.")
    _graph_inputs(p, many=False)
    add_options(p, BenchOptions)
    p.add_argument("--cache", metavar="FILE", help="the plan cache file to take a tuned plan from (default: the "
                   "user cache directory)")
    p.add_argument("--no-cache", action="store_true", help="ignore the plan cache: use heuristics' pick")
    p.add_argument("--json", metavar="FILE", help="write the results as JSON")
    _errata_option(p)

    p = sub.add_parser("fusion", help="which kernels one execute launches (names, grids, blocks)",
                       formatter_class=Formatter,
                       description="\"Were all my ops fused?\": the kernels of the chosen plan (the plan cache's, or "
                                   "heuristics' first working config), or of every heuristics config with --all.")
    _graph_inputs(p, many=False)
    p.add_argument("--all", action="store_true", help="every config of heuristics A and B, not just the chosen plan")
    p.add_argument("--cache", metavar="FILE", help="the plan cache file to take a tuned plan from")
    p.add_argument("--no-cache", action="store_true", help="ignore the plan cache")
    p.add_argument("--json", metavar="FILE", help="write the kernels as JSON")
    _errata_option(p)

    p = sub.add_parser("profile", help="device profiles for offline work: capture one here, show one, convert one",
                       formatter_class=Formatter,
                       description="Device profiles: capture this GPU's, show one, or convert one for another cuDNN "
                                   "release.")
    psub = p.add_subparsers(dest="profile_command", metavar="ACTION", parser_class=Parser)
    psub.required = True
    c = psub.add_parser("capture", help="capture this machine's GPU as a profile file", formatter_class=Formatter)
    c.add_argument("--out", metavar="FILE", help="where to write it (default: <gpu>_deviceprop_cudnn<version>.json)")
    c.add_argument("--device", type=non_negative, default=0, help="CUDA device ordinal")
    c = psub.add_parser("show", help="show a profile (a file, or a bundled name: h100, h200) as the loaded cuDNN "
                        "gets it", formatter_class=Formatter)
    c.add_argument("profile", metavar="FILE|NAME", help="a profile file (from `profile capture` or `profile "
                   "convert`), or a bundled name: h100, h200")
    c.add_argument("--json", action="store_true", help="print the profile's JSON")
    c = psub.add_parser("convert", help="write a profile as another cuDNN release reads it", formatter_class=Formatter,
                        description="Convert a device profile for a cuDNN release: members that release requires come "
                                    "from the profile, --set, or published GPU facts; members it does not read are "
                                    "dropped.")
    c.add_argument("profile", metavar="FILE|NAME", help="a profile file, or a bundled name: h100, h200")
    c.add_argument("--to", metavar="RELEASE", help="the cuDNN release, e.g. 9.28.1 (default: the loaded cuDNN)")
    c.add_argument("--set", action="append", type=key_value, default=[], metavar="MEMBER=VALUE",
                   help="a deviceprop member the GPU has, e.g. memoryBusWidth=5120 (repeat for several)")
    c.add_argument("--out", metavar="FILE", help="where to write it (default: <gpu>_deviceprop_cudnn<release>.json)")

    p = sub.add_parser("cache", help="the persistent plan cache: list, show, clear", formatter_class=Formatter,
                       description="The persistent plan cache that `tune` writes.")
    csub = p.add_subparsers(dest="cache_command", metavar="ACTION", parser_class=Parser)
    csub.required = True
    for name, text in (("list", "list the stored plans"), ("show", "show one stored plan"),
                       ("clear", "remove every stored plan")):
        c = csub.add_parser(name, help=text, formatter_class=Formatter)
        if name == "show":
            c.add_argument("key", help="the entry's key (or a unique prefix of it, as `cache list` shows)")
            c.add_argument("--json-plan", action="store_true", help="print the plan's JSON")
        c.add_argument("--cache", metavar="FILE", help="the cache file (default: the user cache directory)")
        if name == "list":
            c.add_argument("--json", action="store_true", help="print JSON")
    _support_parsers(sub)
    _errata_parsers(sub)
    _width_option(parser)
    return parser


def _errata_option(p):
    """--errata FILE on a command that chooses a config outside a search (explore and tune have it from
    ``TuneOptions``)."""
    p.add_argument("--errata", metavar="FILE", default=None, help="deny the configs this errata file's rules name "
                   "(cudnn-frontend's format; default: $CUDNN_ERRATA_JSON_FILE, '' for none)")


def _errata_parsers(sub):
    p = sub.add_parser("errata", help="errata files (cudnn-frontend's deny lists): check one, see what each rule "
                       "matches here", formatter_class=Formatter,
                       description="Engine errata: deny lists of engine configs in cudnn-frontend's format "
                                   "(CUDNN_ERRATA_JSON_FILE), honoured by explore, tune, sweeps, bench, fusion, "
                                   "support and the plan cache (--errata FILE, or the environment variable); "
                                   "`explore --errata-out FILE` writes them from wrong results, crashes and refusals "
                                   "at execute.")
    esub = p.add_subparsers(dest="errata_command", metavar="ACTION", parser_class=Parser)
    esub.required = True
    c = esub.add_parser("check", help="lint an errata file and say which rules apply on this machine",
                        formatter_class=Formatter,
                        description="Check an errata file the way it is read (refused whole, every problem named by "
                                    "rule and field), then say for each rule whether it applies here: the loaded "
                                    "cuDNN release and the GPU's SM (or the --device-profile's).")
    c.add_argument("file", metavar="FILE", help="the errata file (JSON, cudnn-frontend's format)")
    c.add_argument("--device-profile", metavar="h100|h200|FILE",
                   help="the GPU whose SM the rules are matched for (default: this machine's GPU, or the bundled h200 "
                        "profile without one)")
    c.add_argument("--json", action="store_true", help="print the check as JSON")


def _width_option(parser):
    """--width on every command (each parser that takes no subcommand)."""
    subcommands = [a for a in parser._actions if isinstance(a, argparse._SubParsersAction)]
    if not subcommands:
        parser.add_argument("--width", type=arg_type(Count(MIN_WIDTH)), metavar="COLUMNS",
                            help="the width tables are drawn for (default: $COLUMNS, else the terminal's; written "
                                 "to a file or pipe, wide enough that each row stays one line)")
    for action in subcommands:
        for sub in dict.fromkeys(action.choices.values()):
            _width_option(sub)


# ---------------------------------------------------------------------------------------------
# support, compare, why: which graphs fuse, on which GPU and cuDNN release, and why not
# ---------------------------------------------------------------------------------------------
def _support_selection(p, profile=True):
    groups = {}
    which, probing = SupportOptions.group_of("family"), SupportOptions.group_of("plans")
    f = groups[which] = p.add_argument_group(which)
    f.add_argument("--catalogue", metavar="FILE", help="your own list: a Python file (every public function callable "
                   "without arguments is a graph, or a CATALOGUE list) or a text file, one `BUILDER [key=value ...]` "
                   "per line (BUILDER: a pattern, FILE.py:FUNC, module:FUNC, or `chain head=... chain=a,b ...`)")
    add_options(p, SupportOptions, groups, names=("family", "data_type", "layout", "name"))
    r = groups[probing] = p.add_argument_group(probing)
    if profile:
        r.add_argument("--device-profile", metavar="h100|h200|FILE",
                       help="probe offline for this GPU (a bundled profile or a file); default: this machine's GPU, "
                            "or the bundled h200 profile without one")
    r.add_argument("--allow-version-mismatch", action="store_true",
                   help="hand the device profile to a cuDNN release other than the one that wrote it (for experts: "
                        "cuDNN may refuse or misread it)")
    add_options(p, SupportOptions, groups, names=("plans", "workers"))
    r.add_argument("--no-cache", action="store_true", help="neither read nor write the support cache")
    r.add_argument("--cache", metavar="FILE", help="the support cache file (default: support.sqlite in the user cache "
                   "directory, or $CUDNN_BACKEND_SUPPORT_CACHE)")
    r.add_argument("--quiet", action="store_true", help="no progress bar")


def _csv_json(p, json_what):
    o = p.add_argument_group("output")
    o.add_argument("--csv", metavar="FILE", help="write every row as CSV")
    o.add_argument("--json", metavar="FILE", help=f"write {json_what}")
    return o


def _support_parsers(sub):
    p = sub.add_parser("support", help="the support matrix: which graphs of a catalogue cuDNN supports (fuses) on a "
                       "GPU or device profile, at which stage the others are refused, with which engines",
                       formatter_class=Formatter,
                       description="Probe a catalogue of operation graphs (conv fwd/dgrad/wgrad and matmul with chains "
                                   "of pointwise operations, reductions and GEN_STATS; norms; attention) against "
                                   "this GPU or a device profile: supported or not, the stage that refused it, engine "
                                   "and config counts, engine kinds; on a GPU the kernel count of the first working "
                                   "config (1 = fully fused). Results are cached per cuDNN release and device.")
    _support_selection(p)
    _errata_option(p)
    p.add_argument("--kernels", action="store_true", help="run each first working config once and count its kernels "
                   "(needs this machine's GPU; on by default there)")
    o = _csv_json(p, "the matrix as JSON (`compare --matrices` reads it)")
    o.add_argument("--rows", choices=("all", "unsupported", "none"), default=None,
                   help="rows printed under the summary (default: all for up to 80 graphs, else none)")
    o.add_argument("--heatmap", metavar="FILE.png", help="draw the family x data type heatmap (matplotlib)")
    o.add_argument("--clear-cache", action="store_true", help="empty the support cache first")

    p = sub.add_parser("compare", help="support in two device profiles or two cuDNN releases: graphs gained or lost, "
                       "engine and config counts", formatter_class=Formatter,
                       description="Compare the support matrix of two device profiles (--profiles h100 h200), two "
                                   "cuDNN releases (--releases LIB_A LIB_B: each probed in its own process with "
                                   "CUDNN_BACKEND_LIBCUDNN; `default` for the one this environment loads), or two "
                                   "saved matrices (--matrices A.json B.json).")
    w = p.add_argument_group("what to compare (one of)")
    w.add_argument("--profiles", nargs=2, metavar=("A", "B"), help="two device profiles (bundled names or files)")
    w.add_argument("--releases", nargs=2, metavar=("A", "B"),
                   help="two cuDNN releases: each a libcudnn.so.9, a folder holding one, a release carried or "
                        "installed here (9.28.1: tools/carry_cudnn.sh) or `default`; the support catalogue probed "
                        "against --device-profile, or with --preset/--graph/--tasks each graph explored and timed "
                        "on this GPU")
    w.add_argument("--matrices", nargs=2, metavar=("A.json", "B.json"), help="two matrices `support --json` wrote")
    t = p.add_argument_group("graphs timed under both releases (with --releases; on a GPU, else offline)")
    t.add_argument("--preset", choices=sorted(PRESETS), help="a list of graphs: " + ", ".join(sorted(PRESETS)))
    t.add_argument("--graph", action="append", metavar="FILE.py:FUNC", help="your own graph (repeat for several)")
    t.add_argument("--tasks", metavar="FILE", help="a file listing graphs, one per line: BUILDER [key=value ...]")
    t.add_argument("--slower", type=float, default=0.1, metavar="F",
                   help="a graph or config this fraction slower under B is reported slowed down")
    _support_selection(p)
    o = _csv_json(p, "the comparison as JSON")
    o.add_argument("--all", action="store_true", help="print unchanged graphs too")

    p = sub.add_parser("why", help="why cuDNN refuses a graph (NOT_SUPPORTED): each stage with cuDNN's reasons, and "
                       "the smallest change that makes it supported", formatter_class=Formatter,
                       description="Explain a refusal: the stage (the builder, the package's checks, cuDNN's "
                                   "finalize, empty heuristics, every config refused at plan build) and cuDNN's own "
                                   "reasons per heuristics mode, engine and config, from its log; then a minimization: "
                                   "variations of the graph (data types, layout, alignment, virtual-ness, compute "
                                   "types, convolution stride, dropping or splitting operations) probed offline, the "
                                   "smallest that works printed as a difference of the graph.")
    g = p.add_argument_group("the graph (one of)")
    g.add_argument("pattern", nargs="?", metavar="PATTERN", choices=sorted(CATALOGUE),
                   help="a built-in pattern: " + ", ".join(sorted(CATALOGUE)))
    g.add_argument("--graph", metavar="FILE.py:FUNC", help="your own graph: FUNC returns a Graph, a Pattern or a "
                   "finalized operation graph (module:FUNC works too)")
    g.add_argument("--param", action="append", type=key_value, metavar="KEY=VALUE",
                   help="a keyword argument of the pattern or FUNC (value as a Python literal)")
    p.add_argument("--device-profile", metavar="h100|h200|FILE",
                   help="the target GPU, offline (default: this machine's GPU, or the bundled h200 profile)")
    p.add_argument("--allow-version-mismatch", action="store_true",
                   help="hand the device profile to a cuDNN release other than the one that wrote it")
    add_options(p, WhyOptions)
    p.add_argument("--json", metavar="FILE", help="write the explanation as JSON")
