"""nbdl.callback: Speedometer, do_checkpoint, log_train_metric, ProgressBar,
LogValidationMetricsCallback with a duck-typed metric."""
import logging
import os
import re

import numpy as np
import pytest

import nbdl
from nbdl import callback, model
from nbdl.callback import BatchEndParam


class Metric:
    """A stand-in metric: get_name_value() and reset(), counting resets."""

    def __init__(self, pairs):
        self.pairs = pairs
        self.resets = 0

    def get_name_value(self):
        return list(self.pairs)

    def reset(self):
        self.resets += 1


class LocalMetric(Metric):
    def __init__(self, pairs):
        super().__init__(pairs)
        self.local_resets = 0

    def reset_local(self):
        self.local_resets += 1


def messages(caplog):
    return [r.getMessage() for r in caplog.records]


@pytest.fixture
def clock(monkeypatch):
    """time.time() under the test's control."""
    now = [1000.0]
    monkeypatch.setattr(callback.time, "time", lambda: now[0])
    return now


def test_batch_end_param_is_mxnets_namedtuple():
    p = BatchEndParam(epoch=1, nbatch=2, eval_metric=None, locals={"a": 1})
    assert p == (1, 2, None, {"a": 1}) and p.nbatch == 2
    assert type(p).__name__ == "BatchEndParams" and model.BatchEndParam is BatchEndParam


def test_speedometer_logs_speed_and_metrics(caplog, clock):
    metric = Metric([("accuracy", 0.5), ("ce", 1.25)])
    speed = callback.Speedometer(batch_size=4, frequent=2)
    with caplog.at_level(logging.INFO):
        for nbatch in range(5):
            speed(BatchEndParam(0, nbatch, metric, None))
            clock[0] += 0.5
    # the clock starts at batch 0; batches 2 and 4 log 2 * 4 samples per 1 s
    assert messages(caplog) == [
        "Epoch[0] Batch [0-2]\tSpeed: 8.00 samples/sec\taccuracy=0.500000\tce=1.250000",
        "Epoch[0] Batch [2-4]\tSpeed: 8.00 samples/sec\taccuracy=0.500000\tce=1.250000"]
    assert metric.resets == 2


def test_speedometer_without_auto_reset_and_new_epoch(caplog, clock):
    metric = LocalMetric([("acc", 0.25)])
    speed = callback.Speedometer(2, frequent=1, auto_reset=False)
    with caplog.at_level(logging.INFO):
        for epoch, nbatch in [(0, 0), (0, 1), (0, 2), (1, 0), (1, 1)]:
            speed(BatchEndParam(epoch, nbatch, metric, None))
            clock[0] += 0.25
    assert messages(caplog) == ["Epoch[0] Batch [0-1]\tSpeed: 8.00 samples/sec\tacc=0.250000",
                                "Epoch[0] Batch [0-2]\tSpeed: 8.00 samples/sec\tacc=0.250000",
                                "Epoch[1] Batch [0-1]\tSpeed: 8.00 samples/sec\tacc=0.250000"]
    assert metric.resets == metric.local_resets == 0


def test_speedometer_without_metric(caplog, clock):
    speed = callback.Speedometer(10, frequent=3)
    with caplog.at_level(logging.INFO):
        for nbatch in range(4):
            speed(BatchEndParam(2, nbatch, None, None))
            clock[0] += 1.0
    assert messages(caplog) == ["Iter[2] Batch [3]\tSpeed: 10.00 samples/sec"]


def test_speedometer_prefers_reset_local(clock):
    metric = LocalMetric([("acc", 1.0)])
    speed = callback.Speedometer(1, frequent=1)
    speed(BatchEndParam(0, 0, metric, None))
    clock[0] += 1
    speed(BatchEndParam(0, 1, metric, None))
    assert (metric.local_resets, metric.resets) == (1, 0)


def test_log_train_metric(caplog):
    metric = Metric([("mse", 0.125)])
    cb = callback.log_train_metric(period=2, auto_reset=True)
    with caplog.at_level(logging.INFO):
        for nbatch in range(5):
            cb(BatchEndParam(3, nbatch, metric, None))
    assert messages(caplog) == ["Iter[3] Batch[%d] Train-mse=0.125000" % i for i in (0, 2, 4)]
    assert metric.resets == 3


def test_progress_bar_and_validation_log(caplog):
    bar = callback.ProgressBar(total=4, length=8)
    val = callback.LogValidationMetricsCallback()
    with caplog.at_level(logging.INFO):
        bar(BatchEndParam(0, 2, None, None))
        bar(BatchEndParam(0, 4, None, None))
        val(BatchEndParam(5, 0, Metric([("acc", 0.75), ("f1", 0.5)]), None))
        val(BatchEndParam(5, 0, None, None))
    assert messages(caplog) == ["[====----] 50%\r", "[========] 100%\r",
                                "Epoch[5] Validation-acc=0.750000",
                                "Epoch[5] Validation-f1=0.500000"]


def small_net():
    data = nbdl.sym.var("data")
    net = nbdl.sym.FullyConnected(data, num_hidden=3, name="fc")
    return nbdl.sym.SoftmaxOutput(net, name="softmax")


def test_do_checkpoint_writes_loadable_files(tmp_path, rng, caplog):
    net = small_net()
    args = {"fc_weight": nbdl.nd.array(rng.randn(3, 4)), "fc_bias": nbdl.nd.array(rng.randn(3))}
    aux = {"moving": nbdl.nd.array(rng.randn(2))}
    prefix = str(tmp_path / "net")
    cb = callback.do_checkpoint(prefix, period=2)
    with caplog.at_level(logging.INFO):
        for epoch in range(4):
            cb(epoch, net, args, aux)
    assert sorted(os.listdir(tmp_path)) == ["net-0002.params", "net-0004.params",
                                            "net-symbol.json"]
    assert any(re.search(r'Saved checkpoint to ".*net-0004.params"', m) for m in messages(caplog))
    sym, arg_params, aux_params = model.load_checkpoint(prefix, 4)
    assert sym.list_arguments() == net.list_arguments()
    assert sorted(arg_params) == ["fc_bias", "fc_weight"] and sorted(aux_params) == ["moving"]
    np.testing.assert_array_equal(arg_params["fc_weight"].asnumpy(), args["fc_weight"].asnumpy())
    np.testing.assert_array_equal(aux_params["moving"].asnumpy(), aux["moving"].asnumpy())
    every = callback.do_checkpoint(str(tmp_path / "every"), period=0)  # < 1 counts as 1
    every(0, net, args, aux)
    assert os.path.exists(tmp_path / "every-0001.params")


def test_module_checkpoint_calls_the_module():
    calls = []

    class Mod:
        def save_checkpoint(self, prefix, epoch, save_optimizer_states):
            calls.append((prefix, epoch, save_optimizer_states))

    cb = callback.module_checkpoint(Mod(), "p", period=3, save_optimizer_states=True)
    for epoch in range(7):
        cb(epoch)
    assert calls == [("p", 3, True), ("p", 6, True)]
    with pytest.raises(nbdl.ArgumentError, match="save_checkpoint"):
        callback.module_checkpoint(object(), "p")


def test_bad_arguments():
    with pytest.raises(nbdl.ArgumentError, match="Speedometer: batch_size must be a positive"):
        callback.Speedometer(0)
    with pytest.raises(nbdl.ArgumentError, match="Speedometer: frequent must be a positive"):
        callback.Speedometer(2, frequent=0)
    with pytest.raises(nbdl.ArgumentError, match="log_train_metric: period"):
        callback.log_train_metric(0)
    with pytest.raises(nbdl.ArgumentError, match="ProgressBar: total"):
        callback.ProgressBar(0)
    with pytest.raises(nbdl.ArgumentError, match="do_checkpoint: period"):
        callback.do_checkpoint("p", period="2")


def test_speedometer_with_nbdl_accuracy(caplog, clock):
    acc = nbdl.gluon.metric.Accuracy()
    speed = callback.Speedometer(batch_size=4, frequent=1)
    preds = nbdl.nd.array([[0.1, 0.9], [0.8, 0.2], [0.3, 0.7], [0.6, 0.4]])
    with caplog.at_level(logging.INFO):
        for nbatch, labels in enumerate([[1, 0, 1, 0], [0, 0, 0, 0]]):
            acc.update([nbdl.nd.array(labels)], [preds])
            speed(BatchEndParam(0, nbatch, acc, None))
            clock[0] += 2.0
    # batch 0 starts the clock; batch 1 logs (4 + 2) / 8 correct, then resets the local counts
    assert messages(caplog) == ["Epoch[0] Batch [0-1]\tSpeed: 2.00 samples/sec\taccuracy=0.750000"]
    assert acc.num_inst == 0 and acc.get_global_name_value() == [("accuracy", 0.75)]
