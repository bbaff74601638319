"""DataLoader with worker processes and threads: the same batches, in the
same order, as without workers; errors and timeouts reach the caller."""
import multiprocessing
import os
import time
import traceback

import numpy as np
import pytest

import nbdl
from nbdl.gluon import data as gdata
from nbdl.gluon.data import batchify

WORKER_MODES = [pytest.param(False, id="processes"), pytest.param(True, id="threads")]


def _scale(x):
    return x * 2 + 1


def _dataset():
    data = np.arange(23 * 3, dtype=np.float32).reshape(23, 3)
    return gdata.ArrayDataset(data, np.arange(23)).transform_first(_scale)


def _host(batch):
    """A batch as nested numpy arrays (NDArrays read back), with dtypes."""
    if isinstance(batch, nbdl.NDArray):
        return ("nd", batch.dtype, batch.asnumpy())
    if isinstance(batch, np.ndarray):
        return ("np", batch.dtype, batch)
    if isinstance(batch, (list, tuple)):
        return (type(batch).__name__, [_host(b) for b in batch])
    return ("py", batch)


def _assert_same(got, want):
    assert len(got) == len(want)
    for g, w in zip(got, want):
        _assert_tree_equal(_host(g), _host(w))


def _assert_tree_equal(a, b):
    assert a[0] == b[0]
    if a[0] in ("nd", "np"):
        assert a[1] == b[1]
        np.testing.assert_array_equal(a[2], b[2])
    elif a[0] in ("list", "tuple"):
        assert len(a[1]) == len(b[1])
        for x, y in zip(a[1], b[1]):
            _assert_tree_equal(x, y)
    else:
        assert a[1] == b[1]


def _sum_as_numpy(samples):
    """A foreign batchify function: its numpy result must stay numpy."""
    return np.stack([x for x, _ in samples]).sum(axis=0)


@pytest.mark.parametrize("thread_pool", WORKER_MODES)
@pytest.mark.parametrize("batchify_fn", [
    None,
    batchify.Group(batchify.Stack(), batchify.Append()),
    _sum_as_numpy,
], ids=["default", "group", "foreign"])
def test_workers_give_the_same_batches(thread_pool, batchify_fn):
    ds = _dataset()
    want = list(gdata.DataLoader(ds, batch_size=4, batchify_fn=batchify_fn))
    loader = gdata.DataLoader(ds, batch_size=4, batchify_fn=batchify_fn, num_workers=2,
                              thread_pool=thread_pool)
    try:
        assert len(loader) == 6
        _assert_same(list(loader), want)
        _assert_same(list(loader), want)       # a second pass reuses the workers
    finally:
        loader.close()
    if batchify_fn is None:
        assert want[0][0].dtype == np.float32 and want[0][1].dtype == np.int64
        np.testing.assert_array_equal(want[0][0].asnumpy()[0], [1, 3, 5])


@pytest.mark.parametrize("thread_pool", WORKER_MODES)
def test_shuffled_workers_follow_the_seed(thread_pool):
    ds = _dataset()
    plain = gdata.DataLoader(ds, batch_size=5, shuffle=True, last_batch="rollover")
    loader = gdata.DataLoader(ds, batch_size=5, shuffle=True, last_batch="rollover",
                              num_workers=2, thread_pool=thread_pool, prefetch=1)
    try:
        nbdl.random.seed(11)
        want = list(plain) + list(plain)
        nbdl.random.seed(11)
        got = list(loader) + list(loader)
        _assert_same(got, want)
        assert len(got) == 4 + 5      # 23 = 4*5 + 3; then 3 + 23 = 5*5 + 1
    finally:
        loader.close()


class BadItem(Exception):
    pass


class _FailingDataset(gdata.Dataset):
    def __len__(self):
        return 8

    def __getitem__(self, idx):
        if idx == 5:
            raise BadItem(f"cannot load sample {idx}")
        return np.float32(idx)


def test_process_worker_error_carries_the_worker_traceback():
    loader = gdata.DataLoader(_FailingDataset(), batch_size=2, num_workers=2)
    try:
        it = iter(loader)
        np.testing.assert_array_equal(next(it).asnumpy(), [0, 1])
        np.testing.assert_array_equal(next(it).asnumpy(), [2, 3])
        with pytest.raises(BadItem, match="cannot load sample 5") as info:
            next(it)
        remote = str(info.value.__cause__)
        assert "__getitem__" in remote and "raise BadItem" in remote
        np.testing.assert_array_equal(next(it).asnumpy(), [6, 7])
    finally:
        loader.close()


def test_thread_worker_error_carries_the_worker_traceback():
    loader = gdata.DataLoader(_FailingDataset(), batch_size=4, num_workers=2, thread_pool=True)
    try:
        with pytest.raises(BadItem, match="cannot load sample 5") as info:
            list(loader)
        frames = [f.name for f in traceback.extract_tb(info.value.__traceback__)]
        assert "__getitem__" in frames
    finally:
        loader.close()


SLOW = {"on": True}


class _SlowDataset(gdata.Dataset):
    def __len__(self):
        return 4

    def __getitem__(self, idx):
        if idx == 2 and SLOW["on"]:
            time.sleep(5)
        return np.float32(idx)


@pytest.mark.skipif("fork" not in multiprocessing.get_all_start_methods(),
                    reason="the recovery check flips a flag that forked workers inherit")
def test_worker_timeout_raises_and_the_loader_recovers():
    loader = gdata.DataLoader(_SlowDataset(), batch_size=2, num_workers=2, timeout=0.5)
    try:
        it = iter(loader)
        assert next(it).shape == (2,)
        start = time.monotonic()
        with pytest.raises(gdata.WorkerTimeoutError, match="batch 1 within timeout=0.5"):
            next(it)
        assert time.monotonic() - start < 3
        # The hung worker was stopped; a new pass starts fresh workers (forked
        # now, so they see the flag switched off).
        SLOW["on"] = False
        assert [b.asnumpy().tolist() for b in loader] == [[0, 1], [2, 3]]
    finally:
        SLOW["on"] = True
        loader.close()


class _PidDataset(gdata.Dataset):
    def __len__(self):
        return 6

    def __getitem__(self, idx):
        return np.int64(os.getpid())


@pytest.mark.parametrize("thread_pool", WORKER_MODES)
def test_samples_are_loaded_by_the_workers(thread_pool):
    loader = gdata.DataLoader(_PidDataset(), batch_size=2, num_workers=2, thread_pool=thread_pool)
    try:
        pids = set(np.concatenate([b.asnumpy() for b in loader]).tolist())
    finally:
        loader.close()
    if thread_pool:
        assert pids == {os.getpid()}
    else:
        assert pids and os.getpid() not in pids


class _DyingDataset(gdata.Dataset):
    """Kills the worker process that loads sample 3 (as a native crash would)."""

    def __init__(self):
        self._parent = os.getpid()

    def __len__(self):
        return 6

    def __getitem__(self, idx):
        if idx == 3 and os.getpid() != self._parent:
            os._exit(7)
        return np.float32(idx)


def test_a_dead_worker_fails_fast_instead_of_waiting_for_the_timeout():
    loader = gdata.DataLoader(_DyingDataset(), batch_size=2, num_workers=2, timeout=60)
    try:
        start = time.monotonic()
        with pytest.raises(gdata.WorkerError, match="exited") as info:
            list(loader)
        assert not isinstance(info.value, gdata.WorkerTimeoutError)
        assert time.monotonic() - start < 10
    finally:
        loader.close()


_DROP_IN_FLIGHT = """
import numpy as np, nbdl
data = np.random.RandomState(0).rand(999, 2000)        # 8 x 2000 float64 batches: 128 KB
for _ in range(4):
    loader = nbdl.gluon.data.DataLoader(data, batch_size=8, num_workers=8)
    it = iter(loader)
    first = next(it)
    assert first.shape == (8, 2000) and np.array_equal(first.asnumpy(), data[:8])
    del it, loader                                      # batches still in flight
print("done")
"""


def test_dropping_a_loader_with_large_batches_in_flight_does_not_hang(tmp_path):
    # Pool.terminate used to deadlock here: a worker blocked sending a batch
    # larger than the pipe's buffer kept the result queue's lock.  A fresh
    # process, so that a regression fails by timeout instead of hanging the suite.
    import subprocess
    import sys
    script = tmp_path / "drop.py"
    script.write_text(_DROP_IN_FLIGHT)
    proc = subprocess.run([sys.executable, str(script)], capture_output=True, text=True,
                          timeout=120)
    assert proc.returncode == 0 and "done" in proc.stdout, proc.stderr[-2000:]


class _Recording:
    """A dataset that records which samples were read."""

    def __init__(self, n):
        self.n, self.read = n, []

    def __len__(self):
        return self.n

    def __getitem__(self, i):
        self.read.append(i)
        return np.full((2,), i, np.float32)


def _wait_for(cond, seconds=10.0):
    end = time.monotonic() + seconds
    while not cond() and time.monotonic() < end:
        time.sleep(0.01)
    return cond()


def test_auto_reload_prefetches_each_pass_ahead():
    data = _Recording(6)
    loader = gdata.DataLoader(data, batch_size=2, num_workers=1, thread_pool=True, auto_reload=True)
    # the first pass is in flight before iter(loader)
    assert _wait_for(lambda: len(data.read) > 0)
    first = [b.asnumpy()[:, 0].tolist() for b in loader]
    assert first == [[0, 1], [2, 3], [4, 5]]
    # the next pass was prepared when this one ended
    before = len(data.read)
    assert _wait_for(lambda: len(data.read) > before)
    assert [b.asnumpy()[:, 0].tolist() for b in loader] == first
    loader.close()


def test_no_auto_reload_reads_nothing_before_iteration():
    data = _Recording(4)
    loader = gdata.DataLoader(data, batch_size=2, num_workers=1, thread_pool=True)
    assert loader.auto_reload is False
    time.sleep(0.1)
    assert data.read == []
    loader.refresh()
    assert _wait_for(lambda: len(data.read) > 0)
    loader.clean()
    assert [b.asnumpy()[:, 0].tolist() for b in loader] == [[0, 1], [2, 3]]
    # same-process loaders accept it too (their passes are lazy)
    same = gdata.DataLoader(_Recording(3), batch_size=2, auto_reload=True)
    assert [len(b) for b in same] == [2, 1] and [len(b) for b in same] == [2, 1]
    loader.close()
