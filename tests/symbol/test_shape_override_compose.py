"""Symbol details of MXNet 1.x: a given shape replaces a variable's declared
one; composing takes inputs by position or by keyword, not both."""
import numpy as np
import pytest

import nbdl

sym = nbdl.sym


def test_given_shape_replaces_the_declared_one():
    a = sym.var("a", shape=(2, 3))
    b = sym.var("b")
    c = sym.elemwise_add(a, b)
    assert c.infer_shape() == ([(2, 3), (2, 3)], [(2, 3)], [])
    assert c.infer_shape(a=(5, 6)) == ([(5, 6), (5, 6)], [(5, 6)], [])
    assert c.infer_shape_partial() == ([(2, 3), (2, 3)], [(2, 3)], [])
    ex = c.simple_bind(nbdl.cpu(), a=(4, 1), grad_req="null")
    assert [x.shape for x in ex.arg_arrays] == [(4, 1), (4, 1)]
    out = ex.forward(a=np.ones((4, 1)), b=np.full((4, 1), 2.0))[0].asnumpy()
    np.testing.assert_array_equal(out, np.full((4, 1), 3.0))


def test_compose_by_position_and_keyword_at_once_is_refused():
    x = sym.var("x")
    y = x * 2
    with pytest.raises(nbdl.ArgumentError, match="by position or by keyword, not both"):
        y(sym.var("z"), x=sym.var("k"))
    with pytest.raises(TypeError):          # MXNet raises TypeError here
        y(sym.var("z"), x=sym.var("k"))
    assert y(x=sym.var("k")).list_arguments() == ["k"]
