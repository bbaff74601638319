"""RecordIO files, byte for byte as MXNet 1.x (dmlc-core) reads and writes them.

A file is a sequence of records. Each record on disk is::

    uint32 magic (0xced7230a)   uint32 lrecord   payload   zero padding to 4 bytes

(little-endian) where ``lrecord`` holds the payload length in its lower 29
bits and a continuation flag ``cflag`` in its upper 3. A record whose data
contains the magic number at a 4-byte-aligned offset is written in parts
split at each such occurrence (the magic itself is left out and restored on
reading): ``cflag`` is 0 for a whole record, 1 / 2 / 3 for the first /
middle / last part. ``MXIndexedRecordIO`` adds a text index file of
``key\\tbyte offset`` lines for random access.

``pack`` / ``unpack`` put an ``IRHeader`` (flag, label, id, id2) in front
of a payload (``struct`` format ``'IfQQ'``; an array label is stored after
the header as float32 values, their count in ``flag``); ``pack_img`` /
``unpack_img`` encode images with Pillow when it is installed.
"""
import io
import numbers
import os
import struct
from collections import namedtuple

import numpy as np

from .errors import ArgumentError, NbdlError

__all__ = ["MXRecordIO", "MXIndexedRecordIO", "IRHeader", "pack", "unpack", "pack_img",
           "unpack_img", "RecordIOError"]

_MAGIC = 0xced7230a
_MAGIC_BYTES = struct.pack("<I", _MAGIC)
_LEN_MASK = (1 << 29) - 1


class RecordIOError(NbdlError, ValueError):
    """A RecordIO file that is not well formed, or an operation its mode forbids."""


def _encode_lrec(cflag, length):
    return struct.pack("<II", _MAGIC, (cflag << 29) | length)


def _pad(n):
    return (4 - n % 4) % 4


class MXRecordIO:
    """Sequential reading or writing of a RecordIO file.

    Parameters
    ----------
    uri : str
        Path of the record file.
    flag : {'r', 'w'}
        ``'r'`` to read, ``'w'`` to write (truncating the file).
    """

    def __init__(self, uri, flag):
        if not isinstance(uri, (str, os.PathLike)):
            raise ArgumentError(f"MXRecordIO: uri must be a path, got {type(uri).__name__}")
        if flag not in ("r", "w"):
            raise ArgumentError(f"MXRecordIO: flag must be 'r' or 'w', got {flag!r}")
        self.uri = os.fspath(uri)
        self.flag = flag
        self.is_open = False
        self.writable = flag == "w"
        self._f = None
        self.open()

    def open(self):
        """Open the file (for writing, truncate it)."""
        try:
            self._f = open(self.uri, "wb" if self.writable else "rb")
        except OSError as e:
            raise ArgumentError(f"{type(self).__name__}: cannot open {self.uri!r} for "
                                f"{'writing' if self.writable else 'reading'} ({e})") from None
        self.is_open = True

    def close(self):
        """Close the file (a no-op when it is closed)."""
        if not getattr(self, "is_open", False):
            return
        self._f.close()
        self.is_open = False

    def __del__(self):
        self.close()

    def __enter__(self):
        return self

    def __exit__(self, *exc):
        self.close()

    def __getstate__(self):
        state = dict(self.__dict__)
        state["_f"] = None
        state["_pos"] = self._f.tell() if self.is_open and not self.writable else None
        return state

    def __setstate__(self, state):
        pos = state.pop("_pos", None)
        was_open = state["is_open"]
        self.__dict__.update(state)
        self.is_open = False
        if was_open:
            if self.writable:
                raise RecordIOError(f"{type(self).__name__}: a writer of {self.uri!r} cannot "
                                    f"be restored (reopening would truncate the file)")
            self.open()
            if pos:
                self._f.seek(pos)

    def reset(self):
        """Go back to the first record (for a writer: truncate the file)."""
        self.close()
        self.open()

    def _check(self, writing, what):
        if not self.is_open:
            raise RecordIOError(f"{type(self).__name__}.{what}: {self.uri!r} is closed")
        if writing != self.writable:
            raise RecordIOError(f"{type(self).__name__}.{what}: {self.uri!r} is open for "
                                f"{'writing' if self.writable else 'reading'} (flag "
                                f"{self.flag!r})")

    def write(self, buf):
        """Append one record.

        Parameters
        ----------
        buf : bytes
            The record's contents (under 2**29 bytes).
        """
        self._check(True, "write")
        if isinstance(buf, str):
            raise ArgumentError("MXRecordIO.write: buf must be bytes, got str (encode it)")
        try:
            buf = bytes(buf)
        except TypeError:
            raise ArgumentError(f"MXRecordIO.write: buf must be bytes, "
                                f"got {type(buf).__name__}") from None
        n = len(buf)
        if n >= 1 << 29:
            raise ArgumentError(f"MXRecordIO.write: a record must be under 2**29 bytes, "
                                f"got {n}")
        out = []
        start = 0
        pos = buf.find(_MAGIC_BYTES)
        while pos != -1:
            if pos % 4 == 0:  # only aligned occurrences split the record
                out.append(_encode_lrec(1 if start == 0 else 2, pos - start))
                out.append(buf[start:pos])
                start = pos + 4
                pos = buf.find(_MAGIC_BYTES, start)
            else:
                pos = buf.find(_MAGIC_BYTES, pos + 1)
        out.append(_encode_lrec(3 if start else 0, n - start))
        out.append(buf[start:])
        out.append(b"\0" * _pad(n))
        self._f.write(b"".join(out))

    def read(self):
        """The next record, or None at the end of the file.

        Returns
        -------
        bytes or None
        """
        self._check(False, "read")
        parts = []
        while True:
            at = self._f.tell()
            head = self._f.read(8)
            if not head and not parts:
                return None
            if len(head) != 8:
                raise RecordIOError(f"MXRecordIO.read: {self.uri!r} ends inside a record "
                                    f"header at byte {at}")
            magic, lrec = struct.unpack("<II", head)
            if magic != _MAGIC:
                raise RecordIOError(f"MXRecordIO.read: {self.uri!r} has no record at byte "
                                    f"{at} (magic {magic:#010x}, expected {_MAGIC:#010x})")
            cflag, length = lrec >> 29, lrec & _LEN_MASK
            body = self._f.read(length + _pad(length))
            if len(body) != length + _pad(length):
                raise RecordIOError(f"MXRecordIO.read: {self.uri!r} ends inside the record "
                                    f"at byte {at}")
            parts.append(body[:length])
            if cflag in (0, 3):
                return _MAGIC_BYTES.join(parts)
            if cflag not in (1, 2):
                raise RecordIOError(f"MXRecordIO.read: bad continuation flag {cflag} at byte "
                                    f"{at} of {self.uri!r}")


class MXIndexedRecordIO(MXRecordIO):
    """A RecordIO file with an index file, for reading records by key.

    Parameters
    ----------
    idx_path : str
        Path of the index file (``key\\toffset`` lines).
    uri : str
        Path of the record file.
    flag : {'r', 'w'}
        ``'r'`` to read, ``'w'`` to write both files.
    key_type : type, optional
        Type of the keys (``int`` by default).
    """

    def __init__(self, idx_path, uri, flag, key_type=int):
        if not isinstance(idx_path, (str, os.PathLike)):
            raise ArgumentError(f"MXIndexedRecordIO: idx_path must be a path, "
                                f"got {type(idx_path).__name__}")
        self.idx_path = os.fspath(idx_path)
        self.idx = {}
        self.keys = []
        self.key_type = key_type
        self.fidx = None
        super().__init__(uri, flag)

    def open(self):
        """Open the record and index files (reading the index in read mode)."""
        super().open()
        self.idx = {}
        self.keys = []
        try:
            self.fidx = open(self.idx_path, self.flag)
        except OSError as e:
            self._f.close()
            self.is_open = False
            raise ArgumentError(f"MXIndexedRecordIO: cannot open index {self.idx_path!r} "
                                f"({e})") from None
        if not self.writable:
            for lineno, line in enumerate(self.fidx, 1):
                if not line.strip():
                    continue
                fields = line.strip().split("\t")
                try:
                    key, pos = self.key_type(fields[0]), int(fields[1])
                except (ValueError, IndexError):
                    raise RecordIOError(f"MXIndexedRecordIO: line {lineno} of "
                                        f"{self.idx_path!r} is not 'key<TAB>offset': "
                                        f"{line.rstrip()!r}") from None
                self.idx[key] = pos
                self.keys.append(key)

    def close(self):
        """Close both files."""
        if not getattr(self, "is_open", False):
            return
        super().close()
        self.fidx.close()

    def __getstate__(self):
        state = super().__getstate__()
        state["fidx"] = None
        return state

    def seek(self, idx):
        """Move the read position to the record with key ``idx``.

        Parameters
        ----------
        idx : key_type
            A key of the index.
        """
        self._check(False, "seek")
        if idx not in self.idx:
            raise ArgumentError(f"MXIndexedRecordIO.seek: no record with key {idx!r} in "
                                f"{self.idx_path!r} ({len(self.idx)} keys)")
        self._f.seek(self.idx[idx])

    def tell(self):
        """The byte offset the next written record starts at.

        Returns
        -------
        int
        """
        self._check(True, "tell")
        return self._f.tell()

    def read_idx(self, idx):
        """The record with key ``idx``.

        Parameters
        ----------
        idx : key_type
            A key of the index.

        Returns
        -------
        bytes
        """
        self.seek(idx)
        return self.read()

    def write_idx(self, idx, buf):
        """Append a record and index it under key ``idx``.

        Parameters
        ----------
        idx : key_type
            Its key (converted with ``key_type``).
        buf : bytes
            The record.
        """
        key = self.key_type(idx)
        pos = self.tell()
        self.write(buf)
        self.fidx.write(f"{key}\t{pos}\n")
        self.idx[key] = pos
        self.keys.append(key)


IRHeader = namedtuple("HEADER", ["flag", "label", "id", "id2"])
IRHeader.__doc__ = """The header ``pack`` puts in front of a record's payload.

Parameters
----------
flag : int
    Free for the user when ``label`` is a number; ``pack`` sets it to the
    label count when ``label`` is an array.
label : float or array of float
    The record's label(s).
id : int
    A unique id of the record.
id2 : int
    Higher bits of the id (usually 0).
"""

_IR_FORMAT = "IfQQ"
_IR_SIZE = struct.calcsize(_IR_FORMAT)


def pack(header, s):
    """A record payload: the header, then (for an array label) the labels, then ``s``.

    Parameters
    ----------
    header : IRHeader or 4-tuple
        ``(flag, label, id, id2)``; a number ``label`` is stored in the header
        (and ``flag`` becomes 0), an array ``label`` after it as float32.
    s : bytes
        The payload (e.g. an encoded image).

    Returns
    -------
    bytes
    """
    try:
        header = IRHeader(*header)
    except TypeError:
        raise ArgumentError(f"pack: header must be an IRHeader (flag, label, id, id2), "
                            f"got {header!r}") from None
    if isinstance(s, str):
        raise ArgumentError("pack: s must be bytes, got str (encode it)")
    s = bytes(s)
    if isinstance(header.label, numbers.Number):
        header = header._replace(flag=0)
    else:
        label = np.asarray(header.label, dtype=np.float32)
        header = header._replace(flag=label.size, label=0)
        s = label.tobytes() + s
    try:
        return struct.pack(_IR_FORMAT, *header) + s
    except struct.error as e:
        raise ArgumentError(f"pack: header {tuple(header)} does not fit 'IfQQ' (flag uint32, "
                            f"label float32, id and id2 uint64): {e}") from None


def unpack(s):
    """Split a record payload made by ``pack`` into its header and the rest.

    Parameters
    ----------
    s : bytes
        A record from ``MXRecordIO.read``.

    Returns
    -------
    header : IRHeader
        With an array ``label`` (float32) when the record holds several.
    s : bytes
        The payload after the header and labels.
    """
    s = bytes(s)
    if len(s) < _IR_SIZE:
        raise RecordIOError(f"unpack: a record of {len(s)} bytes is shorter than the "
                            f"{_IR_SIZE}-byte IRHeader")
    header = IRHeader(*struct.unpack(_IR_FORMAT, s[:_IR_SIZE]))
    s = s[_IR_SIZE:]
    if header.flag > 0:
        if len(s) < 4 * header.flag:
            raise RecordIOError(f"unpack: the header announces {header.flag} labels but only "
                                f"{len(s)} bytes follow it")
        header = header._replace(label=np.frombuffer(s, np.float32, header.flag))
        s = s[header.flag * 4:]
    return header, s


def _pil(what):
    try:
        from PIL import Image
    except ImportError:
        raise NbdlError(f"{what} needs an image codec: install the 'Pillow' package "
                        f"(pip install Pillow)") from None
    return Image


def unpack_img(s, iscolor=-1):
    """Split a record into its header and its decoded image.

    Parameters
    ----------
    s : bytes
        A record made by ``pack_img``.
    iscolor : int, optional
        -1: keep the stored channels; 0: decode to grayscale ``(H, W)``;
        1: decode to 3 channels, returned in BGR order as OpenCV (which MXNet
        uses) returns them.

    Returns
    -------
    header : IRHeader
    img : numpy.ndarray of uint8
    """
    image = _pil("unpack_img")
    if iscolor not in (-1, 0, 1):
        raise ArgumentError(f"unpack_img: iscolor must be -1, 0 or 1, got {iscolor!r}")
    header, s = unpack(s)
    try:
        img = image.open(io.BytesIO(s))
        img.load()
    except Exception as e:  # Pillow raises several types for undecodable data
        raise RecordIOError(f"unpack_img: the payload is not an image Pillow can decode "
                            f"({e})") from None
    if iscolor == 0:
        img = img.convert("L")
    elif iscolor == 1 or img.mode not in ("L", "RGB", "RGBA"):
        img = img.convert("RGB")
    arr = np.asarray(img)
    if arr.ndim == 3:  # OpenCV's channel order
        arr = arr[..., [2, 1, 0] + ([3] if arr.shape[2] == 4 else [])]
    return header, np.ascontiguousarray(arr)


def pack_img(header, img, quality=95, img_fmt=".jpg"):
    """Encode an image and ``pack`` it with ``header``.

    Parameters
    ----------
    header : IRHeader
        The record's header.
    img : numpy.ndarray of uint8
        ``(H, W)`` grayscale or ``(H, W, 3)`` in BGR order (OpenCV's, as MXNet
        expects).
    quality : int, optional
        JPEG quality 1-100, or PNG compression level 0-9.
    img_fmt : {'.jpg', '.jpeg', '.png'}, optional
        The encoding.

    Returns
    -------
    bytes
    """
    image = _pil("pack_img")
    fmt = str(img_fmt).upper()
    if fmt not in (".JPG", ".JPEG", ".PNG"):
        raise ArgumentError(f"pack_img: img_fmt must be '.jpg', '.jpeg' or '.png', "
                            f"got {img_fmt!r}")
    arr = np.asarray(img)
    if arr.dtype != np.uint8 or arr.ndim not in (2, 3) or (arr.ndim == 3 and arr.shape[2] != 3):
        raise ArgumentError(f"pack_img: img must be uint8 of shape (H, W) or (H, W, 3), got "
                            f"{arr.dtype} {arr.shape}")
    if arr.ndim == 3:
        arr = arr[..., ::-1]  # BGR -> RGB for Pillow
    buf = io.BytesIO()
    pil_img = image.fromarray(np.ascontiguousarray(arr))
    if fmt == ".PNG":
        pil_img.save(buf, format="PNG", compress_level=min(max(int(quality), 0), 9))
    else:
        pil_img.save(buf, format="JPEG", quality=int(quality))
    return pack(header, buf.getvalue())
