"""Fixtures shared by the runtime tests."""
import json

import pytest

from cudnn_backend.runtime.heuristics import get_configs
from cudnn_backend.runtime.plans import build_plan, forget_refusals
from cudnn_backend.runtime.profiles import DeviceProfile

from tests.helpers.offline import h200, matmul_relu_graph


@pytest.fixture
def refusing():
    """(graph, a runtime-compiled config, the H200 profile edited to sm80). cuDNN 9.19 refuses to compile that
    config object for the sm80 profile (INTERNAL_ERROR_COMPILATION_FAILED) once it has compiled it for the H200: a
    refusal reproducible offline (compiling it for the sm80 profile first would succeed)."""
    doc = json.loads(h200().deviceprop_json)
    doc["deviceVer"], doc["deviceName"] = 800, "sm80 (edited H200 profile)"
    forget_refusals()
    graph = matmul_relu_graph()
    config = get_configs(graph, "A", h200())[0]
    assert config.runtime_compiled
    build_plan(config, device_profile=h200())
    yield graph, config, DeviceProfile(json.dumps(doc), 91900)
    forget_refusals()
