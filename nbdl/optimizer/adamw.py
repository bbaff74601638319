"""AdamW: Adam with decoupled weight decay (MXNet's ``adamw_update``)."""
import math

from .optimizer import Optimizer, check_number, register


@register
class AdamW(Optimizer):
    """Adam with weight decay applied to the weight, not the gradient.
    With ``g = clip(rescale_grad * grad)``, the moments as in Adam and
    ``eta = lr * sqrt(1 - beta2**t) / (1 - beta1**t)`` (``eta = lr`` when
    ``correct_bias`` is false):
    ``w -= eta * (mean / (sqrt(var) + epsilon) + wd * w)``.

    This is MXNet 2.0's AdamW, which calls the fused ``adamw_update`` kernel
    (``w -= eta * (lr_k * mean / (sqrt(var) + epsilon) + wd * w)``) with
    ``lr_k = 1`` and the scheduled rate as ``eta``."""

    default_learning_rate = 0.001
    _hyper = ("beta1", "beta2", "epsilon", "correct_bias")

    def __init__(self, learning_rate=None, beta1=0.9, beta2=0.999, epsilon=1e-6,
                 correct_bias=True, **kwargs):
        super().__init__(learning_rate=learning_rate, **kwargs)
        self.beta1 = check_number("AdamW", "beta1", beta1, 0.0, 1.0, high_open=True)
        self.beta2 = check_number("AdamW", "beta2", beta2, 0.0, 1.0, high_open=True)
        self.epsilon = check_number("AdamW", "epsilon", epsilon, 0.0)
        self.correct_bias = bool(correct_bias)

    def create_state(self, index, weight):
        return self._zeros(weight, 2)

    def _step(self, index, weight, grad, state, lr, wd):
        if self.correct_bias:
            t = self._index_update_count[index]
            lr *= math.sqrt(1.0 - self.beta2 ** t) / (1.0 - self.beta1 ** t)
        mean, var = state
        self._run("adamw_update", weight, [weight, grad, mean, var],
                  [1.0, lr, self.beta1, self.beta2, self.epsilon, wd, self.rescale_grad,
                   self._clip])
