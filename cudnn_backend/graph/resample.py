"""Resampling: pooling (max, average) and up/down-sampling, forward and backward."""
from __future__ import annotations

import fractions

from cudnn_backend._bindings.enums import DataType, NanPropagation, PaddingMode, ResampleMode
from cudnn_backend.core._descriptor import as_int
from cudnn_backend.errors import GraphError
from cudnn_backend.graph import shapes
from cudnn_backend.graph._util import as_choice, as_data_type
from cudnn_backend.typed import OperationResampleBwd, OperationResampleFwd, Resample, TensorBase

__all__ = ["ResampleOps", "resample_mode"]

_MODES = {"max": ResampleMode.CUDNN_RESAMPLE_MAXPOOL, "maxpool": ResampleMode.CUDNN_RESAMPLE_MAXPOOL,
          "avg": ResampleMode.CUDNN_RESAMPLE_AVGPOOL, "avgpool": ResampleMode.CUDNN_RESAMPLE_AVGPOOL,
          "nearest": ResampleMode.CUDNN_RESAMPLE_NEAREST, "bilinear": ResampleMode.CUDNN_RESAMPLE_BILINEAR}


def resample_mode(mode) -> ResampleMode:
    return as_choice(ResampleMode, mode, "mode", "CUDNN_RESAMPLE_", _MODES)


def _sizes(v, n, what, minimum):
    """One value per spatial dim: a list of ints, fractions.Fraction or (numerator, denominator) pairs, or one
    int / Fraction for every dim."""
    items = list(v) if isinstance(v, (list, tuple)) else [v] * n
    if len(items) != n:
        raise ValueError(f"{what}: expected {n} values (one per spatial dim), got {len(items)}")
    out = []
    for i, x in enumerate(items):
        if isinstance(x, fractions.Fraction):
            x = (x.numerator, x.denominator)
        if isinstance(x, tuple):
            if len(x) != 2:
                raise ValueError(f"{what}[{i}]: a fraction is (numerator, denominator)")
            num, den = as_int(x[0], f"{what}[{i}] numerator"), as_int(x[1], f"{what}[{i}] denominator", 1)
            if num / den < minimum:
                raise ValueError(f"{what}[{i}] is {num}/{den}; it must be >= {minimum}")
            out.append((num, den))
        else:
            out.append(as_int(x, f"{what}[{i}]", minimum))
    return out


class ResampleOps:
    """``resample`` (pooling, alias ``pool``) and ``resample_bwd``."""

    def resample_descriptor(self, nsp, *, mode="maxpool", window=2, stride=2, pre_padding=0, post_padding=None,
                            padding_mode=None, compute=None):
        """A finalized ``Resample``: window, stride, paddings are ints, Fractions or (num, den), one or per dim."""
        mode = resample_mode(mode)
        if padding_mode is None:
            padding_mode = PaddingMode.CUDNN_NEG_INF_PAD if mode == ResampleMode.CUDNN_RESAMPLE_MAXPOOL else \
                PaddingMode.CUDNN_ZERO_PAD
        pre = _sizes(pre_padding, nsp, "pre_padding", 0)
        post = pre if post_padding is None else _sizes(post_padding, nsp, "post_padding", 0)
        w, s = _sizes(window, nsp, "window", 1), _sizes(stride, nsp, "stride", 1)
        desc = Resample(mode=mode, comp_type=self._compute(compute), nan_propagation=NanPropagation.CUDNN_PROPAGATE_NAN,
                        padding_mode=as_choice(PaddingMode, padding_mode, "padding_mode", "CUDNN_"), spatial_dims=nsp,
                        window_dims=w, strides=s, pre_paddings=pre, post_paddings=post).finalize()
        return desc, (w, s, pre, post)

    def resample(self, x, *, mode="maxpool", window=2, stride=2, pre_padding=0, post_padding=None, padding_mode=None,
                 index=False, index_data_type=DataType.CUDNN_DATA_INT8, compute=None, output=True,
                 output_data_type=None, name="resample"):
        """RESAMPLE_FWD (pooling): ``{"y", "index"}``; ``index=True`` (max pooling, training) also writes the
        index tensor (INT8 by default)."""
        x = self._need_tensor(x, "x")
        nsp = len(x.shape) - 2
        if nsp < 1:
            raise GraphError(f"x: resampling needs [N, C, spatial...], not {list(x.shape)}")
        desc, (w, s, pre, post) = self.resample_descriptor(nsp, mode=mode, window=window, stride=stride,
                                                           pre_padding=pre_padding, post_padding=post_padding,
                                                           padding_mode=padding_mode, compute=compute)
        dims = shapes.resample_output_dims(x.shape, w, s, pre, post)
        y = self._output(output, dims, x, output_data_type or x.data_type, f"{name}_y")
        op = OperationResampleFwd(xdesc=x, ydesc=y, desc=desc, alpha=1.0, beta=0.0)
        idx = None
        if index:
            if resample_mode(mode) != ResampleMode.CUDNN_RESAMPLE_MAXPOOL:
                raise GraphError("index: an index tensor is written by max pooling only")
            idx = op.idxdesc = self.tensor(dims, shapes.strides_like(dims, x.strides),
                                           as_data_type(index_data_type, "index_data_type"), name=f"{name}_index")
        self.add(op)
        return {"y": y, "index": idx}

    pool = resample

    def resample_bwd(self, dy, x_dims, *, mode="maxpool", window=2, stride=2, pre_padding=0, post_padding=None,
                     padding_mode=None, index=None, x=None, y=None, compute=None, output=True, output_data_type=None,
                     name="resample_bwd"):
        """RESAMPLE_BWD: dX (the forward input's ``x_dims``) from dY; max pooling needs the forward ``index``."""
        dy = self._need_tensor(dy, "dy")
        x_dims = shapes.as_dims(x_dims, "x_dims")
        nsp = len(x_dims) - 2
        desc, (w, s, pre, post) = self.resample_descriptor(nsp, mode=mode, window=window, stride=stride,
                                                           pre_padding=pre_padding, post_padding=post_padding,
                                                           padding_mode=padding_mode, compute=compute)
        expected = shapes.resample_output_dims(x_dims, w, s, pre, post)
        if list(dy.shape) != expected:
            raise GraphError(f"dy: {list(dy.shape)} is not the forward output {expected} of X {x_dims}")
        if resample_mode(mode) == ResampleMode.CUDNN_RESAMPLE_MAXPOOL and not isinstance(index, TensorBase):
            # cuDNN 9.19 crashes (SIGSEGV in heuristics) on a max-pool backward without the index
            raise GraphError("index: max pooling backward needs the forward index tensor (resample(..., index=True))")
        dx = self._output(output, x_dims, dy, output_data_type or dy.data_type, f"{name}_dx")
        op = OperationResampleBwd(dydesc=dy, dxdesc=dx, desc=desc, alpha=1.0, beta=0.0)
        if index is not None:
            op.idxdesc = self._need_tensor(index, "index")
        if x is not None:
            op.xdesc = self._need_tensor(x, "x")
        if y is not None:
            op.ydesc = self._need_tensor(y, "y")
        self.add(op)
        return dx
