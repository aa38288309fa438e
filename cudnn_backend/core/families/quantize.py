"""Block-scaled quantization: BLOCK_SCALE_QUANTIZE and BLOCK_SCALE_DEQUANTIZE (MX / NVFP4 formats)."""
from __future__ import annotations

from cudnn_backend.core.families._family import Family

FAMILY = Family(
    "quantize", ("BLOCK_SCALE_QUANTIZE", "BLOCK_SCALE_DEQUANTIZE"),
    graph_methods=("block_scale_quantize", "block_scale_dequantize"),
    doc=__doc__)
