"""Instructions per call of the execute path (valgrind callgrind), without a GPU: what the package adds to
cudnnBackendExecute, counted exactly.

cuDNN's handle, execute and stream calls are answered by a tiny stand-in library that does nothing (compiled here;
it links the real libcudnn.so.9, so every other function, variant packs and plans included, is the real cuDNN's):
the counts are the package's own work per call, the part a GPU run cannot separate from the kernel launch. The
no-device driver stand-in emulates a current CUDA context (the handle's), as on a GPU after the first call.

Each case runs in its own process under ``valgrind --tool=callgrind`` with instrumentation on only around ``N``
calls after a warm-up (callgrind client requests from a tiny C shim compiled here):

* ``gate``: the call gate with three objects (enter and leave), in a C loop;
* ``context``: the full context check (cuCtxGetCurrent and a compare), in a C loop;
* ``context_cached``: the check once per handle per thread, as execute makes it (when the build has it);
* ``execute``: ``execute(handle, plan, pack)`` from a Python loop (the loop's own bytecode included);
* ``pack_execute``: ``pack.execute(handle, plan)``;
* ``bind_and_execute``: ``pack.bind_and_execute(handle, plan, pointers)`` (same pointers: nothing re-finalized);
* ``floor``: the least binding of execute (a builtin the interpreter calls with the same three arguments, releasing
  the GIL around cuDNN's call and doing nothing else), from the same loop: what of ``execute``'s count no binding
  can remove; the rest is the package's.

    python benchmarks/percall_instructions.py [--n 20000] [--out DIR]

Needs valgrind (with its headers) and a C compiler. ``$CUDNN_BACKEND_LIBCUDNN`` picks the cuDNN release, as
everywhere.
"""
from __future__ import annotations

import argparse
import json
import os
import pathlib
import shutil
import subprocess
import sys
import sysconfig
import tempfile

from graph_build_instructions import _total  # noqa: E402 - the sibling script's callgrind reader

HERE = pathlib.Path(__file__).resolve().parent
ROOT = HERE.parent
CONTEXT = 0x7F0000001230
CASES = ("gate", "context", "context_cached", "execute", "pack_execute", "bind_and_execute", "floor")

CALLGRIND_SHIM = r"""
#include <valgrind/callgrind.h>
void cg_start(void) { CALLGRIND_ZERO_STATS; CALLGRIND_START_INSTRUMENTATION; CALLGRIND_TOGGLE_COLLECT; }
void cg_stop(void) { CALLGRIND_TOGGLE_COLLECT; CALLGRIND_DUMP_STATS; CALLGRIND_STOP_INSTRUMENTATION; }
"""

# cuDNN's entry points that need a GPU, answered without one; the loader finds the rest in the real library this one
# links (dlsym on a library searches its dependencies after it)
CUDNN_STAND_IN = r"""
#include <stdlib.h>
int cudnnCreate(void **handle) { *handle = calloc(1, 64); return *handle ? 0 : 4; }
int cudnnDestroy(void *handle) { free(handle); return 0; }
int cudnnSetStream(void *handle, void *stream) { *(void **)handle = stream; return 0; }
int cudnnGetStream(void *handle, void **stream) { *stream = *(void **)handle; return 0; }
int cudnnBackendExecute(void *handle, void *plan, void *pack) { (void)handle; (void)plan; (void)pack; return 0; }
"""

# the least binding of execute (as benchmarks/c_harness.c's percall_floor_function): a METH_FASTCALL builtin that
# releases the GIL around cudnnBackendExecute (the stand-in's) and returns None
FLOOR_MODULE = r"""
#include <Python.h>
extern int cudnnBackendExecute(void *handle, void *plan, void *pack);
static PyObject *floor_execute(PyObject *self, PyObject *const *args, Py_ssize_t nargs) {
    int status;
    (void)self, (void)args, (void)nargs;
    Py_BEGIN_ALLOW_THREADS
    status = cudnnBackendExecute((void *)1, (void *)2, (void *)3);
    Py_END_ALLOW_THREADS
    if (status != 0) { PyErr_SetString(PyExc_RuntimeError, "cudnnBackendExecute failed"); return NULL; }
    Py_RETURN_NONE;
}
static PyMethodDef methods[] = {{"floor_execute", (PyCFunction)(void (*)(void))floor_execute, METH_FASTCALL, ""},
                                {NULL, NULL, 0, NULL}};
static struct PyModuleDef module = {PyModuleDef_HEAD_INIT, "percall_floor", NULL, -1, methods};
PyMODINIT_FUNC PyInit_percall_floor(void) { return PyModule_Create(&module); }
"""


def _helpers():
    """(call gate helper, full context check helper, cached context check helper or None) of this build."""
    from cudnn_backend.core import _descriptor

    gate = context = cached = None
    try:
        from cudnn_backend.core import _gate
        gate = _gate._call_gate
    except ImportError:
        gate = _descriptor._call_gate
    try:
        from cudnn_backend.core import _context
        context = _context._use_context
        probe = _context._HandleContextProbe(CONTEXT)
        cached = lambda n: probe.check(n)  # noqa: E731
    except ImportError:
        context = _descriptor._use_context
    return gate, context, cached


def _child(case, n, shim):
    """Runs inside valgrind: set up, warm up, then ``n`` calls with instrumentation on."""
    import ctypes

    sys.path.insert(0, str(ROOT))
    import cudnn_backend as cb
    from cudnn_backend import patterns
    from cudnn_backend._bindings import _loader
    from cudnn_backend.runtime.execution import VariantPack, execute
    from cudnn_backend.runtime.heuristics import build_first_plan
    from cudnn_backend.runtime.profiles import DeviceProfile

    if _loader.ensure_driver() != "stand-in":
        raise SystemExit("needs the no-device driver stand-in (run on a machine without a GPU driver)")
    lib = _loader._driver_lib
    lib.cuCtxSetCurrent.argtypes = [ctypes.c_void_p]
    lib.cudnn_backend_stub_emulate_contexts(1)
    lib.cuCtxSetCurrent(CONTEXT)
    gate, context, cached = _helpers()
    handle = cb.Handle()
    if case in ("gate", "context", "context_cached"):
        objs = [cb.Descriptor(cb.DescriptorType.CUDNN_BACKEND_TENSOR_DESCRIPTOR) for _ in range(3)]
        if case == "gate":
            fn = lambda: gate(*objs, n)  # noqa: E731
        elif case == "context":
            fn = lambda: context(CONTEXT, n)  # noqa: E731
        else:
            if cached is None:
                raise SystemExit("this build has no cached context check")
            fn = lambda: cached(n)  # noqa: E731
        fn()
        ctl = ctypes.CDLL(shim)
        ctl.cg_start()
        fn()
        ctl.cg_stop()
        return
    pattern = patterns.conv_fwd(n=1, c=8, h=8, w=8, k=8, r=3, s=3, padding=1, build=False)
    plan, _ = build_first_plan(pattern.build(), device_profile=DeviceProfile.bundled("h200"))
    buffers = {pattern.x: 0x10000000, pattern.w: 0x20000000, pattern.y: 0x30000000}
    pack = VariantPack(plan, buffers, workspace=0x40000000 if plan.workspace_size else None)
    pointers = pack.data_pointers
    floor_execute = None
    if case == "floor":
        sys.path.insert(0, str(pathlib.Path(shim).parent))
        import percall_floor
        floor_execute = percall_floor.floor_execute
    call = {"execute": lambda: execute(handle, plan, pack),
            "pack_execute": lambda: pack.execute(handle, plan),
            "bind_and_execute": lambda: pack.bind_and_execute(handle, plan, pointers),
            "floor": lambda: floor_execute(handle, plan, pack)}[case]
    for _ in range(200):
        call()
    ctl = ctypes.CDLL(shim)
    # a local loop over the bound method's pieces: the loop's own bytecode is in the count, the same before and after
    if case == "execute":
        ctl.cg_start()
        for _ in range(n):
            execute(handle, plan, pack)
        ctl.cg_stop()
    elif case == "floor":
        ctl.cg_start()
        for _ in range(n):
            floor_execute(handle, plan, pack)
        ctl.cg_stop()
    elif case == "pack_execute":
        run = pack.execute
        ctl.cg_start()
        for _ in range(n):
            run(handle, plan)
        ctl.cg_stop()
    else:
        run = pack.bind_and_execute
        ctl.cg_start()
        for _ in range(n):
            run(handle, plan, pointers)
        ctl.cg_stop()




def _real_cudnn() -> str:
    forced = os.environ.get("CUDNN_BACKEND_LIBCUDNN")
    if forced:
        return forced
    code = "from cudnn_backend._bindings import _loader; print(_loader.load_cudnn().path)"
    return subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True,
                          env=dict(os.environ, PYTHONPATH=str(ROOT))).stdout.strip()


def measure(n=20000, cases=CASES):
    """{case: instructions per call} (a case this build lacks is left out)."""
    cc = shutil.which(os.environ.get("CC", "cc")) or shutil.which("gcc")
    if cc is None or shutil.which("valgrind") is None:
        raise RuntimeError("needs valgrind and a C compiler")
    real = pathlib.Path(_real_cudnn()).resolve()
    out = {}
    with tempfile.TemporaryDirectory() as tmp:
        tmp = pathlib.Path(tmp)
        (tmp / "cgctl.c").write_text(CALLGRIND_SHIM)
        shim = tmp / "libcgctl.so"
        subprocess.run([cc, "-O2", "-shared", "-fPIC", str(tmp / "cgctl.c"), "-o", str(shim)], check=True)
        (tmp / "cudnn_stand_in.c").write_text(CUDNN_STAND_IN)
        stand_in = tmp / "libcudnn_percall.so"
        subprocess.run([cc, "-O2", "-shared", "-fPIC", str(tmp / "cudnn_stand_in.c"), "-o", str(stand_in),
                        "-Wl,--no-as-needed", f"-L{real.parent}", f"-l:{real.name}", f"-Wl,-rpath,{real.parent}"],
                       check=True)
        if "floor" in cases:
            (tmp / "percall_floor.c").write_text(FLOOR_MODULE)
            subprocess.run([cc, "-O2", "-shared", "-fPIC", str(tmp / "percall_floor.c"), "-o",
                            str(tmp / f"percall_floor{sysconfig.get_config_var('EXT_SUFFIX')}"),
                            f"-I{sysconfig.get_paths()['include']}", str(stand_in), f"-Wl,-rpath,{tmp}"], check=True)
        for case in cases:
            prefix = tmp / f"cg_{case}.out"
            env = dict(os.environ, OPENBLAS_NUM_THREADS="1", CUDNN_BACKEND_LIBCUDNN=str(stand_in),
                       PYTHONPATH=str(ROOT), PYTHONHASHSEED="0")  # the same dict probe lengths in every run
            res = subprocess.run(["valgrind", "--tool=callgrind", "--instr-atstart=no", "--collect-atstart=no",
                                  f"--callgrind-out-file={prefix}", sys.executable, __file__, "--child", case,
                                  "--n", str(n), "--shim", str(shim)], capture_output=True, text=True, env=env)
            if res.returncode != 0:
                if "has no cached context check" in res.stderr:
                    continue
                raise RuntimeError(f"callgrind run of {case} failed:\n{res.stderr[-3000:]}")
            dumps = sorted(tmp.glob(f"cg_{case}.out*"), key=lambda p: p.stat().st_size)
            out[case] = round(_total(dumps[-1]) / n, 1)
    return out


def main(argv=None):
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--n", type=int, default=20000, help="calls measured per case")
    ap.add_argument("--case", action="append", choices=CASES, help="only these cases (repeatable)")
    ap.add_argument("--out", help="write DIR/percall_instructions.json")
    ap.add_argument("--label", default="", help="a label stored with the numbers (e.g. before/after)")
    ap.add_argument("--child", help=argparse.SUPPRESS)
    ap.add_argument("--shim", help=argparse.SUPPRESS)
    args = ap.parse_args(argv)
    if args.child:
        _child(args.child, args.n, args.shim)
        return 0
    per = measure(args.n, tuple(args.case or CASES))
    for k, v in per.items():
        print(f"{k:18s} {v:>9,.1f} instructions / call")
    if args.out:
        out = pathlib.Path(args.out)
        out.mkdir(parents=True, exist_ok=True)
        name = f"percall_instructions{'_' + args.label if args.label else ''}.json"
        (out / name).write_text(json.dumps({"instructions_per_call": per, "label": args.label, "calls": args.n,
                                            "method": "valgrind callgrind, instrumentation on around the calls after "
                                                      "a warm-up, one process per case; cuDNN's handle/execute "
                                                      "answered by a do-nothing stand-in"}, indent=2) + "\n")
        print(f"wrote {out / name}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
