# The call gate (see _gate.pyx): every cuDNN call that releases the GIL is bracketed by enter_call/leave_call with the
# objects it uses (None for fewer than three); that is the one place calls are counted, per object and process-wide.
# Inline: on the common path a few loads, compares and increments (no call, no Python object); the refusals and a
# kept interrupt go out of line.
from cudnn_backend.core._resource cimport Resource

cdef Py_ssize_t _calls_in_flight         # process-wide
cdef bint _exiting                       # the interpreter exits: new calls refused
cdef object _pending_interrupt           # a KeyboardInterrupt/SystemExit raised inside cuDNN's callback, for the caller

cdef int _refuse_call(Resource a, Resource b, Resource c) except -1
cdef int _raise_pending_interrupt() except -1
cdef void note_interrupt(object exc) noexcept


cdef inline int enter_call(Resource a, Resource b, Resource c) except -1:
    """Before a cuDNN call that releases the GIL (GIL held): refused once the interpreter exits, or when an object it
    uses is closed (a caller that read its object open, then let go of the GIL, may come back to one another thread
    closed meanwhile: refused here, by name, not sent to cuDNN); else counted in flight, process-wide and on each."""
    global _calls_in_flight
    if _exiting or (a is not None and a._raw == NULL) or (b is not None and b._raw == NULL) or \
            (c is not None and c._raw == NULL):
        return _refuse_call(a, b, c)
    _calls_in_flight += 1
    if a is not None:
        a._busy += 1
    if b is not None:
        b._busy += 1
    if c is not None:
        c._busy += 1
    return 0


cdef inline int leave_call(Resource a, Resource b, Resource c) except -1:
    """After the call returned (GIL held again), with the objects given to enter_call: the last call on an object
    closed meanwhile destroys it; then an interrupt cuDNN's callback kept meanwhile is raised."""
    global _calls_in_flight
    if a is not None:
        a._leave()
    if b is not None:
        b._leave()
    if c is not None:
        c._leave()
    _calls_in_flight -= 1
    if _pending_interrupt is not None:
        return _raise_pending_interrupt()
    return 0
