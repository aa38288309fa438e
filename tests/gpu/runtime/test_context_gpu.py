"""Calls from a thread that never made a CUDA context current (a plain ``threading.Thread``): execute, bind +
execute, the CUDA graph calls and plan building work there, with correct results, as from the thread that made the
handle. The handle records its context when it is made (``Handle.context``) and the calls make it current in a
thread that has none. A thread whose current context is another one keeps it, and a call that fails there says
which device the handle belongs to (in a child process: a second context is made for it).

Before (cuDNN 9.19, H100): execute from such a thread failed with CUDNN_STATUS_NOT_SUPPORTED, CUDA error 201 (invalid
context), at its first launch. The mechanism is tested offline in tests/core/test_context.py.
"""
import json
import os
import subprocess
import sys
import textwrap
import threading

import numpy as np
import pytest

import cudnn_backend as cb
from cudnn_backend.runtime import memory
from cudnn_backend.runtime.execution import VariantPack, execute, populate_cuda_graph

from tests.gpu.kit import conv2d, relu

TOL = 1e-2  # fp16


def current_context() -> int:
    """The calling thread's current CUcontext (0: none), asked of the driver directly."""
    driver = memory.cudriver()
    err, ctx = driver.cuCtxGetCurrent()
    assert int(err) == 0, f"cuCtxGetCurrent failed: {err!r}"
    return int(ctx)


def in_a_fresh_thread(fn):
    """fn() in a new threading.Thread; (its result, the thread's current context before and after)."""
    out = {}

    def run():
        out["before"] = current_context()
        try:
            out["result"] = fn()
        except BaseException as e:  # noqa: BLE001 - re-raised in the test's thread
            out["error"] = e
        out["after"] = current_context()

    t = threading.Thread(target=run)
    t.start()
    t.join(timeout=300)
    assert not t.is_alive(), "the thread did not finish in 300 s"
    if "error" in out:
        raise out["error"]
    assert out["before"] == 0, "the test's thread already had a current context: it tests nothing"
    return out.get("result"), out["before"], out["after"]


@pytest.fixture
def cbr(gpu_kit):
    kit = gpu_kit
    case = kit.conv_bias_relu_case(kit.PRECISIONS["fp16"].io, "nhwc")
    plan = kit.plan(case)
    bufs = kit.buffers(case)
    return kit, case, plan, bufs


def check(kit, case, bufs, what):
    ref = relu(conv2d(bufs[case.x].values, bufs[case.w].values, padding=1) + bufs[case.bias].values)
    kit.check(bufs[case.y], ref, TOL, what)


def test_the_handle_records_its_context(gpu_handle):
    assert gpu_handle.context != 0, "a handle made on a GPU records the CUDA context current then"
    assert gpu_handle.context == current_context(), "the handle's context is the one current in the thread that made it"
    with cb.Handle() as h:
        assert h.context == gpu_handle.context  # one device, its primary context


def test_execute_from_a_thread_without_a_context(cbr):
    kit, case, plan, bufs = cbr
    pack = VariantPack(plan, bufs)
    _, before, after = in_a_fresh_thread(lambda: execute(kit.handle, plan, pack))
    assert after == kit.handle.context, "the handle's context was made current in the thread"
    check(kit, case, bufs, "execute from a fresh thread")


def test_every_execute_form_from_threads_without_a_context(cbr):
    kit, case, plan, bufs = cbr
    pack = VariantPack(plan, bufs)
    by_uid = {t.uid: b for t, b in bufs.items()}
    pointers = tuple(by_uid[u].ptr for u in pack.pointer_uids)
    forms = {"pack.execute()": lambda: pack.execute(),  # the pack's plan, and that plan's handle
             "execute(None, plan, pack)": lambda: execute(None, plan, pack),
             "execute(handle, plan, {uid: buffer})": lambda: execute(kit.handle, plan, bufs),
             "bind_and_execute": lambda: pack.bind_and_execute(kit.handle, plan, pointers)}
    for name, form in forms.items():
        kit.randn_(bufs[case.x]), kit.poison_(bufs[case.y])
        in_a_fresh_thread(form)
        check(kit, case, bufs, f"{name} from a fresh thread")


def test_one_fresh_thread_after_another(cbr):
    """Eight fresh threads in turn, each with its own pack and output, 20 calls each."""
    kit, case, plan, bufs = cbr
    outputs = [kit.alloc(case.y, "nan") for _ in range(8)]
    for i, y in enumerate(outputs):
        pack = VariantPack(plan, {**bufs, case.y: y})
        in_a_fresh_thread(lambda: [execute(kit.handle, plan, pack) for _ in range(20)])
        check(kit, case, {**bufs, case.y: y}, f"thread {i} of 8")


def test_plans_are_built_in_a_thread_without_a_context(gpu_kit):
    """Heuristics and plan finalize (kernels loaded into the handle's context) from a fresh thread; the plan then
    runs there."""
    kit = gpu_kit
    case = kit.conv_bias_relu_case(kit.PRECISIONS["fp16"].io, "nhwc")
    bufs = kit.buffers(case)

    def build_and_run():
        plan = kit.plan(case)
        execute(kit.handle, plan, bufs)
        return plan

    plan, _, after = in_a_fresh_thread(build_and_run)
    assert plan.handle is kit.handle and after == kit.handle.context
    check(kit, case, bufs, "a plan built and executed in a fresh thread")


def test_cuda_graph_calls_from_a_thread_without_a_context(gpu_kit):
    kit = gpu_kit
    case = kit.conv_bias_relu_case(kit.PRECISIONS["fp16"].io, "nhwc")
    og = case.build(kit.handle)
    try:
        plan = kit.make_plan(og, kit.handle, require_behavior=("SUPPORTS_CUDA_GRAPH_NATIVE_API",))
    except kit.NoPlan as e:
        pytest.skip(f"no engine for conv+bias+ReLU supports the native CUDA graph API here: {e}")
    bufs = kit.buffers(case)
    pack = VariantPack(plan, bufs)
    rt = memory.cudart()
    graph, _, _ = in_a_fresh_thread(lambda: populate_cuda_graph(kit.handle, plan, pack))
    exec_ = None
    try:
        exec_ = memory.check(rt.cudaGraphInstantiate(graph, 0), "cudaGraphInstantiate")
        memory.check(rt.cudaGraphLaunch(exec_, kit.handle.stream), "cudaGraphLaunch")
        check(kit, case, bufs, "a CUDA graph populated in a fresh thread")
    finally:
        if exec_ is not None:
            rt.cudaGraphExecDestroy(exec_)
        rt.cudaGraphDestroy(graph)


OTHER_CONTEXT = """
import json, sys, threading
import cudnn_backend as cb
from cudnn_backend.runtime import memory
from cudnn_backend.runtime.execution import VariantPack, execute
from tests.gpu.kit import GpuKit

handle = cb.Handle()
kit = GpuKit(handle)
case = kit.conv_bias_relu_case(kit.PRECISIONS["fp16"].io, "nhwc")
plan = kit.plan(case)
pack = VariantPack(plan, kit.buffers(case))
driver = memory.cudriver()
out = {"handle_context": handle.context}

def run():
    if EXECUTE_FIRST:  # the handle's context made current here and this thread remembered: the next call is not checked
        execute(handle, plan, pack)
        driver.cuCtxSynchronize()
    err, dev = driver.cuDeviceGet(0)
    try:
        err, ctx = driver.cuCtxCreate(None, 0, dev)  # cuda-bindings 13
    except TypeError:
        err, ctx = driver.cuCtxCreate(0, dev)  # cuda-bindings 12
    assert int(err) == 0, err
    out["theirs"] = int(ctx)
    try:
        execute(handle, plan, pack)
        err, = driver.cuCtxSynchronize()
        out["outcome"] = "ran" if int(err) == 0 else f"ran, then {err!r}"
    except cb.CudnnError as e:
        out["outcome"] = "refused"
        out["message"] = str(e)
    err, current = driver.cuCtxGetCurrent()
    out["current_after"] = int(current)
    driver.cuCtxDestroy(ctx)

t = threading.Thread(target=run)
t.start()
t.join()
print(json.dumps(out))
"""


@pytest.mark.parametrize("execute_first", [False, True], ids=["fresh-thread", "after-an-execute"])
def test_another_current_context_is_left_alone_and_named(tmp_path, execute_first):
    """A thread with its own context (not the handle's) keeps it through the call; where cuDNN fails there, its
    error says which context and device the handle belongs to. In a child process: the second context is made and
    destroyed there. ``after-an-execute``: the thread ran the handle once before making its own context current, so
    execute (which checks the context once per handle and thread) goes to cuDNN unchecked; a failure is checked
    then, and named all the same."""
    script = f"EXECUTE_FIRST = {execute_first}\n" + textwrap.dedent(OTHER_CONTEXT)
    out = subprocess.run([sys.executable, "-c", script], capture_output=True, text=True, timeout=600, cwd=os.getcwd())
    assert out.returncode == 0, f"the child process failed ({out.returncode}):\n{out.stderr[-4000:]}"
    got = json.loads(out.stdout.strip().splitlines()[-1])
    assert got["handle_context"] != 0 and got["theirs"] != got["handle_context"]
    assert got["current_after"] == got["theirs"], "the thread's own context must stay current"
    if got["outcome"] == "refused":
        message = got["message"]
        assert f"the handle belongs to the CUDA context 0x{got['handle_context']:x}, device 0" in message, message
        assert f"this thread's current context is 0x{got['theirs']:x} (device 0)" in message, message
    else:
        assert got["outcome"].startswith("ran"), got


def _set_current(driver, context):
    try:
        err, = driver.cuCtxSetCurrent(driver.CUcontext(context))
    except TypeError:  # a cuda-bindings that takes the address itself
        err, = driver.cuCtxSetCurrent(context)
    assert int(err) == 0, err


def test_a_thread_whose_own_code_clears_its_context_after_an_execute(cbr):
    """execute checks the handle's context once per handle and thread; where the thread's own code then leaves no
    context current (cuCtxSetCurrent(NULL)), the next execute runs all the same (cuDNN's runtime makes the device's
    context current, or the call fails, is checked again and runs once more with the handle's made current), with
    correct results."""
    kit, case, plan, bufs = cbr
    y2 = kit.alloc(case.y, "nan")
    pack1, pack2 = VariantPack(plan, bufs), VariantPack(plan, {**bufs, case.y: y2})
    kit.poison_(bufs[case.y])
    driver = memory.cudriver()

    def run():
        execute(kit.handle, plan, pack1)
        driver.cuCtxSynchronize()
        _set_current(driver, 0)
        cleared = current_context()
        execute(kit.handle, plan, pack2)
        return cleared

    cleared, _, after = in_a_fresh_thread(run)
    assert cleared == 0, "the thread's context was cleared before the second execute"
    assert after == kit.handle.context
    check(kit, case, bufs, "the thread's first execute")
    check(kit, case, {**bufs, case.y: y2}, "the execute after the thread cleared its context")


def test_results_do_not_depend_on_the_thread(cbr):
    """The same inputs through the main thread and a fresh one: bit-identical outputs (same plan, same kernels)."""
    kit, case, plan, bufs = cbr
    pack = VariantPack(plan, bufs)
    execute(kit.handle, plan, pack)
    here = kit.read(bufs[case.y])
    kit.poison_(bufs[case.y])
    in_a_fresh_thread(lambda: execute(kit.handle, plan, pack))
    there = kit.read(bufs[case.y])
    assert np.isfinite(there).all() and np.array_equal(here, there)
