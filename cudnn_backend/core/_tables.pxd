# The attribute schema as C tables (see _tables.pyx), read by Descriptor's set/get/finalize: built once, on first use,
# against the loaded cuDNN.
from libc.stdint cimport int64_t, uint8_t, uint64_t

cdef enum:
    MAX_TYPES = 64
    INLINE_BYTES = 256           # most attribute arrays fit: no malloc for them
    MAX_SET_ELEMENTS = 1 << 20   # no attribute takes more (a lying __len__ is refused before allocation)
    MAX_GET_ELEMENTS = 1 << 24
    MAX_GET_DESCRIPTORS = 1 << 14

# element kinds
cdef enum:
    K_NONE = 0
    K_HANDLE = 1
    K_BOOL = 2
    K_INT64 = 3
    K_INT32 = 4
    K_FLOAT = 5
    K_DOUBLE = 6
    K_PTR = 7
    K_CHAR = 8
    K_FRACTION = 9
    K_ENUM = 10
    K_DESC = 11

# attribute flags
cdef enum:
    F_HOST_DATA = 1
    F_SET_UNSUPPORTED = 2
    F_GET_UNSUPPORTED = 4
    F_JSON = 8
    F_AVAILABLE = 16
    F_FAST = 32          # available, settable, plain elements (ints, enums, descriptors, floats, bools): _set_fast

cdef enum:
    ROLE_REQUIRED = 0
    ROLE_OPTIONAL = 1
    ROLE_GET_ONLY = 2

ctypedef struct AttrSpec:
    int descriptor          # owning descriptor type, -1 for a value that is no attribute
    uint64_t types          # accepted attribute types (bit per type value)
    int default_type        # the preferred (first) attribute type
    int count_min
    int count_max           # -1: unbounded
    int role
    int flags
    uint64_t accepts        # descriptor types a descriptor-valued attribute takes (bit per type value)
    int get_type            # the type cuDNN's Get wants when it differs, else -1
    int get_max_count       # cuDNN's count query is wrong: ask for this many (0: ask)
    int64_t value_min       # integer elements must be >= this
    int io                  # 0: not a tensor slot, 1: input tensor, 2: output tensor
    int slot                # index among its descriptor type's attributes: its place in Descriptor._vals
    int bit                 # its Descriptor._mask bit: the slot, -1 past 63

cdef AttrSpec* _ATTR                     # attribute value -> its spec
cdef int _N_ATTR
cdef int _TYPE_KIND[MAX_TYPES]           # attribute type -> element kind (K_*)
cdef bint _TYPE_AVAILABLE[MAX_TYPES]
cdef uint8_t* _ENUM_OK[MAX_TYPES]        # enum types: value - _ENUM_MIN -> 0 invalid, 1 valid, 2 newer than loaded
cdef int _ENUM_MAX[MAX_TYPES]
cdef int _ENUM_MIN[MAX_TYPES]            # 0, or the lowest member (CUDNN_OPERATIONGRAPH_MODE_AUTO is -1)
cdef list _ENUM_CLASS                    # attribute type -> IntEnum class of its values
cdef uint8_t _DESC_OK[MAX_TYPES]         # descriptor type -> 0 unknown, 1 available, 2 newer than loaded
cdef int* _REQUIRED[MAX_TYPES]           # descriptor type -> required attribute values
cdef int _N_REQUIRED[MAX_TYPES]
cdef uint64_t _REQUIRED_MASK[MAX_TYPES]  # descriptor type -> the _mask bits of its required attributes
cdef bint _REQUIRED_BY_SLOT[MAX_TYPES]   # a required attribute has no bit (slot > 63): checked by slot too
cdef bint _FINALIZE_NOGIL[MAX_TYPES]     # finalize may take long (plans, heuristics, graphs): release the GIL
cdef int _N_ATTRS[MAX_TYPES]             # descriptor type -> how many attributes it has (the length of _vals)
cdef int* _SLOT_ATTR[MAX_TYPES]          # descriptor type -> slot -> attribute value
cdef int* _CHILD_SLOTS[MAX_TYPES]        # descriptor type -> the slots that may hold descriptors or a handle
cdef int _N_CHILD_SLOTS[MAX_TYPES]
cdef dict _FINALIZE_CHECK                # descriptor type -> Python check run before finalize
cdef bint _HAS_FINALIZE_CHECK[MAX_TYPES]
cdef dict _JSON_CHECK                    # attribute -> JSON checker returning canonical text
cdef Py_ssize_t _KIND_SIZE[12]           # element kind -> bytes per element
cdef int _PW_INPUTS[4]                   # the pointwise family's tensor slots (finalize's C fast path)
cdef int _PW_OUTPUTS[2]
cdef bint _READY

cdef int _build_tables() except -1


cdef inline int _ensure_tables() except -1:
    if not _READY:
        _build_tables()
    return 0
