"""Learning-rate schedulers against hand-computed values."""
import math

import pytest

from nbdl import NbdlError
from nbdl.lr_scheduler import (CosineScheduler, FactorScheduler, LRScheduler,
                               MultiFactorScheduler, PolyScheduler, SchedulerError)


def test_factor_scheduler_steps_and_stop():
    s = FactorScheduler(step=2, factor=0.5, base_lr=1.0)
    assert [s(n) for n in range(1, 8)] == [1.0, 1.0, 0.5, 0.5, 0.25, 0.25, 0.125]
    s = FactorScheduler(step=1, factor=0.1, stop_factor_lr=0.05, base_lr=1.0)
    assert [s(n) for n in (1, 2, 3, 4)] == pytest.approx([1.0, 0.1, 0.05, 0.05])


def test_factor_scheduler_catches_up_when_resumed_late():
    s = FactorScheduler(step=2, factor=0.5, base_lr=1.0)
    assert s(7) == 0.125            # 1.0 * 0.5 ** floor((7 - 1) / 2)
    assert s.count == 6


def test_linear_and_constant_warmup():
    s = FactorScheduler(step=10, factor=0.5, base_lr=1.0, warmup_steps=4, warmup_begin_lr=0.2)
    assert [s(n) for n in (0, 1, 2, 3)] == pytest.approx([0.2, 0.4, 0.6, 0.8])
    assert s(4) == 1.0
    c = LRScheduler(base_lr=1.0, warmup_steps=4, warmup_begin_lr=0.2, warmup_mode="constant")
    assert [c(n) for n in (0, 3, 4, 100)] == [0.2, 0.2, 1.0, 1.0]


def test_multifactor_scheduler():
    s = MultiFactorScheduler(step=[3, 5], factor=0.1, base_lr=1.0)
    got = [s(n) for n in (1, 3, 4, 5, 6, 100)]
    assert got == pytest.approx([1.0, 1.0, 0.1, 0.1, 0.01, 0.01])
    assert s.cur_step_ind == 2


def test_poly_scheduler():
    s = PolyScheduler(max_update=10, base_lr=1.0, pwr=2, final_lr=0.1)
    assert s(0) == pytest.approx(1.0)
    assert s(5) == pytest.approx(0.1 + 0.9 * 0.25)
    assert s(10) == pytest.approx(0.1)
    assert s(20) == pytest.approx(0.1)
    w = PolyScheduler(max_update=10, base_lr=1.0, pwr=1, warmup_steps=2, warmup_begin_lr=0.5)
    assert w(1) == pytest.approx(0.75)
    assert w(6) == pytest.approx(0.5)             # (1 - (6 - 2) / 8) ** 1


def test_cosine_scheduler():
    s = CosineScheduler(max_update=10, base_lr=1.0, final_lr=0.2)
    assert s(0) == pytest.approx(1.0)
    assert s(5) == pytest.approx(0.6)
    assert s(3) == pytest.approx(0.2 + 0.8 * (1 + math.cos(math.pi * 0.3)) / 2)
    assert s(10) == pytest.approx(0.2)
    assert s(12) == pytest.approx(0.2)


@pytest.mark.parametrize("make, words", [
    (lambda: FactorScheduler(step=0), "step"),
    (lambda: FactorScheduler(step=2, factor=1.5), "factor=1.5"),
    (lambda: LRScheduler(warmup_mode="cubic"), "warmup_mode='cubic'"),
    (lambda: LRScheduler(base_lr=0.1, warmup_begin_lr=0.5), "warmup_begin_lr=0.5"),
    (lambda: LRScheduler(warmup_steps=-1), "warmup_steps"),
    (lambda: MultiFactorScheduler(step=[5, 3]), "increasing"),
    (lambda: MultiFactorScheduler(step=[]), "non-empty"),
    (lambda: PolyScheduler(max_update=3, warmup_steps=3), "max_update=3"),
    (lambda: CosineScheduler(max_update=2.5), "max_update"),
    (lambda: CosineScheduler(max_update=10, base_lr="x"), "base_lr"),
])
def test_bad_arguments_raise(make, words):
    with pytest.raises(SchedulerError, match=words.replace("[", r"\[")) as e:
        make()
    assert isinstance(e.value, NbdlError)


def test_warmup_lr_past_warmup_raises():
    with pytest.raises(SchedulerError, match="warm-up"):
        LRScheduler(base_lr=1.0, warmup_steps=2).get_warmup_lr(5)


def test_optimizer_learning_rate_overrides_scheduler_base_lr():
    from nbdl.optimizer import SGD
    sched = PolyScheduler(max_update=10, base_lr=1.0, pwr=1)
    opt = SGD(learning_rate=0.5, lr_scheduler=sched)
    assert opt.learning_rate == pytest.approx(0.5)
    opt.num_update = 5
    assert opt.learning_rate == pytest.approx(0.25)
    plain = SGD(lr_scheduler=CosineScheduler(max_update=4, base_lr=0.3))
    assert plain.lr == pytest.approx(0.3) and plain.learning_rate == pytest.approx(0.3)
