"""Datasets, samplers, batchify functions and the single-process DataLoader."""
import numpy as np
import pytest

import nbdl
from nbdl.errors import NbdlError, ShapeError
from nbdl.gluon import data as gdata
from nbdl.gluon.data import batchify


def _np(x):
    return x.asnumpy() if isinstance(x, nbdl.NDArray) else np.asarray(x)


# -- samplers ---------------------------------------------------------------
def test_sequential_sampler():
    s = gdata.SequentialSampler(5, start=2)
    assert list(s) == [2, 3, 4, 5, 6]
    assert len(s) == 5
    assert list(gdata.SequentialSampler(0)) == []


def test_random_sampler_is_a_seeded_permutation():
    s = gdata.RandomSampler(20)
    nbdl.random.seed(7)
    first, second = list(s), list(s)
    nbdl.random.seed(7)
    again = list(s)
    assert sorted(first) == list(range(20)) and len(s) == 20
    assert first == again
    assert first != second          # a fresh permutation every pass
    assert all(type(i) is int for i in first)


@pytest.mark.parametrize("last_batch,expected", [
    ("keep", [[0, 1, 2], [3, 4, 5], [6, 7, 8], [9]]),
    ("discard", [[0, 1, 2], [3, 4, 5], [6, 7, 8]]),
])
def test_batch_sampler_keep_discard(last_batch, expected):
    bs = gdata.BatchSampler(gdata.SequentialSampler(10), 3, last_batch)
    assert list(bs) == expected
    assert len(bs) == len(expected)
    assert list(bs) == expected     # a second pass is the same


def test_batch_sampler_rollover_carries_the_tail_into_the_next_pass():
    bs = gdata.BatchSampler(gdata.SequentialSampler(10), 3, "rollover")
    assert len(bs) == 3
    assert list(bs) == [[0, 1, 2], [3, 4, 5], [6, 7, 8]]
    assert len(bs) == 3             # (1 + 10) // 3
    assert list(bs) == [[9, 0, 1], [2, 3, 4], [5, 6, 7]]
    assert len(bs) == 4             # (2 + 10) // 3
    assert list(bs) == [[8, 9, 0], [1, 2, 3], [4, 5, 6], [7, 8, 9]]
    assert len(bs) == 3


def test_batch_sampler_errors():
    with pytest.raises(gdata.DataError, match="last_batch.*'sometimes'"):
        gdata.BatchSampler(gdata.SequentialSampler(4), 2, "sometimes")
    with pytest.raises(gdata.DataError, match="batch_size must be >= 1, got 0"):
        gdata.BatchSampler(gdata.SequentialSampler(4), 0)


def test_interval_sampler():
    assert list(gdata.IntervalSampler(10, 3)) == [0, 3, 6, 9, 1, 4, 7, 2, 5, 8]
    assert len(gdata.IntervalSampler(10, 3)) == 10
    s = gdata.IntervalSampler(10, 3, rollover=False)
    assert list(s) == [0, 3, 6, 9] and len(s) == 4
    with pytest.raises(gdata.DataError, match="interval 5 must be smaller than length 5"):
        gdata.IntervalSampler(5, 5)


def test_sampler_base_is_abstract():
    with pytest.raises(TypeError):
        gdata.Sampler()


# -- datasets -----------------------------------------------------------------
def test_dataset_is_abstract_and_needs_len():
    with pytest.raises(TypeError):
        gdata.Dataset()

    class NoLen(gdata.Dataset):
        def __getitem__(self, i):
            return i
    with pytest.raises(TypeError):
        NoLen()


def test_simple_dataset_filter_take_shard_sample():
    ds = gdata.SimpleDataset(list(range(10)))
    assert len(ds) == 10 and ds[3] == 3
    even = ds.filter(lambda x: x % 2 == 0)
    assert [even[i] for i in range(len(even))] == [0, 2, 4, 6, 8]
    assert [ds.take(3)[i] for i in range(3)] == [0, 1, 2]
    assert len(ds.take(None)) == 10 and len(ds.take(50)) == 10
    shards = [ds.shard(3, i) for i in range(3)]
    assert [[s[j] for j in range(len(s))] for s in shards] == [[0, 1, 2, 3], [4, 5, 6], [7, 8, 9]]
    picked = ds.sample(gdata.IntervalSampler(10, 4, rollover=False))
    assert [picked[i] for i in range(len(picked))] == [0, 4, 8]
    with pytest.raises(gdata.DataError, match="index 3 must be smaller than num_shards 3"):
        ds.shard(3, 3)
    with pytest.raises(gdata.DataError, match="expected a gluon.data.Sampler, got list"):
        ds.sample([1, 2])
    with pytest.raises(gdata.DataError, match="count must be >= 0"):
        ds.take(-1)


def test_transform_is_lazy_unless_asked():
    calls = []

    def double(x):
        calls.append(x)
        return 2 * x
    ds = gdata.SimpleDataset([1, 2, 3])
    lazy = ds.transform(double)
    assert calls == []
    assert lazy[2] == 6 and calls == [3]
    eager = ds.transform(double, lazy=False)
    assert calls == [3, 1, 2, 3]
    assert isinstance(eager, gdata.SimpleDataset) and [eager[i] for i in range(3)] == [2, 4, 6]


def test_transform_unpacks_tuples_and_transform_first_touches_only_data():
    ds = gdata.ArrayDataset(np.arange(4, dtype=np.float32), np.array([10, 11, 12, 13]))
    summed = ds.transform(lambda x, y: x + y)
    assert summed[1] == 12
    first = ds.transform_first(lambda x: x * 100)
    assert first[2] == (200.0, 12)
    assert gdata.SimpleDataset([5]).transform_first(lambda x: -x)[0] == -5
    with pytest.raises(gdata.DataError, match="callable"):
        ds.transform(3)


def test_array_dataset():
    x = nbdl.nd.array(np.arange(12).reshape(4, 3))
    y = nbdl.nd.array([1, 2, 3, 4])
    z = ["a", "b", "c", "d"]
    ds = gdata.ArrayDataset(x, y, z)
    assert len(ds) == 4
    row, label, name = ds[2]
    np.testing.assert_array_equal(row.asnumpy(), [6, 7, 8])
    assert isinstance(label, np.float32) and label == 3 and name == "c"
    single = gdata.ArrayDataset(np.arange(3))
    assert single[1] == 1
    with pytest.raises(gdata.DataError, match=r"same length, got lengths \[4, 3\]"):
        gdata.ArrayDataset(x, [1, 2, 3])
    with pytest.raises(gdata.DataError, match="at least one array"):
        gdata.ArrayDataset()
    assert issubclass(gdata.DataError, NbdlError)


# -- batchify -----------------------------------------------------------------
def test_stack_keeps_dtype():
    for dtype in (np.float32, np.float64, np.int64, np.int32):
        b = batchify.Stack()([np.ones(2, dtype), np.zeros(2, dtype)])
        assert isinstance(b, nbdl.NDArray) and b.dtype == dtype and b.shape == (2, 2)
    b = batchify.Stack()([nbdl.nd.array([1, 2]), nbdl.nd.array([3, 4])])
    np.testing.assert_array_equal(b.asnumpy(), [[1, 2], [3, 4]])
    assert batchify.Stack()([1, 2, 3]).dtype == np.int64
    with pytest.raises(ShapeError, match=r"sample 0 of shape \(2,\) with sample 1 of shape \(3,\)"):
        batchify.Stack()([np.ones(2), np.ones(3)])


def test_pad_lists_and_arrays():
    out = batchify.Pad()([[1, 2, 3, 4], [4, 5, 6], [8, 2]])
    np.testing.assert_array_equal(out.asnumpy(), [[1, 2, 3, 4], [4, 5, 6, 0], [8, 2, 0, 0]])
    a = np.arange(6, dtype=np.float32).reshape(2, 3)
    b = np.array([[7, 8]], dtype=np.float32)
    out = batchify.Pad(val=-1)([a, b]).asnumpy()
    expected = np.full((2, 2, 3), -1, np.float32)
    expected[0] = a
    expected[1, :1, :2] = b
    np.testing.assert_array_equal(out, expected)
    assert out.dtype == np.float32
    rounded = batchify.Pad(round_to=4, dtype="float64")([[1, 2, 3, 4, 5], [1]])
    assert rounded.shape == (2, 8) and rounded.dtype == np.float64
    np.testing.assert_array_equal(rounded.asnumpy()[1], [1, 0, 0, 0, 0, 0, 0, 0])
    with pytest.raises(ShapeError, match=r"shape \(2, 3\).*shape \(3,\)"):
        batchify.Pad()([a, np.ones(3)])
    with pytest.raises(gdata.DataError, match="Group"):
        batchify.Pad()([(1, 2), (3, 4)])
    with pytest.raises(gdata.DataError, match="round_to"):
        batchify.Pad(round_to=0)


def test_group_append_and_default():
    samples = [(np.ones(2, np.float32), [1, 2, 3]), (np.zeros(2, np.float32), [4])]
    x, y = batchify.Group(batchify.Stack(), batchify.Pad())(samples)
    np.testing.assert_array_equal(x.asnumpy(), [[1, 1], [0, 0]])
    np.testing.assert_array_equal(y.asnumpy(), [[1, 2, 3], [4, 0, 0]])
    assert batchify.Tuple is batchify.Group
    with pytest.raises(gdata.DataError, match="sample 0 has 2 fields, expected 3"):
        batchify.Group([batchify.Stack()] * 3)(samples)
    with pytest.raises(gdata.DataError, match="not callable"):
        batchify.Group(batchify.Stack(), 5)

    appended = batchify.Append()([[1, 2, 3], [4, 5]])
    assert [a.shape for a in appended] == [(1, 3), (1, 2)]
    assert appended[0].dtype == np.float32
    flat = batchify.Append(expand=False)([np.arange(3), np.arange(2)])
    assert [a.shape for a in flat] == [(3,), (2,)]
    assert [a.shape for a in batchify.Append(batch_axis=1)([np.ones((2, 3))])] == [(2, 1, 3)]

    fields = batchify.default_batchify_fn([(np.ones(3), 1), (np.zeros(3), 0)])
    assert isinstance(fields, list) and fields[0].shape == (2, 3)
    assert fields[0].dtype == np.float64 and fields[1].dtype == np.int64
    with pytest.raises(gdata.DataError, match="sample 0 is a 2-tuple but sample 1 is a 3-tuple"):
        batchify.default_batchify_fn([(1, 2), (1, 2, 3)])
    assert batchify.AsList()((1, 2)) == [1, 2]


# -- DataLoader (in process) --------------------------------------------------
def _dataset(n=10):
    return gdata.ArrayDataset(np.arange(n * 2, dtype=np.float32).reshape(n, 2), np.arange(n))


def test_dataloader_batches_and_len():
    loader = gdata.DataLoader(_dataset(), batch_size=4)
    assert len(loader) == 3
    batches = list(loader)
    assert [b[1].asnumpy().tolist() for b in batches] == [[0, 1, 2, 3], [4, 5, 6, 7], [8, 9]]
    assert batches[0][0].dtype == np.float32 and batches[0][1].dtype == np.int64
    np.testing.assert_array_equal(batches[2][0].asnumpy(), [[16, 17], [18, 19]])
    again = list(loader)
    assert all((_np(a[1]) == _np(b[1])).all() for a, b in zip(batches, again))
    discard = gdata.DataLoader(_dataset(), batch_size=4, last_batch="discard")
    assert len(discard) == 2 and len(list(discard)) == 2


def test_dataloader_shuffle_follows_nbdl_seed():
    loader = gdata.DataLoader(_dataset(12), batch_size=5, shuffle=True)

    def order():
        return np.concatenate([y.asnumpy() for _, y in loader]).tolist()
    nbdl.random.seed(3)
    first = order()
    nbdl.random.seed(3)
    assert order() == first
    assert sorted(first) == list(range(12)) and first != list(range(12))


def test_dataloader_batch_sampler_and_batchify_fn():
    bs = gdata.BatchSampler(gdata.IntervalSampler(6, 2), 3)
    loader = gdata.DataLoader(gdata.SimpleDataset(list(range(100, 106))), batch_sampler=bs,
                              batchify_fn=lambda samples: sum(samples))
    assert list(loader) == [100 + 102 + 104, 101 + 103 + 105]


def test_dataloader_argument_errors():
    ds = _dataset()
    bs = gdata.BatchSampler(gdata.SequentialSampler(10), 2)
    with pytest.raises(gdata.DataError, match="batch_size must be specified"):
        gdata.DataLoader(ds)
    with pytest.raises(gdata.DataError, match="batch_size must not be specified"):
        gdata.DataLoader(ds, batch_size=2, batch_sampler=bs)
    with pytest.raises(gdata.DataError, match="shuffle, last_batch|last_batch, shuffle"):
        gdata.DataLoader(ds, batch_sampler=bs, shuffle=True, last_batch="keep")
    with pytest.raises(gdata.DataError, match="shuffle must not be specified if sampler"):
        gdata.DataLoader(ds, batch_size=2, shuffle=True, sampler=gdata.SequentialSampler(10))
    with pytest.raises(gdata.DataError, match="timeout must be a positive number"):
        gdata.DataLoader(ds, batch_size=2, timeout=0)
    with pytest.raises(gdata.DataError, match="last_batch"):
        gdata.DataLoader(ds, batch_size=2, last_batch="all")
    with pytest.warns(UserWarning, match="nopython"):
        loader = gdata.DataLoader(ds, batch_size=5, try_nopython=True)
    assert len(list(loader)) == 2
