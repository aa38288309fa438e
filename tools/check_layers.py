#!/usr/bin/env python3
"""Checks what import-linter cannot see: the layering of the compiled modules (.pyx/.pxd, which import-linter's
static analysis skips), and imports of the package inside functions (none allowed, in .py or .pyx, except a
PEP 562 ``__getattr__`` in an ``__init__.py``). The layer order is read from pyproject.toml's import-linter
contract, so both checks share one definition. Exit code 1 with one line per violation."""
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


def layers() -> list[set]:
    config = tomllib.loads((ROOT / "pyproject.toml").read_text())
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


def module_name(path: pathlib.Path) -> str:
    rel = path.relative_to(ROOT).with_suffix("")
    parts = list(rel.parts)
    if parts[-1] == "__init__":
        parts.pop()
    return ".".join(parts)


def imported_modules(path: pathlib.Path):
    """(line number, module, indented) for every import of the package in a file (relative ones resolved)."""
    pkg = module_name(path) if path.name == "__init__.py" else module_name(path).rpartition(".")[0]
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


def main() -> int:
    order = layers()
    problems = []
    for path in sorted(PACKAGE.rglob("*")):
        if path.suffix not in (".py", ".pyx", ".pxd", ".pyi") or "build" in path.parts:
            continue
        source = layer_of(module_name(path), order)
        rel = path.relative_to(ROOT)
        for lineno, target, indented in imported_modules(path):
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
    for p in problems:
        print(p)
    print(f"check_layers: {len(problems)} problem(s)", file=sys.stderr)
    return 1 if problems else 0


if __name__ == "__main__":
    sys.exit(main())
