"""``nbdl.nd.sparse``: MXNet 1.x's sparse-storage names, which nbdl refuses.

nbdl stores every array dense (storage type ``'default'``); compressed
sparse row (``'csr'``) and row-sparse (``'row_sparse'``) storage are out of
scope (docs/mxnet-compat.md, "Out of scope").  This module exists so that
code which imports ``mxnet.ndarray.sparse`` (or names its classes in
``isinstance`` checks) loads: the classes are never instantiated (no nbdl
array is sparse, so ``isinstance(x, CSRNDArray)`` is False), and every
function that would make or transform a sparse array raises
``SparseStorageError`` naming itself.  Dense code is unaffected: the other
names are the ops of the table (``nd.sparse.elemwise_mul(a, b)``), as in
MXNet, where they take dense arrays too.
"""
from .._docs import shared_doc
from ..errors import SparseStorageError
from .creation import empty as _dense_empty, zeros as _dense_zeros
from . import namespace as _namespace
from ..array import NDArray

__all__ = ["BaseSparseNDArray", "CSRNDArray", "RowSparseNDArray", "SparseStorageError",
           "csr_matrix", "row_sparse_array", "retain", "array", "zeros", "empty",
           "cast_storage"]


def _refuse(what):
    raise SparseStorageError.refused(f"nd.sparse.{what}")


class BaseSparseNDArray(NDArray):
    """The base of MXNet's sparse NDArrays.  nbdl has none: constructing one
    raises ``SparseStorageError``.

    Parameters
    ----------
    *args, **kwargs
        Ignored; construction is refused.
    """

    def __init__(self, *args, **kwargs):
        _refuse(type(self).__name__)


class CSRNDArray(BaseSparseNDArray):
    """MXNet's compressed-sparse-row NDArray (refused; see the module docstring)."""


class RowSparseNDArray(BaseSparseNDArray):
    """MXNet's row-sparse NDArray (refused; see the module docstring)."""


def csr_matrix(arg1, shape=None, ctx=None, dtype=None):
    """MXNet's CSR constructor; raises ``SparseStorageError``.

    Parameters
    ----------
    arg1 : array-like, tuple or scipy.sparse matrix
        The data MXNet would store as CSR.
    shape, ctx, dtype : optional
        As in MXNet; unused.
    """
    _refuse("csr_matrix")


def row_sparse_array(arg1, shape=None, ctx=None, dtype=None):
    """MXNet's row-sparse constructor; raises ``SparseStorageError``.

    Parameters
    ----------
    arg1 : array-like or tuple
        The data MXNet would store row-sparse.
    shape, ctx, dtype : optional
        As in MXNet; unused.
    """
    _refuse("row_sparse_array")


def retain(data, indices):
    """MXNet's row-sparse ``retain``; raises ``SparseStorageError``.

    Parameters
    ----------
    data : RowSparseNDArray
        The array MXNet would keep rows of.
    indices : NDArray
        The rows to keep.
    """
    _refuse("retain")


def array(source_array, ctx=None, dtype=None):
    """MXNet's sparse ``array``; raises ``SparseStorageError``.

    Parameters
    ----------
    source_array : sparse array
        A scipy.sparse matrix or sparse NDArray.
    ctx, dtype : optional
        As in MXNet; unused.
    """
    _refuse("array")


# the arguments of zeros and empty
_CREATION = """
stype : str
    Storage type.
shape : int or tuple of int
    Shape of the array.
ctx, dtype : optional
    Device and dtype of a dense result.
"""


@shared_doc(creation=_CREATION)
def zeros(stype, shape, ctx=None, dtype=None, **kwargs):
    """MXNet's sparse ``zeros(stype, shape)``: ``stype='default'`` gives a dense
    zero array (as MXNet does); a sparse ``stype`` raises ``SparseStorageError``.

    Parameters
    ----------
    {creation}
    """
    if stype in (None, "default"):
        return _dense_zeros(shape, ctx=ctx, dtype=dtype, **kwargs)
    _refuse(f"zeros(stype={stype!r})")


@shared_doc(creation=_CREATION)
def empty(stype, shape, ctx=None, dtype=None):
    """MXNet's sparse ``empty(stype, shape)``; dense for ``stype='default'``,
    else ``SparseStorageError``.

    Parameters
    ----------
    {creation}
    """
    if stype in (None, "default"):
        return _dense_empty(shape, ctx=ctx, dtype=dtype)
    _refuse(f"empty(stype={stype!r})")


def cast_storage(data, stype):
    """MXNet's ``cast_storage``: to ``'default'`` returns ``data`` (already
    dense); to a sparse type raises ``SparseStorageError``.

    Parameters
    ----------
    data : NDArray
        The array.
    stype : str
        Target storage type.
    """
    if stype == "default":
        return data
    _refuse(f"cast_storage(stype={stype!r})")


def __getattr__(name):
    """The other ops of the table, on dense arrays: MXNet's ``nd.sparse``
    holds every operator (``nd.sparse.elemwise_mul``, ``nd.sparse.square``),
    each taking dense arrays as well."""
    fn = _namespace.lookup(name)
    globals()[name] = fn
    return fn
