"""torch interop on the GPU, the point of these tests (they skip where torch cannot be imported; everything else
runs without it): torch tensors bound in variant packs (channels-last and contiguous, rebound, positional), a torch
stream as the handle's stream, and the package's DeviceBuffer read by torch through __cuda_array_interface__.
References in numpy (the kit's), on the values the torch tensors hold."""
import pytest

torch = pytest.importorskip("torch", reason="these tests are about torch interop (torch tensors, torch streams)")

import numpy as np  # noqa: E402

from cudnn_backend.runtime import memory  # noqa: E402
from cudnn_backend.runtime.execution import VariantPack, execute  # noqa: E402

from tests.gpu.kit import conv2d  # noqa: E402

TOL = 1e-2  # fp16


def _tensor(t, fill):
    """A CUDA torch tensor with exactly the cuDNN tensor's dims, strides and data type (fp16 here)."""
    out = torch.empty_strided(tuple(t.shape), tuple(t.get_keyword("strides")), dtype=torch.float16, device="cuda")
    if fill == "randn":
        out.copy_(torch.randn(tuple(t.shape), device="cuda"))
    else:
        out.fill_(float("nan"))
    return out


def _values(t):
    torch.cuda.synchronize()
    return t.double().cpu().numpy()


@pytest.fixture
def conv(gpu_kit):
    kit = gpu_kit
    case = kit.conv_fwd_case(kit.PRECISIONS["fp16"].io, "nhwc")
    return kit, case, kit.plan(case)


@pytest.mark.parametrize("layout", ["nhwc", "nchw"])
def test_torch_tensors_in_a_variant_pack(gpu_kit, layout):
    kit = gpu_kit
    case = kit.conv_fwd_case(kit.PRECISIONS["fp16"].io, layout)
    plan = kit.plan(case)
    x, w, y = _tensor(case.x, "randn"), _tensor(case.w, "randn"), _tensor(case.y, "nan")
    assert x.is_contiguous(memory_format=torch.channels_last) == (layout == "nhwc")
    pack = VariantPack(plan, {case.x: x, case.w: w, case.y: y})
    execute(kit.handle, plan, pack)
    kit.check(_values(y), conv2d(_values(x), _values(w), padding=1), TOL, f"torch tensors, {layout}")
    # rebound to new torch tensors, and positionally by data_ptr()
    y2 = _tensor(case.y, "nan")
    pack.rebind({case.y: y2})
    execute(kit.handle, plan, pack)
    kit.check(_values(y2), conv2d(_values(x), _values(w), padding=1), TOL, f"rebound torch output, {layout}")
    by_uid = {case.x.uid: x, case.w.uid: w, case.y.uid: _tensor(case.y, "nan")}
    pack.bind_and_execute(kit.handle, plan, tuple(by_uid[u].data_ptr() for u in pack.pointer_uids))
    kit.check(_values(by_uid[case.y.uid]), conv2d(_values(x), _values(w), padding=1), TOL,
              f"bind_and_execute with data_ptr(), {layout}")


def test_a_torch_stream_as_the_handles_stream(conv):
    kit, case, plan = conv
    handle = kit.handle
    side = torch.cuda.Stream()
    x, w, y = _tensor(case.x, "randn"), _tensor(case.w, "randn"), _tensor(case.y, "nan")
    pack = VariantPack(plan, {case.x: x, case.w: w, case.y: y})
    torch.cuda.synchronize()
    try:
        handle.stream = side
        assert handle.stream == side.cuda_stream
        execute(handle, plan, pack)
        side.synchronize()
    finally:
        handle.stream = 0
    kit.check(_values(y), conv2d(_values(x), _values(w), padding=1), TOL, "on a torch side stream")


def test_a_device_buffer_read_by_torch(conv):
    kit, case, plan = conv
    with memory.DeviceBuffer(256) as buf:
        buf.fill(7)
        t = torch.as_tensor(buf, device="cuda")  # through __cuda_array_interface__
        assert t.dtype == torch.uint8 and t.numel() == 256 and t.data_ptr() == buf.ptr
        assert bool((t == 7).all())
        del t
    # a DeviceBuffer as the output of a conv, viewed through torch with the tensor's strides
    x, w = _tensor(case.x, "randn"), _tensor(case.w, "randn")
    y_like = _tensor(case.y, "nan")
    with memory.DeviceBuffer(y_like.numel() * y_like.element_size()) as out:
        pack = VariantPack(plan, {case.x: x, case.w: w, case.y: out})
        execute(kit.handle, plan, pack)
        torch.cuda.synchronize()
        flat = torch.as_tensor(out, device="cuda").view(torch.float16)
        y = torch.as_strided(flat, tuple(y_like.shape), tuple(y_like.stride()))
        kit.check(_values(y), conv2d(_values(x), _values(w), padding=1), TOL, "into a DeviceBuffer, read by torch")
        del flat, y
        pack.close()
    assert np.isnan(_values(y_like)).all()
