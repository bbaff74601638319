"""BucketingModule: one module per bucket key, all training the default
bucket's parameters."""
import numpy as np
import pytest

import nbdl
from nbdl.io import DataBatch, DataDesc

BS, DIM = 4, 3


def sym_gen(key):
    data = nbdl.sym.Variable("data")
    pooled = nbdl.sym.sum(data, axis=1)                      # (BS, key, DIM) -> (BS, DIM)
    fc = nbdl.sym.FullyConnected(pooled, num_hidden=2, name="fc")
    return nbdl.sym.SoftmaxOutput(fc, name="softmax"), ("data",), ("softmax_label",)


def batch(key, rng):
    x = rng.randn(BS, key, DIM).astype(np.float32)
    y = (x.sum(1)[:, 0] > 0).astype(np.float32)
    return DataBatch([nbdl.nd.array(x)], [nbdl.nd.array(y)], bucket_key=key,
                     provide_data=[DataDesc("data", (BS, key, DIM))],
                     provide_label=[DataDesc("softmax_label", (BS,))])


def numpy_step(w, b, x, y, lr):
    s = x.sum(1)
    z = s @ w.T + b
    p = np.exp(z - z.max(1, keepdims=True))
    p /= p.sum(1, keepdims=True)
    p[np.arange(BS), y.astype(int)] -= 1
    return w - lr * (p.T @ s) / BS, b - lr * p.sum(0) / BS


def test_two_buckets_train_shared_weights():
    rng = np.random.RandomState(0)
    w0 = rng.randn(2, DIM).astype(np.float32) * 0.1
    b0 = np.zeros(2, np.float32)
    mod = nbdl.mod.BucketingModule(sym_gen, default_bucket_key=5)
    mod.bind(data_shapes=[("data", (BS, 5, DIM))], label_shapes=[("softmax_label", (BS,))])
    mod.init_params(arg_params={"fc_weight": nbdl.nd.array(w0), "fc_bias": nbdl.nd.array(b0)})
    mod.init_optimizer(optimizer_params={"learning_rate": 0.5})
    w, b = w0.astype(np.float64), b0.astype(np.float64)
    for key in (5, 2, 2, 5, 2):
        bt = batch(key, rng)
        mod.forward_backward(bt)
        mod.update()
        assert mod.symbol is mod._buckets[key].symbol
        assert mod.get_outputs()[0].shape == (BS, 2)
        w, b = numpy_step(w, b, bt.data[0].asnumpy(), bt.label[0].asnumpy(), 0.5)
    assert sorted(mod._buckets) == [2, 5]
    arg, aux = mod.get_params()
    np.testing.assert_allclose(arg["fc_weight"].asnumpy(), w, rtol=1e-4, atol=1e-6)
    np.testing.assert_allclose(arg["fc_bias"].asnumpy(), b, rtol=1e-4, atol=1e-6)
    a2 = mod._buckets[2]._exec_group.executor.arg_dict["fc_weight"]
    a5 = mod._buckets[5]._exec_group.executor.arg_dict["fc_weight"]
    assert a2 is a5                                   # one array, not copies
    assert mod._buckets[2]._updater is mod._buckets[5]._updater
    assert mod.data_shapes[0].shape == (BS, 2, DIM)


def test_bucketing_fit_score_and_switch():
    rng = np.random.RandomState(1)
    batches = [batch(k, rng) for k in (3, 6, 3, 6)]

    class Iter:
        provide_data = batches[1].provide_data
        provide_label = batches[1].provide_label

        def reset(self):
            pass

        def __iter__(self):
            return iter(batches)
    mod = nbdl.mod.BucketingModule(sym_gen, default_bucket_key=6)
    mod.fit(Iter(), num_epoch=3, optimizer_params={"learning_rate": 0.3})
    assert sorted(mod._buckets) == [3, 6]
    acc = dict(mod.score(Iter(), "acc"))["accuracy"]
    assert 0.0 <= acc <= 1.0
    mod.switch_bucket(3, None)
    assert mod.data_shapes[0].shape == (BS, 3, DIM)
    with pytest.raises(nbdl.mod.ModuleError, match="not bound yet"):
        mod.switch_bucket(9, None)


def test_bucket_with_a_parameter_the_default_lacks():
    def gen(key):
        data = nbdl.sym.Variable("data")
        out = nbdl.sym.FullyConnected(nbdl.sym.sum(data, axis=1), num_hidden=2, name="fc")
        if key == 2:
            out = nbdl.sym.FullyConnected(out, num_hidden=2, name="extra")
        return nbdl.sym.SoftmaxOutput(out, name="softmax"), ("data",), ("softmax_label",)
    mod = nbdl.mod.BucketingModule(gen, default_bucket_key=5)
    mod.bind(data_shapes=[("data", (BS, 5, DIM))], label_shapes=[("softmax_label", (BS,))])
    mod.init_params()
    with pytest.raises(nbdl.mod.ModuleError, match="extra_weight"):
        mod.forward(batch(2, np.random.RandomState(0)))


def test_bucketing_errors():
    with pytest.raises(nbdl.ArgumentError, match="default_bucket_key"):
        nbdl.mod.BucketingModule(sym_gen)
    mod = nbdl.mod.BucketingModule(sym_gen, default_bucket_key=4)
    assert mod.data_names == ["data"] or list(mod.data_names) == ["data"]
    with pytest.raises(nbdl.mod.ModuleError, match="bind"):
        mod.forward(batch(4, np.random.RandomState(0)))
    with pytest.raises(nbdl.ArgumentError, match="sym_gen"):
        nbdl.mod.BucketingModule(lambda k: None, default_bucket_key=1)


def test_grad_req_add_accumulates_across_buckets():
    def gen(key):
        data = nbdl.sym.Variable("data")
        scale = nbdl.sym.Variable("a", shape=(1,), init=nbdl.init.One())
        return nbdl.sym.broadcast_mul(data, scale), ("data",), None

    def step(mod, key):
        mod.forward_backward(DataBatch([nbdl.nd.ones((2,)) * 3], None, bucket_key=key,
                                       provide_data=[DataDesc("data", (2,), layout="N")]))
        return mod._curr_module._exec_group.execs[0].grad_dict["a"].asnumpy()[0]
    for req, second in (("write", 6.0), ("add", 12.0)):
        mod = nbdl.mod.BucketingModule(gen, default_bucket_key=10)
        mod.bind(data_shapes=[("data", (2,))], grad_req=req)
        mod.init_params()
        assert mod.get_params()[0]["a"].asnumpy()[0] == 1.0       # the variable's own init
        assert step(mod, 10) == 6.0
        assert step(mod, 5) == second                              # one shared gradient array


def test_save_checkpoint_and_load(tmp_path):
    rng = np.random.RandomState(2)
    mod = nbdl.mod.BucketingModule(sym_gen, default_bucket_key=5)
    mod.bind(data_shapes=[("data", (BS, 5, DIM))], label_shapes=[("softmax_label", (BS,))])
    mod.init_params()
    mod.init_optimizer(optimizer_params={"learning_rate": 0.5})
    batches = {k: batch(k, rng) for k in (5, 3)}
    for k in (5, 3, 5):
        mod.forward_backward(batches[k])
        mod.update()
    prefix = str(tmp_path / "bk")
    mod.save_checkpoint(prefix, 7)
    assert (tmp_path / "bk-3-symbol.json").exists() and (tmp_path / "bk.buckets").exists()
    assert sorted(nbdl.model.load_params(prefix, 7)[0]) == ["fc_bias", "fc_weight"]
    back = nbdl.mod.BucketingModule.load(prefix, 7, sym_gen=sym_gen, default_bucket_key=5)
    back.bind(data_shapes=[("data", (BS, 5, DIM))], label_shapes=[("softmax_label", (BS,))],
              for_training=False)
    for k in (5, 3):
        mod.forward(batches[k], is_train=False)
        back.forward(batches[k], is_train=False)
        np.testing.assert_array_equal(back.get_outputs()[0].asnumpy(),
                                      mod.get_outputs()[0].asnumpy())
    with pytest.raises(nbdl.ArgumentError, match="default_bucket_key"):
        nbdl.mod.BucketingModule.load(prefix, 7, sym_gen=sym_gen, default_bucket_key=4)
    with pytest.raises(nbdl.mod.ModuleError, match="empty"):
        nbdl.mod.BucketingModule(sym_gen, default_bucket_key=5).save_checkpoint(prefix, 1)
