"""Model files in MXNet 1.x's formats.

``save`` / ``load`` / ``load_frombuffer`` read and write NDArray files
(``.params``) as numpy arrays, below the NDArray class: ``nd.save`` /
``nd.load`` (and Gluon, ``nbdl.model``) give and take NDArrays on them.
See ``ndarray_file`` for the byte layout.
"""
from .errors import (CheckpointError, FileError, FormatError, MissingFileError,  # noqa: F401
                     ArgumentError, UnsupportedFormatError)
from .ndarray_file import load, load_frombuffer, save, save_tobuffer  # noqa: F401

__all__ = ["save", "save_tobuffer", "load", "load_frombuffer", "FormatError",
           "UnsupportedFormatError", "ArgumentError", "CheckpointError", "FileError",
           "MissingFileError"]
