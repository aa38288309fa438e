"""Two cuDNN releases side by side on one GPU: each graph explored under each release (one child process per
release, ``CUDNN_BACKEND_LIBCUDNN``), then compared graph by graph: the best config's time, heuristics' first
config's time, the kernel count of the best, the engines and knobs that slowed down or vanished, and the graphs
that lost every engine, with cuDNN's reasons. Offline (no GPU) nothing is timed: the configs heuristics list and
the first that builds are compared instead.

``compare_releases(("9.19.0", "9.28.1"), tasks)``; a release is what ``_loader.release_library`` takes (a file, a
folder, "MAJOR.MINOR.PATCH" carried or installed on this machine, or "default").
"""
from __future__ import annotations

import json
import os
import pathlib
import subprocess
import sys
import tempfile
from dataclasses import dataclass, field

from cudnn_backend._bindings._loader import ENV_LIBCUDNN, release_library
from cudnn_backend.core.info import info as package_info
from cudnn_backend.errors import CudnnBackendError
from cudnn_backend.tune.options import TuneOptions, as_options, progress_callback
from cudnn_backend.tune.results import OK, ChangeRows, Exploration, config_words, plain_table
from cudnn_backend.tune.sweeps import Task, sweep

__all__ = ["compare_releases", "ReleaseComparison", "SLOWER"]

SLOWER = 0.10  # a config or graph this much slower (a fraction) under release B counts as slowed down


@dataclass
class ReleaseComparison(ChangeRows):
    """Per graph (``rows``): each release's best and heuristics-pick times, the ratios B/A, the kernel counts, the
    configs slowed down or vanished under B, and ``change`` ("lost", "gained", "slower", "faster", "same"; "failed"
    where neither release's run gave an exploration; a graph one release cannot build is lost or gained). ``a``/``b``: what each release's run reported (version, library, device)."""

    a: dict
    b: dict
    timed: bool
    rows: list = field(default_factory=list)
    slower: float = SLOWER

    @property
    def label_a(self) -> str:
        return f"cuDNN {self.a['cudnn_version']}"

    @property
    def label_b(self) -> str:
        return f"cuDNN {self.b['cudnn_version']}"

    def to_dict(self) -> dict:
        return {"format": "cudnn-backend release comparison", "a": self.a, "b": self.b, "timed": self.timed,
                "slower": self.slower, "counts": self.counts(), "rows": self.rows}

    def table(self) -> str:
        return plain_table(self.rows)


def _key(result) -> tuple:
    return (result["engine_index"], tuple(sorted(result["knobs"].items())))


def _words(result) -> str:
    return config_words(result["engine_index"], result["knobs"])


def _time(result):
    return None if result is None else result.get("time_us")


def _ratio(a, b):
    return None if a is None or b is None or a <= 0 else round(b / a, 3)


def compare_explorations(a: Exploration | None, b: Exploration | None, *, slower=SLOWER, error_a="",
                         error_b="") -> dict:
    """One row: graph ``a`` (release A's exploration) against ``b`` (release B's); either None where that release's
    run failed (``error_a``/``error_b`` say why)."""
    name = (a or b).name if (a or b) is not None else ""
    row = {"graph": name}
    if a is None or b is None:  # a release that cannot build the graph (an operation it lacks, say) lost or gains it
        change = "failed" if a is None and b is None else "gained" if a is None else "lost"
        row.update(change=change, reason="; ".join(filter(None, (error_a and f"A: {error_a}",
                                                                 error_b and f"B: {error_b}"))))
        return row
    da, db = a.to_dict(), b.to_dict()
    best_a, best_b = da["best"] if a.timed else _chosen(da), db["best"] if b.timed else _chosen(db)
    pick_a, pick_b = da["heuristics_pick"], db["heuristics_pick"]
    row.update({
        "A best": _words(best_a) if best_a else "-", "B best": _words(best_b) if best_b else "-",
        "A best us": _time(best_a), "B best us": _time(best_b), "best B/A": _ratio(_time(best_a), _time(best_b)),
        "A pick us": _time(pick_a), "B pick us": _time(pick_b), "pick B/A": _ratio(_time(pick_a), _time(pick_b)),
        "A kernels": best_a.get("kernel_count") if best_a else None,
        "B kernels": best_b.get("kernel_count") if best_b else None,
        "A configs": len(da["results"]), "B configs": len(db["results"]),
    })
    ok_a = {_key(r): r for r in da["results"] if r["status"] == OK or (not a.timed and r["plan_built"])}
    all_b = {_key(r): r for r in db["results"]}
    slowed, vanished = [], []
    for key, r in ok_a.items():
        other = all_b.get(key)
        ok_b = other is not None and (other["status"] == OK or (not b.timed and other["plan_built"]))
        if not ok_b:
            vanished.append(f"{_words(r)}" + (f" ({other['status']}: {other['reason']})" if other and other["reason"]
                                              else " (not listed)" if other is None else f" ({other['status']})"))
        elif a.timed and b.timed and _ratio(_time(r), _time(other)) and _ratio(_time(r), _time(other)) > 1 + slower:
            slowed.append(f"{_words(r)} {_ratio(_time(r), _time(other)):.2f}x")
    row["slowed"], row["vanished"] = _listed(slowed), _listed(vanished)
    if best_a and not best_b:
        row.update(change="lost", reason=b.failure() or "")
    elif best_b and not best_a:
        row.update(change="gained", reason=a.failure() or "")
    elif not best_a:
        row.update(change="same", reason=b.failure() or "")
    elif row["best B/A"] is not None and row["best B/A"] > 1 + slower:
        row.update(change="slower", reason="")
    elif row["best B/A"] is not None and row["best B/A"] < 1 / (1 + slower):
        row.update(change="faster", reason="")
    else:
        row.update(change="same", reason="")
    return row


def _listed(items, limit=3) -> str:
    """The first ``limit`` items and how many more (the JSON has every row; a cell stays readable)."""
    more = len(items) - limit
    return "; ".join(items[:limit]) + (f"; and {more} more" if more > 0 else "")


def _chosen(d) -> dict | None:
    """Offline: the first config that built a plan (what explore picks without a GPU)."""
    return next((r for r in d["results"] if r["plan_built"]), None)


def _run_release(release, tasks, options, device_profile, timeout) -> tuple[dict, dict]:
    """(what the release's child reported, {task name: Exploration or the error}) for one release."""
    library = release_library(release)
    env = dict(os.environ)  # "default": the cuDNN this environment loads ($CUDNN_BACKEND_LIBCUDNN included)
    if library is not None:
        env[ENV_LIBCUDNN] = library
        env["LD_LIBRARY_PATH"] = os.pathsep.join([str(pathlib.Path(library).parent)]
                                                 + [p for p in [env.get("LD_LIBRARY_PATH")] if p])
    root = str(pathlib.Path(__file__).resolve().parent.parent.parent)
    env["PYTHONPATH"] = os.pathsep.join([root, *[p for p in [env.get("PYTHONPATH")] if p]])
    with tempfile.TemporaryDirectory(prefix="cudnn-backend-releases-") as tmp:
        spec, out = pathlib.Path(tmp) / "spec.json", pathlib.Path(tmp) / "out.json"
        spec.write_text(json.dumps({"tasks": [t.__dict__ for t in tasks], "options": options.as_kwargs(),
                                    "device_profile": device_profile}), encoding="utf-8")
        cmd = [sys.executable, "-c", "import sys; from cudnn_backend.tune.releases import _child; "
                                     "sys.exit(_child(sys.argv[1], sys.argv[2]))", str(spec), str(out)]
        try:
            done = subprocess.run(cmd, env=env, capture_output=True, text=True, timeout=timeout)
        except subprocess.TimeoutExpired:
            raise CudnnBackendError(f"release {release}: took longer than {timeout} s (timeout=); nothing compared") \
                from None
        if done.returncode != 0 or not out.is_file():
            tail = (done.stderr or done.stdout).strip().splitlines()
            raise CudnnBackendError(f"release {release} ({library or 'the default cuDNN'}): the run failed (exit "
                                    f"{done.returncode}): {tail[-1] if tail else 'no output'}")
        data = json.loads(out.read_text(encoding="utf-8"))
    found = {name: (Exploration.from_dict(d) if isinstance(d, dict) else d) for name, d in data["graphs"].items()}
    return data["release"], found


def _child(spec_path, out_path) -> int:
    """In the release's own process: explore every task (serially, on this GPU or offline) and write the results."""
    spec = json.loads(pathlib.Path(spec_path).read_text(encoding="utf-8"))
    options = as_options(spec["options"], "options")
    tasks = [Task(**t) for t in spec["tasks"]]
    result = sweep(tasks, job="explore", executor="serial", options=options, device_profile=spec["device_profile"],
                   cache=None)
    graphs = {r.task.name: (r.exploration.to_dict() if r.exploration is not None else r.error)
              for r in result.results}
    facts = package_info()
    release = {"cudnn_version": facts["cudnn_version"], "library": facts["cudnn_path"], "gpus": facts.get("gpus")}
    pathlib.Path(out_path).write_text(json.dumps({"release": release, "graphs": graphs}, default=str),
                                      encoding="utf-8")
    return 0


def compare_releases(releases, tasks, *, options=None, device_profile=None, slower=SLOWER, timeout=3600,
                     progress=None) -> ReleaseComparison:
    """Explore ``tasks`` (``sweeps.Task``s, or pattern names) under each of two ``releases``, one child process
    each, and compare them graph by graph (``ReleaseComparison``). ``options``: a ``TuneOptions`` for both (default:
    explore's, without the engine table); ``device_profile``: work offline for that GPU (nothing timed)."""
    progress = progress_callback(progress)
    pair = list(releases) if not isinstance(releases, (str, os.PathLike)) else [releases]
    if len(pair) != 2:
        raise ValueError(f"releases: two to compare, not {len(pair)}")
    for r in pair:
        release_library(r)  # every release found before the first (long) run starts
    tasks = [t if isinstance(t, Task) else Task(str(t)) for t in tasks]
    if not tasks:
        raise ValueError("tasks: no graph to compare")
    if len({t.name for t in tasks}) != len(tasks):
        raise ValueError("tasks: two tasks share a name; label them (Task(..., label=...))")
    options = (options if options is not None else TuneOptions(engines=False)).for_job("explore")
    if not 0 < slower < 10:
        raise ValueError(f"slower: expected a fraction such as 0.1, not {slower!r}")
    runs = []
    for i, release in enumerate(pair):
        if progress is not None:
            progress(i, 2, f"exploring {len(tasks)} graph(s) with cuDNN {release}")
        runs.append(_run_release(release, tasks, options, device_profile, timeout))
    (info_a, found_a), (info_b, found_b) = runs
    rows = []
    for t in tasks:
        a, b = found_a.get(t.name), found_b.get(t.name)
        rows.append(compare_explorations(a if isinstance(a, Exploration) else None,
                                         b if isinstance(b, Exploration) else None, slower=slower,
                                         error_a=a if isinstance(a, str) else "", error_b=b if isinstance(b, str) else ""))
    timed = any(isinstance(x, Exploration) and x.timed for x in (*found_a.values(), *found_b.values()))
    return ReleaseComparison(info_a, info_b, timed, rows, slower)
