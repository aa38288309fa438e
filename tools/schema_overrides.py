"""Explicit corrections and additions for tools/gen_schema.py.

Everything the header (cuDNN 9.28 ``cudnn_graph.h``) does not document, or
documents wrongly, is filled in here -- and only here.  Each entry carries a
short comment saying why it exists and where the value comes from.

Sources named in the comments:

* "probe 9.19": ctypes calls into the real cuDNN 9.19.0 library on a GPU-less
  machine -- ``cudnnBackendSetAttribute`` with every attribute type on a fresh
  descriptor (a type is accepted when the status differs from the status all
  the wrong types get), ``cudnnBackendGetAttribute`` on descriptors that can be
  finalized without a GPU, and the API log (``CUDNN_LOGLEVEL_DBG=2/3``), which
  prints each descriptor's internal fields with their C types.
* "frontend": NVIDIA/cudnn-frontend sources (include/cudnn_frontend/...), which
  set these attributes with explicit ``CUDNN_TYPE_*`` values.
* "enum brief": the ``/**< ... */`` comment on the attribute's enumerant.
* "NVIDIA docs": the cuDNN backend descriptor-type reference.

Plain data (one tiny helper, _tensor(), spells the common tensor-slot entry).
"""

# ---------------------------------------------------------------------------
# Expected totals per header version (checked by gen_schema.main()).
# ---------------------------------------------------------------------------
EXPECTED_COUNTS = {
    "9.28.0": (51, 383),  # (descriptor types, attributes) in cuDNN 9.28's enums
}

# ---------------------------------------------------------------------------
# Doc spellings that differ from the enums.
# ---------------------------------------------------------------------------
DOC_TYPE_ALIASES = {
    # Resample block writes NAN_PROPAGATION; the enumerant keeps the historical typo.
    "CUDNN_TYPE_NAN_PROPAGATION": "CUDNN_TYPE_NAN_PROPOGATION",
}

DOC_NAME_ALIASES = {
    # Header documents CUDNN_ATTR_CONVOLUTION_MODE but the enumerant is ..._CONV_MODE.
    "CUDNN_ATTR_CONVOLUTION_MODE": "CUDNN_ATTR_CONVOLUTION_CONV_MODE",
    # Header documents ..._EXP_AVERAGE_FACTOR_DESC; the enumerant is spelled ..._EXP_AVERATE_FACTOR_DESC.
    "CUDNN_ATTR_OPERATION_BN_FINALIZE_EXP_AVERAGE_FACTOR_DESC":
        "CUDNN_ATTR_OPERATION_BN_FINALIZE_EXP_AVERATE_FACTOR_DESC",
}

DOC_ONLY_NAMES = {
    # Documented in the OPERATIONGRAPH block ("currently unsupported") but absent from the enum.
    "CUDNN_ATTR_OPERATIONGRAPH_ENGINE_SUPPORTED_COUNT",
}

# ---------------------------------------------------------------------------
# Attribute -> descriptor assignment (by name prefix).
# ---------------------------------------------------------------------------
# Word substitutions applied to a descriptor's name to get its attribute
# prefixes (CUDNN_BACKEND_X_DESCRIPTOR -> CUDNN_ATTR_X_); the longest matching
# prefix wins, so CUDNN_ATTR_OPERATION_MATMUL_* never lands on MATMUL.
PREFIX_ABBREVIATIONS = [
    ("BACKWARD", "BWD"),        # OPERATION_CONVOLUTION_BACKWARD_DATA -> ..._BWD_DATA_, NORM_BACKWARD -> NORM_BWD_
    ("FORWARD", "FWD"),         # OPERATION_NORM_FORWARD -> NORM_FWD_ (CONVOLUTION_FORWARD keeps FORWARD too)
    ("GEN_STATS", "GENSTATS"),  # OPERATION_GEN_STATS -> OPERATION_GENSTATS_
    ("_STATISTICS", ""),        # OPERATION_BN_FINALIZE_STATISTICS -> OPERATION_BN_FINALIZE_
]

# Extra prefixes for a descriptor, for names no substitution produces (none needed for 9.28).
EXTRA_DESCRIPTOR_PREFIXES = {}

ATTRIBUTE_DESCRIPTOR = {
    # Lacks the _MATRIX_ word of its siblings; listed in the CONTRACT_BAND_MATRIX doc block.
    "CUDNN_ATTR_OPERATION_CONTRACT_BAND_MAX_TOKEN_VALUE":
        "CUDNN_BACKEND_OPERATION_CONTRACT_BAND_MATRIX_DESCRIPTOR",
}

# attribute_prefix forced for a descriptor (none needed; see gen_schema's rule).
DESCRIPTOR_PREFIX = {}

# ---------------------------------------------------------------------------
# Per-attribute field overrides.  Keys: types, count_min, count_max, role,
# default, accepts.  A key given here replaces what the header says.
# ---------------------------------------------------------------------------
_T = "CUDNN_BACKEND_TENSOR_DESCRIPTOR"
_G = "CUDNN_BACKEND_OPERATIONGRAPH_DESCRIPTOR"
_DESC = "CUDNN_TYPE_BACKEND_DESCRIPTOR"


def _tensor(role="optional"):
    return {"types": [_DESC], "count_min": 1, "count_max": 1, "role": role, "accepts": [_T]}


ATTRIBUTE_OVERRIDES = {
    # ---- CONVOLUTION / convolution operations ------------------------------------------
    # Probe 9.19: Set takes CONVOLUTION_MODE, but Get accepts only CUDNN_TYPE_DATA_TYPE (same 4-byte enum).
    "CUDNN_ATTR_CONVOLUTION_CONV_MODE": {"get_type": "CUDNN_TYPE_DATA_TYPE"},
    # Header: FLOAT or DOUBLE; probe 9.19 also accepts INT32 for the forward alpha/beta (listed last).
    # Header also says "1+ elements"; probe 9.19 rejects any elementCount other than 1.
    "CUDNN_ATTR_OPERATION_CONVOLUTION_FORWARD_ALPHA": {
        "types": ["CUDNN_TYPE_FLOAT", "CUDNN_TYPE_DOUBLE", "CUDNN_TYPE_INT32"], "count_max": 1},
    "CUDNN_ATTR_OPERATION_CONVOLUTION_FORWARD_BETA": {
        "types": ["CUDNN_TYPE_FLOAT", "CUDNN_TYPE_DOUBLE", "CUDNN_TYPE_INT32"], "count_max": 1},

    # Header says "1+ elements"; probe 9.19 rejects any elementCount other than 1 (a scalar).
    "CUDNN_ATTR_OPERATION_CONVOLUTION_BWD_DATA_ALPHA": {"count_max": 1},
    "CUDNN_ATTR_OPERATION_CONVOLUTION_BWD_DATA_BETA": {"count_max": 1},
    "CUDNN_ATTR_OPERATION_CONVOLUTION_BWD_FILTER_ALPHA": {"count_max": 1},
    "CUDNN_ATTR_OPERATION_CONVOLUTION_BWD_FILTER_BETA": {"count_max": 1},

    # ---- ENGINE: header says "1 element"; a finalized engine (probe 9.19) returns 2 KNOB_INFO
    # descriptors / 0 LAYOUT_INFO descriptors -> arrays (NVIDIA docs: zero or more).
    "CUDNN_ATTR_ENGINE_KNOB_INFO": {"count_min": 0, "count_max": None},
    "CUDNN_ATTR_ENGINE_LAYOUT_INFO": {"count_min": 0, "count_max": None},

    # ---- ENGINEHEUR / ENGINECFG / EXECUTION_PLAN ----------------------------------------
    # Probe 9.19: the count query answers 0 for heuristics' configs, but a Get with room for more
    # returns every choice: "get_max_count" makes get() ask for that many instead of asking first.
    "CUDNN_ATTR_ENGINECFG_KNOB_CHOICES": {"get_max_count": 64},
    # Header gives no descriptor type; it is the graph to rank engines for (NVIDIA docs;
    # probe 9.19: an OPERATIONGRAPH is accepted, a TENSOR aborts the process).
    "CUDNN_ATTR_ENGINEHEUR_OPERATION_GRAPH": {"accepts": [_G]},
    # Undocumented in header; frontend reads it with CUDNN_TYPE_INT32; NVIDIA docs: read-only
    # (probe 9.19 lets an INT32 set through on an unfinalized descriptor, which means nothing).
    "CUDNN_ATTR_ENGINECFG_SHARED_MEMORY_USED": {
        "types": ["CUDNN_TYPE_INT32"], "count_min": 1, "count_max": 1, "role": "get_only"},
    # Deprecated; the plan can be built against CUDNN_ATTR_EXECUTION_PLAN_DEVICEPROP instead.
    "CUDNN_ATTR_EXECUTION_PLAN_HANDLE": {"role": "optional"},
    # A plan is built either from an engine config or from its JSON representation (deserialize),
    # so neither is required on its own; Descriptor.finalize checks that one of them is there.
    "CUDNN_ATTR_EXECUTION_PLAN_ENGINE_CONFIG": {"role": "optional"},
    # Header: "0+ elements"; probe 9.19 rejects elementCount 0 (an empty list is meaningless).
    "CUDNN_ATTR_EXECUTION_PLAN_RUN_ONLY_INTERMEDIATE_UIDS": {"count_min": 1},
    # Header calls it optional but "currently unsupported"; probe 9.19: every set -> NOT_SUPPORTED.
    "CUDNN_ATTR_EXECUTION_PLAN_COMPUTED_INTERMEDIATE_UIDS": {"role": "get_only"},

    # ---- INTERMEDIATE_INFO / KNOB_INFO (read-only descriptors) --------------------------
    # No type in header ("placeholder"); CUDNN_TYPE_ATTRIB_NAME is the only type naming attributes.
    "CUDNN_ATTR_INTERMEDIATE_INFO_DEPENDENT_ATTRIBUTES": {
        "types": ["CUDNN_TYPE_ATTRIB_NAME"], "count_min": 0, "count_max": None, "role": "get_only"},
    # KNOB_INFO block in header is empty; types from NVIDIA docs; probe 9.19: set -> NOT_SUPPORTED.
    "CUDNN_ATTR_KNOB_INFO_TYPE": {
        "types": ["CUDNN_TYPE_KNOB_TYPE"], "count_min": 1, "count_max": 1, "role": "get_only"},
    "CUDNN_ATTR_KNOB_INFO_MAXIMUM_VALUE": {
        "types": ["CUDNN_TYPE_INT64"], "count_min": 1, "count_max": 1, "role": "get_only"},
    "CUDNN_ATTR_KNOB_INFO_MINIMUM_VALUE": {
        "types": ["CUDNN_TYPE_INT64"], "count_min": 1, "count_max": 1, "role": "get_only"},
    "CUDNN_ATTR_KNOB_INFO_STRIDE": {
        "types": ["CUDNN_TYPE_INT64"], "count_min": 1, "count_max": 1, "role": "get_only"},

    # ---- ENGINE ---------------------------------------------------------------------------
    # Undocumented in header; probe 9.19 accepts only CUDNN_TYPE_BOOLEAN.
    "CUDNN_ATTR_ENGINE_DISABLE_CLUSTER_COOPERATIVE": {
        "types": ["CUDNN_TYPE_BOOLEAN"], "count_min": 1, "count_max": 1, "role": "optional"},

    # ---- OPERATION_POINTWISE (header block names the attributes but gives no types) -------
    "CUDNN_ATTR_OPERATION_POINTWISE_PW_DESCRIPTOR": {
        "types": [_DESC], "count_min": 1, "count_max": 1,
        "accepts": ["CUDNN_BACKEND_POINTWISE_DESCRIPTOR"]},  # API log 9.19: field pwDesc is a POINTWISE desc
    "CUDNN_ATTR_OPERATION_POINTWISE_XDESC": _tensor(),   # conditionally required (header prose)
    "CUDNN_ATTR_OPERATION_POINTWISE_BDESC": _tensor(),
    "CUDNN_ATTR_OPERATION_POINTWISE_YDESC": _tensor(),
    "CUDNN_ATTR_OPERATION_POINTWISE_TDESC": _tensor(),
    "CUDNN_ATTR_OPERATION_POINTWISE_DXDESC": _tensor(),
    "CUDNN_ATTR_OPERATION_POINTWISE_DYDESC": _tensor(),
    # Header: "float or half" (there is no CUDNN_TYPE_HALF); probe 9.19 accepts DOUBLE and FLOAT,
    # API log shows the value is stored as double.
    "CUDNN_ATTR_OPERATION_POINTWISE_ALPHA1": {
        "types": ["CUDNN_TYPE_DOUBLE", "CUDNN_TYPE_FLOAT"], "count_min": 1, "count_max": 1},
    "CUDNN_ATTR_OPERATION_POINTWISE_ALPHA2": {
        "types": ["CUDNN_TYPE_DOUBLE", "CUDNN_TYPE_FLOAT"], "count_min": 1, "count_max": 1},

    # ---- OPERATION_GEN_STATS (header block gives no types) ----------------------------
    "CUDNN_ATTR_OPERATION_GENSTATS_MODE": {  # header prose names the type; probe 9.19 confirms
        "types": ["CUDNN_TYPE_GENSTATS_MODE"], "count_min": 1, "count_max": 1},
    "CUDNN_ATTR_OPERATION_GENSTATS_MATH_PREC": {  # probe 9.19: only DATA_TYPE accepted
        "types": ["CUDNN_TYPE_DATA_TYPE"], "count_min": 1, "count_max": 1},
    "CUDNN_ATTR_OPERATION_GENSTATS_XDESC": _tensor("required"),
    "CUDNN_ATTR_OPERATION_GENSTATS_SUMDESC": _tensor("required"),
    "CUDNN_ATTR_OPERATION_GENSTATS_SQSUMDESC": _tensor("required"),

    # ---- OPERATION_BN_FINALIZE_STATISTICS ---------------------------------------------
    "CUDNN_ATTR_OPERATION_BN_FINALIZE_MATH_PREC": {  # no type in header; probe 9.19: DATA_TYPE
        "types": ["CUDNN_TYPE_DATA_TYPE"], "count_min": 1, "count_max": 1},

    # ---- OPERATION_BN_BWD_WEIGHTS (header: "no dedicated documentation"; roles unknown) --
    # Types from probe 9.19; the API log shows every *_DESC field (EQ_BIAS too) is a TENSOR.
    "CUDNN_ATTR_OPERATION_BN_BWD_WEIGHTS_MATH_PREC": {
        "types": ["CUDNN_TYPE_DATA_TYPE"], "count_min": 1, "count_max": 1},
    "CUDNN_ATTR_OPERATION_BN_BWD_WEIGHTS_MEAN_DESC": _tensor(),
    "CUDNN_ATTR_OPERATION_BN_BWD_WEIGHTS_INVSTD_DESC": _tensor(),
    "CUDNN_ATTR_OPERATION_BN_BWD_WEIGHTS_BN_SCALE_DESC": _tensor(),
    "CUDNN_ATTR_OPERATION_BN_BWD_WEIGHTS_X_DESC": _tensor(),
    "CUDNN_ATTR_OPERATION_BN_BWD_WEIGHTS_DY_DESC": _tensor(),
    "CUDNN_ATTR_OPERATION_BN_BWD_WEIGHTS_DBN_SCALE_DESC": _tensor(),
    "CUDNN_ATTR_OPERATION_BN_BWD_WEIGHTS_DBN_BIAS_DESC": _tensor(),
    "CUDNN_ATTR_OPERATION_BN_BWD_WEIGHTS_EQ_DY_SCALE_DESC": _tensor(),
    "CUDNN_ATTR_OPERATION_BN_BWD_WEIGHTS_EQ_X_SCALE_DESC": _tensor(),
    "CUDNN_ATTR_OPERATION_BN_BWD_WEIGHTS_EQ_BIAS": _tensor(),

    # ---- CONCAT -----------------------------------------------------------------------------
    # Fuzzing 9.19: GetAttribute of a finalized concat's INPUT_DESCS with >= 1 element segfaults.
    "CUDNN_ATTR_OPERATION_CONCAT_INPUT_DESCS": {
        "get_unsupported": "getting it crashes cuDNN 9.19; keep the input tensors you set"},

    # ---- NORM -------------------------------------------------------------------------------
    # Header says required, but RMS norm has no bias: cuDNN 9.19 finalizes RMS norm forward/backward
    # without them (and cudnn-frontend sets them only for layer norm).
    "CUDNN_ATTR_OPERATION_NORM_FWD_BIAS_DESC": {"role": "optional"},
    "CUDNN_ATTR_OPERATION_NORM_BWD_DBIAS_DESC": {"role": "optional"},

    # ---- OPERATIONGRAPH -------------------------------------------------------------------
    # Deprecated; probe 9.19 finalizes a graph without it.
    "CUDNN_ATTR_OPERATIONGRAPH_HANDLE": {"role": "optional"},
    # Undocumented. Probe 9.19: a query, not a setting -- every set fails; Get with
    # CUDNN_TYPE_BACKEND_DESCRIPTOR and arrayOfElements = {another finalized graph} succeeds and
    # writes a C bool (1 byte) into *elementCount ("same topology").
    "CUDNN_ATTR_OPERATIONGRAPH_IS_SAME_TOPOLOGY": {
        "types": [_DESC], "count_min": 1, "count_max": 1, "role": "get_only", "accepts": [_G],
        "get_unsupported": "a query taking another graph (the generic get crashes cuDNN 9.19); "
                           "use cudnn_backend.is_same_topology(graph, other)"},
    # Undocumented; frontend sets it with CUDNN_TYPE_BOOLEAN.
    "CUDNN_ATTR_OPERATIONGRAPH_IS_OVERRIDE_SHAPE_ENABLED": {
        "types": ["CUDNN_TYPE_BOOLEAN"], "count_min": 1, "count_max": 1, "role": "optional"},
    # Undocumented attribute; its type and default are described by cudnnBackendOperationGraphMode_t's doc.
    "CUDNN_ATTR_OPERATIONGRAPH_MODE": {
        "types": ["CUDNN_TYPE_OPERATIONGRAPH_MODE"], "count_min": 1, "count_max": 1, "role": "optional",
        "default": "CUDNN_OPERATIONGRAPH_MODE_AUTO"},

    # ---- TENSOR -------------------------------------------------------------------------------
    # Undocumented in header; probe 9.19 accepts only BOOLEAN; default from NVIDIA docs.
    "CUDNN_ATTR_TENSOR_IS_BY_VALUE": {
        "types": ["CUDNN_TYPE_BOOLEAN"], "count_min": 1, "count_max": 1, "role": "optional",
        "default": "false"},
    # Undocumented in header; probe 9.19 accepts only TENSOR_REORDERING_MODE; default from NVIDIA docs.
    # Probe 9.19: Get accepts only CUDNN_TYPE_INT64 (and writes the 4-byte enum).
    "CUDNN_ATTR_TENSOR_REORDERING_MODE": {
        "types": ["CUDNN_TYPE_TENSOR_REORDERING_MODE"], "count_min": 1, "count_max": 1, "role": "optional",
        "default": "CUDNN_TENSOR_REORDERING_NONE", "get_type": "CUDNN_TYPE_INT64"},
    # Undocumented (9.22+); frontend passes one VOID_PTR pointing at the constant's bytes.
    # cuDNN reads the constant from host memory at that address: "host_data" makes set() take the
    # bytes (or a numpy value) and pass the address of a copy the descriptor keeps, never a raw int.
    "CUDNN_ATTR_TENSOR_CONSTANT_VALUE": {
        "types": ["CUDNN_TYPE_VOID_PTR"], "count_min": 1, "count_max": 1, "role": "optional", "host_data": True},
    # Header gives no descriptor type; it is the offsets tensor (header prose, API log).
    # Probe 9.19: any Get of it (set or not) crashes the process.
    "CUDNN_ATTR_TENSOR_RAGGED_OFFSET_DESC": {
        "accepts": [_T], "get_unsupported": "getting it crashes cuDNN 9.19; keep the offsets tensor you set"},

    # ---- VARIANT_PACK -----------------------------------------------------------------------
    # Header: "0+ elements"; probe 9.19 rejects elementCount 0 for both.
    "CUDNN_ATTR_VARIANT_PACK_UNIQUE_IDS": {"count_min": 1},
    "CUDNN_ATTR_VARIANT_PACK_DATA_POINTERS": {"count_min": 1},
    # Undocumented (9.18+); frontend + probe 9.19: INT64 array of UIDs (elementCount 0 rejected).
    "CUDNN_ATTR_VARIANT_PACK_OVERRIDE_UNIQUE_IDS": {
        "types": ["CUDNN_TYPE_INT64"], "count_min": 1, "count_max": None, "role": "optional"},
    # Undocumented; frontend passes ONE VOID_PTR (the data pointer of a
    # std::vector<std::vector<int64_t>>, one entry per override UID); probe 9.19 accepts VOID_PTR only.
    # A C++ object's address cannot be made safely from Python: set() refuses these.
    "CUDNN_ATTR_VARIANT_PACK_OVERRIDE_SHAPES": {
        "types": ["CUDNN_TYPE_VOID_PTR"], "count_min": 1, "count_max": 1, "role": "optional",
        "set_unsupported": "cuDNN reads a C++ std::vector<std::vector<int64_t>> at this address"},
    "CUDNN_ATTR_VARIANT_PACK_OVERRIDE_STRIDES": {
        "types": ["CUDNN_TYPE_VOID_PTR"], "count_min": 1, "count_max": 1, "role": "optional",
        "set_unsupported": "cuDNN reads a C++ std::vector<std::vector<int64_t>> at this address"},

    # ---- MATMUL / REDUCTION -----------------------------------------------------------------
    # Undocumented in header; probe 9.19 accepts DOUBLE, FLOAT, INT64, INT32; frontend uses DOUBLE.
    "CUDNN_ATTR_MATMUL_PADDING_VALUE": {
        "types": ["CUDNN_TYPE_DOUBLE", "CUDNN_TYPE_FLOAT", "CUDNN_TYPE_INT64", "CUDNN_TYPE_INT32"],
        "count_min": 1, "count_max": 1, "role": "optional"},
    # Undocumented (9.11+); frontend + probe 9.19: BOOLEAN.
    "CUDNN_ATTR_REDUCTION_IS_DETERMINISTIC": {
        "types": ["CUDNN_TYPE_BOOLEAN"], "count_min": 1, "count_max": 1, "role": "optional"},
    # Header says "1 element of CUDNN_BACKEND_TENSOR_DESCRIPTOR" -- wrong: it is the reduction
    # descriptor (NVIDIA docs; API log 9.19 field reduceDesc is a REDUCTION desc).
    "CUDNN_ATTR_OPERATION_REDUCTION_DESC": {"accepts": ["CUDNN_BACKEND_REDUCTION_DESCRIPTOR"]},
    # 9.24+/9.27+ reducer attributes: undocumented except their enum briefs (types inferred from them).
    "CUDNN_ATTR_OPERATION_REDUCTION_GROUP_OFFSET_DESC": _tensor(),  # brief: "group offset tensor descriptor"
    "CUDNN_ATTR_OPERATION_REDUCTION_DIMS": {  # brief: "indices of the input dimensions to reduce"
        "types": ["CUDNN_TYPE_INT64"], "count_min": 1, "count_max": 8, "role": "optional"},
    "CUDNN_ATTR_OPERATION_REDUCTION_INIT_VALUES": {  # brief: "one pointer per output" (host values)
        "types": ["CUDNN_TYPE_VOID_PTR"], "count_min": 1, "count_max": None, "role": "optional", "host_data": True},
    "CUDNN_ATTR_OPERATION_REDUCTION_SUBGRAPH": {  # brief: "Operation graph ... must be finalized"
        "types": [_DESC], "count_min": 1, "count_max": 1, "role": "optional", "accepts": [_G]},
    "CUDNN_ATTR_OPERATION_REDUCTION_SUBGRAPH_ACCUMULATOR_UIDS": {  # brief: "tensor UIDs, one per output"
        "types": ["CUDNN_TYPE_INT64"], "count_min": 1, "count_max": None, "role": "optional"},
    "CUDNN_ATTR_OPERATION_REDUCTION_SUBGRAPH_CURRENT_UIDS": {
        "types": ["CUDNN_TYPE_INT64"], "count_min": 1, "count_max": None, "role": "optional"},
    "CUDNN_ATTR_OPERATION_REDUCTION_SUBGRAPH_OUTPUT_UIDS": {
        "types": ["CUDNN_TYPE_INT64"], "count_min": 1, "count_max": None, "role": "optional"},
    "CUDNN_ATTR_OPERATION_REDUCTION_SUBGRAPH_COMPUTE_TYPES": {  # brief: "compute type ..., one per output"
        "types": ["CUDNN_TYPE_DATA_TYPE"], "count_min": 1, "count_max": None, "role": "optional"},

    # ---- RESHAPE / TRANSPOSE / SLICE --------------------------------------------------------
    # Undocumented (9.22+); frontend: CUDNN_TYPE_RESHAPE_MODE.
    "CUDNN_ATTR_OPERATION_RESHAPE_MODE": {
        "types": ["CUDNN_TYPE_RESHAPE_MODE"], "count_min": 1, "count_max": 1, "role": "optional"},
    # No doc block for TRANSPOSE (9.22+); frontend sets X/Y tensors and an INT64 permutation.
    "CUDNN_ATTR_OPERATION_TRANSPOSE_XDESC": _tensor("required"),
    "CUDNN_ATTR_OPERATION_TRANSPOSE_YDESC": _tensor("required"),
    "CUDNN_ATTR_OPERATION_TRANSPOSE_PERMUTATION": {
        "types": ["CUDNN_TYPE_INT64"], "count_min": 1, "count_max": 8, "role": "required"},
    # No doc block for SLICE (9.22+); frontend sets X/Y tensors and INT64 index arrays.
    "CUDNN_ATTR_OPERATION_SLICE_XDESC": _tensor("required"),
    "CUDNN_ATTR_OPERATION_SLICE_YDESC": _tensor("required"),
    "CUDNN_ATTR_OPERATION_SLICE_START_INDICES": {
        "types": ["CUDNN_TYPE_INT64"], "count_min": 1, "count_max": 8, "role": "required"},
    "CUDNN_ATTR_OPERATION_SLICE_LIMIT_INDICES": {
        "types": ["CUDNN_TYPE_INT64"], "count_min": 1, "count_max": 8, "role": "required"},
    "CUDNN_ATTR_OPERATION_SLICE_STRIDES": {  # frontend fills 1 for unset entries; treated as optional
        "types": ["CUDNN_TYPE_INT64"], "count_min": 1, "count_max": 8, "role": "optional"},

    # ---- ROPE (no doc blocks, 9.24+/9.25+); frontend rope.h / rope_backward.h --------------
    "CUDNN_ATTR_OPERATION_ROPE_FWD_XDESC": _tensor("required"),
    "CUDNN_ATTR_OPERATION_ROPE_FWD_YDESC": _tensor("required"),
    "CUDNN_ATTR_OPERATION_ROPE_FWD_FREQSDESC": _tensor("required"),
    "CUDNN_ATTR_OPERATION_ROPE_FWD_OUTPUT_SCALE": {  # enum brief: "host-side fp32 scalar (default 1.0)"
        "types": ["CUDNN_TYPE_FLOAT"], "count_min": 1, "count_max": 1, "role": "optional", "default": "1.0"},
    "CUDNN_ATTR_OPERATION_ROPE_FWD_ROPE_DIM": {  # enum brief: "int64, default = head_dim"
        "types": ["CUDNN_TYPE_INT64"], "count_min": 1, "count_max": 1, "role": "optional",
        "default": "head_dim"},
    "CUDNN_ATTR_OPERATION_ROPE_BWD_DYDESC": _tensor("required"),
    "CUDNN_ATTR_OPERATION_ROPE_BWD_DXDESC": _tensor("required"),
    "CUDNN_ATTR_OPERATION_ROPE_BWD_FREQSDESC": _tensor("required"),
    "CUDNN_ATTR_OPERATION_ROPE_BWD_OUTPUT_SCALE": {  # enum brief: "host fp32 scalar (default 1.0)"
        "types": ["CUDNN_TYPE_FLOAT"], "count_min": 1, "count_max": 1, "role": "optional", "default": "1.0"},
    "CUDNN_ATTR_OPERATION_ROPE_BWD_ROPE_DIM": {  # enum brief: "int64, default = head_dim"
        "types": ["CUDNN_TYPE_INT64"], "count_min": 1, "count_max": 1, "role": "optional",
        "default": "head_dim"},

    # ---- RNG ------------------------------------------------------------------------------------
    # Header documents only 3 of the 6 RNG attributes; probe 9.19: DOUBLE only; default -1 is the
    # initial value the 9.19 API log shows (as for the documented NORMAL_DIST_* attributes).
    "CUDNN_ATTR_RNG_UNIFORM_DIST_MAXIMUM": {
        "types": ["CUDNN_TYPE_DOUBLE"], "count_min": 1, "count_max": 1, "role": "optional", "default": "-1"},
    "CUDNN_ATTR_RNG_UNIFORM_DIST_MINIMUM": {
        "types": ["CUDNN_TYPE_DOUBLE"], "count_min": 1, "count_max": 1, "role": "optional", "default": "-1"},
    "CUDNN_ATTR_RNG_BERNOULLI_DIST_PROBABILITY": {
        "types": ["CUDNN_TYPE_DOUBLE"], "count_min": 1, "count_max": 1, "role": "optional", "default": "-1"},

    # ---- KERNEL_CACHE / DEVICEPROP ------------------------------------------------------------
    # Header: "CUDNN_TYPE_BACKEND_DESCRIPTOR; one element" without a descriptor type; the engine
    # config is passed in arrayOfElements of a Get (header prose).
    # Like IS_SAME_TOPOLOGY, a query (the generic get crashes cuDNN 9.19 with a segfault).
    "CUDNN_ATTR_KERNEL_CACHE_IS_ENGINECFG_KERNEL_CACHED": {
        "accepts": ["CUDNN_BACKEND_ENGINECFG_DESCRIPTOR"],
        "get_unsupported": "a query taking an engine config (the generic get crashes cuDNN 9.19)"},
    # Header says "CUDNN_TYPE_CHAR; one element" -- a JSON string has many characters.
    "CUDNN_ATTR_DEVICEPROP_JSON_REPRESENTATION": {"count_min": 1, "count_max": None},

    # ---- EXPAND / CONTRACT BAND MATRIX (header blocks give no scalar types) --------------------
    # probe 9.19: bandwidths/axis/max-token accept only INT64, pad values only FLOAT
    # (API log: int64_t and float fields).
    "CUDNN_ATTR_OPERATION_EXPAND_BAND_MATRIX_LOWER_BANDWIDTH": {
        "types": ["CUDNN_TYPE_INT64"], "count_min": 1, "count_max": 1},
    "CUDNN_ATTR_OPERATION_EXPAND_BAND_MATRIX_UPPER_BANDWIDTH": {
        "types": ["CUDNN_TYPE_INT64"], "count_min": 1, "count_max": 1},
    "CUDNN_ATTR_OPERATION_EXPAND_BAND_MATRIX_AXIS": {
        "types": ["CUDNN_TYPE_INT64"], "count_min": 1, "count_max": 1},
    "CUDNN_ATTR_OPERATION_EXPAND_BAND_MATRIX_PAD_VALUE": {
        "types": ["CUDNN_TYPE_FLOAT"], "count_min": 1, "count_max": 1},
    "CUDNN_ATTR_OPERATION_CONTRACT_BAND_MATRIX_LOWER_BANDWIDTH": {
        "types": ["CUDNN_TYPE_INT64"], "count_min": 1, "count_max": 1},
    "CUDNN_ATTR_OPERATION_CONTRACT_BAND_MATRIX_UPPER_BANDWIDTH": {
        "types": ["CUDNN_TYPE_INT64"], "count_min": 1, "count_max": 1},
    "CUDNN_ATTR_OPERATION_CONTRACT_BAND_MATRIX_AXIS": {
        "types": ["CUDNN_TYPE_INT64"], "count_min": 1, "count_max": 1},
    "CUDNN_ATTR_OPERATION_CONTRACT_BAND_MATRIX_PAD_VALUE": {
        "types": ["CUDNN_TYPE_FLOAT"], "count_min": 1, "count_max": 1},
    "CUDNN_ATTR_OPERATION_CONTRACT_BAND_MAX_TOKEN_VALUE": {
        "types": ["CUDNN_TYPE_INT64"], "count_min": 1, "count_max": 1},

    # ---- BLOCK_SCALE_DEQUANTIZE / MOE ------------------------------------------------------------
    # Header: "one element"; probe 9.19 accepts 1 or 2 INT32s (API log: block_size is a 2-vector).
    "CUDNN_ATTR_OPERATION_BLOCK_SCALE_DEQUANTIZE_BLOCK_SIZE": {"count_min": 1, "count_max": 2},
    # Header gives no type; probe 9.19 accepts only BOOLEAN.
    "CUDNN_ATTR_OPERATION_BLOCK_SCALE_DEQUANTIZE_NEG_SCALE": {
        "types": ["CUDNN_TYPE_BOOLEAN"], "count_min": 1, "count_max": 1},
    # Header gives no type; probe 9.19 accepts only INT32.
    "CUDNN_ATTR_OPERATION_MOE_GROUPED_MATMUL_TOP_K": {
        "types": ["CUDNN_TYPE_INT32"], "count_min": 1, "count_max": 1},
    # No doc block for MoE backward (9.22+); frontend moe_grouped_matmul_bwd.h sets all five.
    "CUDNN_ATTR_OPERATION_MOE_GROUPED_MATMUL_BWD_MATH_PREC": {
        "types": ["CUDNN_TYPE_DATA_TYPE"], "count_min": 1, "count_max": 1, "role": "required"},
    "CUDNN_ATTR_OPERATION_MOE_GROUPED_MATMUL_BWD_TOKEN_DESC": _tensor("required"),
    "CUDNN_ATTR_OPERATION_MOE_GROUPED_MATMUL_BWD_DWEIGHT_DESC": _tensor("required"),
    "CUDNN_ATTR_OPERATION_MOE_GROUPED_MATMUL_BWD_FIRST_TOKEN_OFFSET_DESC": _tensor("required"),
    "CUDNN_ATTR_OPERATION_MOE_GROUPED_MATMUL_BWD_DOUTPUT_DESC": _tensor("required"),

    # ---- SDPA forward: attributes missing from the header's SDPA_FWD block (9.21+) -------------
    # Subgraph = a finalized operation graph of score modifiers (third-party raw-API users link one).
    "CUDNN_ATTR_OPERATION_SDPA_FWD_SUBGRAPH": {
        "types": [_DESC], "count_min": 1, "count_max": 1, "role": "optional", "accepts": [_G]},
    "CUDNN_ATTR_OPERATION_SDPA_FWD_SUBGRAPH_INPUT_UID": {  # a tensor UID (INT64)
        "types": ["CUDNN_TYPE_INT64"], "count_min": 1, "count_max": 1, "role": "optional"},
    "CUDNN_ATTR_OPERATION_SDPA_FWD_SUBGRAPH_OUTPUT_UID": {
        "types": ["CUDNN_TYPE_INT64"], "count_min": 1, "count_max": 1, "role": "optional"},
    # The header's STATSDESC prose: "describe the softmax via ..._SOFTMAX_DESC with
    # CUDNN_ATTR_OPERATION_SOFTMAX_STATS_LOG2 set" -> an OPERATION_SOFTMAX descriptor.
    "CUDNN_ATTR_OPERATION_SDPA_FWD_SOFTMAX_DESC": {
        "types": [_DESC], "count_min": 1, "count_max": 1, "role": "optional",
        "accepts": ["CUDNN_BACKEND_OPERATION_SOFTMAX_DESCRIPTOR"]},
    "CUDNN_ATTR_OPERATION_SDPA_FWD_DROPOUT_SEED_DESC": _tensor(),     # brief: "tensor descriptor"
    "CUDNN_ATTR_OPERATION_SDPA_FWD_DROPOUT_OFFSET_DESC": _tensor(),
    "CUDNN_ATTR_OPERATION_SDPA_FWD_DROPOUT_RNG_DUMP_DESC": _tensor(),
    # Same type as the documented SDPA_BWD_DROPOUT_PROBABILITY (CUDNN_TYPE_FLOAT).
    "CUDNN_ATTR_OPERATION_SDPA_FWD_DROPOUT_PROBABILITY": {
        "types": ["CUDNN_TYPE_FLOAT"], "count_min": 1, "count_max": 1, "role": "optional", "default": "0"},
    # brief: "Unfuse FMA in softmax for SM100" -- a flag; BOOLEAN inferred (unverified).
    "CUDNN_ATTR_OPERATION_SDPA_FWD_UNFUSE_FMA": {
        "types": ["CUDNN_TYPE_BOOLEAN"], "count_min": 1, "count_max": 1, "role": "optional"},
    "CUDNN_ATTR_OPERATION_SDPA_FWD_CU_SEQ_LEN_QDESC": _tensor(),      # brief: "... tensor"
    "CUDNN_ATTR_OPERATION_SDPA_FWD_CU_SEQ_LEN_KVDESC": _tensor(),

    # ---- SDPA backward: attributes missing from the header's SDPA_BWD block (9.21+) ------------
    "CUDNN_ATTR_OPERATION_SDPA_BWD_SINK_DESC": _tensor(),             # brief: "sink descriptor" (tensor, as SOFTMAX_SINK_DESC)
    "CUDNN_ATTR_OPERATION_SDPA_BWD_DSINK_DESC": _tensor(),
    # brief: "Max total query/KV sequence length" -- a count; INT64 inferred (unverified).
    "CUDNN_ATTR_OPERATION_SDPA_BWD_MAX_TOTAL_SEQ_LEN_Q": {
        "types": ["CUDNN_TYPE_INT64"], "count_min": 1, "count_max": 1, "role": "optional"},
    "CUDNN_ATTR_OPERATION_SDPA_BWD_MAX_TOTAL_SEQ_LEN_KV": {
        "types": ["CUDNN_TYPE_INT64"], "count_min": 1, "count_max": 1, "role": "optional"},
    "CUDNN_ATTR_OPERATION_SDPA_BWD_SUBGRAPH": {  # as SDPA_FWD_SUBGRAPH
        "types": [_DESC], "count_min": 1, "count_max": 1, "role": "optional", "accepts": [_G]},
    "CUDNN_ATTR_OPERATION_SDPA_BWD_SUBGRAPH_INPUT_UID": {
        "types": ["CUDNN_TYPE_INT64"], "count_min": 1, "count_max": 1, "role": "optional"},
    "CUDNN_ATTR_OPERATION_SDPA_BWD_SUBGRAPH_OUTPUT_UID": {
        "types": ["CUDNN_TYPE_INT64"], "count_min": 1, "count_max": 1, "role": "optional"},

    # ---- DIAGONAL_BAND_MASK -----------------------------------------------------------------------
    # Header gives no type; frontend sets it with CUDNN_TYPE_POINTWISE_MODE (a CMP_* mode).
    "CUDNN_ATTR_OPERATION_DIAGONAL_BAND_MASK_COMPARISON_MODE": {
        "types": ["CUDNN_TYPE_POINTWISE_MODE"], "count_min": 1, "count_max": 1},
    # Header marks both bounds "Required", but frontend treats them as mutually exclusive and
    # both optional (no left bound = right-bound mask; shift is optional).
    "CUDNN_ATTR_OPERATION_DIAGONAL_BAND_MASK_LEFT_BOUND_DESC": {"role": "optional"},
    "CUDNN_ATTR_OPERATION_DIAGONAL_BAND_MASK_SHIFT_RIGHT_BOUND_DESC": {"role": "optional"},
    # Not in the header's block (9.24+); frontend sets them as tensors.
    "CUDNN_ATTR_OPERATION_DIAGONAL_BAND_MASK_CU_SEQ_LEN_KVDESC": _tensor(),
    "CUDNN_ATTR_OPERATION_DIAGONAL_BAND_MASK_CU_SEQ_LEN_QDESC": _tensor(),
}


# ---------------------------------------------------------------------------
# Value bounds the checked core enforces before cuDNN sees a set (integer elements, and the
# numerators of FRACTION elements, must be >= the bound). cuDNN 9.19 divides by several of these
# (zero-sized tensors and windows kill the process with SIGFPE in finalize or heuristics),
# and none has a meaning below its bound (NVIDIA docs: sizes, strides, dilations >= 1; paddings >= 0).
# ---------------------------------------------------------------------------
VALUE_MIN = {
    "CUDNN_ATTR_TENSOR_DIMENSIONS": 1,
    "CUDNN_ATTR_TENSOR_STRIDES": 1,
    "CUDNN_ATTR_TENSOR_BYTE_ALIGNMENT": 1,
    "CUDNN_ATTR_TENSOR_VECTOR_COUNT": 1,
    "CUDNN_ATTR_CONVOLUTION_SPATIAL_DIMS": 1,
    "CUDNN_ATTR_CONVOLUTION_FILTER_STRIDES": 1,
    "CUDNN_ATTR_CONVOLUTION_DILATIONS": 1,
    "CUDNN_ATTR_CONVOLUTION_PRE_PADDINGS": 0,
    "CUDNN_ATTR_CONVOLUTION_POST_PADDINGS": 0,
    "CUDNN_ATTR_RESAMPLE_SPATIAL_DIMS": 1,
    "CUDNN_ATTR_RESAMPLE_WINDOW_DIMS": 1,
    "CUDNN_ATTR_RESAMPLE_STRIDES": 1,
    "CUDNN_ATTR_RESAMPLE_PRE_PADDINGS": 0,
    "CUDNN_ATTR_RESAMPLE_POST_PADDINGS": 0,
    "CUDNN_ATTR_ENGINE_GLOBAL_INDEX": 0,
    "CUDNN_ATTR_ENGINEHEUR_SM_COUNT_TARGET": 1,
    "CUDNN_ATTR_ENGINE_SM_COUNT_TARGET": 1,
    "CUDNN_ATTR_ENGINEHEUR_SHARED_MEMORY_LIMIT": 0,
    "CUDNN_ATTR_ENGINE_SHARED_MEMORY_LIMIT": 0,
    "CUDNN_ATTR_OPERATION_CONCAT_AXIS": 0,
    "CUDNN_ATTR_OPERATION_CONCAT_INPLACE_INDEX": 0,
    "CUDNN_ATTR_OPERATION_TRANSPOSE_PERMUTATION": 0,
    "CUDNN_ATTR_OPERATION_SLICE_START_INDICES": 0,
    "CUDNN_ATTR_OPERATION_SLICE_LIMIT_INDICES": 0,
    "CUDNN_ATTR_OPERATION_SLICE_STRIDES": 1,
    "CUDNN_ATTR_OPERATION_ROPE_FWD_ROPE_DIM": 1,
    "CUDNN_ATTR_OPERATION_ROPE_BWD_ROPE_DIM": 1,
    "CUDNN_ATTR_OPERATION_BLOCK_SCALE_QUANTIZE_BLOCK_SIZE": 1,
    "CUDNN_ATTR_OPERATION_BLOCK_SCALE_DEQUANTIZE_BLOCK_SIZE": 1,
    "CUDNN_ATTR_OPERATION_MATMUL_IRREGULARLY_STRIDED_BATCH_COUNT": 1,
    "CUDNN_ATTR_OPERATION_MOE_GROUPED_MATMUL_TOP_K": 1,
    "CUDNN_ATTR_DEVICEPROP_DEVICE_ID": 0,
    "CUDNN_ATTR_OPERATION_SDPA_BWD_MAX_TOTAL_SEQ_LEN_Q": 1,
    "CUDNN_ATTR_OPERATION_SDPA_BWD_MAX_TOTAL_SEQ_LEN_KV": 1,
}


# Which tensor attributes of each operation are outputs (written by the operation); every other
# tensor attribute of an operation is an input. Source: NVIDIA docs (each attribute's "output"/"input"),
# cudnn-frontend's nodes. Graph checks, tables and variant packs read it from the schema ("io").
TENSOR_OUTPUTS = {
    "CUDNN_BACKEND_OPERATION_CONVOLUTION_FORWARD_DESCRIPTOR": (
        "CUDNN_ATTR_OPERATION_CONVOLUTION_FORWARD_Y",
    ),
    "CUDNN_BACKEND_OPERATION_CONVOLUTION_BACKWARD_DATA_DESCRIPTOR": (
        "CUDNN_ATTR_OPERATION_CONVOLUTION_BWD_DATA_DX",
    ),
    "CUDNN_BACKEND_OPERATION_CONVOLUTION_BACKWARD_FILTER_DESCRIPTOR": (
        "CUDNN_ATTR_OPERATION_CONVOLUTION_BWD_FILTER_DW",
    ),
    "CUDNN_BACKEND_OPERATION_POINTWISE_DESCRIPTOR": (
        "CUDNN_ATTR_OPERATION_POINTWISE_YDESC",
        "CUDNN_ATTR_OPERATION_POINTWISE_DXDESC",
    ),
    "CUDNN_BACKEND_OPERATION_GEN_STATS_DESCRIPTOR": (
        "CUDNN_ATTR_OPERATION_GENSTATS_SUMDESC",
        "CUDNN_ATTR_OPERATION_GENSTATS_SQSUMDESC",
    ),
    "CUDNN_BACKEND_OPERATION_MATMUL_DESCRIPTOR": (
        "CUDNN_ATTR_OPERATION_MATMUL_CDESC",
    ),
    "CUDNN_BACKEND_OPERATION_BN_FINALIZE_STATISTICS_DESCRIPTOR": (
        "CUDNN_ATTR_OPERATION_BN_FINALIZE_UPDATED_RUNNING_MEAN_DESC",
        "CUDNN_ATTR_OPERATION_BN_FINALIZE_UPDATED_RUNNING_VAR_DESC",
        "CUDNN_ATTR_OPERATION_BN_FINALIZE_SAVED_MEAN_DESC",
        "CUDNN_ATTR_OPERATION_BN_FINALIZE_SAVED_INV_STD_DESC",
        "CUDNN_ATTR_OPERATION_BN_FINALIZE_EQ_SCALE_DESC",
        "CUDNN_ATTR_OPERATION_BN_FINALIZE_EQ_BIAS_DESC",
    ),
    "CUDNN_BACKEND_OPERATION_REDUCTION_DESCRIPTOR": (
        "CUDNN_ATTR_OPERATION_REDUCTION_YDESC",
    ),
    "CUDNN_BACKEND_OPERATION_BN_BWD_WEIGHTS_DESCRIPTOR": (
        "CUDNN_ATTR_OPERATION_BN_BWD_WEIGHTS_DBN_SCALE_DESC",
        "CUDNN_ATTR_OPERATION_BN_BWD_WEIGHTS_DBN_BIAS_DESC",
        "CUDNN_ATTR_OPERATION_BN_BWD_WEIGHTS_EQ_DY_SCALE_DESC",
        "CUDNN_ATTR_OPERATION_BN_BWD_WEIGHTS_EQ_X_SCALE_DESC",
        "CUDNN_ATTR_OPERATION_BN_BWD_WEIGHTS_EQ_BIAS",
    ),
    "CUDNN_BACKEND_OPERATION_RESAMPLE_FWD_DESCRIPTOR": (
        "CUDNN_ATTR_OPERATION_RESAMPLE_FWD_YDESC",
        "CUDNN_ATTR_OPERATION_RESAMPLE_FWD_IDXDESC",
    ),
    "CUDNN_BACKEND_OPERATION_RESAMPLE_BWD_DESCRIPTOR": (
        "CUDNN_ATTR_OPERATION_RESAMPLE_BWD_DXDESC",
    ),
    "CUDNN_BACKEND_OPERATION_CONCAT_DESCRIPTOR": (
        "CUDNN_ATTR_OPERATION_CONCAT_OUTPUT_DESC",
    ),
    "CUDNN_BACKEND_OPERATION_SIGNAL_DESCRIPTOR": (
        "CUDNN_ATTR_OPERATION_SIGNAL_YDESC",
    ),
    "CUDNN_BACKEND_OPERATION_NORM_FORWARD_DESCRIPTOR": (
        "CUDNN_ATTR_OPERATION_NORM_FWD_YDESC",
        "CUDNN_ATTR_OPERATION_NORM_FWD_MEAN_DESC",
        "CUDNN_ATTR_OPERATION_NORM_FWD_INV_VARIANCE_DESC",
        "CUDNN_ATTR_OPERATION_NORM_FWD_OUTPUT_RUNNING_MEAN_DESC",
        "CUDNN_ATTR_OPERATION_NORM_FWD_OUTPUT_RUNNING_VAR_DESC",
    ),
    "CUDNN_BACKEND_OPERATION_NORM_BACKWARD_DESCRIPTOR": (
        "CUDNN_ATTR_OPERATION_NORM_BWD_DXDESC",
        "CUDNN_ATTR_OPERATION_NORM_BWD_DSCALE_DESC",
        "CUDNN_ATTR_OPERATION_NORM_BWD_DBIAS_DESC",
    ),
    "CUDNN_BACKEND_OPERATION_RESHAPE_DESCRIPTOR": (
        "CUDNN_ATTR_OPERATION_RESHAPE_YDESC",
    ),
    "CUDNN_BACKEND_OPERATION_RNG_DESCRIPTOR": (
        "CUDNN_ATTR_OPERATION_RNG_YDESC",
    ),
    "CUDNN_BACKEND_OPERATION_PAGED_CACHE_LOAD_DESCRIPTOR": (
        "CUDNN_ATTR_OPERATION_PAGED_CACHE_LOAD_YDESC",
    ),
    "CUDNN_BACKEND_OPERATION_BLOCK_SCALE_QUANTIZE_DESCRIPTOR": (
        "CUDNN_ATTR_OPERATION_BLOCK_SCALE_QUANTIZE_YDESC",
        "CUDNN_ATTR_OPERATION_BLOCK_SCALE_QUANTIZE_SCALE_DESC",
    ),
    "CUDNN_BACKEND_OPERATION_BLOCK_SCALE_DEQUANTIZE_DESCRIPTOR": (
        "CUDNN_ATTR_OPERATION_BLOCK_SCALE_DEQUANTIZE_YDESC",
    ),
    "CUDNN_BACKEND_OPERATION_EXPAND_BAND_MATRIX_DESCRIPTOR": (
        "CUDNN_ATTR_OPERATION_EXPAND_BAND_MATRIX_YDESC",
    ),
    "CUDNN_BACKEND_OPERATION_CONTRACT_BAND_MATRIX_DESCRIPTOR": (
        "CUDNN_ATTR_OPERATION_CONTRACT_BAND_MATRIX_YDESC",
    ),
    "CUDNN_BACKEND_OPERATION_SDPA_FWD_DESCRIPTOR": (
        "CUDNN_ATTR_OPERATION_SDPA_FWD_ODESC",
        "CUDNN_ATTR_OPERATION_SDPA_FWD_STATSDESC",
        "CUDNN_ATTR_OPERATION_SDPA_FWD_DROPOUT_RNG_DUMP_DESC",
        "CUDNN_ATTR_OPERATION_SDPA_FWD_AMAX_SDESC",
        "CUDNN_ATTR_OPERATION_SDPA_FWD_AMAX_ODESC",
    ),
    "CUDNN_BACKEND_OPERATION_MOE_GROUPED_MATMUL_DESCRIPTOR": (
        "CUDNN_ATTR_OPERATION_MOE_GROUPED_MATMUL_OUTPUT_DESC",
    ),
    "CUDNN_BACKEND_OPERATION_SDPA_BWD_DESCRIPTOR": (
        "CUDNN_ATTR_OPERATION_SDPA_BWD_DQDESC",
        "CUDNN_ATTR_OPERATION_SDPA_BWD_DKDESC",
        "CUDNN_ATTR_OPERATION_SDPA_BWD_DVDESC",
        "CUDNN_ATTR_OPERATION_SDPA_BWD_DSINK_DESC",
        "CUDNN_ATTR_OPERATION_SDPA_BWD_DBIAS_DESC",
    ),
    "CUDNN_BACKEND_OPERATION_DIAGONAL_BAND_MASK_DESCRIPTOR": (
        "CUDNN_ATTR_OPERATION_DIAGONAL_BAND_MASK_YDESC",
    ),
    "CUDNN_BACKEND_OPERATION_SOFTMAX_DESCRIPTOR": (
        "CUDNN_ATTR_OPERATION_SOFTMAX_YDESC",
        "CUDNN_ATTR_OPERATION_SOFTMAX_STATS_DESC",
        "CUDNN_ATTR_OPERATION_SOFTMAX_MAX_DESC",
        "CUDNN_ATTR_OPERATION_SOFTMAX_SUM_EXP_DESC",
    ),
    "CUDNN_BACKEND_OPERATION_TRANSPOSE_DESCRIPTOR": (
        "CUDNN_ATTR_OPERATION_TRANSPOSE_YDESC",
    ),
    "CUDNN_BACKEND_OPERATION_SLICE_DESCRIPTOR": (
        "CUDNN_ATTR_OPERATION_SLICE_YDESC",
    ),
    "CUDNN_BACKEND_OPERATION_MOE_GROUPED_MATMUL_BWD_DESCRIPTOR": (
        "CUDNN_ATTR_OPERATION_MOE_GROUPED_MATMUL_BWD_DWEIGHT_DESC",
    ),
    "CUDNN_BACKEND_OPERATION_ROPE_FWD_DESCRIPTOR": (
        "CUDNN_ATTR_OPERATION_ROPE_FWD_YDESC",
    ),
    "CUDNN_BACKEND_OPERATION_ROPE_BWD_DESCRIPTOR": (
        "CUDNN_ATTR_OPERATION_ROPE_BWD_DXDESC",
    ),
}
