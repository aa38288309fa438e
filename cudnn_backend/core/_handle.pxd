# A cuDNN handle (see _handle.pyx): a Resource whose raw pointer is a cudnnHandle_t.
from cudnn_backend.core._context cimport HandleContext
from cudnn_backend.core._resource cimport Resource


cdef class Handle(Resource):
    cdef object _stream_ref              # the stream object set, kept alive while cuDNN launches on it
    cdef readonly object device
    cdef HandleContext _cuda             # the CUDA context current when it was made, and the threads that found it so
