"""Nadam: Adam with Nesterov momentum (Dozat 2016; MXNet's Python update, fused)."""
from .optimizer import Optimizer, OptimizerError, check_number, register


@register
class Nadam(Optimizer):
    """Nadam.  With ``g = clip(rescale_grad * grad + wd * w)`` and the momentum
    schedule ``mu_t = beta1 * (1 - 0.5 * 0.96**(t * schedule_decay))``,
    ``M_t = mu_1 * ... * mu_t``:
    ``m = beta1 * m + (1 - beta1) * g``, ``v = beta2 * v + (1 - beta2) * g**2``,
    ``m_bar = (1 - mu_t) * g / (1 - M_t) + mu_{t+1} * m / (1 - M_{t+1})`` and
    ``w -= lr * m_bar / (sqrt(v / (1 - beta2**t)) + epsilon)``.

    MXNet keeps one ``M_t`` for the whole optimizer, advanced once per
    parameter update, so it depends on the number of parameters; here each
    parameter has its own (what the paper means; identical for one parameter)."""

    default_learning_rate = 0.001
    _hyper = ("beta1", "beta2", "epsilon", "schedule_decay")

    def __init__(self, learning_rate=None, beta1=0.9, beta2=0.999, epsilon=1e-8,
                 schedule_decay=0.004, **kwargs):
        super().__init__(learning_rate=learning_rate, **kwargs)
        self.beta1 = check_number("Nadam", "beta1", beta1, 0.0, 1.0, high_open=True)
        self.beta2 = check_number("Nadam", "beta2", beta2, 0.0, 1.0, high_open=True)
        self.epsilon = check_number("Nadam", "epsilon", epsilon, 0.0)
        self.schedule_decay = check_number("Nadam", "schedule_decay", schedule_decay, 0.0)
        self.m_schedule = {}   # index -> M_t after its last update
        self._m_schedules = {None: self.m_schedule}     # per device, like the update counts

    def _set_current_context(self, device):
        """Switch the update counts and the momentum schedule to ``device``'s.

        Parameters
        ----------
        device : Device or None
            The device of the weights about to be updated.
        """
        self._m_schedules[self._count_device] = self.m_schedule
        super()._set_current_context(device)
        if device not in self._m_schedules:
            self._m_schedules[device] = dict(self._m_schedules[None])
        self.m_schedule = self._m_schedules[device]

    def create_state(self, index, weight):
        return self._zeros(weight, 2)   # (m, v)

    def _momentum(self, t):
        return self.beta1 * (1.0 - 0.5 * 0.96 ** (t * self.schedule_decay))

    def _step(self, index, weight, grad, state, lr, wd):
        t = self._index_update_count[index]
        mu_t, mu_next = self._momentum(t), self._momentum(t + 1)
        m_schedule = self.m_schedule.get(index, 1.0) * mu_t
        self.m_schedule[index] = m_schedule
        coef_g = (1.0 - mu_t) / (1.0 - m_schedule)
        coef_m = mu_next / (1.0 - m_schedule * mu_next)
        coef_v = 1.0 / (1.0 - self.beta2 ** t)
        m, v = state
        self._update_op("_nbdl_nadam_update", [weight, grad, m, v],
                        dict(self._base_attrs(lr, wd), beta1=self.beta1, beta2=self.beta2,
                             epsilon=self.epsilon, coef_g=coef_g, coef_m=coef_m, coef_v=coef_v))

    def _extra_state(self):
        return {"m_schedule": [[k, v] for k, v in self.m_schedule.items()]}

    def _set_extra_state(self, extra):
        try:
            self.m_schedule = {k: float(v) for k, v in extra["m_schedule"]}
            self._m_schedules = {None: self.m_schedule}
        except (KeyError, TypeError, ValueError) as e:
            raise OptimizerError(f"Nadam: malformed saved m_schedule ({e})") from None
