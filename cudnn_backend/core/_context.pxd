# A handle's CUDA context in the calling thread (see _context.pyx): execute, the CUDA graph calls and plan finalizes
# make it current where the thread has none, and leave another one alone (cuDNN's failure then says which device the
# handle is on, context_hint). Execute checks once per handle and thread (context_for_call); no Python object.
from libc.stdint cimport uint64_t

cdef enum:
    CONTEXT_UNKNOWN = 0                  # no context recorded, or the driver cannot say
    CONTEXT_CURRENT = 1                  # the handle's context is the thread's current one
    CONTEXT_MADE_CURRENT = 2             # the thread had none: the handle's was made current
    CONTEXT_OTHER = 3                    # the thread's current context is another one (left alone)
    CONTEXT_SET_FAILED = 4               # the thread had none and cuCtxSetCurrent failed
    VERIFIED_SLOTS = 4                   # threads a handle remembers having verified its context in

ctypedef struct HandleContext:           # what a Handle knows of its context, and where it found it current
    void* context                        # the CUcontext current when the handle was made (NULL: none, e.g. no GPU)
    int device                           # that context's device ordinal (-1: unknown)
    uint64_t verified[VERIFIED_SLOTS]    # ids of the threads (Python thread states) that found it current (0: none)
    uint64_t epoch                       # the context epoch those were found in
    int next_slot                        # the slot the next thread takes (round robin)

cdef uint64_t _context_epoch             # bumped where the package changes a thread's current context

cdef extern from "Python.h":
    ctypedef struct PyThreadState:
        pass
    PyThreadState* PyThreadState_Get() noexcept
    uint64_t PyThreadState_GetID(PyThreadState* tstate) noexcept

cdef int use_context(void* context) noexcept nogil
cdef int record_context(HandleContext* hc) except -1
cdef int verify_context(HandleContext* hc, uint64_t thread) noexcept
cdef void forget_threads(HandleContext* hc) noexcept
cdef str context_hint(HandleContext* hc, int state)


cdef inline int context_for_call(HandleContext* hc) noexcept:
    """use_context for a handle, once per thread (GIL held): a thread that found the handle's context current (or made
    it so) before is not asked again until the package changes a thread's context (the epoch). A thread whose own
    code changes its context meanwhile goes to cuDNN as it is: a call that fails is checked again (forget_threads)."""
    cdef uint64_t thread
    if hc.context == NULL:
        return CONTEXT_UNKNOWN
    thread = PyThreadState_GetID(PyThreadState_Get())
    if hc.epoch == _context_epoch and (hc.verified[0] == thread or hc.verified[1] == thread or
                                       hc.verified[2] == thread or hc.verified[3] == thread):
        return CONTEXT_CURRENT
    return verify_context(hc, thread)
