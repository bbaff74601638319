"""Learning-rate schedules (MXNet's ``mx.lr_scheduler``).

A scheduler is called with the optimizer's update count and returns the
learning rate for that update: ``sched(num_update) -> lr``.  Every
scheduler can start with a warm-up of ``warmup_steps`` updates that goes
from ``warmup_begin_lr`` to ``base_lr`` (``warmup_mode='linear'``) or stays
at ``warmup_begin_lr`` (``'constant'``).

As in MXNet, ``FactorScheduler`` and ``MultiFactorScheduler`` are stateful:
they lower ``base_lr`` in place as ``num_update`` passes their steps, so a
scheduler serves one optimizer.
"""
import logging
import math
import numbers

from .errors import NbdlError

_log = logging.getLogger(__name__)


class SchedulerError(NbdlError, ValueError):
    """Bad arguments to a learning-rate scheduler."""


def _number(cls, name, value, minimum=None, strict=False):
    if not isinstance(value, numbers.Real) or isinstance(value, bool):
        raise SchedulerError(f"{cls}: {name} must be a number, got {value!r}")
    if minimum is not None and (value < minimum or (strict and value == minimum)):
        rel = ">" if strict else ">="
        raise SchedulerError(f"{cls}: {name} must be {rel} {minimum}, got {value}")
    return value


def _integer(cls, name, value, minimum):
    if not isinstance(value, numbers.Integral) or isinstance(value, bool):
        raise SchedulerError(f"{cls}: {name} must be an integer, got {value!r}")
    if value < minimum:
        raise SchedulerError(f"{cls}: {name} must be >= {minimum}, got {value}")
    return int(value)


class LRScheduler:
    """A constant learning rate ``base_lr`` after an optional warm-up.

    Subclasses override ``__call__`` and use ``get_warmup_lr`` while
    ``num_update < warmup_steps``."""

    def __init__(self, base_lr=0.01, warmup_steps=0, warmup_begin_lr=0, warmup_mode="linear"):
        cls = type(self).__name__
        self.base_lr = _number(cls, "base_lr", base_lr, 0)
        self.warmup_steps = _integer(cls, "warmup_steps", warmup_steps, 0)
        self.warmup_begin_lr = _number(cls, "warmup_begin_lr", warmup_begin_lr, 0)
        self.warmup_final_lr = base_lr
        if self.warmup_begin_lr > self.warmup_final_lr:
            raise SchedulerError(f"{cls}: warmup_begin_lr={warmup_begin_lr} is above "
                                 f"base_lr={base_lr}; the warm-up must rise to base_lr")
        if warmup_mode not in ("linear", "constant"):
            raise SchedulerError(f"{cls}: warmup_mode={warmup_mode!r}: expected 'linear' or "
                                 f"'constant'")
        self.warmup_mode = warmup_mode

    def _set_base_lr(self, lr):
        """Called by an optimizer whose ``learning_rate`` overrides ours
        (before any update has been scheduled)."""
        self.base_lr = lr
        self.warmup_final_lr = lr

    def get_warmup_lr(self, num_update):
        """The learning rate at ``num_update`` during the warm-up."""
        if num_update >= self.warmup_steps:
            raise SchedulerError(f"{type(self).__name__}: update {num_update} is past the "
                                 f"{self.warmup_steps} warm-up steps")
        if self.warmup_mode == "linear":
            increase = ((self.warmup_final_lr - self.warmup_begin_lr)
                        * float(num_update) / float(self.warmup_steps))
            return self.warmup_begin_lr + increase
        return self.warmup_begin_lr

    def __call__(self, num_update):
        if num_update < self.warmup_steps:
            return self.get_warmup_lr(num_update)
        return self.base_lr


class FactorScheduler(LRScheduler):
    """Multiply the rate by ``factor`` every ``step`` updates, never going
    below ``stop_factor_lr``: ``lr = base_lr * factor ** floor((n - 1) / step)``."""

    def __init__(self, step, factor=1, stop_factor_lr=1e-8, base_lr=0.01, warmup_steps=0,
                 warmup_begin_lr=0, warmup_mode="linear"):
        super().__init__(base_lr, warmup_steps, warmup_begin_lr, warmup_mode)
        self.step = _integer("FactorScheduler", "step", step, 1)
        factor = _number("FactorScheduler", "factor", factor, 0)
        if factor > 1.0:
            raise SchedulerError(f"FactorScheduler: factor={factor} must be at most 1 so that "
                                 f"the rate decreases")
        self.factor = factor
        self.stop_factor_lr = _number("FactorScheduler", "stop_factor_lr", stop_factor_lr, 0)
        self.count = 0

    def __call__(self, num_update):
        if num_update < self.warmup_steps:
            return self.get_warmup_lr(num_update)
        # a loop, not an if: training resumed at a later update catches up
        while num_update > self.count + self.step:
            self.count += self.step
            self.base_lr *= self.factor
            if self.base_lr < self.stop_factor_lr:
                self.base_lr = self.stop_factor_lr
                _log.info("Update[%d]: learning rate reached %0.5e and stays there",
                          num_update, self.base_lr)
            else:
                _log.info("Update[%d]: learning rate changed to %0.5e", num_update, self.base_lr)
        return self.base_lr


class MultiFactorScheduler(LRScheduler):
    """Multiply the rate by ``factor`` after each update count in ``step``
    (an increasing list): past ``step[k]`` the rate is ``base_lr * factor**(k+1)``."""

    def __init__(self, step, factor=1, base_lr=0.01, warmup_steps=0, warmup_begin_lr=0,
                 warmup_mode="linear"):
        super().__init__(base_lr, warmup_steps, warmup_begin_lr, warmup_mode)
        if not isinstance(step, (list, tuple)) or not step:
            raise SchedulerError(f"MultiFactorScheduler: step must be a non-empty list of "
                                 f"update counts, got {step!r}")
        steps = [_integer("MultiFactorScheduler", "step", s, 1) for s in step]
        for a, b in zip(steps, steps[1:]):
            if b <= a:
                raise SchedulerError(f"MultiFactorScheduler: step must be increasing, got {steps}")
        factor = _number("MultiFactorScheduler", "factor", factor, 0)
        if factor > 1.0:
            raise SchedulerError(f"MultiFactorScheduler: factor={factor} must be at most 1 so "
                                 f"that the rate decreases")
        self.step = steps
        self.factor = factor
        self.cur_step_ind = 0
        self.count = 0

    def __call__(self, num_update):
        if num_update < self.warmup_steps:
            return self.get_warmup_lr(num_update)
        while self.cur_step_ind < len(self.step) and num_update > self.step[self.cur_step_ind]:
            self.count = self.step[self.cur_step_ind]
            self.cur_step_ind += 1
            self.base_lr *= self.factor
            _log.info("Update[%d]: learning rate changed to %0.5e", num_update, self.base_lr)
        return self.base_lr


class _DecayToFinal(LRScheduler):
    """Shared by Poly and Cosine: decay from ``base_lr`` to ``final_lr``
    over the ``max_update - warmup_steps`` updates after the warm-up."""

    def __init__(self, max_update, base_lr, final_lr, warmup_steps, warmup_begin_lr,
                 warmup_mode):
        super().__init__(base_lr, warmup_steps, warmup_begin_lr, warmup_mode)
        cls = type(self).__name__
        self.max_update = _integer(cls, "max_update", max_update, 1)
        if self.max_update <= self.warmup_steps:
            raise SchedulerError(f"{cls}: max_update={max_update} must exceed "
                                 f"warmup_steps={warmup_steps}")
        self.final_lr = _number(cls, "final_lr", final_lr, 0)
        self.base_lr_orig = self.base_lr
        self.max_steps = self.max_update - self.warmup_steps

    def _set_base_lr(self, lr):
        super()._set_base_lr(lr)
        self.base_lr_orig = lr

    def _decay(self, fraction):
        raise SchedulerError(f"{type(self).__name__} does not define _decay")

    def __call__(self, num_update):
        if num_update < self.warmup_steps:
            return self.get_warmup_lr(num_update)
        if num_update <= self.max_update:
            fraction = float(num_update - self.warmup_steps) / float(self.max_steps)
            self.base_lr = self.final_lr + (self.base_lr_orig - self.final_lr) * self._decay(fraction)
        return self.base_lr


class PolyScheduler(_DecayToFinal):
    """``lr = final_lr + (base_lr - final_lr) * (1 - t / T) ** pwr`` with
    ``t`` the updates since the warm-up and ``T = max_update - warmup_steps``;
    ``final_lr`` after ``max_update``."""

    def __init__(self, max_update, base_lr=0.01, pwr=2, final_lr=0, warmup_steps=0,
                 warmup_begin_lr=0, warmup_mode="linear"):
        super().__init__(max_update, base_lr, final_lr, warmup_steps, warmup_begin_lr, warmup_mode)
        self.power = _number("PolyScheduler", "pwr", pwr, 0)

    def _decay(self, fraction):
        return pow(1.0 - fraction, self.power)


class CosineScheduler(_DecayToFinal):
    """``lr = final_lr + (base_lr - final_lr) * (1 + cos(pi * t / T)) / 2``
    (``t``, ``T`` as in ``PolyScheduler``); ``final_lr`` after ``max_update``."""

    def __init__(self, max_update, base_lr=0.01, final_lr=0, warmup_steps=0, warmup_begin_lr=0,
                 warmup_mode="linear"):
        super().__init__(max_update, base_lr, final_lr, warmup_steps, warmup_begin_lr, warmup_mode)

    def _decay(self, fraction):
        return (1.0 + math.cos(math.pi * fraction)) / 2.0


def _all_schedulers(cls=LRScheduler):
    """Every LRScheduler class defined so far, by ``module.qualname``."""
    out = {f"{cls.__module__}.{cls.__qualname__}": cls}
    for sub in cls.__subclasses__():
        out.update(_all_schedulers(sub))
    return out


def _state_of(scheduler):
    """(class key, attributes) of a scheduler, JSON-serialisable: what
    ``Trainer.save_states`` writes.  Raises if an attribute is not plain data."""
    key = f"{type(scheduler).__module__}.{type(scheduler).__qualname__}"
    state = {}
    for k, v in vars(scheduler).items():
        if not _plain(v):
            raise SchedulerError(f"{type(scheduler).__name__}.{k} = {v!r} cannot be saved: "
                                 f"scheduler attributes must be numbers, strings, lists or None")
        state[k] = v
    return key, state


def _from_state(key, state):
    """A scheduler rebuilt from ``_state_of``'s output."""
    cls = _all_schedulers().get(key)
    if cls is None:
        raise SchedulerError(f"the saved learning-rate scheduler class {key!r} is not defined "
                             f"in this process")
    obj = cls.__new__(cls)
    obj.__dict__.update(state)
    return obj


def _plain(v):
    if v is None or isinstance(v, (bool, int, float, str)):
        return True
    if isinstance(v, (list, tuple)):
        return all(_plain(x) for x in v)
    return False


__all__ = ["LRScheduler", "FactorScheduler", "MultiFactorScheduler", "PolyScheduler",
           "CosineScheduler", "SchedulerError"]
