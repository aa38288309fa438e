"""Reading an optional descriptor-valued attribute that was never given answers None, never a cuDNN error.

Found on an H200: an engine of heuristics made on a GPU holds no DEVICEPROP, and reading it raised
BAD_PARAM_NULL_POINTER, so every ``make_config`` on a GPU failed and the knob search found nothing.
"""
import pytest

import cudnn_backend as cb
from cudnn_backend import typed
from cudnn_backend.core import schema
from cudnn_backend.errors import CudnnVersionError
from cudnn_backend.runtime import engines, heuristics
from cudnn_backend.tune import graphs


def _optional_children(obj):
    return [k for k, spec in type(obj).ATTRIBUTES.items()
            if spec.role == schema.OPTIONAL and spec.accepts is not None]


@pytest.fixture(scope="module")
def conv_graph():
    return graphs.resolve("conv_bias_relu", device_profile=cb.DeviceProfile.bundled()).op_graph


def test_built_descriptors_answer_none_for_children_not_given():
    g = cb.Graph("relu")
    g.relu(g.tensor([1, 8, 4, 4], layout="nhwc"), output=True)
    og = g.build()
    checked = 0
    for op in og.ops:
        for key in _optional_children(op):
            if key not in op.attributes():
                assert getattr(op, key) is None, key
                checked += 1
    assert checked >= 3  # bdesc, tdesc, dydesc, dxdesc of the pointwise op


def test_descriptors_read_from_cudnn_read_every_keyword(conv_graph):
    profile = cb.DeviceProfile.bundled()
    configs = heuristics.get_configs(conv_graph, "A", device_profile=profile)
    assert configs
    for cfg in configs[:5]:
        engine = cfg.descriptor.engine  # read back from cuDNN
        assert engine.read_from is not None
        for obj in (cfg.descriptor, engine):
            for key in type(obj).KEYWORDS:
                try:
                    getattr(obj, key)  # cuDNN's value, or None where it has none
                except CudnnVersionError:  # an attribute newer than the loaded cuDNN: refused by design
                    continue
        assert isinstance(engine.deviceprop, typed.DeviceProp)
        again = engines.make_config(engine, cfg.knobs)  # what the knob search does with each seed
        assert again.key == cfg.key
