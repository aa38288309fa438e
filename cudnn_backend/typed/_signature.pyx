# cython: language_level=3
"""``TensorSignature``: what graph building compares of a tensor (UID, dims, strides, data type, virtual, by
value), the compact form of ``typed.tensors.TensorSpec``.

A compiled class with named fields: the ``Graph`` builder makes one per tensor and reads its fields in C
(``graph._core``), which a named tuple would make several times slower. ``make_signature`` (``TensorSignature.of``
from Python) is the one rule turning a tensor's attribute values, as set or as read back from cuDNN, into a
signature: an unset UID is -1, a list attribute stored as its one value becomes a 1-tuple, an unset flag False.
It iterates, indexes and compares like the 6-tuple it replaces, so ``uid, dims, *_ = sig`` still reads.
"""
cimport cython

__all__ = ["TensorSignature"]

_FIELDS = ("uid", "dims", "strides", "data_type", "virtual", "by_value")


cdef inline tuple _values(object v):
    """An attribute's values as a tuple (stored as one value when one was set; None when unset)."""
    if type(v) is tuple:
        return <tuple>v
    if v is None:
        return ()
    if isinstance(v, (list, tuple)):
        return tuple(v)
    return (v,)


@cython.final
@cython.freelist(64)
cdef class TensorSignature:
    """A tensor's UID (-1: unset), dims, strides, data type (the value set; None: unset), virtual and by-value
    flags: what graph building compares; ``same_tensor`` says whether two of one UID agree."""

    def __init__(self, uid, dims, strides, data_type, virtual=False, by_value=False):
        self._fill(uid, dims, strides, data_type, virtual, by_value)

    cdef int _fill(self, object uid, object dims, object strides, object data_type, object virtual,
                   object by_value) except -1:
        self.uid = -1 if uid is None else uid
        self.dims = _values(dims)
        self.strides = _values(strides)
        self.data_type = data_type
        self.virtual = bool(virtual)
        self.by_value = bool(by_value)
        return 0

    @staticmethod
    def of(uid, dims, strides, data_type, virtual, by_value):
        """The signature of a tensor's attribute values as set or read back (None: unset)."""
        return make_signature(uid, dims, strides, data_type, virtual, by_value)

    cpdef bint same_tensor(self, TensorSignature other):
        """Whether ``other`` (of the same UID) describes the same tensor: dims, strides, data type, virtual flag."""
        return self.dims == other.dims and self.strides == other.strides and self.data_type == other.data_type \
            and self.virtual == other.virtual

    def _as_tuple(self):
        return (self.uid, self.dims, self.strides, self.data_type, self.virtual, self.by_value)

    def __iter__(self):
        return iter(self._as_tuple())

    def __len__(self):
        return 6

    def __getitem__(self, index):
        return self._as_tuple()[index]

    def __eq__(self, other):
        if isinstance(other, TensorSignature):
            return self._as_tuple() == (<TensorSignature>other)._as_tuple()
        if isinstance(other, tuple):
            return self._as_tuple() == other
        return NotImplemented

    def __hash__(self):
        return hash(self._as_tuple())

    def __repr__(self):
        return "TensorSignature(" + ", ".join(f"{n}={v!r}" for n, v in zip(_FIELDS, self._as_tuple())) + ")"

    def __reduce__(self):
        return (TensorSignature, self._as_tuple())


cdef TensorSignature make_signature(object uid, object dims, object strides, object data_type, object virtual,
                                    object by_value):
    cdef TensorSignature sig = TensorSignature.__new__(TensorSignature)
    sig._fill(uid, dims, strides, data_type, virtual, by_value)
    return sig
