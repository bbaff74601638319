"""LAMB: layer-wise adaptive moments (You et al. 2019; MXNet's
``lamb_update_phase1`` / ``lamb_update_phase2``)."""
from ..ndarray.invoke import invoke as _invoke
from .optimizer import Optimizer, _optional_bound, check_number, register


def _norm(x):
    """The 2-norm of ``x`` as the 1-element array ``lamb_update_phase2`` takes."""
    total = _invoke("sum", [_invoke("square", [x])])
    return _invoke("sqrt", [_invoke("Reshape", [total], {"shape": (1,)})])


@register
class LAMB(Optimizer):
    """LAMB.  With ``g = clip(rescale_grad * grad)``, Adam's moments, and
    ``d = mean_hat / (sqrt(var_hat) + epsilon) + wd * w`` (``mean_hat =
    mean / (1 - beta1**t)``, ``var_hat = var / (1 - beta2**t)``; no hats when
    ``bias_correction`` is false):
    ``r1 = ||w||`` clamped to ``[lower_bound, upper_bound]`` (None: no bound),
    ``r2 = ||d||``, and ``w -= lr * r1 / r2 * d`` (``lr * d`` when either
    norm is 0).  The norms are over the whole parameter (``sum(square(w))``)."""

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
        mean, var = state
        g = _invoke("lamb_update_phase1", [weight, grad, mean, var],
                    {"beta1": self.beta1, "beta2": self.beta2, "epsilon": self.epsilon,
                     "t": self._index_update_count[index],
                     "bias_correction": self.bias_correction, "wd": wd,
                     "rescale_grad": self.rescale_grad, "clip_gradient": self._clip})
        r1, r2 = _norm(weight), _norm(g)
        self._update_op("lamb_update_phase2", [weight, g, r1, r2],
                        {"lr": lr, "lower_bound": self._lower, "upper_bound": self._upper})
