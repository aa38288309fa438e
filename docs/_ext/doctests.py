"""Every ``>>>`` example of the documentation's pages, run the one way: by the docs build (``cudnn_docs``, a failing
example is a warning, so ``sphinx -W`` fails) and by ``tests/test_docs.py``.

A page's examples run in a fresh namespace with ``examples/`` first on ``sys.path`` (``import conv_bias_relu as
example``) in a temporary working folder, so they give the same from any folder the build or the tests start in,
and leave nothing behind. Output is compared with ``ELLIPSIS`` and ``NORMALIZE_WHITESPACE``.
"""
from __future__ import annotations

import contextlib
import doctest
import io
import os
import pathlib
import sys
import tempfile

DOCS = pathlib.Path(__file__).resolve().parent.parent
EXAMPLES = DOCS.parent / "examples"
FLAGS = doctest.ELLIPSIS | doctest.NORMALIZE_WHITESPACE


def pages(docs=DOCS) -> list:
    """The pages (reST and Markdown) that hold ``>>>`` examples, generated ones and build outputs left out."""
    out = []
    for path in sorted(pathlib.Path(docs).rglob("*")):
        parts = path.relative_to(docs).parts
        if path.suffix in (".rst", ".md") and not {"_build", "_generated"} & set(parts) and \
                ">>> " in path.read_text(encoding="utf-8"):
            out.append(path)
    return out


def run_page(page) -> tuple:
    """(failed, attempted, report) of the examples of ``page``; ``report`` is doctest's account of the failures."""
    report = io.StringIO()
    here = os.getcwd()
    path = list(sys.path)
    with tempfile.TemporaryDirectory(prefix="cudnn-backend-doctest-") as work:
        sys.path.insert(0, str(EXAMPLES))
        os.chdir(work)
        try:
            with contextlib.redirect_stdout(report):
                result = doctest.testfile(str(page), module_relative=False, optionflags=FLAGS, verbose=False,
                                          report=True, raise_on_error=False, encoding="utf-8")
        finally:
            os.chdir(here)
            sys.path[:] = path
    return result.failed, result.attempted, report.getvalue()
