# The attribute schema as C tables (see _tables.pyx), read by Descriptor's set/get/finalize: built once, on first use,
# against the loaded cuDNN. The descriptor module keeps a copy of the struct (its hot paths read it with one load).
from cpython.ref cimport PyObject
from libc.stdint cimport int64_t, uint8_t, uint64_t

cdef enum:
    MAX_TYPES = 64
    PW_MODES = 1024   # pointwise modes the finalize's fast path knows by value (cuDNN 9's reach 601)
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


ctypedef struct SchemaTables:               # built once (schema_tables), then read-only
    bint ready
    AttrSpec* attr                          # attribute value -> its spec
    int n_attr
    int type_kind[MAX_TYPES]                # attribute type -> element kind (K_*)
    bint type_available[MAX_TYPES]
    uint8_t* enum_ok[MAX_TYPES]             # enum types: value - enum_min -> 0 invalid, 1 valid, 2 newer than loaded
    int enum_max[MAX_TYPES]
    int enum_min[MAX_TYPES]                 # 0, or the lowest member (CUDNN_OPERATIONGRAPH_MODE_AUTO is -1)
    PyObject* enum_class[MAX_TYPES]         # attribute type -> IntEnum class of its values (borrowed; NULL: none)
    uint8_t desc_ok[MAX_TYPES]              # descriptor type -> 0 unknown, 1 available, 2 newer than loaded
    int* required[MAX_TYPES]                # descriptor type -> required attribute values
    int n_required[MAX_TYPES]
    uint64_t required_mask[MAX_TYPES]       # descriptor type -> the _mask bits of its required attributes
    bint required_by_slot[MAX_TYPES]        # a required attribute has no bit (slot > 63): checked by slot too
    bint finalize_nogil[MAX_TYPES]          # finalize may take long (plans, heuristics, graphs): release the GIL
    int n_attrs[MAX_TYPES]                  # descriptor type -> how many attributes it has (the length of _vals)
    int* slot_attr[MAX_TYPES]               # descriptor type -> slot -> attribute value
    int* child_slots[MAX_TYPES]             # descriptor type -> the slots that may hold descriptors or a handle
    int n_child_slots[MAX_TYPES]
    PyObject* finalize_check[MAX_TYPES]     # descriptor type -> Python check run before finalize (borrowed; NULL: none)
    int64_t finalize_check_floor[MAX_TYPES] # descriptor type -> skipped where every tensor is smaller (0: always run)
    uint64_t finalize_check_floor_unless[MAX_TYPES]  # ... and none of these attributes (_mask bits) is set
    Py_ssize_t kind_size[12]                # element kind -> bytes per element
    int pw_inputs[4]                        # the pointwise family's tensor slots (finalize's C fast path)
    int pw_outputs[2]
    uint8_t pw_slots_wanted[PW_MODES]       # pointwise mode -> the slots it takes (pointwise.SLOTS_WANTED; 0: unknown)

cdef dict _JSON_CHECK                       # attribute -> JSON checker returning canonical text
cdef SchemaTables* schema_tables() except NULL   # the tables, built on first use
