"""The fp8 graphs end to end over torch fp8 tensors (float8_e4m3fn, float8_e5m2), bound through the torch reader
(cuda.core's torch path and torch's CUDA array interface read no fp8): a conv with descale, scale and amax, and a
transpose + convert + amax (the transpose in the binding: a permuted view). Fresh random inputs, outputs poisoned
with NaN first, each output checked against the fp64 reference evaluator (which holds an fp8 output as fp8 stores
it: rounded and saturated); each result is a row of
$OUT/gpu-findings.jsonl. The transpose in the graph itself is tried and reported (cuDNN 9.19/9.28: no Hopper engine).
"""
import numpy as np
import pytest

import cudnn_backend as cb
from cudnn_backend.runtime.execution import VariantPack, execute
from cudnn_backend.runtime.heuristics import NoWorkingPlanError, build_first_plan
from cudnn_backend.runtime._packing import tensor_specs
from cudnn_backend.tune import checking, inputs
from cudnn_backend.typed import arrays

from tests.gpu.runtime.fp8_graphs import E4M3, E5M2, scaled_conv, transpose_convert_amax, transpose_in_the_graph

torch = pytest.importorskip("torch")
FP8 = {E4M3: "float8_e4m3fn", E5M2: "float8_e5m2"}
# relative L2 error of an fp8 output against the reference's stored fp8 values: an accumulation order apart, a few
# values land on the neighbouring fp8 code
TOLERANCE = 0.02
NAN_CODE = 0x7F  # a NaN in both E4M3 (S.1111.111) and E5M2 (S.11111.11)


def _device_nhwc(values, dtype):
    """Logical (N, C, H, W) storage values as a CUDA tensor of ``dtype`` with channels-last memory (a permuted view
    of an (N, H, W, C) tensor)."""
    host = torch.from_numpy(np.ascontiguousarray(values.transpose(0, 2, 3, 1)))
    t = host.cuda()
    if str(t.dtype) != f"torch.{dtype}":
        t = t.view(getattr(torch, dtype))
    return t.permute(0, 3, 1, 2)


def _poisoned_fp8(dims, data_type):
    n, c, h, w = dims
    return torch.full((n, h, w, c), NAN_CODE, dtype=torch.uint8, device="cuda").view(
        getattr(torch, FP8[data_type])).permute(0, 3, 1, 2)


def _fp8_values(t, data_type):
    return arrays.decode(t.view(torch.uint8).cpu().numpy(), data_type)


def _check_fp8(out, ref, data_type, what):
    assert np.isfinite(out).all(), f"{what}: NaN left: the output was not written"
    # the reference's values of a real fp8 tensor are its stored ones: encoding them again changes nothing
    assert np.array_equal(arrays.decode(arrays.encode(ref, data_type), data_type), ref, equal_nan=True), \
        f"{what}: the reference did not hold its {data_type.name} output as stored"
    err = checking.relative_error(out, ref)
    assert err <= TOLERANCE, f"{what}: {err:.3e} from the fp64 reference's {data_type.name} values"
    return err


def _run(handle, og, bufs):
    plan, _ = build_first_plan(og, handle=handle)
    stream = torch.cuda.Stream()  # the tensors were made on torch's current stream; cuDNN runs on another
    old = handle.stream
    handle.stream = stream.cuda_stream
    try:
        with VariantPack(plan, bufs) as pack:
            execute(handle, plan, pack)
        stream.synchronize()
    finally:
        handle.stream = old
    return plan


@pytest.mark.parametrize("data_type", [E4M3, E5M2], ids=["e4m3", "e5m2"])
def test_scaled_conv_with_descale_and_amax(gpu_handle, results_file, data_type):
    g, t = scaled_conv(io=data_type)
    og = g.build(gpu_handle)
    specs = tensor_specs(operation_graph=og)
    rng = np.random.default_rng(11)
    codes = {k: inputs.random_values(specs[t[k].uid], rng) for k in ("x", "w")}
    x, w = (_device_nhwc(codes[k], FP8[data_type]) for k in ("x", "w"))
    y = _poisoned_fp8(specs[t["y"].uid].dims, data_type)
    amax = torch.full((1, 1, 1, 1), float("nan"), device="cuda")
    plan = _run(gpu_handle, og, {t["x"]: x, t["w"]: w, t["y"]: y, t["amax"]: amax})
    ref = cb.reference.evaluate(og, {t[k].uid: arrays.decode(codes[k], data_type) for k in ("x", "w")})
    assert ref.method == "fp64 reference", ref.method
    err = _check_fp8(_fp8_values(y, data_type), np.asarray(ref.outputs[t["y"].uid]), data_type, "y")
    got, want = float(amax.item()), float(np.asarray(ref.outputs[t["amax"].uid]).ravel()[0])
    assert abs(got - want) <= 1e-3 * abs(want), f"amax {got} against the fp64 reference's {want}"
    results_file(test="fp8_scaled_conv", dtype=FP8[data_type], engine=plan.engine_index, y_err=err,
                 amax=got, amax_ref=want)


@pytest.mark.parametrize("data_type", [E4M3, E5M2], ids=["e4m3", "e5m2"])
def test_transpose_convert_amax(gpu_handle, results_file, data_type):
    g, t = transpose_convert_amax(out=data_type)
    og = g.build(gpu_handle)
    specs = tensor_specs(operation_graph=og)
    bits = inputs.random_values(specs[t["x"].uid], np.random.default_rng(12))  # bfloat16 bits, logical NCHW
    x = _device_nhwc(bits.view(np.int16), "bfloat16")  # (int16 -> bfloat16: torch views the bits)
    assert not x.is_contiguous() and x.stride()[1] == 1  # the transposed view: NCHW dims over NHWC memory
    y = _poisoned_fp8(specs[t["y"].uid].dims, data_type)
    amax = torch.full((1, 1, 1, 1), float("nan"), device="cuda")
    plan = _run(gpu_handle, og, {t["x"]: x, t["y"]: y, t["amax"]: amax})
    xv = arrays.decode(bits, cb.DataType.CUDNN_DATA_BFLOAT16)
    ref = cb.reference.evaluate(og, {t["x"].uid: xv})
    err = _check_fp8(_fp8_values(y, data_type), np.asarray(ref.outputs[t["y"].uid]), data_type, "y")
    got, want = float(amax.item()), float(np.abs(xv).max())
    assert got == want, f"amax {got}, max |x| {want}"  # exact: a max of bfloat16 values
    results_file(test="fp8_transpose_convert_amax", dtype=FP8[data_type], engine=plan.engine_index, y_err=err,
                 amax=got)


def test_the_transpose_in_the_graph_is_reported(gpu_handle, results_file):
    """cuDNN 9.19/9.28 build no Hopper plan for a pointwise whose output strides permute its input's; a release
    that does is run and checked like the others."""
    g, t = transpose_in_the_graph()
    og = g.build(gpu_handle)
    try:
        plan, _ = build_first_plan(og, handle=gpu_handle)
    except NoWorkingPlanError as e:
        results_file(test="fp8_transpose_in_the_graph", status="no engine", reason=str(e).splitlines()[0][:300])
        pytest.skip(f"no engine for the transpose in the graph on this GPU and release: {str(e).splitlines()[0]}")
    specs = tensor_specs(operation_graph=og)
    bits = inputs.random_values(specs[t["x"].uid], np.random.default_rng(13))
    x = torch.from_numpy(bits.view(np.int16)).cuda().view(torch.bfloat16)
    m, n = specs[t["x"].uid].dims[1:]
    y = torch.full((1, n, m), NAN_CODE, dtype=torch.uint8, device="cuda").view(torch.float8_e4m3fn).transpose(1, 2)
    amax = torch.full((1, 1, 1), float("nan"), device="cuda")
    with VariantPack(plan, {t["x"]: x, t["y"]: y, t["amax"]: amax}) as pack:
        execute(gpu_handle, plan, pack)
    torch.cuda.synchronize()
    xv = arrays.decode(bits, cb.DataType.CUDNN_DATA_BFLOAT16)
    ref = cb.reference.evaluate(og, {t["x"].uid: xv})
    err, _ = _check_fp8(_fp8_values(y, E4M3), np.asarray(ref.outputs[t["y"].uid]), E4M3, "y")
    assert float(amax.item()) == float(np.abs(xv).max())
    results_file(test="fp8_transpose_in_the_graph", status="ran", engine=plan.engine_index, y_err=err)
