"""Inception V3 (Szegedy et al., "Rethinking the Inception Architecture",
2015; without the auxiliary classifier) in Gluon's model-zoo layout:
``features`` (stem, blocks A x3, B, C x4, D, E x2, 8x8 average pooling,
Dropout) and ``output`` (Dense).  Expects 299x299 inputs."""
from ... import nn
from ...hybrid_block import HybridBlock
from ..model_store import DEFAULT_ROOT, load_pretrained

__all__ = ["Inception3", "inception_v3"]

_SETTING_NAMES = ("channels", "kernel_size", "strides", "padding")


def _make_basic_conv(**kwargs):
    """Convolution (no bias), BatchNorm (epsilon 1e-3), ReLU."""
    out = nn.HybridSequential()
    out.add(nn.Conv2D(use_bias=False, **kwargs), nn.BatchNorm(epsilon=0.001),
            nn.Activation("relu"))
    return out


def _make_branch(use_pool, *conv_settings):
    """An optional pooling ('avg': 3x3/1 padded, 'max': 3x3/2) followed by
    basic convolutions given as (channels, kernel_size, strides, padding)
    tuples, None meaning the default."""
    out = nn.HybridSequential()
    if use_pool == "avg":
        out.add(nn.AvgPool2D(pool_size=3, strides=1, padding=1))
    elif use_pool == "max":
        out.add(nn.MaxPool2D(pool_size=3, strides=2))
    for setting in conv_settings:
        kwargs = {k: v for k, v in zip(_SETTING_NAMES, setting) if v is not None}
        out.add(_make_basic_conv(**kwargs))
    return out


def _concat(*branches):
    out = nn.HybridConcatenate(axis=1)
    out.add(*branches)
    return out


def _make_A(pool_features):
    return _concat(
        _make_branch(None, (64, 1, None, None)),
        _make_branch(None, (48, 1, None, None), (64, 5, None, 2)),
        _make_branch(None, (64, 1, None, None), (96, 3, None, 1), (96, 3, None, 1)),
        _make_branch("avg", (pool_features, 1, None, None)))


def _make_B():
    return _concat(
        _make_branch(None, (384, 3, 2, None)),
        _make_branch(None, (64, 1, None, None), (96, 3, None, 1), (96, 3, 2, None)),
        _make_branch("max"))


def _make_C(channels_7x7):
    c = channels_7x7
    return _concat(
        _make_branch(None, (192, 1, None, None)),
        _make_branch(None, (c, 1, None, None), (c, (1, 7), None, (0, 3)),
                     (192, (7, 1), None, (3, 0))),
        _make_branch(None, (c, 1, None, None), (c, (7, 1), None, (3, 0)),
                     (c, (1, 7), None, (0, 3)), (c, (7, 1), None, (3, 0)),
                     (192, (1, 7), None, (0, 3))),
        _make_branch("avg", (192, 1, None, None)))


def _make_D():
    return _concat(
        _make_branch(None, (192, 1, None, None), (320, 3, 2, None)),
        _make_branch(None, (192, 1, None, None), (192, (1, 7), None, (0, 3)),
                     (192, (7, 1), None, (3, 0)), (192, 3, 2, None)),
        _make_branch("max"))


def _make_E():
    branch_3x3 = nn.HybridSequential()
    branch_3x3.add(_make_branch(None, (384, 1, None, None)),
                   _concat(_make_branch(None, (384, (1, 3), None, (0, 1))),
                           _make_branch(None, (384, (3, 1), None, (1, 0)))))
    branch_3x3dbl = nn.HybridSequential()
    branch_3x3dbl.add(_make_branch(None, (448, 1, None, None), (384, 3, None, 1)),
                      _concat(_make_branch(None, (384, (1, 3), None, (0, 1))),
                              _make_branch(None, (384, (3, 1), None, (1, 0)))))
    return _concat(_make_branch(None, (320, 1, None, None)), branch_3x3, branch_3x3dbl,
                   _make_branch("avg", (192, 1, None, None)))


class Inception3(HybridBlock):
    """Inception v3 (Szegedy et al., 2015) for 299x299 inputs: ``features``
    (the stem and the A-E mixed blocks, global average pooling, dropout),
    ``output`` the classifier.

    Parameters
    ----------
    classes : int
        Output classes.
    **kwargs
        HybridBlock's arguments (``prefix``, ``params``).
    """
    def __init__(self, classes=1000, **kwargs):
        super().__init__()
        self.features = nn.HybridSequential()
        self.features.add(
            _make_basic_conv(channels=32, kernel_size=3, strides=2),
            _make_basic_conv(channels=32, kernel_size=3),
            _make_basic_conv(channels=64, kernel_size=3, padding=1),
            nn.MaxPool2D(pool_size=3, strides=2),
            _make_basic_conv(channels=80, kernel_size=1),
            _make_basic_conv(channels=192, kernel_size=3),
            nn.MaxPool2D(pool_size=3, strides=2),
            _make_A(32), _make_A(64), _make_A(64),
            _make_B(),
            _make_C(128), _make_C(160), _make_C(160), _make_C(192),
            _make_D(),
            _make_E(), _make_E(),
            nn.AvgPool2D(pool_size=8),
            nn.Dropout(0.5))
        self.output = nn.Dense(classes)

    def forward(self, x):
        return self.output(self.features(x))


def inception_v3(pretrained=False, device=None, root=DEFAULT_ROOT, ctx=None, **kwargs):
    """Inception V3 (``get_model('inceptionv3')``, MXNet's name); ``pretrained``
    loads ``<root>/inceptionv3.params``."""
    net = Inception3(**kwargs)
    if pretrained:
        load_pretrained(net, "inceptionv3", root, device or ctx)
    return net
