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
from .files import MAGIC, FormatError, ImageError, MXRecordIO
from .header import IR_HEADER_SIZE, IRHeader, pack, unpack
from .image import pack_img, unpack_img
from .indexed import MXIndexedRecordIO

__all__ = ["MXRecordIO", "MXIndexedRecordIO", "IRHeader", "pack", "unpack", "pack_img",
           "unpack_img", "ImageError", "FormatError", "MAGIC", "IR_HEADER_SIZE"]
