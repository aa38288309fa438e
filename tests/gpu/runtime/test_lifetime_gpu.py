"""Closing the handle from another thread while execute, populate or update runs: the call holds the handle, the
plan and the pack (one path for all three), so the handle is destroyed by that call as it returns, not under it.

Before, populate_cuda_graph and update_cuda_graph counted only the pack as in use: a handle closed meanwhile was
destroyed while cuDNN was still using it. The same accounting is tested offline in tests/core/test_lifetime.py.
"""
import threading
import time

import pytest

import cudnn_backend as cb
from cudnn_backend.core._resource import _in_flight as in_flight
from cudnn_backend.runtime import memory
from cudnn_backend.runtime.execution import VariantPack, execute, populate_cuda_graph, update_cuda_graph

WAIT_S = 30.0


def _close_while_in_use(handle, plan, pack, call):
    """``call`` in a loop on one thread; another waits until the pack is in use by it, then reads what the call
    holds and closes the handle. Returns (held counts seen, errors of the looping thread other than the closed
    handle's, calls made)."""
    seen, errors, calls = [], [], [0]
    stop = threading.Event()

    def looping():
        deadline = time.monotonic() + WAIT_S
        while not stop.is_set() and time.monotonic() < deadline:
            try:
                call()
                calls[0] += 1
            except ValueError as e:
                if "closed" not in str(e):
                    errors.append(e)
                return
            except BaseException as e:  # noqa: BLE001 - reported by the test
                errors.append(e)
                return

    def closing():
        deadline = time.monotonic() + WAIT_S
        while time.monotonic() < deadline:
            if in_flight(pack):  # the other thread is inside cuDNN now (it released the GIL)
                seen.append((in_flight(handle), in_flight(plan.descriptor), in_flight(pack)))
                handle.close()
                seen.append((handle.closed, in_flight(handle)))
                return
            time.sleep(0)
        stop.set()

    threads = [threading.Thread(target=looping), threading.Thread(target=closing)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    return seen, errors, calls[0]


@pytest.fixture
def native(gpu_kit):
    """A fresh handle (the test closes it), and a plan and pack whose engine supports the native CUDA graph API."""
    kit = gpu_kit
    handle = cb.Handle()
    case = kit.conv_bias_relu_case(kit.PRECISIONS["fp16"].io, "nhwc")
    og = case.build(handle)
    try:
        plan = kit.make_plan(og, handle, require_behavior=("SUPPORTS_CUDA_GRAPH_NATIVE_API",))
    except kit.NoPlan as e:
        handle.close()
        pytest.skip(f"no engine for conv+bias+ReLU supports the native CUDA graph API here: {e}")
    pack = VariantPack(plan, kit.buffers(case))
    yield handle, plan, pack
    handle.close()


@pytest.mark.parametrize("what", ["execute", "populate", "update"])
def test_closing_the_handle_during_a_call_is_done_by_that_call(native, what):
    handle, plan, pack = native
    rt = memory.cudart()
    graphs = []
    if what == "execute":
        def call():
            execute(handle, plan, pack)
    elif what == "populate":
        def call():
            graphs.append(populate_cuda_graph(handle, plan, pack))
    else:
        graphs.append(populate_cuda_graph(handle, plan, pack))

        def call():
            update_cuda_graph(handle, plan, pack, graphs[0])
    try:
        seen, errors, calls = _close_while_in_use(handle, plan, pack, call)
    finally:
        for g in graphs:
            rt.cudaGraphDestroy(g)
    assert not errors, errors
    assert seen, f"the {what} calls ({calls}) were never seen in flight within {WAIT_S} s"
    assert seen[0] == (1, 1, 1), f"{what} in flight held (handle, plan, pack) = {seen[0]}"
    assert seen[1] == (True, 1), "the handle, closed, is left to the call in flight to destroy"
    assert in_flight(handle) == in_flight(plan.descriptor) == in_flight(pack) == 0
    assert cb.core.calls_in_flight() == 0
    with pytest.raises(ValueError, match="closed"):
        call()
