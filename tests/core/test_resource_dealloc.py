"""Every kind of Resource destroys its cuDNN object at collection, before its own references go.

Resource itself has no ``__dealloc__`` (it would only run a second time, after the kind's, and find nothing left), so
each kind deriving from it directly must call ``self._dealloc()`` first in its own ``__dealloc__``: a kind without one
would leak its cuDNN object at every collection. Kinds deriving from a kind (the typed classes) inherit its.
"""
import gc
import pathlib
import re

import cudnn_backend as cb
from cudnn_backend.core import _resource

PACKAGE = pathlib.Path(cb.__file__).resolve().parent
CLASS = re.compile(r"^cdef class (\w+)\((?:\w+\.)?(\w+)\):", re.M)


def _kinds():
    """{class name: its .pyx} of the cdef classes deriving from Resource directly (declared in a .pxd)."""
    out = {}
    for pxd in PACKAGE.rglob("*.pxd"):
        for name, base in CLASS.findall(pxd.read_text()):
            if base in ("Resource", "_Resource"):
                out[name] = pxd.with_suffix(".pyx")
    return out


def _body(source: str, name: str) -> str:
    start = re.search(rf"^cdef class {name}\b.*:$", source, re.M)
    assert start, name
    end = re.search(r"^\S", source[start.end():], re.M)
    return source[start.end():start.end() + end.start()] if end else source[start.end():]


def test_every_kind_destroys_first_in_its_own_dealloc():
    kinds = _kinds()
    assert {"Descriptor", "Handle", "VariantPack"} <= set(kinds), kinds
    for name, pyx in kinds.items():
        body = _body(pyx.read_text(), name)
        m = re.search(r"^    def __dealloc__\(self\):\n((?:        #.*\n)*)        (\S.*)$", body, re.M)
        assert m, f"{name} ({pyx.name}) has no __dealloc__: its cuDNN object would leak at collection"
        assert m.group(2).startswith("self._dealloc()"), f"{name}.__dealloc__ does not destroy first: {m.group(2)}"


def test_resource_itself_has_no_dealloc():
    """(One destroy per collected object: the kind's.)"""
    source = (PACKAGE / "core" / "_resource.pyx").read_text()
    assert not re.search(r"^    def __dealloc__", _body(source, "Resource"), re.M)


def test_a_collected_descriptor_releases_what_it_kept():
    """Collection runs the kind's destroy before its references go: the children set on it are released with it."""
    import weakref

    t = cb.Descriptor(cb.CUDNN_BACKEND_TENSOR_DESCRIPTOR)
    for attr, value in ((cb.CUDNN_ATTR_TENSOR_DATA_TYPE, cb.CUDNN_DATA_FLOAT), (cb.CUDNN_ATTR_TENSOR_DIMENSIONS, [1, 1]),
                        (cb.CUDNN_ATTR_TENSOR_STRIDES, [1, 1]), (cb.CUDNN_ATTR_TENSOR_UNIQUE_ID, 1),
                        (cb.CUDNN_ATTR_TENSOR_BYTE_ALIGNMENT, 4)):
        t.set_auto(attr, value)
    t.finalize()
    op = cb.Descriptor(cb.CUDNN_BACKEND_OPERATION_POINTWISE_DESCRIPTOR)
    op.set_auto(cb.CUDNN_ATTR_OPERATION_POINTWISE_XDESC, t)
    child = weakref.ref(t)
    del t
    gc.collect()
    assert child() is not None  # kept by op
    assert _resource._in_flight(op) == 0
    del op
    gc.collect()
    assert child() is None
