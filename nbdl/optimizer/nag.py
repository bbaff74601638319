"""Nesterov accelerated gradient (MXNet 1.x's ``nag_mom_update``)."""
from .optimizer import Optimizer, check_number, register


@register
class NAG(Optimizer):
    """SGD with Nesterov momentum, as MXNet 1.x's ``nag_mom_update``.  With
    ``x = clip(rescale_grad * grad)``:
    ``w' = w + momentum**2 * mom - (1 + momentum) * lr * (x + wd * w)`` and
    ``mom = momentum * mom - lr * (x + wd * w')`` (plain SGD when
    ``momentum == 0``).  The momentum holds steps already scaled by the
    learning rate, and its weight decay reads the new weight, as in MXNet 1.x,
    so states compare with MXNet's."""

    _hyper = ("momentum",)

    def __init__(self, learning_rate=None, momentum=0.0, **kwargs):
        super().__init__(learning_rate=learning_rate, **kwargs)
        self.momentum = check_number("NAG", "momentum", momentum, 0.0, 1.0)

    _master_first = False    # multi-precision state (momentum, master), as MXNet 1.x

    def create_state(self, index, weight):
        return self._zeros(weight) if self.momentum != 0.0 else None

    def _step(self, index, weight, grad, state, lr, wd):
        if state is None:
            self._update_op("sgd_update", [weight, grad], self._base_attrs(lr, wd))
        else:
            # in the op's attribute order (the prepared call then fills its scalars at once)
            self._update_op("nag_mom_update", [weight, grad, state],
                            {"lr": lr, "momentum": self.momentum, "wd": wd,
                             "rescale_grad": self.rescale_grad, "clip_gradient": self._clip})

    def _step_mp(self, index, weight, grad, master, state, lr, wd):
        """A float16 weight: ``mp_sgd_update`` / ``mp_nag_mom_update``."""
        attrs = self._base_attrs(lr, wd)
        if state is None:
            self._update_op("mp_sgd_update", [weight, grad, master], attrs)
        else:
            attrs["momentum"] = self.momentum
            self._update_op("mp_nag_mom_update", [weight, grad, state, master], attrs)
