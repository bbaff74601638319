"""Reshapes and basic indexing of a recorded array are part of the autograd
graph (MXNet 1.x records them), so gradients flow through ``x.reshape`` and
``x[...]`` as used in Gluon 1.x ``hybrid_forward`` code with ``F = nd``."""
import numpy as np
import pytest

import nbdl
from nbdl import autograd
from nbdl.testing import assert_almost_equal


def _grad(f, shape=(2, 3, 4)):
    x_np = np.arange(np.prod(shape), dtype=np.float32).reshape(shape)
    x = nbdl.nd.array(x_np)
    x.attach_grad()
    with autograd.record():
        y = f(x * 2)
        loss = (y * y).sum()
    loss.backward()
    return x_np, y.asnumpy(), x.grad.asnumpy()


@pytest.mark.parametrize("shape", [(-1,), (6, 4), (0, -1), (4, 6)])
def test_reshape_is_recorded(shape):
    x_np, y, g = _grad(lambda a: a.reshape(shape))
    assert y.size == x_np.size
    assert_almost_equal(g, 8 * x_np)       # d/dx sum((2x)^2) = 8x, whatever the shape


@pytest.mark.parametrize("key", [1, slice(0, 1), (slice(None), 1), (1, slice(1, 3), 2),
                                 (Ellipsis, slice(2, None))])
def test_basic_indexing_is_recorded(key):
    x_np, y, g = _grad(lambda a: a[key])
    expected = np.zeros_like(x_np)
    expected[key] = 8 * x_np[key]
    assert_almost_equal(y, 2 * x_np[key])
    assert_almost_equal(g, expected)


def test_views_outside_record_share_memory_and_are_not_taped():
    x = nbdl.nd.ones((2, 3))
    v = x.reshape((3, 2))
    v[0, 0] = 5
    assert x.asnumpy()[0, 0] == 5
    x.attach_grad()
    with autograd.record():
        y = x.reshape((6,))
    with pytest.raises(nbdl.NbdlError):
        x.reshape((6,)).backward()          # not recorded: nothing to differentiate
    y.backward()
    assert_almost_equal(x.grad.asnumpy(), np.ones((2, 3), np.float32))
