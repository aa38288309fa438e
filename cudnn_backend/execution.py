"""Executing plans: variant packs, ``execute``, and cuDNN's native CUDA graph API.

    pack = VariantPack(plan, {x: x_gpu, w: w_gpu, y: y_gpu})   # checked once against the plan's graph
    execute(handle, plan, pack)                               # GIL released, no per-call Python objects
    pack.bind_and_execute(handle, plan, (x2_ptr, w2_ptr, y2_ptr))   # new pointers, in pack.pointer_uids order

    g = CudaGraph(handle, plan, pack)      # cudnnBackendPopulateCudaGraph + instantiate
    g.launch(); g.update(other_pack); g.kernel_count()

A buffer is an int (a device address), a torch tensor, a cupy array, anything with
``__cuda_array_interface__`` or DLPack, a cuda.core ``Buffer`` or a ``memory.DeviceBuffer``. By-value
tensors take a number (packed into a small host buffer the pack owns, in the tensor's data type).

The plan's graph (``plan.operation_graph``, or the tensors in the plan's JSON, or ``operation_graph=``
/ ``tensors=`` given explicitly) tells which UIDs must be bound, which are by value, their byte
alignment and size; with no graph known the UIDs are taken as given, all as device pointers.
"""
from __future__ import annotations

import json
import math
import numbers
import operator
import struct
import weakref
from collections import Counter
from dataclasses import dataclass

from cudnn_backend import memory
from cudnn_backend._descriptor import Descriptor, Handle, _stream_to_int
from cudnn_backend._execute import (
    NativeCudaGraphNotSupportedError,
    VariantPack,
    execute,
    populate_cuda_graph,
    update_cuda_graph,
)
from cudnn_backend._generated.enums import AttributeName as A
from cudnn_backend._generated.enums import AttributeType as AT
from cudnn_backend._generated.enums import DataType, DescriptorType

__all__ = [
    "CudaGraph", "NativeCudaGraphNotSupportedError", "TensorSpec", "VariantPack", "captured_kernel_count",
    "count_kernel_nodes", "execute",
    "graph_node_types", "plan_descriptor", "plan_supports_native_cuda_graph", "populate_cuda_graph", "resolve_buffer", "tensor_specs",
    "update_cuda_graph", "variant_pack",
]

D = DataType
T = DescriptorType

# Bits per element; None where the size is not a plain per-element one (vectorized or bit-packed
# types), which turns the size check off for that tensor.
DATA_TYPE_BITS = {
    D.CUDNN_DATA_HALF: 16, D.CUDNN_DATA_BFLOAT16: 16, D.CUDNN_DATA_FLOAT: 32, D.CUDNN_DATA_DOUBLE: 64,
    D.CUDNN_DATA_INT8: 8, D.CUDNN_DATA_UINT8: 8, D.CUDNN_DATA_INT32: 32, D.CUDNN_DATA_INT64: 64,
    D.CUDNN_DATA_FP8_E4M3: 8, D.CUDNN_DATA_FP8_E5M2: 8,
}
for _name, _bits in (("CUDNN_DATA_FP8_E8M0", 8), ("CUDNN_DATA_FP8_E5M3", 8), ("CUDNN_DATA_FP4_E2M1", 4),
                     ("CUDNN_DATA_INT4", 4), ("CUDNN_DATA_UINT4", 4), ("CUDNN_DATA_UINT32", 32),
                     ("CUDNN_DATA_COMPLEX_FP32", 64), ("CUDNN_DATA_COMPLEX_FP64", 128),
                     ("CUDNN_DATA_BYTE_BOOLEAN", 8)):
    if _name in D.__members__:
        DATA_TYPE_BITS[D[_name]] = _bits

# struct formats of the data types a by-value scalar can have (bfloat16 is converted by hand)
_SCALAR_FORMAT = {
    D.CUDNN_DATA_FLOAT: "<f", D.CUDNN_DATA_DOUBLE: "<d", D.CUDNN_DATA_HALF: "<e", D.CUDNN_DATA_INT8: "<b",
    D.CUDNN_DATA_UINT8: "<B", D.CUDNN_DATA_INT32: "<i", D.CUDNN_DATA_INT64: "<q", D.CUDNN_DATA_BOOLEAN: "<?",
}
for _name, _fmt in (("CUDNN_DATA_UINT32", "<I"), ("CUDNN_DATA_BYTE_BOOLEAN", "<?")):
    if _name in D.__members__:
        _SCALAR_FORMAT[D[_name]] = _fmt
SCALAR_CAPACITY = 16  # bytes of host storage per by-value slot


# ---------------------------------------------------------------------------------------------
# what the plan's graph says about each tensor
# ---------------------------------------------------------------------------------------------
@dataclass(frozen=True)
class TensorSpec:
    """What a variant pack needs to know about one tensor of the plan's graph."""

    uid: int
    name: str
    dims: tuple
    strides: tuple
    data_type: DataType | None
    virtual: bool = False
    by_value: bool = False
    alignment: int | None = None  # CUDNN_ATTR_TENSOR_BYTE_ALIGNMENT, when known
    vector_count: int = 1
    value: object = None  # a by-value tensor's value when the graph gave it one (Graph.scalar, patterns)

    @property
    def itemsize(self) -> float | None:
        bits = DATA_TYPE_BITS.get(self.data_type)
        return None if bits is None else bits / 8

    @property
    def nbytes(self) -> int | None:
        """Bytes the tensor spans: (1 + sum((dim - 1) * |stride|)) elements; None if unknown."""
        bits = DATA_TYPE_BITS.get(self.data_type)
        if bits is None or self.vector_count not in (None, 1) or not self.dims or len(self.dims) != len(self.strides):
            return None
        if any(d == 0 for d in self.dims):
            return 0
        elements = 1 + sum((d - 1) * abs(s) for d, s in zip(self.dims, self.strides))
        return (elements * bits + 7) // 8

    def describe(self) -> str:
        dt = self.data_type.name.replace("CUDNN_DATA_", "").lower() if self.data_type is not None else "?"
        kind = " virtual" if self.virtual else (" by-value" if self.by_value else "")
        label = f"{self.name} " if self.name and self.name != str(self.uid) else ""
        return f"{label}(uid {self.uid}) {list(self.dims)} strides {list(self.strides)} {dt}{kind}"


def _first(values, default=None):
    if isinstance(values, (list, tuple)):
        return values[0] if values else default
    return default if values is None else values


def _get(desc, attr, atype, default=None):
    try:
        return desc.get(attr, atype)
    except Exception:  # noqa: BLE001 - an attribute cuDNN will not report: unknown
        return default


def tensor_spec(tensor) -> TensorSpec:
    """The TensorSpec of a tensor descriptor (typed ``Tensor`` or a generic ``Descriptor``)."""
    if hasattr(tensor, "get_keyword"):  # typed: values set are known even where cuDNN cannot report them
        def kw(name):
            try:
                return tensor.get_keyword(name)
            except Exception:  # noqa: BLE001 - neither set nor reported by cuDNN: unknown
                return None

        uid = int(tensor.get_keyword("unique_id"))
        dims = tuple(int(d) for d in (kw("dimensions") or ()))
        strides = tuple(int(s) for s in (kw("strides") or ()))
        dt = kw("data_type")
        align = kw("byte_alignment")
        vc = kw("vector_count")
        by_value = bool(kw("is_by_value"))
        value = tensor.__dict__.get("scalar_value") if by_value else None
        return TensorSpec(uid, getattr(tensor, "name", None) or str(uid), dims, strides,
                          DataType(int(dt)) if dt is not None else None, bool(kw("is_virtual")),
                          by_value, int(align) if align else None, int(vc) if vc else 1, value)
    uid = int(_first(tensor.get(A.CUDNN_ATTR_TENSOR_UNIQUE_ID, AT.CUDNN_TYPE_INT64)))
    dims = tuple(_get(tensor, A.CUDNN_ATTR_TENSOR_DIMENSIONS, AT.CUDNN_TYPE_INT64, ()))
    strides = tuple(_get(tensor, A.CUDNN_ATTR_TENSOR_STRIDES, AT.CUDNN_TYPE_INT64, ()))
    dt = _first(_get(tensor, A.CUDNN_ATTR_TENSOR_DATA_TYPE, AT.CUDNN_TYPE_DATA_TYPE))
    virtual = bool(_first(_get(tensor, A.CUDNN_ATTR_TENSOR_IS_VIRTUAL, AT.CUDNN_TYPE_BOOLEAN), False))
    by_value = bool(_first(_get(tensor, A.CUDNN_ATTR_TENSOR_IS_BY_VALUE, AT.CUDNN_TYPE_BOOLEAN), False))
    align = _first(_get(tensor, A.CUDNN_ATTR_TENSOR_BYTE_ALIGNMENT, AT.CUDNN_TYPE_INT64))
    vc = _first(_get(tensor, A.CUDNN_ATTR_TENSOR_VECTOR_COUNT, AT.CUDNN_TYPE_INT64), 1)
    return TensorSpec(uid, str(uid), dims, strides, DataType(int(dt)) if dt is not None else None, virtual, by_value,
                      int(align) if align else None, int(vc) if vc else 1)


def _is_tensor(d) -> bool:
    return isinstance(d, Descriptor) and not d.closed and d.descriptor_type == T.CUDNN_BACKEND_TENSOR_DESCRIPTOR


def _operations_of(operation_graph) -> list:
    ops = getattr(operation_graph, "operations", None)
    if ops:
        return list(ops)
    if isinstance(operation_graph, Descriptor):
        return list(operation_graph.children.get(A.CUDNN_ATTR_OPERATIONGRAPH_OPS, ()))
    if isinstance(operation_graph, (list, tuple)):
        return list(operation_graph)
    return []


def graph_tensor_specs(operation_graph) -> dict | None:
    """{uid: TensorSpec} of every tensor the operations of an operation graph (or a list of
    operations) read or write; None when the graph's operations are not known on the Python side."""
    specs = {}
    for op in _operations_of(operation_graph):
        for children in op.children.values():
            for child in children:
                if _is_tensor(child):
                    spec = tensor_spec(child)
                    specs.setdefault(spec.uid, spec)
    return specs or None


def _specs_from_tensors(tensors) -> dict:
    if isinstance(tensors, dict):
        tensors = tensors.values()
    specs = {}
    for t in tensors:
        spec = t if isinstance(t, TensorSpec) else tensor_spec(t)
        specs[spec.uid] = spec
    return specs


# ---------------------------------------------------------------------------------------------
# plans, whatever wraps them
# ---------------------------------------------------------------------------------------------
_PLAN_ATTRS = ("descriptor", "execution_plan", "plan", "_descriptor", "_plan", "desc", "_execution_plan")


def _is_plan_descriptor(d) -> bool:
    return isinstance(d, Descriptor) and d.descriptor_type == T.CUDNN_BACKEND_EXECUTION_PLAN_DESCRIPTOR


def plan_descriptor(plan) -> Descriptor:
    """The CUDNN_BACKEND_EXECUTION_PLAN_DESCRIPTOR of a plan: the descriptor itself, or the one a
    plan object (cudnn_backend.plans) holds."""
    if _is_plan_descriptor(plan):
        return plan
    for name in _PLAN_ATTRS:
        d = getattr(plan, name, None)
        if _is_plan_descriptor(d):
            return d
    for d in getattr(plan, "__dict__", {}).values():
        if _is_plan_descriptor(d):
            return d
    raise TypeError(f"{type(plan).__name__} is not an execution plan: pass an ExecutionPlan descriptor or a plan "
                    f"object holding one")


def plan_workspace_size(plan) -> int:
    """The workspace (bytes) the plan needs."""
    if not isinstance(plan, Descriptor):
        ws = getattr(plan, "workspace_size", None)
        if ws is not None and not callable(ws):
            return int(ws)
    desc = plan_descriptor(plan)
    if hasattr(desc, "get_keyword"):
        ws = desc.get_keyword("workspace_size")
        if ws is not None:
            return int(ws)
    return int(_first(desc.get(A.CUDNN_ATTR_EXECUTION_PLAN_WORKSPACE_SIZE, AT.CUDNN_TYPE_INT64), 0))


def plan_handle(plan):
    """The Handle the plan was built with, if known."""
    h = getattr(plan, "handle", None)
    if isinstance(h, Handle):
        return h
    desc = plan_descriptor(plan)
    h = desc.children.get(A.CUDNN_ATTR_EXECUTION_PLAN_HANDLE) if hasattr(desc, "children") else None
    if h:
        return h[0]
    return None


def plan_behavior_notes(plan) -> set | None:
    """Names of the behavior notes of the plan's engine (e.g. CUDNN_BEHAVIOR_NOTE_SUPPORTS_CUDA_GRAPH_NATIVE_API),
    read through cuDNN; None when cuDNN will not say."""
    try:
        desc = plan_descriptor(plan)
        cfg = _first(desc.get(A.CUDNN_ATTR_EXECUTION_PLAN_ENGINE_CONFIG, AT.CUDNN_TYPE_BACKEND_DESCRIPTOR))
        engine = _first(cfg.get(A.CUDNN_ATTR_ENGINECFG_ENGINE, AT.CUDNN_TYPE_BACKEND_DESCRIPTOR))
        notes = engine.get(A.CUDNN_ATTR_ENGINE_BEHAVIOR_NOTE, AT.CUDNN_TYPE_BEHAVIOR_NOTE)
        return {getattr(n, "name", str(n)) for n in notes}
    except Exception:  # noqa: BLE001 - e.g. a plan loaded from JSON whose config cuDNN cannot return
        return None


def plan_supports_native_cuda_graph(plan) -> bool | None:
    """Whether the plan's engine has CUDNN_BEHAVIOR_NOTE_SUPPORTS_CUDA_GRAPH_NATIVE_API (None: unknown)."""
    notes = plan_behavior_notes(plan)
    return None if notes is None else "CUDNN_BEHAVIOR_NOTE_SUPPORTS_CUDA_GRAPH_NATIVE_API" in notes


def plan_operation_graph(plan):
    """``plan.operation_graph`` when the plan knows its graph (plans built by cudnn_backend.plans), else None."""
    try:
        return getattr(plan, "operation_graph", None)
    except Exception:  # noqa: BLE001 - a plan that cannot say: unknown
        return None


_json_specs_cache = weakref.WeakKeyDictionary()  # plan descriptor -> specs (a finalized plan does not change)


def plan_json_tensor_specs(plan) -> dict | None:
    """{uid: TensorSpec} from the tensors listed in the plan's JSON representation, or None."""
    desc = plan_descriptor(plan)
    try:
        return _json_specs_cache[desc]
    except (KeyError, TypeError):
        pass
    specs = _parse_plan_json(desc)
    try:
        _json_specs_cache[desc] = specs
    except TypeError:
        pass
    return specs


def _parse_plan_json(desc) -> dict | None:
    try:
        text = desc.get(A.CUDNN_ATTR_EXECUTION_PLAN_JSON_REPRESENTATION, AT.CUDNN_TYPE_CHAR)
        tensors = json.loads(text)["operationGraph"]["tensors"]
        specs = {}
        for t in tensors:
            uid = int(t["name"])
            dt = t.get("dataType")
            specs[uid] = TensorSpec(
                uid, str(uid), tuple(int(x) for x in t.get("dim", ())), tuple(int(x) for x in t.get("stride", ())),
                D[dt] if dt in D.__members__ else None, bool(t.get("isVirtual", False)),
                bool(t.get("isByValue", False)), int(t["ptrAlignment"]) if t.get("ptrAlignment") else None,
                int(t.get("vectCount", 1) or 1))
        return specs or None
    except Exception:  # noqa: BLE001 - no JSON for this engine, or a layout we do not know: graph unknown
        return None


def tensor_specs(plan=None, operation_graph=None, tensors=None) -> dict | None:
    """{uid: TensorSpec} of the tensors a plan's graph reads and writes, virtual ones included.

    From ``tensors`` (Tensor descriptors or TensorSpecs) or ``operation_graph`` when given, else
    ``plan.operation_graph``, else the plan's JSON; None when none of them tells.
    """
    if tensors is not None:
        return _specs_from_tensors(tensors)
    if operation_graph is not None:
        specs = graph_tensor_specs(operation_graph)
        if specs is None:
            raise ValueError("the operation graph given has no operations known on the Python side; pass tensors=")
        return specs
    if plan is None:
        return None
    og = plan_operation_graph(plan)
    if og is not None:
        specs = graph_tensor_specs(og)
        if specs is not None:
            return specs
    return plan_json_tensor_specs(plan)


# ---------------------------------------------------------------------------------------------
# buffers
# ---------------------------------------------------------------------------------------------
@dataclass(frozen=True)
class Resolved:
    ptr: int
    nbytes: int | None  # bytes available from ptr on, when known
    keep: object  # the object to keep alive (None for a plain int)
    data_type: DataType | None


_ACCEPTED = ("an int device address, a torch/cupy array, an object with __cuda_array_interface__ or __dlpack__, "
             "a cuda.core Buffer or a cudnn_backend.memory.DeviceBuffer")


def _as_address(value, what) -> int:
    try:
        ptr = operator.index(value)
    except TypeError:
        ptr = int(value)
    if ptr < 0 or ptr >= 1 << 64:
        raise ValueError(f"{what}: {ptr} is not a valid address")
    return ptr


def resolve_buffer(obj, what="buffer") -> Resolved:
    """The device address, size, owner and data type of one buffer object."""
    from cudnn_backend import arrays

    if obj is None:
        raise TypeError(f"{what}: got None; need {_ACCEPTED}")
    if isinstance(obj, bool):
        raise TypeError(f"{what}: got a bool; need {_ACCEPTED}")
    if isinstance(obj, numbers.Integral):
        return Resolved(_as_address(obj, what), None, None, None)
    if isinstance(obj, memory.DeviceBuffer):
        return Resolved(obj.ptr, obj.nbytes, obj, None)
    module = type(obj).__module__ or ""
    if module.startswith("torch"):
        if not getattr(obj, "is_cuda", False):
            raise TypeError(f"{what}: the torch tensor is on {getattr(obj, 'device', 'the host')}; cuDNN needs device "
                            f"memory (move it with .cuda())")
        info = arrays.describe(obj)
        return Resolved(info.ptr, info.nbytes, obj, info.data_type)
    if module.startswith("cuda.core") and hasattr(obj, "handle") and hasattr(obj, "size"):
        if getattr(obj, "is_device_accessible", True) is False:
            raise TypeError(f"{what}: the cuda.core Buffer is not device accessible")
        handle = obj.handle
        return Resolved(_as_address(handle if handle is not None else 0, what), int(obj.size), obj, None)
    if module.startswith("cuda.bindings") or module.startswith("cuda.cuda"):  # CUdeviceptr and friends
        return Resolved(_as_address(int(obj), what), None, obj, None)
    cai = getattr(obj, "__cuda_array_interface__", None)
    if cai is not None:
        if not isinstance(cai, dict) or "data" not in cai or "shape" not in cai or "typestr" not in cai:
            raise TypeError(f"{what}: malformed __cuda_array_interface__ on {type(obj).__name__}")
        if cai.get("mask") is not None:
            raise TypeError(f"{what}: masked arrays are not supported")
        ptr = _as_address(cai["data"][0] or 0, what)
        try:
            info = arrays.describe(obj)
            nbytes, dt = info.nbytes, info.data_type
        except (TypeError, KeyError):  # a typestr cuDNN has no data type for: size from the item size
            itemsize = int(cai["typestr"][2:] or 1)
            shape = tuple(int(n) for n in cai["shape"])
            strides = cai.get("strides") or ()
            if 0 in shape:
                nbytes = 0
            elif strides:
                nbytes = sum((n - 1) * abs(int(st)) for n, st in zip(shape, strides)) + itemsize
            else:
                nbytes = math.prod(shape) * itemsize
            dt = None
        return Resolved(ptr, nbytes, obj, dt)
    if hasattr(obj, "__array_interface__") or module.startswith("numpy"):
        raise TypeError(f"{what}: a numpy array is host memory; cuDNN needs device memory (copy it with "
                        f"cupy.asarray or torch.as_tensor(..., device='cuda'))")
    if hasattr(obj, "__dlpack__"):
        info = arrays.describe(obj)
        try:
            device_type = int(obj.__dlpack_device__()[0])
        except Exception:  # noqa: BLE001 - no __dlpack_device__: the capsule's device decides
            device_type = None
        if info.device != "cuda" and device_type not in (2, 13):  # kDLCUDA, kDLCUDAManaged
            raise TypeError(f"{what}: the DLPack tensor is on the {info.device} device; cuDNN needs device memory")
        return Resolved(_as_address(info.ptr or 0, what), info.nbytes, obj, info.data_type)
    raise TypeError(f"{what}: cannot use a {type(obj).__name__} as a buffer; need {_ACCEPTED}")


def _float_to_bf16_bytes(value: float) -> bytes:
    (bits,) = struct.unpack("<I", struct.pack("<f", value))
    if (bits & 0x7F800000) == 0x7F800000 and bits & 0x007FFFFF:  # NaN: keep it a NaN
        return struct.pack("<H", (bits >> 16) | 0x0040)
    bits += 0x7FFF + ((bits >> 16) & 1)  # round to nearest even
    return struct.pack("<H", (bits >> 16) & 0xFFFF)


def scalar_bytes(value, data_type, what="scalar") -> bytes:
    """A by-value scalar's bytes in ``data_type`` (little-endian), from a number, a 1-element array or raw bytes."""
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
        size = value.numel() if hasattr(value, "numel") else getattr(value, "size", 1)
        if size != 1:
            raise ValueError(f"{what}: a by-value scalar takes one value, got an array of {size}")
        value = value.item()
    if not isinstance(value, numbers.Real):
        raise TypeError(f"{what}: a by-value tensor takes a real number (int, float, bool), a 1-element array or raw "
                        f"bytes, not {type(value).__name__}")
    if data_type == D.CUDNN_DATA_BFLOAT16:
        try:
            return _float_to_bf16_bytes(float(value))
        except (struct.error, OverflowError) as e:
            raise ValueError(f"{what}: {value!r} does not fit in {data_type.name} ({e})") from None
    fmt = _SCALAR_FORMAT.get(data_type)
    if fmt is None:
        raise TypeError(f"{what}: by-value scalars of {data_type.name} are not supported; pass the raw bytes")
    if fmt[-1] == "?":
        value = bool(value)
    elif fmt[-1] in "bBiIq":
        if isinstance(value, numbers.Integral):
            value = int(value)
        elif float(value).is_integer():
            value = int(float(value))
        else:
            raise ValueError(f"{what}: {value} is not an integer ({data_type.name})")
    else:
        value = float(value)
    try:
        return struct.pack(fmt, value)
    except (struct.error, OverflowError) as e:
        raise ValueError(f"{what}: {value!r} does not fit in {data_type.name} ({e})") from None


def scalar_value(raw: bytes, data_type):
    """The Python value of a by-value scalar's bytes (inverse of scalar_bytes)."""
    data_type = DataType(int(data_type)) if data_type is not None else D.CUDNN_DATA_FLOAT
    if data_type == D.CUDNN_DATA_BFLOAT16:
        (h,) = struct.unpack("<H", raw[:2])
        return struct.unpack("<f", struct.pack("<I", h << 16))[0]
    fmt = _SCALAR_FORMAT.get(data_type)
    if fmt is None:
        return bytes(raw)
    return struct.unpack(fmt, raw[:struct.calcsize(fmt)])[0]


def uid_of(key) -> int:
    """The UID a variant-pack key names: an int, or a tensor descriptor (its unique_id)."""
    if isinstance(key, bool):
        raise TypeError("a variant pack key is a UID (int) or a tensor descriptor, not a bool")
    if isinstance(key, numbers.Integral):
        return int(key)
    if isinstance(key, TensorSpec):
        return key.uid
    if _is_tensor(key):
        uid = getattr(key, "uid", None)
        if uid is None:
            uid = _first(key.get(A.CUDNN_ATTR_TENSOR_UNIQUE_ID, AT.CUDNN_TYPE_INT64))
        return int(uid)
    raise TypeError(f"a variant pack key is a UID (int) or a tensor descriptor, not {type(key).__name__}")


def _spec_text(uid, specs):
    spec = specs.get(uid) if specs else None
    return spec.describe() if spec is not None else f"uid {uid}"


def resolve_slot(uid, spec, value, check_dtype=True):
    """(pointer, scalar bytes, object to keep) for binding ``value`` to ``uid``; raises on every mismatch."""
    what = f"UID {uid}" + (f" ({spec.name})" if spec is not None and spec.name != str(uid) else "")
    if spec is not None and spec.virtual:
        raise ValueError(f"{what} is a virtual tensor ({spec.describe()}): cuDNN keeps it internally; do not bind it")
    if spec is not None and spec.by_value:
        return 0, scalar_bytes(value, spec.data_type, what), None
    r = resolve_buffer(value, what)
    if r.ptr == 0:
        raise ValueError(f"{what}: null device pointer")
    if spec is not None:
        if spec.alignment and r.ptr % spec.alignment:
            raise ValueError(f"{what}: pointer 0x{r.ptr:x} is not aligned to the tensor's byte alignment "
                             f"{spec.alignment} (it is {r.ptr & -r.ptr}-byte aligned)")
        need = spec.nbytes
        if need is not None and r.nbytes is not None and r.nbytes < need:
            raise ValueError(f"{what}: the buffer holds {r.nbytes} bytes but the tensor {spec.describe()} spans "
                             f"{need} bytes")
        if (check_dtype and r.data_type is not None and spec.data_type is not None and r.data_type != spec.data_type
                and r.data_type != D.CUDNN_DATA_UINT8):
            raise ValueError(f"{what}: the buffer holds {r.data_type.name} but the tensor is {spec.data_type.name} "
                             f"(pass check_dtype=False to bind it anyway)")
    return r.ptr, None, r.keep


def prepare_pack(plan, buffers, operation_graph=None, tensors=None, check_dtype=True):
    """Check ``buffers`` against the plan's graph; returns (slots, specs) where slots is a list of
    (uid, pointer, scalar bytes or None, keep, alignment, min bytes, by_value), in UID order."""
    if buffers is None:
        buffers = {}
    if not hasattr(buffers, "items"):
        raise TypeError(f"buffers must be a mapping {{uid or Tensor: buffer}}, not {type(buffers).__name__}")
    specs = tensor_specs(plan, operation_graph, tensors)
    given = {}
    for key, value in buffers.items():
        uid = uid_of(key)
        if uid in given:
            raise ValueError(f"UID {uid} is bound twice")
        given[uid] = value
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
    for uid in order:
        spec = specs.get(uid) if specs else None
        ptr, raw, keep = resolve_slot(uid, spec, given[uid], check_dtype)
        align = spec.alignment if spec is not None and spec.alignment and not spec.by_value else 0
        need = spec.nbytes if spec is not None and not spec.by_value else None
        slots.append((uid, ptr, raw, keep, align or 0, -1 if need is None else need,
                      bool(spec is not None and spec.by_value)))
    return slots, (specs or {})


def resolve_workspace(workspace, needed, what="workspace"):
    """(pointer, capacity or -1, keep, owned) for a workspace argument; allocates when None and needed."""
    if workspace is None:
        if needed and needed > 0:
            buf = memory.allocate_workspace(needed)
            if buf is None:
                return 0, 0, None, False
            return int(buf.ptr), int(buf.nbytes), buf, True
        return 0, 0, None, False
    if isinstance(workspace, numbers.Integral) and not isinstance(workspace, bool) and int(workspace) == 0:
        if needed and needed > 0:
            raise ValueError(f"the plan needs a {needed}-byte workspace; workspace=0 gives none")
        return 0, 0, None, False
    r = resolve_buffer(workspace, what)
    if needed and r.nbytes is not None and r.nbytes < needed:
        raise ValueError(f"the workspace holds {r.nbytes} bytes but the plan needs {needed}")
    return r.ptr, (-1 if r.nbytes is None else r.nbytes), r.keep, False


def variant_pack(plan, buffers, workspace=None, **kwargs) -> VariantPack:
    """``VariantPack(plan, buffers, workspace, **kwargs)``: a checked variant pack for ``plan``."""
    return VariantPack(plan, buffers, workspace, **kwargs)


# ---------------------------------------------------------------------------------------------
# CUDA graphs
# ---------------------------------------------------------------------------------------------
def _rt():
    return memory.cudart()


def graph_node_types(graph) -> Counter:
    """Counter of node type names (e.g. 'cudaGraphNodeTypeKernel') of a CUDA graph, child graphs included."""
    rt = _rt()
    counts = Counter()
    _walk_nodes(rt, graph, counts, depth=0)
    return counts


def _walk_nodes(rt, graph, counts, depth):
    if depth > 32:
        raise RuntimeError("CUDA graph nesting deeper than 32 levels")
    _, n = memory.check(rt.cudaGraphGetNodes(graph, 0), "cudaGraphGetNodes")
    if not n:
        return
    nodes, _ = memory.check(rt.cudaGraphGetNodes(graph, n), "cudaGraphGetNodes")
    child_type = rt.cudaGraphNodeType.cudaGraphNodeTypeGraph
    for node in nodes[:n]:
        if node is None or int(node) == 0:
            continue
        node_type = memory.check(rt.cudaGraphNodeGetType(node), "cudaGraphNodeGetType")
        if node_type == child_type:
            child = memory.check(rt.cudaGraphChildGraphNodeGetGraph(node), "cudaGraphChildGraphNodeGetGraph")
            _walk_nodes(rt, child, counts, depth + 1)
        else:
            counts[getattr(node_type, "name", str(node_type))] += 1


def count_kernel_nodes(graph) -> int:
    """Kernel nodes in a CUDA graph, recursing into child graphs: how many kernels one replay launches."""
    return graph_node_types(graph).get("cudaGraphNodeTypeKernel", 0)


def captured_kernel_count(handle, plan, pack) -> int:
    """Kernels one execute() of ``plan`` launches, by stream capture into a CUDA graph: for any engine
    (the native CUDA graph API needs SUPPORTS_CUDA_GRAPH_NATIVE_API). The handle's stream is restored."""
    rt = _rt()
    stream = memory.check(rt.cudaStreamCreateWithFlags(rt.cudaStreamNonBlocking), "cudaStreamCreateWithFlags")
    old = handle.stream
    graph = None
    try:
        handle.stream = int(stream)
        memory.check(rt.cudaStreamBeginCapture(stream, rt.cudaStreamCaptureMode.cudaStreamCaptureModeThreadLocal),
                     "cudaStreamBeginCapture")
        try:
            execute(handle, plan, pack)
        finally:
            graph = memory.check(rt.cudaStreamEndCapture(stream), "cudaStreamEndCapture")
        return count_kernel_nodes(graph)
    finally:
        handle.stream = old
        if graph is not None:
            rt.cudaGraphDestroy(graph)
        rt.cudaStreamDestroy(stream)


class CudaGraph:
    """A CUDA graph that cuDNN populated for one plan and variant pack, and its executable.

    ``launch(stream)`` replays it (default: the handle's stream); ``update(pack)`` points it at the
    buffers of another pack (cudnnBackendUpdateCudaGraph, then cudaGraphExecUpdate, re-instantiating
    if that fails); ``kernel_count()`` counts its kernel nodes. The packs bound stay alive with it.
    """

    def __init__(self, handle, plan, pack, graph=None, instantiate=True):
        rt = _rt()
        if handle is None:
            handle = plan_handle(plan)
            if handle is None:
                raise ValueError("no cuDNN handle: pass one (the plan was not built with one)")
        self.handle, self.plan, self.pack = handle, plan, pack
        self._rt = rt
        self._exec = None
        self.graph = None
        self._owns_graph = graph is None
        self.graph = populate_cuda_graph(handle, plan, pack, graph)
        if instantiate:
            self.instantiate()

    @property
    def closed(self) -> bool:
        return self.graph is None

    def _need_open(self):
        if self.graph is None:
            raise ValueError("this CudaGraph is closed")

    def instantiate(self):
        """(Re)create the executable graph from the graph."""
        self._need_open()
        self._destroy_exec()
        self._exec = memory.check(self._rt.cudaGraphInstantiate(self.graph, 0), "cudaGraphInstantiate")
        return self._exec

    @property
    def graph_exec(self):
        return self._exec

    def launch(self, stream=None):
        """cudaGraphLaunch on ``stream`` (an int, a CUDA stream object; default: the handle's stream)."""
        self._need_open()
        if self._exec is None:
            self.instantiate()
        s = self.handle.stream if stream is None else _stream_to_int(stream)
        memory.check(self._rt.cudaGraphLaunch(self._exec, s), "cudaGraphLaunch")

    def update(self, pack):
        """Rebind the graph to ``pack``'s buffers (same plan, same UIDs) and update the executable."""
        self._need_open()
        update_cuda_graph(self.handle, self.plan, pack, self.graph)
        self.pack = pack
        if self._exec is not None:
            result = self._rt.cudaGraphExecUpdate(self._exec, self.graph)
            if int(result[0]) != 0:
                self.instantiate()

    def node_types(self) -> Counter:
        self._need_open()
        return graph_node_types(self.graph)

    def kernel_count(self) -> int:
        """Kernel nodes the plan recorded (child graphs included): 1 means cuDNN fused everything into one kernel."""
        self._need_open()
        return count_kernel_nodes(self.graph)

    def _destroy_exec(self):
        e, self._exec = self._exec, None
        if e is not None:
            memory.check(self._rt.cudaGraphExecDestroy(e), "cudaGraphExecDestroy")

    def close(self):
        """Destroy the executable, and the graph if this object created it; idempotent."""
        if self.graph is None:
            return
        try:
            self._destroy_exec()
        finally:
            g, self.graph = self.graph, None
            if self._owns_graph:
                memory.check(self._rt.cudaGraphDestroy(g), "cudaGraphDestroy")

    def __del__(self):
        try:
            self.close()
        except Exception:  # noqa: BLE001 - interpreter shutdown
            pass

    def __enter__(self):
        return self

    def __exit__(self, *exc):
        self.close()

    def __repr__(self):
        state = "closed" if self.graph is None else f"graph 0x{int(self.graph):x}"
        return f"<cudnn_backend.CudaGraph {state}>"

