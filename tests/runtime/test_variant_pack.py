"""Variant packs without a GPU: every check a pack makes before cuDNN sees it, by-value scalars,
rebinding, buffer lifetimes and closing.

cuDNN 9.19 finalizes CUDNN_BACKEND_VARIANT_PACK_DESCRIPTOR without a device (the pointers are not
dereferenced until execute), so packs are built here for real, from plans finalized offline
against the bundled H200 profile, with fake device addresses (aligned ints such as 0x10000) and
fake array objects. Nothing here executes.
"""
import array
import ctypes
import enum
import gc
import itertools
import pathlib
import struct
import sys
import tracemalloc
import weakref

import numpy as np
import pytest

import cudnn_backend as cb
from cudnn_backend import *  # noqa: F403 - the C names
from cudnn_backend._bindings import _loader
from cudnn_backend.core._status import is_available
from cudnn_backend.graph import Graph
from cudnn_backend.runtime import _packing
from cudnn_backend.runtime import execution as ex
from cudnn_backend.runtime import memory
from cudnn_backend.runtime._execute import rebuild_strategy
from cudnn_backend.runtime.execution import TensorSpec, VariantPack, execute
from cudnn_backend.typed import DeviceProp, EngineHeuristics, ExecutionPlan, arrays
from cudnn_backend.typed.introspection import keyword_of

from tests.helpers import dlpack, producers
from tests.helpers import generic_graphs as gg
from tests.helpers.env import needs_sdpa_fwd
from tests.helpers.races import close_race

A16 = 0x10000  # fake device addresses, 64 KiB apart and 16-byte aligned
ADDR = [A16 * (i + 1) for i in range(16)]


def _real_driver() -> bool:
    return _loader.load_cudnn().driver == "cuda"


# ---------------------------------------------------------------------------------------------
# fakes: array-likes that describe device memory without any
# ---------------------------------------------------------------------------------------------
def FakeCudaArray(ptr, shape, typestr="<f2", strides=None):
    """A CUDA array (what cupy/torch/JAX arrays export through DLPack) described like a __cuda_array_interface__:
    a type string and byte strides. (The CUDA array interface itself is read through cuda.core, which asks the
    driver which device holds the pointer: tested on a GPU, tests/gpu/runtime/test_arrays_gpu.py.)"""
    code, bits = {"<f2": (dlpack.FLOAT, 16), "<f4": (dlpack.FLOAT, 32), "|u1": (dlpack.UINT, 8)}[typestr]
    return dlpack.FakeDLPack(ptr, shape, None if strides is None else tuple(s // (bits // 8) for s in strides),
                             code=code, bits=bits)


def FakeCudaDLPack(ptr, shape, code=2, bits=16, device_type=2):
    """A DLPack producer of memory on ``device_type`` (2: CUDA), unversioned."""
    return dlpack.FakeDLPack(ptr, shape, code=code, bits=bits, device_type=device_type)


class FakeTorchCpuTensor:
    """Looks like a torch tensor on the CPU."""

    __module__ = "torch"
    is_cuda = False
    device = "cpu"


class FakeCudaCoreBuffer:
    """Looks like a cuda.core Buffer (``.handle`` device pointer, ``.size`` bytes)."""

    __module__ = "cuda.core._memory._buffer"

    def __init__(self, handle, size, device_accessible=True):
        self.handle, self.size, self.is_device_accessible = handle, size, device_accessible


class FakeWorkspace:
    """What memory.allocate_workspace returns (ptr, nbytes), without cudaMalloc."""

    def __init__(self, nbytes):
        self.ptr, self.nbytes = 0x7770000, nbytes


# ---------------------------------------------------------------------------------------------
# graphs and plans, built offline against the H200 profile
# ---------------------------------------------------------------------------------------------
@pytest.fixture(scope="module")
def dp(h200_profile_json):
    return DeviceProp(json_representation=h200_profile_json).finalize()


def _configs(og, dp, mode=CUDNN_HEUR_MODE_A):
    return EngineHeuristics(operation_graph=og, mode=mode, deviceprop=dp).finalize().get(
        CUDNN_ATTR_ENGINEHEUR_RESULTS, CUDNN_TYPE_BACKEND_DESCRIPTOR)


def _first_plan(og, dp, want_workspace=None):
    for mode in (CUDNN_HEUR_MODE_A, CUDNN_HEUR_MODE_FALLBACK):
        for cfg in _configs(og, dp, mode):
            try:
                plan = ExecutionPlan(engine_config=cfg, deviceprop=dp).finalize()
            except cb.CudnnError:
                continue
            if want_workspace is None or (plan.workspace_size > 0) == want_workspace:
                return plan
    return None


class CBR:
    """conv -> +bias -> ReLU, fp16 NHWC (two virtual intermediates)."""

    def __init__(self, dp, n=2, c=16, h=8, w=8, k=16):
        g = Graph("cbr")
        self.x = g.tensor([n, c, h, w], layout="nhwc", name="x")
        self.w = g.tensor([k, c, 3, 3], layout="nhwc", name="w")
        self.b = g.tensor([1, k, 1, 1], layout="nhwc", name="bias")
        self.conv = g.conv_fwd(self.x, self.w, padding=1, name="conv_out")
        self.biased = g.pointwise("CUDNN_POINTWISE_ADD", self.conv, self.b, name="biased")
        self.y = g.pointwise("CUDNN_POINTWISE_RELU_FWD", self.biased, output=True, name="y")
        self.graph = g
        self.og = g.build()
        self.plan = _first_plan(self.og, dp)
        assert self.plan is not None

    def buffers(self, addrs=ADDR):
        return {self.x: addrs[0], self.w: addrs[1], self.b: addrs[2], self.y: addrs[3]}

    @property
    def uids(self):
        return sorted([self.x.uid, self.w.uid, self.b.uid, self.y.uid])


@pytest.fixture(scope="module")
def cbr(dp):
    return CBR(dp)


class Scaled:
    """conv -> * by-value scalar (fp32) -> output; and a second scalar given a value by the graph."""

    def __init__(self, scalar_type=CUDNN_DATA_FLOAT):
        g = Graph("scaled")
        self.x = g.tensor([2, 16, 8, 8], layout="nhwc", name="x")
        self.w = g.tensor([16, 16, 3, 3], layout="nhwc", name="w")
        conv = g.conv_fwd(self.x, self.w, padding=1, name="conv_out")
        self.alpha = g.tensor([1, 1, 1, 1], [1, 1, 1, 1], scalar_type, by_value=True, name="alpha")
        scaled = g.pointwise("CUDNN_POINTWISE_MUL", conv, self.alpha, name="scaled")
        self.beta = g.scalar(0.25, name="beta")  # a value kept by the graph: bound without being given
        self.y = g.pointwise("CUDNN_POINTWISE_ADD", scaled, self.beta, output=True, name="y")
        self.og = g.build()


@pytest.fixture(scope="module")
def scaled():
    return Scaled()


# ---------------------------------------------------------------------------------------------
# building a pack
# ---------------------------------------------------------------------------------------------
def test_variant_pack_descriptor_finalizes_without_a_gpu(cbr):
    """cuDNN 9.19 finalizes a variant pack with no device: the pack is a real finalized descriptor."""
    pack = VariantPack(cbr.plan, cbr.buffers(), workspace=0)
    assert pack.ptr != 0 and not pack.closed
    assert pack.uids == tuple(cbr.uids)
    assert pack.pointer_uids == tuple(cbr.uids) and pack.scalar_uids == ()
    assert pack.data_pointers == tuple(ADDR[:4][i] for i in np.argsort([cbr.x.uid, cbr.w.uid, cbr.b.uid,
                                                                         cbr.y.uid]))
    assert pack.pointers[cbr.y.uid] == ADDR[3]
    assert pack.workspace == 0 and pack.workspace_nbytes == 0 and pack.workspace_buffer is None
    assert pack.plan is cbr.plan and len(pack) == 4
    assert cbr.x in pack and cbr.y.uid in pack and cbr.conv not in pack and "x" not in pack
    assert f"{cbr.x.uid}=0x{ADDR[0]:x}" in repr(pack)
    assert set(pack.tensors) == {cbr.x.uid, cbr.w.uid, cbr.b.uid, cbr.y.uid, cbr.conv.uid, cbr.biased.uid}


def test_keys_are_uids_or_tensors(cbr):
    by_uid = VariantPack(cbr.plan, {t.uid: a for t, a in cbr.buffers().items()}, workspace=0)
    by_tensor = VariantPack(cbr.plan, cbr.buffers(), workspace=0)
    assert by_uid.pointers == by_tensor.pointers
    assert ex.variant_pack(cbr.plan, cbr.buffers(), workspace=0).pointers == by_uid.pointers


@pytest.mark.parametrize("key", ["x", 1.0, True, None, object()])
def test_bad_keys_are_refused(cbr, key):
    buffers = cbr.buffers()
    buffers[key] = ADDR[5]
    with pytest.raises(TypeError, match="UID"):
        VariantPack(cbr.plan, buffers, workspace=0)


@pytest.mark.parametrize("key", [1 << 63, -(1 << 63) - 1, np.uint64(2 ** 64 - 1)])
def test_keys_past_int64_are_refused_naming_the_uid(key):
    with pytest.raises(ValueError, match=rf"^a variant pack key: UID {int(key)} does not fit in 64 bits"):
        VariantPack(None, {key: ADDR[0]})


def test_same_uid_twice_is_refused(cbr):
    buffers = cbr.buffers()
    buffers[cbr.x.uid] = ADDR[6]
    with pytest.raises(ValueError, match=f"UID {cbr.x.uid} is bound twice"):
        VariantPack(cbr.plan, buffers, workspace=0)


def test_buffers_must_be_a_mapping(cbr):
    with pytest.raises(TypeError, match="mapping"):
        VariantPack(cbr.plan, [ADDR[0], ADDR[1]], workspace=0)


def test_missing_uids_are_named(cbr):
    buffers = cbr.buffers()
    del buffers[cbr.y], buffers[cbr.b]
    with pytest.raises(ValueError) as e:
        VariantPack(cbr.plan, buffers, workspace=0, operation_graph=cbr.og)
    msg = str(e.value)
    assert "missing" in msg and f"{cbr.b.uid}, {cbr.y.uid}" in msg
    assert "bias" in msg and "y (uid" in msg  # the graph's names
    assert str(cbr.x.uid) not in msg.split("missing")[1].split(":")[0]


def test_missing_uids_are_named_from_the_plan_json(cbr):
    """With no graph given and none attached to the plan, the plan's JSON lists the tensors."""
    buffers = cbr.buffers()
    del buffers[cbr.w]
    with pytest.raises(ValueError, match=f"missing buffers for UID\\(s\\) {cbr.w.uid}: "):
        VariantPack(cbr.plan, buffers, workspace=0)


def test_unknown_uids_are_named(cbr):
    buffers = cbr.buffers()
    buffers[999] = ADDR[8]
    buffers[12345] = ADDR[9]
    with pytest.raises(ValueError, match=r"unknown UID\(s\) 999, 12345 \(not in the plan's graph"):
        VariantPack(cbr.plan, buffers, workspace=0)


def test_missing_and_unknown_in_one_message(cbr):
    buffers = cbr.buffers()
    del buffers[cbr.x]
    buffers[4242] = ADDR[8]
    with pytest.raises(ValueError) as e:
        VariantPack(cbr.plan, buffers, workspace=0)
    assert f"missing buffers for UID(s) {cbr.x.uid}" in str(e.value) and "unknown UID(s) 4242" in str(e.value)


@pytest.mark.parametrize("which", ["conv", "biased"])
def test_virtual_tensor_bound_is_refused(cbr, which):
    virtual = getattr(cbr, which)
    buffers = cbr.buffers()
    buffers[virtual] = ADDR[7]
    with pytest.raises(ValueError, match=f"virtual UID\\(s\\) {virtual.uid} bound"):
        VariantPack(cbr.plan, buffers, workspace=0, operation_graph=cbr.og)


@pytest.mark.parametrize("offset,aligned", [(8, 8), (2, 2), (1, 1)])
def test_misaligned_pointer_is_refused(cbr, offset, aligned):
    buffers = cbr.buffers()
    buffers[cbr.w] = ADDR[1] + offset
    with pytest.raises(ValueError, match=f"is not aligned to the tensor's byte alignment 16 \\(it is {aligned}-byte"):
        VariantPack(cbr.plan, buffers, workspace=0)


def test_alignment_follows_the_tensor(dp):
    """A tensor declared 2-byte aligned takes a 2-byte aligned pointer."""
    g = Graph()
    x = g.tensor([2, 16, 8, 8], layout="nhwc", alignment=2, name="x")
    w = g.tensor([16, 16, 3, 3], layout="nhwc", name="w")
    y = g.conv_fwd(x, w, padding=1, output=True, name="y")
    og = g.build()
    pack = VariantPack(None, {x: ADDR[0] + 2, w: ADDR[1], y: ADDR[2]}, operation_graph=og)
    assert pack.pointers[x.uid] == ADDR[0] + 2
    with pytest.raises(ValueError, match="alignment 16"):
        VariantPack(None, {x: ADDR[0], w: ADDR[1] + 2, y: ADDR[2]}, operation_graph=og)


@pytest.mark.parametrize("bad", [0, -16, 1 << 64])
def test_null_negative_or_huge_pointer_is_refused(cbr, bad):
    buffers = cbr.buffers()
    buffers[cbr.x] = bad
    with pytest.raises(ValueError, match="null device pointer|not a valid address"):
        VariantPack(cbr.plan, buffers, workspace=0)


def test_buffer_too_small_is_refused(cbr):
    x_elems = 2 * 16 * 8 * 8
    buffers = cbr.buffers()
    buffers[cbr.x] = FakeCudaArray(ADDR[0], (x_elems - 1,))
    with pytest.raises(ValueError, match=f"holds {2 * (x_elems - 1)} bytes but the tensor .* spans {2 * x_elems} bytes"):
        VariantPack(cbr.plan, buffers, workspace=0)
    buffers[cbr.x] = FakeCudaArray(ADDR[0], (2, 8, 8, 16))  # NHWC-shaped, exactly big enough
    pack = VariantPack(cbr.plan, buffers, workspace=0)
    assert pack.pointers[cbr.x.uid] == ADDR[0]


def test_buffer_size_uses_strides(cbr):
    """A tensor with gaps spans (1 + sum((n - 1) * stride)) elements, not prod(shape); an array describing it
    exactly is bound, and a flat buffer must hold the whole span."""
    x_elems = 2 * 16 * 8 * 8
    buffers = cbr.buffers()
    half = x_elems // 2
    # a 1-D view of every other element is no flat buffer, and not the tensor's layout either
    buffers[cbr.x] = FakeCudaArray(ADDR[0], (half,), "<f2", strides=(4,))
    with pytest.raises(ValueError, match=r"UID 1: the array's shape \[1024\] is not the tensor's dims "
                                         r"\[2, 16, 8, 8\]; the tensor is t1 \(uid 1\) \[2, 16, 8, 8\] strides"):
        VariantPack(cbr.plan, buffers, workspace=0)
    buffers[cbr.x] = FakeCudaArray(ADDR[0], (x_elems - 1,))  # flat, one element short
    with pytest.raises(ValueError, match=f"holds {2 * (x_elems - 1)} bytes but the tensor .* spans {2 * x_elems}"):
        VariantPack(cbr.plan, buffers, workspace=0)


def test_buffer_of_another_data_type_is_refused_unless_asked(cbr):
    buffers = cbr.buffers()
    buffers[cbr.x] = FakeCudaArray(ADDR[0], (4096,), "<f4")
    with pytest.raises(ValueError, match=r"UID 1: the array holds FakeDLPack float32 \(CUDNN_DATA_FLOAT\) but the tensor "
                                         r"is CUDNN_DATA_HALF \(pass check_dtype=False"):
        VariantPack(cbr.plan, buffers, workspace=0)
    VariantPack(cbr.plan, buffers, workspace=0, check_dtype=False)
    buffers[cbr.x] = FakeCudaArray(ADDR[0], (4096,), "|u1")  # raw bytes are always fine
    VariantPack(cbr.plan, buffers, workspace=0)


def test_cuda_dlpack_object(cbr):
    buffers = cbr.buffers()
    buffers[cbr.y] = FakeCudaDLPack(ADDR[3], (2, 8, 8, 16))
    pack = VariantPack(cbr.plan, buffers, workspace=0)
    assert pack.pointers[cbr.y.uid] == ADDR[3] and pack.buffers[cbr.y.uid] is buffers[cbr.y]
    buffers[cbr.y] = FakeCudaDLPack(ADDR[3], (7,))
    with pytest.raises(ValueError, match="holds 14 bytes"):
        VariantPack(cbr.plan, buffers, workspace=0)


def test_cuda_core_like_buffer(cbr):
    buffers = cbr.buffers()
    buffers[cbr.b] = FakeCudaCoreBuffer(ADDR[2], 32)
    assert VariantPack(cbr.plan, buffers, workspace=0).pointers[cbr.b.uid] == ADDR[2]
    buffers[cbr.b] = FakeCudaCoreBuffer(ADDR[2], 31)
    with pytest.raises(ValueError, match="holds 31 bytes"):
        VariantPack(cbr.plan, buffers, workspace=0)
    buffers[cbr.b] = FakeCudaCoreBuffer(ADDR[2], 64, device_accessible=False)
    with pytest.raises(TypeError, match="not device accessible"):
        VariantPack(cbr.plan, buffers, workspace=0)


class _Weird:
    pass


class _CpuOnlyDLPack:
    """DLPack but host memory (a numpy array behind it), and no __array_interface__."""

    def __init__(self):
        self._a = np.zeros(4096, np.float16)

    def __dlpack__(self, stream=None):
        return self._a.__dlpack__()

    def __dlpack_device__(self):
        return self._a.__dlpack_device__()


@pytest.mark.parametrize("buffer,exc,match", [
    (None, TypeError, "got None"),
    (True, TypeError, "bool"),
    ("0x10000", TypeError, "cannot use a str"),
    (65536.0, TypeError, "cannot use a float"),
    ([0x10000], TypeError, "cannot use a list"),
    (_Weird(), TypeError, "cannot use a _Weird"),
    (np.zeros(4096, np.float16), TypeError, r"UID 1: the array \(numpy float16 \[4096\] strides \[1\] on the host\) is "
                                            "host memory; cuDNN needs device memory"),
    (FakeTorchCpuTensor(), TypeError, "cannot use a FakeTorchCpuTensor"),
    (_CpuOnlyDLPack(), TypeError, r"the array \(_CpuOnlyDLPack float16 \[4096\] strides \[1\] on the host\) is host memory"),
    (FakeCudaDLPack(ADDR[0], (4096,), device_type=1), TypeError, "on the host.* is host memory"),
    (FakeCudaDLPack(ADDR[0], (4096,), device_type=3), TypeError, "on the host.* is host memory"),  # pinned host
    (FakeCudaDLPack(ADDR[0], (4096,), device_type=10), TypeError, "DLPack device type 10, neither the host nor"),
    (type("Masked", (), {"__cuda_array_interface__": {
        "shape": (4096,), "typestr": "<f2", "data": (ADDR[0], False), "version": 3, "mask": object()}})(),
     TypeError, "Masked: a masked array with masked elements: cuDNN reads every element"),
    (type("Broken", (), {"__cuda_array_interface__": {"shape": (1,)}})(), TypeError,
     "Broken: its __cuda_array_interface__ typestr None is no type string"),
])
def test_wrong_kinds_of_buffer_objects(cbr, buffer, exc, match):
    buffers = cbr.buffers()
    buffers[cbr.x] = buffer
    with pytest.raises(exc, match=match):
        VariantPack(cbr.plan, buffers, workspace=0)


def test_numpy_integers_are_addresses(cbr):
    buffers = {t: np.int64(a) for t, a in cbr.buffers().items()}
    assert VariantPack(cbr.plan, buffers, workspace=0).pointers[cbr.x.uid] == ADDR[0]


# ---------------------------------------------------------------------------------------------
# by-value scalars
# ---------------------------------------------------------------------------------------------
def test_by_value_scalar_lives_in_the_pack(scaled):
    pack = VariantPack(None, {scaled.x: ADDR[0], scaled.w: ADDR[1], scaled.y: ADDR[2], scaled.alpha: 0.5},
                       operation_graph=scaled.og)
    assert set(pack.scalar_uids) == {scaled.alpha.uid, scaled.beta.uid}
    assert pack.pointer_uids == tuple(sorted([scaled.x.uid, scaled.w.uid, scaled.y.uid]))
    assert pack.scalars == {scaled.alpha.uid: 0.5, scaled.beta.uid: 0.25}  # beta: the graph's value
    host = pack.pointers[scaled.alpha.uid]
    assert ctypes.c_float.from_address(host).value == 0.5  # the host address cuDNN is given
    assert host % 8 == 0
    pack.set_scalar(scaled.alpha, 3)
    assert pack.pointers[scaled.alpha.uid] == host and ctypes.c_float.from_address(host).value == 3.0
    pack.rebind({scaled.beta.uid: np.float32(-1.5)})
    assert pack.scalars[scaled.beta.uid] == -1.5
    assert scaled.alpha.uid not in pack.buffers


def test_by_value_scalar_must_be_given_a_value(scaled):
    with pytest.raises(ValueError, match=f"missing buffers for UID\\(s\\) {scaled.alpha.uid}"):
        VariantPack(None, {scaled.x: ADDR[0], scaled.w: ADDR[1], scaled.y: ADDR[2]}, operation_graph=scaled.og)


@pytest.mark.parametrize("value,exc,match", [
    (FakeCudaArray(ADDR[4], (1,), "<f4"), TypeError, "takes a real number"),
    ("0.5", TypeError, "takes a real number"),
    (1j, TypeError, "takes a real number"),
    (np.zeros(2, np.float32), ValueError, "takes one value, got an array of 2"),
    (b"\x00\x00", ValueError, "2 raw bytes for a CUDNN_DATA_FLOAT scalar of 4 bytes"),
    (1e300, ValueError, "does not fit"),
])
def test_bad_by_value_scalars(scaled, value, exc, match):
    with pytest.raises(exc, match=match):
        VariantPack(None, {scaled.x: ADDR[0], scaled.w: ADDR[1], scaled.y: ADDR[2], scaled.alpha: value},
                    operation_graph=scaled.og)


def test_by_value_scalar_accepts_arrays_of_one_and_raw_bytes(scaled):
    base = {scaled.x: ADDR[0], scaled.w: ADDR[1], scaled.y: ADDR[2]}
    pack = VariantPack(None, {**base, scaled.alpha: np.array([[2.5]], np.float64)}, operation_graph=scaled.og)
    assert pack.scalars[scaled.alpha.uid] == 2.5
    pack = VariantPack(None, {**base, scaled.alpha: struct.pack("<f", 7.0)}, operation_graph=scaled.og)
    assert pack.scalars[scaled.alpha.uid] == 7.0


@pytest.mark.parametrize("dtype,value,raw", [
    (CUDNN_DATA_FLOAT, 0.1, struct.pack("<f", 0.1)),
    (CUDNN_DATA_DOUBLE, 0.1, struct.pack("<d", 0.1)),
    (CUDNN_DATA_HALF, 0.1, struct.pack("<e", 0.1)),
    (CUDNN_DATA_BFLOAT16, 1.0, b"\x80\x3f"),
    (CUDNN_DATA_BFLOAT16, 1.00390625, b"\x80\x3f"),  # halfway: rounds to even
    (CUDNN_DATA_BFLOAT16, 1.01171875, b"\x82\x3f"),  # halfway: rounds to even (up)
    (CUDNN_DATA_INT32, 7, struct.pack("<i", 7)),
    (CUDNN_DATA_INT32, 7.0, struct.pack("<i", 7)),
    (CUDNN_DATA_INT64, -3, struct.pack("<q", -3)),
    (CUDNN_DATA_INT8, -3, struct.pack("<b", -3)),
    (CUDNN_DATA_BOOLEAN, True, b"\x01"),
    # fp8 codes, worked out by hand: E4M3 is s.eeee.mmm (bias 7), E5M2 s.eeeee.mm (bias 15)
    (CUDNN_DATA_FP8_E4M3, 1.0, b"\x38"),
    (CUDNN_DATA_FP8_E4M3, -448.0, b"\xfe"),  # its largest finite value (S.1111.110)
    (CUDNN_DATA_FP8_E4M3, 1.0625, b"\x38"),  # halfway between 1 and 1.125: rounds to the even code
    (CUDNN_DATA_FP8_E4M3, 2.0 ** -9, b"\x01"),  # its smallest subnormal
    (CUDNN_DATA_FP8_E5M2, 1.0, b"\x3c"),
    (CUDNN_DATA_FP8_E5M2, 3.0, b"\x42"),
    (CUDNN_DATA_FP8_E5M2, float("-inf"), b"\xfc"),  # E5M2 has infinities
    (CUDNN_DATA_HALF, 65519.0, b"\xff\x7b"),  # below the midpoint past 65504: rounds to it, as IEEE converts
    (CUDNN_DATA_FP8_E8M0, 2.0 ** -127, b"\x00"),  # E8M0: 2**(code - 127)
    (CUDNN_DATA_FP8_E8M0, 1.0, b"\x7f"),
])
def test_scalar_bytes_per_data_type(dtype, value, raw):
    assert _packing.scalar_bytes(value, dtype) == raw
    back = _packing.scalar_value(raw, dtype)
    assert back == pytest.approx(float(value), rel=2 ** -4)  # (within half a step of E4M3, the coarsest here)


def test_scalar_bytes_refuses_non_integers_and_unknown_types():
    with pytest.raises(ValueError, match="not an integer"):
        _packing.scalar_bytes(2.5, CUDNN_DATA_INT32)
    with pytest.raises(ValueError, match="does not fit"):
        _packing.scalar_bytes(300, CUDNN_DATA_INT8)
    with pytest.raises(TypeError, match="^x: by-value scalars of CUDNN_DATA_INT8x4 are not supported; pass the raw "
                                        "bytes$"):
        _packing.scalar_bytes(1.0, CUDNN_DATA_INT8x4, "x")
    assert _packing.scalar_bytes(b"\x38", CUDNN_DATA_FP8_E4M3) == b"\x38"


@pytest.mark.parametrize("dtype,value,match", [
    (CUDNN_DATA_FP8_E4M3, 500.0, r"^x: 500.0 does not fit in CUDNN_DATA_FP8_E4M3 \(its finite values are -448 to "
                                 r"448\)$"),
    (CUDNN_DATA_FP8_E5M2, -6e4, r"^x: -60000.0 does not fit in CUDNN_DATA_FP8_E5M2 \(its finite values are -57344 to "),
    (CUDNN_DATA_FP8_E4M3, float("inf"), r"^x: inf does not fit in CUDNN_DATA_FP8_E4M3: it has no infinity$"),
    # past bfloat16's largest finite value (3.3895e38), below float32's: it would round to infinity
    (CUDNN_DATA_BFLOAT16, 3.4e38, r"^x: 3.4e\+38 does not fit in CUDNN_DATA_BFLOAT16 \(it rounds to infinity\)$"),
    (CUDNN_DATA_BFLOAT16, -1e39, r"^x: -1e\+39 does not fit in CUDNN_DATA_BFLOAT16 \(it rounds to infinity\)$"),
    (CUDNN_DATA_HALF, 65520, r"^x: 65520 does not fit in CUDNN_DATA_HALF \(it rounds to infinity; its largest finite "
                             r"value is 65504\)$"),
])
def test_float_scalars_beyond_their_type_are_refused_not_saturated(dtype, value, match):
    """arrays.encode saturates (fp8) or rounds to infinity (bfloat16) as the GPU converts arrays; a scalar given out
    of range is the caller's mistake."""
    with pytest.raises(ValueError, match=match):
        _packing.scalar_bytes(value, dtype, "x")


def test_every_type_with_a_host_encoding_takes_a_number_and_graph_scalar_no_other():
    """The types a by-value scalar is encoded in (variant packs) and those Graph.scalar takes a value for are one set:
    arrays.storage_dtype's."""
    for member in cb.DataType:
        try:
            arrays.storage_dtype(member)
        except TypeError:
            with pytest.raises(TypeError, match="pass the raw bytes"):
                _packing.scalar_bytes(1, member, "x")
            with pytest.raises(TypeError, match=rf"^one: a by-value {member.name} scalar has no encoding for a value: "
                                                r"make it without one \(value=None\)"):
                Graph().scalar(1.0, member, name="one")
            continue
        value = True if member in arrays.BOOLEAN_TYPES else 1
        assert _packing.scalar_value(_packing.scalar_bytes(value, member, "x"), member) == value
        if is_available(member.name):
            Graph().scalar(value, member)


@pytest.mark.parametrize("dtype,value,raw", [(CUDNN_DATA_FP8_E4M3, 0.5, b"\x30"), (CUDNN_DATA_FP8_E5M2, 0.5, b"\x38")])
def test_a_graph_fp8_scalar_is_bound_by_every_pack(dtype, value, raw):
    g = Graph("fp8 scalar")
    x = g.tensor([1, 1, 4, 4], name="x")
    s = g.scalar(value, dtype, name="s")
    y = g.pointwise("CUDNN_POINTWISE_MUL", x, s, output=True, name="y")
    pack = VariantPack(None, {x: ADDR[0], y: ADDR[1]}, operation_graph=g.build())
    assert ctypes.string_at(pack.pointers[s.uid], 1) == raw and pack.scalars[s.uid] == value
    pack.set_scalar(s, -2.0)
    assert pack.scalars[s.uid] == -2.0


def test_half_scalar_in_a_pack():
    s = Scaled(CUDNN_DATA_HALF)
    pack = VariantPack(None, {s.x: ADDR[0], s.w: ADDR[1], s.y: ADDR[2], s.alpha: 0.5}, operation_graph=s.og)
    host = pack.pointers[s.alpha.uid]
    assert ctypes.string_at(host, 2) == struct.pack("<e", 0.5)


# ---------------------------------------------------------------------------------------------
# rebinding
# ---------------------------------------------------------------------------------------------
def test_rebind_mapping_checks_like_the_constructor(cbr):
    pack = VariantPack(cbr.plan, cbr.buffers(), workspace=0, operation_graph=cbr.og)
    before = pack.pointers
    with pytest.raises(ValueError, match=r"unknown UID\(s\) 777"):
        pack.rebind({777: ADDR[9]})
    with pytest.raises(ValueError, match="virtual"):
        pack.rebind({cbr.conv: ADDR[9]})
    with pytest.raises(ValueError, match="not aligned"):
        pack.rebind({cbr.x: ADDR[9], cbr.y: ADDR[9] + 4})
    with pytest.raises(ValueError, match="holds 2 bytes"):
        pack.rebind({cbr.y: FakeCudaArray(ADDR[9], (1,))})
    with pytest.raises(TypeError):
        pack.rebind({cbr.y: "nope"})
    assert pack.pointers == before  # nothing half-applied
    assert pack.rebind({cbr.x: ADDR[10]}) is pack
    assert pack.pointers[cbr.x.uid] == ADDR[10] and pack.pointers[cbr.y.uid] == before[cbr.y.uid]


@pytest.mark.parametrize("strategy", ["reinitialize", "recreate"])
def test_positional_rebind(cbr, strategy):
    old = rebuild_strategy(strategy)
    try:
        pack = VariantPack(cbr.plan, cbr.buffers(), workspace=0)
        n = len(pack.pointer_uids)
        for pointers in (tuple(ADDR[4:4 + n]), list(ADDR[5:5 + n]), array.array("q", ADDR[6:6 + n]),
                         array.array("Q", ADDR[7:7 + n]), np.array(ADDR[8:8 + n], np.int64),
                         np.array(ADDR[9:9 + n], np.uint64), (np.int64(ADDR[3]),) + tuple(ADDR[4:3 + n])):
            pack.rebind_pointers(pointers)
            assert pack.data_pointers == tuple(int(p) for p in pointers)
            assert pack.ptr != 0
        assert pack.rebind(tuple(ADDR[:n])).data_pointers == tuple(ADDR[:n])
    finally:
        rebuild_strategy(old)


def test_rebuild_strategy_names():
    assert rebuild_strategy() in ("reinitialize", "recreate")
    with pytest.raises(ValueError, match="reinitialize, recreate"):
        rebuild_strategy("fresh")


@pytest.mark.parametrize("pointers,exc,match", [
    ((ADDR[0], ADDR[1], ADDR[2]), ValueError, "3 pointers given; this pack binds 4 device pointers"),
    (tuple(ADDR[:5]), ValueError, "5 pointers given"),
    ((ADDR[0] + 8, ADDR[1], ADDR[2], ADDR[3]), ValueError, "not aligned"),
    ((0, ADDR[1], ADDR[2], ADDR[3]), ValueError, "null device pointer"),
    ((-16, ADDR[1], ADDR[2], ADDR[3]), ValueError, "not a valid address"),
    ((True, ADDR[1], ADDR[2], ADDR[3]), TypeError, "bool"),
    (np.array(ADDR[:4], np.int32), TypeError, "64-bit integers"),
    (np.array(ADDR[:4], np.float64), TypeError, "64-bit integers"),
    (array.array("q", ADDR[:3]), ValueError, "3 pointers given"),
    (b"\x00" * 32, TypeError, "64-bit integers"),
    (12345, TypeError, "pointers must be"),
    (np.array([-16] + ADDR[1:4], np.int64), ValueError, "-16 is not a valid address"),
    (((1 << 64) - 256,) + tuple(ADDR[1:4]), ValueError, r"^UID \d+ \(\w+\): pointer 0xffffffffffffff00 plus the 4096 "
                                                        r"bytes the tensor spans passes the end of the 64-bit address "
                                                        r"space$"),
    (np.array([(1 << 64) - 256] + ADDR[1:4], np.uint64), ValueError, "passes the end of the 64-bit address space"),
    (np.array(ADDR[:4], np.int64).reshape(2, 2), TypeError, "one row of 4 pointers, not a 2-d array"),
    (np.array(ADDR[:8], np.int64)[::2], TypeError, r"^pointers: the ndarray gives no contiguous buffer of 64-bit "
                                                   r"integers \(ndarray is not C-contiguous\); pass a contiguous copy$"),
    (set(ADDR[:4]), TypeError, r"^pointers: a set is a set or a mapping, not a sequence in the caller's order \(they "
                               r"bind in pointer_uids order: \d+, \d+, \d+, \d+\); pass a list or tuple$"),
    (frozenset(ADDR[:4]), TypeError, r"^pointers: a frozenset is a set or a mapping"),
    ({a: None for a in ADDR[:4]}.keys(), TypeError, r"^pointers: a dict_keys is a set or a mapping"),
])
def test_positional_rebind_errors_leave_the_pack_unchanged(cbr, pointers, exc, match):
    pack = VariantPack(cbr.plan, cbr.buffers(), workspace=0)
    before = pack.data_pointers
    with pytest.raises(exc, match=match):
        pack.rebind_pointers(pointers)
    assert pack.data_pointers == before


class _ClosesThePack(dlpack.FakeDLPack):
    """A producer whose export closes the pack reading it (as another thread's close() may, meanwhile)."""
    pack = None

    def __dlpack__(self, stream=None, **kwargs):
        if _ClosesThePack.pack is not None:
            _ClosesThePack.pack.close()
        return super().__dlpack__(stream, **kwargs)


@pytest.mark.parametrize("how", ["mapping", "positional"])
def test_a_pack_closed_while_a_rebind_reads_its_buffers_refuses_the_rebind(cbr, how):
    pack = _ClosesThePack.pack = VariantPack(cbr.plan, cbr.buffers(), workspace=0)
    closer = _ClosesThePack(ADDR[5], (4096,))
    with pytest.raises(ValueError, match="closed"):
        if how == "mapping":
            pack.rebind({cbr.x: closer})
        else:
            pack.rebind((closer,) + tuple(ADDR[1:len(pack.pointer_uids)]))
    assert pack.closed and pack.pointers == {}


def test_a_pack_closed_while_a_plan_change_reads_its_buffers_refuses_the_plan(cbr, dp):
    """Adopting another plan reads the kept buffers (their sizes): the pack closed meanwhile runs nothing."""
    closer = _ClosesThePack(ADDR[5], (4096,))
    buffers = cbr.buffers()
    buffers[cbr.x] = closer
    _ClosesThePack.pack = None
    pack = VariantPack(None, {k.uid if hasattr(k, "uid") else k: v for k, v in buffers.items()}, workspace=0)
    _ClosesThePack.pack = pack
    with pytest.raises(ValueError, match="closed"):
        pack.check_plan(cbr.plan)
    assert pack.closed


def test_positional_rebind_with_buffer_objects_keeps_them(cbr):
    pack = VariantPack(cbr.plan, cbr.buffers(), workspace=0)
    arrs = [FakeCudaArray(a, (4096,)) for a in ADDR[4:8]]
    pack.rebind_pointers(tuple(arrs))
    assert pack.data_pointers == tuple(ADDR[4:8])
    assert [pack.buffers[u] for u in pack.pointer_uids] == arrs
    with pytest.raises(ValueError, match="holds 2 bytes"):
        pack.rebind_pointers((FakeCudaArray(ADDR[0], (1,)),) + tuple(ADDR[1:4]))


def _peak_bytes_allocated(fn, n):
    """Peak bytes allocated by Python while ``fn(n)`` runs (tracemalloc): per-call objects would show."""
    fn(10)
    tracemalloc.start()
    try:
        fn(10)
        tracemalloc.reset_peak()
        start = tracemalloc.get_traced_memory()[0]
        fn(n)
        return tracemalloc.get_traced_memory()[1] - start
    finally:
        tracemalloc.stop()


def test_positional_rebind_creates_no_python_objects(cbr):
    """The tuple-of-ints and int64-buffer paths (bind_and_execute's) allocate nothing per call; the
    mapping path, for comparison, does."""
    pack = VariantPack(cbr.plan, cbr.buffers(), workspace=0)
    n = len(pack.pointer_uids)
    a, b = tuple(ADDR[:n]), tuple(ADDR[4:4 + n])
    buf = array.array("q", ADDR[8:8 + n])
    mapping = {cbr.x: ADDR[12]}

    def tuples(k):
        for _ in itertools.repeat(None, k):
            pack.rebind_pointers(a)
            pack.rebind_pointers(b)

    def buffers(k):
        for _ in itertools.repeat(None, k):
            pack.rebind_pointers(buf)

    def mappings(k):
        for _ in itertools.repeat(None, k):
            pack.rebind(mapping)

    assert _peak_bytes_allocated(tuples, 2000) < 256
    assert _peak_bytes_allocated(buffers, 2000) < 256
    assert _peak_bytes_allocated(mappings, 200) > 512


def test_rebind_workspace(cbr):
    pack = VariantPack(cbr.plan, cbr.buffers(), workspace=0)
    pack.rebind(workspace=ADDR[12])
    assert pack.workspace == ADDR[12] and pack.workspace_nbytes is None
    pack.rebind(workspace=FakeCudaArray(ADDR[13], (256,), "|u1"))
    assert pack.workspace == ADDR[13] and pack.workspace_nbytes == 256
    pack.rebind(workspace=0)
    assert pack.workspace == 0


# ---------------------------------------------------------------------------------------------
# lifetimes and closing
# ---------------------------------------------------------------------------------------------
def test_pack_keeps_its_buffers_alive(cbr):
    x = FakeCudaArray(ADDR[0], (2, 8, 8, 16))
    y = FakeCudaDLPack(ADDR[3], (2, 8, 8, 16))
    wx, wy = weakref.ref(x), weakref.ref(y)
    buffers = cbr.buffers()
    buffers[cbr.x], buffers[cbr.y] = x, y
    pack = VariantPack(cbr.plan, buffers, workspace=0)
    del x, y, buffers
    gc.collect()
    assert wx() is not None and wy() is not None
    assert pack.buffers[cbr.x.uid] is wx()
    pack.rebind({cbr.x: ADDR[9]})  # rebound to a plain int: the old buffer is let go
    gc.collect()
    assert wx() is None and wy() is not None
    del pack
    gc.collect()
    assert wy() is None


def test_close_releases_buffers_and_is_idempotent(cbr):
    x = FakeCudaArray(ADDR[0], (2, 8, 8, 16))
    wx = weakref.ref(x)
    buffers = cbr.buffers()
    buffers[cbr.x] = x
    pack = VariantPack(cbr.plan, buffers, workspace=0)
    del x, buffers
    pack.close()
    gc.collect()
    assert wx() is None and pack.closed
    pack.close()
    assert repr(pack) == "<cudnn_backend.VariantPack closed>"
    assert pack.uids == () and pack.pointers == {}
    for call in (lambda: pack.rebind({cbr.x: ADDR[0]}), lambda: pack.rebind_pointers(tuple(ADDR[:4])),
                 lambda: execute(None, cbr.plan, pack), lambda: pack.bind_and_execute(None, cbr.plan, ()),
                 lambda: pack.set_scalar(1, 1.0), lambda: pack.check_plan(cbr.plan),
                 lambda: ex.populate_cuda_graph(None, cbr.plan, pack, 0x1000)):
        with pytest.raises(ValueError, match="closed"):
            call()
    with VariantPack(cbr.plan, cbr.buffers(), workspace=0) as p2:
        assert not p2.closed
    assert p2.closed


def test_pack_outlives_its_plan_and_graph(dp):
    """The pack holds the plan it was checked against; dropping the caller's references is fine."""
    c = CBR(dp)
    pack = VariantPack(c.plan, c.buffers(), workspace=0)
    wplan = weakref.ref(c.plan)
    del c
    gc.collect()
    assert wplan() is not None and pack.plan is wplan()


# ---------------------------------------------------------------------------------------------
# read-only arrays: never bound where cuDNN writes
# ---------------------------------------------------------------------------------------------
def ReadOnlyArray(ptr, tensor):
    """A versioned DLPack export flagged read-only (DLPACK_FLAG_BITMASK_READ_ONLY) of an fp16 NHWC tensor's memory
    (an (N, H, W, C) array)."""
    n, c, h, w = _packing.tensor_spec(tensor).dims
    return dlpack.FakeDLPack(ptr, (n, h, w, c), versioned=True, readonly=True)


def test_the_written_uids_come_from_the_graph_or_the_plan_json(cbr):
    assert _packing.written_uids(operation_graph=cbr.og) == {cbr.y.uid}
    assert not hasattr(cbr.plan, "operation_graph")  # a bare ExecutionPlan: its JSON's nodes say what they write
    assert _packing.written_uids(cbr.plan) == {cbr.y.uid}
    assert _packing.written_uids() is None


@pytest.mark.parametrize("graph_from", ["operation graph", "plan JSON"])
def test_a_read_only_array_is_refused_where_the_plan_writes(cbr, graph_from):
    og = cbr.og if graph_from == "operation graph" else None
    label = rf"UID {cbr.y.uid} \(y\)" if og is not None else f"UID {cbr.y.uid}"  # (plan JSON names no tensor)
    with pytest.raises(ValueError, match=rf"^{label}: the array \(FakeDLPack float16 \[2, 8, 8, 16\] "
                                         r"strides \[1024, 128, 16, 1\] on cuda:0\) is read-only, but the plan writes "
                                         r"this tensor: cuDNN would write memory its owner declared immutable; bind a "
                                         r"writable array$"):
        VariantPack(cbr.plan, {**cbr.buffers(), cbr.y: ReadOnlyArray(ADDR[3], cbr.y)}, workspace=0,
                    operation_graph=og)
    pack = VariantPack(cbr.plan, {**cbr.buffers(), cbr.x: ReadOnlyArray(ADDR[0], cbr.x)}, workspace=0,
                       operation_graph=og)  # only read: bound
    assert pack.pointers[cbr.x.uid] == ADDR[0]


def test_a_jax_array_is_refused_where_the_plan_writes(cbr):
    n, c, h, w = _packing.tensor_spec(cbr.y).dims
    jax_y = producers.JaxArray(ADDR[3], (n, h, w, c), np.float16)
    with pytest.raises(ValueError, match=rf"^UID {cbr.y.uid} \(y\): the array \(JAX float16 .*\) is read-only"):
        VariantPack(cbr.plan, {**cbr.buffers(), cbr.y: jax_y}, workspace=0, operation_graph=cbr.og)
    pack = VariantPack(cbr.plan, {**cbr.buffers(), cbr.x: producers.JaxArray(ADDR[0], (n, h, w, c), np.float16)},
                       workspace=0, operation_graph=cbr.og)
    assert pack.pointers[cbr.x.uid] == ADDR[0]


def test_every_rebinding_path_refuses_a_read_only_array_where_the_plan_writes(cbr):
    pack = VariantPack(cbr.plan, cbr.buffers(), workspace=0)
    before = pack.pointers
    read_only = ReadOnlyArray(ADDR[9], cbr.y)
    positional = tuple(read_only if u == cbr.y.uid else before[u] for u in pack.pointer_uids)
    refusal = rf"^UID {cbr.y.uid}: the array .* is read-only, but the plan writes this tensor"
    with pytest.raises(ValueError, match=refusal):
        pack.rebind({cbr.y: read_only})
    with pytest.raises(ValueError, match=refusal):
        pack.rebind_pointers(positional)
    with pytest.raises(ValueError, match=refusal):
        pack.bind_and_execute(None, cbr.plan, positional)  # refused before anything runs
    with pytest.raises(ValueError, match=refusal):
        execute(None, cbr.plan, {**cbr.buffers(), cbr.y: read_only}, workspace=0)
    assert pack.pointers == before
    pack.rebind({cbr.y: ADDR[9], cbr.x: ReadOnlyArray(ADDR[8], cbr.x)})  # an address says nothing; x is only read
    assert pack.pointers[cbr.y.uid] == ADDR[9] and pack.pointers[cbr.x.uid] == ADDR[8]


def test_a_plan_that_writes_a_kept_read_only_array_is_refused(cbr):
    """A pack bound without knowing the graph's roles (``tensors=``) learns them from the first plan it runs: an
    array kept for a tensor that plan writes must be writable."""
    tensors = [cbr.x, cbr.w, cbr.b, cbr.y]
    pack = VariantPack(None, {**cbr.buffers(), cbr.y: ReadOnlyArray(ADDR[3], cbr.y)}, tensors=tensors)
    with pytest.raises(ValueError, match=rf"^UID {cbr.y.uid} \(y\): the array .* is read-only, but the plan writes"):
        pack.check_plan(cbr.plan)
    assert pack.plan is None
    writable = VariantPack(None, cbr.buffers(), tensors=tensors)
    assert writable.check_plan(cbr.plan).plan is cbr.plan
    with pytest.raises(ValueError, match="is read-only"):  # and the plan's roles check what is bound from then on
        writable.rebind({cbr.y: ReadOnlyArray(ADDR[3], cbr.y)})


# ---------------------------------------------------------------------------------------------
# workspaces
# ---------------------------------------------------------------------------------------------
@pytest.fixture(scope="module")
def ws_case(dp):
    """A conv whose chosen plan needs a workspace."""
    g = Graph()
    x = g.tensor([8, 64, 56, 56], layout="nhwc", name="x")
    w = g.tensor([32, 64, 3, 3], layout="nhwc", name="w")
    b = g.tensor([1, 32, 1, 1], layout="nhwc", name="bias")
    y = g.pointwise("CUDNN_POINTWISE_RELU_FWD", g.pointwise("CUDNN_POINTWISE_ADD", g.conv_fwd(x, w, padding=1), b),
                    output=True, name="y")
    og = g.build()
    plan = _first_plan(og, dp, want_workspace=True)
    if plan is None:
        pytest.skip("no plan with a workspace among the H200 configs")
    return plan, {x: ADDR[0], w: ADDR[1], b: ADDR[2], y: ADDR[3]}


def test_workspace_is_allocated_when_needed_and_freed_with_the_pack(ws_case, monkeypatch):
    plan, buffers = ws_case
    asked = []

    def fake_allocate(nbytes):
        asked.append(nbytes)
        return FakeWorkspace(nbytes)

    monkeypatch.setattr(memory, "allocate_workspace", fake_allocate)
    pack = VariantPack(plan, buffers)
    assert asked == [plan.workspace_size] and pack.owns_workspace
    assert pack.workspace == 0x7770000 and pack.workspace_nbytes == plan.workspace_size
    wws = weakref.ref(pack.workspace_buffer)
    del pack
    gc.collect()
    assert wws() is None


def test_workspace_given_is_checked(ws_case):
    plan, buffers = ws_case
    need = plan.workspace_size
    pack = VariantPack(plan, buffers, workspace=ADDR[10])
    assert pack.workspace == ADDR[10] and not pack.owns_workspace
    pack = VariantPack(plan, buffers, workspace=FakeCudaArray(ADDR[10], (need,), "|u1"))
    assert pack.workspace_nbytes == need
    with pytest.raises(ValueError, match=f"the workspace holds {need - 1} bytes but the plan needs {need}"):
        VariantPack(plan, buffers, workspace=FakeCudaArray(ADDR[10], (need - 1,), "|u1"))
    with pytest.raises(ValueError, match=f"needs a {need}-byte workspace; workspace=0 gives none"):
        VariantPack(plan, buffers, workspace=0)
    with pytest.raises(TypeError):
        VariantPack(plan, buffers, workspace="big")


@pytest.mark.skipif(_real_driver(), reason="allocates for real on a GPU machine")
def test_workspace_allocation_without_a_gpu_is_a_clear_error(ws_case):
    plan, buffers = ws_case  # built offline (device_profile=): no handle, no GPU to allocate its workspace on
    need = plan.workspace_size
    with pytest.raises(cb.NoDeviceError, match=rf"^workspace: the plan needs a {need}-byte workspace, and none can "
                                               r"be allocated here: no GPU is visible \(driver: stand-in\); pass "
                                               rf"workspace= \(device memory of at least {need} bytes"):
        VariantPack(plan, buffers)
    assert VariantPack(plan, buffers, workspace=ADDR[10]).workspace == ADDR[10]


def test_no_workspace_needed_means_none(cbr):
    if cbr.plan.workspace_size:
        pytest.skip("this config needs a workspace")
    pack = VariantPack(cbr.plan, cbr.buffers())
    assert pack.workspace == 0 and pack.workspace_buffer is None and not pack.owns_workspace


def test_memory_without_a_device():
    assert memory.allocate_workspace(0) is None
    empty = memory.DeviceBuffer(0)
    assert empty.ptr == 0 and empty.nbytes == 0 and not empty.closed
    empty.close()
    assert empty.closed
    with pytest.raises(ValueError, match="closed"):
        empty.ptr
    with pytest.raises(ValueError):
        memory.DeviceBuffer(-1)
    assert memory.check((0, 5), "x") == 5 and memory.check((0,), "x") is None and memory.check((0, 1, 2), "x") == (1, 2)


@pytest.mark.skipif(_real_driver(), reason="allocates for real on a GPU machine")
def test_device_buffer_without_a_gpu_is_a_clear_error():
    with pytest.raises((ImportError, memory.CudaError), match="cuda-bindings|no CUDA GPU is visible"):
        memory.DeviceBuffer(256)


# ---------------------------------------------------------------------------------------------
# plans: which graph, which plan
# ---------------------------------------------------------------------------------------------
def test_tensor_specs_from_json_match_the_graph(cbr):
    from_json = _packing.plan_json_tensor_specs(cbr.plan)
    from_graph = _packing.graph_tensor_specs(cbr.og)
    assert set(from_json) == set(from_graph)
    for uid, s in from_graph.items():
        j = from_json[uid]
        assert (j.dims, j.strides, j.data_type, j.virtual, j.by_value) == (s.dims, s.strides, s.data_type, s.virtual,
                                                                          s.by_value)
        assert j.alignment == s.alignment == 16
    assert from_graph[cbr.x.uid].name == "x" and from_graph[cbr.x.uid].nbytes == 2 * 2 * 16 * 8 * 8


def test_tensor_spec_nbytes():
    def spec(dims, strides, dt):
        return TensorSpec(1, "t", tuple(dims), tuple(strides), dt)

    assert spec([2, 3], [3, 1], CUDNN_DATA_HALF).nbytes == 12
    assert spec([2, 3], [1, 2], CUDNN_DATA_FLOAT).nbytes == 24
    assert spec([4, 1, 1], [8, 1, 1], CUDNN_DATA_FLOAT).nbytes == (1 + 3 * 8) * 4  # gaps count
    assert spec([3, 0], [1, 1], CUDNN_DATA_FLOAT).nbytes == 0
    assert spec([5], [1], CUDNN_DATA_FP4_E2M1).nbytes == 3
    assert spec([5], [1], CUDNN_DATA_INT8x4).nbytes is None  # vectorized: unknown, not checked
    assert TensorSpec(1, "t", (4,), (1,), CUDNN_DATA_INT8, vector_count=4).nbytes is None


def test_generic_descriptors_plan_and_graph(h200_profile_json):
    """Graphs and plans made through the generic Descriptor with C names work the same."""
    graph = gg.notebook_conv_graph()
    plan = gg.offline_plan(graph, gg.device_prop(h200_profile_json))
    pack = VariantPack(plan, {1: ADDR[0], 2: ADDR[1], 3: ADDR[2]}, workspace=ADDR[3])
    assert pack.uids == (1, 2, 3)
    with pytest.raises(ValueError, match=r"missing buffers for UID\(s\) 3"):
        VariantPack(plan, {1: ADDR[0], 2: ADDR[1]}, workspace=ADDR[3], operation_graph=graph)
    with pytest.raises(ValueError, match="not aligned"):  # the alignment comes from the plan's JSON
        VariantPack(plan, {1: ADDR[0] + 4, 2: ADDR[1], 3: ADDR[2]}, workspace=ADDR[3])


def test_no_graph_known_takes_the_uids_as_given(cbr):
    pack = VariantPack(None, {5: ADDR[0], 9: ADDR[1]})
    assert pack.uids == (5, 9) and pack.tensors == {}
    with pytest.raises(ValueError, match="does not fit the plan"):  # but a plan checks it when used
        pack.check_plan(cbr.plan)


def test_explicit_tensors(cbr):
    pack = VariantPack(None, cbr.buffers(), tensors=[cbr.x, cbr.w, cbr.b, cbr.y])
    assert pack.uids == tuple(cbr.uids)
    with pytest.raises(ValueError, match="missing"):
        VariantPack(None, {cbr.x: ADDR[0]}, tensors={cbr.x.uid: cbr.x, cbr.y.uid: cbr.y})


def test_check_plan_against_another_plan(cbr, dp):
    pack = VariantPack(cbr.plan, cbr.buffers(), workspace=0)
    same_graph = [p for p in (_first_plan(cbr.og, dp),) if p is not None][0]
    assert pack.check_plan(same_graph) is pack and pack.plan is same_graph
    g = Graph()
    x = g.tensor([2, 16, 8, 8], layout="nhwc", name="x")
    w = g.tensor([16, 16, 3, 3], layout="nhwc", name="w")
    g.conv_fwd(x, w, padding=1, output=True, name="y")
    other = _first_plan(g.build(), dp)
    with pytest.raises(ValueError, match=r"does not fit the plan: .*UID\(s\)"):
        pack.check_plan(other)
    assert pack.plan is same_graph
    # a closed plan fits nothing, the pack's own included; the pack itself stays usable with another
    same_graph.close()
    with pytest.raises(cb.CudnnUnsafeCallError, match=r"^plan: the execution plan is closed$"):
        pack.check_plan(same_graph)
    pack.rebind({cbr.x: ADDR[3]}, workspace=None)  # (binding needs no plan)
    assert pack.check_plan(cbr.plan).plan is cbr.plan


def test_another_plan_on_the_same_uids_must_have_the_same_tensors(cbr, dp):
    # the same UIDs, 4x larger tensors: the pack's buffers were checked against the smaller ones
    larger = CBR(dp, n=8)
    assert larger.uids == cbr.uids
    pack = VariantPack(cbr.plan, cbr.buffers(), workspace=0)
    for adopt in (lambda: pack.check_plan(larger.plan), lambda: pack.execute(None, larger.plan)):  # (no GPU needed:
        # the plan is checked before the handle)
        with pytest.raises(ValueError, match=r"^this variant pack: not this plan's graph: its tensor t1 \(uid 1\) "
                                             r"\[2, 16, 8, 8\].* is t1 \(uid 1\) \[8, 16, 8, 8\].* in the plan"):
            adopt()
        assert pack.plan is cbr.plan
    # a pack that knows no graph: the buffers it keeps must hold the plan's tensors, and later rebinds are checked
    sizes = {uid: spec.nbytes for uid, spec in ex.tensor_specs(cbr.plan).items() if not spec.virtual}
    blind = VariantPack(None, {uid: FakeCudaCoreBuffer(ADDR[i], sizes[uid]) for i, uid in enumerate(cbr.uids)},
                        workspace=0)
    with pytest.raises(ValueError, match=r"^this variant pack does not fit the plan: UID 1: the bound buffer "
                                         r"holds 4096 bytes, the plan's tensor .*\[8, 16, 8, 8\].* spans 16384"):
        blind.check_plan(larger.plan)
    assert blind.check_plan(cbr.plan).plan is cbr.plan
    with pytest.raises(ValueError, match="holds 16 bytes"):
        blind.rebind({cbr.x.uid: FakeCudaCoreBuffer(ADDR[0], 16)})


def test_plan_objects_are_found_inside_wrappers(cbr):
    class PlanLike:
        def __init__(self, plan, og):
            self.descriptor, self.operation_graph, self.workspace_size, self.handle = plan, og, 0, None

    wrapped = PlanLike(cbr.plan, cbr.og)
    assert ex.plan_descriptor(wrapped) is cbr.plan
    buffers = cbr.buffers()
    del buffers[cbr.b]
    with pytest.raises(ValueError, match="bias"):  # names from the wrapper's graph
        VariantPack(wrapped, buffers)
    with pytest.raises(TypeError, match=r"plan: a \w+ is no execution plan"):
        VariantPack(object(), cbr.buffers())
    with pytest.raises(TypeError, match=r"plan: a \w+ is no execution plan"):
        VariantPack(cbr.og, cbr.buffers())


def test_plans_module_plan_knows_its_graph(dp):
    heuristics = pytest.importorskip("cudnn_backend.runtime.heuristics")
    plans = pytest.importorskip("cudnn_backend.runtime.plans")
    c = CBR(dp)
    cfg = heuristics.get_configs(c.og, "A", dp)[0]
    plan = plans.build_plan(cfg, device_profile=dp)
    assert plan.operation_graph is c.og
    buffers = c.buffers()
    del buffers[c.y]
    with pytest.raises(ValueError, match="y \\(uid"):
        VariantPack(plan, buffers, workspace=0)


# ---------------------------------------------------------------------------------------------
# execution entry points refuse before cuDNN when they cannot run
# ---------------------------------------------------------------------------------------------
def test_execute_without_a_handle_is_refused_before_cudnn(cbr):
    pack = VariantPack(cbr.plan, cbr.buffers(), workspace=0)
    with pytest.raises(ValueError, match="no cuDNN handle"):
        execute(None, cbr.plan, pack)
    with pytest.raises(ValueError, match="no cuDNN handle"):
        pack.execute()
    with pytest.raises(ValueError, match="no cuDNN handle"):
        execute(None, cbr.plan, cbr.buffers(), workspace=0)  # a mapping is packed first
    with pytest.raises(ValueError, match="no cuDNN handle"):
        pack.bind_and_execute(None, cbr.plan, tuple(ADDR[4:8]))
    assert pack.data_pointers == tuple(ADDR[4:8])  # bound, then refused
    with pytest.raises(ValueError, match="no cuDNN handle"):
        ex.populate_cuda_graph(None, cbr.plan, pack, 0x1000)
    with pytest.raises(TypeError):
        execute("handle", cbr.plan, pack)
    with pytest.raises(TypeError):
        ex.populate_cuda_graph(None, cbr.plan, {}, 0x1000)


def test_every_way_of_calling_execute_reaches_the_same_checks(cbr):
    """The positional calls a loop makes (served without Cython's argument parsing) and every other form (keywords,
    a mapping, a subclass, other types and counts: the def functions as written) meet the same checks and errors,
    keep the def functions' names, docstrings and signatures, and leak no reference."""
    import inspect

    pack = VariantPack(cbr.plan, cbr.buffers(), workspace=0)

    class MyPack(VariantPack):
        pass

    mine = MyPack(cbr.plan, cbr.buffers(), workspace=0)
    pointers = tuple(ADDR[4:8])
    no_handle = [lambda: execute(None, cbr.plan, pack), lambda: execute(None, cbr.plan, pack=pack),
                 lambda: execute(handle=None, plan=cbr.plan, pack=pack), lambda: execute(None, cbr.plan, pack, None),
                 lambda: execute(None, cbr.plan, pack, None, None), lambda: execute(None, cbr.plan, mine),
                 lambda: execute(None, None, pack), lambda: pack.execute(), lambda: pack.execute(None),
                 lambda: pack.execute(None, cbr.plan), lambda: pack.execute(plan=cbr.plan),
                 lambda: pack.execute(None, plan=None), lambda: VariantPack.execute(pack, None, cbr.plan),
                 lambda: mine.execute(), lambda: pack.bind_and_execute(None, cbr.plan, pointers),
                 lambda: pack.bind_and_execute(None, cbr.plan, pointers=pointers),
                 lambda: mine.bind_and_execute(None, cbr.plan, pointers)]
    refused = {r"incorrect type|Cannot convert .* to .*Handle": [lambda: execute("handle", cbr.plan, pack),
                                                     lambda: pack.execute("handle"),
                                                     lambda: pack.bind_and_execute(1, cbr.plan, pointers)],
               r"positional argument|takes at most|at least": [lambda: execute(None, cbr.plan),
                                                               lambda: execute(None, cbr.plan, pack, None, None, 1),
                                                               lambda: pack.execute(None, cbr.plan, 1),
                                                               lambda: pack.bind_and_execute(None, cbr.plan)],
               "unexpected keyword|invalid keyword": [lambda: execute(None, cbr.plan, pack, stream=1),
                                                       lambda: pack.execute(stream=1)],
               "descriptor 'execute'|requires a": [lambda: VariantPack.execute(object())]}

    def run_all():
        for call in no_handle:
            with pytest.raises(ValueError, match="no cuDNN handle"):
                call()
        for message, calls in refused.items():
            for call in calls:
                with pytest.raises(TypeError, match=message):
                    call()

    run_all()
    before = [sys.getrefcount(x) for x in (pack, mine, cbr.plan, pointers)]
    for _ in range(200):
        run_all()
    assert [sys.getrefcount(x) for x in (pack, mine, cbr.plan, pointers)] == before
    assert pack.data_pointers == pointers  # bound, then refused
    assert str(inspect.signature(execute)) == "(handle, plan, pack, workspace=None, overrides=None)"
    assert str(inspect.signature(VariantPack.execute)) == "(self, /, handle=None, plan=None)"
    assert str(inspect.signature(pack.bind_and_execute)) == "(handle, plan, pointers)"
    assert execute.__name__ == "execute" and execute.__doc__.startswith("Run ``plan`` on the handle's stream")
    assert VariantPack.execute.__qualname__ == "VariantPack.execute"
    assert VariantPack.bind_and_execute.__doc__.startswith("Bind new device pointers")
    assert ex.execute is execute and cb.execute is execute


def test_native_cuda_graph_error_is_a_not_supported_error():
    e = ex.NativeCudaGraphNotSupportedError(3000, "cudnnBackendPopulateCudaGraph")
    assert isinstance(e, cb.CudnnNotSupportedError)


# ---------------------------------------------------------------------------------------------
# CUDA graph helpers, against a stand-in for cuda-bindings' runtime (same call and return shapes)
# ---------------------------------------------------------------------------------------------
class FakeRuntime:
    """The cuda.bindings.runtime calls execution.py makes, answering like cuda-bindings: (err, *values)."""

    class cudaGraphNodeType(enum.IntEnum):
        cudaGraphNodeTypeKernel = 0
        cudaGraphNodeTypeMemcpy = 1
        cudaGraphNodeTypeMemset = 2
        cudaGraphNodeTypeGraph = 4
        cudaGraphNodeTypeEmpty = 5

    def __init__(self):
        self.graphs, self.node_info, self.execs, self.destroyed, self.launched = {}, {}, {}, [], []
        self.update_error = 0
        self.fail = {}  # function name -> the error it answers (the first call only)
        self.host = {}  # address -> the ctypes buffer behind a cudaMallocHost
        self._next = itertools.count(0x1000, 0x10)

    def _answer(self, name, *values):
        err = self.fail.pop(name, 0)
        return (err, *values)

    def add_graph(self, *nodes):
        """nodes: node type names, or ('graph', child_graph_id)."""
        gid = next(self._next)
        self.graphs[gid] = []
        for node in nodes:
            nid = next(self._next)
            if isinstance(node, tuple):
                self.node_info[nid] = (self.cudaGraphNodeType.cudaGraphNodeTypeGraph, node[1])
            else:
                self.node_info[nid] = (self.cudaGraphNodeType[f"cudaGraphNodeType{node}"], None)
            self.graphs[gid].append(nid)
        return gid

    def cudaGraphCreate(self, flags):
        return (0, self.add_graph())

    def cudaGraphGetNodes(self, graph, numNodes=0):
        nodes = self.graphs[int(graph)]
        if numNodes == 0:
            return (0, [], len(nodes))
        return (0, (nodes + [None] * numNodes)[:numNodes], min(numNodes, len(nodes)))

    def cudaGraphNodeGetType(self, node):
        return (0, self.node_info[int(node)][0])

    def cudaGraphChildGraphNodeGetGraph(self, node):
        return (0, self.node_info[int(node)][1])

    def cudaGraphInstantiate(self, graph, flags):
        e = next(self._next)
        self.execs[e] = int(graph)
        return (0, e)

    def cudaGraphLaunch(self, graph_exec, stream):
        self.launched.append((graph_exec, int(stream)))
        return (0,)

    def cudaGraphExecUpdate(self, graph_exec, graph):
        return (self.update_error, None)

    def cudaGraphExecDestroy(self, graph_exec):
        self.destroyed.append(("exec", graph_exec))
        return self._answer("cudaGraphExecDestroy")

    def cudaGraphDestroy(self, graph):
        self.destroyed.append(("graph", int(graph)))
        return self._answer("cudaGraphDestroy")

    def cudaMallocHost(self, nbytes):
        buf = ctypes.create_string_buffer(nbytes)
        self.host[ctypes.addressof(buf)] = buf
        return (0, ctypes.addressof(buf))

    def cudaFreeHost(self, ptr):
        self.destroyed.append(("host", ptr))
        return self._answer("cudaFreeHost")

    cudaStreamNonBlocking = 1

    class cudaStreamCaptureMode(enum.IntEnum):
        cudaStreamCaptureModeGlobal = 0
        cudaStreamCaptureModeThreadLocal = 1

    def cudaStreamCreateWithFlags(self, flags):
        s = next(self._next)
        self.streams = getattr(self, "streams", []) + [s]
        return (0, s)

    def cudaStreamBeginCapture(self, stream, mode):
        self.capturing = (stream, mode)
        return (0,)

    def cudaStreamEndCapture(self, stream):
        assert self.capturing[0] == stream
        self.capturing = None
        return (0, self.add_graph("Kernel"))

    def cudaStreamDestroy(self, stream):
        self.destroyed.append(("stream", stream))
        return self._answer("cudaStreamDestroy")

    def cudaGetErrorName(self, err):
        return (0, b"cudaErrorFake")

    def cudaGetErrorString(self, err):
        return (0, b"a fake failure")


@pytest.fixture
def fake_rt(monkeypatch):
    rt = FakeRuntime()
    monkeypatch.setitem(memory._modules, "runtime", rt)
    return rt


def test_kernel_nodes_are_counted_through_child_graphs(fake_rt):
    inner = fake_rt.add_graph("Kernel", "Kernel", "Memset")
    middle = fake_rt.add_graph("Kernel", ("graph", inner), "Empty")
    top = fake_rt.add_graph(("graph", middle), "Memcpy", "Kernel")
    assert ex.count_kernel_nodes(inner) == 2
    assert ex.count_kernel_nodes(top) == 4
    assert ex.graph_node_types(top) == {"cudaGraphNodeTypeKernel": 4, "cudaGraphNodeTypeMemset": 1,
                                        "cudaGraphNodeTypeEmpty": 1, "cudaGraphNodeTypeMemcpy": 1}
    assert ex.count_kernel_nodes(fake_rt.add_graph()) == 0


def test_cuda_errors_carry_the_runtime_name(fake_rt):
    with pytest.raises(memory.CudaError, match="cudaGraphLaunch failed with cudaErrorFake: a fake failure") as e:
        memory.check((700,), "cudaGraphLaunch")
    assert e.value.code == 700


def test_cuda_graph_object_lifecycle(fake_rt, cbr, monkeypatch):
    """CudaGraph: populate (cuDNN stood in for), instantiate, launch on the handle's stream, update
    (cudaGraphExecUpdate, re-instantiating when it fails), count, close once."""
    calls = []

    def populate(handle, plan, pack, graph=None):
        graph = fake_rt.add_graph("Kernel", "Kernel") if graph is None else graph
        calls.append(("populate", pack))
        return graph

    def update(handle, plan, pack, graph):
        calls.append(("update", pack))
        return graph

    monkeypatch.setattr(ex, "populate_cuda_graph", populate)
    monkeypatch.setattr(ex, "update_cuda_graph", update)

    class H:
        stream = 0x5000

    pack1 = VariantPack(cbr.plan, cbr.buffers(), workspace=0)
    pack2 = VariantPack(cbr.plan, cbr.buffers(ADDR[4:]), workspace=0)
    g = ex.CudaGraph(H(), cbr.plan, pack1)
    first_exec = g.graph_exec
    g.launch()
    g.launch(0x6000)
    assert fake_rt.launched == [(first_exec, 0x5000), (first_exec, 0x6000)]
    assert g.kernel_count() == 2 and g.node_types() == {"cudaGraphNodeTypeKernel": 2}
    g.update(pack2)
    assert g.pack is pack2 and g.graph_exec == first_exec  # updated in place
    fake_rt.update_error = 910  # cudaErrorGraphExecUpdateFailure: a new executable instead
    g.update(pack1)
    assert g.graph_exec != first_exec and ("exec", first_exec) in fake_rt.destroyed
    assert [c[0] for c in calls] == ["populate", "update", "update"]
    graph = g.graph
    with g:
        pass
    assert g.closed and ("graph", graph) in fake_rt.destroyed
    n = len(fake_rt.destroyed)
    g.close()
    assert len(fake_rt.destroyed) == n
    with pytest.raises(ValueError, match="closed"):
        g.launch()
    # a graph given by the caller stays the caller's
    mine = fake_rt.add_graph()
    g2 = ex.CudaGraph(H(), cbr.plan, pack1, graph=mine)
    g2.close()
    assert ("graph", mine) not in fake_rt.destroyed


def test_captured_graph_records_on_its_own_stream_and_restores_the_handles(fake_rt):
    """CapturedGraph: record() runs while the handle launches on a fresh stream under thread-local capture; the
    handle gets its stream back, the graph is instantiated and launched on the handle's stream, and close
    destroys the executable, the graph and the stream once. A failing record() leaves nothing behind."""
    class H:
        stream = 0x5000

    h = H()
    seen = []
    g = ex.CapturedGraph(h, lambda: seen.append((h.stream, fake_rt.capturing)))
    stream = fake_rt.streams[-1]
    assert seen == [(stream, (stream, fake_rt.cudaStreamCaptureMode.cudaStreamCaptureModeThreadLocal))]
    assert h.stream == 0x5000 and fake_rt.capturing is None
    assert g.kernel_count() == 1 and g.graph_exec is not None
    g.launch()
    g.launch(0x6000)
    assert fake_rt.launched == [(g.graph_exec, 0x5000), (g.graph_exec, 0x6000)]
    graph, exec_ = g.graph, g.graph_exec
    g.close()
    g.close()
    assert fake_rt.destroyed == [("exec", exec_), ("graph", graph), ("stream", stream)]

    def fail():
        raise RuntimeError("the work failed")

    with pytest.raises(RuntimeError, match="the work failed"):
        ex.CapturedGraph(h, fail)
    assert h.stream == 0x5000 and fake_rt.capturing is None
    assert fake_rt.destroyed[-1] == ("stream", fake_rt.streams[-1]) and fake_rt.destroyed[-2][0] == "graph"


def test_misuse_of_a_pack_raises_the_packages_error(cbr):
    """__init__ on a made pack (it would leak its descriptor and arrays), and any use of a closed one, are refused
    with CudnnUnsafeCallError (a ValueError), naming the pack."""
    pack = VariantPack(cbr.plan, cbr.buffers(), workspace=0)
    uids = pack.uids
    with pytest.raises(cb.CudnnUnsafeCallError, match="this VariantPack is made already: __init__ cannot make it again"):
        pack.__init__(cbr.plan, cbr.buffers(), workspace=0)
    assert pack.uids == uids and not pack.closed  # untouched
    pack.close()
    for use in (lambda: pack.rebind_pointers(pack.data_pointers), lambda: pack.check_plan(cbr.plan),
                lambda: pack.execute(None, cbr.plan)):
        with pytest.raises(cb.CudnnUnsafeCallError, match="this VariantPack is closed"):
            use()
    with pytest.raises(cb.CudnnUnsafeCallError, match="made already"):  # closed: never made again
        pack.__init__(cbr.plan, cbr.buffers(), workspace=0)


class _Handle:
    stream = 0x5000


def test_cuda_objects_close_through_one_mechanism_and_no_del():
    """Device and host buffers, the L2 flusher and CUDA graphs close through memory.CudaResource (a weakref.finalize
    behind close()); no class of the package swallows its failures in a __del__."""
    for cls in (memory.DeviceBuffer, memory.HostBuffer, memory.L2Flush, ex.CudaGraph, ex.CapturedGraph):
        assert issubclass(cls, memory.CudaResource), cls
    sources = [p for p in (pathlib.Path(cb.__file__).parent).rglob("*.py")]
    assert [str(p) for p in sources if "def __del__" in p.read_text()] == []


def test_a_cuda_graph_collected_unclosed_is_destroyed_once(fake_rt):
    g = ex.CapturedGraph(_Handle(), lambda: None)
    graph, exec_, stream = g.graph, g.graph_exec, fake_rt.streams[-1]
    del g
    gc.collect()
    assert fake_rt.destroyed == [("exec", exec_), ("graph", graph), ("stream", stream)]


def test_a_failing_destroy_is_raised_by_close_the_rest_destroyed_all_the_same(fake_rt):
    g = ex.CapturedGraph(_Handle(), lambda: None)
    graph, exec_, stream = g.graph, g.graph_exec, fake_rt.streams[-1]
    fake_rt.fail["cudaGraphDestroy"] = 700
    with pytest.raises(memory.CudaError, match="cudaGraphDestroy failed with cudaErrorFake"):
        g.close()
    assert fake_rt.destroyed == [("exec", exec_), ("graph", graph), ("stream", stream)]
    assert g.closed
    g.close()  # once: nothing is destroyed twice
    assert len(fake_rt.destroyed) == 3


def test_a_failing_destroy_at_collection_is_a_warning_naming_the_object(fake_rt):
    g = ex.CapturedGraph(_Handle(), lambda: None)
    graph = g.graph
    fake_rt.fail["cudaStreamDestroy"] = 700
    with pytest.warns(RuntimeWarning, match=rf"CapturedGraph \(CUDA graph 0x{graph:x}\): releasing it at collection "
                                            r"failed \(CudaError: cudaStreamDestroy failed with cudaErrorFake"):
        del g
        gc.collect()
    assert [kind for kind, _ in fake_rt.destroyed] == ["exec", "graph", "stream"]


def test_host_buffers_close_once_and_report_a_failure_at_collection(fake_rt):
    buf = memory.HostBuffer(64)
    ptr = buf.ptr
    buf.array[:] = 7
    assert fake_rt.host[ptr].raw == b"\x07" * 64 and not buf.closed
    buf.close()
    buf.close()
    assert buf.closed and buf.array is None and fake_rt.destroyed == [("host", ptr)]
    other = memory.HostBuffer(32)
    ptr = other.ptr
    fake_rt.fail["cudaFreeHost"] = 700
    with pytest.warns(RuntimeWarning, match=rf"HostBuffer of 32 bytes at 0x{ptr:x}: releasing it at collection failed "
                                            r"\(CudaError: cudaFreeHost failed"):
        del other
        gc.collect()
    assert fake_rt.destroyed[-1] == ("host", ptr)


def test_threads_racing_to_close_a_cuda_graph_destroy_it_once(fake_rt):
    for _ in range(50):
        g = ex.CapturedGraph(_Handle(), lambda: None)
        before = len(fake_rt.destroyed)
        assert close_race(g.close, closers=4) == []
        assert len(fake_rt.destroyed) - before == 3 and g.closed


# ---------------------------------------------------------------------------------------------
# the graph a pack is checked against must be the plan's
# ---------------------------------------------------------------------------------------------
def _other_graph():
    g = Graph("other")
    a = g.tensor([2, 3], name="a")
    g.relu(a, output=True)
    return g, a


def test_a_graph_given_with_the_plan_must_be_its_own(cbr):
    g, a = _other_graph()
    og = g.build()
    with pytest.raises(ValueError, match=r"^operation_graph: not this plan's graph: its tensors have UIDs \[1, 2\], "
                                         r"the plan's \[1, 2, 3, 4, 5, 6\]"):
        VariantPack(cbr.plan, {a: ADDR[0], 2: ADDR[1]}, operation_graph=og, workspace=0)
    assert VariantPack(cbr.plan, cbr.buffers(), operation_graph=cbr.og, workspace=0).uids == tuple(cbr.uids)
    built, _ = cb.build_first_plan(cbr.og, device_profile="h200")
    plan = cb.plan_from_json(built.to_json(), device_profile="h200")
    with pytest.raises(ValueError, match="operation_graph: not this plan's graph"):
        plan.operation_graph = og
    assert plan.operation_graph is None
    plan.operation_graph = cbr.og  # its own: taken
    assert plan.operation_graph is cbr.og
    with pytest.raises(TypeError, match=r"operation_graph: expected a finalized "
                                        r"CUDNN_BACKEND_OPERATIONGRAPH_DESCRIPTOR \(Graph.build\(\) gives one\), "
                                        r"not int"):
        VariantPack(cbr.plan, cbr.buffers(), operation_graph=5, workspace=0)


def test_tensors_given_with_the_plan_must_be_its_own(cbr):
    assert VariantPack(cbr.plan, cbr.buffers(), tensors=[cbr.x, cbr.w, cbr.b, cbr.y], workspace=0).uids == \
        tuple(cbr.uids)
    with pytest.raises(ValueError, match=r"^tensors: not this plan's graph: they have UIDs \[1, 2\], the plan's "):
        VariantPack(cbr.plan, cbr.buffers(), tensors=[cbr.x, cbr.w], workspace=0)
    with pytest.raises(TypeError, match=r"^tensors\[0\]: expected a tensor descriptor or a TensorSpec, not int"):
        VariantPack(cbr.plan, cbr.buffers(), tensors=[1, 2, 3], workspace=0)
    with pytest.raises(TypeError, match=r"^tensors: expected the graph's tensor descriptors or TensorSpecs"):
        VariantPack(cbr.plan, cbr.buffers(), tensors="xwby", workspace=0)


def test_a_tensor_key_of_another_graph_is_refused(cbr):
    """A tensor of another graph sharing a UID with the plan's: bound by UID alone, its buffer would be checked
    against the plan's tensor of other dims and data type."""
    stranger = Graph("other").tensor([1, 2, 3, 4], data_type="float")  # UID 1, as x
    buffers = cbr.buffers()
    buffers.pop(cbr.x)
    buffers[stranger] = ADDR[0]
    with pytest.raises(ValueError, match=r"^buffers: the key .*\[1, 2, 3, 4\] .* fp32 is not the plan's tensor of UID "
                                         r"1, t1 \(uid 1\) \[2, 16, 8, 8\]"):
        VariantPack(cbr.plan, buffers, workspace=0)
    buffers[stranger.uid] = buffers.pop(stranger)  # by UID: the caller's word
    pack = VariantPack(cbr.plan, buffers, workspace=0)
    assert pack.pointers[cbr.x.uid] == ADDR[0]
    with pytest.raises(ValueError, match=r"^buffers: the key .*\[1, 2, 3, 4\] .* is not the plan's tensor of UID 1"):
        pack.rebind({stranger: ADDR[0]})  # rebinding checks its keys as the constructor does
    assert pack.rebind({cbr.x: ADDR[0]}).pointers[cbr.x.uid] == ADDR[0]


def _ragged_attention(ragged_uid):
    offsets = cb.typed.Tensor(unique_id=ragged_uid, data_type=cb.CUDNN_DATA_INT32, dimensions=[3, 1, 1, 1],
                              strides=[1, 1, 1, 1], byte_alignment=16).finalize()
    g = Graph("ragged")
    q = g.tensor([2, 1, 128, 64], ragged_offset_desc=offsets, name="q")
    k, v = g.tensor([2, 1, 128, 64], name="k"), g.tensor([2, 1, 128, 64], name="v")
    out = g.sdpa_fwd(q, k, v)
    return g.build(), {q: ADDR[0], k: ADDR[1], v: ADDR[2], out["o"]: ADDR[3], out["stats"]: ADDR[4]}


@needs_sdpa_fwd
def test_a_ragged_offset_tensor_is_bound_like_the_graphs_inputs():
    og, buffers = _ragged_attention(99)
    with pytest.raises(ValueError, match=r"missing buffers for UID\(s\) 99: t99 \(uid 99\) \[3, 1, 1, 1\] .* int32"):
        VariantPack(None, buffers, operation_graph=og)
    buffers[99] = ADDR[5]
    assert VariantPack(None, buffers, operation_graph=og).pointers[99] == ADDR[5]
    # a plan loaded from its JSON alone (the offsets kept inside their tensor's "isRagged") binds them too
    plan, _ = cb.build_first_plan(og, device_profile="h200")
    loaded = cb.plan_from_json(plan.to_json(), device_profile="h200")
    by_uid = {cb.runtime._packing.uid_of(k): a for k, a in buffers.items()} | {5: 0.125}  # (the scale: by value)
    assert VariantPack(loaded, by_uid, workspace=1 << 20).pointers[99] == ADDR[5]
    with pytest.raises(ValueError, match=r"missing buffers for UID\(s\) 99"):
        VariantPack(loaded, {u: a for u, a in by_uid.items() if u != 99}, workspace=1 << 20)


@needs_sdpa_fwd
def test_two_tensors_of_one_uid_are_refused_naming_both():
    # the Graph refuses the offsets as the operation is added (k's UID)
    with pytest.raises(cb.GraphError, match=r"^ragged_offset_desc: t2 \(uid 2\) \[3, 1, 1, 1\] .* has a UID this graph "
                                            r"gives to another tensor, k \(uid 2\)"):
        _ragged_attention(2)
    # a graph made otherwise (the typed classes: q again, its offsets under k's UID), at the variant pack
    og, buffers = _ragged_attention(99)
    (sdpa,) = [op for op in og.values[cb.CUDNN_ATTR_OPERATIONGRAPH_OPS]]
    keywords = {keyword_of(a): value for a, value in sdpa.values.items()}
    q = keywords["qdesc"]
    clash = cb.typed.Tensor(unique_id=2, data_type=cb.CUDNN_DATA_INT32, dimensions=[3, 1, 1, 1], strides=[1, 1, 1, 1],
                            byte_alignment=16).finalize()
    keywords["qdesc"] = cb.typed.Tensor(unique_id=q.unique_id, data_type=q.data_type, dimensions=q.dimensions,
                                        strides=q.strides, byte_alignment=16, ragged_offset_desc=clash).finalize()
    og = cb.typed.OperationGraph(ops=[type(sdpa)(**keywords).finalize()]).finalize()
    with pytest.raises(cb.GraphError, match=r"^the graph holds two tensors of UID 2: k \(uid 2\) \[2, 1, 128, 64\] .* and "
                                            r"t2 \(uid 2\) \[3, 1, 1, 1\] .* int32; a variant pack binds one buffer a "
                                            r"UID, so give each tensor its own UID$"):
        VariantPack(None, buffers, operation_graph=og)


def test_a_by_value_tensor_the_graph_writes_is_refused():
    # (at the operation's finalize, in every API: cuDNN plans it; the pack's own check stays for plans from JSON)
    g = Graph("scalar_out")
    x, y = g.scalar(1.0, name="x"), g.scalar(2.0, name="y")
    with pytest.raises(cb.GraphError, match=r"^Pointwise RELU_FWD: its output ydesc, y \(uid 2\), is a by-value tensor: "
                                         r"an operation writes device memory"):
        g.relu(x, output=y)


def test_a_pack_of_nothing_is_refused_in_words():
    """No plan, no graph, no buffers: cuDNN refuses the pack's empty UID list with BAD_PARAM and no word of why."""
    for make in (lambda: VariantPack(), lambda: VariantPack(None, {})):
        with pytest.raises(ValueError, match=r"^buffers: none given, and no plan or graph to say which tensors"):
            make()
