"""Sweep worker start-up on one GPU, with torch imported in the worker (as before) and without it (as now).

A sweep worker (``tune.sweeps._worker_main``) is a spawned process pinned to one GPU. Before, it imported torch
and made torch's CUDA context in a thread as it started (``inputs.warm_up``), and its first timed config waited
for that import (``Timer.bind`` imported torch); now it makes cuda.core's device current instead, and nothing
imports torch. Measured here, each in ``--repeats`` fresh spawned processes (the median reported, every sample
kept):

* ``import``: ``import cudnn_backend.tune`` (what every worker pays either way);
* ``warm_up_torch`` / ``warm_up_cuda_core``: the old and the new warm-up alone (torch's import and its CUDA
  context; cuda.core's import and the primary context);
* ``first_task_before`` / ``first_task_after``: spawn to the first result of a small ``tune`` task (the worker
  loop as it is, with the warm-up thread of the time): "before" runs the old warm-up thread and makes the first
  timed config wait for torch's import, as the old timer did.

Writes JSON to ``--out`` ($OUT/worker_startup.json under tools/gpu_run.sh). Needs one GPU and torch (for the
"before" side)."""
import argparse
import json
import multiprocessing
import os
import statistics
import time


def _old_warm_up():
    """tune.inputs.warm_up as it was when sweep workers imported torch."""
    try:
        import torch

        torch.zeros(1, device="cuda")
    except Exception:  # noqa: BLE001
        pass


def _probe(kind, conn):
    t0 = time.perf_counter()
    try:
        if kind == "import":
            import cudnn_backend.tune  # noqa: F401
        elif kind == "warm_up_torch":
            _old_warm_up()
        elif kind == "warm_up_cuda_core":
            from cudnn_backend.tune import inputs

            inputs.warm_up()
        elif kind.startswith("first_task"):
            import threading

            import cudnn_backend.tune as tune
            from cudnn_backend.tune import inputs, timing

            if kind == "first_task_before":
                warm = threading.Thread(target=_old_warm_up, daemon=True)
                warm.start()
                bind = timing.Timer.bind

                def bind_after_torch(self):  # the old Timer.bind imported torch: the first config waited for it
                    warm.join()
                    bind(self)

                timing.Timer.bind = bind_after_torch
            else:
                threading.Thread(target=inputs.warm_up, daemon=True).start()
            result = tune.run_task(tune.Task("conv_fwd", dict(n=8, c=64, h=28, w=28, k=64)), "tune",
                                   {"max_configs": 4, "finalists": 0, "cache": None}, worker="probe")
            if not result.ok:
                raise RuntimeError(result.error)
        conn.send(("ok", time.perf_counter() - t0))
    except BaseException as e:  # noqa: BLE001 - reported to the parent
        conn.send(("error", f"{type(e).__name__}: {e}"))


def measure(kind, repeats):
    ctx = multiprocessing.get_context("spawn")
    samples, errors = [], []
    for _ in range(repeats):
        parent, child = ctx.Pipe()
        t0 = time.perf_counter()
        p = ctx.Process(target=_probe, args=(kind, child))
        p.start()
        status, value = parent.recv()
        wall = time.perf_counter() - t0  # spawn included: what a sweep waits for
        p.join()
        if status == "ok":
            samples.append({"inside_s": value, "spawn_to_result_s": wall})
        else:
            errors.append(value)
    med = statistics.median(s["spawn_to_result_s"] for s in samples) if samples else None
    return {"median_s": med, "samples": samples, "errors": errors}


def main():
    ap = argparse.ArgumentParser(description=__doc__)
    ap.add_argument("--repeats", type=int, default=5)
    ap.add_argument("--out", default=os.path.join(os.environ.get("OUT", "."), "worker_startup.json"))
    args = ap.parse_args()
    import cudnn_backend as cb

    result = {"date": time.strftime("%Y-%m-%d %H:%M"), "gpus": cb.core.device.gpus()[:1], "repeats": args.repeats,
              "cudnn_version": cb.core.versions.format_version(cb.get_version()), "cases": {}}
    for kind in ("import", "warm_up_torch", "warm_up_cuda_core", "first_task_before", "first_task_after"):
        result["cases"][kind] = measure(kind, args.repeats)
        r = result["cases"][kind]
        print(f"{kind:20s} median {r['median_s'] if r['median_s'] is None else round(r['median_s'], 3)} s "
              f"(spawn to result){'; errors: ' + '; '.join(r['errors'][:2]) if r['errors'] else ''}", flush=True)
    before, after = result["cases"]["first_task_before"]["median_s"], result["cases"]["first_task_after"]["median_s"]
    if before and after:
        result["first_task_saved_s"] = before - after
        print(f"first task of a worker: {before:.2f} s before, {after:.2f} s after ({before - after:+.2f} s saved)")
    with open(args.out, "w") as f:
        json.dump(result, f, indent=1)
    print(f"wrote {args.out}")


if __name__ == "__main__":
    main()
