"""`cudnn-backend support`, `compare` and `why`, run as a user runs them (a child process), offline against the
bundled profiles, with small catalogue filters."""
import json
import os
import subprocess
import sys

import pytest

from cudnn_backend.cli import main
from tests.helpers.env import ROOT

DGRAD_FUNC = f"{ROOT / 'examples' / 'support_matrix.py'}:strided_dgrad_fp32"
SMALL = ["--family", "conv_fwd", "--dtype", "fp16", "--layout", "nhwc", "--name", "+bias+relu", "--workers", "1"]
USER = '''
import cudnn_backend as cb


def sized(n=2):
    g = cb.Graph("sized")
    x = g.tensor([n, 16, 8, 8], layout="nhwc", name="x")
    w = g.tensor([16, 16, 3, 3], layout="nhwc", name="w")
    g.conv_fwd(x, w, padding=1, output=True, name="y")
    return g
'''


@pytest.fixture
def run(tmp_path):
    env = dict(os.environ, COLUMNS="200", CUDNN_BACKEND_SUPPORT_CACHE=str(tmp_path / "support.sqlite"))

    def call(*args, timeout=300):
        return subprocess.run([sys.executable, "-m", "cudnn_backend", *args], capture_output=True, text=True,
                              timeout=timeout, env=env)

    return call


@pytest.mark.parametrize("command", ["support", "compare", "why"])
def test_help(command, capsys):
    with pytest.raises(SystemExit) as done:
        main([command, "--help"])
    assert done.value.code == 0
    out = capsys.readouterr().out
    for option in {"support": ("--catalogue", "--family", "--dtype", "--layout", "--plans", "--kernels", "--csv",
                               "--json", "--heatmap", "--workers", "--no-cache", "--device-profile"),
                   "compare": ("--profiles", "--releases", "--matrices", "--all"),
                   "why": ("--graph", "--param", "--no-minimize", "--budget", "--json")}[command]:
        assert option in out, option


def test_support_writes_every_output(run, tmp_path):
    out = {k: tmp_path / f"m.{k}" for k in ("csv", "json", "png")}
    r = run("support", "--device-profile", "h100", *SMALL, "--csv", str(out["csv"]), "--json", str(out["json"]),
            "--heatmap", str(out["png"]))
    assert r.returncode == 0, r.stderr
    assert "NVIDIA H100 80GB HBM3 (SM 9.0, offline, device profile) · cuDNN" in r.stdout
    assert "conv_fwd+bias+relu>genstats" in r.stdout and "yes" in r.stdout
    assert "kernels: measured only on a GPU (--kernels); offline nothing runs" in r.stdout
    data = json.loads(out["json"].read_text())
    assert len(data["results"]) == 4 and data["device"]["offline"] is True
    assert out["csv"].read_text().count("\n") == 5 and out["png"].read_bytes()[:4] == b"\x89PNG"
    again = run("support", "--device-profile", "h100", *SMALL)
    assert again.returncode == 0 and "(4 from the cache" in again.stderr


@pytest.mark.parametrize("args, option", [
    (["support", "--dtype", "fp64"], "--dtype"), (["support", "--layout", "nwhc"], "--layout"),
    (["support", "--family", "nope"], "argument --family: 'nope' is not one of conv_fwd, "),
    (["support", "--family", "matmull"], "did you mean matmul?"),
    (["support", "--name", "no such graph"], "no graph of the default catalogue"),
    (["support", "--catalogue", "/no/such/file.txt"], "--catalogue"),
    (["support", "--kernels", "--device-profile", "h100"], "--kernels"),
    (["support", "--plans", "some"], "--plans"), (["support", "--json", "/no/such/dir/m.json"], "--json"),
    (["compare"], "--profiles A B, --releases"), (["compare", "--matrices", "a.json", "b.json"], "--matrices"),
    (["compare", "--releases", "/no/lib.so", "default"], "--releases"),
    (["why"], "PATTERN or --graph"), (["why", "--graph", "missing.py:f"], "--graph"),
    (["why", "conv_fwd", "--graph", "x.py:f"], "not both"),
])
def test_bad_arguments_one_line_exit_2(args, option, capsys):
    try:
        code = main(args)
    except SystemExit as e:  # argparse's own refusals
        code = e.code
    assert code == 2
    lines = capsys.readouterr().err.strip().splitlines()
    assert len(lines) == 1 and option in lines[0], lines


def test_odd_catalogues(run, tmp_path):
    empty = tmp_path / "empty.txt"
    empty.write_text("# nothing\n")
    r = run("support", "--device-profile", "h100", "--catalogue", str(empty))
    assert r.returncode == 2 and "lists no graphs" in r.stderr
    user = tmp_path / "user.py"
    user.write_text(USER + "\ndef boom():\n    raise KeyError('boom')\n")
    listed = tmp_path / "mine.txt"
    listed.write_text(f"{user}:sized n=1\n{user}:sized n=1\n{user}:boom\n{DGRAD_FUNC}\n")
    r = run("support", "--device-profile", "h100", "--catalogue", str(listed), "--workers", "1", "--rows", "all")
    assert r.returncode == 0, r.stderr
    assert "1 duplicate entry" in r.stdout and "no: builder" in r.stdout and "KeyError: 'boom'" in r.stdout
    assert "no: heuristics" in r.stdout and "fort_device::SM120" in r.stdout


def test_compare_saved_matrices(run, tmp_path):
    paths = []
    for profile in ("h100", "h200"):
        path = tmp_path / f"{profile}.json"
        r = run("support", "--device-profile", profile, *SMALL, "--json", str(path))
        assert r.returncode == 0, r.stderr
        paths.append(str(path))
    r = run("compare", "--matrices", *paths, "--all", "--json", str(tmp_path / "c.json"))
    assert r.returncode == 0, r.stderr
    assert "(A) vs" in r.stdout and "conv_fwd+bias+relu" in r.stdout
    data = json.loads((tmp_path / "c.json").read_text())
    assert data["format"] == "cudnn-backend support comparison" and len(data["rows"]) == 4


def test_why_explains_and_minimizes(run, tmp_path):
    f = tmp_path / "user.py"
    f.write_text(USER)
    r = run("why", "--graph", DGRAD_FUNC, "--device-profile", "h100", "--json", str(tmp_path / "w.json"))
    assert r.returncode == 1, r.stderr  # the answer is "no"
    assert "NOT SUPPORTED: refused at heuristics" in r.stdout
    assert "fort_device::SM80 || receive_op_->target == fort_device::SM120" in r.stdout
    assert "smallest change that makes it supported (layout" in r.stdout and "(NCHW → NHWC)" in r.stdout
    data = json.loads((tmp_path / "w.json").read_text())
    assert data["stage"] == "heuristics" and data["minimization"]["label"] == "every tensor → NHWC"
    r = run("why", "--graph", f"{f}:sized", "--param", "n=1", "--device-profile", "h100")
    assert r.returncode == 0 and "SUPPORTED" in r.stdout and "NOT SUPPORTED" not in r.stdout


def test_a_matrix_file_nested_too_deeply_is_one_line_exit_2(tmp_path, capsys):
    deep = tmp_path / "deep.json"
    deep.write_text("[" * 100_000 + "]" * 100_000)
    assert main(["compare", "--matrices", str(deep), str(deep)]) == 2
    lines = capsys.readouterr().err.strip().splitlines()
    assert len(lines) == 1 and "--matrices" in lines[0] and "nested too deeply" in lines[0], lines


def test_a_probe_that_crashes_is_a_crash_result_by_default(run, tmp_path):
    """Few graphs, no --workers: they are probed in a worker process all the same, so a graph whose probe takes the
    process down (here its own builder) is reported, and the others are probed."""
    catalogue = tmp_path / "graphs.py"
    catalogue.write_text("import ctypes\nimport cudnn_backend as cb\n\n\ndef fine():\n    g = cb.Graph('fine')\n"
                         "    g.relu(g.tensor([1, 8, 8, 8], layout='nhwc', name='x'), output=True)\n    return g\n\n\n"
                         "def crashes():\n    ctypes.string_at(0)\n")
    out = run("support", "--catalogue", str(catalogue), "--no-cache", "--json", str(tmp_path / "m.json"))
    assert out.returncode == 0, out.stderr[-2000:]
    rows = {r["name"]: r for r in json.loads((tmp_path / "m.json").read_text())["results"]}
    assert rows["crashes"]["stage"] == "crash" and "the probe crashed" in rows["crashes"]["reason"], rows
    assert rows["fine"]["supported"], rows
