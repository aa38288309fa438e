"""The ``support-matrix`` directive: a support matrix (the JSON ``cudnn-backend support --json`` and
``tools/support_matrices.py`` write) drawn as tables at build time, so the page never holds a hand-copied cell.

    .. support-matrix:: ../support/h100_cudnn91900.json
       :kernels: ../support/gpu_h200_cudnn91900.json   (optional: kernel counts measured on a GPU)

It draws the summary (family x data type: supported / graphs) and one table per family (rows: the graph, columns:
data type and layout; each cell the verdict and the engine of the first working config). With ``:kernels:`` each
supported cell also shows how many kernels that config launched; a ``:kernels:`` file not there yet gives a
clearly marked note saying how to measure it.
"""
from __future__ import annotations

import json
import pathlib

from docutils import nodes
from docutils.parsers.rst import directives
from sphinx.util.docutils import SphinxDirective

_KIND = {"precompiled": "P", "specialized": "S", "runtime-compiled": "RC"}
_STAGE = {"builder": "build", "checks": "checks", "unavailable": "n/a", "finalize": "finalize",
          "heuristics": "heur", "plan": "plan", "crash": "crash"}
_ORDER = ("fp16", "bf16", "fp32", "fp8", "int8")


def _table(header, rows, widths=None):
    table = nodes.table(classes=["support-matrix"])
    group = nodes.tgroup(cols=len(header))
    table += group
    for w in widths or [1] * len(header):
        group += nodes.colspec(colwidth=w)
    head = nodes.thead()
    group += head
    head += _row(header)
    body = nodes.tbody()
    group += body
    for r in rows:
        body += _row(r)
    return table


def _row(cells):
    row = nodes.row()
    for c in cells:
        entry = nodes.entry()
        entry += nodes.paragraph(text=str(c))
        row += entry
    return row


def cell(result, kernels=None) -> str:
    """One cell: ✓ and the first working config's engine kind and index (✓* when only its config was checked),
    or ✗ and the stage that refused the graph; with kernel counts, ``·N k``."""
    if not result["supported"]:
        return "✗ " + _STAGE.get(result["stage"], result["stage"] or "?")
    chosen = result.get("chosen") or {}
    mark = "✓" if result.get("verified") == "plan" else "✓*"
    text = f"{mark} {_KIND.get(chosen.get('kind'), '?')}{chosen.get('engine', '')}"
    if kernels is not None:
        k = kernels.get((result["name"], result["data_type"], result["layout"]))
        if k is not None:
            text += f" ·{k}k"
    return text


class SupportMatrixDirective(SphinxDirective):
    required_arguments = 1
    option_spec = {"kernels": directives.unchanged}

    def run(self):
        here = pathlib.Path(self.env.doc2path(self.env.docname)).parent
        path = (here / self.arguments[0]).resolve()
        self.env.note_dependency(str(path))
        data = json.loads(path.read_text(encoding="utf-8"))
        out = []
        kernels = None
        if "kernels" in self.options:
            kpath = (here / self.options["kernels"]).resolve()
            if kpath.exists():
                self.env.note_dependency(str(kpath))
                measured = json.loads(kpath.read_text(encoding="utf-8"))
                kernels = {(r["name"], r["data_type"], r["layout"]): r.get("kernel_count")
                           for r in measured["results"] if r.get("kernel_count") is not None}
            else:
                note = nodes.admonition(classes=["warning"])
                note += nodes.title(text="Kernel counts: not measured yet")
                note += nodes.paragraph(text=f"{self.options['kernels']} is not there yet. On the GPU: "
                                             "bash tools/gpu_run.sh support (it writes support_gpu_<gpu>.json to "
                                             "$OUT); commit that file under this name and rebuild the docs.")
                out.append(note)
        results = data["results"]
        device = data["device"]
        counts = {}
        for r in results:
            key = "supported" if r["supported"] else r["stage"]
            counts[key] = counts.get(key, 0) + 1
        out.append(nodes.paragraph(text=(
            f"{device.get('name')} ({'device profile, offline' if device.get('offline') else 'measured on the GPU'})"
            f", cuDNN {data['cudnn_version']}, plans built: {data.get('plans')}: {len(results)} graphs; "
            + ", ".join(f"{k}: {v}" for k, v in counts.items()))))
        families = list(dict.fromkeys(r["family"] for r in results))
        dtypes = sorted({r["data_type"] for r in results}, key=lambda d: _ORDER.index(d) if d in _ORDER else 99)
        grid = []
        for f in families:
            row = [f]
            for d in dtypes:
                sel = [r for r in results if r["family"] == f and r["data_type"] == d]
                row.append("–" if not sel else f"{sum(r['supported'] for r in sel)}/{len(sel)}")
            grid.append(row)
        out.append(_table(["family", *dtypes], grid, [3] + [1] * len(dtypes)))
        for f in families:
            sel = [r for r in results if r["family"] == f]
            columns = list(dict.fromkeys((r["data_type"], r["layout"]) for r in sel))
            columns.sort(key=lambda c: (_ORDER.index(c[0]) if c[0] in _ORDER else 99, c[1]))
            names = list(dict.fromkeys(r["name"] for r in sel))
            index = {(r["name"], r["data_type"], r["layout"]): r for r in sel}
            rows = [[n] + [cell(index[(n, *c)], kernels) if (n, *c) in index else "–" for c in columns] for n in names]
            section = nodes.rubric(text=f)
            out.append(section)
            out.append(_table(["graph", *[f"{d} {lay}" for d, lay in columns]], rows, [4] + [1] * len(columns)))
        return out


def setup(app):
    app.add_directive("support-matrix", SupportMatrixDirective)
    return {"parallel_read_safe": True, "parallel_write_safe": True}
