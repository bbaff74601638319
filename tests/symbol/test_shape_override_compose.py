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


def test_gen_atomic_symbol_composes_like_the_operator():
    x = sym.var("x")
    fc = sym.FullyConnected(x * 2, num_hidden=3, name="fc", attr={"__lr_mult__": "2"})
    atomic = fc._gen_atomic_symbol()
    assert atomic.name == "fc"
    assert atomic.list_arguments() == ["data", "weight", "bias"]
    assert atomic.attr("num_hidden") == "3" and atomic.attr("lr_mult") == "2"
    composed = atomic(data=sym.var("q"), weight=sym.var("w"), bias=sym.var("b"))
    assert composed.list_arguments() == ["q", "w", "b"]
    assert fc.list_arguments() == ["x", "fc_weight", "fc_bias"]     # the original is untouched
    qv = np.arange(10, dtype=np.float32).reshape(2, 5)
    wv = np.ones((3, 5), np.float32)
    out = composed.eval(q=nbdl.nd.array(qv), w=nbdl.nd.array(wv), b=nbdl.nd.ones((3,)))[0]
    np.testing.assert_allclose(out.asnumpy(), qv @ wv.T + 1)
    # several outputs of one node (split) stay one atomic node
    parts = sym.split(x, num_outputs=3, axis=1, name="sp")
    assert len(parts._gen_atomic_symbol().list_outputs()) == 3


def test_gen_atomic_symbol_refuses_variables_and_groups():
    x = sym.var("x")
    with pytest.raises(nbdl.GraphError, match="'x' is a variable"):
        x._gen_atomic_symbol()
    with pytest.raises(nbdl.GraphError, match="outputs of 2 nodes"):
        sym.Group([x * 2, x + 1])._gen_atomic_symbol()
