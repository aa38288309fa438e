"""Offline answers against the GPU's: the default support catalogue probed live on this GPU and offline (the bundled
profile of this GPU, and a profile captured here in the same run), per graph: the verdict, configs per heuristics
mode (A, B, FALLBACK), the engines that finalize, heuristics' first config per mode; then how far the offline answers
agree.

    python benchmarks/offline_vs_live.py --out "$OUT"          # on the GPU machine, ~2-3 min on an H200

The live probe is ``support_matrix`` on this GPU (its worker processes, one handle each; no kernel counts). Each
offline probe runs in a process of its own with the no-device stand-in forced (``CUDNN_BACKEND_NODEVICE=1``): what a
machine without a GPU answers, with the same cuDNN (``CUDNN_BACKEND_LIBCUDNN`` is passed on, so a release carried to
the GPU is measured as it is). Offline probes: the bundled profile with ``plans="precompiled"`` (the default: yes*
for runtime-compiled configs) and ``plans="all"`` (every plan compiled: does a yes* hold?), and the captured profile
(``plans="precompiled"``). ``--budget-s`` skips the ``plans="all"`` probe when the run would overrun.

Writes to ``--out``: ``offline_vs_live_cudnn<MMmmpp>.json`` (the record: date, GPU, driver, cuDNN, every graph's
answers side by side, the agreement counts, the kinds of difference) and ``offline_vs_live_cudnn<MMmmpp>.md`` (the
summary table, as the issue's), the four support matrices (``support --json`` format) and the captured profile.

``--compare LIVE.json OFFLINE.json [...]`` compares support matrices already written (e.g. a committed live matrix
against offline ones probed on a CPU machine) and prints the summary, without probing.
"""
from __future__ import annotations

import argparse
import collections
import datetime
import json
import os
import pathlib
import subprocess
import sys
import time

ROOT = pathlib.Path(__file__).resolve().parent.parent
if str(ROOT) not in sys.path:
    sys.path.insert(0, str(ROOT))

from cudnn_backend.core import device as _device  # noqa: E402
from cudnn_backend.core.versions import format_version, loaded_version  # noqa: E402
from cudnn_backend.runtime.profiles import DeviceProfile  # noqa: E402
from cudnn_backend.tune import support  # noqa: E402
from cudnn_backend.tune.support import SupportMatrix  # noqa: E402

BUNDLED = {"NVIDIA H100 80GB HBM3": "h100", "NVIDIA H200": "h200"}
MODES = support.MODES  # A, B, FALLBACK


# ---------------------------------------------------------------------------------------------
# probing
# ---------------------------------------------------------------------------------------------
def _matrix(profile, plans, workers, name):
    return support.support_matrix(None, profile, plans=plans, kernels=False if profile is None else None,
                                  workers=workers, cache=False, modes=MODES, name=name)


def offline_part(args) -> int:
    """The child: one offline probe with the stand-in, written as a support matrix."""
    if _device.driver() != "stand-in":
        print(f"offline part: the no-device stand-in is not in use (driver: {_device.driver()})", file=sys.stderr)
        return 2
    m = _matrix(args.profile, args.plans, args.workers, args.name)
    m.write_json(args.matrix)
    return 0


def _offline(profile, plans, path, args, log) -> SupportMatrix:
    env = dict(os.environ, CUDNN_BACKEND_NODEVICE="1",
               PYTHONPATH=os.pathsep.join([str(ROOT), *[p for p in [os.environ.get("PYTHONPATH")] if p]]))
    cmd = [sys.executable, str(pathlib.Path(__file__).resolve()), "--offline-part", "--profile", str(profile),
           "--plans", plans, "--matrix", str(path)] + (["--workers", str(args.workers)] if args.workers else []) + \
        (["--name", args.name] if args.name else [])
    t0 = time.perf_counter()
    done = subprocess.run(cmd, env=env, capture_output=True, text=True)
    if done.returncode != 0:
        raise SystemExit(f"offline probe ({profile}, plans={plans}) failed:\n{done.stderr[-3000:]}")
    log(f"offline {profile} plans={plans}: {time.perf_counter() - t0:.1f} s")
    return SupportMatrix.load(path)


# ---------------------------------------------------------------------------------------------
# comparing
# ---------------------------------------------------------------------------------------------
def _answers(r) -> dict:
    """One result's answers, compact."""
    if r is None:
        return None
    return {"status": r.status, "verdict": r.verdict, "stage": r.stage, "configs": dict(r.configs),
            "engines": list(r.engines_finalized), "engines_count": r.engines_supported,
            "first": dict(r.first_configs), "chosen": r.chosen, "reason": r.reason[:300], "caveat": r.caveat[:400],
            "offline_gaps": list(r.offline_gaps), "cuda_runtime": dict(r.cuda_runtime)}


def _same_engines(live, off):
    if live.engines_finalized and off.engines_finalized:
        return live.engines_finalized == off.engines_finalized
    return live.engines_supported == off.engines_supported  # a record without the lists: the counts


def compare(live: SupportMatrix, off: SupportMatrix) -> dict:
    """The agreement of an offline matrix with the live one: counts, and per graph what differs."""
    by_key = {r.key: r for r in off.results}
    c = collections.Counter()
    kinds = collections.Counter()
    engine_sets = collections.Counter()
    rows = []
    for lr in live.results:
        r = by_key.get(lr.key)
        if r is None:
            c["missing offline"] += 1
            continue
        c["graphs"] += 1
        differs = []
        live_yes = lr.supported
        if r.unknown:
            c["unknown offline"] += 1
            c["unknown offline, the GPU runs it"] += live_yes
            differs.append("unknown offline")
        elif r.supported == live_yes:
            c["verdicts agree"] += 1
        else:
            if live_yes:
                c["false 'not supported'"] += 1
                differs.append("false no")
            elif r.status == "yes*":
                c["offline yes* that fail live"] += 1
                differs.append("yes* fails live")
            else:
                c["offline yes that fail live"] += 1
                differs.append("yes fails live")
            if not r.caveat:
                c["verdict differences without a caveat"] += 1
        same_engines = _same_engines(lr, r)
        c["engines that finalize agree"] += same_engines
        if not same_engines and lr.engines_finalized and r.engines_finalized:
            live_only = tuple(sorted(set(lr.engines_finalized) - set(r.engines_finalized)))
            off_only = tuple(sorted(set(r.engines_finalized) - set(lr.engines_finalized)))
            engine_sets[f"live only {list(live_only)}, offline only {list(off_only)}"] += 1
        modes_same = True
        for m in MODES:
            if m in lr.configs and m in r.configs:
                same = lr.configs[m] == r.configs[m]
                c[f"configs {m} agree"] += same
                c[f"configs {m} compared"] += 1
                modes_same &= same
                if not same:
                    kinds[f"mode {m}: " + ("fewer offline" if r.configs[m] < lr.configs[m] else "more offline")] += 1
            if lr.configs.get(m) and r.configs.get(m) and lr.first_configs and r.first_configs:
                c[f"first config {m} compared"] += 1  # both listed configs (a record older than first_configs: no)
                c[f"first config {m} agree"] += lr.first_configs.get(m) == r.first_configs.get(m)
        counts_same = modes_same and same_engines
        c["engine and config counts agree"] += counts_same
        if not counts_same:
            differs.append("counts")
            if r.offline_gaps:  # a label (tune.offline_gaps): the caveat says the lists or engines may differ
                c["count differences the caveat announces"] += 1
            if not same_engines:
                kinds["engines that finalize differ"] += 1
        rows.append({"key": lr.key, "family": lr.family, "live": _answers(lr), "offline": _answers(r),
                     "differs": differs})
    return {"counts": dict(c), "count_differences": dict(kinds.most_common()),
            "engine_set_differences": dict(engine_sets.most_common(20)), "rows": rows}


def _pct(n, total) -> str:
    return f"{n} of {total}" + (f" ({100.0 * n / total:.1f}%)" if total else "")


_TABLE = (("verdicts agree", "verdicts agree"),
          ("unknown offline", "unknown offline (labelled)"),
          ("unknown offline, the GPU runs it", "… of which the GPU runs"),
          ("false 'not supported'", "graphs the GPU runs that offline calls \"not supported\""),
          ("offline yes* that fail live", "offline \"yes*\" that fail live"),
          ("offline yes that fail live", "offline \"yes\" that fail live"),
          ("verdict differences without a caveat", "verdict differences without a caveat"),
          ("engines that finalize agree", "engines that finalize agree"),
          ("configs A agree", "configs of mode A agree"), ("configs B agree", "configs of mode B agree"),
          ("configs FALLBACK agree", "configs of mode FALLBACK agree"),
          ("first config A agree", "heuristics' first config (A) agrees"),
          ("engine and config counts agree", "engine and config counts agree"),
          ("count differences the caveat announces", "count differences the caveat announces"))


def summary_markdown(record) -> str:
    cols = list(record["comparisons"])
    lines = [f"# Offline answers against the GPU's: {record['gpu']}, cuDNN {record['cudnn']} ({record['date']})", "",
             f"Default catalogue, {record['graphs']} graphs; live on the GPU (driver {record.get('driver', '?')}), "
             "offline with the no-device stand-in. Columns: " + "; ".join(
                 f"`{k}`: {v['what']}" for k, v in record["comparisons"].items()) + ".", "",
             "| | " + " | ".join(cols) + " |", "|---|" + "---|" * len(cols)]
    for key, label in _TABLE:
        cells = []
        for col in cols:
            cnt = record["comparisons"][col]["counts"]
            total = cnt.get("graphs", 0)
            if key.startswith("configs ") or key.startswith("first config "):
                total = cnt.get(key.replace(" agree", " compared"), 0)
            if key == "unknown offline, the GPU runs it":
                total = cnt.get("unknown offline", 0)
            if key == "count differences the caveat announces":
                total = total - cnt.get("engine and config counts agree", 0)
            cells.append(_pct(cnt.get(key, 0), total) if total or cnt.get(key) else "-")
        lines.append(f"| {label} | " + " | ".join(cells) + " |")
    for col in cols:
        comp = record["comparisons"][col]
        lines += ["", f"## {col}: kinds of difference", ""]
        for what, n in comp["count_differences"].items():
            lines.append(f"- {what}: {n}")
        for what, n in comp["engine_set_differences"].items():
            lines.append(f"- engines {what}: {n} graphs")
        diff = [row for row in comp["rows"] if set(row["differs"]) - {"counts"}]
        if diff:
            lines += ["", "| graph | live | offline | caveat |", "|---|---|---|---|"]
            for row in diff[:80]:
                off = row["offline"]
                said = ", ".join(off["offline_gaps"]) if off["offline_gaps"] else (off["caveat"] or "-")[:100]
                lines.append(f"| {row['key']} | {row['live']['status']} | {off['status']} | {said} |")
    lines += ["", "Times: " + ", ".join(f"{k} {v:.1f} s" for k, v in record["seconds"].items())]
    return "\n".join(lines) + "\n"


# ---------------------------------------------------------------------------------------------
# the run
# ---------------------------------------------------------------------------------------------
def _driver_version() -> str:
    try:
        out = subprocess.run(["nvidia-smi", "--query-gpu=driver_version", "--format=csv,noheader"],
                             capture_output=True, text=True, timeout=30).stdout.split()
        return out[0] if out else "?"
    except (OSError, subprocess.SubprocessError):
        return "?"


def measure(args) -> int:
    if not _device.gpu_available():
        print("offline_vs_live: needs this machine's GPU (none is visible); --compare compares matrices already "
              "written", file=sys.stderr)
        return 2
    out = pathlib.Path(args.out)
    out.mkdir(parents=True, exist_ok=True)
    t_start = time.perf_counter()
    seconds = {}

    def log(text):
        print(f"[{time.perf_counter() - t_start:6.1f} s] {text}", flush=True)

    version = loaded_version()
    tag = f"cudnn{version}"
    t0 = time.perf_counter()
    live = _matrix(None, "precompiled", args.workers, args.name)
    seconds["live"] = time.perf_counter() - t0
    live.write_json(out / f"live_{tag}.json")
    gpu = live.device.get("name", "?")
    log(f"live on {gpu}: {len(live)} graphs, {live.stage_counts()} ({seconds['live']:.1f} s)")
    captured = DeviceProfile.capture(0)
    stem = "".join(ch if ch.isalnum() else "_" for ch in gpu.lower()).strip("_")
    profile_path = captured.save(out / f"{stem}_deviceprop_{tag}.json")
    log(f"captured {profile_path.name}; device facts: " + json.dumps({k: v["value"] for k, v in
                                                                       (captured.device_facts or {}).items()}))
    runs = []
    bundled = BUNDLED.get(gpu)
    if bundled:
        runs.append(("bundled", bundled, "precompiled", f"the bundled {bundled} profile, plans='precompiled'"))
    runs.append(("captured", str(profile_path), "precompiled", "the profile captured in this run"))
    if bundled:
        runs.append(("bundled, --plans all", bundled, "all", f"the bundled {bundled} profile, every plan compiled"))
    comparisons, matrices = {}, {}
    for label, profile, plans, what in runs:
        if plans == "all" and time.perf_counter() - t_start > args.budget_s - args.all_reserve_s:
            log(f"skipped {label}: {time.perf_counter() - t_start:.0f} s gone, and compiling every plan takes about "
                f"{args.all_reserve_s:.0f} s more than the {args.budget_s:.0f} s budget leaves (--budget-s)")
            continue
        t0 = time.perf_counter()
        slug = label.replace(", --plans ", "_").replace(" ", "_")
        matrices[label] = _offline(profile, plans, out / f"offline_{slug}_{tag}.json", args, log)
        seconds[label] = time.perf_counter() - t0
        comparisons[label] = dict(compare(live, matrices[label]), what=what)
        log(f"{label}: " + json.dumps({k: v for k, v in comparisons[label]["counts"].items()
                                       if not k.endswith("compared")}))
    record = {"format": "cudnn-backend offline vs live", "version": 1,
              "date": datetime.datetime.now(datetime.timezone.utc).strftime("%Y-%m-%d"), "gpu": gpu,
              "driver": _driver_version(), "cudnn": format_version(version), "graphs": len(live),
              "live_device": live.device, "device_facts": captured.device_facts, "seconds": seconds,
              "comparisons": comparisons}
    record["seconds"]["total"] = time.perf_counter() - t_start
    (out / f"offline_vs_live_{tag}.json").write_text(json.dumps(record, indent=1) + "\n", encoding="utf-8")
    md = summary_markdown(record)
    (out / f"offline_vs_live_{tag}.md").write_text(md, encoding="utf-8")
    print(md)
    log(f"wrote {out}/offline_vs_live_{tag}.json and .md")
    return 0


def compare_files(paths) -> int:
    live = SupportMatrix.load(paths[0])
    comparisons = {pathlib.Path(p).name: dict(compare(live, SupportMatrix.load(p)), what=f"{p}") for p in paths[1:]}
    record = {"gpu": live.device.get("name", "?"), "cudnn": live.cudnn_version, "date": "-", "graphs": len(live),
              "driver": "?", "seconds": {}, "comparisons": comparisons}
    print(summary_markdown(record))
    return 0


def main(argv=None) -> int:
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    p.add_argument("--out", default="offline_vs_live_out", help="folder for the record (default: %(default)s)")
    p.add_argument("--workers", type=int, default=None, help="worker processes (default: one per core)")
    p.add_argument("--name", default=None, help="only catalogue graphs whose name contains this (a quick check)")
    p.add_argument("--budget-s", type=float, default=230.0,
                   help="the run's time budget: the plans='all' probe is skipped when less than --all-reserve-s of "
                        "it is left (default: %(default)s)")
    p.add_argument("--all-reserve-s", type=float, default=90.0,
                   help="what the plans='all' probe is expected to take (default: %(default)s)")
    p.add_argument("--compare", nargs="+", metavar="MATRIX.json",
                   help="compare: the live matrix first, then offline ones (no probing)")
    p.add_argument("--offline-part", action="store_true", help=argparse.SUPPRESS)
    p.add_argument("--profile", help=argparse.SUPPRESS)
    p.add_argument("--plans", default="precompiled", help=argparse.SUPPRESS)
    p.add_argument("--matrix", help=argparse.SUPPRESS)
    args = p.parse_args(argv)
    if args.offline_part:
        return offline_part(args)
    if args.compare:
        if len(args.compare) < 2:
            p.error("--compare: the live matrix, then one or more offline matrices")
        return compare_files(args.compare)
    return measure(args)


if __name__ == "__main__":
    sys.exit(main())
