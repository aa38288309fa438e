"""The generic Descriptor (C names only): the notebook graph offline, errors, validation before cuDNN,
lifetime, leaks, threads, logging."""
import gc
import pickle
import sys
import threading

import numpy as np
import pytest

import cudnn_backend as cb
from cudnn_backend import *  # noqa: F403
from cudnn_backend.errors import error_class, make_error

from tests.helpers import generic_graphs as gg
from tests.helpers.crash import run_python
from tests.helpers.env import HAVE_GPU


# ---------------------------------------------------------------------------------------------
# the notebook's conv forward graph, through C names, on CPU
# ---------------------------------------------------------------------------------------------
def test_notebook_conv_graph_finalizes_and_has_engines():
    graph = gg.notebook_conv_graph()
    assert graph.finalized
    [count] = graph.get(CUDNN_ATTR_OPERATIONGRAPH_ENGINE_GLOBAL_COUNT, CUDNN_TYPE_INT64)
    assert count > 0


def test_notebook_conv_heuristics_against_h200_profile(h200_profile_json):
    graph = gg.notebook_conv_graph()
    dp = gg.device_prop(h200_profile_json)
    configs = gg.heuristics(graph, CUDNN_HEUR_MODE_A, dp)
    assert len(configs) >= 1
    assert all(c.descriptor_type == CUDNN_BACKEND_ENGINECFG_DESCRIPTOR and c.finalized for c in configs)
    [engine] = configs[0].get(CUDNN_ATTR_ENGINECFG_ENGINE, CUDNN_TYPE_BACKEND_DESCRIPTOR)
    [index] = engine.get(CUDNN_ATTR_ENGINE_GLOBAL_INDEX, CUDNN_TYPE_INT64)
    assert index >= 0
    fallback = gg.heuristics(graph, CUDNN_HEUR_MODE_FALLBACK, dp)
    assert len(fallback) >= 1


def test_plan_finalizes_offline_and_serializes(h200_profile_json):
    plan = gg.offline_plan(gg.notebook_conv_graph(), gg.device_prop(h200_profile_json))
    text = plan.get(CUDNN_ATTR_EXECUTION_PLAN_JSON_REPRESENTATION, CUDNN_TYPE_CHAR)
    assert text.startswith("{") and len(text) > 100
    [workspace] = plan.get(CUDNN_ATTR_EXECUTION_PLAN_WORKSPACE_SIZE, CUDNN_TYPE_INT64)
    assert workspace >= 0


# ---------------------------------------------------------------------------------------------
# errors
# ---------------------------------------------------------------------------------------------
def test_cudnn_error_carries_status_function_descriptor_attribute_and_message():
    x = cb.Descriptor(CUDNN_BACKEND_TENSOR_DESCRIPTOR)  # nothing set, not finalized
    op = cb.Descriptor(CUDNN_BACKEND_OPERATION_POINTWISE_DESCRIPTOR)
    with pytest.raises(ValueError, match="not finalized"):
        op.set(CUDNN_ATTR_OPERATION_POINTWISE_XDESC, CUDNN_TYPE_BACKEND_DESCRIPTOR, x)
    # a refusal only cuDNN can make: a tensor with mismatched dims and strides
    t = cb.Descriptor(CUDNN_BACKEND_TENSOR_DESCRIPTOR)
    t.set(CUDNN_ATTR_TENSOR_DATA_TYPE, CUDNN_TYPE_DATA_TYPE, CUDNN_DATA_HALF)
    t.set(CUDNN_ATTR_TENSOR_DIMENSIONS, CUDNN_TYPE_INT64, [1, 2, 3, 4])
    t.set(CUDNN_ATTR_TENSOR_STRIDES, CUDNN_TYPE_INT64, [24, 12, 4])
    t.set(CUDNN_ATTR_TENSOR_UNIQUE_ID, CUDNN_TYPE_INT64, 1)
    t.set(CUDNN_ATTR_TENSOR_BYTE_ALIGNMENT, CUDNN_TYPE_INT64, 16)
    with pytest.raises(cb.CudnnBadParamError) as info:
        t.finalize()
    err = info.value
    assert err.status == CUDNN_STATUS_BAD_PARAM or int(err.status) // 1000 == 2
    assert err.function == "cudnnBackendFinalize"
    assert err.descriptor_type == CUDNN_BACKEND_TENSOR_DESCRIPTOR
    assert "CUDNN_BACKEND_TENSOR_DESCRIPTOR" in str(err) and "CUDNN_LOGLEVEL_DBG=3" in str(err)
    assert isinstance(err, cb.CudnnError) and isinstance(err, RuntimeError)
    clone = pickle.loads(pickle.dumps(err))
    assert type(clone) is type(err) and clone.status == err.status and str(clone) == str(err)
    assert clone.descriptor_type == err.descriptor_type and clone.cudnn_message == err.cudnn_message


def test_error_classes_by_category_and_pickling():
    assert error_class(1001) is cb.CudnnNotInitializedError
    assert error_class(2002) is cb.CudnnBadParamError
    assert error_class(3001) is cb.CudnnNotSupportedError
    assert error_class(4000) is cb.CudnnInternalError
    assert error_class(5003) is cb.CudnnExecutionFailedError
    # errors.py imports nothing of the package: callers pass Status members (a plain int stays an int)
    assert make_error(3001, "f").status == 3001 and isinstance(make_error(3001, "f"), cb.CudnnNotSupportedError)
    e = make_error(cb.Status(3001), "cudnnBackendFinalize", CUDNN_BACKEND_OPERATIONGRAPH_DESCRIPTOR,
                   CUDNN_ATTR_OPERATIONGRAPH_OPS, "no engine")
    assert e.status is CUDNN_STATUS_NOT_SUPPORTED_GRAPH_PATTERN
    assert "CUDNN_ATTR_OPERATIONGRAPH_OPS" in str(e) and "no engine" in str(e)
    for err in [e, cb.CudnnLibraryNotFoundError("x"), cb.CudnnFunctionNotFoundError("f", "9.23.0", "9.19.0"),
                cb.CudnnVersionError("N", "9.22.0", "9.19.0", "ctx")]:
        clone = pickle.loads(pickle.dumps(err))
        assert type(clone) is type(err) and str(clone) == str(err)


@pytest.mark.parametrize("call, exc, message", [
    (lambda d: d.set("CUDNN_ATTR_TENSOR_UNIQUE_ID", "CUDNN_TYPE_INT64", "seven"), TypeError, "expected an integer"),
    (lambda d: d.set(CUDNN_ATTR_TENSOR_UNIQUE_ID, CUDNN_TYPE_INT64, [1, 2]), ValueError, "element"),
    (lambda d: d.set(CUDNN_ATTR_TENSOR_UNIQUE_ID, CUDNN_TYPE_FLOAT, 1.0), TypeError, "takes attribute type"),
    (lambda d: d.set(CUDNN_ATTR_CONVOLUTION_COMP_TYPE, CUDNN_TYPE_DATA_TYPE, CUDNN_DATA_HALF), ValueError,
     "attribute of CUDNN_BACKEND_CONVOLUTION_DESCRIPTOR, not of CUDNN_BACKEND_TENSOR_DESCRIPTOR"),
    (lambda d: d.set(CUDNN_ATTR_TENSOR_DATA_TYPE, CUDNN_TYPE_DATA_TYPE, 12345), ValueError, "not a valid DataType"),
    (lambda d: d.set(CUDNN_ATTR_TENSOR_IS_VIRTUAL, CUDNN_TYPE_BOOLEAN, "yes"), TypeError, "expected a bool"),
    (lambda d: d.set(99999, CUDNN_TYPE_INT64, 1), ValueError, "not a valid AttributeName"),
    (lambda d: d.set(CUDNN_ATTR_TENSOR_UNIQUE_ID, 999, 1), TypeError, "takes attribute type CUDNN_TYPE_INT64, not 999"),
    (lambda d: d.set(CUDNN_ATTR_TENSOR_UNIQUE_ID, -1, 1), ValueError, "not a valid AttributeType"),
    (lambda d: d.set(CUDNN_ATTR_TENSOR_UNIQUE_ID, 54, 1), TypeError, "takes attribute type CUDNN_TYPE_INT64, not 54"),
    (lambda d: d.get(CUDNN_ATTR_TENSOR_UNIQUE_ID, 54), TypeError, "takes attribute type CUDNN_TYPE_INT64, not 54"),
    (lambda d: d.get(CUDNN_ATTR_TENSOR_UNIQUE_ID, CUDNN_TYPE_INT64, count=-1), ValueError, r"count: -1 is below the minimum 0"),
    (lambda d: d.finalize(), ValueError, "required attribute"),
])
def test_python_side_mistakes_raise_before_cudnn(call, exc, message):
    d = cb.Descriptor(CUDNN_BACKEND_TENSOR_DESCRIPTOR)
    with pytest.raises(exc, match=message):
        call(d)


def test_handle_attribute_takes_only_handle_objects():
    plan = cb.Descriptor(CUDNN_BACKEND_DEVICEPROP_DESCRIPTOR)
    with pytest.raises(TypeError, match="cudnn_backend.Handle"):
        plan.set(CUDNN_ATTR_DEVICEPROP_HANDLE, CUDNN_TYPE_HANDLE, 0x1234)


def test_wrong_descriptor_type_child_is_refused_before_cudnn():
    # cuDNN 9.19 aborts the process on this; we must refuse first
    conv = gg.convolution()
    op = cb.Descriptor(CUDNN_BACKEND_OPERATION_CONVOLUTION_FORWARD_DESCRIPTOR)
    with pytest.raises(TypeError, match="takes CUDNN_BACKEND_TENSOR_DESCRIPTOR, element 0 is a "
                                        "CUDNN_BACKEND_CONVOLUTION_DESCRIPTOR"):
        op.set(CUDNN_ATTR_OPERATION_CONVOLUTION_FORWARD_X, CUDNN_TYPE_BACKEND_DESCRIPTOR, conv)


def test_get_only_attribute_cannot_be_set():
    cfg = cb.Descriptor(CUDNN_BACKEND_ENGINECFG_DESCRIPTOR)
    with pytest.raises(ValueError, match="get-only"):
        cfg.set(CUDNN_ATTR_ENGINECFG_WORKSPACE_SIZE, CUDNN_TYPE_INT64, 0)


# ---------------------------------------------------------------------------------------------
# lifetime
# ---------------------------------------------------------------------------------------------
def test_children_stay_alive_after_caller_drops_them(h200_profile_json):
    graph = gg.notebook_conv_graph()  # every tensor/op reference is dropped by the builder
    gc.collect()
    [op] = graph.children[CUDNN_ATTR_OPERATIONGRAPH_OPS]
    x = op.children[CUDNN_ATTR_OPERATION_CONVOLUTION_FORWARD_X][0]
    assert not x.closed and x.finalized
    # and the graph still works: heuristics over it
    assert gg.heuristics(graph, CUDNN_HEUR_MODE_A, gg.device_prop(h200_profile_json))


def test_close_twice_and_use_after_close():
    d = cb.Descriptor(CUDNN_BACKEND_TENSOR_DESCRIPTOR)
    assert not d.closed and d.ptr != 0
    d.close()
    d.close()
    assert d.closed and d.ptr == 0
    with pytest.raises(ValueError, match="closed"):
        d.set(CUDNN_ATTR_TENSOR_UNIQUE_ID, CUDNN_TYPE_INT64, 1)
    with pytest.raises(ValueError, match="closed"):
        d.get(CUDNN_ATTR_TENSOR_UNIQUE_ID, CUDNN_TYPE_INT64)
    with pytest.raises(ValueError, match="closed"):
        d.finalize()
    parent = cb.Descriptor(CUDNN_BACKEND_OPERATIONGRAPH_DESCRIPTOR)
    with pytest.raises(ValueError, match="closed"):
        parent.set(CUDNN_ATTR_OPERATIONGRAPH_OPS, CUDNN_TYPE_BACKEND_DESCRIPTOR, [d])


def test_context_manager_and_repr():
    with cb.Descriptor("CUDNN_BACKEND_TENSOR_DESCRIPTOR") as d:
        assert "CUDNN_BACKEND_TENSOR_DESCRIPTOR" in repr(d) and "not finalized" in repr(d)
        assert d.descriptor_type is CUDNN_BACKEND_TENSOR_DESCRIPTOR
    assert d.closed and "closed" in repr(d)


def test_destruction_at_interpreter_shutdown():
    code = ("import cudnn_backend as cb\n"
            "from tests.helpers import generic_graphs as gg\n"
            "g = gg.notebook_conv_graph()\n"
            "keep = [cb.Descriptor(cb.CUDNN_BACKEND_TENSOR_DESCRIPTOR) for _ in range(100)]\n"
            "cycle = [g]; cycle.append(cycle)\n"
            "print('ok')\n")
    out = run_python(code)
    assert out.returncode == 0 and out.stdout.strip() == "ok", out.describe()


# ---------------------------------------------------------------------------------------------
# leaks and threads
# ---------------------------------------------------------------------------------------------
def _rss_kib():
    with open("/proc/self/status") as f:
        for line in f:
            if line.startswith("VmRSS:"):
                return int(line.split()[1])


def _make_and_drop(n):
    for i in range(n):
        t = cb.Descriptor(CUDNN_BACKEND_TENSOR_DESCRIPTOR)
        t.set(CUDNN_ATTR_TENSOR_DATA_TYPE, CUDNN_TYPE_DATA_TYPE, CUDNN_DATA_FLOAT)
        t.set(CUDNN_ATTR_TENSOR_DIMENSIONS, CUDNN_TYPE_INT64, [1, 2, 3, 4])
        t.set(CUDNN_ATTR_TENSOR_STRIDES, CUDNN_TYPE_INT64, [24, 12, 4, 1])
        t.set(CUDNN_ATTR_TENSOR_UNIQUE_ID, CUDNN_TYPE_INT64, i)
        t.set(CUDNN_ATTR_TENSOR_BYTE_ALIGNMENT, CUDNN_TYPE_INT64, 16)
        t.finalize()
        t.get(CUDNN_ATTR_TENSOR_DIMENSIONS, CUDNN_TYPE_INT64)


def test_no_leak_100k_descriptors():
    _make_and_drop(20_000)  # warm up allocator pools and caches
    gc.collect()
    before = _rss_kib()
    _make_and_drop(100_000)
    gc.collect()
    grown = _rss_kib() - before
    assert grown <= 1024, f"resident memory grew by {grown} KiB over 100,000 descriptors"


def test_threads_build_and_finalize_concurrently(h200_profile_json):
    errors = []

    def work():
        try:
            for _ in range(5):
                graph = gg.notebook_conv_graph()
                assert graph.get(CUDNN_ATTR_OPERATIONGRAPH_ENGINE_GLOBAL_COUNT, CUDNN_TYPE_INT64)[0] > 0
            _make_and_drop(500)
        except BaseException as e:  # pragma: no cover - reported below
            errors.append(e)

    threads = [threading.Thread(target=work) for _ in range(6)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert not errors, errors


# ---------------------------------------------------------------------------------------------
# logging
# ---------------------------------------------------------------------------------------------
def test_logging_routes_cudnn_messages_to_python():
    code = ("import logging, cudnn_backend as cb\n"
            "records = []\n"
            "class H(logging.Handler):\n"
            "    def emit(self, r): records.append(r)\n"
            "logging.getLogger('cudnn_backend').addHandler(H()); logging.getLogger('cudnn_backend').setLevel(1)\n"
            "assert not cb.logging_enabled()\n"
            "cb.enable_logging(logging.INFO)\n"
            "t = cb.Descriptor(cb.CUDNN_BACKEND_TENSOR_DESCRIPTOR)\n"
            "try:\n    t.finalize(check_required=False)\nexcept cb.CudnnError:\n    pass\n"
            "cb.disable_logging()\n"
            "print(len(records), records and records[0].name, records and records[0].levelname)\n")
    out = run_python(code, env={"CUDNN_LOGLEVEL_DBG": "3", "CUDNN_LOGDEST_DBG": "stderr"})
    assert out.returncode == 0, out.describe()
    n, name, level = out.stdout.split()
    assert int(n) >= 1 and name == "cudnn_backend.cudnn" and level in ("ERROR", "WARNING", "INFO", "CRITICAL")


def test_pointer_attributes_cudnn_would_misread_are_refused():
    vp = cb.Descriptor(CUDNN_BACKEND_VARIANT_PACK_DESCRIPTOR)
    for attr in (CUDNN_ATTR_VARIANT_PACK_OVERRIDE_SHAPES, CUDNN_ATTR_VARIANT_PACK_OVERRIDE_STRIDES):
        with pytest.raises(cb.CudnnUnsafeCallError, match="std::vector"):
            vp.set(attr, CUDNN_TYPE_VOID_PTR, 0x1000)


def test_host_data_pointers_take_bytes_not_raw_ints():
    # CUDNN_ATTR_TENSOR_CONSTANT_VALUE is host data cuDNN reads through a pointer: the descriptor keeps a copy
    spec = cb.schema.attribute(CUDNN_ATTR_TENSOR_CONSTANT_VALUE)
    assert spec.host_data
    t = cb.Descriptor(CUDNN_BACKEND_TENSOR_DESCRIPTOR)
    value = np.float32(2.5)
    if cb.get_version() < 92200:  # every host-data attribute is newer than 9.19: refused before any copy
        assert spec.since == "9.22.0"
        with pytest.raises(cb.CudnnVersionError, match=r"CUDNN_ATTR_TENSOR_CONSTANT_VALUE.*needs cuDNN >= 9\.22 \(loaded: 9\.\d+\)"):
            t.set(CUDNN_ATTR_TENSOR_CONSTANT_VALUE, CUDNN_TYPE_VOID_PTR, value)
        assert CUDNN_ATTR_TENSOR_CONSTANT_VALUE not in t.set_attributes
        return
    # a constant value belongs to a by-value tensor: cuDNN 9.28 refuses it before IS_BY_VALUE ("!isByValue")
    t.set(CUDNN_ATTR_TENSOR_IS_BY_VALUE, CUDNN_TYPE_BOOLEAN, True)
    t.set(CUDNN_ATTR_TENSOR_CONSTANT_VALUE, CUDNN_TYPE_VOID_PTR, value)
    kept = t.value_of(CUDNN_ATTR_TENSOR_CONSTANT_VALUE)
    assert isinstance(kept, np.ndarray) and bytes(kept) == value.tobytes()
    for raw in (0x1234, None):
        with pytest.raises(TypeError, match="not a raw pointer"):
            t.set(CUDNN_ATTR_TENSOR_CONSTANT_VALUE, CUDNN_TYPE_VOID_PTR, raw)
    with pytest.raises(ValueError, match="empty host data"):
        t.set(CUDNN_ATTR_TENSOR_CONSTANT_VALUE, CUDNN_TYPE_VOID_PTR, b"")
    with pytest.raises(TypeError, match="bytes-like host data"):
        t.set(CUDNN_ATTR_TENSOR_CONSTANT_VALUE, CUDNN_TYPE_VOID_PTR, object())


def test_out_of_range_numbers_are_value_errors_not_overflow():
    t = cb.Descriptor(CUDNN_BACKEND_TENSOR_DESCRIPTOR)
    for bad in (2 ** 63, -(2 ** 63) - 1, 10 ** 30):
        with pytest.raises(ValueError, match="does not fit in 64 bits"):
            t.set(CUDNN_ATTR_TENSOR_UNIQUE_ID, CUDNN_TYPE_INT64, bad)
    hs = cb.Descriptor(CUDNN_BACKEND_ENGINEHEUR_DESCRIPTOR)
    with pytest.raises(ValueError, match="fit in 32 bits"):
        hs.set(CUDNN_ATTR_ENGINEHEUR_SM_COUNT_TARGET, CUDNN_TYPE_INT32, 2 ** 40)
    conv = cb.Descriptor(CUDNN_BACKEND_OPERATION_CONVOLUTION_FORWARD_DESCRIPTOR)
    with pytest.raises(ValueError, match="does not fit in a double"):
        conv.set(CUDNN_ATTR_OPERATION_CONVOLUTION_FORWARD_ALPHA, CUDNN_TYPE_DOUBLE, 10 ** 400)
    g = gg.notebook_conv_graph()
    for count in (2 ** 31 + 1, 2 ** 64):
        with pytest.raises(ValueError, match="too large"):
            g.get(CUDNN_ATTR_OPERATIONGRAPH_ENGINE_GLOBAL_COUNT, CUDNN_TYPE_INT64, count=count)


def test_engine_config_without_engine_is_refused_before_cudnn():
    cfg = cb.Descriptor(CUDNN_BACKEND_ENGINECFG_DESCRIPTOR)
    with pytest.raises(cb.CudnnUnsafeCallError, match="without CUDNN_ATTR_ENGINECFG_ENGINE"):
        cfg.finalize(check_required=False)


def test_concat_inputs_get_is_refused():
    op = cb.Descriptor(CUDNN_BACKEND_OPERATION_CONCAT_DESCRIPTOR)
    with pytest.raises(cb.CudnnUnsafeCallError, match="crashes cuDNN"):
        op.get(CUDNN_ATTR_OPERATION_CONCAT_INPUT_DESCS, CUDNN_TYPE_BACKEND_DESCRIPTOR, count=1)


def _plan_json(h200_profile_json):
    plan = gg.offline_plan(gg.notebook_conv_graph(), gg.device_prop(h200_profile_json))
    return plan.get(CUDNN_ATTR_EXECUTION_PLAN_JSON_REPRESENTATION, CUDNN_TYPE_CHAR)


def test_serialized_graphs_cudnn_cannot_read_are_refused(h200_profile_json):
    import json

    text = _plan_json(h200_profile_json)
    plan = cb.Descriptor(CUDNN_BACKEND_EXECUTION_PLAN_DESCRIPTOR)
    plan.set(CUDNN_ATTR_EXECUTION_PLAN_JSON_REPRESENTATION, CUDNN_TYPE_CHAR, text)  # a real plan passes
    doc = json.loads(text)
    doc["operationGraph"]["tensors"][0]["name"] = "abc"  # cuDNN 9.19: std::stoll throws -> abort
    with pytest.raises(cb.errors.JsonCheckError, match=r'tensors\[0\]\.name: .*"abc"') as info:
        cb.Descriptor(CUDNN_BACKEND_EXECUTION_PLAN_DESCRIPTOR).set(
            CUDNN_ATTR_EXECUTION_PLAN_JSON_REPRESENTATION, CUDNN_TYPE_CHAR, json.dumps(doc))
    assert info.value.path == "operationGraph.tensors[0].name" and isinstance(info.value, cb.CudnnBackendError)
    doc = json.loads(text)
    doc["operationGraph"]["nodes"] = 3  # cuDNN 9.19: segfault
    kc = cb.Descriptor(CUDNN_BACKEND_KERNEL_CACHE_DESCRIPTOR)
    with pytest.raises(cb.errors.JsonCheckError, match="kernel cache JSON: operationGraph.nodes: expected an array"):
        kc.set(CUDNN_ATTR_KERNEL_CACHE_JSON_REPRESENTATION, CUDNN_TYPE_CHAR, json.dumps(doc))
    # not JSON at all: refused too, before cuDNN sees it
    broken = cb.Descriptor(CUDNN_BACKEND_EXECUTION_PLAN_DESCRIPTOR)
    with pytest.raises(cb.errors.JsonCheckError, match="plan JSON: not valid JSON"):
        broken.set(CUDNN_ATTR_EXECUTION_PLAN_JSON_REPRESENTATION, CUDNN_TYPE_CHAR, text[: len(text) // 2])
    assert CUDNN_ATTR_EXECUTION_PLAN_JSON_REPRESENTATION not in broken.set_attributes


def test_negative_element_count_from_cudnn_is_refused_not_a_crash():
    # cuDNN 9.19 reports -1 paddings for a RESAMPLE descriptor finalized without SPATIAL_DIMS; that -1 once took
    # the interpreter down (the fuzz found it): now every path refuses it
    code = """
        import cudnn_backend as cb
        d = cb.Descriptor(cb.CUDNN_BACKEND_RESAMPLE_DESCRIPTOR)
        d.finalize(check_required=False)
        for call in (lambda: d.element_count(cb.CUDNN_ATTR_RESAMPLE_PRE_PADDINGS, cb.CUDNN_TYPE_FRACTION),
                     lambda: d.get(cb.CUDNN_ATTR_RESAMPLE_PRE_PADDINGS, cb.CUDNN_TYPE_FRACTION),
                     lambda: d.get(cb.CUDNN_ATTR_RESAMPLE_WINDOW_DIMS, cb.CUDNN_TYPE_INT64)):
            try:
                call()
            except cb.CudnnBackendError as e:
                print(type(e).__name__, "reports -1 elements" in str(e) or str(e).splitlines()[0])
        """
    out = run_python(code, timeout=120)
    assert out.returncode == 0, out.describe()
    assert out.stdout.split("\n")[:2] == ["CudnnUnsafeCallError True"] * 2, out.stdout


def test_never_created_child_and_unknown_child_type_name_the_problem():
    never = cb.Descriptor.__new__(cb.Descriptor)
    op = cb.Descriptor(CUDNN_BACKEND_OPERATION_POINTWISE_DESCRIPTOR)
    with pytest.raises(ValueError, match=r"XDESC: element 0 \(descriptor type -1\) is closed"):
        op.set(CUDNN_ATTR_OPERATION_POINTWISE_XDESC, CUDNN_TYPE_BACKEND_DESCRIPTOR, never)
    g = gg.notebook_conv_graph()
    with pytest.raises(TypeError, match="not descriptor type 999"):
        g.get(CUDNN_ATTR_OPERATIONGRAPH_OPS, CUDNN_TYPE_BACKEND_DESCRIPTOR, count=1, descriptor_type=999)


def test_init_twice_is_refused_with_the_packages_error():
    d = cb.Descriptor(CUDNN_BACKEND_TENSOR_DESCRIPTOR)
    with pytest.raises(cb.CudnnUnsafeCallError, match="this CUDNN_BACKEND_TENSOR_DESCRIPTOR is made already"):
        d.__init__(CUDNN_BACKEND_TENSOR_DESCRIPTOR)
    assert not d.closed and d.descriptor_type == CUDNN_BACKEND_TENSOR_DESCRIPTOR
    d.close()
    with pytest.raises(cb.CudnnUnsafeCallError, match="made already"):  # closed: never made again
        d.__init__(CUDNN_BACKEND_POINTWISE_DESCRIPTOR)
    assert d.closed


def test_every_way_of_calling_the_constructor_makes_or_refuses_as_init_does():
    made = [cb.Descriptor(CUDNN_BACKEND_TENSOR_DESCRIPTOR), cb.Descriptor("CUDNN_BACKEND_TENSOR_DESCRIPTOR"),
            cb.Descriptor(int(CUDNN_BACKEND_TENSOR_DESCRIPTOR)),
            cb.Descriptor(descriptor_type=CUDNN_BACKEND_TENSOR_DESCRIPTOR),
            cb.Descriptor(*[CUDNN_BACKEND_TENSOR_DESCRIPTOR]), cb.Descriptor(**{"descriptor_type": 17})]
    for d in made:
        assert type(d) is cb.Descriptor and not d.closed and not d.finalized
        assert d.descriptor_type == CUDNN_BACKEND_TENSOR_DESCRIPTOR
    with pytest.raises(TypeError, match=r"exactly 1 positional argument \(0 given\)"):
        cb.Descriptor()
    with pytest.raises(TypeError, match=r"exactly 1 positional argument \(2 given\)"):
        cb.Descriptor(CUDNN_BACKEND_TENSOR_DESCRIPTOR, CUDNN_BACKEND_TENSOR_DESCRIPTOR)
    with pytest.raises(TypeError, match="unexpected keyword argument 'kind'"):
        cb.Descriptor(CUDNN_BACKEND_TENSOR_DESCRIPTOR, kind=1)
    with pytest.raises(ValueError, match="descriptor_type: 999 is not a valid DescriptorType"):
        cb.Descriptor(999)
    with pytest.raises(ValueError, match="descriptor_type: 'NOPE' is not a name of DescriptorType"):
        cb.Descriptor("NOPE")

    class Mine(cb.Descriptor):  # a subclass is made the usual way (tp_new, then its own __init__)
        def __init__(self):
            super().__init__(CUDNN_BACKEND_POINTWISE_DESCRIPTOR)
            self.note = "mine"

    mine = Mine()
    assert type(mine) is Mine and mine.note == "mine" and mine.descriptor_type == CUDNN_BACKEND_POINTWISE_DESCRIPTOR
    assert type(cb.typed.Pointwise(mode=CUDNN_POINTWISE_ADD)) is cb.typed.Pointwise

    def refs():
        return sys.getrefcount(CUDNN_BACKEND_TENSOR_DESCRIPTOR), sys.getrefcount(cb.Descriptor)

    before = refs()
    for _ in range(1000):
        cb.Descriptor(CUDNN_BACKEND_TENSOR_DESCRIPTOR)
        with pytest.raises(ValueError):
            cb.Descriptor(-5)
    assert refs() == before


def test_every_way_of_calling_set_sets_or_refuses_as_the_def_does():
    """``d.set(name, type, values)`` with the enum members is served without Cython's argument parsing; ints, names,
    keywords, a subclass and every refusal take the def method, with its errors, name, docstring and signature."""
    import inspect

    class Mine(cb.Descriptor):
        pass

    t = cb.Descriptor(CUDNN_BACKEND_TENSOR_DESCRIPTOR)
    mine = Mine(CUDNN_BACKEND_TENSOR_DESCRIPTOR)
    uid, int64 = CUDNN_ATTR_TENSOR_UNIQUE_ID, CUDNN_TYPE_INT64
    forms = [(t, lambda v: t.set(uid, int64, v)), (t, lambda v: t.set(int(uid), int(int64), v)),
             (t, lambda v: t.set("CUDNN_ATTR_TENSOR_UNIQUE_ID", "CUDNN_TYPE_INT64", v)),
             (t, lambda v: t.set(attribute=uid, attribute_type=int64, values=v)),
             (t, lambda v: t.set(uid, int64, values=v)), (t, lambda v: cb.Descriptor.set(t, uid, int64, v)),
             (mine, lambda v: mine.set(uid, int64, v)), (mine, lambda v: mine.set(uid, attribute_type=int64, values=v))]
    for value, (d, form) in enumerate(forms, start=10):
        assert form(value) is d and d.value_of(uid) == value
    refused = [(TypeError, "positional argument|takes exactly|missing", lambda: t.set(uid, int64)),
               (TypeError, "positional argument|takes exactly|at most", lambda: t.set(uid, int64, 1, 2)),
               (TypeError, "unexpected keyword|invalid keyword", lambda: t.set(uid, int64, 1, kind=1)),
               (TypeError, "descriptor 'set'|requires a", lambda: cb.Descriptor.set(object(), uid, int64, 1)),
               (ValueError, "is an attribute of CUDNN_BACKEND_CONVOLUTION_DESCRIPTOR",
                lambda: t.set(CUDNN_ATTR_CONVOLUTION_COMP_TYPE, CUDNN_TYPE_DATA_TYPE, CUDNN_DATA_FLOAT)),
               (TypeError, "takes attribute type", lambda: t.set(uid, CUDNN_TYPE_FLOAT, 1.0)),
               (TypeError, "takes attribute type CUDNN_TYPE_INT64, not 999", lambda: t.set(uid, 999, 1))]

    def run_all():
        for value, (d, form) in enumerate(forms, start=10):
            form(value)
        for error, message, call in refused:
            with pytest.raises(error, match=message):
                call()

    run_all()
    before = [sys.getrefcount(x) for x in (t, mine, uid, int64)]
    for _ in range(200):
        run_all()
    assert [sys.getrefcount(x) for x in (t, mine, uid, int64)] == before
    assert str(inspect.signature(cb.Descriptor.set)) == "(self, /, attribute, attribute_type, values)"
    assert cb.Descriptor.set.__doc__.startswith("cudnnBackendSetAttribute")
    assert cb.Descriptor.set.__qualname__ == "Descriptor.set"


def test_the_fast_entry_points_keep_their_names_and_docstrings_through_interpreter_exit():
    """A builtin put in front of a def (execute, Descriptor.set) outlives the module globals at exit: what it names
    itself with must too (with the debug allocator, freed memory would read as 0xDD bytes)."""
    import os
    import subprocess

    script = (
        "import os, sys\n"
        "import cudnn_backend as cb\n"
        "from cudnn_backend.runtime import execution\n"
        "class Late:\n"
        "    def __init__(self):\n"
        "        self.write, self.execute, self.set = os.write, execution.execute, cb.Descriptor.set\n"
        "    def __del__(self):\n"
        "        text = '|'.join((self.execute.__name__, repr(self.execute), self.execute.__doc__[:9],\n"
        "                         self.set.__doc__[:9], str(self.set.__text_signature__)))\n"
        "        self.write(1, text.encode('ascii', 'backslashreplace'))\n"
        "sys.late = Late()\n")
    done = subprocess.run([sys.executable, "-c", script], capture_output=True, text=True, timeout=120,
                          env=dict(os.environ, PYTHONMALLOC="debug"))
    assert done.returncode == 0, done.stderr[-2000:]
    assert done.stdout == ("execute|<built-in function execute>|Run ``pla|cudnnBack|"
                           "($self, attribute, attribute_type, values)")


def test_validation_cache_never_admits_floats_or_bools():
    t = cb.Descriptor(CUDNN_BACKEND_TENSOR_DESCRIPTOR)
    t.set(CUDNN_ATTR_TENSOR_UNIQUE_ID, CUDNN_TYPE_INT64, 5)  # warms the caches with the int forms
    t.set(int(CUDNN_ATTR_TENSOR_UNIQUE_ID), "CUDNN_TYPE_INT64", 5)
    with pytest.raises(TypeError):
        t.set(float(CUDNN_ATTR_TENSOR_UNIQUE_ID), "CUDNN_TYPE_INT64", 5)
    with pytest.raises(TypeError):
        t.set(float(CUDNN_ATTR_TENSOR_UNIQUE_ID), float(CUDNN_TYPE_INT64), 5)
    with pytest.raises(TypeError):
        t.get(float(CUDNN_ATTR_TENSOR_UNIQUE_ID), CUDNN_TYPE_INT64)


def test_bools_and_other_enums_are_not_descriptor_types_or_attributes():
    cb.Descriptor(1)  # warm the validated-type cache with the int form
    with pytest.raises(TypeError):
        cb.Descriptor(True)
    with pytest.raises(TypeError, match="expected a DescriptorType member, its C name or an int, not DataType"):
        cb.Descriptor(CUDNN_DATA_FLOAT)
    conv = cb.Descriptor(CUDNN_BACKEND_CONVOLUTION_DESCRIPTOR)
    with pytest.raises(TypeError, match="expected a DataType member, not ConvolutionMode"):
        conv.set(CUDNN_ATTR_CONVOLUTION_COMP_TYPE, CUDNN_TYPE_DATA_TYPE, CUDNN_CROSS_CORRELATION)
    with pytest.raises(TypeError, match="attribute: expected a AttributeName member, its C name or an int, not DataType"):
        conv.set(CUDNN_DATA_FLOAT, CUDNN_TYPE_DATA_TYPE, CUDNN_DATA_FLOAT)


def test_never_initialized_handle_reports_closed_and_closes():
    # (a created Handle needs a GPU; its second __init__ is refused with TypeError, see Handle.__init__)
    h = cb.Handle.__new__(cb.Handle)
    assert h.closed and h.ptr == 0
    h.close()
    with pytest.raises(ValueError, match="closed"):
        h.stream = 0


@pytest.mark.skipif(HAVE_GPU, reason="needs a machine without a GPU")
def test_handle_without_a_gpu_is_no_device_error():
    """Handle() without a GPU raised CudnnNotInitializedError (cuDNN's status); it is the package's
    NoDeviceError, naming the way out (a device profile)."""
    with pytest.raises(cb.NoDeviceError, match=r"no GPU is visible here .*device_profile='h200'") as err:
        cb.Handle()
    assert not isinstance(err.value, cb.CudnnError)


def test_set_returns_the_descriptor_so_sets_chain():
    """The README's generic API: ``Descriptor(...).set(...).set(...)``; a typed class's set chains the same."""
    t = cb.Descriptor(CUDNN_BACKEND_TENSOR_DESCRIPTOR).set(CUDNN_ATTR_TENSOR_UNIQUE_ID, CUDNN_TYPE_INT64, 1) \
        .set(CUDNN_ATTR_TENSOR_DATA_TYPE, CUDNN_TYPE_DATA_TYPE, CUDNN_DATA_FLOAT) \
        .set(CUDNN_ATTR_TENSOR_DIMENSIONS, CUDNN_TYPE_INT64, [1, 4, 2, 2]) \
        .set(CUDNN_ATTR_TENSOR_STRIDES, CUDNN_TYPE_INT64, [16, 4, 2, 1]) \
        .set(CUDNN_ATTR_TENSOR_BYTE_ALIGNMENT, CUDNN_TYPE_INT64, 16)
    assert isinstance(t, cb.Descriptor)
    t.finalize()
    assert t.get(CUDNN_ATTR_TENSOR_DIMENSIONS, CUDNN_TYPE_INT64, 4) == [1, 4, 2, 2]
    typed = cb.typed.Tensor(unique_id=2)
    assert typed.set(CUDNN_ATTR_TENSOR_BYTE_ALIGNMENT, CUDNN_TYPE_INT64, 16) is typed


# what core._descriptor held before it was split into one job per file (its stub then): still importable from it
NAMES_BEFORE_THE_SPLIT = (
    "ADDRESS_LIMIT", "AttributeName", "AttributeType", "CudnnBackendError", "CudnnBadParamError", "CudnnError",
    "CudnnShutdownError", "CudnnUnsafeCallError", "CudnnVersionError", "DEBUG_HINT", "Descriptor", "DescriptorType",
    "EXIT_WAIT_SECONDS", "Handle", "INT64_MAX", "INT64_MIN", "KIND_NAMES", "NoDeviceError", "PY_MAX_GET_DESCRIPTORS",
    "PY_MAX_GET_ELEMENTS", "PY_MAX_SET_ELEMENTS", "Resource", "Status", "as_int", "attribute_io", "calls_in_flight",
    "check_available", "choose_type", "clear_error", "format_version", "get_cudart_version", "get_error_string",
    "get_execution_plan_workspace_size", "get_max_device_version", "get_property", "get_version",
    "graph_version_check", "is_available", "is_same_topology", "last_error_string", "make_error", "parse_version",
    "since_of", "unavailable_enumerants", "user_sequence",
)


def test_every_name_the_descriptor_module_had_is_still_there():
    from cudnn_backend.core import _descriptor, _handle, _library, _resource, _status

    missing = [n for n in NAMES_BEFORE_THE_SPLIT if not hasattr(_descriptor, n)]
    assert not missing, missing
    assert _descriptor.Handle is _handle.Handle and _descriptor.Resource is _resource.Resource is cb.core._resource.Resource
    assert _descriptor.get_version is _library.get_version and _descriptor.check_available is _status.check_available
    assert _descriptor.Descriptor is cb.Descriptor and issubclass(cb.Descriptor, _resource.Resource)


def test_a_descriptor_never_made_has_no_type_and_a_closed_one_no_dict():
    never = cb.Descriptor.__new__(cb.Descriptor)
    with pytest.raises(ValueError, match=r"^this Descriptor was never made \(__new__ without __init__\): it has no "
                                         r"descriptor type$"):
        never.descriptor_type
    t = cb.typed.Tensor(data_type=CUDNN_DATA_FLOAT, dimensions=[2, 3], strides=[3, 1], unique_id=7,  # noqa: F405
                        byte_alignment=16)
    t.finalize()
    t.close()
    with pytest.raises(cb.CudnnUnsafeCallError, match=r"^this CUDNN_BACKEND_TENSOR_DESCRIPTOR is closed$"):
        t.to_dict()
    with pytest.raises(ValueError, match=r"^to_dict: the CUDNN_BACKEND_TENSOR_DESCRIPTOR is closed$"):
        cb.typed.introspection.to_dict(t)  # the function names its argument


def test_a_closed_operation_graph_draws_no_empty_table():
    og = cb.patterns.conv_bias_relu().op_graph
    og.close()
    assert str(og) == "<OperationGraph closed>"
    for draw in (og.table, og.to_dot):
        with pytest.raises(cb.CudnnUnsafeCallError, match=r"^this CUDNN_BACKEND_OPERATIONGRAPH_DESCRIPTOR is closed$"):
            draw()


def test_a_descriptor_type_cudnn_declares_but_never_creates_says_so():
    """CUDNN_BACKEND_INTERMEDIATE_INFO_DESCRIPTOR: every release 9.10-9.28 answers HOST_ALLOCATION_FAILED, which
    reads as memory running out."""
    with pytest.raises(cb.CudnnError, match=r"INTERMEDIATE_INFO_DESCRIPTOR(.|\n)*hint: cuDNN declares this descriptor "
                                            r"type but creates none"):
        cb.Descriptor(cb.CUDNN_BACKEND_INTERMEDIATE_INFO_DESCRIPTOR)
