"""GPU benchmark of the main job's costs: a plan-cache hit (plan from JSON, target <= 2 ms) and explore's wall time
with the sweep, for the guide's conv + bias + ReLU and matmul + bias + GELU. Writes JSON (``--out``)."""
import argparse
import json
import statistics
import tempfile
import time

import cudnn_backend as cb
from cudnn_backend.tune import PlanCache


def main():
    ap = argparse.ArgumentParser(description=__doc__)
    ap.add_argument("--out", default="tune_gpu.json")
    args = ap.parse_args()
    h = cb.Handle()
    result = {"device": cb.tune.device_of(h), "cudnn_version": cb.core.versions.format_version(cb.get_version()),
              "date": time.strftime("%Y-%m-%d"), "explore": {}, "cache_hit": {}}
    for name in ("conv_bias_relu", "matmul_bias_gelu"):
        t0 = time.perf_counter()
        ex = cb.explore(name, handle=h, sweep=True, engines=False)
        wall = time.perf_counter() - t0
        pick, best = ex.heuristics_pick, ex.best
        result["explore"][name] = {
            "wall_s": wall, "configs": len(ex.results), "timed": sum(r.status == "ok" for r in ex.results),
            "sweep_timed": sum(r.status == "ok" and r.source == "sweep" for r in ex.results),
            "pick_us": pick.time_us, "best_us": best.time_us, "headroom": ex.headroom,
            "best": {"engine": best.engine_index, "knobs": best.knobs, "from": best.label},
            "best_not_slower_than_pick": best.time_us <= pick.time_us}
        print(name, json.dumps(result["explore"][name]))
    with tempfile.TemporaryDirectory() as d:
        cache = PlanCache(f"{d}/plans.sqlite")
        p = cb.patterns.conv_bias_relu(build=False)
        og = p.build(h)
        plan, ex = cb.autotune(p, h, cache=cache)
        text = plan.to_json()
        samples, json_only = [], []
        for _ in range(30):
            t0 = time.perf_counter()
            hit = cache.get(og, handle=h)
            samples.append((time.perf_counter() - t0) * 1e3)
            assert hit.engine_index == plan.engine_index and hit.knobs == plan.knobs
            hit.close()
            t0 = time.perf_counter()
            cb.plan_from_json(text, h).close()
            json_only.append((time.perf_counter() - t0) * 1e3)
        result["cache_hit"] = {"median_ms": statistics.median(samples), "min_ms": min(samples),
                               "plan_from_json_median_ms": statistics.median(json_only), "target_ms": 2.0,
                               "met": statistics.median(samples) <= 2.0, "engine": plan.engine_index}
        print("cache hit", json.dumps(result["cache_hit"]))
    with open(args.out, "w") as f:
        json.dump(result, f, indent=1, default=str)


if __name__ == "__main__":
    main()
