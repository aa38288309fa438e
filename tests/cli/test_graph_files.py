"""--graph FILE.py:FUNC / module:FUNC as a newcomer writes them: an exception in the user's function is
one line naming the user's file and line (CUDNN_BACKEND_DEBUG=1: the whole traceback), the file imports the modules
beside it, and module:FUNC resolves from the current folder even where sys.path[0] is not it (a console script)."""
import os
import subprocess
import sys
import textwrap

import pytest

from tests.helpers.env import ROOT

GRAPHS = '''\
from helpers_beside import sizes  # a module beside this file


def good():
    from cudnn_backend.patterns import CATALOGUE
    return CATALOGUE["conv_bias_relu"](**sizes(), build=False)


def key_error():
    return {}["missing"]


def value_error():
    raise ValueError("my bad value")


def type_error():
    return len(5)


def assertion():
    assert sizes()["n"] == 2, "n must be 2"


def zero():
    return 1 / 0


def runtime_error():
    raise RuntimeError("my runtime error")


def recursion(n=0):
    return recursion(n + 1)


def takes(n, c, foo, k=8):
    from cudnn_backend.patterns import CATALOGUE
    return CATALOGUE["conv_bias_relu"](n=n, c=c, h=8, w=8, k=k, build=False)
'''
FUNCS = {"key_error": ("KeyError", "'missing'"), "value_error": ("ValueError", "my bad value"),
         "type_error": ("TypeError", "object of type 'int' has no len()"),
         "assertion": ("AssertionError", "n must be 2"), "zero": ("ZeroDivisionError", "division by zero"),
         "runtime_error": ("RuntimeError", "my runtime error"),
         "recursion": ("RecursionError", "maximum recursion depth exceeded")}


@pytest.fixture
def folder(tmp_path):
    (tmp_path / "graphs.py").write_text(GRAPHS)
    (tmp_path / "helpers_beside.py").write_text("def sizes():\n    return dict(n=1, c=8, h=8, w=8, k=8)\n")
    (tmp_path / "broken.py").write_text("import os\n\nvalue = undefined_name\n")
    (tmp_path / "elsewhere").mkdir()
    return tmp_path


def child(code, cwd, env=None):
    """Python code in a child process, the package importable but not the child's folder on sys.path (as for the
    installed console script, whose sys.path[0] is its bin folder)."""
    e = {k: v for k, v in os.environ.items() if k != "CUDNN_BACKEND_DEBUG"}
    e.update(env or {}, PYTHONPATH=str(ROOT))
    return subprocess.run([sys.executable, "-c", textwrap.dedent(code)], capture_output=True, text=True, timeout=300,
                          cwd=cwd, env=e)


CLI = '''
import contextlib, io, json, os, sys
sys.path = [p for p in sys.path if p not in ("", os.getcwd())]  # as the console script runs: not from here
from cudnn_backend.cli import main
out = {}
for args in json.loads(sys.argv[1] if len(sys.argv) > 1 else os.environ["ARGS"]):
    err = io.StringIO()
    with contextlib.redirect_stderr(err), contextlib.redirect_stdout(io.StringIO()):
        try:
            code = main(args)
        except BaseException as e:  # DEBUG re-raises
            import traceback
            traceback.print_exc(file=err)
            code = "raised"
    out[" ".join(args)] = [code, err.getvalue()]
print(json.dumps(out))
'''


def run_all(cwd, argsets, env=None):
    import json

    r = child(CLI, cwd, dict(env or {}, ARGS=json.dumps(argsets)))
    assert r.returncode == 0, r.stderr
    return json.loads(r.stdout.strip().splitlines()[-1])


def test_user_errors_are_one_line_at_the_users_line(folder):
    argsets = [["explore", "--graph", "../graphs.py:" + f, "--no-engines"] for f in FUNCS]
    results = run_all(folder / "elsewhere", argsets)
    lines = GRAPHS.splitlines()
    for f, (kind, message) in FUNCS.items():
        code, err = results[f"explore --graph ../graphs.py:{f} --no-engines"]
        assert code == 1, (f, err)
        assert len(err.strip().splitlines()) == 1 and "Traceback" not in err, err
        prefix = f"cudnn-backend explore: error: {folder / 'graphs.py'}:"
        assert err.startswith(prefix), err
        where, _, rest = err[len(prefix):].partition(": ")
        assert rest.strip() == f"{kind}: {message}", err
        start = next(i for i, ln in enumerate(lines) if ln.startswith(f"def {f}("))  # the user's innermost frame:
        assert start < int(where) - 1 <= start + 2, (f, where)  # the line in FUNC's body that raised
        assert lines[int(where) - 1].strip().startswith(("return", "raise", "assert")), (f, where)


def test_debug_shows_the_whole_traceback(folder):
    (code, err), = run_all(folder, [["explore", "--graph", "graphs.py:key_error"]],
                           env={"CUDNN_BACKEND_DEBUG": "1"}).values()
    assert code == "raised" and "Traceback" in err and "graphs.py" in err and "KeyError: 'missing'" in err
    assert "cudnn_backend" in err  # the package's frames too


def test_sibling_modules_and_module_refs_from_here(folder):
    results = run_all(folder, [["explore", "--graph", "graphs:good", "--no-engines", "--top", "1"],
                               ["explore", "--graph", "graphs.py:good", "--no-engines", "--top", "1"],
                               ["explore", "--graph", "graphs:goood"], ["explore", "--graph", "broken.py:f"],
                               ["explore", "--graph", "no_such_module_here:f"]])
    assert results["explore --graph graphs:good --no-engines --top 1"][0] == 0, results
    assert results["explore --graph graphs.py:good --no-engines --top 1"][0] == 0, results
    code, err = results["explore --graph graphs:goood"]
    assert code == 2 and "'graphs' has no function 'goood'; did you mean good?" in err
    code, err = results["explore --graph broken.py:f"]
    assert code == 2 and f"importing 'broken.py' failed: broken.py:3: NameError: name 'undefined_name'" in err
    code, err = results["explore --graph no_such_module_here:f"]
    assert code == 2 and "cannot import 'no_such_module_here'" in err and str(folder) in err
    # from another folder, the file's own folder still resolves its sibling import
    code, err = run_all(folder / "elsewhere", [["explore", "--graph", "../graphs.py:good", "--top", "1"]]) \
        .popitem()[1]
    assert code == 0, err


def test_a_functions_missing_parameters_name_the_options(folder):
    """FUNC's parameters without a default that the command line leaves out are named with the options that give
    them (not Python's "takes() missing 3 required positional arguments")."""
    from cudnn_backend.cli.args import UsageError, builder_kwargs

    def takes(n, c, foo, *, bar, k=8, build=True):
        return n

    with pytest.raises(UsageError) as e:
        builder_kwargs(takes, "graphs.py:takes", {"c": 4})
    assert str(e.value) == ("graphs.py:takes needs n, foo and bar: give --n N, --param foo=VALUE and "
                            "--param bar=VALUE")
    with pytest.raises(UsageError, match=r"needs n, c, foo and bar: give --param n=VALUE, --param c=VALUE, "):
        builder_kwargs(takes, "graphs.py:takes", {}, size_options=False)  # why: no size options, --param only
    with pytest.raises(UsageError, match=r"^argument --param: graphs.py:takes has no parameter 'h'"):
        builder_kwargs(takes, "graphs.py:takes", {"h": 1}, size_options=False)
    with pytest.raises(UsageError, match=r"^option --h does not apply to graphs.py:takes"):
        builder_kwargs(takes, "graphs.py:takes", {"h": 1})
    assert builder_kwargs(takes, "graphs.py:takes", {"n": 1, "c": 2, "foo": 3, "bar": 4}) == \
        {"n": 1, "c": 2, "foo": 3, "bar": 4}
    results = run_all(folder, [["explore", "--graph", "graphs.py:takes", "--n", "1"],
                               ["explore", "--graph", "graphs.py:takes", "--n", "1", "--c", "8", "--param", "foo=1",
                                "--no-engines", "--top", "1"],
                               ["why", "--graph", "graphs.py:takes", "--param", "n=1"]])
    code, err = results["explore --graph graphs.py:takes --n 1"]
    assert code == 2 and err.strip() == ("cudnn-backend explore: error: graphs.py:takes needs c and foo: give --c N "
                                         "and --param foo=VALUE"), err
    assert results["explore --graph graphs.py:takes --n 1 --c 8 --param foo=1 --no-engines --top 1"][0] == 0, results
    code, err = results["why --graph graphs.py:takes --param n=1"]
    assert code == 2 and err.strip().endswith("graphs.py:takes needs c and foo: give --param c=VALUE and --param "
                                              "foo=VALUE"), err


def test_the_packages_own_builders_are_not_the_users_code():
    """A module:FUNC inside the package (the support catalogue's chain_graph) does not make the package's folder
    the user's: an error raised in the package afterwards is not reported at a package line as the user's."""
    from cudnn_backend.tune import graphs

    graphs.load_builder("cudnn_backend.tune.catalogue:chain_graph")
    try:
        graphs.resolve("conv_fwd", kwargs=dict(n=1, c=6, h=8, w=8, k=8, groups=4))
    except ValueError as e:
        assert graphs.user_frame(e) is None, graphs.user_error_line(e)
        assert graphs.user_error_line(e).startswith("ValueError: groups: 4 must divide c=6")
    else:
        raise AssertionError("conv_fwd with groups=4 and c=6 was accepted")


def test_a_graph_file_or_function_that_exits_is_an_error_of_that_file(folder):
    """sys.exit in a graph file (at import, or in its function) is reported where it happened; it does not end the
    command with the file's own status."""
    (folder / "exits.py").write_text("import sys\n\n\ndef f():\n    sys.exit(4)\n\n\nif True:\n    sys.exit(3)\n")
    (folder / "exits_later.py").write_text("import sys\n\n\ndef f():\n    sys.exit(4)\n")
    results = run_all(folder, [["explore", "--graph", "exits.py:f"], ["explore", "--graph", "exits_later.py:f"]])
    code, err = results["explore --graph exits.py:f"]
    assert code == 2 and "argument --graph: importing 'exits.py' failed: exits.py:9: SystemExit: 3" in err, err
    code, err = results["explore --graph exits_later.py:f"]
    assert code == 1 and err.strip() == ("cudnn-backend explore: error: graph: exits_later.py:f exited: "
                                         "exits_later.py:5: SystemExit: 4"), err
    from cudnn_backend.tune.graphs import load_builder
    with pytest.raises(ValueError, match="importing .*exits.py' failed: .*SystemExit: 3"):
        load_builder(f"{folder / 'exits.py'}:f")
