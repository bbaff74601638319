"""MXNet 1.x NDArray files: ``nd.save`` / ``nd.load`` and ``.params`` files.

Layout (all integers little-endian)::

    uint64 0x112          list magic
    uint64 0              reserved
    uint64 N              number of arrays, then N arrays
    uint64 K              number of names, 0 or N, then K names
                          (each: uint64 byte length + UTF-8 bytes)

One array, as MXNet 1.x's ``NDArray::Save`` writes it (V2)::

    uint32 0xF993FAC9     magic (V3: 0xF993FACA, numpy shape semantics)
    int32  storage type   0 dense, 1 row_sparse, 2 csr
    [shape: storage shape, sparse only]
    shape                 int32 ndim + ndim int64 dims
    int32 dev_type, int32 dev_id      (stops after the shape for a "none" array)
    int32 type flag       0 f32, 1 f64, 2 f16, 3 u8, 4 i32, 5 i8, 6 i64, 7 bool, ...
    [sparse only: per aux array, int32 type flag + shape]
    raw data              (sparse: storage-shape elements, then each aux array)

Older writers: V1 (magic 0xF993FAC8) has no storage type; the pre-V1 layout
has no magic at all: its first uint32 is ndim, followed by uint32 dims.
A "none" array (an NDArray with no storage) is ndim 0 before V3 and ndim -1
(or any dim -1) in V3; it loads as ``None``.

Writing uses V2 for every array with ndim >= 1 and V3 only for 0-d arrays,
which V2 cannot express (MXNet 1.x reads V3 only with numpy shape semantics
switched on).  Reading checks every declared size against the bytes left
before allocating anything, so a corrupt or hostile file costs at most about
its own size in memory and raises ``FormatError``; nothing is executed.
"""
import math
import os
import struct

import numpy as np

from ..errors import DTypeError
from ..imperative.base import NDArrayBase
from .atomic import as_path, atomic_write, open_for_reading
from .errors import FormatError, ArgumentError, UnsupportedFormatError

LIST_MAGIC = 0x112
V1_MAGIC = 0xF993FAC8
V2_MAGIC = 0xF993FAC9
V3_MAGIC = 0xF993FACA
MAX_NDIM = 32
# A shape whose element count times item size reaches this cannot be an array.
_MAX_BYTES = 1 << 62
_STORAGE = {0: "default", 1: "row_sparse", 2: "csr"}
_NUM_AUX = {0: 0, 1: 1, 2: 2}
_DEV_TYPES = {1: "cpu", 2: "gpu", 3: "cpu_pinned", 5: "cpu_shared"}
# mshadow type flag -> (numpy dtype, or None where nbdl has no such storage; name; item size)
_FLAGS = {0: (np.float32, "float32", 4), 1: (np.float64, "float64", 8),
          2: (np.float16, "float16", 2), 3: (np.uint8, "uint8", 1), 4: (np.int32, "int32", 4),
          5: (np.int8, "int8", 1), 6: (np.int64, "int64", 8), 7: (np.bool_, "bool", 1),
          8: (None, "int16", 2), 9: (None, "uint16", 2), 10: (None, "uint32", 4),
          11: (None, "uint64", 8), 12: (None, "bfloat16", 2)}
_TO_FLAG = {np.dtype(t): f for f, (t, _, _) in _FLAGS.items() if t is not None}
# The smallest array record (a pre-V1 none array: one uint32) and name record.
_MIN_ARRAY_BYTES = 4
_MIN_NAME_BYTES = 8


# -- writing ----------------------------------------------------------------------

def save(fname, data):
    """Save an array, a list of arrays or a dict str -> array (numpy arrays
    or nbdl arrays: ``NDArrayBase``, NDArray's runtime base) to ``fname`` in
    MXNet 1.x's format, atomically: the file appears complete or not at all,
    and a failed save keeps the old file."""
    path = as_path(fname, "save")
    arrays, names = _normalise(data)
    atomic_write(path, lambda f: _write(f, arrays, names))


def save_tobuffer(data):
    """The bytes ``save`` would write for ``data``."""
    arrays, names = _normalise(data)
    out = _BytesSink()
    _write(out, arrays, names)
    return b"".join(out.parts)


class _BytesSink:
    def __init__(self):
        self.parts = []

    def write(self, b):
        self.parts.append(bytes(b))


def _normalise(data):
    if isinstance(data, (list, tuple)):
        return [_host_array(v, f"item {i}") for i, v in enumerate(data)], []
    if isinstance(data, dict):
        names = list(data)
        for k in names:
            if not isinstance(k, str):
                raise ArgumentError(f"save: dict keys must be str, got {k!r} "
                                    f"({type(k).__name__})")
        return [_host_array(data[k], f"key {k!r}") for k in names], names
    if _is_array(data):
        return [_host_array(data, "the array")], []
    raise ArgumentError("save: data must be an NDArray, a numpy array, a list of them or a "
                    f"dict str -> array, got {type(data).__name__}")


def _is_array(x):
    return isinstance(x, (NDArrayBase, np.ndarray))


def _host_array(x, label):
    """A C-contiguous little-endian numpy array of a dtype MXNet has a flag for."""
    if isinstance(x, NDArrayBase):
        a = x.asnumpy()
    elif isinstance(x, np.ndarray):
        a = x
    else:
        raise ArgumentError(f"save: {label} is a {type(x).__name__}, not an NDArray or numpy array")
    dt = a.dtype.newbyteorder("<") if a.dtype.byteorder == ">" else a.dtype
    if np.dtype(dt.str) not in _TO_FLAG:
        raise DTypeError(f"save: {label} has dtype {a.dtype}, which an MXNet NDArray file "
                         f"cannot hold (supported: {', '.join(sorted(str(d) for d in _TO_FLAG))})")
    a = a.astype(np.dtype(dt.str), copy=False)
    if not a.flags.c_contiguous:
        a = a.copy(order="C")
    return a


def _write(f, arrays, names):
    f.write(struct.pack("<QQQ", LIST_MAGIC, 0, len(arrays)))
    for a in arrays:
        magic = V3_MAGIC if a.ndim == 0 else V2_MAGIC
        f.write(struct.pack(f"<Iii{a.ndim}qiii", magic, 0, a.ndim, *a.shape,
                            1, 0, _TO_FLAG[a.dtype]))
        if a.size:
            f.write(a.reshape(-1).view(np.uint8).data)
    f.write(struct.pack("<Q", len(names)))
    for name in names:
        b = name.encode("utf-8")
        f.write(struct.pack("<Q", len(b)))
        f.write(b)


# -- reading ----------------------------------------------------------------------

def load(fname):
    """Load an MXNet NDArray file: a list of numpy arrays when it has no
    names, else a dict name -> numpy array (a file saved from an empty dict
    loads as ``[]``, as in MXNet).  ``nd.load`` gives them as NDArrays on
    the CPU."""
    path, f = open_for_reading(fname, "load")
    with f:
        size = os.fstat(f.fileno()).st_size
        return _parse(_FileSource(f, size, repr(path)))


def load_frombuffer(buf):
    """``load`` for the bytes of a file (bytes, bytearray or memoryview)."""
    if not isinstance(buf, (bytes, bytearray, memoryview)):
        raise ArgumentError(f"load_frombuffer expects bytes, bytearray or memoryview, "
                            f"got {type(buf).__name__}")
    try:
        mv = memoryview(buf).cast("B")
    except TypeError as e:  # a non-contiguous memoryview
        raise ArgumentError(f"load_frombuffer: cannot read the buffer as bytes: {e}") from None
    return _parse(_BufferSource(mv, "<buffer>"))


def load_raw_bytes(buf):
    """One array from MXNet's raw NDArray bytes (``MXNDArraySaveRawBytes``,
    what an MXNet 1.x NDArray pickles as its ``'handle'``): a numpy array
    (None for an empty array).  The context it was saved from is read and
    ignored (arrays load on the CPU, as ``load``).

    Parameters
    ----------
    buf : bytes, bytearray or memoryview
        The bytes of one array, without a file header.
    """
    if not isinstance(buf, (bytes, bytearray, memoryview)):
        raise ArgumentError(f"load_raw_bytes expects bytes, bytearray or memoryview, "
                            f"got {type(buf).__name__}")
    src = _BufferSource(memoryview(buf).cast("B"), "<NDArray bytes>")
    value = _read_array(src, "the array")
    if isinstance(value, _Unsupported):
        raise UnsupportedFormatError(f"<NDArray bytes>: {value.reason}")
    if src.remaining:
        src.fail(f"{src.remaining} unexpected bytes after the array at offset {src.pos}")
    return value


class _Source:
    """Bounded reading: every ``take`` is checked against the bytes left."""

    def __init__(self, size, where):
        self.size, self.pos, self.where = size, 0, where

    @property
    def remaining(self):
        return self.size - self.pos

    def fail(self, msg):
        raise FormatError(f"{self.where}: {msg}")

    def need(self, n, what):
        if n > self.remaining:
            self.fail(f"{what} needs {n} bytes at offset {self.pos} but only "
                      f"{self.remaining} remain (truncated or corrupt file)")

    def unpack(self, fmt, what):
        n = struct.calcsize(fmt)
        self.need(n, what)
        return struct.unpack(fmt, self.take(n, what))


class _BufferSource(_Source):
    def __init__(self, mv, where):
        super().__init__(len(mv), where)
        self.mv = mv

    def take(self, n, what):
        self.need(n, what)
        b = bytes(self.mv[self.pos:self.pos + n])
        self.pos += n
        return b

    def fill(self, flat_u8, what):
        n = flat_u8.size
        self.need(n, what)
        flat_u8[:] = np.frombuffer(self.mv, np.uint8, count=n, offset=self.pos)
        self.pos += n

    def skip(self, n, what):
        self.need(n, what)
        self.pos += n


class _FileSource(_Source):
    def __init__(self, f, size, where):
        super().__init__(size, where)
        self.f = f

    def _short(self, got, n, what):
        self.fail(f"{what}: read {got} of {n} bytes at offset {self.pos} "
                  f"(the file changed while it was read)")

    def take(self, n, what):
        self.need(n, what)
        b = self.f.read(n)
        if len(b) != n:
            self._short(len(b), n, what)
        self.pos += n
        return b

    def fill(self, flat_u8, what):
        n = flat_u8.size
        self.need(n, what)
        done = 0
        while done < n:
            got = self.f.readinto(flat_u8[done:])
            if not got:
                self._short(done, n, what)
            done += got
        self.pos += n

    def skip(self, n, what):
        self.need(n, what)
        self.f.seek(n, 1)
        self.pos += n


class _Unsupported:
    """An array that was parsed (to reach the names) but cannot be loaded."""

    def __init__(self, reason):
        self.reason = reason


def _parse(src):
    magic, _reserved, count = src.unpack("<QQQ", "the file header")
    if magic != LIST_MAGIC:
        src.fail(f"not an MXNet NDArray file: header magic 0x{magic:x}, expected "
                 f"0x{LIST_MAGIC:x}")
    if count > src.remaining // _MIN_ARRAY_BYTES:
        src.fail(f"declares {count} arrays but only {src.remaining} bytes follow")
    values = [_read_array(src, f"array {i}") for i in range(count)]
    (nnames,) = src.unpack("<Q", "the name count")
    if nnames not in (0, count):
        src.fail(f"has {count} arrays but {nnames} names (must be 0 or {count})")
    if nnames > src.remaining // _MIN_NAME_BYTES:
        src.fail(f"declares {nnames} names but only {src.remaining} bytes follow")
    names = [_read_name(src, i) for i in range(nnames)]
    if src.remaining:
        src.fail(f"{src.remaining} unexpected bytes after the last name at offset {src.pos}")
    labels = [f"array {i}" for i in range(count)] if not names else [repr(n) for n in names]
    for label, v in zip(labels, values):
        if isinstance(v, _Unsupported):
            raise UnsupportedFormatError(f"{src.where}: {label}: {v.reason}")
    if not names:
        return values
    out = {}
    for name, v in zip(names, values):
        if name in out:
            src.fail(f"the name {name!r} appears more than once")
        out[name] = v
    return out


def _read_name(src, i):
    what = f"name {i}"
    (n,) = src.unpack("<Q", f"the length of {what}")
    src.need(n, what)
    b = src.take(n, what)
    try:
        return b.decode("utf-8")
    except UnicodeDecodeError as e:
        src.fail(f"{what} is not valid UTF-8 ({e.reason} at byte {e.start}): {b[:40]!r}")


def _read_array(src, what):
    start = src.pos
    (magic,) = src.unpack("<I", f"{what}: the header")
    if magic in (V2_MAGIC, V3_MAGIC):
        return _read_v2(src, what, numpy_shape=(magic == V3_MAGIC))
    if magic == V1_MAGIC:
        shape = _read_shape(src, what, "shape", numpy_shape=False)
    elif magic <= MAX_NDIM:  # pre-V1: the magic is ndim, dims are uint32
        dims = src.unpack(f"<{magic}I", f"{what}: the shape")
        shape = tuple(dims) if magic else None
    else:
        src.fail(f"{what} at offset {start}: unknown array header 0x{magic:08x} (not an "
                 f"NDArray magic, and too large for a pre-V1 ndim <= {MAX_NDIM})")
    if shape is None:
        return None
    _read_context(src, what)
    (flag,) = src.unpack("<i", f"{what}: the type flag")
    return _read_dense(src, what, shape, flag)


def _read_v2(src, what, numpy_shape):
    (stype,) = src.unpack("<i", f"{what}: the storage type")
    if stype not in _STORAGE:
        src.fail(f"{what}: unknown storage type {stype} (expected 0 dense, "
                 f"1 row_sparse or 2 csr)")
    if numpy_shape and stype != 0:
        src.fail(f"{what}: a V3 (numpy shape) array must be dense, got storage type {stype}")
    nad = _NUM_AUX[stype]
    sshape = _read_shape(src, what, "storage shape", numpy_shape) if nad else None
    shape = _read_shape(src, what, "shape", numpy_shape)
    if shape is None:
        return None
    _read_context(src, what)
    (flag,) = src.unpack("<i", f"{what}: the type flag")
    if not nad:
        return _read_dense(src, what, shape, flag)
    # Sparse: walk over it so that the error can name the key.
    if sshape is None:
        src.fail(f"{what}: a {_STORAGE[stype]} array with an unknown storage shape")
    aux = []
    for j in range(nad):
        (aflag,) = src.unpack("<i", f"{what}: aux {j} type flag")
        ashape = _read_shape(src, what, f"aux {j} shape", numpy_shape)
        if ashape is None:
            src.fail(f"{what}: aux {j} has an unknown shape")
        aux.append((aflag, ashape))
    for label, (f, s) in [("data", (flag, sshape))] + [(f"aux {j} data", a)
                                                       for j, a in enumerate(aux)]:
        src.skip(_nbytes(src, what, s, _flag_info(src, what, f)[2]), f"{what}: {label}")
    return _Unsupported(f"{_STORAGE[stype]} storage is not supported (nbdl arrays are dense); "
                        f"convert it with .tostype('default') in MXNet and save again")


def _read_shape(src, what, label, numpy_shape):
    """A TShape: int32 ndim + int64 dims; ``None`` for a none array."""
    (ndim,) = src.unpack("<i", f"{what}: {label} ndim")
    if ndim == -1 or (ndim == 0 and not numpy_shape):
        return None  # -1: unknown (V3; MXNet >= 1.5 none arrays); 0 before V3
    if ndim < 0 or ndim > MAX_NDIM:
        src.fail(f"{what}: {label} has ndim {ndim} (must be 0..{MAX_NDIM})")
    dims = src.unpack(f"<{ndim}q", f"{what}: {label} dims")
    if numpy_shape and -1 in dims:
        return None  # numpy semantics: an unknown dimension, a none array
    if any(d < 0 for d in dims):
        src.fail(f"{what}: {label} {dims} has a negative dimension")
    return dims


def _read_context(src, what):
    dev_type, _dev_id = src.unpack("<ii", f"{what}: the context")
    if dev_type not in _DEV_TYPES:
        src.fail(f"{what}: unknown device type {dev_type} in its context "
                 f"(expected one of {sorted(_DEV_TYPES)})")


def _flag_info(src, what, flag):
    info = _FLAGS.get(flag)
    if info is None:
        src.fail(f"{what}: unknown type flag {flag} (expected 0..{max(_FLAGS)})")
    return info


def _nbytes(src, what, shape, itemsize):
    if math.prod(max(d, 1) for d in shape) * itemsize >= _MAX_BYTES:
        src.fail(f"{what}: shape {tuple(shape)} is too large to be an array")
    n = math.prod(shape) * itemsize
    src.need(n, f"{what}: data of shape {tuple(shape)}")
    return n


def _read_dense(src, what, shape, flag):
    dtype, name, itemsize = _flag_info(src, what, flag)
    n = _nbytes(src, what, shape, itemsize)  # checked before allocating
    if dtype is None:
        src.skip(n, what)
        return _Unsupported(f"dtype {name} (MXNet type flag {flag}) is not supported by nbdl")
    a = np.empty(shape, dtype)
    flat = a.reshape(-1).view(np.uint8)
    src.fill(flat, f"{what}: data")
    if dtype is np.bool_:  # any nonzero byte is True; numpy wants exactly 0 or 1
        np.not_equal(flat, 0, out=a.reshape(-1))
    return a
