"""Vision datasets (Gluon's ``gluon.data.vision.datasets``): MNIST,
FashionMNIST, CIFAR10, CIFAR100, ImageFolderDataset, ImageRecordDataset and
RecordFileDataset.

nbdl never downloads anything: the files must already be in ``root``, and a
missing file raises ``DatasetNotFoundError`` naming the files expected and
the directory searched.  Every file is parsed and checked (magic numbers,
sizes, label ranges) before anything is allocated from its header, and
nothing in a file is executed: the pickled "python version" of CIFAR is not
read, only its binary version.

As in Gluon, a sample is ``(image, label)`` with the image an HWC uint8
NDArray and the label a numpy int32 (MNIST, CIFAR), a Python int
(ImageFolderDataset) or the record's float label (ImageRecordDataset); with
``transform`` the sample is ``transform(image, label)``.
"""
import gzip
import math
import os
import struct
import warnings
import zlib

import numpy as np

from ....ndarray.creation import share_numpy as from_numpy
from ..dataset import DataError, Dataset
from .image import FormatError, ImageError, read_host, decode_host
from .recordio import MXIndexedRecordIO, unpack

# A header may not announce more than this many bytes (2 GiB): larger
# numbers mean a corrupt file, and nothing is allocated from them.
_MAX_IDX_BYTES = 1 << 31
_READ_CHUNK = 1 << 20


class DatasetNotFoundError(DataError, FileNotFoundError):
    """The files of a dataset are not where it was told to look."""


def _default_root(name):
    return os.path.join("~", ".nbdl", "datasets", name)


def _check_transform(where, transform):
    if transform is not None and not callable(transform):
        raise DataError(f"{where}: transform must be callable or None, got "
                        f"{type(transform).__name__}")
    return transform


class _ImageLabelDataset(Dataset):
    """Images (N, H, W, C uint8, on the host) and labels (N,) in memory."""

    def __init__(self, root, train, transform, where):
        self._root = os.path.abspath(os.path.expanduser(os.fspath(root)))
        self._train = bool(train)
        self._transform = _check_transform(where, transform)
        self._data, self._label = self._get_data()

    def __len__(self):
        return len(self._label)

    def __getitem__(self, idx):
        img = from_numpy(np.array(self._data[idx]))
        label = self._label[idx]
        if self._transform is not None:
            return self._transform(img, label)
        return img, label

    def _find(self, names, subdirs=("",)):
        """The path of each file in ``names`` (raw or ``.gz``) inside one of
        ``subdirs`` of the root."""
        for sub in subdirs:
            folder = os.path.join(self._root, sub)
            found = []
            for name in names:
                cands = [os.path.join(folder, n) for n in (name, name + ".gz")]
                hit = next((c for c in cands if os.path.isfile(c)), None)
                if hit is None:
                    break
                found.append(hit)
            else:
                return found
        dirs = " or ".join(repr(os.path.join(self._root, s)) for s in subdirs)
        raise DatasetNotFoundError(
            f"{type(self).__name__}: expected the files {', '.join(names)} (raw or .gz) in "
            f"{dirs}; nbdl does not download datasets, so fetch them yourself and place them "
            f"there (or pass root=...)")


def _open_maybe_gzip(path):
    with open(path, "rb") as f:
        gz = f.read(2) == b"\x1f\x8b"
    return gzip.open(path, "rb") if gz else open(path, "rb")


def _read_exact(f, n, path, what):
    """Exactly ``n`` bytes, read in chunks (never trusting ``n`` for one
    allocation before the data is there)."""
    buf = bytearray()
    while len(buf) < n:
        chunk = f.read(min(_READ_CHUNK, n - len(buf)))
        if not chunk:
            raise FormatError(f"{path}: truncated {what}: expected {n} bytes, found {len(buf)}")
        buf += chunk
    return bytes(buf)


def read_idx(path, ndim):
    """A uint8 array from an idx file (MNIST's format: magic ``0x0000 08
    ndim``, ``ndim`` big-endian uint32 sizes, then the data), plain or
    gzipped."""
    try:
        with _open_maybe_gzip(path) as f:
            head = _read_exact(f, 4, path, "idx header")
            if head[:2] != b"\0\0" or head[2] != 0x08 or head[3] != ndim:
                raise FormatError(
                    f"{path}: bad idx magic number 0x{head.hex()} (expected "
                    f"0x000008{ndim:02x}: unsigned bytes in {ndim} dimension(s))")
            dims = struct.unpack(f">{ndim}I", _read_exact(f, 4 * ndim, path, "idx header"))
            count = math.prod(dims)   # Python ints: no overflow
            if count > _MAX_IDX_BYTES:
                raise FormatError(f"{path}: idx header announces shape {dims} "
                                  f"({count} bytes); the file is corrupt")
            data = _read_exact(f, count, path, f"idx data of shape {dims}")
            if f.read(1):
                raise FormatError(f"{path}: trailing bytes after the idx data of shape {dims}")
    except (OSError, EOFError, zlib.error) as e:
        raise FormatError(f"{path}: cannot read the idx file ({e})") from None
    return np.frombuffer(data, dtype=np.uint8).reshape(dims)


class MNIST(_ImageLabelDataset):
    """The MNIST handwritten digits: 28x28x1 uint8 images, int32 labels.
    Reads ``train-images-idx3-ubyte``, ``train-labels-idx1-ubyte`` (or the
    ``t10k-`` pair when ``train=False``), raw or gzipped, from ``root``."""

    _files = {True: ("train-images-idx3-ubyte", "train-labels-idx1-ubyte"),
              False: ("t10k-images-idx3-ubyte", "t10k-labels-idx1-ubyte")}
    _num_classes = 10

    def __init__(self, root=_default_root("mnist"), train=True, transform=None):
        super().__init__(root, train, transform, type(self).__name__)

    def _get_data(self):
        img_path, label_path = self._find(self._files[self._train])
        label = read_idx(label_path, 1)
        data = read_idx(img_path, 3)
        if data.shape[0] != label.shape[0]:
            raise FormatError(f"{img_path} holds {data.shape[0]} images but {label_path} holds "
                              f"{label.shape[0]} labels")
        if label.size and label.max() >= self._num_classes:
            raise FormatError(f"{label_path}: label {int(label.max())} is out of range "
                              f"[0, {self._num_classes})")
        return data[..., None], label.astype(np.int32)


class FashionMNIST(MNIST):
    """Zalando's Fashion-MNIST: the same files and layout as MNIST."""

    def __init__(self, root=_default_root("fashion-mnist"), train=True, transform=None):
        super().__init__(root, train, transform)


def _read_cifar_bin(path, label_bytes, label_index, num_classes):
    record = label_bytes + 3 * 32 * 32
    size = os.path.getsize(path)
    if size == 0 or size % record:
        raise FormatError(f"{path}: {size} bytes is not a whole number of {record}-byte CIFAR "
                          f"records ({label_bytes} label byte(s) + 3x32x32 pixels)")
    try:
        raw = np.fromfile(path, dtype=np.uint8).reshape(-1, record)
    except OSError as e:
        raise FormatError(f"{path}: cannot read ({e})") from None
    label = raw[:, label_index].astype(np.int32)
    if label.max() >= num_classes:
        raise FormatError(f"{path}: label {int(label.max())} is out of range [0, {num_classes}); "
                          f"is this the right CIFAR file?")
    data = raw[:, label_bytes:].reshape(-1, 3, 32, 32).transpose(0, 2, 3, 1)
    return np.ascontiguousarray(data), label


class CIFAR10(_ImageLabelDataset):
    """CIFAR-10: 32x32x3 uint8 images, int32 labels in [0, 10).  Reads the
    binary version (``cifar-10-batches-bin/data_batch_1.bin`` ...
    ``data_batch_5.bin``, ``test_batch.bin``) under ``root``."""

    _folder = "cifar-10-batches-bin"
    _py_folder = "cifar-10-batches-py"
    _archive = "cifar-10-binary.tar.gz"

    def __init__(self, root=_default_root("cifar10"), train=True, transform=None):
        super().__init__(root, train, transform, type(self).__name__)

    def _names(self):
        if self._train:
            return [f"data_batch_{i}.bin" for i in range(1, 6)]
        return ["test_batch.bin"]

    def _read(self, path):
        return _read_cifar_bin(path, 1, 0, 10)

    def _get_data(self):
        names = self._names()
        folders = (self._folder, "")
        paths = []
        for name in names:
            hit = next((os.path.join(self._root, d, name) for d in folders
                        if os.path.isfile(os.path.join(self._root, d, name))), None)
            if hit is None:
                raise self._missing(names)
            paths.append(hit)
        parts = [self._read(p) for p in paths]
        return (np.concatenate([p[0] for p in parts]), np.concatenate([p[1] for p in parts]))

    def _missing(self, names):
        where = f"{os.path.join(self._root, self._folder)!r} (or {self._root!r})"
        msg = (f"{type(self).__name__}: expected the binary files {', '.join(names)} in "
               f"{where}; nbdl does not download datasets: extract {self._archive} "
               f"(the binary version) there")
        if os.path.isdir(os.path.join(self._root, self._py_folder)):
            msg += (f".  Only the python version ({self._py_folder!r}) was found: its files "
                    f"are pickles, which nbdl does not load because unpickling can run code")
        return DatasetNotFoundError(msg)


class CIFAR100(CIFAR10):
    """CIFAR-100: 32x32x3 uint8 images; int32 labels are the 100 fine
    classes when ``fine_label`` else the 20 coarse ones.  Reads the binary
    version (``cifar-100-binary/train.bin``, ``test.bin``)."""

    _folder = "cifar-100-binary"
    _py_folder = "cifar-100-python"
    _archive = "cifar-100-binary.tar.gz"

    def __init__(self, root=_default_root("cifar100"), fine_label=False, train=True,
                 transform=None):
        self._fine_label = bool(fine_label)
        super().__init__(root, train, transform)

    def _names(self):
        return ["train.bin" if self._train else "test.bin"]

    def _read(self, path):
        if self._fine_label:
            return _read_cifar_bin(path, 2, 1, 100)
        return _read_cifar_bin(path, 2, 0, 20)


class ImageFolderDataset(Dataset):
    """Images in one subfolder per class: ``root/<class>/<image>``.
    ``synsets`` lists the class names (sorted; the label is the index);
    ``items`` the ``(path, label)`` pairs.  ``flag`` 1 loads RGB (HxWx3),
    0 grayscale (HxWx1).  ``.npy`` images are read without Pillow; other
    formats need Pillow (``pip install pillow``)."""

    def __init__(self, root, flag=1, transform=None):
        self._root = os.path.abspath(os.path.expanduser(os.fspath(root)))
        if flag not in (0, 1) or isinstance(flag, bool):
            raise DataError(f"ImageFolderDataset: flag must be 1 (color) or 0 (gray), "
                            f"got {flag!r}")
        self._flag = flag
        self._transform = _check_transform("ImageFolderDataset", transform)
        self._exts = [".jpg", ".jpeg", ".png", ".bmp", ".npy"]
        self._list_images(self._root)

    def _list_images(self, root):
        if not os.path.isdir(root):
            raise DatasetNotFoundError(f"ImageFolderDataset: {root!r} is not a directory")
        self.synsets = []
        self.items = []
        for folder in sorted(os.listdir(root)):
            path = os.path.join(root, folder)
            if not os.path.isdir(path):
                warnings.warn(f"ImageFolderDataset: ignoring {path}, which is not a directory",
                              stacklevel=3)
                continue
            label = len(self.synsets)
            self.synsets.append(folder)
            for filename in sorted(os.listdir(path)):
                fpath = os.path.join(path, filename)
                ext = os.path.splitext(filename)[1].lower()
                if not os.path.isfile(fpath):
                    continue
                if ext not in self._exts:
                    warnings.warn(f"ImageFolderDataset: ignoring {fpath} of type {ext!r}; "
                                  f"only {', '.join(self._exts)} are read", stacklevel=3)
                    continue
                self.items.append((fpath, label))

    def __len__(self):
        return len(self.items)

    def __getitem__(self, idx):
        path, label = self.items[idx]
        img = from_numpy(read_host(path, self._flag))
        if self._transform is not None:
            return self._transform(img, label)
        return img, label


class RecordFileDataset(Dataset):
    """The raw records (bytes) of a RecordIO file ``filename`` with its
    index ``<filename without extension>.idx``, in index order."""

    def __init__(self, filename):
        self.filename = os.path.expanduser(os.fspath(filename))
        self.idx_file = os.path.splitext(self.filename)[0] + ".idx"
        missing = [p for p in (self.filename, self.idx_file) if not os.path.isfile(p)]
        if missing:
            raise DatasetNotFoundError(
                f"{type(self).__name__}: missing {' and '.join(map(repr, missing))}; a "
                f"RecordIO dataset needs both the .rec file and its .idx index")
        self._record = MXIndexedRecordIO(self.idx_file, self.filename, "r")

    def __len__(self):
        return len(self._record.keys)

    def __getitem__(self, idx):
        return self._record.read_idx(self._record.keys[idx])


class ImageRecordDataset(RecordFileDataset):
    """Image records (``IRHeader`` + encoded image) from a RecordIO file;
    a sample is ``(HWC uint8 image NDArray, label)`` where the label is the
    header's float (or float32 array for multi-label records)."""

    def __init__(self, filename, flag=1, transform=None):
        if flag not in (0, 1) or isinstance(flag, bool):
            raise DataError(f"ImageRecordDataset: flag must be 1 (color) or 0 (gray), "
                            f"got {flag!r}")
        self._flag = flag
        self._transform = _check_transform("ImageRecordDataset", transform)
        super().__init__(filename)

    def __getitem__(self, idx):
        key = self._record.keys[idx]
        where = f"{self.filename} (record {key!r})"
        header, payload = unpack(self._record.read_idx(key), where)
        try:
            img = decode_host(payload, self._flag, where)
        except ImageError as e:
            if "Pillow" in str(e):
                raise
            raise FormatError(str(e)) from None
        label = header.label
        img = from_numpy(img)
        if self._transform is not None:
            return self._transform(img, label)
        return img, label
