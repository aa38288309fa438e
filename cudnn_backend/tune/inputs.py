"""Device buffers for any graph, without torch: random inputs, by-value scalars from their recorded values,
outputs poisoned, several sets to rotate through while timing.

Inputs are written on the GPU by a small kernel (``runtime.memory.fill_random``, compiled once per process with
NVRTC), over the whole span of each tensor in memory order: element ``i`` of the span is a function of
(``seed``, the tensor's UID, ``i``) only, so the same seed gives the same inputs on every GPU and in every order.
Floats are a centred Irwin-Hall sum of four uniforms (mean 0, standard deviation 0.5, bounded by 2*sqrt(3)*0.5)
rounded to the tensor's data type; integers are uniform in [0, 8), booleans fair, fp8 scale factors ones (the
generator's notes in ``runtime.memory``). Where NVRTC is missing its host twin (``memory.host_random``) makes the
same values, which are copied; ``BufferSet.random_fill`` says which, and a RuntimeWarning says why once.

The fp64 reference needs the inputs on the host: the first set's ``host`` copies them back on first use (a whole
tensor is one copy; with the host twin they are kept, no copy). The other sets get the first set's inputs by
device-to-device copies (the sets differ in where they live, which is what rotating them while timing is for).
Outputs are poisoned with 0xFF bytes: NaN in every floating-point type (fp8 and bfloat16 included), -1 or the
maximum in integer types, so a kernel that writes nothing is caught. ``benchmarks/random_fill.py`` measures the
two routes on a GPU (the kernel is 5-7x faster end to end, the copy back included). Everything here runs on
cuda.core and cuda-bindings (``runtime.memory``).
"""
from __future__ import annotations

import math

import numpy as np

from cudnn_backend._bindings.enums import DataType
from cudnn_backend.runtime import memory
from cudnn_backend.runtime._packing import TensorSpec, resolve_buffer, tensor_specs
from cudnn_backend.typed import arrays
from cudnn_backend.typed.introspection import io_uids, signature_of

__all__ = ["BufferSet", "make_buffer_sets", "random_values", "host_layout", "stored_view", "io_uids", "warm_up",
           "POISON_BYTE", "INPUT_SCALE"]

D = DataType
POISON_BYTE = 0xFF  # NaN in fp64/fp32/fp16/bf16/fp8 alike
INPUT_SCALE = 0.5  # the standard deviation of random floating-point inputs
DEVICE_FILL = "device (an NVRTC kernel)"


def warm_up():
    """Import cuda.core and make the CUDA context current. A sweep worker runs this in a thread as it starts, so
    it overlaps cuDNN's work on the first graph. Failures are left for that graph to meet (and report)."""
    try:
        memory.device()
        memory.cudart()
    except Exception:  # noqa: BLE001, S110 - best effort; the task's own use reports what is wrong
        pass


def random_values(spec: TensorSpec, rng: np.random.Generator, scale=INPUT_SCALE) -> np.ndarray:
    """Random elements of the tensor's dims (logical order), in its data type's host storage
    (``arrays.storage_dtype``): the package's one generator (``memory.host_random``), keyed by a draw from ``rng``."""
    dims = tuple(spec.dims)
    key = int(rng.integers(0, 1 << 63, dtype=np.int64))
    return memory.host_random(spec.data_type, math.prod(dims), key, scale).reshape(dims)


def _span_elements(spec: TensorSpec) -> int:
    """Elements in the whole bytes the tensor spans (a bit-packed BOOLEAN's last byte counts eight)."""
    return spec.nbytes * 8 // arrays.DATA_TYPE_BITS[spec.data_type]


def stored_view(raw: np.ndarray, spec: TensorSpec) -> np.ndarray:
    """The tensor's elements (its dims, in storage dtype) within ``raw``, the bytes it spans (BOOLEAN unpacked)."""
    flat = arrays.memory_elements(raw, spec.data_type)
    size = flat.dtype.itemsize
    return np.lib.stride_tricks.as_strided(flat, shape=tuple(spec.dims),
                                           strides=tuple(s * size for s in spec.strides), writeable=False)


def host_layout(values: np.ndarray, spec: TensorSpec) -> np.ndarray:
    """The bytes the tensor spans with ``values`` (its dims, storage dtype) at their strided places (zeros in
    the gaps; BOOLEAN packed), ready to copy to the device."""
    flat = np.zeros(_span_elements(spec), dtype=arrays.storage_dtype(spec.data_type))
    size = flat.dtype.itemsize
    np.lib.stride_tricks.as_strided(flat, shape=tuple(spec.dims),
                                    strides=tuple(s * size for s in spec.strides))[...] = values
    return arrays.memory_bytes(flat, spec.data_type)


def _host_values(stored, data_type):
    """What the reference evaluates: the stored elements themselves where numpy has the type (float16/32/64,
    integers, booleans: no copy), else their values in float32, which holds bfloat16 and fp8 exactly."""
    if stored.dtype.kind == "u" and arrays.is_float(data_type):  # bfloat16 / fp8 bits
        return arrays.decode(stored, data_type).astype(np.float32)
    return stored


class BufferSet:
    """One set of buffers: ``by_uid`` ({uid: DeviceBuffer, user buffer or by-value number}) is what a VariantPack
    binds; ``ptrs`` the device address of each tensor; ``host`` the values of the inputs (the first set only:
    {uid: array of the tensor's dims}, read back from the device on first use); ``outputs`` the UIDs written
    (poisoned before each run); ``random_fill`` where the random inputs were made (``DEVICE_FILL``, or why the host
    made them)."""

    def __init__(self, by_uid: dict, outputs: set, specs: dict | None = None, outputs_known: bool = True,
                 host: dict | None = None, ptrs: dict | None = None, owned: list | None = None):
        self.by_uid = by_uid
        self.outputs = outputs
        self.specs = {} if specs is None else specs
        self.outputs_known = outputs_known
        self.ptrs = {} if ptrs is None else ptrs
        self.owned = [] if owned is None else owned
        self.random_fill = DEVICE_FILL
        self.stream = 0
        self._host = {} if host is None else host
        self._on_device = []  # input UIDs whose values are read back on the first use of ``host``
        self._staging = {}

    def __repr__(self):
        return f"BufferSet(by_uid={self.by_uid!r}, outputs={self.outputs!r}, outputs_known={self.outputs_known!r})"

    @property
    def host(self) -> dict:
        """{uid: values of the tensor's dims} of the inputs (what the fp64 reference evaluates); those still only on
        the device are copied back now (each whole, once), after the work queued on the set's stream."""
        if self._on_device:
            pending, self._on_device = self._on_device, []
            for uid in pending:
                spec = self.specs[uid]
                raw = memory.copy_to_host(self.ptrs[uid], spec.nbytes, stream=self.stream)
                self._host[uid] = _host_values(stored_view(raw, spec), spec.data_type)
        return self._host

    def poison(self, stream=0):
        """Every byte of the outputs to 0xFF (queued on ``stream``), so a kernel that writes nothing is caught."""
        for uid in self.outputs:
            memory.fill_bytes(self.ptrs[uid], POISON_BYTE, self.specs[uid].nbytes, stream)

    def raw(self, uid, stream=0) -> np.ndarray:
        """The bytes tensor ``uid`` spans, copied to the host after the work queued on ``stream`` (into page-locked
        memory reused for this tensor: valid until the next ``raw``/``stored`` of it)."""
        nbytes = self.specs[uid].nbytes
        staging = self._staging.get(uid)
        if staging is None:
            staging = self._staging[uid] = memory.HostBuffer(nbytes)
        return memory.copy_to_host(self.ptrs[uid], nbytes, out=staging.array, stream=stream)

    def stored(self, uid, stream=0) -> np.ndarray:
        """Tensor ``uid``'s elements as stored (its dims, storage dtype), read back from the device (see ``raw``)."""
        return stored_view(self.raw(uid, stream), self.specs[uid])

    def read(self, uid, stream=0) -> np.ndarray:
        """Tensor ``uid``'s values (float64, int64 or bool, its dims), read back from the device."""
        return arrays.decode(self.stored(uid, stream), self.specs[uid].data_type)

    def output(self, uid):
        return self.by_uid[uid]

    def close(self):
        """Free the buffers this set allocated (user buffers stay the user's)."""
        for buf in self.owned:
            buf.close()
        for staging in self._staging.values():
            staging.close()
        self.owned, self._staging, self._on_device = [], {}, []


def _need_size(spec: TensorSpec) -> int:
    nbytes = spec.nbytes
    if nbytes is None:
        dt = spec.data_type.name if spec.data_type is not None else "an unknown data type"
        raise ValueError(f"tensor {spec.describe()}: no buffer can be made for {dt} (vectorized or sub-byte); pass "
                         "buffers=")
    try:
        arrays.storage_dtype(spec.data_type)
    except TypeError:
        raise ValueError(f"tensor {spec.describe()}: no random data for {spec.data_type.name}; pass buffers=") from None
    return nbytes


def make_buffer_sets(op_graph, count=4, *, seed=0, user=None, plan=None, stream=0) -> list[BufferSet]:
    """``count`` sets of buffers for the graph's real tensors (see the module's notes). ``user`` ({uid or tensor:
    buffer}) replaces the generated buffers of those tensors in every set (their values are read back for
    ``host``). ``stream``: where the copies and fills are queued (they are done when this returns).

    With ``op_graph`` None the tensors come from ``plan``'s JSON; which of them are outputs is then unknown
    (``BufferSet.outputs`` is empty and ``outputs_known`` False): every tensor gets random data."""
    if op_graph is not None:
        specs = tensor_specs(operation_graph=op_graph)
        _, outputs = io_uids(op_graph)
        known = True
    else:
        specs = tensor_specs(plan=plan)
        if not specs:
            raise ValueError("the plan's tensors are unknown: its JSON lists none; pass buffers=")
        outputs, known = set(), False
    given = {}
    for key, value in (user or {}).items():
        uid = key if isinstance(key, int) else signature_of(key).uid
        given[uid] = value
    sets: list[BufferSet] = []
    try:
        for i in range(count):
            bs = BufferSet({}, {u for u in outputs if u not in given}, specs, known)
            bs.stream = stream
            sets.append(bs)
            for uid, spec in specs.items():
                if spec.virtual:
                    continue
                if uid in given:
                    bs.by_uid[uid] = given[uid]
                    if not spec.by_value:
                        bs.ptrs[uid] = resolve_buffer(given[uid], f"buffers[{uid}]").ptr
                        if i == 0 and uid not in outputs and spec.nbytes is not None:
                            bs._on_device.append(uid)
                    continue
                if spec.by_value:
                    value = 1.0 if spec.value is None else spec.value
                    bs.by_uid[uid] = value
                    if i == 0:
                        bs._host[uid] = np.full(tuple(spec.dims), value, dtype=np.float64)
                    continue
                buf = memory.DeviceBuffer(max(_need_size(spec), 1))
                bs.owned.append(buf)
                bs.by_uid[uid], bs.ptrs[uid] = buf, buf.ptr
                if uid in bs.outputs:
                    continue
                if i == 0:
                    _fill_input(bs, uid, spec, buf, seed, stream)
                else:
                    memory.copy_device(buf, sets[0].ptrs[uid], spec.nbytes, stream)
            bs.random_fill = sets[0].random_fill
            bs.poison(stream)
        memory.synchronize(stream)
    except BaseException:
        for bs in sets:
            bs.close()
        raise
    return sets


def _fill_input(bs: BufferSet, uid: int, spec: TensorSpec, buf, seed: int, stream):
    """Random values over the tensor's whole span (memory order), keyed by (seed, uid): on the device, read back
    on first use of ``bs.host``; or by the host twin, whose values are kept."""
    count = _span_elements(spec)
    values = memory.fill_random(buf.ptr, spec.data_type, count, memory.random_key(seed, uid), INPUT_SCALE, stream)
    if values is None:
        bs._on_device.append(uid)
        return
    bs.random_fill = memory.random_fill_kernel()  # the reason the host made them
    bs._host[uid] = _host_values(stored_view(arrays.memory_bytes(values, spec.data_type), spec), spec.data_type)
