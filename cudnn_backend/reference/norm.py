"""Normalizations: NORM_FORWARD (layer, RMS, batch, instance, group, adaptive layer norm; training with the saved
mean and inverse standard deviation and batch norm's running statistics, and inference), NORM_BACKWARD, and the
batch-norm pieces of fused convolutions (BN_FINALIZE_STATISTICS, BN_BWD_WEIGHTS).

The statistics' dims say what is normalized together: an axis where they equal X's is kept, where they are 1 is
reduced, where they divide X's (group norm's groups of channels) is split into groups of consecutive indices.
Without statistics tensors (inference) the mode says it: layer, RMS and adaptive layer norm reduce the axes the
scale spans (all but the first), instance norm the spatial ones. Variances are biased (divided by the count);
running variances use the unbiased one (count / (count - 1)), as cuDNN and PyTorch do."""
from __future__ import annotations

import math

import numpy as np

from cudnn_backend._bindings.enums import BnFinalizeStatsMode, NormFwdPhase, NormMode
from cudnn_backend.core.families.norm import stats_dims
from cudnn_backend.reference._blocks import Request, ravel
from cudnn_backend.reference._ops import Op, Unsupported, broadcast_keys, check_broadcast, element_coords, pick, \
    register, scalar

__all__ = ["normalize", "NormForward", "NormBackward", "BnFinalize", "BnBackwardWeights"]


def normalize(x, stats_dims, scale, bias, eps, rms):
    """(y, mean, inverse std, variance) of X normalized per group of ``stats_dims`` (each dividing X's; RMS: the
    mean is 0 and the variance the mean square); the statistics come in ``stats_dims``."""
    shape = x.shape
    groups = [(d, s) for d, s in zip(shape, stats_dims)]
    split = []
    for d, s in groups:
        split += [s, d // s]
    axes = tuple(2 * i + 1 for i in range(len(shape)))
    xs = x.reshape(split)
    if rms:
        mean = np.zeros_like(xs.mean(axis=axes, keepdims=True))
        var = (xs * xs).mean(axis=axes, keepdims=True)
    else:
        mean = xs.mean(axis=axes, keepdims=True)
        var = ((xs - mean) ** 2).mean(axis=axes, keepdims=True)
    inv = 1.0 / np.sqrt(var + eps)
    y = ((xs - mean) * inv).reshape(shape) * scale
    if bias is not None:
        y = y + bias
    stats_shape = tuple(s for _, s in groups)
    return y, mean.reshape(stats_shape), inv.reshape(stats_shape), var.reshape(stats_shape)


def _check_stats(x_dims, stats_dims, what):
    if len(stats_dims) != len(x_dims) or any(s < 1 or x % s for x, s in zip(x_dims, stats_dims)):
        raise Unsupported(f"{what} {list(stats_dims)} do not divide x {list(x_dims)} axis by axis")


def _sum_to(a, dims):
    """``a`` summed over the axes where ``dims`` is 1 (and ``a``'s is not)."""
    axes = tuple(i for i, (x, d) in enumerate(zip(a.shape, dims)) if d == 1 and x != 1)
    return a.sum(axis=axes, keepdims=True).reshape(dims)


@register("NORM_FORWARD")
class NormForward(Op):
    def __init__(self, node, graph):
        super().__init__(node, graph)
        self.refuse_set("peer_stat_descs", why="statistics shared between GPUs")
        try:
            self.mode = NormMode(int(node.attr("mode")))
            self.phase = NormFwdPhase(int(node.attr("phase", int(NormFwdPhase.CUDNN_NORM_FWD_TRAINING))))
        except (TypeError, ValueError):
            raise Unsupported(f"norm mode {node.attr('mode')!r} or phase {node.attr('phase')!r} is unknown") from None
        self.x, self.scale, self.y = self.need("xdesc"), self.need("scale_desc"), self.need("ydesc")
        self.bias, self.eps = node.uid("bias_desc"), node.uid("epsilon_desc")
        self.mean, self.inv = node.uid("mean_desc"), node.uid("inv_variance_desc")
        self.rm_in, self.rv_in = node.uid("input_running_mean_desc"), node.uid("input_running_var_desc")
        self.rm_out, self.rv_out = node.uid("output_running_mean_desc"), node.uid("output_running_var_desc")
        self.factor = node.uid("exp_avg_factor_desc")
        self.rms = self.mode == NormMode.CUDNN_RMS_NORM
        xd = self.dims(self.x)
        if self.mode == NormMode.CUDNN_BATCH_NORM and self.phase == NormFwdPhase.CUDNN_NORM_FWD_INFERENCE:
            raise Unsupported("batch-norm inference reads saved statistics cuDNN 9 has no NORM_FORWARD for")
        if self.inv is not None or self.mean is not None:
            self.stats_dims = self.dims(self.inv if self.inv is not None else self.mean)
        elif self.mode != NormMode.CUDNN_BATCH_NORM and \
                stats_dims(self.mode, xd, self.dims(self.scale)) is not None:  # the norm family's one rule
            self.stats_dims = stats_dims(self.mode, xd, self.dims(self.scale))
        else:
            raise Unsupported(f"{self.mode.name} without statistics outputs: its groups are unknown")
        _check_stats(xd, self.stats_dims, "the statistics")
        for name, uid in (("scale", self.scale), ("bias", self.bias)):
            if uid is not None:
                check_broadcast(self.dims(uid), xd, name)
        if (self.rm_out is None) != (self.rv_out is None) or (self.rm_out is not None and (
                self.rm_in is None or self.rv_in is None)):
            raise Unsupported("running statistics need both inputs and both outputs")
        if self.eps is None:
            raise Unsupported("its epsilon tensor is not set")

    def _stat_outputs(self, mean, inv):
        out = {}
        if self.mean is not None:
            out[self.mean] = mean
        if self.inv is not None:
            out[self.inv] = inv
        return out

    def dense(self, values):
        x = values[self.x]
        bias = values[self.bias] if self.bias is not None else None
        y, mean, inv, var = normalize(x, self.stats_dims, values[self.scale], bias, scalar(values, self.eps),
                                      self.rms)
        out = {self.y: y, **self._stat_outputs(mean.reshape(self.stats_dims), inv.reshape(self.stats_dims))}
        if self.rm_out is not None:
            f = scalar(values, self.factor) if self.factor is not None else 0.1
            n = math.prod(self.dims(self.x)) // math.prod(self.stats_dims)
            rd, vd = self.dims(self.rm_out), self.dims(self.rv_out)
            out[self.rm_out] = ((1 - f) * values[self.rm_in] + f * mean.reshape(rd))
            out[self.rv_out] = ((1 - f) * values[self.rv_in] + f * var.reshape(vd) * n / max(n - 1, 1))
        return out

    def pull(self, wanted, cheap):
        xd = self.dims(self.x)
        rank = len(xd)
        kept = next((i for i, (x, s) in enumerate(zip(xd, self.stats_dims)) if x != s), rank)
        if self.all_whole(wanted) or kept == 0 or self.rm_out is not None:
            return super().pull(wanted, cheap)
        depth = rank - kept  # the groups lie inside X's blocks of this depth
        picks = {}
        keys = []
        for u, r in wanted.items():
            coords = element_coords(self.dims(u), r)
            picks[u] = coords
            keys.append(ravel(coords[:, :kept], xd[:kept]))
        unique = np.unique(np.concatenate(keys))
        block = Request(depth, unique)
        needs = {self.x: block}
        inverses = {}
        for name, uid in (("scale", self.scale), ("bias", self.bias)):
            if uid is not None:
                needs[uid], inverses[name] = broadcast_keys(xd, block, self.dims(uid))
        needs[self.eps] = Request(len(self.dims(self.eps)), np.zeros(1, dtype=np.int64))
        sub_stats = (len(unique), *self.stats_dims[kept:])  # the outer axes, all kept, collapsed into one

        def finish(values):
            x = values[self.x]                                                     # (U, *block)
            scale = pick(values[self.scale], inverses["scale"])
            bias = pick(values[self.bias], inverses["bias"]) if self.bias is not None else None
            eps = float(np.asarray(values[self.eps]).reshape(-1)[0])
            y, mean, inv, _ = normalize(x, sub_stats, scale, bias, eps, self.rms)
            mean, inv = mean.reshape(len(unique), -1), inv.reshape(len(unique), -1)
            out = {}
            for u, coords in picks.items():
                row = np.searchsorted(unique, ravel(coords[:, :kept], xd[:kept]))
                if u == self.y:
                    out[u] = y.reshape(len(unique), -1)[row, ravel(coords[:, kept:], xd[kept:])]
                else:
                    src = mean if u == self.mean else inv
                    out[u] = src[row, ravel(coords[:, kept:], self.stats_dims[kept:])]
            return out

        return needs, finish


@register("NORM_BACKWARD")
class NormBackward(Op):
    def __init__(self, node, graph):
        super().__init__(node, graph)
        self.refuse_set("peer_stat_descs", why="statistics shared between GPUs")
        try:
            self.mode = NormMode(int(node.attr("mode")))
        except (TypeError, ValueError):
            raise Unsupported(f"norm mode {node.attr('mode')!r} is unknown") from None
        self.x, self.dy, self.scale = self.need("xdesc"), self.need("dydesc"), self.need("scale_desc")
        self.inv, self.mean = self.need("inv_variance_desc"), node.uid("mean_desc")
        self.dx, self.dscale, self.dbias = self.need("dxdesc"), node.uid("dscale_desc"), node.uid("dbias_desc")
        self.rms = self.mode == NormMode.CUDNN_RMS_NORM
        if self.mean is None and not self.rms:
            raise Unsupported(f"{self.mode.name} backward without the saved mean")
        xd = self.dims(self.x)
        self.stats_dims = self.dims(self.inv)
        _check_stats(xd, self.stats_dims, "inv_variance")
        check_broadcast(self.dims(self.scale), xd, "scale")

    def dense(self, values):
        x, dy, scale = values[self.x], values[self.dy], values[self.scale]
        sd = self.stats_dims
        split = []
        for d, s in zip(x.shape, sd):
            split += [s, d // s]
        axes = tuple(2 * i + 1 for i in range(x.ndim))
        inv = values[self.inv].reshape([v for s in sd for v in (s, 1)])
        mean = 0.0 if self.rms else values[self.mean].reshape([v for s in sd for v in (s, 1)])
        xs = x.reshape(split)
        xhat = (xs - mean) * inv
        g = (dy * scale).reshape(split)
        proj = (g * xhat).mean(axis=axes, keepdims=True)
        dx = g - xhat * proj if self.rms else g - g.mean(axis=axes, keepdims=True) - xhat * proj
        out = {self.dx: (inv * dx).reshape(x.shape)}
        xhat = xhat.reshape(x.shape)
        if self.dscale is not None:
            out[self.dscale] = _sum_to(dy * xhat, self.dims(self.dscale))
        if self.dbias is not None:
            out[self.dbias] = _sum_to(dy, self.dims(self.dbias))
        return out


@register("BN_FINALIZE_STATISTICS")
class BnFinalize(Op):
    def __init__(self, node, graph):
        super().__init__(node, graph)
        self.sum, self.sqsum = self.need("y_sum_desc"), self.need("y_sq_sum_desc")
        self.scale, self.bias = self.need("scale_desc"), self.need("bias_desc")
        self.count, self.eps = self.need("accum_count_desc"), self.need("epsilon_desc")
        self.factor = node.uid("exp_averate_factor_desc")
        self.rm_in, self.rv_in = node.uid("prev_running_mean_desc"), node.uid("prev_running_var_desc")
        self.rm_out, self.rv_out = node.uid("updated_running_mean_desc"), node.uid("updated_running_var_desc")
        self.outs = {k: node.uid(f"{k}_desc") for k in ("saved_mean", "saved_inv_std", "eq_scale", "eq_bias")}
        mode = node.attr("stats_mode", int(BnFinalizeStatsMode.CUDNN_BN_FINALIZE_STATISTICS_TRAINING))
        self.inference = int(mode) == int(BnFinalizeStatsMode.CUDNN_BN_FINALIZE_STATISTICS_INFERENCE)
        if self.inference and (self.rm_in is None or self.rv_in is None):
            raise Unsupported("inference mode without the running statistics")
        if self.rm_out is not None and (self.rm_in is None or self.factor is None):
            raise Unsupported("updated running statistics without the previous ones or the factor")

    def dense(self, values):
        n, eps = scalar(values, self.count), scalar(values, self.eps)
        if self.inference:
            mean, var = values[self.rm_in], values[self.rv_in]
        else:
            mean = values[self.sum] / n
            var = values[self.sqsum] / n - mean * mean
        inv = 1.0 / np.sqrt(var + eps)
        eq_scale = values[self.scale] * inv
        computed = {"saved_mean": mean, "saved_inv_std": inv, "eq_scale": eq_scale,
                    "eq_bias": values[self.bias] - mean * eq_scale}
        out = {u: np.broadcast_to(computed[k], self.dims(u)) for k, u in self.outs.items() if u is not None}
        if self.rm_out is not None:
            f = scalar(values, self.factor)
            out[self.rm_out] = (1 - f) * values[self.rm_in] + f * mean
            out[self.rv_out] = (1 - f) * values[self.rv_in] + f * var * n / max(n - 1, 1)
        return out


@register("BN_BWD_WEIGHTS")
class BnBackwardWeights(Op):
    def __init__(self, node, graph):
        super().__init__(node, graph)
        self.x, self.dy = self.need("x_desc"), self.need("dy_desc")
        self.mean, self.inv, self.scale = self.need("mean_desc"), self.need("invstd_desc"), self.need("bn_scale_desc")
        self.outs = {"dscale": node.uid("dbn_scale_desc"), "dbias": node.uid("dbn_bias_desc"),
                     "eq_dy_scale": node.uid("eq_dy_scale_desc"), "eq_x_scale": node.uid("eq_x_scale_desc"),
                     "eq_bias": node.uid("eq_bias")}
        _check_stats(self.dims(self.x), self.dims(self.mean), "mean")

    def dense(self, values):
        x, dy, mean, inv, scale = (values[u] for u in (self.x, self.dy, self.mean, self.inv, self.scale))
        pd = self.dims(self.mean)
        n = math.prod(self.dims(self.x)) // math.prod(pd)
        xhat = (x - mean) * inv
        dscale, dbias = _sum_to(dy * xhat, pd), _sum_to(dy, pd)
        # dX = scale * inv * (dY - dbias / n - xhat * dscale / n) = eq_dy_scale * dY + eq_x_scale * X + eq_bias
        eq_dy = scale * inv
        eq_x = -scale * inv * inv * dscale / n
        eq_b = -scale * inv * dbias / n + scale * inv * inv * dscale * mean / n
        computed = {"dscale": dscale, "dbias": dbias, "eq_dy_scale": eq_dy, "eq_x_scale": eq_x, "eq_bias": eq_b}
        return {u: np.broadcast_to(computed[k], self.dims(u)) for k, u in self.outs.items() if u is not None}
