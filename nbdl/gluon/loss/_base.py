"""The ``Loss`` base class and the helpers every loss shares.

A loss is a ``HybridBlock`` without parameters whose ``forward`` is written
once with ``call_op``: it runs eagerly on NDArrays (taped under
``autograd.record()``) and traces into a graph after ``hybridize()``.  Its
output is one loss per sample: the elementwise loss times ``sample_weight``
(broadcast, numpy rules) and the scalar ``weight`` (Gluon's
``_apply_weighting``), then averaged over every axis except ``batch_axis``.
"""
import numbers

from ...errors import AttrError
from .._trace import call_op
from ..hybrid_block import HybridBlock


def op(name, *inputs, **attrs):
    """``call_op`` with the inputs spread: ``op("broadcast_mul", a, b)``."""
    return call_op(name, list(inputs), **attrs)


def check_number(owner, name, value, allow_none=False, positive=False):
    """A real number (``None`` too when ``allow_none``), returned as float."""
    if value is None and allow_none:
        return None
    if isinstance(value, bool) or not isinstance(value, numbers.Real):
        raise AttrError(f"{owner}: {name} must be a number{' or None' if allow_none else ''}, "
                        f"got {value!r} ({type(value).__name__})")
    value = float(value)
    if positive and not value > 0:
        raise AttrError(f"{owner}: {name} must be positive, got {value!r}")
    return value


def check_choice(owner, name, value, choices):
    if value not in choices:
        raise AttrError(f"{owner}: {name}={value!r} is invalid: expected one of "
                        f"{', '.join(repr(c) for c in choices)}")
    return value


def apply_weighting(loss, weight=None, sample_weight=None):
    """``loss * sample_weight * weight`` (Gluon's ``_apply_weighting``):
    ``sample_weight`` (an array or ``None``) is broadcast against the loss,
    ``weight`` is a Python number or ``None``."""
    if sample_weight is not None:
        loss = op("broadcast_mul", loss, sample_weight)
    if weight is not None:
        loss = op("_mul_scalar", loss, scalar=float(weight))
    return loss


def reshape_like(x, like):
    """``x`` reshaped to ``like``'s shape (Gluon's ``_reshape_like``)."""
    return op("reshape_like", x, like)


def batch_mean(loss, batch_axis):
    """The mean over every axis except ``batch_axis``."""
    return op("mean", loss, axis=(int(batch_axis),), exclude=True)


def softrelu(x):
    """``log(1 + exp(x))``, computed stably by the Activation kernel."""
    return op("Activation", x, act_type="softrelu")


class Loss(HybridBlock):
    """Base class of the losses.

    ``weight``: a number every sample's loss is multiplied by (``None``: 1).
    ``batch_axis``: the axis that indexes samples; the result keeps only it.
    Subclasses define ``forward(self, pred, label, ...)``."""

    def __init__(self, weight=None, batch_axis=0, **kwargs):
        super().__init__(**kwargs)
        name = type(self).__name__
        if kwargs:
            raise AttrError(f"{name}: unknown arguments {sorted(kwargs)} (Gluon 2.0 blocks take "
                            f"no prefix/params)")
        if isinstance(batch_axis, bool) or not isinstance(batch_axis, numbers.Integral):
            raise AttrError(f"{name}: batch_axis must be an integer, got {batch_axis!r}")
        self._weight = check_number(name, "weight", weight, allow_none=True)
        self._batch_axis = int(batch_axis)

    def __repr__(self):
        return f"{type(self).__name__}(batch_axis={self._batch_axis}, w={self._weight})"
