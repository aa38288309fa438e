"""The command line, run as a user runs it: `python -m cudnn_backend ...` in a child process."""
import json
import os
import subprocess
import sys

import pytest

import cudnn_backend as cb

OFFLINE = not cb.core.device.gpu_available()
SMALL = ["--n", "1", "--c", "8", "--h", "8", "--w", "8", "--k", "8"]


def run(*args, env=None, timeout=300, cwd=None):
    e = dict(os.environ, COLUMNS="200", **(env or {}))
    return subprocess.run([sys.executable, "-m", "cudnn_backend", *args], capture_output=True, text=True,
                          timeout=timeout, env=e, cwd=cwd)


COMMANDS = [["info"], ["explore"], ["tune"], ["bench"], ["fusion"], ["profile"], ["profile", "capture"],
            ["profile", "show"], ["cache"], ["cache", "list"], ["cache", "show"], ["cache", "clear"]]


@pytest.mark.parametrize("command", COMMANDS, ids=" ".join)
def test_every_subcommand_has_help(command):
    r = run(*command, "--help")
    assert r.returncode == 0, r.stderr
    assert "usage: cudnn-backend" in r.stdout
    if command[0] in ("explore", "tune"):
        for option in ("--graph", "--plan", "--device-profile", "--max-workspace", "--sm-count", "--sweep", "--cold",
                       "--cuda-graph", "--csv", "--json", "--plot", "--gpus", "--ray", "--preset", "--strategy",
                       "--race-keep", "--race-samples", "--deterministic", "--seed", "--sweep-configs",
                       "--build-threads"):
            assert option in r.stdout
        assert "(default: 20)" in r.stdout and "(default: A,B)" in r.stdout
        assert "(default: racing)" in r.stdout and "(default: 0.25)" in r.stdout


def test_help_for_each_option_of_explore():
    out = run("explore", "--help").stdout
    lines = [ln for ln in out.splitlines() if ln.strip().startswith("--")]
    assert len(lines) > 30
    undocumented = [ln for ln in lines if len(ln.split()) < 2 and not ln.strip().endswith(("FILE", "N", "S"))]
    assert not [ln for ln in undocumented if "--" in ln and not any(c.isalpha() for c in ln.split("  ")[-1])]


@pytest.mark.parametrize("args, option", [
    (["explore", "--n", "-8"], "--n"), (["explore", "--c", "0"], "--c"), (["explore", "--padding", "-5"], "--padding"),
    (["explore", "--stride", "0"], "--stride"), (["explore", "layer_norm_fwd", "--hidden", "0"], "--hidden"),
    (["explore", "layer_norm_fwd", "--tokens", "0"], "--tokens"), (["explore", "matmul_bias_gelu", "--batch", "0"],
                                                                   "--batch"),
    (["explore", "matmul_bias_gelu", "--m", "0"], "--m"), (["explore", "--n", "1.5"], "--n"),
    (["explore", "--max-workspace", "lots"], "--max-workspace"), (["explore", "--tokens", "4"], "--tokens"),
    (["explore", "--graph", "missing.py:f"], "--graph"), (["explore", "--sweep-budget", "nan"], "--sweep-budget"),
    (["explore", "no_such_pattern"], "PATTERN"), (["tune", "--gpus", "0"], "--gpus"),
    (["explore", "conv_fwd", "--plan", "x.json"], "--plan"), (["explore", "--csv", "/no/such/dir/x.csv"], "--csv"),
    (["profile", "show", "h999"], "FILE|NAME"), (["bench", "--graph", "a.py:f", "--graph", "b.py:g"], "--graph"),
    (["explore", "--race-keep", "1.5"], "--race-keep"), (["explore", "--race-keep", "0"], "--race-keep"),
    (["tune", "--strategy", "fastest"], "--strategy"), (["explore", "--sweep-budget", "-2"], "--sweep-budget"),
    (["explore", "--sweep-configs", "-1"], "--sweep-configs"), (["tune", "--tie", "nan"], "--tie"),
    (["explore", "--build-threads", "two"], "--build-threads"), (["explore", "--modes", "A,Z"], "--modes"),
    (["tune", "--race-samples", "0"], "--race-samples"),
])
def test_bad_arguments_one_line_exit_2(args, option):
    r = run(*args)
    assert r.returncode == 2, (r.returncode, r.stdout, r.stderr)
    lines = r.stderr.strip().splitlines()
    assert len(lines) == 1 and "Traceback" not in r.stderr, r.stderr
    assert option in lines[0] or option.lstrip("-") in lines[0]


@pytest.mark.skipif(not OFFLINE, reason="offline output")
def test_explore_own_graph_offline(tmp_path):
    src = tmp_path / "mine.py"
    src.write_text("import cudnn_backend as cb\n"
                   "def conv(n=1, k=8):\n"
                   "    g = cb.Graph('my_conv')\n"
                   "    x = g.tensor([n, 8, 8, 8], layout='nhwc', name='x'); w = g.tensor([k, 8, 3, 3], layout='nhwc')\n"
                   "    g.relu(g.conv_fwd(x, w, padding=1), output=True, name='out')\n"
                   "    return g\n")
    out_json, out_csv = tmp_path / "ex.json", tmp_path / "ex.csv"
    r = run("explore", "--graph", f"{src}:conv", "--n", "2", "--json", str(out_json), "--csv", str(out_csv))
    assert r.returncode == 0, r.stderr
    assert "my_conv" in r.stdout and "2×8×8×8" in r.stdout and "plan built" in r.stdout
    assert "offline" in r.stdout and "engines of this graph" in r.stdout
    data = json.loads(out_json.read_text())
    assert data["name"] == "my_conv" and data["results"] and not data["timed"]
    assert out_csv.read_text().startswith("graph,")


@pytest.mark.skipif(not OFFLINE, reason="offline output")
def test_search_options_reach_the_exploration(tmp_path):
    out = tmp_path / "ex.json"
    r = run("explore", *SMALL, "--no-engines", "--deterministic", "--seed", "3", "--modes", "A", "--max-configs",
            "2", "--max-workspace", "1MiB", "--json", str(out))
    assert r.returncode == 0, r.stderr
    options = json.loads(out.read_text())["options"]
    assert (options["deterministic"], options["seed"], options["modes"]) == (True, 3, ["A"])
    assert (options["max_configs"], options["max_workspace"], options["engines"]) == (2, 1 << 20, False)


@pytest.mark.skipif(not OFFLINE, reason="offline messages")
@pytest.mark.parametrize("option", ["--sweep", "--plot", "--heatmap", "--cold", "--cuda-graph", "--repeats=5",
                                    "--warmup=1", "--buffer-sets=2", "--strategy=exhaustive", "--race-keep=0.5",
                                    "--race-margin=0.1", "--race-samples=3", "--finalists=2", "--final-rounds=2",
                                    "--tie=0.1", "--repeats=20"])
def test_offline_gpu_options_are_usage_errors(option, tmp_path):
    """Every option whose work needs a GPU is refused offline the same way: one line naming it, exit code 2,
    nothing written."""
    value = [str(tmp_path / "p.png")] if option in ("--plot", "--heatmap") else []
    for job, offline in (("explore", []), ("tune", ["--device-profile", "h100"])):
        r = run(job, *SMALL, option, *value, *offline, "--json", str(tmp_path / "e.json"))
        assert r.returncode == 2 and r.stdout == "", r.stdout
        assert r.stderr.startswith(f"cudnn-backend {job}: error: argument {option.split('=')[0]}: ") and len(
            r.stderr.splitlines()) == 1, r.stderr
        assert "offline" in r.stderr and not (tmp_path / "p.png").exists() and not (tmp_path / "e.json").exists()


def test_missing_matplotlib_still_writes_the_other_outputs(tmp_path):
    code = ("import sys; sys.modules['matplotlib'] = None\n"
            "from cudnn_backend.cli import main\n"
            f"from cudnn_backend.tune import results\n"
            "import cudnn_backend.tune.explorer as ex_mod\n"
            "real = ex_mod.explore\n"
            "def fake(*a, **k):\n"
            "    ex = real(*a, **k)\n"
            "    for r in ex.results: r.status, r.time_us = 'ok', 10.0 + r.engine_index\n"
            "    ex.timed = True\n"
            "    return ex\n"
            "import cudnn_backend.cli.app as m; m.explore = fake; m._offline = lambda profile: False\n"
            f"sys.exit(main(['explore', *{SMALL!r}, '--no-engines', '--plot', {str(tmp_path / 'p.png')!r}, "
            f"'--csv', {str(tmp_path / 'e.csv')!r}, '--json', {str(tmp_path / 'e.json')!r}]))\n")
    r = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=300)
    assert r.returncode == 1, r.stderr
    assert "matplotlib" in r.stderr and "other outputs were written" in r.stderr and "Traceback" not in r.stderr
    assert "--plot: plotting needs matplotlib, which is not installed (pip install matplotlib; the extra " \
           "cudnn-backend[plot] brings it: pip install '.[plot]' in the clone)" in r.stderr  # the extra, not eaten
    assert (tmp_path / "e.csv").exists() and (tmp_path / "e.json").exists() and not (tmp_path / "p.png").exists()


def test_closed_pipe_exits_quietly(tmp_path):
    # stderr to a file: a pipe read only after stdout would hang the test once the child wrote 64 KiB to it
    with open(tmp_path / "stderr", "w+b") as stderr:
        p = subprocess.Popen([sys.executable, "-m", "cudnn_backend", "explore", *SMALL], stdout=subprocess.PIPE,
                             stderr=stderr, env=dict(os.environ, COLUMNS="120"))
        p.stdout.readline()
        p.stdout.close()  # the reader goes away, as `| head -1` does
        assert p.wait(timeout=300) in (0, 141)  # 0: all was written before the reader left
        stderr.seek(0)
        err = stderr.read().decode()
    assert "Traceback" not in err and "BrokenPipe" not in err


def test_a_reader_gone_before_the_answer_is_written_is_never_a_success(tmp_path):
    # `why ... | head -0`: the answer ("no", 1) cannot be written; 141 as a shell reports a command SIGPIPE ended
    read_end, write_end = os.pipe()
    os.close(read_end)
    try:
        with open(tmp_path / "stderr", "w+b") as stderr:
            p = subprocess.Popen([sys.executable, "-m", "cudnn_backend", "why", "softmax", "--no-minimize"],
                                 stdout=write_end, stderr=stderr, env=dict(os.environ, COLUMNS="120"))
            assert p.wait(timeout=300) == 141
            stderr.seek(0)
            err = stderr.read().decode()
    finally:
        os.close(write_end)
    assert "Traceback" not in err and "BrokenPipe" not in err


def test_info_profile_and_cache_commands(tmp_path):
    r = run("info", "--json")
    assert r.returncode == 0 and json.loads(r.stdout)["cudnn_version"].startswith("9.")
    r = run("profile", "show", "h200")
    assert r.returncode == 0 and "multiProcessorCount" in r.stdout and "132" in r.stdout
    cache = tmp_path / "c.sqlite"
    assert run("cache", "list", "--cache", str(cache)).returncode == 0
    from cudnn_backend.tune import PlanCache
    from tests.tune import three_ways

    og = three_ways.graph_builder().build()
    prof = cb.DeviceProfile.bundled()
    key = PlanCache(cache).put(og, cb.build_plan(cb.get_configs(og, "A", prof)[0], device_profile=prof),
                               device_profile=prof, name="cbr", time_us=3.5)
    r = run("cache", "list", "--cache", str(cache), "--json")
    assert [e["key"] for e in json.loads(r.stdout)] == [key]
    r = run("cache", "show", key[:8], "--cache", str(cache))
    assert r.returncode == 0 and "3.50 µs" in r.stdout
    r = run("cache", "show", key[:8], "--cache", str(cache), "--json-plan")
    assert json.loads(r.stdout)["engine"]["engineId"] >= 0
    r = run("cache", "clear", "--cache", str(cache))
    assert r.returncode == 0 and "removed 1 entry" in r.stdout


@pytest.mark.skipif(not OFFLINE, reason="offline messages")
def test_tune_bench_fusion_offline():
    r = run("tune", *SMALL, "--no-engines", "--top", "3")
    assert r.returncode == 0 and "offline" in r.stderr and "nothing is cached" in r.stderr
    for command in ("bench", "fusion"):
        r = run(command, *SMALL)
        assert r.returncode == 1 and "needs a GPU" in r.stderr and len(r.stderr.strip().splitlines()) == 1


@pytest.mark.skipif(not OFFLINE, reason="offline sweep")
def test_explore_several_graphs_from_a_task_file(tmp_path):
    listing = tmp_path / "graphs.txt"
    builders = tmp_path / "builders.py"  # a graph that fails as it is built (a pattern's values are checked first)
    builders.write_text("def grouped(c=6, groups=4):\n"
                        "    raise ValueError(f'groups: {groups} must divide c={c}')\n")
    listing.write_text(f"conv_fwd n=1 c=8 h=8 w=8 k=8\n{builders}:grouped\n")
    r = run("explore", "--tasks", str(listing), "--workers", "2", "--quiet")
    assert r.returncode == 1  # one graph failed, and it is reported
    assert "FAILED" in r.stdout and "groups" in r.stderr and "processes executor, 2 workers" in r.stdout
    assert "cpu worker 0" in r.stdout and "idle s" in r.stdout and "longest unit:" in r.stdout  # where time went
    assert "Traceback" not in r.stderr  # the workers closed at exit, quietly
