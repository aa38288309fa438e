"""Convolutions (CONVOLUTION_FORWARD, _BACKWARD_DATA, _BACKWARD_FILTER). A plan JSON finalized in one of the
convolution modes needs a node of that operation (cuDNN uses it unchecked: SIGSEGV without one, 9.10 .. 9.28.1)."""
from __future__ import annotations

from cudnn_backend.core.families._family import Family

FAMILY = Family(
    "conv", ("CONVOLUTION_FORWARD", "CONVOLUTION_BACKWARD_DATA", "CONVOLUTION_BACKWARD_FILTER"),
    graph_methods=("conv_fwd", "conv_bwd_data", "conv_bwd_filter", "convolution_descriptor"),
    finalize_modes={"CONV_FORWARD": "CONVOLUTION_FORWARD", "CONV_BWD_DATA": "CONVOLUTION_BACKWARD_DATA",
                    "CONV_BWD_FILTER": "CONVOLUTION_BACKWARD_FILTER"},
    doc=__doc__)
