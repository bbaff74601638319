"""FTML, Follow the Moving Leader (Zheng & Kwok 2017; MXNet 1.x's ``ftml_update``)."""
from .optimizer import Optimizer, check_number, register


@register
class FTML(Optimizer):
    """FTML.  With ``g = clip(rescale_grad * grad + wd * w)`` and ``t`` the
    update count of the parameter:
    ``v = beta2 * v + (1 - beta2) * g**2``,
    ``d_t = (1 - beta1**t) / lr * (sqrt(v / (1 - beta2**t)) + epsilon)``,
    ``z = beta1 * z + (1 - beta1) * g - (d_t - beta1 * d) * w``,
    ``d = d_t`` and ``w = -z / d_t``.  The state is ``(d, v, z)``.

    Parameters
    ----------
    beta1 : float
        Decay of the moving leader, in [0, 1).
    beta2 : float
        Decay of the squared-gradient average, in [0, 1).
    epsilon : float
        Added to the root (>= 0).
    **kwargs
        The ``Optimizer`` arguments (``learning_rate``, ``wd``, ...).
    """

    _hyper = ("beta1", "beta2", "epsilon")

    def __init__(self, learning_rate=None, beta1=0.6, beta2=0.999, epsilon=1e-8, **kwargs):
        super().__init__(learning_rate=learning_rate, **kwargs)
        self.beta1 = check_number("FTML", "beta1", beta1, 0.0, 1.0, high_open=True)
        self.beta2 = check_number("FTML", "beta2", beta2, 0.0, 1.0, high_open=True)
        self.epsilon = check_number("FTML", "epsilon", epsilon, 0.0)

    def create_state(self, index, weight):
        return self._zeros(weight, 3)   # (d, v, z)

    def _step(self, index, weight, grad, state, lr, wd):
        if lr <= 0:
            check_number("FTML", f"learning rate of parameter {index!r}", lr, 0.0, low_open=True)
        d, v, z = state
        self._update_op("ftml_update", [weight, grad, d, v, z],
                        {"lr": lr, "beta1": self.beta1, "beta2": self.beta2,
                         "epsilon": self.epsilon, "t": self._index_update_count[index], "wd": wd,
                         "rescale_grad": self.rescale_grad, "clip_grad": self._clip})
