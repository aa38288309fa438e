"""Band matrices: EXPAND_BAND_MATRIX, CONTRACT_BAND_MATRIX and DIAGONAL_BAND_MASK (attention masks)."""
from __future__ import annotations

from cudnn_backend.core.families._checks import fail
from cudnn_backend.core.families._family import Family

__all__ = ["FAMILY", "band_mask_dims"]


def band_mask_dims(x_dims, bound_dims=None, what="left_bound"):
    """Dims of a DIAGONAL_BAND_MASK's output (x's: attention scores [b, h, s_q, s_kv]); a bound or sequence-length
    tensor must be [b, 1, 1, 1] or [1, 1, 1, 1] (cuDNN 9.28.1's rule, checked first)."""
    if len(x_dims) != 4:
        fail(f"diagonal band mask: x is {list(x_dims)}; it masks attention scores [b, h, s_q, s_kv] (4-d)")
    if bound_dims is not None and (len(bound_dims) != 4 or list(bound_dims[1:]) != [1, 1, 1]
                                   or bound_dims[0] not in (1, x_dims[0])):
        fail(f"diagonal band mask: {what} is {list(bound_dims)}; it must be [b={x_dims[0]}, 1, 1, 1] or [1, 1, 1, 1]")
    return list(x_dims)


FAMILY = Family(
    "band", ("EXPAND_BAND_MATRIX", "CONTRACT_BAND_MATRIX", "DIAGONAL_BAND_MASK"),
    graph_methods=("expand_band_matrix", "contract_band_matrix", "diagonal_band_mask"),
    doc=__doc__)
