"""Variant packs and execute: buffers from torch, cupy, DLPack, ``__cuda_array_interface__`` and cuda.core;
streams.

With a GPU it runs conv + bias + ReLU with buffers of each kind and checks the result against torch.
Without one it builds the plan against the bundled H200 profile and a variant pack of made-up (aligned)
device addresses: every check of the pack runs, nothing executes. Then it says what it skipped.

    python examples/execute.py
"""
import sys

import cudnn_backend as cb
from cudnn_backend.core.device import gpu_available

from conv_bias_relu import C, H, K, N, R, S, W, graph_api


def tensors_by_name(graph):
    """{name: Tensor} of a Graph's tensors (``graph.tensors`` is {uid: Tensor})."""
    return {t.name: t for t in graph.tensors.values()}


# [offline]
def offline_pack():
    """No GPU: a plan for the H200, and a pack of made-up 256-byte-aligned addresses, checked against it."""
    g = graph_api()
    plan, _ = cb.build_first_plan(g.op_graph, device_profile=cb.DeviceProfile.bundled())
    t = tensors_by_name(g)
    fake = {name: 0x7F0000000000 + i * 0x10000000 for i, name in enumerate(("x", "w", "b", "y"))}
    pack = cb.VariantPack(plan, {t[name].uid: address for name, address in fake.items()})
    return plan, pack
# [/offline]


# [torch]
def run_torch(handle):
    """torch tensors in channels-last (NHWC) memory: the graph's strides. The pack checks UIDs, sizes,
    alignment and data types once; execute() then only launches (GIL released)."""
    import torch

    handle.stream = torch.cuda.current_stream()        # cuDNN launches on torch's current stream
    g = graph_api(handle)                              # built WITH the handle it will run on
    plan, _ = cb.build_first_plan(g.op_graph, handle=handle)
    t = tensors_by_name(g)
    cl = torch.channels_last
    x = torch.randn(N, C, H, W, device="cuda", dtype=torch.half).to(memory_format=cl)
    w = (0.1 * torch.randn(K, C, R, S, device="cuda", dtype=torch.half)).to(memory_format=cl)
    b = torch.randn(1, K, 1, 1, device="cuda", dtype=torch.half).to(memory_format=cl)
    y = torch.empty(N, K, H, W, device="cuda", dtype=torch.half).to(memory_format=cl)
    pack = cb.VariantPack(plan, {t["x"].uid: x, t["w"].uid: w, t["b"].uid: b, t["y"].uid: y})
    cb.execute(handle, plan, pack)
    ref = torch.relu(torch.nn.functional.conv2d(x.float(), w.float(), padding=1) + b.float())
    torch.cuda.synchronize()
    return g, plan, pack, (x, w, b), float((y.float() - ref).abs().max()), ref
# [/torch]


# [rebind]
def rebind(handle, plan, pack, y_uid, ref):
    """New buffers for the same plan: by UID/Tensor (checked again), or raw pointers in ``pointer_uids``
    order (no Python object made per call: the fast path for loops)."""
    import torch

    y2 = torch.empty(N, K, H, W, device="cuda", dtype=torch.half).to(memory_format=torch.channels_last)
    pointers = tuple(y2.data_ptr() if uid == y_uid else pack.pointers[uid] for uid in pack.pointer_uids)
    pack.bind_and_execute(handle, plan, pointers)
    torch.cuda.synchronize()
    return float((y2.float() - ref).abs().max())
# [/rebind]


# [cupy]
def run_cupy(handle, plan, g, inputs, ref):
    """cupy arrays: the NHWC memory viewed as logical NCHW (cupy has no channels_last flag)."""
    import cupy as cp
    import torch

    t = tensors_by_name(g)
    x, w, b = (cp.asarray(a.permute(0, 2, 3, 1).contiguous()).transpose(0, 3, 1, 2) for a in inputs)
    y = cp.empty((N, H, W, K), dtype=cp.float16).transpose(0, 3, 1, 2)
    cb.execute(handle, plan, cb.VariantPack(plan, {t["x"].uid: x, t["w"].uid: w, t["b"].uid: b, t["y"].uid: y}))
    cp.cuda.Device().synchronize()
    return float((torch.as_tensor(y, device="cuda").float() - ref).abs().max())
# [/cupy]


# [protocols]
class DLPackOnly:
    """Anything with ``__dlpack__``/``__dlpack_device__`` (here a torch tensor behind the protocol alone)."""

    def __init__(self, tensor):
        self._tensor = tensor

    def __dlpack__(self, stream=None):
        return self._tensor.__dlpack__()

    def __dlpack_device__(self):
        return self._tensor.__dlpack_device__()


class CudaArray:
    """Anything with ``__cuda_array_interface__`` (version 3): here a view of a cudnn_backend DeviceBuffer."""

    def __init__(self, shape, strides_elements, typestr="<f2", itemsize=2):
        nbytes = itemsize * (1 + sum((n - 1) * s for n, s in zip(shape, strides_elements)))
        self.buffer = cb.memory.DeviceBuffer(nbytes)   # cudaMalloc through cuda-bindings
        self.__cuda_array_interface__ = {"shape": tuple(shape), "typestr": typestr, "version": 3,
                                         "strides": tuple(s * itemsize for s in strides_elements),
                                         "data": (self.buffer.ptr, False)}


def run_protocols(handle, plan, g, inputs, ref):
    """x and w through DLPack, y through __cuda_array_interface__, b in a cuda.core Buffer; the workspace
    may be any of them too (``workspace=``)."""
    import torch

    t = tensors_by_name(g)
    x, w, b = inputs
    y = CudaArray([N, K, H, W], t["y"].strides)
    buffers = {t["x"].uid: DLPackOnly(x), t["w"].uid: DLPackOnly(w), t["y"].uid: y}
    try:
        from cuda.core import Device                   # cuda.core >= 0.4
    except ImportError:
        try:
            from cuda.core.experimental import Device
        except ImportError:
            Device = None
    if Device is not None:
        dev = Device()
        dev.set_current()
        try:                                           # a cuda.core Buffer (newer cuda.core wants the stream)
            core_b = dev.allocate(b.numel() * b.element_size(), stream=dev.create_stream())
        except TypeError:
            core_b = dev.allocate(b.numel() * b.element_size())
        rt = cb.memory.cudart()
        torch.cuda.synchronize()
        cb.memory.check(rt.cudaMemcpy(int(core_b.handle), b.data_ptr(), b.numel() * b.element_size(),
                                      rt.cudaMemcpyKind.cudaMemcpyDeviceToDevice), "cudaMemcpy")
        buffers[t["b"].uid] = core_b
    else:
        buffers[t["b"].uid] = b
    cb.execute(handle, plan, cb.VariantPack(plan, buffers))
    torch.cuda.synchronize()
    out = torch.as_tensor(y, device="cuda")            # torch reads __cuda_array_interface__ too
    return float((out.float() - ref).abs().max()), Device is not None
# [/protocols]


# [streams]
def run_on_stream(handle, plan, pack):
    """Another stream: the handle's stream is where cuDNN launches (an int, a torch or cuda.core stream,
    anything with ``__cuda_stream__``)."""
    import torch

    stream = torch.cuda.Stream()
    previous, handle.stream = handle.stream, stream
    try:
        cb.execute(handle, plan, pack)
        stream.synchronize()
    finally:
        handle.stream = previous
    return hex(stream.cuda_stream)
# [/streams]


def main():
    plan, pack = offline_pack()
    print("offline plan:", plan)
    print("offline pack:", pack, "pointer order:", pack.pointer_uids)
    if not gpu_available():
        print("no GPU: skipped executing with torch, cupy, DLPack, __cuda_array_interface__ and cuda.core buffers "
              "and on another stream (run this on a GPU machine)")
        return 0
    errors = []
    with cb.Handle() as handle:
        g, plan, pack, inputs, err, ref = run_torch(handle)
        errors.append(err)
        print(f"torch:   engine {plan.engine_index}, max |y - ref| = {err:.4f}")
        errors.append(rebind(handle, plan, pack, tensors_by_name(g)["y"].uid, ref))
        print(f"rebind:  max |y2 - ref| = {errors[-1]:.4f}")
        try:
            errors.append(run_cupy(handle, plan, g, inputs, ref))
            print(f"cupy:    max |y - ref| = {errors[-1]:.4f}")
        except ImportError:
            print("cupy:    not installed, skipped")
        err, used_core = run_protocols(handle, plan, g, inputs, ref)
        errors.append(err)
        print(f"DLPack + __cuda_array_interface__ + {'cuda.core' if used_core else 'torch (no cuda.core)'}: "
              f"max |y - ref| = {err:.4f}")
        print("stream:", run_on_stream(handle, plan, pack))
    if max(errors) > 0.05:
        print("FAILED: results differ from torch's")
        return 1
    return 0


if __name__ == "__main__":
    sys.exit(main())
