"""DenseNet 121/161/169/201 (Huang et al., 2017) in Gluon's model-zoo
layout: ``features`` (stem, dense blocks, transitions, final BN-ReLU, 7x7
average pooling, Flatten) and ``output`` (Dense).  Expects 224x224 inputs."""
from ....errors import NbdlError
from ... import nn
from ...hybrid_block import HybridBlock
from ..model_store import DEFAULT_ROOT, load_pretrained

__all__ = ["DenseNet", "get_densenet", "densenet121", "densenet161", "densenet169",
           "densenet201"]


def _make_dense_layer(growth_rate, bn_size, dropout):
    """BN-ReLU-conv1x1 (bn_size * growth_rate) then BN-ReLU-conv3x3
    (growth_rate), concatenated after the layer's input."""
    new_features = nn.HybridSequential()
    new_features.add(nn.BatchNorm(), nn.Activation("relu"),
                     nn.Conv2D(bn_size * growth_rate, kernel_size=1, use_bias=False),
                     nn.BatchNorm(), nn.Activation("relu"),
                     nn.Conv2D(growth_rate, kernel_size=3, padding=1, use_bias=False))
    if dropout:
        new_features.add(nn.Dropout(dropout))
    out = nn.HybridConcatenate(axis=1)
    out.add(nn.Identity(), new_features)
    return out


def _make_dense_block(num_layers, bn_size, growth_rate, dropout):
    out = nn.HybridSequential()
    for _ in range(num_layers):
        out.add(_make_dense_layer(growth_rate, bn_size, dropout))
    return out


def _make_transition(num_output_features):
    out = nn.HybridSequential()
    out.add(nn.BatchNorm(), nn.Activation("relu"),
            nn.Conv2D(num_output_features, kernel_size=1, use_bias=False),
            nn.AvgPool2D(pool_size=2, strides=2))
    return out


class DenseNet(HybridBlock):
    """``num_init_features``: the stem's width; ``growth_rate``: channels
    each layer adds; ``block_config``: layers per dense block; ``bn_size``:
    the bottleneck's width in multiples of ``growth_rate``."""

    def __init__(self, num_init_features, growth_rate, block_config, bn_size=4, dropout=0,
                 classes=1000, **kwargs):
        super().__init__()
        self.features = nn.HybridSequential()
        self.features.add(nn.Conv2D(num_init_features, kernel_size=7, strides=2, padding=3,
                                    use_bias=False),
                          nn.BatchNorm(), nn.Activation("relu"),
                          nn.MaxPool2D(pool_size=3, strides=2, padding=1))
        num_features = num_init_features
        for i, num_layers in enumerate(block_config):
            self.features.add(_make_dense_block(num_layers, bn_size, growth_rate, dropout))
            num_features += num_layers * growth_rate
            if i != len(block_config) - 1:
                self.features.add(_make_transition(num_features // 2))
                num_features //= 2
        self.features.add(nn.BatchNorm(), nn.Activation("relu"), nn.AvgPool2D(pool_size=7),
                          nn.Flatten())
        self.output = nn.Dense(classes)

    def forward(self, x):
        return self.output(self.features(x))


densenet_spec = {121: (64, 32, [6, 12, 24, 16]),
                 161: (96, 48, [6, 12, 36, 24]),
                 169: (64, 32, [6, 12, 32, 32]),
                 201: (64, 32, [6, 12, 48, 32])}


def get_densenet(num_layers, pretrained=False, device=None, root=DEFAULT_ROOT, ctx=None,
                 **kwargs):
    """DenseNet ``num_layers`` (121, 161, 169, 201); ``pretrained`` loads
    ``<root>/densenet<N>.params``."""
    if num_layers not in densenet_spec:
        raise NbdlError(f"get_densenet: num_layers must be one of {sorted(densenet_spec)}, "
                        f"got {num_layers}")
    num_init_features, growth_rate, block_config = densenet_spec[num_layers]
    net = DenseNet(num_init_features, growth_rate, block_config, **kwargs)
    if pretrained:
        load_pretrained(net, f"densenet{num_layers}", root, device or ctx)
    return net


def _constructor(num_layers):
    def make(**kwargs):
        return get_densenet(num_layers, **kwargs)
    make.__name__ = f"densenet{num_layers}"
    make.__doc__ = f"DenseNet-{num_layers}; keyword arguments as get_densenet's."
    return make


densenet121, densenet161, densenet169, densenet201 = (_constructor(n)
                                                      for n in (121, 161, 169, 201))
