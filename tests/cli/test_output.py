"""What the command line prints, read where it ends up: a terminal, a log file, a pipe (rich tables
squeezed to 80 columns in logs broke every cell into fragments)."""
import csv
import io
import json
import os
import subprocess
import sys

import pytest

from cudnn_backend.cli import render
from cudnn_backend.tune.results import ConfigResult, Exploration

SMALL = ["--n", "1", "--c", "8", "--h", "8", "--w", "8", "--k", "8"]


def run(*args, columns=None, cwd=None):
    """The CLI in a child process, its stdout a pipe; COLUMNS only when given."""
    env = {k: v for k, v in os.environ.items() if k not in ("COLUMNS", "LINES")}
    if columns is not None:
        env["COLUMNS"] = str(columns)
    return subprocess.run([sys.executable, "-m", "cudnn_backend", *args], capture_output=True, text=True,
                          timeout=300, env=env, cwd=cwd)


class _Stream(io.StringIO):
    def __init__(self, tty):
        super().__init__()
        self._tty = tty

    def isatty(self):
        return self._tty


def test_console_width_rules():
    assert render.console_width(_Stream(False), environ={}) == render.LOG_WIDTH  # a file or pipe: rows stay whole
    assert render.console_width(_Stream(True), environ={}) is None  # a terminal: rich asks it
    assert render.console_width(_Stream(False), environ={"COLUMNS": "120"}) == 120
    assert render.console_width(_Stream(True), environ={"COLUMNS": "120"}) == 120
    assert render.console_width(_Stream(False), 90, environ={"COLUMNS": "120"}) == 90  # --width wins
    assert render.console_width(_Stream(False), environ={"COLUMNS": "wide"}) == render.LOG_WIDTH
    for columns in ("\u00b2", "9" * 5000, "0"):  # no count: as unset
        assert render.console_width(_Stream(False), environ={"COLUMNS": columns}) == render.LOG_WIDTH
    assert render.console_width(_Stream(False), environ={"COLUMNS": "99999"}) == render.MAX_WIDTH
    render.configure(width=77)
    try:
        assert render.console.width == 77 and render.error_console.width == 77
        assert render.make_console(width=50).width == 50
    finally:
        render.configure()


def test_a_log_keeps_each_row_on_one_line(tmp_path):
    r = run("explore", *SMALL, "--top", "6", "--json", str(tmp_path / "ex.json"))
    assert r.returncode == 0, r.stderr
    ex = Exploration.from_json((tmp_path / "ex.json").read_text())
    lines = r.stdout.splitlines()
    for result in ex.results[:6]:  # each config's row: its source, engine and every knob on one line
        row = [ln for ln in lines if f" {result.label} " in ln]
        assert len(row) == 1 and result.knobs_text() in row[0], (result.label, row)
    engines = [e for e in ex.engines if e["supported"]]
    for e in engines:  # the engines table: every knob of an engine on its row
        knobs = " ".join(f"{k['knob']}[" for k in e["knobs"])
        assert any(ln.lstrip().startswith(str(e["engine_index"]) + " ") and all(
            part in ln for part in knobs.split()) for ln in lines), e["engine_index"]
    assert "heuristics A and B agree" not in r.stderr + "".join(ln for ln in lines if ln.startswith("note:"))
    assert sum("heuristics A and B agree" in ln for ln in lines) <= 1  # said once, by the heuristics line


def test_columns_and_width_are_honoured(tmp_path):
    narrow = run("explore", *SMALL, "--top", "3", "--no-engines", columns=70)
    assert narrow.returncode == 0, narrow.stderr
    assert max(len(ln) for ln in narrow.stdout.splitlines()) <= 70
    given = run("explore", *SMALL, "--top", "3", "--no-engines", "--width", "90",
                "--csv", str(tmp_path / "narrow.csv"), columns=300)
    assert given.returncode == 0, given.stderr
    widths = [len(ln) for ln in given.stdout.splitlines()]
    assert max(widths) <= 90 and max(widths) > 70
    # CSV and JSON do not depend on the width: whole knob texts, one row per config
    with open(tmp_path / "narrow.csv", newline="") as f:
        rows = list(csv.DictReader(f))
    assert rows and all("=" in row["knobs"] and "\n" not in row["knobs"] for row in rows if row["knobs"] != "-")
    assert "--width" in run("info", "--help").stdout and "--width" in run("cache", "list", "--help").stdout


@pytest.mark.parametrize("text, expected", [
    ("argument --device-profile: device_profile: 'h300' is unknown", "argument --device-profile: 'h300' is unknown"),
    ("cuDNN does not load it; or pass allow_version_mismatch=True to let cuDNN try",
     "cuDNN does not load it; or give --allow-version-mismatch to let cuDNN try"),
    ("max_workspace=1024 leaves no config", "--max-workspace 1024 leaves no config"),
    ("sm_count_target: expected an integer >= 1", "--sm-count: expected an integer >= 1"),
    ("give key=value pairs", "give key=value pairs"),  # not a keyword of the API: left alone
])
def test_python_words_become_flags(text, expected):
    assert render.cli_words(text) == expected


def test_json_of_several_graphs_reads_back(tmp_path):
    out = tmp_path / "many.json"
    r = run("explore", "--tasks", str(_tasks(tmp_path)), "--no-engines", "--json", str(out))
    assert r.returncode == 0, r.stderr
    assert "explore of 2 graphs" in r.stdout and "1 worker" in r.stdout and "worker(s)" not in r.stdout
    back = Exploration.from_json(out.read_text())
    assert isinstance(back, list) and [ex.name for ex in back] == [d["name"] for d in json.loads(out.read_text())]
    assert all(ex.chosen is not None for ex in back)
    with pytest.raises(ValueError, match="item 0 of the list is not an exploration"):
        Exploration.from_json("[1]")


def _tasks(tmp_path):
    path = tmp_path / "tasks.txt"
    path.write_text("conv_bias_relu n=1 c=8 h=8 w=8 k=8\nmatmul_bias_relu batch=1 m=16 n=16 k=16\n")
    return path


def test_nothing_tried_prints_no_empty_table():
    """An exploration whose heuristics proposed nothing says so, with no empty "configs tried (0; )" table."""
    ex = Exploration("g", {"name": "NVIDIA H200", "sm_version": 900, "sm_count": 132, "source": "profile"}, "9.19.0",
                     False, heuristics={"A": [], "B": []})
    out = render.make_console(width=120)
    with out.capture() as captured:
        render.exploration(ex, out=out)
    text = captured.get()
    assert "configs tried" not in text and "offline, for NVIDIA H200: nothing found" in text
    ex.results = [ConfigResult(7, {}, "A", 0, ("A",), status="plan built", plan_built=True)]
    with out.capture() as captured:
        render.exploration(ex, out=out)
    assert "configs tried (1; 1 plan built)" in captured.get() and "picked: engine 7 (A#0)" in captured.get()


def test_bench_fusion_and_cache_say_a_config_in_words():
    """bench, fusion and cache list an engine without knobs as "engine 11" and count in plural words ("1 kernel",
    "1 entry"): the same words as explore's summary (config_words)."""
    from types import SimpleNamespace

    from cudnn_backend.tune.benchmark import BenchReport
    from cudnn_backend.tune.fusion import FusionReport

    out = render.make_console(width=200)
    old = render.console
    render.console = out
    try:
        with out.capture() as captured:
            render.bench(BenchReport("g", {"name": "NVIDIA H200"}, "9.19.0", 11, {}, 0, "heuristics"))
            kernel = SimpleNamespace(short_name="k", grid=(1, 1, 1), block=(128, 1, 1), shared_mem_bytes=0)
            render.fusion(FusionReport([kernel], "CUDA graph", 11, {}))
            render.fusion(FusionReport([kernel, kernel], "CUDA graph", 7, {"KERNEL_CFG": 21}))
            entry = SimpleNamespace(key="k" * 20, info={"name": "g"}, fingerprint="f" * 20, device_name="H200",
                                    sm_version=900, sm_count=132, to_dict=lambda: {"cudnn_version": "9.19.0"}, engine_index=11,
                                    knobs={}, time_us=None, stored_at=0)
            render.cache_entries([entry], "cache.sqlite")
    finally:
        render.console = old
    text = captured.get()
    assert "g: engine 11 (heuristics)" in text and "engine 11 -" not in text
    assert "engine 11: 1 kernel per execute" in text and "engine 7 KERNEL_CFG=21: 2 kernels per execute" in text
    assert "plan cache cache.sqlite: 1 entry" in text


@pytest.mark.parametrize("columns", ["\u00b2", "9" * 5000])
def test_a_columns_variable_that_is_no_count_is_read_as_unset(columns):
    """rich reads $COLUMNS and $LINES itself, calling int() on any digits: such a value is kept from it."""
    for variable in ("COLUMNS", "LINES"):
        out = subprocess.run([sys.executable, "-m", "cudnn_backend", "info"], capture_output=True, text=True,
                             timeout=120, env=dict(os.environ, **{variable: columns}))
        assert out.returncode == 0 and "Traceback" not in out.stderr and "error" not in out.stderr, out.stderr
