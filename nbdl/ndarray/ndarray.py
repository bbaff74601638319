"""MXNet's module path ``mxnet.ndarray.ndarray``: the NDArray class (defined
in ``nbdl.array``, below the executor that hands NDArrays out) and the
module-level names MXNet 1.x code imports from here."""
from ..array.ndarray import (NDArray, _STORAGE_TYPE_ID_TO_STR,  # noqa: F401
                             _STORAGE_TYPE_STR_TO_ID, py_slice)
