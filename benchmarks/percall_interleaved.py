"""Per call against C, measured so that noise cannot hide it: the loops of benchmarks/c_harness.c, built as a
library (``-DPERCALL_LIBRARY``) linked to the cuDNN this process loaded, run in this process on our own handle,
plan and pack, in batches that alternate with the same loops through cudnn-backend (C first in every other
pair), on the same pinned CPU(s). No torch: buffers are the package's DeviceBuffers.

    python benchmarks/percall_interleaved.py --c-library /tmp/libpercall.so [--rounds 7] [--cpus 3] \
        [--out percall_interleaved.json] [--md percall_interleaved.md] [--info info.txt]

Build the library (tools/gpu_run.sh bench does):

    cc -O2 -shared -fPIC -DPERCALL_LIBRARY benchmarks/c_harness.c -I$CUDNN_INC -I$CUDA_HOME/include \
       -I"$(python3 -c 'import sysconfig; print(sysconfig.get_paths()["include"])')" -L$CUDNN_LIB -l:libcudnn.so.9 \
       -Wl,-rpath,$CUDNN_LIB -o libpercall.so

Metrics (cases: the launch-bound conv and the notebook's conv): execute with a prebuilt pack (C: the same plan and
pack); two floors under it, without targets: C's own execute loop releasing and retaking the GIL around each call,
as a binding that lets other threads run during cuDNN's call must, and the least such binding (a builtin function
the interpreter calls with the same three arguments, doing nothing else): what of execute's ratio no binding can
remove, and so what is the package's; bind new pointers + execute (ours: ``VariantPack.bind_and_execute``; C: a
fresh pack per call, as cudnn-frontend binds), build + finalize conv + bias + ReLU through the generic Descriptor
API, the same code over the least binding of that API (benchmarks/build_floor.c; no target: what of the generic
ratio no binding can remove), through the Graph builder, and from the pattern function (no target: the Pattern's
names and reference on top of the builder); C: its build_graph(). One process, one handle, one plan: what differs
between the two sides is only the package.
Each round gives each side the median of 7 batches, the batches of C and ours alternating, the metrics in an order
that rotates from round to round (no metric always follows the graph builds); each row gives the median of our
per-round medians over C's, the median of the per-round ratios (min-max), and each side's spread.
Targets are the report's, never asserts.
"""
from __future__ import annotations

import argparse
import ctypes
import datetime
import itertools
import json
import os
import pathlib
import statistics
import sys
import tempfile
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
from cudnn_backend._bindings import _loader  # noqa: E402
from cudnn_backend.runtime import memory  # noqa: E402
from cudnn_backend.runtime.execution import VariantPack, execute  # noqa: E402
from cudnn_backend.runtime.heuristics import build_first_plan  # noqa: E402

sys.path.insert(0, str(pathlib.Path(__file__).resolve().parent))
from percall_support import CASES  # noqa: E402
from graph_build_ratios import build_floor_module, over_floor  # noqa: E402
from test_percall import (_pointwise, _tensor, build_conv_bias_relu_generic, build_conv_bias_relu_graph,  # noqa: E402
                          build_conv_bias_relu_pattern)

REPEATS = 7
TARGETS = {"execute_us": 1.03, "execute_gil_floor_us": None, "execute_call_floor_us": None, "bind_execute_us": 1.10,
           "build_graph_generic_us": 1.3, "build_graph_floor_us": None, "build_graph_typed_us": 1.6,
           "build_graph_pattern_us": None}
LABELS = {"execute_us": "execute, prebuilt variant pack",
          "execute_gil_floor_us": "floor 1: C's execute loop, the GIL released around each call",
          "execute_call_floor_us": "floor 2: the least binding (a builtin: call, GIL release, cuDNN)",
          "bind_execute_us": "bind new pointers + execute",
          "build_graph_generic_us": "build + finalize conv+bias+ReLU (generic API)",
          "build_graph_floor_us": "floor: the generic API's code over the least binding (benchmarks/build_floor.c)",
          "build_graph_typed_us": "build + finalize conv+bias+ReLU (Graph builder)",
          "build_graph_pattern_us": "build + finalize conv+bias+ReLU (patterns.conv_bias_relu)"}
ITERS = {"launch_bound": 20000, "notebook": 5000}  # execute calls a batch; graph builds: a twentieth, at least 10


def timed(fn, args, iters):
    """Microseconds per call of ``iters`` calls of ``fn(*args)``: the call a user's loop makes, with timeit's loop
    (no int made per iteration, no wrapper frame); the C side times its own loop the same way."""
    loop = itertools.repeat(None, iters)
    t0 = time.perf_counter()
    for _ in loop:
        fn(*args)
    return (time.perf_counter() - t0) / iters * 1e6


def run_ours(fn, args, iters):
    """One batch of a metric's first side: ``fn(*args)`` timed in timeit's loop, or, for a row whose first side is a
    C loop too (``args`` None), that loop's own timing."""
    return fn(iters) if args is None else timed(fn, args, iters)


class CLoops:
    """c_harness.c's loops, built with -DPERCALL_LIBRARY; each call runs and times one batch."""

    def __init__(self, path):
        _loader.load_cudnn()  # first: cuDNN's sublibraries then load beside it, whoever calls it first
        self.lib = lib = ctypes.CDLL(str(path))
        # the same library again, its functions called with the GIL held (the GIL-releasing loop needs it held)
        self.gil_lib = ctypes.PyDLL(str(path))
        vp, i64, ci = ctypes.c_void_p, ctypes.c_int64, ctypes.c_int
        for name, args in (("percall_execute", [vp, vp, vp, ci]),
                           ("percall_bind_execute", [vp, vp, ci, ctypes.POINTER(i64), ctypes.POINTER(vp), vp, ci]),
                           ("percall_build", [vp] + [i64] * 8 + [ci])):
            fn = getattr(lib, name)
            fn.argtypes, fn.restype = args, ctypes.c_double
        fn = self.gil_lib.percall_execute_gil
        fn.argtypes, fn.restype = [vp, vp, vp, ci], ctypes.c_double
        fn = self.gil_lib.percall_floor_function
        fn.argtypes, fn.restype = [vp, vp, vp], ctypes.py_object
        # the generic build's user code over the least binding of the descriptor API
        self._floor_dir = tempfile.TemporaryDirectory(prefix="build_floor-")  # (removed with this object)
        floor = build_floor_module(self._floor_dir.name)
        self.build_generic_floor = over_floor(build_conv_bias_relu_generic, floor, _tensor, _pointwise)
        libraries = loaded_cudnn_libraries()
        if len(libraries) != 1:
            raise RuntimeError(f"the C loops and the package must share one libcudnn.so.9; mapped: {libraries}")


def loaded_cudnn_libraries():
    """The distinct libcudnn.so.9 files mapped into this process (Linux; empty elsewhere)."""
    try:
        lines = pathlib.Path("/proc/self/maps").read_text().splitlines()
    except OSError:
        return set()
    paths = (f[5] for f in (line.split(None, 5) for line in lines) if len(f) == 6)
    return {os.path.realpath(path) for path in paths if os.path.basename(path).startswith("libcudnn.so.9")}


class Case:
    """One case: our plan and pack over DeviceBuffers, and both sides' batch functions for each metric."""

    def __init__(self, name, handle, stream, c_loops):
        c = CASES[name]
        self.name, self.c = name, c
        p = patterns.conv_fwd(n=c["n"], c=c["c"], h=c["h"], w=c["w"], k=c["k"], r=c["r"], s=c["s"],
                              padding=c["padding"], build=False)
        self.plan, _ = build_first_plan(p.build(handle), handle=handle)
        self.bufs = {}
        for t in (p.x, p.w, p.y):
            b = memory.DeviceBuffer(t.signature()[2][0] * t.signature()[1][0] * 2)  # n * stride_n fp16 elements
            b.fill(0x3C)  # fp16 0x3C3C, about 1.06
            self.bufs[t] = b
        self.pack = pack = VariantPack(self.plan, self.bufs)
        by_uid = {t.uid: b for t, b in self.bufs.items()}
        self.pointers = tuple(by_uid[u].ptr for u in pack.pointer_uids)
        n = len(pack.pointer_uids)
        self._uids = (ctypes.c_int64 * n)(*pack.pointer_uids)  # kept: the C side reads them every call
        self._ptrs = (ctypes.c_void_p * n)(*self.pointers)
        iters = ITERS[name]
        graph_iters = max(10, iters // 20)
        h, plan, ptrs, lib = handle, self.plan, self.pointers, c_loops.lib
        sizes = [c[k] for k in ("n", "c", "h", "w", "k", "r", "s", "padding")]
        ws = pack.workspace or None
        plan_ptr = plan.descriptor.ptr
        c_build = lambda k: lib.percall_build(h.ptr, *sizes, k)  # noqa: E731 - one C graph for the three builds
        self.sync = lambda: memory.synchronize(stream)  # noqa: E731
        c_execute = lambda k: lib.percall_execute(h.ptr, plan_ptr, pack.ptr, k)  # noqa: E731
        # metric: (ours, its arguments, C, calls a batch, synchronize after); the floor rows put in place of ours C's
        # loop releasing the GIL (arguments None: a C batch, timed by itself) and the least binding's builtin
        self.metrics = {
            "execute_us": (execute, (h, plan, pack), c_execute, iters, True),
            "execute_gil_floor_us": (lambda k: c_loops.gil_lib.percall_execute_gil(h.ptr, plan_ptr, pack.ptr, k),
                                     None, c_execute, iters, True),
            "execute_call_floor_us": (c_loops.gil_lib.percall_floor_function(h.ptr, plan_ptr, pack.ptr),
                                      (h, plan, pack), c_execute, iters, True),
            "bind_execute_us": (pack.bind_and_execute, (h, plan, ptrs),
                                lambda k: lib.percall_bind_execute(h.ptr, plan_ptr, n, self._uids, self._ptrs, ws, k),
                                iters, True),
            "build_graph_generic_us": (build_conv_bias_relu_generic, (h, c), c_build, graph_iters, False),
            "build_graph_floor_us": (c_loops.build_generic_floor, (h, c), c_build, graph_iters, False),
            "build_graph_typed_us": (build_conv_bias_relu_graph, (h, c), c_build, graph_iters, False),
            "build_graph_pattern_us": (build_conv_bias_relu_pattern, (h, c), c_build, graph_iters, False),
        }

    def warm_up(self, seconds=0.5):
        """Both sides of every metric, alternating, for ``seconds`` (clocks ramp up; caches and the interpreter's
        specializations settle)."""
        end = time.perf_counter() + seconds
        while time.perf_counter() < end:
            for ours, args, c_batch, k, sync in self.metrics.values():
                c_batch(max(1, k // 100))
                run_ours(ours, args, max(1, k // 100))
                if sync:
                    self.sync()

    def round(self, index):
        """{metric: (ours, C)}: each the median of REPEATS batches, C's and ours alternating."""
        out = {}
        names = list(self.metrics)
        start = index % len(names)  # the order rotates each round: no metric always runs first, after the builds
        for metric in names[start:] + names[:start]:
            ours, args, c_batch, k, sync = self.metrics[metric]
            mine, theirs = [], []
            for b in range(REPEATS):
                for side in ((0, 1) if (index + b) % 2 == 0 else (1, 0)):
                    if side == 0:
                        theirs.append(c_batch(k))
                    else:
                        mine.append(run_ours(ours, args, k))
                    if sync:
                        self.sync()
            out[metric] = (statistics.median(mine), statistics.median(theirs))
        return out


def summarize(rounds):
    rows = []
    for name in CASES:
        rs = [r for r in rounds if r["case"] == name]
        for metric in LABELS:
            ours = [r["ours"][metric] for r in rs]
            cs = [r["c"][metric] for r in rs]
            paired = [o / c for o, c in zip(ours, cs)]
            target = TARGETS[metric]
            rows.append(dict(case=name, metric=metric, what=LABELS[metric], rounds=len(rs),
                             ours_median=statistics.median(ours), ours_min=min(ours), ours_max=max(ours),
                             c_median=statistics.median(cs), c_min=min(cs), c_max=max(cs),
                             ratio=statistics.median(ours) / statistics.median(cs),
                             paired_ratio=statistics.median(paired), paired_min=min(paired), paired_max=max(paired),
                             target=target, met=None if target is None else statistics.median(paired) <= target,
                             engine=rs[0]["engine"]))
    return rows


def markdown(rows, meta, info_text=""):
    lines = [f"# Per call against C, interleaved in one process — {meta['date']}", ""]
    if info_text:
        lines += ["```", info_text.strip(), "```", ""]
    lines += [f"{meta['rounds']} rounds; in each, every metric runs {REPEATS} batches of C and {REPEATS} of ours, "
              "alternating (who goes first alternates too; the metrics' order rotates from round to round), and each "
              "side's round value is the median of its "
              f"batches (launch-bound: {ITERS['launch_bound']} calls a batch, notebook: {ITERS['notebook']}; "
              "graph builds a twentieth). C: c_harness.c's loops built as a library on this process's cuDNN, on "
              "the same handle, plan and pack. CPU pinned: "
              f"{meta['pinned'] or 'no (not allowed here)'}. Ratio: our median over C's; paired: the median of the "
              "per-round ratios (min-max in brackets).", "",
              "| case | what | ours µs (min-max) | C µs (min-max) | ratio | paired ratio | target | met | engine |",
              "| --- | --- | ---: | ---: | ---: | ---: | ---: | --- | --- |"]
    for r in rows:
        met = "—" if r["met"] is None else ("yes" if r["met"] else "**no**")
        target = "—" if r["target"] is None else f"≤ {r['target']:.2f}"
        lines.append(f"| {r['case']} | {r['what']} | {r['ours_median']:.2f} ({r['ours_min']:.2f}-{r['ours_max']:.2f}) "
                     f"| {r['c_median']:.2f} ({r['c_min']:.2f}-{r['c_max']:.2f}) | {r['ratio']:.3f} | "
                     f"{r['paired_ratio']:.3f} ({r['paired_min']:.3f}-{r['paired_max']:.3f}) | {target} | "
                     f"{met} | {r['engine']} |")
    return "\n".join(lines) + "\n"


def main(argv=None):
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--c-library", default=os.environ.get("C_LIBRARY"),
                    help="c_harness.c built with -DPERCALL_LIBRARY (or $C_LIBRARY)")
    ap.add_argument("--rounds", type=int, default=7, help="rounds (at least 5)")
    ap.add_argument("--cpus", help="CPUs to pin both sides to, e.g. 3 or 3,4 (default: the last allowed one)")
    ap.add_argument("--out")
    ap.add_argument("--md")
    ap.add_argument("--info")
    args = ap.parse_args(argv)
    if not args.c_library or not os.path.exists(args.c_library):
        ap.error("--c-library (or $C_LIBRARY): benchmarks/c_harness.c built with -DPERCALL_LIBRARY")
    handle = cb.Handle()
    stream = memory.device().create_stream()
    handle.stream = stream
    c_loops = CLoops(args.c_library)
    cases = {name: Case(name, handle, stream, c_loops) for name in CASES}
    for case in cases.values():
        case.warm_up()
    rounds = []
    n_rounds = max(5, args.rounds)
    for i in range(n_rounds):
        for name, case in cases.items():
            got = case.round(i)
            o = {m: v[0] for m, v in got.items()}
            c = {m: v[1] for m, v in got.items()}
            rounds.append(dict(round=i, case=name, ours=o, c=c, engine=case.plan.engine_index))
            print(f"round {i} {name}: " + ", ".join(f"{m} {o[m]:.2f}/{c[m]:.2f}" for m in LABELS), flush=True)
    meta = dict(date=datetime.date.today().isoformat(), rounds=n_rounds, method="in-process, alternating batches",
                pinned=",".join(map(str, sorted(PINNED))) if PINNED else "", cudnn=cb.get_version(),
                cudnn_library=sorted(loaded_cudnn_libraries()))
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
