"""Plots of explorations (matplotlib, an optional dependency: ``pip install 'cudnn-backend[plot]'``).

``plot_exploration``: time per config, sorted, the heuristics pick marked. ``plot_knob_heatmap``: for the best
engine, the best time over a pair of its knobs (what a sweep found). Both write an image file and return its
path; both refuse (ValueError) an exploration with nothing timed, rather than draw empty axes.
"""
from __future__ import annotations

import pathlib
import textwrap

from cudnn_backend.errors import MissingDependencyError

__all__ = ["plot_exploration", "plot_knob_heatmap", "pyplot"]


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


def _save(plt, fig, path) -> pathlib.Path:
    fig.tight_layout()
    path = pathlib.Path(path)
    fig.savefig(path, dpi=120)
    plt.close(fig)
    return path


def plot_exploration(ex, path, *, title=None):
    """Bar chart of the median time per config (sorted), the heuristics pick in orange, sweep finds in green."""
    ok = _timed(ex)
    plt = pyplot()
    pick = ex.heuristics_pick
    pick_key = pick.key if pick is not None else None
    colors = ["tab:orange" if r.key == pick_key else "tab:green" if r.source == "sweep" else "tab:blue" for r in ok]
    fig, ax = plt.subplots(figsize=(min(max(6.0, len(ok) * 0.22), 24.0), 4.5))
    ax.bar(range(len(ok)), [r.time_us for r in ok], color=colors)
    ax.set_xticks(range(len(ok)))
    ax.set_xticklabels([f"e{r.engine_index}" for r in ok], rotation=90, fontsize=6)
    ax.set_ylabel("median time per call (µs)")
    ax.set_xlabel("configs, fastest first (orange: heuristics pick, green: found by the sweep)")
    ax.set_title(title or _title(ex, f"{len(ok)} configs timed"), fontsize=9)
    return _save(plt, fig, path)


def plot_knob_heatmap(ex, path, *, engine_index=None, knobs=None, title=None):
    """Heatmap of the best time over two knobs of one engine (default: the best config's engine and its two
    knobs that took the most values among the timed configs)."""
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
    grid = [[float("nan")] * len(xs) for _ in ys]
    for r in same:
        if kx in r.knobs and ky in r.knobs:
            i, j = ys.index(r.knobs[ky]), xs.index(r.knobs[kx])
            if not grid[i][j] <= r.time_us:
                grid[i][j] = r.time_us
    plt = pyplot()
    fig, ax = plt.subplots(figsize=(max(4.0, len(xs) * 0.6 + 2), max(3.0, len(ys) * 0.5 + 1.5)))
    im = ax.imshow(grid, cmap="viridis_r", aspect="auto")
    ax.set_xticks(range(len(xs)), [str(x) for x in xs])
    ax.set_yticks(range(len(ys)), [str(y) for y in ys])
    ax.set_xlabel(kx)
    ax.set_ylabel(ky)
    fig.colorbar(im, ax=ax, label="best time per call (µs)")
    ax.set_title(title or _title(ex, f"engine {engine_index}, {kx} x {ky}"), fontsize=9)
    return _save(plt, fig, path)
