"""Instructions per graph (valgrind callgrind): the deterministic companion of graph_build_ratios.py.

Timings on a shared, noisy machine wander by tens of percent; instruction counts do not. Each build (C, the
generic API's user code over the least binding (``build_floor.c``: what no binding can remove), the generic API,
the Graph builder) runs in its own process under ``valgrind --tool=callgrind`` with instrumentation switched on
only around ``N`` builds after a warm-up (callgrind client requests from a tiny C shim compiled here), so
importing cudnn_backend and loading cuDNN cost nothing. Needs valgrind (with its headers) and a C compiler.

    python benchmarks/graph_build_instructions.py [--n 200] [--out DIR]

prints instructions per graph and their ratios to C, and with ``--out`` writes ``DIR/graph_build_instructions.json``.
"""
from __future__ import annotations

import argparse
import json
import os
import pathlib
import re
import shutil
import subprocess
import sys
import tempfile

HERE = pathlib.Path(__file__).resolve().parent
SHIM = r"""
#include <valgrind/callgrind.h>
void cg_start(void) { CALLGRIND_ZERO_STATS; CALLGRIND_START_INSTRUMENTATION; CALLGRIND_TOGGLE_COLLECT; }
void cg_stop(void) { CALLGRIND_TOGGLE_COLLECT; CALLGRIND_DUMP_STATS; CALLGRIND_STOP_INSTRUMENTATION; }
"""


def _child(which, n, shim, c_lib):
    """Runs inside valgrind: warm up, then ``n`` builds with instrumentation on."""
    import ctypes

    sys.path.insert(0, str(HERE))
    import graph_build_ratios as gbr

    if which == "c":
        # cuDNN with what the package loads beside it (the no-device stand-in where no driver is, NVRTC): the C
        # program alone finds no CUDA driver on a machine without a GPU and fails its first finalize
        from cudnn_backend._bindings import _loader
        _loader.load_cudnn()
        batch = gbr.load_c_batch(c_lib)
        fn, count = (lambda: batch(n)), 1  # one call: ctypes' own cost spread over n graphs
    elif which == "floor":  # the generic build's user code over the least binding (build_floor.c)
        fn, count = gbr.over_floor(gbr.build_generic, gbr.build_floor_module(os.path.dirname(c_lib)), gbr._tensor,
                                   gbr._pointwise), n
    else:
        fn, count = {"generic": gbr.build_generic, "graph": gbr.build_graph}[which], n
    for _ in range(20):  # warm-up (caches, the interpreter's specialization)
        batch(1) if which == "c" else fn()
    ctl = ctypes.CDLL(shim)
    ctl.cg_start()
    for _ in range(count):
        fn()
    ctl.cg_stop()


def _total(out_file) -> int:
    text = pathlib.Path(out_file).read_text(errors="replace")
    m = re.search(r"^summary:\s*(\d+)", text, re.M) or re.search(r"^totals:\s*(\d+)", text, re.M)
    if not m:
        raise RuntimeError(f"no totals in {out_file}")
    return int(m.group(1))


def measure(n=200):
    """{build: instructions per graph}."""
    sys.path.insert(0, str(HERE))
    import graph_build_ratios as gbr

    cc = gbr.c_compiler()
    if cc is None or shutil.which("valgrind") is None:
        raise RuntimeError("needs valgrind and a C compiler")
    out = {}
    with tempfile.TemporaryDirectory() as tmp:
        shim_c = pathlib.Path(tmp) / "cgctl.c"
        shim_c.write_text(SHIM)
        shim = pathlib.Path(tmp) / "libcgctl.so"
        subprocess.run([cc, "-O2", "-shared", "-fPIC", str(shim_c), "-o", str(shim)], check=True)
        c_lib = gbr.build_c_library(tmp)
        gbr.build_floor_module(tmp)  # compiled once, here: each child imports it from beside c_lib
        for which in ("c", "floor", "generic", "graph"):
            prefix = pathlib.Path(tmp) / f"cg_{which}.out"
            # string hashes fixed: dict probe lengths (the interpreter's name lookups) the same in every run
            env = dict(os.environ, OPENBLAS_NUM_THREADS="1", PYTHONHASHSEED="0")
            res = subprocess.run(["valgrind", "--tool=callgrind", "--instr-atstart=no", "--collect-atstart=no",
                                  f"--callgrind-out-file={prefix}", sys.executable, __file__, "--child", which,
                                  "--n", str(n), "--shim", str(shim), "--c-lib", str(c_lib)],
                                 capture_output=True, text=True, env=env)
            if res.returncode != 0:
                raise RuntimeError(f"callgrind run of {which} failed:\n{res.stderr[-3000:]}")
            dumps = sorted(pathlib.Path(tmp).glob(f"cg_{which}.out*"), key=lambda p: p.stat().st_size)
            out[which] = round(_total(dumps[-1]) / n)
    return out


def main(argv=None):
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--n", type=int, default=200, help="graphs measured per build")
    ap.add_argument("--out", help="folder for graph_build_instructions.json")
    ap.add_argument("--child", help=argparse.SUPPRESS)
    ap.add_argument("--shim", help=argparse.SUPPRESS)
    ap.add_argument("--c-lib", help=argparse.SUPPRESS)
    args = ap.parse_args(argv)
    if args.child:
        _child(args.child, args.n, args.shim, args.c_lib)
        return 0
    per = measure(args.n)
    result = {"instructions_per_graph": per,
              "ratio_to_c": {k: round(per[k] / per["c"], 3) for k in ("floor", "generic", "graph")},
              "method": f"valgrind callgrind, instrumentation on around {args.n} builds after a warm-up, one process "
                        "per build"}
    for k in ("c", "floor", "generic", "graph"):
        extra = f"  ({result['ratio_to_c'][k]:.2f}x C)" if k != "c" else ""
        print(f"{k:8s} {per[k]:>9,d} instructions / graph{extra}")
    if args.out:
        out = pathlib.Path(args.out)
        out.mkdir(parents=True, exist_ok=True)
        (out / "graph_build_instructions.json").write_text(json.dumps(result, indent=2) + "\n")
        print(f"wrote {out}/graph_build_instructions.json")
    return 0


if __name__ == "__main__":
    sys.exit(main())
