"""``nd.save`` / ``nd.load`` / ``nd.load_frombuffer``: MXNet NDArray files
(``nbdl.serialization``, which reads them as numpy arrays) with NDArrays:
loaded arrays come back as NDArrays on the CPU, as in MXNet.  ``save`` is
``nbdl.serialization``'s own (it takes NDArrays, numpy arrays, and lists
and dicts of them)."""
from ..array import NDArray
from ..device import cpu
from ..serialization import ndarray_file as _file
from ..serialization.ndarray_file import save  # noqa: F401


def load(fname):
    """Load an MXNet NDArray file: a list of NDArrays when it has no names,
    else a dict name -> NDArray (a file saved from an empty dict loads as
    ``[]``, as in MXNet).  Arrays come back on the CPU.

    Parameters
    ----------
    fname : str, bytes or path
        The file.
    """
    return as_ndarrays(_file.load(fname))


def load_frombuffer(buf):
    """``load`` for the bytes of a file (bytes, bytearray or memoryview).

    Parameters
    ----------
    buf : bytes, bytearray or memoryview
        The file's bytes.
    """
    return as_ndarrays(_file.load_frombuffer(buf))


def as_ndarrays(values):
    """A list or dict of numpy arrays (``nbdl.serialization.load``'s result)
    as NDArrays on the CPU (None entries stay None).

    Parameters
    ----------
    values : list or dict
        What a load returned.
    """
    dev = cpu()
    if isinstance(values, dict):
        return {k: None if v is None else NDArray(v, dev) for k, v in values.items()}
    return [None if v is None else NDArray(v, dev) for v in values]
