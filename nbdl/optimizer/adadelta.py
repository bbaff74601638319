"""AdaDelta (MXNet 2.0's update, which honours the learning rate)."""
from .optimizer import Optimizer, check_number, register


@register
class AdaDelta(Optimizer):
    """AdaDelta.  With ``g = clip(rescale_grad * grad) + wd * w``:
    ``acc_g = rho * acc_g + (1 - rho) * g**2``,
    ``d = sqrt(acc_delta + epsilon) / sqrt(acc_g + epsilon) * g``,
    ``acc_delta = rho * acc_delta + (1 - rho) * d**2`` and ``w -= lr * d``.

    This is MXNet 2.0's form (default ``learning_rate=1.0``); MXNet 1.x
    ignored the learning rate and applied weight decay to the weight instead."""

    default_learning_rate = 1.0
    _hyper = ("rho", "epsilon")

    def __init__(self, learning_rate=None, rho=0.9, epsilon=1e-6, **kwargs):
        super().__init__(learning_rate=learning_rate, **kwargs)
        self.rho = check_number("AdaDelta", "rho", rho, 0.0, 1.0)
        self.epsilon = check_number("AdaDelta", "epsilon", epsilon, 0.0, low_open=True)

    def create_state(self, index, weight):
        return self._zeros(weight, 2)   # (acc_g, acc_delta)

    def _step(self, index, weight, grad, state, lr, wd):
        acc_g, acc_delta = state
        self._run("adadelta_update", weight, [weight, grad, acc_g, acc_delta],
                  [lr, self.rho, self.epsilon, wd, self.rescale_grad, self._clip])
