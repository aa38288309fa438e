"""Convolutions: forward, backward data, backward filter, in either convolution mode."""
from __future__ import annotations

from cudnn_backend._bindings.enums import ConvolutionMode
from cudnn_backend.errors import GraphError
from cudnn_backend.graph import shapes
from cudnn_backend.graph._util import as_choice
from cudnn_backend.typed import OperationConvolutionBackwardData, OperationConvolutionBackwardFilter

__all__ = ["ConvolutionOps", "conv_mode"]

_MODES = {"cross_correlation": ConvolutionMode.CUDNN_CROSS_CORRELATION, "xcorr": ConvolutionMode.CUDNN_CROSS_CORRELATION,
          "convolution": ConvolutionMode.CUDNN_CONVOLUTION, "conv": ConvolutionMode.CUDNN_CONVOLUTION}


def conv_mode(mode) -> ConvolutionMode:
    """'cross_correlation' (deep learning's convolution, the default) or 'convolution' (flipped filter)."""
    return as_choice(ConvolutionMode, mode, "mode", "CUDNN_", _MODES)


class ConvolutionOps:
    """``conv_bwd_data`` and ``conv_bwd_filter``. ``conv_fwd`` and ``convolution_descriptor`` (the ``Convolution``
    all three use) are compiled in ``graph._core`` (``GraphCore``), the builder's hot path."""

    def _backward_convolution(self, dy, x_dims, w_dims, padding, stride, dilation, post_padding, compute, mode):
        expected = shapes.conv_output_dims(x_dims, w_dims, padding, stride, dilation, post_padding)
        if list(expected) != list(dy.shape):
            raise GraphError(f"dy: {list(dy.shape)} is not the forward output {expected} of X {list(x_dims)} and "
                             f"W {list(w_dims)}")
        return self.convolution_descriptor(len(dy.shape) - 2, padding, stride, dilation, post_padding, compute, mode)

    def conv_bwd_data(self, dy, w, x_dims, *, padding=0, stride=1, dilation=1, post_padding=None,
                      mode="cross_correlation", compute=None, output=False, output_data_type=None, alpha=1.0,
                      beta=0.0, name=None):
        """dX of the forward convolution of X (``x_dims``) with W, from dY (the forward output's shape)."""
        dy, w = self._need_tensor(dy, "dy"), self._need_tensor(w, "w")
        x_dims = shapes.as_dims(x_dims, "x_dims")
        conv = self._backward_convolution(dy, x_dims, w.shape, padding, stride, dilation, post_padding, compute, mode)
        dx = self._output(output, x_dims, dy, output_data_type, name, what="output")
        self.add(OperationConvolutionBackwardData(dy=dy, w=w, dx=dx, conv_desc=conv, alpha=alpha, beta=beta))
        return dx

    def conv_bwd_filter(self, x, dy, w_dims, *, padding=0, stride=1, dilation=1, post_padding=None,
                        mode="cross_correlation", compute=None, output=False, output_data_type=None, alpha=1.0,
                        beta=0.0, name=None):
        """dW of the forward convolution of X with a filter of ``w_dims``, from dY."""
        x, dy = self._need_tensor(x, "x"), self._need_tensor(dy, "dy")
        w_dims = shapes.as_dims(w_dims, "w_dims")
        conv = self._backward_convolution(dy, x.shape, w_dims, padding, stride, dilation, post_padding, compute, mode)
        dw = self._output(output, w_dims, x, output_data_type, name, what="output")
        self.add(OperationConvolutionBackwardFilter(x=x, dy=dy, dw=dw, conv_desc=conv, alpha=alpha, beta=beta))
        return dw
