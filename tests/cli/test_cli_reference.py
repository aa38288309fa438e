"""The command line's reference page (docs/reference/cli.rst) is what tools/make_cli_reference.py makes from the
parser now: every command and action, every option with its help and default, and the exit codes."""
import argparse
import pathlib
import subprocess
import sys

from cudnn_backend.cli.args import build_parser

ROOT = pathlib.Path(__file__).resolve().parent.parent.parent
TOOL = ROOT / "tools" / "make_cli_reference.py"
PAGE = ROOT / "docs" / "reference" / "cli.rst"


def _tool(*args):
    return subprocess.run([sys.executable, str(TOOL), *args], capture_output=True, text=True, timeout=120, cwd=ROOT)


def test_the_page_is_current():
    r = _tool("--check")
    assert r.returncode == 0, f"{r.stderr}: run python tools/make_cli_reference.py"


def test_a_stale_page_is_caught(tmp_path):
    stale = tmp_path / "cli.rst"
    stale.write_text(PAGE.read_text().replace("(default: 25)", "(default: 24)", 1))
    r = _tool("--check", "--out", str(stale))
    assert r.returncode == 1 and "is stale: run python tools/make_cli_reference.py" in r.stderr
    assert _tool("--out", str(stale)).returncode == 0 and stale.read_text() == PAGE.read_text()


def _parsers(parser, prog="cudnn-backend"):
    yield prog, parser
    for action in parser._actions:
        if isinstance(action, argparse._SubParsersAction):
            for name, sub in action.choices.items():
                yield from _parsers(sub, f"{prog} {name}")


def test_every_command_and_option_is_on_the_page():
    page = PAGE.read_text()
    for prog, parser in _parsers(build_parser()):
        assert f".. program:: {prog}\n" in page, prog
        section = page.split(f".. program:: {prog}\n", 1)[1].split(".. program::", 1)[0]
        for action in parser._actions:
            if isinstance(action, argparse._SubParsersAction) or action.help == argparse.SUPPRESS:
                continue
            name = action.option_strings[-1] if action.option_strings else (action.metavar or action.dest)
            assert f".. option:: {name}" in section or f", {name}" in section, (prog, name)
    for code in ("   * - 0\n", "   * - 1\n", "   * - 2\n"):
        assert code in page
    assert "(default: racing)" in page and "(default: 0.25)" in page  # defaults as --help shows them


def test_every_exit_code_has_its_own_row():
    text = PAGE.read_text()
    for code in ("0", "1", "2", "130", "141"):
        assert f"   * - {code}\n     - " in text, code  # (a code of several digits is a row, not a continuation)


def test_a_flag_on_by_default_says_what_its_no_form_does():
    help_text = build_parser()._subparsers._group_actions[0].choices["why"].format_help()
    flat = " ".join(help_text.split())
    assert "--no-minimize explain only; try no variations (by default why looks for the smallest change that makes " \
           "the graph supported) (default: off)" in flat
