"""What the call gate (enter_call/leave_call with three objects) and the context check (use_context, and its
once-per-handle-and-thread form, context_for_call, which execute makes) cost per execute, on this CPU, without a GPU:
the no-device stand-in answers cuCtxGetCurrent (a real driver's answer costs more: measure that on the GPU with
benchmarks/percall_interleaved.py). benchmarks/percall_instructions.py counts instructions, the whole execute path
included.

    python benchmarks/percall_gate.py [--repeat 1000000]        # ns per call, timeit-style (best of 5)
    valgrind --tool=callgrind --callgrind-out-file=/tmp/cg.out python benchmarks/percall_gate.py --repeat 100000 \
        --only gate      # then: instructions per call = (Ir with --repeat N) - (Ir with --repeat 0), over N
"""
from __future__ import annotations

import argparse
import ctypes
import time

import cudnn_backend as cb
from cudnn_backend._bindings import _loader
from cudnn_backend.core import _context, _gate

CONTEXT = 0x7F0000001230


def per_call_ns(fn, repeat, best_of=5):
    best = float("inf")
    for _ in range(best_of):
        t0 = time.perf_counter_ns()
        fn(repeat)
        best = min(best, time.perf_counter_ns() - t0)
    return best / max(repeat, 1)


def main(argv=None):
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--repeat", type=int, default=1_000_000)
    ap.add_argument("--only", choices=("gate", "context", "context_cached"))
    args = ap.parse_args(argv)
    if _loader.ensure_driver() == "stand-in":  # a thread with the context current, as on a GPU after the first call
        lib = _loader._driver_lib
        lib.cuCtxSetCurrent.argtypes = [ctypes.c_void_p]
        lib.cudnn_backend_stub_emulate_contexts(1)
        lib.cuCtxSetCurrent(CONTEXT)
    objs = [cb.Descriptor(cb.DescriptorType.CUDNN_BACKEND_TENSOR_DESCRIPTOR) for _ in range(3)]
    probe = _context._HandleContextProbe(CONTEXT)  # a handle's context, checked as execute checks it
    runs = {"gate": lambda n: _gate._call_gate(*objs, n),
            "context": lambda n: _context._use_context(CONTEXT, n),
            "context_cached": lambda n: probe.check(n)}
    for name, fn in runs.items():
        if args.only and name != args.only:
            continue
        if args.only:
            fn(args.repeat)
        else:
            print(f"{name:15s} {per_call_ns(fn, args.repeat):7.2f} ns per call")


if __name__ == "__main__":
    main()
