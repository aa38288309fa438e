"""The documentation's own Sphinx extension.

* At ``builder-inited`` it writes the API reference from the package (``apiref.write_reference``) into
  ``reference/_generated/``: new public names are picked up by every build.
* ``.. cudnn-graph:: examples/<script>.py <function>`` calls ``<function>()`` of an example script (it
  returns a ``Graph`` or a finalized ``OperationGraph``), draws its ``to_dot()`` with ``dotrender``
  (matplotlib; no Graphviz needed) into ``_generated/`` and shows the picture. The code shown beside
  it is a ``literalinclude`` of the same function, so the labels always match the code.
* At ``builder-inited`` it also checks the command line's reference page, ``reference/cli.rst``, against the
  parser (``tools/make_cli_reference.py --check``): a stale page is a warning, so ``-W`` fails the build.
* At ``builder-inited`` it runs every ``>>>`` example of the pages (``doctests.py``: examples/ on the path, a
  temporary working folder, so the same from any folder); a page whose examples fail is a warning naming it.
* ``autodoc-process-docstring``: a docstring whose reST does not parse cleanly (docstrings are
  written for ``help()`` first) is shown as a literal block instead of breaking a ``-W`` build; the
  names of such docstrings are written to ``_build/plain_docstrings.txt`` for whoever wants to fix them.
"""
from __future__ import annotations

import hashlib
import importlib.util
import io
import pathlib
import re
import sys

from docutils import nodes
from docutils.core import publish_doctree
from docutils.parsers.rst import directives
from docutils.statemachine import StringList
from sphinx.util import logging
from sphinx.util.docutils import SphinxDirective

import apiref
import doctests
import dotrender

PLAIN = []  # dotted names whose docstring was shown as a literal block
logger = logging.getLogger(__name__)


def _generate_reference(app):
    out = pathlib.Path(app.srcdir) / "reference" / "_generated"
    app.env.cudnn_coverage = apiref.write_reference(out)


def _check_cli_reference(app):
    tool = pathlib.Path(app.srcdir).parent / "tools" / "make_cli_reference.py"
    spec = importlib.util.spec_from_file_location("make_cli_reference", tool)
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    page = pathlib.Path(app.srcdir) / "reference" / "cli.rst"
    if not page.exists() or page.read_text(encoding="utf-8") != module.render():
        logger.warning("reference/cli.rst is not what the command line's parser gives now: run python "
                       "tools/make_cli_reference.py")


def _run_doctests(app):
    for page in doctests.pages(app.srcdir):
        failed, attempted, report = doctests.run_page(page)
        if failed:
            logger.warning(f"{page.relative_to(app.srcdir)}: {failed} of {attempted} examples failed:\n{report}")


def _load_example(srcdir, relpath):
    path = (pathlib.Path(srcdir) / ".." / relpath).resolve()
    name = "cudnn_docs_example_" + hashlib.sha1(str(path).encode()).hexdigest()[:10]
    if name in sys.modules:
        return sys.modules[name], path
    spec = importlib.util.spec_from_file_location(name, path)
    module = importlib.util.module_from_spec(spec)
    sys.modules[name] = module
    spec.loader.exec_module(module)
    return module, path


class CudnnGraph(SphinxDirective):
    """``.. cudnn-graph:: examples/x.py function``: the picture of the graph that function builds."""

    required_arguments = 2
    option_spec = {"alt": directives.unchanged, "caption": directives.unchanged, "width": directives.unchanged}

    def run(self):
        relpath, function = self.arguments
        module, path = _load_example(self.env.srcdir, relpath)
        self.env.note_dependency(str(path))
        graph = getattr(module, function)()
        dot = graph.to_dot()
        digest = hashlib.sha1(dot.encode()).hexdigest()[:12]
        outdir = pathlib.Path(self.env.srcdir) / "_generated"
        outdir.mkdir(exist_ok=True)
        png = outdir / f"{path.stem}-{function}-{digest}.png"
        if not png.exists():
            dotrender.render(dot, png)
        rel = "/_generated/" + png.name
        caption = self.options.get("caption", f"``{function}()``: ``to_dot()`` drawn by docs/_ext/dotrender.py "
                                               "(virtual tensors dashed)")
        text = [f".. figure:: {rel}", f"   :alt: {self.options.get('alt', 'operation graph')}"]
        if "width" in self.options:
            text.append(f"   :width: {self.options['width']}")
        text += ["", f"   {caption}"]
        node = nodes.container()
        self.state.nested_parse(StringList(text, source=str(path)), self.content_offset, node)
        literal = nodes.literal_block(dot, dot, language="text")
        details = nodes.container(classes=["cudnn-dot"])
        details += nodes.paragraph("", "", nodes.Text("The DOT it draws:"))
        details += literal
        return node.children + [details]


def _parses_cleanly(text: str) -> bool:
    """Whether plain docutils reads ``text`` (with its transforms: references, substitutions) without a
    warning. Sphinx's own roles are mapped to plain literals first (docutils does not know them)."""
    probe = re.sub(r":(?:py:)?(?:class|func|meth|mod|attr|data|exc|obj|doc|ref|const):`([^`]*)`", r"``\1``", text)
    stream = io.StringIO()
    try:
        publish_doctree(probe, settings_overrides={"report_level": 2, "halt_level": 5, "warning_stream": stream,
                                                   "file_insertion_enabled": False, "raw_enabled": False})
    except Exception:  # noqa: BLE001
        return False
    return not stream.getvalue().strip()


_EMBEDDED_SIGNATURE = re.compile(r"^[A-Za-z_][\w.]*\(.*\)(\s*->\s*.+)?$")


def _process_docstring(app, what, name, obj, options, lines):
    if not lines:
        return
    if what in ("method", "function") and _EMBEDDED_SIGNATURE.match(lines[0]) and \
            lines[0].split("(")[0].split(".")[-1] != name.split(".")[-1]:
        # Cython's embedded signature of the function this name is another name for (Graph.pool = resample)
        del lines[0]
        while lines and not lines[0].strip():
            del lines[0]
    if what in ("data", "attribute") and not isinstance(obj, type) and not callable(obj) and \
            getattr(obj, "__doc__", None) and obj.__doc__ == type(obj).__doc__:
        # an instance without a docstring of its own would show its type's (dict(), ...): say what it is
        size = f" of {len(obj)} entries" if hasattr(obj, "__len__") else ""
        lines[:] = [f"A ``{type(obj).__name__}``{size}.", ""]
        return
    text = "\n".join(lines)
    if _parses_cleanly(text):
        return
    PLAIN.append(name)
    lines[:] = ["::", ""] + ["    " + ln for ln in lines] + [""]


def _write_plain(app, exception):
    if exception is not None:
        return
    out = pathlib.Path(app.outdir).parent / "plain_docstrings.txt"
    try:
        out.write_text("\n".join(sorted(set(PLAIN))) + "\n", encoding="utf-8")
    except OSError:
        pass


def _process_signature(app, what, name, obj, options, signature, return_annotation):
    """Cython's embedded signatures of methods start with ``self``: drop it, as for Python methods."""
    if what == "method" and signature and re.match(r"^\(self\b", signature):
        signature = "(" + re.sub(r"^\(self\s*,?\s*", "", signature)
    return signature, return_annotation


def setup(app):
    app.connect("builder-inited", _generate_reference)
    app.connect("builder-inited", _check_cli_reference)
    app.connect("builder-inited", _run_doctests)
    app.connect("autodoc-process-signature", _process_signature)
    app.connect("autodoc-process-docstring", _process_docstring)
    app.connect("build-finished", _write_plain)
    app.add_directive("cudnn-graph", CudnnGraph)
    return {"version": "1", "parallel_read_safe": False, "parallel_write_safe": True}
