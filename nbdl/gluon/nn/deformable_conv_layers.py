"""Gluon 2.0's deformable convolution layers: DeformableConvolution (v1) and
ModulatedDeformableConvolution (v2), 2-D over NCHW data.

Each holds two convolutions of the same kernel, stride, padding, dilation and
groups: an ordinary one (``Convolution``, parameters ``offset_weight`` /
``offset_bias``, zero-initialised so training starts from a regular
convolution) that predicts the sampling offsets from the input, and the
deformable one (``_contrib_DeformableConvolution`` /
``_contrib_ModulatedDeformableConvolution``, parameters
``deformable_conv_weight`` / ``deformable_conv_bias``) that samples the input
there.  The modulated layer's offset convolution has ``3*DG*kh*kw`` outputs:
the first ``2*DG*kh*kw`` are the offsets, the rest become the mask as
``2 * sigmoid(.)``, as in Gluon.  An input-channel count of 0 defers the
weights' shapes to the first forward pass.
"""
from ...errors import NbdlError
from .._trace import call_op
from ..hybrid_block import HybridBlock
from ..parameter import Parameter
from .basic_layers import Activation
from .conv_layers import _tuple


class _DeformableConv(HybridBlock):
    """Shared by the two layers; ``_op`` is the deformable op, ``_outputs_per_tap``
    the offset convolution's channels per deformable group and kernel tap."""

    _op = "_contrib_DeformableConvolution"
    _outputs_per_tap = 2

    def __init__(self, channels, kernel_size, strides, padding, dilation, groups,
                 num_deformable_group, layout, use_bias, in_channels, activation,
                 weight_initializer, bias_initializer, offset_weight_initializer,
                 offset_bias_initializer, offset_use_bias, adj, **kwargs):
        super().__init__(**kwargs)
        where = type(self).__name__
        channels, in_channels = int(channels), int(in_channels)
        groups, dg = int(groups), int(num_deformable_group)
        if channels <= 0:
            raise NbdlError(f"{where}: channels must be positive, got {channels}")
        if layout != "NCHW":
            raise NbdlError(f"{where}: layout {layout!r} is not supported; deformable "
                            f"convolution exists for 'NCHW' only")
        if adj is not None:
            raise NbdlError(f"{where}: adj={adj!r} is not supported (neither the offset "
                            f"Convolution nor the deformable op has an adj attribute)")
        if dg <= 0:
            raise NbdlError(f"{where}: num_deformable_group must be positive, got {dg}")
        kernel = _tuple(kernel_size, 2, where, "kernel_size", 1)
        offset_channels = self._outputs_per_tap * dg * kernel[0] * kernel[1]
        if groups <= 0 or channels % groups or in_channels % groups or offset_channels % groups:
            raise NbdlError(f"{where}: groups={groups} must divide channels ({channels}), "
                            f"in_channels ({in_channels or 'inferred'}) and the offset "
                            f"convolution's {offset_channels} channels")
        if channels % dg or in_channels % dg:
            raise NbdlError(f"{where}: num_deformable_group={dg} must divide channels "
                            f"({channels}) and in_channels ({in_channels or 'inferred'})")
        self._channels, self._in_channels = channels, in_channels
        common = {"kernel": kernel,
                  "stride": _tuple(strides, 2, where, "strides", 1),
                  "dilate": _tuple(dilation, 2, where, "dilation", 1),
                  "pad": _tuple(padding, 2, where, "padding"),
                  "num_group": groups, "layout": layout}
        self._kwargs_offset = dict(common, num_filter=offset_channels,
                                   no_bias=not offset_use_bias)
        self._kwargs_deformable_conv = dict(common, num_filter=channels,
                                            num_deformable_group=dg, no_bias=not use_bias)
        self._offset_split = 2 * dg * kernel[0] * kernel[1]
        per_group = in_channels // groups
        # Gluon's attribute order, which is the order of collect_params()
        self._make_params(kernel, per_group, offset_channels, use_bias, offset_use_bias,
                          weight_initializer, bias_initializer, offset_weight_initializer,
                          offset_bias_initializer)
        self.act = Activation(activation) if activation is not None else None

    def _offset_params(self, kernel, per_group, offset_channels, offset_use_bias,
                       weight_init, bias_init):
        self.offset_weight = Parameter("offset_weight",
                                       shape=(offset_channels, per_group) + kernel,
                                       init=weight_init, allow_deferred_init=True)
        self.offset_bias = Parameter("offset_bias", shape=(offset_channels,), init=bias_init,
                                     allow_deferred_init=True) if offset_use_bias else None

    def _conv_params(self, kernel, per_group, use_bias, weight_init, bias_init):
        self.deformable_conv_weight = Parameter("deformable_conv_weight",
                                                shape=(self._channels, per_group) + kernel,
                                                init=weight_init, allow_deferred_init=True)
        self.deformable_conv_bias = Parameter("deformable_conv_bias", shape=(self._channels,),
                                              init=bias_init, allow_deferred_init=True) \
            if use_bias else None

    def _make_params(self, kernel, per_group, offset_channels, use_bias, offset_use_bias,
                     weight_init, bias_init, offset_weight_init, offset_bias_init):
        self._offset_params(kernel, per_group, offset_channels, offset_use_bias,
                            offset_weight_init, offset_bias_init)
        self._conv_params(kernel, per_group, use_bias, weight_init, bias_init)

    def _sampling_inputs(self, x):
        """[offset] (v1) or [offset, mask] (v2) for the deformable op."""
        inputs = [x, self.offset_weight.data()]
        if self.offset_bias is not None:
            inputs.append(self.offset_bias.data())
        return [call_op("Convolution", inputs, **self._kwargs_offset)]

    def forward(self, x):
        inputs = [x] + self._sampling_inputs(x) + [self.deformable_conv_weight.data()]
        if self.deformable_conv_bias is not None:
            inputs.append(self.deformable_conv_bias.data())
        out = call_op(self._op, inputs, **self._kwargs_deformable_conv)
        return self.act(out) if self.act is not None else out

    def __repr__(self):
        kw = self._kwargs_deformable_conv
        shape = self.deformable_conv_weight.shape
        in_ch = shape[1] * kw["num_group"] if shape[1] else None
        s = (f"{type(self).__name__}({in_ch} -> {shape[0]}, kernel_size={kw['kernel']}, "
             f"stride={kw['stride']}")
        if kw["pad"] != (0, 0):
            s += f", padding={kw['pad']}"
        if kw["dilate"] != (1, 1):
            s += f", dilation={kw['dilate']}"
        if kw["num_group"] != 1:
            s += f", groups={kw['num_group']}"
        if kw["num_deformable_group"] != 1:
            s += f", num_deformable_group={kw['num_deformable_group']}"
        if self.deformable_conv_bias is None:
            s += ", bias=False"
        if self.act is not None:
            s += f", {self.act!r}"
        return s + ")"


class DeformableConvolution(_DeformableConv):
    """2-D deformable convolution v1 (Dai et al., 2017): a convolution whose
    taps sample the input at offsets predicted by a second convolution
    (``offset_weight``, ``offset_bias``; zeros by default).  Parameters in
    Gluon's order: ``offset_weight``, ``offset_bias``,
    ``deformable_conv_weight``, ``deformable_conv_bias``.  ``op_name`` is
    accepted for Gluon's signature and, as there, not used."""

    def __init__(self, channels, kernel_size=(1, 1), strides=(1, 1), padding=(0, 0),
                 dilation=(1, 1), groups=1, num_deformable_group=1, layout="NCHW",
                 use_bias=True, in_channels=0, activation=None, weight_initializer=None,
                 bias_initializer="zeros", offset_weight_initializer="zeros",
                 offset_bias_initializer="zeros", offset_use_bias=True,
                 op_name="DeformableConvolution", adj=None, **kwargs):
        super().__init__(channels, kernel_size, strides, padding, dilation, groups,
                         num_deformable_group, layout, use_bias, in_channels, activation,
                         weight_initializer, bias_initializer, offset_weight_initializer,
                         offset_bias_initializer, offset_use_bias, adj, **kwargs)


class ModulatedDeformableConvolution(_DeformableConv):
    """2-D modulated deformable convolution v2 (Zhu et al., 2018): as
    DeformableConvolution, and each sample is scaled by a mask in (0, 2) that
    the offset convolution predicts too.  Parameters in Gluon's order:
    ``deformable_conv_weight``, ``deformable_conv_bias``, ``offset_weight``,
    ``offset_bias``.  ``op_name`` is accepted for Gluon's signature and, as
    there, not used."""

    _op = "_contrib_ModulatedDeformableConvolution"
    _outputs_per_tap = 3

    def __init__(self, channels, kernel_size=(1, 1), strides=(1, 1), padding=(0, 0),
                 dilation=(1, 1), groups=1, num_deformable_group=1, layout="NCHW",
                 use_bias=True, in_channels=0, activation=None, weight_initializer=None,
                 bias_initializer="zeros", offset_weight_initializer="zeros",
                 offset_bias_initializer="zeros", offset_use_bias=True,
                 op_name="ModulatedDeformableConvolution", adj=None, **kwargs):
        super().__init__(channels, kernel_size, strides, padding, dilation, groups,
                         num_deformable_group, layout, use_bias, in_channels, activation,
                         weight_initializer, bias_initializer, offset_weight_initializer,
                         offset_bias_initializer, offset_use_bias, adj, **kwargs)

    def _make_params(self, kernel, per_group, offset_channels, use_bias, offset_use_bias,
                     weight_init, bias_init, offset_weight_init, offset_bias_init):
        self._conv_params(kernel, per_group, use_bias, weight_init, bias_init)
        self._offset_params(kernel, per_group, offset_channels, offset_use_bias,
                            offset_weight_init, offset_bias_init)

    def _sampling_inputs(self, x):
        (both,) = super()._sampling_inputs(x)
        offset = call_op("slice_axis", [both], axis=1, begin=0, end=self._offset_split)
        mask = call_op("slice_axis", [both], axis=1, begin=self._offset_split, end=None)
        mask = call_op("_mul_scalar", [call_op("sigmoid", [mask])], scalar=2.0)
        return [offset, mask]


__all__ = ["DeformableConvolution", "ModulatedDeformableConvolution"]
