"""The API reference, generated from the package itself (no Sphinx needed here).

``write_reference(outdir)`` writes one reST page per part of the API into ``outdir`` and returns a
``Coverage``: which public name is documented where, which is only a link to the place it is
documented (the same object under another name), and which could not be imported (a layer still
being written). ``tests/test_docs.py`` checks that coverage against the package, without building
the HTML; ``docs/conf.py`` calls it at every build, so a new public name is picked up by itself.

What counts as public:

* ``cudnn_backend``: every name of ``dir(cudnn_backend)`` that does not start with ``_``. The
  enumerants (``CUDNN_*``, one module attribute per C enumerant) are listed in the table of their
  enum class on the enums page, not documented one by one;
* every enum class of ``cudnn_backend._bindings.enums`` and its C typedef alias (``cudnnDataType_t``);
* every generated class of ``cudnn_backend.typed``, with its keywords and the cuDNN attribute
  each one sets (from the class's ``KEYWORDS`` and ``ATTRIBUTES``);
* every public method and property of ``Graph``, grouped by operation family;
* the public names (``__all__``, else the functions and classes a module defines) of every layer
  package (errors, core, typed, graph, runtime, reference, patterns, tune, cli) and of their public modules.
"""
from __future__ import annotations

import dataclasses
import enum
import importlib
import inspect
import pathlib
import pkgutil
import textwrap
import types

LAYERS = ("errors", "core", "typed", "graph", "runtime", "reference", "patterns", "tune", "cli")
LAYER_TITLES = {
    "errors": "Errors",
    "core": "Core: descriptors, handles, logging, schema, versions",
    "typed": "Typed layer: helpers and introspection",
    "graph": "Graph layer: shapes, checks and the operation families",
    "runtime": "Runtime: profiles, engines, heuristics, plans, execution, memory",
    "reference": "Reference: the fp64 evaluator of operation graphs",
    "patterns": "Patterns",
    "tune": "Tune: explore, autotune, plan cache, benchmarks",
    "cli": "Command line",
}
# names the tune layer will export (cudnn_backend._LAZY points at them); until that layer exists they
# cannot be imported, and the reference says so instead of failing the build.
PAGES = ("toplevel", "graph_class", "typed_classes", "enums", *[f"layer_{layer}" for layer in LAYERS])


@dataclasses.dataclass
class Coverage:
    """Where every public name went. Keys are dotted names (``cudnn_backend.Plan``)."""

    documented: dict = dataclasses.field(default_factory=dict)   # name -> page
    linked: dict = dataclasses.field(default_factory=dict)       # name -> the documented name it links to
    enumerants: dict = dataclasses.field(default_factory=dict)   # C name -> enum class name
    unavailable: dict = dataclasses.field(default_factory=dict)  # name -> why it could not be imported
    modules: dict = dataclasses.field(default_factory=dict)      # module name -> page

    def covers(self, name: str) -> bool:
        return name in self.documented or name in self.linked or name in self.modules


# ---------------------------------------------------------------------------------------------
# what is public
# ---------------------------------------------------------------------------------------------
def _is_enumerant(name, value) -> bool:
    return name.startswith("CUDNN_") and isinstance(value, enum.Enum)


def toplevel_names() -> list:
    """Public names of ``cudnn_backend`` (enumerants left out: they are listed with their enum)."""
    import cudnn_backend

    out = []
    for name in dir(cudnn_backend):
        if name.startswith("_"):
            continue
        value = getattr(cudnn_backend.__dict__, "get")(name, None)
        if value is not None and _is_enumerant(name, value):
            continue
        out.append(name)
    return out


def enum_classes() -> dict:
    """{enum class: C typedef name} of every enum in cudnn_backend._bindings.enums."""
    from cudnn_backend._bindings import enums

    return dict(enums.ENUM_TYPES)


def typed_classes() -> list:
    """The generated typed classes, in the order of ``typed._classes.__all__``."""
    from cudnn_backend.typed import _classes

    return [getattr(_classes, n) for n in _classes.__all__]


def module_public(module) -> list:
    """``__all__``, else the classes and functions the module defines (not imported ones)."""
    names = getattr(module, "__all__", None)
    if names is not None:
        return list(dict.fromkeys(names))
    out = []
    for name, value in vars(module).items():
        if name.startswith("_"):
            continue
        if (inspect.isclass(value) or inspect.isroutine(value)) and getattr(value, "__module__", None) == module.__name__:
            out.append(name)
    return out


def layer_modules(layer: str) -> list:
    """(module name, module or the import error) for the layer package and its public modules."""
    name = f"cudnn_backend.{layer}"
    try:
        package = importlib.import_module(name)
    except Exception as e:  # noqa: BLE001 - reported on the page
        return [(name, e)]
    out = [(name, package)]
    path = getattr(package, "__path__", None)
    if path is None:
        return out
    for info in sorted(pkgutil.iter_modules(path), key=lambda i: i.name):
        if info.name.startswith("_"):
            continue
        sub = f"{name}.{info.name}"
        try:
            out.append((sub, importlib.import_module(sub)))
        except Exception as e:  # noqa: BLE001
            out.append((sub, e))
    return out


def graph_members() -> dict:
    """{family title: [member names]} of ``Graph``: the core's members, then each operation family's."""
    from cudnn_backend.graph import Graph

    families = {}
    taken = set()
    for klass in Graph.__mro__:
        if klass is object:
            continue
        names = [n for n in vars(klass) if not n.startswith("_") and n not in taken]
        if not names:
            continue
        taken.update(names)
        families[klass] = names
    return families


# ---------------------------------------------------------------------------------------------
# reST helpers
# ---------------------------------------------------------------------------------------------
def _title(text, char="=") -> str:
    return f"{text}\n{char * len(text)}\n"


def _kind(value) -> str:
    if isinstance(value, types.ModuleType):
        return "module"
    if inspect.isclass(value):
        if issubclass(value, BaseException):
            return "exception"
        return "class"
    if inspect.isroutine(value) or callable(value) and not isinstance(value, (int, str, float, tuple, list, dict)):
        return "function"
    return "data"


def _identity(value):
    """What makes two names the same documented object (None for plain constants, documented per name)."""
    if isinstance(value, types.ModuleType):
        return ("module", value.__name__)
    if inspect.isclass(value) or inspect.isroutine(value):
        return ("object", id(value))
    if value is None or isinstance(value, (bool, int, float, str, bytes, tuple, frozenset)):
        return None  # interned or equal-by-value constants: each name documents its own
    return ("object", id(value))


def _directive(kind, path, options=()) -> str:
    name = {"class": "autoclass", "exception": "autoexception", "function": "autofunction",
            "data": "autodata"}[kind]
    lines = [f".. {name}:: {path}"]
    lines += [f"   :{o}:" for o in options]
    return "\n".join(lines) + "\n"


def _class_options(value) -> tuple:
    return ("members", "show-inheritance")


def _short_doc(value) -> str:
    doc = inspect.getdoc(value) or ""
    lines = [ln for ln in doc.splitlines() if ln.strip()]
    # embedded Cython signatures ("Name(self, ...)") are not prose
    while lines and "(" in lines[0] and lines[0].split("(")[0].split(".")[-1].strip() in (
            getattr(value, "__name__", ""), "__init__"):
        lines = lines[1:]
    return lines[0].strip() if lines else ""


class _Writer:
    def __init__(self, coverage: Coverage):
        self.coverage = coverage
        self.where = {}  # identity -> documented dotted name

    def claim(self, identity, path, page) -> str | None:
        """Record ``path`` as documented on ``page``; returns the earlier name if already documented."""
        if identity is not None and identity in self.where:
            self.coverage.linked[path] = self.where[identity]
            return self.where[identity]
        if identity is not None:
            self.where[identity] = path
        self.coverage.documented[path] = page
        return None

    def entry(self, module_path, name, value, page) -> str:
        """The reST documenting ``module_path.name`` (or a link to where it is documented)."""
        path = f"{module_path}.{name}"
        kind = _kind(value)
        if kind == "module":
            target = value.__name__
            self.coverage.linked[path] = target
            return f"* ``{name}``: the module :mod:`{target}`\n"
        earlier = self.claim(_identity(value), path, page)
        if earlier is not None:
            role = {"class": "class", "exception": "exc", "function": "func", "data": "data"}[kind]
            return f"* ``{name}``: the same object as :py:{role}:`{earlier}`\n"
        if kind in ("class", "exception"):
            return _directive(kind, path, _class_options(value))
        if kind == "data":
            return _directive("data", path, ("no-value",))
        return _directive(kind, path)


# ---------------------------------------------------------------------------------------------
# pages
# ---------------------------------------------------------------------------------------------
def _enum_page(w: _Writer) -> str:
    from cudnn_backend._bindings import enums

    out = [".. This page is generated by docs/_ext/apiref.py at every build: do not edit.\n",
           _title("Enums and enumerants"),
           "Every enum of ``cudnn_graph.h`` is an :class:`enum.IntEnum` named without the ``cudnn``/``Backend`` "
           "prefix and the ``_t`` suffix, and is also a module attribute under its C typedef name "
           "(``cudnn_backend.cudnnDataType_t is cudnn_backend.DataType``). **Every enumerant is a module "
           "attribute under its exact C name** (``cudnn_backend.CUDNN_DATA_HALF``, also exported by "
           "``from cudnn_backend import *``): the tables below list them all, with the cuDNN version that "
           "introduced each (the loaded cuDNN may be older: :func:`cudnn_backend.check_available`).\n",
           f"The enums were generated from ``cudnn_graph.h`` {enums.HEADER_VERSION}.\n"]
    for cls, c_name in enum_classes().items():
        path = f"cudnn_backend.{cls.__name__}"
        w.claim(_identity(cls), path, "enums")
        w.coverage.linked[f"cudnn_backend.{c_name}"] = path
        out.append(_title(cls.__name__, "-"))
        out.append(f".. autoclass:: {path}\n   :no-members:\n\n"
                   f"   C type ``{c_name}`` (also ``cudnn_backend.{c_name}``); since cuDNN "
                   f"{enums.ENUM_SINCE.get(c_name, '?')}.\n\n")
        rows = []
        for name, member in cls.__members__.items():  # aliases too (another name for the same value)
            w.coverage.enumerants[name] = cls.__name__
            alias = f" (same value as {member.name})" if member.name != name else ""
            rows.append((name, f"{int(member)}{alias}", enums.SINCE.get(name, "")))
        out.append(_table(("C name (a module attribute)", "value", "since cuDNN"), rows, indent="   "))
    return "\n".join(out)


def _table(header, rows, indent="") -> str:
    lines = [f"{indent}.. list-table::", f"{indent}   :header-rows: 1", ""]
    for row in (header, *rows):
        first = True
        for cell in row:
            text = str(cell).replace("\n", " ") or " "
            lines.append(f"{indent}   {'* -' if first else '  -'} {text}")
            first = False
    return "\n".join(lines) + "\n\n"


def _typed_page(w: _Writer) -> str:
    import cudnn_backend.typed as typed

    out = [".. This page is generated by docs/_ext/apiref.py at every build: do not edit.\n",
           _title("Typed descriptor classes"),
           inspect.getdoc(typed) + "\n",
           "The tables below are made from each class's ``KEYWORDS`` (keyword -> ``CUDNN_ATTR_*``) and "
           "``ATTRIBUTES`` (the schema's ``AttributeSpec``) when the documentation is built. "
           "*count* is how many values the attribute takes; *role* says whether it must be set before "
           "``finalize()``, may be, or is only read back (get-only: no keyword argument, a read-only "
           "property).\n"]
    out.append(_title("Bases and helpers", "-"))
    for name in ("TypedDescriptor", "TensorBase", "OperationGraphBase"):
        value = getattr(typed, name)
        w.claim(_identity(value), f"cudnn_backend.typed.{name}", "typed_classes")
        out.append(_directive("class", f"cudnn_backend.typed.{name}", ("members", "show-inheritance")))
    for cls in typed_classes():
        path = f"cudnn_backend.typed.{cls.__name__}"
        w.claim(_identity(cls), path, "typed_classes")
        out.append(_title(cls.__name__, "-"))
        settable = [k for k, spec in cls.ATTRIBUTES.items() if spec.settable]
        sig = ", ".join(f"{k}=..." for k in settable)
        doc_lines = [ln for ln in (inspect.getdoc(cls) or "").splitlines() if ln.strip()]
        heading = next((ln for ln in doc_lines if ln.startswith("CUDNN_BACKEND_")), cls.DESCRIPTOR_TYPE.name)
        bases = ", ".join(f":class:`~cudnn_backend.typed.{b.__name__}`" for b in cls.__bases__)
        out.append(f".. py:class:: {path}(*, {sig})\n" if sig else f".. py:class:: {path}()\n")
        out.append(f"   {heading} Bases: {bases}.\n")
        rows = []
        for keyword, attribute in cls.KEYWORDS.items():
            spec = cls.ATTRIBUTES[keyword]
            types_ = ", ".join(f"``{t.name}``" for t in spec.types)
            if spec.accepts:
                types_ += " of " + ", ".join(f"``{a.name}``" for a in spec.accepts)
            role = "get-only" if not spec.settable else spec.role
            rows.append((f"``{keyword}``", f"``{attribute.name}``", types_, spec.count_text(), role, spec.since or ""))
        out.append(_table(("keyword", "cuDNN attribute", "attribute type", "count", "role", "since cuDNN"), rows,
                          indent="   "))
    out.append(_title("Functions and values", "-"))
    for name in typed.__all__:
        value = getattr(typed, name)
        if value in typed_classes() or name in ("TypedDescriptor", "TensorBase", "OperationGraphBase"):
            continue
        out.append(w.entry("cudnn_backend.typed", name, value, "typed_classes"))
    return "\n".join(out)


def _graph_page(w: _Writer) -> str:
    from cudnn_backend.graph import Graph

    out = [".. This page is generated by docs/_ext/apiref.py at every build: do not edit.\n",
           _title("The Graph builder"),
           ".. autoclass:: cudnn_backend.Graph\n   :no-members:\n   :no-show-inheritance:\n"]
    w.claim(_identity(Graph), "cudnn_backend.Graph", "graph_class")
    for klass, names in graph_members().items():
        title = "The graph itself" if klass is Graph else (
            "Tensors, operations and finalize" if klass.__name__ == "GraphCore" else klass.__name__)
        out.append(_title(title, "-"))
        if klass is not Graph:
            short = _short_doc(klass)
            if short:
                out.append(f"From ``{klass.__module__}.{klass.__name__}``: {short}\n")
        for name in names:
            value = inspect.getattr_static(Graph, name)
            path = f"cudnn_backend.Graph.{name}"
            real = getattr(value, "__name__", name)
            if inspect.isroutine(value) and real != name and real in vars(klass):  # pool = resample
                w.coverage.linked[path] = f"cudnn_backend.Graph.{real}"
                out.append(f"* ``{name}``: another name of :meth:`cudnn_backend.Graph.{real}`\n")
                continue
            w.coverage.documented[path] = "graph_class"
            if isinstance(value, (property, types.GetSetDescriptorType, types.MemberDescriptorType)) or \
                    type(value).__name__ == "getset_descriptor":
                out.append(f".. autoproperty:: {path}\n" if isinstance(value, property) else
                           f".. autoattribute:: {path}\n")
            else:
                out.append(f".. automethod:: {path}\n")
    return "\n".join(out)


def _toplevel_page(w: _Writer) -> str:
    import cudnn_backend

    out = [".. This page is generated by docs/_ext/apiref.py at every build: do not edit.\n",
           _title("The ``cudnn_backend`` package"),
           ".. automodule:: cudnn_backend\n   :no-members:\n",
           "Every public name of the package. A name that is the same object as one documented on "
           "another page links there (the enums, the typed classes, the ``Graph`` builder).\n"]
    groups = {}
    unavailable = []
    for name in toplevel_names():
        try:
            value = getattr(cudnn_backend, name)
        except Exception as e:  # noqa: BLE001 - a lazy name whose layer is not there yet
            unavailable.append((name, e))
            continue
        if isinstance(value, types.ModuleType):
            layer = "modules"
        else:
            parts = getattr(value, "__module__", "cudnn_backend").split(".")
            layer = parts[1] if len(parts) > 1 and parts[0] == "cudnn_backend" else "core"
            if layer.startswith("_"):
                layer = {"_bindings": "enums", "_version": "core"}.get(layer, "core")
        groups.setdefault(layer, []).append((name, value))
    order = ["core", "errors", "enums", "typed", "graph", "runtime", "reference", "patterns", "tune", "cli", "modules"]
    titles = {"core": "Descriptors, handles, logging, versions", "errors": "Exceptions",
              "enums": "Enums (see :doc:`enums`)", "typed": "Typed layer", "graph": "Graph builder",
              "runtime": "Runtime", "reference": "Reference evaluator", "patterns": "Patterns", "tune": "Tune",
              "cli": "Command line",
              "modules": "Layers and modules reachable as attributes"}
    for layer in order + sorted(set(groups) - set(order)):
        if layer not in groups:
            continue
        out.append(_title(titles.get(layer, layer), "-"))
        for name, value in groups[layer]:
            out.append(w.entry("cudnn_backend", name, value, "toplevel"))
    out.append(_title("Not importable yet", "-"))
    if unavailable:
        out.append(".. note::\n\n   These names are declared by ``cudnn_backend`` (loaded on first use) but their layer "
                   "cannot be imported in this build, so they are not documented yet. They are picked up "
                   "automatically once the layer exists.\n")
        for name, e in unavailable:
            w.coverage.unavailable[f"cudnn_backend.{name}"] = f"{type(e).__name__}: {e}"
            out.append(f"* ``cudnn_backend.{name}``: ``{type(e).__name__}: {e}``")
        out.append("")
    else:
        out.append("Every public name imports.\n")
    return "\n".join(out)


def _layer_page(w: _Writer, layer: str) -> str:
    out = [".. This page is generated by docs/_ext/apiref.py at every build: do not edit.\n",
           _title(f"``cudnn_backend.{layer}``: {LAYER_TITLES[layer]}")]
    for module_name, module in layer_modules(layer):
        if isinstance(module, Exception):
            w.coverage.unavailable[module_name] = f"{type(module).__name__}: {module}"
            out.append(_title(f"``{module_name}``", "-"))
            out.append(f".. note::\n\n   ``{module_name}`` cannot be imported in this build "
                       f"(``{type(module).__name__}: {module}``); it is documented here once it can.\n")
            continue
        w.coverage.modules[module_name] = f"layer_{layer}"
        out.append(_title(f"``{module_name}``", "-"))
        out.append(f".. automodule:: {module_name}\n   :no-members:\n")
        names = module_public(module)
        if not names:
            out.append("*(no public names of its own)*\n")
        for name in names:
            try:
                value = getattr(module, name)
            except AttributeError as e:
                w.coverage.unavailable[f"{module_name}.{name}"] = f"AttributeError: {e}"
                out.append(f"* ``{name}``: declared in ``__all__`` but missing (``{e}``)\n")
                continue
            if _is_enumerant(name, value):
                continue
            if inspect.isclass(value) and value in enum_classes():
                w.coverage.linked[f"{module_name}.{name}"] = f"cudnn_backend.{value.__name__}"
                out.append(f"* ``{name}``: the enum :class:`cudnn_backend.{value.__name__}`\n")
                continue
            out.append(w.entry(module_name, name, value, f"layer_{layer}"))
    return "\n".join(out)


def generate() -> tuple:
    """({page name: reST text}, Coverage). Order matters: earlier pages own the objects they document."""
    cov = Coverage()
    w = _Writer(cov)
    pages = {}
    pages["enums"] = _enum_page(w)
    pages["typed_classes"] = _typed_page(w)
    pages["graph_class"] = _graph_page(w)
    pages["toplevel"] = _toplevel_page(w)
    for layer in LAYERS:
        pages[f"layer_{layer}"] = _layer_page(w, layer)
    return pages, cov


def write_reference(outdir) -> Coverage:
    """Write the pages into ``outdir`` (only files whose text changed, so Sphinx rebuilds only those)."""
    outdir = pathlib.Path(outdir)
    outdir.mkdir(parents=True, exist_ok=True)
    pages, cov = generate()
    for name, text in pages.items():
        path = outdir / f"{name}.rst"
        if not path.exists() or path.read_text(encoding="utf-8") != text:
            path.write_text(text, encoding="utf-8")
    return cov


def index_text() -> str:
    """The toctree of the generated pages (docs/reference/index.rst includes it)."""
    return textwrap.dedent("""\
        .. toctree::
           :maxdepth: 1

        """) + "".join(f"   _generated/{p}\n" for p in PAGES)
