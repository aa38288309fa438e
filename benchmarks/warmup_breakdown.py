"""Where a sweep worker's first task spends its extra seconds (the fixed cost that does not halve when the graphs are spread over GPUs).

    python benchmarks/warmup_breakdown.py --out warmup.json

Each measurement runs in a fresh process, as a spawned sweep worker does:

* ``steps``: import cudnn_backend, import torch, CUDA context (torch), a cuDNN handle, then the first task of the
  ResNet-50 preset tuned twice (two empty plan caches) and the second task once: the first task's time minus the
  second's is what the process paid once;
* ``overlapped``: the same steps, with torch's import and CUDA context made in a thread while the main thread
  imports cudnn_backend and makes the handle (what a worker can do before its first task);
* ``profile``: cProfile of the first task in a fresh process (top functions by cumulative time).
"""
import argparse
import json
import subprocess
import sys
import time

STEPS = r"""
import json, sys, tempfile, threading, time
t0 = time.perf_counter()
marks = {}
def mark(name):
    marks[name] = round(time.perf_counter() - t0, 3)
overlapped = sys.argv[1] == "overlapped"
if overlapped:
    def torch_side():
        import torch
        torch.zeros(1, device="cuda")
        mark("torch + CUDA context (thread)")
    th = threading.Thread(target=torch_side)
    th.start()
import cudnn_backend as cb
from cudnn_backend.tune import run_task, tasks_from_preset
mark("import cudnn_backend")
if not overlapped:
    import torch
    mark("import torch")
    torch.zeros(1, device="cuda")
    mark("CUDA context")
h = cb.Handle()
mark("cuDNN handle")
if overlapped:
    th.join()
    mark("thread joined")
tasks = tasks_from_preset("resnet50")
runs = []
for task in (tasks[0], tasks[0], tasks[1]):
    with tempfile.TemporaryDirectory() as d:
        r = run_task(task, "tune", {"cache": f"{d}/p.sqlite", "sweep": True})
    runs.append({"task": task.name, "seconds": round(r.seconds, 3), "ok": r.ok, "error": r.error[:200]})
    mark(f"task {len(runs)}")
h.close()
print(json.dumps({"marks": marks, "tasks": runs}))
"""

PROFILE = r"""
import cProfile, pstats, io, tempfile
from cudnn_backend.tune import run_task, tasks_from_preset
task = tasks_from_preset("resnet50")[0]
with tempfile.TemporaryDirectory() as d:
    pr = cProfile.Profile()
    pr.enable()
    r = run_task(task, "tune", {"cache": f"{d}/p.sqlite", "sweep": True})
    pr.disable()
s = io.StringIO()
pstats.Stats(pr, stream=s).sort_stats("cumulative").print_stats(45)
print(s.getvalue())
print("seconds", r.seconds, r.ok, r.error)
"""


def fresh(code, *args):
    t0 = time.perf_counter()
    out = subprocess.run([sys.executable, "-c", code, *args], capture_output=True, text=True, check=False)
    return out.stdout, out.stderr[-3000:], time.perf_counter() - t0


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--out", default="warmup.json")
    args = ap.parse_args()
    report = {}
    for mode in ("steps", "overlapped", "steps", "overlapped"):
        stdout, stderr, wall = fresh(STEPS, mode)
        try:
            entry = json.loads(stdout.strip().splitlines()[-1])
        except (ValueError, IndexError):
            entry = {"stdout": stdout[-2000:], "stderr": stderr}
        entry["process_wall_s"] = round(wall, 3)
        report.setdefault(mode, []).append(entry)
        print(mode, json.dumps(entry), flush=True)
    stdout, stderr, wall = fresh(PROFILE)
    report["profile"] = stdout[-12000:] + stderr[-1000:]
    print(report["profile"])
    with open(args.out, "w") as f:
        json.dump(report, f, indent=1)


if __name__ == "__main__":
    main()
