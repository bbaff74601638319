"""The metric base class, the registry (``create``, ``register``) and the
metrics that combine others: ``CompositeEvalMetric``, ``CustomMetric``, ``np``.

Evaluation metrics are Gluon's ``gluon.metric`` / MXNet's ``mx.metric``.

Metrics are host-side bookkeeping, as in MXNet: ``update(labels, preds)``
takes NDArrays or numpy arrays, one or a list of them, reads them into numpy
and accumulates.  Every metric keeps two running totals: the local one
(``sum_metric`` / ``num_inst``, cleared by ``reset_local``) and the global
one (``global_sum_metric`` / ``global_num_inst``, cleared only by
``reset``); ``get()`` reports the local value, ``get_global()`` the global.

Averaging: MAE/MSE/RMSE average over samples (Gluon 2.0).  F1 and MCC
follow Gluon 2.0: they accumulate per-class confusion counts over every
update (since ``reset_local`` for ``get()``, since ``reset`` for
``get_global()``); F1's ``class_type`` is 'binary', 'multiclass' or
'multilabel' and its ``average`` averages over classes (``'micro'``: the
score of the counts summed over classes, ``'macro'``: the mean of the
per-class scores), not over updates.  MCC is binary only.
PearsonCorrelation's ``average``: ``'macro'`` averages the correlation of
each label/prediction pair, as MXNet 1.x does; ``'micro'`` computes it over
everything seen so far.
"""
import abc
import warnings

import numpy

from ...errors import NbdlError, ShapeError
from ...ndarray import NDArray


class MetricError(NbdlError, ValueError):
    """A bad metric argument, name or input value."""


_REGISTRY = {}


def register(klass):
    """Register an ``EvalMetric`` subclass for ``create`` under its
    lower-cased class name (a decorator)."""
    if not (isinstance(klass, type) and issubclass(klass, EvalMetric)):
        raise MetricError(f"register: expected an EvalMetric subclass, got {klass!r}")
    _add_name(klass.__name__.lower(), klass)
    return klass


def alias(*aliases):
    """Register a metric class under its name and the given aliases."""
    def reg(klass):
        register(klass)
        for name in aliases:
            _add_name(name.lower(), klass)
        return klass
    return reg


def _add_name(name, klass):
    old = _REGISTRY.get(name)
    if old is not None and old is not klass:
        warnings.warn(f"metric name {name!r}: {old.__module__}.{old.__name__} is replaced by "
                      f"{klass.__module__}.{klass.__name__}", stacklevel=3)
    _REGISTRY[name] = klass


def create(metric, *args, **kwargs):
    """A metric from a registered name (``'acc'``, ``'f1'``, ...), an
    ``EvalMetric`` (returned as is), a function ``feval(label, pred)``
    (a ``CustomMetric``) or a list of these (a ``CompositeEvalMetric``)."""
    if isinstance(metric, EvalMetric):
        return metric
    return create_from(_REGISTRY, metric, args, kwargs, create, CompositeEvalMetric,
                       CustomMetric, "create", "a metric name, an EvalMetric, a function or a list")


def create_from(registry, metric, args, kwargs, recurse, composite, custom, where, expected):
    """What ``create`` and MXNet 1.x's ``metric.create`` share: a metric made
    from a name of ``registry`` (case-insensitive), a list (a ``composite``
    of ``recurse(child, *args, **kwargs)``) or a function (a ``custom``
    metric).

    Parameters
    ----------
    registry : dict of str to type
        Lower-cased names -> metric classes.
    metric : str, list or callable
        What to make the metric from.
    args, kwargs : tuple, dict
        Constructor arguments.
    recurse : callable
        The ``create`` making a list's members.
    composite, custom : type
        The classes for a list and for a function.
    where, expected : str
        The caller's name and what it accepts, for the error on anything else.
    """
    if isinstance(metric, str):
        klass = registry.get(metric.lower())
        if klass is None:
            raise MetricError(f"{where}: unknown metric {metric!r}; registered names are "
                              f"{', '.join(sorted(registry))}")
        return klass(*args, **kwargs)
    if isinstance(metric, (list, tuple)):
        group = composite()
        for child in metric:
            group.add(recurse(child, *args, **kwargs))
        return group
    if callable(metric):
        return custom(metric, *args, **kwargs)
    raise MetricError(f"{where}: expected {expected}, got {type(metric).__name__}")


def _host_list(x, what, where):
    """``x`` (an array or a list of arrays) as a list of numpy arrays."""
    if isinstance(x, (NDArray, numpy.ndarray)):
        x = [x]
    elif not isinstance(x, (list, tuple)):
        raise MetricError(f"{where}: {what} must be an NDArray, a numpy array or a list of them, "
                          f"got {type(x).__name__}")
    out = []
    for i, a in enumerate(x):
        if isinstance(a, NDArray):
            out.append(a.asnumpy())
        elif isinstance(a, numpy.ndarray):
            out.append(a)
        else:
            raise MetricError(f"{where}: {what}[{i}] is a {type(a).__name__}, expected an NDArray "
                              f"or a numpy array")
    return out


def check_average(where, average):
    """``average`` when it is ``'macro'`` or ``'micro'``, else a MetricError.

    Parameters
    ----------
    where : str
        The metric, for the message.
    average : str
        How a metric combines its updates.
    """
    if average not in ("macro", "micro"):
        raise MetricError(f"{where}: average must be 'macro' or 'micro', got {average!r}")
    return average


def check_label_shapes(labels, preds, wrap=False, shape=False):
    """MXNet's helper: raise ``ShapeError`` unless ``labels`` and ``preds``
    have the same length (or, with ``shape``, the same shape); with ``wrap``
    single arrays are returned as one-element lists."""
    if shape:
        ls, ps = tuple(labels.shape), tuple(preds.shape)
    else:
        ls = 1 if isinstance(labels, (NDArray, numpy.ndarray)) and wrap else len(labels)
        ps = 1 if isinstance(preds, (NDArray, numpy.ndarray)) and wrap else len(preds)
    if ls != ps:
        raise ShapeError(f"shape of labels {ls} does not match shape of predictions {ps}")
    if wrap:
        labels = [labels] if isinstance(labels, (NDArray, numpy.ndarray)) else labels
        preds = [preds] if isinstance(preds, (NDArray, numpy.ndarray)) else preds
    return labels, preds


class EvalMetric(abc.ABC):
    """Base class: subclasses implement ``update(labels, preds)`` and add to
    ``sum_metric`` / ``num_inst`` (``_add`` adds to the local and the global
    totals at once); ``get()`` is ``sum_metric / num_inst``."""

    def __init__(self, name, output_names=None, label_names=None, **kwargs):
        self.name = str(name)
        self.output_names = output_names
        self.label_names = label_names
        self._kwargs = kwargs
        self.reset()

    def __str__(self):
        return f"EvalMetric: {dict(self.get_name_value())}"

    def get_config(self):
        """The arguments that recreate this metric with ``create``."""
        config = dict(self._kwargs)
        config.update({"metric": type(self).__name__, "name": self.name,
                       "output_names": self.output_names, "label_names": self.label_names})
        return config

    @abc.abstractmethod
    def update(self, labels, preds):
        """Accumulate the metric over a batch of labels and predictions."""

    def update_dict(self, label, pred):
        """``update`` from dicts of name -> array, picking ``label_names`` and
        ``output_names`` when they are set."""
        preds = [pred[n] for n in self.output_names] if self.output_names is not None \
            else list(pred.values())
        labels = [label[n] for n in self.label_names] if self.label_names is not None \
            else list(label.values())
        self.update(labels, preds)

    def _pairs(self, labels, preds):
        labels = _host_list(labels, "labels", self.name)
        preds = _host_list(preds, "preds", self.name)
        if len(labels) != len(preds):
            raise ShapeError(f"{self.name}: got {len(labels)} label arrays but {len(preds)} "
                             f"prediction arrays")
        return list(zip(labels, preds))

    def _add(self, value, count):
        self.sum_metric += value
        self.num_inst += count
        self.global_sum_metric += value
        self.global_num_inst += count

    def reset(self):
        """Clear the local and the global totals."""
        self.num_inst = 0
        self.sum_metric = 0.0
        self.global_num_inst = 0
        self.global_sum_metric = 0.0

    def reset_local(self):
        """Clear the local totals only."""
        self.num_inst = 0
        self.sum_metric = 0.0

    def _value(self, total, count):
        return float(total) / count if count else float("nan")

    def get(self):
        """``(name, value)`` over the updates since the last ``reset_local``."""
        return self.name, self._value(self.sum_metric, self.num_inst)

    def get_global(self):
        """``(name, value)`` over the updates since the last ``reset``."""
        return self.name, self._value(self.global_sum_metric, self.global_num_inst)

    def get_name_value(self):
        """``get()`` as a list of ``(name, value)`` pairs."""
        return _zip_name_value(*self.get())

    def get_global_name_value(self):
        return _zip_name_value(*self.get_global())


class KeptStats:
    """Mixin of the metrics that keep statistics (``_new_stats()``: an object
    with ``add``) since ``reset_local`` (``_local``) and since ``reset``
    (``_global``), their totals the statistics' ``_weight`` and
    ``_score * _weight``."""

    def reset(self):
        """Clear the local and the global statistics."""
        super().reset()
        self._local, self._global = self._new_stats(), self._new_stats()

    def reset_local(self):
        """Clear the local statistics only."""
        super().reset_local()
        self._local = self._new_stats()

    def _add_stats(self, *batch):
        """Add ``batch`` to the local and the global statistics and set the
        totals from them."""
        self._local.add(*batch)
        self._global.add(*batch)
        self.num_inst = self._weight(self._local)
        self.sum_metric = self._score(self._local) * self.num_inst
        self.global_num_inst = self._weight(self._global)
        self.global_sum_metric = self._score(self._global) * self.global_num_inst


def _zip_name_value(name, value):
    if not isinstance(name, list):
        name = [name]
    if not isinstance(value, list):
        value = [value]
    return list(zip(name, value))


@alias("composite")
class CompositeEvalMetric(EvalMetric):
    """Several metrics updated together; ``get()`` gives lists of names and
    values."""

    def __init__(self, metrics=None, name="composite", output_names=None, label_names=None):
        self.metrics = [create(m) for m in (metrics or [])]
        super().__init__(name, output_names=output_names, label_names=label_names)

    def add(self, metric):
        self.metrics.append(create(metric))

    def get_metric(self, index):
        """The child metric at ``index`` (negative counts from the end).

        Parameters
        ----------
        index : int
            Its position in ``metrics``.
        """
        if not -len(self.metrics) <= index < len(self.metrics):
            raise MetricError(f"CompositeEvalMetric: metric index {index} is out of range for "
                              f"{len(self.metrics)} metrics")
        return self.metrics[index]

    def update_dict(self, labels, preds):
        for m in self.metrics:
            m.update_dict(labels, preds)

    def update(self, labels, preds):
        for m in self.metrics:
            m.update(labels, preds)

    def reset(self):
        super().reset()
        for m in getattr(self, "metrics", []):
            m.reset()

    def reset_local(self):
        super().reset_local()
        for m in self.metrics:
            m.reset_local()

    def _collect(self, getter):
        names, values = [], []
        for m in self.metrics:
            name, value = getter(m)
            names.extend(name if isinstance(name, list) else [name])
            values.extend(value if isinstance(value, list) else [value])
        return names, values

    def get(self):
        return self._collect(lambda m: m.get())

    def get_global(self):
        return self._collect(lambda m: m.get_global())

    def get_config(self):
        config = super().get_config()
        config["metrics"] = [m.get_config() for m in self.metrics]
        return config




@register
class CustomMetric(EvalMetric):
    """A metric from ``feval(label, pred)`` on numpy arrays, returning either
    a value (averaged over calls) or ``(sum_metric, num_inst)``.  With
    ``allow_extra_outputs`` there may be more predictions than labels."""

    def __init__(self, feval, name=None, allow_extra_outputs=False, output_names=None,
                 label_names=None):
        if not callable(feval):
            raise MetricError(f"CustomMetric: feval must be callable, got {type(feval).__name__}")
        if name is None:
            name = getattr(feval, "__name__", "custom")
            if "<" in name:
                name = f"custom({name})"
        super().__init__(name, feval=feval, allow_extra_outputs=allow_extra_outputs,
                         output_names=output_names, label_names=label_names)
        self._feval = feval
        self._allow_extra_outputs = allow_extra_outputs

    def update(self, labels, preds):
        if self._allow_extra_outputs:
            pairs = zip(_host_list(labels, "labels", self.name), _host_list(preds, "preds", self.name))
        else:
            pairs = self._pairs(labels, preds)
        for label, pred in pairs:
            result = self._feval(label, pred)
            if isinstance(result, tuple):
                if len(result) != 2:
                    raise MetricError(f"{self.name}: feval returned a {len(result)}-tuple; expected "
                                      f"a value or (sum_metric, num_inst)")
                self._add(result[0], result[1])
            else:
                self._add(result, 1)

    def get_config(self):
        raise MetricError(f"{self.name}: a CustomMetric cannot be serialised (its feval is code)")


def np(numpy_feval, name=None, allow_extra_outputs=False):
    """A ``CustomMetric`` from a function of numpy arrays (MXNet's
    ``metric.np``)."""
    if not callable(numpy_feval):
        raise MetricError(f"np: numpy_feval must be callable, got {type(numpy_feval).__name__}")

    def feval(label, pred):
        return numpy_feval(label, pred)
    feval.__name__ = getattr(numpy_feval, "__name__", "custom")
    return CustomMetric(feval, name, allow_extra_outputs)
