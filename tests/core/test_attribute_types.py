"""Round trips of ``Descriptor.set``/``get`` for every ``cudnnBackendAttributeType_t``.

One case per attribute type (``test_round_trip``, parametrized over all 34 members of
``AttributeType``): it picks a real attribute of that type from the schema, builds a descriptor
that cuDNN finalizes with the attribute set to a non-default value (cuDNN refuses most ``get``s
before finalize), finalizes, reads it back and compares type and value. Types that only cuDNN
writes are checked get-only; types newer than the loaded cuDNN must raise ``CudnnVersionError``.

What cuDNN 9.19 (the release these expectations were worked out against, on CPU with the H200
device profile) does not allow is asserted as such, and re-tried as a real round trip on newer
releases:

* it implements no ``get`` at all on the POINTWISE descriptor and the OPERATION_POINTWISE,
  GEN_STATS, BN_FINALIZE_STATISTICS and NORM_FORWARD/BACKWARD operations (NOT_SUPPORTED), the only
  homes of POINTWISE_MODE, GENSTATS_MODE, BN_FINALIZE_STATS_MODE, NORM_MODE and NORM_FWD_PHASE;
* it reads CONVOLUTION_CONV_MODE only as CUDNN_TYPE_DATA_TYPE and TENSOR_REORDERING_MODE only as
  CUDNN_TYPE_INT64 (each writes a 4-byte enum), so the schema-checked ``get`` cannot read them
  (strict xfails: the package could map the type for ``get``);
* it cannot create INTERMEDIATE_INFO descriptors, so no CUDNN_TYPE_ATTRIB_NAME value is reachable;
* no engine of the notebook conv graph reports layout info (LAYOUT_TYPE is checked on what there is).

Each case's first ``attr(...)`` names the attribute it uses for its type.

Keep it fast: everything here is host-side descriptor work (well under a second in all).
"""
import enum
import fractions
import functools
import struct

import numpy as np
import pytest

import cudnn_backend as cb
from cudnn_backend import *  # noqa: F403 - the C names
from cudnn_backend import schema
from cudnn_backend._bindings import enums

from tests.helpers import generic_graphs as gg
from tests.helpers.crash import run_python
from tests.helpers.env import loaded_has

B = CUDNN_TYPE_BACKEND_DESCRIPTOR
LOADED = cb.get_version()
VERIFIED = 91900  # the cuDNN release whose refusals are asserted below (newer ones re-try the round trip)
INTERMEDIATE_INFO_REFUSED_UP_TO = 92801  # the newest release measured to refuse INTERMEDIATE_INFO (see _attrib_name)


def _version(text):
    major, minor, patch = (int(x) for x in text.split("."))
    return major * 10000 + minor * 100 + patch


def _f32(x):
    """x rounded to float32, as cuDNN stores a CUDNN_TYPE_FLOAT."""
    return struct.unpack("f", struct.pack("f", x))[0]


def attr(name, atype):
    """``name``, after checking that the schema lists ``atype`` among its attribute types."""
    spec = schema.attribute(name)
    assert atype in spec.types, f"schema: {spec.name.name} takes {[t.name for t in spec.types]}, not {atype.name}"
    return spec.name


def check_get(d, name, atype, expected, **kw):
    """get == expected, element by element of the same Python type (IntEnum class, int, float, ...)."""
    got = d.get(name, atype, **kw)
    assert got == expected
    if isinstance(expected, list):
        assert isinstance(got, list)
        for g, e in zip(got, expected):
            assert type(g) is type(e), (g, e)
    else:
        assert type(got) is type(expected)
    return got


def check_unreadable(d, name, atype, expected, exc=cb.CudnnNotSupportedError, **kw):
    """cuDNN <= VERIFIED implements no get here: assert its refusal; a newer one gets the real round trip."""
    if LOADED <= VERIFIED:
        with pytest.raises(exc) as info:
            d.get(name, atype, **kw)
        assert info.value.function == "cudnnBackendGetAttribute" and info.value.attribute == name
        return
    try:
        check_get(d, name, atype, expected, **kw)
    except exc:
        pytest.xfail(f"cuDNN {LOADED} still refuses to get {schema.attribute(name).name.name}")


def tensor(uid, dims, dtype=CUDNN_DATA_FLOAT, **flags):
    """A finalized packed tensor; ``flags`` are boolean attributes (is_virtual=True, is_by_value=True)."""
    strides = [1] * len(dims)
    for i in range(len(dims) - 2, -1, -1):
        strides[i] = strides[i + 1] * dims[i + 1]
    t = cb.Descriptor(CUDNN_BACKEND_TENSOR_DESCRIPTOR)
    t.set(CUDNN_ATTR_TENSOR_DATA_TYPE, CUDNN_TYPE_DATA_TYPE, dtype)
    t.set(CUDNN_ATTR_TENSOR_DIMENSIONS, CUDNN_TYPE_INT64, list(dims))
    t.set(CUDNN_ATTR_TENSOR_STRIDES, CUDNN_TYPE_INT64, strides)
    t.set(CUDNN_ATTR_TENSOR_UNIQUE_ID, CUDNN_TYPE_INT64, uid)
    t.set(CUDNN_ATTR_TENSOR_BYTE_ALIGNMENT, CUDNN_TYPE_INT64, 16)
    for name, value in flags.items():
        t.set(getattr(cb, "CUDNN_ATTR_TENSOR_" + name.upper()), CUDNN_TYPE_BOOLEAN, value)
    return t.finalize()


class Context:
    """Shared, lazily built inputs: the device profile and the notebook conv graph with its heuristics."""

    def __init__(self, profile_json):
        self.profile_json = profile_json

    @functools.cached_property
    def dp(self):
        return gg.device_prop(self.profile_json)

    @functools.cached_property
    def graph(self):
        return gg.notebook_conv_graph()

    @functools.cached_property
    def configs(self):
        """Engine configs of the notebook graph (heuristics A) against the H200 profile."""
        return gg.heuristics(self.graph, CUDNN_HEUR_MODE_A, self.dp)

    @functools.cached_property
    def engines(self):
        """Engines of heuristics A and FALLBACK (the fallback ones carry behavior notes)."""
        configs = list(self.configs) + list(gg.heuristics(self.graph, CUDNN_HEUR_MODE_FALLBACK, self.dp))
        engines = []
        for cfg in configs:
            [engine] = cfg.get(CUDNN_ATTR_ENGINECFG_ENGINE, B)
            engines.append(engine)
        return engines


@pytest.fixture(scope="module")
def ctx(h200_profile_json):
    return Context(h200_profile_json)


CASES = {}


def case(atype):
    def register(f):
        assert atype not in CASES
        CASES[atype] = f
        return f

    return register


# ------------------------------------------------------------------------------------------------
# the cases, in AttributeType order
# ------------------------------------------------------------------------------------------------
@case(CUDNN_TYPE_HANDLE)
def _handle(ctx):
    # Set needs a GPU (cudnnCreate): see tests/gpu/core/test_handle_gpu.py. On CPU: only Handle objects
    # are taken, and the get path turns a handle into an int (a plan built offline holds none).
    name = attr(CUDNN_ATTR_DEVICEPROP_HANDLE, CUDNN_TYPE_HANDLE)
    d = cb.Descriptor(CUDNN_BACKEND_DEVICEPROP_DESCRIPTOR)
    for raw in (0x1234, 0, None, ctx.dp, np.int64(7)):
        with pytest.raises(TypeError, match="takes a cudnn_backend.Handle"):
            d.set(name, CUDNN_TYPE_HANDLE, raw)
    assert name not in d.set_attributes
    plan = _plan(ctx)
    check_get(plan, attr(CUDNN_ATTR_EXECUTION_PLAN_HANDLE, CUDNN_TYPE_HANDLE), CUDNN_TYPE_HANDLE, [0])


@case(CUDNN_TYPE_DATA_TYPE)
def _data_type(ctx):
    t = tensor(5, [2, 3, 4, 5], CUDNN_DATA_BFLOAT16)  # the generic builders use HALF/FLOAT
    check_get(t, attr(CUDNN_ATTR_TENSOR_DATA_TYPE, CUDNN_TYPE_DATA_TYPE), CUDNN_TYPE_DATA_TYPE,
              [CUDNN_DATA_BFLOAT16])
    conv = cb.Descriptor(CUDNN_BACKEND_CONVOLUTION_DESCRIPTOR)  # by C name
    conv.set(CUDNN_ATTR_CONVOLUTION_COMP_TYPE, "CUDNN_TYPE_DATA_TYPE", "CUDNN_DATA_HALF")
    conv.set(CUDNN_ATTR_CONVOLUTION_CONV_MODE, CUDNN_TYPE_CONVOLUTION_MODE, CUDNN_CROSS_CORRELATION)
    conv.set(CUDNN_ATTR_CONVOLUTION_SPATIAL_DIMS, CUDNN_TYPE_INT64, 2)
    for a in (CUDNN_ATTR_CONVOLUTION_PRE_PADDINGS, CUDNN_ATTR_CONVOLUTION_POST_PADDINGS,
              CUDNN_ATTR_CONVOLUTION_FILTER_STRIDES, CUDNN_ATTR_CONVOLUTION_DILATIONS):
        conv.set(a, CUDNN_TYPE_INT64, [1, 1])
    conv.finalize()
    check_get(conv, "CUDNN_ATTR_CONVOLUTION_COMP_TYPE", CUDNN_TYPE_DATA_TYPE, [CUDNN_DATA_HALF])


@case(CUDNN_TYPE_BOOLEAN)
def _boolean(ctx):
    t = tensor(6, [2, 3, 4, 5], is_virtual=True)  # default false
    check_get(t, attr(CUDNN_ATTR_TENSOR_IS_VIRTUAL, CUDNN_TYPE_BOOLEAN), CUDNN_TYPE_BOOLEAN, [True])
    check_get(t, CUDNN_ATTR_TENSOR_IS_BY_VALUE, CUDNN_TYPE_BOOLEAN, [False])
    if not loaded_has("9.11.0"):  # REDUCTION_IS_DETERMINISTIC came with cuDNN 9.11
        with pytest.raises(cb.CudnnVersionError, match=r"REDUCTION_IS_DETERMINISTIC.*needs cuDNN >= 9\.11"):
            _reduction(is_deterministic=True)
        return
    red = _reduction(is_deterministic=True)
    check_get(red, attr(CUDNN_ATTR_REDUCTION_IS_DETERMINISTIC, CUDNN_TYPE_BOOLEAN), CUDNN_TYPE_BOOLEAN, [True])


@case(CUDNN_TYPE_INT64)
def _int64(ctx):
    uid = (1 << 40) + 7  # needs all 64 bits
    t = cb.Descriptor(CUDNN_BACKEND_TENSOR_DESCRIPTOR)
    t.set(CUDNN_ATTR_TENSOR_DATA_TYPE, CUDNN_TYPE_DATA_TYPE, CUDNN_DATA_FLOAT)
    t.set(attr(CUDNN_ATTR_TENSOR_DIMENSIONS, CUDNN_TYPE_INT64), CUDNN_TYPE_INT64, [2, 3, 4, 5])
    t.set(CUDNN_ATTR_TENSOR_STRIDES, CUDNN_TYPE_INT64, (60, 1, 15, 3))
    t.set(attr(CUDNN_ATTR_TENSOR_UNIQUE_ID, CUDNN_TYPE_INT64), CUDNN_TYPE_INT64, uid)
    t.set(CUDNN_ATTR_TENSOR_BYTE_ALIGNMENT, CUDNN_TYPE_INT64, 16)
    t.finalize()
    check_get(t, CUDNN_ATTR_TENSOR_DIMENSIONS, CUDNN_TYPE_INT64, [2, 3, 4, 5])
    check_get(t, CUDNN_ATTR_TENSOR_STRIDES, CUDNN_TYPE_INT64, [60, 1, 15, 3])
    check_get(t, CUDNN_ATTR_TENSOR_UNIQUE_ID, CUDNN_TYPE_INT64, [uid])
    assert t.element_count(CUDNN_ATTR_TENSOR_DIMENSIONS, CUDNN_TYPE_INT64) == 4
    assert t.element_count(CUDNN_ATTR_TENSOR_UNIQUE_ID, CUDNN_TYPE_INT64) == 1


@case(CUDNN_TYPE_FLOAT)
def _float(ctx):
    op = _conv_forward_op(alpha=0.5, beta=0.1, scale_type=CUDNN_TYPE_FLOAT)
    alpha = attr(CUDNN_ATTR_OPERATION_CONVOLUTION_FORWARD_ALPHA, CUDNN_TYPE_FLOAT)
    check_get(op, alpha, CUDNN_TYPE_FLOAT, [0.5])
    [beta] = check_get(op, CUDNN_ATTR_OPERATION_CONVOLUTION_FORWARD_BETA, CUDNN_TYPE_FLOAT, [_f32(0.1)])
    assert beta != 0.1  # float32, not double
    # cuDNN keeps the type it was given: a float alpha does not read back as double
    with pytest.raises(cb.CudnnBadParamError):
        op.get(alpha, CUDNN_TYPE_DOUBLE)


@case(CUDNN_TYPE_DOUBLE)
def _double(ctx):
    rng = _rng()
    check_get(rng, attr(CUDNN_ATTR_RNG_NORMAL_DIST_MEAN, CUDNN_TYPE_DOUBLE), CUDNN_TYPE_DOUBLE, [0.1])  # exact
    check_get(rng, CUDNN_ATTR_RNG_NORMAL_DIST_STANDARD_DEVIATION, CUDNN_TYPE_DOUBLE, [2.5])
    op = _conv_forward_op(alpha=0.1, beta=0.25, scale_type=CUDNN_TYPE_DOUBLE)
    check_get(op, attr(CUDNN_ATTR_OPERATION_CONVOLUTION_FORWARD_ALPHA, CUDNN_TYPE_DOUBLE), CUDNN_TYPE_DOUBLE, [0.1])


@case(CUDNN_TYPE_VOID_PTR)
def _void_ptr(ctx):
    # A variant pack finalizes on CPU with made-up device addresses (cuDNN does not dereference them
    # before execute). cuDNN 9.19 reads back only the workspace: UNIQUE_IDS and DATA_POINTERS are
    # write-only there (NOT_SUPPORTED).
    pointers = [0x7F0000001000, 0x7F0000002000, 0x7F0000003000]
    workspace = 0x7F00DEADB000
    vp = cb.Descriptor(CUDNN_BACKEND_VARIANT_PACK_DESCRIPTOR)
    vp.set(CUDNN_ATTR_VARIANT_PACK_UNIQUE_IDS, CUDNN_TYPE_INT64, [1, 2, 3])
    vp.set(attr(CUDNN_ATTR_VARIANT_PACK_DATA_POINTERS, CUDNN_TYPE_VOID_PTR), CUDNN_TYPE_VOID_PTR, pointers)
    vp.set(attr(CUDNN_ATTR_VARIANT_PACK_WORKSPACE, CUDNN_TYPE_VOID_PTR), CUDNN_TYPE_VOID_PTR, workspace)
    vp.finalize()
    check_get(vp, CUDNN_ATTR_VARIANT_PACK_WORKSPACE, CUDNN_TYPE_VOID_PTR, [workspace])
    assert vp.element_count(CUDNN_ATTR_VARIANT_PACK_WORKSPACE, CUDNN_TYPE_VOID_PTR) == 1
    check_unreadable(vp, CUDNN_ATTR_VARIANT_PACK_DATA_POINTERS, CUDNN_TYPE_VOID_PTR, pointers)
    check_unreadable(vp, CUDNN_ATTR_VARIANT_PACK_UNIQUE_IDS, CUDNN_TYPE_INT64, [1, 2, 3])
    # None is the null pointer
    vp0 = cb.Descriptor(CUDNN_BACKEND_VARIANT_PACK_DESCRIPTOR)
    vp0.set(CUDNN_ATTR_VARIANT_PACK_UNIQUE_IDS, CUDNN_TYPE_INT64, [1])
    vp0.set(CUDNN_ATTR_VARIANT_PACK_DATA_POINTERS, CUDNN_TYPE_VOID_PTR, [pointers[0]])
    vp0.set(CUDNN_ATTR_VARIANT_PACK_WORKSPACE, CUDNN_TYPE_VOID_PTR, None)
    vp0.finalize()
    check_get(vp0, CUDNN_ATTR_VARIANT_PACK_WORKSPACE, CUDNN_TYPE_VOID_PTR, [0])


@case(CUDNN_TYPE_CONVOLUTION_MODE)
def _convolution_mode(ctx):
    # cuDNN 9.19 takes CONVOLUTION_MODE on set but reads it only as DATA_TYPE (the schema's get_type)
    conv = gg.convolution()  # CROSS_CORRELATION
    conv2 = cb.Descriptor(CUDNN_BACKEND_CONVOLUTION_DESCRIPTOR)
    conv2.set(CUDNN_ATTR_CONVOLUTION_COMP_TYPE, CUDNN_TYPE_DATA_TYPE, CUDNN_DATA_FLOAT)
    conv2.set(attr(CUDNN_ATTR_CONVOLUTION_CONV_MODE, CUDNN_TYPE_CONVOLUTION_MODE), CUDNN_TYPE_CONVOLUTION_MODE,
              CUDNN_CONVOLUTION)
    conv2.set(CUDNN_ATTR_CONVOLUTION_SPATIAL_DIMS, CUDNN_TYPE_INT64, 2)
    for a in (CUDNN_ATTR_CONVOLUTION_PRE_PADDINGS, CUDNN_ATTR_CONVOLUTION_POST_PADDINGS,
              CUDNN_ATTR_CONVOLUTION_FILTER_STRIDES, CUDNN_ATTR_CONVOLUTION_DILATIONS):
        conv2.set(a, CUDNN_TYPE_INT64, [1, 1])
    conv2.finalize()
    check_get(conv2, CUDNN_ATTR_CONVOLUTION_CONV_MODE, CUDNN_TYPE_CONVOLUTION_MODE, [CUDNN_CONVOLUTION])
    check_get(conv, CUDNN_ATTR_CONVOLUTION_CONV_MODE, CUDNN_TYPE_CONVOLUTION_MODE, [CUDNN_CROSS_CORRELATION])


@case(CUDNN_TYPE_HEUR_MODE)
def _heur_mode(ctx):
    heur = cb.Descriptor(CUDNN_BACKEND_ENGINEHEUR_DESCRIPTOR)
    heur.set(CUDNN_ATTR_ENGINEHEUR_OPERATION_GRAPH, B, ctx.graph)
    heur.set(attr(CUDNN_ATTR_ENGINEHEUR_MODE, CUDNN_TYPE_HEUR_MODE), CUDNN_TYPE_HEUR_MODE, CUDNN_HEUR_MODE_B)
    heur.set(CUDNN_ATTR_ENGINEHEUR_DEVICEPROP, B, ctx.dp)
    heur.finalize()
    check_get(heur, CUDNN_ATTR_ENGINEHEUR_MODE, CUDNN_TYPE_HEUR_MODE, [CUDNN_HEUR_MODE_B])


@case(CUDNN_TYPE_KNOB_TYPE)
def _knob_type(ctx):
    kc = cb.Descriptor(CUDNN_BACKEND_KNOB_CHOICE_DESCRIPTOR)
    kc.set(attr(CUDNN_ATTR_KNOB_CHOICE_KNOB_TYPE, CUDNN_TYPE_KNOB_TYPE), CUDNN_TYPE_KNOB_TYPE, CUDNN_KNOB_TYPE_STAGES)
    kc.set(CUDNN_ATTR_KNOB_CHOICE_KNOB_VALUE, CUDNN_TYPE_INT64, 3)
    kc.finalize()
    check_get(kc, CUDNN_ATTR_KNOB_CHOICE_KNOB_TYPE, CUDNN_TYPE_KNOB_TYPE, [CUDNN_KNOB_TYPE_STAGES])
    check_get(kc, CUDNN_ATTR_KNOB_CHOICE_KNOB_VALUE, CUDNN_TYPE_INT64, [3])
    # get-only: the knobs the engines of the notebook graph report
    seen = []
    for engine in ctx.engines:
        for info in engine.get(CUDNN_ATTR_ENGINE_KNOB_INFO, B):
            assert info.descriptor_type is CUDNN_BACKEND_KNOB_INFO_DESCRIPTOR and info.finalized
            [kind] = info.get(attr(CUDNN_ATTR_KNOB_INFO_TYPE, CUDNN_TYPE_KNOB_TYPE), CUDNN_TYPE_KNOB_TYPE)
            assert type(kind) is KnobType
            [lo] = info.get(CUDNN_ATTR_KNOB_INFO_MINIMUM_VALUE, CUDNN_TYPE_INT64)
            [hi] = info.get(CUDNN_ATTR_KNOB_INFO_MAXIMUM_VALUE, CUDNN_TYPE_INT64)
            [stride] = info.get(CUDNN_ATTR_KNOB_INFO_STRIDE, CUDNN_TYPE_INT64)
            assert lo <= hi and stride >= 1
            seen.append(kind)
    assert seen
    with pytest.raises(ValueError, match="get-only"):
        cb.Descriptor(CUDNN_BACKEND_KNOB_INFO_DESCRIPTOR).set(CUDNN_ATTR_KNOB_INFO_TYPE, CUDNN_TYPE_KNOB_TYPE, seen[0])


@case(CUDNN_TYPE_NAN_PROPOGATION)
def _nan_propagation(ctx):
    rs = _resample()
    check_get(rs, attr(CUDNN_ATTR_RESAMPLE_NAN_PROPAGATION, CUDNN_TYPE_NAN_PROPOGATION), CUDNN_TYPE_NAN_PROPOGATION,
              [CUDNN_PROPAGATE_NAN])  # default NOT_PROPAGATE


@case(CUDNN_TYPE_NUMERICAL_NOTE)
def _numerical_note(ctx):
    name = attr(CUDNN_ATTR_ENGINE_NUMERICAL_NOTE, CUDNN_TYPE_NUMERICAL_NOTE)
    assert not schema.attribute(name).settable
    seen = set()
    for engine in ctx.engines:
        notes = engine.get(name, CUDNN_TYPE_NUMERICAL_NOTE)
        assert len(notes) == engine.element_count(name, CUDNN_TYPE_NUMERICAL_NOTE)
        assert all(type(n) is NumericalNote for n in notes)
        seen.update(notes)
    assert CUDNN_NUMERICAL_NOTE_TENSOR_CORE in seen  # fp16 conv on an H200 profile
    with pytest.raises(ValueError, match="get-only"):
        ctx.engines[0].set(name, CUDNN_TYPE_NUMERICAL_NOTE, CUDNN_NUMERICAL_NOTE_TENSOR_CORE)


@case(CUDNN_TYPE_LAYOUT_TYPE)
def _layout_type(ctx):
    # Get-only, read from the LAYOUT_INFO descriptors an engine reports. cuDNN 9.19 reports none for
    # any engine of the notebook graph (heuristics A/B/FALLBACK, H200 profile or a real H200), so on
    # 9.19 this checks the (empty) road there. A LAYOUT_INFO descriptor made by hand finalizes but
    # holds uninitialized memory (its TYPES and TENSOR_UID vary from run to run), so it proves nothing.
    name = attr(CUDNN_ATTR_LAYOUT_INFO_TYPES, CUDNN_TYPE_LAYOUT_TYPE)
    assert not schema.attribute(name).settable
    infos = []
    for engine in ctx.engines:
        found = engine.get(CUDNN_ATTR_ENGINE_LAYOUT_INFO, B)
        assert len(found) == engine.element_count(CUDNN_ATTR_ENGINE_LAYOUT_INFO, B)
        infos += found
    for info in infos:
        assert info.descriptor_type is CUDNN_BACKEND_LAYOUT_INFO_DESCRIPTOR and info.finalized
        types = info.get(name, CUDNN_TYPE_LAYOUT_TYPE)
        assert len(types) == info.element_count(name, CUDNN_TYPE_LAYOUT_TYPE)
        assert all(type(t) is LayoutType for t in types)
        assert type(info.get(CUDNN_ATTR_LAYOUT_INFO_TENSOR_UID, CUDNN_TYPE_INT64)[0]) is int
    with pytest.raises(ValueError, match="get-only"):
        cb.Descriptor(CUDNN_BACKEND_LAYOUT_INFO_DESCRIPTOR).set(name, CUDNN_TYPE_LAYOUT_TYPE,
                                                                [CUDNN_LAYOUT_TYPE_PREFERRED_NHWC])


@case(CUDNN_TYPE_ATTRIB_NAME)
def _attrib_name(ctx):
    # The only attribute of this type is INTERMEDIATE_INFO_DEPENDENT_ATTRIBUTES (get-only), read from
    # an engine config's INTERMEDIATE_INFO. Every release measured (9.10.2 .. 9.28.1) refuses both roads to it.
    name = attr(CUDNN_ATTR_INTERMEDIATE_INFO_DEPENDENT_ATTRIBUTES, CUDNN_TYPE_ATTRIB_NAME)
    assert not schema.attribute(name).settable
    cfg = ctx.configs[0]
    if LOADED <= INTERMEDIATE_INFO_REFUSED_UP_TO:
        with pytest.raises(cb.CudnnNotSupportedError):
            cfg.get(CUDNN_ATTR_ENGINECFG_INTERMEDIATE_INFO, B)
        with pytest.raises(cb.CudnnInternalError):
            cb.Descriptor(CUDNN_BACKEND_INTERMEDIATE_INFO_DESCRIPTOR)
        return
    for info in cfg.get(CUDNN_ATTR_ENGINECFG_INTERMEDIATE_INFO, B):
        assert all(type(n) is AttributeName for n in info.get(name, CUDNN_TYPE_ATTRIB_NAME))


@case(CUDNN_TYPE_POINTWISE_MODE)
def _pointwise_mode(ctx):
    pw = cb.Descriptor(CUDNN_BACKEND_POINTWISE_DESCRIPTOR)
    pw.set(attr(CUDNN_ATTR_POINTWISE_MODE, CUDNN_TYPE_POINTWISE_MODE), CUDNN_TYPE_POINTWISE_MODE,
           CUDNN_POINTWISE_GELU_FWD)
    pw.set(CUDNN_ATTR_POINTWISE_MATH_PREC, CUDNN_TYPE_DATA_TYPE, CUDNN_DATA_FLOAT)
    pw.finalize()
    check_unreadable(pw, CUDNN_ATTR_POINTWISE_MODE, CUDNN_TYPE_POINTWISE_MODE, [CUDNN_POINTWISE_GELU_FWD])
    # the other attribute of this type lives on an operation newer than 9.19
    other = attr(CUDNN_ATTR_OPERATION_DIAGONAL_BAND_MASK_COMPARISON_MODE, CUDNN_TYPE_POINTWISE_MODE)
    since = schema.attribute(other).since
    if LOADED < _version(since):
        with pytest.raises(cb.CudnnVersionError, match=_needs(since)):
            cb.Descriptor(CUDNN_BACKEND_OPERATION_DIAGONAL_BAND_MASK_DESCRIPTOR)


@case(CUDNN_TYPE_BACKEND_DESCRIPTOR)
def _backend_descriptor(ctx):
    [engine0] = ctx.configs[0].get(CUDNN_ATTR_ENGINECFG_ENGINE, B)
    [index] = engine0.get(CUDNN_ATTR_ENGINE_GLOBAL_INDEX, CUDNN_TYPE_INT64)
    engine = cb.Descriptor(CUDNN_BACKEND_ENGINE_DESCRIPTOR)
    engine.set(attr(CUDNN_ATTR_ENGINE_OPERATION_GRAPH, B), B, ctx.graph)
    engine.set(CUDNN_ATTR_ENGINE_GLOBAL_INDEX, CUDNN_TYPE_INT64, index)
    engine.set(attr(CUDNN_ATTR_ENGINE_DEVICEPROP, B), B, ctx.dp)
    engine.finalize()
    [graph] = engine.get(CUDNN_ATTR_ENGINE_OPERATION_GRAPH, B)
    assert isinstance(graph, cb.Descriptor) and graph.descriptor_type is CUDNN_BACKEND_OPERATIONGRAPH_DESCRIPTOR
    assert graph.finalized and not graph.closed and graph.ptr not in (0, ctx.graph.ptr)
    assert (graph.get(CUDNN_ATTR_OPERATIONGRAPH_ENGINE_GLOBAL_COUNT, CUDNN_TYPE_INT64)
            == ctx.graph.get(CUDNN_ATTR_OPERATIONGRAPH_ENGINE_GLOBAL_COUNT, CUDNN_TYPE_INT64))
    [dp] = engine.get(CUDNN_ATTR_ENGINE_DEVICEPROP, B)
    assert dp.descriptor_type is CUDNN_BACKEND_DEVICEPROP_DESCRIPTOR and dp.finalized
    assert dp.get(CUDNN_ATTR_DEVICEPROP_JSON_REPRESENTATION, CUDNN_TYPE_CHAR) == ctx.profile_json
    # an engine config round trips through a plan and still names the same engine
    cfg = cb.Descriptor(CUDNN_BACKEND_ENGINECFG_DESCRIPTOR)
    cfg.set(attr(CUDNN_ATTR_ENGINECFG_ENGINE, B), B, engine)
    cfg.finalize()
    [cfg_engine] = cfg.get(CUDNN_ATTR_ENGINECFG_ENGINE, B)
    assert cfg_engine.descriptor_type is CUDNN_BACKEND_ENGINE_DESCRIPTOR and cfg_engine.finalized
    check_get(cfg_engine, CUDNN_ATTR_ENGINE_GLOBAL_INDEX, CUDNN_TYPE_INT64, [index])
    plan = _plan(ctx, ctx.configs[0])
    [plan_cfg] = plan.get(attr(CUDNN_ATTR_EXECUTION_PLAN_ENGINE_CONFIG, B), B)
    assert plan_cfg.descriptor_type is CUDNN_BACKEND_ENGINECFG_DESCRIPTOR and plan_cfg.finalized
    [plan_engine] = plan_cfg.get(CUDNN_ATTR_ENGINECFG_ENGINE, B)
    check_get(plan_engine, CUDNN_ATTR_ENGINE_GLOBAL_INDEX, CUDNN_TYPE_INT64, [index])


@case(CUDNN_TYPE_GENSTATS_MODE)
def _genstats_mode(ctx):
    op = cb.Descriptor(CUDNN_BACKEND_OPERATION_GEN_STATS_DESCRIPTOR)
    op.set(attr(CUDNN_ATTR_OPERATION_GENSTATS_MODE, CUDNN_TYPE_GENSTATS_MODE), CUDNN_TYPE_GENSTATS_MODE,
           CUDNN_GENSTATS_SUM_SQSUM)
    op.set(CUDNN_ATTR_OPERATION_GENSTATS_MATH_PREC, CUDNN_TYPE_DATA_TYPE, CUDNN_DATA_FLOAT)
    op.set(CUDNN_ATTR_OPERATION_GENSTATS_XDESC, B, tensor(1, [8, 32, 16, 16], CUDNN_DATA_HALF))
    op.set(CUDNN_ATTR_OPERATION_GENSTATS_SUMDESC, B, tensor(2, [1, 32, 1, 1]))
    op.set(CUDNN_ATTR_OPERATION_GENSTATS_SQSUMDESC, B, tensor(3, [1, 32, 1, 1]))
    op.finalize()
    check_unreadable(op, CUDNN_ATTR_OPERATION_GENSTATS_MODE, CUDNN_TYPE_GENSTATS_MODE, [CUDNN_GENSTATS_SUM_SQSUM])


@case(CUDNN_TYPE_BN_FINALIZE_STATS_MODE)
def _bn_finalize_stats_mode(ctx):
    op = cb.Descriptor(CUDNN_BACKEND_OPERATION_BN_FINALIZE_STATISTICS_DESCRIPTOR)
    op.set(attr(CUDNN_ATTR_OPERATION_BN_FINALIZE_STATS_MODE, CUDNN_TYPE_BN_FINALIZE_STATS_MODE),
           CUDNN_TYPE_BN_FINALIZE_STATS_MODE, CUDNN_BN_FINALIZE_STATISTICS_TRAINING)
    op.set(CUDNN_ATTR_OPERATION_BN_FINALIZE_MATH_PREC, CUDNN_TYPE_DATA_TYPE, CUDNN_DATA_FLOAT)
    uid = 10
    for part in ("Y_SUM", "Y_SQ_SUM", "SCALE", "BIAS", "SAVED_MEAN", "SAVED_INV_STD", "EQ_SCALE", "EQ_BIAS",
                 "PREV_RUNNING_MEAN", "PREV_RUNNING_VAR", "UPDATED_RUNNING_MEAN", "UPDATED_RUNNING_VAR"):
        uid += 1
        op.set(getattr(cb, f"CUDNN_ATTR_OPERATION_BN_FINALIZE_{part}_DESC"), B, tensor(uid, [1, 32, 1, 1]))
    op.set(CUDNN_ATTR_OPERATION_BN_FINALIZE_ACCUM_COUNT_DESC, B, tensor(30, [1, 1, 1, 1], CUDNN_DATA_INT64,
                                                                          is_by_value=True))
    op.set(CUDNN_ATTR_OPERATION_BN_FINALIZE_EPSILON_DESC, B, tensor(31, [1, 1, 1, 1], CUDNN_DATA_DOUBLE,
                                                                      is_by_value=True))
    op.set(CUDNN_ATTR_OPERATION_BN_FINALIZE_EXP_AVERATE_FACTOR_DESC, B, tensor(32, [1, 1, 1, 1], CUDNN_DATA_DOUBLE,
                                                                                 is_by_value=True))
    op.finalize()
    check_unreadable(op, CUDNN_ATTR_OPERATION_BN_FINALIZE_STATS_MODE, CUDNN_TYPE_BN_FINALIZE_STATS_MODE,
                     [CUDNN_BN_FINALIZE_STATISTICS_TRAINING])


@case(CUDNN_TYPE_REDUCTION_OPERATOR_TYPE)
def _reduction_operator(ctx):
    red = _reduction()
    check_get(red, attr(CUDNN_ATTR_REDUCTION_OPERATOR, CUDNN_TYPE_REDUCTION_OPERATOR_TYPE),
              CUDNN_TYPE_REDUCTION_OPERATOR_TYPE, [CUDNN_REDUCE_TENSOR_MAX])
    check_get(red, CUDNN_ATTR_REDUCTION_COMP_TYPE, CUDNN_TYPE_DATA_TYPE, [CUDNN_DATA_FLOAT])


@case(CUDNN_TYPE_BEHAVIOR_NOTE)
def _behavior_note(ctx):
    name = attr(CUDNN_ATTR_ENGINE_BEHAVIOR_NOTE, CUDNN_TYPE_BEHAVIOR_NOTE)
    assert not schema.attribute(name).settable
    seen = set()
    for engine in ctx.engines:
        notes = engine.get(name, CUDNN_TYPE_BEHAVIOR_NOTE)
        assert len(notes) == engine.element_count(name, CUDNN_TYPE_BEHAVIOR_NOTE)
        assert all(type(n) is BehaviorNote for n in notes)
        seen.update(notes)
    assert CUDNN_BEHAVIOR_NOTE_RUNTIME_COMPILATION in seen  # the fallback engines compile at runtime


@case(CUDNN_TYPE_TENSOR_REORDERING_MODE)
def _tensor_reordering_mode(ctx):
    # cuDNN 9.19 reads REORDERING_MODE only as CUDNN_TYPE_INT64 (the schema's get_type)
    t = cb.Descriptor(CUDNN_BACKEND_TENSOR_DESCRIPTOR)
    t.set(CUDNN_ATTR_TENSOR_DATA_TYPE, CUDNN_TYPE_DATA_TYPE, CUDNN_DATA_HALF)
    t.set(CUDNN_ATTR_TENSOR_DIMENSIONS, CUDNN_TYPE_INT64, [32, 64, 3, 3])
    t.set(CUDNN_ATTR_TENSOR_STRIDES, CUDNN_TYPE_INT64, [576, 1, 192, 64])
    t.set(CUDNN_ATTR_TENSOR_UNIQUE_ID, CUDNN_TYPE_INT64, 2)
    t.set(CUDNN_ATTR_TENSOR_BYTE_ALIGNMENT, CUDNN_TYPE_INT64, 16)
    t.set(attr(CUDNN_ATTR_TENSOR_REORDERING_MODE, CUDNN_TYPE_TENSOR_REORDERING_MODE),
          CUDNN_TYPE_TENSOR_REORDERING_MODE, CUDNN_TENSOR_REORDERING_F16x16)  # default NONE
    t.finalize()
    check_get(t, CUDNN_ATTR_TENSOR_REORDERING_MODE, CUDNN_TYPE_TENSOR_REORDERING_MODE, [CUDNN_TENSOR_REORDERING_F16x16])


@case(CUDNN_TYPE_RESAMPLE_MODE)
def _resample_mode(ctx):
    check_get(_resample(), attr(CUDNN_ATTR_RESAMPLE_MODE, CUDNN_TYPE_RESAMPLE_MODE), CUDNN_TYPE_RESAMPLE_MODE,
              [CUDNN_RESAMPLE_AVGPOOL])  # default NEAREST


@case(CUDNN_TYPE_PADDING_MODE)
def _padding_mode(ctx):
    check_get(_resample(), attr(CUDNN_ATTR_RESAMPLE_PADDING_MODE, CUDNN_TYPE_PADDING_MODE), CUDNN_TYPE_PADDING_MODE,
              [CUDNN_NEG_INF_PAD])  # default ZERO_PAD


@case(CUDNN_TYPE_INT32)
def _int32(ctx):
    heur = cb.Descriptor(CUDNN_BACKEND_ENGINEHEUR_DESCRIPTOR)
    heur.set(CUDNN_ATTR_ENGINEHEUR_OPERATION_GRAPH, B, ctx.graph)
    heur.set(CUDNN_ATTR_ENGINEHEUR_MODE, CUDNN_TYPE_HEUR_MODE, CUDNN_HEUR_MODE_A)
    heur.set(attr(CUDNN_ATTR_ENGINEHEUR_SM_COUNT_TARGET, CUDNN_TYPE_INT32), CUDNN_TYPE_INT32, 66)
    heur.set(CUDNN_ATTR_ENGINEHEUR_DEVICEPROP, B, ctx.dp)
    heur.finalize()
    check_get(heur, CUDNN_ATTR_ENGINEHEUR_SM_COUNT_TARGET, CUDNN_TYPE_INT32, [66])
    with pytest.raises(ValueError, match="does not fit in 32 bits"):
        cb.Descriptor(CUDNN_BACKEND_ENGINEHEUR_DESCRIPTOR).set(CUDNN_ATTR_ENGINEHEUR_SM_COUNT_TARGET,
                                                                CUDNN_TYPE_INT32, 1 << 31)


@case(CUDNN_TYPE_CHAR)
def _char(ctx):
    name = attr(CUDNN_ATTR_DEVICEPROP_JSON_REPRESENTATION, CUDNN_TYPE_CHAR)
    for given in (ctx.profile_json, ctx.profile_json.encode()):  # str or bytes in, str out
        dp = cb.Descriptor(CUDNN_BACKEND_DEVICEPROP_DESCRIPTOR)
        dp.set(name, CUDNN_TYPE_CHAR, given)
        dp.finalize()
        check_get(dp, name, CUDNN_TYPE_CHAR, ctx.profile_json)
        assert dp.element_count(name, CUDNN_TYPE_CHAR) == len(ctx.profile_json.encode())
    with pytest.raises(TypeError, match=r"takes JSON text \(str or bytes\), not list"):
        cb.Descriptor(CUDNN_BACKEND_DEVICEPROP_DESCRIPTOR).set(name, CUDNN_TYPE_CHAR, [ord("{")])


@case(CUDNN_TYPE_SIGNAL_MODE)
def _signal_mode(ctx):
    op = cb.Descriptor(CUDNN_BACKEND_OPERATION_SIGNAL_DESCRIPTOR)
    op.set(attr(CUDNN_ATTR_OPERATION_SIGNAL_MODE, CUDNN_TYPE_SIGNAL_MODE), CUDNN_TYPE_SIGNAL_MODE, CUDNN_SIGNAL_WAIT)
    op.set(CUDNN_ATTR_OPERATION_SIGNAL_FLAGDESC, B, tensor(1, [1, 1, 1, 1], CUDNN_DATA_INT64))
    op.set(CUDNN_ATTR_OPERATION_SIGNAL_VALUE, CUDNN_TYPE_INT64, 7)
    op.set(CUDNN_ATTR_OPERATION_SIGNAL_XDESC, B, tensor(2, [8, 32, 16, 16]))
    op.set(CUDNN_ATTR_OPERATION_SIGNAL_YDESC, B, tensor(3, [8, 32, 16, 16]))
    op.finalize()
    check_get(op, CUDNN_ATTR_OPERATION_SIGNAL_MODE, CUDNN_TYPE_SIGNAL_MODE, [CUDNN_SIGNAL_WAIT])
    check_get(op, CUDNN_ATTR_OPERATION_SIGNAL_VALUE, CUDNN_TYPE_INT64, [7])


@case(CUDNN_TYPE_FRACTION)
def _fraction(ctx):
    rs = _resample()
    strides = attr(CUDNN_ATTR_RESAMPLE_STRIDES, CUDNN_TYPE_FRACTION)
    check_get(rs, strides, CUDNN_TYPE_FRACTION, [(2, 4), (3, 2)])  # kept as given, not reduced
    check_get(rs, CUDNN_ATTR_RESAMPLE_WINDOW_DIMS, CUDNN_TYPE_FRACTION, [(3, 1), (6, 2)])
    # set as INT64, read as FRACTION (n/1) and back as INT64
    check_get(rs, CUDNN_ATTR_RESAMPLE_PRE_PADDINGS, CUDNN_TYPE_FRACTION, [(1, 1), (1, 1)])
    check_get(rs, CUDNN_ATTR_RESAMPLE_PRE_PADDINGS, CUDNN_TYPE_INT64, [1, 1])
    assert rs.element_count(strides, CUDNN_TYPE_FRACTION) == 2


@case(CUDNN_TYPE_NORM_MODE)
def _norm_mode(ctx):
    op = _norm_forward()
    check_unreadable(op, attr(CUDNN_ATTR_OPERATION_NORM_FWD_MODE, CUDNN_TYPE_NORM_MODE), CUDNN_TYPE_NORM_MODE,
                     [CUDNN_RMS_NORM])


@case(CUDNN_TYPE_NORM_FWD_PHASE)
def _norm_fwd_phase(ctx):
    op = _norm_forward()
    check_unreadable(op, attr(CUDNN_ATTR_OPERATION_NORM_FWD_PHASE, CUDNN_TYPE_NORM_FWD_PHASE),
                     CUDNN_TYPE_NORM_FWD_PHASE, [CUDNN_NORM_FWD_INFERENCE])


@case(CUDNN_TYPE_RNG_DISTRIBUTION)
def _rng_distribution(ctx):
    check_get(_rng(), attr(CUDNN_ATTR_RNG_DISTRIBUTION, CUDNN_TYPE_RNG_DISTRIBUTION), CUDNN_TYPE_RNG_DISTRIBUTION,
              [CUDNN_RNG_DISTRIBUTION_NORMAL])  # default BERNOULLI


@case(CUDNN_TYPE_MOE_GROUPED_MATMUL_MODE)
def _moe_grouped_matmul_mode(ctx):
    name = attr(CUDNN_ATTR_OPERATION_MOE_GROUPED_MATMUL_MODE, CUDNN_TYPE_MOE_GROUPED_MATMUL_MODE)
    since = schema.attribute(name).since
    if LOADED < _version(since):
        with pytest.raises(cb.CudnnVersionError, match=_needs(since)):
            cb.Descriptor(CUDNN_BACKEND_OPERATION_MOE_GROUPED_MATMUL_DESCRIPTOR)
        return
    op = _moe_op()
    # count=1: cuDNN 9.19 refuses the element-count query on this operation (see the xfail below)
    check_get(op, name, CUDNN_TYPE_MOE_GROUPED_MATMUL_MODE, [CUDNN_MOE_GROUPED_MATMUL_MODE_GATHER], count=1)


def _newer_than_loaded(name):
    return LOADED < _version(enums.SINCE[name])


@case(CUDNN_TYPE_RESHAPE_MODE)
def _reshape_mode(ctx):
    op = _reshape_op()
    name = attr(CUDNN_ATTR_OPERATION_RESHAPE_MODE, CUDNN_TYPE_RESHAPE_MODE)
    if _newer_than_loaded("CUDNN_TYPE_RESHAPE_MODE"):
        _assert_version_error(op, name, CUDNN_TYPE_RESHAPE_MODE, CUDNN_RESHAPE_LOGICAL, "9.22.0")
        return
    op.set(name, CUDNN_TYPE_RESHAPE_MODE, CUDNN_RESHAPE_LOGICAL)
    op.finalize()
    check_get(op, name, CUDNN_TYPE_RESHAPE_MODE, [CUDNN_RESHAPE_LOGICAL])


@case(CUDNN_TYPE_OPERATIONGRAPH_MODE)
def _operationgraph_mode(ctx):
    graph = cb.Descriptor(CUDNN_BACKEND_OPERATIONGRAPH_DESCRIPTOR)
    name = attr(CUDNN_ATTR_OPERATIONGRAPH_MODE, CUDNN_TYPE_OPERATIONGRAPH_MODE)
    graph.set(CUDNN_ATTR_OPERATIONGRAPH_OPS, B, [_conv_forward_op()])
    if _newer_than_loaded("CUDNN_TYPE_OPERATIONGRAPH_MODE"):
        _assert_version_error(graph, name, CUDNN_TYPE_OPERATIONGRAPH_MODE, CUDNN_OPERATIONGRAPH_MODE_CONV_FORWARD,
                              "9.23.0")
        return
    graph.set(name, CUDNN_TYPE_OPERATIONGRAPH_MODE, CUDNN_OPERATIONGRAPH_MODE_CONV_FORWARD)  # default AUTO
    graph.finalize()
    check_get(graph, name, CUDNN_TYPE_OPERATIONGRAPH_MODE, [CUDNN_OPERATIONGRAPH_MODE_CONV_FORWARD])


@case(CUDNN_TYPE_CUDA_GRAPH_RETENTION)
def _cuda_graph_retention(ctx):
    name = attr(CUDNN_ATTR_EXECUTION_PLAN_CUDA_GRAPH_RETENTION, CUDNN_TYPE_CUDA_GRAPH_RETENTION)
    plan = cb.Descriptor(CUDNN_BACKEND_EXECUTION_PLAN_DESCRIPTOR)
    if _newer_than_loaded("CUDNN_TYPE_CUDA_GRAPH_RETENTION"):
        _assert_version_error(plan, name, CUDNN_TYPE_CUDA_GRAPH_RETENTION, CUDNN_CUDA_GRAPH_RETENTION_NONE, "9.28.0")
        return
    plan.set(CUDNN_ATTR_EXECUTION_PLAN_ENGINE_CONFIG, B, ctx.configs[0])
    plan.set(CUDNN_ATTR_EXECUTION_PLAN_DEVICEPROP, B, ctx.dp)
    plan.set(name, CUDNN_TYPE_CUDA_GRAPH_RETENTION, CUDNN_CUDA_GRAPH_RETENTION_NONE)
    plan.finalize()
    check_get(plan, name, CUDNN_TYPE_CUDA_GRAPH_RETENTION, [CUDNN_CUDA_GRAPH_RETENTION_NONE])


def _needs(since):
    """The gate's wording for a feature of release ``since`` ("9.20.0"): "needs cuDNN >= 9.20 (loaded: ...)"."""
    return rf"needs cuDNN >= {since.rsplit('.', 1)[0].replace('.', chr(92) + '.')} \(loaded: "


def _assert_version_error(d, name, atype, value, since):
    pattern = rf"{schema.attribute(name).name.name}.*{_needs(since)}"
    with pytest.raises(cb.CudnnVersionError, match=pattern) as info:
        d.set(name, atype, value)
    assert info.value.since == since and info.value.loaded == cb.loaded_library().version_string
    assert name not in d.set_attributes
    with pytest.raises(cb.CudnnVersionError, match=pattern):  # get is checked the same way
        d.get(name, atype)
    assert enums.SINCE[atype.name] == since


# ------------------------------------------------------------------------------------------------
# builders
# ------------------------------------------------------------------------------------------------
def _conv_forward_op(alpha=1.0, beta=0.0, scale_type=CUDNN_TYPE_FLOAT):
    n, c, h, w, k = 8, 64, 56, 56, 32
    op = cb.Descriptor(CUDNN_BACKEND_OPERATION_CONVOLUTION_FORWARD_DESCRIPTOR)
    op.set(CUDNN_ATTR_OPERATION_CONVOLUTION_FORWARD_X, B, gg.tensor(1, [n, c, h, w], gg.nhwc_strides(n, c, h, w)))
    op.set(CUDNN_ATTR_OPERATION_CONVOLUTION_FORWARD_W, B, gg.tensor(2, [k, c, 3, 3], gg.nhwc_strides(k, c, 3, 3)))
    op.set(CUDNN_ATTR_OPERATION_CONVOLUTION_FORWARD_Y, B, gg.tensor(3, [n, k, h, w], gg.nhwc_strides(n, k, h, w)))
    op.set(CUDNN_ATTR_OPERATION_CONVOLUTION_FORWARD_CONV_DESC, B, gg.convolution())
    op.set(CUDNN_ATTR_OPERATION_CONVOLUTION_FORWARD_ALPHA, scale_type, alpha)
    op.set(CUDNN_ATTR_OPERATION_CONVOLUTION_FORWARD_BETA, scale_type, beta)
    return op.finalize()


def _plan(ctx, config=None):
    plan = cb.Descriptor(CUDNN_BACKEND_EXECUTION_PLAN_DESCRIPTOR)
    plan.set(CUDNN_ATTR_EXECUTION_PLAN_ENGINE_CONFIG, B, config if config is not None else ctx.configs[0])
    plan.set(CUDNN_ATTR_EXECUTION_PLAN_DEVICEPROP, B, ctx.dp)
    return plan.finalize()


def _reduction(is_deterministic=None):
    red = cb.Descriptor(CUDNN_BACKEND_REDUCTION_DESCRIPTOR)
    red.set(CUDNN_ATTR_REDUCTION_OPERATOR, CUDNN_TYPE_REDUCTION_OPERATOR_TYPE, CUDNN_REDUCE_TENSOR_MAX)
    red.set(CUDNN_ATTR_REDUCTION_COMP_TYPE, CUDNN_TYPE_DATA_TYPE, CUDNN_DATA_FLOAT)
    if is_deterministic is not None:
        red.set(CUDNN_ATTR_REDUCTION_IS_DETERMINISTIC, CUDNN_TYPE_BOOLEAN, is_deterministic)
    return red.finalize()


def _rng():
    rng = cb.Descriptor(CUDNN_BACKEND_RNG_DESCRIPTOR)
    rng.set(CUDNN_ATTR_RNG_DISTRIBUTION, CUDNN_TYPE_RNG_DISTRIBUTION, CUDNN_RNG_DISTRIBUTION_NORMAL)
    rng.set(CUDNN_ATTR_RNG_NORMAL_DIST_MEAN, CUDNN_TYPE_DOUBLE, 0.1)
    rng.set(CUDNN_ATTR_RNG_NORMAL_DIST_STANDARD_DEVIATION, CUDNN_TYPE_DOUBLE, 2.5)
    return rng.finalize()


def _resample():
    rs = cb.Descriptor(CUDNN_BACKEND_RESAMPLE_DESCRIPTOR)
    rs.set(CUDNN_ATTR_RESAMPLE_MODE, CUDNN_TYPE_RESAMPLE_MODE, CUDNN_RESAMPLE_AVGPOOL)
    rs.set(CUDNN_ATTR_RESAMPLE_PADDING_MODE, CUDNN_TYPE_PADDING_MODE, CUDNN_NEG_INF_PAD)
    rs.set(CUDNN_ATTR_RESAMPLE_NAN_PROPAGATION, CUDNN_TYPE_NAN_PROPOGATION, CUDNN_PROPAGATE_NAN)
    rs.set(CUDNN_ATTR_RESAMPLE_COMP_TYPE, CUDNN_TYPE_DATA_TYPE, CUDNN_DATA_HALF)
    rs.set(CUDNN_ATTR_RESAMPLE_SPATIAL_DIMS, CUDNN_TYPE_INT64, 2)
    rs.set(CUDNN_ATTR_RESAMPLE_WINDOW_DIMS, CUDNN_TYPE_FRACTION, [fractions.Fraction(3), (6, 2)])
    rs.set(CUDNN_ATTR_RESAMPLE_STRIDES, CUDNN_TYPE_FRACTION, [(2, 4), (3, 2)])
    rs.set(CUDNN_ATTR_RESAMPLE_PRE_PADDINGS, CUDNN_TYPE_INT64, [1, 1])
    rs.set(CUDNN_ATTR_RESAMPLE_POST_PADDINGS, CUDNN_TYPE_FRACTION, [(1, 2), (0, 1)])
    return rs.finalize()


def _norm_forward():
    op = cb.Descriptor(CUDNN_BACKEND_OPERATION_NORM_FORWARD_DESCRIPTOR)
    op.set(CUDNN_ATTR_OPERATION_NORM_FWD_MODE, CUDNN_TYPE_NORM_MODE, CUDNN_RMS_NORM)
    op.set(CUDNN_ATTR_OPERATION_NORM_FWD_PHASE, CUDNN_TYPE_NORM_FWD_PHASE, CUDNN_NORM_FWD_INFERENCE)
    op.set(CUDNN_ATTR_OPERATION_NORM_FWD_XDESC, B, tensor(1, [8, 32, 16, 16]))
    op.set(CUDNN_ATTR_OPERATION_NORM_FWD_SCALE_DESC, B, tensor(2, [1, 32, 16, 16]))
    op.set(CUDNN_ATTR_OPERATION_NORM_FWD_BIAS_DESC, B, tensor(3, [1, 32, 16, 16]))
    op.set(CUDNN_ATTR_OPERATION_NORM_FWD_EPSILON_DESC, B, tensor(4, [1, 1, 1, 1], is_by_value=True))
    op.set(CUDNN_ATTR_OPERATION_NORM_FWD_YDESC, B, tensor(5, [8, 32, 16, 16]))
    return op.finalize()


def _moe_op():
    op = cb.Descriptor(CUDNN_BACKEND_OPERATION_MOE_GROUPED_MATMUL_DESCRIPTOR)
    op.set(CUDNN_ATTR_OPERATION_MOE_GROUPED_MATMUL_MODE, CUDNN_TYPE_MOE_GROUPED_MATMUL_MODE,
           CUDNN_MOE_GROUPED_MATMUL_MODE_GATHER)
    op.set(CUDNN_ATTR_OPERATION_MOE_GROUPED_MATMUL_MATH_PREC, CUDNN_TYPE_DATA_TYPE, CUDNN_DATA_FLOAT)
    op.set(CUDNN_ATTR_OPERATION_MOE_GROUPED_MATMUL_TOKEN_DESC, B, tensor(1, [1, 64, 128], CUDNN_DATA_HALF))
    op.set(CUDNN_ATTR_OPERATION_MOE_GROUPED_MATMUL_WEIGHT_DESC, B, tensor(2, [4, 128, 256], CUDNN_DATA_HALF))
    op.set(CUDNN_ATTR_OPERATION_MOE_GROUPED_MATMUL_FIRST_TOKEN_OFFSET_DESC, B, tensor(3, [4, 1, 1], CUDNN_DATA_INT32))
    op.set(CUDNN_ATTR_OPERATION_MOE_GROUPED_MATMUL_OUTPUT_DESC, B, tensor(4, [1, 128, 256], CUDNN_DATA_HALF))
    op.set(CUDNN_ATTR_OPERATION_MOE_GROUPED_MATMUL_TOKEN_INDEX_DESC, B, tensor(5, [1, 128, 1], CUDNN_DATA_INT32))
    op.set(CUDNN_ATTR_OPERATION_MOE_GROUPED_MATMUL_TOP_K, CUDNN_TYPE_INT32, 2)
    return op.finalize()


def _reshape_op():
    op = cb.Descriptor(CUDNN_BACKEND_OPERATION_RESHAPE_DESCRIPTOR)
    op.set(CUDNN_ATTR_OPERATION_RESHAPE_XDESC, B, tensor(1, [1, 2, 3, 4]))
    op.set(CUDNN_ATTR_OPERATION_RESHAPE_YDESC, B, tensor(2, [1, 6, 4, 1]))
    return op


# ------------------------------------------------------------------------------------------------
# the parametrized round trip
# ------------------------------------------------------------------------------------------------
# cuDNN 9.19 sets CONVOLUTION_CONV_MODE as CONVOLUTION_MODE but reads it only as DATA_TYPE, and
# TENSOR_REORDERING_MODE only as INT64; the schema's get_type makes get() ask the way cuDNN wants.
XFAIL = {}


def test_parametrization_covers_every_attribute_type():
    assert len(AttributeType) == 34
    assert set(CASES) == set(AttributeType)
    assert set(XFAIL) <= set(AttributeType)


@pytest.mark.parametrize("atype", [pytest.param(t, id=t.name, marks=XFAIL.get(t, ())) for t in AttributeType])
def test_round_trip(atype, ctx):
    # every type has an attribute in the schema, and the case uses one of them
    assert any(atype in spec.types for spec in schema.ATTRIBUTES.values()), atype.name
    CASES[atype](ctx)


def test_every_enum_valued_type_has_its_intenum():
    """Each enum-valued attribute type names a C enum that is an IntEnum under its C name (FRACTION is a struct)."""
    for name, c_enum in enums.ATTRIBUTE_TYPE_ENUM.items():
        if name == "CUDNN_TYPE_FRACTION":
            continue
        cls = getattr(cb, c_enum)
        assert issubclass(cls, enum.IntEnum) and cls in enums.ENUM_TYPES, name


# ------------------------------------------------------------------------------------------------
# HANDLE (set and read back on a GPU: tests/gpu/core/test_handle_gpu.py)
# ------------------------------------------------------------------------------------------------
def test_handle_attribute_refuses_raw_ints():
    for name in (CUDNN_ATTR_DEVICEPROP_HANDLE, CUDNN_ATTR_EXECUTION_PLAN_HANDLE, CUDNN_ATTR_OPERATIONGRAPH_HANDLE):
        d = cb.Descriptor(schema.attribute(name).descriptor)
        for raw in (0x7F0012345678, [0x7F0012345678], True):
            with pytest.raises(TypeError, match=rf"{name.name} takes a cudnn_backend.Handle, not"):
                d.set(name, CUDNN_TYPE_HANDLE, raw)


# ------------------------------------------------------------------------------------------------
# numpy inputs
# ------------------------------------------------------------------------------------------------
def test_numpy_inputs():
    t = cb.Descriptor(CUDNN_BACKEND_TENSOR_DESCRIPTOR)
    t.set(CUDNN_ATTR_TENSOR_DATA_TYPE, CUDNN_TYPE_DATA_TYPE, np.int32(int(CUDNN_DATA_HALF)))
    t.set(CUDNN_ATTR_TENSOR_DIMENSIONS, CUDNN_TYPE_INT64, np.array([2, 3, 4, 5], dtype=np.int64))  # (2-d: refused)
    t.set(CUDNN_ATTR_TENSOR_STRIDES, CUDNN_TYPE_INT64, np.array([60, 20, 5, 1], dtype=np.int32))
    t.set(CUDNN_ATTR_TENSOR_UNIQUE_ID, CUDNN_TYPE_INT64, np.uint16(9))
    t.set(CUDNN_ATTR_TENSOR_BYTE_ALIGNMENT, CUDNN_TYPE_INT64, np.int64(16))
    t.set(CUDNN_ATTR_TENSOR_IS_VIRTUAL, CUDNN_TYPE_BOOLEAN, np.bool_(True))
    t.set(CUDNN_ATTR_TENSOR_IS_BY_VALUE, CUDNN_TYPE_BOOLEAN, np.array([False]))
    t.finalize()
    check_get(t, CUDNN_ATTR_TENSOR_DATA_TYPE, CUDNN_TYPE_DATA_TYPE, [CUDNN_DATA_HALF])
    check_get(t, CUDNN_ATTR_TENSOR_DIMENSIONS, CUDNN_TYPE_INT64, [2, 3, 4, 5])
    check_get(t, CUDNN_ATTR_TENSOR_STRIDES, CUDNN_TYPE_INT64, [60, 20, 5, 1])
    check_get(t, CUDNN_ATTR_TENSOR_UNIQUE_ID, CUDNN_TYPE_INT64, [9])
    check_get(t, CUDNN_ATTR_TENSOR_IS_VIRTUAL, CUDNN_TYPE_BOOLEAN, [True])
    check_get(t, CUDNN_ATTR_TENSOR_IS_BY_VALUE, CUDNN_TYPE_BOOLEAN, [False])
    op = _conv_forward_op(alpha=np.float32(0.3), beta=np.float64(0.1))
    check_get(op, CUDNN_ATTR_OPERATION_CONVOLUTION_FORWARD_ALPHA, CUDNN_TYPE_FLOAT, [_f32(0.3)])
    check_get(op, CUDNN_ATTR_OPERATION_CONVOLUTION_FORWARD_BETA, CUDNN_TYPE_FLOAT, [_f32(0.1)])
    rng = cb.Descriptor(CUDNN_BACKEND_RNG_DESCRIPTOR)
    rng.set(CUDNN_ATTR_RNG_DISTRIBUTION, CUDNN_TYPE_RNG_DISTRIBUTION, np.int64(int(CUDNN_RNG_DISTRIBUTION_UNIFORM)))
    rng.set(CUDNN_ATTR_RNG_UNIFORM_DIST_MINIMUM, CUDNN_TYPE_DOUBLE, np.float32(-0.5))
    rng.set(CUDNN_ATTR_RNG_UNIFORM_DIST_MAXIMUM, CUDNN_TYPE_DOUBLE, np.array([0.75]))
    rng.finalize()
    check_get(rng, CUDNN_ATTR_RNG_DISTRIBUTION, CUDNN_TYPE_RNG_DISTRIBUTION, [CUDNN_RNG_DISTRIBUTION_UNIFORM])
    check_get(rng, CUDNN_ATTR_RNG_UNIFORM_DIST_MINIMUM, CUDNN_TYPE_DOUBLE, [-0.5])
    check_get(rng, CUDNN_ATTR_RNG_UNIFORM_DIST_MAXIMUM, CUDNN_TYPE_DOUBLE, [0.75])
    bad = cb.Descriptor(CUDNN_BACKEND_TENSOR_DESCRIPTOR)
    with pytest.raises(TypeError, match="expected an integer, not float32"):
        bad.set(CUDNN_ATTR_TENSOR_UNIQUE_ID, CUDNN_TYPE_INT64, np.float32(1.0))
    with pytest.raises(TypeError, match="expected an integer"):
        bad.set(CUDNN_ATTR_TENSOR_DIMENSIONS, CUDNN_TYPE_INT64, np.array([1.5, 2.0]))


# ------------------------------------------------------------------------------------------------
# count= and element_count()
# ------------------------------------------------------------------------------------------------
def test_explicit_count_smaller_and_larger_than_available(ctx):
    t = tensor(1, [2, 3, 4, 5])
    assert t.element_count(CUDNN_ATTR_TENSOR_DIMENSIONS, CUDNN_TYPE_INT64) == 4
    check_get(t, CUDNN_ATTR_TENSOR_DIMENSIONS, CUDNN_TYPE_INT64, [2, 3], count=2)
    check_get(t, CUDNN_ATTR_TENSOR_DIMENSIONS, CUDNN_TYPE_INT64, [2, 3, 4, 5], count=8)
    check_get(t, CUDNN_ATTR_TENSOR_DIMENSIONS, CUDNN_TYPE_INT64, [], count=0)
    check_get(t, CUDNN_ATTR_TENSOR_DIMENSIONS, CUDNN_TYPE_INT64, [2, 3, 4, 5], count=np.int64(4))
    # cuDNN wants exactly one element for a scalar attribute
    check_get(t, CUDNN_ATTR_TENSOR_UNIQUE_ID, CUDNN_TYPE_INT64, [1], count=1)
    with pytest.raises(cb.CudnnBadParamError):
        t.get(CUDNN_ATTR_TENSOR_UNIQUE_ID, CUDNN_TYPE_INT64, count=3)
    # fractions and enums
    rs = _resample()
    check_get(rs, CUDNN_ATTR_RESAMPLE_STRIDES, CUDNN_TYPE_FRACTION, [(2, 4)], count=1)
    engine = next(e for e in ctx.engines if e.element_count(CUDNN_ATTR_ENGINE_BEHAVIOR_NOTE, CUDNN_TYPE_BEHAVIOR_NOTE))
    assert engine.get(CUDNN_ATTR_ENGINE_BEHAVIOR_NOTE, CUDNN_TYPE_BEHAVIOR_NOTE, count=0) == []
    notes = engine.get(CUDNN_ATTR_ENGINE_BEHAVIOR_NOTE, CUDNN_TYPE_BEHAVIOR_NOTE)
    assert engine.get(CUDNN_ATTR_ENGINE_BEHAVIOR_NOTE, CUDNN_TYPE_BEHAVIOR_NOTE, count=len(notes) + 3) == notes
    # descriptors: fewer than available, and more (the surplus children are closed, not returned)
    heur = cb.Descriptor(CUDNN_BACKEND_ENGINEHEUR_DESCRIPTOR)
    heur.set(CUDNN_ATTR_ENGINEHEUR_OPERATION_GRAPH, B, ctx.graph)
    heur.set(CUDNN_ATTR_ENGINEHEUR_MODE, CUDNN_TYPE_HEUR_MODE, CUDNN_HEUR_MODE_A)
    heur.set(CUDNN_ATTR_ENGINEHEUR_DEVICEPROP, B, ctx.dp)
    heur.finalize()
    available = heur.element_count(CUDNN_ATTR_ENGINEHEUR_RESULTS, B)
    assert available >= 2
    two = heur.get(CUDNN_ATTR_ENGINEHEUR_RESULTS, B, count=2)
    assert len(two) == 2 and all(c.descriptor_type is CUDNN_BACKEND_ENGINECFG_DESCRIPTOR and c.finalized for c in two)
    many = heur.get(CUDNN_ATTR_ENGINEHEUR_RESULTS, B, count=available + 5)
    assert 1 <= len(many) <= available and all(c.finalized and not c.closed for c in many)
    # CHAR: count is the buffer size; too small is cuDNN's BAD_PARAM_SIZE_INSUFFICIENT, larger is fine
    dp = ctx.dp
    n = dp.element_count(CUDNN_ATTR_DEVICEPROP_JSON_REPRESENTATION, CUDNN_TYPE_CHAR)
    assert n == len(ctx.profile_json.encode())
    assert dp.get(CUDNN_ATTR_DEVICEPROP_JSON_REPRESENTATION, CUDNN_TYPE_CHAR, count=n + 16) == ctx.profile_json
    with pytest.raises(cb.CudnnBadParamError) as info:
        dp.get(CUDNN_ATTR_DEVICEPROP_JSON_REPRESENTATION, CUDNN_TYPE_CHAR, count=10)
    assert info.value.status is CUDNN_STATUS_BAD_PARAM_SIZE_INSUFFICIENT


def test_element_count_before_finalize_is_refused():
    t = cb.Descriptor(CUDNN_BACKEND_TENSOR_DESCRIPTOR)
    t.set(CUDNN_ATTR_TENSOR_UNIQUE_ID, CUDNN_TYPE_INT64, 5)
    with pytest.raises(cb.CudnnNotInitializedError):
        t.element_count(CUDNN_ATTR_TENSOR_UNIQUE_ID, CUDNN_TYPE_INT64)
    with pytest.raises(cb.CudnnNotInitializedError):
        t.get(CUDNN_ATTR_TENSOR_UNIQUE_ID, CUDNN_TYPE_INT64)


# ------------------------------------------------------------------------------------------------
# discrepancies between the schema/package and cuDNN 9.19, kept visible
# ------------------------------------------------------------------------------------------------
@pytest.mark.skipif(LOADED < _version(enums.SINCE["CUDNN_TYPE_MOE_GROUPED_MATMUL_MODE"]), reason="no MoE op")
def test_get_without_count_on_moe_grouped_matmul():
    """cuDNN 9.19 refuses the element-count query here; get() falls back to the schema's count_max == 1."""
    check_get(_moe_op(), CUDNN_ATTR_OPERATION_MOE_GROUPED_MATMUL_MODE, CUDNN_TYPE_MOE_GROUPED_MATMUL_MODE,
              [CUDNN_MOE_GROUPED_MATMUL_MODE_GATHER])


def test_get_without_count_on_engineheur_operation_graph(ctx):
    """cuDNN 9.19 refuses the count query ('1 != requestedElementCount'); get() falls back to count_max 1."""
    heur = cb.Descriptor(CUDNN_BACKEND_ENGINEHEUR_DESCRIPTOR)
    heur.set(CUDNN_ATTR_ENGINEHEUR_OPERATION_GRAPH, B, ctx.graph)
    heur.set(CUDNN_ATTR_ENGINEHEUR_MODE, CUDNN_TYPE_HEUR_MODE, CUDNN_HEUR_MODE_A)
    heur.set(CUDNN_ATTR_ENGINEHEUR_DEVICEPROP, B, ctx.dp)
    heur.finalize()
    [graph] = heur.get(CUDNN_ATTR_ENGINEHEUR_OPERATION_GRAPH, B, count=1)  # works
    assert graph.descriptor_type is CUDNN_BACKEND_OPERATIONGRAPH_DESCRIPTOR and graph.finalized
    [graph] = heur.get(CUDNN_ATTR_ENGINEHEUR_OPERATION_GRAPH, B)


def test_convolution_mode_reaches_cudnn(ctx):
    """CONV_MODE cannot be read back through get (see XFAIL), but cuDNN's plan JSON shows what it holds."""
    n, c, h, w, k = 8, 64, 56, 56, 32
    conv = cb.Descriptor(CUDNN_BACKEND_CONVOLUTION_DESCRIPTOR)
    conv.set(CUDNN_ATTR_CONVOLUTION_COMP_TYPE, CUDNN_TYPE_DATA_TYPE, CUDNN_DATA_FLOAT)
    conv.set(CUDNN_ATTR_CONVOLUTION_CONV_MODE, CUDNN_TYPE_CONVOLUTION_MODE, "CUDNN_CONVOLUTION")
    conv.set(CUDNN_ATTR_CONVOLUTION_SPATIAL_DIMS, CUDNN_TYPE_INT64, 2)
    for a in (CUDNN_ATTR_CONVOLUTION_PRE_PADDINGS, CUDNN_ATTR_CONVOLUTION_POST_PADDINGS,
              CUDNN_ATTR_CONVOLUTION_FILTER_STRIDES, CUDNN_ATTR_CONVOLUTION_DILATIONS):
        conv.set(a, CUDNN_TYPE_INT64, [1, 1])
    conv.finalize()
    op = cb.Descriptor(CUDNN_BACKEND_OPERATION_CONVOLUTION_FORWARD_DESCRIPTOR)
    op.set(CUDNN_ATTR_OPERATION_CONVOLUTION_FORWARD_X, B, gg.tensor(1, [n, c, h, w], gg.nhwc_strides(n, c, h, w)))
    op.set(CUDNN_ATTR_OPERATION_CONVOLUTION_FORWARD_W, B, gg.tensor(2, [k, c, 3, 3], gg.nhwc_strides(k, c, 3, 3)))
    op.set(CUDNN_ATTR_OPERATION_CONVOLUTION_FORWARD_Y, B, gg.tensor(3, [n, k, h, w], gg.nhwc_strides(n, k, h, w)))
    op.set(CUDNN_ATTR_OPERATION_CONVOLUTION_FORWARD_CONV_DESC, B, conv)
    op.set(CUDNN_ATTR_OPERATION_CONVOLUTION_FORWARD_ALPHA, CUDNN_TYPE_FLOAT, 1.0)
    op.set(CUDNN_ATTR_OPERATION_CONVOLUTION_FORWARD_BETA, CUDNN_TYPE_FLOAT, 0.0)
    op.finalize()
    graph = cb.Descriptor(CUDNN_BACKEND_OPERATIONGRAPH_DESCRIPTOR)
    graph.set(CUDNN_ATTR_OPERATIONGRAPH_OPS, B, [op])
    graph.finalize()
    config = gg.heuristics(graph, CUDNN_HEUR_MODE_A, ctx.dp)[0]
    text = _plan(ctx, config).get(CUDNN_ATTR_EXECUTION_PLAN_JSON_REPRESENTATION, CUDNN_TYPE_CHAR)
    assert '"mode":"CUDNN_CONVOLUTION"' in text
    assert '"mode":"CUDNN_CROSS_CORRELATION"' in _plan(ctx).get(CUDNN_ATTR_EXECUTION_PLAN_JSON_REPRESENTATION,
                                                                CUDNN_TYPE_CHAR)


def test_plan_round_trips_through_its_json(ctx):
    """A plan deserialized from its JSON (plus DEVICEPROP or HANDLE) needs no engine config."""
    text = _plan(ctx).get(CUDNN_ATTR_EXECUTION_PLAN_JSON_REPRESENTATION, CUDNN_TYPE_CHAR)
    plan = cb.Descriptor(CUDNN_BACKEND_EXECUTION_PLAN_DESCRIPTOR)
    plan.set(CUDNN_ATTR_EXECUTION_PLAN_JSON_REPRESENTATION, CUDNN_TYPE_CHAR, text.encode())
    plan.set(CUDNN_ATTR_EXECUTION_PLAN_DEVICEPROP, B, ctx.dp)
    # works today with check_required=False (never without DEVICEPROP/HANDLE: cuDNN 9.19 then crashes)
    twin = cb.Descriptor(CUDNN_BACKEND_EXECUTION_PLAN_DESCRIPTOR)
    twin.set(CUDNN_ATTR_EXECUTION_PLAN_JSON_REPRESENTATION, CUDNN_TYPE_CHAR, text)
    twin.set(CUDNN_ATTR_EXECUTION_PLAN_DEVICEPROP, B, ctx.dp)
    twin.finalize(check_required=False)
    assert twin.get(CUDNN_ATTR_EXECUTION_PLAN_JSON_REPRESENTATION, CUDNN_TYPE_CHAR) == text
    [cfg] = twin.get(CUDNN_ATTR_EXECUTION_PLAN_ENGINE_CONFIG, B)
    assert cfg.descriptor_type is CUDNN_BACKEND_ENGINECFG_DESCRIPTOR and cfg.finalized
    plan.finalize()
    assert plan.get(CUDNN_ATTR_EXECUTION_PLAN_JSON_REPRESENTATION, CUDNN_TYPE_CHAR) == text


CRASHERS = {
    # cuDNN 9.19 dereferences something invalid on these gets and kills the process (SIGSEGV)
    "ragged_offset": (
        "t = gg.tensor(1, [4, 8, 16, 64], [8192, 64, 512, 1])\n"
        "t.get(cb.CUDNN_ATTR_TENSOR_RAGGED_OFFSET_DESC, cb.CUDNN_TYPE_BACKEND_DESCRIPTOR)\n"),
    # IS_SAME_TOPOLOGY is a query: the other graph goes *in* through arrayOfElements and the answer
    # comes back as a bool in the first byte of elementCount; a plain get (count query) crashes.
    "is_same_topology": (
        "g = gg.notebook_conv_graph()\n"
        "g.get(cb.CUDNN_ATTR_OPERATIONGRAPH_IS_SAME_TOPOLOGY, cb.CUDNN_TYPE_BACKEND_DESCRIPTOR)\n"),
}


@pytest.mark.parametrize("which", sorted(CRASHERS))
def test_get_never_crashes_the_process(which):
    """cuDNN 9.19 crashes (SIGSEGV) on these gets; the checked get refuses them first."""
    code = ("import cudnn_backend as cb\nfrom tests.helpers import generic_graphs as gg\ntry:\n"
            + "".join("    " + line + "\n" for line in CRASHERS[which].splitlines())
            + "except Exception as e:\n    print('refused', type(e).__name__)\n")
    out = run_python(code, timeout=120)
    assert out.returncode == 0, out.describe()
    assert out.stdout.strip() == "refused CudnnUnsafeCallError"


def test_plan_from_json_without_handle_or_deviceprop_is_refused(ctx):
    """cuDNN 9.19 crashes deserializing a plan with neither a handle nor a device profile."""
    text = _plan(ctx).get(CUDNN_ATTR_EXECUTION_PLAN_JSON_REPRESENTATION, CUDNN_TYPE_CHAR)
    plan = cb.Descriptor(CUDNN_BACKEND_EXECUTION_PLAN_DESCRIPTOR)
    plan.set(CUDNN_ATTR_EXECUTION_PLAN_JSON_REPRESENTATION, CUDNN_TYPE_CHAR, text)
    with pytest.raises(cb.CudnnUnsafeCallError, match="needs CUDNN_ATTR_EXECUTION_PLAN_HANDLE or"):
        plan.finalize()
    with pytest.raises(ValueError, match="set CUDNN_ATTR_EXECUTION_PLAN_ENGINE_CONFIG, or"):
        cb.Descriptor(CUDNN_BACKEND_EXECUTION_PLAN_DESCRIPTOR).finalize()


def test_is_same_topology(ctx):
    a, b = gg.notebook_conv_graph(), gg.notebook_conv_graph()
    other = gg.notebook_conv_graph(k=16)
    assert cb.is_same_topology(a, b) is True
    assert isinstance(cb.is_same_topology(a, other), bool)
    with pytest.raises(TypeError, match="two finalized"):
        cb.is_same_topology(a, gg.tensor(1, [1, 1], [1, 1]))
