"""The GPU test kit's fp64 references (``tests/gpu/kit.py``), checked on the CPU against convolutions written out as
loops (``tests/reference/test_conv.py``) and against their definitions: the GPU tests trust them for cuDNN's
results, so they must not share a mistake with what they check. Importing the kit touches no GPU."""
import math

import numpy as np
import pytest

from cudnn_backend.runtime.heuristics import build_first_plan
from tests.gpu import kit
from tests.gpu.runtime import test_array_matrix_gpu as matrix
from tests.gpu.runtime.fp8_graphs import E4M3, E5M2, scaled_conv, transpose_convert_amax
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


def test_the_array_matrix_graphs_and_references_offline():
    """Every cell graph of tests/gpu/runtime/test_array_matrix_gpu.py builds, its fp64 reference evaluates, and the
    cells expected to run on an H200 get a plan for the bundled H200 profile (the others are reported there)."""
    planned = set()
    for dtype in set(matrix.DTYPES) - matrix.MISSING:  # (bool before 9.25: refused arrays, no graph)
        for layout in matrix.LAYOUTS:
            c = matrix.Cell(None, dtype, layout, device_profile="h200")
            values, ref = c.inputs(0)
            assert np.isfinite(ref).all() and ref.shape == tuple(c.specs[c.y.uid].dims)
            if c.plan is not None:
                planned.add((dtype, layout))
    # (which cells get an engine depends on the release: 9.28.1 plans x * s for every type but int64 in NHWC, 9.19.0
    # fewer; none over strided views, which 9.19.0 refuses and the package's known errata deny from 9.20 on;
    # the GPU test records the others as "no engine")
    assert {("float16", "nhwc"), ("float16", "nchw")} <= planned, sorted(planned)
    assert not any(layout == "strided" for _, layout in planned), sorted(planned)


def test_the_fp8_graphs_offline():
    for build, kw in ((scaled_conv, "io"), (transpose_convert_amax, "out")):
        for data_type in (E4M3, E5M2):
            g, _ = build(**{kw: data_type})
            plan, _ = build_first_plan(g.build(), device_profile="h200")
            assert plan is not None
