"""AdamW: Adam with decoupled weight decay (MXNet's ``adamw_update``)."""
import math

import numpy as np

from .optimizer import Optimizer, _on_device, check_number, register


@register
class AdamW(Optimizer):
    """Adam with weight decay applied to the weight, not the gradient.
    With ``g = clip(rescale_grad * grad)``, the moments as in Adam and
    ``eta = lr * sqrt(1 - beta2**t) / (1 - beta1**t)`` (``eta = lr`` when
    ``correct_bias`` is false):
    ``w -= eta * (mean / (sqrt(var) + epsilon) + wd * w)``.

    This is MXNet 2.0's AdamW, which calls the ``_adamw_update`` op
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
        self._update_op("_adamw_update", [weight, grad, mean, var, self._rescale_array(weight)],
                        {"lr": 1.0, "eta": lr, "wd": wd, "beta1": self.beta1,
                         "beta2": self.beta2, "epsilon": self.epsilon,
                         "clip_gradient": self._clip})

    def _rescale_array(self, weight):
        """``rescale_grad`` as the 1-element array ``_adamw_update`` takes
        (one per device and dtype, rewritten when the factor changes)."""
        key = (weight.device, weight.dtype)
        cache = self.__dict__.setdefault("_rescale_arrays", {})
        got = cache.get(key)
        if got is None or got[0] != self.rescale_grad:
            arr = _on_device(np.array([self.rescale_grad], weight.dtype), weight.device)
            got = cache[key] = (self.rescale_grad, arr)
        return got[1]
