"""Random inputs made on the GPU (``runtime.memory.fill_random``, an NVRTC kernel; ``tune.inputs.make_buffer_sets``):
for every data type the kernel writes bit for bit what the host twin (``memory.host_random``) computes, the values
follow the documented distribution, the first buffer set's host values (copied back on first use) are what the
device holds, the other sets hold the same inputs, outputs are poisoned, the same seed gives the same inputs, and
where the kernel cannot be compiled the host twin makes the same values, visibly.

The generator's source against the twin and the encoder on the CPU: tests/runtime/test_random_fill.py."""
import math
import warnings

import numpy as np
import pytest

import cudnn_backend as cb
from cudnn_backend.runtime import memory
from cudnn_backend.tune import inputs
from cudnn_backend.typed import arrays

D = cb.DataType
TYPES = list(memory.RANDOM_KINDS) + list(memory.RANDOM_ONES)
COUNT = (1 << 20) + 17  # several blocks per SM, and a ragged end


@pytest.fixture(scope="module")
def kernel():
    k = memory.random_fill_kernel()
    assert not isinstance(k, str), f"the random-fill kernel must compile on a GPU machine with NVRTC: {k}"
    return k


def device_bytes(buf, nbytes) -> np.ndarray:
    memory.synchronize()
    return memory.copy_to_host(buf, nbytes).copy()


@pytest.mark.parametrize("data_type", TYPES, ids=lambda d: d.name)
def test_the_kernel_writes_what_the_host_twin_computes(kernel, data_type):
    nbytes = (COUNT * arrays.DATA_TYPE_BITS[data_type] + 7) // 8  # BOOLEAN: bit-packed
    for seed, uid, scale in ((0, 1, 0.5), (99, 12345, 2.0)):
        key = memory.random_key(seed, uid)
        with memory.DeviceBuffer(nbytes + 64) as buf:
            buf.fill(0xAB)  # the bytes past the fill must stay as they are
            assert memory.fill_random(buf, data_type, COUNT, key, scale) is None, "filled on the host, not the GPU"
            got = device_bytes(buf, nbytes + 64)
        want = arrays.memory_bytes(memory.host_random(data_type, COUNT, key, scale), data_type)
        assert want.size == nbytes
        differ = np.flatnonzero(got[:want.size] != want)
        assert differ.size == 0, (f"{data_type.name} (seed {seed}): {differ.size} bytes differ from the host twin, "
                                  f"first at byte {differ[0]}")
        assert (got[want.size:] == 0xAB).all(), f"{data_type.name}: the kernel wrote past the {COUNT} elements"


def test_the_device_values_follow_the_documented_distribution(kernel):
    n = 1 << 22
    with memory.DeviceBuffer(n * 4) as buf:
        memory.fill_random(buf, D.CUDNN_DATA_FLOAT, n, memory.random_key(5, 5), 0.5)
        x = device_bytes(buf, n * 4).view(np.float32).astype(np.float64)
    assert abs(x.mean()) < 5 * 0.5 / math.sqrt(n), x.mean()
    assert x.std() == pytest.approx(0.5, rel=0.003)
    assert np.abs(x).max() <= 2 * math.sqrt(3) * 0.5 * 1.0001 and np.abs(x).max() > 1.4
    assert 0.65 < np.mean(np.abs(x) < 0.5) < 0.71  # close to normal (68.3%; the centred sum of four: 67.3%)
    with memory.DeviceBuffer(n) as buf:
        memory.fill_random(buf, D.CUDNN_DATA_INT8, n, memory.random_key(5, 6))
        counts = np.bincount(device_bytes(buf, n).view(np.int8).astype(np.int64), minlength=8)
    assert counts.size == 8, counts
    chi2 = float(((counts - n / 8) ** 2 / (n / 8)).sum())
    assert chi2 < 30, f"integers in [0, 8) not uniform: {counts} (chi-square {chi2:.1f})"


def _graphs(handle):
    """conv + bias + ReLU (fp16, NHWC: strided spans), a bf16 matmul, an fp32 NCHW conv."""
    out = []
    g = cb.Graph("inputs_cbr")
    x = g.tensor([2, 16, 10, 10], layout="nhwc", name="x")
    w = g.tensor([8, 16, 3, 3], layout="nhwc", name="w")
    b = g.tensor([1, 8, 1, 1], layout="nhwc", name="b")
    g.relu(g.bias(g.conv_fwd(x, w, padding=1), b), output=True, name="y")
    out.append(g.build(handle))
    g = cb.Graph("inputs_matmul", io_data_type="bfloat16")
    g.matmul(g.tensor([2, 64, 32], name="a"), g.tensor([2, 32, 48], name="b"), output=True, name="c")
    out.append(g.build(handle))
    g = cb.Graph("inputs_conv_fp32", io_data_type="float")
    g.conv_fwd(g.tensor([1, 4, 9, 7], name="x"), g.tensor([4, 4, 3, 3], name="w"), padding=1, output=True, name="y")
    out.append(g.build(handle))
    return out


def test_buffer_sets_hold_what_the_host_says(kernel, gpu_handle):
    for og in _graphs(gpu_handle):
        sets = inputs.make_buffer_sets(og, 3, seed=11)
        try:
            first = sets[0]
            assert first.random_fill == inputs.DEVICE_FILL
            read, written = inputs.io_uids(og)
            assert first.outputs == written and set(first.host) == read, "host values of exactly the inputs"
            for uid in read:
                spec = first.specs[uid]
                raw = device_bytes(first.ptrs[uid], spec.nbytes)
                count = spec.nbytes * 8 // arrays.DATA_TYPE_BITS[spec.data_type]
                want = memory.host_random(spec.data_type, count, memory.random_key(11, uid), inputs.INPUT_SCALE)
                assert np.array_equal(raw, arrays.memory_bytes(want, spec.data_type)), (
                    f"{spec.describe()}: the span is not the generator's")
                on_device = arrays.decode(inputs.stored_view(raw, spec), spec.data_type)
                assert np.array_equal(np.asarray(first.host[uid], np.float64), on_device), (
                    f"{spec.describe()}: the host values are not what the device holds")
                for s in sets[1:]:
                    assert np.array_equal(device_bytes(s.ptrs[uid], spec.nbytes), raw), "another set's inputs differ"
            for s in sets:
                for uid in written:
                    assert (device_bytes(s.ptrs[uid], s.specs[uid].nbytes) == inputs.POISON_BYTE).all(), \
                        "outputs are poisoned"
        finally:
            for s in sets:
                s.close()


def test_the_seed_decides_the_inputs(kernel, gpu_handle):
    og = _graphs(gpu_handle)[0]

    def inputs_of(seed):
        sets = inputs.make_buffer_sets(og, 1, seed=seed)
        try:
            return {u: device_bytes(sets[0].ptrs[u], sets[0].specs[u].nbytes) for u in inputs.io_uids(og)[0]}
        finally:
            sets[0].close()

    a, b, c = inputs_of(3), inputs_of(3), inputs_of(4)
    assert all(np.array_equal(a[u], b[u]) for u in a), "the same seed gives the same inputs"
    assert all(not np.array_equal(a[u], c[u]) for u in a), "another seed gives other inputs"


def test_without_the_kernel_the_host_twin_makes_the_same_inputs(kernel, gpu_handle, monkeypatch):
    og = _graphs(gpu_handle)[0]
    sets = inputs.make_buffer_sets(og, 1, seed=21)
    device_made = {u: device_bytes(sets[0].ptrs[u], sets[0].specs[u].nbytes) for u in sets[0].host}
    sets[0].close()
    dev = memory.device()
    memory._kernels.pop(dev.device_id)
    try:
        with monkeypatch.context() as nvrtc_missing:  # only inside: Program is back before the failure goes
            nvrtc_missing.setattr(memory.cuda_core(), "Program", _no_nvrtc)
            with pytest.warns(RuntimeWarning, match="random inputs are generated on the host: the random-fill kernel "
                                                    "did not compile .*NVRTC is missing in this test"):
                reason = memory.random_fill_kernel()
            assert isinstance(reason, str)
            with warnings.catch_warnings(record=True) as caught:
                warnings.simplefilter("always")
                sets = inputs.make_buffer_sets(og, 2, seed=21)
            again = [w for w in caught if "random inputs are generated on the host" in str(w.message)]
            assert not again, "the warning comes once per process and device, not per fill"
            try:
                assert sets[0].random_fill == reason and sets[1].random_fill == reason
                for uid, want in device_made.items():
                    assert np.array_equal(device_bytes(sets[0].ptrs[uid], sets[0].specs[uid].nbytes), want), \
                        "the host twin's inputs differ from the kernel's"
                    assert np.array_equal(device_bytes(sets[1].ptrs[uid], sets[1].specs[uid].nbytes), want)
                    spec = sets[0].specs[uid]
                    assert np.array_equal(np.asarray(sets[0].host[uid], np.float64),
                                          arrays.decode(inputs.stored_view(want, spec), spec.data_type))
            finally:
                for s in sets:
                    s.close()
    finally:
        memory._kernels.pop(dev.device_id, None)  # the next fill compiles the kernel again
    assert not isinstance(memory.random_fill_kernel(), str)


def _no_nvrtc(*args, **kwargs):
    raise RuntimeError("NVRTC is missing in this test")


def test_user_buffers_are_read_back_for_the_reference(kernel, gpu_handle):
    """A buffer the user gives for an input is used as it is, and its values are what ``host`` says."""
    og = _graphs(gpu_handle)[0]
    specs = inputs.tensor_specs(operation_graph=og)
    uid = min(inputs.io_uids(og)[0])
    spec = specs[uid]
    values = np.linspace(-1, 1, math.prod(spec.dims)).reshape(spec.dims)
    stored = arrays.encode(values, spec.data_type)
    with memory.DeviceBuffer(spec.nbytes) as mine:
        memory.copy_to_device(mine, inputs.host_layout(stored, spec))
        sets = inputs.make_buffer_sets(og, 2, seed=1, user={uid: mine})
        try:
            assert all(s.by_uid[uid] is mine for s in sets)
            assert np.array_equal(np.asarray(sets[0].host[uid], np.float64), arrays.decode(stored, spec.data_type))
        finally:
            for s in sets:
                s.close()
