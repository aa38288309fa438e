"""MATMUL: C [..., M, N] = A [..., M, K] x B [..., K, N]; batch dims broadcast (``pointwise.broadcast_dims``).

``Graph`` methods (the mixin): Matrix multiplication (batched, with optional per-batch M/N/K overrides).

Reference ops: MATMUL: C[..., M, N] = A[..., M, K] @ B[..., K, N], batched over the leading dims (each of A's and B's
equal to C's or 1: broadcast). With per-batch M/N/K override tensors, C[b] = A[b, :m, :k] @ B[b, :k, :n] and the rest
of C[b] is the Matmul descriptor's padding value (0 unless set)."""
from __future__ import annotations

import math

import numpy as np

from cudnn_backend._bindings.enums import AttributeName as A
from cudnn_backend._bindings.enums import DataType
from cudnn_backend.core import graph_limits
from cudnn_backend.core.families._checks import dims, fail, need, op_name
from cudnn_backend.core.families._family import Family
from cudnn_backend.core.families._reference import Op, Request, Unsupported, full, outer_coords, ravel, real
from cudnn_backend.core.families.pointwise import broadcast_dims
from cudnn_backend.errors import GraphError

__all__ = ["FAMILY", "matmul_output_dims", "MatmulOps", "MatmulOp"]


def matmul_output_dims(a_dims, b_dims):
    """C dims of A [..., M, K] x B [..., K, N]: equal ranks, batch dims equal or 1."""
    if len(a_dims) < 2 or len(b_dims) < 2 or len(a_dims) != len(b_dims):
        fail(f"matmul: A {list(a_dims)} and B {list(b_dims)} need equal ranks >= 2")
    if a_dims[-1] != b_dims[-2]:
        fail(f"matmul: inner dims differ: A {list(a_dims)} x B {list(b_dims)}")
    batch = broadcast_dims(a_dims[:-2], b_dims[:-2], what="matmul batch") if len(a_dims) > 2 else []
    return [*batch, a_dims[-2], b_dims[-1]]


# the data types of per-batch M/N/K overrides: cuDNN reads them as integers whatever their type, and plans others
_OVERRIDE_TYPES = (DataType.CUDNN_DATA_INT32, DataType.CUDNN_DATA_INT64)
#: the per-batch M/N/K override tensors' attributes (their types checked by check_matmul whatever the tensors' sizes)
OVERRIDE_SLOTS = tuple((getattr(A, f"CUDNN_ATTR_OPERATION_MATMUL_GEMM_{k}_OVERRIDE_DESC"), f"gemm_{k.lower()}_override_desc")
                       for k in "MNK")


class MatmulOps:
    """``matmul(a, b)``."""

    def matmul(self, a, b, *, output=False, output_data_type=None, compute=None, name=None, padding_value=None,
               m_override=None, n_override=None, k_override=None):
        """C = A @ B: A [..., M, K], B [..., K, N] (equal ranks; batch dims equal or 1), C [..., M, N] row-major.
        ``m/n/k_override`` are INT32 or INT64 tensors of per-batch sizes (attention with padding): C's rank, C's
        first dim, every other dim 1 (C [B, M, N]: [B, 1, 1]; C [B, H, M, N]: [B, 1, 1, 1], one size per B);
        ``padding_value`` fills what lies beyond them."""
        a, b = self._need_tensor(a, "a"), self._need_tensor(b, "b")
        dims = matmul_output_dims(a.shape, b.shape)
        desc = self._descriptor("MATMUL", comp_type=self._compute(compute))
        if padding_value is not None:
            desc.padding_value = padding_value
        desc.finalize()
        c = self._output(output, dims, None, output_data_type, name)
        op = self._operation("MATMUL", adesc=a, bdesc=b, cdesc=c, desc=desc)
        for what, keyword, t in (("m_override", "gemm_m_override_desc", m_override),
                                 ("n_override", "gemm_n_override_desc", n_override),
                                 ("k_override", "gemm_k_override_desc", k_override)):
            if t is not None:
                t = self._need_tensor(t, what)
                if t.data_type not in _OVERRIDE_TYPES:
                    raise GraphError(f"{what}: {t.describe()} is {t.data_type.name}; per-batch sizes are INT32 or "
                                     "INT64 (cuDNN reads them as integers)")
                if len(dims) < 3:
                    raise GraphError(f"{what}: C {dims} has no batch dim to give sizes per (cuDNN refuses "
                                     "overrides of a 2-d matmul)")
                # cuDNN 9.19 and 9.28 refuse (NOT_SUPPORTED) any other shape: a rank other than C's, or a second
                # batch dim other than 1
                expected = [dims[0], *([1] * (len(dims) - 1))]
                if list(t.shape) != expected:
                    raise GraphError(f"{what}: {t.describe()} is not {expected}: C's rank, one size per index of "
                                     f"C's first dim, every other dim 1 (C is {dims})")
                setattr(op, keyword, t)
        self.add(op)
        return c


def _batch_keys(coords, dims):
    """Linear indices over an operand's batch dims of the output's batch coordinates (size-1 dims broadcast)."""
    batch = tuple(dims[:-2])
    c = coords.copy()
    for axis, d in enumerate(batch):
        if d == 1:
            c[:, axis] = 0
    return ravel(c, batch)


class MatmulOp(Op):
    def __init__(self, node, graph):
        super().__init__(node, graph)
        self.a, self.b, self.c = self.need("adesc"), self.need("bdesc"), self.need("cdesc")
        self.refuse_set("irregularly_strided_batch_count", why="irregular batch strides are a memory layout the "
                        "logical arrays cannot describe")
        a, b, c = self.dims(self.a), self.dims(self.b), self.dims(self.c)
        if not (len(a) == len(b) == len(c) >= 2):
            raise Unsupported(f"a {list(a)}, b {list(b)}, c {list(c)}: not matrices of one rank")
        if a[-1] != b[-2] or c[-2:] != (a[-2], b[-1]):
            raise Unsupported(f"a {list(a)} @ b {list(b)} is not c {list(c)}")
        for name, d in (("a", a), ("b", b)):
            if any(x != y and x != 1 for x, y in zip(d[:-2], c[:-2])):
                raise Unsupported(f"{name}'s batch dims {list(d[:-2])} do not broadcast to c's {list(c[:-2])}")
        self.overrides = {kw: node.uid(f"gemm_{kw}_override_desc") for kw in "mnk"}
        self.overrides = {k: u for k, u in self.overrides.items() if u is not None}
        batches = math.prod(c[:-2])
        for kw, u in self.overrides.items():
            if math.prod(self.dims(u)) != batches:
                raise Unsupported(f"the {kw} override has {math.prod(self.dims(u))} values for {batches} batches")
        self.padding = real(node.child("desc", "padding_value", 0.0), "padding_value")

    def work(self) -> float:
        return float(math.prod(self.dims(self.c))) * self.dims(self.a)[-1]

    def dense(self, values):
        a, b = values[self.a], values[self.b]
        c = np.matmul(a, b)
        if not self.overrides:
            return {self.c: c}
        cd = self.dims(self.c)
        m, n, k = cd[-2], cd[-1], self.dims(self.a)[-1]
        a = np.broadcast_to(a, (*cd[:-2], m, k)).reshape(-1, m, k)
        b = np.broadcast_to(b, (*cd[:-2], k, n)).reshape(-1, k, n)
        out = np.full((a.shape[0], m, n), self.padding)
        sizes = {kw: np.asarray(values[u]).reshape(-1).astype(np.int64) for kw, u in self.overrides.items()}
        for i in range(a.shape[0]):
            mi = int(sizes["m"][i]) if "m" in sizes else m
            ni = int(sizes["n"][i]) if "n" in sizes else n
            ki = int(sizes["k"][i]) if "k" in sizes else k
            out[i, :mi, :ni] = a[i, :mi, :ki] @ b[i, :ki, :ni]
        return {self.c: out.reshape(cd)}

    def pull(self, wanted, cheap):
        if self.overrides or self.all_whole(wanted):
            return super().pull(wanted, cheap)
        want = wanted[self.c]
        cd, ad, bd = self.dims(self.c), self.dims(self.a), self.dims(self.b)
        rank = len(cd)
        if want.depth == 0:
            coords = outer_coords(want.keys, cd, 0)
            rows = coords[:, :-1]
            cols = coords[:, -1]
        else:  # whole rows (or more): every row of the wanted blocks
            inner = math.prod(cd[rank - want.depth:rank - 1])
            row_keys = (want.keys[:, None] * inner + np.arange(inner, dtype=np.int64)[None, :]).reshape(-1)
            rows = outer_coords(row_keys, cd, 1)
            cols = None
        a_keys = _batch_keys(rows[:, :-1], ad) * ad[-2] + rows[:, -1]               # rows of A
        a_req_keys, a_inv = np.unique(a_keys, return_inverse=True)
        b_batch = _batch_keys(rows[:, :-1], bd)
        if cheap(self.b):
            b_req, b_inv = full(bd), b_batch
        else:
            keys, b_inv = np.unique(b_batch, return_inverse=True)
            b_req = Request(2, keys)
        needs = {self.a: Request(1, a_req_keys), self.b: b_req}
        if self.a == self.b:
            needs = {self.a: full(ad)}

        def finish(values):
            if self.a == self.b:
                whole = values[self.a].reshape(-1, ad[-2], ad[-1])
                a_rows = whole.reshape(-1, ad[-1])[a_keys]
                mats, inv = whole, b_batch
            else:
                a_rows = values[self.a][a_inv]                                     # (R, K)
                mats = values[self.b].reshape(-1, bd[-2], bd[-1])                   # (U, K, N)
                inv = b_inv
            if cols is not None:
                return {self.c: np.einsum("rk,rk->r", a_rows, mats[inv, :, cols])}
            out = np.empty((len(a_rows), cd[-1]))
            for j in np.unique(inv):
                sel = np.nonzero(inv == j)[0]
                out[sel] = a_rows[sel] @ mats[j]
            return {self.c: out}

        return needs, finish


def check_matmul(op):
    """C must be A @ B's shape (``matmul_output_dims``: cuDNN checks that itself as the descriptor is finalized, not
    for the shapes a variant pack overrides), and M, N, K must not wrap cuDNN's 32-bit tile counts
    (``graph_limits``)."""
    for attr, keyword in OVERRIDE_SLOTS:
        override = op.value_of(attr)
        data_type = None if override is None else override.value_of(A.CUDNN_ATTR_TENSOR_DATA_TYPE)
        if data_type is not None and int(data_type) not in _OVERRIDE_TYPES:
            fail(f"{op_name(op)}: {keyword} is {DataType(int(data_type)).name}; per-batch sizes are INT32 or INT64 "
                 "(cuDNN reads them as integers, and plans others)")
    a, b = dims(op.value_of(A.CUDNN_ATTR_OPERATION_MATMUL_ADESC)), dims(op.value_of(A.CUDNN_ATTR_OPERATION_MATMUL_BDESC))
    c_tensor = op.value_of(A.CUDNN_ATTR_OPERATION_MATMUL_CDESC)
    if a is not None and b is not None:
        need(op, c_tensor, "cdesc", matmul_output_dims(a, b), f"adesc {list(a)} x bdesc {list(b)}")
    if all(d is None or math.prod(d) < graph_limits.TILE_COUNT_LOW for d in (a, b)):
        return  # (each extent is at most its tensor's element count)
    extents = []
    if a is not None and len(a) >= 2:
        extents += [(f"M of adesc {list(a)}", a[-2]), (f"K of adesc {list(a)}", a[-1])]
    if b is not None and len(b) >= 2:
        extents.append((f"N of bdesc {list(b)}", b[-1]))
    problem = graph_limits.tile_count_problem(extents)
    if problem is not None:
        fail(f"{op_name(op)}: {problem}")


FAMILY = Family(
    "matmul", ("MATMUL",),
    finalize_checks={"MATMUL": check_matmul},
    finalize_check_floors={"MATMUL": graph_limits.TILE_COUNT_LOW},
    finalize_check_floor_unless={"MATMUL": tuple(attr for attr, _ in OVERRIDE_SLOTS)},
    json_members={"MATMUL": {A.CUDNN_ATTR_OPERATION_MATMUL_ADESC: "matA", A.CUDNN_ATTR_OPERATION_MATMUL_BDESC: "matB",
                             A.CUDNN_ATTR_OPERATION_MATMUL_CDESC: "matC"}},
    shape_rules=(matmul_output_dims,),
    graph_methods=("matmul",),
    graph_mixin=MatmulOps,
    reference_ops={"MATMUL": MatmulOp},
    doc=__doc__)
