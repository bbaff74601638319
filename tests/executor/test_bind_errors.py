"""Bad input to bind/simple_bind/forward/backward gives an nbdl error naming
what is wrong, and leaves what the user passed untouched."""
import numpy as np
import pytest

import nbdl


def _ab():
    a, b = nbdl.sym.var("a"), nbdl.sym.var("b")
    return a * b


def test_wrong_number_of_args():
    with pytest.raises(nbdl.BindError, match="1 arrays but the symbol has 2"):
        _ab().bind(nbdl.cpu(), args=[nbdl.nd.ones((2,))])


def test_missing_dict_key():
    with pytest.raises(nbdl.BindError, match="'b' is missing"):
        _ab().bind(nbdl.cpu(), args={"a": nbdl.nd.ones((2,))})


def test_duplicate_argument_names():
    y = nbdl.sym.var("x") + nbdl.sym.var("x")
    with pytest.raises(nbdl.BindError, match="more than one variable named 'x'"):
        y.bind(nbdl.cpu(), args=[nbdl.nd.ones((2,)), nbdl.nd.ones((2,))])


def test_shapes_that_do_not_agree():
    with pytest.raises(nbdl.ShapeError, match=r"elemwise_mul.*\(2,\).*\(3,\)|\(3,\).*\(2,\)"):
        _ab().bind(nbdl.cpu(), args={"a": nbdl.nd.ones((2,)), "b": nbdl.nd.ones((3,))})


def test_incomplete_shape_inference_names_the_arguments():
    data = nbdl.sym.var("data")
    fc = nbdl.sym.FullyConnected(data, num_hidden=3, name="fc")
    with pytest.raises(nbdl.ShapeError, match="data"):
        fc.simple_bind(nbdl.cpu(), fc_bias=(3,))


def test_invalid_grad_req():
    with pytest.raises(nbdl.BindError, match="invalid grad_req 'sometimes'"):
        _ab().bind(nbdl.cpu(), args=[nbdl.nd.ones((2,))] * 2, grad_req="sometimes")
    # a grad_req naming no argument is ignored, as MXNet's bind does
    ex = _ab().bind(nbdl.cpu(), args=[nbdl.nd.ones((2,))] * 2, grad_req={"zz": "write"})
    assert all(g is None for g in ex.grad_arrays)


def test_unknown_forward_argument_and_bad_shape():
    ex = _ab().simple_bind(nbdl.cpu(), a=(2,), b=(2,))
    with pytest.raises(nbdl.BindError, match="'c' is not an argument"):
        ex.forward(c=np.ones(2))
    with pytest.raises(nbdl.ShapeError, match=r"'a'.*\(2,\).*\(3,\)"):
        ex.forward(a=np.ones(3))


def test_grad_array_shape_mismatch():
    with pytest.raises(nbdl.ShapeError, match="gradient array of 'a'"):
        _ab().bind(nbdl.cpu(), args=[nbdl.nd.ones((2,))] * 2,
                   args_grad=[nbdl.nd.ones((3,)), None])


def test_unsupported_dtype_names_the_op():
    a = nbdl.sym.var("a")
    y = nbdl.sym.exp(a)
    with pytest.raises(nbdl.DTypeError, match="exp"):
        y.bind(nbdl.cpu(), args=[nbdl.nd.array(np.ones(2, np.int32), dtype=np.int32)])


def test_backward_head_gradient_shape():
    ex = _ab().bind(nbdl.cpu(), args=[nbdl.nd.ones((2,))] * 2,
                    args_grad=[nbdl.nd.zeros((2,)), nbdl.nd.zeros((2,))])
    ex.forward(is_train=True)
    with pytest.raises(nbdl.ShapeError, match="head gradient 0"):
        ex.backward(nbdl.nd.ones((3,)))


def test_args_untouched_on_error():
    a_arr = nbdl.nd.array([1.0, 2.0])
    before = a_arr.asnumpy().copy()
    with pytest.raises(nbdl.NbdlError):
        _ab().bind(nbdl.cpu(), args={"a": a_arr, "b": nbdl.nd.ones((3,))})
    np.testing.assert_array_equal(a_arr.asnumpy(), before)
