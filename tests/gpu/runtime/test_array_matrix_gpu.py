"""Arrays of every library in every cuDNN data type the library has, in NHWC, NCHW and strided layouts, through
every entry point (``describe``, ``Tensor.from_array``, ``VariantPack``, ``execute``), on the legacy default stream
and with the arrays made on the library's own stream while cuDNN runs on another.

Libraries: torch, cupy, JAX, numba, cuda.core buffers (plain memory) and numpy (host memory: refused as an array,
one line; numpy scalars bind the by-value scale of every cell). JAX arrays are immutable: refused as the output (one
line, read-only), whose JAX cells write a cuda.core buffer instead. Each cell writes one row (``test: array_matrix``)
to $OUT/gpu-findings.jsonl; ``benchmarks/array_matrix_table.py`` turns them into the table. A cell:

- runs: the arrays bound and executed, the output (poisoned with NaN first) checked against the fp64 reference on
  fresh random inputs; or
- is refused in one line naming the library, the dtype and why (numpy: host memory); or
- is skipped, saying why: the library is not installed (torch blocked in the notorch stage), the library has no
  such dtype or layout (cupy and numba have no bfloat16/fp8 arrays, JAX no strided views), or cuDNN has no engine
  for the cell's graph on this GPU and release (recorded, never an array problem).

Graphs (one plan per data type and layout, shared by the libraries): NHWC and strided views: ``y = x * s``
(pointwise, x in the data type, s a by-value fp32 scalar, y fp32 NHWC); NCHW (no pointwise engine reads NCHW on
Hopper): ``y = conv(x, w)`` with x, w in the data type, y fp32 NCHW.

Booleans: a bool array (a byte an element) is BYTE_BOOLEAN, the "bool" cells; before cuDNN 9.25, which lacks it,
each library's bool array is refused in one line naming the workaround. The "boolean" cells are cuDNN's bit-packed
BOOLEAN, which no library's array holds: only cuda.core buffers bind it, its bits packed eight a byte
(``tune.inputs.host_layout``).
"""
import os

os.environ.setdefault("XLA_PYTHON_CLIENT_PREALLOCATE", "false")  # JAX would take 75% of the GPU otherwise

import contextlib  # noqa: E402
import importlib  # noqa: E402
import zlib  # noqa: E402

import numpy as np  # noqa: E402
import pytest  # noqa: E402

import cudnn_backend as cb  # noqa: E402
from cudnn_backend.core.versions import loaded_version_string  # noqa: E402
from cudnn_backend.graph import Graph, shapes  # noqa: E402
from cudnn_backend.runtime import memory  # noqa: E402
from cudnn_backend.runtime._packing import tensor_specs  # noqa: E402
from cudnn_backend.runtime.execution import VariantPack, execute  # noqa: E402
from cudnn_backend.runtime.heuristics import NoWorkingPlanError, build_first_plan  # noqa: E402
from cudnn_backend.tune import checking, inputs  # noqa: E402
from cudnn_backend.typed import Tensor, arrays  # noqa: E402

D = cb.DataType
F32 = D.CUDNN_DATA_FLOAT
DTYPES = {"float32": F32, "float16": D.CUDNN_DATA_HALF, "bfloat16": D.CUDNN_DATA_BFLOAT16,
          "float8_e4m3fn": D.CUDNN_DATA_FP8_E4M3, "float8_e5m2": D.CUDNN_DATA_FP8_E5M2, "int8": D.CUDNN_DATA_INT8,
          "uint8": D.CUDNN_DATA_UINT8, "int32": D.CUDNN_DATA_INT32, "int64": D.CUDNN_DATA_INT64,
          "bool": D.CUDNN_DATA_BYTE_BOOLEAN, "boolean": D.CUDNN_DATA_BOOLEAN}
# data types the loaded cuDNN lacks (BYTE_BOOLEAN before 9.25): no graph; their arrays are refused
MISSING = {name for name, dt in DTYPES.items() if not cb.is_available(dt.name)}
LAYOUTS = ("nhwc", "nchw", "strided")
STREAMS = ("default", "own")
LIBRARIES = ("torch", "cupy", "jax", "numba", "cuda.core", "numpy")
N, C, H, W = 2, 8, 4, 6
K = 8  # the conv's output channels
SCALE = 2.0
TOL = {"pointwise": 1e-6, "conv": 5e-3}  # x * 2 is exact in fp32; the conv may run tf32 for fp32 inputs

# Cells whose plan built and ran but gave outputs the fp64 reference refuses, measured on an H200 (2026-11-28,
# benchmarks/results/2026-11-28-h200/run2: every library alike, so not how an array is read): (dtype, layout) ->
# (the releases, as a test of the loaded version, and what was seen). Such a cell is an expected failure while it
# stays wrong, and fails the moment it comes out right (then it leaves this table). The cause is not isolated yet:
# cuDNN's engine, or what this graph asks of it.
KNOWN_WRONG = {
    # (bool arrays read as BOOLEAN were wrong here, relative error ~1.0 on 9.19.0 and 9.28.1 (engine 1): cuDNN reads
    # BOOLEAN bit-packed, eight elements a byte (the x * s kernel's SASS on 9.28.1). A bool array is BYTE_BOOLEAN now
    # (offline 9.28.1 has no engine for x * s over it: "no engine"), and the "boolean" cells bind packed bits.)
    # (INT8 in NCHW: engine 71 reads the tensors as NHWC (0.13-0.16 on 9.19.0 and 9.28.1), and the known errata deny it
    # from 9.11: the cell runs the next engine, which must be right)
    # (FP8 in NCHW: engine 7 reads the tensors as NHWC, and the package's known errata deny it from 9.11: the cell has
    # no engine unless the GPU's heuristics offer another, whose results this entry then still expects wrong)
    ("float8_e4m3fn", "nchw"): (lambda v: True, "FP8 conv, FLOAT output (engine 7): relative error 1.3-1.5"),
    ("float8_e5m2", "nchw"): (lambda v: True, "FP8 conv, FLOAT output (engine 7): relative error 1.3-1.5"),
}
# x * s over gapped strides: 9.19.0 offers no engine; from 9.20 engine 1 is offered and computes wrong results (0.85-1.27
# on 9.28.1 for every type), and the package's known errata deny it (data/known_errata.json): no engine either way
# the dtypes each library has natively: their cells must run; others may be refused (one line, naming both)
NATIVE = {"torch": set(DTYPES) - {"boolean"}, "jax": set(DTYPES) - {"boolean"}, "cuda.core": set(DTYPES),
          "cupy": {"float32", "float16", "int8", "uint8", "int32", "int64", "bool"},
          "numba": {"float32", "float16", "int8", "uint8", "int32", "int64", "bool"}}


class Lacks(Exception):
    """The library has no array of this dtype or layout."""


# ---------------------------------------------------------------------------------------------
# the graphs and their plans, one per data type and layout
# ---------------------------------------------------------------------------------------------
def x_strides(layout, dims):
    if layout == "nchw":
        return shapes.layout_strides(dims, "nchw")
    if layout == "nhwc":
        return shapes.layout_strides(dims, "nhwc")
    n, c, h, w = dims  # every other W of an NHWC array twice as wide
    return [h * 2 * w * c, 1, 2 * w * c, 2 * c]


class Cell:
    """The graph of one data type and layout, its plan (or why cuDNN has none) and its tensors' specs. Offline
    (``handle=None``) the plan is built for the bundled H200 profile (tests/test_gpu_kit.py)."""

    def __init__(self, handle, dtype, layout, device_profile=None):
        self.dtype, self.layout, self.data_type = dtype, layout, DTYPES[dtype]
        self.kind = "conv" if layout == "nchw" else "pointwise"
        dt = self.data_type
        integer = dt in (D.CUDNN_DATA_INT8, D.CUDNN_DATA_UINT8)
        g = Graph(f"matrix_{dtype}_{layout}", io_data_type=F32,
                  compute_data_type=D.CUDNN_DATA_INT32 if integer and self.kind == "conv" else F32)
        self.x = g.tensor([N, C, H, W], x_strides(layout, [N, C, H, W]), dt, name="x")
        if self.kind == "conv":
            self.w = g.tensor([K, C, 3, 3], shapes.layout_strides([K, C, 3, 3], "nchw"), dt, name="w")
            self.s = None
            self.y = g.conv_fwd(self.x, self.w, padding=1, output=True, output_data_type=F32, name="y")
        else:
            self.w = None
            self.s = g.tensor([1, 1, 1, 1], [1, 1, 1, 1], F32, by_value=True, name="s")
            self.y = g.tensor([N, C, H, W], shapes.layout_strides([N, C, H, W], "nhwc"), F32, name="y")
            g.pointwise("CUDNN_POINTWISE_MUL", self.x, self.s, output=self.y)
        self.og = g.build(handle)
        self.specs = tensor_specs(operation_graph=self.og)
        try:
            self.plan, _ = build_first_plan(self.og, handle=handle, device_profile=device_profile)
            self.no_engine = None
        except NoWorkingPlanError as e:
            self.plan, self.no_engine = None, str(e).splitlines()[0][:300]

    def inputs(self, seed):
        """Fresh random inputs: {name: storage values in logical dims}, and the fp64 reference of y on them."""
        rng = np.random.default_rng(seed)
        values = {"x": inputs.random_values(self.specs[self.x.uid], rng)}
        feed = {self.x.uid: arrays.decode(values["x"], self.data_type)}
        if self.w is not None:
            values["w"] = inputs.random_values(self.specs[self.w.uid], rng)
            feed[self.w.uid] = arrays.decode(values["w"], self.data_type)
        else:
            feed[self.s.uid] = SCALE
        ref = cb.reference.evaluate(self.og, feed)
        assert ref.method == "fp64 reference", ref.method
        return values, np.asarray(ref.outputs[self.y.uid], dtype=np.float64)


_cells = {}


def cell_for(handle, dtype, layout):
    key = (dtype, layout)
    if key not in _cells:
        _cells[key] = Cell(handle, dtype, layout)
    return _cells[key]


def memories(values, layout):
    """Host memory of logical (N, C, H, W) values for a layout: (array in memory order, how to view it)."""
    if layout == "nchw":
        return np.ascontiguousarray(values), "as_is"
    nhwc = np.ascontiguousarray(values.transpose(0, 2, 3, 1))
    if layout == "nhwc":
        return nhwc, "permute"
    n, h, w, c = nhwc.shape
    wide = np.zeros((n, h, 2 * w, c), nhwc.dtype)
    wide[:, :, ::2, :] = nhwc
    return wide, "every_other_w"


def ml_dtype(dtype):
    """The numpy dtype of a cuDNN dtype name (bfloat16 and fp8 from ml_dtypes; None without it)."""
    if dtype in ("bfloat16", "float8_e4m3fn", "float8_e5m2"):
        ml = pytest.importorskip("ml_dtypes", reason="ml_dtypes (bfloat16/fp8 numpy dtypes) is not installed")
        return np.dtype(getattr(ml, dtype))
    return np.dtype(dtype)


def typed_host(storage, dtype):
    """Storage values (uint16 bits, uint8 codes, ...) as a numpy array of the dtype itself."""
    want = ml_dtype(dtype)
    return storage.view(want) if storage.dtype != want else storage


# ---------------------------------------------------------------------------------------------
# the libraries
# ---------------------------------------------------------------------------------------------
class Library:
    name = ""
    module = ""
    views = True  # arrays can be permuted/strided views of their memory (else only row-major arrays)

    def __init__(self):
        self.mod = None
        self.stream = None  # the library's own stream of the cell ("own"), else None

    def available(self):
        try:
            self.mod = importlib.import_module(self.module)
        except ImportError as e:  # (ModuleNotFoundError: torch blocked in the notorch stage)
            return f"{self.name} is not importable here ({type(e).__name__}: {e})"
        return self.check()

    def check(self):
        return None

    def producer_stream(self):
        """A context manager making the library's own stream current (or a null one: see ``stream``)."""
        return contextlib.nullcontext()

    def array(self, storage, dtype, layout):
        raise NotImplementedError

    def output(self, dims, layout):
        """A poisoned (NaN) fp32 output of logical dims in ``layout`` ("nhwc"/"nchw"): (object, reader)."""
        raise NotImplementedError


class Torch(Library):
    name, module = "torch", "torch"

    def check(self):
        return None if self.mod.cuda.is_available() else "torch sees no GPU"

    def producer_stream(self):
        return self.mod.cuda.stream(self.mod.cuda.Stream())

    def array(self, storage, dtype, layout):
        torch = self.mod
        mem, how = memories(storage, layout)
        if mem.dtype == np.uint16:  # bfloat16 bits: torch views int16 (fully supported) as bfloat16
            mem = mem.view(np.int16)
        t = torch.from_numpy(mem).cuda()
        if str(t.dtype) != f"torch.{dtype}":
            t = t.view(getattr(torch, dtype))
        if how == "permute":
            return t.permute(0, 3, 1, 2)
        if how == "every_other_w":
            return t[:, :, ::2, :].permute(0, 3, 1, 2)
        return t

    def output(self, dims, layout):
        torch = self.mod
        n, c, h, w = dims
        if layout == "nhwc":
            y = torch.full((n, h, w, c), float("nan"), device="cuda").permute(0, 3, 1, 2)
        else:
            y = torch.full(tuple(dims), float("nan"), device="cuda")
        return y, lambda: y.cpu().double().numpy()


class Cupy(Library):
    name, module = "cupy", "cupy"

    def producer_stream(self):
        return self.mod.cuda.Stream(non_blocking=True)

    def array(self, storage, dtype, layout):
        cp = self.mod
        mem, how = memories(storage, layout)
        try:
            a = cp.asarray(mem)
            if dtype in ("bfloat16", "float8_e4m3fn", "float8_e5m2"):
                a = a.view(ml_dtype(dtype))
        except Exception as e:  # noqa: BLE001 - cupy has no such dtype
            raise Lacks(f"cupy has no {dtype} arrays ({type(e).__name__}: {e})") from None
        if how == "permute":
            return a.transpose(0, 3, 1, 2)
        if how == "every_other_w":
            return a[:, :, ::2, :].transpose(0, 3, 1, 2)
        return a

    def output(self, dims, layout):
        cp = self.mod
        n, c, h, w = dims
        y = cp.full((n, h, w, c), cp.nan, cp.float32).transpose(0, 3, 1, 2) if layout == "nhwc" else \
            cp.full(tuple(dims), cp.nan, cp.float32)
        return y, lambda: cp.asnumpy(y).astype(np.float64)


class Jax(Library):
    name, module, views = "JAX", "jax", False

    def check(self):
        try:
            self.dev = self.mod.devices("gpu")[0]
        except RuntimeError:
            return "JAX sees no GPU"
        return None

    def array(self, storage, dtype, layout):
        if layout == "strided":
            raise Lacks("JAX arrays have no strided views (a slice is a copy)")
        if dtype == "int64" and not self.mod.config.jax_enable_x64:
            raise Lacks("JAX has no int64 arrays without jax_enable_x64")
        mem, _ = memories(storage, layout)
        a = self.mod.device_put(typed_host(mem, dtype), self.dev)
        a.block_until_ready()
        return a  # row-major: (N, H, W, C) for NHWC, the same memory as the tensor's

    def output(self, dims, layout):
        jnp = self.mod.numpy
        n, c, h, w = dims
        with self.mod.default_device(self.dev):
            y = jnp.full((n, h, w, c) if layout == "nhwc" else tuple(dims), jnp.nan, dtype=jnp.float32)
        y.block_until_ready()
        return y, None  # JAX arrays are immutable: a variant pack refuses one as an output (test_array_matrix)


class Numba(Library):
    name, module, views = "numba", "numba.cuda", False

    def check(self):
        return None if self.mod.is_available() else "numba sees no GPU"

    def producer_stream(self):
        self.stream = self.mod.stream()
        return contextlib.nullcontext()

    def array(self, storage, dtype, layout):
        mem, how = memories(storage, layout)
        try:
            host = typed_host(mem, dtype)
            a = self.mod.to_device(host, stream=self.stream or 0)
        except Exception as e:  # noqa: BLE001 - numba has no such dtype
            raise Lacks(f"numba has no {dtype} device arrays ({type(e).__name__}: {e})") from None
        if how != "every_other_w":
            return a  # (N, H, W, C) memory order for NHWC
        try:
            return a[:, :, ::2, :]
        except Exception as e:  # noqa: BLE001
            raise Lacks(f"numba device arrays have no strided views ({type(e).__name__}: {e})") from None

    def output(self, dims, layout):
        n, c, h, w = dims
        shape = (n, h, w, c) if layout == "nhwc" else tuple(dims)
        y = self.mod.to_device(np.full(shape, np.nan, np.float32), stream=self.stream or 0)
        return y, lambda: (y.copy_to_host().transpose(0, 3, 1, 2) if layout == "nhwc" else y.copy_to_host()).astype(
            np.float64)


class CudaCore(Library):
    name, module = "cuda.core", "cuda.core"

    def producer_stream(self):
        self.stream = memory.device().create_stream()
        return contextlib.nullcontext()

    def buffer(self, storage, spec):
        """Plain memory (no dtype, no shape) holding ``storage`` at the tensor's strided places."""
        dev = memory.device()
        stream = self.stream or dev.default_stream
        buf = dev.allocate(max(1, spec.nbytes), stream=stream)
        stream.sync()
        memory.copy_to_device(int(buf.handle), inputs.host_layout(storage, spec))
        return buf

    def output(self, dims, layout, spec=None):
        out = memory.DeviceBuffer(spec.nbytes)
        out.fill(0xFF)  # NaN
        return out, lambda: inputs.stored_view(np.frombuffer(out.copy_to_host(), np.uint8), spec).astype(np.float64)


class Numpy(Library):
    name, module = "numpy", "numpy"

    def array(self, storage, dtype, layout):
        mem, how = memories(typed_host(storage, dtype), layout)
        if how == "permute":
            return mem.transpose(0, 3, 1, 2)
        if how == "every_other_w":
            return mem[:, :, ::2, :].transpose(0, 3, 1, 2)
        return mem


ADAPTERS = {"torch": Torch, "cupy": Cupy, "jax": Jax, "numba": Numba, "cuda.core": CudaCore, "numpy": Numpy}
_available = {}


def library(name):
    if name not in _available:
        lib = ADAPTERS[name]()
        _available[name] = (lib, lib.available())
    return _available[name]


# ---------------------------------------------------------------------------------------------
# one cell
# ---------------------------------------------------------------------------------------------
def refuse_missing(lib, lib_name, dtype, layout, finish):
    """A cell whose data type the loaded cuDNN lacks (bool before 9.25): the array is described without a data
    type and ``Tensor.from_array`` refuses it in one line naming the library's dtype, the release and the
    workaround; never described as another type."""
    if lib_name == "cuda.core":
        why = f"plain memory has no dtype, and cuDNN {loaded_version_string()} has no {DTYPES[dtype].name}"
        finish("skipped", why)
        pytest.skip(why)
    try:
        x = lib.array(np.zeros((N, C, H, W), np.bool_), dtype, layout)
    except Lacks as e:
        finish("lacks", e)
        pytest.skip(str(e))
    info = arrays.describe(x)
    assert info.data_type is None, f"{lib_name} {dtype}: described as {info.describe()}"
    with pytest.raises(TypeError) as refused:
        Tensor.from_array(x, uid=99)
    line = str(refused.value)
    assert "\n" not in line and dtype in line and loaded_version_string() in line and "packbits" in line, line
    finish("refused", line, entry=["describe", "from_array"])


@pytest.mark.parametrize("stream", STREAMS)
@pytest.mark.parametrize("layout", LAYOUTS)
@pytest.mark.parametrize("dtype", list(DTYPES))
@pytest.mark.parametrize("lib_name", LIBRARIES)
def test_array_matrix(gpu_handle, results_file, lib_name, dtype, layout, stream):
    row = dict(test="array_matrix", library=lib_name, dtype=dtype, layout=layout, stream=stream)

    def finish(status, detail="", **extra):
        results_file(**row, status=status, detail=" ".join(str(detail).split())[:400], **extra)

    lib, missing = library(lib_name)
    if missing:
        finish("skipped", missing)
        pytest.skip(missing)
    if dtype == "boolean" and lib_name != "cuda.core":
        why = f"{lib_name} has no bit-packed boolean arrays (cuDNN's BOOLEAN); cuda.core buffers bind its packed bits"
        finish("lacks", why)
        pytest.skip(why)
    if dtype in MISSING:
        refuse_missing(lib, lib_name, dtype, layout, finish)
        return
    c = cell_for(gpu_handle, dtype, layout)
    seed = zlib.crc32(f"{lib_name} {dtype} {layout} {stream}".encode())
    values, ref = c.inputs(seed)
    x_spec = c.specs[c.x.uid]
    y_spec = c.specs[c.y.uid]
    y_layout = "nchw" if c.kind == "conv" else "nhwc"
    consumer = memory.device().create_stream() if stream == "own" else None
    lib.stream = None
    ctx = lib.producer_stream() if stream == "own" else contextlib.nullcontext()
    entry = []
    with ctx:
        try:
            if lib_name == "cuda.core":
                bufs = {c.x: lib.buffer(values["x"], x_spec)}
                if c.w is not None:
                    bufs[c.w] = lib.buffer(values["w"], c.specs[c.w.uid])
                y_obj, read_y = lib.output(y_spec.dims, y_layout, y_spec)
            else:
                x = lib.array(values["x"], dtype, layout)
                bufs = {c.x: x}
                if c.w is not None:
                    bufs[c.w] = lib.array(values["w"], dtype, "nchw")
                if lib_name == "numpy":  # host memory: refused in one line, naming the library and dtype
                    y_obj = memory.DeviceBuffer(y_spec.nbytes)
                    read_y = None
                else:
                    y_obj, read_y = lib.output(y_spec.dims, y_layout)
                if lib_name == "jax":  # refused as the output (JAX arrays are immutable): y in plain memory
                    jax_y, (y_obj, read_y) = y_obj, library("cuda.core")[0].output(y_spec.dims, y_layout, y_spec)
        except Lacks as e:
            finish("lacks", e)
            pytest.skip(str(e))
        if lib_name != "cuda.core":
            try:
                info = arrays.describe(x)  # entry point: describe
            except TypeError as e:
                line = str(e)
                assert dtype not in NATIVE.get(lib_name, ()), f"{lib_name} {dtype} refused: {line}"
                assert "\n" not in line and dtype in line, line
                finish("refused", line, entry=["describe"])
                return
            entry.append("describe")
            assert info.data_type is c.data_type, f"{lib_name} {dtype}: described as {info.describe()}"
            assert arrays.layout_mismatch(info, x_spec.dims, x_spec.strides) is None, info.describe()
            if tuple(info.shape) == tuple(x_spec.dims):  # libraries with views: the tensor from the array
                t = Tensor.from_array(x, uid=99)  # entry point: Tensor.from_array
                sig = t.signature()
                assert (tuple(sig[1]), tuple(sig[2]), sig[3]) == (tuple(x_spec.dims), tuple(x_spec.strides),
                                                                   c.data_type), t.describe()
                entry.append("from_array")
        if c.no_engine:  # the array was read; cuDNN cannot run the graph: recorded, never an array problem
            finish("no engine", f"cuDNN has no engine for the {c.kind} graph of {dtype} {layout}: {c.no_engine}",
                   entry=entry)
            pytest.skip(f"no cuDNN engine for {dtype} {layout} (read: {', '.join(entry) or 'nothing'}): "
                        f"{c.no_engine}")
        if c.s is not None:
            bufs[c.s] = np.float32(SCALE)  # numpy host scalar: by value
        old = gpu_handle.stream
        gpu_handle.stream = consumer if consumer is not None else 0
        try:
            if lib_name == "numpy":
                with pytest.raises(TypeError) as refused:
                    VariantPack(c.plan, {**bufs, c.y: y_obj})
                line = str(refused.value)
                assert "\n" not in line and "numpy" in line and dtype in line and "host memory" in line, line
                finish("refused", line, entry=entry + ["VariantPack"])
                return
            if lib_name == "jax":
                with pytest.raises(ValueError, match=r"the array \(JAX float32 .*\) is read-only, but the plan "
                                                     r"writes this tensor"):
                    VariantPack(c.plan, {**bufs, c.y: jax_y})
            pack = VariantPack(c.plan, {**bufs, c.y: y_obj})  # entry point: VariantPack (orders the producer)
            entry.append("VariantPack")
        finally:
            gpu_handle.stream = old
    gpu_handle.stream = consumer if consumer is not None else 0
    try:
        execute(gpu_handle, c.plan, pack)  # entry point: execute
        entry.append("execute")
        memory.synchronize(consumer if consumer is not None else 0)
    finally:
        gpu_handle.stream = old
        pack.close()
    out = read_y()
    assert out.shape == ref.shape, (out.shape, ref.shape)
    assert np.isfinite(out).all(), f"{lib_name} {dtype} {layout} {stream}: NaN left: not written, or read too early"
    err = checking.relative_error(out, ref)
    ok = err <= TOL[c.kind]
    finish("ran" if ok else "wrong", f"relative error {err:.2e} against the fp64 reference", entry=entry,
           engine=c.plan.engine_index, error=err)
    known = KNOWN_WRONG.get((dtype, layout))
    if known is not None and known[0](cb.get_version()):
        assert not ok, f"{lib_name} {dtype} {layout} {stream} is right now (relative error {err:.2e}): take it out " \
                       f"of KNOWN_WRONG ({known[1]})"
        pytest.xfail(f"wrong results measured before: {known[1]} (here: {err:.2e})")
    assert ok, f"{lib_name} {dtype} {layout} {stream}: relative error {err:.2e} > {TOL[c.kind]:.0e}"
