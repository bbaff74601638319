"""nbdl.io.ResizeIter and PrefetchingIter against the iterators they wrap."""
import threading

import numpy as np
import pytest

import nbdl
from nbdl.io import DataIter, NDArrayIter, PrefetchingIter, ResizeIter


def batches(it):
    return [([d.asnumpy() for d in b.data], [lab.asnumpy() for lab in b.label], b.pad)
            for b in it]


def assert_same(got, want):
    assert len(got) == len(want)
    for (gd, gl, gp), (wd, wl, wp) in zip(got, want):
        assert gp == wp
        for g, w in zip(gd + gl, wd + wl):
            np.testing.assert_array_equal(g, w)
        assert len(gd) == len(wd) and len(gl) == len(wl)


def make(n=11, bs=3, handle="pad", **kw):
    data = np.arange(n * 2, dtype=np.float32).reshape(n, 2)
    return NDArrayIter(data, np.arange(n), batch_size=bs, last_batch_handle=handle, **kw)


@pytest.mark.parametrize("handle", ["pad", "discard", "roll_over"])
def test_prefetching_equals_the_wrapped_iterator_over_epochs(handle):
    ref, wrapped = make(handle=handle), make(handle=handle)
    p = PrefetchingIter(wrapped)
    assert p.provide_data == ref.provide_data and p.provide_label == ref.provide_label
    assert p.batch_size == 3
    for _ in range(3):
        assert_same(batches(p), batches(ref))
        p.reset()
        ref.reset()
    p.close()


def test_prefetching_merges_iterators_and_renames():
    a = NDArrayIter({"data": np.arange(8.0)}, np.arange(8.0), batch_size=4)
    b = NDArrayIter({"data": np.arange(8.0) * 10}, np.arange(8.0) * 10, batch_size=4)
    p = PrefetchingIter([a, b], rename_data=[{"data": "d1"}, {"data": "d2"}],
                        rename_label=[None, {"softmax_label": "l2"}])
    assert [d.name for d in p.provide_data] == ["d1", "d2"]
    assert [d.name for d in p.provide_label] == ["softmax_label", "l2"]
    got = batches(p)
    assert len(got) == 2
    np.testing.assert_array_equal(got[1][0][0], [4, 5, 6, 7])
    np.testing.assert_array_equal(got[1][0][1], [40, 50, 60, 70])
    np.testing.assert_array_equal(got[1][1][1], [40, 50, 60, 70])
    batch = p.current_batch
    assert [d.name for d in batch.provide_data] == ["d1", "d2"]
    with pytest.raises(StopIteration):
        p.next()


def test_prefetching_reads_in_another_thread():
    seen = []

    class Recording(DataIter):
        def __init__(self):
            super().__init__(1)
            self.provide_data = [("data", (1,))]
            self.provide_label = []
            self.left = 2

        def next(self):
            seen.append(threading.current_thread())
            if not self.left:
                raise StopIteration
            self.left -= 1
            return nbdl.io.DataBatch([nbdl.nd.ones((1,))], [], pad=0)

    p = PrefetchingIter(Recording())
    assert len(list(p)) == 2
    assert seen and all(t is not threading.current_thread() for t in seen)
    p.close()
    with pytest.raises(nbdl.NbdlError, match="closed"):
        p.next()


def test_prefetching_hands_errors_to_the_caller():
    class Broken(DataIter):
        provide_data = [("data", (2,))]
        provide_label = []

        def next(self):
            raise ValueError("disk on fire")

    p = PrefetchingIter(Broken())
    with pytest.raises(ValueError, match="disk on fire"):
        p.next()


def test_prefetching_bad_input():
    with pytest.raises(nbdl.ShapeError, match="ended before the others"):
        list(PrefetchingIter([make(n=9), make(n=12)]))
    with pytest.raises(nbdl.ShapeError, match="different pads"):
        list(PrefetchingIter([make(n=10), make(n=11)]))
    with pytest.raises(nbdl.ArgumentError, match="no new name for 'data'"):
        PrefetchingIter([make()], rename_data=[{"x": "y"}])
    with pytest.raises(nbdl.ArgumentError, match="list of 2 dicts"):
        PrefetchingIter([make(), make()], rename_data=[{"data": "a"}])
    with pytest.raises(nbdl.ArgumentError, match="at least one"):
        PrefetchingIter([])


def test_resize_shortens_and_lengthens_epochs():
    base = make(n=8, bs=2, handle="discard")  # 4 batches per epoch
    firsts = [b.data[0].asnumpy()[0, 0] for b in ResizeIter(base, 3)]
    assert firsts == [0, 4, 8]
    base.reset()
    r = ResizeIter(base, 6)
    assert r.provide_data == base.provide_data and r.batch_size == 2
    firsts = [b.data[0].asnumpy()[0, 0] for b in r]
    assert firsts == [0, 4, 8, 12, 0, 4]  # the wrapped iterator restarts at its end
    r.reset()
    assert [b.data[0].asnumpy()[0, 0] for b in r] == firsts


def test_resize_without_internal_reset_continues():
    base = make(n=8, bs=2, handle="discard")
    r = ResizeIter(base, 3, reset_internal=False)
    assert [b.data[0].asnumpy()[0, 0] for b in r] == [0, 4, 8]
    r.reset()
    assert [b.data[0].asnumpy()[0, 0] for b in r] == [12, 0, 4]
    assert r.getpad() == 0 and r.getindex() is None


def test_resize_bad_input():
    with pytest.raises(nbdl.ArgumentError, match="size must be a non-negative int"):
        ResizeIter(make(), -1)
    with pytest.raises(nbdl.ArgumentError, match="must be a DataIter"):
        ResizeIter([1, 2], 2)
    empty = make(n=2, bs=3, handle="discard")
    with pytest.raises(nbdl.ShapeError, match="no batch even right after reset"):
        list(ResizeIter(empty, 2))


def test_prefetching_threads_stop_when_the_iterator_is_collected():
    import gc
    p = PrefetchingIter([make(), make()])
    threads = [w.thread for w in p._workers]
    assert all(t.is_alive() for t in threads)
    del p
    gc.collect()
    for t in threads:
        t.join(timeout=5)
    assert not any(t.is_alive() for t in threads)


def test_modules_are_exported_from_nbdl():
    assert nbdl.io.PrefetchingIter is PrefetchingIter
    assert nbdl.recordio.MXRecordIO is not None and nbdl.callback.Speedometer is not None
