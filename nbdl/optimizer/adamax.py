"""Adamax: Adam with the infinity norm (MXNet's Python update, fused)."""
from .optimizer import Optimizer, check_number, register


@register
class Adamax(Optimizer):
    """Adamax.  With ``g = clip(rescale_grad * grad + wd * w)``:
    ``m = beta1 * m + (1 - beta1) * g``, ``u = max(beta2 * u, |g|)`` and
    ``w -= lr / (1 - beta1**t) * m / u``.  An element whose gradients have all
    been 0 (so ``u == m == 0``) is left unchanged, where MXNet would write NaN."""

    default_learning_rate = 0.002
    _hyper = ("beta1", "beta2")

    def __init__(self, learning_rate=None, beta1=0.9, beta2=0.999, **kwargs):
        super().__init__(learning_rate=learning_rate, **kwargs)
        self.beta1 = check_number("Adamax", "beta1", beta1, 0.0, 1.0, high_open=True)
        self.beta2 = check_number("Adamax", "beta2", beta2, 0.0, 1.0)

    def create_state(self, index, weight):
        return self._zeros(weight, 2)   # (m, u)

    def _step(self, index, weight, grad, state, lr, wd):
        t = self._index_update_count[index]
        lr /= 1.0 - self.beta1 ** t
        m, u = state
        self._update_op("_nbdl_adamax_update", [weight, grad, m, u],
                        dict(self._base_attrs(lr, wd), beta1=self.beta1, beta2=self.beta2))
