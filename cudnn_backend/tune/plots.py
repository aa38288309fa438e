"""Plots of explorations (matplotlib, an optional dependency: the ``plot`` extra).

``plot_exploration``: time per config, sorted, each bar labelled (engine, knobs, where it came from) and its colour
explained. ``plot_knob_heatmap``: for the best engine, the best time over a pair of its knobs (what a sweep found),
saying how many cells were timed and why the others are empty. ``bars`` and ``heatmap_grid`` give what they draw. Both write an image file and return its
path; both refuse (ValueError) an exploration with nothing timed, rather than draw empty axes.
"""
from __future__ import annotations

import pathlib
import textwrap

from cudnn_backend.errors import MissingDependencyError

__all__ = ["plot_exploration", "plot_knob_heatmap", "pyplot", "bars", "heatmap_grid", "COLOURS"]


# the file types matplotlib's Agg canvas writes, by suffix (none: its default, PNG); any other is refused before work
IMAGE_SUFFIXES = frozenset({"", ".png", ".pdf", ".svg", ".svgz", ".eps", ".ps", ".jpg", ".jpeg", ".tif", ".tiff",
                            ".webp", ".pgf", ".raw", ".rgba"})


def image_suffix_problem(path) -> str | None:
    """Why matplotlib would not write an image to ``path`` (its suffix), or None."""
    suffix = pathlib.PurePath(str(path)).suffix.lower()
    if suffix in IMAGE_SUFFIXES:
        return None
    others = sorted((s for s in IMAGE_SUFFIXES if s), key=lambda s: (s != ".png", s))
    return f"{str(path)!r}: matplotlib writes no {suffix} files; end the name in one of {', '.join(others)}"


def pyplot():
    """``matplotlib.pyplot`` on the non-interactive Agg backend (MissingDependencyError without matplotlib)."""
    try:
        import matplotlib
    except ImportError as e:
        raise MissingDependencyError("matplotlib", "plotting", "plot") from e
    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    return plt


def _timed(ex):
    ok = sorted((r for r in ex.results if r.time_us is not None and r.status == "ok"), key=lambda r: r.time_us)
    if not ok:
        raise ValueError(f"{ex.name}: nothing was timed ({'offline: no GPU' if not ex.timed else 'no config ran'}),"
                         " so there is nothing to plot")
    return ok


def _title(ex, what):
    dev = ex.device.get("name", "?")
    return "\n".join(textwrap.wrap(f"{ex.name}: {what} on {dev}, cuDNN {ex.cudnn_version}", 70))


# the bar colours and what each means (the legend says it)
COLOURS = {"pick": ("tab:orange", "heuristics' pick (A's first config)"),
           "best": ("tab:green", "the best (fastest correct) config"),
           "sweep": ("tab:purple", "found by the knob search (--sweep)"),
           "other": ("tab:blue", "another config of heuristics' lists")}


def bars(ex) -> list[dict]:
    """The bars ``plot_exploration`` draws, fastest first: {label, time_us, kind} with ``kind`` a key of ``COLOURS``
    and ``label`` "engine E · KNOBS · FROM" (what the axis shows, one line per config)."""
    best, pick = ex.best, ex.heuristics_pick
    out = []
    for r in _timed(ex):
        kind = "best" if best is not None and r.key == best.key else "pick" if pick is not None and \
            r.key == pick.key else "sweep" if r.source == "sweep" else "other"
        out.append({"label": f"engine {r.engine_index} · {r.knobs_text()} · {r.label}", "time_us": r.time_us,
                    "kind": kind})
    return out


def plot_exploration(ex, path, *, title=None):
    """Horizontal bars of the median time per config, fastest at the top, each labelled with its engine, knobs and
    where it came from; colours (``COLOURS``) explained in a legend."""
    rows = bars(ex)
    plt = pyplot()
    from matplotlib.patches import Patch

    longest = max(len(r["label"]) for r in rows)
    fig, ax = plt.subplots(figsize=(min(max(7.0, 4.0 + longest * 0.075), 22.0), max(3.0, 1.4 + len(rows) * 0.24)))
    y = list(range(len(rows)))
    ax.barh(y, [r["time_us"] for r in rows], color=[COLOURS[r["kind"]][0] for r in rows])
    ax.set_yticks(y, [r["label"] for r in rows], fontsize=8)
    ax.invert_yaxis()  # the fastest at the top
    ax.set_xlabel("median time per call (µs)")
    kinds = [k for k in COLOURS if any(r["kind"] == k for r in rows)]
    ax.legend(handles=[Patch(color=COLOURS[k][0], label=COLOURS[k][1]) for k in kinds], fontsize=8,
              loc="upper center", bbox_to_anchor=(0.5, -0.5 / fig.get_figheight() - 0.12), ncol=2, frameon=False)
    ax.set_title(title or _title(ex, f"{len(rows)} configs timed, fastest first"), fontsize=9)
    fig.tight_layout()
    path = pathlib.Path(path)
    fig.savefig(path, dpi=120, bbox_inches="tight")  # the legend below the axis included
    plt.close(fig)
    return path


def heatmap_grid(ex, *, engine_index=None, knobs=None) -> dict:
    """What ``plot_knob_heatmap`` draws: {engine_index, knobs (x, y), xs, ys, grid (best µs or None per cell), filled,
    cells, note}; ``note`` says why cells are empty."""
    ok = _timed(ex)
    engine_index = ok[0].engine_index if engine_index is None else int(engine_index)
    same = [r for r in ok if r.engine_index == engine_index]
    if knobs is None:
        spread = {}
        for r in same:
            for k, v in r.knobs.items():
                spread.setdefault(k, set()).add(v)
        ranked = sorted((k for k, vs in spread.items() if len(vs) > 1), key=lambda k: -len(spread[k]))
        if len(ranked) < 2:
            raise ValueError(f"{ex.name}: engine {engine_index} has fewer than two knobs that took several values "
                             "among the timed configs (run a sweep); no heatmap")
        knobs = ranked[:2]
    kx, ky = knobs
    xs = sorted({r.knobs.get(kx) for r in same if kx in r.knobs})
    ys = sorted({r.knobs.get(ky) for r in same if ky in r.knobs})
    grid = [[None] * len(xs) for _ in ys]
    for r in same:
        if kx in r.knobs and ky in r.knobs:
            i, j = ys.index(r.knobs[ky]), xs.index(r.knobs[kx])
            if grid[i][j] is None or r.time_us < grid[i][j]:
                grid[i][j] = r.time_us
    filled, cells = sum(v is not None for row in grid for v in row), len(xs) * len(ys)
    note = (f"{filled} of {cells} cells timed: the configs of engine {engine_index} that ran correctly, heuristics' "
            "and the knob search's, which changes one or two knobs around the best configs rather than trying "
            "the whole grid; an empty cell was not timed (never tried, or refused by cuDNN, or wrong)"
            if filled < cells else f"every one of the {cells} cells timed")
    return {"engine_index": engine_index, "knobs": (kx, ky), "xs": xs, "ys": ys, "grid": grid, "filled": filled,
            "cells": cells, "note": note}


def plot_knob_heatmap(ex, path, *, engine_index=None, knobs=None, title=None):
    """Heatmap of the best time over two knobs of one engine (default: the best config's engine and its two knobs
    that took the most values among the timed configs), each timed cell labelled with its time; a line under it
    says how many cells were timed and why the others are empty."""
    h = heatmap_grid(ex, engine_index=engine_index, knobs=knobs)
    (kx, ky), xs, ys, grid = h["knobs"], h["xs"], h["ys"], h["grid"]
    plt = pyplot()
    import numpy as np

    values = np.array([[np.nan if v is None else v for v in row] for row in grid], dtype=float)
    fig, ax = plt.subplots(figsize=(max(5.0, len(xs) * 0.7 + 2.5), max(3.5, len(ys) * 0.5 + 2.2)))
    im = ax.imshow(np.ma.masked_invalid(values), cmap="viridis_r", aspect="auto")
    for i, row in enumerate(grid):
        for j, v in enumerate(row):
            if v is not None:  # dark text on the light (fast) end of the colour map
                light = sum(im.cmap(im.norm(v))[:3]) > 1.6
                ax.text(j, i, f"{v:.1f}", ha="center", va="center", fontsize=7, color="black" if light else "white")
    ax.set_xticks(range(len(xs)), [str(x) for x in xs])
    ax.set_yticks(range(len(ys)), [str(y) for y in ys])
    ax.set_xlabel(kx)
    ax.set_ylabel(ky)
    fig.colorbar(im, ax=ax, label="best time per call (µs)")
    ax.set_title(title or _title(ex, f"engine {h['engine_index']}, {kx} x {ky}"), fontsize=9)
    fig.tight_layout()
    lines = textwrap.wrap(h["note"], int(fig.get_figwidth() * 15))
    ax.text(0.0, -0.2 - 0.08 * 3.5 / fig.get_figheight(), "\n".join(lines), transform=ax.transAxes, fontsize=7,
            va="top")
    path = pathlib.Path(path)
    fig.savefig(path, dpi=120, bbox_inches="tight")  # the note under the axis included
    plt.close(fig)
    return path
