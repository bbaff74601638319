"""AdaDelta (Zeiler 2012) as MXNet 1.x updates it."""
from .optimizer import Optimizer, check_number, register


@register
class AdaDelta(Optimizer):
    """AdaDelta.  With ``g = clip(rescale_grad * grad)``:
    ``acc_g = rho * acc_g + (1 - rho) * g**2``,
    ``d = sqrt(acc_delta + epsilon) / sqrt(acc_g + epsilon) * g``,
    ``acc_delta = rho * acc_delta + (1 - rho) * d**2`` and
    ``w -= d + wd * w``.

    As in MXNet 1.x the learning rate takes no part (AdaDelta's step size is
    its own), so ``Module``'s default ``learning_rate=0.01`` changes nothing.

    Parameters
    ----------
    rho : float
        Decay rate of both running averages, in [0, 1].
    epsilon : float
        Added under both square roots (> 0).
    **kwargs
        The ``Optimizer`` arguments (``wd``, ``rescale_grad``, ``clip_gradient``, ...).
    """

    _hyper = ("rho", "epsilon")

    def __init__(self, learning_rate=None, rho=0.9, epsilon=1e-5, **kwargs):
        super().__init__(learning_rate=learning_rate, **kwargs)
        self.rho = check_number("AdaDelta", "rho", rho, 0.0, 1.0)
        self.epsilon = check_number("AdaDelta", "epsilon", epsilon, 0.0, low_open=True)

    def create_state(self, index, weight):
        return self._zeros(weight, 2)   # (acc_g, acc_delta)

    def _step(self, index, weight, grad, state, lr, wd):
        acc_g, acc_delta = state
        self._update_op("_nbdl_adadelta_update", [weight, grad, acc_g, acc_delta],
                        {"rho": self.rho, "epsilon": self.epsilon, "wd": wd,
                         "rescale_grad": self.rescale_grad, "clip_gradient": self._clip})
