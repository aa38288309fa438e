# cython: language_level=3
"""``Handle``: a cuDNN handle (cudnnCreate/cudnnDestroy), its stream and the CUDA context it was made in. Its
lifetime is ``Resource``'s: it supplies only its destroy call and the stream object it keeps alive."""
from libc.stdint cimport intptr_t, uintptr_t

from cudnn_backend._bindings.cycudnn cimport *
from cudnn_backend._bindings cimport cycudnn

from cudnn_backend.core._context cimport context_hint, record_context
from cudnn_backend.core._gate cimport enter_call, leave_call
from cudnn_backend.core._status cimport raise_status

from cudnn_backend.core import device as _device
from cudnn_backend.core._coerce import as_int, stream_address
from cudnn_backend.errors import NoDeviceError


cdef class Handle(Resource):
    """A cuDNN handle (cudnnCreate/cudnnDestroy); needs a GPU.

    ``device`` selects the CUDA device first (through cuda-bindings) when given. ``close()`` is
    idempotent and safe from several threads; a handle closed while another thread's cuDNN call uses
    it is destroyed when that call returns.
    """

    def __cinit__(self, *args, **kwargs):
        self._cuda.device = -1

    def __init__(self, device=None):
        cdef cudnnStatus_t status
        cdef cudnnHandle_t h = NULL
        self._check_new()
        if device is not None:
            device = as_int(device, "device", 0, 1 << 20)
            try:
                from cuda.bindings import runtime as cudart  # optional dependency, only for device=
            except ImportError:
                raise ImportError("Handle(device=...) needs cuda-bindings: pip install 'cudnn-backend[gpu]'") from None
            err, = cudart.cudaSetDevice(device)
            if int(err) != 0:
                raise ValueError(f"device: cudaSetDevice({device}) failed with {err!r}")
        self.device = device
        enter_call(None, None, None)
        with nogil:
            status = cycudnn.cudnnCreate(&h)
        leave_call(None, None, None)
        if status != CUDNN_STATUS_SUCCESS and not _device.gpu_available():  # no driver, its stand-in, or no GPU
            raise NoDeviceError(f"Handle: no GPU is visible here (CUDA driver: {_device.driver()}), so cuDNN cannot "
                                f"make a handle (cudnnCreate returned status {<int>status}). Work offline with a "
                                "device profile instead: device_profile='h200' (or DeviceProfile.bundled('h100'), "
                                "or a file from DeviceProfile.capture on the GPU)")
        raise_status(status, "cudnnCreate")
        self._raw = <void*>h
        record_context(&self._cuda)  # cudnnCreate made one current (the device's)

    def __dealloc__(self):
        self._dealloc()  # before the stream object goes

    cdef cudnnStatus_t _destroy(self, void* raw) noexcept nogil:
        return cycudnn.cudnnDestroy(<cudnnHandle_t>raw)

    cdef object _release(self):
        keep, self._stream_ref = self._stream_ref, None
        return keep

    def close(self):
        """Destroy the handle now (idempotent; at most once whatever the threads)."""
        self._close()

    @property
    def context(self):
        """The CUDA context (CUcontext as an int) current when the handle was made, 0 without a GPU. Calls that
        launch work make it current in a thread that has no current context."""
        return <uintptr_t>self._cuda.context

    @property
    def stream(self):
        """The CUDA stream cuDNN launches on, as an int (0: the legacy default stream)."""
        cdef cudaStream_t s = NULL
        cdef cudnnStatus_t status
        cdef cudnnHandle_t h
        enter_call(self, None, None)  # refuses a closed Handle
        h = <cudnnHandle_t>self._raw
        with nogil:
            status = cycudnn.cudnnGetStream(h, &s)
        leave_call(self, None, None)
        raise_status(status, "cudnnGetStream")
        return <intptr_t>s

    @stream.setter
    def stream(self, value):
        cdef cudnnStatus_t status
        cdef intptr_t s = stream_address(value)
        cdef cudnnHandle_t h
        enter_call(self, None, None)  # refuses a closed Handle
        h = <cudnnHandle_t>self._raw
        with nogil:
            status = cycudnn.cudnnSetStream(h, <cudaStream_t>s)
        leave_call(self, None, None)
        raise_status(status, "cudnnSetStream")
        if self._raw != NULL:  # (closed meanwhile: nothing to keep alive)
            self._stream_ref = value  # keep the stream object alive while the handle uses it

    def __enter__(self):
        return self

    def __exit__(self, *exc):
        self.close()

    def __reduce__(self):
        raise TypeError("cannot pickle a cudnn_backend.Handle: it is a live cuDNN context of this process; make a "
                        "new Handle() where it is needed")

    def __repr__(self):
        state = "closed" if self._raw == NULL else f"0x{<intptr_t>self._raw:x}"
        return f"<cudnn_backend.Handle {state} device={self.device}>"


def _context_hint(Handle handle not None, int state):
    """context_hint for tests."""
    return context_hint(&handle._cuda, state)
