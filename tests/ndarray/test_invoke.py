"""``invoke``: one op on NDArrays — devices, ``out=``, aliasing, the launch
cache, aux inputs, hidden outputs and error messages.

Some cases use private ``OpDef``s that are never registered (so they do not
show up in the op table) with Python kernels installed in ``_prepared``."""
import numpy as np
import pytest

import nbdl
import nbdl.ndarray as nd
from nbdl.ndarray.invoke import cache_info, clear_cache, invoke
from nbdl.ops.elemwise_unary import same_shape, same_type
from nbdl.ops.registry import REQ_INPLACE, REQ_WRITE, Launch, OpDef


def _python_op(name, kernel, record, **kw):
    """An unregistered op whose CPU "kernel" is a Python function."""
    def prepare(call):
        record.append(call)
        return Launch(kernel, (call.req[0],))
    kw.setdefault("infer_shape", same_shape)
    kw.setdefault("infer_type", same_type)
    return OpDef(name=name, _prepared={"cpu": prepare}, **kw)


def test_returns_new_array_on_input_device():
    x = nd.array([1, 2, 3])
    y = invoke("_copy", [x], {})
    assert isinstance(y, nd.NDArray) and y is not x
    assert y.context == x.context
    np.testing.assert_array_equal(y.asnumpy(), [1, 2, 3])


@pytest.mark.cuda
def test_gpu_inputs_give_gpu_outputs():
    g = nd.array([1, 2, 3], ctx=nbdl.gpu(0))
    y = invoke("_copy", [g], {})
    assert y.context == nbdl.gpu(0)
    np.testing.assert_array_equal(y.asnumpy(), [1, 2, 3])


@pytest.mark.cuda
def test_device_mismatch_names_op_and_devices():
    a = nd.array([1, 2, 3])
    b = nd.array([1, 2, 3], ctx=nbdl.gpu(0))
    with pytest.raises(nbdl.DeviceError, match=r"elemwise_add.*cpu\(0\).*gpu\(0\)"):
        invoke("elemwise_add", [a, b], {})
    with pytest.raises(nbdl.DeviceError, match="elemwise_add"):
        a + b


def test_out_writes_into_given_array():
    x = nd.array([1, 2, 3])
    out = nd.zeros((3,))
    storage = out._data
    r = invoke("_copy", [x], {}, out=out)
    assert r is out and out._data is storage
    np.testing.assert_array_equal(out.asnumpy(), [1, 2, 3])
    r = nd.elemwise_add(x, x, out=out)
    assert r is out
    np.testing.assert_array_equal(out.asnumpy(), [2, 4, 6])


def test_out_shape_mismatch_names_op_and_shapes():
    x = nd.array([1, 2, 3])
    with pytest.raises(nbdl.ShapeError, match=r"_copy.*\(4,\).*\(3,\)"):
        invoke("_copy", [x], {}, out=nd.zeros((4,)))


@pytest.mark.cuda
def test_out_dtype_and_device_mismatch():
    x = nd.array([1, 2, 3])
    with pytest.raises(nbdl.DTypeError, match="float64"):
        invoke("_copy", [x], {}, out=nd.zeros((3,), dtype=np.float64))
    with pytest.raises(nbdl.DeviceError, match="gpu"):
        invoke("_copy", [x], {}, out=nd.zeros((3,), ctx=nbdl.gpu(0)))


def test_out_aliasing_an_input_of_a_non_inplace_op():
    # dot may not write over its inputs: the result goes to a fresh buffer
    # and is copied into ``out``.
    a = np.array([[1, 2], [3, 4]], dtype=np.float32)
    b = np.array([[0, 1], [1, 0]], dtype=np.float32)
    x, y = nd.array(a), nd.array(b)
    storage = x._data
    r = nd.dot(x, y, out=x)
    assert r is x and x._data is storage
    np.testing.assert_array_equal(x.asnumpy(), a @ b)
    x = nd.array(a)
    nd.dot(x, x, out=x)
    np.testing.assert_array_equal(x.asnumpy(), a @ a)


def test_inplace_pair_gets_req_inplace():
    record = []

    def kernel(x, y, out, req):
        out[...] = x + y

    op = _python_op("_test_inplace_add", kernel, record, input_names=("lhs", "rhs"),
                    inplace=lambda attrs: [(0, 0)])
    x = nd.array([1, 2])
    y = nd.array([10, 20])
    invoke(op, [x, y], {}, out=x)
    assert [c.req for c in record] == [[REQ_WRITE], [REQ_INPLACE]]
    np.testing.assert_array_equal(x.asnumpy(), [11, 22])
    y_storage = y._data
    invoke(op, [x, y], {}, out=y)              # (1, 0) is not an inplace pair: a fresh
    assert len(record) == 2                    # buffer with the cached REQ_WRITE launch
    assert y._data is y_storage
    np.testing.assert_array_equal(y.asnumpy(), [21, 42])


def test_launches_are_cached():
    record = []

    def kernel(x, out, req):
        out[...] = x * 2

    op = _python_op("_test_double", kernel, record, attrs={})
    x = nd.array([1, 2, 3])
    for _ in range(5):
        y = invoke(op, [x], {})
    np.testing.assert_array_equal(y.asnumpy(), [2, 4, 6])
    assert len(record) == 1
    invoke(op, [nd.array([1, 2])], {})           # a new shape prepares again
    invoke(op, [nd.array([1, 2], dtype=np.float64)], {})  # so does a new dtype
    assert len(record) == 3
    invoke(op, [nd.array([1, 2])], {})
    assert len(record) == 3
    clear_cache()
    invoke(op, [nd.array([1, 2])], {})
    assert len(record) == 4
    assert cache_info()["size"] >= 1


def test_cache_tells_attribute_values_apart():
    x = nd.array([1.0, -1.0])
    pos = x * 0.0
    neg = x * -0.0          # equal to 0.0 as a float, but a different result
    np.testing.assert_array_equal(np.signbit(pos.asnumpy()), [False, True])
    np.testing.assert_array_equal(np.signbit(neg.asnumpy()), [True, False])
    np.testing.assert_array_equal((x * 2).asnumpy(), [2, -2])
    np.testing.assert_array_equal((x * 3).asnumpy(), [3, -3])


def test_aux_inputs_are_updated_in_place():
    record = []

    def kernel(x, running, out, req):
        running[...] = running * 0.5 + x * 0.5
        out[...] = x - running

    op = _python_op("_test_running_mean", kernel, record, aux_names=("moving_mean",),
                    mutates_aux=True,
                    infer_shape=lambda attrs, ins, outs: ([ins[0], ins[0]], [ins[0]]))
    x = nd.array([2, 4])
    running = nd.zeros((2,))
    storage = running._data
    y = invoke(op, [x, running], {})
    assert running._data is storage
    np.testing.assert_array_equal(running.asnumpy(), [1, 2])
    np.testing.assert_array_equal(y.asnumpy(), [1, 2])


def test_hidden_outputs_are_not_returned():
    record = []

    def kernel(x, out, mask, req):
        mask[...] = 1
        out[...] = x

    op = _python_op("_test_hidden", kernel, record, num_outputs=2, num_visible_outputs=1,
                    infer_shape=lambda attrs, ins, outs: (ins, [ins[0], ins[0]]),
                    infer_type=lambda attrs, ins, outs: (ins, [ins[0], ins[0]]))
    y = invoke(op, [nd.array([1, 2])], {})
    assert isinstance(y, nd.NDArray)
    np.testing.assert_array_equal(y.asnumpy(), [1, 2])


def test_multiple_visible_outputs_are_a_list():
    parts = nd.SliceChannel(nd.array(np.arange(6).reshape(2, 3)), num_outputs=3, axis=1)
    assert isinstance(parts, list) and len(parts) == 3
    np.testing.assert_array_equal(parts[1].asnumpy(), [[1], [4]])


def test_input_shape_checked_by_the_ops_rule():
    x = nd.ones((2, 3))
    with pytest.raises(nbdl.ShapeError, match="FullyConnected"):
        nd.FullyConnected(x, nd.ones((4, 5)), nd.ones((4,)), num_hidden=4)


def test_wrong_input_count_and_types():
    x = nd.array([1, 2])
    with pytest.raises(nbdl.GraphError, match=r"elemwise_add.*2 inputs"):
        invoke("elemwise_add", [x], {})
    with pytest.raises(nbdl.GraphError, match="must be an NDArray"):
        invoke("_copy", [np.ones(2)], {})
    with pytest.raises(nbdl.UnknownOpError):
        invoke("no_such_op", [x], {})
    # an op with attributes refuses an unknown one; one without any ignores
    # what it is given, as MXNet's (nd.relu(x, bogus=1) runs there)
    with pytest.raises(nbdl.AttrError, match="bogus"):
        invoke("_plus_scalar", [x], {"scalar": 1.0, "bogus": 1})
    np.testing.assert_array_equal(invoke("_copy", [x], {"bogus": 1}).asnumpy(), [1, 2])


def test_empty_arrays():
    x = nd.zeros((0, 3))
    y = x + x
    assert y.shape == (0, 3)
    assert (x * 2).shape == (0, 3)


def test_variadic_op():
    a, b, c = nd.array([1, 2]), nd.array([10, 20]), nd.array([100, 200])
    np.testing.assert_array_equal(invoke("add_n", [a, b, c], {}).asnumpy(), [111, 222])
    np.testing.assert_array_equal(nd.add_n(a, b, c).asnumpy(), [111, 222])
    np.testing.assert_array_equal(nd.Concat(a, b, dim=0).asnumpy(), [1, 2, 10, 20])


def test_repeated_calls_on_the_cached_path_give_the_first_calls_results():
    x = nd.array([1.0, -1.0, 2.0])
    col = x.reshape((3, 1))          # elementwise kernels see it through a flat view
    for _ in range(3):               # the first call prepares, the later ones reuse it
        np.testing.assert_array_equal(np.signbit((x * -0.0).asnumpy()), [True, False, True])
        np.testing.assert_array_equal(np.signbit((x * 0.0).asnumpy()), [False, True, False])
        assert np.isnan((x * float("nan")).asnumpy()).all()
        np.testing.assert_array_equal((x * 2).asnumpy(), [2, -2, 4])
        np.testing.assert_array_equal((x * 2.5).asnumpy(), [2.5, -2.5, 5])
        np.testing.assert_array_equal((1 - x).asnumpy(), [0, 2, -1])
        np.testing.assert_array_equal((x + x).asnumpy(), [2, -2, 4])
        np.testing.assert_array_equal(nd.relu(x).asnumpy(), [1, 0, 2])
        np.testing.assert_array_equal(nd.relu(col).asnumpy(), [[1], [0], [2]])
        np.testing.assert_array_equal((col * 3).asnumpy(), [[3], [-3], [6]])
        assert (col + col).shape == (3, 1)
    y64 = nd.array([1.0, -1.0, 2.0], dtype=np.float64)
    assert (y64 * 2).dtype == np.float64 and (x * 2).dtype == np.float32


def test_unregistered_ops_of_one_name_keep_their_own_kernels():
    def double(x, out, req):
        out[...] = x * 2

    def triple(x, out, req):
        out[...] = x * 3

    op2 = _python_op("_test_same_name", double, [], attrs={})
    op3 = _python_op("_test_same_name", triple, [], attrs={})
    x = nd.array([1, 2])
    for _ in range(3):
        np.testing.assert_array_equal(invoke(op2, [x], {}).asnumpy(), [2, 4])
        np.testing.assert_array_equal(invoke(op3, [x], {}).asnumpy(), [3, 6])


def test_out_on_the_cached_path_and_out_overlapping_an_input():
    x = nd.array([1, 2, 3])
    out = nd.zeros((3,))
    storage = out._data
    for _ in range(3):
        r = nd.elemwise_add(x, x, out=out)
        assert r is out and out._data is storage
    np.testing.assert_array_equal(out.asnumpy(), [2, 4, 6])
    for _ in range(2):               # out is an input: still through the inplace rules
        nd.elemwise_add(x, x, out=x)
    np.testing.assert_array_equal(x.asnumpy(), [4, 8, 12])
    a = nd.array([1.0, 2.0])
    a.attach_grad()
    y = nd.zeros((2,))
    for _ in range(2):
        with nbdl.autograd.record():
            nd.elemwise_mul(a, a, out=y)
        y.backward()
        np.testing.assert_array_equal(a.grad.asnumpy(), [2, 4])


def test_the_runtime_makes_arrays_of_its_inputs_class():
    # nbdl.imperative sits below NDArray: results take the class of the first
    # input (or out=), and an op without array inputs must be told the class.
    from nbdl.imperative.invoke import invoke as core_invoke

    class Tagged(nd.NDArray):
        pass

    t = Tagged(np.array([1.0, -2.0], np.float32))
    for _ in range(2):                       # the general path, then the cached one
        r = core_invoke("relu", [t], None)
        assert type(r) is Tagged
        np.testing.assert_array_equal(r.asnumpy(), [1, 0])
    assert type(t * 2) is Tagged
    with pytest.raises(nbdl.GraphError, match="no array inputs.*cls="):
        core_invoke("_zeros", [], {"shape": (2,)})
    z = core_invoke("_zeros", [], {"shape": (2,)}, cls=nd.NDArray)
    assert type(z) is nd.NDArray and z.shape == (2,)
    assert type(invoke("_zeros", [], {"shape": (2,)})) is nd.NDArray    # nd.invoke names it
    t.attach_grad()
    with nbdl.autograd.record():
        y = core_invoke("elemwise_mul", [t, t], None)
    dx, = nbdl.autograd.grad(y, [t])
    assert type(dx) is Tagged
    np.testing.assert_array_equal(dx.asnumpy(), [2, -4])
