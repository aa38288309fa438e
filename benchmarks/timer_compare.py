"""Honest timing, checked on a GPU: the explorer's timer (``tune.timing.Timer``: cuda.core events, cuda-bindings
stream capture and memsets) against the torch-based timer it replaced (kept here, verbatim but for its name, as
``TorchTimer``), on the ResNet-50 preset.

For every graph of the preset, heuristics A's first ``--configs`` configs that build are timed by both timers on
the same plans, variant packs and buffers, ``--rounds`` interleaved rounds (the order alternating), in each
timing mode asked (warm, cold, CUDA graph). Per config: each timer's median over the rounds and their ratio;
per graph: each timer's winner, and whether they agree — or, where they differ, whether the two winners are
within noise (the torch timer's own round-to-round spread on them). Writes JSON to ``--out`` ($OUT/timer_compare.json
under tools/gpu_run.sh) and prints a summary. Needs a GPU, torch, cuda-core and cuda-bindings."""
import argparse
import json
import os
import statistics
import time

import cudnn_backend as cb
from cudnn_backend.errors import CudnnBackendError
from cudnn_backend.runtime import heuristics, memory, plans
from cudnn_backend.runtime.execution import VariantPack, execute
from cudnn_backend.tune import graphs, inputs
from cudnn_backend.tune.sweeps import tasks_from_preset
from cudnn_backend.tune.timing import Timer, Timing


class TorchTimer:
    """The explorer's earlier timer (tune/timing.py at 5ddce65), on torch's events and CUDA graphs."""

    def __init__(self, handle, *, warmup=10, repeats=20, target_sample_us=300.0, cold=False, cuda_graph=False):
        self.handle = handle
        self.warmup, self.repeats, self.target = int(warmup), int(repeats), float(target_sample_us)
        self.cold, self.cuda_graph = bool(cold), bool(cuda_graph)
        self._torch = self.stream = self._flush = None

    def bind(self):
        if self._torch is not None:
            return
        import torch

        self.stream = torch.cuda.current_stream()
        self.handle.stream = self.stream.cuda_stream
        if self.cold:
            l2 = getattr(torch.cuda.get_device_properties(torch.cuda.current_device()), "L2_cache_size", 64 << 20)
            self._flush = torch.empty(max(2 * l2, 1 << 20), dtype=torch.uint8, device="cuda")
        self._torch = torch

    def time(self, plan, packs) -> Timing:
        self.bind()
        torch = self._torch
        h = self.handle
        for i in range(self.warmup):
            execute(h, plan, packs[i % len(packs)])
        torch.cuda.synchronize()
        start, end = torch.cuda.Event(enable_timing=True), torch.cuda.Event(enable_timing=True)
        start.record(self.stream)
        execute(h, plan, packs[0])
        end.record(self.stream)
        end.synchronize()
        one_us = max(start.elapsed_time(end) * 1000.0, 0.5)
        batch = 1 if self.cold else max(1, min(200, int(self.target / one_us)))
        if self.cuda_graph:
            return self._time_graph(plan, packs, batch)
        samples = []
        for r in range(self.repeats):
            if self._flush is not None:
                self._flush.fill_(r & 0xFF)
            start.record(self.stream)
            for i in range(batch):
                execute(h, plan, packs[(r * batch + i) % len(packs)])
            end.record(self.stream)
            end.synchronize()
            samples.append(start.elapsed_time(end) * 1000.0 / batch)
        return Timing(statistics.median(samples), min(samples), max(samples), len(samples), batch)

    def _time_graph(self, plan, packs, batch) -> Timing:
        torch = self._torch
        side = torch.cuda.Stream()
        h = self.handle
        old = h.stream
        g = torch.cuda.CUDAGraph()
        try:
            h.stream = side.cuda_stream
            with torch.cuda.stream(side):
                execute(h, plan, packs[0])
            torch.cuda.synchronize()
            with torch.cuda.graph(g, stream=side):
                for i in range(batch):
                    execute(h, plan, packs[i % len(packs)])
        finally:
            h.stream = old
        start, end = torch.cuda.Event(enable_timing=True), torch.cuda.Event(enable_timing=True)
        for _ in range(3):
            g.replay()
        torch.cuda.synchronize()
        samples = []
        for _ in range(self.repeats):
            start.record(self.stream)
            g.replay()
            end.record(self.stream)
            end.synchronize()
            samples.append(start.elapsed_time(end) * 1000.0 / batch)
        return Timing(statistics.median(samples), min(samples), max(samples), len(samples), batch)


MODES = {"warm": {}, "cold": {"cold": True}, "cuda_graph": {"cuda_graph": True}}


def configs_of(subject, handle, n):
    """The first ``n`` configs of heuristics A that build a plan (runtime-compiled ones left out: their build
    takes seconds and says nothing about timers)."""
    out = []
    for cfg in heuristics.get_configs(subject.op_graph, "A", raise_if_empty=False):
        if len(out) >= n:
            break
        if any("RUNTIME_COMPILATION" in str(note) for note in cfg.behavior_notes):
            continue
        try:
            out.append((cfg, plans.build_plan(cfg, handle=handle)))
        except CudnnBackendError:
            continue
    return out


def compare_graph(task, handle, args):
    subject = graphs.resolve(task.builder, handle=handle, kwargs=dict(task.kwargs), name=task.name)
    built = configs_of(subject, handle, args.configs)
    sets = inputs.make_buffer_sets(subject.op_graph, 4)
    row = {"graph": task.name, "modes": {}}
    owned, config_packs = [], []
    try:
        for cfg, plan in built:
            ws = memory.DeviceBuffer(plan.workspace_size) if plan.workspace_size else None
            owned.append(ws)
            config_packs.append((cfg, plan, [VariantPack(plan, s.by_uid, ws if ws is not None else 0) for s in sets]))
        for mode in args.modes:
            kw = dict(MODES[mode], warmup=args.warmup, repeats=args.repeats)
            timers = {"new": Timer(handle, **kw), "torch": TorchTimer(handle, **kw)}
            per_config = []
            for cfg, plan, packs in config_packs:
                medians = {"new": [], "torch": []}
                for r in range(args.rounds):
                    order = ("new", "torch") if r % 2 == 0 else ("torch", "new")
                    for name in order:
                        medians[name].append(timers[name].time(plan, packs).median_us)
                new, old = statistics.median(medians["new"]), statistics.median(medians["torch"])
                per_config.append({"engine": cfg.engine_index, "knobs": {str(k): v for k, v in cfg.knobs.items()},
                                   "new_us": new, "torch_us": old, "ratio": new / old,
                                   "new_rounds": medians["new"], "torch_rounds": medians["torch"]})
            timers["new"].close()
            if not per_config:
                continue
            win_new = min(range(len(per_config)), key=lambda i: per_config[i]["new_us"])
            win_old = min(range(len(per_config)), key=lambda i: per_config[i]["torch_us"])
            a, b = per_config[win_new], per_config[win_old]
            gap = a["torch_us"] / b["torch_us"] - 1.0  # the new winner, timed by the torch timer, vs its winner
            noise = max((max(c["torch_rounds"]) - min(c["torch_rounds"])) / c["torch_us"] for c in (a, b))
            row["modes"][mode] = {"configs": per_config, "winner_new": win_new, "winner_torch": win_old,
                                  "same_winner": win_new == win_old, "gap": gap, "noise": noise,
                                  "within_noise": win_new == win_old or gap <= max(noise, 0.01)}
    finally:
        for _, _, packs in config_packs:
            for p in packs:
                p.close()
        for _, plan in built:
            plan.close()
        for ws in owned:
            if ws is not None:
                ws.close()
        for s in sets:
            s.close()
    return row


def main():
    ap = argparse.ArgumentParser(description=__doc__)
    ap.add_argument("--preset", default="resnet50")
    ap.add_argument("--configs", type=int, default=6, help="configs per graph (heuristics A's first that build)")
    ap.add_argument("--rounds", type=int, default=4, help="interleaved rounds per config and timer")
    ap.add_argument("--warmup", type=int, default=10)
    ap.add_argument("--repeats", type=int, default=20)
    ap.add_argument("--modes", default="warm,cold,cuda_graph")
    ap.add_argument("--graphs", type=int, default=None, help="only the first N graphs of the preset")
    ap.add_argument("--out", default=os.path.join(os.environ.get("OUT", "."), "timer_compare.json"))
    args = ap.parse_args()
    args.modes = [m for m in args.modes.split(",") if m]
    handle = cb.Handle()
    tasks = tasks_from_preset(args.preset)[:args.graphs]
    result = {"device": cb.tune.device_of(handle), "cudnn_version": cb.core.versions.format_version(cb.get_version()),
              "date": time.strftime("%Y-%m-%d %H:%M"), "preset": args.preset, "args": vars(args), "graphs": []}
    t0 = time.perf_counter()
    for task in tasks:
        try:
            row = compare_graph(task, handle, args)
        except (CudnnBackendError, RuntimeError, ValueError) as e:
            row = {"graph": task.name, "error": f"{type(e).__name__}: {e}"}
        result["graphs"].append(row)
        for mode, m in row.get("modes", {}).items():
            ratios = [c["ratio"] for c in m["configs"]]
            winner = "same" if m["same_winner"] else f"differs (gap {m['gap']:+.3f}, noise {m['noise']:.3f})"
            print(f"{task.name:45s} {mode:10s} ratio new/torch median {statistics.median(ratios):.3f} "
                  f"[{min(ratios):.3f}, {max(ratios):.3f}] winner {winner}", flush=True)
    summary = {}
    for mode in args.modes:
        rows = [g["modes"][mode] for g in result["graphs"] if mode in g.get("modes", {})]
        ratios = [c["ratio"] for m in rows for c in m["configs"]]
        if not rows:
            continue
        summary[mode] = {"graphs": len(rows), "configs": len(ratios), "ratio_median": statistics.median(ratios),
                         "ratio_min": min(ratios), "ratio_max": max(ratios),
                         "same_winner": sum(m["same_winner"] for m in rows),
                         "within_noise": sum(m["within_noise"] for m in rows)}
    result["summary"] = summary
    result["errors"] = [g for g in result["graphs"] if "error" in g]
    result["wall_s"] = time.perf_counter() - t0
    print(json.dumps(summary, indent=1))
    with open(args.out, "w") as f:
        json.dump(result, f, indent=1, default=str)
    print(f"wrote {args.out}")


if __name__ == "__main__":
    main()
