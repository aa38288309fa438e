"""``cudnn-backend`` / ``python -m cudnn_backend``: info, explore, tune, bench, fusion, profile, cache, support,
compare, why.

Exit codes (``args.EXIT_CODES``, printed by ``--help``): 0 done; 1 the answer is "no" (``why`` on a graph cuDNN
refuses, ``explore``/``tune`` finding no config) or the work failed, with one line saying why
(``CUDNN_BACKEND_DEBUG=1`` shows the traceback); 2 a mistake in the arguments, one line naming the option, found
before any work (an option that needs a GPU, given offline, is one). A closed pipe ends quietly.
"""
from __future__ import annotations

import contextlib
import inspect
import json
import os
import pathlib
import sys
import warnings

from rich.progress import BarColumn, MofNCompleteColumn, Progress, TextColumn, TimeElapsedColumn
from rich.text import Text

from cudnn_backend.cli import render
from cudnn_backend._bindings._loader import release_library
from cudnn_backend.cli.args import (SIZE_OPTIONS, UsageError, build_parser, builder_kwargs, options_from,
                                    param_options, size_options, tune_options)
from cudnn_backend.cli.errata import cmd_errata, errata_arg
from cudnn_backend.core import device as _device
from cudnn_backend.core._handle import Handle
from cudnn_backend.core.files import file_path, read_bounded_text, write_csv, write_whole
from cudnn_backend.core.info import info as _info
from cudnn_backend.core.json_checks import TABLE_RELEASES, document_release
from cudnn_backend.core.plain import json_ready
from cudnn_backend.core.versions import MIN_VERSION, OFFLINE_SINCE, format_version, loaded_version, parse_version
from cudnn_backend.errors import (CudnnBackendError, DeviceProfileVersionError, JsonTableFallbackWarning,
                                  MissingDependencyError, SweepError, did_you_mean)
from cudnn_backend.patterns import CATALOGUE
from cudnn_backend.runtime import heuristics as _heuristics
from cudnn_backend.runtime import plans as _plans
from cudnn_backend.runtime.engines import config_from_index, short_name
from cudnn_backend.runtime.profiles import (DeviceProfile, as_deviceprop, offline_profiles, profile_of,
                                            release_members)
from cudnn_backend.tune import graphs, offline_gaps, plots
from cudnn_backend.tune.benchmark import bench
from cudnn_backend.tune.cache import PlanCache
from cudnn_backend.tune.explorer import autotune, explore
from cudnn_backend.tune.fusion import fusion_report
from cudnn_backend.tune.options import BenchOptions, SupportOptions, SweepOptions, TuneOptions, WhyOptions
from cudnn_backend.tune.plots import image_suffix_problem
from cudnn_backend.tune.results import config_words, headroom_rows, knob_words, plural
from cudnn_backend.tune.catalogue import default_catalogue, filter_entries, load_catalogue
from cudnn_backend.tune.support import (
    SupportCache,
    SupportMatrix,
    compare_matrices,
    compare_support,
    plot_support_heatmap,
    support_matrix,
)
from cudnn_backend.tune.releases import compare_releases
from cudnn_backend.tune.sweeps import Task, sweep, tasks_from_file, tasks_from_preset
from cudnn_backend.tune.explain import why

__all__ = ["main"]

DEFAULT_PATTERN = "conv_bias_relu"
BROKEN_PIPE_STATUS = 128 + 13  # a shell's status of a command SIGPIPE ended


# ---------------------------------------------------------------------------------------------
# what to run on
# ---------------------------------------------------------------------------------------------
def _targets(args, many=True) -> tuple[list, str | None]:
    """(tasks, plan path): the graphs the command names (a plan path is returned alone)."""
    given = [name for name, v in (("PATTERN", args.pattern), ("--graph", args.graph), ("--plan", args.plan),
                                  ("--preset", getattr(args, "preset", None)), ("--tasks", getattr(args, "tasks", None)))
             if v]
    if len(given) > 1:
        raise UsageError(f"give one of PATTERN, --graph, --plan{', --preset, --tasks' if many else ''}, not "
                         f"{' and '.join(given)}")
    sizes = size_options(args)
    if args.plan:
        if sizes:
            raise UsageError("size options do not apply to --plan (the plan fixes its graph)")
        _check_plan_file(args.plan)
        return [], args.plan
    if getattr(args, "preset", None) or getattr(args, "tasks", None):
        if sizes:
            raise UsageError("size options do not apply to --preset / --tasks (each entry fixes its sizes)")
        if args.preset:
            return tasks_from_preset(args.preset), None
        args.tasks_read = _task_file(args.tasks)  # (a failure of its one graph names its line)
        return args.tasks_read, None
    if args.graph:
        if not many and len(args.graph) > 1:
            raise UsageError("argument --graph: this command takes one graph")
        tasks = []
        for ref in args.graph:
            tasks.append(Task(ref, builder_kwargs(_builder(ref, "argument --graph"), ref, sizes)))
        return tasks, None
    name = args.pattern or DEFAULT_PATTERN
    kwargs = builder_kwargs(CATALOGUE[name], f"pattern {name}", sizes)
    _check_values(name, kwargs, args)
    return [Task(name, kwargs)], None


def _value_refusal(pattern, kwargs) -> str | None:
    """What a built-in pattern called unbuilt (no cuDNN graph: quick) says of ``kwargs`` (ValueError, TypeError:
    ``n: expected an integer, not str``), on one line, or None. A graph its values make and cuDNN refuses is the
    work's answer, not this."""
    if pattern not in CATALOGUE or not kwargs or "build" not in inspect.signature(CATALOGUE[pattern]).parameters:
        return None
    try:
        CATALOGUE[pattern](**kwargs, build=False)
    except (TypeError, ValueError) as e:
        if isinstance(e, CudnnBackendError):
            return None
        return " ".join(str(e).split())
    return None


def _check_values(pattern, kwargs, args) -> None:
    """The values the command line gives a built-in pattern: one it refuses (``_value_refusal``) is a UsageError
    naming the option that gave it (``--param n=abc``, ``--groups``)."""
    text = _value_refusal(pattern, kwargs)
    if text is None:
        return
    word = text.split(":", 1)[0].split(" ", 1)[0]
    if word in kwargs:
        text = text.removeprefix(f"{word}: ")
    params = dict(getattr(args, "param", None) or ())
    if word in params:
        raise UsageError(f"argument --param: {word}={params[word]}: {text}")
    flags = {name: f"--{name}" for name, _, _ in SIZE_OPTIONS} | {"data_type": "--dtype", "layout": "--layout"}
    if word in flags and word in kwargs:
        raise UsageError(f"argument {flags[word]}: {text}")
    if len(params) == 1 and set(kwargs) == set(params):
        (key, value), = params.items()
        raise UsageError(f"argument --param: {key}={value}: {text}")
    given = "argument --param" if set(kwargs) <= set(params) else "the sizes and parameters given"
    raise UsageError(f"{given}: pattern {pattern} refuses them: {text}")


def _task_file(path) -> list:
    """--tasks FILE: its tasks, each builder and its keywords checked before anything runs (UsageErrors naming the
    option, the file and the task)."""
    if not pathlib.Path(path).is_file():
        raise UsageError(f"argument --tasks: {path!r} is not a file")
    try:
        tasks = tasks_from_file(path)
    except (OSError, ValueError) as e:
        raise UsageError(f"argument --tasks: {str(e).removeprefix('tasks: ')}") from None
    for i, task in enumerate(tasks, 1):
        where = f"argument --tasks: {path}, task {i} ({task.name})"
        _builder(task.builder, where, task.kwargs)
        refused = _value_refusal(task.builder, task.kwargs)  # (the file is wrong: said before any task runs)
        if refused is not None:
            raise UsageError(f"{where}: {refused}")
    return tasks


def _origin_words(args, error) -> str:
    """``"ORIGIN: "`` before an error of the work (``_work_origin``); "" for an OSError (writing an output: not the
    graph's) or where there is none."""
    origin = "" if isinstance(error, OSError) else _work_origin(args)
    return f"{origin}: " if origin else ""


def _work_origin(args) -> str:
    """Where the one graph of the work comes from, said before an error of its work: the line of a --tasks file
    that lists it ("FILE, line N"), the --plan file cuDNN read it from; "" for any other command line (several
    graphs' failures are each named in the sweep's table)."""
    tasks = getattr(args, "tasks_read", None)
    if tasks is not None:
        return tasks[0].origin if len(tasks) == 1 else ""
    plan = getattr(args, "plan", None)
    return f"--plan {plan}" if isinstance(plan, str) else ""


def _builder(ref, where, kwargs=None):
    """The function a pattern name or FILE.py:FUNC / module:FUNC names (UsageErrors said ``where``); with
    ``kwargs``, those checked against its parameters too."""
    fn = CATALOGUE.get(ref)
    if fn is None:
        if ":" not in ref:
            raise UsageError(f"{where}: {ref!r} is neither a pattern nor FILE.py:FUNC or module:FUNC"
                             f"{did_you_mean(ref, sorted(CATALOGUE), listing=False)}")
        try:
            fn = graphs.load_builder(ref)
        except ValueError as e:
            raise UsageError(f"{where}: {str(e).removeprefix('graph: ')}") from None
    if kwargs is not None:
        builder_kwargs(fn, f"pattern {ref}" if ref in CATALOGUE else ref, kwargs, where=where)
    return fn


def _check_plan_file(path) -> None:
    """--plan: a readable plan JSON of the loaded cuDNN (UsageErrors in the command line's words)."""
    if not pathlib.Path(path).is_file():
        raise UsageError(f"argument --plan: {path!r} is not a file")
    try:
        text = read_bounded_text(path, _plans.MAX_PLAN_FILE_BYTES, "argument --plan", "a saved plan is a few hundred KB")
    except ValueError as e:
        raise UsageError(str(e)) from None
    if not text.strip():
        raise UsageError(f"argument --plan: {path!r} is empty; expected a plan's JSON (`cudnn-backend explore "
                         "--save-plan FILE.json` writes one)")
    info = problem = None
    try:
        with warnings.catch_warnings():  # only a peek at what the plan says about itself: its release's table
            warnings.simplefilter("ignore", JsonTableFallbackWarning)  # is loading's business, not this check's
            info = _plans.plan_json_info(text)
    except ValueError as e:
        problem = e
    # another release's plan is refused as one first, as plan_from_json does, whatever else its text holds
    written, loaded = info["cudnn_version"] if info else document_release(text), loaded_version()
    if written is not None and written != loaded and written >= MIN_VERSION:  # (older: no cuDNN 9 plan at all)
        where = (f": its engine {info['engine']} and knobs {knob_words(info['knobs']) or '(none)'} are in the file"
                 if info else "")
        raise UsageError(f"argument --plan: {path!r} was written by cuDNN {format_version(written)}, and cuDNN "
                         f"{format_version(loaded)} is loaded: cuDNN loads plans of its own version only. Build it "
                         f"again with this cuDNN (`cudnn-backend tune ... --save-plan {path}`{where})")
    if problem is None and written is not None and written < MIN_VERSION:
        problem = f"not a serialized cuDNN execution plan: its cudnnVersion {written} is no cuDNN 9 version"
    if problem is not None:
        raise UsageError(f"argument --plan: {path!r} is {problem}")


def _device_profile(args):
    """The --device-profile, converted for the loaded cuDNN (or as it is with --allow-version-mismatch) and given to
    cuDNN once here, so that a refusal is one line naming the option and the fix."""
    if not args.device_profile:
        if args.allow_version_mismatch:
            raise UsageError("argument --allow-version-mismatch: applies to a --device-profile; none is given")
        return None
    return _profile(args.device_profile, "--device-profile", allow=args.allow_version_mismatch)


def _profile(spec, option, *, allow=False, release=None, facts=None):
    """A DeviceProfile from a bundled name or a file, converted for ``release`` (the loaded cuDNN by default; also
    given to cuDNN then), or as it is with ``allow``; mistakes are UsageErrors naming ``option``."""
    profile = None
    try:
        profile = graphs.device_profile(spec, release)  # (a bundled one made for the release asked for)
        if allow:
            profile.allow_version_mismatch = True
        else:
            profile = profile.for_release(release, facts=facts)
        if release is None:  # for the loaded cuDNN: given to it now
            profile.descriptor()
        return profile
    except DeviceProfileVersionError as e:
        if not e.missing or profile is None or allow:  # (allowed: converting, not adding members, is the fix)
            raise UsageError(f"argument {option}: {e}") from None
        target = format_version(e.loaded_version)
        sets = " ".join(f"--set {m}=VALUE" for m in e.missing)
        out = f"{_profile_file_stem(profile)}_deviceprop_cudnn{e.loaded_version}.json"
        raise UsageError(f"argument {option}: {profile.missing_problem(e.missing, e.loaded_version)}. Add it: "
                         f"`cudnn-backend profile convert {spec} --to {target} {sets} --out {out}`, then "
                         f"--device-profile {out}; or capture the profile on that GPU with `cudnn-backend profile "
                         f"capture` (cuDNN {target})") from None
    except (ValueError, TypeError, OSError) as e:
        if getattr(e, "option", None) == "cudnn_version":  # the Python fix (cudnn_version=) is no option here
            stem = pathlib.Path(spec).stem
            raise UsageError(f"argument {option}: {spec} does not record which cuDNN release wrote it; rename it "
                             "<name>_deviceprop_cudnn<MMmmpp>.json after the release that captured it (e.g. "
                             f"{stem}_deviceprop_cudnn91900.json), or capture it again with `cudnn-backend profile "
                             "capture`") from None
        text = str(e)
        if facts and (text.startswith("facts:") or any(m in text for m in facts)):
            raise UsageError(f"argument --set: {text.removeprefix('facts: ')}") from None
        raise UsageError(f"argument {option}: {text}") from None


def _profile_file_stem(profile) -> str:
    """'nvidia_h200' for "NVIDIA H200": the file name part of a profile's GPU ("gpu" for a name of no letter or
    digit; at most 64 characters, so that no deviceName makes a name the file system refuses)."""
    stem = "".join(c if c.isalnum() and c.isascii() else "_" for c in profile.device_name.lower())
    return stem[:64].strip("_") or "gpu"


def _offline(profile) -> bool:
    return profile is not None or not _device.gpu_available()


# the options whose whole work is on a GPU: given offline, each is a usage error (exit code 2) naming it, whatever
# its value (the timing options' defaults alike: offline nothing is timed, so none of them would change anything).
# --deterministic is not one: offline it still lifts the compile budget (plans built by count, not by time)
_TIMED = "it changes how configs are timed"
_CHOSEN = "it decides how timed candidates are kept and chosen"
GPU_ONLY = (("sweep", "the knob search compares timings"), ("plot", "it draws timings"),
            ("heatmap", "it draws timings"), ("cold", _TIMED), ("cuda_graph", _TIMED), ("warmup", _TIMED),
            ("repeats", _TIMED), ("buffer_sets", _TIMED), ("strategy", _CHOSEN), ("race_keep", _CHOSEN),
            ("race_margin", _CHOSEN), ("race_samples", _CHOSEN), ("finalists", _CHOSEN), ("final_rounds", _CHOSEN),
            ("tie", "it says which timings tie"))
# the options that shape the knob search: without --sweep nothing reads them (and offline there is no --sweep)
KNOB_SEARCH = ("sweep_seeds", "pair_seeds", "pair_search", "knob_values", "sweep_budget_s", "sweep_configs")


def _given(args, name) -> bool:
    """Whether the option ``name`` (an ``args`` attribute) was typed on the command line (a flag of
    ``TuneOptions``, or --plot/--heatmap)."""
    flag = TuneOptions.cli_flag(name) if name in TuneOptions.field_names() else f"--{name.replace('_', '-')}"
    given = getattr(args, "given_options", None)
    return flag in given if given is not None else getattr(args, name, None) is True


def _check_machine_options(args, profile) -> None:
    """--gpus against the GPUs here (more than there are is an error, as is any offline), the options that need a
    GPU (``GPU_ONLY``, refused offline) and --sm-count against the target GPU's SMs (the device profile's, the
    bundled h200's without a GPU, else this GPU's)."""
    if _offline(profile):
        for name, reason in GPU_ONLY:
            if hasattr(args, name) and _given(args, name):
                offline = "--device-profile is given" if profile is not None else "this machine has no GPU"
                raise UsageError(f"argument --{name.replace('_', '-')}: {reason}, and offline ({offline}) nothing "
                                 "runs; leave it out (--json and --csv write what offline exploring finds)")
    if not getattr(args, "sweep", True):
        for name in KNOB_SEARCH:
            if hasattr(args, name) and _given(args, name):
                why = " (and offline there is none: it compares timings)" if _offline(profile) else ""
                raise UsageError(f"argument {TuneOptions.cli_flag(name)}: it shapes the knob search, which runs with "
                                 f"--sweep only{why}; leave it out" + ("" if _offline(profile) else ", or add --sweep"))
    if args.gpus is not None:
        if _offline(profile):
            why = "--device-profile is given" if profile is not None else "this machine has no GPU"
            raise UsageError(f"argument --gpus: {why}, so nothing runs on a GPU (offline: heuristics and plans); "
                             "--workers N spreads the graphs over N CPU processes")
        have = _device.gpu_count()
        if args.gpus != "all" and args.gpus > have:
            raise UsageError(f"argument --gpus: {args.gpus} asked for, this machine has {plural(have, 'GPU')} "
                             "(--gpus all uses every one)")
    if args.sm_count_target is not None:
        if _offline(profile):
            target = profile if profile is not None else DeviceProfile.bundled("h200")
            name, count = target.device_name, target.sm_count
            where = "the device profile" if profile is not None else "the bundled h200 profile, used without a GPU"
        else:
            handle = _new_handle()
            try:
                name, _, count = _plans.device_key(handle)
            finally:
                handle.close()
            where = "this GPU"
        if count and args.sm_count_target > count:
            raise UsageError(f"argument --sm-count: {args.sm_count_target} is more than the {count} SMs of {name} "
                             f"({where}); give 1..{count}")


def _nothing_found(prog_job: str, explorations, hints=None) -> bool:
    """Print, for each exploration that found nothing, the reason (error lines), and the ``why`` command that
    explains it (``hints``: {exploration name: that command}); True when there was one."""
    found_none = [ex for ex in explorations if ex.chosen is None]
    for ex in found_none:
        hint = (hints or {}).get(ex.name)
        if ex.unknown_offline:
            render.error_console.print(Text(f"{prog_job}: ", style="bold yellow").append(ex.failure()))
        else:
            render.error_console.print(Text(f"{prog_job}: nothing found: ", style="bold red").append(
                ex.failure() + (f"; `{hint}` explains each stage and finds the smallest change that cuDNN supports"
                                if hint else "")))
    return bool(found_none)


def _why_command(task, args, profile) -> str | None:
    """The ``why`` command line for an explored graph (None for a saved plan: why takes graphs)."""
    if task is None:
        return None
    target = task.builder if task.builder in CATALOGUE else f"--graph {task.builder}"
    params = " ".join(f"--param {k}={v!r}" if isinstance(v, str) and " " in v else f"--param {k}={v}"
                      for k, v in task.kwargs.items())
    device = f" --device-profile {args.device_profile}" if profile is not None else ""
    return f"cudnn-backend why {target}{' ' + params if params else ''}{device}"


def _save_chosen_plan(args, ex, target, task, profile) -> None:
    """--save-plan after explore: the chosen config's plan, built again (explore keeps no plans), written as JSON."""
    chosen = ex.chosen
    handle = None if _offline(profile) else _new_handle()
    try:
        dp = None if handle is not None else as_deviceprop(profile if profile is not None else
                                                           DeviceProfile.bundled("h200"))
        subject = graphs.resolve(target, handle=handle, kwargs=task.kwargs if task else None,
                                 name=(task.label or None) if task else None, device_profile=dp)
        config = config_from_index(subject.op_graph, chosen.engine_index, chosen.knobs, dp)
        plan = _plans.build_plan(config, handle=handle, device_profile=dp)
        try:
            _write_plan(args.save_plan, plan, f"{chosen.label}, {'the best' if ex.timed else 'picked offline'}")
        finally:
            plan.close()
    finally:
        if handle is not None:
            handle.close()


def _write_plan(path, plan, how) -> None:
    with _writing("--save-plan", path):
        _plans.save_plan(plan, path)
    render.error_console.print(f"wrote {path}: {_plan_config(plan)} ({how}); `--plan {path}` takes it")
    profile = profile_of(plan.deviceprop) if plan.handle is None else None
    if profile is not None:  # built offline: the GPU it was built for must be the one that loads it
        render.note(f"{path} was built offline with the {profile.device_name} profile ({profile.origin}): it loads on "
              f"{profile.plan_target()}")  # where a published figure puts that at risk, save_plan warned


def _plan_config(plan) -> str:
    """A plan's config in words: ``"engine 7 KERNEL_CFG=21"``."""
    return config_words(plan.engine_index, {short_name(k): v for k, v in plan.knobs.items()})


@contextlib.contextmanager
def _progress(args, label):
    """A progress callback on stderr (a bar when stderr is a terminal, nothing otherwise)."""
    if getattr(args, "quiet", False) or not sys.stderr.isatty():
        yield None
        return
    with Progress(TextColumn("[bold]{task.description}"), BarColumn(), MofNCompleteColumn(), TimeElapsedColumn(),
                  TextColumn("{task.fields[text]}", markup=False), console=render.error_console, transient=True) as bar:
        refresh = getattr(bar.live, "_refresh_thread", None)  # (it only draws: it never enters cuDNN)
        if refresh is not None:
            offline_gaps.never_calls_cudnn(refresh)
        task = bar.add_task(label, total=None, text="")

        def update(done, total, item):
            text = item if isinstance(item, str) else f"{item.task.name}: {'ok' if item.ok else 'failed'}"
            bar.update(task, completed=done, total=total, text=text[:60])

        yield update


# ---------------------------------------------------------------------------------------------
# outputs
# ---------------------------------------------------------------------------------------------
def _write_outputs(args, explorations: list) -> bool:
    """--csv, --json, --plot, --heatmap; each attempted whatever happens to the others. False if one failed."""
    def csv_output():
        rows = [row for ex in explorations for row in ex.rows()]
        _write_rows_csv(args.csv, rows)
        render.error_console.print(f"wrote {args.csv} ({len(rows)} rows)")

    def json_output():
        data = explorations[0].to_dict() if len(explorations) == 1 else [ex.to_dict() for ex in explorations]
        _write_json(args.json, data, default=str)
        render.error_console.print(f"wrote {args.json}")

    ok = _each_output(args, [write for given, write in ((args.csv, csv_output), (args.json, json_output)) if given])
    for flag, path, draw in (("--plot", args.plot, plots.plot_exploration), ("--heatmap", args.heatmap,
                                                                            plots.plot_knob_heatmap)):
        if not path:
            continue
        for i, ex in enumerate(explorations):
            target = path if len(explorations) == 1 else _numbered(path, i)
            try:
                draw(ex, target)
                render.error_console.print(f"wrote {target}")
            except MissingDependencyError as e:
                render.problem(flag, f"{e}; the other outputs were written")
                ok = False
                break
            except (ValueError, OSError) as e:
                render.problem(flag, f"not written: {e}")
                ok = False
    return ok


def _each_output(args, writes) -> bool:
    """Call each of ``writes`` (an output file written), whatever happens to the others: one that cannot write
    (``OutputError``) is a line naming its option; False if one failed."""
    ok = True
    for write in writes:
        try:
            write()
        except OutputError as e:
            render.problem(f"cudnn-backend {args.command}: error", str(e))
            ok = False
    return ok


def _write_json(path, data, **dumps) -> None:
    """--json FILE: ``data`` as indented, standard JSON (NaN and infinity as null: ``json_ready``)."""
    with _writing("--json", path):
        write_whole(path, json.dumps(json_ready(data), indent=1, allow_nan=False, **dumps) + "\n", "--json")


def _numbered(path, i):
    p = pathlib.Path(path)
    return p.with_name(f"{p.stem}-{i}{p.suffix}")


OUTPUT_OPTIONS = ("csv", "json", "plot", "heatmap", "save_plan", "out")  # the options naming a file a command writes
IMAGE_OUTPUTS = ("plot", "heatmap")  # the ones matplotlib writes: their file type checked before any work


_EMPTY_MEANS_NONE = frozenset({"--errata"})  # '' for no errata file: cudnn-frontend's convention, documented


def _refuse_empty_values(args):
    """An option given an empty value is refused (but those of ``_EMPTY_MEANS_NONE``): read as "not given" it would
    mean the default (``--cache ""`` clearing the user's own plan cache)."""
    for option in sorted(args.given_options - _EMPTY_MEANS_NONE):
        if getattr(args, option[2:].replace("-", "_"), None) == "":
            raise UsageError(f"argument {option}: an empty value; give one, or leave the option out for its default")


INPUT_OPTIONS = ("plan", "errata", "device_profile", "catalogue", "matrices", "graph", "tasks")  # files read
_REWRITES_ITS_INPUT = {("save_plan", "--plan")}  # a plan read whole, then the tuned one written whole in its place


def _input_files(args) -> dict:
    """{resolved path: option} of the existing files the command's input options name (a graph's FILE of
    FILE.py:FUNC; a bundled profile name names no file)."""
    files = {}
    for dest in INPUT_OPTIONS:
        values = getattr(args, dest, None)
        for value in (values if isinstance(values, (list, tuple)) else [values]):
            if not isinstance(value, str) or not value:
                continue
            name = value.rsplit(":", 1)[0] if dest == "graph" and ":" in value else value
            try:
                if os.path.isfile(name):
                    files.setdefault(pathlib.Path(name).resolve(), f"--{dest.replace('_', '-')}")
            except (OSError, ValueError):  # (a name the file system cannot take: its own check says so)
                continue
    return files


def _check_outputs_writable(args):
    """Every output file the command names, before any work: a folder that exists, no folder itself (a device
    file such as /dev/null is taken), and no file an input option names (it would be overwritten)."""
    taken = {}  # resolved path -> the option naming it
    inputs = _input_files(args)
    for dest in OUTPUT_OPTIONS:
        path = getattr(args, dest, None)
        if not isinstance(path, str):  # absent, or a --json that prints (a flag)
            continue
        option = f"--{dest.replace('_', '-')}"
        if path == "-":  # (the command's own report is what it prints)
            raise UsageError(f"argument {option}: '-' would be a file named '-'; name a file (/dev/stdout prints it)")
        try:
            p = file_path(path, f"argument {option}")
        except (TypeError, ValueError) as e:
            raise UsageError(str(e)) from None
        if p.is_dir():
            raise UsageError(f"argument {option}: {path!r} is a folder; name a file in it")
        if dest in IMAGE_OUTPUTS and not (p.exists() and p.is_char_device()):
            problem = image_suffix_problem(path)
            if problem is not None:
                raise UsageError(f"argument {option}: {problem}")
        resolved = p.resolve()
        if not resolved.parent.is_dir():
            raise UsageError(f"argument {option}: the folder of {path!r} does not exist")
        if resolved in taken and not (p.exists() and p.is_char_device()):  # /dev/null and /dev/stdout take both
            raise UsageError(f"argument {option}: {path!r} is the file {taken[resolved]} writes too: the second "
                             "would overwrite the first; give each output a file of its own")
        if resolved in inputs and not (p.exists() and p.is_char_device()) and \
                (dest, inputs[resolved]) not in _REWRITES_ITS_INPUT:
            raise UsageError(f"argument {option}: {path!r} is the file {inputs[resolved]} reads: writing it would "
                             "destroy the input; give the output a file of its own")
        taken[resolved] = option


class OutputError(Exception):
    """An output file that could not be written, after the work: exit code 1 (the work was done; its answer was
    not all written), one line naming the option."""


@contextlib.contextmanager
def _writing(option, path):
    """One output file written (through ``core.files.write_whole``, which refuses a named pipe nobody reads): an
    OSError there (a full disk, a file that refuses writes, that pipe) names the option."""
    try:
        yield
    except OSError as e:
        raise OutputError(f"argument {option}: cannot write {str(path)!r}: {e.strerror or e}") from None


# ---------------------------------------------------------------------------------------------
# commands
# ---------------------------------------------------------------------------------------------
def cmd_info(args) -> int:
    d = _info()
    d["offline_profiles"] = offline_profiles()
    if args.json:
        print(json.dumps(d, indent=2))
    else:
        render.info(d)
    return 0


def _many(args, tasks, job, profile, options, cache=None) -> int:
    many = options_from(args, SweepOptions)
    executor = "ray" if many.ray_address else ("processes" if many.gpus is not None or many.workers is not None
                                               else "serial")
    with _progress(args, f"{job} {plural(len(tasks), 'graph')}") as progress:
        try:
            result = sweep(tasks, job=job, executor=executor, device_profile=profile, cache=cache, progress=progress,
                           options=options, **many.as_kwargs())
        except SweepError as e:  # (a cluster that is not there is found before any work: check_ray_address)
            if getattr(e, "option", None) != "ray_address":
                raise
            raise UsageError(f"argument --ray: {str(e).removeprefix('ray_address: ')}") from None
    render.console.print(render.sweep_table(result))
    if result.executor == "processes" and result.worker_reports:  # where the workers' time went
        render.console.print(result.accounting(), markup=False, highlight=False)
    explorations = [r.exploration for r in result.results if r.exploration is not None]
    if any(ex.timed for ex in explorations):
        render.console.print(render.headroom(headroom_rows(explorations)))
    for r in result.failures:
        render.problem("failed", f"{r.task.name}{f' ({r.task.origin})' if r.task.origin else ''}: {r.error}")
    recorded = [n for ex in explorations for n in ex.notes
                if n.startswith("errata_out: ") and "nothing recorded" not in n]
    for text in recorded:  # --errata-out's records, once per graph that had some
        render.note(text)
    if getattr(options, "errata_out", None) and not recorded:
        render.note(f"errata_out: nothing recorded in {options.errata_out}")
    ok = _write_outputs(args, explorations) if explorations else True
    hints = {r.exploration.name: _why_command(r.task, args, profile) for r in result.results
             if r.exploration is not None}
    empty = _nothing_found(f"cudnn-backend {job}", explorations, hints)
    return 0 if ok and not result.failures and not empty else 1


def _search_setup(args) -> tuple:
    """What explore and tune start from: (graphs, --save-plan path, device profile or None, TuneOptions), the
    machine options checked first."""
    tasks, plan_path = _targets(args)
    profile = _device_profile(args)
    _check_machine_options(args, profile)
    if _given(args, "errata_scope") and not args.errata_out:
        raise UsageError("argument --errata-scope: says what the rules --errata-out records cover; give --errata-out "
                         "FILE with it, or leave it out")
    if getattr(args, "no_cache", False) and getattr(args, "cache", None):
        raise UsageError("argument --cache: not with --no-cache, which uses no plan cache; give one of them")
    return tasks, plan_path, profile, tune_options(args, engines=not args.no_engines)


def cmd_explore(args) -> int:
    tasks, plan_path, profile, options = _search_setup(args)
    if _several(args, tasks, plan_path, "explored"):
        return _many(args, tasks, "explore", profile, options)
    return _explore_one(args, plan_path or tasks[0].builder, tasks[0] if tasks else None, profile, options)


def _several(args, tasks, plan_path, done: str) -> bool:
    """Whether several graphs run (a sweep): more than one, or --gpus/--ray/--workers; UsageError where a saved
    plan or --save-plan (one graph each) meets them. ``done``: "explored" or "tuned", for the message."""
    several = len(tasks) > 1 or args.gpus is not None or args.ray_address or args.workers is not None
    if several and plan_path:
        raise UsageError("--gpus/--ray/--workers take several graphs (--preset, --tasks, --graph ...)")
    if several and args.save_plan:
        raise UsageError(f"argument --save-plan: takes one graph (several are {done} here)")
    return several


def _explore_one(args, target, task, profile, options, job="explore") -> int:
    """Explore one graph, print it, write the outputs and --save-plan; 1 when nothing was found (said why)."""
    with _progress(args, job) as progress:
        ex = explore(target, device_profile=profile, kwargs=task.kwargs if task else None,
                     name=(task.label or None) if task else None, progress=progress, options=options)
    render.exploration(ex, top=args.top, engines=not args.no_engines)
    ok = _write_outputs(args, [ex])
    if _nothing_found(f"cudnn-backend {job}", [ex], {ex.name: _why_command(task, args, profile)}):
        return 1
    if args.save_plan:
        _save_chosen_plan(args, ex, target, task, profile)
    return 0 if ok else 1


def _cache(args):
    if getattr(args, "no_cache", False):
        return None
    return PlanCache(args.cache) if getattr(args, "cache", None) else PlanCache()


def cmd_tune(args) -> int:
    tasks, plan_path, profile, options = _search_setup(args)
    several = _several(args, tasks, plan_path, "tuned")  # its usage errors before any note
    offline = _offline(profile)
    if offline:
        render.note("tune times configs on a GPU; offline (no GPU, or --device-profile) it picks heuristics' first "
                    "config that builds a plan, and nothing is cached (--save-plan FILE.json writes it)")
    cache = None if offline else _cache(args)
    if several:
        return _many(args, tasks, "tune", profile, options, cache=cache)
    target = plan_path or tasks[0].builder
    if offline:  # nothing is timed: explore's pick, heuristics' first config that builds a plan, is autotune's too
        return _explore_one(args, target, tasks[0] if tasks else None, profile, options, "tune")
    kw = dict(kwargs=tasks[0].kwargs, name=tasks[0].label or None) if tasks else {}
    with _progress(args, "tune") as progress:
        plan, ex = autotune(target, None, cache=cache, progress=progress, options=options, **kw)
    try:
        if ex is None:
            render.console.print(f"plan cache hit ({cache.path}): {_plan_config(plan)}; nothing explored "
                                 "(`cudnn-backend cache clear` to tune again)")
            if args.save_plan:
                _write_plan(args.save_plan, plan, "from the plan cache")
            return 0
        render.exploration(ex, top=args.top, engines=not args.no_engines)
        if cache is not None and ex.best is not None:
            render.console.print(f"stored in the plan cache {cache.path}")
        ok = _write_outputs(args, [ex])
        if args.save_plan:
            _write_plan(args.save_plan, plan, f"{ex.chosen.label}, the best" if ex.chosen else "the best")
        return 0 if ok else 1
    finally:
        plan.close()


def _plan_for(args, handle, cache):
    """(plan, name, how it was chosen) for bench and fusion."""
    tasks, plan_path = _targets(args, many=False)
    if plan_path:
        subject = graphs.resolve(plan_path, handle=handle)
        return subject.plan, subject.name, "saved plan"
    subject = graphs.resolve(tasks[0].builder, handle=handle, kwargs=tasks[0].kwargs, name=tasks[0].label or None)
    errata = errata_arg(args)
    if cache is not None:
        hit = cache.get(subject, handle=handle, errata=errata or False)
        if hit is not None:
            return hit, subject.name, "plan cache (tuned)"
    plan, _ = _heuristics.build_first_plan(subject.op_graph, handle=handle, errata=errata or False)
    return plan, subject.name, "heuristics' first working config"


def cmd_bench(args) -> int:
    _targets(args, many=False)  # argument mistakes first (exit code 2), then what the machine lacks
    errata_arg(args)
    if _offline(_device_profile(args)):
        raise CudnnBackendError("bench runs the plan, so it needs a GPU (none here, or --device-profile given); "
                                "`cudnn-backend explore --device-profile ...` builds plans offline")
    from_handle = _new_handle()
    try:
        plan, name, how = _plan_for(args, from_handle, _cache(args))
        report = bench(plan, from_handle, **options_from(args, BenchOptions).as_kwargs(), name=name)
        report.plan_source = how
        render.bench(report)
        if args.json:
            _write_json(args.json, report.to_dict())
            render.error_console.print(f"wrote {args.json}")
        return 0
    finally:
        from_handle.close()


def _new_handle():
    return Handle()


def cmd_fusion(args) -> int:
    _targets(args, many=False)  # argument mistakes first (exit code 2), then what the machine lacks
    errata = errata_arg(args)
    profile = _device_profile(args)
    if _offline(profile):
        raise CudnnBackendError("fusion runs the plan and reads the kernels it launched, so it needs a GPU")
    if args.all:
        tasks, plan_path = _targets(args, many=False)
        target = plan_path or tasks[0].builder
        ex = explore(target, kwargs=tasks[0].kwargs if tasks else None,
                     name=(tasks[0].label or None) if tasks else None, fusion="all", engines=False,
                     errata=errata or "")
        t = render.table(f"kernels per config of {ex.name}")
        for col in ("from", "engine", "knobs", "status", "time", "kernels", "names"):
            t.add_column(col, overflow="fold")
        for r in ex.results:
            t.add_row(r.label, str(r.engine_index), r.knobs_text(), r.status_text, render.us(r.time_us),
                      "-" if r.kernel_count is None else str(r.kernel_count), ", ".join(r.kernels or []))
        render.console.print(t)
        if args.json:
            _write_json(args.json, [{"engine_index": r.engine_index, "knobs": r.knobs, "kernels": r.kernels}
                                    for r in ex.results])
        return 0
    handle = _new_handle()
    try:
        plan, name, how = _plan_for(args, handle, _cache(args))
        report = fusion_report(plan, handle)
        render.console.print(f"{name}: plan from {how}")
        render.fusion(report)
        if args.json:
            _write_json(args.json, report.to_dict())
        plan.close()
        return 0
    finally:
        handle.close()


def cmd_profile(args) -> int:
    if args.profile_command == "capture":
        if not _device.gpu_available():
            raise CudnnBackendError("profile capture needs this machine's GPU; none is visible")
        p = DeviceProfile.capture(args.device)
        out = args.out or f"{_profile_file_stem(p)}_deviceprop_cudnn{p.cudnn_version}.json"
        with _writing("--out", out):
            p.save(out)
        render.profile(p)
        render.console.print(f"wrote {out} (other cuDNN releases get it converted: `cudnn-backend profile convert`)")
        return 0
    if args.profile_command == "convert":
        try:
            release = parse_version(args.to, "--to") if args.to else loaded_version()
        except (ValueError, TypeError) as e:
            raise UsageError(f"argument {e}") from None
        if release < OFFLINE_SINCE:  # the release's own limit, said of the option that names it
            raise UsageError(f"argument --to: cuDNN {format_version(release)} takes no device profile (they came with "
                             f"cuDNN {format_version(OFFLINE_SINCE)}); give {format_version(OFFLINE_SINCE)} or later")
        facts = {}
        for key, value in args.set:  # a member set twice: which one was meant is not for this to guess
            if key in facts:
                raise UsageError(f"argument --set: {key} is given twice ({key}={facts[key]!r} and {key}={value!r}); "
                                 "give each member once")
            facts[key] = value
        p = _profile(args.profile, "FILE|NAME", release=release, facts=facts)
        out = args.out or f"{_profile_file_stem(p)}_deviceprop_cudnn{p.cudnn_version}.json"
        try:
            with _writing("--out", out):
                p.save(out)
        except ValueError as e:  # a path the file system cannot take
            raise UsageError(f"argument --out: {e}") from None
        render.profile(p)
        render.console.print(f"wrote {out}")
        if release_members(release).known is None:  # nothing here says what that release reads: it will say
            render.note(f"no table of this package lists the members cuDNN {format_version(release)} reads (tables: "
                        f"{', '.join(format_version(t) for t in TABLE_RELEASES)}): those the nearest tables require "
                        "were filled and every other member kept; that release has the last word as it reads the file")
        return 0
    p = _profile(args.profile, "FILE|NAME")
    if args.json:
        print(json.dumps(p.to_dict(), indent=2))
    else:
        render.profile(p)
    return 0


def cmd_cache(args) -> int:
    cache = PlanCache.of(args.cache or True, "--cache")
    if args.cache_command == "list":
        entries = cache.entries()  # an entry whose fields do not read is left out with a warning line naming it
        if args.json:
            print(json.dumps([e.to_dict() for e in entries], indent=1))
        else:
            render.cache_entries(entries, cache.path)
        return 0
    if args.cache_command == "show":
        try:
            e = cache.entry(args.key)
        except ValueError as err:
            raise UsageError(f"argument key: {err}") from None
        if e is None:
            raise UsageError(f"argument key: no entry {args.key!r} in {cache.path}")
        if args.json_plan:
            text = cache.plan_json(e.key)
            if text is None:  # gone meanwhile, or failing its checksum (warned)
                raise ValueError(f"plan cache {str(cache.path)!r}: entry {e.key[:12]}: no plan to show")
            print(text)
        else:
            render.cache_entry(e)
        return 0
    n = cache.clear()
    render.console.print(f"removed {n} entr{'y' if n == 1 else 'ies'} from {cache.path}")
    return 0


COMMANDS = {"info": cmd_info, "explore": cmd_explore, "tune": cmd_tune, "bench": cmd_bench, "fusion": cmd_fusion,
            "profile": cmd_profile, "cache": cmd_cache}


# ---------------------------------------------------------------------------------------------
# support, compare, why
# ---------------------------------------------------------------------------------------------
def _support_entries(args) -> list:
    """The catalogue the command names, filtered (argument mistakes as UsageErrors naming the option)."""
    try:
        entries = load_catalogue(args.catalogue) if args.catalogue else default_catalogue()
    except (ValueError, TypeError) as e:
        raise UsageError(f"argument --catalogue: {e}") from None
    for i, entry in enumerate(entries, 1):  # a line naming no builder, or keywords it lacks: the user's mistake
        if entry.family == "user" and isinstance(entry.builder, str):
            _builder(entry.builder, f"argument --catalogue: {args.catalogue}, graph {i} ({entry.name})", entry.kwargs)
    for flag, kw, value in (("--family", "family", args.family), ("--dtype", "data_type", args.data_type),
                            ("--layout", "layout", args.layout)):
        try:
            filter_entries([], **{kw: value})
        except ValueError as e:
            raise UsageError(f"argument {flag}: {str(e).removeprefix(f'{kw}: ')}") from None
    kept = filter_entries(entries, family=args.family, data_type=args.data_type, layout=args.layout, name=args.name)
    if not kept:
        given = ", ".join(f"{flag} {v}" for flag, v in (("--family", args.family), ("--dtype", args.data_type),
                                                          ("--layout", args.layout), ("--name", args.name)) if v)
        raise UsageError(f"no graph of the {'catalogue ' + args.catalogue if args.catalogue else 'default catalogue'} "
                         f"({len(entries)} graphs) passes {given}")
    return kept


def _support_options(args) -> dict:
    """support_matrix's keywords from the command line (--cache checked: a usage error naming it)."""
    cache = True
    if args.cache:
        try:
            cache = SupportCache(args.cache)
        except (ValueError, TypeError) as e:
            raise UsageError(f"argument --cache: {str(e).removeprefix('cache: ')}") from None
    return dict(options_from(args, SupportOptions).as_kwargs(), cache=False if args.no_cache else cache,
                allow_version_mismatch=True if args.allow_version_mismatch else None)


def _write_rows_csv(path, rows):
    with _writing("--csv", path):
        write_csv(path, rows, "--csv")


def cmd_support(args) -> int:
    entries = _support_entries(args)
    profile = _device_profile(args)
    if args.kernels and _offline(profile):
        raise UsageError("argument --kernels: kernel counts come from running the plans on this machine's GPU; "
                         "offline (no GPU, or --device-profile) nothing runs")
    if args.clear_cache and args.no_cache:
        raise UsageError("argument --clear-cache: not with --no-cache, which leaves the cache alone")
    options = _support_options(args)
    errata = errata_arg(args)
    if args.clear_cache:
        n = SupportCache(args.cache).clear()  # (its path checked above)
        render.error_console.print(f"removed {n} cached result(s)")
    with _progress(args, "support") as progress:
        matrix = support_matrix(entries, profile, progress=progress, kernels=True if args.kernels else None,
                                errata=errata or False, **options)
    render.console.print(Text(matrix.title(), style="bold"))
    render.console.print(render.support_summary(matrix))
    rows = args.rows or ("all" if len(matrix) <= 80 else "none")
    if rows != "none":
        render.console.print(render.support_rows(matrix, rows))
    if (rows != "none" or args.rows is None) and any(not r.supported or r.caveat for r in matrix.results):
        render.console.print(render.support_reasons(matrix))  # (a supported graph's caveat too)
    render.console.print(render.support_legend(matrix))
    if rows == "none" and args.rows is None:
        render.note(f"{len(matrix)} graphs: the rows are in --csv / --json (or --rows all / unsupported)")
    render.error_console.print(f"{len(matrix)} graphs in {matrix.wall_seconds:.1f} s ({matrix.cached} from the cache, "
                               f"{matrix.workers} worker(s))")
    def csv_output():
        with _writing("--csv", args.csv):
            matrix.write_csv(args.csv)
        render.error_console.print(f"wrote {args.csv} ({len(matrix)} rows)")

    def json_output():
        with _writing("--json", args.json):
            matrix.write_json(args.json)
        render.error_console.print(f"wrote {args.json}")

    ok = _each_output(args, [write for given, write in ((args.csv, csv_output), (args.json, json_output)) if given])
    if args.heatmap:
        try:
            plot_support_heatmap(matrix, args.heatmap)
            render.error_console.print(f"wrote {args.heatmap}")
        except MissingDependencyError as e:
            render.problem("--heatmap", f"{e}; the other outputs were written")
            ok = False
        except (ValueError, OSError) as e:
            render.problem("--heatmap", f"not written: {e}")
            ok = False
    return 0 if ok else 1


# the options each way of comparing reads; any other given is refused, not silently ignored
_COMPARE_OUTPUT = {"--csv", "--json", "--all", "--width", "--quiet"}
_COMPARE_SELECTION = {"--catalogue", "--family", "--dtype", "--layout", "--name"}
_COMPARE_PROBING = {"--device-profile", "--allow-version-mismatch", "--plans", "--workers", "--no-cache", "--cache"}
_COMPARE_READS = {
    "--matrices": {"--matrices"} | _COMPARE_OUTPUT,
    "--profiles": {"--profiles"} | _COMPARE_OUTPUT | _COMPARE_SELECTION | (_COMPARE_PROBING - {"--device-profile"}),
    "--releases": {"--releases"} | _COMPARE_OUTPUT | _COMPARE_SELECTION | _COMPARE_PROBING,
    "--releases with --preset/--graph/--tasks": {"--releases", "--preset", "--graph", "--tasks", "--slower",
                                                 "--device-profile"} | _COMPARE_OUTPUT,
}


def _refuse_unread_options(args, way: str):
    """A usage error naming the first option given that ``way`` of comparing does not read."""
    unread = sorted(set(getattr(args, "given_options", ())) - _COMPARE_READS[way])
    if unread:
        others = sorted(_COMPARE_READS[way] - _COMPARE_OUTPUT - {way.split()[0]})
        raise UsageError(f"argument {unread[0]}: compare {way} does not read it; it reads "
                         f"{', '.join(others) + ' and ' if others else 'only '}the output options "
                         f"({', '.join(sorted(_COMPARE_OUTPUT))})")


def cmd_compare(args) -> int:
    given = [flag for flag, v in (("--profiles", args.profiles), ("--releases", args.releases),
                                  ("--matrices", args.matrices)) if v]
    if len(given) != 1:
        raise UsageError("give one of --profiles A B, --releases LIB_A LIB_B, --matrices A.json B.json" +
                         (f", not {' and '.join(given)}" if given else ""))
    timed = args.releases and (args.preset or args.graph or args.tasks)
    if not (timed and args.catalogue):  # (that pair has a message of its own)
        _refuse_unread_options(args, "--releases with --preset/--graph/--tasks" if timed else given[0])
    if args.matrices:
        try:
            a, b = (SupportMatrix.load(m) for m in args.matrices)
        except ValueError as e:
            raise UsageError(f"argument --matrices: {e}") from None
        comparison = compare_matrices(a, b, args.matrices[0], args.matrices[1])
    else:
        if args.catalogue:
            _support_entries(args)  # the catalogue and filters checked here, before any probing
        options = _support_options(args)
        if args.profiles:
            try:
                profiles = [graphs.device_profile(p) for p in args.profiles]
            except (ValueError, TypeError, OSError) as e:
                raise UsageError(f"argument --profiles: {e}") from None
            with _progress(args, "compare") as progress:
                comparison = compare_support(profiles=profiles, catalogue=args.catalogue, progress=progress,
                                             **options)
            comparison.label_a, comparison.label_b = args.profiles
        else:
            libs = _release_libraries(args.releases)
            if args.preset or args.graph or args.tasks:
                return _compare_releases_timed(args, args.releases)
            with _progress(args, "compare") as progress:
                comparison = compare_support(releases=libs, device_profile=args.device_profile,
                                             catalogue=args.catalogue, progress=progress, **options)
    return _print_comparison(args, comparison, render.support_comparison)


def _release_libraries(releases) -> list:
    """--releases: the libcudnn.so.9 of each (None: the default), found and checked by ``release_library``."""
    libs = []
    for spec in releases:
        try:
            libs.append(release_library(spec))
        except (ValueError, TypeError) as e:
            raise UsageError(f"argument --releases: {str(e).removeprefix('release: ')}") from None
    return libs


def _print_comparison(args, comparison, rendering) -> int:
    """A comparison's table, and its rows to --csv and --json."""
    render.console.print(rendering(comparison, everything=args.all))

    def csv_output():
        _write_rows_csv(args.csv, comparison.rows)
        render.error_console.print(f"wrote {args.csv} ({len(comparison.rows)} rows)")

    def json_output():
        _write_json(args.json, comparison.to_dict())
        render.error_console.print(f"wrote {args.json}")

    return 0 if _each_output(args, [write for given, write in ((args.csv, csv_output), (args.json, json_output))
                                    if given]) else 1


def _compare_releases_timed(args, releases) -> int:
    """compare --releases A B with graphs: each explored under each release (timed on this GPU), graph by graph."""
    if args.catalogue:
        raise UsageError("argument --catalogue: with --preset/--graph/--tasks the graphs are those; give one or the "
                         "other")
    if not 0 < args.slower < 10:
        raise UsageError(f"argument --slower: expected a fraction such as 0.1, not {args.slower}")
    if args.preset:
        tasks = tasks_from_preset(args.preset)
    elif args.tasks:
        tasks = args.tasks_read = _task_file(args.tasks)
    else:
        tasks = [Task(ref, {}) for ref in args.graph]
        for task in tasks:
            _builder(task.builder, f"the graph {task.name}", task.kwargs)
    profile = _device_profile(args)
    if _offline(profile):
        render.note("no GPU (or --device-profile): nothing is timed; the configs each release lists and the first that "
              "builds are compared")
    with _progress(args, "compare") as progress:
        comparison = compare_releases(releases, tasks, device_profile=args.device_profile, slower=args.slower,
                                      progress=progress)  # each release converts the profile for itself
    for task, row in zip(tasks, comparison.rows):  # (a row in the order of its task; a failed one names none)
        row["graph"] = row.get("graph") or task.name
    status = _print_comparison(args, comparison, render.release_comparison)
    failed = [row for row in comparison.rows if row.get("change") == "failed"]
    for row in failed:  # a graph neither release could run failed: the exit code says so (EXIT_CODES)
        render.problem("failed", f"{row['graph']}: {row.get('reason') or 'neither release ran it'}")
    return 1 if failed else status


def cmd_why(args) -> int:
    if bool(args.pattern) == bool(args.graph):
        raise UsageError("give one graph: PATTERN or --graph FILE.py:FUNC" + (", not both" if args.pattern else ""))
    target, fn = args.pattern, CATALOGUE.get(args.pattern)
    if args.graph:
        fn = _builder(args.graph, "argument --graph")
        target = args.graph
    params = param_options(args)
    builder_kwargs(fn, f"pattern {target}" if args.pattern else target, params, size_options=False)
    _check_values(args.pattern, params, args)
    profile = _device_profile(args)
    handle = None if _offline(profile) else _new_handle()
    try:
        ex = why(target, profile, handle=handle, kwargs=params,
                 **options_from(args, WhyOptions).as_kwargs(),
                 allow_version_mismatch=True if args.allow_version_mismatch else None)
    finally:
        if handle is not None:
            handle.close()
    render.explanation(ex)
    if args.json:
        _write_json(args.json, ex.to_dict(), default=str)
        render.error_console.print(f"wrote {args.json}")
    return 0 if ex.supported else 1  # the answer, for scripts: 1 when cuDNN refuses the graph


COMMANDS.update(support=cmd_support, compare=cmd_compare, why=cmd_why, errata=cmd_errata)


_default_showwarning = warnings.showwarning


def _show_warning(message, category, filename, lineno, file=None, line=None):
    if issubclass(category, UserWarning):
        render.warning(render.cli_words(" ".join(str(message).split())))
    else:
        _default_showwarning(message, category, filename, lineno, file, line)


MAX_ERROR_LINE = 1000  # characters of an error line: past that, a value quoted whole (a plan's JSON) hides the point


def _error_line(prog, text) -> None:
    """``prog: error: text`` on stderr, one line of at most ``MAX_ERROR_LINE`` characters of the text: a longer one
    loses its middle, where a value given back sits (an option's 5000 digits), and keeps its end, the reason."""
    text = " ".join(str(text).split())
    if len(text) > MAX_ERROR_LINE:
        tail = MAX_ERROR_LINE // 3
        head = MAX_ERROR_LINE - tail
        text = f"{text[:head]} ... ({len(text) - head - tail:,} characters left out) ... {text[-tail:]}"
    sys.stderr.write(f"{prog}: error: {text}\n")


def _replace_what_the_terminal_cannot_show() -> None:
    """Where standard output or error cannot encode every character (an ASCII locale: LC_ALL=C, PYTHONIOENCODING=
    ascii), characters it lacks ("µs", "·") are written as "?" rather than fail the command after its work."""
    for stream in (sys.stdout, sys.stderr):
        reconfigure = getattr(stream, "reconfigure", None)
        if reconfigure is not None and getattr(stream, "errors", "strict") == "strict":
            try:
                "µ·─".encode(stream.encoding or "ascii")
            except (UnicodeEncodeError, LookupError):
                reconfigure(errors="replace")


def main(argv=None) -> int:
    _replace_what_the_terminal_cannot_show()
    parser = build_parser()
    with warnings.catch_warnings():  # (options read files as they are parsed: an errata file's warnings)
        warnings.showwarning = _show_warning
        args = parser.parse_args(argv)  # bad arguments: one line, exit code 2 (Parser.error)
    # the options as typed (abbreviations are off), for the commands that refuse one their way of working ignores
    args.given_options = frozenset(token.split("=", 1)[0] for token in (sys.argv[1:] if argv is None else argv)
                                   if token.startswith("--"))
    if args.command is None:  # a bare `cudnn-backend`: what it does and its commands
        parser.print_help()
        return 0
    render.configure(width=getattr(args, "width", None))
    prog = f"cudnn-backend {args.command}"
    try:
        _refuse_empty_values(args)
        _check_outputs_writable(args)
        with warnings.catch_warnings():  # the package's warnings (DeviceMemoryWarning, ...) as "warning:" lines
            warnings.showwarning = _show_warning
            return COMMANDS[args.command](args)
    except UsageError as e:
        _error_line(prog, render.cli_words(str(e)))
        return 2
    except OutputError as e:
        _error_line(prog, e)
        return 1
    except BrokenPipeError:
        # the reader went away (e.g. `| head`): stop quietly, and keep Python from complaining at exit. The answer
        # was not all written, so no status of its own: 141 (128 + SIGPIPE), as a C program killed by the pipe
        devnull = os.open(os.devnull, os.O_WRONLY)
        os.dup2(devnull, sys.stdout.fileno())
        return BROKEN_PIPE_STATUS
    except KeyboardInterrupt:
        sys.stderr.write(f"{prog}: interrupted\n")
        return 130
    except SystemExit as e:  # a graph function of the user's exiting: an error of its graph, said where
        if graphs.user_frame(e) is None:
            raise
        _error_line(prog, _origin_words(args, e) + graphs.user_error_line(e))
        return 1
    except Exception as e:  # noqa: BLE001 - the user's code may raise anything; the package's own bugs re-raise
        if os.environ.get("CUDNN_BACKEND_DEBUG"):
            raise
        origin = _origin_words(args, e)
        if graphs.user_frame(e) is not None:  # raised in the user's graph file: where, in one line
            _error_line(prog, origin + graphs.user_error_line(e))
            return 1
        if not isinstance(e, (CudnnBackendError, ValueError, TypeError, OSError)):
            raise
        text = " ".join(str(e).split()) if str(e) else type(e).__name__
        _error_line(prog, origin + render.cli_words(text))
        return 1
    except BaseException as e:  # (GeneratorExit, ...) raised by the user's code: its error, said where
        if graphs.user_frame(e) is None or os.environ.get("CUDNN_BACKEND_DEBUG"):
            raise
        _error_line(prog, graphs.user_error_line(e))
        return 1

