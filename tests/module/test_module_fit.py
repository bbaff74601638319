"""Module.fit / score / predict against a hand-written executor loop and
numpy references."""
import logging

import numpy as np
import pytest

import nbdl
from nbdl.io import NDArrayIter

from conftest import as_nd, as_np, init_params, mlp, np_forward

BS = 16


def executor_loop(x, y, params, lr, epochs, momentum=0.0):
    """Plain nbdl executor + numpy SGD over the batches NDArrayIter(pad) gives."""
    exe = nbdl.simple_bind(mlp(), nbdl.cpu(), data=(BS, x.shape[1]), softmax_label=(BS,))
    exe.copy_params_from(as_nd(params))
    moms = {k: np.zeros_like(v) for k, v in params.items()}
    losses = []
    n = len(x)
    for _ in range(epochs):
        for start in range(0, n, BS):
            idx = np.arange(start, start + BS) % n      # 'pad' wraps to the start
            xb, yb = x[idx], y[idx]
            out = exe.forward(is_train=True, data=xb, softmax_label=yb)[0].asnumpy()
            losses.append(-np.log(out[np.arange(BS), yb.astype(int)]).mean())
            exe.backward()
            for k in params:
                w, g = exe.arg_dict[k], exe.grad_dict[k].asnumpy() * np.float32(1.0 / BS)
                if momentum:
                    moms[k] = np.float32(momentum) * moms[k] - np.float32(lr) * g
                    w[:] = w.asnumpy() + moms[k]
                else:
                    w[:] = w.asnumpy() - np.float32(lr) * g
    return {k: exe.arg_dict[k].asnumpy() for k in params}, losses


def test_fit_equals_executor_loop_and_learns(data):
    x, y = data
    params = init_params()
    it = NDArrayIter(x, y, batch_size=BS, last_batch_handle="pad")
    mod = nbdl.mod.Module(mlp(), context=nbdl.cpu())
    losses = []

    def record(param):
        out = param.locals["self"].get_outputs()[0].asnumpy()
        lab = param.locals["data_batch"].label[0].asnumpy().astype(int)
        losses.append(-np.log(out[np.arange(len(lab)), lab]).mean())
    epochs = []
    mod.fit(it, num_epoch=6, optimizer="sgd", optimizer_params={"learning_rate": 0.3},
            arg_params=as_nd(params), batch_end_callback=record,
            epoch_end_callback=lambda e, s, a, x_: epochs.append(e))
    assert epochs == list(range(6))
    ref, ref_losses = executor_loop(x, y, params, 0.3, 6)
    got = as_np(mod.get_params()[0])
    for k in ref:
        np.testing.assert_allclose(got[k], ref[k], rtol=1e-5, atol=1e-6, err_msg=k)
    np.testing.assert_allclose(losses, ref_losses, rtol=1e-5, atol=1e-6)
    assert losses[-1] < losses[0] / 3
    acc = dict(mod.score(NDArrayIter(x, y, batch_size=BS), "acc"))["accuracy"]
    assert acc > 0.95
    assert mod._optimizer.rescale_grad == pytest.approx(1.0 / BS)


def test_fit_logs_train_and_validation_metrics(data, caplog):
    x, y = data
    it = NDArrayIter(x, y, batch_size=BS)
    val = NDArrayIter(x[:32], y[:32], batch_size=BS)
    mod = nbdl.mod.Module(mlp())
    with caplog.at_level(logging.INFO):
        mod.fit(it, eval_data=val, num_epoch=2, arg_params=as_nd(init_params()),
                optimizer_params=(("learning_rate", 0.1),))
    text = caplog.text
    assert "Epoch[0] Train-accuracy=" in text and "Epoch[1] Validation-accuracy=" in text


def test_fit_requires_num_epoch(data):
    x, y = data
    with pytest.raises(nbdl.ArgumentError, match="num_epoch"):
        nbdl.mod.Module(mlp()).fit(NDArrayIter(x, y, batch_size=BS))


def _bound(params=None, for_training=False, **kw):
    mod = nbdl.mod.Module(mlp(), **kw)
    mod.bind(data_shapes=[("data", (BS, 4))], label_shapes=[("softmax_label", (BS,))],
             for_training=for_training)
    mod.init_params(arg_params=as_nd(params or init_params()))
    return mod


def test_predict_drops_the_pad_and_score_counts_it(data):
    x, y = data                       # 100 rows: 6 full batches and one with pad 12
    params = init_params()
    mod = _bound(params)
    it = NDArrayIter(x, y, batch_size=BS, last_batch_handle="pad")
    ref = np_forward(params, x)
    out = mod.predict(it)
    assert out.shape == (100, 2)
    np.testing.assert_allclose(out.asnumpy(), ref, rtol=1e-5, atol=1e-6)
    batches = mod.predict(it, merge_batches=False)
    assert len(batches) == 7 and batches[-1][0].shape == (4, 2) and batches[0][0].shape == (BS, 2)
    assert isinstance(mod.predict(it, always_output_list=True), list)
    assert len(mod.predict(it, num_batch=2, merge_batches=False)) == 2
    seen = [(o[0].shape[0], i, b.pad) for o, i, b in mod.iter_predict(it)]
    assert seen[-1] == (4, 6, 12) and seen[0] == (BS, 0, 0)
    # score includes the padded rows of the last batch, as MXNet does
    idx = np.arange(112) % 100
    expect = (ref[idx].argmax(1) == y[idx]).mean()
    assert dict(mod.score(it, "acc"))["accuracy"] == pytest.approx(expect)
    ends = []
    mod.score(it, "acc", num_batch=3, batch_end_callback=lambda p: ends.append(p.nbatch),
              score_end_callback=lambda p: ends.append(("end", p.nbatch)))
    assert ends == [0, 1, 2, ("end", 3)]


def test_predict_an_array_of_another_batch_size(data):
    x, _ = data
    params = init_params()
    mod = _bound(params)
    out = mod.predict(x[:5])
    assert out.shape == (5, 2)
    np.testing.assert_allclose(out.asnumpy(), np_forward(params, x[:5]), rtol=1e-5, atol=1e-6)
    assert mod.data_shapes[0].shape == (5, 4)
    with pytest.raises(nbdl.ArgumentError, match="DataIter"):
        mod.predict([1, 2, 3])


def test_forward_with_a_smaller_batch_rebinds_keeping_params(data):
    x, y = data
    params = init_params()
    mod = _bound(params, for_training=True)
    mod.forward(nbdl.io.DataBatch([nbdl.nd.array(x[:3])], [nbdl.nd.array(y[:3])]))
    assert mod.get_outputs()[0].shape == (3, 2)
    assert mod.output_shapes == [("softmax_output", (3, 2))]
    np.testing.assert_allclose(mod.get_outputs()[0].asnumpy(), np_forward(params, x[:3]),
                               rtol=1e-5, atol=1e-6)
    mod.backward()
    mod.reshape([("data", (BS, 4))], [("softmax_label", (BS,))])
    assert mod.data_shapes[0].shape == (BS, 4)
