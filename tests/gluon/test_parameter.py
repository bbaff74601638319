"""Parameter: initialization (immediate and deferred), devices, gradients,
autograd marking, casting, the Symbol variable, Constant, and errors."""
import json
import warnings

import numpy as np
import pytest

import nbdl
from nbdl import autograd, initializer
from nbdl.gluon import _trace
from nbdl.gluon.parameter import (Constant, DeferredInitializationError, Parameter,
                                  ParameterError)


def test_repr_and_unknown_dims():
    p = Parameter("weight", shape=(10, -1))
    assert p.shape == (10, 0)
    assert repr(p) == "Parameter weight (shape=(10, 0), dtype=float32)"
    assert Parameter("b", shape=5).shape == (5,)
    assert Parameter("b").shape is None


@pytest.mark.parametrize("kwargs, words", [
    ({"grad_req": "sum"}, "grad_req='sum'"),
    ({"stype": "row_sparse"}, "stype='row_sparse'"),
    ({"shape": (3, -2)}, "negative dimension"),
    ({"shape": ("a",)}, "tuple of integers"),
    ({"dtype": "complex64"}, "complex64"),
])
def test_bad_construction_arguments(kwargs, words):
    with pytest.raises(ParameterError, match=words):
        Parameter("w", **kwargs)


@pytest.mark.parametrize("what", ["stype", "grad_stype"])
def test_a_storage_type_that_does_not_exist_is_also_an_assertion_error(what):
    # MXNet 1.x asserts on it; sparse ones are refused as not supported
    with pytest.raises(AssertionError, match=f"{what}='invalid' is not a storage type"):
        Parameter("w", **{what: "invalid"})
    with pytest.raises(ParameterError) as info:
        Parameter("w", **{what: "csr"})
    assert not isinstance(info.value, AssertionError)


def test_initialize_with_known_shape():
    p = Parameter("weight", shape=(4, 3), init=initializer.Constant(2.0))
    p.initialize()
    assert p.data().shape == (4, 3) and p.data().dtype == np.float32
    np.testing.assert_array_equal(p.data().asnumpy(), np.full((4, 3), 2.0))
    np.testing.assert_array_equal(p.grad().asnumpy(), np.zeros((4, 3)))
    assert p.list_device() == [nbdl.cpu(0)] and p.list_ctx() == [nbdl.cpu(0)]
    assert len(p.list_data()) == 1 and len(p.list_grad()) == 1


def test_unknown_shape_without_deferral_raises():
    p = Parameter("weight", shape=(10, 0))
    with pytest.raises(ParameterError, match="'weight'.*unknown shape \\(10, 0\\)"):
        p.initialize()
    with pytest.raises(ParameterError, match="has not been initialized"):
        p.data()


def test_deferred_initialization():
    p = Parameter("weight", shape=(6, 0), allow_deferred_init=True)
    p.initialize(init=initializer.Uniform(0.5), device=nbdl.cpu(0))
    with pytest.raises(DeferredInitializationError, match="'weight'.*deferred") as e:
        p.data()
    assert isinstance(e.value, nbdl.NbdlError)
    assert p.list_device() == [nbdl.cpu(0)]
    with pytest.raises(ParameterError, match="\\(5, 4\\) is incompatible with its shape \\(6, 0\\)"):
        p.shape = (5, 4)
    with pytest.raises(ParameterError, match="still unknown"):
        p._finish_deferred_init()
    p.shape = (6, 4)
    p._finish_deferred_init()
    a = p.data().asnumpy()
    assert a.shape == (6, 4) and np.abs(a).max() < 0.5 and np.unique(a).size > 20
    p._finish_deferred_init()                      # nothing deferred any more: a no-op
    np.testing.assert_array_equal(p.data().asnumpy(), a)


def test_set_data_while_deferred_is_used_at_finish():
    p = Parameter("weight", shape=(2, 0), allow_deferred_init=True)
    p.initialize()
    p.set_data(nbdl.nd.array([[1, 2, 3], [4, 5, 6]]))
    assert p.shape == (2, 3)
    p._finish_deferred_init()
    np.testing.assert_array_equal(p.data().asnumpy(), [[1, 2, 3], [4, 5, 6]])


def test_which_initializer_wins():
    own = Parameter("weight", shape=(3,), init="ones")
    own.initialize(default_init=initializer.Uniform())
    np.testing.assert_array_equal(own.data().asnumpy(), np.ones(3))
    own.initialize(init=initializer.Zero(), force_reinit=True)
    np.testing.assert_array_equal(own.data().asnumpy(), np.zeros(3))
    bias = Parameter("bias", shape=(3,))
    bias.initialize(default_init=initializer.Uniform(1.0))     # MXNet's name rule
    np.testing.assert_array_equal(bias.data().asnumpy(), np.zeros(3))
    alpha = Parameter("alpha", shape=(50,))
    alpha.initialize(default_init=initializer.Uniform(1.0))
    assert np.unique(alpha.data().asnumpy()).size > 40


def test_reinitialize_warns_unless_forced():
    p = Parameter("weight", shape=(2,), init="zeros")
    p.initialize()
    with pytest.warns(UserWarning, match="already initialized"):
        p.initialize(init="ones")
    np.testing.assert_array_equal(p.data().asnumpy(), [0, 0])
    p.initialize(init="ones", force_reinit=True)
    np.testing.assert_array_equal(p.data().asnumpy(), [1, 1])


def test_grad_req_drops_and_recreates_gradients_and_marks_for_autograd():
    p = Parameter("weight", shape=(3,), init="ones")
    p.initialize()
    p.grad_req = "null"
    with pytest.raises(ParameterError, match="grad_req='null'"):
        p.grad()
    with pytest.raises(ParameterError, match="grad_req='null'"):
        p.list_grad()
    p.grad_req = "add"
    for _ in range(2):
        with autograd.record():
            y = p.data() * 2
        y.backward()
    np.testing.assert_array_equal(p.grad().asnumpy(), [4, 4, 4])
    assert p.grad()._fresh_grad
    p.zero_grad()
    np.testing.assert_array_equal(p.grad().asnumpy(), [0, 0, 0])
    with pytest.raises(ParameterError, match="grad_req='max'"):
        p.grad_req = "max"


def test_non_differentiable_parameter_has_no_gradient():
    p = Parameter("running_mean", shape=(2,), differentiable=False)
    assert p.grad_req == "null"
    p.grad_req = "write"
    assert p.grad_req == "null"
    p.initialize()
    with pytest.raises(ParameterError, match="grad_req='null'"):
        p.grad()


def test_several_devices():
    p = Parameter("weight", shape=(2, 2), init="ones")
    p.initialize(device=[nbdl.cpu(0), nbdl.cpu(1)])
    a, b = p.list_data()
    assert a.context == nbdl.cpu(0) and b.context == nbdl.cpu(1)
    assert p.data(nbdl.cpu(1)) is b and p.data() is a       # current device: cpu(0)
    with nbdl.cpu(1):
        assert p.data() is b
    a[:] = 3.0
    assert b.asnumpy()[0, 0] == 1.0                          # separate storage
    np.testing.assert_array_equal(p._reduce().asnumpy(), np.full((2, 2), 2.0))
    with pytest.raises(ParameterError, match="not initialized on gpu\\(0\\)"):
        p.data(nbdl.gpu(0))
    p.set_data(np.full((2, 2), 5.0))
    assert all((d.asnumpy() == 5).all() for d in p.list_data())
    with pytest.raises(ParameterError, match="names a device twice"):
        Parameter("w", shape=(1,)).initialize(device=[nbdl.cpu(0), nbdl.cpu(0)])


def test_set_data_checks_shape_and_requires_initialization():
    p = Parameter("weight", shape=(2,))
    with pytest.raises(ParameterError, match="has not been initialized"):
        p.set_data(np.zeros(2))
    p.initialize()
    with pytest.raises(ParameterError, match="\\(3,\\) is incompatible"):
        p.set_data(np.zeros(3))


def test_reset_device_keeps_the_average_value():
    p = Parameter("weight", shape=(2,), init="ones")
    with pytest.raises(ParameterError, match="not been initialized"):
        p.reset_device(nbdl.cpu(1))
    p.initialize(device=[nbdl.cpu(0), nbdl.cpu(1)])
    p.list_data()[1][:] = 3.0
    p.reset_ctx(nbdl.cpu(2))
    assert p.list_device() == [nbdl.cpu(2)]
    np.testing.assert_array_equal(p.data().asnumpy(), [2.0, 2.0])
    assert p.grad().context == nbdl.cpu(2)
    q = Parameter("w", shape=(0,), allow_deferred_init=True)
    q.initialize()
    q.reset_device([nbdl.cpu(3)])
    assert q.list_device() == [nbdl.cpu(3)]


def test_cast_converts_data_and_gradients():
    p = Parameter("weight", shape=(2,), init="ones")
    p.initialize()
    p.cast("float64")
    assert p.dtype == np.float64 and p.data().dtype == np.float64 and p.grad().dtype == np.float64
    p.dtype = np.float32
    assert p.data().dtype == np.float32
    with autograd.record():
        y = p.data() * 3
    y.backward()
    np.testing.assert_array_equal(p.grad().asnumpy(), [3, 3])
    with pytest.raises(ParameterError, match="cast"):
        p.cast("complex128")


def test_var_carries_attributes():
    p = Parameter("weight", shape=(3, 0), lr_mult=2.0, wd_mult=0.5, init=initializer.Xavier())
    v = p.var()
    assert isinstance(v, nbdl.sym.Symbol) and v.name == "weight"
    attrs = v.list_attr()
    assert attrs["__lr_mult__"] == "2.0" and attrs["__wd_mult__"] == "0.5"
    assert attrs["__dtype__"] == "0"
    assert json.loads(attrs["__init__"])[0] == "xavier"
    assert p.var() is v
    p._var_name = "dense0.weight"
    assert p.var().name == "dense0.weight"


def test_data_returns_the_variable_while_tracing():
    p = Parameter("weight", shape=(2, 0), allow_deferred_init=True)
    with _trace.trace():
        assert p.data() is p.var()


def test_constant():
    c = Constant([[1, 2], [3, 4]])
    assert c.grad_req == "null" and c.shape == (2, 2) and c.name == "const"
    assert repr(c) == "Constant const (shape=(2, 2), dtype=float32)"
    with pytest.warns(UserWarning, match="grad_req other than 'null'"):
        c.grad_req = "write"
    assert c.grad_req == "null"
    c.initialize(default_init=initializer.Uniform())
    np.testing.assert_array_equal(c.data().asnumpy(), [[1, 2], [3, 4]])
    assert json.loads(c.var().list_attr()["__init__"]) == ["constant", {"value": [[1, 2], [3, 4]]}]
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        c.grad_req = "null"


def test_load_init():
    p = Parameter("weight", shape=(2, 0), allow_deferred_init=True)
    p._load_init(nbdl.nd.array([[1, 2, 3], [4, 5, 6]]))
    assert p.shape == (2, 3) and p.list_device() == [nbdl.cpu(0)]
    np.testing.assert_array_equal(p.data().asnumpy(), [[1, 2, 3], [4, 5, 6]])
    p._load_init(np.zeros((2, 3), np.float32))                 # already initialized: set_data
    np.testing.assert_array_equal(p.data().asnumpy(), np.zeros((2, 3)))
    with pytest.raises(ParameterError, match="\\(2, 3\\) is incompatible with the saved \\(3, 2\\)"):
        p._load_init(np.zeros((3, 2), np.float32))
    with pytest.raises(ParameterError, match="float64.*cast_dtype=True"):
        p._load_init(np.zeros((2, 3)))
    p._load_init(np.ones((2, 3)), cast_dtype=True)
    assert p.dtype == np.float32 and p.data().asnumpy()[0, 0] == 1.0
    p._load_init(np.ones((2, 3)), cast_dtype=True, dtype_source="saved")
    assert p.dtype == np.float64 and p.data().dtype == np.float64
    with pytest.raises(ParameterError, match="initialized on \\[cpu\\(0\\)\\]"):
        p._load_init(np.ones((2, 3)), device=nbdl.cpu(1))


@pytest.mark.cuda
def test_initialize_on_a_gpu_in_the_simulator():
    p = Parameter("weight", shape=(2, 3), init="ones")
    p.initialize(device=nbdl.gpu(0))
    assert p.data().context == nbdl.gpu(0) and p.grad().context == nbdl.gpu(0)
    np.testing.assert_array_equal(p.data().asnumpy(), np.ones((2, 3)))
