"""Adam (MXNet's ``adam_update``)."""
import math

from .optimizer import Optimizer, check_number, register


@register
class Adam(Optimizer):
    """Adam.  With ``g = clip(rescale_grad * grad + wd * w)`` (weight decay
    is added before clipping, as in MXNet):
    ``mean = beta1 * mean + (1 - beta1) * g``,
    ``var = beta2 * var + (1 - beta2) * g**2``,
    ``w -= lr_t * mean / (sqrt(var) + epsilon)`` where the bias correction is
    folded into the rate: ``lr_t = lr * sqrt(1 - beta2**t) / (1 - beta1**t)``.
    ``lazy_update`` only matters for sparse gradients."""

    default_learning_rate = 0.001
    _hyper = ("beta1", "beta2", "epsilon", "lazy_update")

    def __init__(self, learning_rate=None, beta1=0.9, beta2=0.999, epsilon=1e-8,
                 lazy_update=False, **kwargs):
        super().__init__(learning_rate=learning_rate, **kwargs)
        self.beta1 = check_number("Adam", "beta1", beta1, 0.0, 1.0, high_open=True)
        self.beta2 = check_number("Adam", "beta2", beta2, 0.0, 1.0, high_open=True)
        self.epsilon = check_number("Adam", "epsilon", epsilon, 0.0)
        self.lazy_update = bool(lazy_update)

    def create_state(self, index, weight):
        return self._zeros(weight, 2)

    def _step(self, index, weight, grad, state, lr, wd):
        t = self._index_update_count[index]
        lr *= math.sqrt(1.0 - self.beta2 ** t) / (1.0 - self.beta1 ** t)
        mean, var = state
        self._update_op("adam_update", [weight, grad, mean, var],
                        {"lr": lr, "beta1": self.beta1, "beta2": self.beta2,
                         "epsilon": self.epsilon, "wd": wd, "rescale_grad": self.rescale_grad,
                         "clip_gradient": self._clip})
