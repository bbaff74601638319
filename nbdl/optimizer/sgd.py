"""SGD, with momentum (the ``sgd_update`` / ``sgd_mom_update`` ops; float16
weights under ``multi_precision``: ``mp_sgd_update`` / ``mp_sgd_mom_update``)."""
from .optimizer import Optimizer, check_number, register


class _MomentumSteps(Optimizer):
    """The steps of SGD and NAG: ``sgd_update`` without momentum, the
    momentum op ``_mom_op`` with it; a float16 weight runs their ``mp_``
    twins, which update the float32 master copy and write the weight from it."""

    _mom_op = "sgd_mom_update"
    _master_first = False    # multi-precision state (momentum, master), as MXNet 1.x

    def create_state(self, index, weight):
        return self._zeros(weight) if self.momentum != 0.0 else None

    def _step(self, index, weight, grad, state, lr, wd):
        if state is None:
            self._update_op("sgd_update", [weight, grad], self._base_attrs(lr, wd))
        else:
            # in the op's attribute order (the prepared call then fills its scalars at once)
            self._update_op(self._mom_op, [weight, grad, state],
                            {"lr": lr, "momentum": self.momentum, "wd": wd,
                             "rescale_grad": self.rescale_grad, "clip_gradient": self._clip})

    def _step_mp(self, index, weight, grad, master, state, lr, wd):
        attrs = self._base_attrs(lr, wd)
        if state is None:
            self._update_op("mp_sgd_update", [weight, grad, master], attrs)
        else:
            attrs["momentum"] = self.momentum
            self._update_op("mp_" + self._mom_op, [weight, grad, state, master], attrs)


@register
class SGD(_MomentumSteps):
    """Stochastic gradient descent.  With ``g = clip(rescale_grad * grad)``:

    - ``momentum == 0``: ``w = (1 - lr * wd) * w - lr * g``;
    - otherwise ``mom = momentum * mom - lr * wd * w - lr * g`` and ``w += mom``
      (weight decay is not clipped).

    ``lazy_update`` only matters for sparse gradients, which nbdl does not
    have; it is accepted for compatibility."""

    _hyper = ("momentum", "lazy_update")

    def __init__(self, learning_rate=None, momentum=0.0, lazy_update=False, **kwargs):
        super().__init__(learning_rate=learning_rate, **kwargs)
        self.momentum = check_number("SGD", "momentum", momentum, 0.0, 1.0)
        self.lazy_update = bool(lazy_update)
