"""Named lists of graphs to explore or tune together: ``PRESETS[name]`` is a list of
``(label, builder, kwargs)`` with ``builder`` an importable reference ("module:function") so that each entry
can be shipped to another process or machine and rebuilt there.

* ``resnet50``: ResNet-50's twelve distinct 3x3 and 1x1 convolutions (stride 1), fp16 NHWC, at batch 32 and 1;
* ``resnet50_b32`` / ``resnet50_b1``: one batch size only;
* ``fused``: the fused patterns of the catalogue (conv + bias + ReLU, conv + bias + residual add + ReLU,
  matmul + bias + GELU / ReLU, conv + GEN_STATS), at sizes that are not launch-bound;
* ``user``: graphs users bring — a grouped conv, a batched matmul + bias + ReLU, conv + bias + residual add
  + ReLU, an RMS norm and SDPA forward;
* ``attention``: attention as LLMs run it, fp16 — unified SDPA forward (training and inference) and backward, the
  composite graph with a causal mask, and the SOFTMAX and DIAGONAL_BAND_MASK forms of cuDNN 9.20+ (refused by the
  version gate on older releases), at two shapes.
"""
from __future__ import annotations

__all__ = ["PRESETS", "RESNET50_CONVS", "preset"]

# ResNet-50's convolutions (stride-1 versions): (C, K, H=W, R=S)
RESNET50_CONVS = (
    (64, 64, 56, 1), (64, 64, 56, 3), (64, 256, 56, 1), (256, 64, 56, 1),
    (256, 128, 28, 1), (128, 128, 28, 3), (128, 512, 28, 1), (512, 128, 28, 1),
    (256, 256, 14, 3), (256, 1024, 14, 1), (1024, 256, 14, 1), (512, 512, 7, 3),
)

_P = "cudnn_backend.patterns"


def _resnet(batch):
    return [(f"resnet50 n{batch} c{c} k{k} {hw}x{hw} {rs}x{rs}", f"{_P}:conv_fwd",
             dict(n=batch, c=c, h=hw, w=hw, k=k, r=rs, s=rs, padding=rs // 2))
            for c, k, hw, rs in RESNET50_CONVS]


PRESETS = {
    "resnet50": _resnet(32) + _resnet(1),
    "resnet50_b32": _resnet(32),
    "resnet50_b1": _resnet(1),
    "fused": [
        ("conv_bias_relu n8 c64 56x56 k32 3x3", f"{_P}:conv_bias_relu", {}),
        ("conv_bias_add_relu n8 c64 56x56 k64 3x3", f"{_P}:conv_bias_add_relu", dict(k=64)),
        ("matmul_bias_gelu 8x1024x1024x1024", f"{_P}:matmul_bias_gelu", dict(batch=8, m=1024, n=1024, k=1024)),
        ("matmul_bias_relu 8x1024x1024x1024", f"{_P}:matmul_bias_relu", dict(batch=8, m=1024, n=1024, k=1024)),
        ("bn_gen_stats n8 c64 56x56 k64", f"{_P}:bn_gen_stats", dict(n=8, c=64, h=56, w=56, k=64)),
    ],
    "user": [
        ("grouped conv n32 c256 28x28 k256 3x3 g32", f"{_P}:conv_fwd",
         dict(n=32, c=256, h=28, w=28, k=256, r=3, s=3, groups=32, padding=1)),
        ("batched matmul+bias+relu 16x512x512x512", f"{_P}:matmul_bias_relu", dict(batch=16, m=512, n=512, k=512)),
        ("conv+bias+add+relu n32 c128 28x28 k128 3x3", f"{_P}:conv_bias_add_relu",
         dict(n=32, c=128, h=28, w=28, k=128)),
        ("rms_norm 8192x4096", f"{_P}:rms_norm_fwd", dict(tokens=8192, hidden=4096)),
        ("sdpa_fwd b4 h16 s1024 d64", f"{_P}:sdpa_fwd", dict(b=4, h=16, s_q=1024, s_kv=1024, d=64)),
    ],
    "attention": [
        *(entry for b, h, s, d in ((4, 16, 1024, 64), (1, 32, 4096, 128)) for entry in (
            (f"sdpa_fwd b{b} h{h} s{s} d{d}", f"{_P}:sdpa_fwd", dict(b=b, h=h, s_q=s, s_kv=s, d=d)),
            (f"sdpa_fwd inference b{b} h{h} s{s} d{d}", f"{_P}:sdpa_fwd",
             dict(b=b, h=h, s_q=s, s_kv=s, d=d, training=False)),
            (f"sdpa_bwd b{b} h{h} s{s} d{d}", f"{_P}:sdpa_bwd", dict(b=b, h=h, s_q=s, s_kv=s, d=d)),
            (f"sdpa_composite_fwd causal b{b} h{h} s{s} d{d}", f"{_P}:sdpa_composite_fwd",
             dict(b=b, h=h, s_q=s, s_kv=s, d=d, causal=True)),
            (f"sdpa_softmax_fwd b{b} h{h} s{s} d{d}", f"{_P}:sdpa_softmax_fwd", dict(b=b, h=h, s_q=s, s_kv=s, d=d)),
            (f"diagonal_band_mask b{b} h{h} s{s} d{d}", f"{_P}:diagonal_band_mask",
             dict(b=b, h=h, s_q=s, s_kv=s, d=d)),
        )),
    ],
}


def preset(name: str) -> list:
    """The (label, builder, kwargs) entries of a preset (ValueError naming the presets for an unknown name)."""
    try:
        return list(PRESETS[name])
    except (KeyError, TypeError):
        raise ValueError(f"preset: {name!r} is not one of {', '.join(PRESETS)}") from None
