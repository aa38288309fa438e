"""Band matrices: EXPAND_BAND_MATRIX, CONTRACT_BAND_MATRIX and DIAGONAL_BAND_MASK (attention masks)."""
from __future__ import annotations

from cudnn_backend.core.families._family import Family

FAMILY = Family('band', ('EXPAND_BAND_MATRIX', 'CONTRACT_BAND_MATRIX', 'DIAGONAL_BAND_MASK'), graph_methods=('expand_band_matrix', 'contract_band_matrix', 'diagonal_band_mask'), doc=__doc__)
