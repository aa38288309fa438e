"""TuneOptions: one place for every option of explore, autotune, sweeps and the command line; bad values refused
naming the option the Python way (the command line's wording is tested in tests/cli). The other jobs' option sets
(sweep, bench, why, support) the same way."""
import dataclasses
import inspect
import math
import pickle

import pytest

import cudnn_backend as cb
from cudnn_backend.cli.args import UsageError, build_parser, options_from, tune_options
from cudnn_backend.tune import TuneOptions
from cudnn_backend.tune.releases import compare_releases
from cudnn_backend.tune.support import compare_support
from cudnn_backend.tune.options import (
    JOB_DEFAULTS,
    BenchOptions,
    SupportOptions,
    SweepOptions,
    WhyOptions,
    as_options,
    cli_flag,
    option_fields,
)

OFFLINE = not cb.core.device.gpu_available()
SMALL = dict(n=1, c=8, h=8, w=8, k=8)


def test_the_defaults_live_in_the_dataclass():
    o = TuneOptions()
    assert (o.modes, o.strategy, o.race_keep, o.race_samples, o.race_margin, o.finalists, o.final_rounds) == \
        (("A", "B"), "racing", 0.25, 2, 0.2, 4, 3)
    assert (o.sweep, o.sweep_budget_s, o.compile_budget_s, o.warmup, o.repeats, o.buffer_sets) == \
        (False, 2.0, 30.0, 10, 20, 4)
    assert o.engines is None and o.fusion is None  # the job decides
    assert o.for_job("explore").engines is True and o.for_job("explore").fusion is True
    assert o.for_job("autotune").engines is False and o.for_job("autotune").fusion == "best"
    assert o.for_job("sweep").engines is True and o.for_job("sweep").fusion == "best"
    assert set(JOB_DEFAULTS) == {"explore", "autotune", "sweep"}
    assert TuneOptions(engines=False).for_job("explore").engines is False  # a value given wins
    every = {f.name for f in dataclasses.fields(TuneOptions)}
    assert every == {f.name for f, _ in option_fields()} and all(opt.help for _, opt in option_fields())


@pytest.mark.parametrize("name, value, kind, words", [
    ("sweep_budget_s", -1.0, ValueError, "seconds >= 0"),
    ("race_margin", 1.5, ValueError, "a fraction >= 0 and <= 1"),
    ("race_margin", -0.1, ValueError, "a fraction >= 0 and <= 1"),
    ("sweep_budget_s", math.nan, ValueError, "seconds >= 0"),
    ("compile_budget_s", math.inf, ValueError, "seconds >= 0"),
    ("sweep_configs", -3, ValueError, "integer >= 0"),
    ("strategy", "fastest", ValueError, "'racing', 'exhaustive'"),
    ("strategy", 3, TypeError, "'racing', 'exhaustive'"),
    ("race_keep", 0, ValueError, "fraction in (0, 1]"),
    ("race_keep", 1.5, ValueError, "fraction in (0, 1]"),
    ("race_keep", -0.25, ValueError, "fraction in (0, 1]"),
    ("race_keep", "half", TypeError, "fraction in (0, 1]"),
    ("race_samples", 0, ValueError, "integer >= 1"),
    ("repeats", 2.0, TypeError, "integer >= 1"),
    ("warmup", True, TypeError, "not a bool"),
    ("sweep", 1, TypeError, "True or False"),
    ("deterministic", "yes", TypeError, "True or False"),
    ("modes", (), ValueError, "at least one"),
    ("modes", "A,Z", ValueError, "'Z' is not one of the heuristics modes"),
    ("modes", 3, TypeError, "heuristics modes"),
    ("tie", 0.9, ValueError, "<= 0.5"),
    ("max_workspace", 1.5, TypeError, "bytes"),
    ("max_workspace", -1, ValueError, "bytes from 0 to 9223372036854775807"),
    ("fusion", "some", ValueError, "'best' or 'all'"),
    ("build_threads", -1, ValueError, "integer >= 0"),
])
def test_bad_options_are_refused_naming_the_option(name, value, kind, words):
    with pytest.raises(kind) as e:
        TuneOptions(**{name: value})
    text = str(e.value)
    assert text.startswith(f"{name}={value!r}: ") and words in text, text
    assert e.value.option == name
    with pytest.raises(kind, match=f"^{name}="):  # explore and autotune take the fields as keywords, alike
        cb.explore("conv_fwd", kwargs=SMALL, **{name: value})
    with pytest.raises(kind, match=f"^{name}="):
        cb.autotune("conv_fwd", kwargs=SMALL, **{name: value})


def test_sweeps_refuse_bad_options_before_any_task_runs():
    with pytest.raises(ValueError, match="^race_keep="):
        cb.sweep([cb.Task("no_such_builder")], executor="processes", race_keep=2.0)
    with pytest.raises(TypeError, match="unexpected keyword argument.*speed"):
        cb.sweep([cb.Task("conv_fwd", SMALL)], speed=3)
    with pytest.raises(TypeError, match="options: bench takes"):
        cb.sweep([cb.Task("conv_fwd", SMALL)], job="bench", options=TuneOptions())


def test_unknown_keywords_and_wrong_containers_are_refused():
    with pytest.raises(TypeError, match=r"explore: unexpected keyword argument\(s\) sweep_budget\b"):
        cb.explore("conv_fwd", kwargs=SMALL, sweep_budget=3)
    with pytest.raises(TypeError, match="autotune: unexpected keyword argument"):
        cb.autotune("conv_fwd", kwargs=SMALL, race=True)
    with pytest.raises(TypeError, match="options: expected a TuneOptions"):
        as_options(options=["racing"])
    with pytest.raises(TypeError, match="unexpected keyword"):
        TuneOptions().replace(speed=1)
    with pytest.raises(ValueError, match="^race_keep="):
        TuneOptions().replace(race_keep=0.0)


def test_options_keywords_and_options_objects_combine():
    base = TuneOptions(strategy="exhaustive", finalists=2)
    assert as_options(base) is base
    assert as_options(base, finalists=3) == TuneOptions(strategy="exhaustive", finalists=3)
    assert as_options({"modes": "b,a"}).modes == ("B", "A")
    assert as_options({"modes": "A"}, modes="B").modes == ("B",)
    assert pickle.loads(pickle.dumps(base)) == base
    assert TuneOptions(**base.as_kwargs()) == base
    assert base.to_dict()["modes"] == ["A", "B"]  # plain data for JSON
    with pytest.raises(dataclasses.FrozenInstanceError):
        base.finalists = 9


@pytest.mark.skipif(not OFFLINE, reason="offline exploration")
def test_explore_records_the_options_it_searched_with():
    ex = cb.explore("conv_fwd", kwargs=SMALL, options=TuneOptions(modes="A", max_configs=2), engines=False,
                    deterministic=True, seed=5)
    assert ex.options["modes"] == ["A"] and ex.options["max_configs"] == 2 and ex.options["deterministic"]
    assert ex.options["seed"] == 5 and ex.options["engines"] is False and ex.options["fusion"] is True
    assert len(ex.results) == 2 and set(ex.heuristics) == {"A"}
    again = cb.Exploration.from_json(ex.to_json())
    assert again.options == ex.options and again.phases == ex.phases and "heuristics" in ex.phases


@pytest.mark.skipif(not OFFLINE, reason="offline exploration")
def test_progress_is_a_callable_or_none_in_every_job():
    seen = []
    ex = cb.explore("conv_fwd", kwargs=SMALL, max_configs=2, engines=False, progress=lambda *a: seen.append(a))
    assert seen and all(len(a) == 3 for a in seen) and ex.results
    assert cb.explore("conv_fwd", kwargs=SMALL, max_configs=2, engines=False, progress=False).results
    for job in (lambda p: cb.explore("conv_fwd", kwargs=SMALL, progress=p),
                lambda p: cb.autotune("conv_fwd", kwargs=SMALL, progress=p),
                lambda p: cb.sweep([cb.Task("conv_fwd", SMALL)], progress=p),
                lambda p: cb.support_matrix(progress=p, family="matmul"),
                lambda p: compare_releases(["9.19.0", "9.28.1"], ["conv_fwd"], progress=p),
                lambda p: compare_support(profiles=("h100", "h200"), progress=p)):
        with pytest.raises(TypeError, match=r"^progress: expected a callable, .* not int$"):
            job(3)  # refused before any work: not at its first report, deep inside


def test_the_command_line_derives_its_options_from_the_fields():
    parser = build_parser()
    assert tune_options(parser.parse_args(["explore"])) == TuneOptions()
    args = parser.parse_args(["tune", "--race-keep", "0.5", "--strategy", "exhaustive", "--modes", "a",
                              "--max-workspace", "64MiB", "--sweep", "--deterministic", "--seed", "7",
                              "--sweep-budget", "2.5", "--sm-count", "66"])
    o = tune_options(args)
    assert (o.race_keep, o.strategy, o.modes, o.max_workspace, o.sweep, o.deterministic, o.seed) == \
        (0.5, "exhaustive", ("A",), 64 << 20, True, True, 7)
    assert (o.sweep_budget_s, o.sm_count_target) == (2.5, 66)
    help_text = parser._subparsers._group_actions[0].choices["explore"].format_help()
    for f, opt in option_fields():
        flag = cli_flag(f.name)
        if flag is None:
            assert f.name in ("time", "engines", "fusion")
            continue
        assert flag in help_text
    args.race_keep = 7.0  # a value only the dataclass sees (not through argparse): named by its flag
    with pytest.raises(UsageError, match=r"^argument --race-keep: expected a fraction in \(0, 1\]$"):
        tune_options(args)


# the option sets of the other jobs: each declared once, the functions' keyword defaults and the command line's
# options read from it
OTHER_SETS = [
    (SweepOptions, cb.sweep, ["explore", "tune"], {"gpus": None, "ray_address": None, "workers": None,
                                                     "order": "largest", "split": None}),
    (BenchOptions, cb.bench, ["bench"], {"iterations": 200, "repeats": 7, "warmup": 50,
                                         "cases": ("execute", "bind + execute", "cuda graph replay")}),
    (WhyOptions, cb.why, ["why"], {"minimize": True, "budget_s": 60.0, "max_variations": 400}),
    (SupportOptions, cb.support_matrix, ["support", "compare"],
     {"family": None, "data_type": None, "layout": None, "name": None, "plans": "precompiled", "workers": None}),
]


@pytest.mark.parametrize("cls, function, commands, defaults", OTHER_SETS, ids=lambda v: getattr(v, "__name__", ""))
def test_each_option_set_states_its_defaults_once(cls, function, commands, defaults):
    """The dataclass holds each default; the function's keyword has the same one; the command line's options
    (derived from the fields) parse to it when not given; every field with a flag is in ``--help``."""
    assert cls().as_kwargs() == defaults
    params = inspect.signature(function).parameters
    for name, value in defaults.items():
        assert params[name].default == value, (function.__name__, name)
    parser = build_parser()
    for command in commands:
        args = parser.parse_args([command])
        assert options_from(args, cls) == cls(), command
        help_text = parser._subparsers._group_actions[0].choices[command].format_help()
        for name in defaults:
            flag = cls.cli_flag(name)
            assert flag is None or flag in help_text, (command, flag)


@pytest.mark.parametrize("cls, name, value, kind, words, flag, text", [
    (SweepOptions, "order", "random", ValueError, "'largest', 'given'", "--order", None),
    (SweepOptions, "gpus", 0, ValueError, "'all' or an integer >= 1", "--gpus", "0"),
    (SweepOptions, "workers", 0, ValueError, "integer >= 1", "--workers", "0"),
    (SweepOptions, "split", "yes", TypeError, "True, False or None", None, None),
    (BenchOptions, "iterations", 0, ValueError, "integer >= 1", "--iterations", "0"),
    (BenchOptions, "warmup", -1, ValueError, "integer >= 0", "--warmup", "-1"),
    (BenchOptions, "repeats", 2.5, TypeError, "integer >= 1", "--repeats", "2.5"),
    (WhyOptions, "budget_s", -1.0, ValueError, "seconds >= 0", "--budget", "-1"),
    (WhyOptions, "max_variations", 0, ValueError, "integer >= 1", "--max-variations", "0"),
    (WhyOptions, "minimize", "no", TypeError, "True or False", "--no-minimize", None),
    (SupportOptions, "plans", "some", ValueError, "'precompiled', 'all', 'none'", "--plans", None),
    (SupportOptions, "family", 3, TypeError, "comma list", "--family", None),
])
def test_other_option_sets_refuse_bad_values_naming_the_option(cls, name, value, kind, words, flag, text):
    with pytest.raises(kind) as e:
        cls(**{name: value})
    assert str(e.value).startswith(f"{name}={value!r}: ") and words in str(e.value), str(e.value)
    assert cls.cli_flag(name) == flag
    if text is not None:  # the command line refuses the same value naming the flag
        command = {SweepOptions: "explore", BenchOptions: "bench", WhyOptions: "why"}[cls]
        with pytest.raises(SystemExit):
            build_parser().parse_args([command, flag, text])


def test_the_functions_check_their_options_by_the_set():
    with pytest.raises(ValueError, match="^order='random'"):
        cb.sweep([cb.Task("conv_fwd", SMALL)], order="random")
    with pytest.raises(TypeError, match="^split='yes'"):
        cb.sweep([cb.Task("conv_fwd", SMALL)], split="yes")
    with pytest.raises(ValueError, match="^plans='some'"):
        cb.support_matrix(plans="some")
    with pytest.raises(ValueError, match="^max_variations=0"):
        cb.why("conv_fwd", max_variations=0)


def test_a_negated_flag_and_an_optional_value():
    """--no-minimize turns WhyOptions.minimize off; --ray alone is a local cluster, --ray ADDRESS that one."""
    parser = build_parser()
    assert options_from(parser.parse_args(["why", "--no-minimize"]), WhyOptions).minimize is False
    assert options_from(parser.parse_args(["explore", "--ray"]), SweepOptions).ray_address == "local"
    assert options_from(parser.parse_args(["explore", "--ray", "ray://h:1"]), SweepOptions).ray_address == "ray://h:1"
    assert options_from(parser.parse_args(["support", "--dtype", "half,bf16"]), SupportOptions).data_type == \
        "half,bf16"
