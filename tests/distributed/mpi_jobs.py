"""Jobs run under ``mpiexec -n 2`` by tests/distributed/test_mpi_jobs.py
(not collected by pytest itself): ``python mpi_jobs.py SCENARIO...``.

Every rank checks its own results (assert); an assertion that fails on any
rank aborts the job (nbdl's excepthook), so the test sees a non-zero exit
status and the traceback.  Each scenario prints ``ok <name>`` on rank 0."""
import os
import sys
import tempfile
import time

import numpy as np

import nbdl
import nbdl.distributed as hvd
from nbdl import autograd, collective, gluon
from nbdl.gluon import nn

TOL = 1e-6


def _world():
    return collective.init()


def _mlp(seed, sync_bn=False):
    nbdl.random.seed(seed)
    net = nn.HybridSequential()
    net.add(nn.Dense(16, activation="relu", in_units=10))
    if sync_bn:
        net.add(nn.SyncBatchNorm(in_channels=16))
    net.add(nn.Dense(4, in_units=16))
    net.initialize(nbdl.init.Xavier())
    return net


def _data(n):
    rng = np.random.RandomState(42)
    return rng.randn(n, 10).astype(np.float32), rng.randint(0, 4, n).astype(np.float32)


def _train(net, trainer, X, Y, rows, steps, batch_size):
    loss = gluon.loss.SoftmaxCrossEntropyLoss()
    for s in range(steps):
        x = nbdl.nd.array(X[rows[s]])
        y = nbdl.nd.array(Y[rows[s]])
        with autograd.record():
            out = loss(net(x), y)
        out.backward()
        trainer.step(batch_size)


def _params(net):
    return [p.data().asnumpy().copy() for p in net.collect_params().values()]


def _same_on_every_rank(values, what):
    for v in values:
        lo = v.astype(np.float64).copy()
        hi = lo.copy()
        collective.allreduce(lo, what, op="min")
        collective.allreduce(hi, what, op="max")
        assert np.array_equal(lo, hi), f"{what}: ranks differ"


def scenario_train():
    """dist_sync (and update_on_kvstore=False, and the Horovod API) against
    one process trained on the concatenated batches."""
    w = _world()
    n, local, steps = w.size, 6, 4
    X, Y = _data(n * local * steps)
    mine = [np.arange(s * n * local + w.rank * local, s * n * local + (w.rank + 1) * local)
            for s in range(steps)]
    every = [np.arange(s * n * local, (s + 1) * n * local) for s in range(steps)]
    for kind, hybrid in (("dist_sync", True), ("dist_sync_local_update", True),
                         ("dist_sync", False), ("horovod", True), ("horovod_predivide", True)):
        ref = _mlp(0)
        ref_trainer = gluon.Trainer(ref.collect_params(), "sgd",
                                    {"learning_rate": 0.1, "momentum": 0.9}, kvstore=None)
        _train(ref, ref_trainer, X, Y, every, steps, n * local)
        net = _mlp(100 + w.rank)           # every rank starts elsewhere
        if hybrid:
            net.hybridize()
        if w.rank == 0:                    # rank 0 starts where the reference does
            for p, q in zip(net.collect_params().values(), _mlp(0).collect_params().values()):
                p.set_data(q.data())
        if kind.startswith("horovod"):
            hvd.broadcast_parameters(net.collect_params(), root_rank=0)
            trainer = hvd.DistributedTrainer(
                net.collect_params(), "sgd", {"learning_rate": 0.1, "momentum": 0.9},
                bucket_size_mb=0.0005,
                gradient_predivide_factor=2.0 if kind == "horovod_predivide" else 1.0)
            _train(net, trainer, X, Y, mine, steps, local)
        else:                              # the trainer starts every rank from rank 0's
            trainer = gluon.Trainer(net.collect_params(), "sgd",
                                    {"learning_rate": 0.1, "momentum": 0.9},
                                    kvstore="dist_sync", bucket_size_mb=0.0005,
                                    update_on_kvstore=kind == "dist_sync")
            _train(net, trainer, X, Y, mine, steps, n * local)
            assert trainer._kvstore.num_workers == n
        got, want = _params(net), _params(ref)
        for g, r in zip(got, want):
            assert np.abs(g - r).max() <= TOL, (kind, hybrid, np.abs(g - r).max())
        _same_on_every_rank(got, f"{kind} parameters")
        stats = trainer._buckets.stats
        assert stats["buckets"] >= 2, stats
        if hybrid:                  # every bucket started during backward
            assert stats["early"] == stats["buckets"] * steps, stats
    if w.rank == 0:
        print("ok train", flush=True)


def scenario_module():
    """MXNet 1.x's Module with kvstore='dist_sync' against one Module trained
    on the concatenated batches."""
    w = _world()
    n, local, steps = w.size, 4, 3
    X, Y = _data(n * local * steps)
    x = nbdl.sym.var("data")
    net = nbdl.sym.FullyConnected(x, num_hidden=8, name="fc1")
    net = nbdl.sym.Activation(net, act_type="tanh")
    net = nbdl.sym.FullyConnected(net, num_hidden=4, name="fc2")
    net = nbdl.sym.SoftmaxOutput(net, name="softmax")
    results = []
    for kv, batch in (("dist_sync", local), (None, n * local)):
        mod = nbdl.mod.Module(net)
        mod.bind(data_shapes=[("data", (batch, 10))], label_shapes=[("softmax_label", (batch,))])
        nbdl.random.seed(3)
        mod.init_params(nbdl.init.Xavier())
        mod.init_optimizer(kvstore=kv, optimizer="sgd",
                           optimizer_params={"learning_rate": 0.5, "momentum": 0.5})
        for s in range(steps):
            start = s * n * local + (w.rank * local if kv else 0)
            rows = slice(start, start + batch)
            mod.forward_backward(nbdl.io.DataBatch([nbdl.nd.array(X[rows])],
                                                   [nbdl.nd.array(Y[rows])]))
            mod.update()
        results.append({k: v.asnumpy() for k, v in mod.get_params()[0].items()})
    for k, v in results[0].items():
        assert np.abs(v - results[1][k]).max() <= TOL, (k, np.abs(v - results[1][k]).max())
    if w.rank == 0:
        print("ok module", flush=True)


def scenario_broadcast():
    """broadcast_parameters: differently initialized ranks end equal,
    deferred parameters included (broadcast at their first forward)."""
    w = _world()
    nbdl.random.seed(w.rank)
    net = nn.HybridSequential()
    net.add(nn.Dense(5, in_units=3), nn.Dense(2))      # the second is deferred
    net.initialize()
    hvd.broadcast_parameters(net.collect_params(), root_rank=w.size - 1)
    net(nbdl.nd.ones((1, 3)))
    values = _params(net)
    _same_on_every_rank(values, "broadcast_parameters")
    if w.rank == w.size - 1:
        nbdl.random.seed(w.rank)
        first = nn.Dense(5, in_units=3)
        first.initialize()
        assert np.array_equal(first.weight.data().asnumpy(), values[0])
    if w.rank == 0:
        print("ok broadcast", flush=True)


def scenario_syncbn():
    """SyncBatchNorm over the ranks' batches equals BatchNorm over the whole
    batch: output, data gradient, summed gamma/beta gradients, running
    statistics."""
    w = _world()
    n, local = w.size, 3
    rng = np.random.RandomState(7)
    x = (rng.randn(n * local, 4, 5, 5) * 2 + 1).astype(np.float32)
    head = rng.randn(*x.shape).astype(np.float32)
    mine = slice(w.rank * local, (w.rank + 1) * local)
    results = []
    for layer, data, og in ((nn.SyncBatchNorm(in_channels=4), x[mine], head[mine]),
                            (nn.BatchNorm(in_channels=4), x, head)):
        layer.initialize()
        layer.gamma.set_data(np.array([1.5, 0.5, 2.0, 1.0], np.float32))
        layer.beta.set_data(np.array([0.1, -0.2, 0.3, 0.0], np.float32))
        layer.hybridize()
        xd = nbdl.nd.array(data)
        xd.attach_grad()
        with autograd.record():
            y = layer(xd)
        y.backward(nbdl.nd.array(og))
        results.append([y.asnumpy(), xd.grad.asnumpy(), layer.gamma.grad().asnumpy(),
                        layer.beta.grad().asnumpy(), layer.running_mean.data().asnumpy(),
                        layer.running_var.data().asnumpy()])
    (y, dx, dg, db, rm, rv), (y_ref, dx_ref, dg_ref, db_ref, rm_ref, rv_ref) = results
    np.testing.assert_allclose(y, y_ref[mine], rtol=1e-5, atol=1e-5)
    np.testing.assert_allclose(dx, dx_ref[mine], rtol=1e-4, atol=1e-5)
    for local_grad, full in ((dg, dg_ref), (db, db_ref)):
        total = local_grad.astype(np.float64)
        collective.allreduce(total, "syncbn parameter gradients")
        np.testing.assert_allclose(total, full, rtol=1e-4, atol=1e-4)
    np.testing.assert_allclose(rm, rm_ref, rtol=1e-5, atol=1e-6)
    np.testing.assert_allclose(rv, rv_ref, rtol=1e-5, atol=1e-6)
    if w.rank == 0:
        print("ok syncbn", flush=True)


def scenario_checkpoint():
    """save_checkpoint / load_checkpoint: a job resumed from step 2 ends with
    the same parameters, bit for bit, as one that ran straight through."""
    w = _world()
    n, local, steps = w.size, 4, 4
    X, Y = _data(n * local * steps)
    mine = [np.arange(s * n * local + w.rank * local, s * n * local + (w.rank + 1) * local)
            for s in range(steps)]
    prefix = os.path.join(os.environ["NBDL_TEST_TMP"], "ckpt")

    def fresh():
        net = _mlp(0)
        net.hybridize()
        return net, gluon.Trainer(net.collect_params(), "sgd",
                                  {"learning_rate": 0.1, "momentum": 0.9}, kvstore="dist_sync")
    net, trainer = fresh()
    _train(net, trainer, X, Y, mine[:2], 2, n * local)
    hvd.save_checkpoint(prefix, net, trainer, epoch=2)
    _train(net, trainer, X, Y, mine[2:], 2, n * local)
    straight = _params(net)
    net, trainer = fresh()
    hvd.load_checkpoint(prefix, net, trainer, epoch=2)
    _train(net, trainer, X, Y, mine[2:], 2, n * local)
    for a, b in zip(straight, _params(net)):
        assert np.array_equal(a, b), np.abs(a - b).max()
    if w.rank == 0:
        print("ok checkpoint", flush=True)


def scenario_collectives():
    """The Horovod-style collectives, the kvstore's push/pull, 2-bit
    compression, and the data shards of samplers and iterators."""
    w = _world()
    hvd.init()
    n, r = hvd.size(), hvd.rank()
    assert (n, r) == (w.size, w.rank) and hvd.local_size() == n and hvd.is_initialized()
    t = nbdl.nd.array(np.full((2, 3), r + 1, np.float32))
    total = n * (n + 1) / 2
    assert np.all(hvd.allreduce(t, average=False).asnumpy() == total)
    assert np.allclose(hvd.allreduce(t).asnumpy(), total / n)
    hvd.allreduce_(t, average=False)
    assert np.all(t.asnumpy() == total)
    parts = hvd.allgather(nbdl.nd.array(np.full((r + 1, 2), r, np.float32))).asnumpy()
    assert parts.shape == (n * (n + 1) // 2, 2)
    assert parts[:, 0].tolist() == [k for k in range(n) for _ in range(k + 1)]
    b = hvd.broadcast(nbdl.nd.array([float(r)]), root_rank=n - 1)
    assert b.asnumpy()[0] == n - 1
    hvd.barrier()
    kv = nbdl.kv.create("dist_sync")
    assert kv.rank == r and kv.num_workers == n and "dist_sync" in repr(kv)
    kv.init("w", nbdl.nd.array([10.0 * (r + 1), 0.0]))           # rank 0's value wins
    out = nbdl.nd.zeros((2,))
    kv.pull("w", out=out)
    assert out.asnumpy().tolist() == [10.0, 0.0]
    kv.push("w", [nbdl.nd.array([1.0, r]), nbdl.nd.array([1.0, 1.0])])
    kv.pull("w", out=out)
    assert out.asnumpy().tolist() == [2.0 * n, total]
    kv.set_optimizer(nbdl.optimizer.SGD(learning_rate=0.5))
    kv.pushpull("w", nbdl.nd.array([1.0, 2.0]), out=out)
    assert np.allclose(out.asnumpy(), [2.0 * n - 0.5 * n, total - 0.5 * 2 * n])
    comp = nbdl.kv.create("dist_device_sync")
    comp.set_gradient_compression({"type": "2bit", "threshold": 0.5})
    comp.init(0, nbdl.nd.zeros((3,)))
    comp.push(0, nbdl.nd.array([0.7, -0.9, 0.2]))
    o = nbdl.nd.zeros((3,))
    comp.pull(0, out=o)
    assert np.allclose(o.asnumpy(), [0.5 * n, -0.5 * n, 0.0])
    # 2-bit compression of the gradient buckets: each rank sends [0.5, -0.5, 0]
    w = gluon.Parameter("w", shape=(3,))
    w.initialize(nbdl.init.Zero())
    trainer = gluon.Trainer([w], "sgd", {"learning_rate": 1.0}, kvstore="dist_sync",
                            compression_params={"type": "2bit", "threshold": 0.5})
    with autograd.record():
        (w.data() * nbdl.nd.array([0.7, -0.9, 0.2])).sum().backward()
    trainer.step(1)
    assert np.allclose(w.data().asnumpy(), [-0.5 * n, 0.5 * n, 0.0]), w.data()
    # data shards: samplers and iterators default to (size, rank)
    seq = list(gluon.data.SequentialSampler(7))
    assert seq == [k % 7 for k in range(r, 8, n)] and len(seq) == 8 // n
    rnd = np.array(list(gluon.data.RandomSampler(10)), np.int64)
    every = collective.allgather(rnd)
    assert sorted(every.tolist()) == list(range(10)), every
    it = nbdl.io.NDArrayIter(np.arange(8, dtype=np.float32).reshape(8, 1), batch_size=2)
    got = np.concatenate([batch.data[0].asnumpy().ravel() for batch in it])
    assert got.tolist() == [float(k) for k in range(r, 8, n)]
    if r == 0:
        print("ok collectives", flush=True)


def scenario_raise():
    """Rank 1 raises in the middle of a step while rank 0 waits in the
    gradient allreduce: the job must end with an error."""
    w = _world()
    net = _mlp(0)
    net.hybridize()
    trainer = gluon.Trainer(net.collect_params(), "sgd", {"learning_rate": 0.1},
                            kvstore="dist_sync")
    X, Y = _data(8)
    loss = gluon.loss.SoftmaxCrossEntropyLoss()
    for step in range(3):
        with autograd.record():
            out = loss(net(nbdl.nd.array(X)), nbdl.nd.array(Y))
        out.backward()
        if step == 1 and w.rank == 1:
            raise RuntimeError("rank 1 fails on purpose in step 1")
        trainer.step(8)
    print("rank", w.rank, "should not get here", flush=True)


def scenario_hang():
    """Rank 1 stops calling collectives (it sleeps) while rank 0 waits at a
    barrier: rank 0's watchdog must abort the job (NBDL_DIST_TIMEOUT)."""
    w = _world()
    hvd.barrier()
    if w.rank == 1:
        time.sleep(120)
    hvd.barrier()
    print("rank", w.rank, "should not get here", flush=True)


def main(names):
    with tempfile.TemporaryDirectory() as tmp:
        os.environ.setdefault("NBDL_TEST_TMP", tmp)
        for name in names:
            globals()[f"scenario_{name}"]()


if __name__ == "__main__":
    main(sys.argv[1:])
