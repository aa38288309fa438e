"""Draw the DOT that ``Graph.to_dot()`` / ``OperationGraph.to_dot()`` write, with matplotlib alone.

No Graphviz binary exists on the machines that build these docs, so this reads the small subset of
DOT those methods emit (``digraph "name" { rankdir=LR; node [...]; id [attr=value, ...]; a -> b
[label="..."]; }``), lays the nodes out in layers by longest path from the inputs (left to right),
orders each layer by the mean position of its predecessors, and draws tensors as ellipses (dashed
when virtual) and operations as filled boxes, every edge labelled with its attribute keyword.

    python docs/_ext/dotrender.py docs/conv_bias_relu.dot docs/conv_bias_relu.png
    python docs/_ext/dotrender.py --readme    # the README's picture, from the README's own snippet

A PNG carries the SHA-1 of the DOT it was drawn from (text chunk ``Source-SHA1``), so a test can tell
that a committed picture still matches its DOT.
"""
from __future__ import annotations

import dataclasses
import hashlib
import pathlib
import re
import sys

_TOKEN = re.compile(r'\s*(?:(?P<str>"(?:[^"\\]|\\.)*")|(?P<arrow>->)|(?P<id>[A-Za-z0-9_.]+)|(?P<p>[{}\[\];,=]))')


@dataclasses.dataclass
class DotGraph:
    name: str
    nodes: dict  # id -> {attr: value}, in file order
    edges: list  # (tail, head, {attr: value}), in file order
    attrs: dict


def _unquote(text: str) -> str:
    if text.startswith('"'):
        body = text[1:-1]
        out, i = [], 0
        while i < len(body):
            c = body[i]
            if c == "\\" and i + 1 < len(body):
                n = body[i + 1]
                out.append("\n" if n in "nlr" else n)
                i += 2
                continue
            out.append(c)
            i += 1
        return "".join(out)
    return text


def _tokens(text: str) -> list:
    text = re.sub(r"//[^\n]*|/\*.*?\*/", "", text, flags=re.S)
    out, pos = [], 0
    while pos < len(text):
        if text[pos:].strip() == "":
            break
        m = _TOKEN.match(text, pos)
        if not m:
            raise ValueError(f"DOT: cannot read {text[pos:pos + 30]!r}")
        pos = m.end()
        kind = m.lastgroup
        out.append((kind, m.group(kind)))
    return out


def parse(text: str) -> DotGraph:
    """A DotGraph of the DOT subset ``to_dot()`` writes (ValueError on anything else)."""
    toks = _tokens(text)
    i = 0

    def take(kind=None, value=None):
        nonlocal i
        if i >= len(toks):
            raise ValueError("DOT: unexpected end")
        k, v = toks[i]
        if (kind and k != kind) or (value and v != value):
            raise ValueError(f"DOT: expected {value or kind}, found {v!r}")
        i += 1
        return v

    def attr_list():
        attrs = {}
        take("p", "[")
        while toks[i][1] != "]":
            key = _unquote(take())
            take("p", "=")
            attrs[key] = _unquote(take())
            if toks[i][1] == ",":
                take("p", ",")
        take("p", "]")
        return attrs

    if take() not in ("digraph",):
        raise ValueError("DOT: only a digraph is drawn")
    name = _unquote(take()) if toks[i][1] != "{" else ""
    take("p", "{")
    g = DotGraph(name, {}, [], {})
    while toks[i][1] != "}":
        first = _unquote(take())
        if toks[i][0] == "arrow":
            take("arrow")
            head = _unquote(take())
            attrs = attr_list() if toks[i][1] == "[" else {}
            g.edges.append((first, head, attrs))
            g.nodes.setdefault(first, {})
            g.nodes.setdefault(head, {})
        elif toks[i][1] == "=":
            take("p", "=")
            g.attrs[first] = _unquote(take())
        elif toks[i][1] == "[":
            attrs = attr_list()
            if first not in ("node", "edge", "graph"):
                g.nodes.setdefault(first, {}).update(attrs)
        else:
            g.nodes.setdefault(first, {})
        if toks[i][1] == ";":
            take("p", ";")
    take("p", "}")
    return g


def layout(g: DotGraph) -> dict:
    """{node id: (layer, position in layer)}: layers by longest path from a node with no inputs (inputs then
    moved next to their first reader)."""
    preds = {n: [] for n in g.nodes}
    for tail, head, _ in g.edges:
        preds[head].append(tail)
    layer = {}

    def depth(n, seen=()):
        if n in layer:
            return layer[n]
        if n in seen:  # a cycle: not a dataflow graph, but draw it anyway
            return 0
        layer[n] = d = 1 + max((depth(p, seen + (n,)) for p in preds[n]), default=-1)
        return d

    for n in g.nodes:
        depth(n)
    succs = {n: [] for n in g.nodes}
    for tail, head, _ in g.edges:
        succs[tail].append(head)
    for n in g.nodes:  # an input sits just before its first reader (a bias next to its ADD, not far left)
        if not preds[n] and succs[n]:
            layer[n] = max(0, min(layer[s] for s in succs[n]) - 1)
    columns = {}
    for n in g.nodes:  # file order inside a layer to start with
        columns.setdefault(layer[n], []).append(n)
    pos = {}
    for col in sorted(columns):
        nodes = columns[col]
        if col > 0:  # barycenter of the predecessors' positions keeps edges short and mostly uncrossed
            def key(n, nodes=nodes):
                ps = [pos[p][1] for p in preds[n] if p in pos]
                return (sum(ps) / len(ps) if ps else nodes.index(n), nodes.index(n))
            nodes = sorted(nodes, key=key)
        for k, n in enumerate(nodes):
            pos[n] = (col, k)
    return pos


def digest(dot_text: str) -> str:
    """The SHA-1 of a DOT text, as stored in the PNGs drawn from it."""
    return hashlib.sha1(dot_text.encode("utf-8")).hexdigest()


def render(dot_text: str, path, *, dpi=110):
    """Draw the DOT into ``path`` (PNG or SVG by its suffix); returns the path."""
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt
    from matplotlib.patches import Ellipse, FancyArrowPatch, FancyBboxPatch

    g = parse(dot_text)
    pos = layout(g)
    ncols = max(c for c, _ in pos.values()) + 1
    per_col = {}
    for c, k in pos.values():
        per_col[c] = max(per_col.get(c, 0), k + 1)
    nrows = max(per_col.values())
    col_w, row_h = 2.6, 1.25
    node_w, node_h = 2.05, 0.78
    width, height = ncols * col_w, max(nrows, 1) * row_h
    fig = plt.figure(figsize=(width, height + 0.1))
    ax = fig.add_axes([0, 0, 1, 1])
    ax.set_xlim(0, width)
    ax.set_ylim(0, height)
    ax.axis("off")

    xy = {}
    for n, (c, k) in pos.items():
        # centre each column's nodes vertically
        offset = (nrows - per_col[c]) * row_h / 2
        xy[n] = (c * col_w + col_w / 2, height - offset - k * row_h - row_h / 2)

    for n, attrs in g.nodes.items():
        x, y = xy[n]
        label = attrs.get("label", n)
        shape = attrs.get("shape", "ellipse")
        dashed = "dashed" in attrs.get("style", "")
        if shape == "box":
            fill = attrs.get("fillcolor", "white") if "filled" in attrs.get("style", "") else "white"
            patch = FancyBboxPatch((x - node_w / 2, y - node_h / 2 + 0.08), node_w, node_h - 0.16,
                                   boxstyle="round,pad=0.02,rounding_size=0.06", facecolor=fill, edgecolor="black",
                                   linewidth=1.0, linestyle="--" if dashed else "-")
        else:
            patch = Ellipse((x, y), node_w, node_h, facecolor="white", edgecolor="black", linewidth=1.0,
                            linestyle=(0, (4, 3)) if dashed else "-")
        ax.add_patch(patch)
        ax.text(x, y, label, ha="center", va="center", fontsize=8.5, family="DejaVu Sans")

    for tail, head, attrs in g.edges:
        (x0, y0), (x1, y1) = xy[tail], xy[head]
        arrow = FancyArrowPatch((x0 + node_w / 2 - 0.02, y0), (x1 - node_w / 2 + 0.02, y1), arrowstyle="-|>",
                                mutation_scale=11, linewidth=0.9, color="#333333", shrinkA=0, shrinkB=0)
        ax.add_patch(arrow)
        if attrs.get("label"):
            mx, my = (x0 + node_w / 2 + x1 - node_w / 2) / 2, (y0 + y1) / 2
            ax.text(mx, my + 0.07, attrs["label"], ha="center", va="bottom", fontsize=7.5, color="#1f3b73",
                    family="DejaVu Sans", bbox=dict(facecolor="white", edgecolor="none", pad=0.5, alpha=0.85))
    png = str(path).endswith(".png")
    fig.savefig(str(path), dpi=dpi, metadata={"Software": None, "Source-SHA1": digest(dot_text)} if png else None)
    plt.close(fig)
    return path


def readme_graph(readme) -> str:
    """Run the README's snippet (the python block that calls ``to_dot()``) and return its ``op_graph.to_dot()``."""
    import os
    import tempfile

    text = pathlib.Path(readme).read_text(encoding="utf-8")
    block = next(b for b in re.findall(r"```python\n(.*?)```", text, flags=re.S) if "to_dot()" in b)
    namespace, cwd = {}, os.getcwd()
    with tempfile.TemporaryDirectory() as folder:  # the snippet writes cbr.dot
        os.chdir(folder)
        try:
            exec(compile(block, str(readme), "exec"), namespace)  # noqa: S102 - the project's own README
        finally:
            os.chdir(cwd)
    return namespace["op_graph"].to_dot()


def main(argv=None) -> int:
    argv = sys.argv[1:] if argv is None else argv
    if argv == ["--readme"]:
        root = pathlib.Path(__file__).resolve().parents[2]
        dot = readme_graph(root / "README.md")
        (root / "docs" / "conv_bias_relu.dot").write_text(dot, encoding="utf-8")
        render(dot, root / "docs" / "conv_bias_relu.png")
        return 0
    if len(argv) != 2:
        print("usage: dotrender.py GRAPH.dot OUT.png  |  dotrender.py --readme", file=sys.stderr)
        return 2
    with open(argv[0], encoding="utf-8") as f:
        render(f.read(), argv[1])
    return 0


if __name__ == "__main__":
    sys.exit(main())
