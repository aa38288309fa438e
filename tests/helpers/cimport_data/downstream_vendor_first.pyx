# cython: language_level=3
"""Vendor first: #include "cudnn.h" comes before #include "cudnn_backend_graph.h", so the vendor's
cudnn_graph.h defines the types and cudnn_backend_graph.h skips its copy (tests/test_cimport.py)."""
include "vendor_decls.pxi"

from cudnn_backend._bindings.cycudnn cimport *
cimport cudnn_backend._bindings.cycudnn as cy

include "vendor_body.pxi"
