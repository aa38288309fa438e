"""Behaviour added to a few generated typed classes (see typed.py), keyed by descriptor type:
tensors made from arrays, and operation graphs that check, print and draw themselves."""
from __future__ import annotations

from cudnn_backend import arrays as _arrays
from cudnn_backend._generated.enums import DataType, DescriptorType

T = DescriptorType


class TensorMixin:
    """``Tensor``: also built from any array-like; carries an optional display name."""

    @classmethod
    def from_array(cls, array, uid=None, name=None, *, virtual=False, by_value=False, alignment=None,
                   data_type=None, finalize=True):
        """A tensor descriptor shaped like ``array`` (numpy, torch, cupy, DLPack or __cuda_array_interface__).

        Dims, strides (in elements), data type and byte alignment (from the data pointer, at most 16)
        are inferred; ``uid`` defaults to the next free one of ``cudnn_backend.graph.UidAllocator``'s
        global counter when None.
        """
        info = _arrays.describe(array)
        if uid is None:
            from cudnn_backend.graph import default_uids

            uid = default_uids.next()
        kwargs = dict(
            data_type=data_type if data_type is not None else info.data_type,
            dimensions=list(info.shape) or [1],
            strides=list(info.strides) or [1],
            unique_id=int(uid),
            byte_alignment=alignment if alignment is not None else info.alignment,
        )
        if virtual:
            kwargs["is_virtual"] = True
        if by_value:
            kwargs["is_by_value"] = True
        t = cls(**kwargs)
        t.name = name
        return t.finalize() if finalize else t

    @property
    def name(self):
        return self.__dict__.get("_name") or f"t{self.get_keyword('unique_id')}"

    @name.setter
    def name(self, value):
        self.__dict__["_name"] = value

    @property
    def uid(self) -> int:
        return int(self.get_keyword("unique_id"))

    @property
    def shape(self) -> tuple:
        return tuple(self.get_keyword("dimensions") or ())

    @property
    def virtual(self) -> bool:
        return bool(self.get_keyword("is_virtual"))

    def signature(self) -> tuple:
        """What must agree between two descriptors of one tensor (same UID)."""
        dt = self.get_keyword("data_type")
        return (self.shape, tuple(self.get_keyword("strides") or ()), int(dt) if dt is not None else None,
                self.virtual)

    def describe(self) -> str:
        dt = self.get_keyword("data_type")
        dt_name = DataType(dt).name.replace("CUDNN_DATA_", "").lower() if dt is not None else "?"
        virtual = " virtual" if self.virtual else ""
        return (f"{self.name} (uid {self.uid}) {list(self.shape)} strides {list(self.get_keyword('strides') or [])} "
                f"{dt_name}{virtual}")


class OperationGraphMixin:
    """``OperationGraph``: checks before finalize, a table of its operations, Graphviz DOT."""

    @property
    def operations(self) -> tuple:
        return tuple(self._typed_state["values"].get("ops") or ())

    def finalize(self, check_required=True, check_graph=True):
        if check_graph:
            from cudnn_backend.graph import check_operations

            check_operations(self.operations)
        return super().finalize(check_required=check_required)

    def table(self) -> str:
        from cudnn_backend.graph import operations_table

        return operations_table(self.operations)

    def to_dot(self, name="cudnn_graph") -> str:
        from cudnn_backend.graph import operations_dot

        return operations_dot(self.operations, name)

    def __str__(self):
        return self.table()


MIXINS = {
    T.CUDNN_BACKEND_TENSOR_DESCRIPTOR: TensorMixin,
    T.CUDNN_BACKEND_OPERATIONGRAPH_DESCRIPTOR: OperationGraphMixin,
}
