# cython: language_level=3, boundscheck=False, wraparound=False
"""Variant packs, execution and cuDNN's native CUDA graph API: the per-call fast paths.

``VariantPack`` holds the C arrays cuDNN reads (UIDs, data pointers, workspace) and the finalized
``CUDNN_BACKEND_VARIANT_PACK_DESCRIPTOR`` built from them, plus the objects that own the memory.
It is checked against the plan's graph once, when built (see execution.py for the checks); after
that ``execute``, ``bind_and_execute`` and the CUDA graph calls touch only C data: no Python
object is created per call, and the GIL is released while cuDNN runs.

Rebinding pointers re-makes the finalized descriptor (cuDNN refuses SetAttribute on a finalized
descriptor): by default ``cudnnBackendInitialize`` + three SetAttribute + Finalize on the same
descriptor, which measured cheaper than creating a fresh one (see ``rebuild_strategy``).

A VariantPack is not thread-safe: use one per thread. Its lifetime is the core's ``Resource``: execute and
the CUDA graph calls go through one path (``VariantPack._call``) that holds the handle, the plan and the pack
while cuDNN runs, so closing any of them from another thread meanwhile defers its destruction to that call.
"""
cimport cython
from cpython.buffer cimport PyBUF_C_CONTIGUOUS, PyBUF_FORMAT, PyBuffer_Release, PyObject_CheckBuffer, PyObject_GetBuffer
from cpython.long cimport PyLong_CheckExact
from cpython.object cimport Py_TYPE, PyObject
from libc.stdint cimport int64_t, intptr_t, uint64_t, uintptr_t
from libc.stdlib cimport calloc, free
from libc.string cimport memcpy, memset

from cudnn_backend._bindings.cycudnn cimport *
from cudnn_backend._bindings cimport cycudnn
from cudnn_backend.core._context cimport (
    CONTEXT_MADE_CURRENT,
    CONTEXT_OTHER,
    context_for_call,
    context_hint,
    forget_threads,
    use_context,
)
from cudnn_backend.core._fastcall cimport call_def, function_in_front, method_in_front
from cudnn_backend.core._gate cimport enter_call, leave_call
from cudnn_backend.core._status cimport raise_status

from cudnn_backend.core._coerce import refuse_unordered
from cudnn_backend.core.families._build import as_bool
from cudnn_backend.core._status import check_available, last_error_string
from cudnn_backend.errors import CudnnUnsafeCallError, NativeCudaGraphNotSupportedError, error_class, make_error
from cudnn_backend.runtime import _packing
from cudnn_backend.runtime import memory
from cudnn_backend._bindings.enums import AttributeName as _AttributeName
from cudnn_backend._bindings.enums import DescriptorType as _DescriptorType
from cudnn_backend._bindings.enums import Status as _Status

cdef enum:
    CALL_EXECUTE = 0           # what VariantPack._call runs
    CALL_POPULATE = 1
    CALL_UPDATE = 2

cdef enum:
    SCALAR_BYTES = 16          # host storage per by-value slot (the largest scalar: complex double)
    MAX_OVERRIDE_RANK = 8      # dims per overridden tensor (_packing.MAX_OVERRIDE_RANK, CUDNN_DIM_MAX)
    REBUILD_REINITIALIZE = 0   # cudnnBackendInitialize + set + finalize, same descriptor
    REBUILD_RECREATE = 1       # create a new descriptor, set + finalize, destroy the old one

cdef int _rebuild_strategy = REBUILD_REINITIALIZE

_VP = _DescriptorType.CUDNN_BACKEND_VARIANT_PACK_DESCRIPTOR
_PLAN = _DescriptorType.CUDNN_BACKEND_EXECUTION_PLAN_DESCRIPTOR
_ATTR_UIDS = _AttributeName.CUDNN_ATTR_VARIANT_PACK_UNIQUE_IDS
_ATTR_PTRS = _AttributeName.CUDNN_ATTR_VARIANT_PACK_DATA_POINTERS
_ATTR_WS = _AttributeName.CUDNN_ATTR_VARIANT_PACK_WORKSPACE
_ATTR_OVERRIDES = _AttributeName.CUDNN_ATTR_VARIANT_PACK_OVERRIDE_SHAPES


cdef ShapeOverrides* _new_overrides(list overrides) except NULL:
    """The C arrays of checked overrides (``_packing.prepare_overrides``): UIDs, then each tensor's dims and strides
    as rows of two std::vector<std::vector<int64_t>> laid out as libstdc++ does (begin, end, end of storage);
    cuDNN 9.28.1 reads them so: it refuses a pack whose UID count differs from the outer vector's size."""
    cdef Py_ssize_t k = len(overrides), i, j, r
    cdef ShapeOverrides* ov = <ShapeOverrides*>calloc(1, sizeof(ShapeOverrides))
    cdef int64_t* row
    if ov == NULL:
        raise MemoryError()
    ov.n = k
    ov.uids = <int64_t*>calloc(k if k > 0 else 1, sizeof(int64_t))
    ov.values = <int64_t*>calloc((2 * k * MAX_OVERRIDE_RANK) if k > 0 else 1, sizeof(int64_t))
    ov.rows = <StdVector*>calloc((2 * k) if k > 0 else 1, sizeof(StdVector))
    if ov.uids == NULL or ov.values == NULL or ov.rows == NULL:
        _free_overrides(ov)
        raise MemoryError()
    for i in range(k):
        uid, dims, strides = overrides[i]
        ov.uids[i] = uid
        for j, values in enumerate((dims, strides)):
            r = len(values)
            row = ov.values + (2 * i + j) * MAX_OVERRIDE_RANK
            for jj in range(r):
                row[jj] = values[jj]
            ov.rows[j * k + i].begin = row
            ov.rows[j * k + i].end = row + r
            ov.rows[j * k + i].end_of_storage = row + r
    ov.shapes.begin = ov.rows
    ov.shapes.end = ov.rows + k
    ov.shapes.end_of_storage = ov.rows + k
    ov.strides.begin = ov.rows + k
    ov.strides.end = ov.rows + 2 * k
    ov.strides.end_of_storage = ov.rows + 2 * k
    return ov


cdef void _free_overrides(ShapeOverrides* ov) noexcept nogil:
    if ov != NULL:
        free(ov.uids)
        free(ov.values)
        free(ov.rows)
        free(ov)


cdef dict _read_overrides(ShapeOverrides* ov):
    """{uid: (dims, strides)} read back through the vector objects cuDNN is given (what it sees)."""
    cdef Py_ssize_t i
    cdef StdVector* shape_rows
    cdef StdVector* stride_rows
    out = {}
    if ov == NULL:
        return out
    shape_rows = <StdVector*>ov.shapes.begin
    stride_rows = <StdVector*>ov.strides.begin
    for i in range((<StdVector*>ov.shapes.end) - shape_rows):
        out[ov.uids[i]] = (
            tuple((<int64_t*>shape_rows[i].begin)[j] for j in range((<int64_t*>shape_rows[i].end) -
                                                                   (<int64_t*>shape_rows[i].begin))),
            tuple((<int64_t*>stride_rows[i].begin)[j] for j in range((<int64_t*>stride_rows[i].end) -
                                                                    (<int64_t*>stride_rows[i].begin))))
    return out

_STRATEGIES = {"reinitialize": REBUILD_REINITIALIZE, "recreate": REBUILD_RECREATE}


def rebuild_strategy(name=None):
    """How packs re-make their descriptor after a rebind: 'reinitialize' (default) or 'recreate'.

    With a name, sets it (process-wide) and returns the previous one; for benchmarks.
    """
    global _rebuild_strategy
    previous = "reinitialize" if _rebuild_strategy == REBUILD_REINITIALIZE else "recreate"
    if name is not None:
        if name not in _STRATEGIES:
            raise ValueError(f"rebuild strategy must be one of {', '.join(_STRATEGIES)}, not {name!r}")
        _rebuild_strategy = _STRATEGIES[name]
    return previous


_GRAPH_HINT = ("cudnnBackendPopulateCudaGraph/UpdateCudaGraph need cuDNN >= 9.5 and an engine whose behavior notes "
               "include CUDNN_BEHAVIOR_NOTE_SUPPORTS_CUDA_GRAPH_NATIVE_API (choose such an engine config), or "
               "capture execute() on a stream instead (execution.CapturedGraph, cudaStreamBeginCapture)")


cdef int _raise_graph_status(cudnnStatus_t status, str function, object plan) except -1:
    message = last_error_string()
    native = status == CUDNN_STATUS_NOT_SUPPORTED_CUDA_GRAPH_NATIVE_API or status == CUDNN_STATUS_NOT_SUPPORTED
    if not native:  # whatever cuDNN said, an engine without the behavior note is the cause
        native = _packing.plan_supports_native_cuda_graph(plan) is False
    if native:
        raise NativeCudaGraphNotSupportedError(_status(status), function, None, None, message, _GRAPH_HINT)
    raise make_error(_status(status), function, None, None, message)


cdef object _status(cudnnStatus_t status):
    try:
        return _Status(<int>status)
    except ValueError:
        return <int>status


cdef int _set_and_finalize(cudnnBackendDescriptor_t d, int64_t n, int64_t* uids, void** ptrs, void* ws,
                           ShapeOverrides* ov) except -1:
    cdef cudnnStatus_t st
    st = cycudnn.cudnnBackendSetAttribute(d, CUDNN_ATTR_VARIANT_PACK_UNIQUE_IDS, CUDNN_TYPE_INT64, n, uids)
    if st != CUDNN_STATUS_SUCCESS:
        raise_status(st, "cudnnBackendSetAttribute", _VP, _ATTR_UIDS)
    st = cycudnn.cudnnBackendSetAttribute(d, CUDNN_ATTR_VARIANT_PACK_DATA_POINTERS, CUDNN_TYPE_VOID_PTR, n, ptrs)
    if st != CUDNN_STATUS_SUCCESS:
        raise_status(st, "cudnnBackendSetAttribute", _VP, _ATTR_PTRS)
    st = cycudnn.cudnnBackendSetAttribute(d, CUDNN_ATTR_VARIANT_PACK_WORKSPACE, CUDNN_TYPE_VOID_PTR, 1, &ws)
    if st != CUDNN_STATUS_SUCCESS:
        raise_status(st, "cudnnBackendSetAttribute", _VP, _ATTR_WS)
    if ov != NULL and ov.n > 0:  # cuDNN reads the shapes and strides as std::vector<std::vector<int64_t>> objects
        st = cycudnn.cudnnBackendSetAttribute(d, CUDNN_ATTR_VARIANT_PACK_OVERRIDE_UNIQUE_IDS, CUDNN_TYPE_INT64, ov.n,
                                              ov.uids)
        if st == CUDNN_STATUS_SUCCESS:
            st = cycudnn.cudnnBackendSetAttribute(d, CUDNN_ATTR_VARIANT_PACK_OVERRIDE_SHAPES, CUDNN_TYPE_VOID_PTR, 1,
                                                  &ov.shapes)
        if st == CUDNN_STATUS_SUCCESS:
            st = cycudnn.cudnnBackendSetAttribute(d, CUDNN_ATTR_VARIANT_PACK_OVERRIDE_STRIDES, CUDNN_TYPE_VOID_PTR, 1,
                                                  &ov.strides)
        if st != CUDNN_STATUS_SUCCESS:
            raise_status(st, "cudnnBackendSetAttribute", _VP, _ATTR_OVERRIDES)
    st = cycudnn.cudnnBackendFinalize(d)
    if st != CUDNN_STATUS_SUCCESS:
        raise_status(st, "cudnnBackendFinalize", _VP)
    return 0


cdef inline bint _unsigned_format(const char* fmt):
    """An ``_int64_format`` of an unsigned integer."""
    if fmt[0] == b'@' or fmt[0] == b'=' or fmt[0] == b'<':
        fmt += 1
    return fmt[0] == b'Q' or fmt[0] == b'L' or fmt[0] == b'N'


cdef inline bint _int64_format(const char* fmt):
    """True for a buffer format of one 8-byte integer in native/little byte order ('q', '<q', 'l', 'Q', ...)."""
    if fmt == NULL:
        return False
    if fmt[0] == b'@' or fmt[0] == b'=' or fmt[0] == b'<':
        fmt += 1
    if fmt[0] == 0 or fmt[1] != 0:
        return False
    return fmt[0] == b'q' or fmt[0] == b'Q' or fmt[0] == b'l' or fmt[0] == b'L' or fmt[0] == b'n' or fmt[0] == b'N'


cdef object _MISSING = object()


cdef inline cudnnStatus_t _run(VariantPack pack, int what, Handle hobj, cudnnHandle_t h, cudnnBackendDescriptor_t p,
                               cudaGraph_t graph) except? CUDNN_STATUS_INTERNAL_ERROR:
    """The cuDNN call itself, the GIL released and the handle, the plan and the pack held by the call gate."""
    cdef cudnnStatus_t st = CUDNN_STATUS_INTERNAL_ERROR
    cdef cudnnBackendDescriptor_t v = pack._raw
    cdef Descriptor pdesc = pack._plan_desc
    enter_call(hobj, pdesc, pack)
    try:  # the bindings raise CudnnFunctionNotFoundError for a function the loaded cuDNN lacks
        with nogil:
            if what == CALL_EXECUTE:
                st = cycudnn.cudnnBackendExecute(h, p, v)
            elif what == CALL_POPULATE:
                st = cycudnn.cudnnBackendPopulateCudaGraph(h, p, v, graph)
            else:
                st = cycudnn.cudnnBackendUpdateCudaGraph(h, p, v, graph)
    finally:
        leave_call(hobj, pdesc, pack)
    return st


cdef object _open_plan_descriptor(object plan):
    """``plan``'s execution plan descriptor, refused once closed."""
    desc = _packing.plan_descriptor(plan)
    if desc.closed:
        raise CudnnUnsafeCallError("plan: the execution plan is closed")
    return desc


cdef inline bint _pointer_refused(VariantPack pack, Py_ssize_t slot, uintptr_t pv) noexcept:
    """Whether a device pointer cannot be ``slot``'s (``_raise_pointer_error`` says why): NULL, not at the tensor's
    byte alignment, or with the bytes the tensor spans passing the end of the address space."""
    cdef int64_t need = pack._min_bytes[slot]
    return pv == 0 or (pack._align[slot] > 0 and pv % <uintptr_t>pack._align[slot] != 0) or \
        (need > 0 and pv - 1 > <uintptr_t>-1 - <uintptr_t>need)


cdef class VariantPack:
    """The buffers of one execution: ``{uid or Tensor: buffer}`` plus a workspace, checked against a plan.

    ``VariantPack(plan, buffers, workspace=None, *, operation_graph=None, tensors=None, check_dtype=True,
    overrides=None, handle=None)``

    * every non-virtual UID of the plan's graph must be bound and no other (ValueError naming them);
    * a buffer is an int device address, an array of any GPU library (DLPack or __cuda_array_interface__,
      read with the plan's handle's stream as the consumer stream, and refused when it does not describe its
      tensor: device, data type, shape, strides), a cuda.core Buffer or a memory.DeviceBuffer; the pack keeps
      the objects alive;
    * by-value tensors take a number, stored by the pack in the tensor's data type;
    * pointers must meet the tensor's byte alignment, buffers of known size must hold the tensor;
    * with ``workspace=None`` a workspace of ``plan.workspace_size`` bytes is allocated (and freed
      with the pack) when the plan needs one;
    * ``overrides={uid or Tensor: dims or (dims, strides)}`` (cuDNN >= 9.23; the plan's graph built with
      ``override_shapes=True``) runs the plan on other shapes: each must be a real tensor of the graph, keep its
      rank (strides default to packed in the tensor's axis order), and the buffers must hold the new shapes; the
      workspace is cudnnGetExecutionPlanWorkspaceSize's answer for this pack, asked with ``handle`` (else the
      plan's handle, else the first call's) and allocated as above.

    The graph comes from ``tensors=``/``operation_graph=``, else ``plan.operation_graph``, else the
    plan's JSON; when none is known, the UIDs given are taken as they are (all as device pointers).
    """

    def __cinit__(self, *args, **kwargs):
        self._overrides = NULL
        self._free_arrays()  # (nothing allocated yet: the one place that empties the arrays)
        self._workspace = NULL
        self._workspace_nbytes = -1
        self._dirty = False
        self._keep = []
        self._workspace_keep = None
        self._owns_workspace = False
        self._slot_of = {}
        self._specs = {}
        self._plan_obj = None
        self._plan_desc = None
        self._plan_handle = None
        self._check_dtype = True
        self._graph_specs = {}
        self._ws_pending = False
        self._ws_needed = -1
        self._written = None

    def __init__(self, plan=None, buffers=None, workspace=None, *, operation_graph=None, tensors=None,
                 check_dtype=True, overrides=None, Handle handle=None):
        cdef Py_ssize_t i, n, j
        cdef bytes raw
        self._check_new()
        check_dtype = as_bool(check_dtype, "check_dtype")  # "no" or None would act as their truth value
        if self._uids != NULL:  # an __init__ that failed half-way: its arrays are this object's until it goes
            self._refuse_made()
        desc = None
        if plan is not None:
            desc = _open_plan_descriptor(plan)
        ov = None
        if overrides is not None:  # checked against the graph's shapes; the buffers against the overridden ones
            self._graph_specs = _packing.tensor_specs(plan, operation_graph, tensors) or {}
            ov = _packing.prepare_overrides(self._graph_specs, overrides,
                                            _packing.plan_override_enabled(plan, operation_graph),
                                            operation_graph if operation_graph is not None else
                                            _packing.plan_operation_graph(plan))
        slots, specs, written = _packing.prepare_pack(plan, buffers, operation_graph, tensors, check_dtype, ov)
        # with overrides the workspace is cuDNN's answer for this pack (queried once a handle is known), not the plan's
        needed = _packing.plan_workspace_size(plan) if plan is not None and ov is None else 0
        ws_ptr, ws_cap, ws_keep, owned = _packing.resolve_workspace(workspace, needed, "workspace",
                                                                    _packing.consumer_stream(plan))

        n = len(slots)
        self._check_dtype = check_dtype
        self._alloc(n)
        self._keep = [None] * n
        j = 0
        for i in range(n):
            uid, ptr, raw_value, keep, align, need, by_value = slots[i]
            self._uids[i] = uid
            self._align[i] = align
            self._min_bytes[i] = need
            self._slot_of[uid] = i
            if by_value:
                self._by_value[i] = 1
                raw = raw_value
                memcpy(self._scalars + i * SCALAR_BYTES, <const char*>raw, len(raw))
                self._ptrs[i] = <void*>(self._scalars + i * SCALAR_BYTES)
            else:
                self._ptrs[i] = <void*><uintptr_t>ptr
                self._dev_slot[j] = i
                j += 1
            self._keep[i] = keep
        self._ndev = j
        self._specs = dict(specs)
        self._written = written
        if ov is None:
            self._graph_specs = dict(specs)
        self._workspace = <void*><uintptr_t>ws_ptr
        self._workspace_nbytes = ws_cap
        self._workspace_keep = ws_keep
        self._owns_workspace = owned

        if ov is not None:
            self._overrides = _new_overrides(ov)
            self._ws_pending = True

        self._raw = self._new_descriptor()
        if plan is not None:
            self._plan_obj = plan
            self._plan_desc = desc
            self._plan_handle = _packing.plan_handle(plan)
            if handle is None:
                handle = self._plan_handle
            if self._ws_pending and handle is not None:
                handle._check_open()
                self._settle_workspace(handle)
                if self._dirty:
                    self._rebuild()

    cdef int _alloc(self, Py_ssize_t n) except -1:
        cdef Py_ssize_t m = n if n > 0 else 1
        self._n = n
        self._uids = <int64_t*>calloc(m, sizeof(int64_t))
        self._ptrs = <void**>calloc(m, sizeof(void*))
        self._scratch = <void**>calloc(m, sizeof(void*))
        self._align = <int64_t*>calloc(m, sizeof(int64_t))
        self._min_bytes = <int64_t*>calloc(m, sizeof(int64_t))
        self._by_value = <unsigned char*>calloc(m, sizeof(unsigned char))
        self._scalars = <char*>calloc(m, SCALAR_BYTES)
        self._dev_slot = <Py_ssize_t*>calloc(m, sizeof(Py_ssize_t))
        if (self._uids == NULL or self._ptrs == NULL or self._scratch == NULL or self._align == NULL
                or self._min_bytes == NULL or self._by_value == NULL or self._scalars == NULL
                or self._dev_slot == NULL):
            raise MemoryError()
        return 0

    cdef void _free_arrays(self) noexcept nogil:
        _free_overrides(self._overrides)
        self._overrides = NULL
        free(self._uids)
        free(self._ptrs)
        free(self._scratch)
        free(self._align)
        free(self._min_bytes)
        free(self._by_value)
        free(self._scalars)
        free(self._dev_slot)
        self._uids = NULL
        self._ptrs = NULL
        self._scratch = NULL
        self._align = NULL
        self._min_bytes = NULL
        self._by_value = NULL
        self._scalars = NULL
        self._dev_slot = NULL
        self._n = 0
        self._ndev = 0

    def __dealloc__(self):
        # the descriptor first, then the arrays it was made from; C only: safe at interpreter shutdown. The kept
        # buffers and workspace go with the object.
        self._dealloc()
        self._free_arrays()

    cdef cudnnStatus_t _destroy(self, void* raw) noexcept nogil:
        # the descriptor only: this runs without the GIL (a close), or as the last call in flight returns, while other
        # threads may still read or write the slot arrays under the GIL (pointers, rebind_pointers on a pack being
        # closed); freed here, that was a use-after-free (SIGSEGV, found by the API fuzz's thread cases). The arrays
        # go with the object (__dealloc__), when no thread can reach them.
        return cycudnn.cudnnBackendDestroyDescriptor(<cudnnBackendDescriptor_t>raw)

    cdef object _release(self):
        self._n = 0  # no slots to read from here on; their arrays stay allocated until __dealloc__ (see _destroy)
        self._ndev = 0
        kept = (self._keep, self._workspace_keep, self._plan_desc, self._plan_handle)
        # as long as before: a method that ran a producer's code (which may close the pack) indexes it unchecked
        self._keep = [None] * len(kept[0])
        self._slot_of = {}
        self._workspace = NULL
        self._workspace_keep = None
        self._plan_obj = None
        self._plan_desc = None
        self._plan_handle = None
        return kept

    cdef object _descriptor_type(self):
        return _VP

    def __reduce__(self):
        raise TypeError("cannot pickle a VariantPack: it binds device pointers of this process; build one where "
                        "the buffers live")

    def close(self):
        """Destroy the descriptor and release the buffers and workspace now (idempotent; at most once whatever
        the threads; while another thread's call uses the pack, that call destroys it, and releases them, when it
        returns)."""
        self._close()

    def __enter__(self):
        return self

    def __exit__(self, *exc):
        self.close()

    # -- the finalized descriptor ---------------------------------------------------------------
    cdef cudnnBackendDescriptor_t _new_descriptor(self) except NULL:
        """A new finalized variant pack descriptor of the current arrays (destroyed again if cuDNN refuses them)."""
        cdef cudnnBackendDescriptor_t d = NULL
        raise_status(cycudnn.cudnnBackendCreateDescriptor(CUDNN_BACKEND_VARIANT_PACK_DESCRIPTOR, &d),
                     "cudnnBackendCreateDescriptor", _VP)
        try:
            _set_and_finalize(d, self._n, self._uids, self._ptrs, self._workspace, self._overrides)
        except BaseException:
            cycudnn.cudnnBackendDestroyDescriptor(d)
            raise
        return d

    cdef int _rebuild(self) except -1:
        """Re-make the finalized descriptor from the current arrays."""
        cdef cudnnStatus_t st
        cdef cudnnBackendDescriptor_t d = NULL
        self._check_open()
        if self._busy:
            raise CudnnUnsafeCallError("this VariantPack is being executed by another thread: rebind it after that "
                                       "call returns (a VariantPack is for one thread at a time)")
        if _rebuild_strategy == REBUILD_REINITIALIZE:
            self._dirty = True  # stays so if anything below fails
            st = cycudnn.cudnnBackendInitialize(self._raw)
            if st == CUDNN_STATUS_SUCCESS:
                _set_and_finalize(self._raw, self._n, self._uids, self._ptrs, self._workspace, self._overrides)
                self._dirty = False
                return 0
            # a cuDNN that will not re-initialize: fall through to a fresh descriptor
        self._dirty = True  # stays so if the new descriptor fails
        d = self._new_descriptor()
        cycudnn.cudnnBackendDestroyDescriptor(self._raw)
        self._raw = d
        self._dirty = False
        return 0

    # -- plans ----------------------------------------------------------------------------------
    cdef int _adopt_plan(self, object plan) except -1:
        """Check a plan other than the one last used against this pack, and cache it."""
        if plan is None:
            if self._plan_obj is not None:
                return 0
            raise ValueError("no plan: pass the execution plan to run")
        desc = _open_plan_descriptor(plan)
        specs = _packing.tensor_specs(plan)
        if specs is not None:
            required = {u for u, s in specs.items() if not s.virtual}
            mine = set(self._slot_of)
            if required != mine:
                missing = sorted(required - mine)
                extra = sorted(mine - required)
                parts = []
                if missing:
                    parts.append("the plan also needs UID(s) " + ", ".join(map(str, missing)))
                if extra:
                    parts.append("the pack binds UID(s) " + ", ".join(map(str, extra)) + " the plan does not use")
                raise ValueError("this variant pack does not fit the plan: " + "; ".join(parts))
            for uid, slot in self._slot_of.items():
                if bool(specs[uid].by_value) != bool(self._by_value[slot]):
                    how = "by value" if specs[uid].by_value else "as a device pointer"
                    raise ValueError(f"UID {uid} is passed {how} in this plan but not in this variant pack")
            self._check_tensors_fit(specs)
        written = _packing.written_uids(plan)
        for uid in sorted((written or frozenset()) - (self._written or frozenset())):  # kept arrays it now writes
            slot = self._slot_of.get(uid, -1)
            if slot >= 0 and not self._by_value[slot] and self._keep[slot] is not None:
                what = _packing.slot_label(uid, self._specs.get(uid))
                _packing.check_writable(what, _packing.resolve_buffer(self._keep[slot], what).array)
        if self._overrides != NULL:  # the new plan's workspace for these shapes: queried at its first call
            if _packing.plan_override_enabled(plan) is False:
                raise ValueError("this variant pack overrides shapes, but the plan's operation graph was finalized "
                                 "without override shapes (Graph.build(override_shapes=True))")
            self._ws_pending = True
            self._ws_needed = -1
            needed = 0
        else:
            needed = _packing.plan_workspace_size(plan)
            self._ws_needed = -1  # asked for another plan
        self._check_open()  # the checks above ran producers' code, which may have closed the pack
        self._ensure_workspace(needed, "")
        self._plan_obj = plan
        self._plan_desc = desc
        self._plan_handle = _packing.plan_handle(plan)
        if written is not None:  # (a plan whose graph is not known keeps what the pack knew: the same UIDs)
            self._written = written
        return 0

    cdef int _check_tensors_fit(self, dict specs) except -1:
        """Another plan's tensors (``specs``) against this pack's: the same UIDs may name tensors of other shapes or
        data types, whose buffers the pack has not checked. Where the pack knows its tensors, they must be the
        plan's; where it does not, the buffers it keeps must hold the plan's tensors, and it checks later rebinds
        against them."""
        cdef Py_ssize_t slot
        cdef uintptr_t ptr
        if self._graph_specs:
            _packing.check_specs_are_plans(self._graph_specs, specs, "this variant pack")
            return 0
        needs = {}
        for uid, slot in self._slot_of.items():
            theirs = specs[uid]
            if self._by_value[slot]:
                continue
            what = _packing.slot_label(uid, theirs)
            need = needs[uid] = _packing.slot_bytes(uid, theirs)
            if self._keep[slot] is not None:
                have = _packing.resolve_buffer(self._keep[slot], what).nbytes
                if have is not None and 0 <= need and have < need:
                    raise ValueError(f"this variant pack does not fit the plan: {what}: the bound buffer holds {have} "
                                     f"bytes, the plan's tensor {theirs.describe()} spans {need}")
            ptr = <uintptr_t>self._ptrs[slot]
            problem = _packing.pointer_problem(what, ptr, theirs.alignment, need) if ptr else None
            if problem is not None:
                raise ValueError(f"this variant pack does not fit the plan: {problem}")
        self._check_open()  # (reading the buffers ran producers' code)
        if self._overrides == NULL:  # the plan's tensors, for the checks of later rebinds
            self._specs = dict(specs)
            self._graph_specs = dict(specs)
            for uid, need in needs.items():
                slot = self._slot_of[uid]
                self._align[slot] = specs[uid].alignment or 0
                self._min_bytes[slot] = need
        return 0

    cdef int _resolve_call(self, Handle handle, object plan, cudnnHandle_t* h,
                           cudnnBackendDescriptor_t* p) except -1:
        if self._raw == NULL:
            self._refuse_closed()
        if plan is not self._plan_obj:
            self._adopt_plan(plan)
        p[0] = self._plan_desc._raw
        if p[0] == NULL:
            raise CudnnUnsafeCallError("plan: the execution plan is closed")
        if handle is None:
            handle = self._plan_handle
            if handle is None:
                raise ValueError("no cuDNN handle: pass one (the plan was not built with one)")
        h[0] = <cudnnHandle_t>handle._raw
        if h[0] == NULL:
            raise CudnnUnsafeCallError("handle: the Handle is closed")
        if self._dirty:
            self._rebuild()
        if self._ws_pending:  # overrides: once per plan, the workspace cuDNN needs for these shapes
            self._settle_workspace(handle)
            if self._dirty:
                self._rebuild()
        return 0

    cdef int _ensure_workspace(self, int64_t needed, str why) except -1:
        """A workspace of ``needed`` bytes: one the pack owns or lacks is (re)allocated, one the caller gave must
        hold it."""
        if needed > 0 and (self._workspace == NULL or 0 <= self._workspace_nbytes < needed):
            if self._workspace != NULL and not self._owns_workspace:
                raise ValueError(f"the plan needs a {needed}-byte workspace{why}; this pack's holds "
                                 f"{self._workspace_nbytes}")
            ws_ptr, ws_cap, ws_keep, owned = _packing.resolve_workspace(None, needed)
            self._workspace = <void*><uintptr_t>ws_ptr
            self._workspace_nbytes = ws_cap
            self._workspace_keep = ws_keep
            self._owns_workspace = owned
            self._dirty = True
        return 0

    cdef int _settle_workspace(self, Handle handle) except -1:
        """cudnnGetExecutionPlanWorkspaceSize for this (finalized) pack and ``plan``; a workspace the pack owns or
        lacks grows to it, one the caller gave must hold it."""
        cdef size_t size = 0
        cdef cudnnStatus_t st
        cdef cudnnBackendDescriptor_t v
        cdef cudnnHandle_t h
        cdef cudnnBackendDescriptor_t plan
        cdef Descriptor pdesc = self._plan_desc
        if self._dirty:
            self._rebuild()
        v = self._raw
        h = <cudnnHandle_t>handle._raw
        plan = pdesc._raw
        enter_call(handle, pdesc, self)
        try:  # the gate came first (prepare_overrides): the binding has the function
            with nogil:
                st = cycudnn.cudnnGetExecutionPlanWorkspaceSize(h, plan, v, &size)
        finally:
            leave_call(handle, pdesc, self)
        if st != CUDNN_STATUS_SUCCESS:
            raise_status(st, "cudnnGetExecutionPlanWorkspaceSize", _PLAN)
        self._ensure_workspace(<int64_t>size, " for this pack's shapes (cudnnGetExecutionPlanWorkspaceSize)")
        self._ws_needed = <int64_t>size
        self._ws_pending = False
        return 0

    cdef int _call(self, int what, Handle handle, object plan, cudaGraph_t graph) except -1:
        """execute, populate or update a CUDA graph: the one path into cuDNN with this pack. Neither the handle,
        the plan nor the pack may be destroyed by another thread while cuDNN uses them: the call gate holds all
        three, so a close() meanwhile leaves the destruction to this call as it returns. Execute checks the handle's
        CUDA context once per thread (``context_for_call``); a call that fails checks it again (``_call_failed``)."""
        cdef cudnnHandle_t h = NULL
        cdef cudnnBackendDescriptor_t p = NULL
        cdef cudnnStatus_t st
        cdef Handle hobj = handle if handle is not None else <Handle>self._plan_handle
        cdef int context_state
        # the usual call (the pack's own plan, all open, nothing to rebuild) is checked here, anything else there
        if self._raw != NULL and self._plan_obj is not None and (plan is None or plan is self._plan_obj) and \
                not self._dirty and not self._ws_pending and hobj is not None and hobj._raw != NULL and \
                self._plan_desc._raw != NULL:
            h = <cudnnHandle_t>hobj._raw
            p = self._plan_desc._raw
        else:
            self._resolve_call(handle, plan, &h, &p)
            hobj = handle if handle is not None else <Handle>self._plan_handle
        if what == CALL_EXECUTE:
            context_state = context_for_call(&hobj._cuda)
        else:  # CUDA graph calls, made once: the full check, every time
            context_state = use_context(hobj._cuda.context)
        st = _run(self, what, hobj, h, p, graph)
        if st != CUDNN_STATUS_SUCCESS:
            return self._call_failed(what, st, hobj, plan, graph, context_state)
        return 0

    cdef int _call_failed(self, int what, cudnnStatus_t st, Handle hobj, object plan, cudaGraph_t graph,
                          int context_state) except -1:
        """A call cuDNN refused: the thread's context checked again (the thread's own code may have changed it since
        the handle found it current here); an execute in a thread that turned out to have no context at all (nothing
        could run) runs once more with the handle's made current; else the error, naming the handle's device where
        the thread's context was another one."""
        cdef cudnnHandle_t h = NULL
        cdef cudnnBackendDescriptor_t p = NULL
        plan_obj = self._plan_obj  # (for the error below, should the pack be closed meanwhile)
        forget_threads(&hobj._cuda)
        if context_state != CONTEXT_OTHER:
            context_state = use_context(hobj._cuda.context)
            if context_state == CONTEXT_MADE_CURRENT and what == CALL_EXECUTE:
                self._resolve_call(hobj, plan, &h, &p)
                st = _run(self, what, hobj, h, p, graph)
                if st == CUDNN_STATUS_SUCCESS:
                    return 0
        function = ("cudnnBackendExecute" if what == CALL_EXECUTE else "cudnnBackendPopulateCudaGraph"
                    if what == CALL_POPULATE else "cudnnBackendUpdateCudaGraph")
        if context_state >= CONTEXT_OTHER:  # the thread's context was not the handle's: say which device it is on
            raise error_class(<int>st)(_status(st), function, _PLAN, None, last_error_string(),
                                       context_hint(&hobj._cuda, context_state))
        if what == CALL_EXECUTE:
            raise_status(st, function, _PLAN)
        _raise_graph_status(st, function, plan_obj)
        return 0

    def check_plan(self, plan):
        """Check that this pack fits ``plan`` (same non-virtual UIDs, by-value alike, workspace big enough,
        allocating one if the pack owns or lacks it) and make it the pack's plan; raises ValueError if not."""
        self._check_open()
        if plan is None:
            raise ValueError("no plan given")
        _open_plan_descriptor(plan)  # (the pack's own plan, closed since, fits nothing)
        if plan is not self._plan_obj:
            self._adopt_plan(plan)
        if self._dirty:
            self._rebuild()
        return self

    @cython.binding(False)  # as execute()
    @cython.embedsignature.format("clinic")
    def execute(self, handle=None, plan=None):
        """cudnnBackendExecute on the handle's stream (GIL released). ``plan=None``: the pack's plan;
        ``handle=None``: the plan's handle."""
        self._call(CALL_EXECUTE, handle, plan, NULL)

    # -- rebinding ------------------------------------------------------------------------------
    cdef int _bind_positional(self, object pointers) except -1:
        """New device pointers for the pointer slots, in ``pointer_uids`` order: a tuple/list of ints,
        or a buffer of int64/uint64 (array.array('q'), numpy int64). All checked before any is stored."""
        cdef Py_ssize_t j, k, nd = self._ndev
        cdef Py_buffer view
        cdef bint is_tuple
        cdef object item
        cdef uint64_t v
        cdef uintptr_t pv
        cdef bint changed = False
        self._check_open()
        if type(pointers) is tuple or type(pointers) is list:
            if len(pointers) != nd:
                raise ValueError(f"{len(pointers)} pointers given; this pack binds {nd} device pointers "
                                 f"(UIDs {', '.join(map(str, self.pointer_uids))}, in that order)")
            is_tuple = type(pointers) is tuple
            for j in range(nd):
                item = (<tuple>pointers)[j] if is_tuple else (<list>pointers)[j]
                if not PyLong_CheckExact(item):
                    return self._bind_objects(pointers)
                try:
                    v = <uint64_t>item
                except OverflowError:
                    raise ValueError(f"UID {self._uids[self._dev_slot[j]]}: {item} is not a valid address") from None
                self._scratch[j] = <void*><uintptr_t>v
        elif PyObject_CheckBuffer(pointers):
            try:
                PyObject_GetBuffer(pointers, &view, PyBUF_C_CONTIGUOUS | PyBUF_FORMAT)
            except (BufferError, ValueError) as e:  # (numpy raises ValueError)
                raise TypeError(f"pointers: the {type(pointers).__name__} gives no contiguous buffer of 64-bit "
                                f"integers ({e}); pass a contiguous copy") from None
            try:
                if view.itemsize != 8 or not _int64_format(view.format):
                    fmt = (<bytes>view.format).decode() if view.format != NULL else "B"
                    raise TypeError(f"a pointer buffer must hold 64-bit integers (array.array('q'), numpy int64), "
                                    f"not format {fmt!r}")
                if view.ndim > 1:
                    raise TypeError(f"a pointer buffer is one row of {nd} pointers, not a {view.ndim}-d array")
                if view.len // 8 != nd:
                    raise ValueError(f"{view.len // 8} pointers given; this pack binds {nd} device pointers "
                                     f"(UIDs {', '.join(map(str, self.pointer_uids))}, in that order)")
                if nd:
                    memcpy(self._scratch, view.buf, nd * sizeof(void*))
                if not _unsigned_format(view.format):  # a negative int64 is no address (as in a list)
                    for j in range(nd):
                        if <int64_t><intptr_t>self._scratch[j] < 0:
                            raise ValueError(f"UID {self._uids[self._dev_slot[j]]}: "
                                             f"{<int64_t><intptr_t>self._scratch[j]} is not a valid address")
            finally:
                PyBuffer_Release(&view)
        elif hasattr(pointers, "items"):
            raise TypeError("pass a mapping of new buffers to rebind(), not to a positional binder")
        else:
            refuse_unordered(pointers, "pointers", f" (they bind in pointer_uids order: "
                                                   f"{', '.join(map(str, self.pointer_uids))})")
            try:
                it = iter(pointers)
            except Exception:
                raise TypeError(f"pointers must be a tuple/list of ints or a buffer of int64, not "
                                f"{type(pointers).__name__}") from None
            seq = []
            try:  # at most one past the count: a lying __len__ (tuple() would trust it and allocate) or no end
                for item in it:
                    seq.append(item)
                    if len(seq) > nd:
                        raise ValueError(f"more than {nd} pointers given; this pack binds {nd} device pointers "
                                         f"(UIDs {', '.join(map(str, self.pointer_uids))}, in that order)")
            except (TypeError, ValueError):
                raise
            except Exception as e:
                raise TypeError(f"pointers: iterating the {type(pointers).__name__} failed ({type(e).__name__}: "
                                f"{e})") from None
            return self._bind_objects(seq)
        # check all, then store
        for j in range(nd):
            k = self._dev_slot[j]
            pv = <uintptr_t>self._scratch[j]
            if _pointer_refused(self, k, pv):
                self._raise_pointer_error(k, pv)
        for j in range(nd):
            k = self._dev_slot[j]
            if self._ptrs[k] != self._scratch[j]:
                self._ptrs[k] = self._scratch[j]
                changed = True
                if self._keep[k] is not None:
                    self._keep[k] = None
        if changed:
            self._dirty = True
        return 0

    cdef int _raise_pointer_error(self, Py_ssize_t slot, uintptr_t pv) except -1:
        """Why ``_pointer_refused`` refused ``pv`` for ``slot``."""
        raise ValueError(_packing.pointer_problem(self._slot_label(slot), pv, self._align[slot],
                                                  self._min_bytes[slot]))

    cdef str _slot_label(self, Py_ssize_t slot):
        uid = self._uids[slot]
        spec = self._specs.get(uid)
        return f"UID {uid}" + (f" ({spec.name})" if spec is not None and spec.name != str(uid) else "")

    cdef int _bind_objects(self, object seq) except -1:
        """Positional binding of arbitrary buffer objects (the slow path): through rebind()."""
        seq = tuple(seq)
        if len(seq) != self._ndev:
            raise ValueError(f"{len(seq)} pointers given; this pack binds {self._ndev} device pointers "
                             f"(UIDs {', '.join(map(str, self.pointer_uids))}, in that order)")
        uids = self.pointer_uids
        self._rebind_mapping(dict(zip(uids, seq)))
        return 0

    cdef int _rebind_mapping(self, object buffers) except -1:
        cdef Py_ssize_t slot
        cdef bytes raw
        updates = []
        unknown = []
        seen = set()
        for key, value in buffers.items():
            uid = _packing.uid_of(key)
            if uid in seen:
                raise ValueError(f"UID {uid} is bound twice")
            seen.add(uid)
            if uid not in self._slot_of:
                unknown.append(uid)
                continue
            slot = self._slot_of[uid]
            spec = self._specs.get(uid)
            if spec is not None and spec.virtual:
                raise ValueError(f"UID {uid} is a virtual tensor; do not bind it")
            if uid in self._graph_specs:  # a tensor key, as the constructor checks it
                _packing.check_key_is_plans(key, self._graph_specs[uid])
            if self._by_value[slot]:
                updates.append((slot, 0, _packing.scalar_bytes(value, spec.data_type if spec is not None else None,
                                                         f"UID {uid}"), None))
                continue
            ptr, _, keep = _packing.resolve_slot(uid, spec, value, self._check_dtype,
                                                 _packing.handle_stream(self._plan_handle),
                                                 uid in (self._written or ()))
            if spec is None:  # no graph known: still check against what the pack knows
                if _pointer_refused(self, slot, ptr):
                    self._raise_pointer_error(slot, ptr)
            updates.append((slot, ptr, None, keep))
        self._check_open()  # reading the buffers ran producers' code, which may have closed the pack
        if unknown:
            virtual = [u for u in unknown if u in self._specs and self._specs[u].virtual]
            if virtual:
                raise ValueError(f"UID(s) {', '.join(map(str, sorted(virtual)))} are virtual tensors; cuDNN keeps them "
                                 f"internally: do not bind them")
            raise ValueError(f"unknown UID(s) {', '.join(map(str, sorted(unknown)))}: this pack binds "
                             f"{', '.join(map(str, self.uids))}")
        for slot, ptr, raw_value, keep in updates:
            if raw_value is not None:
                raw = raw_value
                memset(self._scalars + slot * SCALAR_BYTES, 0, SCALAR_BYTES)
                memcpy(self._scalars + slot * SCALAR_BYTES, <const char*>raw, len(raw))
            else:
                self._ptrs[slot] = <void*><uintptr_t>ptr
                self._keep[slot] = keep
            self._dirty = True
        return 0

    def rebind(self, buffers=None, *, workspace=_MISSING, overrides=_MISSING):
        """New buffers for some UIDs: ``{uid or Tensor: buffer}`` (checked like the constructor's), or a
        sequence/int64 buffer of pointers in ``pointer_uids`` order; ``workspace=`` replaces the workspace;
        ``overrides=`` new shapes (as the constructor's; ``{}`` or None: the graph's shapes again), checked before
        the buffers given with them, and the buffers kept checked against them. The descriptor is re-finalized at
        once. By-value UIDs take numbers, as in the constructor."""
        self._check_open()
        previous = None
        if overrides is not _MISSING:
            rebinding = {_packing.uid_of(k) for k in buffers} if hasattr(buffers, "items") else set()
            previous = [(uid, dims, strides) for uid, (dims, strides) in sorted(self.overrides.items())]
            self._set_overrides(self._checked_overrides(overrides), rebinding)
        try:
            if buffers is not None:
                if hasattr(buffers, "items"):
                    self._rebind_mapping(buffers)
                else:
                    self._bind_positional(buffers)
        except BaseException:
            if previous is not None:  # the buffers given with new shapes did not fit them: the old shapes again
                self._set_overrides(previous, set())
            raise
        if workspace is not _MISSING:
            # (a plan closed since sizes nothing: the next plan the pack runs checks the workspace)
            needed = (_packing.plan_workspace_size(self._plan_obj) if self._plan_obj is not None and
                      not _packing.plan_descriptor(self._plan_obj).closed else 0)
            ws_ptr, ws_cap, ws_keep, owned = _packing.resolve_workspace(workspace, needed, "workspace",
                                                                        _packing.handle_stream(self._plan_handle))
            self._workspace = <void*><uintptr_t>ws_ptr
            self._workspace_nbytes = ws_cap
            self._workspace_keep = ws_keep
            self._owns_workspace = owned
            self._dirty = True
        if self._dirty:
            self._rebuild()
        return self

    def _checked_overrides(self, overrides):
        if overrides is None or (hasattr(overrides, "items") and len(overrides) == 0):
            return []
        return _packing.prepare_overrides(self._graph_specs, overrides,
                                          _packing.plan_override_enabled(self._plan_obj)
                                          if self._plan_obj is not None else None,
                                          _packing.plan_operation_graph(self._plan_obj))

    cdef int _set_overrides(self, list overrides, object rebinding) except -1:
        """Make ``overrides`` (checked) this pack's shapes: the bound buffers of known size must hold them (but those
        of ``rebinding``, the UIDs given new buffers in the same call)."""
        cdef ShapeOverrides* ov = NULL
        cdef Py_ssize_t slot
        shapes = {uid: (dims, strides) for uid, dims, strides in overrides}
        specs = {uid: (spec if uid not in shapes else spec.with_shape(*shapes[uid]))
                 for uid, spec in (self._graph_specs or self._specs).items()}
        needs = {}
        for uid, spec in specs.items():  # every buffer kept must hold its tensor's (new) span
            slot = self._slot_of.get(uid, -1)
            if slot < 0 or self._by_value[slot]:
                continue
            need = needs[uid] = _packing.slot_bytes(uid, spec)
            if self._keep[slot] is None or uid in rebinding:
                continue
            have = _packing.resolve_buffer(self._keep[slot], f"UID {uid}").nbytes
            if have is not None and 0 <= need and have < need:
                raise ValueError(f"UID {uid}: the bound buffer holds {have} bytes but the tensor {spec.describe()} "
                                 f"spans {need} bytes: rebind it with the overrides")
        self._check_open()  # (reading the buffers ran producers' code)
        for uid, need in needs.items():  # a raw pointer kept must leave room for the new span
            slot = self._slot_of[uid]
            if uid not in rebinding and self._ptrs[slot] != NULL:
                problem = _packing.pointer_problem(f"UID {uid}", <uintptr_t>self._ptrs[slot], 0, need)
                if problem is not None:
                    raise ValueError(f"{problem}: rebind it with the overrides")
        if overrides:
            ov = _new_overrides(overrides)
        _free_overrides(self._overrides)
        self._overrides = ov
        self._specs = specs
        for uid, need in needs.items():
            slot = self._slot_of[uid]
            self._min_bytes[slot] = need
        self._ws_needed = -1
        self._ws_pending = ov != NULL
        if ov == NULL and self._plan_obj is not None:  # the graph's shapes: the plan's own workspace again
            plan = self._plan_obj
            self._plan_obj = None
            self._adopt_plan(plan)
        self._dirty = True
        return 0

    def rebind_pointers(self, pointers):
        """Positional rebind (a tuple/list of ints or an int64 buffer, in ``pointer_uids`` order); re-finalizes."""
        self._bind_positional(pointers)
        if self._dirty:
            self._rebuild()

    @cython.binding(False)  # as execute()
    @cython.embedsignature.format("clinic")
    def bind_and_execute(self, handle, plan, pointers):
        """Bind new device pointers (``pointer_uids`` order: a tuple/list of ints, or an int64
        array.array/numpy buffer) and execute, with no Python object created on the way."""
        self._bind_positional(pointers)
        self._call(CALL_EXECUTE, handle, plan, NULL)

    def set_scalar(self, key, value):
        """A new value for a by-value tensor (uid or Tensor)."""
        self._check_open()
        uid = _packing.uid_of(key)
        if uid not in self._slot_of:
            raise ValueError(f"unknown UID {uid}: this pack binds {', '.join(map(str, self.uids))}")
        if not self._by_value[self._slot_of[uid]]:
            raise ValueError(f"UID {uid} is not a by-value tensor; rebind() it to a buffer instead")
        self._rebind_mapping({uid: value})

    # -- introspection --------------------------------------------------------------------------
    @property
    def ptr(self):
        """The finalized cudnnBackendDescriptor_t (re-made after rebinds: read it again after one)."""
        if self._dirty and self._raw != NULL:
            self._rebuild()
        return <intptr_t>self._raw

    @property
    def uids(self):
        """The bound UIDs, in slot order."""
        return tuple(self._uids[i] for i in range(self._n))

    @property
    def pointer_uids(self):
        """The UIDs bound to device pointers, in the order positional rebinds take them."""
        return tuple(self._uids[self._dev_slot[j]] for j in range(self._ndev))

    @property
    def scalar_uids(self):
        """The UIDs of by-value tensors."""
        return tuple(self._uids[i] for i in range(self._n) if self._by_value[i])

    @property
    def data_pointers(self):
        """The device pointers, in ``pointer_uids`` order."""
        return tuple(<uintptr_t>self._ptrs[self._dev_slot[j]] for j in range(self._ndev))

    @property
    def pointers(self):
        """{uid: address}: device pointers, and the pack's host address for by-value scalars."""
        return {self._uids[i]: <uintptr_t>self._ptrs[i] for i in range(self._n)}

    @property
    def scalars(self):
        """{uid: value} of the by-value tensors."""
        out = {}
        for i in range(self._n):
            if self._by_value[i]:
                spec = self._specs.get(self._uids[i])
                out[self._uids[i]] = _packing.scalar_value(self._scalars[i * SCALAR_BYTES:(i + 1) * SCALAR_BYTES],
                                                     spec.data_type if spec is not None else None)
        return out

    @property
    def buffers(self):
        """{uid: the object kept for it (or its address when bound to a plain int)}; by-value UIDs left out."""
        return {self._uids[i]: (self._keep[i] if self._keep[i] is not None else <uintptr_t>self._ptrs[i])
                for i in range(self._n) if not self._by_value[i]}

    @property
    def overrides(self):
        """{uid: (dims, strides)} of the shapes this pack overrides ({}: the graph's shapes), read back from the
        arrays cuDNN is given."""
        return _read_overrides(self._overrides)

    @property
    def workspace_size(self):
        """The workspace (bytes) this pack's plan needs: cuDNN's answer for this pack when asked (always with
        overrides, once a handle is known: None until then; ``query_workspace``), else the plan's."""
        if self._ws_needed >= 0:
            return self._ws_needed
        if self._overrides != NULL or self._plan_obj is None:
            return None
        return _packing.plan_workspace_size(self._plan_obj)

    def query_workspace(self, handle=None, plan=None):
        """Ask cuDNN now (cudnnGetExecutionPlanWorkspaceSize, cuDNN >= 9.23) what workspace ``plan`` (default: the
        pack's) needs for this pack, its overrides included; grows a workspace the pack owns or lacks, refuses one
        too small that the caller gave. Returns the bytes. cuDNN answers only with a handle (``handle``, else the
        plan's): on a GPU."""
        cdef cudnnHandle_t h = NULL
        cdef cudnnBackendDescriptor_t p = NULL
        check_available("cudnnGetExecutionPlanWorkspaceSize", "VariantPack.query_workspace")
        self._resolve_call(handle, plan, &h, &p)
        if self._ws_needed < 0:
            self._settle_workspace(handle if handle is not None else self._plan_handle)
            if self._dirty:
                self._rebuild()
        return self._ws_needed

    @property
    def workspace(self):
        """The workspace address (0: none)."""
        return <uintptr_t>self._workspace

    @property
    def workspace_nbytes(self):
        """The workspace's size when known, else None."""
        return None if self._workspace_nbytes < 0 else self._workspace_nbytes

    @property
    def workspace_buffer(self):
        """The object holding the workspace (a DeviceBuffer the pack allocated, or the one given), or None."""
        return self._workspace_keep

    @property
    def owns_workspace(self):
        """Whether the pack allocated its workspace (and frees it with itself)."""
        return self._owns_workspace

    @property
    def tensors(self):
        """{uid: TensorSpec} of the plan's graph, virtual tensors included (empty when unknown)."""
        return dict(self._specs)

    @property
    def plan(self):
        """The plan last checked against this pack."""
        return self._plan_obj

    def __len__(self):
        return self._n

    def __contains__(self, key):
        try:
            return _packing.uid_of(key) in self._slot_of
        except TypeError:
            return False

    def __repr__(self):
        if self._raw == NULL:
            return "<cudnn_backend.VariantPack closed>"
        parts = []
        for i in range(self._n):
            if self._by_value[i]:
                parts.append(f"{self._uids[i]}=<scalar>")
            else:
                parts.append(f"{self._uids[i]}=0x{<uintptr_t>self._ptrs[i]:x}")
        ws = f"0x{<uintptr_t>self._workspace:x}" if self._workspace != NULL else "none"
        return f"<cudnn_backend.VariantPack {', '.join(parts)}; workspace {ws}>"


# ------------------------------------------------------------------------------------------------
# module-level calls
# ------------------------------------------------------------------------------------------------
@cython.binding(False)  # a plain builtin function: the interpreter's quick call, no function object per call
@cython.embedsignature.format("clinic")  # ... with a __text_signature__ (inspect.signature)
def execute(Handle handle, plan, pack, workspace=None, overrides=None):
    """Run ``plan`` on the handle's stream with the buffers of ``pack`` (a VariantPack, or a
    ``{uid: buffer}`` mapping, packed here with ``workspace`` and shape ``overrides``: slower). The GIL is
    released while cuDNN runs; ``handle=None`` uses the plan's handle."""
    cdef VariantPack vp
    if type(pack) is VariantPack:
        vp = <VariantPack>pack
    elif isinstance(pack, VariantPack):
        vp = <VariantPack>pack
    else:
        vp = VariantPack(plan, pack, workspace, overrides=overrides, handle=handle)
    vp._call(CALL_EXECUTE, handle, plan, NULL)


cdef intptr_t _graph_address(object graph) except? -1:
    if graph is None or isinstance(graph, bool):
        raise TypeError("a CUDA graph is a cuda-bindings cudaGraph_t/CUgraph or an int address")
    try:
        g = int(graph)
    except (TypeError, ValueError):
        raise TypeError(f"cannot use {type(graph).__name__} as a CUDA graph (need cudaGraph_t, CUgraph or an int)") from None
    if g == 0:
        raise ValueError("null CUDA graph")
    return <intptr_t>g


def populate_cuda_graph(Handle handle, plan, VariantPack pack not None, graph=None):
    """cudnnBackendPopulateCudaGraph: record the plan's work with ``pack``'s buffers into ``graph``
    (an empty cuda-bindings cudaGraph_t/CUgraph or int; None creates one with cudaGraphCreate).
    Returns the graph. Needs cuDNN >= 9.5 and an engine supporting the native CUDA graph API."""
    cdef cudnnHandle_t h
    cdef cudnnBackendDescriptor_t p
    created = graph is None
    if created:
        pack._resolve_call(handle, plan, &h, &p)  # the pack's own errors first, before a CUDA graph is made
        graph = memory.check(memory.cudart().cudaGraphCreate(0), "cudaGraphCreate")
    try:
        pack._call(CALL_POPULATE, handle, plan, <cudaGraph_t>_graph_address(graph))
    except BaseException:
        if created:
            memory.cudart().cudaGraphDestroy(graph)
        raise
    return graph


def update_cuda_graph(Handle handle, plan, VariantPack pack not None, graph):
    """cudnnBackendUpdateCudaGraph: point a graph that cuDNN populated for ``plan`` at ``pack``'s buffers.
    An executable made from it needs cudaGraphExecUpdate (CudaGraph.update does both)."""
    pack._call(CALL_UPDATE, handle, plan, <cudaGraph_t>_graph_address(graph))
    return graph


# ------------------------------------------------------------------------------------------------
# the calls a loop makes, without Cython's argument parsing (core/_fastcall.pyx); any other call goes to the def
# ------------------------------------------------------------------------------------------------
cdef inline bint _handle_or_none(PyObject* x) noexcept:
    return x == <PyObject*>None or <PyObject*>Py_TYPE(<object>x) == <PyObject*>Handle


cdef object _execute_def = execute
cdef object _pack_execute_def
cdef object _bind_and_execute_def


cdef object _execute_positional(PyObject* module, PyObject** args, Py_ssize_t nargs, PyObject* kwnames):
    """``execute(handle, plan, pack)`` with a Handle (or None) and a VariantPack."""
    if nargs == 3 and kwnames == NULL and _handle_or_none(args[0]) and \
            <PyObject*>Py_TYPE(<object>args[2]) == <PyObject*>VariantPack:
        (<VariantPack>args[2])._call(CALL_EXECUTE, <Handle>args[0], <object>args[1], NULL)
        return None
    return call_def(_execute_def, NULL, args, nargs, kwnames)


cdef object _pack_execute_positional(PyObject* pack, PyObject** args, Py_ssize_t nargs, PyObject* kwnames):
    """``pack.execute()``, ``pack.execute(handle)``, ``pack.execute(handle, plan)``."""
    if nargs <= 2 and kwnames == NULL and (nargs == 0 or _handle_or_none(args[0])):
        (<VariantPack>pack)._call(CALL_EXECUTE, <Handle>args[0] if nargs > 0 else None,
                                  <object>args[1] if nargs > 1 else None, NULL)
        return None
    return call_def(_pack_execute_def, pack, args, nargs, kwnames)


cdef object _bind_and_execute_positional(PyObject* pack, PyObject** args, Py_ssize_t nargs, PyObject* kwnames):
    """``pack.bind_and_execute(handle, plan, pointers)``."""
    if nargs == 3 and kwnames == NULL and _handle_or_none(args[0]):
        (<VariantPack>pack)._bind_positional(<object>args[2])
        (<VariantPack>pack)._call(CALL_EXECUTE, <Handle>args[0], <object>args[1], NULL)
        return None
    return call_def(_bind_and_execute_def, pack, args, nargs, kwnames)


execute = function_in_front(execute, _execute_positional)
_pack_execute_def = method_in_front(VariantPack, "execute", _pack_execute_positional)
_bind_and_execute_def = method_in_front(VariantPack, "bind_and_execute", _bind_and_execute_positional)
