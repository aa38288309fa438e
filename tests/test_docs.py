"""The documentation: the API reference covers every public name, every example runs offline, every ``>>>``
example of the guide gives what the page says, the README's picture is drawn from its snippet, and public
functions have docstrings (``help()`` never shows source comments instead).

The site is built here too, with warnings as errors (``python -m sphinx -W -b html docs OUT``, about a minute),
and its index (``objects.inv``) checked against the generated reference.
"""
from __future__ import annotations

import importlib
import inspect
import os
import pathlib
import pydoc
import re
import struct
import subprocess
import sys
import zlib

import pytest

import cudnn_backend as cb

ROOT = pathlib.Path(__file__).resolve().parent.parent
DOCS = ROOT / "docs"
EXAMPLES = ROOT / "examples"
GUIDE_PAGES = sorted((DOCS / "guide").glob("*.rst"))
EXAMPLE_SCRIPTS = sorted(EXAMPLES.glob("*.py"))
# layers still being written: their lazy names may not import yet (the reference lists them as such)
UNWRITTEN_LAYERS: tuple = ()


@pytest.fixture(scope="module")
def apiref():
    return _docs_extension("apiref")


@pytest.fixture(scope="module")
def reference(apiref):
    pages, coverage = apiref.generate()
    return pages, coverage


# --- the API reference -----------------------------------------------------------------------------

def _unwritten(name: str) -> bool:
    lazy = getattr(cb, "_LAZY", {})
    short = name.split(".", 1)[1] if name.startswith("cudnn_backend.") else name
    target = lazy.get(short, (name, None))[0]
    return target.startswith(UNWRITTEN_LAYERS) or name.startswith(UNWRITTEN_LAYERS)


def test_reference_covers_every_public_name(reference, apiref):
    pages, cov = reference
    missing = []
    for name in apiref.toplevel_names():
        path = f"cudnn_backend.{name}"
        if not cov.covers(path) and path not in cov.unavailable:
            missing.append(path)
    assert not missing, f"public names missing from the API reference: {missing}"


def test_only_unwritten_layers_are_unavailable(reference):
    _, cov = reference
    broken = {name: why for name, why in cov.unavailable.items() if not _unwritten(name)}
    assert not broken, f"public names that do not import (the reference cannot document them): {broken}"


def test_every_enumerant_and_enum_is_listed(reference, apiref):
    pages, cov = reference
    enumerants = [n for n in dir(cb) if n.startswith("CUDNN_") and hasattr(getattr(cb, n), "name")]
    assert len(enumerants) > 500
    assert set(enumerants) <= set(cov.enumerants), sorted(set(enumerants) - set(cov.enumerants))[:20]
    for cls, c_name in apiref.enum_classes().items():
        assert cov.documented.get(f"cudnn_backend.{cls.__name__}") == "enums"
        assert cov.linked.get(f"cudnn_backend.{c_name}") == f"cudnn_backend.{cls.__name__}"
        for name in cls.__members__:
            assert f"* - {name}" in pages["enums"], name


def test_every_typed_class_lists_its_keywords_and_attributes(reference, apiref):
    pages, cov = reference
    text = pages["typed_classes"]
    classes = apiref.typed_classes()
    assert len(classes) >= 51
    for cls in classes:
        assert cov.documented.get(f"cudnn_backend.typed.{cls.__name__}") == "typed_classes", cls.__name__
        section = text.split(f".. py:class:: cudnn_backend.typed.{cls.__name__}(", 1)[1].split(".. py:class::", 1)[0]
        for keyword, attribute in cls.KEYWORDS.items():
            assert f"``{keyword}``" in section and f"``{attribute.name}``" in section, (cls.__name__, keyword)


def test_every_graph_method_is_documented(reference):
    _, cov = reference
    names = [n for n in dir(cb.Graph) if not n.startswith("_")]
    assert {"conv_fwd", "conv_bwd_data", "conv_bwd_filter", "matmul", "pointwise", "table", "to_dot", "build"} <= set(names)
    missing = [n for n in names if not cov.covers(f"cudnn_backend.Graph.{n}")]
    assert not missing, f"Graph members missing from the reference: {missing}"


def test_layer_modules_are_documented(reference, apiref):
    pages, cov = reference
    for layer in apiref.LAYERS:
        for module_name, module in apiref.layer_modules(layer):
            if isinstance(module, Exception):
                assert _unwritten(module_name), f"{module_name} does not import: {module}"
                continue
            assert module_name in cov.modules
            for name in apiref.module_public(module):
                path = f"{module_name}.{name}"
                value = getattr(module, name, None)
                if name.startswith("CUDNN_") or (value is None and path in cov.unavailable):
                    continue
                assert cov.covers(path) or path in cov.unavailable, path


@pytest.fixture(scope="module")
def built_docs(tmp_path_factory):
    """``sphinx-build -W`` (warnings are errors) of the whole site, once per run (about a minute)."""
    if os.environ.get("CI") != "true":
        pytest.importorskip("sphinx", reason="the docs extra is not installed (pip install -e '.[docs]')")
        pytest.importorskip("furo")
    out = tmp_path_factory.mktemp("docs") / "html"
    run = subprocess.run([sys.executable, "-m", "sphinx", "-W", "--keep-going", "-q", "-b", "html", str(DOCS),
                          str(out)], cwd=ROOT, env=_env(), capture_output=True, text=True, timeout=900)
    return run, out


def test_sphinx_build_warnings_as_errors(built_docs):
    run, out = built_docs
    assert run.returncode == 0, f"sphinx-build -W failed:\n{run.stdout[-3000:]}\n{run.stderr[-6000:]}"
    assert (out / "index.html").exists() and (out / "guide" / "explore.html").exists()


def test_built_inventory(reference, built_docs):
    """The built index (objects.inv) holds every name the generated reference documents."""
    run, out = built_docs
    inv = out / "objects.inv"
    if run.returncode != 0 or not inv.exists():
        pytest.fail("the docs did not build (see test_sphinx_build_warnings_as_errors)")
    inventory = pytest.importorskip("sphinx.util.inventory")
    with open(inv, "rb") as f:
        data = inventory.InventoryFile.load(f, "", lambda base, uri: uri)
    names = set()
    for role, entries in (data.data.items() if hasattr(data, "data") else data.items()):
        if role.startswith("py:"):
            names.update(entries)
    _, cov = reference
    missing = [n for n in cov.documented if n not in names]
    assert not missing, f"documented in the generated reference but not in the built inventory: {missing[:20]}"


# --- examples and the guide ------------------------------------------------------------------------

def _env():
    env = dict(os.environ)
    env["PYTHONPATH"] = os.pathsep.join([str(ROOT), env.get("PYTHONPATH", "")]).rstrip(os.pathsep)
    env.setdefault("MPLBACKEND", "Agg")
    return env


@pytest.mark.parametrize("script", EXAMPLE_SCRIPTS, ids=[p.stem for p in EXAMPLE_SCRIPTS])
def test_example_runs(script):
    """Every example exits 0 here (offline: the GPU parts say what they skipped)."""
    run = subprocess.run([sys.executable, str(script)], cwd=ROOT, env=_env(), capture_output=True, text=True,
                         timeout=600)
    assert run.returncode == 0, f"{script.name} failed (exit {run.returncode}):\n{run.stdout[-4000:]}\n" \
                                f"{run.stderr[-4000:]}"
    assert run.stdout.strip(), f"{script.name} printed nothing"


def test_every_example_is_in_the_guide():
    text = "\n".join(p.read_text() for p in GUIDE_PAGES)
    for script in EXAMPLE_SCRIPTS:
        if script.stem.startswith("_"):
            continue
        assert f"examples/{script.name}" in text, f"{script.name} is not shown in any guide chapter"


def test_literalinclude_markers_exist():
    """Every ``:start-after:``/``:end-before:`` marker a guide page names is in its example."""
    for page in GUIDE_PAGES:
        text = page.read_text()
        for m in re.finditer(r"\.\. literalinclude:: (\S+)\n((?:\s+:[\w-]+:.*\n)*)", text):
            source = (page.parent / m.group(1)).resolve()
            assert source.exists(), f"{page.name}: {m.group(1)} does not exist"
            body = source.read_text()
            for option in re.findall(r":(?:start-after|end-before): (.+)", m.group(2)):
                assert option.strip() in body, f"{page.name}: marker {option!r} not in {source.name}"


def _docs_extension(name):
    """A module of docs/_ext, imported the way Sphinx finds it."""
    sys.path.insert(0, str(DOCS / "_ext"))
    try:
        return importlib.import_module(name)
    finally:
        sys.path.remove(str(DOCS / "_ext"))


@pytest.fixture(scope="module")
def doctests():
    return _docs_extension("doctests")


def test_every_page_with_examples_is_a_guide_page(doctests):
    assert set(doctests.pages()) <= set(GUIDE_PAGES) and len(doctests.pages()) >= 10


@pytest.mark.parametrize("page", GUIDE_PAGES, ids=[p.stem for p in GUIDE_PAGES])
def test_guide_doctests(page, doctests, monkeypatch, tmp_path):
    """The ``>>>`` examples of each guide chapter give the output the page shows, run as the docs build runs them,
    from a folder that is neither the root nor examples/ (nothing on sys.path for them)."""
    monkeypatch.chdir(tmp_path)
    # a test before may have loaded an example as a user's graph file (graphs.load_file_module puts its folder first
    # on sys.path, as documented): taken off for this page
    monkeypatch.setattr(sys, "path", [p for p in sys.path if p != str(EXAMPLES)])
    failed, attempted, report = doctests.run_page(page)
    assert failed == 0, f"{failed} of {attempted} examples of {page.name} failed:\n{report}"
    assert pathlib.Path.cwd() == tmp_path and not list(tmp_path.iterdir())  # nothing written here


# --- pictures ----------------------------------------------------------------------------------------

def _readme_snippet() -> str:
    text = (ROOT / "README.md").read_text()
    blocks = re.findall(r"```python\n(.*?)```", text, flags=re.S)
    block = next(b for b in blocks if "to_dot()" in b)
    return block


def readme_blocks(language="python") -> list:
    """The README's code blocks of ``language``, in order."""
    return re.findall(rf"```{language}\n(.*?)```", (ROOT / "README.md").read_text(), flags=re.S)


def test_readme_first_example_runs_offline_as_written(tmp_path, monkeypatch, capsys):
    """The README's first Python block runs on a machine without a GPU, as written (``device_profile=``); the GPU
    block after it is run by tests/gpu/runtime/test_readme_gpu.py."""
    monkeypatch.chdir(tmp_path)
    first, gpu = readme_blocks()[:2]
    assert 'device_profile="h200"' in first and "cb.Handle()" not in first and "torch" not in first
    assert "cb.Handle()" in gpu and "cb.memory.allocate" in gpu
    namespace = {}
    exec(compile(first, "README.md", "exec"), namespace)  # noqa: S102 - our own README
    plan, ex = namespace["plan"], namespace["ex"]
    assert isinstance(plan, cb.Plan) and plan.engine_index is not None
    assert ex.chosen is not None and not ex.timed and ex.device["name"] == "NVIDIA H200"
    out = capsys.readouterr().out
    assert ex.chosen.config_text() in out


def _png_text(path) -> dict:
    data = pathlib.Path(path).read_bytes()
    assert data[:8] == b"\x89PNG\r\n\x1a\n"
    out, pos = {}, 8
    while pos < len(data):
        (length,) = struct.unpack(">I", data[pos:pos + 4])
        kind = data[pos + 4:pos + 8]
        body = data[pos + 8:pos + 8 + length]
        if kind == b"tEXt":
            key, _, value = body.partition(b"\0")
            out[key.decode("latin-1")] = value.decode("latin-1")
        elif kind == b"zTXt":
            key, _, rest = body.partition(b"\0")
            out[key.decode("latin-1")] = zlib.decompress(rest[1:]).decode("latin-1")
        pos += 12 + length
    return out


def test_readme_picture_is_drawn_from_its_snippet(tmp_path, monkeypatch):
    """docs/conv_bias_relu.dot is what the README's snippet's to_dot() gives now, and the PNG was drawn from it
    (regenerate both with ``python docs/_ext/dotrender.py --readme``)."""
    monkeypatch.chdir(tmp_path)
    namespace = {}
    exec(compile(_readme_snippet(), "README.md", "exec"), namespace)  # noqa: S102 - our own README
    dot_now = namespace["op_graph"].to_dot()
    committed = (DOCS / "conv_bias_relu.dot").read_text()
    assert committed == dot_now, "README snippet and docs/conv_bias_relu.dot differ: python docs/_ext/dotrender.py --readme"
    sys.path.insert(0, str(DOCS / "_ext"))
    try:
        import dotrender
    finally:
        sys.path.remove(str(DOCS / "_ext"))
    assert _png_text(DOCS / "conv_bias_relu.png").get("Source-SHA1") == dotrender.digest(committed), \
        "docs/conv_bias_relu.png was not drawn from docs/conv_bias_relu.dot: python docs/_ext/dotrender.py --readme"


def test_dot_parser_reads_to_dot():
    sys.path.insert(0, str(DOCS / "_ext"))
    try:
        import dotrender
    finally:
        sys.path.remove(str(DOCS / "_ext"))
    g = dotrender.parse((DOCS / "conv_bias_relu.dot").read_text())
    assert len(g.nodes) == 9 and len(g.edges) == 8
    layers = dotrender.layout(g)
    assert layers["op0"][0] < layers["op1"][0] < layers["op2"][0]


# --- docstrings --------------------------------------------------------------------------------------

# Public members without a docstring in the three compiled files being reworked elsewhere
# (core/_descriptor.pyx, typed/_base.pyx, graph/_core.pyx): listed in the docs work's report.
KNOWN_UNDOCUMENTED = {
    "Descriptor.closed", "Descriptor.descriptor_type", "Descriptor.finalized", "Handle.closed", "Handle.device",
    "Graph.built", "Graph.uids_used",
    # runtime/execution.py is being changed in the main tree: docstrings for these after that lands
    "CudaGraph.closed", "CudaGraph.graph_exec", "CudaGraph.node_types",
}


def _public_callables():
    seen = set()
    for name in dir(cb):
        if name.startswith(("_", "CUDNN_", "cudnn")):
            continue
        try:
            value = getattr(cb, name)
        except Exception:  # noqa: BLE001 - an unwritten layer
            continue
        if inspect.ismodule(value) or id(value) in seen:
            continue
        if isinstance(value, type) and issubclass(value, int) and hasattr(value, "__members__"):
            continue  # enums: generated, named by their C type
        seen.add(id(value))
        if inspect.isroutine(value) or inspect.isclass(value):
            yield name, value
            if inspect.isclass(value) and not issubclass(value, BaseException):
                for attr, member in vars(value).items():
                    if not attr.startswith("_"):
                        yield f"{name}.{attr}", getattr(value, attr, member)
    for attr in dir(cb.Graph):
        if not attr.startswith("_"):
            yield f"Graph.{attr}", inspect.getattr_static(cb.Graph, attr)


def test_public_functions_have_docstrings():
    missing, comments = [], []
    for name, value in _public_callables():
        if type(value).__name__ in ("Keyword",) or not (callable(value) or isinstance(value, property)
                                                         or type(value).__name__ == "getset_descriptor"):
            continue
        own = inspect.getdoc(value) or ""
        own = "\n".join(ln for ln in own.splitlines() if not re.match(r"^[\w.]+\(.*\)( -> .*)?$", ln)).strip()
        if not own and name not in KNOWN_UNDOCUMENTED and not name.endswith(("_data_type", ".name", ".tensors",
                                                                               ".operations", ".op_graph")):
            missing.append(name)
        shown = pydoc.getdoc(value) or ""
        if shown.lstrip().startswith("#"):
            comments.append(name)
    assert not comments, f"help() shows source comments as the documentation of: {comments}"
    assert not missing, f"public functions without a docstring: {missing}"


def _code_blocks(page) -> list:
    """The ``.. code-block:: python`` blocks of a guide page, dedented, in order."""
    import textwrap

    text = (DOCS / "guide" / page).read_text()
    return [textwrap.dedent(m.group(1)) for m in re.finditer(r"\.\. code-block:: python\n\n((?:(?:   .*)?\n)+)", text)]


def test_newer_releases_code_runs_offline_where_the_release_has_it(tmp_path, monkeypatch):
    """The chapter's blocks (no ``>>>`` output: what they give depends on the release) run as written, each from the
    release that has its operation on; the last needs a GPU, as its text says."""
    monkeypatch.chdir(tmp_path)
    band_mask, mode, overrides = _code_blocks("newer_releases.rst")
    assert "handle" in overrides  # (on a GPU: tests/gpu)
    namespace = {}
    if cb.get_version() < 92000:
        pytest.skip("diagonal_band_mask needs cuDNN 9.20")
    exec(compile(band_mask, "newer_releases.rst: band mask", "exec"), namespace)
    assert namespace["plan"].workspace_size is not None
    if cb.get_version() >= 92300:
        exec(compile(mode, "newer_releases.rst: mode", "exec"), namespace)
        assert namespace["og"].get(cb.CUDNN_ATTR_OPERATIONGRAPH_MODE, cb.CUDNN_TYPE_OPERATIONGRAPH_MODE) == \
            [cb.OperationGraphMode.CUDNN_OPERATIONGRAPH_MODE_BLAS_MATMUL]
