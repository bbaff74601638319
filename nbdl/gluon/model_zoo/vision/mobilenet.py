"""MobileNet (Howard et al., 2017) and MobileNetV2 (Sandler et al., 2018)
with Gluon's model-zoo layout: ``features`` (HybridSequential) and
``output`` (Dense for V1; a 1x1 convolution and Flatten for V2)."""
from ... import nn
from ...hybrid_block import HybridBlock
from ....np import clip
from ..model_store import DEFAULT_ROOT, load_pretrained

__all__ = ["MobileNet", "MobileNetV2", "RELU6", "LinearBottleneck", "get_mobilenet",
           "get_mobilenet_v2", "mobilenet1_0", "mobilenet0_75", "mobilenet0_5",
           "mobilenet0_25", "mobilenet_v2_1_0", "mobilenet_v2_0_75", "mobilenet_v2_0_5",
           "mobilenet_v2_0_25"]


class RELU6(HybridBlock):
    """min(max(x, 0), 6)."""

    def forward(self, x):
        return clip(x, 0, 6)

    def __repr__(self):
        return "RELU6"


def _add_conv(out, channels=1, kernel=1, stride=1, pad=0, num_group=1, active=True,
              relu6=False):
    """Convolution (no bias), BatchNorm and, when ``active``, ReLU or ReLU6."""
    out.add(nn.Conv2D(channels, kernel, stride, pad, groups=num_group, use_bias=False))
    out.add(nn.BatchNorm(scale=True))
    if active:
        out.add(RELU6() if relu6 else nn.Activation("relu"))


def _add_conv_dw(out, dw_channels, channels, stride, relu6=False):
    """A depthwise 3x3 then a pointwise 1x1 convolution."""
    _add_conv(out, channels=dw_channels, kernel=3, stride=stride, pad=1,
              num_group=dw_channels, relu6=relu6)
    _add_conv(out, channels=channels, relu6=relu6)


class LinearBottleneck(HybridBlock):
    """MobileNetV2's inverted residual: 1x1 expansion by ``t``, depthwise
    3x3 (strided), linear 1x1 projection; the input is added back when the
    stride is 1 and the channel counts agree."""

    def __init__(self, in_channels, channels, t, stride, **kwargs):
        super().__init__()
        self.use_shortcut = stride == 1 and in_channels == channels
        self.out = nn.HybridSequential()
        _add_conv(self.out, in_channels * t, relu6=True)
        _add_conv(self.out, in_channels * t, kernel=3, stride=stride, pad=1,
                  num_group=in_channels * t, relu6=True)
        _add_conv(self.out, channels, active=False, relu6=True)

    def forward(self, x):
        out = self.out(x)
        return out + x if self.use_shortcut else out


class MobileNet(HybridBlock):
    """MobileNet V1 with width ``multiplier`` (1.0, 0.75, 0.5, 0.25)."""

    def __init__(self, multiplier=1.0, classes=1000, **kwargs):
        super().__init__()
        self.features = nn.HybridSequential()
        _add_conv(self.features, channels=int(32 * multiplier), kernel=3, pad=1, stride=2)
        dw_channels = [int(c * multiplier)
                       for c in [32, 64] + [128] * 2 + [256] * 2 + [512] * 6 + [1024]]
        channels = [int(c * multiplier)
                    for c in [64] + [128] * 2 + [256] * 2 + [512] * 6 + [1024] * 2]
        strides = [1, 2] * 3 + [1] * 5 + [2, 1]
        for dwc, c, s in zip(dw_channels, channels, strides):
            _add_conv_dw(self.features, dw_channels=dwc, channels=c, stride=s)
        self.features.add(nn.GlobalAvgPool2D(), nn.Flatten())
        self.output = nn.Dense(classes)

    def forward(self, x):
        return self.output(self.features(x))


class MobileNetV2(HybridBlock):
    """MobileNet V2 with width ``multiplier`` (1.0, 0.75, 0.5, 0.25)."""

    def __init__(self, multiplier=1.0, classes=1000, **kwargs):
        super().__init__()
        self.features = nn.HybridSequential()
        _add_conv(self.features, int(32 * multiplier), kernel=3, stride=2, pad=1, relu6=True)
        in_channels_group = [int(c * multiplier) for c in
                             [32] + [16] + [24] * 2 + [32] * 3 + [64] * 4 + [96] * 3 + [160] * 3]
        channels_group = [int(c * multiplier) for c in
                          [16] + [24] * 2 + [32] * 3 + [64] * 4 + [96] * 3 + [160] * 3 + [320]]
        ts = [1] + [6] * 16
        strides = [1, 2] * 2 + [1, 1, 2] + [1] * 6 + [2] + [1] * 3
        for in_c, c, t, s in zip(in_channels_group, channels_group, ts, strides):
            self.features.add(LinearBottleneck(in_channels=in_c, channels=c, t=t, stride=s))
        last_channels = int(1280 * multiplier) if multiplier > 1.0 else 1280
        _add_conv(self.features, last_channels, relu6=True)
        self.features.add(nn.GlobalAvgPool2D())
        self.output = nn.HybridSequential()
        self.output.add(nn.Conv2D(classes, 1, use_bias=False), nn.Flatten())

    def forward(self, x):
        return self.output(self.features(x))


def _multiplier_name(multiplier):
    """1.0 -> '1.0', 0.5 -> '0.5', 0.75 -> '0.75' (Gluon's model names)."""
    return str(float(multiplier))


def get_mobilenet(multiplier, pretrained=False, device=None, root=DEFAULT_ROOT, ctx=None,
                  **kwargs):
    """MobileNet V1; ``pretrained`` loads ``<root>/mobilenet<multiplier>.params``."""
    net = MobileNet(multiplier, **kwargs)
    if pretrained:
        load_pretrained(net, f"mobilenet{_multiplier_name(multiplier)}", root, device or ctx)
    return net


def get_mobilenet_v2(multiplier, pretrained=False, device=None, root=DEFAULT_ROOT, ctx=None,
                     **kwargs):
    """MobileNet V2; ``pretrained`` loads ``<root>/mobilenetv2_<multiplier>.params``."""
    net = MobileNetV2(multiplier, **kwargs)
    if pretrained:
        load_pretrained(net, f"mobilenetv2_{_multiplier_name(multiplier)}", root, device or ctx)
    return net


def _constructor(getter, multiplier, fname):
    def make(**kwargs):
        return getter(multiplier, **kwargs)
    make.__name__ = fname
    make.__doc__ = f"{getter.__doc__.split(';')[0]} with width multiplier {multiplier}."
    return make


mobilenet1_0 = _constructor(get_mobilenet, 1.0, "mobilenet1_0")
mobilenet0_75 = _constructor(get_mobilenet, 0.75, "mobilenet0_75")
mobilenet0_5 = _constructor(get_mobilenet, 0.5, "mobilenet0_5")
mobilenet0_25 = _constructor(get_mobilenet, 0.25, "mobilenet0_25")
mobilenet_v2_1_0 = _constructor(get_mobilenet_v2, 1.0, "mobilenet_v2_1_0")
mobilenet_v2_0_75 = _constructor(get_mobilenet_v2, 0.75, "mobilenet_v2_0_75")
mobilenet_v2_0_5 = _constructor(get_mobilenet_v2, 0.5, "mobilenet_v2_0_5")
mobilenet_v2_0_25 = _constructor(get_mobilenet_v2, 0.25, "mobilenet_v2_0_25")
