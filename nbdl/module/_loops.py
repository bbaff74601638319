"""The training loop of ``BaseModule.fit`` and how metrics are made."""
import time

from ..errors import ArgumentError
from ._common import as_list, call_batch_end

__all__ = ["create_metric", "train_epochs"]


def create_metric(metric):
    """``metric`` when it already is a metric (it has ``update`` and
    ``get_name_value``: an ``nbdl.metric`` or ``nbdl.gluon.metric`` one),
    else ``nbdl.metric.create(metric)`` (MXNet 1.x's metrics: a name, a
    function or a list of them).

    Parameters
    ----------
    metric : EvalMetric, str, callable or list
        The metric or what names it.
    """
    if hasattr(metric, "update") and hasattr(metric, "get_name_value"):
        return metric
    from .. import metric as _metric
    return _metric.create(metric)


def train_epochs(mod, train_data, eval_data, eval_metric, epoch_end_callback,
                 batch_end_callback, kvstore, optimizer, optimizer_params, eval_end_callback,
                 eval_batch_end_callback, initializer, arg_params, aux_params, allow_missing,
                 force_rebind, force_init, begin_epoch, num_epoch, validation_metric, monitor,
                 sparse_row_id_fn):
    """``BaseModule.fit``'s work (see its parameters): bind, initialize, install
    the optimizer, then train epochs ``begin_epoch .. num_epoch - 1``.  The
    batch-end callbacks' ``locals`` hold ``mod`` as ``self``, as in MXNet.

    Parameters
    ----------
    mod : BaseModule
        The module to train.
    train_data, eval_data, eval_metric, epoch_end_callback, batch_end_callback, kvstore, \
optimizer, optimizer_params, eval_end_callback, eval_batch_end_callback, initializer, \
arg_params, aux_params, allow_missing, force_rebind, force_init, begin_epoch, num_epoch, \
validation_metric, monitor, sparse_row_id_fn
        As for ``BaseModule.fit``.
    """
    self = mod  # noqa: F841  (what MXNet's callbacks find in BatchEndParam.locals)
    if num_epoch is None:
        raise ArgumentError("fit: num_epoch is required (the number of the epoch to stop "
                            "before)")
    mod.bind(data_shapes=train_data.provide_data, label_shapes=train_data.provide_label,
             for_training=True, force_rebind=force_rebind)
    if monitor is not None:
        mod.install_monitor(monitor)
    mod.init_params(initializer=initializer, arg_params=arg_params, aux_params=aux_params,
                    allow_missing=allow_missing, force_init=force_init)
    mod.init_optimizer(kvstore=kvstore, optimizer=optimizer,
                       optimizer_params=optimizer_params)
    if validation_metric is None:
        validation_metric = eval_metric
    eval_metric = create_metric(eval_metric)
    for epoch in range(begin_epoch, num_epoch):
        tic = time.time()
        eval_metric.reset()
        nbatch = 0
        data_iter = iter(train_data)
        end_of_batch = False
        try:
            next_data_batch = next(data_iter)
        except StopIteration:
            raise ArgumentError("fit: train_data yields no batch") from None
        eval_name_vals = []
        while not end_of_batch:
            data_batch = next_data_batch
            if monitor is not None:
                monitor.tic()
            mod.forward_backward(data_batch)
            mod.update()
            mod.update_metric(eval_metric, data_batch.label)
            try:
                next_data_batch = next(data_iter)
                mod.prepare(next_data_batch, sparse_row_id_fn=sparse_row_id_fn)
            except StopIteration:
                end_of_batch = True
            if monitor is not None:
                monitor.toc_print()
            if end_of_batch:
                eval_name_vals = eval_metric.get_global_name_value() \
                    if hasattr(eval_metric, "get_global_name_value") \
                    else eval_metric.get_name_value()
            call_batch_end(batch_end_callback, epoch, nbatch, eval_metric, locals())
            nbatch += 1
        for name, val in eval_name_vals:
            mod.logger.info("Epoch[%d] Train-%s=%f", epoch, name, val)
        mod.logger.info("Epoch[%d] Time cost=%.3f", epoch, time.time() - tic)
        arg_params_, aux_params_ = mod.get_params()
        mod.set_params(arg_params_, aux_params_)
        if epoch_end_callback is not None:
            for callback in as_list(epoch_end_callback):
                callback(epoch, mod.symbol, arg_params_, aux_params_)
        if eval_data is not None:
            res = mod.score(eval_data, validation_metric,
                            score_end_callback=eval_end_callback,
                            batch_end_callback=eval_batch_end_callback, epoch=epoch)
            for name, val in res:
                mod.logger.info("Epoch[%d] Validation-%s=%f", epoch, name, val)
        train_data.reset()
