"""Crash-resilient fuzzing of the JSON that cuDNN deserializes, run as a subprocess by
tests/runtime/test_json_fuzz.py.

    python -m tests.helpers.json_fuzz_worker [--mutants N] [--first I] [--seed S] [--out DIR] [--jobs J] [--batch B]
                                     [--max-seconds S] [--kinds plan,kernel_cache,deviceprop] [--use-every N]
                                     [--known] [--no-check]

Real documents written by the loaded cuDNN (execution plans of several engines, runtime-compiled ones
with their cubin included, a kernel cache, the H200 device profile that release takes: tests/helpers/releases.py)
are mutated: truncated, keys deleted / renamed /
duplicated, values retyped, numbers set to 0 / -1 / huge / float / NaN / Infinity / -0, strings made
non-numeric / long / NUL / lone surrogates, arrays emptied / grown / reordered / nested deep, tensor
references pointed elsewhere, binary and pickled payloads, invalid UTF-8... Each mutant goes through
the checker (``cudnn_backend.core.json_checks``); what it accepts goes to cuDNN, as the text the checker
returned (the checker's guarantee is what is fuzzed). ``--no-check`` feeds the mutants to cuDNN
unchecked, with the package's own guard off: it shows what the checker prevents (expect crashes).

Crash resilience: mutants run in forked children, a batch per child, each child ending with a normal
exit (C++ static destructors run: a double free at exit is a crash too). A child that dies by a signal
is answered by replaying its batch (one mutant, or bisecting for a crash at exit) in fresh children;
the culprit is written as a standalone reproducer script (``--out``) and the fuzz goes on. The worker
exits 0 when nothing crashed and nothing unexpected was raised, 4 when a child crashed, 3 when an
unexpected exception came out of the checker or a cuDNN call. Its last stdout line is
``JSON-FUZZ-SUMMARY {json}``. The seed is ``--seed``, else ``CUDNN_BACKEND_FUZZ_SEED``, else a fixed
one when ``CI`` is set, else random; it is printed first. Each mutant is derived from (seed, index)
alone, so ``--seed S --first I --mutants 1`` regenerates mutant I.

Crashes known and not guardable by a JSON check are listed in ``known_crash()`` (each marked
``# KNOWN CRASH:``): such mutants are checked but not handed to cuDNN, and counted as
``skipped-known-crash``; ``--known`` (or ``CUDNN_BACKEND_FUZZ_KNOWN=1``) hands them over anyway.
Only code in the ADAPTER section touches the package or cuDNN.

The checker runs on a thread with a 256 KiB stack (a deep-nesting mutant must not overflow it); the
cuDNN calls run on the main thread (cuDNN 9.19 itself needs more than 256 KiB of stack to load a
runtime-compiled plan, valid or not).
"""
from __future__ import annotations

import argparse
import collections
import concurrent.futures
import copy
import json
import math
import os
import pathlib
import pickle
import random
import select
import signal
import sys
import threading
import time

REPO = pathlib.Path(__file__).resolve().parents[2]
CI_SEED = 20261122


# ================================================================================================
# ADAPTER: everything that touches the package or cuDNN. When the package layout changes (or the
# package calls the checker itself), only this section needs edits.
# ================================================================================================
import cudnn_backend as cb  # noqa: E402
from cudnn_backend.core import json_checks as _json_checks  # noqa: E402

KINDS = ("plan", "kernel_cache", "deviceprop")
CHECK = {  # the checker: text -> the text to give cuDNN, ValueError (or TypeError for non-text) otherwise
    "plan": _json_checks.check_plan_json,
    "kernel_cache": _json_checks.check_kernel_cache_json,
    "deviceprop": _json_checks.check_deviceprop_json,
}
CUDNN_ERRORS = (cb.CudnnBackendError, ValueError, TypeError)  # what a cuDNN call may raise (no crash)
_STATE = {}


def _profile():
    if "profile" not in _STATE:
        from tests.helpers.releases import profile

        _STATE["profile"] = profile("h200")
    return _STATE["profile"]


def _dynamic_matmul_graph(m=64):
    """A matmul + ReLU graph with dynamic shapes: its runtime-compiled kernels go to a kernel cache."""
    from cudnn_backend.graph import Graph
    from cudnn_backend.typed import OperationGraph

    g = Graph()
    a, b = g.tensor([1, m, 128]), g.tensor([1, 128, 64])
    g.pointwise("CUDNN_POINTWISE_RELU_FWD", g.matmul(a, b), output=True)
    graph = OperationGraph(ops=list(g.operations), is_dynamic_shape_enabled=True)
    graph.finalize()
    return graph


def cudnn_load_plan(text, use=False):
    """CUDNN_ATTR_EXECUTION_PLAN_JSON_REPRESENTATION: deserialize the plan offline, read it back."""
    from cudnn_backend.runtime.plans import plan_from_json

    plan = plan_from_json(text, device_profile=_profile(), allow_version_mismatch=True)
    return (plan.engine_index, sorted((int(k), v) for k, v in plan.knobs.items()), plan.workspace_size)


def cudnn_load_kernel_cache(text, use=False):
    """CUDNN_ATTR_KERNEL_CACHE_JSON_REPRESENTATION: restore the cache onto a dynamic-shape graph;
    ``use``: build a plan through it (kernels looked up in the restored entries)."""
    from cudnn_backend.runtime.plans import build_plan, make_kernel_cache

    if "kc_graph" not in _STATE:
        _STATE["kc_graph"] = _dynamic_matmul_graph()
    cache = make_kernel_cache(_STATE["kc_graph"], json_text=text)
    if use:
        from cudnn_backend.runtime.heuristics import get_configs

        graph = _dynamic_matmul_graph(128)
        build_plan(get_configs(graph, "A", _profile())[0], device_profile=_profile(), kernel_cache=cache)
    return cache.finalized


def cudnn_load_deviceprop(text, use=False):
    """CUDNN_ATTR_DEVICEPROP_JSON_REPRESENTATION: finalize a DeviceProp; ``use``: heuristics and a plan
    for a convolution against it."""
    from cudnn_backend.typed import DeviceProp

    dp = DeviceProp(json_representation=text)
    dp.finalize()
    back = dp.get_keyword("json_representation")
    if use:
        from cudnn_backend.runtime.heuristics import get_configs
        from cudnn_backend.runtime.plans import build_plan

        from tests.helpers import generic_graphs as gg

        if "conv" not in _STATE:
            _STATE["conv"] = gg.notebook_conv_graph()
        configs = get_configs(_STATE["conv"], "A", dp, raise_if_empty=False)
        if configs:
            build_plan(configs[0], device_profile=dp)
    return back


CUDNN_CALL = {"plan": cudnn_load_plan, "kernel_cache": cudnn_load_kernel_cache, "deviceprop": cudnn_load_deviceprop}


def real_documents():
    """{kind: [(name, text)]}: real JSON written by cuDNN (plans of several engines, a kernel cache
    with compiled kernels, the bundled device profile)."""
    from cudnn_backend import patterns
    from cudnn_backend.runtime.heuristics import get_configs
    from cudnn_backend.runtime.plans import build_plan, kernel_cache_json, make_kernel_cache

    profile = _profile()
    docs = {"plan": [], "kernel_cache": [], "deviceprop": [("h200", profile.deviceprop_json)]}
    for name, make in (("conv_fwd", patterns.conv_fwd), ("matmul_bias_gelu", patterns.matmul_bias_gelu),
                       ("layer_norm_fwd", patterns.layer_norm_fwd), ("sdpa_composite_fwd", patterns.sdpa_composite_fwd),
                       ("sdpa_composite_bwd", patterns.sdpa_composite_bwd), ("conv_bias_relu", patterns.conv_bias_relu)):
        graph = make().build()
        config = get_configs(graph, "A", profile)[0]
        docs["plan"].append((f"{name}_engine{config.engine_index}", build_plan(config, device_profile=profile).to_json()))
    graph = _dynamic_matmul_graph()
    cache = make_kernel_cache(graph)
    build_plan(get_configs(graph, "A", profile)[0], device_profile=profile, kernel_cache=cache)
    docs["kernel_cache"].append(("matmul_relu_dynamic", kernel_cache_json(cache)))
    return docs


def bypass_package_guard():
    """--no-check: turn off the package's own JSON guards so cuDNN sees the mutants raw (an expert's tool: expect
    crashes). ``Descriptor.set`` reads its checkers from ``core._tables._JSON_ATTRIBUTES`` when it builds its
    tables (first descriptor of the process), so this must run before any descriptor is made."""
    from cudnn_backend.core import _tables
    from cudnn_backend.runtime import _packing, plans, profiles

    def unchecked(text, canonical=False, release=None):
        return bytes(text).decode("utf-8", "replace") if isinstance(text, (bytes, bytearray, memoryview)) else text

    for attribute in list(_tables._JSON_ATTRIBUTES):
        _tables._JSON_ATTRIBUTES[attribute] = unchecked
    plans.check_plan_json = _packing.check_plan_json = unchecked
    profiles.check_deviceprop_json = unchecked


# ================================================================================================
# END OF ADAPTER
# ================================================================================================


BASE_DOCS = {}  # name -> parsed real document (for known_crash)
RUN_KNOWN = os.environ.get("CUDNN_BACKEND_FUZZ_KNOWN") == "1"
_SDPA_MODES = ("SDPA_FWD", "SDPA_BWD")


def known_crash(kind, name, text):
    """Why a checker-accepted mutant is not handed to cuDNN (a crash known and not guardable), or None.

    Each entry is marked ``# KNOWN CRASH:``; ``CUDNN_BACKEND_FUZZ_KNOWN=1`` (or ``--known``) runs them anyway.
    """
    if RUN_KNOWN or kind != "plan" or name not in BASE_DOCS:
        return None
    # KNOWN CRASH: cuDNN 9.19's fused attention engines (SDPA_FWD engine 2, SDPA_BWD engine 6 on an H200)
    # trust the operation graph of a deserialized plan: a graph rewired or re-laid-out in ways every JSON
    # rule accepts (a pointwise operand pointed at Q, dQ written transposed, ...) SIGSEGVs inside the
    # engine. Guarding that needs cuDNN's own pattern matching (rebuild the graph through the descriptor
    # API and let the engine say whether it supports it), not a JSON check. The layouts found first
    # (no stride 1 in a matmul tensor's matrix dimensions) are refused by the checker; the rest of the
    # class is skipped here: mutants of such plans whose operationGraph differs from the real one.
    doc = json.loads(text)
    graph = doc.get("operationGraph", {})
    if graph.get("finalizeMode") in _SDPA_MODES and graph != BASE_DOCS[name].get("operationGraph"):
        return "fused attention plan with a changed graph"
    return None


def run_one(kind, payload, check=True, use=False, name=None):
    """The checker, then (if it accepts) cuDNN on its text: an outcome string. Used by the children
    and by the reproducer scripts."""
    text = payload
    if check:
        try:
            text = _checker_call(kind, payload)
        except (ValueError, TypeError) as e:
            return "refused", _reason(e)
        except BaseException as e:  # noqa: BLE001 - reported, not swallowed
            return f"checker-raised-{type(e).__name__}", repr(e)[:300]
        known = known_crash(kind, name, text)
        if known:
            return "skipped-known-crash", known
    elif isinstance(payload, (bytes, bytearray)):
        text = bytes(payload).decode("utf-8", "replace")
    try:
        CUDNN_CALL[kind](text, use)
        return "cudnn-ok", None
    except CUDNN_ERRORS as e:
        return "cudnn-error", type(e).__name__
    except BaseException as e:  # noqa: BLE001
        if not check:
            return "cudnn-python-error", type(e).__name__  # unchecked text: Python-side errors are expected
        return f"cudnn-raised-{type(e).__name__}", repr(e)[:300]


_SMALL_STACK = {}


def _checker_call(kind, payload):
    """The checker on a thread with a 256 KiB stack (made once per process)."""
    pool = _SMALL_STACK.get(os.getpid())
    if pool is None:
        old = threading.stack_size(256 * 1024)
        try:
            pool = concurrent.futures.ThreadPoolExecutor(max_workers=1)
            pool.submit(lambda: None).result()  # start the thread now, with that stack size
        finally:
            threading.stack_size(old)
        _SMALL_STACK[os.getpid()] = pool
    return pool.submit(CHECK[kind], payload).result()


def _reason(e):
    """A short class of refusal for the summary (the problem without its values)."""
    problem = getattr(e, "problem", None) or str(e)
    for cut in (", got", " (", ":", " at "):
        i = problem.find(cut)
        if i > 0:
            problem = problem[:i]
    return problem[:60]


# ------------------------------------------------------------------------------------------------
# mutations
# ------------------------------------------------------------------------------------------------
SPECIAL_INTS = [0, -1, 1, 2, 3, 4, 7, 8, 255, 256, 2 ** 31 - 1, 2 ** 31, -(2 ** 31), 2 ** 32 + 1, 2 ** 53, 2 ** 62,
                2 ** 63 - 1, 2 ** 63, -(2 ** 63), -(2 ** 63) - 1, 2 ** 64, 10 ** 30]
SPECIAL_FLOATS = [0.0, -0.0, 0.5, 1.0, 2.5, 1e-300, 1e308, -1e308, math.inf, -math.inf, math.nan]
SPECIAL_STRINGS = ["", "x", "abc", "1", "0", "-1", "-0", "01", "+1", " 1", "1 ", "1e3", "0x10", "9" * 19, "9" * 25,
                   "-9223372036854775808", "9223372036854775808", "CUDNN_1", "CUDNN_X", "CUDNN_DATA_HALF",
                   "CUDNN_TENSOR_REORDERING_F16x16", "\x00", "1\x00", "NVIDIA\x00H200", "\ud800", "\udfff", "1\ud800",
                   "\U0001f600", "\u00e9", "x" * 255, "x" * 256, "x" * 300, "\u00e9" * 127, "\u00e9" * 128, "\n", "\\",
                   '"', "[", "{", "NaN", "Infinity", "f0VMRgAA", "#blob0", "A" * 4, "AAA="]
OTHER_VALUES = [None, True, False, [], [1], [0], [[[]]], {}, {"a": 1}, [1, 2, 3], ["1"], [{}]]
DEEP = [10, 31, 32, 33, 64, 200, 1000, 20000, 200000]
FINALIZE_MODES = sorted(_json_checks.FINALIZE_MODES) + ["BOGUS"]
OPERATIONS = sorted(_json_checks.NODE_TABLES) + ["CUDNN_BACKEND_OPERATION_SDPA_BWD_DESCRIPTOR",
                                                  "CUDNN_BACKEND_OPERATION_SOFTMAX_DESCRIPTOR"]


class Mutator:
    def __init__(self, docs):
        self.docs = docs  # {kind: [(name, text, parsed)]}
        self.vocabulary = sorted({k for kind in docs for _, _, d in docs[kind] for k in _keys(d)})
        self.failed = 0  # mutations that did not fit the document at hand (counted, not fatal)
        self.enums = sorted({v for kind in docs for _, _, d in docs[kind] for v in _strings(d) if v.startswith("CUDNN_")})

    def mutant(self, seed, index, kinds):
        """(kind, base name, payload, description) of mutant ``index``: a function of (seed, index)."""
        rng = random.Random(f"{seed}:{index}")
        kind = kinds[index % len(kinds)]
        name, text, doc = rng.choice(self.docs[kind])
        how = rng.random()
        notes = []
        if how < 0.04:
            return kind, name, text, "unchanged"
        if how < 0.80:
            doc = copy.deepcopy(doc)
            for _ in range(rng.choice((1, 1, 1, 2, 2, 3))):
                try:
                    doc = self.mutate_doc(rng, kind, doc, notes)
                except Exception as e:  # noqa: BLE001 - a mutation that did not fit this document
                    notes.append(f"(mutation failed: {type(e).__name__})")
                    self.failed += 1
            payload = self.serialize(rng, doc, notes)
            if rng.random() < 0.15:
                payload = self.mutate_text(rng, payload, notes)
        else:
            payload = self.mutate_text(rng, text, notes)
        return kind, name, payload, "; ".join(notes)

    # -- documents ---------------------------------------------------------------------------------
    def mutate_doc(self, rng, kind, doc, notes):
        how = rng.random()
        if how < 0.3:
            done = self.targeted(rng, kind, doc, notes)
            if done is not None:
                return done
        paths = list(_paths(doc))
        if not paths:
            return doc
        path = rng.choice(paths)
        if how > 0.65 and path:
            return self.plausible(rng, doc, path, notes)
        parent = _get(doc, path[:-1]) if path else None
        value = _get(doc, path)
        op = rng.choice(["delete", "rename", "retype", "retype", "number", "string", "array", "deep", "copy", "dupkey"])
        if not path:
            op = "retype"
        if op == "delete" and path:
            _delete(parent, path[-1])
        elif op == "rename" and path and isinstance(parent, dict):
            new = rng.choice(self.vocabulary + ["zz", "", "CUDNN_X", "\u00e9", "\x00", "X ", "x" * 300])
            parent[new] = parent.pop(path[-1])
        elif op == "number" and isinstance(value, (int, float)) and not isinstance(value, bool):
            choices = SPECIAL_INTS + SPECIAL_FLOATS + [value + 1, value - 1, -value, value * 2, float(value)]
            _set(doc, path, rng.choice(choices))
        elif op == "string" and isinstance(value, str):
            _set(doc, path, rng.choice(SPECIAL_STRINGS + [value + "x", value[:-1], value * 2, value.lower()]))
        elif op == "array" and isinstance(value, list):
            self.mutate_list(rng, value)
        elif op == "deep":
            n = rng.choice(DEEP)
            inner = rng.choice([1, "1", [], {}])
            for _ in range(min(n, 500)):  # deeper ones are made as text (json.dumps recurses)
                inner = [inner] if rng.random() < 0.5 else {"a": inner}
            if n > 500:
                inner = _Raw("[" * n + "1" + "]" * n)
            _set(doc, path, inner) if path else None
        elif op == "copy":
            other = _get(doc, rng.choice(paths))
            if path:
                _set(doc, path, copy.deepcopy(other))
        elif op == "dupkey" and isinstance(parent, dict):
            parent[_DupKey(path[-1], rng.choice(SPECIAL_STRINGS[:8] + [0, None, [], copy.deepcopy(value)]))] = None
        else:
            new = rng.choice(SPECIAL_INTS + SPECIAL_FLOATS + SPECIAL_STRINGS + OTHER_VALUES)
            if path:
                _set(doc, path, copy.deepcopy(new))
            else:
                doc = copy.deepcopy(new)
        notes.append(f"{op} {_show_path(path)}")
        return doc

    def plausible(self, rng, doc, path, notes):
        """A value of the right type, often in range: what the checker lets through goes deeper in cuDNN."""
        value = _get(doc, path)
        if isinstance(value, bool):
            new = not value
        elif isinstance(value, int):
            new = rng.choice([value + 1, value - 1, value * 2, value // 2, 0, 1, 2, 3, rng.randrange(1, 1 << 20),
                              rng.randrange(1 << 31), rng.randrange(1 << 62)])
        elif isinstance(value, float):
            new = rng.choice([0.0, -1.0, 0.5, 2.0, 1e-30, 1e30, -value, value * 3, math.inf, -math.inf])
        elif isinstance(value, str) and value.startswith("CUDNN_"):
            new = rng.choice(self.enums)
        elif isinstance(value, str) and value.lstrip("-").isdigit():
            names = [t.get("name") for g in _graphs(doc) for t in _list(g.get("tensors")) if isinstance(t, dict)]
            new = rng.choice(names + [str(int(value) + 1), "0", str(2 ** 62), "-3"])
        elif isinstance(value, str):
            new = rng.choice([value[: len(value) // 2], value + value[:8], value.upper(), ""])
        elif isinstance(value, list) and value and all(isinstance(x, int) and not isinstance(x, bool) for x in value):
            new = list(value)
            j = rng.randrange(len(new))
            new[j] = rng.choice([1, 2, new[j] + 1, max(1, new[j] // 2), new[j] * 3, 1 << rng.randrange(40)])
            if rng.random() < 0.3:
                rng.shuffle(new)
        elif isinstance(value, list):
            new = list(value)
            self.mutate_list(rng, new)
        else:
            notes.append(f"plausible (none) {_show_path(path)}")
            return doc
        _set(doc, path, new)
        notes.append(f"plausible {_show_path(path)}")
        return doc

    def mutate_list(self, rng, v):
        how = rng.choice(["clear", "pop", "dup", "reverse", "shuffle", "grow", "grow", "swap"])
        if how == "clear":
            v.clear()
        elif how == "pop" and v:
            v.pop(rng.randrange(len(v)))
        elif how == "dup" and v:
            v.insert(rng.randrange(len(v) + 1), copy.deepcopy(rng.choice(v)))
        elif how == "reverse":
            v.reverse()
        elif how == "shuffle":
            rng.shuffle(v)
        elif how == "grow" and v:
            v.extend(copy.deepcopy(v[-1]) for _ in range(rng.choice((1, 4, 8, 100))))
        elif how == "swap" and len(v) > 1:
            i, j = rng.sample(range(len(v)), 2)
            v[i], v[j] = v[j], v[i]

    def targeted(self, rng, kind, doc, notes):
        """Mutations aimed at what crashed cuDNN before: tensor names and references, dims, node order,
        finalizeMode, kernel cache key types, device names."""
        graphs = [g for g in _graphs(doc)]
        choice = rng.random()
        if graphs and choice < 0.55:
            g = rng.choice(graphs)
            tensors = g.get("tensors") if isinstance(g.get("tensors"), list) else []
            nodes = g.get("nodes") if isinstance(g.get("nodes"), list) else []
            names = [t.get("name") for t in tensors if isinstance(t, dict)]
            what = rng.choice(["ref", "name", "dim", "stride", "nodes", "mode", "operation", "virtual"])
            if what == "ref" and nodes:
                node = rng.choice(nodes)
                refs = [k for k, v in node.items() if isinstance(v, str) and not v.startswith("CUDNN_")]
                if refs:
                    node[rng.choice(refs)] = rng.choice(names + ["999", "-1", "CUDNN_1", "abc", "1 ", "", "1\x00"])
            elif what == "name" and tensors:
                rng.choice(tensors)["name"] = rng.choice(names + ["999", "CUDNN_1", "abc", "", "1" * 25, "-0", "01"])
            elif what == "dim" and tensors:
                t = rng.choice(tensors)
                key = rng.choice(["dim", "stride"])
                if isinstance(t.get(key), list) and t[key]:
                    t[key][rng.randrange(len(t[key]))] = rng.choice([0, {}, [2], "2", None, -1, 2.5, 2 ** 63, 2 ** 62, True])
            elif what == "stride" and tensors:  # layouts: permuted, padded, unpacked strides
                t = rng.choice(tensors)
                if isinstance(t.get("stride"), list) and t["stride"]:
                    st = t["stride"]
                    how = rng.choice(["permute", "pad", "unpack", "reverse"])
                    if how == "permute":
                        rng.shuffle(st)
                    elif how == "pad":
                        j = rng.randrange(len(st))
                        st[j] = st[j] * 2 if isinstance(st[j], int) else 2
                    elif how == "unpack":
                        t["stride"] = [s * 2 if isinstance(s, int) else s for s in st]
                    else:
                        st.reverse()
            elif what == "nodes" and nodes:
                self.mutate_list(rng, nodes)
            elif what == "mode":
                g["finalizeMode"] = rng.choice(FINALIZE_MODES)
            elif what == "operation" and nodes:
                rng.choice(nodes)["operation"] = rng.choice(OPERATIONS)
            elif what == "virtual" and tensors:
                t = rng.choice(tensors)
                t["isVirtual"] = not t.get("isVirtual")
            notes.append(f"targeted graph {what}")
            return doc
        if kind == "kernel_cache" and choice < 0.8 and isinstance(doc, dict):
            entries = doc.get("kernel_cache")
            for e in entries if isinstance(entries, list) else []:
                if isinstance(e, dict) and isinstance(e.get("key"), dict):
                    e["key"]["type"] = rng.choice([-2, -1, 0, 1, 2, 3, 4, 5, 100, 2 ** 31 - 1, 2 ** 31, 1.0, True])
            notes.append("targeted key.type")
            return doc
        profile = doc if kind == "deviceprop" else doc.get("GPUProfile") if isinstance(doc, dict) else None
        if isinstance(profile, dict):
            n = rng.choice([0, 1, 254, 255, 256, 257, 300, 1000])
            profile["deviceName"] = rng.choice(["x", "\u00e9", "\U0001f600"]) * n
            notes.append(f"targeted deviceName x{n}")
            return doc
        return None

    @staticmethod
    def serialize(rng, doc, notes):
        style = rng.random()
        try:
            if style < 0.6:
                text = json.dumps(doc, separators=(",", ":"), cls=_Encoder)
            elif style < 0.8:
                text = json.dumps(doc, indent=rng.choice((1, 2, "\t")), ensure_ascii=False, cls=_Encoder)
            else:
                text = json.dumps(doc, ensure_ascii=False, cls=_Encoder)
        except RecursionError:
            notes.append("unserializable")
            return "[]"
        return _Raw.expand(text)

    # -- text --------------------------------------------------------------------------------------
    @staticmethod
    def mutate_text(rng, text, notes):
        how = rng.choice(["truncate", "flip", "insert", "delete", "number", "deep", "bytes", "binary", "pickle",
                          "surrogate", "nul", "bom", "dupkey", "literal", "spaces"])
        n = len(text)
        i = rng.randrange(n + 1) if n else 0
        notes.append(f"text {how}")
        if how == "truncate":
            return text[: rng.randrange(n + 1)]
        if how == "flip" and n:
            return text[:i] + rng.choice('"{}[],:x-0\\\x00\u00e9 ') + text[i + 1:]
        if how == "insert":
            return text[:i] + rng.choice(['"', "{", "[", "]", "}", ",", ":", "\\", "\\u", "\\ud800", "1", "-", "null"]) + text[i:]
        if how == "delete" and n:
            return text[:i] + text[i + rng.randrange(1, 50):]
        if how == "number":
            spots = [j for j in range(min(n, 20000)) if text[j].isdigit()]
            if spots:
                j = rng.choice(spots)
                k = j
                while k < n and (text[k].isdigit() or text[k] in ".eE+-"):
                    k += 1
                return text[:j] + rng.choice(["-0", "0", "1e400", "-1e400", "NaN", "Infinity", "-Infinity", "1.0",
                                              "1e2", "9" * 30, "-9223372036854775809", "18446744073709551615",
                                              "0.0000001", "1" * 5000]) + text[k:]
            return text
        if how == "deep":
            d = rng.choice(DEEP)
            return text[:i] + "[" * d + "]" * d + text[i:]
        if how == "bytes":
            raw = text.encode("utf-8", "surrogatepass")
            j = rng.randrange(len(raw) + 1)
            return raw[:j] + rng.choice([b"\xff", b"\x80", b"\xc3", b"\xed\xa0\x80", b"\xf4\x90\x80\x80", b"\x00"]) + raw[j:]
        if how == "binary":
            return bytes(rng.randrange(256) for _ in range(rng.choice((0, 1, 16, 1000))))
        if how == "pickle":
            return pickle.dumps(text[:2000])
        if how == "surrogate":
            return text[:i] + rng.choice(["\ud800", "\udfff", "\udc80"]) + text[i:]
        if how == "nul":
            return text[:i] + "\x00" + text[i:]
        if how == "bom":
            return "\ufeff" + text
        if how == "dupkey":
            j = text.find('":', i)
            k = text.rfind('"', 0, j) if j > 0 else -1
            if j > 0 and k >= 0:
                key = text[k:j + 2]
                return text[:k] + key + rng.choice(['"x",', "0,", "null,", '"1",', "[],", "1e400,"]) + text[k:]
            return text
        if how == "literal":
            return rng.choice(["", " ", "null", "[]", "{}", "0", '""', "[1]", '{"a":1}', "{", "}", "NaN", "\x00"])
        if how == "spaces":
            return " \t\n\r" * rng.choice((1, 100)) + text + "\n"
        return text


class _Raw:
    """Text placed verbatim into serialized JSON (nesting too deep for json.dumps)."""

    MARK = "\x01raw{}\x01"
    table = {}

    def __init__(self, text):
        self.key = self.MARK.format(len(_Raw.table))
        _Raw.table[self.key] = text

    @classmethod
    def expand(cls, text):
        for key, raw in list(cls.table.items()):
            marker = json.dumps(key)
            if marker in text:
                text = text.replace(marker, raw)
        cls.table.clear()
        return text


class _DupKey(str):
    """A key written a second time (json.dumps writes dict keys as given: str subclasses compare unequal)."""

    def __new__(cls, key, value):
        self = super().__new__(cls, key)
        self.value = value
        return self

    def __reduce__(self):
        return (_DupKey, (str(self), self.value))

    def __hash__(self):
        return id(self)

    def __eq__(self, other):
        return self is other


class _Encoder(json.JSONEncoder):
    def default(self, o):
        if isinstance(o, _Raw):
            return o.key
        return super().default(o)

    def iterencode(self, o, _one_shot=False):
        return super().iterencode(_fix_dups(o), _one_shot)


def _fix_dups(o):
    if isinstance(o, dict):
        out = {}
        for k, v in o.items():
            if isinstance(k, _DupKey):
                out[_DupKey(str(k), None)] = _fix_dups(k.value)  # the same key, again, with another value
            else:
                out[k] = _fix_dups(v)
        return out
    if isinstance(o, list):
        return [_fix_dups(v) for v in o]
    return o


def _keys(o):
    if isinstance(o, dict):
        for k, v in o.items():
            yield k
            yield from _keys(v)
    elif isinstance(o, list):
        for v in o:
            yield from _keys(v)


def _list(o):
    return o if isinstance(o, list) else []


def _strings(o):
    if isinstance(o, dict):
        for v in o.values():
            yield from _strings(v)
    elif isinstance(o, list):
        for v in o:
            yield from _strings(v)
    elif isinstance(o, str) and len(o) < 100:
        yield o


def _paths(o, path=(), depth=0):
    yield path
    if depth > 12:
        return
    if isinstance(o, dict):
        for k, v in o.items():
            yield from _paths(v, path + (k,), depth + 1)
    elif isinstance(o, list):
        for i, v in enumerate(o[:64]):
            yield from _paths(v, path + (i,), depth + 1)


def _graphs(o):
    if isinstance(o, dict):
        if "tensors" in o and "nodes" in o:
            yield o
        for v in o.values():
            yield from _graphs(v)
    elif isinstance(o, list):
        for v in o:
            yield from _graphs(v)


def _get(o, path):
    for k in path:
        o = o[k]
    return o


def _set(o, path, value):
    _get(o, path[:-1])[path[-1]] = value


def _delete(parent, key):
    if isinstance(parent, dict):
        parent.pop(key, None)
    elif isinstance(parent, list) and 0 <= key < len(parent):
        parent.pop(key)


def _show_path(path):
    return "".join(f"[{k}]" if isinstance(k, int) else f".{k}" for k in path) or "$"


# ------------------------------------------------------------------------------------------------
# running mutants in forked children
# ------------------------------------------------------------------------------------------------
class Child:
    """A forked child running a batch; it reports 'S i' before and 'D i outcome' after each mutant."""

    def __init__(self, batch, check, use_every):
        self.batch = batch  # [(index, kind, name, payload, notes)]
        r, w = os.pipe()
        self.pid = os.fork()
        if self.pid == 0:  # the child
            os.close(r)
            code = 0
            try:
                with os.fdopen(w, "w", buffering=1) as out:
                    for index, kind, name, payload, _notes in batch:
                        out.write(f"S {index}\n")
                        use = use_every > 0 and index % use_every == 0
                        outcome, detail = run_one(kind, payload, check, use, name)
                        out.write("D " + json.dumps([index, outcome, detail]) + "\n")
            except BaseException:  # noqa: BLE001
                import traceback

                traceback.print_exc()
                code = 5
            sys.stdout.flush()
            sys.stderr.flush()
            os._exit(code) if code else sys.exit(0)  # a normal exit: cuDNN's destructors run
        os.close(w)
        self.fd = r
        self.buffer = b""
        self.started = set()
        self.done = {}

    def read(self):
        data = os.read(self.fd, 1 << 16)
        if not data:
            return False
        self.buffer += data
        *lines, self.buffer = self.buffer.split(b"\n")
        for line in lines:
            if line.startswith(b"S "):
                self.started.add(int(line[2:]))
            elif line.startswith(b"D "):
                index, outcome, detail = json.loads(line[2:])
                self.done[index] = (outcome, detail)
        return True

    def finish(self):
        os.close(self.fd)
        _, status = os.waitpid(self.pid, 0)
        if os.WIFSIGNALED(status):
            return signal.Signals(os.WTERMSIG(status)).name
        return None if os.WEXITSTATUS(status) == 0 else f"exit status {os.WEXITSTATUS(status)}"


def run_alone(batch, check, use_every):
    """Run a batch in one child, wait: (outcomes, crash or None)."""
    child = Child(batch, check, use_every)
    while child.read():
        pass
    return child.done, child.finish(), child.started


class Fuzz:
    def __init__(self, args, mutator):
        self.args = args
        self.mutator = mutator
        self.out = pathlib.Path(args.out)
        self.out.mkdir(parents=True, exist_ok=True)
        self.counts = {k: collections.Counter() for k in KINDS}
        self.reasons = collections.Counter()
        self.crashes = []
        self.unexpected = []
        self.outcome_examples = {}

    def record(self, item, outcome, detail):
        index, kind, name, payload, notes = item
        self.counts[kind]["mutants"] += 1
        self.counts[kind][outcome] += 1
        if outcome == "refused":
            self.reasons[f"{kind}: {detail}"] += 1
        elif outcome not in ("cudnn-ok", "cudnn-error", "cudnn-python-error", "skipped-known-crash"):
            path = self.write_reproducer([item], f"unexpected outcome {outcome}: {detail}")
            self.unexpected.append({"index": index, "kind": kind, "outcome": outcome, "detail": detail,
                                    "reproducer": str(path)})

    def crashed(self, batch, child_done, started, signal_name):
        """A child died: find the culprit, write its reproducer, record what did run."""
        for item in batch:
            if item[0] in child_done:
                self.record(item, *child_done[item[0]])
        running = [item for item in batch if item[0] in started and item[0] not in child_done]
        if running:  # died during a mutant: replay it alone
            item = running[0]
            _, again, _ = run_alone([item], self.args.check, self.args.use_every)
            culprits, when = [item], "during the cuDNN call"
            if again is None:  # needs the earlier state: the batch up to it
                culprits = [it for it in batch if it[0] <= item[0]]
                when = "during the cuDNN call, after the mutants before it in the same process"
            rest = [it for it in batch if it[0] > item[0]]
        else:  # every mutant done: the crash came at exit
            culprits, when = self.bisect_exit([it for it in batch if child_done.get(it[0], ("",))[0] != "refused"]), "at exit"
            rest = []
        path = self.write_reproducer(culprits, f"{signal_name} {when}")
        if running:
            self.counts[running[0][1]]["mutants"] += 1
            self.counts[running[0][1]]["crash"] += 1
        self.crashes.append({"signal": signal_name, "when": when, "indexes": [it[0] for it in culprits],
                             "kind": culprits[-1][1] if culprits else None,
                             "notes": culprits[-1][4] if culprits else None, "reproducer": str(path)})
        print(f"CRASH {signal_name} {when}: mutant(s) {[it[0] for it in culprits][-5:]} -> {path}", flush=True)
        return rest

    def bisect_exit(self, items):
        while len(items) > 1:
            half = items[: len(items) // 2]
            _, crash, _ = run_alone(half, self.args.check, self.args.use_every)
            items = half if crash else items[len(items) // 2:]
        return items

    def write_reproducer(self, items, what):
        index = items[-1][0] if items else 0
        path = self.out / f"json_fuzz_crash_{self.args.seed}_{index}.py"
        mutants = ",\n    ".join(f"({kind!r}, {payload!r})" for _, kind, _, payload, _ in items)
        # the reproducer hands cuDNN what the checker accepted, known crash or not (RUN_KNOWN below)
        notes = "\n".join(f"#   mutant {i} of {name} ({kind}): {notes}" for i, kind, name, _, notes in items)
        path.write_text(f'''"""Standalone reproducer written by tests/helpers/json_fuzz_worker.py: {what}.

seed {self.args.seed}; regenerate with
    python -m tests.helpers.json_fuzz_worker --seed {self.args.seed} --first {index} --mutants 1 {"" if self.args.check else "--no-check"}
"""
{notes}
import os
import sys

sys.path[:0] = [{str(REPO)!r}]
from tests.helpers import json_fuzz_worker as W  # noqa: E402

CHECK = {self.args.check!r}  # True: the checker first, cuDNN gets the text it returns
MUTANTS = [
    {mutants},
]
W.RUN_KNOWN = True
if not CHECK:
    W.bypass_package_guard()
for i, (kind, payload) in enumerate(MUTANTS):
    print(i, kind, W.run_one(kind, payload, CHECK, {bool(self.args.use_every)!r}), flush=True)
print("all mutants ran; a crash now would be at exit", flush=True)
''', encoding="utf-8")
        return path

    def run(self):
        args = self.args
        started = time.monotonic()
        deadline = started + args.max_seconds
        next_index, end = args.first, args.first + args.mutants
        children = {}
        time_capped = False
        while True:
            while len(children) < args.jobs and next_index < end:
                if time.monotonic() > deadline:
                    time_capped = True
                    end = next_index
                    break
                batch = []
                for index in range(next_index, min(end, next_index + args.batch)):
                    kind, name, payload, notes = self.mutator.mutant(args.seed, index, args.kinds)
                    batch.append((index, kind, name, payload, notes))
                next_index += len(batch)
                child = Child(batch, args.check, args.use_every)
                children[child.fd] = child
            if not children:
                break
            ready, _, _ = select.select(list(children), [], [], 5.0)
            for fd in ready:
                child = children[fd]
                if child.read():
                    continue
                del children[fd]
                crash = child.finish()
                batch = child.batch
                while True:
                    if crash is None:
                        for item in batch:
                            if item[0] in child.done:
                                self.record(item, *child.done[item[0]])
                        break
                    rest = self.crashed(batch, child.done, child.started, crash)
                    if not rest:
                        break
                    batch = rest
                    done, crash, begun = run_alone(batch, args.check, args.use_every)
                    child = _Finished(batch, done, begun)
        seconds = time.monotonic() - started
        return seconds, time_capped

    def summary(self, seconds, time_capped):
        total = collections.Counter()
        for c in self.counts.values():
            total.update(c)
        return {
            "seed": self.args.seed, "checked": self.args.check, "seconds": round(seconds, 1), "time_capped": time_capped,
            "mutants": total["mutants"], "per_kind": {k: dict(v) for k, v in self.counts.items()},
            "crashes": self.crashes, "unexpected": self.unexpected,
            "top_refusals": dict(self.reasons.most_common(25)), "mutations_failed": self.mutator.failed,
        }


class _Finished:
    def __init__(self, batch, done, started):
        self.batch, self.done, self.started = batch, done, started


def main(argv=None):
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    p.add_argument("--mutants", type=int, default=3000)
    p.add_argument("--first", type=int, default=0, help="index of the first mutant")
    p.add_argument("--seed", type=int, default=None)
    p.add_argument("--out", default=None, help="folder for reproducers (default: a temporary one)")
    p.add_argument("--jobs", type=int, default=min(4, os.cpu_count() or 1))
    p.add_argument("--batch", type=int, default=100)
    p.add_argument("--max-seconds", type=float, default=3600.0)
    p.add_argument("--kinds", default=",".join(KINDS))
    p.add_argument("--use-every", type=int, default=10,
                   help="every N-th mutant that cuDNN accepts is also used (kernel cache: a plan built through it; "
                        "device profile: heuristics and a plan); 0: never")
    p.add_argument("--known", action="store_true", help="hand cuDNN the mutants known_crash() skips (to check a fix)")
    p.add_argument("--no-check", dest="check", action="store_false",
                   help="feed cuDNN the mutants unchecked (and without the package's own guard): expect crashes")
    args = p.parse_args(argv)
    if args.seed is None:
        env = os.environ.get("CUDNN_BACKEND_FUZZ_SEED", "")
        args.seed = int(env) if env.isdigit() else CI_SEED if os.environ.get("CI") else random.randrange(2 ** 32)
    args.kinds = tuple(k for k in args.kinds.split(",") if k)
    global RUN_KNOWN
    RUN_KNOWN = RUN_KNOWN or args.known
    if args.out is None:
        import tempfile

        args.out = tempfile.mkdtemp(prefix="json_fuzz_")
    print(f"json fuzz: seed {args.seed}, {args.mutants} mutants from #{args.first}, kinds {','.join(args.kinds)}, "
          f"checker {'on' if args.check else 'OFF'}, {args.jobs} jobs, reproducers in {args.out}", flush=True)
    t0 = time.monotonic()
    if not args.check:
        bypass_package_guard()
    docs = real_documents()
    parsed = {k: [(name, text, json.loads(text)) for name, text in v] for k, v in docs.items()}
    BASE_DOCS.update((name, doc) for items in parsed.values() for name, _, doc in items)
    for kind, items in docs.items():  # warm cuDNN up in the parent (the children inherit it) and check the corpus
        for name, text in items:
            outcome = run_one(kind, text, True)
            if outcome[0] != "cudnn-ok":
                print(f"real document {kind} {name} not accepted: {outcome}", flush=True)
                return 2
    pool = _SMALL_STACK.pop(os.getpid(), None)
    if pool is not None:
        pool.shutdown()  # no thread of the parent's but the main one when it forks
    print(f"corpus: {', '.join(f'{k}: {len(v)}' for k, v in docs.items())} ({time.monotonic() - t0:.1f} s)", flush=True)
    fuzz = Fuzz(args, Mutator(parsed))
    seconds, capped = fuzz.run()
    summary = fuzz.summary(seconds, capped)
    print("JSON-FUZZ-SUMMARY " + json.dumps(summary), flush=True)
    if fuzz.crashes:
        return 4
    if fuzz.unexpected:
        return 3
    return 0


if __name__ == "__main__":
    sys.exit(main())
