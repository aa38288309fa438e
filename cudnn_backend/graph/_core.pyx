# cython: language_level=3, boundscheck=False, wraparound=False
"""The compiled core of the ``Graph`` builder: tensors, outputs, adding operations, the graph checks, finalize.

Building a small graph is mostly bookkeeping around ~60 cuDNN calls; done in Python that bookkeeping costs
ten times the calls. Here tensors are created and set through the core's C-level ``_set`` (no keyword
parsing), an operation's tensor slots are read from its ``_deps`` with a per-operation-type table made
once from the schema, and the checks of ``checks.check_operations`` run over those slots in C.
"""
from cpython.long cimport PyLong_CheckExact, PyLong_AsLongLong
from libc.stdint cimport int64_t

from cudnn_backend._bindings.cycudnn cimport *
from cudnn_backend.core._descriptor cimport Descriptor
from cudnn_backend.typed._base cimport TensorBase, TypedDescriptor

from cudnn_backend._bindings.enums import AttributeName, DataType, DescriptorType
from cudnn_backend.core import schema as _schema
from cudnn_backend.core._descriptor import Handle, as_int, attribute_io
from cudnn_backend.errors import GraphError
from cudnn_backend.graph import checks as _checks
from cudnn_backend.graph import shapes as _shapes
from cudnn_backend.graph._util import as_data_type, scalar_value
from cudnn_backend.typed import OperationGraph, Tensor
from cudnn_backend.typed.introspection import keyword_of
from cudnn_backend.typed.introspection import signature_of as _signature_of

__all__ = ["GraphCore"]

cdef enum:
    MAX_RANK = 8
    MAX_TYPES = 64

cdef int64_t MAX_ELEMENTS = (<int64_t>1) << 62  # as shapes.MAX_ELEMENTS

cdef int _FLOAT = CUDNN_DATA_FLOAT
cdef object _F32 = DataType.CUDNN_DATA_FLOAT
cdef list _SLOT_TABLE = [None] * MAX_TYPES  # operation type -> ((attribute, keyword, is output), ...)


cdef tuple _slot_table(int dtype):
    """The tensor attributes of an operation type (from the schema's io roles), made once per type."""
    entry = _SLOT_TABLE[dtype]
    if entry is None:
        spec = _schema.DESCRIPTORS[DescriptorType(dtype)]
        entry = tuple((int(a), keyword_of(a), attribute_io(a) == "output") for a in spec.attributes
                      if attribute_io(a) is not None)
        _SLOT_TABLE[dtype] = entry
    return <tuple>entry


cdef list _dims(object values, str what):
    """Sizes as a list of exact ints >= 1 (fast path for lists/tuples of ints; anything else through shapes)."""
    cdef Py_ssize_t i, n
    cdef int64_t v
    if type(values) is list or type(values) is tuple:
        n = len(values)
        if 1 <= n <= MAX_RANK:
            out = [None] * n
            for i in range(n):
                x = values[i]
                if not PyLong_CheckExact(x):
                    return _shapes.as_dims(values, what)
                try:
                    v = PyLong_AsLongLong(x)
                except OverflowError:  # beyond int64: refused there, naming the entry
                    return _shapes.as_dims(values, what)
                if v < 1:
                    return _shapes.as_dims(values, what)  # names the entry and the rule
                out[i] = x
            return out
    return _shapes.as_dims(values, what)


cdef list _packed(list dims, list order):
    """Packed strides; ``order`` lists axes outermost to innermost (None: row-major)."""
    cdef Py_ssize_t n = len(dims), k
    cdef int64_t acc = 1, d
    out = [0] * n
    for k in range(n - 1, -1, -1):
        axis = k if order is None else order[k]
        out[axis] = acc
        x = dims[axis]
        if not PyLong_CheckExact(x) or not (0 < x <= MAX_ELEMENTS):  # (computed output dims can be past int64)
            _shapes.packed_strides(dims, order)  # raises, naming the dims
            raise ValueError(f"dims: {list(dims)} are no tensor sizes")
        d = <int64_t>x
        if d > MAX_ELEMENTS // acc:  # the product would leave int64 (the span is refused, not wrapped)
            _shapes.packed_strides(dims, order)  # raises, naming the dims
        acc *= d
    return out


cdef list _order_of(object strides):
    """Axes from outermost to innermost by stride (ties keep axis order): an insertion sort of at most 8."""
    cdef Py_ssize_t n = len(strides), i, j
    cdef int64_t s[MAX_RANK]
    cdef int order[MAX_RANK]
    cdef int k
    for i in range(n):
        s[i] = strides[i]
        order[i] = i
    for i in range(1, n):
        k = order[i]
        j = i - 1
        while j >= 0 and s[order[j]] < s[k]:
            order[j + 1] = order[j]
            j -= 1
        order[j + 1] = k
    return [order[i] for i in range(n)]


cdef list _nhwc(list dims):
    cdef Py_ssize_t n = len(dims)
    if n < 3:
        raise ValueError(f"layout: 'nhwc' needs [N, C, spatial...] (rank >= 3), not {n} dims {dims}")
    return _packed(dims, [0, *range(2, n), 1])


cdef class GraphCore:
    """The state and fast paths of ``Graph`` (which adds the operation families as methods)."""

    cdef readonly object uids_used     # set of UIDs taken
    cdef int64_t _next_uid
    cdef public object io_data_type
    cdef public object intermediate_data_type
    cdef public object compute_data_type
    cdef public dict tensors
    cdef public list operations
    cdef public object op_graph
    cdef public str name
    cdef list _slots                   # per operation: [(keyword, tensor, signature, is output), ...]
    cdef object __weakref__

    def __init__(self, name="graph", io_data_type=DataType.CUDNN_DATA_HALF, intermediate_data_type=_F32,
                 compute_data_type=_F32):
        if not isinstance(name, str):
            raise TypeError(f"name: expected a str, not {type(name).__name__}")
        self.name = name
        self.io_data_type = as_data_type(io_data_type, "io_data_type")
        self.intermediate_data_type = as_data_type(intermediate_data_type, "intermediate_data_type")
        self.compute_data_type = as_data_type(compute_data_type, "compute_data_type")
        self.uids_used = set()
        self._next_uid = 1
        self.tensors = {}
        self.operations = []
        self.op_graph = None
        self._slots = []

    # -- UIDs --------------------------------------------------------------------------------------
    cdef object _reserve(self, object uid):
        if uid is None:
            while self._next_uid in self.uids_used:
                self._next_uid += 1
            u = self._next_uid
            self._next_uid += 1
        else:
            u = as_int(uid, "uid")
            if u in self.uids_used:
                raise GraphError(f"uid: {u} is already used in this graph")
        self.uids_used.add(u)
        return u

    # -- tensors -----------------------------------------------------------------------------------
    def tensor(self, dims, strides=None, data_type=None, *, uid=None, name=None, virtual=False, by_value=False,
               layout=None, alignment=16, **extra):
        """A finalized tensor with a UID unique in this graph.

        ``strides`` default to ``layout`` ('nhwc' channels last, 'nchw'/'row_major' packed, 'bshd'), else
        row-major packed; ``data_type`` defaults to ``intermediate_data_type`` for a virtual tensor and to
        ``io_data_type`` otherwise. ``extra`` are further ``Tensor`` keywords (``reordering_mode``, ...).
        """
        cdef list d = _dims(dims, "dims")
        cdef list s
        cdef TensorBase t
        if strides is None:
            if layout is None:
                s = _packed(d, None)
            elif layout == "nhwc":
                s = _nhwc(d)
            else:
                s = _shapes.layout_strides(d, layout)
        else:
            s = _dims(strides, "strides")
            if len(s) != len(d):
                raise ValueError(f"strides: {len(s)} strides for {len(d)} dims")
        if data_type is None:
            data_type = self.intermediate_data_type if virtual else self.io_data_type
        elif type(data_type) is not type(_F32):
            data_type = as_data_type(data_type, "data_type")
        u = self._reserve(uid)
        if extra:
            t = Tensor(**extra)
        else:
            t = Tensor.__new__(Tensor)
            t._create(CUDNN_BACKEND_TENSOR_DESCRIPTOR)
        t._set(CUDNN_ATTR_TENSOR_DATA_TYPE, CUDNN_TYPE_DATA_TYPE, data_type)
        t._set(CUDNN_ATTR_TENSOR_DIMENSIONS, CUDNN_TYPE_INT64, d)
        t._set(CUDNN_ATTR_TENSOR_STRIDES, CUDNN_TYPE_INT64, s)
        t._set(CUDNN_ATTR_TENSOR_UNIQUE_ID, CUDNN_TYPE_INT64, u)
        t._set(CUDNN_ATTR_TENSOR_BYTE_ALIGNMENT, CUDNN_TYPE_INT64, alignment)
        if virtual:
            t._set(CUDNN_ATTR_TENSOR_IS_VIRTUAL, CUDNN_TYPE_BOOLEAN, True)
        if by_value:
            t._set(CUDNN_ATTR_TENSOR_IS_BY_VALUE, CUDNN_TYPE_BOOLEAN, True)
        if name is not None and not isinstance(name, str):
            raise TypeError(f"name: expected a str, not {type(name).__name__}")
        t.name_ = name  # None: "t<uid>" / "v<uid>", made when asked for
        t.finalize()
        self.tensors[u] = t
        return t

    def scalar(self, value=None, data_type=_F32, *, name=None, uid=None, rank=4):
        """A by-value scalar tensor (all dims 1); ``value`` is bound in variant packs unless one is given."""
        rank = as_int(rank, "rank", 1, MAX_RANK)
        value = scalar_value(value, data_type, name or "value")  # checked now, not when a pack binds it
        ones = [1] * rank
        t = self.tensor(ones, ones, data_type, uid=uid, name=name, by_value=True)
        (<TensorBase>t).scalar_value = value
        return t

    def from_array(self, array, *, uid=None, name=None, **kwargs):
        """A tensor shaped like an array-like (numpy, torch, cupy, DLPack), with a UID unique in this graph."""
        u = self._reserve(uid)
        t = Tensor.from_array(array, uid=u, name=name, **kwargs)
        self.tensors[u] = t
        return t

    def allow_unconsumed(self, tensor):
        """Mark a virtual output that no operation reads as intended (the graph check lets it pass)."""
        (<TensorBase>self._need_tensor(tensor, "tensor")).allow_unconsumed = True
        return tensor

    # -- helpers of the operation families -----------------------------------------------------------
    cpdef object _need_tensor(self, object t, str what):
        if type(t) is not Tensor and not isinstance(t, TensorBase):
            raise TypeError(f"{what}: expected a Tensor (graph.tensor(...) or an operation's output), not "
                            f"{type(t).__name__}")
        if (<Descriptor>t).closed:
            raise ValueError(f"{what}: the tensor is closed")
        if not (<Descriptor>t).finalized:
            raise ValueError(f"{what}: the tensor is not finalized; finalize it first")
        return t

    cpdef object _compute(self, object compute):
        return self.compute_data_type if compute is None else as_data_type(compute, "compute")

    def _output(self, output, dims, like=None, data_type=None, name=None, strides=None, what="output"):
        """An operation's output: the tensor given (dims checked), a real one (``output=True``; ``data_type`` or
        the io type) or a virtual intermediate (``data_type`` or the intermediate type); strides as given, else
        packed in ``like``'s axis order."""
        cdef TensorBase t
        if output is False or output is True:
            if strides is None:
                if like is not None:
                    ls = (<TensorBase>like).signature()[2]
                    strides = _packed(list(dims), _order_of(ls)) if len(ls) == len(dims) else _packed(list(dims), None)
                else:
                    strides = _packed(list(dims), None)
            if output:
                return self.tensor(dims, strides, data_type if data_type is not None else self.io_data_type, name=name)
            return self.tensor(dims, strides, data_type, name=name, virtual=True)
        if isinstance(output, TensorBase):
            t = self._need_tensor(output, what)
            if list(t.signature()[1]) != list(dims):
                raise GraphError(f"{what}: {t.describe()} should have dims {list(dims)}")
            if data_type is not None and int(t.signature()[3]) != int(as_data_type(data_type, "output_data_type")):
                raise GraphError(f"{what}: {t.describe()} should be "
                                 f"{as_data_type(data_type, 'output_data_type').name}")
            return t
        raise TypeError(f"{what}: expected True, False or a Tensor, not {type(output).__name__}")

    def _scalar_or_tensor(self, value, rank, name, data_type=_F32):
        """A by-value scalar for a number, the tensor itself for a Tensor, None for None."""
        if value is None or isinstance(value, TensorBase):
            return value
        return self.scalar(value, data_type, name=name, rank=rank)

    # -- operations --------------------------------------------------------------------------------
    def add(self, op):
        """Add an operation built by hand (a typed operation descriptor; finalized here if it is not yet)."""
        cdef Descriptor d
        cdef list slots = []
        if not isinstance(op, TypedDescriptor):
            raise TypeError(f"op: expected a typed operation descriptor (OperationConvolutionForward, ...), not "
                            f"{type(op).__name__}")
        d = <Descriptor>op
        if self.op_graph is not None:
            raise GraphError(f"graph {self.name!r} is already built; make a new Graph to add operations")
        table = _slot_table(d._dtype) if 0 <= d._dtype < MAX_TYPES else ()
        if not table and not op.descriptor_type.name.startswith("CUDNN_BACKEND_OPERATION_"):
            raise TypeError(f"op: expected an operation descriptor, not a {op.descriptor_type.name}")
        if not d._finalized:
            op.finalize()
        deps = d._deps
        for attr, kw, out in table:
            v = deps.get(attr)
            if v is None:
                continue
            if type(v) is tuple:
                for t in <tuple>v:
                    if isinstance(t, TensorBase):
                        slots.append((kw, t, (<TensorBase>t).signature(), out))
            elif isinstance(v, TensorBase):
                slots.append((kw, v, (<TensorBase>v).signature(), out))
            elif isinstance(v, Descriptor):  # a generic tensor descriptor
                sig = _signature_of(v)
                slots.append((kw, v, sig, out))
        self.operations.append(op)
        self._slots.append(slots)
        for slot in slots:
            uid = slot[2][0]
            if uid not in self.tensors:
                self.tensors[uid] = slot[1]
        return op

    # -- finalize ----------------------------------------------------------------------------------
    def check(self):
        """The graph checks (``graph.checks.check_operations``): GraphError naming the tensors."""
        _check(self.operations, self._slots)

    def build(self, handle=None, check=True):
        """Check and finalize the operation graph. On a GPU give it the ``handle`` plans will run with: a graph
        finalized without one gives plans that fail at execute with NOT_SUPPORTED_ARCH_MISMATCH."""
        cdef Descriptor g
        if handle is not None and not isinstance(handle, Handle):
            raise TypeError(f"handle: expected a cudnn_backend.Handle, not {type(handle).__name__}")
        if self.op_graph is not None:
            return self.op_graph
        if check:
            _check(self.operations, self._slots)
        g = OperationGraph.__new__(OperationGraph)
        g._create(CUDNN_BACKEND_OPERATIONGRAPH_DESCRIPTOR)
        g._set(CUDNN_ATTR_OPERATIONGRAPH_OPS, CUDNN_TYPE_BACKEND_DESCRIPTOR, self.operations)
        if handle is not None:
            g._set(CUDNN_ATTR_OPERATIONGRAPH_HANDLE, CUDNN_TYPE_HANDLE, handle)
        g.finalize()
        self.op_graph = g
        return g

    @property
    def built(self):
        return self.op_graph is not None

    @property
    def slots(self):
        """Per operation, its tensors: [(keyword, tensor, signature, is output), ...]."""
        return [list(s) for s in self._slots]


cdef int _check(list operations, list slots) except -1:
    """``checks.check_operations`` in C over the slots; the messages come from the Python checks."""
    cdef Py_ssize_t n = len(operations), i, j
    cdef dict producer = {}
    cdef dict seen = {}
    cdef set consumed = set()
    cdef tuple sig
    if n == 0:
        raise GraphError("an operation graph needs at least one operation")
    for i in range(n):
        op = operations[i]
        ins = None
        for slot in <list>slots[i]:
            sig = slot[2]
            uid = sig[0]
            if slot[3]:
                p = producer.get(uid)
                if p is not None and (<tuple>p)[0] is not op:
                    return _refuse(operations, slots)  # with the tensors named
                producer[uid] = (op, slot[1], sig, i)
            else:
                if ins is None:
                    ins = set()
                ins.add(uid)
        if n > 1 and ins is not None:
            for slot in <list>slots[i]:
                if slot[3] and slot[2][0] in ins:
                    return _refuse(operations, slots)
    for i in range(n):
        for slot in <list>slots[i]:
            sig = slot[2]
            uid = sig[0]
            if not slot[3]:
                consumed.add(uid)
            p = producer.get(uid)
            if p is not None:
                if not slot[3] and not _same_tensor(<tuple>(<tuple>p)[2], sig):
                    return _refuse(operations, slots)
                continue
            first = seen.get(uid)
            if first is None:
                seen[uid] = sig
            elif not _same_tensor(<tuple>first, sig):
                return _refuse(operations, slots)
            if sig[4]:
                return _refuse(operations, slots)
    for uid, p in producer.items():
        sig = (<tuple>p)[2]
        if sig[4] and uid not in consumed and not getattr((<tuple>p)[1], "allow_unconsumed", False):
            return _refuse(operations, slots)
    # a cycle: an operation reading what a later-or-same-position operation produces, followed to the start
    for i in range(n):
        for slot in <list>slots[i]:
            if not slot[3]:
                p = producer.get(slot[2][0])
                if p is not None and (<tuple>p)[3] >= i:
                    _checks.check_operations(operations, slots)  # orders them: raises on a cycle only
                    return 0
    return 0


cdef inline bint _same_tensor(tuple a, tuple b):
    """Same dims, strides, data type and virtual flag (signature entries 1 to 4)."""
    return a[1] == b[1] and a[2] == b[2] and a[3] == b[3] and a[4] == b[4]


cdef int _refuse(list operations, list slots) except -1:
    """A check failed: the Python checks say which and raise with the tensors named."""
    _checks.check_operations(operations, slots)
    raise GraphError("the operation graph fails the graph checks")
