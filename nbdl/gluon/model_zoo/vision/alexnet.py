"""AlexNet (Krizhevsky et al., 2012; the one-tower variant) in Gluon's
model-zoo layout: ``features`` holds the convolutions and the two
4096-unit Dense layers, ``output`` the classifier.  Expects 224x224 inputs."""
from ... import nn
from ...hybrid_block import HybridBlock
from ..model_store import DEFAULT_ROOT, load_pretrained

__all__ = ["AlexNet", "alexnet"]


class AlexNet(HybridBlock):
    """AlexNet (one tower): ``features`` (five convolutions with ReLU, three
    max poolings, two 4096-unit Dense layers with dropout), ``output`` the
    classifier.

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
            nn.Conv2D(64, kernel_size=11, strides=4, padding=2, activation="relu"),
            nn.MaxPool2D(pool_size=3, strides=2),
            nn.Conv2D(192, kernel_size=5, padding=2, activation="relu"),
            nn.MaxPool2D(pool_size=3, strides=2),
            nn.Conv2D(384, kernel_size=3, padding=1, activation="relu"),
            nn.Conv2D(256, kernel_size=3, padding=1, activation="relu"),
            nn.Conv2D(256, kernel_size=3, padding=1, activation="relu"),
            nn.MaxPool2D(pool_size=3, strides=2),
            nn.Flatten(),
            nn.Dense(4096, activation="relu"),
            nn.Dropout(0.5),
            nn.Dense(4096, activation="relu"),
            nn.Dropout(0.5))
        self.output = nn.Dense(classes)

    def forward(self, x):
        return self.output(self.features(x))


def alexnet(pretrained=False, device=None, root=DEFAULT_ROOT, ctx=None, **kwargs):
    """AlexNet; ``pretrained`` loads ``<root>/alexnet.params``."""
    net = AlexNet(**kwargs)
    if pretrained:
        load_pretrained(net, "alexnet", root, device or ctx)
    return net
