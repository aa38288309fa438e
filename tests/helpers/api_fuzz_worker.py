"""Crash-resilient fuzzing of the package's Python API with odd values and with threads sharing objects, run as a
subprocess by tests/test_api_fuzz.py.

    python -m tests.helpers.api_fuzz_worker [--cases N] [--first I] [--seed S] [--out DIR] [--jobs J] [--batch B]

Each case is a function of (seed, index) alone:

* ``value`` cases call one entry point of one layer (``Descriptor.set``, typed keywords, ``Graph.tensor`` and the
  operation methods, the patterns, heuristics, plans, profiles, variant packs, JSON loaders) with an odd value in
  one argument: zero / negative / huge ints, floats (NaN, inf, -0.0), bools, None, str with NUL bytes or lone
  surrogates, bytes, nested and recursive lists, numpy values, objects with a lying ``__len__`` (2**62) or raising
  ``__len__`` / ``__iter__`` / ``__index__``, Fractions, Decimals, complex numbers... (not endless iterators: the
  package reads sequences it is given to their end, as Python does; and flags, read with Python's truth test, do
  not get objects whose ``__len__`` raises);
* ``thread`` cases start threads that use one object (a descriptor, an operation graph, a plan, a variant pack)
  while others close it.

Only ``CudnnBackendError`` subclasses, ``TypeError`` and ``ValueError`` may come out of a call; anything else is
"unexpected" (exit status 3). Cases run in forked children, a batch per child, each child ending with a normal exit
(C++ destructors run); a child killed by a signal has its cases replayed one by one in fresh children, the culprit
is written as a reproducer script (``--out``) and the fuzz goes on (exit status 4 at the end). The last stdout
line is ``API-FUZZ-SUMMARY {json}``. The seed is ``--seed``, else ``CUDNN_BACKEND_FUZZ_SEED``, else a fixed one
when ``CI`` is set, else random; ``--seed S --first I --cases 1`` replays case I.
"""
from __future__ import annotations

import argparse
import collections
import decimal
import fractions
import json
import math
import os
import pathlib
import random
import select
import signal
import sys
import threading
import time
import traceback

import numpy as np

import cudnn_backend as cb
from cudnn_backend import patterns as P
from cudnn_backend.graph import Graph
from cudnn_backend.runtime import engines, plans
from cudnn_backend.runtime.execution import VariantPack, execute
from cudnn_backend.runtime.heuristics import build_first_plan, get_configs
from cudnn_backend.runtime.profiles import DeviceProfile
from cudnn_backend.typed import Convolution, Pointwise, Resample, Tensor

REPO = pathlib.Path(__file__).resolve().parents[2]
CI_SEED = 20261123
ALLOWED = (cb.CudnnBackendError, TypeError, ValueError)


# ------------------------------------------------------------------------------------------------
# odd values
# ------------------------------------------------------------------------------------------------
class LyingLen:
    def __len__(self):
        return 2 ** 62

    def __iter__(self):
        return iter([1, 2, 3])

    def __getitem__(self, i):
        return 1

    def __repr__(self):
        return "LyingLen()"


class NegativeLen(LyingLen):
    def __len__(self):
        return -1


class RaisingLen(LyingLen):
    def __len__(self):
        raise OverflowError("len overflows")


class RaisingIter:
    def __len__(self):
        return 2

    def __iter__(self):
        raise IndexError("iter is broken")

    def __repr__(self):
        return "RaisingIter()"


class RaisingIndex:
    def __index__(self):
        raise ZeroDivisionError("index is broken")

    def __repr__(self):
        return "RaisingIndex()"


class HugeIndex:
    def __index__(self):
        return 2 ** 70

    def __repr__(self):
        return "HugeIndex()"


class RaisingFloat:
    def __float__(self):
        raise ArithmeticError("no float")

    def __repr__(self):
        return "RaisingFloat()"


class RaisingStr:
    def __str__(self):
        raise UnicodeError("no str")

    __repr__ = object.__repr__


def _recursive():
    x = []
    x.append(x)
    return x


ODD_VALUES = [
    lambda: 0, lambda: -1, lambda: 1, lambda: 2, lambda: 7, lambda: 2 ** 31, lambda: 2 ** 31 - 1, lambda: 2 ** 32,
    lambda: 2 ** 62, lambda: 2 ** 63 - 1, lambda: 2 ** 63, lambda: 2 ** 64, lambda: -(2 ** 63) - 1, lambda: 10 ** 30,
    lambda: 10 ** 400, lambda: 1.5, lambda: 0.0, lambda: -0.0, lambda: math.nan, lambda: math.inf, lambda: -math.inf,
    lambda: 1e308, lambda: True, lambda: False, lambda: None, lambda: "", lambda: "8", lambda: "\x00", lambda: "a\x00b",
    lambda: "\ud800", lambda: "x" * 300, lambda: "CUDNN_DATA_HALF", lambda: "half", lambda: "nhwc", lambda: b"",
    lambda: b"\x00\xff", lambda: bytearray(b"12"), lambda: [], lambda: [0], lambda: [1] * 9, lambda: [2 ** 63],
    lambda: [1.5, 2], lambda: [True, 2], lambda: ["8", 8], lambda: [[1, 2], [3]], lambda: [None], lambda: (2, 3),
    lambda: {}, lambda: {"a": 1}, lambda: {1, 2}, _recursive, lambda: iter([1, 2]), lambda: LyingLen(),
    lambda: NegativeLen(), lambda: RaisingLen(), lambda: RaisingIter(), lambda: RaisingIndex(), lambda: HugeIndex(),
    lambda: RaisingFloat(), lambda: RaisingStr(), lambda: np.int64(2 ** 62), lambda: np.uint64(2 ** 64 - 1),
    lambda: np.float32(1.5), lambda: np.bool_(True), lambda: np.zeros(3, np.int64), lambda: np.zeros((2, 2)),
    lambda: np.zeros(0), lambda: np.array(["a"]), lambda: fractions.Fraction(3, 2), lambda: fractions.Fraction(0),
    lambda: decimal.Decimal("1.5"), lambda: decimal.Decimal("NaN"), lambda: 1 + 2j, lambda: object(),
    lambda: cb.Descriptor.__new__(cb.Descriptor), lambda: cb.Handle.__new__(cb.Handle), lambda: cb.CUDNN_DATA_FLOAT,
    lambda: cb.CUDNN_HEUR_MODE_A, lambda: cb.CUDNN_TYPE_INT64, lambda: Exception("x"), lambda: type,
]


def odd(rng):
    return rng.choice(ODD_VALUES)()


# ------------------------------------------------------------------------------------------------
# the objects cases use (built once in the parent, before any child is forked)
# ------------------------------------------------------------------------------------------------
class Corpus:
    def __init__(self):
        self.profile = DeviceProfile.bundled("h200")
        self.dp = self.profile.descriptor()
        g = Graph("conv")
        self.x = g.tensor([8, 64, 56, 56], layout="nhwc", name="x")
        self.w = g.tensor([32, 64, 3, 3], layout="nhwc", name="w")
        self.y = g.conv_fwd(self.x, self.w, padding=1, output=True, name="y")
        self.og = g.build()
        self.configs = get_configs(self.og, "A", self.profile)
        self.plan = plans.build_plan(self.configs[0], device_profile=self.profile)
        self.plan_json = self.plan.to_json()
        self.engine = engines.list_engines(self.og, self.profile, supported_only=True)[0]
        import inspect

        self.pattern_params = [(name, f, p) for name, f in sorted(P.CATALOGUE.items())
                               for p in inspect.signature(f).parameters if p != "build"]
        self.pattern_flags = {p for _, f in P.CATALOGUE.items() for p, v in inspect.signature(f).parameters.items()
                              if isinstance(v.default, bool)}

    def pack(self):
        return VariantPack(self.plan, {1: 0x10000, 2: 0x20000, 3: 0x30000}, workspace=0x40000)


CORPUS: Corpus | None = None


def corpus() -> Corpus:
    global CORPUS
    if CORPUS is None:
        CORPUS = Corpus()
    return CORPUS


# ------------------------------------------------------------------------------------------------
# cases
# ------------------------------------------------------------------------------------------------
def _tensor_attrs():
    return [a for a in cb.AttributeName if a.name.startswith(("CUDNN_ATTR_TENSOR_", "CUDNN_ATTR_CONVOLUTION_",
                                                              "CUDNN_ATTR_POINTWISE_", "CUDNN_ATTR_RESAMPLE_"))]


# Flags are read with Python's truth test: an object whose __len__/__bool__ raises makes any Python code that tests
# it raise that error, so flags get the other odd values.
FLAGS = {"virtual", "by_value", "fallback", "allow_version_mismatch", "output"}
_RAISING_TRUTH = (LyingLen, RaisingIter)


def value_case(rng):
    """(description, callable) of one API call with one odd value."""
    c = corpus()
    v = odd(rng)
    flag_value = v
    while isinstance(flag_value, _RAISING_TRUTH):
        flag_value = odd(rng)
    r = repr(v) if not isinstance(v, str) or len(v) < 40 else repr(v[:40]) + "..."
    target = rng.randrange(24)
    if target == 0:
        attr = rng.choice(_tensor_attrs())
        spec = cb.schema.attribute(attr)
        atype = rng.choice(spec.types)
        dtype = spec.descriptor
        return (f"Descriptor({dtype.name}).set({attr.name}, {atype.name}, {r})",
                lambda: cb.Descriptor(dtype).set(attr, atype, v))
    if target == 1:
        cls = rng.choice([Tensor, Convolution, Pointwise, Resample])
        kw = rng.choice(list(cls.KEYWORDS))
        return f"{cls.__name__}({kw}={r})", lambda: cls(**{kw: v})
    if target == 2:
        i = rng.randrange(4)
        dims = [8, 64, 4, 4]
        dims[i] = v
        return f"Graph().tensor({dims!r})", lambda: Graph().tensor(dims)
    if target == 3:
        kw = rng.choice(["strides", "data_type", "uid", "name", "virtual", "by_value", "layout", "alignment"])
        if kw in FLAGS:
            v, r = flag_value, repr(flag_value)
        return f"Graph().tensor([8, 4, 4], {kw}={r})", lambda: Graph().tensor([8, 4, 4], **{kw: v})
    if target == 4:
        kw = rng.choice(["padding", "stride", "dilation", "post_padding", "mode", "compute", "output",
                         "output_data_type", "alpha", "beta", "name"])
        if kw in FLAGS:
            v, r = flag_value, repr(flag_value)

        def conv():
            g = Graph()
            return g.conv_fwd(g.tensor([2, 8, 6, 6]), g.tensor([4, 8, 3, 3]), **{kw: v})
        return f"Graph.conv_fwd({kw}={r})", conv
    if target == 5:
        method, args = rng.choice([("reduction", "axes"), ("reduction", "op"), ("pointwise", "mode"),
                                   ("resample", "window"), ("resample", "stride"), ("resample", "mode"),
                                   ("matmul", "compute"), ("scalar", "value"), ("scalar", "rank"),
                                   ("gen_index", "axis"), ("rng", "probability"), ("transpose", "permutation")])

        def op():
            g = Graph()
            x = g.tensor([2, 8, 6, 6])
            if method == "reduction":
                return g.reduction(x, **{args: v})
            if method == "pointwise":
                return g.pointwise(v, x)
            if method == "resample":
                return g.resample(x, **{args: v})
            if method == "matmul":
                return g.matmul(g.tensor([1, 4, 8]), g.tensor([1, 8, 2]), compute=v)
            if method == "scalar":
                return g.scalar(**({"value": v} if args == "value" else {"value": 1.0, "rank": v}))
            if method == "gen_index":
                return g.gen_index(x, v)
            if method == "rng":
                return g.rng([2, 2], probability=v)
            return g.transpose(x, v)
        return f"Graph.{method}({args}={r})", op
    if target == 6:
        name, factory, param = rng.choice(c.pattern_params)
        if param in c.pattern_flags:
            v, r = flag_value, repr(flag_value)
        return f"patterns.{name}({param}={r}, build=False)", lambda: factory(**{param: v}, build=False)
    if target == 7:
        kw = rng.choice(["mode", "sm_count_target", "device_profile", "allow_version_mismatch"])
        if kw in FLAGS:
            v, r = flag_value, repr(flag_value)
        args = {"mode": "A", "device_profile": c.profile}
        args[kw] = v
        return f"get_configs(og, {kw}={r})", lambda: get_configs(c.og, **args)
    if target == 8:
        kw = rng.choice(["max_workspace", "max_attempts", "sm_count_target", "modes", "prefer", "require_numerical",
                         "exclude_behavior", "fallback"])
        if kw in FLAGS:
            v, r = flag_value, repr(flag_value)
        return (f"build_first_plan(og, {kw}={r})",
                lambda: build_first_plan(c.og, device_profile=c.profile, max_attempts=1, **{kw: v}))
    if target == 9:
        kw = rng.choice(["run_only_intermediate_uids", "kernel_cache", "handle", "device_profile", "config"])
        if kw == "config":
            return f"build_plan({r})", lambda: plans.build_plan(v, device_profile=c.profile)
        return f"build_plan(config, {kw}={r})", lambda: plans.build_plan(c.configs[0], **{"device_profile": c.profile,
                                                                                           kw: v})
    if target == 10:
        return f"make_config(engine, {{TILE_SIZE: {r}}})", lambda: engines.make_config(c.engine, {"TILE_SIZE": v})
    if target == 11:
        return f"make_config(engine, knobs={r})", lambda: engines.make_config(c.engine, v)
    if target == 12:
        slot = rng.randrange(3) + 1
        buffers = {1: 0x10000, 2: 0x20000, 3: 0x30000}
        buffers[slot] = v
        return f"VariantPack(plan, {{{slot}: {r}}})", lambda: VariantPack(c.plan, buffers, workspace=0x40000)
    if target == 13:
        return f"VariantPack(plan, buffers, workspace={r})", lambda: VariantPack(
            c.plan, {1: 0x10000, 2: 0x20000, 3: 0x30000}, workspace=v)
    if target == 14:
        return f"pack.rebind_pointers({r})", lambda: c.pack().rebind_pointers(v)
    if target == 15:
        return f"pack.rebind({{1: {r}}})", lambda: c.pack().rebind({1: v})
    if target == 16:
        return f"execute(None, plan, {r})", lambda: execute(None, c.plan, v)
    if target == 17:
        return f"plan_from_json({r})", lambda: plans.plan_from_json(v, device_profile=c.profile)
    if target == 18:
        doc = json.loads(c.plan_json)
        path = rng.choice([("cudnnVersion",), ("engine", "engineId"), ("operationGraph", "tensors", 0, "dim", 1),
                           ("operationGraph", "tensors", 1, "stride", 0), ("operationGraph", "nodes", 0, "X"),
                           ("GPUProfile", "deviceName"), ("engine", "knobChoices")])
        o = doc
        for k in path[:-1]:
            o = o[k]
        try:
            o[path[-1]] = v
            text = json.dumps(doc, allow_nan=True)
        except (TypeError, ValueError, RecursionError):
            text = c.plan_json.replace('"engineId"', '"engineId\\u0000"')
        return f"plan_from_json(plan with {'.'.join(map(str, path))} = {r})", lambda: plans.plan_from_json(
            text, device_profile=c.profile)
    if target == 19:
        kw = rng.choice(["deviceprop_json", "cudnn_version", "source", "allow_version_mismatch"])
        args = {"deviceprop_json": c.profile.deviceprop_json, "cudnn_version": c.profile.cudnn_version}
        args[kw] = v
        return f"DeviceProfile({kw}={r})", lambda: DeviceProfile(**args)
    if target == 20:
        return f"DeviceProfile.from_json({r})", lambda: DeviceProfile.from_json(v, c.profile.cudnn_version)
    if target == 21:
        return f"make_kernel_cache(og, {r})", lambda: plans.make_kernel_cache(c.og, v)
    if target == 22:
        return f"Descriptor({r})", lambda: cb.Descriptor(v)
    method = rng.choice(["get", "element_count"])
    return (f"og.{method}({r}, INT64)", lambda: getattr(c.og, method)(v, cb.CUDNN_TYPE_INT64))


def thread_case(rng):
    """Threads that use one fresh object while two others close it."""
    c = corpus()
    kind = rng.choice(["descriptor", "graph", "plan", "pack", "deviceprop"])
    rounds = rng.randrange(1, 4)

    def run():
        for _ in range(rounds):
            if kind == "descriptor":
                obj = Tensor(data_type="CUDNN_DATA_HALF", dimensions=[2, 3], strides=[3, 1], unique_id=1,
                             byte_alignment=16).finalize()
                uses = [lambda: obj.get(cb.CUDNN_ATTR_TENSOR_DIMENSIONS, cb.CUDNN_TYPE_INT64), lambda: repr(obj)]
            elif kind == "graph":
                g = Graph()
                g.relu(g.tensor([1, 8, 4, 4]), output=True)
                obj = g.build()
                uses = [lambda: get_configs(obj, "A", c.profile), lambda: engines.engine_count(obj), obj.table]
            elif kind == "plan":
                obj = plans.plan_from_json(c.plan_json, device_profile=c.profile)
                uses = [obj.to_json, lambda: obj.workspace_size, lambda: c.pack().check_plan(obj)]
            elif kind == "pack":
                obj = c.pack()
                uses = [lambda: obj.rebind_pointers((0x50000, 0x60000, 0x70000)), lambda: obj.pointers,
                        lambda: obj.check_plan(c.plan)]
            else:
                obj = c.profile.descriptor(fresh=True)
                uses = [lambda: obj.get_keyword("json_representation"),
                        lambda: plans.build_plan(c.configs[0], device_profile=obj)]
            start = threading.Barrier(2 + len(uses))
            errors = []

            def worker(f):
                start.wait()
                for _ in range(3):
                    try:
                        f()
                    except ALLOWED:
                        pass
                    except BaseException as e:  # noqa: BLE001 - reported
                        errors.append(e)

            threads = [threading.Thread(target=worker, args=(obj.close,)) for _ in range(2)]
            threads += [threading.Thread(target=worker, args=(f,)) for f in uses]
            for t in threads:
                t.start()
            for t in threads:
                t.join()
            if errors:
                raise errors[0]
            if not obj.closed:
                raise AssertionError(f"the {kind} is not closed after close() from two threads")
    return f"threads close a {kind} while {rounds} round(s) of use", run


THREAD_SHARE = 0.06


def case_kind(seed, index):
    return "thread" if random.Random(f"{seed}:{index}").random() < THREAD_SHARE else "value"


def make_case(seed, index):
    rng = random.Random(f"{seed}:{index}")
    kind = "thread" if rng.random() < THREAD_SHARE else "value"
    description, call = thread_case(rng) if kind == "thread" else value_case(rng)
    return kind, description, call


def run_case(seed, index):
    """('ok' | 'allowed:<type>' | 'unexpected:<type>', detail)."""
    kind, description, call = make_case(seed, index)
    try:
        call()
        return "ok", None
    except ALLOWED as e:
        return f"allowed:{type(e).__name__}", None
    except BaseException as e:  # noqa: BLE001 - the finding
        return f"unexpected:{type(e).__name__}", f"{description}: {''.join(traceback.format_exception_only(e))[:400]}"


# ------------------------------------------------------------------------------------------------
# children
# ------------------------------------------------------------------------------------------------
class Child:
    """A forked child running a batch of cases; it writes 'S i' before and 'D [i, outcome, detail]' after each."""

    def __init__(self, seed, indices, timeout=120.0):
        self.indices = indices
        r, w = os.pipe()
        self.pid = os.fork()  # always from the main thread (no other thread of the parent holds a lock)
        if self.pid == 0:
            os.close(r)
            code = 0
            try:
                with os.fdopen(w, "w", buffering=1) as out:
                    for index in indices:
                        out.write(f"S {index}\n")
                        outcome, detail = run_case(seed, index)
                        out.write("D " + json.dumps([index, outcome, detail]) + "\n")
            except BaseException:  # noqa: BLE001
                traceback.print_exc()
                code = 5
            sys.stdout.flush()
            sys.stderr.flush()
            if code:
                os._exit(code)
            sys.exit(0)  # a normal exit: cuDNN's destructors run (a crash at exit counts)
        os.close(w)
        self.fd = r
        self.buffer = b""
        self.done = {}
        self.started = None
        self.deadline = time.monotonic() + timeout
        self.signal = None

    def read(self) -> bool:
        """Read what is there; False at end of file."""
        data = os.read(self.fd, 1 << 16)
        if not data:
            return False
        self.buffer += data
        *lines, self.buffer = self.buffer.split(b"\n")
        for line in lines:
            if line.startswith(b"S "):
                self.started = int(line[2:])
            elif line.startswith(b"D "):
                index, outcome, detail = json.loads(line[2:])
                self.done[index] = (outcome, detail)
                self.started = None
        return True

    def finish(self):
        os.close(self.fd)
        _, status = os.waitpid(self.pid, 0)
        if os.WIFSIGNALED(status):
            self.signal = os.WTERMSIG(status)
        elif os.WEXITSTATUS(status) != 0:
            self.signal = -os.WEXITSTATUS(status)  # an abnormal exit status: reported like a crash
        return self

    def kill(self):
        os.kill(self.pid, signal.SIGKILL)


def run_children(seed, batches, jobs, deadline=None):
    """Run batches in up to ``jobs`` children at once; yields each finished Child."""
    pending = list(batches)
    running = {}
    while pending or running:
        while pending and len(running) < jobs and (deadline is None or time.monotonic() < deadline):
            child = Child(seed, pending.pop(0))
            running[child.fd] = child
        if not running:
            break
        ready, _, _ = select.select(list(running), [], [], 5.0)
        for fd in ready:
            child = running[fd]
            if not child.read():
                del running[fd]
                yield child.finish()
        for fd, child in list(running.items()):
            if time.monotonic() > child.deadline:
                child.kill()
                del running[fd]
                yield child.finish()
    if pending:
        raise TimeoutError(len(pending))


def run_alone(seed, index):
    return next(run_children(seed, [[index]], 1))


def write_reproducer(out, seed, index, sig, description):
    path = pathlib.Path(out) / f"api_fuzz_crash_{seed}_{index}.py"
    name = signal.Signals(sig).name if sig and sig > 0 else f"exit status {-sig if sig else '?'}"
    path.write_text(f'''"""Reproducer written by tests/helpers/api_fuzz_worker.py: case {index} of seed {seed} ended the
process ({name}): {description}

    python -m tests.helpers.api_fuzz_worker --seed {seed} --first {index} --cases 1
"""
import sys

sys.path[:0] = [{str(REPO)!r}]
from tests.helpers import api_fuzz_worker as W  # noqa: E402

print(W.run_case({seed}, {index}), flush=True)
print("the case ran; a crash now would be at exit", flush=True)
''', encoding="utf-8")
    return path


def main(argv=None):
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    p.add_argument("--cases", type=int, default=3000)
    p.add_argument("--first", type=int, default=0)
    p.add_argument("--seed", type=int, default=None)
    p.add_argument("--out", default=None)
    p.add_argument("--jobs", type=int, default=min(2, os.cpu_count() or 1))
    p.add_argument("--batch", type=int, default=250)
    p.add_argument("--max-seconds", type=float, default=600.0)
    args = p.parse_args(argv)
    if args.seed is None:
        env = os.environ.get("CUDNN_BACKEND_FUZZ_SEED", "")
        args.seed = int(env) if env.isdigit() else CI_SEED if os.environ.get("CI") else random.randrange(2 ** 32)
    if args.out is None:
        import tempfile

        args.out = tempfile.mkdtemp(prefix="api_fuzz_")
    print(f"api fuzz: seed {args.seed}, {args.cases} cases from #{args.first}, {args.jobs} jobs, reproducers in "
          f"{args.out}", flush=True)
    t0 = time.monotonic()
    corpus()  # built in the parent: the children inherit it
    counts = collections.Counter()
    kinds = collections.Counter()
    crashes, unexpected = [], []
    indices = list(range(args.first, args.first + args.cases))
    batches = [indices[i:i + args.batch] for i in range(0, len(indices), args.batch)]
    deadline = t0 + args.max_seconds
    time_capped = False

    per_kind = collections.Counter()

    def record(index, outcome, detail):
        counts[outcome.split(":")[0]] += 1
        per_kind[case_kind(args.seed, index)] += 1
        kinds[outcome] += 1
        if outcome.startswith("unexpected"):
            unexpected.append({"index": index, "outcome": outcome, "detail": detail})

    try:
        for child in run_children(args.seed, batches, args.jobs, deadline):
            for index, (outcome, detail) in child.done.items():
                record(index, outcome, detail)
            if child.signal is None:
                continue
            # the child died: replay what it did not finish, one case per child
            found = False
            for index in [i for i in child.indices if i not in child.done]:
                alone = run_alone(args.seed, index)
                if alone.signal is None:
                    for i, (outcome, detail) in alone.done.items():
                        record(i, outcome, detail)
                    continue
                _, description, _ = make_case(args.seed, index)
                path = write_reproducer(args.out, args.seed, index, alone.signal, description)
                crashes.append({"index": index, "signal": alone.signal, "case": description, "reproducer": str(path)})
                counts["crash"] += 1
                found = True
                print(f"CRASH case {index} ({description}) -> {path}", flush=True)
            if not found:
                crashes.append({"index": child.started, "signal": child.signal, "reproducer": None,
                                "case": f"batch {child.indices[0]}..{child.indices[-1]} died at exit or by earlier "
                                        "state (not reproduced case by case): rerun the batch"})
    except TimeoutError:
        time_capped = True
    total = sum(v for k, v in counts.items() if k != "crash")
    summary = {"seed": args.seed, "cases": total + counts["crash"], "seconds": round(time.monotonic() - t0, 1),
               "time_capped": time_capped, "outcomes": dict(counts), "per_kind": dict(per_kind),
               "by_type": dict(kinds.most_common(40)),
               "crashes": crashes, "unexpected": unexpected[:50]}
    print("API-FUZZ-SUMMARY " + json.dumps(summary), flush=True)
    if crashes:
        return 4
    if unexpected:
        return 3
    return 0


if __name__ == "__main__":
    sys.exit(main())
