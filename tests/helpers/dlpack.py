"""DLPack producers without a GPU: objects whose ``__dlpack__`` capsule (versioned or not) describes memory at a
given address on a given device, as cupy/torch/JAX arrays do, and that record the stream each consumer passed.
Nothing dereferences the address: they let array reading and variant packs be tested offline."""
from __future__ import annotations

import ctypes

kDLCPU, kDLCUDA, kDLCUDAHost, kDLCUDAManaged = 1, 2, 3, 13
# DLPack type codes
INT, UINT, FLOAT, BFLOAT, BOOL = 0, 1, 2, 4, 6


class DLDevice(ctypes.Structure):
    _fields_ = [("device_type", ctypes.c_int32), ("device_id", ctypes.c_int32)]


class DLDataType(ctypes.Structure):
    _fields_ = [("code", ctypes.c_uint8), ("bits", ctypes.c_uint8), ("lanes", ctypes.c_uint16)]


class DLTensor(ctypes.Structure):
    _fields_ = [("data", ctypes.c_void_p), ("device", DLDevice), ("ndim", ctypes.c_int32), ("dtype", DLDataType),
                ("shape", ctypes.POINTER(ctypes.c_int64)), ("strides", ctypes.POINTER(ctypes.c_int64)),
                ("byte_offset", ctypes.c_uint64)]


_DELETER = ctypes.CFUNCTYPE(None, ctypes.c_void_p)


class DLManagedTensor(ctypes.Structure):
    _fields_ = [("dl_tensor", DLTensor), ("manager_ctx", ctypes.c_void_p), ("deleter", _DELETER)]


class DLPackVersion(ctypes.Structure):
    _fields_ = [("major", ctypes.c_uint32), ("minor", ctypes.c_uint32)]


class DLManagedTensorVersioned(ctypes.Structure):
    _fields_ = [("version", DLPackVersion), ("manager_ctx", ctypes.c_void_p), ("deleter", _DELETER),
                ("flags", ctypes.c_uint64), ("dl_tensor", DLTensor)]


_PyCapsule_New = ctypes.pythonapi.PyCapsule_New
_PyCapsule_New.restype = ctypes.py_object
_PyCapsule_New.argtypes = [ctypes.c_void_p, ctypes.c_char_p, ctypes.c_void_p]
_PyCapsule_IsValid = ctypes.PYFUNCTYPE(ctypes.c_int, ctypes.c_void_p, ctypes.c_char_p)(
    ("PyCapsule_IsValid", ctypes.pythonapi))
_PyCapsule_GetPointer = ctypes.PYFUNCTYPE(ctypes.c_void_p, ctypes.c_void_p, ctypes.c_char_p)(
    ("PyCapsule_GetPointer", ctypes.pythonapi))
DLPACK_FLAG_BITMASK_READ_ONLY = 1


@ctypes.CFUNCTYPE(None, ctypes.c_void_p)
def _release_unconsumed(capsule):
    """The capsule destructor real producers set: a capsule no consumer took (its name unchanged) is freed by its
    managed tensor's deleter; a consumed one is the consumer's to free. (A ctypes callback cannot run while an
    exception is pending, as when a consumer fails in C and drops the capsule: only for capsules Python code drops.)"""
    for name, managed in ((b"dltensor", DLManagedTensor), (b"dltensor_versioned", DLManagedTensorVersioned)):
        if _PyCapsule_IsValid(capsule, name):
            address = _PyCapsule_GetPointer(capsule, name)
            managed.from_address(address).deleter(address)


class FakeDLPack:
    """An array at ``ptr`` (never read) of ``shape``, ``strides`` (elements; None: C-contiguous), DLPack dtype
    ``code``/``bits``/``lanes``, on ``device_type``/``device_id``. ``versioned``: it speaks DLPack 1.x
    (``max_version``) and hands out a versioned capsule, flagged read-only with ``readonly``; otherwise only the
    unversioned one. ``header``: DLTensor fields written over the filled ones (a malformed export: ``{"shape":
    None}``, ``{"ndim": -1}``). ``destructor``: its capsules free themselves when no consumer takes them, as real
    producers' do (``_release_unconsumed``). ``version``: what a versioned capsule says it is (another major
    version than 1 is another layout). ``streams`` records what each consumer passed as ``stream``; ``deleted``
    counts the deleter calls."""

    def __init__(self, ptr, shape, strides=None, *, code=FLOAT, bits=16, lanes=1, device_type=kDLCUDA, device_id=0,
                 versioned=False, byte_offset=0, dtype=None, readonly=False, header=None, destructor=False,
                 version=(1, 0)):
        self.shape = tuple(shape)
        self._shape = (ctypes.c_int64 * max(len(shape), 1))(*shape)
        self._strides = None if strides is None else (ctypes.c_int64 * max(len(shape), 1))(*strides)
        self.versioned = versioned
        self.streams = []
        self.deleted = 0
        self._deleter = _DELETER(self._delete)
        self._fields = dict(ptr=ptr, code=code, bits=bits, lanes=lanes, device=(device_type, device_id),
                            byte_offset=byte_offset)
        self._flags = DLPACK_FLAG_BITMASK_READ_ONLY if readonly else 0
        self._header = dict(header or {})
        self._destructor = ctypes.cast(_release_unconsumed, ctypes.c_void_p) if destructor else None
        self._keep = []
        self._version = version
        if dtype is not None:
            self.dtype = dtype  # what a producer's own dtype says (torch's / JAX's name)

    def _delete(self, _):
        self.deleted += 1

    def _fill(self, t: DLTensor):
        f = self._fields
        t.data = f["ptr"]
        t.device = DLDevice(*f["device"])
        t.ndim = len(self.shape)
        t.dtype = DLDataType(f["code"], f["bits"], f["lanes"])
        t.shape = ctypes.cast(self._shape, ctypes.POINTER(ctypes.c_int64))
        t.strides = None if self._strides is None else ctypes.cast(self._strides, ctypes.POINTER(ctypes.c_int64))
        t.byte_offset = f["byte_offset"]
        for field, value in self._header.items():
            setattr(t, field, value)

    def __dlpack__(self, stream=None, **kwargs):
        self.streams.append(stream)
        max_version = kwargs.get("max_version")
        if not self.versioned and kwargs:
            raise TypeError("unexpected keyword arguments (an unversioned producer)")
        if self.versioned and max_version is not None and max_version[0] >= 1:
            m = DLManagedTensorVersioned()
            m.version = DLPackVersion(*self._version)
            m.deleter = self._deleter
            m.flags = self._flags
            self._fill(m.dl_tensor)
            name = b"dltensor_versioned"
        else:
            m = DLManagedTensor()
            m.deleter = self._deleter
            self._fill(m.dl_tensor)
            name = b"dltensor"
        self._keep.append(m)
        return _PyCapsule_New(ctypes.addressof(m), name, self._destructor)

    def __dlpack_device__(self):
        return self._fields["device"]


class OddDLPack(FakeDLPack):
    """A producer (FakeDLPack's arguments) whose ``__dlpack__()`` returns ``returns`` instead of a fresh capsule; with
    ``returns="again"``, its first capsule every time (a later consumer gets the capsule an earlier one consumed)."""

    def __init__(self, returns, *args, **kw):
        super().__init__(*args, **kw)
        self.returns, self._first = returns, None

    def __dlpack__(self, stream=None, **kwargs):
        if self.returns != "again":
            self.streams.append(stream)
            return self.returns
        if self._first is None:
            self._first = super().__dlpack__(stream, **kwargs)
        else:
            self.streams.append(stream)
        return self._first


_NAMED = {}  # the capsules' names and pointees: a capsule keeps only pointers to them


def named_capsule(name: bytes | None):
    """A capsule named ``name`` (None: no name) around a zeroed DLTensor: no DLPack consumer's to take."""
    name, tensor = _NAMED.setdefault(name, (name, DLTensor()))
    return _PyCapsule_New(ctypes.addressof(tensor), name, None)


def cuda_array(ptr, shape, strides=None, bits=16, code=FLOAT, **kw) -> FakeDLPack:
    """A CUDA array (device 0) of ``shape`` at ``ptr``: fp16 by default."""
    return FakeDLPack(ptr, shape, strides, code=code, bits=bits, **kw)


def nhwc_strides(n, c, h, w):
    """Element strides of an NCHW-ordered tensor laid out NHWC (channels last)."""
    return (h * w * c, 1, w * c, c)
