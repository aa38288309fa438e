"""Two threads on one plan, 10,000 rounds: one executes it again and again while the other closes the plan (and
its pack). Neither crashes; every refusal is the package's own error; GPU memory does not grow."""
import threading

import pytest

import cudnn_backend as cb
from cudnn_backend.runtime import memory

ROUNDS = 10_000


def _free_bytes():
    rt = cb.runtime.memory.cudart()
    free, _total = cb.runtime.memory.check(rt.cudaMemGetInfo(), "cudaMemGetInfo")
    return int(free)


def test_execute_and_close_race(gpu_kit):
    p = cb.patterns.conv_fwd(n=1, c=8, h=8, w=8, k=8, build=False)
    handle = cb.Handle()
    first, _ = cb.build_first_plan(p.build(handle), handle=handle)
    text = first.to_json()
    buffers = {p.x: gpu_kit.alloc(p.x, "randn"), p.w: gpu_kit.alloc(p.w, "randn"), p.y: gpu_kit.alloc(p.y)}

    def one_round():
        plan = cb.plan_from_json(text, handle, operation_graph=p.op_graph)
        pack = cb.VariantPack(plan, buffers)
        start = threading.Barrier(2)
        outcome = {}

        def runner():
            start.wait()
            n = 0
            try:
                for n in range(1, 1000):
                    cb.execute(handle, plan, pack)
            except (cb.CudnnBackendError, ValueError) as e:  # closed under it: refused cleanly
                outcome["refused"] = type(e).__name__
            except BaseException as e:  # noqa: BLE001 - anything else fails the test
                outcome["foreign"] = repr(e)
            outcome["calls"] = n

        def closer():
            start.wait()
            (pack if len(outcome) % 2 else plan).close()
            plan.close()
            pack.close()

        threads = [threading.Thread(target=runner), threading.Thread(target=closer)]
        for t in threads:
            t.start()
        for t in threads:
            t.join()
        return outcome

    for _ in range(50):  # warm-up: allocator pools and cuDNN's caches settle
        one_round()
    memory.synchronize()
    before = _free_bytes()
    refused = foreign = 0
    for _ in range(ROUNDS):
        o = one_round()
        refused += "refused" in o
        if "foreign" in o:
            foreign += 1
            pytest.fail(f"a foreign exception escaped: {o['foreign']}")
    memory.synchronize()
    after = _free_bytes()
    assert foreign == 0
    assert refused > ROUNDS // 10, "the closer should usually win the race at least sometimes"
    assert before - after < 16 << 20, f"GPU memory fell by {(before - after) / 2**20:.1f} MiB over {ROUNDS} rounds"
    handle.close()
