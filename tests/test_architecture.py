"""The architecture, checked: layers import only downward (import-linter on the .py modules, tools/check_layers.py
on the compiled ones), no package import inside a function, stubs current and complete, and a type checker (mypy)
run on a user's script accepts correct typed keywords and flags a misspelled keyword or enumerant."""
import importlib
import inspect
import os
import pathlib
import shutil
import subprocess
import sys
import textwrap

import pytest

ROOT = pathlib.Path(__file__).resolve().parent.parent


def _run(*cmd, timeout=600):
    return subprocess.run(list(cmd), cwd=ROOT, capture_output=True, text=True, timeout=timeout,
                          env=dict(os.environ, PYTHONPATH=str(ROOT)))


def test_import_linter_layers_contract():
    exe = shutil.which("lint-imports", path=os.path.dirname(sys.executable)) or shutil.which("lint-imports")
    if exe is None:
        pytest.skip("import-linter is not installed (it is in the test extra)")
    r = _run(exe, "--no-cache")
    assert r.returncode == 0, r.stdout[-4000:] + r.stderr[-2000:]
    assert "1 kept, 0 broken" in r.stdout


def test_compiled_modules_layers_and_no_function_level_imports():
    r = _run(sys.executable, "tools/check_layers.py")
    assert r.returncode == 0, r.stdout + r.stderr
    assert "0 problem(s)" in r.stderr


def test_check_layers_catches_violations(tmp_path, monkeypatch):
    sys.path.insert(0, str(ROOT / "tools"))
    try:
        import check_layers
    finally:
        sys.path.remove(str(ROOT / "tools"))
    bad = tmp_path / "cudnn_backend" / "core" / "bad.py"
    bad.parent.mkdir(parents=True)
    bad.write_text("import os\n\ndef f():\n    from cudnn_backend.tune import explore\n    return explore\n")
    assert [lineno for lineno, _ in check_layers.function_level_imports(bad)] == [4]
    order = check_layers.layers()
    assert check_layers.layer_of("cudnn_backend.tune.explorer", order)[0] < \
        check_layers.layer_of("cudnn_backend.core._descriptor", order)[0]


def _tree_with(tmp_path, plant=None):
    """A copy of the package's sources (links to the checkout's files) and pyproject.toml; ``plant`` = (file, line):
    that file a real copy with the line added."""
    root = tmp_path / "tree"
    shutil.copytree(ROOT / "cudnn_backend", root / "cudnn_backend", copy_function=os.symlink,
                    ignore=shutil.ignore_patterns("*.so", "*.c", "__pycache__"))
    shutil.copy(ROOT / "pyproject.toml", root / "pyproject.toml")
    if plant is not None:
        path, line = root / plant[0], plant[1]
        text = path.read_text()
        path.unlink()
        path.write_text(text + line + "\n")
    return root


# a circle planted inside core three ways: a cimport in a .pxd, an import in a .pyx, an import in a .py module
PLANTED = [
    ("cudnn_backend/core/_coerce.pxd", "from cudnn_backend.core._tables cimport _READY",
     ["cudnn_backend.core._coerce", "cudnn_backend.core._tables"]),
    ("cudnn_backend/core/_status.pyx", "from cudnn_backend.core import _descriptor",
     ["cudnn_backend.core._descriptor", "cudnn_backend.core._status"]),
    ("cudnn_backend/core/families/_build.py", "from cudnn_backend.core._descriptor import as_int",
     ["cudnn_backend.core._descriptor", "cudnn_backend.core.families._build"]),
]


def test_check_layers_passes_on_the_tree_and_its_copy(tmp_path):
    root = _tree_with(tmp_path)
    r = _run(sys.executable, "tools/check_layers.py", "--root", str(root))
    assert r.returncode == 0 and "0 problem(s)" in r.stderr, r.stdout + r.stderr


@pytest.mark.parametrize("file,line,members", PLANTED, ids=["pxd-cimport", "pyx-import", "py-import"])
def test_check_layers_fails_on_a_circle_planted_inside_core(tmp_path, file, line, members):
    root = _tree_with(tmp_path, (file, line))
    r = _run(sys.executable, "tools/check_layers.py", "--root", str(root))
    assert r.returncode == 1, r.stdout + r.stderr
    circle = [text for text in r.stdout.splitlines() if text.startswith("import circle inside core: ")]
    assert len(circle) == 1, r.stdout
    path = circle[0].split(": ", 1)[1].split(" -> ")
    assert path[0] == path[-1] and set(members) <= set(path), path  # a cycle through both modules


def test_stubs_are_current():
    r = _run(sys.executable, "tools/make_stubs.py", "--check")
    assert r.returncode == 0, r.stdout + r.stderr


COMPILED_MODULES = sorted(".".join(p.relative_to(ROOT).with_suffix("").parts)
                          for p in (ROOT / "cudnn_backend").rglob("*.pyx"))


def test_the_compiled_modules_are_found():
    assert {"cudnn_backend._bindings.cycudnn", "cudnn_backend.core._descriptor", "cudnn_backend.core._coerce",
            "cudnn_backend.typed._classes", "cudnn_backend.runtime._execute"} <= set(COMPILED_MODULES)


@pytest.mark.parametrize("module", COMPILED_MODULES)
def test_every_compiled_module_has_a_stub_naming_its_public_names(module):
    mod = importlib.import_module(module)
    stub = (ROOT / (module.replace(".", "/") + ".pyi")).read_text()
    for name, obj in vars(mod).items():
        if name.startswith("_") or inspect.ismodule(obj):
            continue
        if getattr(obj, "__module__", module) != module:
            continue
        assert f"class {name}" in stub or f"def {name}" in stub or f"{name}:" in stub, f"{module}.{name}"
    assert (ROOT / "cudnn_backend" / "py.typed").exists()


def _mypy(tmp_path, source):
    pytest.importorskip("mypy")
    script = tmp_path / "user_script.py"
    script.write_text(textwrap.dedent(source))
    return _run(sys.executable, "-m", "mypy", "--follow-imports=silent", "--no-incremental", "--cache-dir",
                str(tmp_path / "cache"), str(script))


def test_mypy_accepts_correct_typed_code(tmp_path):
    r = _mypy(tmp_path, """
        import cudnn_backend as cb
        from cudnn_backend.typed import Tensor, OperationConvolutionForward, Convolution
        x = Tensor(unique_id=1, data_type=cb.CUDNN_DATA_HALF, dimensions=[1, 8, 8, 8], strides=[512, 1, 64, 8],
                   byte_alignment=16).finalize()
        conv = Convolution(comp_type=cb.DataType.CUDNN_DATA_FLOAT, conv_mode=cb.CUDNN_CROSS_CORRELATION,
                           spatial_dims=2, pre_paddings=[1, 1], post_paddings=[1, 1], filter_strides=[1, 1],
                           dilations=[1, 1])
        op = OperationConvolutionForward(x=x, conv_desc=conv, alpha=1.0, beta=0.0)
        dims: list[int] | None = x.dimensions
        g = cb.Graph("mine")
        y = g.relu(g.tensor([4, 4]), output=True)
        plan_cls: type = cb.Plan
        ex_cls: type = cb.Exploration
    """)
    assert r.returncode == 0, r.stdout + r.stderr


def test_mypy_flags_a_misspelled_keyword_and_enumerant(tmp_path):
    r = _mypy(tmp_path, """
        import cudnn_backend as cb
        from cudnn_backend.typed import Tensor
        t = Tensor(uniqe_id=1, data_type=cb.CUDNN_DATA_HALF)
        d = cb.CUDNN_DATA_HALFF
        m = cb.PointwiseMode.CUDNN_POINTWISE_RELU_FWDD
        e = cb.explor
    """)
    assert r.returncode == 1
    out = r.stdout
    assert 'Unexpected keyword argument "uniqe_id" for "Tensor"' in out
    assert '"CUDNN_DATA_HALFF"' in out and "CUDNN_POINTWISE_RELU_FWDD" in out and '"explor"' in out


def test_the_wheel_carries_every_package(monkeypatch):
    """setup.py's packages hold every folder of the package with Python modules (a hand-kept list lost
    cudnn_backend.tune.strategies: the installed wheel failed at import, as .ci/wheel found)."""
    import runpy

    import Cython.Build
    import setuptools

    seen = {}
    monkeypatch.setattr(setuptools, "setup", lambda **kw: seen.update(kw))
    monkeypatch.setattr(Cython.Build, "cythonize", lambda extensions, **kw: extensions)
    runpy.run_path(str(ROOT / "setup.py"))
    folders = {".".join(p.relative_to(ROOT).parent.parts) for p in (ROOT / "cudnn_backend").rglob("*.py")
               if "__pycache__" not in p.parts}
    assert "cudnn_backend.tune.strategies" in folders
    assert folders <= set(seen["packages"]), folders - set(seen["packages"])
    assert {"cudnn_backend.data", "cudnn_backend._nodevice"} <= set(seen["packages"])  # data folders too
