#!/usr/bin/env python3
"""Checks what import-linter cannot see: the layering of the compiled modules (.pyx/.pxd, which import-linter's
static analysis skips), imports of the package inside functions (none allowed, in .py or .pyx, except a
PEP 562 ``__getattr__`` in an ``__init__.py``), and import circles inside a layer, the compiled modules' imports
and cimports included (a module's .pyx and .pxd are one module). The layer order is read from pyproject.toml's
import-linter contract, so both checks share one definition. Exit code 1 with one line per violation.

    python tools/check_layers.py [--root DIR]     # DIR: a tree holding a cudnn_backend/ folder (default: this one)
"""
from __future__ import annotations

import ast
import pathlib
import re
import sys

try:
    import tomllib
except ImportError:  # Python 3.10
    import tomli as tomllib

ROOT = pathlib.Path(__file__).resolve().parent.parent
PACKAGE = ROOT / "cudnn_backend"
IMPORT = re.compile(r"^(?P<indent>[ \t]*)(?:from\s+(?P<from>[\w.]+)\s+c?import\b|c?import\s+(?P<mods>[\w., ]+))")
# the names after "from X import" / "cimport": one line, or a parenthesized list over several
FROM_NAMES = re.compile(r"^[ \t]*from\s+[\w.]+\s+c?import\s+(?:\((?P<group>[^)]*)\)|(?P<line>[^#\n]*))", re.M)


def layers(root: pathlib.Path = ROOT) -> list[set]:
    config = tomllib.loads((root / "pyproject.toml").read_text())
    contract = next(c for c in config["tool"]["importlinter"]["contracts"] if c["type"] == "layers")
    return [{part.strip() for part in layer.split("|")} for layer in contract["layers"]]


def layer_of(module: str, order: list[set]) -> tuple[int, str] | None:
    """(index in the order, top-level name) of ``cudnn_backend.<top>...``; None for the root package."""
    parts = module.split(".")
    if parts[0] != "cudnn_backend" or len(parts) < 2:
        return None
    for i, names in enumerate(order):
        if parts[1] in names:
            return i, parts[1]
    return None


def module_name(path: pathlib.Path, root: pathlib.Path = ROOT) -> str:
    rel = path.relative_to(root).with_suffix("")
    parts = list(rel.parts)
    if parts[-1] == "__init__":
        parts.pop()
    return ".".join(parts)


def imported_modules(path: pathlib.Path, root: pathlib.Path = ROOT):
    """(line number, module, indented) for every import of the package in a file (relative ones resolved)."""
    pkg = module_name(path, root) if path.name == "__init__.py" else module_name(path, root).rpartition(".")[0]
    for lineno, line in enumerate(path.read_text(encoding="utf-8").splitlines(), 1):
        m = IMPORT.match(line)
        if not m:
            continue
        names = [m.group("from")] if m.group("from") else [n.strip().split(" as ")[0] for n in m.group("mods").split(",")]
        for name in names:
            if name.startswith("."):
                up = len(name) - len(name.lstrip("."))
                base = pkg.split(".")[: len(pkg.split(".")) - (up - 1)]
                name = ".".join(base + ([name.lstrip(".")] if name.lstrip(".") else []))
            if name == "cudnn_backend" or name.startswith("cudnn_backend."):
                yield lineno, name, bool(m.group("indent"))


def function_level_imports(path: pathlib.Path):
    """(line number, module) of package imports inside functions of a .py file (AST)."""
    tree = ast.parse(path.read_text(encoding="utf-8"))
    allowed = path.name == "__init__.py"

    def visit(node, in_function, fname):
        for child in ast.iter_child_nodes(node):
            if isinstance(child, (ast.FunctionDef, ast.AsyncFunctionDef, ast.Lambda)):
                yield from visit(child, True, getattr(child, "name", "<lambda>"))
                continue
            if in_function and isinstance(child, (ast.Import, ast.ImportFrom)):
                mods = [a.name for a in child.names] if isinstance(child, ast.Import) else \
                    [("." * child.level) + (child.module or "")]
                for mod in mods:
                    if (mod.startswith(".") or mod == "cudnn_backend" or mod.startswith("cudnn_backend.")) and not (
                            allowed and fname == "__getattr__"):
                        yield child.lineno, mod
            yield from visit(child, in_function, fname)

    yield from visit(tree, False, None)


def import_graph(root: pathlib.Path = ROOT) -> dict[str, set]:
    """{module: the package's modules it imports or cimports}: a name imported from a package that is one of its
    modules counts as that module (``from cudnn_backend.core import schema``), else the package itself; a module's
    .pyx and .pxd are one module; stubs (.pyi) are left out (they are not run)."""
    files = [p for p in sorted((root / "cudnn_backend").rglob("*"))
             if p.suffix in (".py", ".pyx", ".pxd") and "build" not in p.relative_to(root).parts]
    modules = {module_name(p, root) for p in files}
    graph: dict[str, set] = {m: set() for m in modules}
    for path in files:
        source = module_name(path, root)
        text = path.read_text(encoding="utf-8")
        names_after = {}
        for m in FROM_NAMES.finditer(text):
            line = text.count("\n", 0, m.start()) + 1
            names_after[line] = [n.strip().split()[0] for n in (m["group"] or m["line"] or "").replace("\\", " ")
                                 .split(",") if n.strip() and not n.strip().startswith("#")]
        for lineno, target, _ in imported_modules(path, root):
            found = False
            for name in names_after.get(lineno, ()):
                if name != "*" and f"{target}.{name}" in modules:
                    graph[source].add(f"{target}.{name}")
                    found = True
            if not found and target in modules:
                graph[source].add(target)
        graph[source].discard(source)
    return graph


def circles(graph: dict[str, set]) -> list[list[str]]:
    """The import circles: each strongly connected set of two or more modules, as one cycle through them (Tarjan's
    algorithm, iterative)."""
    index, low, on_stack, stack, found = {}, {}, set(), [], []
    counter = [0]
    for start in sorted(graph):
        if start in index:
            continue
        work = [(start, iter(sorted(graph[start])))]
        index[start] = low[start] = counter[0]
        counter[0] += 1
        stack.append(start)
        on_stack.add(start)
        while work:
            node, children = work[-1]
            child = next(children, None)
            if child is not None:
                if child not in graph:
                    continue
                if child not in index:
                    index[child] = low[child] = counter[0]
                    counter[0] += 1
                    stack.append(child)
                    on_stack.add(child)
                    work.append((child, iter(sorted(graph[child]))))
                elif child in on_stack:
                    low[node] = min(low[node], index[child])
                continue
            work.pop()
            if work:
                low[work[-1][0]] = min(low[work[-1][0]], low[node])
            if low[node] == index[node]:
                component = []
                while True:
                    member = stack.pop()
                    on_stack.discard(member)
                    component.append(member)
                    if member == node:
                        break
                if len(component) > 1:
                    found.append(_cycle_through(graph, set(component)))
    return found


def _cycle_through(graph: dict[str, set], component: set) -> list[str]:
    """One cycle inside a strongly connected set of modules: from its first module, the shortest way back to it."""
    first = min(component)
    previous = {first: None}
    queue = [first]
    while queue:
        node = queue.pop(0)
        for child in sorted(graph[node] & component):
            if child == first:
                path = [node]
                while previous[path[-1]] is not None:
                    path.append(previous[path[-1]])
                return list(reversed(path)) + [first]
            if child not in previous:
                previous[child] = node
                queue.append(child)
    return sorted(component)


def main(argv=None) -> int:
    args = sys.argv[1:] if argv is None else list(argv)
    root = pathlib.Path(args[args.index("--root") + 1]).resolve() if "--root" in args else ROOT
    order = layers(root)
    problems = []
    for path in sorted((root / "cudnn_backend").rglob("*")):
        if path.suffix not in (".py", ".pyx", ".pxd", ".pyi") or "build" in path.relative_to(root).parts:
            continue
        source = layer_of(module_name(path, root), order)
        rel = path.relative_to(root)
        for lineno, target, indented in imported_modules(path, root):
            dest = layer_of(target, order)
            if source is not None and dest is not None and (dest[0] < source[0] or (
                    dest[0] == source[0] and dest[1] != source[1])):
                problems.append(f"{rel}:{lineno}: layer {source[1]!r} imports {target} from the layer above or "
                                f"beside it ({dest[1]!r})")
            if source is not None and target == "cudnn_backend":
                problems.append(f"{rel}:{lineno}: imports the root package (import the module you need)")
            if path.suffix == ".pyx" and indented:
                problems.append(f"{rel}:{lineno}: imports {target} inside a function or block")
        if path.suffix == ".py":
            for lineno, mod in function_level_imports(path):
                problems.append(f"{rel}:{lineno}: imports {mod} inside a function")
    for cycle in circles(import_graph(root)):
        where = {(layer_of(m, order) or (None, "the package root"))[1] for m in cycle}
        problems.append(f"import circle inside {' and '.join(sorted(where))}: {' -> '.join(cycle)}")
    for p in problems:
        print(p)
    print(f"check_layers: {len(problems)} problem(s)", file=sys.stderr)
    return 1 if problems else 0


if __name__ == "__main__":
    sys.exit(main())
