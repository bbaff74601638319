"""RMSProp, plain and centered (MXNet 1.x's ``rmsprop_update`` /
``rmspropalex_update``)."""
from .optimizer import Optimizer, _optional_bound, check_number, register


@register
class RMSProp(Optimizer):
    """RMSProp.  With ``g = clip(rescale_grad * grad + wd * w)``:

    - plain: ``n = (1 - gamma1) * g**2 + gamma1 * n``,
      ``w -= lr * g / sqrt(n + epsilon)``;
    - ``centered=True`` (Graves 2013): also ``gm = (1 - gamma1) * g + gamma1 * gm``,
      ``delta = gamma2 * delta - lr * g / sqrt(n - gm**2 + epsilon)``, ``w += delta``.

    ``clip_weights`` (None/0: off) clips the new weight to
    ``[-clip_weights, clip_weights]``.  Argument names are MXNet 1.x's."""

    default_learning_rate = 0.001
    _hyper = ("gamma1", "gamma2", "epsilon", "centered", "clip_weights")

    def __init__(self, learning_rate=None, gamma1=0.9, gamma2=0.9, epsilon=1e-8, centered=False,
                 clip_weights=None, **kwargs):
        super().__init__(learning_rate=learning_rate, **kwargs)
        self.gamma1 = check_number("RMSProp", "gamma1", gamma1, 0.0, 1.0)
        self.gamma2 = check_number("RMSProp", "gamma2", gamma2, 0.0, 1.0)
        self.epsilon = check_number("RMSProp", "epsilon", epsilon, 0.0)
        self.centered = bool(centered)
        self.clip_weights = clip_weights
        self._clip_weights = _optional_bound("RMSProp", "clip_weights", clip_weights)

    def create_state(self, index, weight):
        # centered: (n, g, delta); plain: (n,), the 1-tuple MXNet 1.x makes
        return self._zeros(weight, 3) if self.centered else (self._zeros(weight),)

    def _step(self, index, weight, grad, state, lr, wd):
        attrs = self._base_attrs(lr, wd)
        attrs.update(gamma1=self.gamma1, epsilon=self.epsilon, clip_weights=self._clip_weights)
        if self.centered:
            n, gm, delta = state
            self._update_op("rmspropalex_update", [weight, grad, n, gm, delta],
                            dict(attrs, gamma2=self.gamma2))
        else:
            # (n,); a bare n is what earlier nbdl versions saved
            n = state[0] if isinstance(state, (tuple, list)) else state
            self._update_op("rmsprop_update", [weight, grad, n], attrs)
