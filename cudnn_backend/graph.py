"""Operation graphs built from Python, on top of the typed layer.

``Graph`` creates tensors (UIDs assigned uniquely within the graph unless given) and operations
(output shapes computed), and finalizes them into an ``OperationGraph`` after checking it. Every
descriptor it creates stays reachable (``graph.tensors``, ``graph.operations``, ``op.conv_desc``,
...), so any attribute can be inspected or changed before ``build()``.
"""
from __future__ import annotations

import itertools
import threading

from cudnn_backend import shapes
from cudnn_backend._descriptor import Descriptor
from cudnn_backend._generated.enums import AttributeName, AttributeType, DataType, DescriptorType, PointwiseMode
from cudnn_backend.typed import (
    Convolution,
    Matmul,
    OperationConvolutionBackwardData,
    OperationConvolutionBackwardFilter,
    OperationConvolutionForward,
    OperationGraph,
    OperationMatmul,
    OperationPointwise,
    OperationReduction,
    Pointwise,
    Reduction,
    Tensor,
    TypedDescriptor,
)

T = DescriptorType
FLOAT = DataType.CUDNN_DATA_FLOAT

# Output attributes (keywords) of each operation type; every other tensor attribute is an input.
OUTPUTS = {
    T.CUDNN_BACKEND_OPERATION_CONVOLUTION_FORWARD_DESCRIPTOR: ("y",),
    T.CUDNN_BACKEND_OPERATION_CONVOLUTION_BACKWARD_DATA_DESCRIPTOR: ("dx",),
    T.CUDNN_BACKEND_OPERATION_CONVOLUTION_BACKWARD_FILTER_DESCRIPTOR: ("dw",),
    T.CUDNN_BACKEND_OPERATION_POINTWISE_DESCRIPTOR: ("ydesc", "dxdesc"),
    T.CUDNN_BACKEND_OPERATION_GEN_STATS_DESCRIPTOR: ("sumdesc", "sqsumdesc"),
    T.CUDNN_BACKEND_OPERATION_MATMUL_DESCRIPTOR: ("cdesc",),
    T.CUDNN_BACKEND_OPERATION_BN_FINALIZE_STATISTICS_DESCRIPTOR: (
        "updated_running_mean_desc", "updated_running_var_desc", "saved_mean_desc", "saved_inv_std_desc",
        "eq_scale_desc", "eq_bias_desc"),
    T.CUDNN_BACKEND_OPERATION_REDUCTION_DESCRIPTOR: ("ydesc",),
    T.CUDNN_BACKEND_OPERATION_BN_BWD_WEIGHTS_DESCRIPTOR: (
        "dbn_scale_desc", "dbn_bias_desc", "eq_dy_scale_desc", "eq_x_scale_desc", "eq_bias"),
    T.CUDNN_BACKEND_OPERATION_RESAMPLE_FWD_DESCRIPTOR: ("ydesc", "idxdesc"),
    T.CUDNN_BACKEND_OPERATION_RESAMPLE_BWD_DESCRIPTOR: ("dxdesc",),
    T.CUDNN_BACKEND_OPERATION_CONCAT_DESCRIPTOR: ("output_desc",),
    T.CUDNN_BACKEND_OPERATION_SIGNAL_DESCRIPTOR: ("ydesc",),
    T.CUDNN_BACKEND_OPERATION_NORM_FORWARD_DESCRIPTOR: (
        "ydesc", "mean_desc", "inv_variance_desc", "output_running_mean_desc", "output_running_var_desc"),
    T.CUDNN_BACKEND_OPERATION_NORM_BACKWARD_DESCRIPTOR: ("dxdesc", "dscale_desc", "dbias_desc"),
    T.CUDNN_BACKEND_OPERATION_RESHAPE_DESCRIPTOR: ("ydesc",),
    T.CUDNN_BACKEND_OPERATION_RNG_DESCRIPTOR: ("ydesc",),
    T.CUDNN_BACKEND_OPERATION_PAGED_CACHE_LOAD_DESCRIPTOR: ("ydesc",),
    T.CUDNN_BACKEND_OPERATION_BLOCK_SCALE_QUANTIZE_DESCRIPTOR: ("ydesc", "scale_desc"),
    T.CUDNN_BACKEND_OPERATION_BLOCK_SCALE_DEQUANTIZE_DESCRIPTOR: ("ydesc",),
    T.CUDNN_BACKEND_OPERATION_EXPAND_BAND_MATRIX_DESCRIPTOR: ("ydesc",),
    T.CUDNN_BACKEND_OPERATION_CONTRACT_BAND_MATRIX_DESCRIPTOR: ("matrix_ydesc",),
    T.CUDNN_BACKEND_OPERATION_SDPA_FWD_DESCRIPTOR: ("odesc", "statsdesc", "dropout_rng_dump_desc", "amax_sdesc",
                                                    "amax_odesc"),
    T.CUDNN_BACKEND_OPERATION_MOE_GROUPED_MATMUL_DESCRIPTOR: ("output_desc",),
    T.CUDNN_BACKEND_OPERATION_SDPA_BWD_DESCRIPTOR: ("dqdesc", "dkdesc", "dvdesc", "dsink_desc", "dbias_desc"),
    T.CUDNN_BACKEND_OPERATION_DIAGONAL_BAND_MASK_DESCRIPTOR: ("ydesc",),
    T.CUDNN_BACKEND_OPERATION_SOFTMAX_DESCRIPTOR: ("ydesc", "stats_desc", "max_desc", "sum_exp_desc"),
    T.CUDNN_BACKEND_OPERATION_TRANSPOSE_DESCRIPTOR: ("ydesc",),
    T.CUDNN_BACKEND_OPERATION_SLICE_DESCRIPTOR: ("ydesc",),
    T.CUDNN_BACKEND_OPERATION_MOE_GROUPED_MATMUL_BWD_DESCRIPTOR: ("dweight_desc",),
    T.CUDNN_BACKEND_OPERATION_ROPE_FWD_DESCRIPTOR: ("ydesc",),
    T.CUDNN_BACKEND_OPERATION_ROPE_BWD_DESCRIPTOR: ("dxdesc",),
}


class GraphError(ValueError):
    """An operation graph that cuDNN would refuse or misread, caught before finalize."""


# ---------------------------------------------------------------------------------------------
# UIDs
# ---------------------------------------------------------------------------------------------
class UidAllocator:
    """Hands out UIDs unique within one graph, skipping those the user chose."""

    def __init__(self, start=1):
        self._next = itertools.count(start)
        self._used = set()
        self._lock = threading.Lock()

    def reserve(self, uid: int) -> int:
        with self._lock:
            if uid in self._used:
                raise GraphError(f"UID {uid} is already used in this graph")
            self._used.add(uid)
            return uid

    def next(self) -> int:
        with self._lock:
            while True:
                uid = next(self._next)
                if uid not in self._used:
                    self._used.add(uid)
                    return uid


default_uids = UidAllocator(start=1 << 20)  # for Tensor.from_array outside any Graph


# ---------------------------------------------------------------------------------------------
# inspection of a list of operations
# ---------------------------------------------------------------------------------------------
class TensorInfo(tuple):
    """What the graph checks need of a tensor descriptor, typed or generic (read once)."""

    __slots__ = ()

    def __new__(cls, t):
        if isinstance(t, Tensor):
            uid, dims, strides = t.uid, t.shape, tuple(t.value("strides") or ())
            dt, virtual, name = t.value("data_type"), t.virtual, t  # the name is read live (it can change)
            unconsumed_ok = bool(t.__dict__.get("allow_unconsumed", False))
        else:  # a generic Descriptor of tensor type, set through C names
            read = lambda attr, atype: t.get(attr, atype) if t.finalized else []  # noqa: E731
            [uid] = read(AttributeName.CUDNN_ATTR_TENSOR_UNIQUE_ID, AttributeType.CUDNN_TYPE_INT64) or [-1]
            dims = tuple(read(AttributeName.CUDNN_ATTR_TENSOR_DIMENSIONS, AttributeType.CUDNN_TYPE_INT64))
            strides = tuple(read(AttributeName.CUDNN_ATTR_TENSOR_STRIDES, AttributeType.CUDNN_TYPE_INT64))
            [dt] = read(AttributeName.CUDNN_ATTR_TENSOR_DATA_TYPE, AttributeType.CUDNN_TYPE_DATA_TYPE) or [None]
            [virtual] = read(AttributeName.CUDNN_ATTR_TENSOR_IS_VIRTUAL, AttributeType.CUDNN_TYPE_BOOLEAN) or [False]
            name = f"t{uid}"
            unconsumed_ok = False
        return super().__new__(cls, (int(uid), dims, strides, None if dt is None else int(dt), bool(virtual), name,
                                     unconsumed_ok))

    uid = property(lambda self: self[0])
    shape = property(lambda self: self[1])
    strides = property(lambda self: self[2])
    data_type = property(lambda self: self[3])
    virtual = property(lambda self: self[4])
    name = property(lambda self: self[5] if isinstance(self[5], str) else self[5].name)
    # a virtual output nothing reads, on purpose (e.g. softmax stats of attention inference)
    unconsumed_ok = property(lambda self: self[6])

    def signature(self):
        return self[1:5]

    def describe(self) -> str:
        dt = DataType(self.data_type).name.replace("CUDNN_DATA_", "").lower() if self.data_type is not None else "?"
        return (f"{self.name} (uid {self.uid}) {list(self.shape)} strides {list(self.strides)} {dt}"
                f"{' virtual' if self.virtual else ''}")


def tensor_descriptors(op):
    """[(keyword, tensor descriptor, is_output)] of an operation's tensor-valued attributes that were set."""
    if not isinstance(op, TypedDescriptor):
        raise TypeError(f"graph inspection needs typed operation descriptors, not {op!r}")
    outputs = OUTPUTS.get(op.DESCRIPTOR_TYPE, ())
    slots = []
    for name, spec in op.ATTRIBUTES.items():
        if spec.accepts is None or T.CUDNN_BACKEND_TENSOR_DESCRIPTOR not in spec.accepts:
            continue
        value = op._typed_state["values"].get(name)
        if value is None:
            continue
        for t in value if isinstance(value, (list, tuple)) else [value]:
            if isinstance(t, Descriptor) and t.descriptor_type == T.CUDNN_BACKEND_TENSOR_DESCRIPTOR:
                slots.append((name, t, name in outputs))
    return slots


def _info(t) -> TensorInfo:
    """TensorInfo of a tensor descriptor; kept on finalized typed tensors (they cannot change)."""
    d = getattr(t, "__dict__", None)
    if d is not None and t.finalized:
        info = d.get("_tensor_info")
        if info is None or info.unconsumed_ok != bool(d.get("allow_unconsumed", False)):
            info = d["_tensor_info"] = TensorInfo(t)
        return info
    return TensorInfo(t)


def _tensor_slots(op):
    """[(keyword, TensorInfo, is_output)] of an operation (kept on finalized operations)."""
    if not isinstance(op, TypedDescriptor):
        raise TypeError(f"graph inspection needs typed operation descriptors, not {op!r}")
    d = op.__dict__
    slots = d.get("_tensor_slots") if op.finalized else None
    if slots is None:
        slots = [(name, _info(t), out) for name, t, out in tensor_descriptors(op)]
        if op.finalized:
            d["_tensor_slots"] = slots
    return slots


def _op_label(op) -> str:
    label = type(op).__name__.replace("Operation", "", 1)
    if op.DESCRIPTOR_TYPE == T.CUDNN_BACKEND_OPERATION_POINTWISE_DESCRIPTOR:
        pw = op._typed_state["values"].get("pw_descriptor")
        mode = pw._typed_state["values"].get("mode") if pw is not None else None
        if mode is not None:
            label += f" {PointwiseMode(mode).name.replace('CUDNN_POINTWISE_', '')}"
    return label


def topological_order(operations) -> list:
    """Operations ordered producers first (Kahn's algorithm over tensor UIDs)."""
    operations = list(operations)
    producers = {}
    for i, op in enumerate(operations):
        for _, t, out in _tensor_slots(op):
            if out:
                producers.setdefault(t.uid, i)
    deps = {i: set() for i in range(len(operations))}
    for i, op in enumerate(operations):
        for _, t, out in _tensor_slots(op):
            if not out and t.uid in producers and producers[t.uid] != i:
                deps[i].add(producers[t.uid])
    order, ready = [], [i for i in deps if not deps[i]]
    while ready:
        i = ready.pop(0)
        order.append(i)
        for j in deps:
            if i in deps[j]:
                deps[j].discard(i)
                if not deps[j] and j not in order and j not in ready:
                    ready.append(j)
    if len(order) != len(operations):
        raise GraphError("the operations form a cycle (an input depends on its own output)")
    return [operations[i] for i in order]


def check_operations(operations):
    """The graph checks cuDNN would fail on, or misread, each raised as GraphError with a clear message."""
    operations = list(operations)
    if not operations:
        raise GraphError("an operation graph needs at least one operation")
    all_slots = [(op, _tensor_slots(op)) for op in operations]
    producer = {}  # uid -> (operation, TensorInfo as it writes it)
    for op, slots in all_slots:
        ins = {t.uid for _, t, out in slots if not out}
        outs = {t.uid for _, t, out in slots if out}
        if len(operations) > 1 and ins & outs:
            uid = sorted(ins & outs)[0]
            raise GraphError(
                f"{_op_label(op)} reads and writes UID {uid}: in-place operations are allowed only in single-node "
                f"graphs (cuDNN treats this as a cycle); give the output its own tensor")
        for _, t, out in slots:
            if out:
                if t.uid in producer and producer[t.uid][0] is not op:
                    raise GraphError(f"UID {t.uid} ({t.name}) is produced by both {_op_label(producer[t.uid][0])} "
                                     f"and {_op_label(op)}")
                producer[t.uid] = (op, t)
    by_uid, consumed = {}, {}
    for op, slots in all_slots:
        for name, t, out in slots:
            if not out:
                consumed.setdefault(t.uid, []).append(op)
            if t.uid in producer:
                pop, pt = producer[t.uid]
                if not out and pt.signature() != t.signature():
                    raise GraphError(f"{_op_label(op)}.{name} reads UID {t.uid} as {t.describe()} but "
                                     f"{_op_label(pop)} produces {pt.describe()}: consumer and producer shapes differ")
                by_uid.setdefault(t.uid, pt)
                continue
            prev = by_uid.setdefault(t.uid, t)
            if prev.signature() != t.signature():
                raise GraphError(f"duplicate UID {t.uid}: {prev.describe()} and {t.describe()} are different tensors")
    for uid, t in by_uid.items():
        if not t.virtual:
            continue
        if uid not in producer:
            raise GraphError(f"virtual tensor {t.describe()} is consumed but no operation produces it")
        if uid not in consumed and not t.unconsumed_ok:
            raise GraphError(f"virtual tensor {t.describe()} is produced by {_op_label(producer[uid][0])} but nothing "
                             f"consumes it; make it a real (non-virtual) output, or mark it allow_unconsumed")
    topological_order(operations)


def operations_table(operations) -> str:
    """A table of the operations in topological order with their input and output tensors."""
    rows = [("#", "operation", "inputs", "outputs")]
    for i, op in enumerate(topological_order(operations)):
        slots = _tensor_slots(op)
        ins = "; ".join(f"{n}={t.describe()}" for n, t, out in slots if not out)
        outs = "; ".join(f"{n}={t.describe()}" for n, t, out in slots if out)
        rows.append((str(i), _op_label(op), ins, outs))
    widths = [max(len(r[c]) for r in rows) for c in range(3)]
    lines = []
    for r in rows:
        lines.append("  ".join(r[c].ljust(widths[c]) for c in range(3)) + "  " + r[3])
    lines.insert(1, "-" * max(len(x) for x in lines))
    return "\n".join(lines)


def _dot_quote(text: str) -> str:
    return '"' + text.replace("\\", "\\\\").replace('"', '\\"').replace("\n", "\\n") + '"'


def operations_dot(operations, name="cudnn_graph") -> str:
    """Graphviz DOT of the dataflow: tensors as ellipses (virtual ones dashed), operations as boxes."""
    lines = [f"digraph {_dot_quote(name)} {{", "  rankdir=LR;", '  node [fontname="Helvetica"];']
    tensors = {}
    ops = topological_order(operations)
    for op in ops:
        for _, t, _ in _tensor_slots(op):
            tensors.setdefault(t.uid, t)
    for uid, t in tensors.items():
        style = "dashed" if t.virtual else "solid"
        label = f"{t.name}\nuid {uid} {'x'.join(map(str, t.shape))}"
        lines.append(f"  t{uid} [shape=ellipse, style={style}, label={_dot_quote(label)}];")
    for i, op in enumerate(ops):
        lines.append(f"  op{i} [shape=box, style=filled, fillcolor=lightblue, label={_dot_quote(_op_label(op))}];")
        for slot, t, out in _tensor_slots(op):
            edge = f"op{i} -> t{t.uid}" if out else f"t{t.uid} -> op{i}"
            lines.append(f"  {edge} [label={_dot_quote(slot)}];")
    lines.append("}")
    return "\n".join(lines) + "\n"


# ---------------------------------------------------------------------------------------------
# the builder
# ---------------------------------------------------------------------------------------------
class Graph:
    """Builds an operation graph: tensors, operations, checks, finalize.

    Operation methods return their output tensor: virtual by default (an intermediate),
    a real tensor with ``output=True``, or the tensor you pass as ``output=``.
    """

    def __init__(self, name="graph", io_data_type=DataType.CUDNN_DATA_HALF, intermediate_data_type=FLOAT,
                 compute_data_type=FLOAT):
        self.name = name
        as_dt = lambda v: DataType[v] if isinstance(v, str) else DataType(v)  # noqa: E731
        self.io_data_type = as_dt(io_data_type)
        self.intermediate_data_type = as_dt(intermediate_data_type)
        self.compute_data_type = as_dt(compute_data_type)
        self.uids = UidAllocator()
        self.tensors: dict[int, Tensor] = {}
        self.operations: list[TypedDescriptor] = []
        self.op_graph: OperationGraph | None = None

    # -- tensors ---------------------------------------------------------------------------------
    def tensor(self, dims, strides=None, data_type=None, *, uid=None, name=None, virtual=False, by_value=False,
               layout=None, alignment=16, **extra) -> Tensor:
        """A finalized tensor; ``layout="nhwc"`` for channels-last strides, else row-major unless given."""
        dims = [int(d) for d in dims]
        if strides is None:
            strides = shapes.nhwc_strides(dims) if layout == "nhwc" else shapes.packed_strides(dims)
        uid = self.uids.reserve(int(uid)) if uid is not None else self.uids.next()
        if data_type is None:
            data_type = self.intermediate_data_type if virtual else self.io_data_type
        kwargs = dict(data_type=data_type, dimensions=dims, strides=list(strides), unique_id=uid,
                      byte_alignment=alignment, **extra)
        if virtual:
            kwargs["is_virtual"] = True
        if by_value:
            kwargs["is_by_value"] = True
        t = Tensor(**kwargs)
        t.name = name or (f"v{uid}" if virtual else f"t{uid}")
        t.finalize()
        self.tensors[uid] = t
        return t

    def from_array(self, array, *, uid=None, name=None, **kwargs) -> Tensor:
        """A tensor shaped like an array-like, with a UID unique in this graph."""
        uid = self.uids.reserve(int(uid)) if uid is not None else self.uids.next()
        t = Tensor.from_array(array, uid=uid, name=name, **kwargs)
        self.tensors[uid] = t
        return t

    def scalar(self, value=None, data_type=FLOAT, *, name=None, uid=None, rank=4) -> Tensor:
        """A by-value scalar tensor (all dims 1); its value is bound in the variant pack."""
        t = self.tensor([1] * rank, [1] * rank, data_type, uid=uid, name=name, by_value=True)
        t.__dict__["scalar_value"] = value
        return t

    def allow_unconsumed(self, tensor: Tensor) -> Tensor:
        """Mark a virtual output that no operation reads as intended (the graph check lets it pass)."""
        tensor.__dict__["allow_unconsumed"] = True
        return tensor

    def _output(self, output, dims, like: Tensor | None, data_type=None, name=None) -> Tensor:
        if isinstance(output, Tensor):
            if list(output.shape) != list(dims):
                raise GraphError(f"output {output.describe()} should have dims {list(dims)}")
            return output
        strides = shapes.strides_like(dims, like.get_keyword("strides")) if like is not None else None
        if output:
            return self.tensor(dims, strides, data_type or self.io_data_type, name=name)
        return self.tensor(dims, strides, data_type or self.intermediate_data_type, virtual=True, name=name)

    def add(self, op: TypedDescriptor) -> TypedDescriptor:
        """Add an operation built by hand (finalized here if it is not yet)."""
        if not op.finalized:
            op.finalize()
        self.operations.append(op)
        for uid, t in graph_tensors([op]).items():
            self.tensors.setdefault(uid, t)
        return op

    # -- operations ------------------------------------------------------------------------------
    def convolution_descriptor(self, spatial_dims, padding=0, stride=1, dilation=1, post_padding=None,
                               compute=None, mode="CUDNN_CROSS_CORRELATION") -> Convolution:
        pre = shapes._pair(padding, spatial_dims)
        return Convolution(
            comp_type=compute or self.compute_data_type, conv_mode=mode, spatial_dims=spatial_dims,
            pre_paddings=pre, post_paddings=shapes._pair(pre if post_padding is None else post_padding, spatial_dims),
            filter_strides=shapes._pair(stride, spatial_dims), dilations=shapes._pair(dilation, spatial_dims),
        ).finalize()

    def conv_fwd(self, x, w, *, padding=0, stride=1, dilation=1, post_padding=None, compute=None, output=False,
                 alpha=1.0, beta=0.0, name=None) -> Tensor:
        nsp = len(x.shape) - 2
        conv = self.convolution_descriptor(nsp, padding, stride, dilation, post_padding, compute)
        dims = shapes.conv_output_dims(x.shape, w.shape, padding, stride, dilation, post_padding,
                                       groups=x.shape[1] // w.shape[1])
        y = self._output(output, dims, x, name=name)
        self.add(OperationConvolutionForward(x=x, w=w, y=y, conv_desc=conv, alpha=alpha, beta=beta))
        return y

    def _backward_convolution(self, dy, x_dims, w_dims, padding, stride, dilation, post_padding, compute):
        """The convolution descriptor of a backward conv, after checking dy is the forward output's shape."""
        expected = shapes.conv_output_dims(x_dims, w_dims, padding, stride, dilation, post_padding,
                                           groups=x_dims[1] // w_dims[1])
        if list(expected) != list(dy.shape):
            raise GraphError(f"dy {list(dy.shape)} does not match the forward output {expected} of x {list(x_dims)}")
        return self.convolution_descriptor(len(dy.shape) - 2, padding, stride, dilation, post_padding, compute)

    def conv_bwd_data(self, dy, w, x_dims, *, padding=0, stride=1, dilation=1, post_padding=None, compute=None,
                      output=False, alpha=1.0, beta=0.0, name=None) -> Tensor:
        conv = self._backward_convolution(dy, x_dims, w.shape, padding, stride, dilation, post_padding, compute)
        dx = self._output(output, x_dims, dy, name=name)
        self.add(OperationConvolutionBackwardData(dy=dy, w=w, dx=dx, conv_desc=conv, alpha=alpha, beta=beta))
        return dx

    def conv_bwd_filter(self, x, dy, w_dims, *, padding=0, stride=1, dilation=1, post_padding=None, compute=None,
                        output=False, alpha=1.0, beta=0.0, name=None) -> Tensor:
        conv = self._backward_convolution(dy, x.shape, w_dims, padding, stride, dilation, post_padding, compute)
        dw = self._output(output, w_dims, x, name=name)
        self.add(OperationConvolutionBackwardFilter(x=x, dy=dy, dw=dw, conv_desc=conv, alpha=alpha, beta=beta))
        return dw

    def pointwise(self, mode, x, b=None, t=None, *, output=False, compute=None, name=None, alpha1=None,
                  alpha2=None, dy=None, **params) -> Tensor:
        """A pointwise op: ``mode`` is a PointwiseMode (or its C name); ``params`` are Pointwise keywords
        (relu_lower_clip, elu_alpha, axis, ...). Binary modes broadcast ``b`` against ``x``. Backward
        activation modes take ``dy`` and produce dx."""
        mode = PointwiseMode[mode] if isinstance(mode, str) else PointwiseMode(mode)
        pw = Pointwise(mode=mode, math_prec=compute or self.compute_data_type, **params).finalize()
        operands = [x] + [o for o in (b, t) if o is not None]
        dims = shapes.broadcast_dims(*[o.shape for o in operands])
        out = self._output(output, dims, x, name=name)
        kwargs = dict(pw_descriptor=pw, xdesc=x)
        if b is not None:
            kwargs["bdesc"] = b
        if t is not None:
            kwargs["tdesc"] = t
        if dy is not None:
            kwargs.update(dydesc=dy, dxdesc=out)
        else:
            kwargs["ydesc"] = out
        if alpha1 is not None:
            kwargs["alpha1"] = alpha1
        if alpha2 is not None:
            kwargs["alpha2"] = alpha2
        self.add(OperationPointwise(**kwargs))
        return out

    def matmul(self, a, b, *, output=False, compute=None, name=None, padding_value=None) -> Tensor:
        kwargs = {"comp_type": compute or self.compute_data_type}
        if padding_value is not None:
            kwargs["padding_value"] = padding_value
        mm = Matmul(**kwargs).finalize()
        dims = shapes.matmul_output_dims(a.shape, b.shape)
        c = self._output(output, dims, None, name=name)
        self.add(OperationMatmul(adesc=a, bdesc=b, cdesc=c, desc=mm))
        return c

    def reduction(self, x, op="CUDNN_REDUCE_TENSOR_ADD", axes=None, *, output_dims=None, output=False, compute=None,
                  name=None) -> Tensor:
        """Reduce ``x`` over ``axes`` (kept as size-1 dims) or down to ``output_dims``."""
        from cudnn_backend._generated.enums import ReduceTensorOp

        op = ReduceTensorOp[op] if isinstance(op, str) else ReduceTensorOp(op)
        red = Reduction(operator=op, comp_type=compute or self.compute_data_type).finalize()
        dims = output_dims if output_dims is not None else shapes.reduction_output_dims(x.shape, axes)
        y = self._output(output, dims, x, name=name)
        self.add(OperationReduction(xdesc=x, ydesc=y, desc=red))
        return y

    # -- finalize --------------------------------------------------------------------------------
    def build(self, handle=None, check=True) -> OperationGraph:
        """Check and finalize the operation graph (no handle is needed to finalize)."""
        kwargs = {"ops": list(self.operations)}
        if handle is not None:
            kwargs["handle"] = handle
        g = OperationGraph(**kwargs)
        g.finalize(check_graph=check)
        self.op_graph = g
        return g

    def table(self) -> str:
        return operations_table(self.operations)

    def to_dot(self) -> str:
        return operations_dot(self.operations, self.name)

    def __repr__(self):
        return f"<Graph {self.name!r}: {len(self.operations)} operations, {len(self.tensors)} tensors>"


def graph_tensors(operations) -> dict:
    """{uid: Tensor} of every tensor the operations read or write (first descriptor seen per UID)."""
    out = {}
    for op in operations:
        for _, t, _ in tensor_descriptors(op):
            out.setdefault(_info(t).uid, t)
    return out
