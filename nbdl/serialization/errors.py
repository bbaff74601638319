"""Errors raised while reading and writing model files.

All are ``nbdl.NbdlError`` subclasses and also derive from the builtin a
caller would catch without knowing nbdl (``ValueError`` for bad content,
``TypeError`` for bad arguments, ``OSError`` / ``FileNotFoundError`` for the
file system), and every message names the file (or ``<buffer>``) and the
array or key concerned.
"""
from ..errors import NbdlError


class FormatError(NbdlError, ValueError):
    """A file or buffer that is not a well-formed MXNet NDArray file:
    truncated, a wrong magic number, counts, ndims or dimensions that cannot
    be right, names that are not UTF-8, trailing bytes."""


class UnsupportedFormatError(FormatError):
    """Well-formed MXNet content that nbdl cannot hold: sparse storage
    (``row_sparse``, ``csr``) or a dtype nbdl has no storage for
    (``int16``, ``uint16``, ``uint32``, ``uint64``, ``bfloat16``)."""


class ArgumentError(NbdlError, TypeError):
    """Arguments of the wrong kind to a save or load function: data that is
    not an array, a list of arrays or a dict of str -> array; a key that is
    not a str; a file name that is not a path; a buffer that is not bytes."""


class CheckpointError(NbdlError, ValueError):
    """A Module-style checkpoint whose parameter file has keys without the
    ``arg:`` / ``aux:`` prefix, or a bad prefix / epoch argument."""


class FileError(NbdlError, OSError):
    """The file system refused: a path that is a directory or not a regular
    file, a permission error, a full disk."""


class MissingFileError(FileError, FileNotFoundError):
    """A file to load that does not exist."""


__all__ = ["FormatError", "UnsupportedFormatError", "ArgumentError", "CheckpointError",
           "FileError", "MissingFileError"]
