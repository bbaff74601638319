"""A Module over several contexts: each batch split between executors, the
gradients summed through a KVStore (MXNet's DataParallelExecutorGroup)."""
import numpy as np
import pytest

import nbdl
from nbdl.io import DataBatch, DataDesc, NDArrayIter

from conftest import as_nd, as_np, init_params, mlp

BS = 16
TWO = [nbdl.cpu(0), nbdl.cpu(1)]


def _fit(context, data, work_load_list=None, kvstore="local", epochs=3):
    x, y = data
    mod = nbdl.mod.Module(mlp(), context=context, work_load_list=work_load_list)
    mod.fit(NDArrayIter(x, y, batch_size=BS), num_epoch=epochs, arg_params=as_nd(init_params()),
            kvstore=kvstore, optimizer_params={"learning_rate": 0.3, "momentum": 0.9})
    return mod


@pytest.mark.parametrize("work_load_list", [None, [1, 3]])
def test_several_contexts_train_like_one(data, work_load_list):
    one = as_np(_fit(nbdl.cpu(), data).get_params()[0])
    mod = _fit(TWO, data, work_load_list)
    sizes = [s.stop - s.start for s in mod._exec_group.slices]
    assert sizes == ([8, 8] if work_load_list is None else [4, 12])
    assert mod._exec_group.execs[1].device == nbdl.cpu(1)
    got = as_np(mod.get_params()[0])
    for k in one:
        np.testing.assert_allclose(got[k], one[k], rtol=1e-4, atol=1e-5, err_msg=k)
    for block in mod._exec_group.param_arrays:        # every context holds the same weights
        np.testing.assert_array_equal(block[0].asnumpy(), block[1].asnumpy())
    x, y = data
    single = _fit(nbdl.cpu(), data, epochs=0)
    single.set_params(*mod.get_params())
    it = NDArrayIter(x, y, batch_size=BS)
    np.testing.assert_allclose(mod.predict(it).asnumpy(), single.predict(it).asnumpy(),
                               rtol=1e-5, atol=1e-6)
    assert dict(mod.score(it, "acc")) == pytest.approx(dict(single.score(it, "acc")))


def test_outputs_and_input_grads_are_merged(data):
    x, y = data
    batch = DataBatch([nbdl.nd.array(x[:BS])], [nbdl.nd.array(y[:BS])])
    grads = []
    for context in (nbdl.cpu(), TWO):
        mod = nbdl.mod.Module(mlp(), context=context)
        mod.bind([("data", (BS, 4))], [("softmax_label", (BS,))], inputs_need_grad=True)
        mod.init_params(arg_params=as_nd(init_params()))
        mod.forward_backward(batch)
        grads.append((mod.get_outputs()[0].asnumpy(), mod.get_input_grads()[0].asnumpy()))
    np.testing.assert_allclose(grads[1][0], grads[0][0], rtol=1e-5, atol=1e-6)
    np.testing.assert_allclose(grads[1][1], grads[0][1], rtol=1e-5, atol=1e-6)
    parts = mod.get_outputs(merge_multi_context=False)
    assert [p.shape for p in parts[0]] == [(8, 2), (8, 2)]
    assert [p.shape for p in mod.get_input_grads(merge_multi_context=False)[0]] == [(8, 4)] * 2
    assert mod.output_shapes == [("softmax_output", (BS, 2))]


def test_without_a_kvstore_each_context_steps_on_its_own_gradient(data):
    x, y = data
    batch = DataBatch([nbdl.nd.array(x[:BS])], [nbdl.nd.array(y[:BS])])
    w0 = init_params()
    deltas = {}
    for kv in ("local", None):
        mod = nbdl.mod.Module(mlp(), context=TWO)
        mod.bind([("data", (BS, 4))], [("softmax_label", (BS,))])
        mod.init_params(arg_params=as_nd(w0))
        mod.init_optimizer(kvstore=kv, optimizer_params={"learning_rate": 0.5})
        mod.forward_backward(batch)
        mod.update()
        deltas[kv] = {k: v - w0[k] for k, v in as_np(mod.get_params()[0]).items()}
    block = mod._exec_group.param_arrays[mod._param_names.index("fc2_weight")]
    assert np.abs(block[0].asnumpy() - block[1].asnumpy()).max() > 1e-4   # the copies diverge
    for k in w0:      # get_params averages the copies: half of the summed step
        np.testing.assert_allclose(2 * deltas[None][k], deltas["local"][k], rtol=1e-4,
                                   atol=1e-6)


def test_a_batch_too_small_to_split():
    mod = nbdl.mod.Module(mlp(), context=TWO + [nbdl.cpu(2)])
    with pytest.raises(nbdl.ShapeError, match="cannot be split"):
        mod.bind([("data", (2, 4))], [("softmax_label", (2,))])


def test_bucketing_over_two_contexts():
    def gen(key):
        data = nbdl.sym.Variable("data")
        fc = nbdl.sym.FullyConnected(nbdl.sym.sum(data, axis=1), num_hidden=2, name="fc")
        return nbdl.sym.SoftmaxOutput(fc, name="softmax"), ("data",), ("softmax_label",)
    mod = nbdl.mod.BucketingModule(gen, default_bucket_key=4, context=TWO)
    mod.bind([("data", (BS, 4, 3))], [("softmax_label", (BS,))])
    mod.init_params()
    mod.init_optimizer(optimizer_params={"learning_rate": 0.1})
    rng = np.random.RandomState(0)
    for key in (4, 2):
        x = rng.randn(BS, key, 3).astype(np.float32)
        mod.forward_backward(DataBatch([nbdl.nd.array(x)], [nbdl.nd.zeros((BS,))],
                                       bucket_key=key,
                                       provide_data=[("data", (BS, key, 3))],
                                       provide_label=[("softmax_label", (BS,))]))
        mod.update()
    e2, e4 = mod._buckets[2]._exec_group.execs, mod._buckets[4]._exec_group.execs
    assert all(a.arg_dict["fc_weight"] is b.arg_dict["fc_weight"] for a, b in zip(e2, e4))


def test_a_tnc_layout_splits_and_merges_on_axis_1():
    data = nbdl.sym.Variable("data")
    net = nbdl.sym.Activation(data=data, act_type="relu", __layout__="TNC")
    mod = nbdl.mod.Module(net, label_names=None, context=TWO)
    mod.bind(data_shapes=[DataDesc("data", (3, 8, 2), layout="TNC")], inputs_need_grad=True)
    mod.init_params()
    x = np.random.RandomState(0).randn(3, 8, 2).astype(np.float32)
    mod.forward(DataBatch([nbdl.nd.array(x)]))
    head = np.arange(48, dtype=np.float32).reshape(3, 8, 2)
    mod.backward([nbdl.nd.array(head)])
    assert [p.shape for p in mod.get_outputs(merge_multi_context=False)[0]] == [(3, 4, 2)] * 2
    np.testing.assert_array_equal(mod.get_outputs()[0].asnumpy(), np.maximum(x, 0))
    np.testing.assert_array_equal(mod.get_input_grads()[0].asnumpy(), head * (x > 0))
    assert mod.output_shapes == [(net.list_outputs()[0], (3, 8, 2))]
