"""The container nbdl writes optimizer states in: a numpy ``.npz`` archive
whose ``__header__`` entry is a UTF-8 JSON object (format name, version,
the optimizer's ``get_config`` data, the layout of every state) and whose
other entries are the state arrays.  It is read with ``allow_pickle=False``,
so loading a file never runs code from it.

``Trainer.save_states`` (format ``nbdl-trainer-states``) and
``Updater.get_states`` / ``KVStore.save_optimizer_states`` (format
``nbdl-updater-states``) both write it.
"""
import io
import json
import os
import zipfile
from contextlib import contextmanager

import numpy as np

from ..errors import NbdlError

HEADER_KEY = "__header__"


def pack(header, arrays):
    """The bytes of a state container.

    Parameters
    ----------
    header : dict
        JSON-ready data (a ``TypeError`` / ``ValueError`` from ``json.dumps``
        propagates when it is not).
    arrays : dict of str to numpy.ndarray
        The state arrays, by entry name.
    """
    text = json.dumps(header)
    entries = dict(arrays)
    entries[HEADER_KEY] = np.frombuffer(text.encode("utf-8"), dtype=np.uint8)
    buf = io.BytesIO()
    np.savez(buf, **entries)
    return buf.getvalue()


def unpack(data, label, what, error):
    """``(header, arrays)`` of a state container.

    Parameters
    ----------
    data : bytes or str
        The container's bytes, or the name of a file holding them.
    label : str
        What the error messages call the source (a file name).
    what : str
        What the error messages call the container ("Trainer state file").
    error : type
        The NbdlError subclass raised for anything unreadable.
    """
    try:
        if isinstance(data, (bytes, bytearray)):
            source = io.BytesIO(bytes(data))
        else:
            with open(data, "rb") as f:
                source = io.BytesIO(f.read())
        with np.load(source, allow_pickle=False) as npz:
            arrays = {k: npz[k] for k in npz.files}
        raw = arrays.pop(HEADER_KEY)
        header = json.loads(raw.tobytes().decode("utf-8"))
        if not isinstance(header, dict):
            raise ValueError("the header is not a JSON object")
    except (OSError, EOFError, ValueError, KeyError, zipfile.BadZipFile, UnicodeDecodeError,
            AttributeError) as e:
        raise error(f"{label}: not a readable {what}; it may be truncated or corrupted "
                    f"({type(e).__name__}: {e})") from None
    return header, arrays


def write_atomic(fname, data):
    """Write ``data`` (bytes) to ``fname`` through a temporary file, so that
    ``fname`` is never left half written.

    Parameters
    ----------
    fname : str
        The destination file.
    data : bytes
        What to write.
    """
    tmp = f"{fname}.tmp{os.getpid()}"
    try:
        with open(tmp, "wb") as f:
            f.write(data)
        os.replace(tmp, fname)
    finally:
        if os.path.exists(tmp):
            os.remove(tmp)


@contextmanager
def restoring(label, error, what, container):
    """Errors while a container's contents are restored become ``error``:
    an nbdl error as ``'<label>: cannot restore <what> (...)'``, a missing
    or malformed entry (``KeyError``, ``TypeError``, ...) as ``'<label>:
    malformed <container> (...)'``; ``error`` itself passes.

    Parameters
    ----------
    label : str
        What messages call the source (a file name).
    error : type
        The error class raised (a subclass of NbdlError).
    what : str
        What is restored (``"the states"``).
    container : str
        What the source is (``"Updater state container"``).
    """
    try:
        yield
    except NbdlError as e:
        if isinstance(e, error):
            raise
        raise error(f"{label}: cannot restore {what} ({e})") from None
    except (KeyError, TypeError, ValueError, AttributeError) as e:
        raise error(f"{label}: malformed {container} ({type(e).__name__}: {e})") from None


def build_state(structure, arrays):
    """The state described by ``structure`` (see
    ``optimizer.state_structure``) filled from the iterator ``arrays``.

    Parameters
    ----------
    structure : None, "a" or list
        None (no state), "a" (one array) or a list of structures (a tuple).
    arrays : iterator of NDArray
        The arrays, in the order ``state_structure`` lists them.
    """
    if structure is None:
        return None
    if structure == "a":
        return next(arrays)
    if isinstance(structure, list):
        return tuple(build_state(s, arrays) for s in structure)
    raise ValueError(f"bad state structure {structure!r}")
