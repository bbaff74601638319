"""Signum and signSGD (Bernstein et al. 2018; MXNet's ``signum_update`` /
``signsgd_update``)."""
from .optimizer import Optimizer, check_number, register


@register
class Signum(Optimizer):
    """Signum: the sign of a momentum.  With ``g = clip(rescale_grad * grad)``:
    ``mom = momentum * mom - (1 - momentum) * (wd * w + g)`` and
    ``w = (1 - lr * wd_lh) * w + lr * sign(mom)``.
    ``momentum=0`` gives signSGD: ``w = (1 - lr * wd) * w - lr * sign(grad)``."""

    _hyper = ("momentum", "wd_lh")

    def __init__(self, learning_rate=None, momentum=0.9, wd_lh=0.0, **kwargs):
        super().__init__(learning_rate=learning_rate, **kwargs)
        self.momentum = check_number("Signum", "momentum", momentum, 0.0, 1.0, high_open=True)
        self.wd_lh = check_number("Signum", "wd_lh", wd_lh, 0.0)

    def create_state(self, index, weight):
        return self._zeros(weight) if self.momentum != 0.0 else None

    def _step(self, index, weight, grad, state, lr, wd):
        attrs = self._base_attrs(lr, wd)
        if state is None:
            self._update_op("signsgd_update", [weight, grad], attrs)
        else:
            attrs.update(momentum=self.momentum, wd_lh=self.wd_lh)
            self._update_op("signum_update", [weight, grad, state], attrs)
