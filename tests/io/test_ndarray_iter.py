"""nbdl.io.NDArrayIter: last_batch_handle modes, shuffling, names, roll-over across reset."""
import numpy as np
import pytest

import nbdl
from nbdl.io import DataBatch, DataDesc, NDArrayIter


def rows(n, width=2):
    """``n`` examples whose every value is the example's number."""
    return np.repeat(np.arange(n, dtype=np.float32)[:, None], width, axis=1)


def epoch(it):
    return [(b.data[0].asnumpy(), [lab.asnumpy() for lab in b.label], b.pad) for b in it]


def firsts(batches):
    return [d[:, 0].astype(int).tolist() for d, _, _ in batches]


@pytest.mark.parametrize("n,bs", [(12, 4), (10, 3), (10, 4), (5, 5), (3, 7)])
def test_pad_covers_every_example_and_fills_from_the_start(n, bs):
    it = NDArrayIter(rows(n), np.arange(n), batch_size=bs, last_batch_handle="pad")
    batches = epoch(it)
    assert len(batches) == -(-n // bs)
    seen = np.concatenate([d[:, 0] for d, _, _ in batches]).astype(int)
    want = np.arange(len(batches) * bs) % n
    np.testing.assert_array_equal(seen, want)
    pads = [p for _, _, p in batches]
    assert pads[:-1] == [0] * (len(batches) - 1)
    assert pads[-1] == len(batches) * bs - n
    for d, (lab,), _ in batches:  # labels follow their rows
        np.testing.assert_array_equal(d[:, 0], lab)
        assert d.shape == (bs, 2)


@pytest.mark.parametrize("n,bs", [(12, 4), (10, 3), (10, 4), (3, 7)])
def test_discard_drops_the_incomplete_batch(n, bs):
    it = NDArrayIter(rows(n), None, batch_size=bs, last_batch_handle="discard")
    batches = epoch(it)
    assert len(batches) == n // bs
    assert firsts(batches) == [list(range(i * bs, (i + 1) * bs)) for i in range(n // bs)]
    assert all(p == 0 and lab == [] for _, lab, p in batches)
    it.reset()
    assert firsts(epoch(it)) == firsts(batches)  # discard never carries anything over


def test_roll_over_carries_leftovers_into_the_next_epoch():
    it = NDArrayIter(rows(10), np.arange(10) * 10, batch_size=3, last_batch_handle="roll_over")
    first = epoch(it)
    assert firsts(first) == [[0, 1, 2], [3, 4, 5], [6, 7, 8]]
    it.reset()
    second = epoch(it)
    assert firsts(second) == [[9, 0, 1], [2, 3, 4], [5, 6, 7]]
    # the pad of the rolled batch is the number of examples rolled over (MXNet's value)
    assert [p for _, _, p in second] == [1, 0, 0]
    np.testing.assert_array_equal(second[0][1][0], [90, 0, 10])
    it.reset()
    third = epoch(it)
    assert firsts(third) == [[8, 9, 0], [1, 2, 3], [4, 5, 6], [7, 8, 9]]
    assert [p for _, _, p in third] == [2, 0, 0, 0]
    it.reset()  # the epoch ended exactly: nothing rolls over
    assert firsts(epoch(it))[0] == [0, 1, 2]


def test_roll_over_with_a_dividing_batch_size_is_plain():
    it = NDArrayIter(rows(8), None, batch_size=4, last_batch_handle="roll_over")
    for _ in range(3):
        assert firsts(epoch(it)) == [[0, 1, 2, 3], [4, 5, 6, 7]]
        it.reset()


def test_hard_reset_forgets_rolled_over_examples():
    it = NDArrayIter(rows(10), None, batch_size=3, last_batch_handle="roll_over")
    epoch(it)
    it.hard_reset()
    assert firsts(epoch(it))[0] == [0, 1, 2]


def test_pad_with_batch_larger_than_the_data_tiles_it():
    data = np.arange(10)
    it = NDArrayIter(data, batch_size=205, last_batch_handle="pad")
    b = next(it)
    np.testing.assert_array_equal(b.data[0].asnumpy(), np.concatenate([np.tile(data, 20),
                                                                       np.arange(5)]))
    assert b.pad == 195
    with pytest.raises(StopIteration):
        next(it)


def test_shuffle_keeps_data_and_label_paired_and_follows_idx():
    np.random.seed(3)
    n = 17
    data = {"a": rows(n, 3), "b": rows(n, 1) * 2}
    label = np.arange(n, dtype=np.float32) + 100
    it = NDArrayIter(data, label, batch_size=5, shuffle=True, last_batch_handle="pad")
    order = it.idx.copy()
    assert sorted(order.tolist()) == list(range(n)) and order.tolist() != list(range(n))
    got = []
    for b in it:
        a, bb = (d.asnumpy() for d in b.data)
        lab = b.label[0].asnumpy()
        np.testing.assert_array_equal(a[:, 0] + 100, lab)
        np.testing.assert_array_equal(bb[:, 0], 2 * a[:, 0])
        got.extend(a[:, 0].astype(int).tolist())
    assert got[:n] == order.tolist()
    it.reset()  # reshuffles; rows stay paired
    again = []
    for b in it:
        a, lab = b.data[0].asnumpy()[:, 0], b.label[0].asnumpy()
        np.testing.assert_array_equal(a + 100, lab)
        again.extend(a.astype(int).tolist())
    assert sorted(again[:n]) == list(range(n)) and again[:n] != got[:n]


def test_shuffle_uses_numpys_global_state():
    def first_batch():
        np.random.seed(11)
        return next(NDArrayIter(rows(20), batch_size=20, shuffle=True)).data[0].asnumpy()
    np.testing.assert_array_equal(first_batch(), first_batch())


def test_dict_and_list_inputs_are_named_and_sorted():
    it = NDArrayIter({"zeta": rows(6), "alpha": rows(6, 3)}, [np.arange(6), np.arange(6)],
                     batch_size=4)
    assert [d.name for d in it.provide_data] == ["alpha", "zeta"]
    assert [d.shape for d in it.provide_data] == [(4, 3), (4, 2)]
    assert [d.name for d in it.provide_label] == ["_0_softmax_label", "_1_softmax_label"]
    b = next(it)
    assert [x.shape for x in b.data] == [(4, 3), (4, 2)]
    assert len(b.label) == 2
    assert [name for name, _ in it.data] == ["alpha", "zeta"]
    assert isinstance(it.data[0][1], nbdl.nd.NDArray)


def test_custom_names_and_provide_shapes():
    data = np.zeros((10, 3, 4, 5), dtype=np.float64)
    it = NDArrayIter(data, np.zeros((10, 1)), batch_size=6, data_name="img", label_name="y")
    (d,), (lab,) = it.provide_data, it.provide_label
    assert (d.name, d.shape, d.dtype, d.layout) == ("img", (6, 3, 4, 5), np.float32, "NCHW")
    assert (lab.name, lab.shape) == ("y", (6, 1))
    assert isinstance(d, DataDesc) and tuple(d) == ("img", (6, 3, 4, 5))


def test_numpy_becomes_float32_and_ndarrays_keep_their_dtype():
    it = NDArrayIter(np.arange(8, dtype=np.int64), batch_size=4)
    assert it.provide_data[0].dtype == np.float32
    assert next(it).data[0].dtype == np.float32
    x = nbdl.nd.array(np.arange(8), dtype=np.int32)
    it = NDArrayIter(x, batch_size=4)
    assert it.provide_data[0].dtype == np.int32
    b = next(it)
    assert b.data[0].dtype == np.int32 and isinstance(b.data[0], nbdl.nd.NDArray)
    np.testing.assert_array_equal(b.data[0].asnumpy(), [0, 1, 2, 3])


def test_batch_axis_from_layout():
    data = np.arange(2 * 7 * 3, dtype=np.float32).reshape(2, 7, 3)  # T, N, C
    it = NDArrayIter(data, batch_size=3, layout="TNC", last_batch_handle="pad")
    assert it.provide_data[0].shape == (2, 3, 3)
    batches = list(it)
    assert len(batches) == 3 and batches[-1].pad == 2
    np.testing.assert_array_equal(batches[1].data[0].asnumpy(), data[:, 3:6])
    np.testing.assert_array_equal(batches[2].data[0].asnumpy(), data[:, [6, 0, 1]])


def test_iter_next_getdata_protocol_and_getpad():
    it = NDArrayIter(rows(5), np.arange(5), batch_size=2, last_batch_handle="pad")
    assert it.iter_next()
    np.testing.assert_array_equal(it.getdata()[0].asnumpy()[:, 0], [0, 1])
    assert it.getpad() == 0 and it.getindex() is None
    assert it.iter_next() and it.iter_next()
    assert it.getpad() == 1
    np.testing.assert_array_equal(it.getlabel()[0].asnumpy(), [4, 0])
    assert not it.iter_next()
    with pytest.raises(nbdl.NbdlError, match="reset"):
        it.getdata()
    it.reset()
    assert it.iter_next()


def test_databatch_str_and_checks():
    b = DataBatch(data=[nbdl.nd.ones((2, 3))])
    assert str(b) == "DataBatch: data shapes: [(2, 3)] label shapes: None"
    b = DataBatch([nbdl.nd.ones((2, 3)), nbdl.nd.ones((7, 8))], [nbdl.nd.ones((4, 5))], pad=1)
    assert str(b) == "DataBatch: data shapes: [(2, 3), (7, 8)] label shapes: [(4, 5)]"
    with pytest.raises(nbdl.ArgumentError, match="data must be a list"):
        DataBatch(nbdl.nd.ones((2, 3)))


def test_datadesc_helpers():
    assert DataDesc.get_batch_axis(None) == 0
    assert DataDesc.get_batch_axis("TNC") == 1
    descs = DataDesc.get_list([("a", (1, 2)), ("b", (3,))], [("a", np.int32), ("b", np.float64)])
    want = [("a", (1, 2), np.int32), ("b", (3,), np.float64)]
    assert [(d.name, d.shape, d.dtype) for d in descs] == want
    assert DataDesc.get_list([("a", (1,))], None)[0].dtype == np.float32
    assert repr(DataDesc("x", (2,), np.int64, "NC")) == "DataDesc[x,(2,),<class 'numpy.int64'>,NC]"
    import copy
    d = copy.deepcopy(DataDesc("x", (2,), np.int64, "NC"))
    assert (d.dtype, d.layout) == (np.int64, "NC")
    with pytest.raises(nbdl.ArgumentError, match="no dtype"):
        DataDesc.get_list([("a", (1,))], [("b", np.int32)])


def test_longer_label_is_read_for_the_first_examples():
    # MXNet sizes the epoch by the first data array; a longer label (or data)
    # array gives its first rows, and shuffling keeps rows paired
    label = np.arange(20) * 10
    it = NDArrayIter(rows(10), {"label": label, "w": np.arange(20.0)}, batch_size=5)
    assert it.num_data == 10
    got = [b.label for b in it]
    assert len(got) == 2
    np.testing.assert_array_equal(np.concatenate([g[0].asnumpy() for g in got]), label[:10])
    np.testing.assert_array_equal(np.concatenate([g[1].asnumpy() for g in got]), np.arange(10.0))
    np.random.seed(3)
    it = NDArrayIter(rows(10), label, batch_size=10, shuffle=True)
    b = next(iter(it))
    np.testing.assert_array_equal(b.label[0].asnumpy(), b.data[0].asnumpy()[:, 0] * 10)


def test_bad_input():
    with pytest.raises(nbdl.ShapeError, match=r"data 'data' \(10, 2\), label 'softmax_label' \(9,\)"):
        NDArrayIter(rows(10), np.arange(9), batch_size=2)
    with pytest.raises(nbdl.ShapeError, match="at least as many examples.*first data array \\(5\\)"):
        NDArrayIter({"a": rows(5), "b": rows(4)}, batch_size=2)
    with pytest.raises(nbdl.ArgumentError, match="last_batch_handle.*'keep'"):
        NDArrayIter(rows(4), batch_size=2, last_batch_handle="keep")
    for bad in (0, -1, 2.0, True, None):
        with pytest.raises(nbdl.ArgumentError, match="batch_size must be a positive int"):
            NDArrayIter(rows(4), batch_size=bad)
    with pytest.raises(nbdl.ArgumentError, match="data must not be empty"):
        NDArrayIter([], batch_size=2)
    with pytest.raises(nbdl.ArgumentError, match="data must not be empty"):
        NDArrayIter(None, batch_size=2)
    with pytest.raises(nbdl.ArgumentError, match="input 'data' must be"):
        NDArrayIter([["a", object()]], batch_size=2)
    with pytest.raises(nbdl.ArgumentError, match="a dict name -> array"):
        NDArrayIter(42, batch_size=2)
    with pytest.raises(nbdl.ArgumentError, match="'N'"):
        NDArrayIter(rows(4), batch_size=2, layout="CHW")
    with pytest.raises(nbdl.ArgumentError, match="roll_over.*batch_size=5 for 4"):
        NDArrayIter(rows(4), batch_size=5, last_batch_handle="roll_over")


@pytest.mark.cuda
def test_batches_stay_on_the_inputs_device():
    x = nbdl.nd.array(np.arange(10.0), ctx=nbdl.gpu(0))
    it = NDArrayIter(x, np.arange(10.0), batch_size=4, last_batch_handle="roll_over")
    batches = list(it)
    assert [b.data[0].context for b in batches] == [nbdl.gpu(0)] * 2
    assert batches[0].label[0].context == nbdl.cpu()  # numpy labels live on the CPU
    it.reset()
    b = next(it)
    assert b.data[0].context == nbdl.gpu(0) and b.pad == 2
    np.testing.assert_array_equal(b.data[0].asnumpy(), [8, 9, 0, 1])
