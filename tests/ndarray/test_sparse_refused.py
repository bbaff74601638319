"""nd.sparse: MXNet's sparse names load, and asking for sparse storage is a
clear error (nbdl is dense only); dense requests still work."""
import numpy as np
import pytest

import nbdl
from nbdl.ndarray import sparse


@pytest.mark.parametrize("call, name", [
    (lambda: sparse.csr_matrix(np.eye(3)), "csr_matrix"),
    (lambda: sparse.row_sparse_array((np.ones((1, 2)), [0]), shape=(3, 2)), "row_sparse_array"),
    (lambda: sparse.retain(nbdl.nd.ones((3, 2)), nbdl.nd.array([0])), "retain"),
    (lambda: sparse.array(np.eye(2)), "array"),
    (lambda: sparse.zeros("csr", (2, 3)), "zeros"),
    (lambda: sparse.empty("row_sparse", (2, 3)), "empty"),
    (lambda: sparse.cast_storage(nbdl.nd.ones((2, 2)), "csr"), "cast_storage"),
    (lambda: sparse.CSRNDArray(), "CSRNDArray"),
    (lambda: sparse.RowSparseNDArray(), "RowSparseNDArray"),
])
def test_sparse_storage_is_refused_naming_the_call(call, name):
    with pytest.raises(sparse.SparseStorageError, match=rf"nd\.sparse\.{name}.*dense"):
        call()


def test_dense_requests_and_isinstance_checks_work():
    z = sparse.zeros("default", (2, 3), dtype="float64")
    np.testing.assert_array_equal(z.asnumpy(), np.zeros((2, 3)))
    assert z.dtype == np.float64
    assert sparse.empty("default", (4,)).shape == (4,)
    x = nbdl.nd.ones((2, 2))
    assert sparse.cast_storage(x, "default") is x
    assert not isinstance(x, (sparse.CSRNDArray, sparse.RowSparseNDArray))
    assert nbdl.nd.sparse is sparse
    assert issubclass(sparse.SparseStorageError, nbdl.NbdlError)


def test_other_names_are_the_dense_ops():
    a, b = nbdl.nd.array([1.0, 2.0]), nbdl.nd.array([3.0, 4.0])
    np.testing.assert_array_equal(sparse.elemwise_mul(a, b).asnumpy(), [3.0, 8.0])
    np.testing.assert_array_equal(sparse.square(a).asnumpy(), [1.0, 4.0])
    with pytest.raises(AttributeError):
        sparse.no_such_operator
