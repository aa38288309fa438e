"""80 columns in a pipe (``COLUMNS=80 cudnn-backend ... | cat``, as in CI logs): every line fits, names, knobs and
paths wrap at their own boundaries and never inside a word, a knob list gets the room empty columns would have
taken, ``why`` follows the width, prose wraps to the width of the console rather than of the table above it, and
install hints keep their extra. A log without COLUMNS keeps each row on one line (test_output.py)."""
import json
import re
import subprocess
import sys

import pytest
from rich.cells import cell_len
from rich.text import Text

import cudnn_backend as cb
from cudnn_backend.cli import render
from cudnn_backend.tune.results import Exploration

from tests.cli.test_output import SMALL, run

OFFLINE = not cb.core.device.gpu_available()


def _fits(stdout, width):
    wide = [ln for ln in stdout.splitlines() if cell_len(ln.rstrip()) > width]
    assert not wide, wide[:3]


def _lines(renderable, width):
    out = render.make_console(width=width)
    with out.capture() as captured:
        out.print(renderable)
    return [ln.rstrip() for ln in captured.get().splitlines()]


@pytest.mark.parametrize("text, width, expected", [
    ("matmul+bias+cmp_select", 15, ["matmul+bias+", "cmp_select"]),
    ("/work/venv/lib/python3.11/site-packages/nvidia/cudnn/lib/libcudnn.so.9", 40,
     ["/work/venv/lib/python3.11/site-packages/", "nvidia/cudnn/lib/libcudnn.so.9"]),
    ("TILE_SIZE=15 LDGA=3 TILEK=1 STAGES=0", 20, ["TILE_SIZE=15 LDGA=3", "TILEK=1 STAGES=0"]),
    ("conv_fwd+bias+relu>genstats", 20, ["conv_fwd+bias+relu>", "genstats"]),
    ("SUPPORTS_CUDA_GRAPH_NATIVE_API", 12, ["SUPPORTS_CUD", "A_GRAPH_NATI", "VE_API"]),  # one word: folded
])
def test_text_wraps_at_word_and_path_boundaries(text, width, expected):
    assert _lines(render.Breakable(text), width) == expected


def test_cudnn_pointers_are_masked_in_its_reasons():
    from cudnn_backend.runtime.heuristics import cudnn_explanations

    log = ["Warning: CUDNN_STATUS_NOT_SUPPORTED; Reason: no search results or none implementable (stt=1, "
           "cur=0x7ffdb9fae0f8, results=0x7ffdb9fae118)"]
    assert cudnn_explanations(log) == [("NOT_SUPPORTED", "no search results or none implementable (stt=1, "
                                                         "cur=<address>, results=<address>)")]


def test_indented_lines_hang_under_their_indent():
    lines = _lines(render.Breakable("engines 40, 50: NOT_SUPPORTED: no search results or none implementable",
                                    indent=4, hang=2), 40)
    assert lines == ["    engines 40, 50: NOT_SUPPORTED: no", "      search results or none", "      implementable"]


def test_a_table_measures_breakable_cells_by_their_longest_piece():
    t = render.table("t")
    t.add_column("graph")
    t.add_row(render.Breakable("conv_fwd+bias+residual+relu"))
    assert [ln for ln in _lines(t, 20) if ln][-2:] == ["  conv_fwd+bias+", "  residual+relu"]


@pytest.mark.skipif(not OFFLINE, reason="the offline exploration (no GPU here)")
def test_explore_at_80_columns(tmp_path):
    r = run("explore", "--top", "12", "--json", str(tmp_path / "ex.json"), columns=80)
    assert r.returncode == 0, r.stderr
    _fits(r.stdout, 80)
    ex = Exploration.from_json((tmp_path / "ex.json").read_text())
    words = set(r.stdout.split())
    for result in ex.results[:12]:  # every knob of every row whole: wrapped between knobs, never inside one
        assert set(result.knobs_text().split()) <= words, result.knobs_text()
    header = next(ln for ln in r.stdout.splitlines() if ln.split()[:4] == ["#", "from", "engine", "knobs"])
    if not any(result.reason for result in ex.results[:12]):
        assert "reason" not in header  # empty in every row: its room goes to the knobs
        assert header.index("status") - header.index("knobs") >= 24, header
    for e in ex.engines:  # engine notes whole too (SUPPORTS_CUDA_GRAPH_NATIVE_API is 30 wide)
        for note in e["behavior_notes"]:
            assert note in words, note
    prose = [ln for ln in r.stdout.splitlines() if ln.startswith("knob space:")]
    assert len(prose) == 1 and len(prose[0]) > 70  # a paragraph wrapped to the console, not to a table


@pytest.mark.skipif(not OFFLINE, reason="the offline matrix (no GPU here)")
def test_support_at_80_columns(tmp_path):
    r = run("support", "--device-profile", "h100", "--family", "conv_fwd,conv_dgrad", "--rows", "all",
            "--json", str(tmp_path / "m.json"), columns=80)
    assert r.returncode == 0, r.stderr
    _fits(r.stdout, 80)
    names = {res["name"] for res in json.loads((tmp_path / "m.json").read_text())["results"]}
    words = set(r.stdout.split())
    assert names <= words  # each graph name whole (room taken from columns left out, said under the table)
    assert "columns left out at this width: kinds, first" in " ".join(r.stdout.split())
    caption = next(ln for ln in r.stdout.splitlines() if ln.startswith("supported: "))
    # (9.19 and 9.22 leave some conv_dgrad graphs unknown offline: the cluster layout, tune.offline_gaps)
    assert re.match(r"supported: \d+; refused by stage: (unknown offline \d+, )?heuristics \d+", caption), caption
    legend = [ln for ln in r.stdout.splitlines() if ln.startswith(("summary:", "kinds:"))]
    assert max(len(ln) for ln in legend) > 70  # the legend's prose uses the console's width


@pytest.mark.skipif(not OFFLINE, reason="the offline explanation (no GPU here)")
def test_why_follows_the_width_and_its_output_diffs():
    first = run("why", "conv_bwd_filter", "--device-profile", "h100", columns=80)
    assert first.returncode == 0, first.stderr
    _fits(first.stdout, 80)
    assert not re.search(r"0x[0-9a-f]{6,}", first.stdout)  # cuDNN's pointers masked (cur=<address>)
    again = run("why", "conv_bwd_filter", "--device-profile", "h100", columns=80)
    assert again.stdout == first.stdout  # two runs diff clean
    continued = [ln for ln in first.stdout.splitlines() if ln.startswith("      ") and not ln.startswith("       ")]
    assert continued  # a long reason continues under its indent
    wide = run("why", "conv_bwd_filter", "--device-profile", "h100")  # a log: one line per reason
    assert max(len(ln) for ln in wide.stdout.splitlines()) > 80


def test_info_and_profile_break_paths_at_slashes():
    r = run("info", columns=60)
    assert r.returncode == 0, r.stderr
    _fits(r.stdout, 60)
    found = json.loads(run("info", "--json").stdout)["cudnn_path"]
    rows = r.stdout.splitlines()
    start = next(i for i, ln in enumerate(rows) if ln.split()[:2] == ["cudnn", "path"])
    pieces = [rows[start].split(None, 2)[2].strip()]
    column = rows[start].index(pieces[0])
    for ln in rows[start + 1:]:
        if ln[:column].strip() or not ln.strip():
            break
        pieces.append(ln.strip())
    assert len(pieces) > 1 and "".join(pieces) == found and all(p.endswith("/") for p in pieces[:-1]), pieces
    r = run("profile", "show", "h100", columns=50)
    assert r.returncode == 0, r.stderr
    _fits(r.stdout, 50)
    grid = next(i for i, ln in enumerate(r.stdout.splitlines()) if ln.split()[:1] == ["maxGridSize"])
    assert [ln.strip() for ln in r.stdout.splitlines()[grid:grid + 2]] == [
        "maxGridSize                    [2147483647,", "65535, 65535]"]  # the grid's list broken after a comma


def test_the_install_hint_keeps_its_extra(tmp_path):
    """``support --heatmap`` without matplotlib: the hint's ``[plot]`` is printed, not read as markup; the other
    outputs are written and the exit code says the job failed."""
    code = ("import sys; sys.modules['matplotlib'] = None\n"
            "from cudnn_backend.cli import main\n"
            f"sys.exit(main(['support', '--device-profile', 'h100', '--family', 'matmul', '--dtype', 'fp16', "
            f"'--name', '+relu', '--no-cache', '--heatmap', {str(tmp_path / 'h.png')!r}, "
            f"'--json', {str(tmp_path / 'm.json')!r}]))\n")
    r = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=300)
    assert r.returncode == 1, r.stderr
    line = next(ln for ln in r.stderr.splitlines() if ln.startswith("--heatmap: "))
    assert line == ("--heatmap: plotting needs matplotlib, which is not installed (pip install matplotlib; "
                    "the extra cudnn-backend[plot] brings it: pip install '.[plot]' in the clone); the other outputs "
                    "were written")
    assert (tmp_path / "m.json").exists() and not (tmp_path / "h.png").exists()


def test_messages_print_as_written():
    """Nothing printed is read as rich markup: brackets in messages, paths and reasons stay."""
    out = render.make_console(width=100)
    with out.capture() as captured:
        out.print("pip install '.[plot]' and [bold]not bold[/bold]")
    assert captured.get().strip() == "pip install '.[plot]' and [bold]not bold[/bold]"
    assert _lines(render.Breakable(Text("[gpu]")), 20) == ["[gpu]"]


def test_empty_results_are_one_line_not_an_empty_table(tmp_path):
    cache = tmp_path / "private"
    cache.mkdir(mode=0o700)
    r = run("cache", "list", "--cache", str(cache / "c.sqlite"))
    assert r.returncode == 0, r.stderr
    assert r.stdout.strip() == (f"plan cache {cache / 'c.sqlite'}: 0 entries (`cudnn-backend tune` stores each "
                                "winner there)")
    assert render.headroom([]).plain == "best config found vs heuristics' pick: no graph was timed"


@pytest.mark.skipif(not OFFLINE, reason="the offline commands (no GPU here)")
def test_the_sm_version_reads_the_same_everywhere(tmp_path):
    explored = run("explore", *SMALL, "--no-engines", "--top", "1", "--device-profile", "h100")
    supported = run("support", "--device-profile", "h100", "--family", "matmul", "--dtype", "fp16", "--name",
                    "+relu", "--no-cache")
    assert "(SM 9.0, 132 SMs)" in explored.stdout and "(SM 9.0, offline" in supported.stdout
    assert "SM 90" not in explored.stdout + supported.stdout
