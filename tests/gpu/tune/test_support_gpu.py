"""The support matrix on a GPU (the CPU side, against device profiles: tests/tune/test_support.py): every supported
graph's first working config runs once, its kernels counted and named."""
from cudnn_backend.tune.support import support_matrix

from tests.tune.test_support import _entries


def test_kernel_counts_on_the_gpu():
    """On a GPU every supported graph's first working config runs once: its kernels counted and named."""
    entries = _entries("conv_fwd [fp16 nhwc]", "conv_fwd+bias+relu [fp16 nhwc]", "matmul+bias+gelu [bf16 row]",
                       "conv_dgrad+bias [fp32 nchw]")
    m = support_matrix(entries, workers=1, cache=False)  # no profile: this GPU
    assert m.kernels and m.device["offline"] is False and m.plans == "all"
    for r in m:
        if r.supported:
            assert r.verified == "plan" and r.kernel_count >= 1 and len(r.kernels) == r.kernel_count, r.kernel_error
        else:
            assert r.kernel_count is None
    assert m["conv_fwd [fp16 nhwc]"].supported
