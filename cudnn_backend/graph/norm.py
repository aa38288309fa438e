"""Normalizations (layer, RMS, batch, instance, adaptive layer norm; forward and backward) and the
batch-norm pieces of fused convolutions: GEN_STATS, BN finalize statistics, BN backward weights."""
from __future__ import annotations

from cudnn_backend._bindings.enums import BnFinalizeStatsMode, DataType, GenStatsMode, NormFwdPhase, NormMode
from cudnn_backend.core._descriptor import as_int
from cudnn_backend.core.families import norm as _family
from cudnn_backend.errors import GraphError
from cudnn_backend.graph import shapes
from cudnn_backend.graph._util import as_choice, as_data_type
from cudnn_backend.typed import (
    OperationBnBwdWeights,
    OperationBnFinalizeStatistics,
    OperationGenStats,
    OperationNormBackward,
    OperationNormForward,
    TensorBase,
)

__all__ = ["NormOps", "norm_mode", "stats_dims"]

_F32 = DataType.CUDNN_DATA_FLOAT
_I64 = DataType.CUDNN_DATA_INT64
_MODES = {"layer": NormMode.CUDNN_LAYER_NORM, "layer_norm": NormMode.CUDNN_LAYER_NORM,
          "rms": NormMode.CUDNN_RMS_NORM, "rms_norm": NormMode.CUDNN_RMS_NORM,
          "batch": NormMode.CUDNN_BATCH_NORM, "batch_norm": NormMode.CUDNN_BATCH_NORM,
          "instance": NormMode.CUDNN_INSTANCE_NORM, "instance_norm": NormMode.CUDNN_INSTANCE_NORM,
          "group": NormMode.CUDNN_GROUP_NORM, "group_norm": NormMode.CUDNN_GROUP_NORM}
if "CUDNN_ADA_LAYER_NORM" in NormMode.__members__:
    _MODES.update(ada=NormMode["CUDNN_ADA_LAYER_NORM"], ada_layer_norm=NormMode["CUDNN_ADA_LAYER_NORM"],
                  adaptive_layer_norm=NormMode["CUDNN_ADA_LAYER_NORM"])
_PHASES = {"training": NormFwdPhase.CUDNN_NORM_FWD_TRAINING, "train": NormFwdPhase.CUDNN_NORM_FWD_TRAINING,
           "inference": NormFwdPhase.CUDNN_NORM_FWD_INFERENCE, "infer": NormFwdPhase.CUDNN_NORM_FWD_INFERENCE}


def norm_mode(mode) -> NormMode:
    """'layer', 'rms', 'batch', 'instance', 'ada_layer_norm', 'group', a NormMode or its C name."""
    return as_choice(NormMode, mode, "mode", "CUDNN_", _MODES)


def stats_dims(mode: NormMode, x_dims, scale_dims):
    """Mean / inverse-variance dims (a list): the norm family's one rule (``core.families.norm.stats_dims``, which the
    finalize check reads too): batch norm one value per channel, instance norm one per (sample, channel), layer /
    RMS / adaptive layer norm one per row (x's dims with 1 wherever the scale spans an axis, the batch axis kept)."""
    if mode not in (NormMode.CUDNN_BATCH_NORM, NormMode.CUDNN_INSTANCE_NORM) and len(scale_dims) != len(x_dims):
        raise GraphError(f"scale: {list(scale_dims)} needs x's rank ({list(x_dims)})")
    dims = _family.stats_dims(mode, x_dims, scale_dims)
    if dims is None:  # group norm and newer modes: the batch axis kept, the scale's axes reduced (cuDNN checks)
        dims = [d if i == 0 or s == 1 else 1 for i, (d, s) in enumerate(zip(x_dims, scale_dims))]
    return list(dims)


class NormOps:
    """``norm_forward``/``norm_backward`` and the named norms, ``gen_stats``, ``bn_finalize``, ``bn_bwd_weights``."""

    # -- forward ---------------------------------------------------------------------------------
    def norm_forward(self, x, scale, bias=None, *, mode="layer", phase="training", epsilon=1e-5, momentum=None,
                     running_mean=None, running_var=None, output=True, output_data_type=None, stats_data_type=_F32,
                     name="norm"):
        """NORM_FORWARD: ``{"y", "mean", "inv_variance", "epsilon", "running_mean", "running_var"}``.

        Training writes the statistics (fp32; RMS norm has no mean) shaped as ``stats_dims`` says, in x's
        axis order; batch norm training with ``running_mean``/``running_var`` (and ``momentum``) also
        updates running statistics. ``epsilon``/``momentum`` are numbers (by-value fp32 scalars) or tensors.
        """
        mode = norm_mode(mode)
        phase = as_choice(NormFwdPhase, phase, "phase", "CUDNN_NORM_FWD_", _PHASES)
        x, scale = self._need_tensor(x, "x"), self._need_tensor(scale, "scale")
        rank = len(x.shape)
        if mode == NormMode.CUDNN_BATCH_NORM and phase == NormFwdPhase.CUDNN_NORM_FWD_INFERENCE:
            raise GraphError("batch norm forward inference is no NORM_FORWARD in cuDNN 9 (heuristics find no "
                             "engine): fold the statistics into a scale and bias (pointwise ops)")
        y = self._output(output, x.shape, x, output_data_type or x.data_type, f"{name}_y", strides=x.strides,
                         what="output")
        op = OperationNormForward(mode=mode, phase=phase, xdesc=x, scale_desc=scale, ydesc=y,
                                  epsilon_desc=self._scalar_or_tensor(epsilon, rank, f"{name}_epsilon"))
        out = {"y": y, "mean": None, "inv_variance": None, "epsilon": op.epsilon_desc, "running_mean": None,
               "running_var": None}
        if bias is not None:
            op.bias_desc = self._need_tensor(bias, "bias")
        if phase == NormFwdPhase.CUDNN_NORM_FWD_TRAINING:
            sdims = stats_dims(mode, x.shape, scale.shape)
            sstrides = shapes.strides_like(sdims, x.strides)
            stats_type = as_data_type(stats_data_type, "stats_data_type")
            out["inv_variance"] = op.inv_variance_desc = self.tensor(sdims, sstrides, stats_type,
                                                                     name=f"{name}_inv_variance")
            if mode != NormMode.CUDNN_RMS_NORM:
                out["mean"] = op.mean_desc = self.tensor(sdims, sstrides, stats_type, name=f"{name}_mean")
            if running_mean is not None or running_var is not None:
                if mode != NormMode.CUDNN_BATCH_NORM or running_mean is None or running_var is None:
                    raise GraphError("running_mean and running_var: both, and for batch norm only")
                op.input_running_mean_desc = self._need_tensor(running_mean, "running_mean")
                op.input_running_var_desc = self._need_tensor(running_var, "running_var")
                op.exp_avg_factor_desc = self._scalar_or_tensor(0.1 if momentum is None else momentum, rank,
                                                                f"{name}_momentum")
                pc = shapes.per_channel_dims(x.shape)
                out["running_mean"] = op.output_running_mean_desc = self.tensor(
                    pc, running_mean.strides, running_mean.data_type, name=f"{name}_running_mean_out")
                out["running_var"] = op.output_running_var_desc = self.tensor(
                    pc, running_var.strides, running_var.data_type, name=f"{name}_running_var_out")
        # bias is optional in cuDNN (RMS norm, bias-less layer norm) though its docs call it required
        op.finalize(check_required=bias is not None)
        self.add(op)
        return out

    def layer_norm(self, x, scale, bias=None, *, epsilon=1e-5, training=True, **kw):
        """Layer norm over the axes the scale spans (cudnn-frontend: X [T, H, 1, 1], scale [1, H, 1, 1])."""
        return self.norm_forward(x, scale, bias, mode="layer", phase="training" if training else "inference",
                                 epsilon=epsilon, **kw)

    def rms_norm(self, x, scale, bias=None, *, epsilon=1e-5, training=True, **kw):
        """RMS norm (no mean; the bias is optional)."""
        return self.norm_forward(x, scale, bias, mode="rms", phase="training" if training else "inference",
                                 epsilon=epsilon, **kw)

    def batch_norm(self, x, scale, bias, *, epsilon=1e-5, momentum=0.1, running_mean=None, running_var=None, **kw):
        """Batch norm training: per-channel statistics [1, C, 1, 1] (and updated running statistics)."""
        return self.norm_forward(x, scale, bias, mode="batch", phase="training", epsilon=epsilon, momentum=momentum,
                                 running_mean=running_mean, running_var=running_var, **kw)

    def instance_norm(self, x, scale, bias, *, epsilon=1e-5, training=True, **kw):
        """Instance norm: statistics per (sample, channel) [N, C, 1, 1]."""
        return self.norm_forward(x, scale, bias, mode="instance", phase="training" if training else "inference",
                                 epsilon=epsilon, **kw)

    def ada_layer_norm(self, x, scale, bias=None, *, epsilon=1e-5, training=True, **kw):
        """Adaptive layer norm (cuDNN 9.7+): X [B, S, D], per-batch scale/bias [B, 1, D], statistics [B, S, 1]."""
        return self.norm_forward(x, scale, bias, mode="ada_layer_norm",
                                 phase="training" if training else "inference", epsilon=epsilon, **kw)

    # -- backward --------------------------------------------------------------------------------
    def norm_backward(self, dy, x, scale, mean=None, inv_variance=None, *, mode="layer", dbias=True, epsilon=None,
                      output_data_type=None, grad_data_type=_F32, name="norm_bwd"):
        """NORM_BACKWARD: ``{"dx", "dscale", "dbias"}`` (dscale/dbias shaped like the scale, fp32)."""
        mode = norm_mode(mode)
        dy, x, scale = self._need_tensor(dy, "dy"), self._need_tensor(x, "x"), self._need_tensor(scale, "scale")
        if mode != NormMode.CUDNN_RMS_NORM and mean is None:
            raise GraphError(f"mean: {mode.name} backward needs the saved mean")
        if inv_variance is None:
            raise GraphError("inv_variance: the backward needs the saved inverse variance")
        dx = self.tensor(x.shape, x.strides, output_data_type or x.data_type, name=f"{name}_dx")
        grad_type = as_data_type(grad_data_type, "grad_data_type")
        dscale = self.tensor(scale.shape, scale.strides, grad_type, name=f"{name}_dscale")
        op = OperationNormBackward(mode=mode, xdesc=x, dydesc=dy, scale_desc=scale,
                                   inv_variance_desc=self._need_tensor(inv_variance, "inv_variance"),
                                   dscale_desc=dscale, dxdesc=dx)
        if mean is not None:
            op.mean_desc = self._need_tensor(mean, "mean")
        db = None
        if dbias:
            db = op.dbias_desc = self.tensor(scale.shape, scale.strides, grad_type, name=f"{name}_dbias")
        eps = self._scalar_or_tensor(epsilon, len(x.shape), f"{name}_epsilon")
        if eps is not None:
            op.epsilon_desc = eps
        op.finalize(check_required=db is not None)  # RMS norm backward has no dbias
        self.add(op)
        return {"dx": dx, "dscale": dscale, "dbias": db}

    def layer_norm_bwd(self, dy, x, scale, mean, inv_variance, **kw):
        """Layer norm backward: ``norm_backward`` with mode LAYER_NORM (the forward's saved mean and inverse variance)."""
        return self.norm_backward(dy, x, scale, mean, inv_variance, mode="layer", **kw)

    def rms_norm_bwd(self, dy, x, scale, inv_variance, *, dbias=False, **kw):
        """RMS norm backward: ``norm_backward`` with mode RMS_NORM (no mean; no dbias unless asked)."""
        return self.norm_backward(dy, x, scale, None, inv_variance, mode="rms", dbias=dbias, **kw)

    def batch_norm_bwd(self, dy, x, scale, mean, inv_variance, **kw):
        """Batch norm backward: ``norm_backward`` with mode BATCH_NORM."""
        return self.norm_backward(dy, x, scale, mean, inv_variance, mode="batch", **kw)

    def instance_norm_bwd(self, dy, x, scale, mean, inv_variance, **kw):
        """Instance norm backward: ``norm_backward`` with mode INSTANCE_NORM."""
        return self.norm_backward(dy, x, scale, mean, inv_variance, mode="instance", **kw)

    def ada_layer_norm_bwd(self, dy, x, scale, mean, inv_variance, **kw):
        """Adaptive layer norm backward: ``norm_backward`` with mode ADA_LAYER_NORM."""
        return self.norm_backward(dy, x, scale, mean, inv_variance, mode="ada_layer_norm", **kw)

    # -- batch-norm pieces of fused convolutions ------------------------------------------------------
    def gen_stats(self, x, *, compute=None, stats_data_type=_F32, name="genstats"):
        """GEN_STATS: per-channel sum and sum of squares of X, ``{"sum", "sqsum"}`` [1, C, 1, 1] fp32 (cuDNN runs it
        after a convolution with a real output)."""
        x = self._need_tensor(x, "x")
        dims = shapes.per_channel_dims(x.shape)
        strides = shapes.strides_like(dims, x.strides)
        dt = as_data_type(stats_data_type, "stats_data_type")
        s = self.tensor(dims, strides, dt, name=f"{name}_sum")
        sq = self.tensor(dims, strides, dt, name=f"{name}_sqsum")
        self.add(OperationGenStats(mode=GenStatsMode.CUDNN_GENSTATS_SUM_SQSUM, math_prec=self._compute(compute),
                                   xdesc=x, sumdesc=s, sqsumdesc=sq))
        return {"sum": s, "sqsum": sq}

    def bn_finalize(self, sum_, sqsum, scale, bias, *, accum_count, epsilon=1e-5, momentum=0.1,
                    prev_running_mean=None, prev_running_var=None, inference=False, compute=None, name="bn_finalize"):
        """BN_FINALIZE_STATISTICS: equivalent scale/bias and saved mean / inverse std (and updated running
        statistics) from GEN_STATS' sums. ``accum_count`` (N*H*W) is a by-value int64 scalar; epsilon and
        momentum fp32 scalars (numbers or tensors)."""
        sum_, sqsum = self._need_tensor(sum_, "sum_"), self._need_tensor(sqsum, "sqsum")
        scale, bias = self._need_tensor(scale, "scale"), self._need_tensor(bias, "bias")
        rank = len(sum_.shape)

        def like(nm):
            return self.tensor(sum_.shape, sum_.strides, _F32, name=f"{name}_{nm}")

        out = {n: like(n) for n in ("eq_scale", "eq_bias", "saved_mean", "saved_inv_std")}
        if not isinstance(accum_count, TensorBase):
            accum_count = as_int(accum_count, "accum_count", 1)  # N*H*W: cuDNN divides by it
        out["accum_count"] = self._scalar_or_tensor(accum_count, rank, f"{name}_accum_count", _I64)
        out["epsilon"] = self._scalar_or_tensor(epsilon, rank, f"{name}_epsilon")
        out["momentum"] = self._scalar_or_tensor(momentum, rank, f"{name}_momentum")
        mode = BnFinalizeStatsMode.CUDNN_BN_FINALIZE_STATISTICS_INFERENCE if inference else \
            BnFinalizeStatsMode.CUDNN_BN_FINALIZE_STATISTICS_TRAINING
        op = OperationBnFinalizeStatistics(
            stats_mode=mode, math_prec=self._compute(compute), y_sum_desc=sum_, y_sq_sum_desc=sqsum,
            scale_desc=scale, bias_desc=bias, saved_mean_desc=out["saved_mean"],
            saved_inv_std_desc=out["saved_inv_std"], eq_scale_desc=out["eq_scale"], eq_bias_desc=out["eq_bias"],
            accum_count_desc=out["accum_count"], epsilon_desc=out["epsilon"], exp_averate_factor_desc=out["momentum"])
        if (prev_running_mean is None) != (prev_running_var is None):
            raise GraphError("prev_running_mean and prev_running_var: both or neither")
        if prev_running_mean is not None:
            op.prev_running_mean_desc = self._need_tensor(prev_running_mean, "prev_running_mean")
            op.prev_running_var_desc = self._need_tensor(prev_running_var, "prev_running_var")
            out["next_running_mean"] = op.updated_running_mean_desc = like("next_running_mean")
            out["next_running_var"] = op.updated_running_var_desc = like("next_running_var")
        self.add(op)
        return out

    def bn_bwd_weights(self, x, dy, mean, inv_std, scale, *, compute=None, name="dbn"):
        """BN_BWD_WEIGHTS: ``{"dscale", "dbias", "eq_dy_scale", "eq_x_scale", "eq_bias"}``, each [1, C, 1, 1] fp32
        (the equivalent scales fold dX = eq_dy_scale * dY + eq_x_scale * X + eq_bias into the next dgrad)."""
        x, dy = self._need_tensor(x, "x"), self._need_tensor(dy, "dy")
        pc = shapes.per_channel_dims(dy.shape)
        strides = shapes.strides_like(pc, dy.strides)
        out = {n: self.tensor(pc, strides, _F32, name=f"{name}_{n}")
               for n in ("dscale", "dbias", "eq_dy_scale", "eq_x_scale", "eq_bias")}
        self.add(OperationBnBwdWeights(
            math_prec=self._compute(compute), x_desc=x, dy_desc=dy, mean_desc=self._need_tensor(mean, "mean"),
            invstd_desc=self._need_tensor(inv_std, "inv_std"), bn_scale_desc=self._need_tensor(scale, "scale"),
            dbn_scale_desc=out["dscale"], dbn_bias_desc=out["dbias"], eq_dy_scale_desc=out["eq_dy_scale"],
            eq_x_scale_desc=out["eq_x_scale"], eq_bias=out["eq_bias"]))
        return out
