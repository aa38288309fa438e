"""Fixtures shared by the runtime tests."""
import json

import pytest

from cudnn_backend.errors import CudnnError
from cudnn_backend.runtime.engines import Config
from cudnn_backend.runtime.heuristics import get_configs
from cudnn_backend.runtime.plans import build_plan, forget_refusals
from cudnn_backend.runtime.profiles import DeviceProfile

from tests.helpers.env import version_text
from tests.helpers.offline import h200, matmul_relu_graph


@pytest.fixture
def refusing():
    """(graph, a runtime-compiled config, the H200 profile edited to sm80). cuDNN 9.19 refuses to compile that
    config object for the sm80 profile (INTERNAL_ERROR_COMPILATION_FAILED) once it has compiled it for the H200: a
    refusal reproducible offline (compiling it for the sm80 profile first would succeed). The config's device is
    left unrecorded, as a Config over a bare descriptor has it: build_plan refuses a profile other than the one a
    config records before cuDNN is asked."""
    doc = json.loads(h200().deviceprop_json)
    doc["deviceVer"], doc["deviceName"] = 800, "sm80 (edited H200 profile)"
    forget_refusals()
    graph = matmul_relu_graph()
    chosen = get_configs(graph, "A", h200())[0]
    assert chosen.runtime_compiled
    config = Config(chosen.descriptor, chosen.operation_graph)
    build_plan(config, device_profile=h200())
    sm80 = DeviceProfile(json.dumps(doc), h200().cudnn_version)
    try:  # cuDNN 9.19 refuses (and again on every try); 9.22 and 9.28 compile it for the sm80 profile too
        build_plan(config, device_profile=sm80)
    except CudnnError:
        forget_refusals()
    else:
        pytest.skip(f"cuDNN {version_text()} compiles the config for the edited profile too: no refusal to reproduce "
                    "offline (the refusal memo is tested on the releases that refuse, 9.19.0 in CI's release matrix)")
    yield graph, config, sm80
    forget_refusals()
