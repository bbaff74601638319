"""VGG 11/13/16/19 (Simonyan & Zisserman, 2014), optionally with
BatchNorm, in Gluon's model-zoo layout: ``features`` holds the
convolutions and the two 4096-unit Dense layers, ``output`` the classifier.
The Dense layers expect 224x224 inputs (a 7x7x512 feature map)."""
from ....errors import NbdlError
from ....initializer import Xavier
from ... import nn
from ...hybrid_block import HybridBlock
from ..model_store import DEFAULT_ROOT, load_pretrained

__all__ = ["VGG", "get_vgg", "vgg11", "vgg13", "vgg16", "vgg19", "vgg11_bn", "vgg13_bn",
           "vgg16_bn", "vgg19_bn"]


class VGG(HybridBlock):
    """``layers``: convolutions per stage; ``filters``: each stage's width."""

    def __init__(self, layers, filters, classes=1000, batch_norm=False, **kwargs):
        super().__init__()
        if len(layers) != len(filters):
            raise NbdlError(f"VGG: layers {list(layers)} and filters {list(filters)} must have "
                            f"the same length")
        self.features = self._make_features(layers, filters, batch_norm)
        self.features.add(nn.Dense(4096, activation="relu", weight_initializer="normal",
                                   bias_initializer="zeros"),
                          nn.Dropout(rate=0.5),
                          nn.Dense(4096, activation="relu", weight_initializer="normal",
                                   bias_initializer="zeros"),
                          nn.Dropout(rate=0.5))
        self.output = nn.Dense(classes, weight_initializer="normal", bias_initializer="zeros")

    @staticmethod
    def _make_features(layers, filters, batch_norm):
        featurizer = nn.HybridSequential()
        for num, channels in zip(layers, filters):
            for _ in range(num):
                featurizer.add(nn.Conv2D(channels, kernel_size=3, padding=1,
                                         weight_initializer=Xavier(rnd_type="gaussian",
                                                                   factor_type="out",
                                                                   magnitude=2),
                                         bias_initializer="zeros"))
                if batch_norm:
                    featurizer.add(nn.BatchNorm())
                featurizer.add(nn.Activation("relu"))
            featurizer.add(nn.MaxPool2D(strides=2))
        return featurizer

    def forward(self, x):
        return self.output(self.features(x))


vgg_spec = {11: ([1, 1, 2, 2, 2], [64, 128, 256, 512, 512]),
            13: ([2, 2, 2, 2, 2], [64, 128, 256, 512, 512]),
            16: ([2, 2, 3, 3, 3], [64, 128, 256, 512, 512]),
            19: ([2, 2, 4, 4, 4], [64, 128, 256, 512, 512])}


def get_vgg(num_layers, pretrained=False, device=None, root=DEFAULT_ROOT, ctx=None, **kwargs):
    """VGG ``num_layers`` (11, 13, 16, 19); ``batch_norm=True`` for the _bn
    variants.  ``pretrained`` loads ``<root>/vgg<N>[_bn].params``."""
    if num_layers not in vgg_spec:
        raise NbdlError(f"get_vgg: num_layers must be one of {sorted(vgg_spec)}, got "
                        f"{num_layers}")
    layers, filters = vgg_spec[num_layers]
    net = VGG(layers, filters, **kwargs)
    if pretrained:
        name = f"vgg{num_layers}{'_bn' if kwargs.get('batch_norm') else ''}"
        load_pretrained(net, name, root, device or ctx)
    return net


def _constructor(num_layers, batch_norm):
    def make(**kwargs):
        if batch_norm:
            kwargs["batch_norm"] = True
        return get_vgg(num_layers, **kwargs)
    make.__name__ = f"vgg{num_layers}{'_bn' if batch_norm else ''}"
    make.__doc__ = (f"VGG-{num_layers}{' with BatchNorm' if batch_norm else ''}; keyword "
                    f"arguments as get_vgg's.")
    return make


vgg11, vgg13, vgg16, vgg19 = (_constructor(n, False) for n in (11, 13, 16, 19))
vgg11_bn, vgg13_bn, vgg16_bn, vgg19_bn = (_constructor(n, True) for n in (11, 13, 16, 19))
