"""The explainer on a GPU (the CPU side, against device profiles: tests/tune/test_explain.py): the stage and a
minimization probed on the GPU itself."""
from cudnn_backend.tune.explain import why

from tests.tune.test_explain import DGRAD


def test_why_on_the_gpu(handle):
    """The same explanation against the GPU itself (no profile): the stage, and a minimization probed there."""
    ex = why(DGRAD, handle=handle)
    assert ex.device == "this GPU" and ex.stage in ("heuristics", None)
    if ex.stage == "heuristics":
        assert ex.minimization is not None and ex.minimization["verified"].startswith("yes")
