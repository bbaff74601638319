"""MXNet 1.x's metric base class, registry and combining metrics
(``mx.metric.EvalMetric``, ``create``, ``register``, ``alias``,
``CompositeEvalMetric``, ``CustomMetric``, ``np``).

``nbdl.metric`` builds on ``nbdl.gluon.metric`` (Gluon 2.0's metrics): its
``EvalMetric`` is a subclass of Gluon's that adds MXNet 1.x's
``has_global_stats`` switch.  A metric class written for MXNet 1.x that only
updates ``sum_metric`` / ``num_inst`` keeps ``has_global_stats=False``, and
then ``get_global()`` reports the local value (as in MXNet 1.x, where Gluon
2.0 would report the never-updated global totals); every metric nbdl ships
keeps both.  The registry is 1.x's own: ``create('acc')`` gives
``nbdl.metric.Accuracy``.
"""
import json

from ..gluon.metric import base as _gluon
from ..gluon.metric.base import MetricError, check_label_shapes  # noqa: F401  (same as 1.x)

_REGISTRY = {}


def register(klass):
    """Register an ``EvalMetric`` subclass for ``create`` under its
    lower-cased class name (a class decorator).

    Parameters
    ----------
    klass : type
        The metric class.
    """
    if not (isinstance(klass, type) and issubclass(klass, _gluon.EvalMetric)):
        raise MetricError(f"metric.register: expected an EvalMetric subclass, got {klass!r}")
    _REGISTRY[klass.__name__.lower()] = klass
    return klass


def alias(*aliases):
    """A class decorator registering a metric under its name and ``aliases``.

    Parameters
    ----------
    *aliases : str
        The other names ``create`` accepts for the class.
    """
    def reg(klass):
        register(klass)
        for name in aliases:
            _REGISTRY[str(name).lower()] = klass
        return klass
    return reg


def create(metric=None, *args, **kwargs):
    """A metric, as MXNet 1.x's ``mx.metric.create``.

    Parameters
    ----------
    metric : str, EvalMetric, callable, list or dict
        A registered name (``'acc'``, ``'f1'``, ``'top_k_accuracy'``, ...,
        case-insensitive), a JSON string of ``get_config()`` data (or of
        ``[name, kwargs]``), a ``get_config()`` dict, an ``EvalMetric``
        (returned as is), a function ``feval(label, pred)`` (a
        ``CustomMetric``) or a list of these (a ``CompositeEvalMetric``).
    *args, **kwargs
        Constructor arguments (for names, functions and list members).
    """
    if metric is None:
        if "metric" not in kwargs:
            raise MetricError("metric.create: no metric given")
        metric = kwargs.pop("metric")
    if isinstance(metric, _gluon.EvalMetric):
        if args or kwargs:
            raise MetricError(f"metric.create: {metric.name!r} is already a metric; extra "
                              f"arguments {list(args)} {sorted(kwargs)} are invalid")
        return metric
    if isinstance(metric, dict):
        if args:
            raise MetricError("metric.create: positional arguments given with a config dict")
        return create(**{**metric, **kwargs})
    if isinstance(metric, str):
        text = metric.strip()
        if text.startswith(("[", "{")):
            if args or kwargs:
                raise MetricError("metric.create: arguments given with a JSON config")
            try:
                config = json.loads(text)
            except ValueError as e:
                raise MetricError(f"metric.create: bad JSON config {metric!r} ({e})") from None
            if isinstance(config, list):
                if len(config) != 2 or not isinstance(config[1], dict):
                    raise MetricError(f"metric.create: a JSON list config is [name, kwargs], "
                                      f"got {metric!r}")
                return create(config[0], **config[1])
            return create(config)
    return _gluon.create_from(_REGISTRY, metric, args, kwargs, create, CompositeEvalMetric,
                              CustomMetric, "metric.create", "a metric name, an EvalMetric, "
                              "a function, a config dict or a list")


class EvalMetric(_gluon.EvalMetric):
    """Base class of MXNet 1.x metrics: a subclass implements
    ``update(labels, preds)`` and adds to ``sum_metric`` / ``num_inst`` (and,
    with global statistics, ``global_sum_metric`` / ``global_num_inst``);
    ``get()`` is ``sum_metric / num_inst``.

    Parameters
    ----------
    name : str
        The metric's display name.
    output_names : list of str, optional
        The predictions ``update_dict`` uses (default: all).
    label_names : list of str, optional
        The labels ``update_dict`` uses (default: all).
    has_global_stats : bool, optional
        Whether the subclass keeps the global totals (``get_global``
        reports them) or not (``get_global`` reports ``get()``).  Default:
        the class's ``_has_global_stats`` (False here, True for nbdl's
        metrics).
    **kwargs
        Further constructor arguments, kept for ``get_config``.
    """

    _has_global_stats = False

    def __init__(self, name, output_names=None, label_names=None, has_global_stats=None,
                 **kwargs):
        if has_global_stats is not None:
            self._has_global_stats = bool(has_global_stats)
        super().__init__(name, output_names=output_names, label_names=label_names, **kwargs)

    def get_global(self):
        """``(name, value)`` since the last ``reset`` (the local value when
        the metric keeps no global statistics)."""
        if not self._has_global_stats:
            return self.get()
        return super().get_global()

    def get_global_name_value(self):
        """``[(name, value), ...]`` of ``get_global()``."""
        if not self._has_global_stats:
            return self.get_name_value()
        return super().get_global_name_value()


class _Global:
    """Mixin of nbdl's own 1.x metrics: they keep global statistics."""
    _has_global_stats = True


@register
@alias("composite")
class CompositeEvalMetric(_Global, EvalMetric, _gluon.CompositeEvalMetric):
    """Several metrics updated together; ``get()`` gives lists of names and
    values.

    Parameters
    ----------
    metrics : list, optional
        Child metrics (anything ``create`` accepts).
    name : str, default 'composite'
        The display name.
    output_names : list of str, optional
        The predictions ``update_dict`` passes on (default: all).
    label_names : list of str, optional
        The labels ``update_dict`` passes on (default: all).
    """

    def __init__(self, metrics=None, name="composite", output_names=None, label_names=None):
        self.metrics = []
        # Gluon's base, not Gluon's composite (which would create the children
        # from Gluon's registry)
        _gluon.EvalMetric.__init__(self, name, output_names=output_names,
                                   label_names=label_names)
        self.metrics = [create(m) for m in (metrics or [])]

    def add(self, metric):
        """Add a child metric.

        Parameters
        ----------
        metric : EvalMetric, str, callable or dict
            Anything ``create`` accepts.
        """
        self.metrics.append(create(metric))

    def update_dict(self, labels, preds):
        """Update every child from dicts of name -> array, keeping only
        ``label_names`` / ``output_names`` when they are set.

        Parameters
        ----------
        labels : dict of str to array
            The labels by name.
        preds : dict of str to array
            The predictions by name.
        """
        if self.label_names is not None:
            labels = {k: v for k, v in labels.items() if k in self.label_names}
        if self.output_names is not None:
            preds = {k: v for k, v in preds.items() if k in self.output_names}
        for m in self.metrics:
            m.update_dict(labels, preds)


@register
class CustomMetric(_Global, EvalMetric, _gluon.CustomMetric):
    """A metric from ``feval(label, pred)`` on numpy arrays, returning a value
    (averaged over calls) or ``(sum_metric, num_inst)``.

    Parameters
    ----------
    feval : callable
        ``feval(label, pred)`` of one label/prediction pair.
    name : str, optional
        The display name (default: ``feval``'s name).
    allow_extra_outputs : bool, default False
        Whether there may be more predictions than labels.
    output_names : list of str, optional
        The predictions ``update_dict`` uses.
    label_names : list of str, optional
        The labels ``update_dict`` uses.
    """

    def __init__(self, feval, name=None, allow_extra_outputs=False, output_names=None,
                 label_names=None):
        _gluon.CustomMetric.__init__(self, feval, name=name,
                                     allow_extra_outputs=allow_extra_outputs,
                                     output_names=output_names, label_names=label_names)


def np(numpy_feval, name=None, allow_extra_outputs=False):
    """A ``CustomMetric`` from a function of numpy arrays (MXNet's
    ``mx.metric.np``).

    Parameters
    ----------
    numpy_feval : callable
        ``numpy_feval(label, pred)`` returning a value or
        ``(sum_metric, num_inst)``.
    name : str, optional
        The display name (default: the function's name).
    allow_extra_outputs : bool, default False
        Whether there may be more predictions than labels.
    """
    if not callable(numpy_feval):
        raise MetricError(f"metric.np: numpy_feval must be callable, got "
                          f"{type(numpy_feval).__name__}")

    def feval(label, pred):
        return numpy_feval(label, pred)
    feval.__name__ = getattr(numpy_feval, "__name__", "custom")
    return CustomMetric(feval, name, allow_extra_outputs)
