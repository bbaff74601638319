"""nd.contrib.isinf / isnan / isfinite against numpy (MXNet writes them with
other ops; results are 0/1 in the input's dtype)."""
import numpy as np
import pytest

import nbdl


@pytest.mark.parametrize("dtype", [np.float32, np.float64])
def test_isinf_isnan_isfinite(dtype):
    x = np.array([[np.inf, -np.inf, np.nan], [5.0, 0.0, -1e30]], dtype=dtype)
    a = nbdl.nd.array(x, dtype=dtype)
    for fn, ref in ((nbdl.nd.contrib.isinf, np.isinf), (nbdl.nd.contrib.isnan, np.isnan),
                    (nbdl.nd.contrib.isfinite, np.isfinite)):
        out = fn(a)
        assert out.dtype == dtype and out.shape == x.shape
        np.testing.assert_array_equal(out.asnumpy(), ref(x).astype(dtype))
