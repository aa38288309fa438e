"""The knob search's candidate generation without a GPU: ``pair_search="learned"`` (the default: pairs whose single
changes cuDNN accepted first, less likely tiers left after a run of refusals) against ``"all"`` (every pair
round-robin, each candidate checked against KNOB_INFO: the search before), on a preset's graphs against a device
profile. cuDNN finalizes every candidate engine config for real (that is the cost measured); the times the seeds
are chosen by are stand-ins (heuristics' order: the earlier proposed, the faster), so both searches start from the
same seeds. No time budget (``sweep_budget_s=None``): each search runs to its end.

    python benchmarks/knob_search_offline.py --preset resnet50 --profile h100 --out knob_search_offline.json

Per graph and mode: the seconds spent generating (``Exploration.phases["generate"]``: engine-config finalizes,
accepted or refused), the candidates found (configs cuDNN accepted that heuristics did not list), how many of
"all"'s the learned search found, and the combinations refused.
"""
from __future__ import annotations

import argparse
import json
import re
import time
from types import SimpleNamespace

from cudnn_backend.tune import TuneOptions, results, tasks_from_preset
from cudnn_backend.tune.evaluation import Evaluator
from cudnn_backend.tune.explorer import _Explorer

MODES = ("learned", "all")


class OrderTimes(Evaluator):
    """Plans built offline; a candidate's "time" is its position in candidate order (heuristics' order first)."""

    timed = True
    timer = SimpleNamespace(how="stand-in times (candidate order)", describe=lambda: "stand-in times")

    def screen(self, search, key, level, *, check=True):
        plan = self.build(search, key)
        if plan is None:
            return
        r = search.results[key]
        r.time_us = r.min_us = r.max_us = 10.0 + search.order[key]
        r.status, r.correct, r.checked_by = results.OK, True, "stand-in"
        plan.close()


def run(task, profile, mode) -> dict:
    opts = TuneOptions(sweep=True, sweep_budget_s=None, pair_search=mode, finalists=0, engines=False,
                       fusion=False).for_job("explore")
    ex_ = _Explorer(task.builder, handle=None, device_profile=profile, options=opts, kwargs=dict(task.kwargs),
                    name=task.name)
    ex_.evaluator.close()
    ex_.evaluator = OrderTimes(handle=None, deviceprop=ex_.deviceprop, options=opts)
    ex_.timed, ex_.sweep, ex_.notes = True, True, []
    try:
        t0 = time.perf_counter()
        ex = ex_.run()
        note = next((n for n in ex.notes if n.startswith("sweep:")), "")
        refused = re.search(r"(\d+) knob combinations refused", note)
        return {"generate_s": ex.phases.get("generate", 0.0), "wall_s": time.perf_counter() - t0,
                "found": sorted(repr(r.key) for r in ex.results if r.source == "sweep"),
                "refused": int(refused.group(1)) if refused else None, "note": note}
    finally:
        ex_.close()


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--preset", default="resnet50")
    ap.add_argument("--profile", default="h100", help="a bundled device profile or a file")
    ap.add_argument("--graphs", type=int, default=None, help="the first N graphs only")
    ap.add_argument("--out", default="knob_search_offline.json")
    args = ap.parse_args()
    rows = []
    for task in tasks_from_preset(args.preset)[:args.graphs]:
        row = {"graph": task.name}
        for mode in MODES:
            row[mode] = run(task, args.profile, mode)
        found = {m: set(row[m]["found"]) for m in MODES}
        row["learned_found_of_all"] = len(found["learned"] & found["all"]) / len(found["all"]) if found["all"] \
            else None
        rows.append(row)
        print(f"{task.name}: " + "; ".join(f"{m} {row[m]['generate_s']:.2f} s, {len(found[m])} found, "
                                         f"{row[m]['refused']} refused" for m in MODES) +
              (f"; learned found {row['learned_found_of_all']:.0%} of all's" if found["all"] else ""), flush=True)
    total = {m: {"generate_s": sum(r[m]["generate_s"] for r in rows), "found": sum(len(r[m]["found"]) for r in rows),
                 "refused": sum(r[m]["refused"] or 0 for r in rows)} for m in MODES}
    both = sum(len(set(r["learned"]["found"]) & set(r["all"]["found"])) for r in rows)
    summary = {"total": total, "learned_found_of_all": both / total["all"]["found"] if total["all"]["found"] else None,
               "generate_ratio": total["learned"]["generate_s"] / total["all"]["generate_s"]
               if total["all"]["generate_s"] else None}
    print(f"== {args.preset} on the {args.profile} profile: " + "; ".join(
        f"{m} {total[m]['generate_s']:.1f} s, {total[m]['found']} found, {total[m]['refused']} refused" for m in MODES)
        + f"; learned found {summary['learned_found_of_all']:.1%} of all's in {summary['generate_ratio']:.2f}x the "
          "time")
    with open(args.out, "w") as f:
        json.dump({"preset": args.preset, "profile": args.profile, "summary": summary, "graphs": rows}, f, indent=1)


if __name__ == "__main__":
    main()
