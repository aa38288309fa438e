"""One lifetime for every cuDNN object (``core._resource.Resource``): handles, descriptors, variant packs.

A call that releases the GIL holds what cuDNN reads (the call gate counts it on each object); ``close()`` of an
object in use is done by the last call to return, and what it kept stays alive until then.

The seam, offline: cuDNN's logging callback runs Python code *inside* a cuDNN call in flight (an engine finalize
that cuDNN refuses with a warning). What it does there is what another thread could do at that moment. The same
for execute and the CUDA graph calls, which need a GPU: tests/gpu/runtime/test_lifetime_gpu.py.
"""
import contextlib
import gc
import logging
import weakref

import pytest

import cudnn_backend as cb
from cudnn_backend.core import _gate, _resource, calls_in_flight
from cudnn_backend.graph import Graph
from cudnn_backend.runtime._packing import tensor_specs
from cudnn_backend.runtime.execution import VariantPack, execute, populate_cuda_graph, update_cuda_graph
from cudnn_backend.typed import DeviceProp, Engine, ExecutionPlan

from tests.helpers.offline import h200, offline_plan

in_flight = _resource._in_flight


class Inside:
    """Functions to run from inside the next cuDNN call that logs a message (``run``); their results, or the
    exceptions they raised, in ``results``."""

    def __init__(self):
        self.todo, self.results = [], []

    def run(self, fn):
        self.todo.append(fn)


@pytest.fixture
def inside_cudnn():
    inside = Inside()

    class During(logging.Handler):
        def emit(self, record):
            while inside.todo:
                fn = inside.todo.pop(0)
                try:
                    inside.results.append(fn())
                except Exception as e:  # noqa: BLE001 - the test looks at it
                    inside.results.append(e)

    logger = logging.getLogger("cudnn_backend.cudnn")
    handler, level = During(), logger.level
    logger.addHandler(handler)
    logger.setLevel(logging.DEBUG)
    cb.enable_logging(logging.WARNING)
    try:
        yield inside
    finally:
        cb.disable_logging()
        logger.removeHandler(handler)
        logger.setLevel(level)


def _matmul_graph():
    """A finalized matmul graph whose operations and tensors only the graph descriptor holds."""
    g = Graph("mm")
    a, b = g.tensor([1, 64, 128]), g.tensor([1, 128, 64])
    g.matmul(a, b, output=True)
    og = g.build()
    op = og.values[cb.CUDNN_ATTR_OPERATIONGRAPH_OPS][0]
    return og, weakref.ref(op)


def _first_engine(og, dp, supported):
    """The index of the graph's first engine cuDNN finalizes (``supported``) or refuses, else a skip."""
    count = og.get(cb.CUDNN_ATTR_OPERATIONGRAPH_ENGINE_GLOBAL_COUNT, cb.CUDNN_TYPE_INT64)[0]
    for index in range(count):
        try:
            Engine(operation_graph=og, global_index=index, deviceprop=dp).finalize()
        except cb.CudnnNotSupportedError:
            if not supported:
                return index
        else:
            if supported:
                return index
    pytest.skip(f"no engine of the loaded cuDNN {'supports' if supported else 'refuses'} this matmul")


def _refused_engine(og, dp):
    """An engine cuDNN refuses to finalize, with a warning through the callback: the graph's first engine that does
    not support it (an index past the count is refused before cuDNN is called)."""
    return Engine(operation_graph=og, global_index=_first_engine(og, dp, supported=False), deviceprop=dp)


def test_a_finalize_holds_the_descriptor_and_everything_set_on_it(inside_cudnn):
    dp = DeviceProp(json_representation=h200().deviceprop_json).finalize()
    og, op = _matmul_graph()
    engine = _refused_engine(og, dp)
    inside_cudnn.run(lambda: (in_flight(engine), in_flight(og), in_flight(dp), in_flight(op()), calls_in_flight()))
    with pytest.raises(cb.CudnnNotSupportedError):
        engine.finalize()
    assert inside_cudnn.results == [(1, 1, 1, 1, 1)]
    assert (in_flight(engine), in_flight(og), in_flight(dp), in_flight(op()), calls_in_flight()) == (0, 0, 0, 0, 0)


def test_closing_what_a_call_reads_is_done_when_the_call_returns(inside_cudnn):
    """The graph (and the descriptor being finalized) closed from inside the finalize: closed at once for Python,
    destroyed by the call as it returns, and what the graph kept (its operations) alive until then."""
    dp = DeviceProp(json_representation=h200().deviceprop_json).finalize()
    og, op = _matmul_graph()
    engine = _refused_engine(og, dp)

    def close_them():
        og.close()
        engine.close()
        gc.collect()
        return og.closed, engine.closed, in_flight(og), in_flight(engine), op() is not None

    inside_cudnn.run(close_them)
    with pytest.raises(cb.CudnnNotSupportedError):
        engine.finalize()
    assert inside_cudnn.results == [(True, True, 1, 1, True)]  # the graph's operation was released under cuDNN
    assert og.closed and engine.closed and in_flight(og) == in_flight(engine) == 0 and calls_in_flight() == 0
    del og, engine
    gc.collect()
    assert op() is None  # released with the deferred destroy
    og, _ = _matmul_graph()
    og.close()
    og.close()  # idempotent after a deferred close as well


def test_a_descriptor_in_use_refuses_set_and_finalize(inside_cudnn):
    dp = DeviceProp(json_representation=h200().deviceprop_json).finalize()
    og, _ = _matmul_graph()
    engine = _refused_engine(og, dp)
    inside_cudnn.run(lambda: engine.set(cb.CUDNN_ATTR_ENGINE_GLOBAL_INDEX, cb.CUDNN_TYPE_INT64, 0))
    inside_cudnn.run(lambda: engine.finalize())
    with pytest.raises(cb.CudnnNotSupportedError):
        engine.finalize()
    assert [type(r) for r in inside_cudnn.results] == [cb.CudnnUnsafeCallError] * 2, inside_cudnn.results
    assert "in use by a cuDNN call" in str(inside_cudnn.results[0])
    # free again once the call returned: set is taken, and finalize reaches cuDNN (which may keep an engine it
    # refused refused: its answer, not the package's "in use")
    engine.set(cb.CUDNN_ATTR_ENGINE_GLOBAL_INDEX, cb.CUDNN_TYPE_INT64, _first_engine(og, dp, supported=True))
    with contextlib.suppress(cb.CudnnNotSupportedError):
        engine.finalize()


def test_descriptors_handles_and_packs_share_one_lifetime():
    assert issubclass(cb.Descriptor, _resource.Resource) and issubclass(cb.Handle, _resource.Resource)
    assert issubclass(VariantPack, _resource.Resource) and issubclass(ExecutionPlan, _resource.Resource)
    d = cb.Descriptor(cb.CUDNN_BACKEND_TENSOR_DESCRIPTOR)
    assert weakref.ref(d)() is d and in_flight(d) == 0
    with pytest.raises(TypeError):
        in_flight(None)


def test_calls_refused_before_cuDNN_leave_no_count_behind():
    """execute, populate and update take one path; refused before cuDNN (no handle here) they count nothing."""
    plan = offline_plan()
    specs = tensor_specs(plan)
    bound = sorted(uid for uid, spec in specs.items() if not spec.virtual)
    pack = VariantPack(plan, {uid: 0x10000 * (i + 1) for i, uid in enumerate(bound)}, workspace=0x7770000)
    for call in (lambda: execute(None, plan, pack), lambda: pack.execute(),
                 lambda: populate_cuda_graph(None, plan, pack), lambda: populate_cuda_graph(None, plan, pack, 0x1000),
                 lambda: update_cuda_graph(None, plan, pack, 0x1000)):
        with pytest.raises(ValueError, match="no cuDNN handle"):
            call()
        assert (in_flight(pack), in_flight(plan.descriptor), calls_in_flight()) == (0, 0, 0)
    pack.close()
    assert pack.closed


def test_the_gate_measuring_helper_counts_and_refuses_like_a_call():
    """``_call_gate`` (benchmarks/percall_gate.py measures the gate with it) is enter_call/leave_call themselves."""
    a, b, c = (cb.Descriptor(cb.DescriptorType.CUDNN_BACKEND_TENSOR_DESCRIPTOR) for _ in range(3))
    assert _gate._call_gate(a, b, c, 1000) == 1000
    assert [in_flight(x) for x in (a, b, c)] == [0, 0, 0] and calls_in_flight() == 0
    c.close()
    with pytest.raises(ValueError, match="closed"):
        _gate._call_gate(a, b, c, 1)
    assert [in_flight(x) for x in (a, b)] == [0, 0] and calls_in_flight() == 0
