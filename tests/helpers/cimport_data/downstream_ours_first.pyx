# cython: language_level=3
"""Ours first: #include "cudnn_backend_graph.h" comes before #include "cudnn.h", so it stands in for
the vendor's cudnn_graph.h, which cudnn.h then skips (tests/test_cimport.py)."""
from cudnn_backend._bindings.cycudnn cimport *
cimport cudnn_backend._bindings.cycudnn as cy

include "vendor_decls.pxi"

include "vendor_body.pxi"
