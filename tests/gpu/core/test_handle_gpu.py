"""A Handle as an attribute value on a GPU (moved from tests/core/test_attribute_types.py, whose CPU cases take only
Handle objects and read a plan's handle back as an int): set on the device properties and on a plan, read back."""
import pytest

import cudnn_backend as cb
from cudnn_backend import *  # noqa: F403 - the C names

from tests.core.test_attribute_types import check_get
from tests.helpers import generic_graphs as gg

B = CUDNN_TYPE_BACKEND_DESCRIPTOR


def test_handle_round_trip_on_gpu(handle, h200_profile_json):
    assert handle.ptr != 0
    # the device properties of the handle's GPU
    dp = cb.Descriptor(CUDNN_BACKEND_DEVICEPROP_DESCRIPTOR)
    dp.set(CUDNN_ATTR_DEVICEPROP_HANDLE, CUDNN_TYPE_HANDLE, handle)
    assert dp.children[CUDNN_ATTR_DEVICEPROP_HANDLE] == (handle,)
    dp.finalize()
    assert dp.get(CUDNN_ATTR_DEVICEPROP_JSON_REPRESENTATION, CUDNN_TYPE_CHAR).startswith("{")
    # a plan built on the GPU holds the handle: get returns its address as an int
    graph = gg.notebook_conv_graph()
    config = gg.heuristics(graph, CUDNN_HEUR_MODE_A)[0]
    plan = cb.Descriptor(CUDNN_BACKEND_EXECUTION_PLAN_DESCRIPTOR)
    plan.set(CUDNN_ATTR_EXECUTION_PLAN_HANDLE, CUDNN_TYPE_HANDLE, handle)
    plan.set(CUDNN_ATTR_EXECUTION_PLAN_ENGINE_CONFIG, B, config)
    plan.finalize()
    check_get(plan, CUDNN_ATTR_EXECUTION_PLAN_HANDLE, CUDNN_TYPE_HANDLE, [handle.ptr])
    handle.close()
    with pytest.raises(ValueError, match="closed"):
        cb.Descriptor(CUDNN_BACKEND_DEVICEPROP_DESCRIPTOR).set(CUDNN_ATTR_DEVICEPROP_HANDLE, CUDNN_TYPE_HANDLE, handle)
