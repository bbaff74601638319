"""``IRHeader`` and ``pack`` / ``unpack``: the image-record header (flag,
label, id, id2; ``struct`` format ``'IfQQ'``) in front of a record's payload,
with an array label stored after it as float32 values."""
import numbers
import struct
from collections import namedtuple

import numpy as np

from ..errors import ArgumentError
from .files import FormatError

__all__ = ["IRHeader", "pack", "unpack", "IR_HEADER_SIZE"]

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
