"""``nbdl.nd.<op>`` functions generated from the op table."""
import numpy as np
import pytest

import nbdl
import nbdl.ndarray as nd
from nbdl.ops.registry import list_ops


def test_every_public_op_has_a_function():
    for name in list_ops():
        fn = getattr(nd, name)
        assert callable(fn) and fn.__name__ == name
    assert set(list_ops()) <= set(dir(nd))


def test_functions_are_cached():
    assert nd.elemwise_add is nd.elemwise_add
    assert nd.op.elemwise_add is nd.op.elemwise_add


def test_unknown_names_raise_attribute_error():
    with pytest.raises(AttributeError, match="no_such_thing"):
        nd.no_such_thing
    assert not hasattr(nd, "__wrapped__")
    with pytest.raises(AttributeError):
        nd.op.no_such_thing


def test_inputs_by_keyword():
    x = nd.array([[1, 2, 3]])
    w = nd.array([[1, 0, 0], [0, 1, 1]])
    b = nd.array([10, 20])
    y = nd.FullyConnected(data=x, weight=w, bias=b, num_hidden=2)
    np.testing.assert_array_equal(y.asnumpy(), [[11, 25]])
    y = nd.FullyConnected(x, weight=w, bias=b, num_hidden=2)
    np.testing.assert_array_equal(y.asnumpy(), [[11, 25]])
    y = nd.FullyConnected(x, w, no_bias=True, num_hidden=2)     # bias is no input then
    np.testing.assert_array_equal(y.asnumpy(), [[1, 5]])
    y = nd.op.FullyConnected(data=x, weight=w, bias=None, no_bias=True, num_hidden=2)
    np.testing.assert_array_equal(y.asnumpy(), [[1, 5]])


def test_keyword_input_errors():
    x = nd.array([[1, 2, 3]])
    with pytest.raises(nbdl.GraphError, match="missing"):
        nd.FullyConnected(data=x, num_hidden=2)
    with pytest.raises(nbdl.GraphError, match="unknown input"):
        nd.FullyConnected(data=x, wieght=x, num_hidden=2)
    with pytest.raises(nbdl.GraphError, match="position and by keyword"):
        nd.FullyConnected(x, data=x, num_hidden=2)


def test_attributes_by_position():
    x = nd.array([[1, 5, 3]])
    np.testing.assert_array_equal(nd.clip(x, 2, 4).asnumpy(), [[2, 4, 3]])
    np.testing.assert_array_equal(nd.sum(x, 1).asnumpy(), [9])
    with pytest.raises(nbdl.GraphError, match="position and by keyword"):
        nd.clip(x, 2, a_min=1)


def test_attribute_value_forms():
    x = nd.array([[1, 2], [3, 4]])
    np.testing.assert_array_equal(nd.sum(x, axis=[0, 1]).asnumpy(), [10])
    np.testing.assert_array_equal(nd.sum(x, axis=np.int64(1)).asnumpy(), [3, 7])
    np.testing.assert_array_equal(nd.transpose(x, axes="(1, 0)").asnumpy(), [[1, 3], [2, 4]])


def test_out_and_name_keywords():
    x = nd.array([1, 2])
    out = nd.zeros((2,))
    assert nd.elemwise_mul(x, x, out=out, name="ignored") is out
    np.testing.assert_array_equal(out.asnumpy(), [1, 4])


def test_internal_namespace_reaches_scalar_ops():
    x = nd.array([1, 2])
    np.testing.assert_array_equal(nd._internal._plus_scalar(x, scalar=1).asnumpy(), [2, 3])
    np.testing.assert_array_equal(nd._plus_scalar(x, scalar=2).asnumpy(), [3, 4])


def test_doc_and_device_keyword():
    assert nd.elemwise_add.__doc__
    x = nd.array([1.0, 2.0])
    with pytest.raises(nbdl.DeviceError):
        nd.elemwise_add(x, x, ctx=nbdl.gpu(0))


@pytest.mark.cuda
def test_gpu_through_namespace():
    g = nbdl.gpu(0)
    x = nd.array([[1, 2], [3, 4]], ctx=g)
    y = nd.transpose(x)
    assert y.context == g
    np.testing.assert_array_equal(y.asnumpy(), [[1, 3], [2, 4]])
