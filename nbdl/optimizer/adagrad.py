"""AdaGrad (MXNet 1.x's dense update)."""
from .optimizer import Optimizer, OptimizerError, check_number, register


@register
class AdaGrad(Optimizer):
    """AdaGrad.  With ``g = clip(rescale_grad * grad)``:
    ``history += g**2`` and ``w -= lr * (g / sqrt(history + epsilon) + wd * w)``.
    MXNet 1.x calls the stabilizer ``eps``; both spellings are accepted."""

    _hyper = ("epsilon",)

    def __init__(self, learning_rate=None, epsilon=1e-7, eps=None, **kwargs):
        super().__init__(learning_rate=learning_rate, **kwargs)
        if eps is not None:
            if epsilon != 1e-7 and epsilon != eps:
                raise OptimizerError(f"AdaGrad: eps={eps} and epsilon={epsilon} disagree; "
                                     f"give one of them")
            epsilon = eps
        self.epsilon = check_number("AdaGrad", "epsilon", epsilon, 0.0)

    def create_state(self, index, weight):
        return self._zeros(weight)

    def _step(self, index, weight, grad, state, lr, wd):
        self._update_op("_nbdl_adagrad_update", [weight, grad, state],
                        dict(self._base_attrs(lr, wd), epsilon=self.epsilon))
