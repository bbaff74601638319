"""nbdl.io.CSVIter and MNISTIter on small files the tests write."""
import gzip
import struct

import numpy as np
import pytest

import nbdl
from nbdl.io import CSVIter, MNISTIter


def write_csv(path, array, fmt="%g"):
    np.savetxt(path, np.asarray(array).reshape(len(array), -1), delimiter=",", fmt=fmt)
    return str(path)


def epoch(it):
    return [(b.data[0].asnumpy(), b.label[0].asnumpy(), b.pad, b.index) for b in it]


def test_csv_reshapes_rows_and_pairs_labels(tmp_path):
    data = np.arange(6 * 6, dtype=np.float32).reshape(6, 6) / 4
    it = CSVIter(data_csv=write_csv(tmp_path / "d.csv", data), data_shape=(2, 3),
                 label_csv=write_csv(tmp_path / "l.csv", np.arange(6) + 1), batch_size=3)
    assert it.provide_data[0].shape == (3, 2, 3) and it.provide_label[0].shape == (3,)
    assert it.provide_data[0].name == "data" and it.provide_label[0].name == "softmax_label"
    got = epoch(it)
    assert len(got) == 2
    np.testing.assert_array_equal(np.concatenate([d for d, _, _, _ in got]),
                                  data.reshape(6, 2, 3))
    np.testing.assert_array_equal(np.concatenate([lab for _, lab, _, _ in got]), np.arange(6) + 1)
    assert [p for _, _, p, _ in got] == [0, 0]
    assert got[1][3].tolist() == [3, 4, 5] and got[1][3].dtype == np.uint64
    it.reset()
    assert it.iter_next()
    assert isinstance(it.getdata(), nbdl.nd.NDArray)  # one array, as MXNet's CSVIter gives
    assert it.getlabel().shape == (3,) and it.getpad() == 0


def test_csv_round_batch_wraps_and_the_next_epoch_continues(tmp_path):
    rows = np.array([[1, 2, 3], [2, 3, 4], [3, 4, 5], [4, 5, 6]])
    path = write_csv(tmp_path / "d.csv", rows)
    it = CSVIter(data_csv=path, data_shape=(3,), batch_size=3)
    first = epoch(it)
    assert [d[:, 0].tolist() for d, _, _, _ in first] == [[1, 2, 3], [4, 1, 2]]
    assert [p for _, _, p, _ in first] == [0, 2]
    assert first[1][3].tolist() == [3, 0, 1]
    np.testing.assert_array_equal(first[0][1], np.zeros(3))  # no label file: labels are 0
    it.reset()  # the wrap already used rows 1 and 2 of the new epoch
    second = epoch(it)
    assert [d[:, 0].tolist() for d, _, _, _ in second] == [[3, 4, 1]]
    assert [p for _, _, p, _ in second] == [1]
    it.reset()
    assert [d[:, 0].tolist() for d, _, _, _ in epoch(it)] == [[2, 3, 4]]
    it.reset()  # that epoch ended exactly, so this one starts at the top
    assert [d[:, 0].tolist() for d, _, _, _ in epoch(it)] == [[1, 2, 3], [4, 1, 2]]


def test_csv_without_round_batch_keeps_stale_rows_in_the_padding(tmp_path):
    rows = np.array([[1, 2, 3], [2, 3, 4], [3, 4, 5], [4, 5, 6]])
    it = CSVIter(data_csv=write_csv(tmp_path / "d.csv", rows), data_shape=(3,), batch_size=3,
                 round_batch=False)
    for _ in range(2):
        got = epoch(it)
        assert [d[:, 0].tolist() for d, _, _, _ in got] == [[1, 2, 3], [4, 2, 3]]
        assert [p for _, _, p, _ in got] == [0, 2]
        it.reset()


@pytest.mark.parametrize("dtype,value", [("int32", 200000001), ("int64", 2147483648),
                                         ("float32", 1.5)])
def test_csv_dtypes(tmp_path, dtype, value):
    path = tmp_path / "d.csv"
    path.write_text("\n".join(",".join([str(value)] * 4) for _ in range(5)) + "\n")
    it = CSVIter(data_csv=str(path), data_shape=(2, 2), batch_size=5, dtype=dtype)
    b = next(it)
    assert b.data[0].dtype == np.dtype(dtype) and b.label[0].dtype == np.dtype(dtype)
    assert it.provide_data[0].dtype == np.dtype(dtype)
    np.testing.assert_array_equal(b.data[0].asnumpy(), np.full((5, 2, 2), value, dtype=dtype))


def test_csv_label_shape_and_directory(tmp_path):
    (tmp_path / "dir").mkdir()
    write_csv(tmp_path / "dir" / "a.csv", np.arange(4).reshape(2, 2))
    write_csv(tmp_path / "dir" / "b.csv", np.arange(4, 8).reshape(2, 2))
    labels = write_csv(tmp_path / "l.csv", np.arange(12).reshape(4, 3))
    it = CSVIter(data_csv=str(tmp_path / "dir"), data_shape=(2,), label_csv=labels,
                 label_shape=(3,), batch_size=4, data_name="x", label_name="y")
    assert it.provide_label[0].shape == (4, 3)
    assert (it.provide_data[0].name, it.provide_label[0].name) == ("x", "y")
    b = next(it)
    np.testing.assert_array_equal(b.data[0].asnumpy(), np.arange(8).reshape(4, 2))
    np.testing.assert_array_equal(b.label[0].asnumpy(), np.arange(12).reshape(4, 3))


def test_csv_bad_input(tmp_path):
    path = write_csv(tmp_path / "d.csv", np.ones((4, 6)))
    with pytest.raises(nbdl.ShapeError, match=r"have 6 values, but the shape \(5,\) needs 5"):
        CSVIter(data_csv=path, data_shape=(5,), batch_size=2)
    with pytest.raises(nbdl.ShapeError, match="3 rows, fewer than the 4"):
        CSVIter(data_csv=path, data_shape=(6,), batch_size=2,
                label_csv=write_csv(tmp_path / "l.csv", np.ones(3)))
    with pytest.raises(nbdl.ArgumentError, match="dtype must be one of"):
        CSVIter(data_csv=path, data_shape=(6,), batch_size=2, dtype="float16")
    with pytest.raises(nbdl.ArgumentError, match="batch_size must be a positive int"):
        CSVIter(data_csv=path, data_shape=(6,), batch_size=0)
    with pytest.raises(nbdl.ArgumentError, match="is not a file or directory"):
        CSVIter(data_csv=str(tmp_path / "missing.csv"), data_shape=(6,), batch_size=2)
    with pytest.raises(nbdl.ArgumentError, match="data_shape must be"):
        CSVIter(data_csv=path, data_shape=(0, 6), batch_size=2)
    with pytest.raises(TypeError):  # keyword arguments only, as in MXNet
        CSVIter(path, (6,), 2)
    (tmp_path / "bad.csv").write_text("1,2\n3,x\n")
    with pytest.raises(nbdl.ShapeError, match="cannot parse"):
        CSVIter(data_csv=str(tmp_path / "bad.csv"), data_shape=(2,), batch_size=1)
    small = CSVIter(data_csv=write_csv(tmp_path / "s.csv", np.ones((2, 1))), data_shape=(1,),
                    batch_size=5)
    with pytest.raises(nbdl.ShapeError, match="needs more than the 2 rows of data_csv"):
        next(small)
    with pytest.raises(nbdl.NbdlError, match="no current batch"):
        CSVIter(data_csv=path, data_shape=(6,), batch_size=2).getdata()


def write_mnist(tmp_path, images, labels, gz=False):
    n, r, c = images.shape
    img = struct.pack(">iiii", 2051, n, r, c) + images.astype(np.uint8).tobytes()
    lab = struct.pack(">ii", 2049, len(labels)) + np.asarray(labels, np.uint8).tobytes()
    suffix = ".gz" if gz else ""
    ip, lp = tmp_path / f"img-idx3-ubyte{suffix}", tmp_path / f"lab-idx1-ubyte{suffix}"
    ip.write_bytes(gzip.compress(img) if gz else img)
    lp.write_bytes(gzip.compress(lab) if gz else lab)
    return str(ip), str(lp)


@pytest.fixture
def mnist(rng):
    return rng.randint(0, 256, size=(7, 4, 5)), np.arange(7) % 10


@pytest.mark.parametrize("gz", [False, True])
def test_mnist_batches_scale_and_drop_the_remainder(tmp_path, mnist, gz):
    images, labels = mnist
    ip, lp = write_mnist(tmp_path, images, labels, gz)
    it = MNISTIter(image=ip, label=lp, batch_size=3, shuffle=False, silent=True)
    assert it.provide_data[0].shape == (3, 1, 4, 5) and it.provide_label[0].shape == (3,)
    got = epoch(it)
    assert len(got) == 2
    for k, (d, lab, pad, index) in enumerate(got):
        np.testing.assert_allclose(d, images[3 * k:3 * k + 3, None] / 256.0, rtol=1e-6)
        np.testing.assert_array_equal(lab, labels[3 * k:3 * k + 3])
        assert pad == 0 and index.tolist() == list(range(3 * k, 3 * k + 3))
        assert d.dtype == np.float32
    it.reset()
    assert len(epoch(it)) == 2


def test_mnist_flat_shuffle_seed_and_parts(tmp_path, mnist):
    images, labels = mnist
    ip, lp = write_mnist(tmp_path, images, labels)
    it = MNISTIter(image=ip, label=lp, batch_size=2, flat=True, shuffle=True, seed=5,
                   silent=True)
    assert it.provide_data[0].shape == (2, 20)
    first = epoch(it)
    for d, lab, _, index in first:  # images stay with their labels
        np.testing.assert_allclose(d, images[index.astype(int)].reshape(2, 20) / 256.0,
                                   rtol=1e-6)
        np.testing.assert_array_equal(lab, labels[index.astype(int)])
    order = np.concatenate([i for _, _, _, i in first]).tolist()
    assert order != sorted(order)
    it.reset()  # shuffled once: every epoch has the same order
    assert np.concatenate([i for _, _, _, i in epoch(it)]).tolist() == order
    again = MNISTIter(image=ip, label=lp, batch_size=2, flat=True, seed=5, silent=True)
    assert np.concatenate([i for _, _, _, i in epoch(again)]).tolist() == order
    part = MNISTIter(image=ip, label=lp, batch_size=1, shuffle=False, num_parts=2,
                     part_index=1, silent=True)
    assert [int(i[0]) for _, _, _, i in epoch(part)] == [3, 4, 5, 6]


def test_mnist_logs_unless_silent(tmp_path, mnist, caplog):
    ip, lp = write_mnist(tmp_path, *mnist)
    with caplog.at_level("INFO", logger="nbdl.io"):
        MNISTIter(image=ip, label=lp, batch_size=2, shuffle=False)
        MNISTIter(image=ip, label=lp, batch_size=2, shuffle=False, silent=True)
    msgs = [r.getMessage() for r in caplog.records if r.name == "nbdl.io"]
    assert msgs == ["MNISTIter: load 7 images, shuffle=0, shape=(2, 1, 4, 5)"]


def test_mnist_bad_input(tmp_path, mnist):
    images, labels = mnist
    ip, lp = write_mnist(tmp_path, images, labels)
    with pytest.raises(nbdl.ShapeError, match="magic number 2049, not 2051"):
        MNISTIter(image=lp, label=ip, silent=True)
    (tmp_path / "six").mkdir()
    _, lp6 = write_mnist(tmp_path / "six", images[:6], labels[:6])
    with pytest.raises(nbdl.ShapeError, match="7 images but label holds 6"):
        MNISTIter(image=ip, label=lp6, silent=True)
    with pytest.raises(nbdl.ArgumentError, match="existing idx file"):
        MNISTIter(image=str(tmp_path / "nope"), label=lp, silent=True)
    with pytest.raises(nbdl.ArgumentError, match="batch_size must be a positive int"):
        MNISTIter(image=ip, label=lp, batch_size=0)
    with pytest.raises(nbdl.ArgumentError, match="part_index must be < num_parts"):
        MNISTIter(image=ip, label=lp, num_parts=2, part_index=2)
    short = tmp_path / "short"
    short.write_bytes(struct.pack(">iiii", 2051, 9, 4, 5) + b"\0" * 10)
    with pytest.raises(nbdl.ShapeError, match="declares shape"):
        MNISTIter(image=str(short), label=lp, silent=True)


def test_csv_label_shapes_with_ones(tmp_path):
    data = write_csv(tmp_path / "d.csv", np.arange(8).reshape(4, 2))
    labels = write_csv(tmp_path / "l.csv", np.arange(12).reshape(4, 3))
    it = CSVIter(data_csv=data, data_shape=(2,), label_csv=labels, label_shape=(1, 3),
                 batch_size=2)
    assert it.provide_label[0].shape == (2, 1, 3)
    assert next(it).label[0].shape == (2, 1, 3)
    ones = write_csv(tmp_path / "o.csv", np.arange(4))
    it = CSVIter(data_csv=data, data_shape=(2,), label_csv=ones, label_shape=(1, 1), batch_size=2)
    assert it.provide_label[0].shape == (2,)
    np.testing.assert_array_equal(next(it).label[0].asnumpy(), [0, 1])
