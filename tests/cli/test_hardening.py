"""Bad inputs the command line meets before, during and after the work: each one line naming what is at fault,
the right exit code, nothing hanging, nothing ignored."""
import json
import socket
import time

import pytest

import cudnn_backend as cb

from tests.cli.test_output import run

OFFLINE = not cb.core.device.gpu_available()
offline_only = pytest.mark.skipif(not OFFLINE, reason="the offline paths (no GPU here)")


def one_error_line(r, code):
    assert r.returncode == code, (r.returncode, r.stdout[-2000:], r.stderr)
    lines = r.stderr.strip().splitlines()
    assert len(lines) == 1 and "Traceback" not in r.stderr, r.stderr
    return lines[0]


def closed_port() -> int:
    """A local TCP port nothing listens on (bound, then let go)."""
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


@pytest.fixture
def graph_file(tmp_path):
    path = tmp_path / "graphs.py"
    path.write_text("from cudnn_backend.patterns import CATALOGUE\n"
                    "def ok(build=True):\n"
                    "    return CATALOGUE['conv_bias_relu'](n=1, c=8, h=8, w=8, k=8, build=build)\n")
    return path


def test_an_unreachable_ray_cluster_is_refused_at_once_naming_ray(graph_file):
    port = closed_port()
    started = time.monotonic()
    line = one_error_line(run("explore", "--ray", f"127.0.0.1:{port}", "--graph", f"{graph_file}:ok",
                              "--graph", f"{graph_file}:ok", "--device-profile", "h200"), 2)
    assert time.monotonic() - started < 60
    assert line.startswith("cudnn-backend explore: error: argument --ray: no Ray cluster answers at "
                           f"'127.0.0.1:{port}'"), line
    line = one_error_line(run("explore", "--ray", "nowhere", "--graph", f"{graph_file}:ok"), 2)
    assert "argument --ray: 'nowhere' is not an address Ray takes" in line, line


@offline_only
def test_a_graph_function_that_crashes_the_process_fails_only_its_task(tmp_path, graph_file):
    """In the default order (largest first) as in the given one: the crash happens in a worker, whose task fails;
    the others run."""
    with open(graph_file, "a") as f:
        f.write("import os, signal\ndef segv(build=True):\n    os.kill(os.getpid(), signal.SIGSEGV)\n")
    for order in ([], ["--order", "given"]):
        r = run("explore", "--graph", f"{graph_file}:segv", "--graph", f"{graph_file}:ok", "--workers", "2",
                "--device-profile", "h200", *order)
        assert r.returncode == 1, (r.returncode, r.stderr[-2000:])
        assert "segv: worker process died" in " ".join(r.stderr.split()) and "Traceback" not in r.stderr


@offline_only
def test_a_graph_files_top_level_runs_once_per_process(tmp_path, graph_file):
    count = tmp_path / "count"
    with open(graph_file, "a") as f:
        f.write(f"open({str(count)!r}, 'a').write('x')\n")
    catalogue = tmp_path / "catalogue.txt"
    catalogue.write_text(f"{graph_file}:ok\n")
    # (support probes in a worker process, so that a probe that crashes is a result: the file runs there too)
    for command, runs in ((["explore", "--graph", f"{graph_file}:ok"], "x"), (["why", "--graph", f"{graph_file}:ok"], "x"),
                          (["support", "--catalogue", str(catalogue), "--no-cache"], "xx"),
                          (["support", "--catalogue", str(catalogue), "--no-cache", "--workers", "1"], "x")):
        count.write_text("")
        r = run(*command, "--device-profile", "h200")
        assert r.returncode == 0, r.stderr
        assert count.read_text() == runs, command


@pytest.mark.parametrize("option", ["--family", "--dtype", "--layout", "--name"])
@pytest.mark.parametrize("value", ["", ","])
def test_an_empty_support_filter_is_a_usage_error_naming_it(option, value):
    if option == "--name" and value == ",":
        return
    line = one_error_line(run("support", "--device-profile", "h200", "--no-cache", option, value), 2)
    assert line.startswith(f"cudnn-backend support: error: argument {option}: ") and "empty" in line, line


@offline_only
@pytest.mark.skipif(not __import__("os").path.exists("/dev/full"), reason="needs /dev/full")
def test_an_output_that_cannot_be_written_leaves_the_others_written(tmp_path):
    out, plan = tmp_path / "out.json", tmp_path / "plan.json"
    r = run("explore", "--n", "1", "--c", "8", "--h", "8", "--w", "8", "--k", "8", "--csv", "/dev/full", "--json",
            str(out), "--save-plan", str(plan), "--device-profile", "h200")
    assert r.returncode == 1, r.stderr
    assert "cudnn-backend explore: error: argument --csv: cannot write '/dev/full': No space left on device" in \
        r.stderr.splitlines()
    assert json.loads(out.read_text())["results"] and json.loads(plan.read_text())
    support = tmp_path / "support.json"
    r = run("support", "--family", "matmul", "--name", "+gelu", "--no-cache", "--device-profile", "h200", "--csv",
            "/dev/full", "--json", str(support))
    assert r.returncode == 1 and "error: argument --csv: cannot write '/dev/full'" in r.stderr, r.stderr
    assert json.loads(support.read_text())


@offline_only
@pytest.mark.skipif(not hasattr(__import__("os"), "mkfifo"), reason="needs named pipes")
def test_an_output_named_pipe_is_written_to_its_reader_and_refused_without_one(tmp_path):
    import os
    import threading
    fifo = tmp_path / "out.fifo"
    os.mkfifo(fifo)
    args = ("explore", "--n", "1", "--c", "8", "--h", "8", "--w", "8", "--k", "8", "--device-profile", "h200",
            "--json", str(fifo))
    r = run(*args)  # no reader: refused at once, never waiting
    assert r.returncode == 1 and r.stderr.strip().splitlines()[-1] == (
        f"cudnn-backend explore: error: argument --json: cannot write '{fifo}': it is a named pipe that no process "
        "reads (writing would wait for ever)"), r.stderr
    read = []
    reader = threading.Thread(target=lambda: read.append(fifo.read_text()), daemon=True)
    reader.start()
    r = run(*args)
    reader.join(60)
    assert r.returncode == 0, r.stderr
    assert json.loads(read[0])["results"]


@offline_only
def test_a_graph_neither_release_runs_fails_the_comparison(graph_file):
    with open(graph_file, "a") as f:
        f.write("def raises():\n    raise RuntimeError('boom')\n")
    r = run("compare", "--releases", "default", "default", "--graph", f"{graph_file}:raises", "--graph",
            f"{graph_file}:ok", "--device-profile", "h200")
    assert r.returncode == 1, (r.returncode, r.stderr)
    assert f"failed: {graph_file}:raises: A: " in " ".join(r.stderr.split()) and "RuntimeError: boom" in r.stderr


def test_errata_scope_without_errata_out_is_refused_naming_both():
    line = one_error_line(run("explore", "--device-profile", "h200", "--errata-scope", "graph"), 2)
    assert line.startswith("cudnn-backend explore: error: argument --errata-scope: ") and "--errata-out" in line


@pytest.mark.parametrize("command", ["bench", "fusion", "explore", "support"])
def test_a_missing_errata_file_is_named_once_before_the_gpu_is_asked_for(command, tmp_path):
    missing = tmp_path / "nothere.json"
    line = one_error_line(run(command, "--errata", str(missing), "--device-profile", "h200"), 2)
    assert line == f"cudnn-backend {command}: error: argument --errata: errata {missing}: no such file", line


@pytest.mark.parametrize("command", ["explore", "why"])
@pytest.mark.parametrize("body, expected", [
    ("raise RuntimeError('boom')", ":3: RuntimeError: boom"),
    ("raise GeneratorExit()", ":3: GeneratorExit: (no message)"),
    ("return __file__ + ':f'", ":f returned a str ("),
    ("return None", ":f returned NoneType; a graph builder returns a Graph"),
])
def test_an_error_of_the_users_graph_function_is_its_own(tmp_path, command, body, expected):
    """Said as the error it is, where it is (not as cuDNN refusing the graph at its builder stage), exit 1; a str
    returned is no graph reference to follow."""
    path = tmp_path / "mine.py"
    path.write_text(f"\ndef f():\n    {body}\n")
    line = one_error_line(run(command, "--graph", f"{path}:f", "--device-profile", "h200"), 1)
    assert line.startswith(f"cudnn-backend {command}: error: ") and expected in line, line
    assert "NOT SUPPORTED" not in line


def test_a_support_cache_in_a_missing_folder_is_refused_not_made(tmp_path):
    path = tmp_path / "a" / "typo" / "c.sqlite"
    line = one_error_line(run("support", "--family", "matmul", "--device-profile", "h200", "--cache", str(path)), 2)
    assert line == f"cudnn-backend support: error: argument --cache: the folder of {str(path)!r} does not exist"
    assert not (tmp_path / "a").exists()


@pytest.mark.parametrize("rule, expected", [
    ({"cudnn_backend": {"graph_fingerprint": "XYZ"}},
     "field 'cudnn_backend.graph_fingerprint': expected 64 lower-case hex digits (a SHA-256, as graph_fingerprint "
     "gives), not 'XYZ'"),
    ({"cudnn_version_end": 99999999}, "field 'cudnn_version_end': expected an integer <= 999999 (-1: no end), not "
                                      "99999999"),
    ({"cudnn_backend": {"runtime_version_start": 10 ** 20}},
     "field 'cudnn_backend.runtime_version_start': expected an integer <= 999999, not 100000000000000000000"),
    ({"cudnn_backend": {"reason": "x\x1b[2J"}}, "field 'cudnn_backend.reason': control character '\\x1b' in"),
    ({"operation": "Conv\x00Fwd"}, "field 'operation': control character '\\x00' in"),
])
def test_errata_check_names_the_rule_and_field_of_each_bad_value(tmp_path, rule, expected):
    path = tmp_path / "errata.json"
    path.write_text(json.dumps({"version": 1, "rules": [{"rule_id": "a", "operation": "ConvFwd", "engine": 1,
                                                          **rule}]}))
    r = run("errata", "check", str(path))
    assert r.returncode == 1 and "Traceback" not in r.stderr and "\x1b" not in r.stdout + r.stderr
    assert f"error: rule 0 ('a'): {expected}" in r.stdout + r.stderr, r.stdout + r.stderr


def test_a_release_that_is_no_library_is_a_usage_error_naming_releases(tmp_path):
    text = tmp_path / "libcudnn.so.9"
    text.write_text("root:x:0:0:root:/root:/bin/bash\n")
    for extra in ([], ["--graph", "conv_fwd"]):
        line = one_error_line(run("compare", "--releases", str(text), "default", "--device-profile", "h200", *extra), 2)
        assert line.startswith(f"cudnn-backend compare: error: argument --releases: {str(text)!r} is no shared "
                               "library"), line


@offline_only
def test_smaller_command_line_mistakes_each_name_their_option(tmp_path):
    from cudnn_backend.cli import render

    out = tmp_path / "ex.json"
    r = run("explore", "--n", "1", "--c", "8", "--h", "8", "--w", "8", "--k", "8", "--max-configs", "010", "--json",
            str(out), "--device-profile", "h200", "--no-engines")
    assert r.returncode == 0 and json.loads(out.read_text())["options"]["max_configs"] == 10, r.stderr
    line = one_error_line(run("profile", "convert", "h200", "--to", "9.5.0", "--out", str(tmp_path / "p.json")), 2)
    assert line.startswith("cudnn-backend profile: error: argument --to: cuDNN 9.5.0 takes no device profile"), line
    line = one_error_line(run("profile", "convert", "h200", "--set", "memoryBusWidth=5120", "--set",
                              "memoryBusWidth=4096", "--out", str(tmp_path / "p.json")), 2)
    assert line.startswith("cudnn-backend profile: error: argument --set: memoryBusWidth is given twice"), line
    assert not (tmp_path / "p.json").exists()
    assert render.console_width(None, environ={"COLUMNS": "1"}) == render.MIN_WIDTH  # as --width's least


def test_an_error_line_is_cut_to_a_readable_length(capsys):
    from cudnn_backend.cli import app

    app._error_line("cudnn-backend explore", "a" * 3000 + "b" * 2000 + " the reason")
    line = capsys.readouterr().err
    assert len(line.splitlines()) == 1 and len(line) < app.MAX_ERROR_LINE + 200, line
    assert "... (4,011 characters left out) ..." in line and line.rstrip().endswith("b the reason"), line


@pytest.mark.parametrize("args", [("cache", "clear", "--cache", ""), ("explore", "conv_bias_relu", "--device-profile="),
                                  ("profile", "convert", "h200", "--to", "", "--out", "x.json")])
def test_an_empty_option_value_is_refused_never_read_as_the_default(args, tmp_path):
    option = next(a for a in args if a.startswith("--")).split("=")[0]
    r = run(*args, cwd=tmp_path)
    assert one_error_line(r, 2) == (f"cudnn-backend {args[0]}: error: argument {option}: an empty value; give one, or "
                                    "leave the option out for its default")
    assert not (tmp_path / "x.json").exists()


def test_a_parameter_value_nested_past_the_parsers_depth_is_one_line():
    r = run("why", "conv_bias_relu", "--param", "n=" + "-" * 5000 + "1")
    assert one_error_line(r, 2) == ("cudnn-backend why: error: argument --param: n: the value is nested too deeply to "
                                    "read (5001 characters)")


@pytest.mark.parametrize("args, expected", [
    (("explore", "--n", "4", "--n", "8"), "argument --n: given twice; give it once"),
    (("explore", "--preset", "resnet50", "--preset", "fused"), "argument --preset: given twice"),
    (("explore", "--n", "4", "--param", "n=8"), "argument --param: n is given by --n too (4 and 8); give it once"),
    (("why", "conv_bias_relu", "--param", "k=4", "--param", "k=8"),
     "argument --param: k is given by --param twice (4 and 8)"),
    (("explore", "--dtype", "fp16", "--param", "data_type='fp32'"), "argument --param: data_type is given by --dtype "
                                                                     "too"),
])
def test_an_option_given_twice_or_by_two_options_is_refused_never_the_last_taken(args, expected):
    line = one_error_line(run(*args), 2)
    assert line.startswith(f"cudnn-backend {args[0]}: error: {expected}"), line


@offline_only
@pytest.mark.parametrize("option", [("--sweep-seeds", "5"), ("--knob-values", "4"), ("--sweep-budget", "1")])
def test_a_knob_search_option_without_the_knob_search_is_refused(option):
    line = one_error_line(run("explore", *option, "--no-engines"), 2)
    assert line.startswith(f"cudnn-backend explore: error: argument {option[0]}: it shapes the knob search, which "
                           "runs with --sweep only"), line


@pytest.mark.parametrize("command", [("explore", "conv_bias_relu", "--json", "-"),
                                     ("explore", "conv_bias_relu", "--csv", "-")])
def test_a_dash_for_an_output_file_is_refused(tmp_path, command):
    line = one_error_line(run(*command, "--device-profile", "h200", cwd=tmp_path), 2)
    assert line.endswith(f"argument {command[2]}: '-' would be a file named '-'; name a file (/dev/stdout prints "
                         "it)"), line
    assert not (tmp_path / "-").exists()


def test_clear_cache_with_no_cache_is_refused_and_clears_nothing(tmp_path):
    cache = tmp_path / "support.sqlite"
    line = one_error_line(run("support", "--device-profile", "h200", "--family", "conv_fwd", "--no-cache",
                              "--clear-cache", "--cache", str(cache)), 2)
    assert line.endswith("argument --clear-cache: not with --no-cache, which leaves the cache alone"), line
    assert not cache.exists()
