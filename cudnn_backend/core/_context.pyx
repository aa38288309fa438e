# cython: language_level=3
"""A handle's CUDA context in the calling thread.

cuDNN launches with the driver API in the calling thread, which fails (CUDA error 201, invalid context) in a thread
that never made a context current. A Handle records the context current when it is made; the calls that launch make
it current in a thread that has none (as torch does), and leave another one alone.

Execute, the per-call path, asks once per handle and thread (``context_for_call``): the thread ids that found the
handle's context current are kept on the handle, with the epoch they were found in. The thread's current context
changes only through calls made in that thread: the package's own (a new Handle, ``memory.device()``) bump the epoch
(``context_changed``), which makes every handle ask again; the user's own (``torch.cuda.set_device``, cuda.core's
``set_current``, ``cuCtxSetCurrent``) cannot be seen, so an execute that fails asks again and, where the thread turns
out to have had no context at all (nothing could have run), makes the handle's current and runs once more.
"""
from libc.stdint cimport intptr_t, uintptr_t, uint64_t

from cudnn_backend._bindings import _loader
from cudnn_backend.core._coerce import ADDRESS_LIMIT, as_int
from cudnn_backend.errors import DEBUG_HINT

ctypedef int (*_CtxGetCurrentFn)(void** context) noexcept nogil
ctypedef int (*_CtxSetCurrentFn)(void* context) noexcept nogil
ctypedef int (*_CtxGetDeviceFn)(int* device) noexcept nogil
cdef _CtxGetCurrentFn _cuCtxGetCurrent = NULL
cdef _CtxSetCurrentFn _cuCtxSetCurrent = NULL
cdef _CtxGetDeviceFn _cuCtxGetDevice = NULL
cdef bint _context_calls_resolved = False
_context_epoch = 1  # a zeroed HandleContext (epoch 0) has verified nothing


cdef int _resolve_context_calls() except -1:
    """The driver's (or its stand-in's) cuCtxGetCurrent, cuCtxSetCurrent and cuCtxGetDevice, once: all three, or
    none (then nothing is recorded or made current)."""
    global _cuCtxGetCurrent, _cuCtxSetCurrent, _cuCtxGetDevice, _context_calls_resolved
    cdef _CtxGetCurrentFn get_current
    cdef _CtxSetCurrentFn set_current
    cdef _CtxGetDeviceFn get_device
    if _context_calls_resolved:
        return 0
    with _loader.LOCK:
        if not _context_calls_resolved:
            get_current = <_CtxGetCurrentFn><intptr_t>_loader.driver_symbol("cuCtxGetCurrent")
            set_current = <_CtxSetCurrentFn><intptr_t>_loader.driver_symbol("cuCtxSetCurrent")
            get_device = <_CtxGetDeviceFn><intptr_t>_loader.driver_symbol("cuCtxGetDevice")
            if get_current != NULL and set_current != NULL and get_device != NULL:
                _cuCtxSetCurrent = set_current
                _cuCtxGetDevice = get_device
                _cuCtxGetCurrent = get_current  # last: use_context tests this one
            _context_calls_resolved = True
    return 0


cdef void _current_context(void** context, int* device) noexcept nogil:
    """The calling thread's current context and its device (left as they are where there is none)."""
    cdef void* c = NULL
    cdef int d = -1
    if _cuCtxGetCurrent != NULL and _cuCtxGetCurrent(&c) == 0 and c != NULL:
        context[0] = c
        if _cuCtxGetDevice(&d) == 0:
            device[0] = d


cdef int use_context(void* context) noexcept nogil:
    """Make ``context`` (a Handle's) current in a thread that has none; leave another current one alone. Returns
    which (CONTEXT_*). The common case, the context current already, is one cuCtxGetCurrent and a compare."""
    cdef void* current = NULL
    if context == NULL or _cuCtxGetCurrent == NULL or _cuCtxGetCurrent(&current) != 0:
        return CONTEXT_UNKNOWN
    if current == context:
        return CONTEXT_CURRENT
    if current != NULL:
        return CONTEXT_OTHER
    return CONTEXT_MADE_CURRENT if _cuCtxSetCurrent(context) == 0 else CONTEXT_SET_FAILED


def context_changed():
    """The package changed (or may have changed) the calling thread's current CUDA context: every handle checks its
    context again at its next execute, in every thread."""
    global _context_epoch
    _context_epoch += 1


cdef int record_context(HandleContext* hc) except -1:
    """For a new Handle: the context current in the calling thread now (cudnnCreate made one current), and its
    device; the package may have changed the thread's context (cudaSetDevice, cudnnCreate), so every handle asks
    again."""
    _resolve_context_calls()
    hc.context = NULL
    hc.device = -1
    _current_context(&hc.context, &hc.device)
    forget_threads(hc)
    context_changed()
    return 0


cdef int verify_context(HandleContext* hc, uint64_t thread) noexcept:
    """context_for_call's full check: use_context, and the thread remembered where the handle's context is current
    after it."""
    cdef int state = use_context(hc.context)
    if state == CONTEXT_CURRENT or state == CONTEXT_MADE_CURRENT:
        if hc.epoch != _context_epoch:
            forget_threads(hc)
            hc.epoch = _context_epoch
        hc.verified[hc.next_slot] = thread
        hc.next_slot = (hc.next_slot + 1) % VERIFIED_SLOTS
    return state


cdef void forget_threads(HandleContext* hc) noexcept:
    cdef int i
    for i in range(VERIFIED_SLOTS):
        hc.verified[i] = 0
    hc.next_slot = 0


cdef str _device_text(int device):
    return f"device {device}" if device >= 0 else "device unknown"


cdef str context_hint(HandleContext* hc, int state):
    """For a call that failed: which device the handle belongs to, where the thread's context was not the
    handle's (None otherwise)."""
    cdef void* current = NULL
    cdef int device = -1
    mine = f"0x{<uintptr_t>hc.context:x}, {_device_text(hc.device)}"
    if state == CONTEXT_OTHER:
        _current_context(&current, &device)
        return (f"the handle belongs to the CUDA context {mine}, but this thread's current context is "
                f"0x{<uintptr_t>current:x} ({_device_text(device)}): make the handle's device current in this thread "
                f"first (cuda.core Device(N).set_current(), torch.cuda.set_device(N)) or use a handle made for this "
                f"thread's device; {DEBUG_HINT}")
    if state == CONTEXT_SET_FAILED:
        return (f"this thread had no current CUDA context, and making the handle's ({mine}) current failed "
                f"(cuCtxSetCurrent); {DEBUG_HINT}")
    return None


def _use_context(context, int repeat=1):
    """use_context(context) ``repeat`` times without the GIL (the context calls resolved first); returns the last
    state. For tests and for measuring the per-call cost of the check."""
    cdef void* c = <void*><uintptr_t>as_int(context, "context", 0, ADDRESS_LIMIT - 1)
    cdef int state = CONTEXT_UNKNOWN
    cdef int i
    _resolve_context_calls()
    with nogil:
        for i in range(repeat):
            state = use_context(c)
    return state


cdef class _HandleContextProbe:
    """A HandleContext of its own, for tests and benchmarks: what a Handle does with its context at execute
    (``check``: context_for_call ``repeat`` times; ``failed``: what a failed execute does), without a GPU."""
    cdef HandleContext hc

    def __init__(self, context, int device=-1):
        _resolve_context_calls()
        self.hc.context = <void*><uintptr_t>as_int(context, "context", 0, ADDRESS_LIMIT - 1)
        self.hc.device = device

    def check(self, int repeat=1):
        cdef int state = CONTEXT_UNKNOWN
        cdef int i
        for i in range(repeat):
            state = context_for_call(&self.hc)
        return state

    def failed(self):
        """After a failed call: the threads forgotten, the context asked again (made current where there is none)."""
        forget_threads(&self.hc)
        return use_context(self.hc.context)

    @property
    def threads(self):
        """The ids of the threads remembered as having the context current (0: a free slot)."""
        return tuple(self.hc.verified[i] for i in range(VERIFIED_SLOTS))
