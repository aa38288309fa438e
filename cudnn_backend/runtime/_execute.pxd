# Variant packs and execution (see _execute.pyx). Downstream Cython code can cimport VariantPack
# and reach its raw arrays: _uids/_ptrs hold _n entries, _raw (Resource's) is the finalized
# CUDNN_BACKEND_VARIANT_PACK_DESCRIPTOR (re-made by _rebuild() after pointers change).
from libc.stdint cimport int64_t, uintptr_t
from cudnn_backend._bindings.cycudnn cimport (CUDNN_STATUS_INTERNAL_ERROR, cudaGraph_t, cudnnBackendDescriptor_t,
                                             cudnnHandle_t, cudnnStatus_t)
from cudnn_backend.core._descriptor cimport Descriptor
from cudnn_backend.core._handle cimport Handle
from cudnn_backend.core._resource cimport Resource


cdef struct StdVector:                   # libstdc++'s std::vector<T> object: what cuDNN reads for shape overrides
    void* begin
    void* end
    void* end_of_storage


cdef struct ShapeOverrides:              # the CUDNN_ATTR_VARIANT_PACK_OVERRIDE_* arrays of a pack
    int64_t n                            # overridden tensors
    int64_t* uids                        # [n]
    int64_t* values                      # [n][2][8]: each tensor's dims, then its strides
    StdVector* rows                      # [2n]: the dims rows, then the strides rows (into values)
    StdVector shapes                     # std::vector<std::vector<int64_t>> of the dims rows
    StdVector strides                    # ... of the strides rows


cdef class VariantPack(Resource):
    cdef Py_ssize_t _n                   # number of bound UIDs (slots)
    cdef int64_t* _uids                  # [n] UIDs, in slot order
    cdef void** _ptrs                    # [n] data pointers (host address of the scalar for by-value slots)
    cdef void** _scratch                 # [n] staging for positional rebinds (validated, then committed)
    cdef int64_t* _align                 # [n] required byte alignment (0: not checked)
    cdef int64_t* _min_bytes             # [n] bytes the tensor spans (-1: unknown)
    cdef unsigned char* _by_value        # [n] 1 for a by-value (host scalar) slot
    cdef char* _scalars                  # [n * 16] host storage of by-value scalars
    cdef Py_ssize_t _ndev                # number of device (pointer) slots
    cdef Py_ssize_t* _dev_slot           # [ndev] slot of each device slot, in positional order
    cdef void* _workspace
    cdef int64_t _workspace_nbytes       # capacity when known, else -1
    cdef bint _dirty                     # pointers changed since the descriptor was finalized
    cdef list _keep                      # [n] objects kept alive (the buffers), or None
    cdef object _workspace_keep
    cdef bint _owns_workspace
    cdef dict _slot_of                   # uid -> slot
    cdef dict _specs                     # uid -> TensorSpec (empty when the graph is unknown)
    cdef object _plan_obj                # the plan last checked against this pack
    cdef Descriptor _plan_desc           # its CUDNN_BACKEND_EXECUTION_PLAN_DESCRIPTOR
    cdef object _plan_handle             # the plan's Handle, if it has one
    cdef bint _check_dtype
    cdef ShapeOverrides* _overrides      # NULL: the graph's shapes
    cdef dict _graph_specs               # uid -> TensorSpec as the graph has it (_specs has the overridden shapes)
    cdef bint _ws_pending                # overrides whose workspace is not queried yet (no handle so far)
    cdef int64_t _ws_needed              # the workspace queried for this pack and plan (-1: not queried)
    cdef object _written                 # frozenset of the UIDs the plan's graph writes (None: unknown)

    cdef int _alloc(self, Py_ssize_t n) except -1
    cdef void _free_arrays(self) noexcept nogil
    cdef int _rebuild(self) except -1
    cdef int _adopt_plan(self, object plan) except -1
    cdef int _check_tensors_fit(self, dict specs) except -1
    cdef cudnnBackendDescriptor_t _new_descriptor(self) except NULL
    cdef int _resolve_call(self, Handle handle, object plan, cudnnHandle_t* h, cudnnBackendDescriptor_t* p) except -1
    cdef int _call(self, int what, Handle handle, object plan, cudaGraph_t graph) except -1
    cdef int _call_failed(self, int what, cudnnStatus_t st, Handle hobj, object plan, cudaGraph_t graph,
                          int context_state) except -1
    cdef int _bind_positional(self, object pointers) except -1
    cdef int _raise_pointer_error(self, Py_ssize_t slot, uintptr_t pv) except -1
    cdef str _slot_label(self, Py_ssize_t slot)
    cdef int _bind_objects(self, object seq) except -1
    cdef int _rebind_mapping(self, object buffers) except -1
    cdef int _set_overrides(self, list overrides, object rebinding) except -1
    cdef int _ensure_workspace(self, int64_t needed, str why) except -1
    cdef int _settle_workspace(self, Handle handle) except -1
