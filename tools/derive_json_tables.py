#!/usr/bin/env python3
"""Derive the JSON checks' tables (``cudnn_backend/core/_json_tables.py``) from cuDNN itself, release by release.

    python tools/derive_json_tables.py observe --lib PATH/libcudnn.so.9 ... [--ld-path DIR ...]
    python tools/derive_json_tables.py observe --search /work/cudnn --ld-path ...   # every release found
    python tools/derive_json_tables.py build            # observations -> cudnn_backend/core/_json_tables.py
    python tools/derive_json_tables.py build --check    # fail if the tables are stale (CI: no cuDNN needed)
    python tools/derive_json_tables.py report           # what changes from release to release

``observe`` runs one child process per release (``CUDNN_BACKEND_LIBCUDNN``; ``--ld-path`` for the CUDA libraries
a cu12 release needs: cublasLt, NVRTC), offline (the libcuda stand-in, a device profile of the bundled H200
completed with what each release requires). Each child

* serializes the pattern catalogue (``cudnn_backend.patterns.CATALOGUE``, iterated: patterns added later are
  picked up; each also with each boolean option flipped, so that the members one setting omits, such as an inference
  norm's statistics, are seen omitted: a member every object has counts as required), the test graphs and one graph
  per operation the catalogue lacks (tests/helpers/json_corpus.py):
  every graph alone (through an empty kernel cache), plans of several engines, kernel caches of dynamic-shape
  graphs;
* records every member of every object kind (plan, deviceprop, engine, knobs, payload, kernel, kernelParams,
  offset, operationGraph, tensor, one kind per operation's node, kernel cache, its entries and keys, nested
  objects found on the way), with its JSON types and observed values or ranges, and the tensor role (read,
  written, read as a list) of each node member, from the descriptors the node came from;
* probes which members the release requires: drops one member at a time from a document cuDNN wrote and
  feeds it back, each in a forked child (a release may crash); cuDNN's log names the missing member;
* probes the crashes known from earlier releases, unguarded, each in a forked child;
* lists the member names the release's libraries mention (its JSON parser's strings).

Then every release loads the others' documents (which releases read which). The raw observations go to
``tools/json_observations/<release>.json`` (committed: ``build`` needs no cuDNN). ``build`` turns them into the
tables: per kind, each member's checker (``RULES`` below where the checks know more than a type, else derived
from the observed type), the releases that write it (since, until) and those that require it. A file is
rewritten only when its content changes; both carry a stamp (the hash of this tool and of the observations).
"""
from __future__ import annotations

import argparse
import collections
import hashlib
import json
import os
import pathlib
import re
import subprocess
import sys
import tempfile
import time

ROOT = pathlib.Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))
OBSERVATIONS = ROOT / "tools" / "json_observations"
TABLES_PY = ROOT / "cudnn_backend" / "core" / "_json_tables.py"
FORMAT = 1  # of the observation files

INT32_MAX, INT64_MIN, INT64_MAX = (1 << 31) - 1, -(1 << 63), (1 << 63) - 1


# ================================================================================================
# observing one release (runs in a child process with that release loaded)
# ================================================================================================
# The document structure: (kind, member) -> the kind of the object (or of each object of the array) it holds.
# Objects found elsewhere get the kind "<parent kind>.<member>" (nested objects a newer release adds).
CHILD_KINDS = {
    ("plan", "operationGraph"): "operationGraph", ("plan", "GPUProfile"): "deviceprop", ("plan", "engine"): "engine",
    ("engine", "knobChoices"): "knobs", ("engine", "payload"): "payload", ("payload", "kernels"): "kernel",
    ("kernel", "kernelParams"): "kernelParams", ("kernelParams", "offsets"): "offset",
    ("operationGraph", "tensors"): "tensor", ("tensor", "isRagged"): "tensor",
    ("kernel cache", "operationGraph"): "operationGraph", ("kernel cache", "kernel_cache"): "cache entry",
    ("cache entry", "key"): "cache key", ("cache entry", "value"): "kernel",
    ("cache key", "operationGraph"): "operationGraph", ("cache key", "knobChoices"): "knobs",
}
NODE = "node "  # node kinds: "node CUDNN_BACKEND_OPERATION_..._DESCRIPTOR"
GRAPH_KINDS = ("operationGraph", "tensor")  # kinds (with the nodes) every serialization of a graph writes
MAX_VALUES = 64  # distinct string values kept per member
MAX_SOURCES = 12  # graphs named per member (which graphs make a release write it)


def _type(v):
    if v is None:
        return "null"
    if v is True or v is False:
        return "bool"
    if isinstance(v, int):
        return "int"
    if isinstance(v, float):
        return "float" if v - v == 0.0 else ("nan" if v != v else "infinity")
    if isinstance(v, str):
        return "string"
    return "array" if isinstance(v, list) else "object"


class Stats:
    """Members per object kind: how often, their JSON types, values and ranges."""

    def __init__(self):
        self.objects = collections.Counter()
        self.members = collections.defaultdict(dict)  # kind -> member -> record

    def walk(self, kind, obj, source):
        if not isinstance(obj, dict):
            return
        self.objects[kind] += 1
        for k, v in obj.items():
            rec = self.members[kind].setdefault(k, {"count": 0, "types": collections.Counter(), "sources": []})
            rec["count"] += 1
            if source not in rec["sources"] and len(rec["sources"]) < MAX_SOURCES:
                rec["sources"].append(source)
            self.note(rec, v)
            child = CHILD_KINDS.get((kind, k))
            if kind == "operationGraph" and k == "nodes" and isinstance(v, list):
                for node in v:
                    if isinstance(node, dict):
                        self.walk(NODE + str(node.get("operation")), node, source)
                continue
            items = v if isinstance(v, list) else [v]
            for item in items:
                if isinstance(item, dict):
                    self.walk(child or f"{kind}.{k}", item, source)

    @staticmethod
    def note(rec, v):
        t = _type(v)
        rec["types"][t] += 1
        if t == "int" or t == "float":
            rec["min"] = min(rec.get("min", v), v)
            rec["max"] = max(rec.get("max", v), v)
        elif t == "string":
            values = rec.setdefault("values", [])
            if v not in values and len(values) < MAX_VALUES and len(v) < 200:
                values.append(v)
            rec["max_bytes"] = max(rec.get("max_bytes", 0), len(v.encode("utf-8", "surrogatepass")))
        elif t == "array":
            rec["min_len"] = min(rec.get("min_len", len(v)), len(v))
            rec["max_len"] = max(rec.get("max_len", len(v)), len(v))
            items = rec.setdefault("item_types", collections.Counter())
            for x in v:
                xt = _type(x)
                items[xt] += 1
                if xt == "int" or xt == "float":
                    rec["item_min"] = min(rec.get("item_min", x), x)
                    rec["item_max"] = max(rec.get("item_max", x), x)
                elif xt == "array":  # resampling fractions: [[num, den], ...]
                    rec["item_len"] = sorted(set(rec.get("item_len", [])) | {len(x)})
        elif t == "infinity":
            rec.setdefault("specials", [])
            if repr(v) not in rec["specials"]:
                rec["specials"].append(repr(v))

    def as_json(self):
        out = {}
        for kind in sorted(self.members):
            members = {}
            for k, rec in self.members[kind].items():
                r = dict(rec)
                r["types"] = dict(sorted(rec["types"].items()))
                if "item_types" in r:
                    r["item_types"] = dict(sorted(rec["item_types"].items()))
                members[k] = r
            out[kind] = {"objects": self.objects[kind], "members": members}
        return out


class Observer:
    """Everything observed on the loaded release (runs in the child)."""

    def __init__(self, log):
        self.log = log
        from tests.helpers import json_fuzz_worker as W

        W.bypass_package_guard()  # the tool feeds cuDNN unchecked JSON on purpose (in forked children)
        import cudnn_backend as cb

        self.W = W
        self.cb = cb
        from tests.helpers.env import PACKAGE_DATA
        from tests.helpers.releases import profile

        self.version = cb.get_version()
        self.profile = profile("h200")
        capture = json.loads((PACKAGE_DATA / "h200_deviceprop_cudnn91900.json").read_text())
        self.profile_added = sorted(set(self.profile.properties) - set(capture.get("deviceprop", capture)))
        self.stats = Stats()
        self.docs = []  # (kind, source, text, loader context)
        self.sources = collections.Counter()
        self.failures = {}  # source -> why it could not be serialized
        self.serialized = []  # the sources serialized
        self.roles = collections.defaultdict(lambda: collections.defaultdict(collections.Counter))

    # -- the corpus ------------------------------------------------------------------------------
    def graphs(self):
        from tests.helpers import json_corpus

        return json_corpus.graphs().items()

    def collect(self, max_plans=4, engine_variants=3):
        from cudnn_backend.runtime.heuristics import get_configs
        from cudnn_backend.runtime.plans import build_plan, kernel_cache_json, make_kernel_cache
        from cudnn_backend.typed import OperationGraph

        for source, make in self.graphs():
            t0 = time.monotonic()
            try:
                ops = list(make())
                graph = OperationGraph(ops=ops)
                graph.finalize()
            except Exception as e:  # noqa: BLE001 - an operation this release lacks, a graph it refuses
                self.failures[source] = f"{type(e).__name__}: {str(e).splitlines()[0][:200]}"
                continue
            self.serialized.append(source)
            text = kernel_cache_json(make_kernel_cache(graph))  # the graph alone, as cuDNN writes it
            self.add("kernel cache", source + " (graph)", text, {"graph": graph}, ops)
            configs = []
            for mode in ("A", "FALLBACK"):
                try:
                    configs += get_configs(graph, mode, self.profile, raise_if_empty=False)
                except Exception:  # noqa: BLE001
                    pass
            seen, plans = set(), 0
            for config in configs:
                if plans >= max_plans or config.engine_index in seen:
                    continue
                seen.add(config.engine_index)
                try:
                    plan = build_plan(config, device_profile=self.profile)
                except Exception:  # noqa: BLE001 - refused configs are normal
                    continue
                self.add("plan", f"{source} engine {config.engine_index}", plan.to_json(), {}, ops)
                plans += 1
                if plans == 1 and engine_variants > 0:
                    engine_variants -= self.engine_variants(source, graph, config, ops)
            self.dynamic_cache(source, make)
            if source.startswith("test "):  # the members a graph with override shapes adds: a few graphs suffice
                self.override_shapes_plan(source, make)
            self.log(f"  {source}: {plans} plan(s), {time.monotonic() - t0:.1f} s")

    ENGINE_ATTRIBUTES = ({"sm_count_target": 66}, {"shared_memory_limit": 65536}, {"disable_cluster_cooperative": True})

    def engine_variants(self, source, graph, config, ops):
        """Plans of an engine with each optional engine attribute set (an engine member each may write): 1 when
        any was made."""
        from cudnn_backend.runtime.engines import make_config, make_engine
        from cudnn_backend.runtime.plans import build_plan

        made = 0
        for attributes in self.ENGINE_ATTRIBUTES:
            try:
                engine = make_engine(graph, config.engine_index, self.profile, finalize=False)
                for name, value in attributes.items():
                    setattr(engine, name, value)
                engine.finalize()
                plan = build_plan(make_config(engine, config.knobs, check=False), device_profile=self.profile)
            except Exception:  # noqa: BLE001 - an attribute this release lacks or refuses for this engine
                continue
            self.add("plan", f"{source} engine {config.engine_index} ({', '.join(attributes)})", plan.to_json(), {},
                     ops)
            made = 1
        return made

    def dynamic_cache(self, source, make):
        """A kernel cache with entries: the graph with dynamic shapes, a plan built through the cache."""
        from cudnn_backend.runtime.heuristics import get_configs
        from cudnn_backend.runtime.plans import build_plan, kernel_cache_json, make_kernel_cache
        from cudnn_backend.typed import OperationGraph

        try:
            ops = list(make())
            graph = OperationGraph(ops=ops, is_dynamic_shape_enabled=True)
            graph.finalize()
            cache = make_kernel_cache(graph)
            configs = get_configs(graph, "A", self.profile, raise_if_empty=False)
        except Exception:  # noqa: BLE001 - no dynamic shapes for this graph
            return
        for config in configs[:2]:
            try:
                build_plan(config, device_profile=self.profile, kernel_cache=cache)
            except Exception:  # noqa: BLE001
                continue
            text = kernel_cache_json(cache)
            if json.loads(text).get("kernel_cache"):
                self.add("kernel cache", f"{source} (dynamic, engine {config.engine_index})", text,
                         {"graph": graph, "make": make}, ops)
                return

    def override_shapes_plan(self, source, make):
        """A plan of the graph finalized with override shapes (a release before 9.21 has none: nothing)."""
        from cudnn_backend.runtime.heuristics import get_configs
        from cudnn_backend.runtime.plans import build_plan
        from cudnn_backend.typed import OperationGraph

        try:
            ops = list(make())
            graph = OperationGraph(ops=ops, is_override_shape_enabled=True)
            graph.finalize()
            configs = get_configs(graph, "A", self.profile, raise_if_empty=False)
        except Exception:  # noqa: BLE001 - no override shapes in this release, or for this graph
            return
        for config in configs[:2]:
            try:
                plan = build_plan(config, device_profile=self.profile)
            except Exception:  # noqa: BLE001
                continue
            self.add("plan", f"{source} (override shapes, engine {config.engine_index})", plan.to_json(), {}, ops)
            return

    def add(self, kind, source, text, context, ops):
        doc = json.loads(text)
        self.stats.walk(kind, doc, source.split(" (")[0].split(" engine ")[0])
        if kind == "plan" and isinstance(doc.get("GPUProfile"), dict):
            self.docs.append(("deviceprop", source, json.dumps(doc["GPUProfile"]), {}))
        self.docs.append((kind, source, text, context))
        self.sources[kind] += 1
        graphs = [doc.get("operationGraph")] + [e.get("key", {}).get("operationGraph")
                                                 for e in doc.get("kernel_cache", []) if isinstance(e, dict)]
        for g in graphs:
            if isinstance(g, dict):
                self.note_roles(g, ops)

    def note_roles(self, g, ops):
        """The tensor role of each node member: the io of the descriptor attribute that set the tensor."""
        from cudnn_backend._bindings.enums import AttributeName, DescriptorType
        from cudnn_backend.core import attribute_io

        uid_attr = AttributeName.CUDNN_ATTR_TENSOR_UNIQUE_ID
        described = []
        for op in ops:
            ios = {}
            for attr, kids in op.children.items():
                io = attribute_io(attr)
                for kid in kids:
                    uid = getattr(kid, "values", {}).get(uid_attr)
                    if io and uid is not None:
                        ios[str(uid)] = (io, len(kids) > 1 or _is_list_attribute(attr))
            described.append((DescriptorType(op.descriptor_type).name, ios))
        used = set()
        for node in g.get("nodes", []):
            refs = {k: v for k, v in node.items() if k != "operation" and _refers(v)}
            names = {x for v in refs.values() for x in (v if isinstance(v, list) else [v])}
            for i, (op, ios) in enumerate(described):
                if i in used or op != node.get("operation") or not names <= set(ios):
                    continue
                used.add(i)
                for k, v in refs.items():
                    io, many = ios[v[0] if isinstance(v, list) else v]
                    role = "ins" if isinstance(v, list) else ("in" if io == "input" else "out")
                    self.roles[NODE + op][k][role] += 1
                break

    # -- probes ----------------------------------------------------------------------------------
    def load(self, kind, text, context):
        """Hand ``text`` to cuDNN as the loaded release reads a ``kind`` document; raises on refusal."""
        from cudnn_backend.typed import DeviceProp, ExecutionPlan, KernelCache

        if kind == "plan":  # the descriptor itself: nothing of the package's between the text and cuDNN
            plan = ExecutionPlan(json_representation=text)
            plan.deviceprop = self.profile.descriptor()
            plan.finalize(check_required=False)
        elif kind == "kernel cache":
            cache = KernelCache(operation_graph=context["graph"])
            cache.json_representation = text
            cache.finalize()
        elif kind == "deviceprop":
            dp = DeviceProp(json_representation=text)
            dp.finalize()
        else:  # pragma: no cover
            raise ValueError(kind)

    def probe(self, kind, text, context):
        """How the release takes a document, in a forked child: ("ok" | "refused" | "crash", detail)."""
        from cudnn_backend.core import cudnn_messages

        def run():
            with cudnn_messages() as messages:
                try:
                    self.load(kind, text, context)
                    return "ok", ""
                except Exception as e:  # noqa: BLE001
                    return "refused", f"{type(e).__name__}: {' | '.join(messages)[-2000:] or str(e)[:500]}"
        return in_child(run)

    def required(self):
        """For each kind and member: what the release says when one object of that kind lacks it."""
        out = collections.defaultdict(dict)
        done = set()
        for kind, source, text, context in self.docs:
            doc = json.loads(text)
            for obj_kind, path, member in _member_locations(kind, doc):
                if (obj_kind, member) in done or obj_kind == "knobs":  # knobs: which ones is the engine's business
                    continue
                done.add((obj_kind, member))
                mutated = json.loads(text)
                _delete_at(mutated, path, member)
                outcome, detail = self.probe(kind, json.dumps(mutated), context)
                named = bool(re.search(r'"%s"' % re.escape(member), detail)) if outcome == "refused" else False
                out[obj_kind][member] = {"outcome": outcome + (" (named)" if named else ""), "via": source}
                if outcome != "ok" and not named:
                    out[obj_kind][member]["reason"] = _reason(detail)
        return {k: dict(sorted(v.items())) for k, v in sorted(out.items())}

    def crashes(self):
        """The crash classes known from cuDNN 9.19, tried unguarded on this release (forked children)."""
        out = {}
        for name, kind, source, mutate in CRASH_PROBES:
            doc_entry = next((d for d in self.docs if d[0] == kind and re.match(source, d[1])), None)
            if doc_entry is None:
                out[name] = {"outcome": "not tried (no such document on this release)"}
                continue
            _, source, text, context = doc_entry
            try:
                mutated = mutate(json.loads(text), text)
            except Exception as e:  # noqa: BLE001
                out[name] = {"outcome": f"not tried ({type(e).__name__}: {e})"}
                continue
            outcome, detail = self.probe(kind, mutated, context)
            out[name] = {"outcome": outcome, "via": source,
                         "detail": _reason(detail) if outcome == "refused" else detail}
        return out

    def samples(self):
        """Documents for the other releases to load: one of each kind (a plan without and one with cubins)."""
        picks = {}
        for kind, source, text, context in self.docs:
            if kind == "plan":
                key = "plan with cubin" if '"cubin"' in text else "plan"
            elif kind == "kernel cache" and "dynamic" in source:
                key = "kernel cache"
            elif kind == "deviceprop":
                key = "deviceprop"
            else:
                continue
            if key not in picks or len(text) < len(picks[key][1]):
                picks[key] = (source, text)
        return picks


_STATUS = re.compile(r"CUDNN_STATUS_[A-Z_]+")
_REASON = re.compile(r"Reason: ([^\n|]+)")


def _reason(detail):
    """The gist of a refusal: cuDNN's status and its first reason (the log's noise left out)."""
    status = _STATUS.search(detail)
    reasons = [r.strip() for r in _REASON.findall(detail) if "AUTO" not in r]
    return " ".join(x for x in (status.group() if status else "", reasons[0] if reasons else detail[:120]) if x)[:200]


def _is_list_attribute(attr):
    from cudnn_backend.core import schema

    try:
        return (schema.attribute_info(attr).get("count_max") or 1) > 1
    except Exception:  # noqa: BLE001
        return False


_NAME = re.compile(r"-?[0-9]{1,19}\Z")


def _refers(v):
    return (isinstance(v, str) and _NAME.match(v)) or (
        isinstance(v, list) and v and all(isinstance(x, str) and _NAME.match(x) for x in v))


def _member_locations(kind, doc):
    """(object kind, path to the object, member) for every member of every object of a document."""
    def walk(obj_kind, obj, path):
        if not isinstance(obj, dict):
            return
        for k, v in obj.items():
            yield obj_kind, path, k
            if obj_kind == "operationGraph" and k == "nodes" and isinstance(v, list):
                for i, node in enumerate(v):
                    if isinstance(node, dict):
                        yield from walk(NODE + str(node.get("operation")), node, path + (k, i))
                continue
            child = CHILD_KINDS.get((obj_kind, k)) or f"{obj_kind}.{k}"
            if isinstance(v, dict):
                yield from walk(child, v, path + (k,))
            elif isinstance(v, list):
                for i, x in enumerate(v):
                    yield from walk(child, x, path + (k, i))
    yield from walk(kind, doc, ())


def _delete_at(doc, path, member):
    o = doc
    for k in path:
        o = o[k]
    del o[member]


def in_child(fn, timeout=120):
    """fn() in a forked child: its (outcome, detail), or ("crash", signal) when the child dies."""
    import signal

    r, w = os.pipe()
    pid = os.fork()
    if pid == 0:  # the child: run, report, exit normally (cuDNN's destructors run: a crash at exit counts)
        os.close(r)
        try:
            result = fn()
        except BaseException as e:  # noqa: BLE001
            result = ("error", f"{type(e).__name__}: {e}")
        data = json.dumps(result).encode()
        with os.fdopen(w, "wb") as f:
            f.write(data)
        sys.stdout.flush()
        sys.stderr.flush()
        sys.exit(0)
    os.close(w)
    chunks = []
    deadline = time.monotonic() + timeout
    import select

    while True:
        ready, _, _ = select.select([r], [], [], max(0.0, deadline - time.monotonic()))
        if not ready:
            os.kill(pid, signal.SIGKILL)
            os.waitpid(pid, 0)
            os.close(r)
            return "crash", "timeout"
        data = os.read(r, 1 << 16)
        if not data:
            break
        chunks.append(data)
    os.close(r)
    _, status = os.waitpid(pid, 0)
    if os.WIFSIGNALED(status):
        return "crash", signal.Signals(os.WTERMSIG(status)).name
    try:
        return tuple(json.loads(b"".join(chunks)))
    except ValueError:
        return "crash", f"exit status {os.WEXITSTATUS(status)} with no report"


# -- crash probes: the crash classes cuDNN 9.19 had (tests/helpers/json_fuzz_worker.py) ----------
def _nest(doc, text, where=None, depth=200_000):
    deep = "[" * depth + "]" * depth
    return text[:-1] + ',"zz":' + deep + "}"


def _set_path(path, value):
    def mutate(doc, text):
        o = doc
        for k in path[:-1]:
            o = o[k]
        o[path[-1]] = value
        return json.dumps(doc, separators=(",", ":"))
    return mutate


def _matmul_operand(doc, member):
    """The tensor a plan's first matmul node names as ``member``."""
    g = doc["operationGraph"]
    node = next(n for n in g["nodes"] if n["operation"].endswith("MATMUL_DESCRIPTOR"))
    return next(t for t in g["tensors"] if t["name"] == node[member])


def _first_matmul_operand_dim(doc, text):
    _matmul_operand(doc, "matA")["dim"][0] = 0
    return json.dumps(doc, separators=(",", ":"))


def _reverse_nodes(doc, text):
    doc["operationGraph"]["nodes"].reverse()
    return json.dumps(doc, separators=(",", ":"))


def _cache_key_type(value, **members):
    def mutate(doc, text):
        doc["kernel_cache"][0]["key"].update(type=value, **members)
        return json.dumps(doc, separators=(",", ":"))
    return mutate


def _sdpa_stride(doc, text):
    t = _matmul_operand(doc, "matB")
    t["stride"] = [t["stride"][0], t["stride"][1], t["stride"][2] * t["dim"][3], 2] if len(t["stride"]) == 4 else 0
    return json.dumps(doc, separators=(",", ":"))


def _kernel_twice(doc, text):
    kernels = doc["engine"]["payload"]["kernels"]
    kernels.append(kernels[0])
    return json.dumps(doc, separators=(",", ":"))


# the probes behind the engine's one-kernel rule for attention plans (CRASHES in the tables)
ATTENTION_KERNEL_TWICE = ("fused attention forward plan with its kernel twice",
                          "fused attention backward plan with its kernel twice",
                          "unified attention forward plan with its kernel twice")
# the probes behind the rule that refuses tensor-IR (type 2) kernel cache keys where a release crashes on them
TENSOR_IR_CACHE_KEY = ("kernel cache key type 2", "kernel cache key type 2 with a shader hash key")
GUARD_PROBES = {"one kernel per attention plan": ATTENTION_KERNEL_TWICE,  # guard -> the probes that need it
                "no tensor-IR kernel cache key": TENSOR_IR_CACHE_KEY}
CRASH_PROBES = [  # (name, document kind, source (a regular expression), mutation(doc, text) -> text)
    ("deep nesting (200,000 levels) in a plan", "plan", "pattern conv_fwd", _nest),
    ("deep nesting (200,000 levels) in a device profile", "deviceprop", "pattern conv_fwd", _nest),
    ("deep nesting (200,000 levels) in a kernel cache", "kernel cache", "test matmul_relu", _nest),
    ("deviceName of 256 bytes", "deviceprop", "pattern conv_fwd", _set_path(("deviceName",), "x" * 256)),
    ("deviceName of 300 bytes", "deviceprop", "pattern conv_fwd", _set_path(("deviceName",), "x" * 300)),
    ("tensor name std::stoll cannot read", "plan", "pattern conv_fwd",
     _set_path(("operationGraph", "tensors", 0, "name"), "abc")),
    ("tensor reference std::stoll cannot read", "plan", "pattern conv_fwd",
     _set_path(("operationGraph", "nodes", 0, "X"), "abc")),
    ("tensors not an array", "plan", "pattern conv_fwd", _set_path(("operationGraph", "tensors"), "abc")),
    ("zero dimension of a matmul operand", "plan", "pattern matmul_bias_gelu", _first_matmul_operand_dim),
    ("nodes out of topological order", "plan", "pattern matmul_bias_gelu", _reverse_nodes),
    ("finalizeMode CONV_FORWARD without a convolution", "plan", "pattern matmul_bias_gelu",
     _set_path(("operationGraph", "finalizeMode"), "CONV_FORWARD")),
    ("finalizeMode NORM_BWD without a norm backward", "plan", "pattern matmul_bias_gelu",
     _set_path(("operationGraph", "finalizeMode"), "NORM_BWD")),
    ("kernel cache key type 3", "kernel cache", ".*dynamic", _cache_key_type(3)),
    ("kernel cache key type -1", "kernel cache", ".*dynamic", _cache_key_type(-1)),
    (TENSOR_IR_CACHE_KEY[0], "kernel cache", ".*dynamic", _cache_key_type(2)),
    (TENSOR_IR_CACHE_KEY[1], "kernel cache", ".*dynamic", _cache_key_type(2, shader_hash_key=(1 << 64) - 1)),
    ("fused attention matmul operand without a unit stride", "plan", "pattern sdpa_composite_fwd", _sdpa_stride),
    (ATTENTION_KERNEL_TWICE[0], "plan", "pattern sdpa_composite_fwd", _kernel_twice),
    (ATTENTION_KERNEL_TWICE[1], "plan", "pattern sdpa_composite_bwd", _kernel_twice),
    (ATTENTION_KERNEL_TWICE[2], "plan", "pattern sdpa_fwd", _kernel_twice),
]


# -- the library's own strings -------------------------------------------------------------------
_QUOTED = re.compile(rb'"([A-Za-z_][A-Za-z0-9_]{0,63})"'  # "member"
                     rb'|\bjson_([A-Za-z_][A-Za-z0-9_]{0,63})'  # json_member
                     rb'|\b([A-Za-z_][A-Za-z0-9_]{0,63})_iter\b')  # member_iter
_BARE = re.compile(rb"[A-Za-z_][A-Za-z0-9_]{1,63}\Z")
_JSON_LINE = re.compile(rb"json|HasMember|Member|\[\"")


def library_names(lib_dir):
    """(names quoted in the JSON parser's messages, every identifier-like string) of the release's graph
    library, where its JSON reading and writing lives."""
    quoted, bare = set(), set()
    for path in sorted(pathlib.Path(lib_dir).glob("libcudnn_graph.so*")):
        for s in re.findall(rb"[\x20-\x7e]{2,}", path.read_bytes()):
            if _JSON_LINE.search(s):
                quoted.update(n.decode() for m in _QUOTED.findall(s) for n in m if n)
            elif _BARE.match(s):
                bare.add(s.decode())
    return quoted, bare


def observe_loaded(out_path, samples_dir, log):
    """The child's work: every observation of the loaded release into ``out_path``."""
    t0 = time.monotonic()
    obs = Observer(log)
    from cudnn_backend._bindings import _loader

    lib = _loader.load_cudnn()
    log(f"cuDNN {lib.version_string} ({lib.path}), profile members added: {obs.profile_added}")
    obs.collect()
    t_collect = time.monotonic() - t0
    required = obs.required()
    t_required = time.monotonic() - t0 - t_collect
    crashes = obs.crashes()
    identity = plan_identity(obs.profile, log)
    samples = obs.samples()
    if samples_dir:
        d = pathlib.Path(samples_dir) / str(obs.version)
        d.mkdir(parents=True, exist_ok=True)
        for key, (source, text) in samples.items():
            (d / (key.replace(" ", "_") + ".json")).write_text(text)
    quoted, bare = library_names(pathlib.Path(lib.path).parent)
    known = {m for kind in obs.stats.members.values() for m in kind} | RULE_NAMES | header_names()
    result = {
        "format": FORMAT,
        "release": obs.version,
        "release_text": lib.version_string,
        "library": pathlib.Path(lib.path).parent.parent.parent.parent.name,
        "profile_members_added": obs.profile_added,
        "documents": dict(sorted(obs.sources.items())),
        "serialized": obs.serialized,
        "not_serialized": dict(sorted(obs.failures.items())),
        "api": api_names(obs.version),
        "kinds": obs.stats.as_json(),
        "roles": {op: {m: dict(c) for m, c in sorted(v.items())} for op, v in sorted(obs.roles.items())},
        "required": required,
        "crashes": crashes,
        "plan_identity": identity,
        "library_names": sorted((quoted | bare) & known),
        "library_names_unseen": sorted(quoted - known),
        "seconds": {"serialize": round(t_collect, 1), "required": round(t_required, 1),
                    "total": round(time.monotonic() - t0, 1)},
    }
    out_path.write_text(json.dumps(result, indent=1, sort_keys=False) + "\n")
    log(f"cuDNN {lib.version_string}: {sum(obs.sources.values())} documents, {len(required)} kinds probed, "
        f"{result['seconds']['total']} s -> {out_path}")


def api_names(release):
    """The operations and knobs the release's API offers (the package's header data: their since-versions)."""
    from cudnn_backend._bindings.enums import SINCE, DescriptorType, KnobType
    from cudnn_backend.core.versions import parse_version

    names = [d.name for d in DescriptorType if d.name.startswith("CUDNN_BACKEND_OPERATION_")]
    names += [k.name for k in KnobType]
    return sorted(n for n in names if parse_version(SINCE.get(n, "9.0.0")) <= release)


def crashes_loaded(folder, log):
    """The crash probes again on the loaded release, into its existing observations (``folder/<release>.json``)."""
    obs = Observer(log)
    path = folder / f"{_text(obs.version)}.json"
    result = json.loads(path.read_text())
    obs.collect(max_plans=2, engine_variants=0)
    result["crashes"] = obs.crashes()
    path.write_text(json.dumps(result, indent=1) + "\n")
    log(f"cuDNN {_text(obs.version)}: " + "; ".join(f"{k}: {v['outcome']}" for k, v in result["crashes"].items()))


def plan_identity(profile, log):
    """The deviceprop members cuDNN compares when it loads a plan: a plan built offline against ``profile`` is loaded
    against the same profile with one member changed at a time; a member whose change makes the load fail with
    CUDNN_STATUS_NOT_SUPPORTED_ARCH_MISMATCH identifies the GPU to this release (a plan built against a wrong value
    is refused on the real GPU). Returns {"members": [...], "ignored": [...], "unprobed": {member: why}}."""
    from cudnn_backend.errors import CudnnError, DeviceProfileError
    from cudnn_backend.runtime.heuristics import build_first_plan
    from cudnn_backend.runtime.plans import plan_from_json
    from cudnn_backend.runtime.profiles import DeviceProfile
    from tests.helpers.offline import conv_graph

    plan, _ = build_first_plan(conv_graph(n=1, c=16, h=8, w=8, k=16), device_profile=profile)
    text = plan.to_json()
    props = profile.properties
    found = {"members": [], "ignored": [], "unprobed": {}, "refused_values": {}}
    for member, value in props.items():
        refused, loaded, invalid = [], [], []
        for changed in _changed_values(value, member):
            try:
                other = DeviceProfile(json.dumps({**props, member: changed}, separators=(",", ":")),
                                      cudnn_version=profile.cudnn_version)
                plan_from_json(text, device_profile=other).close()
                loaded.append(changed)
            except DeviceProfileError as e:  # the package's own checks refuse this value
                invalid.append(f"{changed!r}: {str(e)[:100]}")
            except CudnnError as e:
                if "ARCH_MISMATCH" in str(e):
                    refused.append(changed)
                else:  # the deviceprop itself refused the value (BAD_PARAM)
                    invalid.append(f"{changed!r}: {getattr(e.status, 'name', e.status)}")
        if refused:
            found["members"].append(member)
            found["refused_values"][member] = {"captured": value, "refused": refused, "loaded": loaded}
        elif loaded:
            found["ignored"].append(member)
        else:
            found["unprobed"][member] = "; ".join(invalid) or "no other value to try"
    log(f"plan identity: {', '.join(found['members'])}; unprobed: {found['unprobed'] or 'none'}")
    return found


def _changed_values(value, member=None):
    """Values unlike ``value`` of its type, the likeliest valid first (the device profile's checks refuse a
    ``deviceVer`` that is no SM version: the neighbouring SM versions)."""
    if member == "deviceVer" and isinstance(value, int):
        return [value - 10, value + 10]
    if isinstance(value, bool):
        return [not value]
    if isinstance(value, int):  # both sides: cuDNN may accept a plan for a lesser value (a driver) but no greater
        return [value - 1, value + 1] if value > 0 else [value + 1, value + 2]
    if isinstance(value, str):
        return [value + " X", "X"]
    if isinstance(value, list):
        return [[*value[:-1], value[-1] - 1], [v + 1 for v in value]]
    return []


def identity_loaded(folder, log):
    """The plan-identity probe on the loaded release, into its existing observations (``folder/<release>.json``)."""
    obs = Observer(log)
    path = folder / f"{_text(obs.version)}.json"
    result = json.loads(path.read_text())
    identity = plan_identity(obs.profile, log)
    _keep_identity(identity, result.get("plan_identity"))
    result["plan_identity"] = identity
    path.write_text(json.dumps(result, indent=1) + "\n")


def header_names():
    """Knob and operation names of the package's cuDNN header (the newest): candidates the strings confirm."""
    from cudnn_backend._bindings.enums import DescriptorType, KnobType

    operations = {d.name for d in DescriptorType if d.name.startswith("CUDNN_BACKEND_OPERATION_")}
    return {k.name for k in KnobType} | operations


def cross_loaded(samples_dir, out_path, log):
    """Load the other releases' sample documents into the loaded one (each in a forked child)."""
    obs = Observer(log)
    result = json.loads(out_path.read_text())
    cross = {}
    for d in sorted(pathlib.Path(samples_dir).iterdir()):
        if not d.is_dir() or int(d.name) == obs.version:
            continue
        for f in sorted(d.glob("*.json")):
            key = f.stem.replace("_", " ")
            kind = "plan" if key.startswith("plan") else key
            context = {}
            if kind == "kernel cache":
                context["graph"] = _dynamic_matmul_graph()
            outcome, detail = obs.probe(kind, f.read_text(), context)
            cross[f"{key} by {_text(int(d.name))}"] = {"outcome": outcome, "detail": _reason(detail)}
    # the loads of releases not in this run's samples, from an earlier run, stay (_keep_earlier carried them)
    sampled = {_text(int(d.name)) for d in pathlib.Path(samples_dir).iterdir() if d.is_dir()}
    earlier = {k: v for k, v in result.get("loads_from_other_releases", {}).items()
               if k.rsplit(" by ", 1)[-1] not in sampled}
    result["loads_from_other_releases"] = {**earlier, **cross}
    out_path.write_text(json.dumps(result, indent=1, sort_keys=False) + "\n")
    log(f"cuDNN {_text(obs.version)}: {len(cross)} documents of other releases tried")


def _dynamic_matmul_graph():
    from tests.helpers import offline

    return offline.matmul_relu_graph(dynamic=True)


def _text(v):
    return f"{v // 10000}.{v % 10000 // 100}.{v % 100}"


def _release(text):
    major, minor, patch = (int(x) for x in text.split("."))
    return major * 10000 + minor * 100 + patch


# ================================================================================================
# building the tables (no cuDNN needed)
# ================================================================================================
# Checker specs (read by cudnn_backend/core/json_checks.py, ``_spec``): plain tuples.
#   ("int", lo, hi)  ("pow2", lo, hi)  ("float",)  ("float_inf",) (the literals Infinity/-Infinity too)
#   ("bool",)  ("enum", prefix)  ("oneof", values)  ("text", max_bytes)  ("name",) (a tensor name)
#   ("array", item, min_len, max_len)  ("fractions", positive)  ("base64", max_bytes)  ("cubin",)
#   ("object", kind)  ("graph",)  ("knobs",)  ("finalize_mode",)  ("any",)  ("ref", "in" | "out" | "ins")
#   ("scalar",) (a number, NaN and +-Infinity included, or a bool)
INT32_MIN = -(1 << 31)
MAX_RANK = 8  # CUDNN_DIM_MAX
SPATIAL = 6  # convolution / resampling spatial dimensions
MAX_ARRAY = 1 << 16
MAX_RAW_DATA = 1 << 20
DEVICE_NAME_MAX_BYTES = 255  # 256 bytes: double free at exit; 300: bad_alloc / SIGSEGV (cuDNN 9.19 .. 9.28)
I32, I32_POS, I32_NONNEG = ("int", INT32_MIN, INT32_MAX), ("int", 1, INT32_MAX), ("int", 0, INT32_MAX)
I64, I64_NONNEG = ("int", INT64_MIN, INT64_MAX), ("int", 0, INT64_MAX)
F, F_INF, BOOL, DT = ("float",), ("float_inf",), ("bool",), ("enum", "CUDNN_DATA_")
IN, OUT, INS = ("ref", "in"), ("ref", "out"), ("ref", "ins")
AXIS = ("int", 0, MAX_RANK - 1)
PADS, STEPS = ("array", ("int", 0, INT64_MAX), 1, SPATIAL), ("array", ("int", 1, INT64_MAX), 1, SPATIAL)
# blend factors, slopes and clips: cuDNN writes an infinite one as the literal Infinity and reads it back (9.10-9.28),
# and the builders take one (a plan that saves loads back)
CONV = {"mode": ("enum", "CUDNN_"), "mathPrec": DT, "alpha": F_INF, "beta": F_INF, "pad": PADS, "pad_lower": PADS,
        "pad_upper": PADS, "stride": STEPS, "dilation": STEPS}
RESAMPLE = {"alpha": F_INF, "beta": F_INF, "mode": ("enum", "CUDNN_RESAMPLE_"), "nbSpatialDims": ("int", 1, SPATIAL),
            "windowDim": ("fractions", True), "prePad": ("fractions", False), "postPad": ("fractions", False),
            "stride": ("fractions", True), "compType": DT, "nanOpt": ("enum", "CUDNN_"),
            "paddingMode": ("enum", "CUDNN_")}
OP = "CUDNN_BACKEND_OPERATION_%s_DESCRIPTOR"

# What the checks know beyond a member's JSON type: ranges (what crashed cuDNN 9.19 is kept out), the tensor
# roles, the structure. Members no rule names get a checker derived from what the releases write (``derive``).
RULES = {
    "plan": {"cudnnVersion": I32_NONNEG, "schemaVersion": I32_NONNEG, "operationGraph": ("graph",),
             "GPUProfile": ("object", "deviceprop"), "engine": ("object", "engine")},
    # read as int32 (IsInt), totalGlobalMem as uint64; counts a GPU always has at least one of are >= 1
    "deviceprop": {
        "maxGridSize": ("array", I32_POS, 3, 3), "maxBlockSize": ("array", I32_POS, 3, 3), "regsPerBlock": I32_POS,
        "multiProcessorCount": I32_POS, "warpSize": ("int", 1, 1024), "maxSharedMemoryPerBlock": I32_NONNEG,
        "maxSharedMemoryPerBlockOptin": I32_NONNEG, "reservedSharedMemoryPerBlock": I32_NONNEG,
        "maxRegistersPerSM": I32_POS, "maxCtasPerSM": I32_NONNEG, "maxThreadsPerBlock": I32_POS,
        "maxThreadsPerSM": I32_POS, "pciDeviceId": I32_NONNEG, "isTccDriver": ("int", 0, 1),
        "supportCoopLaunch": ("int", 0, 1), "totalGlobalMem": I64_NONNEG, "smClockRateKHz": I32_NONNEG,
        # l2CacheSize within 640 KiB of 2^31: "Timing model abort" (std::runtime_error, SIGABRT) in the norms'
        # heuristics of 9.19 and 9.28; GPUs have at most a few hundred MiB
        "memClockRateKHz": I32_NONNEG, "l2CacheSize": ("int", 0, 1 << 30), "cudaDeviceId": I32_NONNEG,
        "deviceVer": I32_NONNEG,
        "driverVer": I32_NONNEG, "deviceName": ("text", DEVICE_NAME_MAX_BYTES),
        # cuDNN 9.28: cudnnSmCountOrigin_t (it refuses values outside its range itself), bits, bytes
        "smCountOrigin": ("int", 0, 255), "memoryBusWidth": I32_POS, "oversizedSharedMemoryPerBlock": I32_NONNEG},
    "engine": {"engineId": I32_NONNEG, "smVersion": I32_NONNEG, "targetSMcount": I32_POS, "knobChoices": ("knobs",),
               "payload": ("object", "payload")},
    "payload": {"kernels": ("array", ("object", "kernel"), 1, 1024)},
    "kernel": {"kernelName": ("text", 4096), "kernelParams": ("object", "kernelParams"), "cubin": ("cubin",)},
    # a block of bytes (rawData) that cuDNN patches at run time at the offsets listed
    "kernelParams": {"offsets": ("array", ("object", "offset"), 0, MAX_ARRAY), "rawData": ("base64", MAX_RAW_DATA)},
    "offset": {"value": I32_NONNEG,  # the byte offset into rawData (cuDNN: IsInt)
               "update_as": ("oneof", ("pointer", "value", "workspace", "tma_desc", "shape_from_node",
                                       "shape_from_tensor", "shape_from_param", "shape_from_graph")),
               "uid": I64, "context_uid": I64, "size": I32_NONNEG, "idx_shape_update_fn": I32_NONNEG,
               "name": ("text", 1024)},
    "operationGraph": {"finalizeMode": ("finalize_mode",), "tensors": ("any",), "nodes": ("any",),
                       "isDynamicShapeEnabled": BOOL, "isOverrideShapeEnabled": BOOL},
    "tensor": {
        "name": ("name",), "dataType": DT,
        # 0 / {} / null / "2" / 2.5 / 2**64 as dim[0] of a matmul operand: SIGFPE in cuDNN 9.19
        "dim": ("array", ("int", 1, INT64_MAX), 1, MAX_RANK), "stride": ("array", ("int", 1, INT64_MAX), 1, MAX_RANK),
        "isVirtual": BOOL, "isByValue": BOOL, "vectCount": ("int", 1, 64), "vectDim": ("int", -1, MAX_RANK - 1),
        "ptrAlignment": ("pow2", 1, 1 << 30), "reordering": ("enum", "CUDNN_TENSOR_REORDERING_"),
        "isRagged": ("array", ("object", "ragged tensor"), 1, 1),  # a ragged tensor carries its offset tensor
        # a constant tensor's value (cuDNN 9.22+): a number or a bool, as its data type reads
        "hasConstValue": BOOL, "constValue": ("scalar",)},
    "kernel cache": {"cudnnVersion": I32_NONNEG, "schemaVersion": I32_NONNEG, "operationGraph": ("graph",),
                     "kernel_cache": ("array", ("object", "cache entry"), 0, MAX_ARRAY)},
    "cache entry": {"key": ("object", "cache key"), "value": ("array", ("object", "kernel"), 0, 1024)},
    "cache key": {
        "type": ("int", 0, 2),  # 0, 1 and 2 (9.10.2: SIGSEGV on 2, GUARDS); 3 .. 2**31-1 and negative values: SIGSEGV
        "engineId": I32_NONNEG, "knobChoices": ("knobs",), "check_specialization": BOOL,
        "operationGraph": ("graph",),  # checked exactly like the top-level graph
        "bpa_a": I32_NONNEG, "bpa_b": I32_NONNEG, "bpa_c": I32_NONNEG,  # type 1 (fort native) keys (cuDNN: IsInt)
        "shader_hash_key": ("int", 0, (1 << 64) - 1)},  # type 2 (tensor IR) keys (cuDNN: IsUint64)
}
# One table per operation: member -> checker, or the tensor role of a member naming tensors (a node refers to
# tensors by name; cuDNN needs the nodes in topological order, checked with these roles). Members no release
# writes offline are kept where the release's parser names them (its strings).
NODE_RULES = {
    OP % "CONVOLUTION_FORWARD": dict(CONV, X=IN, W=IN, Y=OUT),
    OP % "CONVOLUTION_BACKWARD_DATA": dict(CONV, dY=IN, W=IN, dX=OUT),
    OP % "CONVOLUTION_BACKWARD_FILTER": dict(CONV, X=IN, dY=IN, dW=OUT),
    OP % "POINTWISE": {
        "pointwiseMode": ("enum", "CUDNN_POINTWISE_"), "mathPrec": DT, "alpha1": F_INF, "alpha2": F_INF,
        "alpha": F_INF, "beta": F_INF,  # ELU alpha; softplus / swish beta
        "upperClip": F_INF, "lowerClip": F_INF, "lowerClipSlope": F_INF, "axis": AXIS,
        "X": IN, "B": IN, "T": IN, "dY": IN, "Y": OUT, "dX": OUT},
    OP % "MATMUL": {"mathPrec": DT, "paddingDataType": ("enum", "CUDNN_TYPE_"), "paddingValue": F_INF,
                    "matA": IN, "matB": IN, "mOverride": IN, "nOverride": IN, "kOverride": IN, "matC": OUT},
    OP % "REDUCTION": {"reductionOp": ("enum", "CUDNN_REDUCE_TENSOR_"), "mathPrec": DT, "isDeterministic": BOOL,
                       "X": IN, "Y": OUT},
    OP % "GEN_STATS": {"mathPrec": DT, "X": IN, "Sum": OUT, "SqSum": OUT},
    OP % "NORM_FORWARD": {
        "mode": ("enum", "CUDNN_"), "fmode": ("enum", "CUDNN_NORM_FWD_"), "X": IN, "Scale": IN, "Bias": IN,
        "epsilonDesc": IN, "expavgfactorDesc": IN, "InRunningMean": IN, "InRunningVar": IN, "peerStats": INS,
        "Y": OUT, "Mean": OUT, "InvVariance": OUT, "OutRunningMean": OUT, "OutRunningVar": OUT},
    OP % "NORM_BACKWARD": {
        "mode": ("enum", "CUDNN_"), "X": IN, "DY": IN, "Mean": IN, "InvVariance": IN, "Scale": IN, "epsilonDesc": IN,
        "peerStats": INS, "DX": OUT, "DScale": OUT, "DBias": OUT},
    OP % "BN_FINALIZE_STATISTICS": {
        "mode": ("enum", "CUDNN_"), "mathPrec": DT, "ySum": IN, "ySqSum": IN, "bnScale": IN, "bnBias": IN,
        "bnPrevRunningMean": IN, "bnPrevRunningVar": IN, "accumCntValTensor": IN, "epsilonValTensor": IN,
        "expAverageFactorValTensor": IN, "bnEqScale": OUT, "bnEqBias": OUT, "bnUpdatedRunningMean": OUT,
        "bnUpdatedRunningVar": OUT, "bnSavedMean": OUT, "bnSavedInvStd": OUT},
    OP % "BN_BWD_WEIGHTS": {
        "mathPrec": DT, "xDesc": IN, "dyDesc": IN, "BNmeanDesc": IN, "BNscaleDesc": IN, "BNinvstdDesc": IN,
        "dGammaDesc": OUT, "dBetaDesc": OUT, "eqDyScaleDesc": OUT, "eqXScaleDesc": OUT, "eqBiasDesc": OUT},
    OP % "RESAMPLE_FWD": dict(RESAMPLE, X=IN, Y=OUT, Idx=OUT),
    OP % "RESAMPLE_BWD": dict(RESAMPLE, dY=IN, X=IN, Y=IN, Idx=IN, dX=OUT),
    OP % "CONCAT": {"axis": AXIS, "inplaceIndex": ("int", -1, MAX_ARRAY), "inputDescs": INS, "outputDesc": OUT},
    OP % "RESHAPE": {"X": IN, "Y": OUT},
    OP % "RNG": {"distribution": ("enum", "CUDNN_RNG_DISTRIBUTION_"), "bernoulli_dist_probability": F,
                 "normal_dist_mean": F, "normal_dist_std_dev": F, "uniform_dist_max": F, "uniform_dist_min": F,
                 "seed": I64, "seedTensor": IN, "offset": IN, "Y": OUT},
    OP % "SIGNAL": {"mode": ("enum", "CUDNN_SIGNAL_"), "value": I64, "flagDesc": IN, "X": IN, "Y": OUT},
    OP % "PAGED_CACHE_LOAD": {"container": IN, "sequence": IN, "pageTable": IN, "Y": OUT},
    OP % "EXPAND_BAND_MATRIX": {"lower_bandwidth": I32_NONNEG, "upper_bandwidth": I32_NONNEG, "axis": AXIS,
                                "pad_value": F_INF, "kvOffset": IN, "X": IN, "Y": OUT},
    OP % "CONTRACT_BAND_MATRIX": {"lower_bandwidth": I32_NONNEG, "upper_bandwidth": I32_NONNEG, "axis": AXIS,
                                  "pad_value": F_INF, "max_token": I64, "X": IN, "Y": OUT},
    OP % "BLOCK_SCALE_QUANTIZE": {"mathPrec": DT, "block_size": I32_POS, "X": IN, "Y": OUT, "scale": OUT},
    OP % "BLOCK_SCALE_DEQUANTIZE": {"mathPrec": DT, "block_size": ("array", I32_POS, 1, MAX_RANK),
                                    "is_neg_scale": BOOL, "X": IN, "scale": IN, "Y": OUT},
    OP % "SDPA_FWD": {"Q": IN, "K": IN, "V": IN, "scale": IN, "seqLenQ": IN, "seqLenKV": IN, "blockMask": IN,
                      "pageTableK": IN, "pageTableV": IN, "O": OUT, "stats": OUT},
    OP % "MOE_GROUPED_MATMUL": {"mode": ("enum", "CUDNN_MOE_GROUPED_MATMUL_MODE_"), "mathPrec": DT, "token": IN,
                                "weight": IN, "firstTokenOffset": IN, "tokenIndex": IN, "tokenKs": IN,
                                "topK": I32_POS, "output": OUT},
}
# finalizeMode values cuDNN 9.19 knows (from its strings); later releases' are found the same way. Four make
# cuDNN look for a node of one operation and use it unchecked (SIGSEGV without one): see FINALIZE_MODE_NEEDS in
# core/json_checks.py.
FINALIZE_MODES = (
    "CONV_FORWARD CONV_BWD_DATA CONV_BWD_FILTER CONV_SCALE_ADD_BIAS_ACT CONV_ADD_BIAS_ACT SCALE_BIAS_ADD_RELU_WGRAD "
    "BN_FINALIZE_STATISTICS DGRAD_ADD_DRELU_DUAL_BN_BWD GENERIC_CONV_FUSION GENERIC_MATMUL_FUSION "
    "GENERIC_POINTWISE_FUSION UNIFIED_SDPA_FWD UNIFIED_SDPA_BWD NORM_FWD_INFER NORM_FWD_TRAIN NORM_BWD "
    "SPARSE_PATTERN_GNN RESAMPLE_FWD RESAMPLE_BWD FMHA_FLASH_ATTENTION BLAS_MATMUL SCALE_BIAS_ADD_RELU_CONV_STATS "
    "SDPA_FWD SDPA_BWD").split()


def _rule_names():
    names = {m for table in RULES.values() for m in table} | {m for table in NODE_RULES.values() for m in table}
    return names | set(NODE_RULES) | set(FINALIZE_MODES)


RULE_NAMES = _rule_names()


def main(argv=None):
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    sub = ap.add_subparsers(dest="command", required=True)
    o = sub.add_parser("observe", help="observe releases (one child process each)")
    o.add_argument("--lib", action="append", default=[], help="a libcudnn.so.9 (repeatable)")
    o.add_argument("--search", action="append", default=[], help="a folder of unpacked wheels: DIR/*/nvidia/cudnn/lib")
    o.add_argument("--default", action="store_true", help="also the cuDNN the package finds by itself")
    o.add_argument("--ld-path", action="append", default=[], help="a folder of CUDA libraries (cu12: cublasLt, NVRTC)")
    o.add_argument("--out", default=str(OBSERVATIONS))
    o.add_argument("--fuzz", type=int, default=0, metavar="N",
                   help="also feed each release N mutants unguarded (tests/helpers/json_fuzz_worker.py --no-check) and "
                        "record the crashes it still has")
    o.add_argument("--fuzz-seed", type=int, default=20261122)
    o.add_argument("--identity-only", action="store_true",
                   help="only the plan-identity probe again, into the releases' existing observations")
    o.add_argument("--crashes-only", action="store_true",
                   help="only the crash probes again, into the releases' existing observations")
    c = sub.add_parser("_child")
    c.add_argument("--out", required=True)
    c.add_argument("--samples", default="")
    c.add_argument("--cross", action="store_true")
    c.add_argument("--crashes-only", action="store_true")
    c.add_argument("--identity-only", action="store_true")
    b = sub.add_parser("build", help="observations -> cudnn_backend/core/_json_tables.py")
    b.add_argument("--check", action="store_true", help="write nothing; fail if the tables are stale")
    sub.add_parser("report", help="what changes from release to release")
    args = ap.parse_args(argv)

    def log(msg):
        print(msg, file=sys.stderr, flush=True)

    if args.command == "_child":
        if args.crashes_only:
            crashes_loaded(pathlib.Path(args.out), log)
        elif args.identity_only:
            identity_loaded(pathlib.Path(args.out), log)
        elif args.cross:
            cross_loaded(args.samples, pathlib.Path(args.out), log)
        else:
            observe_loaded(pathlib.Path(args.out), args.samples, log)
        return 0
    if args.command == "observe":
        return observe(args, log)
    if args.command == "build":
        return build(args.check, log)
    if args.command == "report":
        print(report())
        return 0
    return 2


def _libraries(args):
    libs = [pathlib.Path(p) for p in args.lib]
    for d in args.search:
        libs += sorted(pathlib.Path(d).glob("*/nvidia/cudnn/lib/libcudnn.so.9"))
    if args.default:
        libs.append(None)
    return libs


def _keep_earlier(target, fresh, fuzzed):
    """What a run observing some releases again does not observe, kept from the release's earlier observations: the
    unguarded fuzz's crashes (unless this run fuzzed), the loads of other releases' documents (replaced, release by
    release, by those this run's cross-loads make), and every crash an earlier probe saw."""
    if not target.exists():
        return
    earlier, now = json.loads(target.read_text()), json.loads(fresh.read_text())
    if "loads_from_other_releases" in earlier:
        now["loads_from_other_releases"] = earlier["loads_from_other_releases"]
    if not fuzzed and "fuzz_unguarded" in earlier:
        now["fuzz_unguarded"] = earlier["fuzz_unguarded"]
    _keep_identity(now.get("plan_identity"), earlier.get("plan_identity"))
    for probe, seen in earlier.get("crashes", {}).items():  # memory corruption does not crash every time: a crash
        if seen.get("outcome") == "crash" and now.get("crashes", {}).get(probe, {}).get("outcome") != "crash":
            now.setdefault("crashes", {})[probe] = seen  # seen once stays one
    fresh.write_text(json.dumps(now, indent=1, sort_keys=False) + "\n")


def _keep_identity(identity, before) -> None:
    """A member the package's own checks no longer let the plan-identity probe vary (``unprobed`` now) keeps what
    cuDNN did with it before (in ``identity``, from ``before``)."""
    if not isinstance(identity, dict) or not isinstance(before, dict):
        return
    for member in list(identity.get("unprobed", {})):
        for kind in ("members", "ignored"):
            if member in before.get(kind, ()):
                identity["unprobed"].pop(member)
                identity[kind].append(member)
                if member in before.get("refused_values", {}):
                    identity["refused_values"][member] = before["refused_values"][member]


def observe(args, log):
    out = pathlib.Path(args.out)
    out.mkdir(parents=True, exist_ok=True)
    env = dict(os.environ)
    env["PYTHONPATH"] = os.pathsep.join([str(ROOT)] + [p for p in env.get("PYTHONPATH", "").split(os.pathsep) if p])
    env["CUDNN_BACKEND_NODEVICE"] = "1"  # offline on every machine: the same observations with or without a GPU
    if args.ld_path:
        env["LD_LIBRARY_PATH"] = os.pathsep.join(args.ld_path + [env.get("LD_LIBRARY_PATH", "")]).rstrip(os.pathsep)
    done = []
    with tempfile.TemporaryDirectory(prefix="json_samples_") as samples:
        for lib in _libraries(args):
            child_env = dict(env)
            if lib is not None:
                child_env["CUDNN_BACKEND_LIBCUDNN"] = str(lib)
            else:
                child_env.pop("CUDNN_BACKEND_LIBCUDNN", None)
            t0 = time.monotonic()
            if args.crashes_only or args.identity_only:
                only = "--crashes-only" if args.crashes_only else "--identity-only"
                r = subprocess.run([sys.executable, __file__, "_child", only, "--out", str(out)],
                                   env=child_env, cwd=str(ROOT))
                if r.returncode != 0:
                    log(f"{lib}: the {only[2:]} child failed (exit {r.returncode})")
                    return 1
                continue
            tmp = out / ".observing.json"
            r = subprocess.run([sys.executable, __file__, "_child", "--out", str(tmp), "--samples", samples],
                               env=child_env, cwd=str(ROOT))
            if r.returncode != 0 or not tmp.exists():
                log(f"{lib}: the observing child failed (exit {r.returncode})")
                return 1
            release = json.loads(tmp.read_text())["release"]
            if args.fuzz:
                fuzz_unguarded(tmp, child_env, args.fuzz, args.fuzz_seed, log)
            target = out / f"{_text(release)}.json"
            _keep_earlier(target, tmp, args.fuzz)
            tmp.replace(target)
            done.append((lib, child_env, target))
            log(f"{_text(release)}: {time.monotonic() - t0:.0f} s")
        if len(done) > 1:
            for lib, child_env, target in done:
                r = subprocess.run([sys.executable, __file__, "_child", "--cross", "--out", str(target), "--samples",
                                    samples], env=child_env, cwd=str(ROOT))
                if r.returncode != 0:
                    log(f"{lib}: the cross-release child failed (exit {r.returncode})")
                    return 1
    return 0


# -- observations -> tables ----------------------------------------------------------------------
def load_observations(folder=OBSERVATIONS):
    """{release: observations}, oldest first."""
    out = {}
    for f in sorted(pathlib.Path(folder).glob("*.json")):
        o = json.loads(f.read_text())
        if o.get("format") != FORMAT:
            raise SystemExit(f"{f}: observation format {o.get('format')}, this tool reads {FORMAT}: observe again")
        out[o["release"]] = o
    return dict(sorted(out.items()))


def _ranges(releases, flags):
    """The releases where ``flags`` holds as ((since, until), ...); until None: up to the newest and beyond."""
    out, start, last = [], None, None
    for release, flag in zip(releases, flags):
        if flag and start is None:
            start = release
        if not flag and start is not None:
            out.append((start, last))
            start = None
        last = release
    if start is not None:
        out.append((start, None))
    return tuple(out)


def _merged_order(sequences):
    """One order of every name, each sequence's order kept where they agree (the newest sequence first)."""
    order = []
    for seq in sequences:
        for i, name in enumerate(seq):
            if name in order:
                continue
            before = [n for n in seq[:i] if n in order]
            order.insert(order.index(before[-1]) + 1 if before else 0, name)
    return order


class Derivation:
    """Tables from observations: per kind (and per operation) the members, their checkers, the releases that
    write them and those that require them; the finalize modes and knobs of each release."""

    def __init__(self, obs):
        self.obs = obs
        self.releases = list(obs)
        self.notes = []  # what the tables had to decide (for the report)

    def kind_of(self, release, kind):
        return self.obs[release]["kinds"].get(kind, {"objects": 0, "members": {}})

    def named(self, release, name):
        return name in self.obs[release]["library_names"]

    def observed(self, release, kind, member):
        return member in self.kind_of(release, kind)["members"]

    def has_op(self, release, op):
        """Seen written, or offered by the release's API and named by its strings."""
        return self.kind_of(release, NODE + op)["objects"] > 0 or (
            op in self.obs[release]["api"] and self.named(release, op))

    def written(self, release, kind, member, rule_member):
        """Whether ``release`` writes ``member`` of ``kind``: seen in its serializations; or, where none of the
        graphs that make other releases write it could be serialized on this one (an operation it lacks, a graph
        it refuses) and where no release writes it (a rule's member), named by its parser's strings."""
        if self.observed(release, kind, member):
            return True
        if kind.startswith(NODE) and not self.has_op(release, kind[len(NODE):].split(".")[0]):
            return False  # a node (or an object nested in one) of an operation the release lacks
        sources = set()
        for r in self.releases:
            sources.update(self.kind_of(r, kind)["members"].get(member, {}).get("sources", ()))
        if kind in GRAPH_KINDS or kind.startswith(NODE):  # what the graph alone makes cuDNN write
            if sources & set(self.obs[release]["serialized"]):
                return False  # the same graph, serialized by this release without it: renamed or gone
        return (bool(sources) or rule_member) and self.named(release, member)

    def required(self, release, kind, member):
        """Whether ``release`` refuses (or crashes on) an object of ``kind`` without ``member`` and writes it in
        every object of that kind (a member it omits somewhere is optional, whatever one probe said)."""
        probe = self.obs[release]["required"].get(kind, {}).get(member)
        if probe is None or not probe["outcome"].startswith(("refused", "crash")):
            return False
        k = self.kind_of(release, kind)
        return k["members"].get(member, {}).get("count", 0) == k["objects"]

    def records(self, kind, member):
        return [self.kind_of(r, kind)["members"][member] for r in self.releases if self.observed(r, kind, member)]

    def role(self, op, member):
        votes = collections.Counter()
        for r in self.releases:
            votes.update(self.obs[r]["roles"].get(NODE + op, {}).get(member, {}))
        if len(votes) > 1:
            self.notes.append(f"{_short(op)}.{member}: tensor roles disagree {dict(votes)}; taking the commonest")
        return votes.most_common(1)[0][0] if votes else None

    def derive(self, kind, member):
        """A checker for a member no rule names, from the JSON types the releases write."""
        recs = self.records(kind, member)
        types = set().union(*(r["types"] for r in recs))
        child = CHILD_KINDS.get((kind, member)) or f"{kind}.{member}"
        if kind.startswith(NODE) and types <= {"string", "array"}:
            role = self.role(kind[len(NODE):], member)
            if role:
                return ("ref", role)
        if types == {"int"}:
            return ("int", INT64_MIN if min(r["min"] for r in recs) < 0 else 0, INT64_MAX)
        if types and types <= {"float", "infinity"}:
            return F_INF  # cuDNN writes +-Infinity itself where a value may be infinite
        if types == {"bool"}:
            return BOOL
        if types == {"string"}:
            values = [v for r in recs for v in r.get("values", [])]
            if values and all(v.startswith("CUDNN_") for v in values):
                prefix = os.path.commonprefix(values)
                return ("enum", prefix[:prefix.rfind("_") + 1])
            if values and all(_NAME.match(v) for v in values):
                return ("name",)  # a tensor name of an unknown role: checked as a name, no order rule
            return ("text", 4096)
        if types == {"object"}:
            return ("object", child)
        if types == {"array"}:
            items = set().union(*(r.get("item_types", {}) for r in recs))
            if items == {"int"}:
                lo = min(r["item_min"] for r in recs if "item_min" in r)
                return ("array", ("int", INT64_MIN if lo < 0 else 0, INT64_MAX), 0, MAX_ARRAY)
            if items and items <= {"float", "infinity"}:
                return ("array", F_INF, 0, MAX_ARRAY)
            if items == {"object"}:
                return ("array", ("object", child), 0, MAX_ARRAY)
            if items == {"string"}:
                return ("array", ("text", 4096), 0, MAX_ARRAY)
        self.notes.append(f"{kind}.{member}: JSON types {sorted(types)}: left unchecked")
        return ("any",)

    def checked(self, kind, member, spec):
        """A rule's spec, widened where a release writes more than it allows (what a release writes, its
        table accepts): new string values of a ("oneof", ...), integers beyond an ("int", ...) range."""
        recs = self.records(kind, member)
        if spec[0] == "oneof":
            extra = sorted({v for r in recs for v in r.get("values", [])} - set(spec[1]))
            if extra:
                self.notes.append(f"{kind}.{member}: values {extra} added to the rule's")
                return ("oneof", tuple(spec[1]) + tuple(extra))
        if spec[0] == "int" and recs and all("min" in r for r in recs):
            lo, hi = min(r["min"] for r in recs), max(r["max"] for r in recs)
            if lo < spec[1] or hi > spec[2]:
                self.notes.append(f"{kind}.{member}: written values {lo}..{hi} widen the rule's {spec[1]}..{spec[2]}")
                return ("int", min(lo, spec[1]), max(hi, spec[2]))
        if spec[0] == "enum":
            bad = sorted({v for r in recs for v in r.get("values", []) if not v.startswith(spec[1])})
            if bad:
                self.notes.append(f"{kind}.{member}: values {bad} outside the rule's prefix {spec[1]}")
        return spec

    def table(self, kind, rules):
        """{member: (spec, written by, required by)} of one kind, in the order cuDNN writes the members."""
        sequences = [list(self.kind_of(r, kind)["members"]) for r in reversed(self.releases)]
        members = _merged_order(sequences + [list(rules)])
        out = {}
        for m in members:
            if kind.startswith(NODE) and "." not in kind and m == "operation":
                continue  # the node's operation: the graph checks it
            written = [self.written(r, kind, m, m in rules) for r in self.releases]
            if not any(written):
                self.notes.append(f"{kind}.{m}: in the rules, written by no release: left out")
                continue
            spec = self.checked(kind, m, _tuple(rules[m])) if m in rules else self.derive(kind, m)
            required = [w and self.required(r, kind, m) for r, w in zip(self.releases, written)]
            out[m] = (spec, _ranges(self.releases, written), _ranges(self.releases, required))
        return out

    def kinds(self):
        """The kinds of objects (nodes apart) and their tables."""
        names = set(RULES) | {k for r in self.releases for k in self.obs[r]["kinds"]}
        names = sorted(k for k in names if not _is_node(k) and k != "knobs")
        return {k: self.table(k, RULES.get(k, {})) for k in names}

    def nodes(self):
        ops = set(NODE_RULES) | {k[len(NODE):] for r in self.releases for k in self.obs[r]["kinds"] if _is_node(k)}
        out = {}
        for op in sorted(ops):
            if not any(self.has_op(r, op) for r in self.releases):
                self.notes.append(f"{_short(op)}: in the rules, known to no release: left out")
                continue
            table = self.table(NODE + op, NODE_RULES.get(op, {}))
            for m, (spec, _, _) in table.items():
                role = self.role(op, m)
                if spec[0] == "ref" and role and role != spec[1]:
                    self.notes.append(f"{_short(op)}.{m}: the rule says {spec[1]}, cuDNN's descriptors {role}")
            out[op] = table
        return out

    def loads_other(self):
        """{kind: {reader: (writers,)}}: the other releases' plans and kernel caches each release loads."""
        out = {"plan": {}, "kernel cache": {}}
        for r in self.releases:
            for key, v in self.obs[r].get("loads_from_other_releases", {}).items():
                what, writer = key.rsplit(" by ", 1)
                kind = "plan" if what.startswith("plan") else what
                if kind in out and v["outcome"] == "ok":
                    out[kind].setdefault(r, set()).add(_release(writer))
        return {k: {r: tuple(sorted(w)) for r, w in v.items()} for k, v in out.items()}

    def crashes(self):
        """{probe: releases it crashed}, and {guard: releases that need it} for the guards that apply only where a
        release still crashes (GUARD_PROBES)."""
        crashes = {}
        for r in self.releases:
            for name, v in self.obs[r]["crashes"].items():
                crashes.setdefault(name, []).append(v["outcome"] == "crash")
        crashes = {k: _ranges(self.releases, v) for k, v in crashes.items() if len(v) == len(self.releases)}
        guards = {guard: _ranges(self.releases, [any(_in_ranges(r, crashes.get(p, ())) for p in probes)
                                                 for r in self.releases])
                  for guard, probes in GUARD_PROBES.items()}
        return crashes, guards

    def values(self):
        """{"finalizeMode": {mode: releases}, "knob": {name: releases}}: the names each release knows."""
        modes = set(FINALIZE_MODES)
        knobs = set()
        for r in self.releases:
            graph = self.kind_of(r, "operationGraph")["members"].get("finalizeMode", {})
            modes.update(graph.get("values", []))
            knobs.update(self.kind_of(r, "knobs")["members"])
            knobs.update(n for n in self.obs[r]["library_names"] if n.startswith("CUDNN_KNOB_TYPE_"))

        def seen(r, name, observed):
            return name in observed or (self.named(r, name) and (not name.startswith("CUDNN_KNOB_TYPE_")
                                                                 or name in self.obs[r]["api"]))
        out = {"finalizeMode": {}, "knob": {}}
        for m in sorted(modes):
            flags = [seen(r, m, self.kind_of(r, "operationGraph")["members"].get("finalizeMode", {}).get("values", []))
                     for r in self.releases]
            if any(flags):
                out["finalizeMode"][m] = _ranges(self.releases, flags)
        for k in sorted(knobs):
            flags = [seen(r, k, self.kind_of(r, "knobs")["members"]) for r in self.releases]
            if any(flags):
                out["knob"][k] = _ranges(self.releases, flags)
        return out


def _is_node(kind):
    """A node kind ("node <operation>"), not an object nested in a node ("node <operation>.<member>")."""
    return kind.startswith(NODE) and "." not in kind


def _tuple(spec):
    return tuple(_tuple(x) if isinstance(x, (list, tuple)) and not (spec and spec[0] == "oneof" and x is spec[1])
                 else x for x in spec)


def _short(op):
    return op.replace("CUDNN_BACKEND_OPERATION_", "").replace("_DESCRIPTOR", "").lower()


def _hash(*parts):
    h = hashlib.sha256()
    for p in parts:
        h.update(p if isinstance(p, bytes) else p.encode())
    return h.hexdigest()[:12]


def _literal(name, value, comment=None, indent=""):
    """``name = value`` as Python source, one member per line (deterministic, 120 columns)."""
    import pprint

    lines = [f"# {comment}"] if comment else []
    if isinstance(value, dict) and value and all(isinstance(v, dict) for v in value.values()):
        lines.append(f"{name} = {{")
        for k, table in value.items():
            if not table:
                lines.append(f"    {k!r}: {{}},")
                continue
            lines.append(f"    {k!r}: {{")
            for m, entry in table.items():
                text = pprint.pformat(entry, width=110 - len(repr(m)), compact=True)
                text = text.replace("\n", "\n" + " " * (10 + len(repr(m))))
                lines.append(f"        {m!r}: {text},")
            lines.append("    },")
        lines.append("}")
    else:
        lines.append(f"{name} = {pprint.pformat(value, width=110, compact=True)}")
    return "\n".join(lines)


def render(obs):
    d = Derivation(obs)
    kinds, nodes, values, loads = d.kinds(), d.nodes(), d.values(), d.loads_other()
    crashes, guards = d.crashes()
    tool = _hash(pathlib.Path(__file__).read_bytes())
    data = _hash(*(json.dumps(o, sort_keys=True) for o in obs.values()))
    releases = tuple(obs)
    text = "\n\n".join([
        f'''"""The JSON checks' tables, one per cuDNN release (read by cudnn_backend/core/json_checks.py).

Generated by tools/derive_json_tables.py (tool {tool}, observations {data}) from what cuDNN
{", ".join(_text(r) for r in releases)} wrote and required (tools/json_observations/*.json). Do not edit by hand:
change the rules in the tool (or observe again) and run ``python tools/derive_json_tables.py build``.

Each entry: member -> (checker spec, written by, required by); ranges ((since, until), ...) of releases, until None
meaning every later release. Checker specs: see tools/derive_json_tables.py (RULES).
"""''',
        _literal("RELEASES", releases, "the releases with a table of their own, oldest first"),
        _literal("KINDS", kinds, "object kind -> its members"),
        _literal("NODES", nodes, "operation -> its node's members (tensor members: (\"ref\", role))"),
        _literal("VALUES", values, "finalize modes and knobs -> the releases that know them"),
        _literal("LOADS_OTHER", loads, "plans and kernel caches of other releases each release loads (reader -> "
                                       "writers; every other pair refused)"),
        _literal("GUARDS", guards, "checks applied only where a release crashes without them -> those releases"),
        _literal("CRASHES", crashes, "the crash probes (unguarded) -> the releases they crashed"),
        _literal("PLAN_IDENTITY", {r: tuple(o["plan_identity"]["members"]) for r, o in obs.items()
                                   if "plan_identity" in o},
                 "the deviceprop members each release compares when it loads a plan (a plan built against another "
                 "value is refused: CUDNN_STATUS_NOT_SUPPORTED_ARCH_MISMATCH); releases not probed are absent"),
        _literal("PLAN_IDENTITY_MINIMUM", {r: tuple(m for m, v in o["plan_identity"]["refused_values"].items()
                                                    if v["loaded"] and all(x > v["captured"] for x in v["loaded"]))
                                           for r, o in obs.items() if "plan_identity" in o},
                 "of those, the members a greater value of which still loads the plan (a newer driver's driverVer)"),
    ]) + "\n"
    return text, d.notes


def fuzz_unguarded(path, env, mutants, seed, log):
    """The JSON fuzz with the package's guards off, on one release: which crash classes it still has."""
    with tempfile.TemporaryDirectory(prefix="json_fuzz_") as out:
        cmd = [sys.executable, "-m", "tests.helpers.json_fuzz_worker", "--no-check", "--mutants", str(mutants),
               "--seed", str(seed), "--out", out, "--jobs", "2", "--use-every", "0"]
        r = subprocess.run(cmd, env=env, cwd=str(ROOT), capture_output=True, text=True)
    summary = next((json.loads(line.split(" ", 1)[1]) for line in reversed(r.stdout.splitlines())
                    if line.startswith("JSON-FUZZ-SUMMARY ")), None)
    o = json.loads(path.read_text())
    if summary is None:
        o["fuzz_unguarded"] = {"error": f"exit {r.returncode}: {r.stderr[-500:]}"}
    else:
        o["fuzz_unguarded"] = {
            "seed": seed, "mutants": summary["mutants"], "seconds": summary["seconds"],
            "per_kind": summary["per_kind"],
            "crashes": [{k: c[k] for k in ("signal", "when", "kind", "notes")} for c in summary["crashes"]]}
    path.write_text(json.dumps(o, indent=1) + "\n")
    log(f"  unguarded fuzz: {len(o['fuzz_unguarded'].get('crashes', []))} crash(es) in {mutants} mutants")


def build(check, log):
    obs = load_observations()
    if not obs:
        log(f"no observations in {OBSERVATIONS}: run observe first")
        return 1
    text, notes = render(obs)
    old = TABLES_PY.read_text() if TABLES_PY.exists() else None
    if old == text:
        log(f"{TABLES_PY.relative_to(ROOT)}: up to date ({len(obs)} releases)")
        return 0
    if check:
        log(f"{TABLES_PY.relative_to(ROOT)} is stale: run python tools/derive_json_tables.py build")
        return 1
    TABLES_PY.write_text(text)
    log(f"{TABLES_PY.relative_to(ROOT)}: rewritten ({len(obs)} releases, {len(notes)} notes; see report)")
    return 0


def report():
    """What changes from release to release: members, requirements, crashes, cross-release loads, timings."""
    obs = load_observations()
    d = Derivation(obs)
    kinds, nodes, values = d.kinds(), d.nodes(), d.values()
    out = []
    releases = list(obs)
    for name, table in list(kinds.items()) + [(NODE + k, v) for k, v in nodes.items()]:
        for m, (_, written, required) in table.items():
            w = [r for r in releases if _in_ranges(r, written)]
            q = [r for r in releases if _in_ranges(r, required)]
            if len(w) != len(releases) or (q and len(q) != len(w)):
                out.append(f"{name}.{m}: written by {_span(w, releases)}; required by {_span(q, releases) or 'none'}")
    for what, table in values.items():
        for k, ranges in table.items():
            w = [r for r in releases if _in_ranges(r, ranges)]
            if len(w) != len(releases):
                out.append(f"{what} {k}: {_span(w, releases)}")
    out.append("")
    for r, o in obs.items():
        crashes = {k: v["outcome"] for k, v in o["crashes"].items()}
        out.append(f"cuDNN {_text(r)} ({o['seconds']['total']} s): crash probes: "
                   + "; ".join(f"{k}: {v}" for k, v in crashes.items()))
        loads = o.get("loads_from_other_releases", {})
        if loads:
            out.append("  loads: " + "; ".join(f"{k}: {v['outcome']}" for k, v in loads.items()))
        fuzz = o.get("fuzz_unguarded")
        if fuzz and "crashes" in fuzz:
            classes = collections.Counter(_crash_class(c["notes"] or "") for c in fuzz["crashes"])
            out.append(f"  unguarded fuzz: {len(fuzz['crashes'])} crashes in {fuzz['mutants']} mutants (seed "
                       f"{fuzz['seed']}): " + "; ".join(f"{k}: {v}" for k, v in classes.most_common()))
        if o["library_names_unseen"]:
            out.append("  parser names never seen written: " + ", ".join(o["library_names_unseen"]))
        if o["not_serialized"]:
            out.append("  not serialized: " + ", ".join(sorted(o["not_serialized"])))
    out.append("")
    out += d.notes
    return "\n".join(out)


_CRASH_CLASSES = (  # (class, what in a mutant's notes points at it), the first that matches names the crash
    ("deviceName of 256+ bytes", "deviceName"), ("kernel cache key type", "key.type"),
    ("finalizeMode without its operation", "graph mode"), ("nesting", "deep "), ("tensor names (std::stoll)", "name"),
    ("tensors or nodes not arrays", ".tensors;"), ("node order", "graph nodes"), ("dims and strides", "dim"),
    ("kernel parameters", "kernelParams"), ("tensor references", "graph ref"), ("retyped members", "retype"),
)


def _crash_class(notes):
    for name, marker in _CRASH_CLASSES:
        if marker in notes:
            return name
    return "other: " + notes[:60]


def _in_ranges(release, ranges):
    return any(a <= release and (b is None or release <= b) for a, b in ranges)


def _span(subset, releases):
    if not subset:
        return ""
    if subset == releases[releases.index(subset[0]):releases.index(subset[-1]) + 1]:
        return _text(subset[0]) + ("" if len(subset) == 1 else f" .. {_text(subset[-1])}")
    return ", ".join(_text(r) for r in subset)


if __name__ == "__main__":
    sys.exit(main())
