"""Training callbacks of MXNet 1.x (``mx.callback``).

Batch-end callbacks are called with a ``BatchEndParam`` (``epoch``,
``nbatch``, ``eval_metric``, ``locals``; see ``nbdl.model.BatchEndParam``)
after each batch; epoch-end callbacks such as ``do_checkpoint`` with
``(epoch, symbol, arg_params, aux_params)``. A metric is anything with
``get_name_value()`` (a list of ``(name, value)`` pairs) and ``reset()``
(``reset_local()`` is used where it exists, as MXNet does).
"""
import logging
import math
import numbers
import time

from .errors import ArgumentError
from .model import BatchEndParam, save_checkpoint

__all__ = ["BatchEndParam", "do_checkpoint", "module_checkpoint", "log_train_metric",
           "Speedometer", "ProgressBar", "LogValidationMetricsCallback"]


def _positive_int(value, what, arg):
    if isinstance(value, bool) or not isinstance(value, numbers.Integral) or value <= 0:
        raise ArgumentError(f"{what}: {arg} must be a positive int, got {value!r}")
    return int(value)


def _reset_metric(metric):
    reset = getattr(metric, "reset_local", None) or metric.reset
    reset()


def do_checkpoint(prefix, period=1):
    """An epoch-end callback that saves a checkpoint every ``period`` epochs.

    After epoch ``i`` (counted from 0) with ``(i + 1) % period == 0`` it
    writes ``prefix-symbol.json`` and ``prefix-%04d.params`` (numbered
    ``i + 1``) with ``nbdl.model.save_checkpoint``; load them with
    ``nbdl.model.load_checkpoint(prefix, i + 1)``.

    Parameters
    ----------
    prefix : str
        Path prefix of the checkpoint files.
    period : int, optional
        Epochs between checkpoints (values below 1 count as 1, as in MXNet).

    Returns
    -------
    callable(epoch, symbol, arg_params, aux_params)
    """
    if isinstance(period, bool) or not isinstance(period, numbers.Real):
        raise ArgumentError(f"do_checkpoint: period must be an int, got {period!r}")
    period = int(max(1, period))

    def _callback(iter_no, sym, arg, aux):
        if (iter_no + 1) % period == 0:
            save_checkpoint(prefix, iter_no + 1, sym, arg, aux)
            logging.info('Saved checkpoint to "%s-%04d.params"', prefix, iter_no + 1)
    return _callback


def module_checkpoint(mod, prefix, period=1, save_optimizer_states=False):
    """An epoch-end callback that calls ``mod.save_checkpoint`` every ``period`` epochs.

    Parameters
    ----------
    mod : Module
        Anything with ``save_checkpoint(prefix, epoch, save_optimizer_states)``.
    prefix : str
        Path prefix of the checkpoint files.
    period : int, optional
        Epochs between checkpoints (values below 1 count as 1).
    save_optimizer_states : bool, optional
        Also save the optimizer states.

    Returns
    -------
    callable(epoch, symbol=None, arg_params=None, aux_params=None)
    """
    if not hasattr(mod, "save_checkpoint"):
        raise ArgumentError(f"module_checkpoint: mod must have save_checkpoint(), "
                            f"got {type(mod).__name__}")
    period = int(max(1, period))

    def _callback(iter_no, sym=None, arg=None, aux=None):
        if (iter_no + 1) % period == 0:
            mod.save_checkpoint(prefix, iter_no + 1, save_optimizer_states)
    return _callback


def log_train_metric(period, auto_reset=False):
    """A batch-end callback that logs the training metric every ``period`` batches.

    Parameters
    ----------
    period : int
        Log when ``nbatch % period == 0``.
    auto_reset : bool, optional
        Reset the metric after each log.

    Returns
    -------
    callable(BatchEndParam)
    """
    period = _positive_int(period, "log_train_metric", "period")

    def _callback(param):
        if param.nbatch % period == 0 and param.eval_metric is not None:
            for name, value in param.eval_metric.get_name_value():
                logging.info("Iter[%d] Batch[%d] Train-%s=%f", param.epoch, param.nbatch,
                             name, value)
            if auto_reset:
                _reset_metric(param.eval_metric)
    return _callback


class Speedometer:
    """A batch-end callback that logs samples per second and the metric every
    ``frequent`` batches.

    The first call of an epoch starts the clock; a call whose ``nbatch`` is
    smaller than the previous one (a new epoch) starts it again. Messages
    (``logging.info``) read as in MXNet, e.g.
    ``Epoch[0] Batch [10-20]\\tSpeed: 1910.41 samples/sec\\taccuracy=0.400000``.

    Parameters
    ----------
    batch_size : int
        Examples per batch.
    frequent : int, optional
        Log every this many batches.
    auto_reset : bool, optional
        Reset the metric after each log, so each message covers the batches
        since the previous one.
    """

    def __init__(self, batch_size, frequent=50, auto_reset=True):
        self.batch_size = _positive_int(batch_size, "Speedometer", "batch_size")
        self.frequent = _positive_int(frequent, "Speedometer", "frequent")
        self.init = False
        self.tic = 0
        self.last_count = 0
        self.auto_reset = auto_reset

    def __call__(self, param):
        """Log the speed when ``param.nbatch`` is a multiple of ``frequent``.

        Parameters
        ----------
        param : BatchEndParam
            The batch's epoch, count and metric.
        """
        count = param.nbatch
        if self.last_count > count:
            self.init = False
        self.last_count = count
        if not self.init:
            self.init = True
            self.tic = time.time()
            return
        if count % self.frequent != 0:
            return
        elapsed = time.time() - self.tic
        speed = self.frequent * self.batch_size / elapsed if elapsed > 0 else float("inf")
        if param.eval_metric is not None:
            name_value = param.eval_metric.get_name_value()
            fields = "\t%s=%f" * len(name_value)
            values = sum((tuple(nv) for nv in name_value), ())
            if self.auto_reset:
                _reset_metric(param.eval_metric)
                logging.info("Epoch[%d] Batch [%d-%d]\tSpeed: %.2f samples/sec" + fields,
                             param.epoch, count - self.frequent, count, speed, *values)
            else:
                logging.info("Epoch[%d] Batch [0-%d]\tSpeed: %.2f samples/sec" + fields,
                             param.epoch, count, speed, *values)
        else:
            logging.info("Iter[%d] Batch [%d]\tSpeed: %.2f samples/sec",
                         param.epoch, count, speed)
        self.tic = time.time()


class ProgressBar:
    """A batch-end callback that logs a progress bar of the epoch's batches.

    Parameters
    ----------
    total : int
        Batches per epoch.
    length : int, optional
        Characters in the bar.
    """

    def __init__(self, total, length=80):
        self.total = _positive_int(total, "ProgressBar", "total")
        self.bar_len = _positive_int(length, "ProgressBar", "length")

    def __call__(self, param):
        """Log ``[====----] 50.0%`` for ``param.nbatch`` of ``total`` batches.

        Parameters
        ----------
        param : BatchEndParam
            The batch's count.
        """
        count = param.nbatch
        filled = int(round(self.bar_len * count / float(self.total)))
        percents = math.ceil(100.0 * count / float(self.total))
        bar = "=" * filled + "-" * (self.bar_len - filled)
        logging.info("[%s] %s%s\r", bar, percents, "%")


class LogValidationMetricsCallback:
    """An eval-end callback that logs each validation metric of the epoch.

    Called with a ``BatchEndParam``; logs ``Epoch[%d] Validation-name=value``
    for each ``(name, value)`` of ``param.eval_metric.get_name_value()``.
    """

    def __call__(self, param):
        """Log the validation metrics in ``param``.

        Parameters
        ----------
        param : BatchEndParam
            The epoch and its validation metric (nothing is logged without one).
        """
        if param.eval_metric is None:
            return
        for name, value in param.eval_metric.get_name_value():
            logging.info("Epoch[%d] Validation-%s=%f", param.epoch, name, value)
