"""The patterns of the newer releases' operations (softmax, transpose, slice, RoPE forward and backward, the diagonal
band mask), offline with the real cuDNN against the H100 and H200 profiles: finalized, heuristics, a plan for each
GPU, the plan's JSON round trip. On an older release each pattern is refused by the version gate.

Where cuDNN has no engine for a pattern on these GPUs the test xfails with cuDNN's own reason (cuDNN 9.28.1: the
memory-bound engines that run transpose, slice, softmax and RoPE alone, and RoPE fused, are Blackwell's). Plan JSON
round trips of these operations are refused by ``core.json_checks`` until its release-aware node tables know them
(derived for a release not captured yet): those xfail naming the missing table.
"""
import re

import pytest

import cudnn_backend as cb
from cudnn_backend import patterns as P
from cudnn_backend._bindings.enums import SINCE
from cudnn_backend.core import cudnn_messages, cudnn_reasons
from cudnn_backend.errors import CudnnVersionError, JsonCheckError
from cudnn_backend.runtime.heuristics import get_configs, why_no_engine
from cudnn_backend.runtime.plans import build_plan, plan_from_json
from tests.helpers.env import LOADED, loaded_has, version_text
from tests.helpers.releases import profile

# pattern -> the operations it needs (their descriptor types)
NEWER = {
    "transpose": ("CUDNN_BACKEND_OPERATION_TRANSPOSE_DESCRIPTOR",),
    "slice": ("CUDNN_BACKEND_OPERATION_SLICE_DESCRIPTOR",),
    "slice_matmul": ("CUDNN_BACKEND_OPERATION_SLICE_DESCRIPTOR",),
    "softmax": ("CUDNN_BACKEND_OPERATION_SOFTMAX_DESCRIPTOR",),
    "sdpa_softmax_fwd": ("CUDNN_BACKEND_OPERATION_SOFTMAX_DESCRIPTOR",),
    "diagonal_band_mask": ("CUDNN_BACKEND_OPERATION_DIAGONAL_BAND_MASK_DESCRIPTOR",
                           "CUDNN_BACKEND_OPERATION_SOFTMAX_DESCRIPTOR"),
    "rope": ("CUDNN_BACKEND_OPERATION_ROPE_FWD_DESCRIPTOR",),
    "rope_bwd": ("CUDNN_BACKEND_OPERATION_ROPE_BWD_DESCRIPTOR",),
}
# what an H100/H200 runs on the releases measured (9.22.0, 9.28.1): these must get engine configs there
RUN_ON_HOPPER = {"slice_matmul", "sdpa_softmax_fwd", "diagonal_band_mask"}
GPUS = ("h100", "h200")


def _needs(name):
    """The release the pattern needs: the newest of its operations'."""
    return max((SINCE[d] for d in NEWER[name]), key=lambda v: tuple(int(x) for x in v.split(".")))


@pytest.fixture(scope="module")
def built():
    """Each pattern available on the loaded cuDNN, built once."""
    return {name: P.CATALOGUE[name]() for name in NEWER if loaded_has(_needs(name))}


def test_every_newer_pattern_is_in_the_catalogue():
    assert set(NEWER) <= set(P.CATALOGUE)


@pytest.mark.parametrize("name", sorted(NEWER))
def test_refused_on_an_older_release(name):
    since = _needs(name)
    if loaded_has(since):
        pytest.skip(f"cuDNN {version_text()} has {name}")
    loaded = f"{LOADED // 10000}.{LOADED % 10000 // 100}"
    with pytest.raises(CudnnVersionError, match=rf"^CUDNN_BACKEND_OPERATION_\w+ \(Graph\.\w+\) needs cuDNN >= "
                                                rf"9\.\d+ \(loaded: {re.escape(loaded)}\)$") as info:
        P.CATALOGUE[name](build=False)
    # the first operation the pattern makes that the loaded cuDNN lacks, named with its own release
    assert info.value.name in NEWER[name] and cb.core.since_of(info.value.name) == info.value.since
    assert not loaded_has(info.value.since)


def _configs(name, built, gpu):
    og = built[name].op_graph
    dp = profile(gpu)
    configs = get_configs(og, "A", dp, raise_if_empty=False) or get_configs(og, "FALLBACK", dp, raise_if_empty=False)
    if not configs:
        reason = why_no_engine(og, dp.descriptor())
        assert name not in RUN_ON_HOPPER, f"{name}: no engine on the {gpu} profile:\n{reason}"
        pytest.xfail(f"cuDNN {version_text()}: no engine for {name} on the {gpu} profile (memory-bound engines are "
                     f"Blackwell's):\n{reason[:2000]}")
    return configs


@pytest.mark.parametrize("gpu", GPUS)
@pytest.mark.parametrize("name", sorted(NEWER))
def test_finalizes_heuristics_and_plan(name, gpu, built):
    if name not in built:
        pytest.skip(f"needs cuDNN {_needs(name)}")
    p = built[name]
    assert p.op_graph.finalized and p.outputs()
    kinds = {op.DESCRIPTOR_TYPE.name for op in p.operations}
    assert set(NEWER[name]) <= kinds
    configs = _configs(name, built, gpu)
    with cudnn_messages() as messages:
        try:
            plan = build_plan(configs[0], device_profile=profile(gpu))
        except cb.CudnnError as e:
            pytest.fail(f"{name} on {gpu}: heuristics' first config builds no plan: {e}\n{cudnn_reasons(messages)}")
    assert plan.descriptor.finalized and plan.engine_index == configs[0].engine_index
    assert plan.workspace_size >= 0


@pytest.mark.parametrize("name", sorted(RUN_ON_HOPPER))
def test_plan_json_round_trip(name, built):
    if name not in built:
        pytest.skip(f"needs cuDNN {_needs(name)}")
    dp = profile("h200")
    plan = build_plan(_configs(name, built, "h200")[0], device_profile=dp)
    text = plan.to_json()
    assert all(f'"{d}"' in text for d in NEWER[name])  # cuDNN serializes the operation itself
    try:
        again = plan_from_json(text, device_profile=dp)
    except JsonCheckError as e:
        missing = [d for d in NEWER[name] if d[:36] in str(e)]
        if "operation: expected one of" in str(e) and missing:
            pytest.xfail(f"core.json_checks has no node table for {missing[0]} yet: {e}")
        raise
    assert again.engine_index == plan.engine_index and again.to_json() == text


def test_hopper_patterns_do_what_their_reference_says(built):
    """The references the explorer checks engines against, on small inputs (torch on the CPU, float32)."""
    torch = pytest.importorskip("torch")
    if "sdpa_softmax_fwd" not in built:
        pytest.skip("needs cuDNN 9.20")
    gen = torch.Generator().manual_seed(0)
    p = P.diagonal_band_mask(b=1, h=1, s_q=4, s_kv=4, d=8, build=False)
    t = {"q": torch.randn(1, 1, 4, 8, generator=gen), "k_t": torch.randn(1, 1, 8, 4, generator=gen),
         "v": torch.randn(1, 1, 4, 8, generator=gen)}
    o = p.reference(t)["o"]
    scores = (t["q"].double() @ t["k_t"].double()) / 8 ** 0.5
    first_row = torch.softmax(scores[..., 0, :1], -1) @ t["v"].double()[..., :1, :]  # row 0 sees column 0 only
    assert torch.allclose(o[..., 0, :].double(), first_row[..., 0, :], atol=1e-5)
    if "slice_matmul" in built:
        s = P.slice_matmul(b=2, m=3, n=4, k=5, margin=(1, 1), build=False)
        a, b = torch.randn(5, 5, 5, generator=gen), torch.randn(2, 5, 4, generator=gen)
        want = (a[1:3, 1:4, :].double() @ b.double()).clamp(min=0)
        assert torch.allclose(s.reference({"a": a, "b": b})["y"].double(), want, atol=1e-5)
