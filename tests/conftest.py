"""Shared fixtures and markers. Tests run against the real cuDNN (never a mock); without a GPU the package
loads its no-device driver stand-in and plans are built against the bundled H200 device profile.

Layout: one folder per layer (``core``, ``typed``, ``graph``, ``runtime``, ``patterns``, ``reference``, ``tune``,
``cli``), cross-layer tests at the top (public names, the API fuzz), shared helpers in ``tests.helpers`` (the
offline plan helper, generic C-name graph builders, the crash-reporting child runner, the fuzz workers).
``tests`` is a package and pyproject's ``pythonpath = ["."]`` puts the checkout first, so ``cudnn_backend`` and
``tests.helpers`` are this checkout's.

GPU tests: a test that needs a GPU lives in ``tests/gpu/<layer>/`` (``tests/gpu/core``, ``tests/gpu/runtime``,
``tests/gpu/tune``, ...), and only there. The rule is enforced here: every test under ``tests/gpu`` is marked
``gpu`` (skipped without a CUDA GPU), and a ``gpu`` marker anywhere else is a collection error. Their kit
(``tests/gpu/kit.py``, the ``gpu_kit`` fixture of ``tests/gpu/conftest.py``) needs no torch: with torch blocked
(``tools/gpu_run.sh notorch``) every GPU test runs but those whose point is torch interop, which skip saying so.
On the GPU machine: ``python -m pytest tests/gpu`` (``bash tools/gpu_run.sh tests notorch``).

Markers: ``gpu`` (see above), ``slow`` (skipped unless ``--run-slow`` or ``CUDNN_BACKEND_SLOW_TESTS=1``).
"""
import os
import pathlib

import pytest

import cudnn_backend

ROOT = pathlib.Path(__file__).resolve().parent.parent
if pathlib.Path(cudnn_backend.__file__).resolve().parent.parent != ROOT:  # pragma: no cover - a setup mistake
    raise RuntimeError(f"the tests in {ROOT} import cudnn_backend from {cudnn_backend.__file__}; run pytest from the "
                       "checkout root (pyproject's pythonpath puts it first) or set PYTHONPATH to it")

from tests.helpers.env import H200_PROFILE_JSON, HAVE_GPU  # noqa: E402


def pytest_addoption(parser):
    parser.addoption("--run-slow", action="store_true", default=False, help="run tests marked slow")


GPU_TESTS = ROOT / "tests" / "gpu"


def _in(path: pathlib.Path, folder: pathlib.Path) -> bool:
    try:
        pathlib.Path(path).resolve().relative_to(folder)
        return True
    except ValueError:
        return False


@pytest.hookimpl(tryfirst=True)  # before -m selects by marker
def pytest_collection_modifyitems(config, items):
    run_slow = config.getoption("--run-slow") or os.environ.get("CUDNN_BACKEND_SLOW_TESTS") == "1"
    skip_gpu = pytest.mark.skip(reason="needs a CUDA GPU")
    skip_slow = pytest.mark.skip(reason="slow: run with --run-slow or CUDNN_BACKEND_SLOW_TESTS=1")
    misplaced = []
    for item in items:
        if _in(item.path, GPU_TESTS):
            item.add_marker(pytest.mark.gpu)
        elif item.get_closest_marker("gpu") is not None and _in(item.path, ROOT / "tests"):
            misplaced.append(item.nodeid)
    if misplaced:
        raise pytest.UsageError(f"GPU tests live in tests/gpu/<layer>/ (tests/conftest.py); move "
                                f"{', '.join(misplaced)}")
    for item in items:
        if "gpu" in item.keywords and not HAVE_GPU:
            item.add_marker(skip_gpu)
        if "slow" in item.keywords and not run_slow:
            item.add_marker(skip_slow)


@pytest.fixture(autouse=True)
def _no_cudnn_call_left_in_flight():
    """Every cuDNN call a test starts has returned when it ends: a leaked count would make the exit hook wait (it
    waits for calls in flight) and would hide a call that never returned."""
    yield
    from cudnn_backend.core import calls_in_flight

    assert calls_in_flight() == 0, f"{calls_in_flight()} cuDNN call(s) still counted as in flight after the test"


@pytest.fixture(scope="session")
def h200_profile_json() -> str:
    """The bundled H200 profile's deviceprop JSON as the loaded cuDNN reads it (the 9.19.0 capture, converted)."""
    from tests.helpers.offline import h200

    return h200().deviceprop_json


@pytest.fixture(scope="session")
def h200_capture_json() -> str:
    """The H200 capture as cuDNN 9.19.0 wrote it (the bundled file, byte for byte)."""
    return H200_PROFILE_JSON.read_text()


@pytest.fixture(scope="session")
def cudnn_version() -> int:
    return cudnn_backend.get_version()


@pytest.fixture
def handle():
    with cudnn_backend.Handle() as h:
        yield h


@pytest.fixture(scope="session")
def h200():
    """The bundled H200 device profile, for the loaded cuDNN (the 9.19.0 capture, converted)."""
    from tests.helpers.offline import h200

    return h200()


@pytest.fixture(scope="module")
def conv():
    """The cudnn-frontend notebook's conv forward graph, finalized (generic API, C names)."""
    from tests.helpers import generic_graphs

    return generic_graphs.notebook_conv_graph()
