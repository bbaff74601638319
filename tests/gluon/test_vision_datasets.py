"""Vision datasets against small files written by the tests: MNIST idx
files (raw and gzipped), CIFAR binaries, image folders and RecordIO files,
plus corrupted and missing files."""
import gzip
import struct
import warnings

import numpy as np
import pytest

import nbdl
from nbdl import NbdlError
from nbdl.gluon.data import DataLoader
from nbdl.gluon.data.vision import (CIFAR10, CIFAR100, MNIST, DatasetNotFoundError,
                                    FashionMNIST, FormatError, ImageError, ImageFolderDataset,
                                    ImageRecordDataset, RecordFileDataset, recordio)

try:
    import PIL.Image  # noqa: F401
    HAVE_PIL = True
except ImportError:
    HAVE_PIL = False


def _idx_bytes(arr, magic=None):
    head = magic if magic is not None else bytes([0, 0, 8, arr.ndim])
    return head + struct.pack(f">{arr.ndim}I", *arr.shape) + arr.astype(np.uint8).tobytes()


def _write_mnist(root, prefix, images, labels, gz):
    root.mkdir(parents=True, exist_ok=True)
    for name, arr in ((f"{prefix}-images-idx3-ubyte", images),
                      (f"{prefix}-labels-idx1-ubyte", labels)):
        data = _idx_bytes(arr)
        if gz:
            (root / (name + ".gz")).write_bytes(gzip.compress(data))
        else:
            (root / name).write_bytes(data)


@pytest.fixture
def mnist_data():
    rng = np.random.default_rng(0)
    images = rng.integers(0, 256, (5, 28, 28), dtype=np.uint8)
    labels = np.array([3, 0, 9, 1, 1], np.uint8)
    return images, labels


@pytest.mark.parametrize("gz", [False, True])
def test_mnist_reads_idx_files(tmp_path, mnist_data, gz):
    images, labels = mnist_data
    _write_mnist(tmp_path, "train", images, labels, gz)
    _write_mnist(tmp_path, "t10k", images[:2], labels[:2], gz)
    ds = MNIST(root=str(tmp_path))
    assert len(ds) == 5
    img, label = ds[2]
    assert isinstance(img, nbdl.nd.NDArray)
    assert img.shape == (28, 28, 1) and img.dtype == np.uint8
    np.testing.assert_array_equal(img.asnumpy()[:, :, 0], images[2])
    assert label == 9 and label.dtype == np.int32
    (x, y), = list(DataLoader(ds, batch_size=5))
    assert x.shape == (5, 28, 28, 1) and x.dtype == np.uint8
    np.testing.assert_array_equal(y.asnumpy(), labels)
    test = MNIST(root=str(tmp_path), train=False)
    assert len(test) == 2
    np.testing.assert_array_equal(test[1][0].asnumpy()[:, :, 0], images[1])


def test_fashion_mnist_and_transform(tmp_path, mnist_data):
    images, labels = mnist_data
    _write_mnist(tmp_path, "train", images, labels, True)
    ds = FashionMNIST(root=str(tmp_path), transform=lambda x, y: (x.asnumpy().sum(), y + 1))
    total, label = ds[0]
    assert total == int(images[0].astype(np.int64).sum()) and label == 4


def test_mnist_missing_files_named(tmp_path):
    with pytest.raises(DatasetNotFoundError) as e:
        MNIST(root=str(tmp_path / "nowhere"))
    msg = str(e.value)
    assert "train-images-idx3-ubyte" in msg and "train-labels-idx1-ubyte" in msg
    assert "nowhere" in msg and "does not download" in msg
    assert isinstance(e.value, NbdlError)


@pytest.mark.parametrize("case", ["magic", "ndim", "truncated", "trailing", "count",
                                  "huge", "badgzip", "label_range"])
def test_mnist_corrupt_files(tmp_path, mnist_data, case):
    images, labels = mnist_data
    _write_mnist(tmp_path, "train", images, labels, False)
    img_path = tmp_path / "train-images-idx3-ubyte"
    lab_path = tmp_path / "train-labels-idx1-ubyte"
    good = img_path.read_bytes()
    if case == "magic":
        img_path.write_bytes(b"\x00\x00\x09\x03" + good[4:])
        match = "bad idx magic"
    elif case == "ndim":
        lab_path.write_bytes(_idx_bytes(labels, magic=b"\x00\x00\x08\x02"))
        match = "bad idx magic"
    elif case == "truncated":
        img_path.write_bytes(good[:-10])
        match = "truncated"
    elif case == "trailing":
        img_path.write_bytes(good + b"x")
        match = "trailing bytes"
    elif case == "count":
        lab_path.write_bytes(_idx_bytes(labels[:4]))
        match = "5 images but .* 4 labels"
    elif case == "huge":
        img_path.write_bytes(b"\x00\x00\x08\x03" + struct.pack(">3I", 2**31, 2**16, 2**16))
        match = "corrupt"
    elif case == "badgzip":
        img_path.unlink()
        (tmp_path / "train-images-idx3-ubyte.gz").write_bytes(b"\x1f\x8b" + b"garbage" * 3)
        match = "cannot read the idx file"
    else:
        lab_path.write_bytes(_idx_bytes(np.array([1, 2, 3, 4, 12], np.uint8)))
        match = "label 12 is out of range"
    with pytest.raises(FormatError, match=match):
        MNIST(root=str(tmp_path))


def _cifar_records(images_chw, *label_cols):
    rows = [np.concatenate([np.array(labs, np.uint8), img.ravel()])
            for img, *labs in zip(images_chw, *label_cols)]
    return np.stack(rows).astype(np.uint8).tobytes()


def test_cifar10_binary(tmp_path):
    rng = np.random.default_rng(1)
    folder = tmp_path / "cifar-10-batches-bin"
    folder.mkdir()
    batches = []
    for i in range(1, 6):
        imgs = rng.integers(0, 256, (2, 3, 32, 32), dtype=np.uint8)
        labs = np.array([i, (i + 3) % 10], np.uint8)
        (folder / f"data_batch_{i}.bin").write_bytes(_cifar_records(imgs, labs))
        batches.append((imgs, labs))
    timgs = rng.integers(0, 256, (3, 3, 32, 32), dtype=np.uint8)
    (folder / "test_batch.bin").write_bytes(_cifar_records(timgs, np.array([7, 8, 9])))
    ds = CIFAR10(root=str(tmp_path))
    assert len(ds) == 10
    img, label = ds[3]                       # batch 2, second image
    assert img.shape == (32, 32, 3) and img.dtype == np.uint8
    np.testing.assert_array_equal(img.asnumpy(), batches[1][0][1].transpose(1, 2, 0))
    assert label == 5 and label.dtype == np.int32
    test = CIFAR10(root=str(tmp_path), train=False)
    assert [int(test[i][1]) for i in range(3)] == [7, 8, 9]


def test_cifar100_fine_and_coarse(tmp_path):
    rng = np.random.default_rng(2)
    folder = tmp_path / "cifar-100-binary"
    folder.mkdir()
    imgs = rng.integers(0, 256, (4, 3, 32, 32), dtype=np.uint8)
    coarse, fine = np.array([0, 5, 19, 3]), np.array([99, 42, 0, 7])
    (folder / "train.bin").write_bytes(_cifar_records(imgs, coarse, fine))
    (folder / "test.bin").write_bytes(_cifar_records(imgs[:1], coarse[:1], fine[:1]))
    assert [int(CIFAR100(root=str(tmp_path))[i][1]) for i in range(4)] == list(coarse)
    ds = CIFAR100(root=str(tmp_path), fine_label=True)
    assert [int(ds[i][1]) for i in range(4)] == list(fine)
    np.testing.assert_array_equal(ds[2][0].asnumpy(), imgs[2].transpose(1, 2, 0))
    assert len(CIFAR100(root=str(tmp_path), train=False)) == 1


def test_cifar_errors(tmp_path):
    with pytest.raises(DatasetNotFoundError, match="data_batch_1.bin"):
        CIFAR10(root=str(tmp_path))
    (tmp_path / "cifar-10-batches-py").mkdir()
    (tmp_path / "cifar-10-batches-py" / "data_batch_1").write_bytes(b"\x80\x04pickle")
    with pytest.raises(DatasetNotFoundError, match="pickles"):
        CIFAR10(root=str(tmp_path))
    folder = tmp_path / "cifar-100-binary"
    folder.mkdir()
    (folder / "train.bin").write_bytes(b"\0" * 3073)          # CIFAR-10 sized record
    with pytest.raises(FormatError, match="3074-byte"):
        CIFAR100(root=str(tmp_path))
    img = np.zeros((1, 3, 32, 32), np.uint8)
    (folder / "train.bin").write_bytes(_cifar_records(img, [25], [1]))
    with pytest.raises(FormatError, match="label 25 is out of range"):
        CIFAR100(root=str(tmp_path))


def _write_npy_folder(root):
    rng = np.random.default_rng(3)
    imgs = {}
    for cls in ("cat", "dog"):
        (root / cls).mkdir(parents=True)
        for j in range(2):
            img = rng.integers(0, 256, (4, 5, 3), dtype=np.uint8)
            np.save(root / cls / f"{j}.npy", img)
            imgs[(cls, j)] = img
    return imgs


def test_image_folder_npy(tmp_path):
    imgs = _write_npy_folder(tmp_path)
    (tmp_path / "dog" / "notes.txt").write_text("not an image")
    (tmp_path / "README").write_text("top-level file")
    with warnings.catch_warnings(record=True) as w:
        warnings.simplefilter("always")
        ds = ImageFolderDataset(str(tmp_path))
    assert any("notes.txt" in str(x.message) for x in w)
    assert any("README" in str(x.message) for x in w)
    (tmp_path / "dog" / "notes.txt").unlink()
    (tmp_path / "README").unlink()
    assert ds.synsets == ["cat", "dog"]
    assert len(ds) == 4 and [lab for _, lab in ds.items] == [0, 0, 1, 1]
    img, label = ds[3]
    assert label == 1 and img.shape == (4, 5, 3) and img.dtype == np.uint8
    np.testing.assert_array_equal(img.asnumpy(), imgs[("dog", 1)])
    gray = ImageFolderDataset(str(tmp_path), flag=0)[0][0].asnumpy()
    ref = np.rint(imgs[("cat", 0)].astype(np.float32) @ np.float32([0.299, 0.587, 0.114]))
    np.testing.assert_array_equal(gray[:, :, 0], ref.astype(np.uint8))
    out = ImageFolderDataset(str(tmp_path), transform=lambda x, y: (x.shape, y))[1]
    assert out == ((4, 5, 3), 0)


def test_image_folder_errors(tmp_path):
    with pytest.raises(DatasetNotFoundError, match="not a directory"):
        ImageFolderDataset(str(tmp_path / "missing"))
    with pytest.raises(NbdlError, match="flag"):
        ImageFolderDataset(str(tmp_path), flag=3)
    (tmp_path / "a").mkdir()
    (tmp_path / "a" / "x.npy").write_bytes(b"not numpy")
    (tmp_path / "a" / "y.png").write_bytes(b"not a png")
    ds = ImageFolderDataset(str(tmp_path))
    with pytest.raises(ImageError, match="x.npy"):
        ds[0]
    with pytest.raises(ImageError, match="pillow" if not HAVE_PIL else "cannot decode"):
        ds[1]


@pytest.mark.skipif(not HAVE_PIL, reason="Pillow is not installed")
def test_image_folder_png(tmp_path):
    from PIL import Image
    img = np.random.default_rng(4).integers(0, 256, (6, 7, 3), dtype=np.uint8)
    (tmp_path / "c").mkdir()
    Image.fromarray(img).save(tmp_path / "c" / "a.png")
    ds = ImageFolderDataset(str(tmp_path))
    np.testing.assert_array_equal(ds[0][0].asnumpy(), img)
    gray = ImageFolderDataset(str(tmp_path), flag=0)[0][0]
    assert gray.shape == (6, 7, 1)


def _write_rec(tmp_path, images, labels, fmt=".npy"):
    rec, idx = tmp_path / "data.rec", tmp_path / "data.idx"
    w = recordio.MXIndexedRecordIO(str(idx), str(rec), "w")
    for i, (img, lab) in enumerate(zip(images, labels)):
        w.write_idx(i, recordio.pack_img(recordio.IRHeader(0, lab, i, 0), img, img_fmt=fmt))
    w.close()
    return rec


def test_image_record_dataset_npy(tmp_path):
    rng = np.random.default_rng(5)
    images = [rng.integers(0, 256, (3 + i, 4, 3), dtype=np.uint8) for i in range(3)]
    rec = _write_rec(tmp_path, images, [0.0, 1.0, [2.0, 5.0]])
    ds = ImageRecordDataset(str(rec))
    assert len(ds) == 3
    img, label = ds[1]
    np.testing.assert_array_equal(img.asnumpy(), images[1])
    assert label == 1.0
    np.testing.assert_array_equal(ds[2][1], [2.0, 5.0])
    assert ImageRecordDataset(str(rec), flag=0)[0][0].shape == (3, 4, 1)
    raw = RecordFileDataset(str(rec))
    header, _ = recordio.unpack(raw[0])
    assert header.id == 0
    # the DataLoader's worker processes reopen the file
    loader = DataLoader(ImageRecordDataset(str(rec), transform=lambda x, y: (x[:3], y)).take(2),
                        batch_size=2, num_workers=1)
    try:
        (batch, labels), = list(loader)
    finally:
        loader.close()
    assert batch.shape == (2, 3, 4, 3)
    np.testing.assert_array_equal(batch.asnumpy()[0], images[0])


@pytest.mark.skipif(not HAVE_PIL, reason="Pillow is not installed")
def test_image_record_dataset_png(tmp_path):
    img = np.random.default_rng(6).integers(0, 256, (5, 4, 3), dtype=np.uint8)
    rec = _write_rec(tmp_path, [img], [3.0], fmt=".png")
    out, label = ImageRecordDataset(str(rec))[0]
    np.testing.assert_array_equal(out.asnumpy(), img)
    assert label == 3.0


def test_image_record_dataset_errors(tmp_path):
    with pytest.raises(DatasetNotFoundError, match=r"missing.rec.*missing.idx"):
        ImageRecordDataset(str(tmp_path / "missing.rec"))
    rec = _write_rec(tmp_path, [np.zeros((2, 2, 3), np.uint8)], [0.0])
    (tmp_path / "data.idx").unlink()
    with pytest.raises(DatasetNotFoundError, match="data.idx"):
        ImageRecordDataset(str(rec))
    # a record whose payload is neither .npy nor an image Pillow can read
    w = recordio.MXIndexedRecordIO(str(tmp_path / "data.idx"), str(rec), "w")
    w.write_idx(0, recordio.pack((0, 1.0, 0, 0), b"\x93NUMPYgarbage"))
    w.close()
    with pytest.raises(FormatError, match="record 0"):
        ImageRecordDataset(str(rec))[0]
