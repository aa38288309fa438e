"""Graph construction on the CPU: cudnn-backend next to the same graph built in C, in one process.

cuDNN finalizes operation graphs offline, so no GPU is needed. The graph: X 1x8x8x8 fp16
NHWC, W 8x8x3x3, padding 1, bias, ReLU: 6 tensors, a convolution descriptor, 3 operations and the operation
graph, finalized (and every descriptor destroyed), built three ways:

* ``c``: ``benchmarks/graph_build.c`` compiled here as a shared library (``graph_build_batch``);
* ``generic``: ``cudnn_backend.Descriptor`` + ``.set(CUDNN_ATTR_..., CUDNN_TYPE_..., value)`` + ``.finalize()``;
* ``graph``: the ``Graph`` builder, graph checks included.

Timing: 7 batches; each batch interleaves short runs of the three (so a noisy machine's drifts hit all three
alike) and gives each its mean microseconds per graph; the result of each is the median of its 7 batches, and
the ratios are those medians over C's. Targets: generic <= 1.5x C, Graph <= 2x C.

Run: ``python benchmarks/graph_build_ratios.py [--out DIR]`` prints the table and writes
``DIR/graph_build.json`` and ``DIR/graph_build.md`` (default ``benchmarks/results/<date>-cpu``).
``benchmarks/test_graph_build.py`` runs the same under pytest(-benchmark).
"""
from __future__ import annotations

import argparse
import ctypes
import datetime
import json
import os
import pathlib
import platform
import shutil
import statistics
import subprocess
import sys
import tempfile
import time

HERE = pathlib.Path(__file__).resolve().parent
ROOT = HERE.parent
C_SOURCE = HERE / "graph_build.c"
FLOOR_SOURCE = HERE / "build_floor.c"  # the least binding of the generic API
TARGETS = {"generic": 1.5, "graph": 2.0}
BATCHES = 7

import cudnn_backend as cb  # noqa: E402 - after the constants: loads cuDNN (the C library links the same one)
from cudnn_backend import *  # noqa: E402,F403 - the C names, as a user of the generic API writes them


# ------------------------------------------------------------------------------------------------
# the three builders
# ------------------------------------------------------------------------------------------------
def _tensor(uid, dims, strides, data_type, virtual=False):
    t = cb.Descriptor(CUDNN_BACKEND_TENSOR_DESCRIPTOR)
    t.set(CUDNN_ATTR_TENSOR_DATA_TYPE, CUDNN_TYPE_DATA_TYPE, data_type)
    t.set(CUDNN_ATTR_TENSOR_DIMENSIONS, CUDNN_TYPE_INT64, dims)
    t.set(CUDNN_ATTR_TENSOR_STRIDES, CUDNN_TYPE_INT64, strides)
    t.set(CUDNN_ATTR_TENSOR_UNIQUE_ID, CUDNN_TYPE_INT64, uid)
    t.set(CUDNN_ATTR_TENSOR_BYTE_ALIGNMENT, CUDNN_TYPE_INT64, 16)
    if virtual:
        t.set(CUDNN_ATTR_TENSOR_IS_VIRTUAL, CUDNN_TYPE_BOOLEAN, True)
    return t.finalize()


def _pointwise(mode, x, b, y):
    p = cb.Descriptor(CUDNN_BACKEND_POINTWISE_DESCRIPTOR)
    p.set(CUDNN_ATTR_POINTWISE_MODE, CUDNN_TYPE_POINTWISE_MODE, mode)
    p.set(CUDNN_ATTR_POINTWISE_MATH_PREC, CUDNN_TYPE_DATA_TYPE, CUDNN_DATA_FLOAT)
    p.finalize()
    op = cb.Descriptor(CUDNN_BACKEND_OPERATION_POINTWISE_DESCRIPTOR)
    op.set(CUDNN_ATTR_OPERATION_POINTWISE_PW_DESCRIPTOR, CUDNN_TYPE_BACKEND_DESCRIPTOR, p)
    op.set(CUDNN_ATTR_OPERATION_POINTWISE_XDESC, CUDNN_TYPE_BACKEND_DESCRIPTOR, x)
    if b is not None:
        op.set(CUDNN_ATTR_OPERATION_POINTWISE_BDESC, CUDNN_TYPE_BACKEND_DESCRIPTOR, b)
    op.set(CUDNN_ATTR_OPERATION_POINTWISE_YDESC, CUDNN_TYPE_BACKEND_DESCRIPTOR, y)
    return op.finalize()


def build_generic():
    """The graph through the generic API, the way graph_build.c writes it."""
    xs = [512, 1, 64, 8]
    x = _tensor(1, [1, 8, 8, 8], xs, CUDNN_DATA_HALF)
    w = _tensor(2, [8, 8, 3, 3], [72, 1, 24, 8], CUDNN_DATA_HALF)
    b = _tensor(3, [1, 8, 1, 1], [8, 1, 8, 8], CUDNN_DATA_HALF)
    conv_out = _tensor(4, [1, 8, 8, 8], xs, CUDNN_DATA_FLOAT, True)
    biased = _tensor(5, [1, 8, 8, 8], xs, CUDNN_DATA_FLOAT, True)
    y = _tensor(6, [1, 8, 8, 8], xs, CUDNN_DATA_HALF)
    conv = cb.Descriptor(CUDNN_BACKEND_CONVOLUTION_DESCRIPTOR)
    conv.set(CUDNN_ATTR_CONVOLUTION_COMP_TYPE, CUDNN_TYPE_DATA_TYPE, CUDNN_DATA_FLOAT)
    conv.set(CUDNN_ATTR_CONVOLUTION_CONV_MODE, CUDNN_TYPE_CONVOLUTION_MODE, CUDNN_CROSS_CORRELATION)
    conv.set(CUDNN_ATTR_CONVOLUTION_SPATIAL_DIMS, CUDNN_TYPE_INT64, 2)
    conv.set(CUDNN_ATTR_CONVOLUTION_PRE_PADDINGS, CUDNN_TYPE_INT64, [1, 1])
    conv.set(CUDNN_ATTR_CONVOLUTION_POST_PADDINGS, CUDNN_TYPE_INT64, [1, 1])
    conv.set(CUDNN_ATTR_CONVOLUTION_FILTER_STRIDES, CUDNN_TYPE_INT64, [1, 1])
    conv.set(CUDNN_ATTR_CONVOLUTION_DILATIONS, CUDNN_TYPE_INT64, [1, 1])
    conv.finalize()
    op = cb.Descriptor(CUDNN_BACKEND_OPERATION_CONVOLUTION_FORWARD_DESCRIPTOR)
    op.set(CUDNN_ATTR_OPERATION_CONVOLUTION_FORWARD_X, CUDNN_TYPE_BACKEND_DESCRIPTOR, x)
    op.set(CUDNN_ATTR_OPERATION_CONVOLUTION_FORWARD_W, CUDNN_TYPE_BACKEND_DESCRIPTOR, w)
    op.set(CUDNN_ATTR_OPERATION_CONVOLUTION_FORWARD_Y, CUDNN_TYPE_BACKEND_DESCRIPTOR, conv_out)
    op.set(CUDNN_ATTR_OPERATION_CONVOLUTION_FORWARD_CONV_DESC, CUDNN_TYPE_BACKEND_DESCRIPTOR, conv)
    op.set(CUDNN_ATTR_OPERATION_CONVOLUTION_FORWARD_ALPHA, CUDNN_TYPE_FLOAT, 1.0)
    op.set(CUDNN_ATTR_OPERATION_CONVOLUTION_FORWARD_BETA, CUDNN_TYPE_FLOAT, 0.0)
    op.finalize()
    add = _pointwise(CUDNN_POINTWISE_ADD, conv_out, b, biased)
    relu = _pointwise(CUDNN_POINTWISE_RELU_FWD, biased, None, y)
    graph = cb.Descriptor(CUDNN_BACKEND_OPERATIONGRAPH_DESCRIPTOR)
    graph.set(CUDNN_ATTR_OPERATIONGRAPH_OPS, CUDNN_TYPE_BACKEND_DESCRIPTOR, [op, add, relu])
    graph.finalize()
    return graph


def build_graph():
    """The same graph through the Graph builder (graph checks included)."""
    g = cb.Graph("conv_bias_relu")
    x = g.tensor([1, 8, 8, 8], layout="nhwc")
    w = g.tensor([8, 8, 3, 3], layout="nhwc")
    b = g.tensor([1, 8, 1, 1], layout="nhwc")
    g.relu(g.bias(g.conv_fwd(x, w, padding=1), b), output=True)
    return g.build()


# ------------------------------------------------------------------------------------------------
# the C baseline
# ------------------------------------------------------------------------------------------------
def c_compiler():
    """The C compiler to use ($CC, cc, gcc or clang), or None."""
    for name in (os.environ.get("CC"), "cc", "gcc", "clang"):
        if name and shutil.which(name):
            return shutil.which(name)
    return None


def _compile_against_cudnn(source, out, what, *flags) -> pathlib.Path:
    """``source`` compiled as a shared library ``out`` linked to the cuDNN cudnn_backend loaded (the headers of
    include/; ``flags``: more compiler arguments); ``what`` names it in a failure."""
    from cudnn_backend._bindings import _loader

    cc = c_compiler()
    if cc is None:
        raise RuntimeError("no C compiler (set $CC, or install cc/gcc/clang)")
    lib_dir = pathlib.Path(_loader.load_cudnn().path).resolve().parent
    cmd = [cc, "-O2", "-shared", "-fPIC", str(source), "-I", str(ROOT / "include"), *flags, "-L", str(lib_dir),
           "-l:libcudnn.so.9", f"-Wl,-rpath,{lib_dir}", "-o", str(out)]
    res = subprocess.run(cmd, capture_output=True, text=True)
    if res.returncode != 0:
        raise RuntimeError(f"building {what} failed: {' '.join(cmd)}\n{res.stderr[-4000:]}")
    return pathlib.Path(out)


def build_c_library(out_dir) -> pathlib.Path:
    """Compile graph_build.c as a shared library against the cuDNN cudnn_backend loaded."""
    return _compile_against_cudnn(C_SOURCE, pathlib.Path(out_dir) / "libgraph_build.so", "the C baseline")


def build_floor_module(out_dir):
    """Compile ``build_floor.c`` (the least binding of the generic API) against the cuDNN cudnn_backend loaded, into
    ``out_dir`` (unless it is there already), and import it."""
    import importlib.util
    import sysconfig

    out = pathlib.Path(out_dir) / f"build_floor{sysconfig.get_config_var('EXT_SUFFIX')}"
    if not out.exists():
        _compile_against_cudnn(FLOOR_SOURCE, out, "the least binding", "-I", sysconfig.get_paths()["include"])
    spec = importlib.util.spec_from_file_location("build_floor", out)
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def over_floor(function, floor_module, *helpers):
    """``function`` (user code of the generic API, written against ``cb.Descriptor``) run unchanged over the least
    binding: the same code with ``cb`` a plain module holding ``floor_module.Descriptor``; ``helpers`` are the
    module-level functions it calls, rebound alike."""
    import types

    plain = types.ModuleType("least_binding")
    plain.Descriptor = floor_module.Descriptor
    namespace = dict(function.__globals__, cb=plain)
    for f in (function, *helpers):
        namespace[f.__name__] = types.FunctionType(f.__code__, namespace, f.__name__, f.__defaults__, f.__closure__)
    return namespace[function.__name__]


def load_c_batch(lib_path):
    """graph_build_batch(iterations) -> microseconds per graph (C timing its own loop)."""
    lib = ctypes.CDLL(str(lib_path))
    lib.graph_build_batch.restype = ctypes.c_double
    lib.graph_build_batch.argtypes = [ctypes.c_int]
    return lib.graph_build_batch


# ------------------------------------------------------------------------------------------------
# timing
# ------------------------------------------------------------------------------------------------
def _py_run(fn, n):
    t0 = time.perf_counter()
    for _ in range(n):
        fn()
    return (time.perf_counter() - t0) * 1e6


def measure(c_batch, batches=BATCHES, rounds=200, per_round=5, warmup_s=1.0):
    """{name: [mean us per graph of each batch]}: every batch interleaves ``rounds`` runs of ``per_round``
    graphs of C, generic and Graph (in rotating order)."""
    builders = {"generic": build_generic, "graph": build_graph}
    end = time.perf_counter() + warmup_s
    while time.perf_counter() < end:
        c_batch(per_round)
        build_generic()
        build_graph()
    out = {"c": [], "generic": [], "graph": []}
    order = ["c", "generic", "graph"]
    for _ in range(batches):
        total = dict.fromkeys(order, 0.0)
        for r in range(rounds):
            for name in order[r % 3:] + order[:r % 3]:
                if name == "c":
                    total[name] += c_batch(per_round) * per_round
                else:
                    total[name] += _py_run(builders[name], per_round)
        for name in order:
            out[name].append(total[name] / (rounds * per_round))
    return out


def summarize(batches):
    med = {k: statistics.median(v) for k, v in batches.items()}
    ratios = {k: med[k] / med["c"] for k in ("generic", "graph")}
    per_batch = {k: statistics.median(b / c for b, c in zip(batches[k], batches["c"])) for k in ("generic", "graph")}
    return {
        "median_us": {k: round(v, 2) for k, v in med.items()},
        "ratio_to_c": {k: round(v, 3) for k, v in ratios.items()},
        "median_of_batch_ratios": {k: round(v, 3) for k, v in per_batch.items()},
        "targets": TARGETS,
        "met": {k: ratios[k] <= TARGETS[k] for k in TARGETS},
        "batches_us": {k: [round(x, 2) for x in v] for k, v in batches.items()},
    }


def machine_info():
    cpu = platform.processor() or "?"
    try:
        for line in pathlib.Path("/proc/cpuinfo").read_text().splitlines():
            if line.startswith("model name"):
                cpu = line.split(":", 1)[1].strip()
                break
    except OSError:
        pass
    version = cb.get_version()
    return {
        "cpu": cpu,
        "cpus": os.cpu_count(),
        "python": platform.python_version(),
        "platform": platform.platform(),
        "cudnn": f"{version // 10000}.{version // 100 % 100}.{version % 100}",
        "cudnn_backend": getattr(cb, "__version__", "?"),
        "date": datetime.datetime.now(datetime.timezone.utc).strftime("%Y-%m-%d %H:%M UTC"),
        "load_average": list(os.getloadavg()) if hasattr(os, "getloadavg") else None,
    }


def table(result) -> str:
    med, ratio, met = result["median_us"], result["ratio_to_c"], result["met"]
    lines = ["| build | median us / graph | ratio to C | target | met |", "|---|---:|---:|---:|:---:|",
             f"| C (graph_build.c) | {med['c']:.1f} | 1.00 | | |"]
    labels = {"generic": "generic API (Descriptor.set/finalize)", "graph": "Graph builder (checks included)"}
    for key, label in labels.items():
        lines.append(f"| {label} | {med[key]:.1f} | {ratio[key]:.2f} | <= {TARGETS[key]} | "
                     f"{'yes' if met[key] else 'no'} |")
    return "\n".join(lines)


def run(out_dir=None, repeat=1, **kw):
    """``repeat`` complete measurements (each: 7 batches, in this process): the first is the headline, every one is
    kept (``runs``) and shown, so a noisy machine's spread is on the record."""
    with tempfile.TemporaryDirectory() as tmp:
        c_batch = load_c_batch(build_c_library(tmp))
        runs = []
        for _ in range(repeat):
            r = summarize(measure(c_batch, **kw))
            r["load_average"] = list(os.getloadavg()) if hasattr(os, "getloadavg") else None
            runs.append(r)
    result = dict(runs[0])
    result["runs"] = [{k: r[k] for k in ("median_us", "ratio_to_c", "median_of_batch_ratios", "met", "load_average")}
                      for r in runs]
    result["machine"] = machine_info()
    result["method"] = ("7 batches; each interleaves C, generic and Graph runs of a few graphs; median of the 7 batch "
                        "means per build, ratios of those medians to C's (all in one process, one cuDNN)")
    if out_dir is not None:
        out_dir = pathlib.Path(out_dir)
        out_dir.mkdir(parents=True, exist_ok=True)
        (out_dir / "graph_build.json").write_text(json.dumps(result, indent=2) + "\n")
        m = result["machine"]
        lines = ["| run | C us | generic us | Graph us | generic / C | Graph / C | load average |",
                 "|---|---:|---:|---:|---:|---:|---|"]
        for i, r in enumerate(result["runs"], 1):
            med, ratio = r["median_us"], r["ratio_to_c"]
            load = ", ".join(f"{x:.2f}" for x in r["load_average"]) if r["load_average"] else "?"
            lines.append(f"| {i} | {med['c']:.1f} | {med['generic']:.1f} | {med['graph']:.1f} | "
                         f"{ratio['generic']:.2f}{'' if r['met']['generic'] else ' (missed)'} | "
                         f"{ratio['graph']:.2f}{'' if r['met']['graph'] else ' (missed)'} | {load} |")
        (out_dir / "graph_build.md").write_text(
            "# Graph construction on the CPU: cudnn-backend vs C\n\n"
            "conv + bias + ReLU (X 1x8x8x8 fp16 NHWC, W 8x8x3x3, padding 1): 6 tensors, a convolution descriptor, "
            "3 operations and the operation graph, finalized and destroyed.\n\n"
            f"{table(result)}\n\n"
            f"Method: {result['method']}. Median of per-batch ratios: generic "
            f"{result['median_of_batch_ratios']['generic']:.2f}, "
            f"Graph {result['median_of_batch_ratios']['graph']:.2f}.\n\n"
            + (f"Every run of this invocation (run 1 is the table above):\n\n" + "\n".join(lines) + "\n\n"
               if len(result["runs"]) > 1 else "")
            + f"Machine: {m['cpu']} ({m['cpus']} CPUs), {m['platform']}, Python {m['python']}, cuDNN {m['cudnn']}; "
            f"{m['date']}.\n\n"
            "Reproduce: `python benchmarks/graph_build_ratios.py [--repeat N]` (or "
            "`pytest benchmarks/test_graph_build.py`).\n")
    return result


def main(argv=None):
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--out", default=str(HERE / "results" / f"{datetime.date.today().isoformat()}-cpu"),
                    help="folder for graph_build.json / graph_build.md ('-': write nothing)")
    ap.add_argument("--rounds", type=int, default=200, help="interleaved rounds per batch")
    ap.add_argument("--per-round", type=int, default=5, help="graphs per build in each round")
    ap.add_argument("--repeat", type=int, default=1, help="complete measurements to make (all are recorded)")
    args = ap.parse_args(argv)
    result = run(None if args.out == "-" else args.out, repeat=args.repeat, rounds=args.rounds,
                 per_round=args.per_round)
    print(table(result))
    print(f"median of per-batch ratios: {result['median_of_batch_ratios']}")
    print(f"batches (us): {result['batches_us']}")
    for i, r in enumerate(result["runs"][1:], 2):
        print(f"run {i}: ratios {r['ratio_to_c']} met {r['met']} load {r['load_average']}")
    if args.out != "-":
        print(f"wrote {args.out}/graph_build.json and .md")
    return 0


if __name__ == "__main__":
    sys.exit(main())
