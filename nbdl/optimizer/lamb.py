"""LAMB: layer-wise adaptive moments (You et al. 2019; MXNet's
``lamb_update_phase1`` / ``lamb_update_phase2``)."""
import math

from .optimizer import Optimizer, _optional_bound, check_number, register


@register
class LAMB(Optimizer):
    """LAMB.  With ``g = clip(rescale_grad * grad)``, Adam's moments, and
    ``d = mean_hat / (sqrt(var_hat) + epsilon) + wd * w`` (``mean_hat =
    mean / (1 - beta1**t)``, ``var_hat = var / (1 - beta2**t)``; no hats when
    ``bias_correction`` is false):
    ``r1 = ||w||`` clamped to ``[lower_bound, upper_bound]`` (None: no bound),
    ``r2 = ||d||``, and ``w -= lr * r1 / r2 * d`` (``lr * d`` when either
    norm is 0).  The norms are over the whole parameter, summed in float64."""

    default_learning_rate = 0.001
    _hyper = ("beta1", "beta2", "epsilon", "lower_bound", "upper_bound", "bias_correction")

    def __init__(self, learning_rate=None, beta1=0.9, beta2=0.999, epsilon=1e-6,
                 lower_bound=None, upper_bound=None, bias_correction=True, **kwargs):
        super().__init__(learning_rate=learning_rate, **kwargs)
        self.beta1 = check_number("LAMB", "beta1", beta1, 0.0, 1.0, high_open=True)
        self.beta2 = check_number("LAMB", "beta2", beta2, 0.0, 1.0, high_open=True)
        self.epsilon = check_number("LAMB", "epsilon", epsilon, 0.0)
        self.lower_bound = lower_bound
        self.upper_bound = upper_bound
        self._lower = _optional_bound("LAMB", "lower_bound", lower_bound)
        self._upper = _optional_bound("LAMB", "upper_bound", upper_bound)
        self.bias_correction = bool(bias_correction)

    def create_state(self, index, weight):
        return self._zeros(weight, 2)   # (mean, var)

    def _step(self, index, weight, grad, state, lr, wd):
        coef1 = coef2 = 1.0
        if self.bias_correction:
            t = self._index_update_count[index]
            coef1 = 1.0 / (1.0 - self.beta1 ** t)
            coef2 = 1.0 / (1.0 - self.beta2 ** t)
        mean, var = state
        norms = self._run("lamb_phase1", weight, [weight, grad, mean, var],
                          [self.beta1, self.beta2, self.epsilon, wd, self.rescale_grad,
                           self._clip, coef1, coef2])
        if norms is None:        # an empty parameter
            return
        r1, r2 = math.sqrt(norms[0]), math.sqrt(norms[1])
        if self._lower >= 0:
            r1 = max(r1, self._lower)
        if self._upper >= 0:
            r1 = min(r1, self._upper)
        step = lr if r1 == 0.0 or r2 == 0.0 else lr * r1 / r2
        self._run("lamb_phase2", weight, [weight, mean, var],
                  [step, self.epsilon, wd, coef1, coef2])
