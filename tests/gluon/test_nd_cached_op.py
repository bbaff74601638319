"""nd.CachedOp (MXNet 1.x): a Symbol run as one recorded op."""
import numpy as np

import nbdl
from nbdl import autograd, nd


def test_cached_op_runs_the_symbol_and_records_gradients():
    a, b = nbdl.sym.var("a"), nbdl.sym.var("b")
    op = nd.CachedOp(a * b + 1, flags=[("static_alloc", True)])
    x, y = nd.array([1.0, 2.0]), nd.array([3.0, -4.0])
    assert op(x, y).asnumpy().tolist() == [4.0, -7.0]
    out = nd.zeros((2,))
    assert op(x, y, out=out) is out and out.asnumpy().tolist() == [4.0, -7.0]
    x.attach_grad()
    with autograd.record():
        z = op(x, y) * 2
    z.backward()
    np.testing.assert_array_equal(x.grad.asnumpy(), [6.0, -8.0])
    # several outputs come back as a list
    two = nd.CachedOp(nbdl.sym.Group([a + b, a - b]))
    s, d = two(x, y)
    assert s.asnumpy().tolist() == [4.0, -2.0] and d.asnumpy().tolist() == [-2.0, 6.0]
