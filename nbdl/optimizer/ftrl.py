"""FTRL-Proximal (McMahan et al. 2013; MXNet's ``ftrl_update``)."""
from .optimizer import Optimizer, check_number, register


@register
class Ftrl(Optimizer):
    """FTRL-Proximal with L1 strength ``lamda1`` and L2 strength ``wd``.
    With ``g = clip(rescale_grad * grad)``:
    ``z += g - (sqrt(n + g**2) - sqrt(n)) * w / lr``, ``n += g**2`` and
    ``w = (sign(z) * lamda1 - z) / ((beta + sqrt(n)) / lr + wd)`` where
    ``|z| > lamda1``, else 0."""

    default_learning_rate = 0.1
    _hyper = ("lamda1", "beta")

    def __init__(self, lamda1=0.01, learning_rate=None, beta=1, **kwargs):
        super().__init__(learning_rate=learning_rate, **kwargs)
        self.lamda1 = check_number("Ftrl", "lamda1", lamda1, 0.0)
        self.beta = check_number("Ftrl", "beta", beta, 0.0)
        check_number("Ftrl", "learning_rate", self.lr, 0.0, low_open=True)

    def create_state(self, index, weight):
        return self._zeros(weight, 2)   # (z, n)

    def _step(self, index, weight, grad, state, lr, wd):
        if lr <= 0:
            check_number("Ftrl", f"learning rate of parameter {index!r}", lr, 0.0, low_open=True)
        z, n = state
        attrs = self._base_attrs(lr, wd)
        attrs.update(lamda1=self.lamda1, beta=self.beta)
        self._update_op("ftrl_update", [weight, grad, z, n], attrs)
