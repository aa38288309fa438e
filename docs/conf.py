"""Sphinx configuration. Build: ``python -m sphinx -W --keep-going -b html docs docs/_build/html``.

The API reference (``reference/_generated/``) and the graph pictures (``_generated/``) are made from the
package at every build by ``_ext/cudnn_docs.py``; nothing generated is committed.
"""
import os
import pathlib
import sys

HERE = pathlib.Path(__file__).resolve().parent
sys.path.insert(0, str(HERE / "_ext"))
if os.environ.get("CUDNN_BACKEND_DOCS_USE_SOURCE", "1") == "1":
    # document the tree the docs live in (an in-place build), not some other installed copy
    sys.path.insert(0, str(HERE.parent))

import cudnn_backend  # noqa: E402

project = "cudnn-backend"
author = "cudnn-backend contributors"
copyright = "the cudnn-backend contributors"
release = cudnn_backend.__version__
version = release

extensions = [
    "sphinx.ext.autodoc",
    "sphinx.ext.intersphinx",
    "sphinx.ext.viewcode",
    "myst_parser",
    "cudnn_docs",
    "support_tables",
]
source_suffix = {".rst": "restructuredtext", ".md": "markdown"}
exclude_patterns = ["_build", "Thumbs.db", ".DS_Store"]
templates_path = []
html_static_path = []
html_theme = "furo"
html_title = f"cudnn-backend {release}"
pygments_style = "default"

autodoc_default_options = {"member-order": "bysource"}
autodoc_docstring_signature = True
autodoc_typehints = "signature"
autodoc_class_signature = "mixed"
autodoc_inherit_docstrings = True
add_module_names = False
python_display_short_literal_types = True
nitpicky = False

myst_heading_anchors = 3
intersphinx_mapping = {}  # offline builds: no inventories fetched
viewcode_follow_imported_members = True
