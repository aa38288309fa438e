"""Per call against C, measured so that noise cannot hide it: rounds of the C harness (benchmarks/c_harness.c) and
the same loops through cudnn-backend, interleaved (C first in even rounds, ours first in odd ones), both on the
same pinned CPU(s), both with the C harness's protocol (half a second of warm-up, then 7 timed batches, the
median per call). No torch: buffers are the package's DeviceBuffers.

    python benchmarks/percall_interleaved.py --c-harness /tmp/c_harness [--rounds 7] [--cpus 3] \
        [--out percall_interleaved.json] [--md percall_interleaved.md] [--info info.txt]

Metrics (cases: the launch-bound conv and the notebook's conv): execute with a prebuilt pack, bind new pointers +
execute (ours: ``VariantPack.bind_and_execute``; C: a fresh pack per call), build + finalize conv + bias + ReLU
through the generic Descriptor API and through the Graph builder (C: its build_graph()). Each row gives the median
of our per-round medians over C's, the median of the per-round ratios (drift between rounds cancels in a pair),
and the spread (min-max) of each side. Targets are the report's, never asserts.
"""
from __future__ import annotations

import argparse
import datetime
import json
import os
import pathlib
import statistics
import subprocess
import sys
import time


def _pin(argv):
    """The CPUs to pin to (``--cpus``, else the last one this process may use), before CUDA starts any thread."""
    for i, a in enumerate(argv):
        if a == "--cpus" and i + 1 < len(argv):
            return {int(x) for x in argv[i + 1].split(",")}
        if a.startswith("--cpus="):
            return {int(x) for x in a.split("=", 1)[1].split(",")}
    try:
        return {max(os.sched_getaffinity(0))}
    except (AttributeError, OSError):
        return None


PINNED = _pin(sys.argv)
if PINNED:
    try:
        os.sched_setaffinity(0, PINNED)  # this thread, and every thread it starts from here on (CUDA's too)
    except OSError:
        PINNED = None

import cudnn_backend as cb  # noqa: E402
from cudnn_backend import patterns  # noqa: E402
from cudnn_backend.runtime import memory  # noqa: E402
from cudnn_backend.runtime.execution import VariantPack, execute  # noqa: E402
from cudnn_backend.runtime.heuristics import build_first_plan  # noqa: E402

sys.path.insert(0, str(pathlib.Path(__file__).resolve().parent))
from percall_support import CASES  # noqa: E402
from test_percall import build_conv_bias_relu_generic  # noqa: E402

REPEATS = 7
ITERS = {"launch_bound": 20000, "notebook": 5000}
TARGETS = {"execute_us": 1.03, "bind_execute_us": 1.10, "build_graph_generic_us": 1.3, "build_graph_typed_us": 1.6}
LABELS = {"execute_us": "execute, prebuilt variant pack", "bind_execute_us": "bind new pointers + execute",
          "build_graph_generic_us": "build + finalize conv+bias+ReLU (generic API)",
          "build_graph_typed_us": "build + finalize conv+bias+ReLU (Graph builder)"}
C_METRIC = {"execute_us": "execute_us", "bind_execute_us": "bind_execute_us",
            "build_graph_generic_us": "build_graph_us", "build_graph_typed_us": "build_graph_us"}


def batches(fn, iters, sync=None):
    """The C harness's protocol: 0.5 s of warm-up, then the median per call of REPEATS timed batches."""
    end = time.perf_counter() + 0.5
    while time.perf_counter() < end:
        for _ in range(100):
            fn()
        if sync:
            sync()
    samples = []
    for _ in range(REPEATS):
        t0 = time.perf_counter()
        for _ in range(iters):
            fn()
        t1 = time.perf_counter()
        if sync:
            sync()
        samples.append((t1 - t0) / iters * 1e6)
    return statistics.median(samples)


class Ours:
    def __init__(self, name, handle, stream):
        c = CASES[name]
        self.name, self.c, self.handle, self.stream = name, c, handle, stream
        p = patterns.conv_fwd(n=c["n"], c=c["c"], h=c["h"], w=c["w"], k=c["k"], r=c["r"], s=c["s"],
                              padding=c["padding"], build=False)
        self.plan, _ = build_first_plan(p.build(handle), handle=handle)
        self.bufs = {}
        for t in (p.x, p.w, p.y):
            b = memory.DeviceBuffer(t.signature()[2][0] * t.signature()[1][0] * 2)  # n * stride_n fp16 elements
            b.fill(0x3C)  # fp16 0x3C3C, about 1.06
            self.bufs[t] = b
        self.pack = VariantPack(self.plan, self.bufs)
        by_uid = {t.uid: b for t, b in self.bufs.items()}
        self.pointers = tuple(by_uid[u].ptr for u in self.pack.pointer_uids)

    def measure(self):
        iters = ITERS[self.name]
        h, plan, pack, ptrs = self.handle, self.plan, self.pack, self.pointers
        sync = lambda: memory.synchronize(self.stream)  # noqa: E731
        c = self.c
        out = {"execute_us": batches(lambda: execute(h, plan, pack), iters, sync),
               "bind_execute_us": batches(lambda: pack.bind_and_execute(h, plan, ptrs), iters, sync)}
        graph_iters = max(10, iters // 20)

        def typed():
            p = patterns.conv_bias_relu(n=c["n"], c=c["c"], h=c["h"], w=c["w"], k=c["k"], r=c["r"], s=c["s"],
                                        padding=c["padding"], build=False)
            return p.build(h)

        out["build_graph_generic_us"] = batches(lambda: build_conv_bias_relu_generic(h, c), graph_iters)
        out["build_graph_typed_us"] = batches(typed, graph_iters)
        return out


def run_c(exe, name, fused):
    c = CASES[name]
    args = [exe, *(str(c[k]) for k in ("n", "c", "h", "w", "k", "r", "s", "padding")), str(ITERS[name]), str(fused)]
    pre = (lambda: os.sched_setaffinity(0, PINNED)) if PINNED else None
    res = subprocess.run(args, capture_output=True, text=True, timeout=600, preexec_fn=pre)
    if res.returncode != 0:
        raise RuntimeError(f"C harness failed: {res.stderr[-2000:]}")
    return json.loads(res.stdout.strip().splitlines()[-1])


def c_round(exe, name):
    plain, fused = run_c(exe, name, 0), run_c(exe, name, 1)
    return {"execute_us": plain["execute_us"], "bind_execute_us": plain["bind_execute_us"],
            "build_graph_generic_us": fused["build_graph_us"], "build_graph_typed_us": fused["build_graph_us"],
            "engine": plain["engine"]}


def summarize(rounds):
    rows = []
    for name in CASES:
        rs = [r for r in rounds if r["case"] == name]
        for metric in LABELS:
            ours = [r["ours"][metric] for r in rs]
            cs = [r["c"][metric] for r in rs]
            paired = [o / c for o, c in zip(ours, cs)]
            rows.append(dict(case=name, metric=metric, what=LABELS[metric], rounds=len(rs),
                             ours_median=statistics.median(ours), ours_min=min(ours), ours_max=max(ours),
                             c_median=statistics.median(cs), c_min=min(cs), c_max=max(cs),
                             ratio=statistics.median(ours) / statistics.median(cs),
                             paired_ratio=statistics.median(paired), paired_min=min(paired), paired_max=max(paired),
                             target=TARGETS[metric], met=statistics.median(paired) <= TARGETS[metric],
                             engine=rs[0]["engine"], c_engine=rs[0]["c"]["engine"]))
    return rows


def markdown(rows, meta, info_text=""):
    lines = [f"# Per call against C, interleaved — {meta['date']}", ""]
    if info_text:
        lines += ["```", info_text.strip(), "```", ""]
    lines += [f"{meta['rounds']} rounds, C and ours interleaved (alternating who goes first), each round the median "
              f"of {REPEATS} batches after 0.5 s of warm-up (launch-bound: {ITERS['launch_bound']} calls a batch, "
              f"notebook: {ITERS['notebook']}); CPU pinned: {meta['pinned'] or 'no (not allowed here)'}. "
              "Ratio: our median over C's; paired: the median of the per-round ratios (min-max in brackets).", "",
              "| case | what | ours µs (min-max) | C µs (min-max) | ratio | paired ratio | target | met | engines |",
              "| --- | --- | ---: | ---: | ---: | ---: | ---: | --- | --- |"]
    for r in rows:
        met = "yes" if r["met"] else "**no**"
        eng = f"{r['engine']}" + ("" if r["engine"] == r["c_engine"] else f" (C: {r['c_engine']})")
        lines.append(f"| {r['case']} | {r['what']} | {r['ours_median']:.2f} ({r['ours_min']:.2f}-{r['ours_max']:.2f}) "
                     f"| {r['c_median']:.2f} ({r['c_min']:.2f}-{r['c_max']:.2f}) | {r['ratio']:.3f} | "
                     f"{r['paired_ratio']:.3f} ({r['paired_min']:.3f}-{r['paired_max']:.3f}) | ≤ {r['target']:.2f} | "
                     f"{met} | {eng} |")
    return "\n".join(lines) + "\n"


def main(argv=None):
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--c-harness", default=os.environ.get("C_HARNESS"))
    ap.add_argument("--rounds", type=int, default=7)
    ap.add_argument("--cpus", help="CPUs to pin both sides to, e.g. 3 or 3,4 (default: the last allowed one)")
    ap.add_argument("--out")
    ap.add_argument("--md")
    ap.add_argument("--info")
    args = ap.parse_args(argv)
    if not args.c_harness or not os.path.exists(args.c_harness):
        ap.error("--c-harness (or $C_HARNESS): the built benchmarks/c_harness.c")
    handle = cb.Handle()
    stream = memory.device().create_stream()
    handle.stream = stream
    ours = {name: Ours(name, handle, stream) for name in CASES}
    rounds = []
    for i in range(max(5, args.rounds)):
        for name in CASES:
            if i % 2 == 0:
                c = c_round(args.c_harness, name)
                o = ours[name].measure()
            else:
                o = ours[name].measure()
                c = c_round(args.c_harness, name)
            rounds.append(dict(round=i, case=name, ours=o, c=c, engine=ours[name].plan.engine_index))
            print(f"round {i} {name}: " + ", ".join(f"{m} {o[m]:.2f}/{c[m]:.2f}" for m in LABELS), flush=True)
    meta = dict(date=datetime.date.today().isoformat(), rounds=max(5, args.rounds),
                pinned=",".join(map(str, sorted(PINNED))) if PINNED else "", cudnn=cb.get_version())
    rows = summarize(rounds)
    if args.out:
        pathlib.Path(args.out).write_text(json.dumps(dict(meta=meta, rounds=rounds, rows=rows), indent=1))
    info = pathlib.Path(args.info).read_text() if args.info and pathlib.Path(args.info).exists() else ""
    text = markdown(rows, meta, info)
    if args.md:
        pathlib.Path(args.md).write_text(text)
    print(text)


if __name__ == "__main__":
    main()
