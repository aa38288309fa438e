"""The record of refused configs (``build_plan``'s memo) keeps a reason, not an exception object.

Re-raising one remembered exception object grew its traceback by two frames per call, and every frame kept
that call's ExecutionPlan descriptor alive: +5 MiB and ~1,000 live descriptors per 1,000 calls.
"""
import gc
import traceback

import pytest

import cudnn_backend as cb
from cudnn_backend.runtime.plans import build_plan, refused
from cudnn_backend.typed import ExecutionPlan

CALLS = 300


def _live_plan_descriptors() -> int:
    gc.collect()
    return sum(1 for o in gc.get_objects() if isinstance(o, ExecutionPlan))


def test_a_remembered_refusal_is_a_fresh_exception_each_time(refusing):
    graph, config, sm80_profile = refusing
    with pytest.raises(cb.CudnnError) as first:
        build_plan(config, device_profile=sm80_profile)
    reason, kind, frames = first.value.reason, type(first.value), len(traceback.extract_tb(first.value.__traceback__))
    del first
    before = _live_plan_descriptors()
    seen = []
    for _ in range(CALLS):
        try:
            build_plan(config, device_profile=sm80_profile)
        except cb.CudnnError as e:
            assert type(e) is kind and e.reason == reason and "COMPILATION_FAILED" in e.status.name
            assert all(e is not earlier for earlier in seen[-1:])
            seen.append(e)
            lengths = len(traceback.extract_tb(e.__traceback__))
            assert lengths <= frames, f"the traceback grew to {lengths} frames (the first had {frames})"
    assert len(seen) == CALLS
    del seen
    after = _live_plan_descriptors()
    assert after - before <= 2, f"{after - before} ExecutionPlan descriptors kept alive by {CALLS} refusals"


def test_refused_hands_out_a_copy_of_the_reason(refusing):
    graph, config, sm80_profile = refusing
    assert refused(config, device_profile=sm80_profile) is None
    with pytest.raises(cb.CudnnError) as first:
        build_plan(config, device_profile=sm80_profile)
    one, two = refused(config, device_profile=sm80_profile), refused(config, device_profile=sm80_profile)
    assert one is not two and one is not first.value
    assert type(one) is type(first.value) and one.reason == two.reason == first.value.reason
    assert one.__traceback__ is None
