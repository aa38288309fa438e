"""Block-scale dequantize, MoE grouped matmul (forward and weight gradient) against numpy written here, and the
operations the evaluator names as not computable (quantize, paged cache loads, band matrices) with their reasons."""
import numpy as np
import pytest

import cudnn_backend as cb
from cudnn_backend.patterns import block_scale_dequantize_matmul, block_scale_quantize, sdpa_composite_bwd
from cudnn_backend.reference import evaluate, unsupported
from cudnn_backend.runtime._packing import tensor_specs
from cudnn_backend.typed.arrays import as_stored

from tests.reference.helpers import assert_close, by_name, newer_cudnn_skips


def test_block_scale_dequantize_into_a_matmul(rng):
    with newer_cudnn_skips():
        p = block_scale_dequantize_matmul(m=4, n=6, k=64, block_size=32)
    names = by_name(p.op_graph)
    a, b = rng.standard_normal([1, 4, 64]), rng.standard_normal([1, 64, 6])
    sa, sb = 2.0 ** rng.integers(-3, 4, [1, 4, 2]), 2.0 ** rng.integers(-3, 4, [1, 2, 6])
    r = evaluate(p.op_graph, {names["a"]: a, names["a_scale"]: sa, names["b"]: b, names["b_scale"]: sb})
    specs = tensor_specs(operation_graph=p.op_graph)  # a and b as their fp8 tensors hold them
    da = as_stored(a, specs[names["a"]].data_type) * np.repeat(sa, 32, axis=2)
    db = as_stored(b, specs[names["b"]].data_type) * np.repeat(sb, 32, axis=1)
    assert_close(r.outputs[names["c"]], da @ db)


def test_a_graph_input_stored_in_a_tiled_layout_is_named_not_computed():
    # F8_128x4 scales lie in cuDNN's swizzled tiles, which the strides do not describe
    with newer_cudnn_skips():
        p = block_scale_dequantize_matmul(m=128, n=128, k=128, block_size=32,
                                          reordering=cb.CUDNN_TENSOR_REORDERING_F8_128x4)
    lines = unsupported(p.op_graph)
    assert len(lines) == 2 and all("F8_128x4 tiled layout, which its strides do not describe" in ln for ln in lines)
    assert lines[0].startswith("BlockScaleDequantize (operation 0") and "a_scale is stored" in lines[0]


def experts(offsets, tokens):
    return [(offsets[e], offsets[e + 1] if e + 1 < len(offsets) else tokens) for e in range(len(offsets))]


def test_moe_grouped_matmul(rng):
    t, k, n, e = 10, 4, 3, 3
    g = cb.Graph("moe", io_data_type="float")
    tokens, weights = g.tensor([1, t, k], name="tokens"), g.tensor([e, k, n], [k * n, 1, k], name="weights")
    offsets = g.tensor([e, 1, 1], data_type="int32", name="offsets")
    with newer_cudnn_skips():
        out = g.moe_grouped_matmul(tokens, weights, offsets)
        og = g.build()
    tv, wv, ov = rng.standard_normal([1, t, k]), rng.standard_normal([e, k, n]), np.array([0, 4, 5])
    r = evaluate(og, {tokens.uid: tv, weights.uid: wv, offsets.uid: ov.reshape(e, 1, 1)})
    expected = np.zeros([1, t, n])
    for i, (lo, hi) in enumerate(experts(ov, t)):
        for token in range(lo, hi):
            expected[0, token] = tv[0, token] @ wv[i]
    assert_close(r.outputs[out.uid], expected)


def test_moe_grouped_matmul_weight_gradient(rng):
    t, k, n, e = 9, 3, 4, 2
    g = cb.Graph("moe_bwd", io_data_type="float")
    tokens, dout = g.tensor([1, t, k], name="tokens"), g.tensor([1, t, n], name="dout")
    offsets = g.tensor([e, 1, 1], data_type="int32", name="offsets")
    with newer_cudnn_skips():
        dw = g.moe_grouped_matmul_bwd(tokens, dout, offsets, num_experts=e)
        og = g.build()
    tv, dv, ov = rng.standard_normal([1, t, k]), rng.standard_normal([1, t, n]), np.array([0, 6])
    r = evaluate(og, {tokens.uid: tv, dout.uid: dv, offsets.uid: ov.reshape(e, 1, 1)})
    expected = np.zeros([e, k, n])
    for i, (lo, hi) in enumerate(experts(ov, t)):
        for token in range(lo, hi):
            expected[i] += np.outer(tv[0, token], dv[0, token])
    assert_close(r.outputs[dw.uid], expected)


def test_quantize_is_named_with_its_reason():
    with newer_cudnn_skips():
        p = block_scale_quantize(m=128, n=128)
    (line,) = unsupported(p.op_graph)
    assert line.startswith("BlockScaleQuantize (operation 0, writes quantize_y, quantize_scale): the fp8 values")


def test_paged_cache_load_is_named_with_its_reason():
    g = cb.Graph("paged", io_data_type="float")
    container = g.tensor([6, 2, 4, 8], name="container")
    table = g.tensor([2, 1, 3, 1], data_type="int32", name="table")
    lens = g.tensor([2, 1, 1, 1], data_type="int32", name="lens")
    with newer_cudnn_skips():
        k = g.paged_cache_load(container, table, lens, kind="v", max_seq_len=12)
        q = g.tensor([2, 2, 5, 8], name="q")
        g.matmul(q, g.reshape(k, [2, 2, 8, 12], strides=[192, 96, 1, 8]), output=True, name="s")
        try:
            og = g.build()
        except cb.CudnnError as e:
            pytest.skip(f"cuDNN refuses this graph: {e}")
    lines = unsupported(og)
    assert len(lines) == 1 and lines[0].startswith("PagedCacheLoad") and "page table" in lines[0]


def test_tensors_in_tiled_layouts_are_known_as_such():
    # the explorer leaves them out of the outputs it checks (a dQ accumulator in F16x16): their memory is tiles
    with newer_cudnn_skips():
        p = sdpa_composite_bwd(b=1, h=1, s_q=64, s_kv=64, d=64)
    specs = tensor_specs(None, p.op_graph)
    assert [s.name for s in specs.values() if s.tiled] == ["dq_accum"]
    assert not any(s.tiled for s in tensor_specs(None, sdpa_composite_bwd(b=1, h=1, s_q=64, s_kv=64, d=64,
                                                                          dq_accumulator=False).op_graph).values())
