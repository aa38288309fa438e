"""Tensor UIDs: unique within one graph (``UidAllocator``), and a process-wide allocator for tensors made
outside any graph (``default_uids``, used by ``Tensor.from_array``)."""
from __future__ import annotations

import itertools
import threading

from cudnn_backend.errors import GraphError

__all__ = ["UidAllocator", "default_uids"]


class UidAllocator:
    """Hands out UIDs unique within one graph, skipping those the user chose."""

    def __init__(self, start: int = 1):
        self._next = itertools.count(start)
        self._used: set[int] = set()
        self._lock = threading.Lock()

    def reserve(self, uid: int) -> int:
        """Take ``uid`` (a UID the user chose); GraphError if it is taken already."""
        with self._lock:
            if uid in self._used:
                raise GraphError(f"uid: {uid} is already used in this graph")
            self._used.add(uid)
            return uid

    def next(self) -> int:
        """The next free UID (skipping reserved ones), taken."""
        with self._lock:
            while True:
                uid = next(self._next)
                if uid not in self._used:
                    self._used.add(uid)
                    return uid

    def __contains__(self, uid) -> bool:
        return uid in self._used

    def __copy__(self):
        raise TypeError("cannot copy a UidAllocator (it belongs to one graph)")

    def __deepcopy__(self, memo):
        raise TypeError("cannot copy a UidAllocator (it belongs to one graph)")


default_uids = UidAllocator(start=1 << 20)
