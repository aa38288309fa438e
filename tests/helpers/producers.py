"""Stand-ins for the array libraries whose arrays ``typed.arrays`` reads by their own attributes, without the
libraries or a GPU: a torch-like tensor (its class claims the module ``torch``, and a torch-like module records the
stream ordering asked of it) and a JAX-like array (module ``jaxlib._jax``) whose ``__dlpack__`` refuses the stream
-1 as JAX does and refuses fp8, as JAX's DLPack does. Nothing dereferences their addresses."""
from __future__ import annotations

import types

import numpy as np

from tests.helpers.dlpack import FakeDLPack, kDLCUDA


class TorchDtype:
    def __init__(self, name, itemsize):
        self.name, self.itemsize = name, itemsize

    def __str__(self):
        return f"torch.{self.name}"

    __repr__ = __str__


TORCH_DTYPES = {n: TorchDtype(n, i) for n, i in (
    ("float32", 4), ("float16", 2), ("bfloat16", 2), ("float8_e4m3fn", 1), ("float8_e5m2", 1), ("int8", 1),
    ("uint8", 1), ("int32", 4), ("int64", 8), ("bool", 1), ("float8_e4m3fnuz", 1), ("complex64", 8))}


class TorchDevice:
    def __init__(self, type_, index=None):
        self.type, self.index = type_, index

    def __str__(self):
        return self.type if self.index is None else f"{self.type}:{self.index}"


class TorchTensor:
    """What the torch reader asks of a tensor: data_ptr(), shape, stride(), dtype, device, element_size(),
    layout, is_conj(), is_neg(). Its ``__dlpack__`` fails as cuda.core's torch path does on fp8: the reader must
    never go there."""

    __module__ = "torch"

    def __init__(self, ptr, shape, strides=None, dtype="float16", device=("cuda", 0), layout="torch.strided",
                 conj=False):
        self.shape = tuple(shape)
        acc, st = 1, []
        for n in reversed(self.shape):
            st.append(acc)
            acc *= n
        self._strides = tuple(strides) if strides is not None else tuple(reversed(st))
        self._ptr = ptr
        self.dtype = TORCH_DTYPES[dtype]
        self.device = TorchDevice(*device)
        self.layout = layout
        self._conj = conj

    def data_ptr(self):
        return self._ptr

    def stride(self):
        return self._strides

    def element_size(self):
        return self.dtype.itemsize

    def is_conj(self):
        return self._conj

    def is_neg(self):
        return False

    def __dlpack__(self, stream=None, **kwargs):
        raise TypeError("Unsupported AOTI dtype code: 24")

    def __dlpack_device__(self):
        return (kDLCUDA, 0)


class TorchStream:
    def __init__(self, ptr, log):
        self.cuda_stream, self._log = ptr, log

    def wait_stream(self, other):
        self._log.append((self.cuda_stream, other.cuda_stream))


def torch_module(current_stream=0x5000):
    """A torch-like module: ``cuda.current_stream(device)`` is ``current_stream``; ``cuda.ExternalStream(ptr,
    device=)`` wraps the consumer; ``waits`` records each (consumer, producer) wait."""
    waits = []
    cuda = types.SimpleNamespace(
        current_stream=lambda device=None: TorchStream(current_stream, waits),
        ExternalStream=lambda ptr, device=None: TorchStream(ptr, waits))
    return types.SimpleNamespace(cuda=cuda, waits=waits)


class JaxDevice:
    def __init__(self, platform="gpu", local_hardware_id=0):
        self.platform, self.local_hardware_id, self.id = platform, local_hardware_id, local_hardware_id


class JaxArray(FakeDLPack):
    """A single-device JAX-like array: row-major, ``unsafe_buffer_pointer()``, ``devices()``,
    ``block_until_ready()`` (counted), ``is_deleted()``. ``__dlpack__(stream=-1)`` fails with JAX's error;
    ``dlpack_refuses``: its DLPack refuses the dtype (JAX exports no fp8)."""

    __module__ = "jaxlib._jax"

    def __init__(self, ptr, shape, dtype, *, code=2, bits=16, devices=None, dlpack_refuses=False, deleted=False):
        super().__init__(ptr, shape, code=code, bits=bits, versioned=True)
        self.dtype = np.dtype(dtype)
        self._devices = devices if devices is not None else [JaxDevice()]
        self._dlpack_refuses = dlpack_refuses
        self._deleted = deleted
        self.waited = 0
        self.ptr = ptr

    def __dlpack__(self, stream=None, **kwargs):
        if stream == -1 or self._dlpack_refuses:
            self.streams.append(stream)
            if stream == -1:
                raise RuntimeError("INTERNAL: CUDA error: CUDA_ERROR_INVALID_HANDLE")
            raise TypeError(f"{self.dtype} is not supported by DLPack")
        return super().__dlpack__(stream, **kwargs)  # (records the stream)

    def devices(self):
        return set(self._devices)

    def unsafe_buffer_pointer(self):
        return self.ptr

    def block_until_ready(self):
        self.waited += 1
        return self

    def is_deleted(self):
        return self._deleted
