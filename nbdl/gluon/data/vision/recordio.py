"""MXNet RecordIO files (``.rec``) and their ``.idx`` indexes, read and
written in pure Python (MXNet's ``mx.recordio``).

A record on disk is ``magic`` (uint32 0xced7230a, little-endian), then
``lrecord`` (uint32: a continuation flag in the upper 3 bits, the length in
the lower 29), then the payload padded with zeros to a multiple of 4 bytes.
A payload that itself contains the magic number at a 4-byte aligned offset
is split there into parts (flag 1 = first, 2 = middle, 3 = last; 0 = the
whole record), the magic being dropped from the data and restored by the
reader, exactly as dmlc-core writes it.  An ``.idx`` file is text, one
``key<TAB>offset`` line per record.

Image records start with an ``IRHeader`` (``flag`` uint32, ``label``
float32, ``id`` uint64, ``id2`` uint64); when ``flag > 0`` the label is an
array of ``flag`` float32 values stored right after the header.
"""
import collections
import numbers
import os
import struct

import numpy as np

from .image import FormatError, ImageError, decode_host

MAGIC = 0xCED7230A
_MAGIC_BYTES = struct.pack("<I", MAGIC)
_MAX_LENGTH = (1 << 29) - 1
_HEAD = struct.Struct("<II")

IRHeader = collections.namedtuple("IRHeader", ["flag", "label", "id", "id2"])
_IR_FORMAT = struct.Struct("<IfQQ")
IR_HEADER_SIZE = _IR_FORMAT.size


class MXRecordIO:
    """Sequential reader (``flag='r'``) or writer (``flag='w'``) of a
    RecordIO file."""

    def __init__(self, uri, flag):
        if flag not in ("r", "w"):
            raise ImageError(f"MXRecordIO({uri!r}): flag must be 'r' or 'w', got {flag!r}")
        self.uri = os.fspath(uri)
        self.flag = flag
        self.is_open = False
        self._file = None
        self.open()

    def open(self):
        try:
            self._file = open(self.uri, "rb" if self.flag == "r" else "wb")
        except OSError as e:
            raise ImageError(f"MXRecordIO: cannot open {self.uri!r} ({e})") from None
        self.writable = self.flag == "w"
        self.is_open = True
        self._pid = os.getpid()
        self._size = os.fstat(self._file.fileno()).st_size if self.flag == "r" else None

    def close(self):
        if self.is_open:
            self._file.close()
            self.is_open = False

    def __enter__(self):
        return self

    def __exit__(self, *exc):
        self.close()

    def __del__(self):
        try:
            self.close()
        except Exception:  # noqa: BLE001 - interpreter teardown
            pass

    def __getstate__(self):
        """Pickled (sent to a DataLoader worker) as its name and mode; the
        unpickled copy reopens the file."""
        if self.writable:
            raise ImageError(f"MXRecordIO({self.uri!r}): a writer cannot be pickled")
        return {"uri": self.uri, "flag": self.flag}

    def __setstate__(self, state):
        self.uri, self.flag = state["uri"], state["flag"]
        self.is_open = False
        self._file = None
        self.open()

    def reset(self):
        """Go back to the first record."""
        self._check_open()
        self._file.seek(0)

    def _check_open(self):
        if not self.is_open:
            raise ImageError(f"MXRecordIO({self.uri!r}): the file is closed")
        if self._pid != os.getpid() and not self.writable:
            # A forked DataLoader worker shares the parent's file offset;
            # reading through it would race with the other processes.
            self._file.close()
            self.open()

    def tell(self):
        self._check_open()
        return self._file.tell()

    def seek(self, pos):
        self._check_open()
        if self.writable:
            raise ImageError(f"MXRecordIO({self.uri!r}): cannot seek in a writer")
        if not 0 <= pos < self._size:
            raise FormatError(f"{self.uri}: record offset {pos} is outside the file "
                              f"({self._size} bytes)")
        self._file.seek(pos)

    def write(self, buf):
        """Append one record (bytes)."""
        self._check_open()
        if not self.writable:
            raise ImageError(f"MXRecordIO({self.uri!r}): opened for reading, cannot write")
        buf = bytes(buf)
        if len(buf) > _MAX_LENGTH:
            raise ImageError(f"MXRecordIO({self.uri!r}): a record holds at most {_MAX_LENGTH} "
                             f"bytes, got {len(buf)}")
        parts = []
        start = 0
        for i in range(0, len(buf) - 3, 4):
            if buf[i:i + 4] == _MAGIC_BYTES:
                parts.append(buf[start:i])
                start = i + 4
        parts.append(buf[start:])
        f = self._file
        for k, part in enumerate(parts):
            if len(parts) == 1:
                cflag = 0
            else:
                cflag = 1 if k == 0 else (3 if k == len(parts) - 1 else 2)
            f.write(_HEAD.pack(MAGIC, (cflag << 29) | len(part)))
            f.write(part)
        pad = -len(parts[-1]) % 4
        if pad:
            f.write(b"\0" * pad)

    def read(self):
        """The next record (bytes), or None at the end of the file."""
        self._check_open()
        if self.writable:
            raise ImageError(f"MXRecordIO({self.uri!r}): opened for writing, cannot read")
        f = self._file
        chunks = []
        expect_more = False
        while True:
            pos = f.tell()
            head = f.read(_HEAD.size)
            if not head and not expect_more:
                return None
            if len(head) != _HEAD.size:
                raise FormatError(f"{self.uri}: truncated record header at byte {pos}")
            magic, lrec = _HEAD.unpack(head)
            if magic != MAGIC:
                raise FormatError(f"{self.uri}: bad RecordIO magic 0x{magic:08x} at byte {pos} "
                                  f"(expected 0x{MAGIC:08x}); not a RecordIO file, or a wrong "
                                  f".idx offset")
            cflag, length = lrec >> 29, lrec & _MAX_LENGTH
            if cflag > 3 or (expect_more and cflag not in (2, 3)) or \
                    (not expect_more and cflag not in (0, 1)):
                raise FormatError(f"{self.uri}: bad record continuation flag {cflag} at byte "
                                  f"{pos}")
            padded = (length + 3) & ~3
            if pos + _HEAD.size + padded > self._size:
                raise FormatError(f"{self.uri}: record at byte {pos} claims {length} bytes but "
                                  f"the file ends at byte {self._size}")
            data = f.read(padded)
            chunks.append(data[:length])
            if cflag in (0, 3):
                return b"".join(chunks)
            if length % 4:
                raise FormatError(f"{self.uri}: a record part at byte {pos} has unaligned "
                                  f"length {length}")
            chunks.append(_MAGIC_BYTES)
            expect_more = True


class MXIndexedRecordIO(MXRecordIO):
    """RecordIO with random access through an ``.idx`` file (``key\\toffset``
    lines); keys are converted with ``key_type``."""

    def __init__(self, idx_path, uri, flag, key_type=int):
        self.idx_path = os.fspath(idx_path)
        self.key_type = key_type
        self.idx = {}
        self.keys = []
        super().__init__(uri, flag)

    def open(self):
        super().open()
        self.idx = {}
        self.keys = []
        if self.flag == "w":
            try:
                self._idx_file = open(self.idx_path, "w")
            except OSError as e:
                raise ImageError(f"MXIndexedRecordIO: cannot open {self.idx_path!r} ({e})") \
                    from None
            return
        self._idx_file = None
        try:
            with open(self.idx_path) as f:
                lines = f.read().splitlines()
        except OSError as e:
            raise ImageError(f"MXIndexedRecordIO: cannot read the index {self.idx_path!r} "
                             f"({e}); it is written next to the .rec file with the same "
                             f"name") from None
        except UnicodeDecodeError:
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
                raise FormatError(f"{self.idx_path}: line {lineno} is {line!r}, expected "
                                  f"'<key>\\t<offset>'") from None
            if offset < 0 or offset >= self._size:
                raise FormatError(f"{self.idx_path}: line {lineno}: offset {offset} is outside "
                                  f"{self.uri} ({self._size} bytes)")
            if key in self.idx:
                raise FormatError(f"{self.idx_path}: line {lineno}: duplicate key {key!r}")
            self.idx[key] = offset
            self.keys.append(key)

    def close(self):
        if self.is_open and getattr(self, "_idx_file", None) is not None:
            self._idx_file.close()
        super().close()

    def __getstate__(self):
        state = super().__getstate__()
        state.update(idx_path=self.idx_path, key_type=self.key_type)
        return state

    def __setstate__(self, state):
        self.idx_path, self.key_type = state["idx_path"], state["key_type"]
        super().__setstate__(state)

    def read_idx(self, idx):
        """The record with key ``idx``."""
        try:
            pos = self.idx[idx]
        except KeyError:
            raise ImageError(f"{self.uri}: no record with key {idx!r} in "
                             f"{self.idx_path}") from None
        self.seek(pos)
        rec = self.read()
        if rec is None:
            raise FormatError(f"{self.uri}: no record at offset {pos} (key {idx!r})")
        return rec

    def write_idx(self, idx, buf):
        """Append a record under key ``idx``."""
        key = self.key_type(idx)
        if key in self.idx:
            raise ImageError(f"MXIndexedRecordIO({self.uri!r}): duplicate key {key!r}")
        pos = self.tell()
        self.write(buf)
        self._idx_file.write(f"{key}\t{pos}\n")
        self.idx[key] = pos
        self.keys.append(key)


def pack(header, s):
    """An image record: the ``IRHeader`` then ``s``; a label that is a
    sequence or array is stored as float32 values after the header (and
    ``flag`` set to their count)."""
    header = IRHeader(*header)
    label = header.label
    if isinstance(label, numbers.Number):
        header = header._replace(flag=0)
        extra = b""
    else:
        arr = np.asarray(label, dtype=np.float32).ravel()
        header = header._replace(flag=arr.size, label=0)
        extra = arr.astype("<f4").tobytes()
    return _IR_FORMAT.pack(*header) + extra + bytes(s)


def unpack(s, where="unpack"):
    """(``IRHeader``, payload) from an image record; an array label comes
    back as a float32 numpy array."""
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


def unpack_img(s, iscolor=1, where="unpack_img"):
    """(``IRHeader``, HWC uint8 numpy image) from an image record."""
    header, img = unpack(s, where)
    return header, decode_host(img, iscolor, where)


def pack_img(header, img, quality=95, img_fmt=".png"):
    """An image record holding ``img`` (HWC uint8) encoded as ``img_fmt``:
    ``.png`` / ``.jpg`` through Pillow, or ``.npy`` without it."""
    arr = img.asnumpy() if hasattr(img, "asnumpy") else np.asarray(img)
    fmt = img_fmt.lower().lstrip(".")
    import io
    out = io.BytesIO()
    if fmt == "npy":
        np.save(out, arr, allow_pickle=False)
        return pack(header, out.getvalue())
    from .image import _pil_image
    Image = _pil_image()
    if fmt not in ("png", "jpg", "jpeg"):
        raise ImageError(f"pack_img: img_fmt must be '.png', '.jpg' or '.npy', got {img_fmt!r}")
    if arr.ndim == 3 and arr.shape[2] == 1:
        arr = arr[:, :, 0]
    Image.fromarray(np.ascontiguousarray(arr, dtype=np.uint8)).save(
        out, format="PNG" if fmt == "png" else "JPEG", quality=quality)
    return pack(header, out.getvalue())
