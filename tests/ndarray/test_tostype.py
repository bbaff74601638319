"""NDArray.tostype: dense copies; sparse storage types are refused."""
import numpy as np
import pytest

import nbdl

nd = nbdl.nd


def test_tostype_default_is_a_dense_copy():
    x = nd.array([[1.0, 2.0], [3.0, 4.0]])
    y = x.tostype("default")
    assert y is not x and y.stype == "default"
    np.testing.assert_array_equal(y.asnumpy(), x.asnumpy())
    y[:] = 0
    np.testing.assert_array_equal(x.asnumpy(), [[1, 2], [3, 4]])


@pytest.mark.parametrize("stype", ["csr", "row_sparse"])
def test_tostype_sparse_raises(stype):
    with pytest.raises(nd.sparse.SparseStorageError, match=stype):
        nd.ones((2, 2)).tostype(stype)
