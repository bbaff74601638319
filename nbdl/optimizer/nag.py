"""Nesterov accelerated gradient (MXNet 1.x's ``nag_mom_update``)."""
from .optimizer import check_number, register
from .sgd import _MomentumSteps


@register
class NAG(_MomentumSteps):
    """SGD with Nesterov momentum, as MXNet 1.x's ``nag_mom_update``.  With
    ``x = clip(rescale_grad * grad)``:
    ``w' = w + momentum**2 * mom - (1 + momentum) * lr * (x + wd * w)`` and
    ``mom = momentum * mom - lr * (x + wd * w')`` (plain SGD when
    ``momentum == 0``).  The momentum holds steps already scaled by the
    learning rate, and its weight decay reads the new weight, as in MXNet 1.x,
    so states compare with MXNet's."""

    _hyper = ("momentum",)
    _mom_op = "nag_mom_update"

    def __init__(self, learning_rate=None, momentum=0.0, **kwargs):
        super().__init__(learning_rate=learning_rate, **kwargs)
        self.momentum = check_number("NAG", "momentum", momentum, 0.0, 1.0)
