"""MXNet 1.x's ``mx.optimizer.contrib``: GroupAdaGrad (the
``_contrib_group_adagrad_update`` op)."""
import numpy as np

from .optimizer import Optimizer, OptimizerError, _on_device, check_number, register

__all__ = ["GroupAdaGrad"]


@register
class GroupAdaGrad(Optimizer):
    """AdaGrad with one learning-rate scale per row of a 2-D weight.  With
    ``g = clip(rescale_grad * grad)``: ``history += mean(g**2, axis=1)``
    (``history`` is ``(rows, 1)``) and ``w -= lr * g / sqrt(history +
    eps)``.  Weight decay is not supported (as MXNet's).

    Parameters
    ----------
    eps : float
        Added to the history before the square root.
    **kwargs
        The ``Optimizer`` arguments (``learning_rate``, ``rescale_grad``,
        ``clip_gradient``, ...).
    """

    _hyper = ("float_stable_eps",)
    _state_like_weight = False

    def __init__(self, eps=1e-5, **kwargs):
        super().__init__(**kwargs)
        self.float_stable_eps = check_number("GroupAdaGrad", "eps", eps, 0.0)

    def create_state(self, index, weight):
        if len(weight.shape) != 2:
            raise OptimizerError(f"GroupAdaGrad: the weight must be 2-D, got shape "
                                 f"{tuple(weight.shape)}")
        return _on_device(np.zeros((weight.shape[0], 1), np.dtype(weight.dtype)), weight.device)

    def _step(self, index, weight, grad, state, lr, wd):
        if wd != 0:
            raise OptimizerError(f"GroupAdaGrad: weight decay is not supported (wd={wd})")
        self._update_op("_contrib_group_adagrad_update", [weight, grad, state],
                        {"lr": lr, "rescale_grad": self.rescale_grad,
                         "clip_gradient": self._clip, "epsilon": self.float_stable_eps})
