"""Issue 12's measurement: tune the ResNet-50 preset (12 convolutions at batch 32 and 1) on 1 GPU and on N GPUs of
this host (one process per GPU, one shared queue), and compare wall times and winners.

    python benchmarks/sweep_gpus.py --gpus 2 --out sweep_gpus.json

Each run starts with an empty plan cache, so every graph is explored. Target: wall(N=2) <= 0.55 x wall(1); the
winners per layer the same config, or within timing noise; every winner checked correct (explore only lets a
config win when its outputs match the pattern's fp32 reference).
"""
import argparse
import json
import tempfile
import time

import cudnn_backend as cb
from cudnn_backend.tune import tasks_from_preset


def run(tasks, gpus, repeats):
    with tempfile.TemporaryDirectory() as d:
        t0 = time.perf_counter()
        result = cb.sweep(tasks, job="tune", executor="processes", gpus=gpus, cache=f"{d}/plans.sqlite",
                          repeats=repeats)
        wall = time.perf_counter() - t0
        stored = len(cb.PlanCache(f"{d}/plans.sqlite").entries())
    rows = {}
    for r in result:
        w = r.winner or {}
        rows[r.task.name] = {"ok": r.ok, "error": r.error, "engine": w.get("engine_index"), "knobs": w.get("knobs"),
                             "time_us": w.get("time_us"), "rel_error": w.get("rel_error"), "worker": r.worker,
                             "seconds": r.seconds}
    return {"gpus": gpus, "wall_s": wall, "stored": stored, "failures": len(result.failures), "tasks": rows}


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--gpus", type=int, default=2)
    ap.add_argument("--preset", default="resnet50")
    ap.add_argument("--repeats", type=int, default=20)
    ap.add_argument("--noise", type=float, default=0.05, help="relative time difference taken as timing noise")
    ap.add_argument("--out", default="sweep_gpus.json")
    args = ap.parse_args()
    tasks = tasks_from_preset(args.preset)
    one = run(tasks, 1, args.repeats)
    print(f"1 GPU: {one['wall_s']:.1f} s, {one['failures']} failures", flush=True)
    many = run(tasks, args.gpus, args.repeats)
    print(f"{args.gpus} GPUs: {many['wall_s']:.1f} s, {many['failures']} failures", flush=True)
    same = within_noise = differ = 0
    layers = []
    for name, a in one["tasks"].items():
        b = many["tasks"][name]
        if a["engine"] == b["engine"] and a["knobs"] == b["knobs"]:
            verdict = "same"
            same += 1
        elif a["time_us"] and b["time_us"] and abs(a["time_us"] - b["time_us"]) / min(a["time_us"], b["time_us"]) \
                <= args.noise:
            verdict = "within noise"
            within_noise += 1
        else:
            verdict = "differ"
            differ += 1
        layers.append({"graph": name, "1 GPU": f"{a['engine']} {a['knobs']} {a['time_us']}",
                       f"{args.gpus} GPUs": f"{b['engine']} {b['knobs']} {b['time_us']}", "verdict": verdict,
                       "correct": a["ok"] and b["ok"]})
    ratio = many["wall_s"] / one["wall_s"]
    summary = {"device": cb.core.device.gpus(), "cudnn_version": cb.core.versions.format_version(cb.get_version()),
               "date": time.strftime("%Y-%m-%d"), "preset": args.preset, "graphs": len(tasks),
               "wall_1gpu_s": one["wall_s"], f"wall_{args.gpus}gpu_s": many["wall_s"], "ratio": ratio,
               "target_ratio": 0.55, "met": ratio <= 0.55, "winners_same": same, "winners_within_noise": within_noise,
               "winners_differ": differ, "noise": args.noise, "layers": layers, "runs": [one, many]}
    print(json.dumps({k: v for k, v in summary.items() if k not in ("layers", "runs")}, indent=1))
    for row in layers:
        print(row)
    with open(args.out, "w") as f:
        json.dump(summary, f, indent=1, default=str)


if __name__ == "__main__":
    main()
