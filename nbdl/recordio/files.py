"""``MXRecordIO``: sequential reading and writing of RecordIO files in
dmlc-core's record format (the on-disk layout is described in
``nbdl.recordio``), and the two errors the package raises."""
import os
import struct

from ..errors import ArgumentError, NbdlError

__all__ = ["MXRecordIO", "ImageError", "FormatError", "MAGIC"]

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
