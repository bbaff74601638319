"""The parts of distributed training that run in one process, without MPI:
the optional-dependency message, data shards, thread shares, the launcher's
command, the executor's gradient-ready cuts, the early gradient reports of a
hybridized block and the gradient buckets' layout.  (Jobs of two ranks:
test_mpi_jobs.py.)"""
import importlib
import os
import subprocess
import sys

import numpy as np
import pytest

import nbdl
from nbdl import autograd, collective, gluon
from nbdl.autograd import engine
from nbdl.collective import pinning, resolve_parts, shard_indices
from nbdl.distributed import launch
from nbdl.gluon import nn
from nbdl.gluon.grad_buckets import GradBuckets

world_module = importlib.import_module("nbdl.collective.world")


# -- mpi4py is optional ---------------------------------------------------------------
def test_nbdl_imports_without_mpi4py_and_names_the_extra():
    code = ("import sys; sys.modules['mpi4py'] = None\n"
            "import nbdl\n"
            "try:\n"
            "    nbdl.kv.create('dist_sync')\n"
            "except nbdl.errors.OptionalDependencyError as e:\n"
            "    print('refused:', e)\n")
    out = subprocess.run([sys.executable, "-c", code], stdout=subprocess.PIPE,
                         stderr=subprocess.STDOUT, text=True, timeout=300,
                         env=dict(os.environ)).stdout
    assert "refused: kvstore 'dist_sync' needs MPI through mpi4py" in out, out
    assert "pip install 'nbdl[distributed]'" in out, out


def test_mpi_module_error_names_what_asked(monkeypatch):
    monkeypatch.setitem(sys.modules, "mpi4py", None)
    with pytest.raises(nbdl.errors.OptionalDependencyError,
                       match=r"DistributedTrainer needs MPI.*nbdl\[distributed\]"):
        collective.mpi_module("DistributedTrainer")


def test_horovod_calls_before_init_say_so(monkeypatch):
    monkeypatch.setattr(world_module, "_world", [None])
    assert not nbdl.distributed.is_initialized()
    for call in (nbdl.distributed.rank, nbdl.distributed.size, nbdl.distributed.local_rank):
        with pytest.raises(collective.DistributedError, match=r"call nbdl.distributed.init\(\)"):
            call()


# -- data shards ----------------------------------------------------------------------
@pytest.mark.parametrize("n, parts", [(10, 3), (7, 2), (4, 4), (3, 5), (0, 2)])
def test_shards_are_equal_and_cover(n, parts):
    shards = [shard_indices(n, parts, k) for k in range(parts)]
    assert len({len(s) for s in shards}) == 1
    assert len(shards[0]) == (-(-n // parts) if n else 0)
    assert sorted(set(np.concatenate(shards).tolist())) == list(range(n))


def test_resolve_parts_checks(monkeypatch):
    monkeypatch.setattr(world_module, "_world", [None])
    assert resolve_parts(None, None, "x") == (1, 0)
    assert resolve_parts(3, 2, "x") == (3, 2)
    with pytest.raises(nbdl.ArgumentError, match=r"x: part_index must be < num_parts"):
        resolve_parts(2, 2, "x")
    with pytest.raises(nbdl.ArgumentError, match=r"x: num_parts must be an int >= 1"):
        resolve_parts(0, 0, "x")


def test_samplers_and_iterators_read_their_part(tmp_path):
    seq = [list(gluon.data.SequentialSampler(5, start=10, num_parts=2, part_index=k))
           for k in range(2)]
    assert seq == [[10, 12, 14], [11, 13, 10]]
    assert len(gluon.data.SequentialSampler(5, num_parts=2, part_index=1)) == 3
    rnd = [gluon.data.RandomSampler(9, num_parts=3, part_index=k, seed=5) for k in range(3)]
    first = [list(s) for s in rnd]
    assert sorted(sum(first, [])) == list(range(9)) and len(rnd[0]) == 3
    assert [list(s) for s in rnd] != first          # a new permutation every pass
    x = np.arange(10, dtype=np.float32).reshape(10, 1)
    it = nbdl.io.NDArrayIter(x, np.arange(10, dtype=np.float32), batch_size=2, num_parts=2,
                             part_index=1)
    batches = list(it)
    assert [b.data[0].asnumpy().ravel().tolist() for b in batches] == \
        [[1, 3], [5, 7], [9, 1]] and batches[-1].pad == 1
    csv = tmp_path / "d.csv"
    csv.write_text("\n".join(str(i) for i in range(6)) + "\n")
    rows = nbdl.io.CSVIter(data_csv=str(csv), data_shape=(1,), batch_size=3, num_parts=2,
                           part_index=0)
    assert [b.data[0].asnumpy().ravel().tolist() for b in rows] == [[0, 2, 4]]
    with pytest.raises(nbdl.ArgumentError, match="NDArrayIter: part_index must be < num_parts"):
        nbdl.io.NDArrayIter(x, batch_size=2, num_parts=2, part_index=2)


# -- threads ----------------------------------------------------------------------------
@pytest.mark.parametrize("cores, local, size, want", [
    ([0, 1, 2, 3], 0, 2, [0, 1]), ([0, 1, 2, 3], 1, 2, [2, 3]), ([0, 1], 1, 2, [1]),
    ([0, 1], 3, 4, [1]), ([0, 1, 2], 0, 1, [0, 1, 2])])
def test_each_rank_gets_its_share_of_the_cores(cores, local, size, want):
    assert pinning.share(cores, local, size) == want


# -- the launcher -----------------------------------------------------------------------
def test_launcher_builds_the_mpiexec_command(capsys):
    assert launch.main(["-n", "4", "--hosts", "a:2,b:2", "--env", "NBDL_DIST_TIMEOUT=60",
                        "--dry-run", "train.py", "--epochs", "3"]) == 0
    cmd = capsys.readouterr().out.split()
    assert cmd[0].endswith("mpiexec") and cmd[1:5] == ["-n", "4", "-hosts", "a:2,b:2"]
    assert cmd[5:8] == ["-genv", "NBDL_DIST_TIMEOUT", "60"]
    assert cmd[8:] == [sys.executable, "train.py", "--epochs", "3"]
    with pytest.raises(SystemExit):
        launch.main(["-n", "2", "--hosts", "a", "--hostfile", "f", "x.py"])


# -- gradient-ready cuts of the executor --------------------------------------------------
def _mlp_symbol():
    x = nbdl.sym.var("data")
    h = nbdl.sym.FullyConnected(x, num_hidden=5, name="fc1")
    h = nbdl.sym.Activation(h, act_type="relu")
    return nbdl.sym.FullyConnected(h, num_hidden=3, name="fc2")


def test_backward_reports_each_gradient_once_when_written(rng):
    sym = _mlp_symbol()
    shapes = {"data": (4, 6)}
    plain = sym.simple_bind(nbdl.cpu(), **shapes)
    cut = sym.simple_bind(nbdl.cpu(), **shapes)
    for ex in (plain, cut):
        for name, arr in ex.arg_dict.items():
            arr[...] = np.random.RandomState(len(name)).uniform(-1, 1, arr.shape)
        ex.forward(is_train=True)
    og = nbdl.nd.array(rng.uniform(-1, 1, (4, 3)))
    plain.backward(og)
    seen = []

    def ready(names):          # the gradients named are final when reported
        for n in names:
            seen.append((n, cut.grad_dict[n].asnumpy().copy()))
    cut.backward(og, grad_ready=ready)
    names = [n for n, _ in seen]
    assert sorted(names) == sorted(plain.grad_dict) and len(set(names)) == len(names)
    assert names.index("fc2_weight") < names.index("fc1_weight")    # last layer first
    for n, value in seen:
        np.testing.assert_array_equal(value, plain.grad_dict[n].asnumpy())
    # with a monitor callback the names come at the end, all of them
    cut.set_monitor_callback(lambda name, arr: None)
    seen.clear()
    cut.backward(og, grad_ready=ready)
    assert sorted(n for n, _ in seen) == sorted(plain.grad_dict)


def test_hybridized_block_reports_parameters_during_backward(rng):
    net = nn.HybridSequential()
    net.add(nn.Dense(5, in_units=6, activation="relu"), nn.Dense(3, in_units=5))
    net.initialize()
    net.hybridize()
    x = nbdl.nd.array(rng.uniform(-1, 1, (4, 6)))
    params = list(net.collect_params().values())
    order = []

    def listener(grad):
        order.append(next(i for i, p in enumerate(params) if p.grad() is grad))
    engine.add_grad_listener(listener)
    try:
        with autograd.record():
            y = net(x)
        y.backward()
    finally:
        engine.remove_grad_listener(listener)
    assert sorted(order) == list(range(len(params)))           # each once
    assert order.index(2) < order.index(0)                      # the last layer first
    assert not engine.has_grad_listeners()


# -- gradient buckets ---------------------------------------------------------------------
def test_buckets_lay_gradients_out_contiguously(rng):
    net = nn.HybridSequential()
    net.add(nn.Dense(40, in_units=30), nn.Dense(20, in_units=40), nn.Dense(2, in_units=20))
    net.initialize()
    params = list(net.collect_params().values())
    for p in params:
        p.grad()[...] = rng.uniform(-1, 1, p.shape)
    before = [p.grad().asnumpy().copy() for p in params]
    buckets = GradBuckets(params, world=None, bucket_bytes=4000)
    try:
        layout = buckets.buckets
        assert [name for _, _, names in layout for name in names] == \
            [p.name for p in reversed(params)]
        assert all(nbytes <= 4000 or len(names) == 1 for _, nbytes, names in layout)
        for p, value in zip(params, before):
            g = p.grad()._data
            np.testing.assert_array_equal(g, value)           # values kept
            assert g.base is not None and g.base.ndim == 1    # a view of a slab
        assert buckets.valid(params)
        params[0].cast("float64")                              # new gradient arrays
        assert not buckets.valid(params)
    finally:
        buckets.close()
    assert not engine.has_grad_listeners()
