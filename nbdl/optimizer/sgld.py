"""Stochastic Gradient Langevin Dynamics (Welling & Teh 2011; MXNet 1.x's SGLD)."""
import math

from .optimizer import Optimizer, register


@register
class SGLD(Optimizer):
    """SGLD.  With ``g = clip(rescale_grad * grad)``:
    ``w += -lr / 2 * (g + wd * w) + N(0, sqrt(lr))``.

    The noise is drawn with ``nbdl.nd.random.normal`` on the weight's device
    and dtype, so ``nbdl.random.seed`` makes the updates reproducible.  SGLD
    keeps no state.

    Parameters
    ----------
    **kwargs
        The ``Optimizer`` arguments (``learning_rate``, ``wd``, ...).
    """

    def create_state(self, index, weight):
        return None

    def _step(self, index, weight, grad, state, lr, wd):
        from ..ndarray import random as _random
        noise = _random.normal(0.0, math.sqrt(lr), shape=weight.shape, dtype=weight.dtype,
                               ctx=weight.device)
        self._update_op("_nbdl_sgld_update", [weight, grad, noise], self._base_attrs(lr, wd))
