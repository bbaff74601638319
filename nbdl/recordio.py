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

Files are interchangeable with MXNet 1.x's ``mx.recordio`` (nbdl writes the
same bytes). Misuse raises ``ImageError``, malformed files ``FormatError``
(both ``NbdlError``); ``nbdl.gluon.data.vision`` reads its record datasets
with these classes.
"""
import io
import numbers
import os
import struct
from collections import namedtuple

import numpy as np

from .errors import ArgumentError, NbdlError

__all__ = ["MXRecordIO", "MXIndexedRecordIO", "IRHeader", "pack", "unpack", "pack_img",
           "unpack_img", "ImageError", "FormatError", "MAGIC", "IR_HEADER_SIZE"]

MAGIC = 0xced7230a
_MAGIC_BYTES = struct.pack("<I", MAGIC)
_LEN_MASK = (1 << 29) - 1
_HEAD = struct.Struct("<II")


class ImageError(NbdlError, ValueError):
    """An image that cannot be encoded or decoded, a record file that cannot be
    used (closed, wrong mode, unknown key, unreadable), or a bad argument to an
    image or record helper."""


class FormatError(ImageError):
    """A record, index, image or dataset file whose contents are not in the
    expected format."""


def _pad(n):
    return -n % 4


class MXRecordIO:
    """Sequential reading or writing of a RecordIO file.

    A reader used in a process other than the one that opened it (a forked
    DataLoader worker) reopens the file first, so processes never share a
    file offset; pickling a reader (to send it to a worker) keeps its name
    and mode, and the copy reopens the file at its start.

    Parameters
    ----------
    uri : str
        Path of the record file.
    flag : {'r', 'w'}
        ``'r'`` to read, ``'w'`` to write (truncating the file).
    """

    def __init__(self, uri, flag):
        if not isinstance(uri, (str, os.PathLike)):
            raise ArgumentError(f"{type(self).__name__}: uri must be a path, "
                                f"got {type(uri).__name__}")
        if flag not in ("r", "w"):
            raise ArgumentError(f"{type(self).__name__}({uri!r}): flag must be 'r' or 'w', "
                                f"got {flag!r}")
        self.uri = os.fspath(uri)
        self.flag = flag
        self.writable = flag == "w"
        self.is_open = False
        self._f = None
        self.open()

    def open(self):
        """Open the file (for writing, truncate it)."""
        try:
            self._f = open(self.uri, "wb" if self.writable else "rb")
        except OSError as e:
            raise ImageError(f"{type(self).__name__}: cannot open {self.uri!r} for "
                             f"{'writing' if self.writable else 'reading'} ({e})") from None
        self.is_open = True
        self._pid = os.getpid()
        self._size = None if self.writable else os.fstat(self._f.fileno()).st_size

    def close(self):
        """Close the file (a no-op when it is closed)."""
        if getattr(self, "is_open", False):
            self._f.close()
            self.is_open = False

    def __del__(self):
        try:
            self.close()
        except Exception:  # noqa: BLE001 - interpreter teardown
            pass

    def __enter__(self):
        return self

    def __exit__(self, *exc):
        self.close()

    def __getstate__(self):
        if self.writable:
            raise ImageError(f"{type(self).__name__}({self.uri!r}): a writer cannot be pickled "
                             f"(reopening it would truncate the file)")
        return {"uri": self.uri, "flag": self.flag}

    def __setstate__(self, state):
        self.uri, self.flag = state["uri"], state["flag"]
        self.writable = False
        self.is_open = False
        self._f = None
        self.open()

    def reset(self):
        """Go back to the first record (for a writer: truncate the file)."""
        self.close()
        self.open()

    def _check(self, writing, what):
        name = type(self).__name__
        if not self.is_open:
            raise ImageError(f"{name}.{what}({self.uri!r}): the file is closed")
        if writing != self.writable:
            raise ImageError(f"{name}.{what}({self.uri!r}): opened for "
                             f"{'writing, cannot read' if self.writable else 'reading, cannot write'}")
        if self._pid != os.getpid():
            if self.writable:
                raise ImageError(f"{name}.{what}({self.uri!r}): a writer cannot be used in a "
                                 f"process other than the one that opened it")
            self.close()  # a forked process would share the parent's file offset
            self.open()

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
        if n > _LEN_MASK:
            raise ArgumentError(f"MXRecordIO.write: a record holds at most {_LEN_MASK} bytes, "
                                f"got {n}")
        out = []
        start = 0
        pos = buf.find(_MAGIC_BYTES)
        while pos != -1:
            if pos % 4 == 0:  # only aligned occurrences split the record
                out.append(_HEAD.pack(MAGIC, ((1 if start == 0 else 2) << 29) | (pos - start)))
                out.append(buf[start:pos])
                start = pos + 4
                pos = buf.find(_MAGIC_BYTES, start)
            else:
                pos = buf.find(_MAGIC_BYTES, pos + 1)
        out.append(_HEAD.pack(MAGIC, ((3 if start else 0) << 29) | (n - start)))
        out.append(buf[start:])
        out.append(b"\0" * _pad(n))
        self._f.write(b"".join(out))

    def _head(self, continuing):
        """(offset, cflag, length) of the record part at the file position,
        checked; None at the end of the file between records."""
        f = self._f
        at = f.tell()
        head = f.read(_HEAD.size)
        if not head and not continuing:
            return None
        if len(head) != _HEAD.size:
            raise FormatError(f"{self.uri}: truncated record header at byte {at}")
        magic, lrec = _HEAD.unpack(head)
        if magic != MAGIC:
            raise FormatError(f"{self.uri}: bad RecordIO magic 0x{magic:08x} at byte {at} "
                              f"(expected 0x{MAGIC:08x}); not a RecordIO file, or a wrong "
                              f".idx offset")
        cflag, length = lrec >> 29, lrec & _LEN_MASK
        if cflag > 3 or (cflag in (0, 1)) == continuing:
            raise FormatError(f"{self.uri}: bad record continuation flag {cflag} at byte "
                              f"{at}")
        if at + _HEAD.size + length + _pad(length) > self._size:
            raise FormatError(f"{self.uri}: record at byte {at} claims {length} bytes but "
                              f"the file ends at byte {self._size}")
        if cflag in (1, 2) and length % 4:
            raise FormatError(f"{self.uri}: a record part at byte {at} has unaligned "
                              f"length {length}")
        return at, cflag, length

    def read(self):
        """The next record, or None at the end of the file.

        Returns
        -------
        bytes or None
        """
        self._check(False, "read")
        parts = []
        while True:
            head = self._head(bool(parts))
            if head is None:
                return None
            _, cflag, length = head
            parts.append(self._f.read(length + _pad(length))[:length])
            if cflag in (0, 3):
                return _MAGIC_BYTES.join(parts)

    def read_at(self, pos):
        """The record that starts at byte ``pos`` (an offset from
        ``record_offsets`` or an index file).

        Parameters
        ----------
        pos : int
            The record's byte offset.

        Returns
        -------
        bytes
        """
        self._seek_offset(pos)
        rec = self.read()
        if rec is None:
            raise FormatError(f"{self.uri}: no record at offset {pos}")
        return rec

    def record_offsets(self):
        """The byte offset of every record of the file, in file order, found
        from the records' headers alone (payloads are skipped, not read). The
        read position is left where it was.

        Returns
        -------
        list of int
        """
        self._check(False, "record_offsets")
        f = self._f
        here = f.tell()
        offsets = []
        try:
            f.seek(0)
            continuing = False
            while True:
                head = self._head(continuing)
                if head is None:
                    return offsets
                at, cflag, length = head
                if cflag in (0, 1):
                    offsets.append(at)
                continuing = cflag in (1, 2)
                f.seek(at + _HEAD.size + length + _pad(length))
        finally:
            f.seek(here)

    def tell(self):
        """The byte offset of the next record (written or read).

        Returns
        -------
        int
        """
        if not self.is_open:
            raise ImageError(f"{type(self).__name__}.tell({self.uri!r}): the file is closed")
        return self._f.tell()

    def _seek_offset(self, pos):
        self._check(False, "seek")
        if not 0 <= pos < self._size:
            raise FormatError(f"{self.uri}: record offset {pos} is outside the file "
                              f"({self._size} bytes)")
        self._f.seek(pos)


class MXIndexedRecordIO(MXRecordIO):
    """A RecordIO file with an index file, for reading records by key.

    The index is text, one ``key<TAB>byte offset`` line per record.

    Parameters
    ----------
    idx_path : str
        Path of the index file.
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
        self.key_type = key_type
        self.idx = {}
        self.keys = []
        self.fidx = None
        super().__init__(uri, flag)

    def open(self):
        """Open the record and index files (reading the index in read mode)."""
        super().open()
        self.idx, self.keys = {}, []
        if self.writable:
            try:
                self.fidx = open(self.idx_path, "w")
            except OSError as e:
                super().close()
                raise ImageError(f"MXIndexedRecordIO: cannot open {self.idx_path!r} for "
                                 f"writing ({e})") from None
            return
        self.fidx = None
        try:
            with open(self.idx_path) as f:
                lines = f.read().splitlines()
        except OSError as e:
            super().close()
            raise ImageError(f"MXIndexedRecordIO: cannot read the index {self.idx_path!r} "
                             f"({e}); it is written next to the .rec file") from None
        except UnicodeDecodeError:
            super().close()
            raise FormatError(f"{self.idx_path}: not a text .idx file") from None
        for lineno, line in enumerate(lines, 1):
            if not line.strip():
                continue
            fields = line.strip().split("\t")
            try:
                if len(fields) != 2:
                    raise ValueError
                key, offset = self.key_type(fields[0]), int(fields[1])
            except ValueError:
                super().close()
                raise FormatError(f"{self.idx_path}: line {lineno} is {line!r}, expected "
                                  f"'<key>\\t<offset>'") from None
            problem = (f"offset {offset} is outside {self.uri} ({self._size} bytes)"
                       if not 0 <= offset < self._size else
                       f"duplicate key {key!r}" if key in self.idx else None)
            if problem:
                super().close()
                raise FormatError(f"{self.idx_path}: line {lineno}: {problem}")
            self.idx[key] = offset
            self.keys.append(key)

    def close(self):
        """Close both files."""
        if getattr(self, "is_open", False) and self.fidx is not None:
            self.fidx.close()
        super().close()

    def __getstate__(self):
        state = super().__getstate__()
        state.update(idx_path=self.idx_path, key_type=self.key_type)
        return state

    def __setstate__(self, state):
        self.idx_path, self.key_type = state["idx_path"], state["key_type"]
        self.fidx = None
        super().__setstate__(state)

    def _offset(self, idx):
        try:
            return self.idx[idx]
        except (KeyError, TypeError):
            raise ImageError(f"{self.uri}: no record with key {idx!r} in {self.idx_path} "
                             f"({len(self.idx)} keys)") from None

    def seek(self, idx):
        """Move the read position to the record with key ``idx``.

        Parameters
        ----------
        idx : key_type
            A key of the index.
        """
        self._seek_offset(self._offset(idx))

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
        return self.read_at(self._offset(idx))

    def write_idx(self, idx, buf):
        """Append a record and index it under key ``idx``.

        Parameters
        ----------
        idx : key_type
            Its key (converted with ``key_type``; each key once).
        buf : bytes
            The record.
        """
        key = self.key_type(idx)
        if key in self.idx:
            raise ImageError(f"MXIndexedRecordIO.write_idx({self.uri!r}): duplicate key "
                             f"{key!r}")
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

_IR_FORMAT = struct.Struct("<IfQQ")  # MXNet's native 'IfQQ' on little-endian machines
IR_HEADER_SIZE = _IR_FORMAT.size


def pack(header, s):
    """A record payload: the header, then (for an array label) the labels, then ``s``.

    Parameters
    ----------
    header : IRHeader or 4-tuple
        ``(flag, label, id, id2)``; a number ``label`` is stored in the header
        (and ``flag`` becomes 0), an array ``label`` after it as float32
        values (and ``flag`` becomes their count).
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
        label = np.asarray(header.label, dtype="<f4").ravel()
        header = header._replace(flag=label.size, label=0)
        s = label.tobytes() + s
    try:
        return _IR_FORMAT.pack(*header) + s
    except struct.error as e:
        raise ArgumentError(f"pack: header {tuple(header)} does not fit 'IfQQ' (flag uint32, "
                            f"label float32, id and id2 uint64): {e}") from None


def unpack(s, where="unpack"):
    """Split a record payload made by ``pack`` into its header and the rest.

    Parameters
    ----------
    s : bytes
        A record from ``MXRecordIO.read``.
    where : str, optional
        What to call the record in error messages.

    Returns
    -------
    header : IRHeader
        With an array ``label`` (float32) when the record holds several.
    s : bytes
        The payload after the header and labels.
    """
    s = bytes(s)
    if len(s) < IR_HEADER_SIZE:
        raise FormatError(f"{where}: record of {len(s)} bytes is shorter than the "
                          f"{IR_HEADER_SIZE}-byte image record header")
    header = IRHeader(*_IR_FORMAT.unpack(s[:IR_HEADER_SIZE]))
    s = s[IR_HEADER_SIZE:]
    if header.flag > 0:
        nbytes = header.flag * 4
        if nbytes > len(s):
            raise FormatError(f"{where}: header says {header.flag} float32 labels but only "
                              f"{len(s)} bytes follow it")
        header = header._replace(label=np.frombuffer(s[:nbytes], dtype="<f4").astype(np.float32))
        s = s[nbytes:]
    return header, s


def _pil(what):
    try:
        from PIL import Image
    except ImportError:
        raise ImageError(f"{what} needs an image codec: install the 'Pillow' package "
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
        raise FormatError(f"unpack_img: the payload is not an image Pillow can decode "
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
