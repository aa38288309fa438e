"""What the families' finalize checks share: reading a tensor's dims and data type off an operation descriptor
(one stored value, no dict of every attribute: these run on every finalize) and refusing with the tensor named."""
from __future__ import annotations

from cudnn_backend._bindings.enums import AttributeName, DataType
from cudnn_backend.core.names import default_tensor_name
from cudnn_backend.errors import GraphError

A = AttributeName


def dims(t):
    """The dims set on a tensor descriptor (None when unknown: then nothing is checked)."""
    if t is None:
        return None
    d = t.value_of(A.CUDNN_ATTR_TENSOR_DIMENSIONS)
    if d is None:
        return None
    return tuple(d) if isinstance(d, tuple) else (d,)


def name(t, slot):
    label = getattr(t, "name", None)
    if not isinstance(label, str):
        label = default_tensor_name(t.value_of(A.CUDNN_ATTR_TENSOR_UNIQUE_ID),
                                    t.value_of(A.CUDNN_ATTR_TENSOR_IS_VIRTUAL))
    return f"{slot} ({label})"


def op_name(op):
    return op.descriptor_type.name


def need(op, slot_t, slot, expected, reason, harm="write out of bounds"):
    """Refuse ``slot_t`` unless its dims are ``expected`` (nothing checked where either is unknown)."""
    d = dims(slot_t)
    if d is None or expected is None:
        return
    if tuple(d) != tuple(expected):
        raise GraphError(f"{op_name(op)}: {name(slot_t, slot)} has dims {list(d)} but must be {list(expected)} "
                         f"({reason}); cuDNN would accept it and {harm}")


def need_float(op, slot_t, slot, reason, harm="misread it"):
    """Refuse ``slot_t`` unless it is CUDNN_DATA_FLOAT."""
    if slot_t is None:
        return
    dt = slot_t.value_of(A.CUDNN_ATTR_TENSOR_DATA_TYPE)
    if dt is not None and int(dt) != int(DataType.CUDNN_DATA_FLOAT):
        try:
            label = DataType(int(dt)).name
        except ValueError:
            label = str(dt)
        raise GraphError(f"{op_name(op)}: {name(slot_t, slot)} is {label} but must be CUDNN_DATA_FLOAT ({reason}); "
                         f"cuDNN would accept it and {harm}")


def per_channel(x_dims):
    """``[1, C, 1, ...]`` of ``[N, C, ...]``: one value per channel."""
    return (1, x_dims[1], *([1] * (len(x_dims) - 2)))


def fail(message):
    """Raise the GraphError of a shape rule."""
    raise GraphError(message)
