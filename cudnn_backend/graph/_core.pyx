# cython: language_level=3, boundscheck=False, wraparound=False
"""The compiled core of the ``Graph`` builder: tensors, outputs, adding operations, the graph checks, finalize.

Building a small graph is mostly bookkeeping around ~60 cuDNN calls; done in Python that bookkeeping costs
ten times the calls. Here tensors are created and set through the core's C-level ``_set`` (no keyword
parsing), an operation's tensor slots are core's (``tensor_slots_of``, called in C: the schema's roles), and the
checks of ``checks.check_operations`` run over those slots in C. What cuDNN refuses or mishandles about one
operation's tensors (a tensor of another Graph, an output it also reads, a second producer, a cycle) is refused as
the operation is added, naming the parameter.

The hottest operation families live here too, as the same C-level code (``conv_fwd`` and its
``convolution_descriptor``, ``pointwise``): their descriptors are made and set directly, shapes are computed
on C ints, and anything unusual (an argument that is not a plain int or list of ints, a shape that does not
fit) is handed to the Python helpers of ``shapes`` / ``_util``, which give the errors.
"""
from cpython.long cimport PyLong_AsLongLongAndOverflow, PyLong_CheckExact
from cpython.object cimport PyTypeObject
from cpython.ref cimport PyObject
from cpython.weakref cimport PyWeakref_GetObject, PyWeakref_NewRef
from libc.stdint cimport int64_t

from cudnn_backend._bindings.cycudnn cimport *
from cudnn_backend.core._descriptor cimport Descriptor, tensor_slots_of
from cudnn_backend.typed._base cimport TensorBase, TypedDescriptor
from cudnn_backend.typed._signature cimport TensorSignature

from cudnn_backend._bindings.enums import (
    AttributeName,
    ConvolutionMode,
    DataType,
    DescriptorType,
    OperationGraphMode,
    PointwiseMode,
)
from cudnn_backend.core._coerce import as_int
from cudnn_backend.core._handle import Handle
from cudnn_backend.core._status import check_available
from cudnn_backend.core.families import _build
from cudnn_backend.core.families._build import OVERRIDE_SHAPES_NEEDS, as_bool, as_choice, as_data_type, scalar_value
from cudnn_backend.core.families.conv import conv_mode as _conv_mode
from cudnn_backend.core.families.conv import MAX_SPATIAL_DIMS as _MAX_SPATIAL_DIMS
from cudnn_backend.core.families.conv import conv_output_dims as _conv_output_dims
from cudnn_backend.core.families.pointwise import broadcast_dims as _broadcast_dims
from cudnn_backend.core.families.pointwise import operands_problem as _pointwise_operands_problem
from cudnn_backend.core.families.pointwise import parameters_problem as _pointwise_parameters_problem
from cudnn_backend.core.families.pointwise import pointwise_mode as _pointwise_mode
from cudnn_backend.core.families.pointwise import _BOOL_COMPUTE, _BOOL_OUT, _GEN_INDEX
from cudnn_backend.errors import GraphError
from cudnn_backend.graph import checks as _checks
from cudnn_backend.typed import (
    Convolution,
    OperationConvolutionForward,
    OperationGraph,
    OperationPointwise,
    Pointwise,
    Tensor,
    descriptor_class,
)
from cudnn_backend.typed import arrays as _arrays
from cudnn_backend.typed.introspection import keyword_of
from cudnn_backend.typed.introspection import signature_of as _signature_of

__all__ = ["GraphCore"]

cdef enum:
    MAX_RANK = 8

cdef int64_t MAX_ELEMENTS = _build.MAX_ELEMENTS

cdef int _FLOAT = CUDNN_DATA_FLOAT
cdef object _F32 = DataType.CUDNN_DATA_FLOAT
cdef object _DATA_TYPE = DataType
cdef object _CONVOLUTION_MODE = ConvolutionMode
cdef object _POINTWISE_MODE = PointwiseMode
cdef object _XCORR = ConvolutionMode.CUDNN_CROSS_CORRELATION
cdef object _BOOLEAN = DataType.CUDNN_DATA_BOOLEAN
cdef object _BOOLEAN_TYPES = _build.BOOLEAN_TYPES
cdef object _INT32 = DataType.CUDNN_DATA_INT32
cdef object _RELU = PointwiseMode.CUDNN_POINTWISE_RELU_FWD
cdef object _ADD = PointwiseMode.CUDNN_POINTWISE_ADD
cdef tuple _NO_ARGS = ()


cdef inline Descriptor _new(object cls, int dtype):
    """A descriptor of a typed class, created without keyword parsing (``cls.__new__(cls)`` + create)."""
    cdef Descriptor d = <Descriptor>(<PyTypeObject*>cls).tp_new(cls, <PyObject*>_NO_ARGS, NULL)
    d._create(dtype)
    return d


cdef inline object _data_type(object value, str what):
    return value if type(value) is _DATA_TYPE else as_data_type(value, what)


cdef object _scalar_value(object value, object data_type, str what):
    """A by-value scalar's value checked against its data type (``scalar_value``), then encoded as every variant pack
    encodes it (``arrays.scalar_code``): what a pack would refuse (a value past the type's, a type without a host
    encoding) is refused now, not by every pack."""
    checked = scalar_value(value, data_type, what)
    if checked is not None:
        member = _data_type(data_type, "data_type")
        try:
            _arrays.scalar_code(checked, member, what)
        except TypeError:  # (its one TypeError: a type without a host encoding)
            raise TypeError(f"{what}: a by-value {member.name} scalar has no encoding for a value: make it without one "
                            "(value=None) and bind its raw bytes in each variant pack") from None
    return checked


cdef inline bint _small_int_at_least(object v, int64_t minimum):
    """``v`` is an exact int, >= ``minimum`` and far from the 64-bit limits (sums of a few of them fit)."""
    cdef int overflow = 0
    cdef long long x
    if not PyLong_CheckExact(v):
        return False
    x = PyLong_AsLongLongAndOverflow(v, &overflow)
    return overflow == 0 and minimum <= x < (1LL << 60)


cdef list _pair(object v, Py_ssize_t n, str what, int64_t minimum):
    """``shapes.pair``: one int for every spatial dim, or exactly ``n`` ints, each >= ``minimum`` (fast for plain
    ints and lists/tuples of them; anything else, and every error, through ``shapes.pair``)."""
    cdef Py_ssize_t i
    if PyLong_CheckExact(v):
        if _small_int_at_least(v, minimum):
            return [v] * n
    elif (type(v) is list or type(v) is tuple) and len(v) == n:
        for i in range(n):
            if not _small_int_at_least(v[i], minimum):
                return _build.pair(v, n, what, minimum)
        return list(v)
    return _build.pair(v, n, what, minimum)


cdef list _broadcast2(object a, object b, object mode):
    """``shapes.broadcast_dims(a, b)`` on C ints (equal ranks, size-1 dims broadcast); errors through it."""
    cdef Py_ssize_t n = len(a), i
    cdef int64_t x, y
    if len(b) == n and n <= MAX_RANK:
        out = [None] * n
        for i in range(n):
            x = a[i]
            y = b[i]
            if x == y or y == 1:
                out[i] = a[i]
            elif x == 1:
                out[i] = b[i]
            else:
                break
        else:
            return out
    return _broadcast_dims(a, b, what=f"pointwise {mode.name}")


cdef list _conv_out(tuple xd, tuple wd, list pre, list post, list st, list dl):
    """``shapes.conv_output_dims`` on C ints; anything irregular through it (it raises the GraphError)."""
    cdef Py_ssize_t nsp = len(xd) - 2, i
    cdef int64_t c, cg, k, groups, eff, o
    if nsp < 1 or len(wd) != len(xd) or nsp > _MAX_SPATIAL_DIMS or len(pre) != nsp or len(post) != nsp or len(st) != nsp \
            or len(dl) != nsp:
        return _conv_output_dims(xd, wd, pre, st, dl, post)
    c = xd[1]
    cg = wd[1]
    k = wd[0]
    if cg < 1 or c % cg:
        return _conv_output_dims(xd, wd, pre, st, dl, post)
    groups = c // cg
    if k % groups:
        return _conv_output_dims(xd, wd, pre, st, dl, post)
    out = [xd[0], wd[0]]
    for i in range(nsp):
        if not (_small_int_at_least(xd[2 + i], 1) and _small_int_at_least(wd[2 + i], 1) and
                _small_int_at_least(pre[i], 0) and _small_int_at_least(post[i], 0) and
                _small_int_at_least(st[i], 1) and _small_int_at_least(dl[i], 1)):
            return _conv_output_dims(xd, wd, pre, st, dl, post)
        eff = <int64_t>dl[i] * (<int64_t>wd[2 + i] - 1) + 1
        o = (<int64_t>xd[2 + i] + <int64_t>pre[i] + <int64_t>post[i] - eff) // <int64_t>st[i] + 1
        if o <= 0:
            return _conv_output_dims(xd, wd, pre, st, dl, post)
        out.append(o)
    return out


cdef list _dims(object values, str what):
    """Sizes as a list of exact ints >= 1 (a list of them is taken as it is, a tuple copied; anything else
    through shapes, which names the entry and the rule)."""
    cdef Py_ssize_t i, n
    cdef int overflow = 0
    cdef long long v
    if type(values) is list or type(values) is tuple:
        n = len(values)
        if 1 <= n <= MAX_RANK:
            for i in range(n):
                x = values[i]
                if not PyLong_CheckExact(x):
                    return _build.as_dims(values, what)
                v = PyLong_AsLongLongAndOverflow(x, &overflow)
                if v < 1 or overflow:
                    return _build.as_dims(values, what)
            return <list>values if type(values) is list else list(values)
    return _build.as_dims(values, what)


cdef list _packed(list dims, const int* order):
    """Packed strides; ``order`` lists axes outermost to innermost (NULL: row-major). At most MAX_RANK dims. A span
    past ``MAX_ELEMENTS`` is refused through ``shapes.packed_strides`` (naming the dims), never wrapped."""
    cdef Py_ssize_t n = len(dims), k
    cdef int axis
    cdef int64_t acc = 1, d
    cdef int64_t st[MAX_RANK]
    for k in range(n - 1, -1, -1):
        axis = order[k] if order != NULL else <int>k
        st[axis] = acc
        if not _small_int_at_least(dims[axis], 1):
            return _build.packed_strides(dims, None if order == NULL else [order[i] for i in range(n)])
        d = <int64_t>dims[axis]
        if d > MAX_ELEMENTS // acc:
            return _build.packed_strides(dims, None if order == NULL else [order[i] for i in range(n)])
        acc *= d
    return [st[k] for k in range(n)]


cdef int _order_of(object strides, int* order) except -1:
    """Axes from outermost to innermost by stride (ties keep axis order) into ``order``: an insertion sort of at
    most MAX_RANK."""
    cdef Py_ssize_t n = len(strides), i, j
    cdef int64_t s[MAX_RANK]
    cdef int k
    for i in range(n):
        s[i] = strides[i]
        order[i] = <int>i
    for i in range(1, n):
        k = order[i]
        j = i - 1
        while j >= 0 and s[order[j]] < s[k]:
            order[j + 1] = order[j]
            j -= 1
        order[j + 1] = k
    return 0


cdef list _nhwc(list dims):
    cdef Py_ssize_t n = len(dims), k
    cdef int order[MAX_RANK]
    if n < 3:
        raise ValueError(f"layout: 'nhwc' needs [N, C, spatial...] (rank >= 3), not {n} dims {dims}")
    order[0] = 0
    for k in range(2, n):
        order[k - 1] = <int>k
    order[n - 1] = 1
    return _packed(dims, order)


# Weak references to the graphs made, so that a refusal can name the Graph a stray tensor came from: read only when a
# tensor is not this graph's own; the dead ones are dropped as the list doubles (no callback per graph).
cdef list _GRAPHS = []
cdef Py_ssize_t _GRAPHS_PRUNE_AT = 64


cdef int _remember_graph(object graph) except -1:
    global _GRAPHS, _GRAPHS_PRUNE_AT
    if len(_GRAPHS) >= _GRAPHS_PRUNE_AT:
        _GRAPHS = [r for r in _GRAPHS if PyWeakref_GetObject(r) != <PyObject*>None]
        _GRAPHS_PRUNE_AT = max(64, 2 * len(_GRAPHS))
    _GRAPHS.append(PyWeakref_NewRef(graph, None))
    return 0


cdef object _graph_holding(object t, object uid, object skip):
    """The live Graph other than ``skip`` that made ``t`` (None: none; a tensor made by hand belongs to no graph,
    whichever took it: its UID is the user's, and cuDNN takes one descriptor in several graphs)."""
    for ref in tuple(_GRAPHS):
        g = ref()
        if g is not None and g is not skip and (<GraphCore>g).tensors.get(uid) is t and \
                uid not in (<GraphCore>g)._adopted:
            return g
    return None


cdef int _tensor_slots(Descriptor op, list slots) except -1:
    """Append ``(attribute, tensor, signature, is output)`` for each tensor set on ``op`` (core's ``tensor_slots_of``,
    called in C)."""
    cdef tuple slot
    cdef Py_ssize_t first = len(slots), i
    for slot in tensor_slots_of(op):
        t = slot[1]
        slots.append((slot[0], t, (<TensorBase>t).signature() if isinstance(t, TensorBase) else _signature_of(t),
                      slot[2]))
    for i in range(first, len(slots)):  # a ragged tensor's offsets: read too (``introspection.with_ragged_offsets``)
        t = (<tuple>slots[i])[1]
        offsets = (<Descriptor>t)._value(CUDNN_ATTR_TENSOR_RAGGED_OFFSET_DESC) if isinstance(t, Descriptor) else None
        if isinstance(offsets, Descriptor) and not (<Descriptor>offsets).closed:
            slots.append((CUDNN_ATTR_TENSOR_RAGGED_OFFSET_DESC, offsets, (<TensorBase>offsets).signature()
                          if isinstance(offsets, TensorBase) else _signature_of(offsets), False))
    return 0


cdef dict _OPERATION_CLASSES = {}  # short name -> typed class, filled on first use
cdef dict _DESCRIPTOR_CLASSES = {}


cdef object _typed_class(dict cache, str short, str prefix):
    cls = cache.get(short)
    if cls is None:
        cls = descriptor_class(DescriptorType[f"{prefix}{short}_DESCRIPTOR"])
        cache[short] = cls
    return cls


# the Tensor keywords Graph.tensor sets itself, and the parameter each comes from (given through **extra, one of them
# would be dropped)
_TENSOR_KEYWORDS_SET_HERE = {"dimensions": "dims", "unique_id": "uid", "byte_alignment": "alignment",
                             "is_virtual": "virtual", "is_by_value": "by_value"}


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
    cdef list _slots                   # per operation: [(attribute, tensor, signature, is output), ...]
    cdef dict _producer                # uid -> index of the operation writing it
    cdef set _read                     # the UIDs some operation reads
    cdef set _adopted                  # the UIDs of tensors made by hand that it took (other graphs may take them too)
    cdef tuple _build_options          # (mode, override_shapes) the graph was built with
    cdef object _build_handle          # the Handle op_graph was finalized with (None: without one)
    cdef object __weakref__

    def __init__(self, name="graph", io_data_type=DataType.CUDNN_DATA_HALF, intermediate_data_type=_F32,
                 compute_data_type=_F32):
        self.name = _build.as_name(name)
        self.io_data_type = _data_type(io_data_type, "io_data_type")
        self.intermediate_data_type = _data_type(intermediate_data_type, "intermediate_data_type")
        self.compute_data_type = _data_type(compute_data_type, "compute_data_type")
        self.uids_used = set()
        self._next_uid = 1
        self.tensors = {}
        self.operations = []
        self.op_graph = None
        self._slots = []
        self._producer = {}
        self._read = set()
        self._adopted = set()
        self._build_options = (None, False)
        _remember_graph(self)

    # -- UIDs --------------------------------------------------------------------------------------
    cdef object _free_uid(self, object uid):
        """The UID a new tensor is to have: ``uid`` checked, or the next one free (None). Taken by ``_take_uid`` only
        once the tensor is made: a tensor refused on the way leaves it free."""
        if uid is None:
            while self._next_uid in self.uids_used:
                self._next_uid += 1
            return self._next_uid
        u = as_int(uid, "uid")
        if u == -1:
            raise GraphError("uid: -1 is cuDNN's 'no UID' (a plan's JSON leaves that tensor out, so the plan "
                             "cannot be saved and loaded); give another")
        if u in self.uids_used:
            raise GraphError(f"uid: {u} is already used in this graph")
        return u

    cdef int _take_uid(self, object u, object t) except -1:
        """Make ``t`` this graph's tensor of UID ``u`` (``_free_uid``'s)."""
        self.uids_used.add(u)
        self.tensors[u] = t
        if u == self._next_uid:
            self._next_uid += 1
        return 0

    # -- a refused call leaves the graph as it was ----------------------------------------------------
    def _mark(self):
        """Where the graph stands, for ``_rollback``: its tensor and operation counts."""
        return len(self.tensors), len(self.operations)

    def _rollback(self, mark):
        """Forget the tensors and operations made since ``mark`` (``_mark``'s): an operation method that raises
        leaves no tensor or operation of its own behind."""
        self._rollback_c(mark[0], mark[1])

    cdef int _rollback_c(self, Py_ssize_t tensors, Py_ssize_t operations) except -1:
        cdef tuple s
        if len(self.operations) > operations:
            del self.operations[operations:]
            del self._slots[operations:]
            self._producer = {u: i for u, i in self._producer.items() if i < operations}
            self._read = {(<TensorSignature>s[2]).uid for slots in self._slots for s in <list>slots if not s[3]}
        if len(self.tensors) > tensors:
            for uid in list(self.tensors)[tensors:]:
                del self.tensors[uid]
                self.uids_used.discard(uid)
                self._adopted.discard(uid)
        return 0

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
        if virtual is not False and virtual is not True:
            virtual = as_bool(virtual, "virtual")
        if by_value is not False and by_value is not True:
            by_value = as_bool(by_value, "by_value")
        if layout is not None and type(layout) is not str:
            raise TypeError(f"layout: expected a str ('nhwc', 'nchw', 'row_major', 'bshd'), not "
                            f"{type(layout).__name__}")
        if strides is None:
            if layout is None:
                s = _packed(d, NULL)
            elif layout == "nhwc":
                s = _nhwc(d)
            else:
                s = _build.layout_strides(d, layout)
        else:
            s = _dims(strides, "strides")
            if len(s) != len(d):
                raise ValueError(f"strides: {len(s)} strides for {len(d)} dims")
            if layout is not None:  # one of them would be dropped: both are taken only where they agree
                named = _nhwc(d) if layout == "nhwc" else _build.layout_strides(d, layout)
                if named != s:
                    raise ValueError(f"layout and strides: layout {layout!r} gives strides {named}, not the strides "
                                     f"given {s}; give one of them")
        return self._make_tensor(d, s, data_type, uid, name, virtual, by_value, alignment, extra)

    cdef TensorBase _make_tensor(self, list d, list s, object data_type, object uid, object name, object virtual,
                                 object by_value, object alignment, dict extra):
        """A finalized tensor of checked dims and strides (``tensor`` after its argument handling)."""
        cdef TensorBase t
        if data_type is None:
            data_type = self.intermediate_data_type if virtual else self.io_data_type
        elif type(data_type) is not _DATA_TYPE:
            data_type = as_data_type(data_type, "data_type")
        u = self._free_uid(uid)
        if extra:
            for keyword in extra:
                if keyword in _TENSOR_KEYWORDS_SET_HERE:
                    raise TypeError(f"{keyword}: Graph.tensor sets it from {_TENSOR_KEYWORDS_SET_HERE[keyword]}=; "
                                    f"pass {_TENSOR_KEYWORDS_SET_HERE[keyword]}= instead")
        t = <TensorBase>_new(Tensor, CUDNN_BACKEND_TENSOR_DESCRIPTOR)
        t._set(CUDNN_ATTR_TENSOR_DATA_TYPE, CUDNN_TYPE_DATA_TYPE, data_type)
        t._set(CUDNN_ATTR_TENSOR_DIMENSIONS, CUDNN_TYPE_INT64, d)
        t._set(CUDNN_ATTR_TENSOR_STRIDES, CUDNN_TYPE_INT64, s)
        t._set(CUDNN_ATTR_TENSOR_UNIQUE_ID, CUDNN_TYPE_INT64, u)
        t._set(CUDNN_ATTR_TENSOR_BYTE_ALIGNMENT, CUDNN_TYPE_INT64, alignment)
        if virtual:
            t._set(CUDNN_ATTR_TENSOR_IS_VIRTUAL, CUDNN_TYPE_BOOLEAN, True)
        if by_value:
            t._set(CUDNN_ATTR_TENSOR_IS_BY_VALUE, CUDNN_TYPE_BOOLEAN, True)
        if extra:  # after the flags they depend on (a constant value needs IS_BY_VALUE)
            value = extra.get("constant_value")
            if value is not None and not isinstance(value, (bytes, bytearray, memoryview)):
                extra = dict(extra, constant_value=_arrays.scalar_code(
                    _scalar_value(value, data_type, "constant_value"), data_type, "constant_value"))
            for keyword, value in extra.items():
                setattr(t, keyword, value)
        if name is not None and type(name) is not str:  # (a str passes without a call: the builder's hot path)
            name = _build.as_name(name)
        t.name_ = name  # None: "t<uid>" / "v<uid>", made when asked for
        t._finalize(True)
        self._take_uid(u, t)
        return t

    def scalar(self, value=None, data_type=_F32, *, name=None, uid=None, rank=4):
        """A by-value scalar tensor (all dims 1); ``value`` is bound in variant packs unless one is given."""
        rank = as_int(rank, "rank", 1, MAX_RANK)
        if name is not None and type(name) is not str:
            name = _build.as_name(name)
        return self._scalar(_scalar_value(value, data_type, name or "value"), data_type, name, uid, rank)

    def _scalar(self, value, data_type, name, uid, rank):
        """``scalar`` of a value checked already (checked when given, not when a pack binds it)."""
        ones = [1] * rank
        t = self.tensor(ones, ones, data_type, uid=uid, name=name, by_value=True)
        (<TensorBase>t).scalar_value = value
        return t

    def from_array(self, array, *, uid=None, name=None, **kwargs):
        """A tensor shaped like an array-like (numpy, torch, cupy, DLPack), with a UID unique in this graph."""
        u = self._free_uid(uid)
        t = Tensor.from_array(array, uid=u, name=name, **kwargs)
        self._take_uid(u, t)
        return t

    def allow_unconsumed(self, tensor):
        """Mark a virtual output that no operation reads as intended (the graph check lets it pass)."""
        (<TensorBase>self._need_tensor(tensor, "tensor")).allow_unconsumed = True
        return tensor

    # -- helpers of the operation families -----------------------------------------------------------
    # The families (core.families, below the typed layer) make their descriptors through these: the generated
    # typed class of a descriptor type, found by its short name, exactly as the typed layer makes it.
    def _operation(self, str short, **attributes):
        """The typed operation descriptor ``CUDNN_BACKEND_OPERATION_<short>_DESCRIPTOR`` (``OperationRopeFwd`` for
        "ROPE_FWD") made with ``attributes``."""
        return _typed_class(_OPERATION_CLASSES, short, "CUDNN_BACKEND_OPERATION_")(**attributes)

    def _descriptor(self, str short, **attributes):
        """The typed descriptor ``CUDNN_BACKEND_<short>_DESCRIPTOR`` (``Matmul`` for "MATMUL") made with
        ``attributes``."""
        return _typed_class(_DESCRIPTOR_CLASSES, short, "CUDNN_BACKEND_")(**attributes)

    cpdef bint _is_tensor(self, object t):
        """Whether ``t`` is a tensor descriptor (a typed ``Tensor``)."""
        return isinstance(t, TensorBase)

    cpdef object _need_tensor(self, object t, str what):
        if type(t) is not Tensor and not isinstance(t, TensorBase):
            raise TypeError(f"{what}: expected a Tensor (graph.tensor(...) or an operation's output), not "
                            f"{type(t).__name__}")
        if (<Descriptor>t)._raw == NULL:
            raise ValueError(f"{what}: the tensor is closed")
        if not (<Descriptor>t)._finalized:
            raise ValueError(f"{what}: the tensor is not finalized; finalize it first")
        self._check_own(t, (<TensorBase>t).signature().uid, what)
        return t

    cdef int _check_own(self, object t, object uid, str what) except -1:
        """GraphError (naming ``what`` and both graphs) when ``t`` is a tensor another live Graph made: its UID means
        another tensor here, or nothing. A tensor made by hand passes: this graph takes it (others may too)."""
        mine = self.tensors.get(uid)
        if mine is t:
            return 0
        owner = _graph_holding(t, uid, self)
        if owner is not None:
            raise GraphError(_checks.foreign_tensor(what, t, uid, (<GraphCore>owner).name, self.name))
        if uid in self.uids_used:  # refused here, naming the parameter, not later by the operation's slot name
            raise GraphError(_checks.uid_taken(what, t, uid, mine))
        return 0

    cpdef object _compute(self, object compute):
        return self.compute_data_type if compute is None else as_data_type(compute, "compute")

    def _output(self, output, dims, like=None, data_type=None, name=None, strides=None, what="output"):
        """An operation's output: the tensor given (dims checked), a real one (``output=True``; ``data_type`` or
        the io type) or a virtual intermediate (``data_type`` or the intermediate type); strides as given, else
        packed in ``like``'s axis order."""
        return self._output_c(output, dims, like, data_type, name, strides, what)

    cdef object _output_c(self, object output, object dims, object like, object data_type, object name,
                          object strides, str what):
        cdef TensorBase t
        cdef list d
        cdef int order[MAX_RANK]
        if output is False or output is True:
            d = _dims(dims, "dims")
            if strides is None:
                if like is not None:
                    ls = (<TensorBase>like).signature().strides
                    if len(ls) == len(d) and len(d) <= MAX_RANK:
                        _order_of(ls, order)
                        s = _packed(d, order)
                    else:
                        s = _packed(d, NULL)
                else:
                    s = _packed(d, NULL)
            else:
                s = _dims(strides, "strides")
                if len(s) != len(d):
                    raise ValueError(f"strides: {len(s)} strides for {len(d)} dims")
            if output:
                return self._make_tensor(d, s, data_type if data_type is not None else self.io_data_type, None, name,
                                         False, False, 16, None)
            return self._make_tensor(d, s, data_type, None, name, True, False, 16, None)
        if isinstance(output, TensorBase):
            t = self._need_tensor(output, what)
            if list(t.signature().dims) != list(dims):
                raise GraphError(f"{what}: {t.describe()} should have dims {list(dims)}")
            if data_type is not None and int(t.signature().data_type) != int(as_data_type(data_type, "output_data_type")):
                raise GraphError(f"{what}: {t.describe()} should be "
                                 f"{as_data_type(data_type, 'output_data_type').name}")
            return t
        try:  # a numpy bool (the one bool rule; anything else is no output)
            flag = as_bool(output, what)
        except TypeError:
            raise TypeError(f"{what}: expected True, False or a Tensor, not {type(output).__name__}") from None
        return self._output_c(flag, dims, like, data_type, name, strides, what)

    def _scalar_or_tensor(self, value, rank, name, data_type=_F32, what=None):
        """A by-value scalar for a number, the tensor itself for a Tensor, None for None; ``what``: the parameter a
        refused value is reported as (default ``name``)."""
        if value is None:
            return None
        if isinstance(value, TensorBase):
            return self._need_tensor(value, what or name)
        return self._scalar(_scalar_value(value, data_type, what or name), data_type, name, None, rank)

    # -- operations --------------------------------------------------------------------------------
    def add(self, op, *more):
        """Add an operation built by hand (a typed operation descriptor; finalized here if it is not yet). Not the
        sum of tensors: that is ``bias(x, b)`` or ``pointwise("ADD", x, b=b)``."""
        if more or isinstance(op, Tensor):  # (sub, mul and div are pointwise: add(x, b) is an easy slip)
            raise TypeError("add() adds an operation descriptor to the graph, not tensors together: for x + b use "
                            "bias(x, b) or pointwise('ADD', x, b=b)")
        return self._add_c(op)

    cdef object _add_c(self, object op):
        cdef Descriptor d
        cdef list slots = []
        cdef tuple slot
        cdef dict tensors, producer
        cdef set read
        cdef dict adopted
        if not isinstance(op, TypedDescriptor):
            raise TypeError(f"op: expected a typed operation descriptor (OperationConvolutionForward, ...), not "
                            f"{type(op).__name__}")
        d = <Descriptor>op
        if self.op_graph is not None:
            raise GraphError(f"graph {self.name!r} is already built; make a new Graph to add operations")
        _tensor_slots(d, slots)
        if not slots and not op.descriptor_type.name.startswith("CUDNN_BACKEND_OPERATION_"):
            raise TypeError(f"op: expected an operation descriptor, not a {op.descriptor_type.name}")
        tensors = self.tensors
        producer = self._producer
        read = self._read
        adopted = None  # uid -> a tensor of no graph, made by hand, that this graph takes
        for slot in slots:
            uid = (<TensorSignature>slot[2]).uid
            mine = tensors.get(uid)
            if mine is not slot[1]:
                self._check_own(slot[1], uid, keyword_of(slot[0]))
                if adopted is None:
                    adopted = {}
                holder = mine if mine is not None else adopted.setdefault(uid, slot[1])
                if holder is not slot[1] or uid in self.uids_used:  # (a UID it reserved holds no tensor yet)
                    raise GraphError(_checks.uid_taken(keyword_of(slot[0]), slot[1], uid,
                                                       None if holder is slot[1] else holder))
            if not slot[3]:
                continue
            if not (<TensorSignature>slot[2]).virtual:
                aliased = _checks.aliased_output(op, keyword_of(slot[0]), slot[1], slot[2])
                if aliased is not None:
                    raise GraphError(aliased)
            if uid in producer:
                raise GraphError(_checks.second_producer(op, keyword_of(slot[0]), slot[1], uid,
                                                         self.operations[<Py_ssize_t>producer[uid]]))
            if uid in read:
                self._refuse_cycle(op, slot, slots)
        if not d._finalized:  # (an operation writing a tensor it reads is refused there: core's check, in every API)
            d._finalize(True)
        position = len(self.operations)
        self.operations.append(op)
        self._slots.append(slots)
        for slot in slots:
            uid = (<TensorSignature>slot[2]).uid
            if slot[3]:
                producer[uid] = position
            else:
                read.add(uid)
            if adopted is not None and uid in adopted and uid not in tensors:  # this graph's from now on
                tensors[uid] = slot[1]
                self.uids_used.add(uid)
                self._adopted.add(uid)
        return op

    cdef int _refuse_cycle(self, object op, tuple written, list slots) except -1:
        """GraphError when the UID ``written`` (an output slot of ``op``, already read by an operation of the graph)
        is one that an input of ``op`` is computed from: the operations would form a cycle."""
        cdef tuple slot
        target = (<TensorSignature>written[2]).uid
        for slot in slots:
            if slot[3]:
                continue
            if (<TensorSignature>slot[2]).uid == target:  # (the shortest cycle: the operation reads what it writes)
                raise GraphError(_checks.reads_its_output(op, keyword_of(written[0]), keyword_of(slot[0]),
                                                          written[1], target))
            seen = set()
            todo = [(<TensorSignature>slot[2]).uid]
            while todo:
                uid = todo.pop()
                if uid == target:
                    raise GraphError(_checks.closes_a_cycle(op, keyword_of(written[0]), written[1], target,
                                                            keyword_of(slot[0]), slot[1]))
                p = self._producer.get(uid)
                if p is None or p in seen:
                    continue
                seen.add(p)
                todo.extend([(<TensorSignature>s[2]).uid for s in <list>self._slots[<Py_ssize_t>p] if not s[3]])
        return 0

    # -- the hottest families, compiled (see the module docstring) ------------------------------------
    def convolution_descriptor(self, spatial_dims, padding=0, stride=1, dilation=1, post_padding=None, compute=None,
                               mode="cross_correlation"):
        """A finalized ``Convolution``: ``padding``/``stride``/``dilation`` one int or one per spatial dim."""
        return self._convolution(spatial_dims, padding, stride, dilation, post_padding, compute, mode)[0]

    cdef tuple _convolution(self, object spatial_dims, object padding, object stride, object dilation,
                            object post_padding, object compute, object mode):
        """(Convolution, pre, post, strides, dilations): the descriptor and the lists it was set with."""
        cdef Descriptor c
        if PyLong_CheckExact(spatial_dims) and 1 <= spatial_dims <= MAX_RANK - 2:
            nsp = spatial_dims
        else:
            nsp = as_int(spatial_dims, "spatial_dims", 1, MAX_RANK - 2)
        pre = _pair(padding, nsp, "padding", 0)
        comp = self.compute_data_type if compute is None else as_data_type(compute, "compute")
        if type(mode) is not _CONVOLUTION_MODE:
            mode = _XCORR if type(mode) is str and mode == "cross_correlation" else _conv_mode(mode)
        post = list(pre) if post_padding is None else _pair(post_padding, nsp, "post_padding", 0)
        st = _pair(stride, nsp, "stride", 1)
        dl = _pair(dilation, nsp, "dilation", 1)
        c = _new(Convolution, CUDNN_BACKEND_CONVOLUTION_DESCRIPTOR)
        c._set(CUDNN_ATTR_CONVOLUTION_COMP_TYPE, CUDNN_TYPE_DATA_TYPE, comp)
        c._set(CUDNN_ATTR_CONVOLUTION_CONV_MODE, CUDNN_TYPE_CONVOLUTION_MODE, mode)
        c._set(CUDNN_ATTR_CONVOLUTION_DILATIONS, CUDNN_TYPE_INT64, dl)
        c._set(CUDNN_ATTR_CONVOLUTION_FILTER_STRIDES, CUDNN_TYPE_INT64, st)
        c._set(CUDNN_ATTR_CONVOLUTION_POST_PADDINGS, CUDNN_TYPE_INT64, post)
        c._set(CUDNN_ATTR_CONVOLUTION_PRE_PADDINGS, CUDNN_TYPE_INT64, pre)
        c._set(CUDNN_ATTR_CONVOLUTION_SPATIAL_DIMS, CUDNN_TYPE_INT64, nsp)
        c._finalize(True)
        return c, pre, post, st, dl

    def conv_fwd(self, x, w, *, padding=0, stride=1, dilation=1, post_padding=None, mode="cross_correlation",
                 compute=None, output=False, output_data_type=None, alpha=1.0, beta=0.0, name=None):
        """Y = alpha * conv(X, W) + beta * Y: X [N, C, *spatial], W [K, C/groups, *filter] (groups = X's C / W's C),
        Y [N, K, *out] in X's layout."""
        cdef Descriptor op
        cdef tuple xd, wd, conv
        cdef Py_ssize_t tensors
        x = self._need_tensor(x, "x")
        w = self._need_tensor(w, "w")
        xd = (<TensorBase>x).signature().dims
        wd = (<TensorBase>w).signature().dims
        conv = self._convolution(len(xd) - 2, padding, stride, dilation, post_padding, compute, mode)
        dims = _conv_out(xd, wd, conv[1], conv[2], conv[3], conv[4])
        tensors = len(self.tensors)
        y = self._output_c(output, dims, x, output_data_type, name, None, "output")
        try:  # (refused from here on: the output made is forgotten)
            op = _new(OperationConvolutionForward, CUDNN_BACKEND_OPERATION_CONVOLUTION_FORWARD_DESCRIPTOR)
            op._set_auto(CUDNN_ATTR_OPERATION_CONVOLUTION_FORWARD_ALPHA, alpha)
            op._set_auto(CUDNN_ATTR_OPERATION_CONVOLUTION_FORWARD_BETA, beta)
            op._set(CUDNN_ATTR_OPERATION_CONVOLUTION_FORWARD_CONV_DESC, CUDNN_TYPE_BACKEND_DESCRIPTOR, conv[0])
            op._set(CUDNN_ATTR_OPERATION_CONVOLUTION_FORWARD_W, CUDNN_TYPE_BACKEND_DESCRIPTOR, w)
            op._set(CUDNN_ATTR_OPERATION_CONVOLUTION_FORWARD_X, CUDNN_TYPE_BACKEND_DESCRIPTOR, x)
            op._set(CUDNN_ATTR_OPERATION_CONVOLUTION_FORWARD_Y, CUDNN_TYPE_BACKEND_DESCRIPTOR, y)
            self._add_c(op)
        except BaseException:
            self._rollback_c(tensors, len(self.operations))
            raise
        return y

    def pointwise(self, mode, x, b=None, t=None, *, dy=None, output=False, output_data_type=None, compute=None,
                  name=None, alpha1=None, alpha2=None, **params):
        """A pointwise operation. ``mode`` is a PointwiseMode or its name; binary modes take ``b``
        (broadcast against ``x``), BINARY_SELECT also ``t`` (the boolean predicate: y = t ? x : b); backward
        activations take ``dy`` and produce dX. ``params`` are ``Pointwise`` keywords (relu_lower_clip,
        elu_alpha, axis for GEN_INDEX, ...). The output has the broadcast shape of the inputs; comparisons and
        logic give BOOLEAN (bit-packed, eight elements a byte: what cuDNN's engines compute), GEN_INDEX INT32,
        unless ``output_data_type`` says otherwise or ``output`` is a tensor of its own boolean type (BYTE_BOOLEAN,
        one byte an element, as a bool array's: ``graph.from_array(a)`` or ``output_data_type="byte_boolean"``,
        cuDNN 9.25 on)."""
        if type(mode) is not _POINTWISE_MODE:
            mode = _pointwise_mode(mode)
        problem = _pointwise_operands_problem(mode, [k for k, v in (("b", b), ("t", t), ("dy", dy)) if v is not None])
        if problem is not None:
            raise ValueError(f"pointwise: {problem}")
        if params or alpha2 is not None or mode == _GEN_INDEX:
            problem = _pointwise_parameters_problem(mode, params, alpha2 is not None)
            if problem is not None:
                raise GraphError(problem)
        return self._pointwise(mode, x, b, t, dy, output, output_data_type, compute, name, alpha1, alpha2, params)

    def relu(self, x, **kw):
        """ReLU: a pointwise RELU_FWD (``kw``: ``pointwise``'s keywords)."""
        if kw:
            return self.pointwise(_RELU, x, **kw)
        return self._pointwise(_RELU, x, None, None, None, False, None, None, None, None, None, None)

    def bias(self, x, b, **kw):
        """x + b (b broadcast): a pointwise ADD (``kw``: ``pointwise``'s keywords)."""
        if kw:
            return self.pointwise(_ADD, x, b, **kw)
        return self._pointwise(_ADD, x, b, None, None, False, None, None, None, None, None, None)

    cdef object _pointwise(self, object mode, object x, object b, object t, object dy, object output,
                           object output_data_type, object compute, object name, object alpha1, object alpha2,
                           dict params):
        cdef Descriptor pw, op
        cdef Py_ssize_t tensors
        if type(mode) is not _POINTWISE_MODE:
            mode = _pointwise_mode(mode)
        x = self._need_tensor(x, "x")
        dims = (<TensorBase>x).signature().dims
        like = x
        if b is not None:
            dims, like = self._broadcast(b, "b", dims, like, mode)
        if t is not None:
            dims, like = self._broadcast(t, "t", dims, like, mode)
        if dy is not None:
            dims, like = self._broadcast(dy, "dy", dims, like, mode)
        if output_data_type is None:
            if mode in _BOOL_OUT:
                # an output tensor given in either boolean type keeps it (a bool array's is BYTE_BOOLEAN)
                if not (isinstance(output, TensorBase)
                        and (<TensorBase>output).signature().data_type in _BOOLEAN_TYPES):
                    output_data_type = _BOOLEAN
            elif mode == _GEN_INDEX:
                output_data_type = _INT32
        if compute is None and mode in _BOOL_COMPUTE:
            compute = _BOOLEAN
        tensors = len(self.tensors)
        out = self._output_c(output, dims, like, output_data_type, name, None, "output")
        try:  # (refused from here on: the output made is forgotten)
            prec = self.compute_data_type if compute is None else as_data_type(compute, "compute")
            if params:
                pw = <Descriptor>Pointwise(mode=mode, math_prec=prec, **params)
            else:
                pw = _new(Pointwise, CUDNN_BACKEND_POINTWISE_DESCRIPTOR)
                pw._set(CUDNN_ATTR_POINTWISE_MODE, CUDNN_TYPE_POINTWISE_MODE, mode)
                pw._set(CUDNN_ATTR_POINTWISE_MATH_PREC, CUDNN_TYPE_DATA_TYPE, prec)
            pw._finalize(True)
            op = _new(OperationPointwise, CUDNN_BACKEND_OPERATION_POINTWISE_DESCRIPTOR)
            op._set(CUDNN_ATTR_OPERATION_POINTWISE_PW_DESCRIPTOR, CUDNN_TYPE_BACKEND_DESCRIPTOR, pw)
            op._set(CUDNN_ATTR_OPERATION_POINTWISE_XDESC, CUDNN_TYPE_BACKEND_DESCRIPTOR, x)
            if b is not None:
                op._set(CUDNN_ATTR_OPERATION_POINTWISE_BDESC, CUDNN_TYPE_BACKEND_DESCRIPTOR, b)
            if t is not None:
                op._set(CUDNN_ATTR_OPERATION_POINTWISE_TDESC, CUDNN_TYPE_BACKEND_DESCRIPTOR, t)
            if dy is not None:
                op._set(CUDNN_ATTR_OPERATION_POINTWISE_DYDESC, CUDNN_TYPE_BACKEND_DESCRIPTOR, dy)
                op._set(CUDNN_ATTR_OPERATION_POINTWISE_DXDESC, CUDNN_TYPE_BACKEND_DESCRIPTOR, out)
            else:
                op._set(CUDNN_ATTR_OPERATION_POINTWISE_YDESC, CUDNN_TYPE_BACKEND_DESCRIPTOR, out)
            if alpha1 is not None:
                op._set_auto(CUDNN_ATTR_OPERATION_POINTWISE_ALPHA1, alpha1)
            if alpha2 is not None:
                op._set_auto(CUDNN_ATTR_OPERATION_POINTWISE_ALPHA2, alpha2)
            self._add_c(op)
        except BaseException:
            self._rollback_c(tensors, len(self.operations))
            raise
        return out

    cdef tuple _broadcast(self, object operand, str what, object dims, object like, object mode):
        """(dims, like) after broadcasting one more pointwise operand (``like``: the operand of the output's shape)."""
        shape = (<TensorBase>self._need_tensor(operand, what)).signature().dims
        if shape != dims:
            dims = _broadcast2(dims, shape, mode)
            if shape == tuple(dims):
                like = operand
        return dims, like

    # -- finalize ----------------------------------------------------------------------------------
    def check(self):
        """The graph checks (``graph.checks.check_operations``): GraphError naming the tensors."""
        _check(self.operations, self._slots)

    def build(self, handle=None, check=True, *, mode=None, override_shapes=False):
        """Check and finalize the operation graph. On a GPU give it the ``handle`` plans will run with: a graph
        finalized without one gives plans that fail at execute with NOT_SUPPORTED_ARCH_MISMATCH.

        A graph built before without a handle (offline) or with another is finalized again with this ``handle``
        (``op_graph`` is then that one), so that a graph explored offline runs on the GPU as it is.

        ``mode`` (cuDNN >= 9.23): CUDNN_ATTR_OPERATIONGRAPH_MODE, an OperationGraphMode or its name ("auto",
        "conv_forward", "blas_matmul", ...); cuDNN detects it when left out (AUTO), and a wrong one makes engines
        refuse the graph. ``override_shapes=True`` (cuDNN >= 9.23): CUDNN_ATTR_OPERATIONGRAPH_IS_OVERRIDE_SHAPE_
        ENABLED, so that one plan runs other shapes, given per variant pack (``VariantPack(..., overrides=)``),
        with the workspace queried per pack (cudnnGetExecutionPlanWorkspaceSize). Both are checked against the
        loaded cuDNN before any descriptor is made. A built graph is returned as it is (the same options and handle
        only)."""
        cdef Descriptor g
        if handle is not None and not isinstance(handle, Handle):
            raise TypeError(f"handle: expected a cudnn_backend.Handle, not {type(handle).__name__}")
        check, override_shapes = as_bool(check, "check"), as_bool(override_shapes, "override_shapes")
        if mode is not None:
            check_available(("CUDNN_ATTR_OPERATIONGRAPH_MODE", "cudnnBackendOperationGraphMode_t"),
                            "Graph.build(mode=...)")
            mode = as_choice(OperationGraphMode, mode, "mode", "CUDNN_OPERATIONGRAPH_MODE_")
            check_available(mode.name, "Graph.build(mode=...)")
        if override_shapes:
            check_available(OVERRIDE_SHAPES_NEEDS, "Graph.build(override_shapes=True)")
        options = (mode, override_shapes)
        if self.op_graph is not None:
            if options != self._build_options:
                raise GraphError(f"the graph is already built with mode={self._build_options[0]!r}, override_shapes="
                                 f"{self._build_options[1]}: build a new Graph for other options")
            if (handle is None or handle is self._build_handle) and (<Descriptor>self.op_graph)._raw != NULL:
                return self.op_graph
            # (or its graph was closed: the same operations, finalized again)
            # built offline (or for another handle) before: plans for this handle need a graph finalized with it
            # (else cuDNN refuses them at execute with ARCH_MISMATCH); the same operations, finalized again
        elif check:
            _check(self.operations, self._slots)
        g = _new(OperationGraph, CUDNN_BACKEND_OPERATIONGRAPH_DESCRIPTOR)
        g._set(CUDNN_ATTR_OPERATIONGRAPH_OPS, CUDNN_TYPE_BACKEND_DESCRIPTOR, self.operations)
        if handle is not None:
            g._set(CUDNN_ATTR_OPERATIONGRAPH_HANDLE, CUDNN_TYPE_HANDLE, handle)
        if override_shapes:
            g._set(CUDNN_ATTR_OPERATIONGRAPH_IS_OVERRIDE_SHAPE_ENABLED, CUDNN_TYPE_BOOLEAN, True)
        if mode is not None:
            g._set(CUDNN_ATTR_OPERATIONGRAPH_MODE, CUDNN_TYPE_OPERATIONGRAPH_MODE, mode)
        g._finalize(True)
        self.op_graph = g
        self._build_options = options
        self._build_handle = handle
        return g

    @property
    def built(self):
        """Whether the graph is built and its operation graph open (``build`` finalizes a closed one again)."""
        return self.op_graph is not None and (<Descriptor>self.op_graph)._raw != NULL

    @property
    def slots(self):
        """Per operation, its tensors: [(keyword, tensor, signature, is output), ...]."""
        return _keyword_slots(self._slots)


cdef enum:
    CHECK_ARRAYS = 256  # up to this many tensor slots the checks run on C arrays, past it on dicts


cdef list _keyword_slots(list slots):
    """The slots as the Python checks read them (``checks.operation_slots``): each attribute as its keyword."""
    return [[(keyword_of(s[0]), s[1], s[2], s[3]) for s in <list>op_slots] for op_slots in slots]


cdef int _check(list operations, list slots) except -1:
    """``checks.check_operations`` in C over the slots; the messages come from the Python checks."""
    cdef Py_ssize_t n = len(operations), m = 0, i, j, k
    cdef int64_t uid[CHECK_ARRAYS]
    cdef int op_of[CHECK_ARRAYS]
    cdef bint is_out[CHECK_ARRAYS]
    cdef PyObject* sig_of[CHECK_ARRAYS]
    cdef PyObject* tensor_of[CHECK_ARRAYS]
    cdef int producer[CHECK_ARRAYS]  # slot -> the last output slot of its UID (-1: none)
    cdef int overflow
    cdef TensorSignature sig
    cdef tuple slot
    if n == 0:
        raise GraphError("an operation graph needs at least one operation")
    for i in range(n):
        m += len(<list>slots[i])
    if m > CHECK_ARRAYS:
        return _check_dicts(operations, slots)
    m = 0
    for i in range(n):
        for slot in <list>slots[i]:
            sig = <TensorSignature>slot[2]
            u = sig.uid
            if not PyLong_CheckExact(u):
                return _check_dicts(operations, slots)
            overflow = 0
            uid[m] = PyLong_AsLongLongAndOverflow(u, &overflow)
            if overflow:
                return _check_dicts(operations, slots)
            op_of[m] = <int>i
            is_out[m] = bool(slot[3])
            sig_of[m] = <PyObject*>sig
            tensor_of[m] = <PyObject*>slot[1]
            m += 1
    # one producer per UID, and one output slot; no operation reads what it writes
    for j in range(m):
        producer[j] = -1
        for k in range(m):
            if is_out[k] and uid[k] == uid[j]:
                producer[j] = <int>k  # the last one, as the dict of the Python checks keeps
        if is_out[j]:
            for k in range(j):  # another producer, or another output of the same operation
                if is_out[k] and uid[k] == uid[j]:
                    return _refuse(operations, slots)
            for k in range(m):
                if op_of[k] == op_of[j] and not is_out[k] and uid[k] == uid[j]:
                    return _refuse(operations, slots)
    for j in range(m):
        k = producer[j]
        if k >= 0:
            if not is_out[j] and not (<TensorSignature>sig_of[k]).same_tensor(<TensorSignature>sig_of[j]):
                return _refuse(operations, slots)
            continue
        for i in range(j):  # the first occurrence of this (never produced) UID must agree
            if uid[i] == uid[j]:
                if not (<TensorSignature>sig_of[i]).same_tensor(<TensorSignature>sig_of[j]):
                    return _refuse(operations, slots)
                break
        if (<TensorSignature>sig_of[j]).virtual:
            return _refuse(operations, slots)
    # a virtual output nobody reads
    for j in range(m):
        if is_out[j] and producer[j] == j and (<TensorSignature>sig_of[j]).virtual:
            for k in range(m):
                if not is_out[k] and uid[k] == uid[j]:
                    break
            else:
                t = <object>tensor_of[j]
                if not ((<TensorBase>t).allow_unconsumed if isinstance(t, TensorBase) else
                        getattr(t, "allow_unconsumed", False)):
                    return _refuse(operations, slots)
    # a cycle: an operation reading what a later-or-same-position operation produces, followed to the start
    for j in range(m):
        if not is_out[j] and producer[j] >= 0 and op_of[producer[j]] >= op_of[j]:
            _checks.check_operations(operations, _keyword_slots(slots))  # orders them: raises on a cycle only
            return 0
    return 0


cdef int _check_dicts(list operations, list slots) except -1:
    """``_check`` for graphs of many tensor slots (dicts instead of quadratic scans)."""
    cdef Py_ssize_t n = len(operations), i, j
    cdef dict producer = {}
    cdef dict seen = {}
    cdef set consumed = set()
    cdef TensorSignature sig
    for i in range(n):
        op = operations[i]
        ins = None
        for slot in <list>slots[i]:
            sig = <TensorSignature>slot[2]
            uid = sig.uid
            if slot[3]:
                if uid in producer:
                    return _refuse(operations, slots)  # with the tensors named
                producer[uid] = (op, slot[1], sig, i)
            else:
                if ins is None:
                    ins = set()
                ins.add(uid)
        if ins is not None:
            for slot in <list>slots[i]:
                if slot[3] and (<TensorSignature>slot[2]).uid in ins:
                    return _refuse(operations, slots)
    for i in range(n):
        for slot in <list>slots[i]:
            sig = <TensorSignature>slot[2]
            uid = sig.uid
            if not slot[3]:
                consumed.add(uid)
            p = producer.get(uid)
            if p is not None:
                if not slot[3] and not (<TensorSignature>(<tuple>p)[2]).same_tensor(sig):
                    return _refuse(operations, slots)
                continue
            first = seen.get(uid)
            if first is None:
                seen[uid] = sig
            elif not (<TensorSignature>first).same_tensor(sig):
                return _refuse(operations, slots)
            if sig.virtual:
                return _refuse(operations, slots)
    for uid, p in producer.items():
        sig = <TensorSignature>(<tuple>p)[2]
        if sig.virtual and uid not in consumed and not getattr((<tuple>p)[1], "allow_unconsumed", False):
            return _refuse(operations, slots)
    for i in range(n):
        for slot in <list>slots[i]:
            if not slot[3]:
                p = producer.get((<TensorSignature>slot[2]).uid)
                if p is not None and (<tuple>p)[3] >= i:
                    _checks.check_operations(operations, _keyword_slots(slots))  # orders them: raises on a cycle only
                    return 0
    return 0





cdef int _refuse(list operations, list slots) except -1:
    """A check failed: the Python checks say which and raise with the tensors named."""
    _checks.check_operations(operations, _keyword_slots(slots))
    raise GraphError("the operation graph fails the graph checks")
