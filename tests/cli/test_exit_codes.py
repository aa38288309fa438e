"""Exit codes, checks and the words of the command line: nothing found exits 1 with the reason; --gpus
beyond the GPUs here (or offline) and --sm-count beyond the target's SMs are usage errors (2); an unknown profile
name lists the bundled ones; --param, --plan and Python-worded messages speak the command line's words; offline
explore and tune say which config they pick and --save-plan writes its plan."""
import json
import os
import pathlib
import subprocess
import sys

import pytest

import cudnn_backend as cb
from cudnn_backend.runtime.plans import plan_json_info

from tests.cli.test_output import SMALL, run

OFFLINE = not cb.core.device.gpu_available()
offline_only = pytest.mark.skipif(not OFFLINE, reason="the offline paths (no GPU here)")


def one_error_line(r, code):
    assert r.returncode == code, (r.returncode, r.stdout[-2000:], r.stderr)
    lines = r.stderr.strip().splitlines()
    assert len(lines) == 1, r.stderr
    return lines[0]


@offline_only
@pytest.mark.skipif(cb.get_version() < 91300, reason="sdpa_fwd (the unified SDPA_FWD) needs cuDNN 9.13")
def test_nothing_found_exits_1_with_the_reason():
    for command in ("explore", "tune"):
        r = run(command, "sdpa_fwd", "--modes", "FALLBACK", "--no-engines")
        if r.returncode == 0:
            pytest.skip("this cuDNN's FALLBACK heuristics have a config for sdpa_fwd")
        assert r.returncode == 1, r.stderr
        line = [ln for ln in r.stderr.splitlines() if "nothing found" in ln]
        assert line and line[0].startswith(f"cudnn-backend {command}: nothing found: heuristics FALLBACK proposed no "
                                           "engine config for sdpa_fwd: ")
        assert "NOT_SUPPORTED" in line[0] and "Warning:" not in line[0]  # cuDNN's own reasons, without its log's words
        assert line[0].endswith("; `cudnn-backend why sdpa_fwd` explains each stage and finds the smallest change "
                                "that cuDNN supports")
        assert "0 of 0" not in r.stdout + r.stderr and "nothing found" in r.stdout
        assert "the same 0 configs" not in r.stdout and "Warning:" not in r.stdout  # said once, on the error line


@offline_only
def test_machine_options_are_checked():
    line = one_error_line(run("explore", "--gpus", "3"), 2)
    assert line.startswith("cudnn-backend explore: error: argument --gpus: this machine has no GPU") and \
        "--workers N" in line
    line = one_error_line(run("tune", "--gpus", "all", "--device-profile", "h100"), 2)
    assert "argument --gpus: --device-profile is given" in line
    line = one_error_line(run("explore", "--sm-count", "100000"), 2)
    assert "argument --sm-count: 100000 is more than the 132 SMs of NVIDIA H200 (the bundled h200 profile" in line \
        and "give 1..132" in line
    line = one_error_line(run("explore", "--sm-count", "200", "--device-profile", "h100"), 2)
    assert "132 SMs of NVIDIA H100 80GB HBM3 (the device profile)" in line
    line = one_error_line(run("explore", "--device-profile", "h300"), 2)
    assert line == ("cudnn-backend explore: error: argument --device-profile: 'h300' is neither a bundled profile "
                    "(h100, h200) nor a file; did you mean h200 or h100?")
    assert "More GPUs than this machine has is an error" in " ".join(run("explore", "--help").stdout.split())


def test_param_names_the_builders_parameters():
    line = one_error_line(run("explore", "--param", "foo=bar"), 2)
    assert line == ("cudnn-backend explore: error: argument --param: pattern conv_bias_relu has no parameter 'foo' "
                    "(its parameters: n, c, h, w, k, r, s, groups, padding, stride, dilation, data_type, layout)")
    line = one_error_line(run("why", "conv_bias_relu", "--param", "kk=3", "--no-minimize"), 2)
    assert "argument --param: pattern conv_bias_relu has no parameter 'kk'; did you mean k?" in line
    line = one_error_line(run("explore", "layer_norm_fwd", "--n", "4"), 2)
    assert "option --n does not apply to pattern layer_norm_fwd (its parameters: " in line


@offline_only
def test_offline_picks_and_saves_a_plan_and_plan_files_are_checked(tmp_path):
    saved = tmp_path / "plan.json"
    r = run("explore", *SMALL, "--no-engines", "--top", "2", "--save-plan", str(saved))
    assert r.returncode == 0, r.stderr
    picked = next(ln for ln in r.stdout.splitlines() if ln.startswith("picked: engine"))
    info = plan_json_info(saved.read_text())
    knobs = " ".join(f"{k}={v}" for k, v in info["knobs"].items())
    assert picked.startswith(f"picked: engine {info['engine']} {knobs} (A#")
    assert f"wrote {saved}: engine {info['engine']} {knobs}" in r.stderr
    tuned = tmp_path / "tuned.json"
    r = run("tune", *SMALL, "--no-engines", "--top", "1", "--save-plan", str(tuned))
    assert r.returncode == 0, r.stderr
    assert "picked: engine" in r.stdout and plan_json_info(tuned.read_text())["engine"] == info["engine"]
    again = run("explore", "--plan", str(saved), "--no-engines", "--top", "1")  # --plan reads what it wrote
    assert again.returncode == 0, again.stderr
    # --plan files checked first, in the command line's words
    (tmp_path / "empty.json").write_text("")
    line = one_error_line(run("explore", "--plan", str(tmp_path / "empty.json")), 2)
    assert "is empty; expected a plan's JSON (`cudnn-backend explore --save-plan FILE.json` writes one)" in line
    old = json.loads(saved.read_text())
    old["cudnnVersion"] = 91000
    (tmp_path / "old.json").write_text(json.dumps(old))
    line = one_error_line(run("explore", "--plan", str(tmp_path / "old.json")), 2)
    assert "was written by cuDNN 9.10.0" in line and f"its engine {info['engine']}" in line
    assert "allow_version_mismatch" not in line and "plan_from_json" not in line
    assert "--save-plan" in run("explore", "--help").stdout and "--save-plan" in run("tune", "--help").stdout


@offline_only
def test_a_graph_larger_than_the_gpu_gets_a_warning():
    r = run("explore", "conv_fwd", "--n", "4096", "--c", "256", "--h", "256", "--w", "256", "--k", "256",
            "--no-engines", "--top", "1", "--max-configs", "2")
    assert r.returncode == 0, r.stderr
    warnings = [ln for ln in r.stderr.splitlines() if ln.startswith("warning:")]
    assert warnings == ["warning: the graph's tensors need 256.0 GiB, more than the 139.8 GiB of the NVIDIA H200: "
                        "the plan builds, but it cannot run there"], r.stderr


def test_a_wrong_choice_suggests_the_close_one(capsys):
    from cudnn_backend.cli.args import build_parser

    for argv, suggestion in ((["explore", "conv_bias_reul"], "did you mean conv_bias_relu"),
                             (["explor"], "did you mean explore?"), (["explore", "--layout", "nhcw"], "did you mean nhwc")):
        with pytest.raises(SystemExit) as done:
            build_parser().parse_args(argv)
        assert done.value.code == 2
        err = capsys.readouterr().err.strip()
        assert len(err.splitlines()) == 1 and "invalid choice" in err and suggestion in err, err


def test_a_task_files_mistakes_name_the_file_and_the_task(tmp_path):
    """--tasks FILE: a wrong builder or parameter is one line naming the file, the task and the close match, before
    anything runs (not Python's "conv_bias_relu() got an unexpected keyword argument 'zz'" from the run)."""
    path = tmp_path / "tasks.txt"
    for text, expected in (
            ("conv_bias_relu n=1 zz=3\n", "task 1 (conv_bias_relu n=1 zz=3): pattern conv_bias_relu has no parameter "
                                          "'zz' (its parameters: n, c, h, w, k, r, s, groups, padding, stride, "
                                          "dilation, data_type, layout)"),
            ("# sizes\n\nmatmul_bias_relu m=16\nconv_bias_reul n=1\n",
             "task 2 (conv_bias_reul n=1): 'conv_bias_reul' is neither a pattern nor FILE.py:FUNC or module:FUNC; did "
             "you mean conv_bias_relu or "),
            ("no_such_module:f\n", "task 1 (no_such_module:f): cannot import 'no_such_module'"),
            # a value a built-in pattern refuses: the file is wrong, said before any task runs
            ("conv_bias_relu n=1\nconv_bias_relu n=abc\n", "task 2 (conv_bias_relu n=abc): n: expected an integer, "
                                                           "not str"),
            ("conv_bias_relu n=-1\n", "task 1 (conv_bias_relu n=-1): n: -1 is below the minimum 1")):
        path.write_text(text)
        line = one_error_line(run("explore", "--tasks", str(path)), 2)
        assert line.startswith(f"cudnn-backend explore: error: argument --tasks: {path}, ") and expected in line, line


def test_save_plan_with_several_graphs_is_refused_before_anything_else(tmp_path):
    for job, done in (("explore", "explored"), ("tune", "tuned")):
        r = run(job, "--preset", "resnet50", "--save-plan", str(tmp_path / "p.json"))
        assert r.returncode == 2 and r.stdout == "", r.stdout
        assert r.stderr.strip().splitlines() == [f"cudnn-backend {job}: error: argument --save-plan: takes one graph "
                                                 f"(several are {done} here)"], r.stderr


def test_a_graph_function_returning_nothing_is_named(tmp_path):
    (tmp_path / "builders.py").write_text("def nothing():\n    return None\n")
    line = one_error_line(run("explore", "--graph", f"{tmp_path / 'builders.py'}:nothing"), 1)  # the graph failed: 1
    assert f"graph: {tmp_path / 'builders.py'}:nothing returned NoneType; a graph builder returns a Graph" in line


# --- the rule: 0 done, 1 the answer is "no" or the work failed, 2 usage (args.EXIT_CODES, printed by --help) ------

def test_help_says_the_exit_codes():
    r = run("--help")
    assert r.returncode == 0 and "exit codes (every command):" in r.stdout
    for code in ("0  done", "1  the answer is \"no\" or the work failed", "2  a usage mistake"):
        assert code in r.stdout, code


@offline_only
def test_why_exits_by_whether_the_graph_is_supported():
    supported = run("why", "conv_bias_relu", "--device-profile", "h100", "--no-minimize")
    assert supported.returncode == 0 and "SUPPORTED" in supported.stdout, supported.stderr
    example = pathlib.Path(__file__).resolve().parents[2] / "examples" / "support_matrix.py"  # the guide's refusal
    refused = run("why", "--graph", f"{example}:strided_dgrad_fp32", "--device-profile", "h100", "--no-minimize")
    assert refused.returncode == 1 and "NOT SUPPORTED: refused at heuristics" in refused.stdout
    assert refused.stderr == ""  # the answer, not an error


@pytest.mark.parametrize("args, expected", [
    (["explore", "--param", "n=abc"], "argument --param: n=abc: expected an integer, not str"),
    (["why", "conv_bias_relu", "--param", "n=abc"], "argument --param: n=abc: expected an integer, not str"),
    (["why", "conv_bias_relu", "--param", "padding=-1"], "argument --param: padding=-1: padding is -1; it must be >= 0"),
    (["tune", "--groups", "3"], "argument --groups: 3 divides neither c=64 nor k=32"),
    (["explore", "--param", "data_type=abc"], "argument --param: data_type=abc: io_data_type: 'abc' is not a DataType"),
    (["explore", "--tasks", "no_such_tasks.txt"], "argument --tasks: 'no_such_tasks.txt' is not a file"),
    (["explore", "--plan", "no_such_plan.json"], "argument --plan: 'no_such_plan.json' is not a file"),
])
def test_a_value_the_graph_refuses_is_a_usage_error_naming_its_option(args, expected):
    line = one_error_line(run(*args), 2)
    assert line.startswith(f"cudnn-backend {args[0]}: error: {expected}"), line


def test_version_and_a_bare_command():
    r = run("--version")
    assert r.returncode == 0 and r.stdout.strip() == f"cudnn-backend {cb.__version__}"
    r = run()
    assert r.returncode == 0 and r.stdout.startswith("usage: cudnn-backend") and r.stderr == ""
    assert all(command in r.stdout for command in ("info", "explore", "support", "compare", "why"))
    line = one_error_line(run("profile"), 2)
    assert line.endswith("required: ACTION (one of: capture, show, convert; `cudnn-backend profile --help` says what "
                         "each does)")
    assert "a profile file (from `profile capture` or `profile convert`), or a bundled name" in " ".join(
        run("profile", "show", "--help").stdout.split())


def test_output_files_are_checked_before_the_work_and_a_failed_write_names_its_option(tmp_path):
    # before anything runs: a folder, a folder that does not exist
    line = one_error_line(run("explore", *SMALL, "--json", str(tmp_path)), 2)
    assert line == f"cudnn-backend explore: error: argument --json: {str(tmp_path)!r} is a folder; name a file in it"
    line = one_error_line(run("why", "conv_fwd", "--json", str(tmp_path / "no" / "why.json")), 2)
    assert line.startswith("cudnn-backend why: error: argument --json: the folder of ") and "does not exist" in line
    line = one_error_line(run("support", "--family", "matmul", "--csv", str(tmp_path / "no" / "m.csv")), 2)
    assert "argument --csv: the folder of " in line
    same = tmp_path / "out"  # two outputs, one file: the second would overwrite the first
    line = one_error_line(run("explore", *SMALL, "--json", str(same), "--save-plan", str(tmp_path / "." / "out")), 2)
    assert line.startswith("cudnn-backend explore: error: argument --save-plan: ") and \
        line.endswith("is the file --json writes too: the second would overwrite the first; give each output a file "
                      "of its own")
    assert not same.exists()
    # after the work: a file that takes no writes (a full file system behaves alike) is named by its option; the
    # work was done, its answer not all written: 1
    if pathlib.Path("/dev/full").exists():
        r = run("explore", *SMALL, "--json", "/dev/full")
        assert r.returncode == 1, r.stderr
        assert r.stderr.strip().splitlines()[-1] == ("cudnn-backend explore: error: argument --json: cannot write "
                                                     "'/dev/full': No space left on device")


def test_input_files_are_read_with_a_bound(tmp_path):
    r = run("explore", "--plan", "/dev/zero")  # a device file: never read to its end
    assert one_error_line(r, 2) == "cudnn-backend explore: error: argument --plan: '/dev/zero' is not a file"
    latin = tmp_path / "plan.json"
    latin.write_bytes(b'{"name": "\xe9"}')
    line = one_error_line(run("explore", "--plan", str(latin)), 2)
    assert line.startswith(f"cudnn-backend explore: error: argument --plan: {str(latin)!r} is not UTF-8 text")


def test_options_are_taken_only_as_written(capsys):
    from cudnn_backend.cli.app import main
    # a prefix of an option is no abbreviation: `why` has no --n, and --n is not --no-minimize
    with pytest.raises(SystemExit) as e:
        main(["why", "conv_fwd", "--n", "0"])
    assert e.value.code == 2
    # (named by the command's parser, before its value is taken for a positional argument)
    assert capsys.readouterr().err.strip().startswith("cudnn-backend why: error: unrecognized arguments: --n; did you")
    with pytest.raises(SystemExit):
        main(["explore", "conv_fwd", "--dev", "h200"])
    assert "unrecognized arguments: --dev; did you mean --device-profile?" in capsys.readouterr().err


@pytest.mark.parametrize("text, expected", [
    ("# only a comment\n\n", "{path!r} lists no graphs (only blank lines and # comments)"),
    ("nosuch\n", "{path}, {which} 1 (nosuch): 'nosuch' is neither a pattern nor FILE.py:FUNC or module:FUNC"),
    ("conv_fwd foo=1\n", "{path}, {which} 1 (conv_fwd foo=1): pattern conv_fwd has no parameter 'foo'"),
    ("conv_fwd n=1 n=2\n", "{path}:1: n is given twice"),
])
@pytest.mark.parametrize("command, option, which", [("explore", "--tasks", "task"), ("tune", "--tasks", "task"),
                                                     ("support", "--catalogue", "graph")])
def test_a_graph_list_naming_no_graph_is_a_usage_error_naming_the_file(tmp_path, text, expected, command, option,
                                                                         which):
    path = tmp_path / "graphs.txt"
    path.write_text(text)
    line = one_error_line(run(command, option, str(path), *(("--no-cache",) if command != "explore" else ())), 2)
    assert line.startswith(f"cudnn-backend {command}: error: argument {option}: "
                           + expected.format(path=str(path), which=which)), line


def test_options_compare_does_not_read_are_refused():
    """Each way of comparing reads its own options; one it would ignore is a usage error naming it."""
    line = one_error_line(run("compare", "--profiles", "h100", "h200", "--slower", "0.2"), 2)
    assert line.startswith("cudnn-backend compare: error: argument --slower: compare --profiles does not read it; "
                           "it reads --allow-version-mismatch, --cache, ")
    line = one_error_line(run("compare", "--matrices", "a.json", "b.json", "--family", "matmul"), 2)
    assert line == ("cudnn-backend compare: error: argument --family: compare --matrices does not read it; it reads "
                    "only the output options (--all, --csv, --json, --quiet, --width)")
    line = one_error_line(run("compare", "--profiles", "h100", "h200", "--device-profile", "h200"), 2)
    assert "argument --device-profile: compare --profiles does not read it" in line
    line = one_error_line(run("compare", "--releases", "default", "default", "--preset", "resnet50", "--workers",
                              "2"), 2)
    assert "argument --workers: compare --releases with --preset/--graph/--tasks does not read it; it reads " \
           "--device-profile, --graph, --preset, --slower, --tasks and the output options" in line


def test_sizes_and_widths_past_what_they_can_be_are_usage_errors():
    line = one_error_line(run("explore", "conv_fwd", "--max-workspace", str(2**63)), 2)
    assert "argument --max-workspace: expected a size in bytes from 0 to 9223372036854775807" in line
    line = one_error_line(run("explore", "conv_fwd", "--width", "39"), 2)
    assert line.startswith("cudnn-backend explore: error: argument --width: expected an integer >= 40, not '39'")


def test_an_output_that_is_an_input_file_is_refused_before_the_work(tmp_path):
    tasks = tmp_path / "tasks.txt"
    tasks.write_text("conv_bias_relu n=1\n")
    line = one_error_line(run("explore", "--tasks", str(tasks), "--json", str(tasks)), 2)
    assert line == (f"cudnn-backend explore: error: argument --json: {str(tasks)!r} is the file --tasks reads: "
                    "writing it would destroy the input; give the output a file of its own")
    assert tasks.read_text() == "conv_bias_relu n=1\n"
    source = tmp_path / "g.py"  # a graph file: the user's own code
    source.write_text("import cudnn_backend as cb\n\ndef f():\n    return 'conv_bias_relu'\n")
    line = one_error_line(run("explore", "--graph", f"{source}:f", "--csv", str(tmp_path / "." / "g.py")), 2)
    assert "argument --csv:" in line and "is the file --graph reads" in line
    plan = tmp_path / "plan.json"  # a plan read whole may be replaced by the one picked for its graph
    assert run("explore", *SMALL, "--save-plan", str(plan)).returncode == 0
    assert run("explore", "--plan", str(plan), "--save-plan", str(plan)).returncode == 0
    cb.plan_from_json(plan.read_text(), device_profile="h200")


def test_an_ascii_only_terminal_gets_every_answer(tmp_path):
    # "µs" in the help, "·" in the graph panel: written as "?" where the terminal's encoding lacks them
    env = dict(os.environ, PYTHONIOENCODING="ascii")
    for args in (["explore", "--help"], ["explore", *SMALL, "--json", str(tmp_path / "e.json")]):
        r = subprocess.run([sys.executable, "-m", "cudnn_backend", *args], capture_output=True, timeout=300, env=env)
        assert r.returncode == 0, r.stderr.decode(errors="replace")[-2000:]
        r.stdout.decode("ascii")  # nothing but ASCII reached the terminal
    assert json.loads((tmp_path / "e.json").read_text())


def test_a_task_that_fails_is_named_with_the_file_and_line_that_list_it(tmp_path):
    # a builder of the user's refuses a value as it runs (a built-in pattern's values are checked before any task)
    builders = tmp_path / "builders.py"
    builders.write_text("import cudnn_backend as cb\n\n\ndef sized(n=1):\n    if n < 1:\n"
                        "        raise ValueError(f'n: {n} is below the minimum 1')\n"
                        "    return cb.patterns.conv_bias_relu(n=n, build=False)\n")
    ref = f"{builders}:sized"
    tasks = tmp_path / "tasks.txt"
    tasks.write_text(f"# one graph\n{ref} n=-1\n")
    line = one_error_line(run("explore", "--tasks", str(tasks)), 1)
    assert line == f"cudnn-backend explore: error: {tasks}, line 2: {builders}:6: ValueError: n: -1 is below the " \
                   "minimum 1"
    tasks.write_text(f"{ref} n=1\n{ref} n=-1\n")  # several: the sweep runs the others
    r = run("explore", "--tasks", str(tasks), "--quiet")
    assert r.returncode == 1
    failed = " ".join(r.stderr.split())
    assert f"failed: {ref} n=-1 ({tasks}, line 2): " in failed
    assert "builders.py:6: ValueError: n: -1 is below the minimum 1" in failed


def test_a_plan_cuDNN_refuses_is_named_by_its_file_in_a_short_line(tmp_path):
    # an engine the graph does not have: cuDNN refuses the plan without a reason, so the hint names the plan's
    # engine and knobs, and the line says which file the plan came from
    import re

    og = cb.patterns.conv_bias_relu(n=1, c=8, h=8, w=8, k=8, build=False).build()
    text = cb.build_first_plan(og, device_profile="h200")[0].to_json()
    path = tmp_path / "edited.json"
    path.write_text(re.sub(r'"engineId"\s*:\s*\d+', '"engineId":9999', text))
    line = one_error_line(run("explore", "--plan", str(path), "--device-profile", "h200", "--top", "1"), 1)
    assert line.startswith(f"cudnn-backend explore: error: --plan {path}: cudnnBackendFinalize failed"), line
    assert "A plan's engine and knob choices (engineId 9999" in line and len(line) < 2000, line


def test_a_value_of_thousands_of_digits_gets_its_reason_not_its_digits():
    nines = "9" * 5000
    line = one_error_line(run("explore", "conv_fwd", "--n", nines), 2)
    assert line == "cudnn-backend explore: error: argument --n: a number of 5,000 digits: expected an integer >= 1"
    line = one_error_line(run("explore", "conv_fwd", "--param", f"n={nines}"), 2)
    assert line.endswith("argument --param: n: a number of 5,000 characters is past any parameter's range"), line


def test_a_long_error_line_keeps_its_end_where_the_reason_is(tmp_path):
    catalogue = tmp_path / "long.txt"
    catalogue.write_text("chain head=matmul chain=" + ",".join(["bogus_op"] * 400) + "\n")
    line = one_error_line(run("support", "--catalogue", str(catalogue), "--no-cache"), 2)
    assert "characters left out) ..." in line and len(line) < 1100, line
    assert "bogus_op" in line.rsplit("characters left out", 1)[1], line  # the end of the reason, not cut away


def test_an_image_file_of_a_type_matplotlib_does_not_write_is_a_usage_error_before_any_work(tmp_path):
    line = one_error_line(run("support", "--family", "matmul", "--heatmap", str(tmp_path / "out.txt")), 2)
    assert line.endswith("matplotlib writes no .txt files; end the name in one of .png, .eps, .jpeg, .jpg, .pdf, "
                         ".pgf, .ps, .raw, .rgba, .svg, .svgz, .tif, .tiff, .webp"), line
    assert not (tmp_path / "out.txt").exists()


@pytest.mark.parametrize("args, line", [
    (("tune", "conv_fwd", "--no-cache", "--cache", "x.sqlite"), "argument --cache: not with --no-cache"),
    (("explore", "conv_fwd", "--errata-out", ""), "argument --errata-out: expected the path of an errata file to "
                                                  "write, not ''"),
    (("explore", "--cache", "x.sqlite"), "unrecognized arguments: --cache"),  # not "argument PATTERN: ..."
])
def test_contradictions_and_unknown_options_are_named(args, line, tmp_path):
    out = one_error_line(run(*args, "--device-profile", "h200", cwd=tmp_path), 2)
    assert line in out and out.count("not ''") <= 1, out
    assert not (tmp_path / "x.sqlite").exists()


def test_the_no_device_variable_takes_its_values_only():
    r = subprocess.run([sys.executable, "-m", "cudnn_backend", "info"], capture_output=True, text=True, timeout=120,
                       env=dict(os.environ, CUDNN_BACKEND_NODEVICE="yes"))
    assert r.returncode == 1 and "Traceback" not in r.stderr, r.stderr
    assert "$CUDNN_BACKEND_NODEVICE='yes': expected 1" in r.stderr, r.stderr
