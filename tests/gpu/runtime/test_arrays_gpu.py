"""Variant packs over arrays of every GPU library, without torch: cupy (DLPack and the CUDA array interface), JAX,
numba, cuda.core buffers and the package's DeviceBuffer. Each binds conv + bias + ReLU (fp16, NHWC) with fresh
random inputs, outputs poisoned with NaN first, the arrays made on the library's own stream while cuDNN runs on
another (the adapter orders the producer's work before the handle's stream), and the output is checked
against the fp64 reference evaluator. Arrays that do not describe their tensor are refused, naming it."""
import os

os.environ.setdefault("XLA_PYTHON_CLIENT_PREALLOCATE", "false")  # JAX would take 75% of the GPU otherwise

import numpy as np  # noqa: E402
import pytest  # noqa: E402

import cudnn_backend as cb  # noqa: E402
from cudnn_backend.graph import Graph  # noqa: E402
from cudnn_backend.runtime import memory  # noqa: E402
from cudnn_backend.runtime._packing import tensor_specs  # noqa: E402
from cudnn_backend.runtime.execution import VariantPack, execute  # noqa: E402
from cudnn_backend.runtime.heuristics import build_first_plan  # noqa: E402
from cudnn_backend.tune import checking, inputs  # noqa: E402
from cudnn_backend.typed import arrays  # noqa: E402

N, C, H, W, K = 4, 16, 12, 12, 32
HALF = cb.DataType.CUDNN_DATA_HALF


class Case:
    def __init__(self):
        self.handle = cb.Handle()
        g = Graph("conv_bias_relu_arrays")
        self.x = g.tensor([N, C, H, W], layout="nhwc", name="x")
        self.w = g.tensor([K, C, 3, 3], layout="nhwc", name="w")
        self.b = g.tensor([1, K, 1, 1], layout="nhwc", name="b")
        self.y = g.relu(g.bias(g.conv_fwd(self.x, self.w, padding=1), self.b), output=True, name="y")
        self.og = g.build(self.handle)
        self.plan, _ = build_first_plan(self.og, handle=self.handle)
        self.specs = tensor_specs(operation_graph=self.og)

    def fresh(self, seed):
        """Fresh random inputs (fp16 storage, logical dims) and the fp64 reference of the output on them."""
        rng = np.random.default_rng(seed)
        values = {t.uid: inputs.random_values(self.specs[t.uid], rng) for t in (self.x, self.w, self.b)}
        result = cb.reference.evaluate(self.og, {u: arrays.decode(v, HALF) for u, v in values.items()})
        assert result.method == "fp64 reference", result.method
        return values, np.asarray(result.outputs[self.y.uid])

    def run(self, buffers, stream):
        """Pack the buffers with the handle on ``stream`` (the consumer stream), execute, wait."""
        old = self.handle.stream
        self.handle.stream = stream
        try:
            pack = VariantPack(self.plan, buffers)
            execute(self.handle, self.plan, pack)
            memory.synchronize(stream)
            pack.close()
        finally:
            self.handle.stream = old

    def check(self, out, ref, what):
        out = np.asarray(out, dtype=np.float64)
        assert out.shape == ref.shape, what
        assert np.isfinite(out).all(), f"{what}: NaN left: the output was not written (or read too early)"
        err = checking.relative_error(out, ref)
        assert err <= checking.tolerance(HALF), f"{what}: relative error {err:.2e} against the fp64 reference"


@pytest.fixture(scope="module")
def case():
    c = Case()
    yield c
    c.plan.close()
    c.handle.close()


def nhwc(values):
    """(N, C, H, W) values in channels-last memory order: an (N, H, W, C) C-contiguous array."""
    return np.ascontiguousarray(values.transpose(0, 2, 3, 1))


def poisoned(shape):
    return np.full(shape, np.nan, np.float16)


def test_cupy_arrays_through_dlpack_on_their_own_stream(case):
    cp = pytest.importorskip("cupy")
    values, ref = case.fresh(1)
    producer, consumer = cp.cuda.Stream(non_blocking=True), cp.cuda.Stream(non_blocking=True)
    with producer:  # the arrays' work is queued on the producer; exported (DLPack) while it is current
        xs = cp.asarray(nhwc(values[case.x.uid])).transpose(0, 3, 1, 2)  # NCHW dims, NHWC strides: a view
        ws = cp.asarray(nhwc(values[case.w.uid])).transpose(0, 3, 1, 2)
        bs = cp.asarray(values[case.b.uid])
        ys = cp.asarray(poisoned((N, H, W, K))).transpose(0, 3, 1, 2)
        case.run({case.x: xs, case.w: ws, case.b: bs, case.y: ys}, consumer.ptr)
    case.check(cp.asnumpy(ys), ref, "cupy (DLPack)")


def test_cupy_arrays_through_the_cuda_array_interface(case):
    cp = pytest.importorskip("cupy")

    class OnlyCAI:  # what numba-style producers offer: __cuda_array_interface__ with the producer's stream
        def __init__(self, a):
            self.a = a

        @property
        def __cuda_array_interface__(self):
            return self.a.__cuda_array_interface__

    values, ref = case.fresh(2)
    producer, consumer = cp.cuda.Stream(non_blocking=True), cp.cuda.Stream(non_blocking=True)
    with producer:
        arrays_ = {case.x: cp.asarray(nhwc(values[case.x.uid])), case.w: cp.asarray(nhwc(values[case.w.uid])),
                   case.b: cp.asarray(values[case.b.uid]), case.y: cp.asarray(poisoned((N, H, W, K)))}
        assert "stream" in arrays_[case.x].__cuda_array_interface__
        case.run({t: OnlyCAI(a) for t, a in arrays_.items()}, consumer.ptr)
    case.check(cp.asnumpy(arrays_[case.y]).transpose(0, 3, 1, 2), ref, "cupy (CUDA array interface)")


def test_jax_arrays(case):
    jax = pytest.importorskip("jax")
    try:
        dev = jax.devices("gpu")[0]
    except RuntimeError:
        pytest.skip("JAX sees no GPU")
    jnp = jax.numpy
    values, ref = case.fresh(3)
    # JAX arrays are row-major: NHWC-shaped arrays are exactly the NHWC tensors' memory
    bufs = {case.x: jax.device_put(nhwc(values[case.x.uid]), dev),
            case.w: jax.device_put(nhwc(values[case.w.uid]), dev), case.b: jax.device_put(values[case.b.uid], dev)}
    with jax.default_device(dev):
        ys = jnp.full((N, H, W, K), jnp.nan, dtype=jnp.float16)
    with pytest.raises(ValueError, match=rf"^UID {case.y.uid} \(y\): the array \(JAX float16 .*\) is read-only, but "
                                         "the plan writes this tensor"):
        case.run({**bufs, case.y: ys}, 0)  # JAX arrays are immutable: never an output
    out = memory.DeviceBuffer(N * H * W * K * 2)  # the output in plain memory instead, poisoned (0xFFFF: NaN)
    out.fill(0xFF)
    bufs[case.y] = out
    case.run(bufs, 0)  # the legacy default stream
    ys = np.frombuffer(out.copy_to_host(), np.float16).reshape(N, H, W, K)
    case.check(ys.transpose(0, 3, 1, 2), ref, "JAX")


def test_numba_arrays_on_their_stream(case):
    numba_cuda = pytest.importorskip("numba.cuda")
    if not numba_cuda.is_available():
        pytest.skip("numba sees no GPU")
    values, ref = case.fresh(4)
    stream = numba_cuda.stream()
    bufs = {case.x: numba_cuda.to_device(nhwc(values[case.x.uid]), stream=stream),
            case.w: numba_cuda.to_device(nhwc(values[case.w.uid]), stream=stream),
            case.b: numba_cuda.to_device(values[case.b.uid], stream=stream),
            case.y: numba_cuda.to_device(poisoned((N, H, W, K)), stream=stream)}
    consumer = memory.device().create_stream()
    case.run(bufs, consumer)
    case.check(bufs[case.y].copy_to_host().transpose(0, 3, 1, 2), ref, "numba")


def test_cuda_core_buffers_and_device_buffers(case):
    values, ref = case.fresh(5)
    dev = memory.device()
    stream = dev.create_stream()
    bufs, keep = {}, []
    for t in (case.x, case.w, case.b):
        spec = case.specs[t.uid]
        buf = dev.allocate(spec.nbytes, stream=stream)  # a cuda.core Buffer: plain memory
        stream.sync()
        memory.copy_to_device(int(buf.handle), inputs.host_layout(values[t.uid], spec))
        bufs[t], keep = buf, keep + [buf]
    out = memory.DeviceBuffer(case.specs[case.y.uid].nbytes)
    out.fill(0xFF)  # NaN
    bufs[case.y] = out
    case.run(bufs, stream)
    raw = np.frombuffer(out.copy_to_host(), np.uint8)
    case.check(arrays.decode(inputs.stored_view(raw, case.specs[case.y.uid]), HALF), ref, "cuda.core / DeviceBuffer")
    out.close()


def test_arrays_that_do_not_describe_their_tensor_are_refused(case):
    cp = pytest.importorskip("cupy")
    values, _ = case.fresh(6)
    good = {case.x: cp.asarray(nhwc(values[case.x.uid])), case.w: cp.asarray(nhwc(values[case.w.uid])),
            case.b: cp.asarray(values[case.b.uid]), case.y: cp.zeros((N, H, W, K), cp.float16)}
    VariantPack(case.plan, good).close()
    nchw = {**good, case.x: cp.asarray(values[case.x.uid])}  # contiguous NCHW for an NHWC tensor
    with pytest.raises(ValueError, match=r"\(x\): the array's strides \[2304, 144, 12, 1\] .* are not the tensor's "
                                         r"\[2304, 1, 192, 16\]"):
        VariantPack(case.plan, nchw)
    wrong_type = {**good, case.y: cp.zeros((N, H, W, K), cp.float32)}
    with pytest.raises(ValueError, match=r"\(y\): the array holds cupy float32 \(CUDNN_DATA_FLOAT\) but the tensor is "
                                         r"CUDNN_DATA_HALF"):
        VariantPack(case.plan, wrong_type)
    sliced = {**good, case.x: cp.asarray(np.concatenate([nhwc(values[case.x.uid])] * 2, axis=3))[..., ::2]}
    with pytest.raises(ValueError, match=r"\(x\): the array's strides .* a view whose elements the tensor cannot "
                                         r"describe"):
        VariantPack(case.plan, sliced)
    with pytest.raises(TypeError, match=r"\(x\): the array \(numpy float16 .* on the host\) is host memory"):
        VariantPack(case.plan, {**good, case.x: nhwc(values[case.x.uid])})
