"""Fixtures of the reference evaluator's tests: a fresh random generator per test, its seed printed when the test
fails (``CUDNN_BACKEND_TEST_SEED=<seed>`` replays one)."""
import os
import secrets

import numpy as np
import pytest


@pytest.fixture
def rng(request):
    seed = int(os.environ.get("CUDNN_BACKEND_TEST_SEED") or secrets.randbits(32))
    request.node.reference_seed = seed
    return np.random.default_rng(seed)


@pytest.hookimpl(hookwrapper=True)
def pytest_runtest_makereport(item, call):
    outcome = yield
    report = outcome.get_result()
    seed = getattr(item, "reference_seed", None)
    if report.failed and seed is not None:
        report.sections.append(("random inputs", f"seed {seed} (replay: CUDNN_BACKEND_TEST_SEED={seed})"))
