"""The cuDNN guide's conv + bias + ReLU built three ways — the generic API (C names), the typed classes and the
Graph builder — taken from ``examples/conv_bias_relu.py`` (the guide's own code), at sizes the tests choose."""
import importlib.util
import pathlib

_EXAMPLE = pathlib.Path(__file__).resolve().parents[2] / "examples" / "conv_bias_relu.py"
_spec = importlib.util.spec_from_file_location("conv_bias_relu_example", _EXAMPLE)
example = importlib.util.module_from_spec(_spec)
_spec.loader.exec_module(example)

SMALL = dict(n=1, c=8, h=8, w=8, k=8)


def generic(**sizes):
    return example.generic_api(**{**SMALL, **sizes})


def typed_classes(**sizes):
    return example.typed_api(**{**SMALL, **sizes})


def graph_builder(**sizes):
    """The Graph (built, without a handle)."""
    return example.graph_api(None, **{**SMALL, **sizes})
