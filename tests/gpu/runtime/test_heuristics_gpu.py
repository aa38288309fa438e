"""Heuristics on a GPU (the CPU side, against device profiles: tests/runtime/test_heuristics.py): the first plan
built with a handle holds it."""
from cudnn_backend.runtime.heuristics import build_first_plan


def test_workflow_on_gpu_with_handle(handle, conv):
    plan, report = build_first_plan(conv, handle=handle)
    assert plan.handle is handle and report.chosen.ok
