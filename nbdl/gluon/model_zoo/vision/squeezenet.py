"""SqueezeNet 1.0 and 1.1 (Iandola et al., 2016) with Gluon's model-zoo
layout: ``features`` and ``output`` (1x1 convolution, ReLU, 13x13 average
pooling, Flatten), so it expects 224x224 inputs (any size whose final
feature map is at least 13x13)."""
from ....errors import NbdlError
from ... import nn
from ...hybrid_block import HybridBlock
from ..model_store import DEFAULT_ROOT, load_pretrained

__all__ = ["SqueezeNet", "get_squeezenet", "squeezenet1_0", "squeezenet1_1"]


def _make_fire_conv(channels, kernel_size, padding=0):
    out = nn.HybridSequential()
    out.add(nn.Conv2D(channels, kernel_size, padding=padding), nn.Activation("relu"))
    return out


def _make_fire(squeeze_channels, expand1x1_channels, expand3x3_channels):
    """A squeeze 1x1 convolution, then 1x1 and 3x3 expansions concatenated."""
    out = nn.HybridSequential()
    out.add(_make_fire_conv(squeeze_channels, 1))
    paths = nn.HybridConcatenate(axis=1)
    paths.add(_make_fire_conv(expand1x1_channels, 1), _make_fire_conv(expand3x3_channels, 3, 1))
    out.add(paths)
    return out


class SqueezeNet(HybridBlock):
    """SqueezeNet ``version`` '1.0' or '1.1'."""

    def __init__(self, version, classes=1000, **kwargs):
        super().__init__()
        if version not in ("1.0", "1.1"):
            raise NbdlError(f"SqueezeNet: version must be '1.0' or '1.1', got {version!r}")
        f = self.features = nn.HybridSequential()

        def pool():
            return nn.MaxPool2D(pool_size=3, strides=2, ceil_mode=True)

        if version == "1.0":
            f.add(nn.Conv2D(96, kernel_size=7, strides=2), nn.Activation("relu"), pool(),
                  _make_fire(16, 64, 64), _make_fire(16, 64, 64), _make_fire(32, 128, 128),
                  pool(),
                  _make_fire(32, 128, 128), _make_fire(48, 192, 192), _make_fire(48, 192, 192),
                  _make_fire(64, 256, 256), pool(), _make_fire(64, 256, 256))
        else:
            f.add(nn.Conv2D(64, kernel_size=3, strides=2), nn.Activation("relu"), pool(),
                  _make_fire(16, 64, 64), _make_fire(16, 64, 64), pool(),
                  _make_fire(32, 128, 128), _make_fire(32, 128, 128), pool(),
                  _make_fire(48, 192, 192), _make_fire(48, 192, 192),
                  _make_fire(64, 256, 256), _make_fire(64, 256, 256))
        f.add(nn.Dropout(0.5))
        self.output = nn.HybridSequential()
        self.output.add(nn.Conv2D(classes, kernel_size=1), nn.Activation("relu"),
                        nn.AvgPool2D(13), nn.Flatten())

    def forward(self, x):
        return self.output(self.features(x))


def get_squeezenet(version, pretrained=False, device=None, root=DEFAULT_ROOT, ctx=None,
                   **kwargs):
    """SqueezeNet; ``pretrained`` loads ``<root>/squeezenet<version>.params``."""
    net = SqueezeNet(version, **kwargs)
    if pretrained:
        load_pretrained(net, f"squeezenet{version}", root, device or ctx)
    return net


def squeezenet1_0(**kwargs):
    """SqueezeNet 1.0; keyword arguments as get_squeezenet's."""
    return get_squeezenet("1.0", **kwargs)


def squeezenet1_1(**kwargs):
    """SqueezeNet 1.1; keyword arguments as get_squeezenet's."""
    return get_squeezenet("1.1", **kwargs)
