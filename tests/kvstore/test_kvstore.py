"""nbdl.kvstore: init/push/pull/pushpull/broadcast against numpy sums, int
and str keys, optimizer updates in the store against the optimizer applied
by hand, save/load of the optimizer states, 2-bit compression, errors."""
import json

import numpy as np
import pytest

import nbdl
from nbdl import kvstore
from nbdl import optimizer as opt
from nbdl.errors import NbdlError, ShapeError
from nbdl.kvstore import KVStoreError

SHAPE = (3, 4)


def _rand(rng, shape=SHAPE):
    return rng.randn(*shape).astype(np.float32)


@pytest.fixture
def rng():
    return np.random.RandomState(7)


def test_nbdl_kv_is_kvstore_and_types():
    assert nbdl.kv is nbdl.kvstore
    for name in kvstore.LOCAL_TYPES:
        kv = nbdl.kv.create(name)
        assert kv.type == name and kv.rank == 0 and kv.num_workers == 1
    assert nbdl.kv.create().type == "local"
    assert nbdl.kv.create("Device").type == "device"
    kv = nbdl.kv.create()
    assert kv.is_capable("optimizer") is True
    assert kv._barrier() is None and kv.barrier() is None
    with pytest.raises(KVStoreError, match="unknown capability 'sparse'"):
        kv.is_capable("sparse")


@pytest.mark.parametrize("name", ["byteps", "p3", "dist_foo"])
def test_unknown_distributed_types_are_refused(name):
    # dist_sync & co. are nbdl.kvstore.dist's (tests/distributed)
    with pytest.raises(KVStoreError, match=rf"create\('{name}'\).*dist_sync, dist_device_sync"):
        nbdl.kv.create(name)


def test_unknown_type_and_bad_name():
    with pytest.raises(KVStoreError, match="unknown kvstore type 'foo'.*local, device"):
        nbdl.kv.create("foo")
    with pytest.raises(KVStoreError, match="name must be a string"):
        nbdl.kv.create(3)


@pytest.mark.parametrize("kv_type", ["local", "device"])
@pytest.mark.parametrize("key", [3, "w"])
def test_push_sums_the_values_of_each_device(rng, kv_type, key):
    kv = nbdl.kv.create(kv_type)
    init = _rand(rng)
    kv.init(key, nbdl.nd.array(init))
    out = nbdl.nd.zeros(SHAPE)
    kv.pull(key, out=out)
    np.testing.assert_array_equal(out.asnumpy(), init)
    devs = [nbdl.cpu(i) for i in range(4)]
    vals = [_rand(rng) for _ in devs]
    kv.push(key, [nbdl.nd.array(v, ctx=d) for v, d in zip(vals, devs)])
    outs = [nbdl.nd.zeros(SHAPE, ctx=d) for d in devs]
    kv.pull(key, out=outs)
    for o, d in zip(outs, devs):
        assert o.context == d
        np.testing.assert_allclose(o.asnumpy(), np.sum(vals, axis=0), rtol=1e-6)
    # without an updater a push replaces the value (it does not accumulate)
    one = _rand(rng)
    kv.push(key, nbdl.nd.array(one))
    kv.pull(key, out=out)
    np.testing.assert_array_equal(out.asnumpy(), one)


def test_list_of_keys_forms(rng):
    kv = nbdl.kv.create("device")
    keys = [5, 7, 11]
    inits = [_rand(rng) for _ in keys]
    kv.init(keys, [nbdl.nd.array(v) for v in inits])
    outs = [nbdl.nd.zeros(SHAPE) for _ in keys]
    kv.pull(keys, out=outs)
    for o, v in zip(outs, inits):
        np.testing.assert_array_equal(o.asnumpy(), v)
    # one value per key, and a list of device values per key
    vals = [[_rand(rng) for _ in range(3)] for _ in keys]
    kv.push(keys, [[nbdl.nd.array(v, ctx=nbdl.cpu(i)) for i, v in enumerate(per)]
                   for per in vals])
    outs = [[nbdl.nd.zeros(SHAPE, ctx=nbdl.cpu(i)) for i in range(2)] for _ in keys]
    kv.pull(keys, out=outs)
    for per_key, per in zip(outs, vals):
        for o in per_key:
            np.testing.assert_allclose(o.asnumpy(), np.sum(per, axis=0), rtol=1e-6)
    # a key repeated in one push: its values are summed together
    a, b = _rand(rng), _rand(rng)
    kv.push([5, 5], [nbdl.nd.array(a), nbdl.nd.array(b)])
    out = nbdl.nd.zeros(SHAPE)
    kv.pull(5, out=out)
    np.testing.assert_allclose(out.asnumpy(), a + b, rtol=1e-6)


def test_str_keys_and_pushpull_and_broadcast(rng):
    kv = nbdl.kv.create()
    kv.init(["b", "c"], [nbdl.nd.zeros(SHAPE), nbdl.nd.zeros(SHAPE)])
    vals = [_rand(rng), _rand(rng)]
    out = nbdl.nd.zeros(SHAPE)
    kv.pushpull("b", [nbdl.nd.array(v) for v in vals], out=out)
    np.testing.assert_allclose(out.asnumpy(), vals[0] + vals[1], rtol=1e-6)
    # without out, the result is written back into the values
    inplace = [nbdl.nd.array(v) for v in vals]
    kv.pushpull("c", inplace)
    for x in inplace:
        np.testing.assert_allclose(x.asnumpy(), vals[0] + vals[1], rtol=1e-6)
    src = _rand(rng)
    outs = [nbdl.nd.zeros(SHAPE, ctx=nbdl.cpu(i)) for i in range(3)]
    kv.broadcast("d", nbdl.nd.array(src), out=outs)
    for o in outs:
        np.testing.assert_array_equal(o.asnumpy(), src)
    with pytest.raises(KVStoreError, match="duplicate init of key 'd'"):
        kv.broadcast("d", nbdl.nd.array(src), out=outs)


def test_pull_casts_to_the_output_dtype_and_push_to_the_stored_dtype(rng):
    kv = nbdl.kv.create()
    kv.init(0, nbdl.nd.zeros((2,), dtype=np.float32))
    kv.push(0, nbdl.nd.array([1.5, 2.25], dtype=np.float64))
    out = nbdl.nd.zeros((2,), dtype=np.float64)
    kv.pull(0, out=out)
    assert out.dtype == np.float64
    np.testing.assert_array_equal(out.asnumpy(), [1.5, 2.25])


def test_user_updater_gets_key_pushed_sum_and_stored_value(rng):
    seen = []

    def updater(key, recv, stored):
        seen.append((key, recv.asnumpy().copy()))
        stored += recv * 2

    kv = nbdl.kv.create()
    kv.init(3, nbdl.nd.ones(SHAPE))
    kv._set_updater(updater)
    vals = [_rand(rng), _rand(rng)]
    for _ in range(3):
        kv.push(3, [nbdl.nd.array(v) for v in vals])
    out = nbdl.nd.zeros(SHAPE)
    kv.pull(3, out=out)
    np.testing.assert_allclose(out.asnumpy(), 1 + 3 * 2 * (vals[0] + vals[1]), rtol=1e-5)
    assert [k for k, _ in seen] == [3, 3, 3]
    np.testing.assert_allclose(seen[0][1], vals[0] + vals[1], rtol=1e-6)
    with pytest.raises(KVStoreError, match="updater must be callable"):
        kv._set_updater(5)


def _ref_sgd_momentum(w, grads, lr, mom, wd):
    w, m = w.astype(np.float64), np.zeros_like(w, dtype=np.float64)
    for g in grads:
        m = mom * m - lr * wd * w - lr * g
        w = w + m
    return w


def test_set_optimizer_updates_on_push_as_the_optimizer_by_hand(rng):
    kv = nbdl.kv.create("device")
    w0 = _rand(rng)
    kv.init("w", nbdl.nd.array(w0))
    kv.set_optimizer(opt.SGD(learning_rate=0.1, momentum=0.9, wd=0.01))
    pushes = [[_rand(rng) for _ in range(2)] for _ in range(3)]
    for per in pushes:
        kv.push("w", [nbdl.nd.array(g, ctx=nbdl.cpu(i)) for i, g in enumerate(per)])
    out = nbdl.nd.zeros(SHAPE)
    kv.pull("w", out=out)
    # the same optimizer applied by hand to the summed gradients
    hand = opt.SGD(learning_rate=0.1, momentum=0.9, wd=0.01)
    w = nbdl.nd.array(w0)
    state = hand.create_state(0, w)
    for per in pushes:
        hand.update(0, w, nbdl.nd.array(per[0] + per[1]), state)
    np.testing.assert_allclose(out.asnumpy(), w.asnumpy(), rtol=1e-6)
    np.testing.assert_allclose(out.asnumpy(), _ref_sgd_momentum(w0, [p[0] + p[1] for p in pushes],
                                                                0.1, 0.9, 0.01), rtol=1e-5)
    assert kv._updater.optimizer.num_update == 3
    with pytest.raises(KVStoreError, match="expected an nbdl.optimizer.Optimizer"):
        kv.set_optimizer("sgd")


def _adam_store(rng, keys):
    kv = nbdl.kv.create()
    for k in keys:
        kv.init(k, nbdl.nd.array(_rand(rng)))
    kv.set_optimizer(opt.Adam(learning_rate=0.05))
    for _ in range(2):
        kv.push(keys, [nbdl.nd.array(_rand(rng)) for _ in keys])
    return kv


def _pull_all(kv, keys):
    outs = [nbdl.nd.zeros(SHAPE) for _ in keys]
    kv.pull(keys, out=outs)
    return [o.asnumpy() for o in outs]


@pytest.mark.parametrize("dump_optimizer", [False, True])
def test_save_load_optimizer_states_round_trip(rng, tmp_path, dump_optimizer):
    keys = [1, 2]
    kv = _adam_store(rng, keys)
    fname = str(tmp_path / "kv.states")
    kv.save_optimizer_states(fname, dump_optimizer=dump_optimizer)
    with np.load(fname, allow_pickle=False) as npz:          # readable without pickle
        header = json.loads(npz["__header__"].tobytes())
    assert header["format"] == "nbdl-updater-states"
    assert (header["optimizer"] is not None) == dump_optimizer
    # a second store with the same weights but fresh states, then loaded
    kv2 = nbdl.kv.create()
    kv2.init(keys, [nbdl.nd.array(w) for w in _pull_all(kv, keys)])
    kv2.set_optimizer(opt.Adam(learning_rate=0.05))
    kv2._updater.optimizer.num_update = kv._updater.optimizer.num_update
    kv2._updater.optimizer._index_update_count = dict(kv._updater.optimizer._index_update_count)
    kv2.load_optimizer_states(fname)
    if dump_optimizer:
        assert kv2._updater.optimizer is not kv._updater.optimizer
        assert kv2._updater.optimizer.num_update == 2
    grads = [_rand(rng) for _ in keys]
    for store in (kv, kv2):
        store.push(keys, [nbdl.nd.array(g) for g in grads])
    for a, b in zip(_pull_all(kv, keys), _pull_all(kv2, keys)):
        np.testing.assert_allclose(b, a, rtol=1e-6)


def test_load_of_a_corrupted_file_leaves_the_store_unchanged(rng, tmp_path):
    kv = _adam_store(rng, [1])
    before = {k: [a.asnumpy() for a in s] for k, s in kv._updater.states.items()}
    bad = tmp_path / "bad.states"
    bad.write_bytes(b"not a state file")
    with pytest.raises(NbdlError, match="bad.states.*not a readable"):
        kv.load_optimizer_states(str(bad))
    with pytest.raises(KVStoreError, match="cannot read"):
        kv.load_optimizer_states(str(tmp_path / "missing.states"))
    for k, s in kv._updater.states.items():
        for a, b in zip(s, before[k]):
            np.testing.assert_array_equal(a.asnumpy(), b)


def test_optimizer_states_need_an_optimizer(tmp_path):
    kv = nbdl.kv.create()
    with pytest.raises(KVStoreError, match="no optimizer is set; call set_optimizer"):
        kv.save_optimizer_states(str(tmp_path / "x"))
    kv._set_updater(lambda k, r, s: None)
    with pytest.raises(KVStoreError, match="plain function"):
        kv.load_optimizer_states(str(tmp_path / "x"))


def test_two_bit_compression_keeps_residuals_per_device():
    kv = nbdl.kv.create("device")
    kv.set_gradient_compression({"type": "2bit", "threshold": 0.5})
    kv.init(1, nbdl.nd.zeros((4,)))
    g = np.array([0.3, 0.7, -0.9, 0.1], np.float32)
    residual = [np.zeros(4, np.float32), np.zeros(4, np.float32)]

    def quantize(x):
        return np.where(x >= 0.5, 0.5, np.where(x <= -0.5, -0.5, 0.0)).astype(np.float32)

    out = nbdl.nd.zeros((4,))
    for devices in (2, 2, 1):
        expected = np.zeros(4, np.float32)
        for i in range(devices):
            total = g + residual[i]
            q = quantize(total)
            residual[i] = total - q
            expected += q
        kv.push(1, [nbdl.nd.array(g, ctx=nbdl.cpu(i)) for i in range(devices)])
        kv.pull(1, out=out)
        np.testing.assert_allclose(out.asnumpy(), expected, atol=1e-7)
    # what MXNet 1.9.1 gives for these pushes
    np.testing.assert_allclose(out.asnumpy(), [0.0, 0.5, -0.5, 0.0])


def test_gradient_compression_errors():
    with pytest.raises(KVStoreError, match="not supported for kvstore type 'local'"):
        nbdl.kv.create("local").set_gradient_compression({"type": "2bit"})
    kv = nbdl.kv.create("device")
    with pytest.raises(NbdlError, match="unknown type of gradient compression '1bit'"):
        kv.set_gradient_compression({"type": "1bit"})
    with pytest.raises(NbdlError, match="has no 'type'"):
        kv.set_gradient_compression({"threshold": 1})
    with pytest.raises(NbdlError, match="threshold must be a number greater than 0, got -1"):
        kv.set_gradient_compression({"type": "2bit", "threshold": -1})


def test_errors_name_the_key_and_the_shapes():
    kv = nbdl.kv.create()
    out = nbdl.nd.zeros(SHAPE)
    with pytest.raises(KVStoreError, match="pull: key 3 has not been initialized"):
        kv.pull(3, out=out)
    with pytest.raises(KVStoreError, match="push: key 3 has not been initialized"):
        kv.push(3, out)
    with pytest.raises(KVStoreError, match="pushpull: key 3 has not been initialized"):
        kv.pushpull(3, out)
    kv.init(3, nbdl.nd.ones(SHAPE))
    with pytest.raises(KVStoreError, match="duplicate init of key 3"):
        kv.init(3, nbdl.nd.ones(SHAPE))
    with pytest.raises(KVStoreError, match="duplicate init of key 4"):
        kv.init(4, [nbdl.nd.ones(SHAPE), nbdl.nd.ones(SHAPE)])
    assert 4 not in kv._store
    with pytest.raises(ShapeError, match=r"key 3 holds shape \(3, 4\) but the pushed value has "
                                         r"shape \(5,\)"):
        kv.push(3, [nbdl.nd.ones(SHAPE), nbdl.nd.ones((5,))])
    with pytest.raises(ShapeError, match=r"key 3 holds shape \(3, 4\) but the output has shape "
                                         r"\(4, 3\)"):
        kv.pull(3, out=nbdl.nd.zeros((4, 3)))
    kv.pull(3, out=out)
    np.testing.assert_array_equal(out.asnumpy(), 1)    # the failed push changed nothing
    with pytest.raises(KVStoreError, match="mixed key types are not allowed"):
        kv.init("a", nbdl.nd.ones(SHAPE))
    with pytest.raises(KVStoreError, match="keys must be int or str, got 1.5"):
        kv.push(1.5, out)
    with pytest.raises(KVStoreError, match="2 keys need a list of 2 values"):
        kv.push([3, 3], out)
    with pytest.raises(KVStoreError, match="must be an NDArray or a list of NDArrays, got "
                                           "ndarray"):
        kv.push(3, np.ones(SHAPE))
    with pytest.raises(KVStoreError, match="out is required"):
        kv.pull(3)
    with pytest.raises(KVStoreError, match="no sparse"):
        kv.row_sparse_pull(3, out=out, row_ids=nbdl.nd.array([0]))


def test_registered_kvstore_class_is_created_by_name():
    @kvstore.KVStoreBase.register
    class MyStore(kvstore.KVStoreBase):
        pass
    try:
        assert isinstance(nbdl.kv.create("mystore"), MyStore)
    finally:
        del kvstore.KVStoreBase.kv_registry["mystore"]
    with pytest.raises(KVStoreError, match="expected a KVStoreBase subclass"):
        kvstore.KVStoreBase.register(int)
