"""The GPU test kit's fp64 references (``tests/gpu/kit.py``), checked on the CPU against convolutions written out as
loops (``tests/reference/test_conv.py``) and against their definitions: the GPU tests trust them for cuDNN's
results, so they must not share a mistake with what they check. Importing the kit touches no GPU."""
import math

import numpy as np
import pytest

from tests.gpu import kit
from tests.reference.test_conv import loops_backward_data, loops_backward_filter, loops_forward

CASES = [((2, 3, 6, 5), (4, 3, 3, 3), 1), ((1, 2, 5, 5), (3, 2, 1, 1), 0), ((2, 4, 7, 7), (2, 4, 5, 5), 2)]


@pytest.mark.parametrize("x_dims, w_dims, padding", CASES)
def test_convolutions_agree_with_the_loops(x_dims, w_dims, padding):
    rng = np.random.default_rng(0)
    x, w = rng.standard_normal(x_dims), rng.standard_normal(w_dims)
    pad = [padding, padding]
    y = kit.conv2d(x, w, padding)
    np.testing.assert_allclose(y, loops_forward(x, w, pad, pad, [1, 1], [1, 1], "cross_correlation"), rtol=1e-12,
                               atol=1e-12)
    dy = rng.standard_normal(y.shape)
    np.testing.assert_allclose(kit.conv2d_bwd_data(dy, w, padding),
                               loops_backward_data(dy, w, x_dims, pad, pad, [1, 1], [1, 1], "cross_correlation"),
                               rtol=1e-12, atol=1e-12)
    np.testing.assert_allclose(kit.conv2d_bwd_filter(x, dy, w_dims[2:], padding),
                               loops_backward_filter(x, dy, w_dims, pad, pad, [1, 1], [1, 1], "cross_correlation"),
                               rtol=1e-12, atol=1e-12)


def test_gelu_and_relu_by_definition():
    z = np.linspace(-6, 6, 101)
    np.testing.assert_allclose(kit.gelu(z), [0.5 * v * (1 + math.erf(v / math.sqrt(2))) for v in z], rtol=1e-15)
    assert kit.gelu(np.array([0.0]))[0] == 0.0 and kit.gelu(np.array([1.0]))[0] == pytest.approx(0.8413447460685429)
    np.testing.assert_array_equal(kit.relu(z), np.maximum(z, 0))
    np.testing.assert_array_equal(kit.relu(z, 0.01), np.where(z > 0, z, 0.01 * z))
