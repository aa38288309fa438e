"""What a variant pack needs to know before cuDNN sees it: the plan's tensors, buffers, scalars, workspace.

Every check of ``VariantPack`` (``_execute.pyx``) lives here, in Python: which UIDs the plan's graph
reads and writes (``tensor_specs``: from the graph, else the plan's JSON; ``written_uids``: those cuDNN writes),
what each buffer object is (``resolve_buffer``: ints, cuda.core ``Buffer``, ``DeviceBuffer``, and arrays of any
library through the one adapter ``typed.arrays.view``, whose memory must lie from the pointer up; ``check_array``
refuses an array that does not describe its tensor, ``check_writable`` a read-only one cuDNN would write, tensor or
workspace), by-value scalars in the tensor's data type (``scalar_bytes``) and the workspace. The compiled pack
keeps only C arrays; the per-call paths never come back here.
"""
from __future__ import annotations

import collections
import json
import numbers
import operator
import weakref
from dataclasses import dataclass

from cudnn_backend._bindings.enums import AttributeName as A
from cudnn_backend._bindings.enums import AttributeType as AT
from cudnn_backend._bindings.enums import DataType, DescriptorType
from cudnn_backend.core import device as _device
from cudnn_backend.core._coerce import as_int, user_sequence
from cudnn_backend.core._descriptor import Descriptor
from cudnn_backend.core._handle import Handle
from cudnn_backend.core._status import check_available
from cudnn_backend.core.families._build import real_number
from cudnn_backend.core.json_checks import check_plan_json, graph_parts, graph_tensors, node_outputs
from cudnn_backend.core.names import default_tensor_name
from cudnn_backend.core.op_checks import FINALIZE_CHECKS
from cudnn_backend.core.versions import OVERRIDE_SHAPES_NEEDS
from cudnn_backend.errors import CudaError, GraphError, NoDeviceError
from cudnn_backend.runtime import memory
from cudnn_backend.typed import KernelCache, arrays
from cudnn_backend.typed.arrays import DATA_TYPE_BITS, MAX_ELEMENTS, span_elements, strides_like
from cudnn_backend.typed.introspection import (io_tensor_slots, io_uids, operations_of, part_operations, signature_of,
                                                tensor_slots)
from cudnn_backend.typed.tensors import TensorSignature, TensorSpec

__all__ = [
    "TensorSpec", "tensor_spec", "tensor_specs", "graph_tensor_specs", "plan_json_tensor_specs", "plan_descriptor",
    "plan_workspace_size", "plan_handle", "plan_operation_graph", "Resolved", "resolve_buffer", "scalar_bytes",
    "scalar_value", "uid_of", "resolve_slot", "check_array", "consumer_stream", "handle_stream", "prepare_pack",
    "resolve_workspace", "SCALAR_CAPACITY", "MAX_BYTES", "slot_bytes", "plan_override_enabled", "prepare_overrides",
    "MAX_OVERRIDE_RANK", "plan_document", "written_uids", "check_writable", "check_graph_is_plans", "check_plans_graph",
]

D = DataType
T = DescriptorType

SCALAR_CAPACITY = 16  # bytes of host storage per by-value slot
MAX_BYTES = (1 << 63) - 1  # the most bytes a buffer holds: a pack keeps sizes as int64, and no memory is larger


# ---------------------------------------------------------------------------------------------
# what the plan's graph says about each tensor
# ---------------------------------------------------------------------------------------------
def tensor_spec(tensor) -> TensorSpec:
    """The TensorSpec of a tensor descriptor (typed ``Tensor`` or a generic ``Descriptor``)."""
    return TensorSpec.from_descriptor(tensor)


def graph_tensor_specs(operation_graph) -> dict | None:
    """{uid: TensorSpec} of every tensor the operations of an operation graph (or a list of
    operations) read or write; None when the graph's operations are not known on the Python side."""
    specs = {}
    for op in operations_of(operation_graph):
        for _, t, _ in io_tensor_slots(op):  # (an SDPA's softmax statistics and sink, ragged offsets included)
            if not t.closed:
                spec = tensor_spec(t)
                known = specs.setdefault(spec.uid, spec)
                if known is not spec and not same_tensor(known, spec):  # (cuDNN's graph finalize does not see it)
                    raise GraphError(f"the graph holds two tensors of UID {spec.uid}: {known.describe()} and "
                                     f"{spec.describe()}; a variant pack binds one buffer a UID, so give each "
                                     "tensor its own UID")
    return specs or None


def _specs_from_tensors(tensors) -> dict:
    if isinstance(tensors, dict):
        tensors = tensors.values()
    if isinstance(tensors, (str, bytes)) or not hasattr(tensors, "__iter__"):
        raise TypeError("tensors: expected the graph's tensor descriptors or TensorSpecs (a sequence, or a dict of "
                        f"them), not {type(tensors).__name__}")
    specs = {}
    for i, t in enumerate(tensors):
        if isinstance(t, TensorSpec):
            spec = t
        elif isinstance(t, Descriptor) and t.descriptor_type == T.CUDNN_BACKEND_TENSOR_DESCRIPTOR:
            spec = tensor_spec(t)
        else:
            raise TypeError(f"tensors[{i}]: expected a tensor descriptor or a TensorSpec, not {type(t).__name__}")
        specs[spec.uid] = spec
    return specs


# ---------------------------------------------------------------------------------------------
# plans, whatever wraps them
# ---------------------------------------------------------------------------------------------
def _is_plan_descriptor(d) -> bool:
    return isinstance(d, Descriptor) and d.descriptor_type == T.CUDNN_BACKEND_EXECUTION_PLAN_DESCRIPTOR


def plan_descriptor(plan) -> Descriptor:
    """The CUDNN_BACKEND_EXECUTION_PLAN_DESCRIPTOR of a plan: the descriptor itself, or the one a Plan holds."""
    if _is_plan_descriptor(plan):
        return plan
    d = getattr(plan, "descriptor", None)
    if _is_plan_descriptor(d):
        return d
    raise TypeError(f"plan: a {type(plan).__name__} is no execution plan: pass a Plan (build_plan, plan_from_json) or "
                    "an ExecutionPlan descriptor")


def plan_workspace_size(plan) -> int:
    """The workspace (bytes) the plan needs."""
    ws = getattr(plan, "workspace_size", None)
    if isinstance(ws, int):
        return ws
    values = plan_descriptor(plan).get(A.CUDNN_ATTR_EXECUTION_PLAN_WORKSPACE_SIZE, AT.CUDNN_TYPE_INT64)
    return int(values[0]) if values else 0


def plan_handle(plan):
    """The Handle the plan was built with, if known."""
    h = getattr(plan, "handle", None)
    if isinstance(h, Handle):
        return h
    h = plan_descriptor(plan).values.get(A.CUDNN_ATTR_EXECUTION_PLAN_HANDLE)
    return h if isinstance(h, Handle) else None


def plan_supports_native_cuda_graph(plan) -> bool | None:
    """Whether the plan's engine has CUDNN_BEHAVIOR_NOTE_SUPPORTS_CUDA_GRAPH_NATIVE_API (None: unknown)."""
    answer = getattr(plan, "supports_native_cuda_graph", None)
    if isinstance(answer, bool):
        return answer
    try:
        cfg = plan_descriptor(plan).get(A.CUDNN_ATTR_EXECUTION_PLAN_ENGINE_CONFIG, AT.CUDNN_TYPE_BACKEND_DESCRIPTOR)
        engine = cfg[0].get(A.CUDNN_ATTR_ENGINECFG_ENGINE, AT.CUDNN_TYPE_BACKEND_DESCRIPTOR)[0]
        notes = engine.get(A.CUDNN_ATTR_ENGINE_BEHAVIOR_NOTE, AT.CUDNN_TYPE_BEHAVIOR_NOTE)
    except Exception:  # noqa: BLE001 - e.g. a plan loaded from JSON whose config cuDNN cannot return
        return None
    return any(getattr(n, "name", "") == "CUDNN_BEHAVIOR_NOTE_SUPPORTS_CUDA_GRAPH_NATIVE_API" for n in notes)


def plan_operation_graph(plan):
    """``plan.operation_graph`` when the plan knows its graph (Plans from build_plan), else None."""
    return getattr(plan, "operation_graph", None)


_documents = weakref.WeakKeyDictionary()  # plan descriptor -> its parsed JSON (a finalized plan does not change)
_NO_DOCUMENT = {}


def plan_document(plan) -> dict | None:
    """The plan's JSON representation, checked (``core.json_checks``) and parsed once per plan descriptor; None
    when the engine gives none or the checks refuse it. Every reader of a plan's JSON reads this."""
    desc = plan_descriptor(plan)
    try:
        doc = _documents[desc]
    except (KeyError, TypeError):
        try:
            text = desc.get(A.CUDNN_ATTR_EXECUTION_PLAN_JSON_REPRESENTATION, AT.CUDNN_TYPE_CHAR)
            doc = json.loads(check_plan_json(text))
            if not isinstance(doc, dict):
                doc = _NO_DOCUMENT
        except Exception:  # noqa: BLE001 - no JSON for this engine, or one the checks refuse: unknown
            doc = _NO_DOCUMENT
        try:
            _documents[desc] = doc
        except TypeError:
            pass
    return doc if doc is not _NO_DOCUMENT else None


def plan_json_tensor_specs(plan) -> dict | None:
    """{uid: TensorSpec} from the tensors listed in the plan's JSON representation (those its nodes keep for their
    parts too: a score modifier's bias is bound like any input), or None."""
    doc = plan_document(plan)
    try:
        specs = {s.uid: s for s in (TensorSpec.from_json(t) for t in graph_tensors(doc["operationGraph"]))}
    except Exception:  # noqa: BLE001 - no JSON, or a layout we do not know: graph unknown
        return None
    return specs or None


def tensor_specs(plan=None, operation_graph=None, tensors=None) -> dict | None:
    """{uid: TensorSpec} of the tensors a plan's graph reads and writes, virtual ones included.

    From ``tensors`` (Tensor descriptors or TensorSpecs) or ``operation_graph`` when given, else
    ``plan.operation_graph``, else the plan's JSON; None when none of them tells.
    """
    if tensors is not None:
        specs = _specs_from_tensors(tensors)
        if plan is not None:
            _check_given_tensors(plan, specs)
        return specs
    if operation_graph is not None:
        if not (isinstance(operation_graph, Descriptor) and
                operation_graph.descriptor_type == T.CUDNN_BACKEND_OPERATIONGRAPH_DESCRIPTOR):
            raise TypeError("operation_graph: expected a finalized CUDNN_BACKEND_OPERATIONGRAPH_DESCRIPTOR "
                            f"(Graph.build() gives one), not {type(operation_graph).__name__}")
        specs = graph_tensor_specs(operation_graph)
        if specs is None:
            raise ValueError("the operation graph given has no operations known on the Python side; pass tensors=")
        if plan is not None and operation_graph is not plan_operation_graph(plan):
            check_plans_graph(plan, operation_graph)
        return specs
    if plan is None:
        return None
    og = plan_operation_graph(plan)
    if og is not None:
        specs = graph_tensor_specs(og)
        if specs is not None:
            return specs
    return plan_json_tensor_specs(plan)


def _wiring(op) -> tuple:
    """(operation type name, the UIDs of its tensors, sorted) of an operation of a graph."""
    return (DescriptorType(int(op.descriptor_type)).name,
            tuple(sorted({signature_of(t).uid for _, t, _ in tensor_slots(op)})))


def _json_wiring(node) -> tuple:
    """``_wiring`` of a plan JSON node: its operation and every member naming a tensor (a UID in a string, alone
    or in a list)."""
    uids = set()
    for key, value in node.items():
        for v in (value if isinstance(value, list) else [value]):
            if key != "operation" and isinstance(v, str) and v.removeprefix("-").isdigit():  # (UIDs may be negative)
                uids.add(int(v))
    return str(node.get("operation", "?")), tuple(sorted(uids))


def _wiring_text(wirings) -> str:
    return "; ".join(f"{op.removeprefix('CUDNN_BACKEND_OPERATION_').removesuffix('_DESCRIPTOR')} over UIDs "
                     f"{', '.join(map(str, uids))}" for op, uids in wirings)


def check_graph_is_plans(operation_graph, doc, what="operation_graph") -> None:
    """``operation_graph`` must be the plan's own (``doc``: the plan JSON's ``operationGraph``): the tensors its
    operations read and write are those the plan's JSON lists (UIDs, dims, strides, data types, virtual, by value),
    wired alike, else variant packs would be checked against another graph (the operations' settings:
    ``check_settings_are_plans``). A graph whose operations are unknown on the Python side is taken as it is."""
    mine = graph_tensor_specs(operation_graph)
    if mine is None:
        return
    theirs = {s.uid: s for s in (TensorSpec.from_json(t) for t in graph_tensors(doc))}
    ours = collections.Counter(_wiring(op) for op in operations_of(operation_graph))
    plan_nodes = collections.Counter(_json_wiring(n) for n in doc.get("nodes", ()))
    # the tensors the operations and the plan's nodes name at their top level must be the same; those of the
    # operations' parts (an SDPA's softmax or score modifier) the plan may list beside them, or keep in its node
    top, named = ({uid for _, uids in wirings for uid in uids} for wirings in (ours, plan_nodes))
    if top - set(theirs) or {u for u in set(theirs) - set(mine) if u in named}:
        raise ValueError(f"{what}: not this plan's graph: its tensors have UIDs {sorted(mine)}, the plan's "
                         f"{sorted(theirs)}")
    check_specs_are_plans(mine, theirs, what)
    # the same tensors wired otherwise (other operations, or the same ones between other tensors)
    if ours != plan_nodes:
        extra, lacking = sorted(ours - plan_nodes), sorted(plan_nodes - ours)
        raise ValueError(f"{what}: not this plan's graph: its operations differ; the graph has "
                         f"{_wiring_text(extra) or 'no other'}, the plan {_wiring_text(lacking) or 'no other'}")


def check_settings_are_plans(operation_graph, doc, what="operation_graph") -> None:
    """The operations of ``operation_graph`` set as the plan's (a pointwise mode, an alpha, a padding), as cuDNN
    writes both: ``doc``, the plan's ``operationGraph``, must be the loaded cuDNN's (another release may write
    other members), and the tensors and wiring already found alike (``check_graph_is_plans``)."""
    own = graph_document(operation_graph)
    if own is not None:
        difference = _settings_difference(own, doc)
        if difference:
            raise ValueError(f"{what}: not this plan's graph: {difference}")


_graph_documents = weakref.WeakKeyDictionary()  # finalized operation graph -> its graph_document


def graph_document(operation_graph) -> dict | None:
    """The ``operationGraph`` member cuDNN writes for ``operation_graph`` in a plan's JSON, written without an
    engine or a plan: through an empty kernel cache of the graph (~0.1 ms). None where the loaded cuDNN cannot
    (kernel caches' JSON came with 9.10) or will not."""
    try:
        return _graph_documents[operation_graph]
    except (KeyError, TypeError):
        pass
    try:
        cache = KernelCache(operation_graph=operation_graph)
        cache.finalize()
        try:
            text = cache.get(A.CUDNN_ATTR_KERNEL_CACHE_JSON_REPRESENTATION, AT.CUDNN_TYPE_CHAR)
        finally:
            cache.close()
        document = json.loads(text).get("operationGraph")
    except Exception:  # noqa: BLE001 - a release or a graph without one: the settings go unchecked
        document = None
    if not isinstance(document, dict):
        document = None
    try:
        _graph_documents[operation_graph] = document
    except TypeError:
        pass
    return document


def _canonical(value):
    """``value`` with its lists of objects (nodes, tensors) in a fixed order: graphs built in another order are the
    same graph."""
    if isinstance(value, dict):
        return {k: _canonical(v) for k, v in value.items()}
    if isinstance(value, list):
        items = [_canonical(v) for v in value]
        if items and all(isinstance(v, dict) for v in items):
            items.sort(key=lambda v: json.dumps(v, sort_keys=True))
        return items
    return value


def _settings_difference(own, theirs) -> str:
    """What differs between two ``operationGraph`` documents whose tensors and wiring are the same: the first member
    of a node, a tensor or the graph, named; "" when none."""
    own, theirs = _canonical(own), _canonical(theirs)
    if own == theirs:
        return ""
    for key in sorted(set(own) | set(theirs)):
        if key not in ("nodes", "tensors") and own.get(key) != theirs.get(key):
            return f"its {key} is {own.get(key)!r}, the plan's {theirs.get(key)!r}"
    by_uid = {t.get("uid", t.get("name")): t for t in theirs.get("tensors", ())}
    for tensor in own.get("tensors", ()):
        other = by_uid.get(tensor.get("uid", tensor.get("name")), {})
        for key in sorted(set(tensor) | set(other)):
            if tensor.get(key) != other.get(key):
                return (f"its tensor {tensor.get('uid', tensor.get('name'))}'s {key} is {tensor.get(key)!r}, the "
                        f"plan's {other.get(key)!r}")
    unmatched = list(theirs.get("nodes", ()))
    for node in own.get("nodes", ()):
        if node in unmatched:
            unmatched.remove(node)
            continue
        wiring = _json_wiring(node)
        other = next((n for n in unmatched if _json_wiring(n) == wiring), {})
        for key in sorted(set(node) | set(other)):
            if node.get(key) != other.get(key):
                return (f"its {_wiring_text([wiring])}: {key} is {node.get(key)!r}, the plan's "
                        f"{other.get(key)!r}")
    return "its operations' settings differ"


def same_tensor(a, b) -> bool:
    """Two descriptions (TensorSpecs or TensorSignatures) of one tensor agree: ``TensorSignature.same_tensor``, and
    the by-value flag too, since a pack binds a by-value tensor by its value, not a pointer."""
    sig_a = a if isinstance(a, TensorSignature) else a.signature
    sig_b = b if isinstance(b, TensorSignature) else b.signature
    return sig_a.same_tensor(sig_b) and a.by_value == b.by_value


def check_specs_are_plans(mine, theirs, what) -> None:
    """Each tensor of ``mine`` ({uid: TensorSpec}) the plan (``theirs``) lists too is described alike."""
    for uid in sorted(set(mine) & set(theirs)):
        if not same_tensor(mine[uid], theirs[uid]):
            raise ValueError(f"{what}: not this plan's graph: its tensor {mine[uid].describe()} is "
                             f"{theirs[uid].describe()} in the plan")


_checked_graphs = weakref.WeakKeyDictionary()  # plan descriptor -> {id of a graph found to be its own: the graph}


def check_plans_graph(plan, operation_graph, what="operation_graph", *, wiring=True) -> None:
    """``check_graph_is_plans`` (unless ``wiring`` is False: checked already) and ``check_settings_are_plans`` of a
    graph given with a plan whose JSON is at hand, once per (plan, graph)."""
    desc = plan_descriptor(plan)
    seen = _checked_graphs.get(desc) if desc is not None else None
    if seen is not None and seen.get(id(operation_graph)) is operation_graph:
        return
    doc = plan_document(plan)
    if doc is None or not isinstance(doc.get("operationGraph"), dict):
        return
    if wiring:
        check_graph_is_plans(operation_graph, doc["operationGraph"], what)
    check_settings_are_plans(operation_graph, doc["operationGraph"], what)
    try:
        _checked_graphs.setdefault(desc, {})[id(operation_graph)] = operation_graph
    except TypeError:
        pass


def _check_given_tensors(plan, specs) -> None:
    """The tensors given for a plan whose JSON lists its own: the same UIDs (virtual ones aside), alike."""
    theirs = plan_json_tensor_specs(plan)
    if theirs is None:
        return
    missing = sorted(u for u, s in theirs.items() if not s.virtual and u not in specs)
    extra = sorted(set(specs) - set(theirs))
    if missing or extra:
        raise ValueError(f"tensors: not this plan's graph: they have UIDs {sorted(specs)}, the plan's "
                         f"{sorted(theirs)}")
    check_specs_are_plans(specs, theirs, "tensors")


def _json_written_uids(plan) -> frozenset | None:
    """UIDs of the real tensors the nodes of the plan's JSON write (``core.json_checks.node_outputs``; virtual ones
    by ``plan_json_tensor_specs``); None without a JSON graph. The outputs of an operation no table knows are not
    known, so not among them."""
    specs = plan_json_tensor_specs(plan)
    if specs is None:
        return None
    try:
        written = (int(name) for part in graph_parts(plan_document(plan)["operationGraph"]) for node in part["nodes"]
                   for name in (node_outputs(node) or ()))
        return frozenset(uid for uid in written if not (uid in specs and specs[uid].virtual))
    except Exception:  # noqa: BLE001 - a layout we do not know: unknown
        return None


def written_uids(plan=None, operation_graph=None) -> frozenset | None:
    """UIDs of the real tensors the plan's graph writes (an operation's output slot holds them: cuDNN writes their
    memory): from ``operation_graph`` when given, else ``plan.operation_graph``, else the nodes of the plan's JSON;
    None when none tells."""
    og = operation_graph if operation_graph is not None else plan_operation_graph(plan) if plan is not None else None
    if og is not None and operations_of(og):
        return frozenset(io_uids(og)[1])
    return _json_written_uids(plan) if plan is not None else None


# ---------------------------------------------------------------------------------------------
# buffers
# ---------------------------------------------------------------------------------------------
@dataclass(frozen=True)
class Resolved:
    ptr: int
    nbytes: int | None  # bytes available from ptr on, when known
    keep: object  # the object to keep alive (None for a plain int)
    data_type: DataType | None
    array: arrays.ArrayInfo | None = None  # how the adapter read an array (None for plain memory)


_ACCEPTED = ("an int device address, an array on the GPU (DLPack or __cuda_array_interface__: torch, cupy, JAX, "
             "numba ...), a cuda.core Buffer or a cudnn_backend.memory.DeviceBuffer")


def _as_address(value, what) -> int:
    try:
        ptr = operator.index(value)
    except TypeError:
        try:  # (cuda.bindings' CUdeviceptr gives its address by int())
            ptr = int(value)
        except Exception:  # noqa: BLE001 - an object holding no address
            raise TypeError(f"{what}: a {type(value).__name__} is no device address (int() of it fails)") from None
    if ptr < 0 or ptr >= 1 << 64:
        raise ValueError(f"{what}: {ptr} is not a valid address")
    return ptr


def consumer_stream(plan) -> int:
    """The stream an array's producer must order its work before: the plan's handle's (-1, no ordering, when
    the plan has no handle: built offline)."""
    return handle_stream(plan_handle(plan) if plan is not None else None)


def handle_stream(handle) -> int:
    """``handle``'s stream, as the consumer stream arrays are read for (-1: no handle, or a closed one)."""
    return int(handle.stream) if handle is not None and not handle.closed else -1


def resolve_buffer(obj, what="buffer", stream=-1) -> Resolved:
    """The device address, size, owner and data type of one buffer object. Arrays are read by the one adapter
    (``typed.arrays.view``) with ``stream`` as the consumer stream; refused (ValueError or TypeError naming ``what``):
    host arrays, reversed views (elements below the pointer: ``ArrayInfo.descending``) and arrays spanning more
    than ``MAX_BYTES``. Every buffer a pack takes as memory (tensors, workspace) comes through here."""
    if obj is None:
        raise TypeError(f"{what}: got None; need {_ACCEPTED}")
    if isinstance(obj, bool):
        raise TypeError(f"{what}: got a bool; need {_ACCEPTED}")
    if isinstance(obj, numbers.Integral):
        return Resolved(_as_address(obj, what), None, None, None)
    if isinstance(obj, memory.DeviceBuffer):
        return Resolved(obj.ptr, obj.nbytes, obj, None)
    module = type(obj).__module__ or ""
    if module.startswith("cuda.core") and hasattr(obj, "handle") and hasattr(obj, "size"):  # a Buffer: plain memory
        try:
            accessible = getattr(obj, "is_device_accessible", True)
            handle, size = obj.handle, int(obj.size)
        except Exception as e:  # noqa: BLE001 - cuda.core asks the driver, which may be missing here
            raise TypeError(f"{what}: the cuda.core {type(obj).__name__} cannot say where its memory is "
                            f"({type(e).__name__}: {e}; CUDA driver: {_device.driver()})") from None
        if accessible is False:
            raise TypeError(f"{what}: the cuda.core Buffer is not device accessible (host memory)")
        if not 0 <= size <= MAX_BYTES:
            raise ValueError(f"{what}: the cuda.core {type(obj).__name__} says it holds {size} bytes, which no memory "
                             f"holds (0 to {MAX_BYTES})")
        return Resolved(_as_address(handle if handle is not None else 0, what), size, obj, None)
    if module.startswith("cuda.bindings") or module.startswith("cuda.cuda"):  # CUdeviceptr and friends
        try:
            address = int(obj)
        except Exception:  # noqa: BLE001 - a cuda.bindings type that holds no address
            raise TypeError(f"{what}: a {type(obj).__name__} holds no device address (int() of it fails); need "
                            f"{_ACCEPTED}") from None
        return Resolved(_as_address(address, what), None, obj, None)
    if not arrays.offers_array_protocol(obj):
        raise TypeError(f"{what}: cannot use a {type(obj).__name__} as a buffer; need {_ACCEPTED}")
    info = arrays.view(obj, stream=stream, what=what)
    if info.device != "cuda":
        raise TypeError(f"{what}: the array ({info.describe()}) is host memory; cuDNN needs device memory (copy it "
                        "to the GPU first)")
    # cuDNN reads and writes from the pointer up: whatever the array says of itself, its memory must lie there
    if info.descending:
        raise ValueError(f"{what}: the array ({info.describe()}) has negative strides: its elements lie below its "
                         "pointer, where cuDNN, reading from the pointer up, never looks; bind a copy in memory order "
                         "(numpy/cupy .copy(), torch .contiguous())")
    if info.nbytes is not None and info.nbytes > MAX_BYTES:
        raise ValueError(f"{what}: the array ({info.describe()}) spans {info.nbytes} bytes, more than any memory "
                         f"holds ({MAX_BYTES}): its shape and strides are wrong")
    return Resolved(_as_address(info.ptr or 0, what), info.nbytes, obj, info.data_type, info)


def scalar_bytes(value, data_type, what="scalar") -> bytes:
    """A by-value scalar's bytes in ``data_type`` (little-endian), from a number, a 1-element array or raw bytes. A
    number is taken for every type with a host encoding (``arrays.storage_dtype``: what ``Graph.scalar`` takes a
    value for), rounded to nearest (bfloat16, fp8: as ``arrays.encode``) and refused where it does not fit."""
    data_type = DataType(int(data_type)) if data_type is not None else D.CUDNN_DATA_FLOAT
    if isinstance(value, (bytes, bytearray, memoryview)):
        raw = bytes(value)
        bits = DATA_TYPE_BITS.get(data_type)
        if bits is not None and len(raw) != (bits + 7) // 8:
            raise ValueError(f"{what}: {len(raw)} raw bytes for a {data_type.name} scalar of {(bits + 7) // 8} bytes")
        if len(raw) > SCALAR_CAPACITY:
            raise ValueError(f"{what}: a by-value scalar holds at most {SCALAR_CAPACITY} bytes")
        return raw
    if not isinstance(value, numbers.Number) and hasattr(value, "item"):  # numpy/torch/cupy arrays of one element
        try:
            size = value.numel() if hasattr(value, "numel") else getattr(value, "size", 1)
        except Exception as e:  # noqa: BLE001 - the object's own failure, named
            raise TypeError(f"{what}: reading the {type(value).__name__}'s size failed ({type(e).__name__}: {e})") \
                from None
        if size != 1:
            raise ValueError(f"{what}: a by-value scalar takes one value, got an array of {size}")
        if arrays.has_masked_elements(value):
            raise ValueError(f"{what}: the array's one element is masked; give a value")
        try:
            value = value.item()
        except Exception as e:  # noqa: BLE001 - the object's own failure, named
            raise TypeError(f"{what}: the {type(value).__name__}'s item() failed ({type(e).__name__}: {e})") from None
    if not real_number(value):
        raise TypeError(f"{what}: a by-value tensor takes a real number (int, float, bool), a 1-element array or raw "
                        f"bytes, not {type(value).__name__}")
    return arrays.scalar_code(value, data_type, what)


def scalar_value(raw: bytes, data_type):
    """The Python value of a by-value scalar's bytes (inverse of scalar_bytes)."""
    return arrays.scalar_of_code(raw, data_type)


def uid_of(key) -> int:
    """The UID a variant-pack key names: an int, or a tensor descriptor (its unique_id)."""
    if isinstance(key, bool):
        raise TypeError("a variant pack key is a UID (int) or a tensor descriptor, not a bool")
    if isinstance(key, numbers.Integral):
        if not -(1 << 63) <= key < 1 << 63:
            raise ValueError(f"a variant pack key: UID {int(key)} does not fit in 64 bits (cuDNN's UIDs are int64)")
        return int(key)
    if isinstance(key, TensorSpec):
        return key.uid
    if isinstance(key, Descriptor) and key.descriptor_type == T.CUDNN_BACKEND_TENSOR_DESCRIPTOR:
        if key.closed:
            raise ValueError("a variant pack key: the tensor descriptor is closed")
        uid = signature_of(key).uid  # typed or generic, set here or read back from cuDNN
        if uid is None or int(uid) < 0:
            raise ValueError("a variant pack key: the tensor descriptor has no CUDNN_ATTR_TENSOR_UNIQUE_ID")
        return int(uid)
    raise TypeError(f"a variant pack key is a UID (int) or a tensor descriptor, not {type(key).__name__}")


def check_key_is_plans(key, spec) -> None:
    """A key given as a tensor (not a bare UID) must be the graph's tensor of that UID, described alike: a tensor of
    another graph that shares its UID would bind its buffer to a tensor of other dims or data type."""
    if isinstance(key, numbers.Integral):
        return
    mine = key if isinstance(key, TensorSpec) else signature_of(key)  # (kept on finalized typed tensors)
    if not same_tensor(mine, spec):
        mine = mine if isinstance(mine, TensorSpec) else TensorSpec.from_descriptor(key)
        raise ValueError(f"buffers: the key {mine.describe()} is not the plan's tensor of UID {spec.uid}, "
                         f"{spec.describe()}; key buffers by the graph's own tensors, or by UID")


def _spec_text(uid, specs):
    spec = specs.get(uid) if specs else None
    return spec.describe() if spec is not None else f"uid {uid}"


def check_array(what, spec, a, check_dtype=True):
    """Refuse an array (``typed.arrays.ArrayInfo``) that does not describe the tensor ``spec``: another GPU,
    another data type (unless ``check_dtype`` is False), another shape, or strides the tensor cannot describe.
    A flat 1-D contiguous uint8 array is plain memory and passes (its size is checked by the caller). Byte
    booleans (bool arrays) for a bit-packed BOOLEAN tensor, or the reverse, are refused even with ``check_dtype``
    False: no reading of those bytes is right."""
    expected = memory.current_device_ordinal()
    if expected is not None and a.device_id >= 0 and a.device_id != expected:
        raise ValueError(f"{what}: the array is on cuda:{a.device_id} but cuDNN runs on cuda:{expected}; the "
                         f"tensor is {spec.describe()}")
    if a.raw_bytes:
        return
    conflict = arrays.boolean_layout_conflict(a, spec.data_type) if spec.data_type is not None else None
    if conflict is not None:
        raise ValueError(f"{what}: {conflict}; the tensor is {spec.describe()}")
    if spec.data_type is not None and a.data_type != spec.data_type:
        if check_dtype:
            if a.data_type is None:
                why = arrays.no_data_type_reason(a.dtype_name)
                holds = f"{a.holds()}, which has no cuDNN data type{f' ({why})' if why else ''},"
            else:
                holds = f"{a.holds()} ({a.data_type.name})"
            raise ValueError(f"{what}: the array holds {holds} but the tensor is {spec.data_type.name} (pass "
                             "check_dtype=False to bind it anyway)")
        return  # bound anyway: element layouts of two types are not comparable; the size is still checked
    if spec.vector_count not in (None, 1) or spec.itemsize is None or spec.itemsize < 1:
        return  # vectorized or sub-byte tensors: dims do not map to array elements
    problem = arrays.layout_mismatch(a, spec.dims, spec.strides)
    if problem is not None:
        raise ValueError(f"{what}: {problem}; the tensor is {spec.describe()}")


def _check_size_known(what, r, need, spec=None):
    """An array whose size is unknown (``Resolved``: no item size) cannot be checked against the ``need`` bytes the
    tensor ``spec`` spans (None: the plan's workspace): refused. Plain memory of no known size (an address) is the
    caller's."""
    if r.nbytes is None and r.array is not None:
        needed = f"the tensor {spec.describe()} spans" if spec is not None else "the plan needs"
        raise ValueError(f"{what}: the array's size is unknown (it holds {r.array.holds()}, without an item size), "
                         f"so it cannot be checked against the {need} bytes {needed}")


def slot_label(uid, spec) -> str:
    """``UID 3 (b)``: how messages name a pack's slot (the UID alone for a tensor without a name of its own)."""
    if spec is None or spec.name == default_tensor_name(uid, spec.virtual):
        return f"UID {uid}"
    return f"UID {uid} ({spec.name})"


def check_writable(what, array, written="the plan writes this tensor"):
    """Refuse a read-only array (``typed.arrays.ArrayInfo``; None: plain memory, which says nothing) for memory
    cuDNN writes (``written`` says which): it would write memory its owner declared immutable."""
    if array is not None and array.readonly:
        raise ValueError(f"{what}: the array ({array.describe()}) is read-only, but {written}: cuDNN would write "
                         "memory its owner declared immutable; bind a writable array")


def resolve_slot(uid, spec, value, check_dtype=True, stream=-1, written=False):
    """(pointer, scalar bytes, object to keep) for binding ``value`` to ``uid``; raises on every mismatch.
    ``stream``: the consumer stream arrays are read for (``consumer_stream``); ``written``: the plan writes the
    tensor (a read-only array is refused)."""
    what = slot_label(uid, spec)
    if spec is not None and spec.virtual:
        raise ValueError(f"{what} is a virtual tensor ({spec.describe()}): cuDNN keeps it internally; do not bind it")
    if spec is not None and spec.by_value:
        if written:
            raise ValueError(f"{what} is a by-value tensor ({spec.describe()}) the graph writes: a by-value tensor "
                             "is a host value cuDNN reads, and nothing it writes there comes back; make the output a "
                             "tensor in device memory")
        return 0, scalar_bytes(value, spec.data_type, what), None
    r = resolve_buffer(value, what, stream)
    if r.ptr == 0:
        raise ValueError(f"{what}: null device pointer")
    if written:
        check_writable(what, r.array)
    if spec is not None:
        if r.array is not None:
            check_array(what, spec, r.array, check_dtype)
        need = spec.nbytes
        problem = pointer_problem(what, r.ptr, spec.alignment, need)
        if problem is not None:
            raise ValueError(problem)
        if need is not None:
            _check_size_known(what, r, need, spec)
        if need is not None and r.nbytes is not None and r.nbytes < need:
            raise ValueError(f"{what}: the buffer holds {r.nbytes} bytes but the tensor {spec.describe()} spans "
                             f"{need} bytes")
    return r.ptr, None, r.keep


def pointer_problem(what, ptr, alignment, need) -> str | None:
    """Why device pointer ``ptr`` cannot be bound to a tensor of byte ``alignment`` spanning ``need`` bytes (0 or
    None: unknown), or None: NULL, misaligned, or its bytes passing the end of the address space. The variant
    pack's C path tests the same in ``_pointer_refused`` and words it here."""
    if ptr == 0:
        return f"{what}: null device pointer"
    if alignment and ptr % alignment:
        return (f"{what}: pointer 0x{ptr:x} is not aligned to the tensor's byte alignment {alignment} (it is "
                f"{ptr & -ptr}-byte aligned)")
    if need is not None and need > 0 and ptr + need > 1 << 64:
        return (f"{what}: pointer 0x{ptr:x} plus the {need} bytes the tensor spans passes the end of the 64-bit "
                "address space")
    return None


def slot_bytes(uid, spec) -> int:
    """The bytes the buffer bound to ``uid`` must hold for the tensor ``spec`` (-1: unknown, by value, or no spec);
    ValueError, naming the UID, for a tensor spanning more than ``MAX_BYTES``: no memory holds it, and a pack keeps
    sizes as int64."""
    need = spec.nbytes if spec is not None and not spec.by_value else None
    if need is None:
        return -1
    if need > MAX_BYTES:
        raise ValueError(f"{slot_label(uid, spec)}: the tensor {spec.describe()} spans {need} bytes, more than any "
                         f"memory holds ({MAX_BYTES})")
    return need


def prepare_pack(plan, buffers, operation_graph=None, tensors=None, check_dtype=True, overrides=None):
    """Check ``buffers`` against the plan's graph; returns (slots, specs, written) where slots is a list of
    (uid, pointer, scalar bytes or None, keep, alignment, min bytes, by_value), in UID order, and written the UIDs
    the graph writes (``written_uids``; None: unknown), whose arrays must be writable. ``overrides``
    (``prepare_overrides``' list) gives some tensors other shapes: their buffers are checked against those."""
    if buffers is None:
        buffers = {}
    if not hasattr(buffers, "items"):
        raise TypeError(f"buffers must be a mapping {{uid or Tensor: buffer}}, not {type(buffers).__name__}")
    specs = tensor_specs(plan, operation_graph, tensors)
    if not buffers and specs is None:  # (nothing to check against, and nothing to bind: cuDNN refuses it, wordless)
        raise ValueError("buffers: none given, and no plan or graph to say which tensors need them; a variant pack "
                         "binds a buffer to each tensor a plan's graph reads or writes (VariantPack(plan, {uid or "
                         "tensor: array or pointer}))")
    given = {}
    for key, value in buffers.items():
        uid = uid_of(key)
        if uid in given:
            raise ValueError(f"UID {uid} is bound twice")
        given[uid] = value
        if specs is not None and uid in specs:
            check_key_is_plans(key, specs[uid])
    if overrides:
        specs = dict(specs)
        for uid, dims, strides in overrides:
            specs[uid] = specs[uid].with_shape(dims, strides)
    if specs is not None:
        for uid, spec in specs.items():  # by-value tensors whose value the graph holds bind themselves
            if spec.by_value and not spec.virtual and uid not in given and spec.value is not None:
                given[uid] = spec.value
        required = sorted(u for u, s in specs.items() if not s.virtual)
        bound_virtual = sorted(u for u in given if u in specs and specs[u].virtual)
        missing = [u for u in required if u not in given]
        extra = sorted(u for u in given if u not in specs)
        problems = []
        if missing:
            problems.append("missing buffers for UID(s) " + ", ".join(str(u) for u in missing) + ": "
                            + "; ".join(_spec_text(u, specs) for u in missing))
        if extra:
            problems.append("unknown UID(s) " + ", ".join(str(u) for u in extra) + " (not in the plan's graph, whose "
                            "non-virtual tensors are " + ", ".join(str(u) for u in required) + ")")
        if bound_virtual:
            problems.append("virtual UID(s) " + ", ".join(str(u) for u in bound_virtual) + " bound (cuDNN keeps "
                            "virtual tensors internally): " + "; ".join(_spec_text(u, specs) for u in bound_virtual))
        if problems:
            raise ValueError("variant pack does not match the plan's graph: " + "; ".join(problems))
        order = required
    else:
        order = list(given)
    slots = []
    stream = consumer_stream(plan)
    written = written_uids(plan, operation_graph)
    for uid in order:
        spec = specs.get(uid) if specs else None
        need = slot_bytes(uid, spec)
        ptr, raw, keep = resolve_slot(uid, spec, given[uid], check_dtype, stream, uid in (written or ()))
        align = spec.alignment if spec is not None and spec.alignment and not spec.by_value else 0
        slots.append((uid, ptr, raw, keep, align or 0, need, bool(spec is not None and spec.by_value)))
    return slots, (specs or {}), written


# ---------------------------------------------------------------------------------------------
# shape overrides: one plan, other shapes per variant pack
# ---------------------------------------------------------------------------------------------
MAX_OVERRIDE_RANK = 8  # CUDNN_DIM_MAX: a pack's C arrays hold this many dims per overridden tensor


def _json_override_flag(plan) -> bool | None:
    doc = plan_document(plan)
    graph = doc.get("operationGraph") if doc is not None else None
    return bool(graph.get("isOverrideShapeEnabled", False)) if isinstance(graph, dict) else None


def plan_override_enabled(plan=None, operation_graph=None) -> bool | None:
    """Whether the plan's operation graph was finalized with CUDNN_ATTR_OPERATIONGRAPH_IS_OVERRIDE_SHAPE_ENABLED:
    from the graph when it is known (``operation_graph=``, ``plan.operation_graph``), else from the plan's JSON;
    None when neither tells."""
    og = operation_graph if operation_graph is not None else plan_operation_graph(plan) if plan is not None else None
    if isinstance(og, Descriptor) and og.descriptor_type == T.CUDNN_BACKEND_OPERATIONGRAPH_DESCRIPTOR:
        return bool(og.value_of(A.CUDNN_ATTR_OPERATIONGRAPH_IS_OVERRIDE_SHAPE_ENABLED))
    return _json_override_flag(plan) if plan is not None else None


def _dims_and_strides(value, what):
    """An override's (dims, strides or None): a sequence of ints, or a (dims, strides) pair of sequences."""
    if isinstance(value, (str, bytes)) or not hasattr(value, "__iter__"):
        raise TypeError(f"{what}: expected dims (a sequence of ints) or (dims, strides), not {type(value).__name__}")
    items = user_sequence(value, what, 2 * MAX_OVERRIDE_RANK)
    if len(items) == 2 and all(hasattr(x, "__iter__") and not isinstance(x, (str, bytes)) for x in items):
        return (user_sequence(items[0], f"{what} dims", 2 * MAX_OVERRIDE_RANK),
                user_sequence(items[1], f"{what} strides", 2 * MAX_OVERRIDE_RANK))
    return items, None


def _sizes(values, what, rank, spec):
    out = [as_int(v, f"{what}[{i}]", 1, (1 << 63) - 1) for i, v in enumerate(values)]
    if len(out) != rank:
        raise ValueError(f"{what}: {len(out)} entries for {spec.describe()}, of rank {rank} (an override keeps the "
                         "rank)")
    return out


def prepare_overrides(specs, overrides, enabled=None, operation_graph=None) -> list:
    """The checked shape overrides of a variant pack: ``[(uid, dims, strides)]`` in UID order.

    ``overrides`` maps a UID or tensor to its dims (then packed strides in the tensor's own axis order, NHWC stays
    NHWC) or to ``(dims, strides)``. Each must be a real (not virtual, not by-value) tensor of the plan's graph
    (``specs``), keep its rank, and every dim and stride be >= 1; with the ``operation_graph``, the shapes must
    agree with the others (``_check_overrides_agree``). cuDNN checks none of it (9.28.1 finalizes packs and answers
    workspace queries with any ranks, UIDs and sizes), only that the three arrays agree in length.
    ``enabled``: whether the plan's graph has override shapes enabled (False refuses; None: unknown)."""
    check_available(OVERRIDE_SHAPES_NEEDS, "VariantPack(overrides=...)")
    if not hasattr(overrides, "items"):
        raise TypeError(f"overrides: expected a mapping {{uid or Tensor: dims or (dims, strides)}}, not "
                        f"{type(overrides).__name__}")
    if enabled is False:
        raise ValueError("overrides: the plan's operation graph was finalized without override shapes: build it with "
                         "Graph.build(override_shapes=True) (CUDNN_ATTR_OPERATIONGRAPH_IS_OVERRIDE_SHAPE_ENABLED)")
    if not specs:
        raise ValueError("overrides: the plan's graph is not known here (pass operation_graph= or tensors=), so the "
                         "overridden shapes cannot be checked")
    out = {}
    for key, value in overrides.items():
        uid = uid_of(key)
        what = f"overrides[{uid}]"
        if uid in out:
            raise ValueError(f"{what}: UID {uid} is overridden twice")
        spec = specs.get(uid)
        if spec is None:
            raise ValueError(f"{what}: UID {uid} is no tensor of the plan's graph (its real tensors: "
                             f"{', '.join(str(u) for u, t in sorted(specs.items()) if not t.virtual)})")
        if spec.virtual or spec.by_value:
            kind = "virtual" if spec.virtual else "a by-value scalar"
            raise ValueError(f"{what}: {spec.describe()} is {kind}; only the graph's tensors in device memory take "
                             "shapes per variant pack")
        if spec.vector_count not in (None, 1):
            raise ValueError(f"{what}: {spec.describe()} is vectorized ({spec.vector_count} per element): not "
                             "overridable here")
        rank = len(spec.dims)
        dims, strides = _dims_and_strides(value, what)
        dims = _sizes(dims, f"{what} dims", rank, spec)
        try:
            strides = strides_like(dims, spec.strides) if strides is None else _sizes(strides, f"{what} strides",
                                                                                     rank, spec)
        except ValueError as e:
            raise ValueError(f"{what}: {e}") from None
        if span_elements(dims, strides) > MAX_ELEMENTS:
            raise ValueError(f"{what}: dims {dims} with strides {strides} span more than {MAX_ELEMENTS} elements")
        out[uid] = (tuple(dims), tuple(strides))
    checked = [(uid, *out[uid]) for uid in sorted(out)]
    _check_overrides_agree(operation_graph, checked)
    return checked


class _Overridden:
    """A tensor descriptor as an operation's finalize check reads it, with the dims a variant pack gives it."""

    __slots__ = ("tensor", "dims")

    def __init__(self, tensor, dims):
        self.tensor, self.dims = tensor, dims

    def value_of(self, attribute):
        return self.dims if attribute == A.CUDNN_ATTR_TENSOR_DIMENSIONS else self.tensor.value_of(attribute)


class _WithOverrides:
    """An operation as its finalize check reads it, its tensors with the dims a variant pack overrides."""

    __slots__ = ("op", "dims", "descriptor_type")

    def __init__(self, op, dims):
        self.op, self.dims, self.descriptor_type = op, dims, op.descriptor_type

    def value_of(self, attribute):
        value = self.op.value_of(attribute)
        if isinstance(value, Descriptor) and value.descriptor_type == DescriptorType.CUDNN_BACKEND_TENSOR_DESCRIPTOR:
            uid = value.value_of(A.CUDNN_ATTR_TENSOR_UNIQUE_ID)
            if uid in self.dims:
                return _Overridden(value, self.dims[uid])
        return value


def _check_overrides_agree(operation_graph, overrides) -> None:
    """ValueError unless the shapes a variant pack overrides (``prepare_overrides``' list) and the others agree for
    each operation that reads or writes one, by its family's finalize check (a matmul's C of A @ B's shape, a
    pointwise output of the broadcast shape, a normalization's statistics of its input's): cuDNN checks none of
    them, and would read or write past the smaller tensors. Nothing is checked where the graph is not known."""
    if operation_graph is None or not overrides:
        return
    dims = {uid: tuple(d) for uid, d, _ in overrides}
    ops = [part for op in operations_of(operation_graph) for part in (op, *part_operations(op))]
    for op in ops:  # (each part is an operation of its own here: its own tensors only)
        check = FINALIZE_CHECKS.get(op.descriptor_type)
        if check is None or not any(signature_of(t).uid in dims for _, t, _ in tensor_slots(op)):
            continue
        try:
            check(_WithOverrides(op, dims))
        except GraphError as e:
            given = ", ".join(f"{uid}: {list(d)}" for uid, d in sorted(dims.items()))
            raise ValueError(f"overrides ({given}): the shapes disagree: {e}") from None


def resolve_workspace(workspace, needed, what="workspace", stream=-1):
    """(pointer, capacity or -1, keep, owned) for a workspace argument; allocates when None and needed (where no
    GPU is visible, a plan built offline: NoDeviceError, naming the bytes to pass). cuDNN writes the workspace: a
    read-only array is refused (``check_writable``)."""
    if workspace is None:
        if needed and needed > 0:
            try:
                buf = memory.allocate_workspace(needed)
            except CudaError:
                if _device.gpu_available():
                    raise
                raise NoDeviceError(f"{what}: the plan needs a {needed}-byte workspace, and none can be allocated "
                                    f"here: no GPU is visible (driver: {_device.driver()}); pass {what}= (device "
                                    f"memory of at least {needed} bytes: a buffer, an array or its address)") from None
            if buf is None:
                return 0, 0, None, False
            return int(buf.ptr), int(buf.nbytes), buf, True
        return 0, 0, None, False
    if isinstance(workspace, numbers.Integral) and not isinstance(workspace, bool) and int(workspace) == 0:
        if needed and needed > 0:
            raise ValueError(f"the plan needs a {needed}-byte workspace; workspace=0 gives none")
        return 0, 0, None, False
    r = resolve_buffer(workspace, what, stream)
    check_writable(what, r.array, "the plan uses it as its workspace")
    if needed and needed > 0:
        if r.ptr == 0:
            raise ValueError(f"{what}: null device pointer; the plan needs a {needed}-byte workspace")
        _check_size_known(what, r, needed)
        if r.nbytes is not None and r.nbytes < needed:
            raise ValueError(f"the workspace holds {r.nbytes} bytes but the plan needs {needed}")
    return r.ptr, (-1 if r.nbytes is None else r.nbytes), r.keep, False


