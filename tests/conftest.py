"""Shared fixtures. Tests run against the real cuDNN (never a mock); without a GPU the package
loads its no-device driver stand-in and uses the bundled H200 device profile."""
import pathlib

import pytest

DATA = pathlib.Path(__file__).resolve().parent.parent / "cudnn_backend" / "data"
H200_PROFILE_JSON = DATA / "h200_deviceprop_cudnn91900.json"


from cudnn_backend.info import gpu_available  # noqa: E402

HAVE_GPU = gpu_available()


def pytest_collection_modifyitems(config, items):
    if HAVE_GPU:
        return
    skip = pytest.mark.skip(reason="needs a CUDA GPU")
    for item in items:
        if "gpu" in item.keywords:
            item.add_marker(skip)


@pytest.fixture(scope="session")
def h200_profile_json() -> str:
    return H200_PROFILE_JSON.read_text()


@pytest.fixture(scope="session")
def cudnn_version() -> int:
    import cudnn_backend

    return cudnn_backend.get_version()


@pytest.fixture
def handle():
    import cudnn_backend

    with cudnn_backend.Handle() as h:
        yield h


@pytest.fixture(scope="session")
def h200():
    """The bundled H200 device profile (cuDNN 9.19.0)."""
    from cudnn_backend.profiles import DeviceProfile

    return DeviceProfile.bundled("h200")


@pytest.fixture(scope="module")
def conv():
    """The cudnn-frontend notebook's conv forward graph, finalized (generic API, C names)."""
    import generic_graphs

    return generic_graphs.notebook_conv_graph()
