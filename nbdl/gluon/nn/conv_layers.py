"""Convolution, pooling, padding and pixel-shuffle layers (Gluon 2.0):
Conv1D/2D/3D, Conv1DTranspose/2DTranspose/3DTranspose, MaxPool/AvgPool
1D/2D/3D, GlobalMaxPool/GlobalAvgPool 1D/2D/3D, ReflectionPad2D and
PixelShuffle1D/2D/3D.

Each layer is one op of the table (``Convolution``, ``Deconvolution``,
``Pooling``, ``Pad``) called with MXNet's attribute names, so a hybridized
layer exports a graph MXNet loads; PixelShuffle is Reshape/transpose.  An
input-channel count of 0 defers the weight's shape to the first forward
pass, where the op's shape rule infers it from the data."""
import numpy as np

from ...errors import NbdlError
from .._trace import call_op
from ..hybrid_block import HybridBlock
from ..parameter import Parameter
from .basic_layers import Activation

_LAYOUTS = {1: ("NCW", "NWC"), 2: ("NCHW", "NHWC"), 3: ("NCDHW", "NDHWC")}


def _tuple(value, n, where, what, minimum=0):
    """``value`` (an int or a sequence of n ints) as an n-tuple of ints."""
    if isinstance(value, (int, np.integer)):
        out = (int(value),) * n
    else:
        try:
            out = tuple(int(v) for v in value)
        except (TypeError, ValueError):
            raise NbdlError(f"{where}: {what} must be an int or a tuple of {n} ints, got "
                            f"{value!r}") from None
        if len(out) != n:
            raise NbdlError(f"{where}: {what} must have {n} elements, got {value!r}")
    if any(v < minimum for v in out):
        raise NbdlError(f"{where}: every element of {what} must be at least {minimum}, got "
                        f"{out}")
    return out


def _check_layout(layout, n, where):
    if layout not in _LAYOUTS[n]:
        raise NbdlError(f"{where}: layout {layout!r} is not supported; use one of "
                        f"{', '.join(_LAYOUTS[n])}")
    return layout


# -- convolution ------------------------------------------------------------------

class _Conv(HybridBlock):
    """Shared by the convolution and transposed-convolution layers."""

    _op = "Convolution"
    _ndim = 2

    def _alias(self):
        return "conv"

    def __init__(self, channels, kernel_size, strides, padding, dilation, groups, layout,
                 in_channels=0, activation=None, use_bias=True, weight_initializer=None,
                 bias_initializer="zeros", output_padding=None, dtype="float32", **kwargs):
        super().__init__(**kwargs)
        where, n = type(self).__name__, self._ndim
        channels, in_channels, groups = int(channels), int(in_channels), int(groups)
        if channels <= 0:
            raise NbdlError(f"{where}: channels must be positive, got {channels}")
        if groups <= 0 or channels % groups or in_channels % groups:
            raise NbdlError(f"{where}: groups={groups} must divide both channels ({channels}) "
                            f"and in_channels ({in_channels or 'inferred'})")
        kernel = _tuple(kernel_size, n, where, "kernel_size", 1)
        self._channels, self._in_channels = channels, in_channels
        self._kwargs = {
            "kernel": kernel,
            "stride": _tuple(strides, n, where, "strides", 1),
            "dilate": _tuple(dilation, n, where, "dilation", 1),
            "pad": _tuple(padding, n, where, "padding"),
            "num_filter": channels,
            "num_group": groups,
            "no_bias": not use_bias,
            "layout": _check_layout(layout, n, where),
        }
        if output_padding is not None:
            self.outpad = _tuple(output_padding, n, where, "output_padding")
            self._kwargs["adj"] = self.outpad
        channel_last = layout[1] != "C"
        self.weight = Parameter("weight", shape=self._weight_shape(kernel, channel_last),
                                init=weight_initializer, dtype=dtype, allow_deferred_init=True)
        if use_bias:
            self.bias = Parameter("bias", shape=(channels,), init=bias_initializer, dtype=dtype,
                                  allow_deferred_init=True)
        else:
            self.bias = None
        if activation is not None:
            self.act = Activation(activation)
        else:
            self.act = None

    def _weight_shape(self, kernel, channel_last):
        """MXNet's Convolution weight: (num_filter, C / groups, *kernel), or
        (num_filter, *kernel, C / groups) for a channel-last layout."""
        per_group = self._in_channels // self._kwargs["num_group"]
        if channel_last:
            return (self._channels,) + kernel + (per_group,)
        return (self._channels, per_group) + kernel

    def forward(self, x):
        inputs = [x, self.weight.data()]
        if self.bias is not None:
            inputs.append(self.bias.data())
        out = call_op(self._op, inputs, name=self._fwd_name(), **self._kwargs)
        return self.act(out) if self.act is not None else out

    def _mapping(self):
        shape = self.weight.shape
        in_ch = shape[1] * self._kwargs["num_group"] if shape[1] else None
        return f"{in_ch} -> {shape[0]}"

    def __repr__(self):
        kw, n = self._kwargs, self._ndim
        s = f"{type(self).__name__}({self._mapping()}, kernel_size={kw['kernel']}, " \
            f"stride={kw['stride']}"
        if kw["pad"] != (0,) * n:
            s += f", padding={kw['pad']}"
        if kw["dilate"] != (1,) * n:
            s += f", dilation={kw['dilate']}"
        if hasattr(self, "outpad") and self.outpad != (0,) * n:
            s += f", output_padding={self.outpad}"
        if kw["num_group"] != 1:
            s += f", groups={kw['num_group']}"
        if self.bias is None:
            s += ", bias=False"
        if self.act is not None:
            s += f", {self.act!r}"
        return s + ")"


class _ConvTranspose(_Conv):
    _op = "Deconvolution"

    def _weight_shape(self, kernel, channel_last):
        """MXNet's Deconvolution weight: (C, num_filter / groups, *kernel)."""
        per_group = self._channels // self._kwargs["num_group"]
        if channel_last:
            return (self._in_channels,) + kernel + (per_group,)
        return (self._in_channels, per_group) + kernel

    def _mapping(self):
        shape = self.weight.shape
        return f"{shape[0] if shape[0] else None} -> {self._channels}"


class Conv1D(_Conv):
    """1-D convolution over (N, C, W) (layout 'NCW') or (N, W, C) ('NWC')."""
    _ndim = 1

    def __init__(self, channels, kernel_size, strides=1, padding=0, dilation=1, groups=1,
                 layout="NCW", activation=None, use_bias=True, weight_initializer=None,
                 bias_initializer="zeros", in_channels=0, dtype="float32", **kwargs):
        super().__init__(channels, kernel_size, strides, padding, dilation, groups, layout,
                         in_channels, activation, use_bias, weight_initializer,
                         bias_initializer, dtype=dtype, **kwargs)


class Conv2D(_Conv):
    """2-D convolution over (N, C, H, W) (layout 'NCHW') or 'NHWC'."""
    _ndim = 2

    def __init__(self, channels, kernel_size, strides=(1, 1), padding=(0, 0), dilation=(1, 1),
                 groups=1, layout="NCHW", activation=None, use_bias=True,
                 weight_initializer=None, bias_initializer="zeros", in_channels=0,
                 dtype="float32", **kwargs):
        super().__init__(channels, kernel_size, strides, padding, dilation, groups, layout,
                         in_channels, activation, use_bias, weight_initializer,
                         bias_initializer, dtype=dtype, **kwargs)


class Conv3D(_Conv):
    """3-D convolution over (N, C, D, H, W) (layout 'NCDHW') or 'NDHWC'."""
    _ndim = 3

    def __init__(self, channels, kernel_size, strides=(1, 1, 1), padding=(0, 0, 0),
                 dilation=(1, 1, 1), groups=1, layout="NCDHW", activation=None, use_bias=True,
                 weight_initializer=None, bias_initializer="zeros", in_channels=0,
                 dtype="float32", **kwargs):
        super().__init__(channels, kernel_size, strides, padding, dilation, groups, layout,
                         in_channels, activation, use_bias, weight_initializer,
                         bias_initializer, dtype=dtype, **kwargs)


class Conv1DTranspose(_ConvTranspose):
    """1-D transposed convolution (op ``Deconvolution``)."""
    _ndim = 1

    def __init__(self, channels, kernel_size, strides=1, padding=0, output_padding=0,
                 dilation=1, groups=1, layout="NCW", activation=None, use_bias=True,
                 weight_initializer=None, bias_initializer="zeros", in_channels=0,
                 dtype="float32", **kwargs):
        super().__init__(channels, kernel_size, strides, padding, dilation, groups, layout,
                         in_channels, activation, use_bias, weight_initializer,
                         bias_initializer, output_padding=output_padding, dtype=dtype, **kwargs)


class Conv2DTranspose(_ConvTranspose):
    """2-D transposed convolution (op ``Deconvolution``)."""
    _ndim = 2

    def __init__(self, channels, kernel_size, strides=(1, 1), padding=(0, 0),
                 output_padding=(0, 0), dilation=(1, 1), groups=1, layout="NCHW",
                 activation=None, use_bias=True, weight_initializer=None,
                 bias_initializer="zeros", in_channels=0, dtype="float32", **kwargs):
        super().__init__(channels, kernel_size, strides, padding, dilation, groups, layout,
                         in_channels, activation, use_bias, weight_initializer,
                         bias_initializer, output_padding=output_padding, dtype=dtype, **kwargs)


class Conv3DTranspose(_ConvTranspose):
    """3-D transposed convolution (op ``Deconvolution``)."""
    _ndim = 3

    def __init__(self, channels, kernel_size, strides=(1, 1, 1), padding=(0, 0, 0),
                 output_padding=(0, 0, 0), dilation=(1, 1, 1), groups=1, layout="NCDHW",
                 activation=None, use_bias=True, weight_initializer=None,
                 bias_initializer="zeros", in_channels=0, dtype="float32", **kwargs):
        super().__init__(channels, kernel_size, strides, padding, dilation, groups, layout,
                         in_channels, activation, use_bias, weight_initializer,
                         bias_initializer, output_padding=output_padding, dtype=dtype, **kwargs)


# -- pooling ----------------------------------------------------------------------

class _Pooling(HybridBlock):
    """Shared by the pooling layers: one ``Pooling`` op."""

    _ndim = 2

    def _alias(self):
        return "pool"

    def __init__(self, pool_size, strides, padding, ceil_mode, global_pool, pool_type, layout,
                 count_include_pad=None, **kwargs):
        super().__init__(**kwargs)
        where, n = type(self).__name__, self._ndim
        kernel = _tuple(pool_size, n, where, "pool_size", 1)
        strides = kernel if strides is None else _tuple(strides, n, where, "strides", 1)
        self._kwargs = {
            "kernel": kernel,
            "stride": strides,
            "pad": _tuple(padding, n, where, "padding"),
            "global_pool": bool(global_pool),
            "pool_type": pool_type,
            "layout": _check_layout(layout, n, where),
            "pooling_convention": "full" if ceil_mode else "valid",
        }
        if count_include_pad is not None:
            self._kwargs["count_include_pad"] = bool(count_include_pad)

    def forward(self, x):
        return call_op("Pooling", [x], name=self._fwd_name(), **self._kwargs)

    def __repr__(self):
        kw = self._kwargs
        return (f"{type(self).__name__}(size={kw['kernel']}, stride={kw['stride']}, "
                f"padding={kw['pad']}, ceil_mode={kw['pooling_convention'] == 'full'}, "
                f"global_pool={kw['global_pool']}, pool_type={kw['pool_type']}, "
                f"layout={kw['layout']})")


class MaxPool1D(_Pooling):
    """Max pooling over (N, C, W); ``strides`` default to ``pool_size``."""
    _ndim = 1

    def __init__(self, pool_size=2, strides=None, padding=0, layout="NCW", ceil_mode=False, **kwargs):
        super().__init__(pool_size, strides, padding, ceil_mode, False, "max", layout, **kwargs)


class MaxPool2D(_Pooling):
    """Max pooling over (N, C, H, W); ``strides`` default to ``pool_size``."""
    _ndim = 2

    def __init__(self, pool_size=(2, 2), strides=None, padding=0, layout="NCHW",
                 ceil_mode=False, **kwargs):
        super().__init__(pool_size, strides, padding, ceil_mode, False, "max", layout, **kwargs)


class MaxPool3D(_Pooling):
    """Max pooling over (N, C, D, H, W); ``strides`` default to ``pool_size``."""
    _ndim = 3

    def __init__(self, pool_size=(2, 2, 2), strides=None, padding=0, layout="NCDHW",
                 ceil_mode=False, **kwargs):
        super().__init__(pool_size, strides, padding, ceil_mode, False, "max", layout, **kwargs)


class AvgPool1D(_Pooling):
    """Average pooling over (N, C, W); ``count_include_pad`` counts padded
    positions in the divisor."""
    _ndim = 1

    def __init__(self, pool_size=2, strides=None, padding=0, layout="NCW", ceil_mode=False,
                 count_include_pad=True, **kwargs):
        super().__init__(pool_size, strides, padding, ceil_mode, False, "avg", layout,
                         count_include_pad, **kwargs)


class AvgPool2D(_Pooling):
    """Average pooling over (N, C, H, W)."""
    _ndim = 2

    def __init__(self, pool_size=(2, 2), strides=None, padding=0, ceil_mode=False,
                 layout="NCHW", count_include_pad=True, **kwargs):
        super().__init__(pool_size, strides, padding, ceil_mode, False, "avg", layout,
                         count_include_pad, **kwargs)


class AvgPool3D(_Pooling):
    """Average pooling over (N, C, D, H, W)."""
    _ndim = 3

    def __init__(self, pool_size=(2, 2, 2), strides=None, padding=0, ceil_mode=False,
                 layout="NCDHW", count_include_pad=True, **kwargs):
        super().__init__(pool_size, strides, padding, ceil_mode, False, "avg", layout,
                         count_include_pad, **kwargs)


class _GlobalPooling(_Pooling):
    _pool_type = "max"

    def __init__(self, layout=None, **kwargs):
        layout = layout or _LAYOUTS[self._ndim][0]
        super().__init__((1,) * self._ndim, None, 0, True, True, self._pool_type, layout, **kwargs)


class GlobalMaxPool1D(_GlobalPooling):
    """Max over the whole width: (N, C, W) -> (N, C, 1)."""
    _ndim, _pool_type = 1, "max"


class GlobalMaxPool2D(_GlobalPooling):
    """Max over the whole image: (N, C, H, W) -> (N, C, 1, 1)."""
    _ndim, _pool_type = 2, "max"


class GlobalMaxPool3D(_GlobalPooling):
    """Max over the whole volume: (N, C, D, H, W) -> (N, C, 1, 1, 1)."""
    _ndim, _pool_type = 3, "max"


class GlobalAvgPool1D(_GlobalPooling):
    """Mean over the whole width: (N, C, W) -> (N, C, 1)."""
    _ndim, _pool_type = 1, "avg"


class GlobalAvgPool2D(_GlobalPooling):
    """Mean over the whole image: (N, C, H, W) -> (N, C, 1, 1)."""
    _ndim, _pool_type = 2, "avg"


class GlobalAvgPool3D(_GlobalPooling):
    """Mean over the whole volume: (N, C, D, H, W) -> (N, C, 1, 1, 1)."""
    _ndim, _pool_type = 3, "avg"


# -- padding and pixel shuffle ------------------------------------------------------

class ReflectionPad2D(HybridBlock):
    """Pads (N, C, H, W) by reflecting at the borders (op ``Pad``, mode
    'reflect').  ``padding``: an int for all four sides, or MXNet's 8-tuple
    ``pad_width`` (two zeros each for N and C, then before/after H and W)."""

    def __init__(self, padding=0, **kwargs):
        super().__init__(**kwargs)
        if isinstance(padding, (int, np.integer)):
            padding = (0, 0, 0, 0) + (int(padding),) * 4
        padding = _tuple(padding, 8, "ReflectionPad2D", "padding")
        if padding[:4] != (0, 0, 0, 0):
            raise NbdlError(f"ReflectionPad2D: only H and W can be padded; padding {padding} "
                            f"pads N or C")
        self._padding = padding

    def forward(self, x):
        return call_op("Pad", [x], mode="reflect", pad_width=self._padding)

    def __repr__(self):
        return f"ReflectionPad2D(padding={self._padding})"


class _PixelShuffle(HybridBlock):
    """Moves channel blocks into space: (N, C*prod(f), *S) -> (N, C, *S*f),
    output pixel (s*f + i) of channel c taken from input channel
    c*prod(f) + i (row-major over the factors), as Gluon's PixelShuffle does."""

    _ndim = 2

    def __init__(self, factor, **kwargs):
        super().__init__(**kwargs)
        self._factors = _tuple(factor, self._ndim, type(self).__name__, "factor", 1)

    def forward(self, x):
        n, f = self._ndim, self._factors
        size = int(np.prod(f))
        # (N, C*F, *S) -> (N, C, F, *S) -> (N, C, f1, ..., fn, *S)
        x = call_op("Reshape", [x], shape=(0, -4, -1, size, -2))
        rest = size
        for i in range(n - 1):
            rest //= f[i]
            x = call_op("Reshape", [x], shape=(0,) * (2 + i) + (-4, f[i], rest, -2))
        # interleave: (N, C, S1, f1, S2, f2, ...)
        axes = (0, 1) + tuple(a for i in range(n) for a in (2 + n + i, 2 + i))
        x = call_op("transpose", [x], axes=axes)
        return call_op("Reshape", [x], shape=(0, 0) + (-3,) * n)

    def __repr__(self):
        return f"{type(self).__name__}({self._factors[0] if self._ndim == 1 else self._factors})"


class PixelShuffle1D(_PixelShuffle):
    """(N, C*f, W) -> (N, C, W*f)."""
    _ndim = 1


class PixelShuffle2D(_PixelShuffle):
    """(N, C*f1*f2, H, W) -> (N, C, H*f1, W*f2)."""
    _ndim = 2


class PixelShuffle3D(_PixelShuffle):
    """(N, C*f1*f2*f3, D, H, W) -> (N, C, D*f1, H*f2, W*f3)."""
    _ndim = 3
