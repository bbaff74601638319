"""ResNet V1 and V2 (He et al., "Deep Residual Learning for Image
Recognition" and "Identity Mappings in Deep Residual Networks") with Gluon's
model-zoo layout: ``features`` (HybridSequential) and ``output`` (Dense), so
parameter names match Gluon 2.0's (``features.4.0.body.0.weight``).

As in Gluon, V1 puts the stride on the bottleneck's first 1x1 convolution and
gives the bottleneck's 1x1 convolutions a bias."""
from ....errors import NbdlError
from ... import nn
from ...hybrid_block import HybridBlock
from ..model_store import DEFAULT_ROOT, load_pretrained
from ....npx import activation

__all__ = ["ResNetV1", "ResNetV2", "BasicBlockV1", "BasicBlockV2", "BottleneckV1",
           "BottleneckV2", "resnet18_v1", "resnet34_v1", "resnet50_v1", "resnet101_v1",
           "resnet152_v1", "resnet18_v2", "resnet34_v2", "resnet50_v2", "resnet101_v2",
           "resnet152_v2", "get_resnet"]


def _conv3x3(channels, stride, in_channels):
    return nn.Conv2D(channels, kernel_size=3, strides=stride, padding=1, use_bias=False,
                     in_channels=in_channels)


def _shortcut_conv(channels, stride, in_channels):
    """The 1x1 (strided) convolution that gives the shortcut the body's shape."""
    return nn.Conv2D(channels, kernel_size=1, strides=stride, use_bias=False,
                     in_channels=in_channels)


class _ResidualV1(HybridBlock):
    """What the V1 blocks share: a ``body`` (HybridSequential) the subclass
    fills, a shortcut (1x1 convolution and BatchNorm when ``downsample``)
    and ReLU after the sum."""

    def __init__(self):
        super().__init__()
        self.body = nn.HybridSequential()

    def _set_downsample(self, downsample, channels, stride, in_channels):
        if downsample:
            self.downsample = nn.HybridSequential()
            self.downsample.add(_shortcut_conv(channels, stride, in_channels), nn.BatchNorm())
        else:
            self.downsample = None

    def forward(self, x):
        residual = x if self.downsample is None else self.downsample(x)
        return activation(self.body(x) + residual, act_type="relu")


class BasicBlockV1(_ResidualV1):
    """Two 3x3 convolutions, each followed by BatchNorm; ReLU after the sum."""

    def __init__(self, channels, stride, downsample=False, in_channels=0, **kwargs):
        super().__init__()
        self.body.add(_conv3x3(channels, stride, in_channels), nn.BatchNorm(),
                      nn.Activation("relu"), _conv3x3(channels, 1, channels), nn.BatchNorm())
        self._set_downsample(downsample, channels, stride, in_channels)


class BottleneckV1(_ResidualV1):
    """1x1 (strided) -> 3x3 -> 1x1 convolutions with BatchNorm; ReLU after the sum."""

    def __init__(self, channels, stride, downsample=False, in_channels=0, **kwargs):
        super().__init__()
        mid = channels // 4
        self.body.add(nn.Conv2D(mid, kernel_size=1, strides=stride), nn.BatchNorm(),
                      nn.Activation("relu"), _conv3x3(mid, 1, mid), nn.BatchNorm(),
                      nn.Activation("relu"), nn.Conv2D(channels, kernel_size=1, strides=1),
                      nn.BatchNorm())
        self._set_downsample(downsample, channels, stride, in_channels)


class _ResidualV2(HybridBlock):
    """What the pre-activation blocks share: ``bn1``/``conv1`` ...
    ``bn<depth>``/``conv<depth>`` set by the subclass, each convolution
    after BN-ReLU, and the shortcut (a strided 1x1 convolution of the
    pre-activated input when ``downsample``) added to the last one."""

    _depth = 2

    def _set_downsample(self, downsample, channels, stride, in_channels):
        self.downsample = (_shortcut_conv(channels, stride, in_channels) if downsample
                           else None)

    def forward(self, x):
        residual = x
        x = activation(self.bn1(x), act_type="relu")
        if self.downsample is not None:
            residual = self.downsample(x)
        x = self.conv1(x)
        for k in range(2, self._depth + 1):
            x = activation(getattr(self, f"bn{k}")(x), act_type="relu")
            x = getattr(self, f"conv{k}")(x)
        return x + residual


class BasicBlockV2(_ResidualV2):
    """Pre-activation basic block: BN-ReLU-conv3x3, BN-ReLU-conv3x3, plus the
    shortcut (a strided 1x1 convolution of the pre-activated input when the
    shape changes)."""

    def __init__(self, channels, stride, downsample=False, in_channels=0, **kwargs):
        super().__init__()
        self.bn1 = nn.BatchNorm()
        self.conv1 = _conv3x3(channels, stride, in_channels)
        self.bn2 = nn.BatchNorm()
        self.conv2 = _conv3x3(channels, 1, channels)
        self._set_downsample(downsample, channels, stride, in_channels)


class BottleneckV2(_ResidualV2):
    """Pre-activation bottleneck: BN-ReLU-conv1x1, BN-ReLU-conv3x3 (strided),
    BN-ReLU-conv1x1, plus the shortcut."""

    _depth = 3

    def __init__(self, channels, stride, downsample=False, in_channels=0, **kwargs):
        super().__init__()
        mid = channels // 4
        self.bn1 = nn.BatchNorm()
        self.conv1 = nn.Conv2D(mid, kernel_size=1, strides=1, use_bias=False)
        self.bn2 = nn.BatchNorm()
        self.conv2 = _conv3x3(mid, stride, mid)
        self.bn3 = nn.BatchNorm()
        self.conv3 = nn.Conv2D(channels, kernel_size=1, strides=1, use_bias=False)
        self._set_downsample(downsample, channels, stride, in_channels)


def _check_spec(layers, channels):
    if len(layers) != len(channels) - 1:
        raise NbdlError(f"ResNet: layers ({len(layers)} stages) needs one more channel count "
                        f"than stages, got channels={list(channels)}")


def _stem(features, channels, thumbnail):
    """A 3x3 convolution for small (CIFAR-sized) inputs, else 7x7/2 + max-pool."""
    if thumbnail:
        features.add(_conv3x3(channels, 1, 0))
    else:
        features.add(nn.Conv2D(channels, 7, 2, 3, use_bias=False), nn.BatchNorm(),
                     nn.Activation("relu"), nn.MaxPool2D(3, 2, 1))


def _make_layer(block, num_blocks, channels, stride, in_channels):
    layer = nn.HybridSequential()
    layer.add(block(channels, stride, channels != in_channels, in_channels=in_channels))
    for _ in range(num_blocks - 1):
        layer.add(block(channels, 1, False, in_channels=channels))
    return layer


class ResNetV1(HybridBlock):
    """ResNet V1: ``block`` is BasicBlockV1 or BottleneckV1, ``layers`` the
    number of blocks per stage, ``channels`` the stem's then each stage's
    width; ``thumbnail`` uses a 3x3 stem without pooling (for 32x32 inputs)."""

    def __init__(self, block, layers, channels, classes=1000, thumbnail=False, **kwargs):
        super().__init__()
        _check_spec(layers, channels)
        self.features = nn.HybridSequential()
        _stem(self.features, channels[0], thumbnail)
        for i, num_blocks in enumerate(layers):
            stride = 1 if i == 0 else 2
            self.features.add(_make_layer(block, num_blocks, channels[i + 1], stride,
                                          in_channels=channels[i]))
        self.features.add(nn.GlobalAvgPool2D())
        self.output = nn.Dense(classes, in_units=channels[-1])

    def forward(self, x):
        return self.output(self.features(x))


class ResNetV2(HybridBlock):
    """ResNet V2 (pre-activation); arguments as ResNetV1's.  The input is
    first normalized by a BatchNorm without scale or shift."""

    def __init__(self, block, layers, channels, classes=1000, thumbnail=False, **kwargs):
        super().__init__()
        _check_spec(layers, channels)
        self.features = nn.HybridSequential()
        self.features.add(nn.BatchNorm(scale=False, center=False))
        _stem(self.features, channels[0], thumbnail)
        in_channels = channels[0]
        for i, num_blocks in enumerate(layers):
            stride = 1 if i == 0 else 2
            self.features.add(_make_layer(block, num_blocks, channels[i + 1], stride,
                                          in_channels=in_channels))
            in_channels = channels[i + 1]
        self.features.add(nn.BatchNorm(), nn.Activation("relu"), nn.GlobalAvgPool2D(),
                          nn.Flatten())
        self.output = nn.Dense(classes, in_units=in_channels)

    def forward(self, x):
        return self.output(self.features(x))


resnet_spec = {18: ("basic_block", [2, 2, 2, 2], [64, 64, 128, 256, 512]),
               34: ("basic_block", [3, 4, 6, 3], [64, 64, 128, 256, 512]),
               50: ("bottle_neck", [3, 4, 6, 3], [64, 256, 512, 1024, 2048]),
               101: ("bottle_neck", [3, 4, 23, 3], [64, 256, 512, 1024, 2048]),
               152: ("bottle_neck", [3, 8, 36, 3], [64, 256, 512, 1024, 2048])}
resnet_net_versions = [ResNetV1, ResNetV2]
resnet_block_versions = [{"basic_block": BasicBlockV1, "bottle_neck": BottleneckV1},
                         {"basic_block": BasicBlockV2, "bottle_neck": BottleneckV2}]


def get_resnet(version, num_layers, pretrained=False, device=None, root=DEFAULT_ROOT,
               ctx=None, **kwargs):
    """ResNet ``num_layers`` (18, 34, 50, 101, 152), ``version`` 1 or 2.
    ``pretrained`` loads ``<root>/resnet<N>_v<V>.params``."""
    if num_layers not in resnet_spec:
        raise NbdlError(f"get_resnet: num_layers must be one of {sorted(resnet_spec)}, "
                        f"got {num_layers}")
    if version not in (1, 2):
        raise NbdlError(f"get_resnet: version must be 1 or 2, got {version}")
    block_type, layers, channels = resnet_spec[num_layers]
    block = resnet_block_versions[version - 1][block_type]
    net = resnet_net_versions[version - 1](block, layers, channels, **kwargs)
    if pretrained:
        load_pretrained(net, f"resnet{num_layers}_v{version}", root, device or ctx)
    return net


def _constructor(version, num_layers):
    def make(**kwargs):
        return get_resnet(version, num_layers, **kwargs)
    make.__name__ = f"resnet{num_layers}_v{version}"
    make.__doc__ = (f"ResNet-{num_layers} V{version}; keyword arguments as get_resnet's "
                    f"(pretrained, device, root, classes, thumbnail).")
    return make


resnet18_v1 = _constructor(1, 18)
resnet34_v1 = _constructor(1, 34)
resnet50_v1 = _constructor(1, 50)
resnet101_v1 = _constructor(1, 101)
resnet152_v1 = _constructor(1, 152)
resnet18_v2 = _constructor(2, 18)
resnet34_v2 = _constructor(2, 34)
resnet50_v2 = _constructor(2, 50)
resnet101_v2 = _constructor(2, 101)
resnet152_v2 = _constructor(2, 152)
