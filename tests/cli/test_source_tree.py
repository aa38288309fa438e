"""A clone whose compiled modules are not built, run from its root (where the quick start leaves you): the
source tree shadows any installed copy, and every way in says so in one line with the fix, instead of
``ModuleNotFoundError: No module named 'cudnn_backend.core._descriptor'``. The built tree (this one: the tests
import it) is not affected."""
import os
import re
import pathlib
import shutil
import subprocess
import sys

import pytest

import cudnn_backend

PACKAGE = pathlib.Path(cudnn_backend.__file__).resolve().parent


@pytest.fixture(scope="module")
def clone(tmp_path_factory):
    """The package's sources alone, as a fresh clone has them: no compiled module, no generated C."""
    root = tmp_path_factory.mktemp("clone")
    shutil.copytree(PACKAGE, root / "cudnn_backend",
                    ignore=shutil.ignore_patterns("*.so", "*.c", "*.html", "__pycache__", "build"))
    assert not list((root / "cudnn_backend").rglob("*.so"))
    return root


def _run(args, cwd):
    env = {k: v for k, v in os.environ.items() if k != "PYTHONPATH"}  # as a user runs it: the clone's root first
    return subprocess.run([sys.executable, *args], cwd=cwd, env=env, capture_output=True, text=True, timeout=120)


def _says_the_fix(line, clone):
    assert f"{clone / 'cudnn_backend'} is cudnn-backend's source tree, and its compiled modules are not built" in line
    # the first compiled module the package imports, whichever it is (the core's lowest since the split)
    assert re.search(r"cudnn_backend\.core\.(\w+) has only its source, \1\.pyx", line), line
    assert "python setup.py build_ext --inplace" in line and "pip install -e ." in line


def test_python_m_says_it_in_one_line(clone):
    r = _run(["-m", "cudnn_backend", "info"], clone)
    assert r.returncode == 1 and r.stdout == ""
    lines = r.stderr.strip().splitlines()
    assert len(lines) == 1 and lines[0].startswith("cudnn-backend: error: "), r.stderr
    _says_the_fix(lines[0], clone)


def test_import_says_it_in_the_last_line(clone):
    r = _run(["-c", "import cudnn_backend"], clone)
    assert r.returncode == 1
    last = r.stderr.strip().splitlines()[-1]
    assert last.startswith("ImportError: "), r.stderr
    _says_the_fix(last, clone)
    assert "ModuleNotFoundError" not in r.stderr  # raised in its place, not chained to it
    r = _run(["-c", "import cudnn_backend.core"], clone)  # any module of the package: the package comes first
    assert r.returncode == 1 and "compiled modules are not built" in r.stderr.strip().splitlines()[-1]


def test_only_a_missing_compiled_module_is_reported_so(tmp_path):
    """A built tree missing a plain module (broken, not unbuilt) keeps Python's own error."""
    broken = tmp_path / "broken"
    shutil.copytree(PACKAGE, broken / "cudnn_backend", ignore=shutil.ignore_patterns("*.c", "*.html", "__pycache__"))
    errors = broken / "cudnn_backend" / "errors.py"
    errors.write_text(errors.read_text() + "\nimport cudnn_backend._a_plain_module_gone\n")
    r = _run(["-c", "import cudnn_backend"], broken)
    assert r.returncode == 1
    last = r.stderr.strip().splitlines()[-1]
    assert last == "ModuleNotFoundError: No module named 'cudnn_backend._a_plain_module_gone'", r.stderr


def test_the_built_tree_imports_from_its_root():
    """pytest and ``python -m cudnn_backend`` from the root of a tree built in place (this one) just work."""
    r = _run(["-m", "cudnn_backend", "--version"], PACKAGE.parent)
    assert r.returncode == 0 and r.stdout.strip() == f"cudnn-backend {cudnn_backend.__version__}", r.stderr
