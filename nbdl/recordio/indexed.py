"""``MXIndexedRecordIO``: a RecordIO file with a text index of
``key<TAB>byte offset`` lines, for reading records by key."""
import os

from ..errors import ArgumentError
from .files import FormatError, ImageError, MXRecordIO

__all__ = ["MXIndexedRecordIO"]


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
