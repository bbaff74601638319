"""Initializers: statistics, shape rules, MXNet's naming rule, JSON forms."""
import json

import numpy as np
import pytest

import nbdl
from nbdl import initializer as init
from nbdl.initializer import InitDesc, InitializerError


def _fill(initializer, shape, name="fc_weight", dtype=np.float32):
    arr = nbdl.nd.zeros(shape, dtype=dtype)
    initializer(name, arr)
    return arr.asnumpy()


def test_nbdl_init_is_the_initializer_module():
    import nbdl.init
    assert nbdl.init is init
    assert nbdl.init.Xavier is init.Xavier


def test_uniform_statistics():
    a = _fill(init.Uniform(0.5), (200, 100))
    assert a.dtype == np.float32
    assert a.min() >= -0.5 and a.max() < 0.5
    assert abs(a.mean()) < 0.01
    assert a.std() == pytest.approx(0.5 / np.sqrt(3), rel=0.03)


def test_normal_statistics_and_float64():
    a = _fill(init.Normal(0.2), (200, 100), dtype=np.float64)
    assert a.dtype == np.float64
    assert abs(a.mean()) < 0.01
    assert a.std() == pytest.approx(0.2, rel=0.03)


@pytest.mark.parametrize("factor_type", ["avg", "in", "out"])
def test_xavier_uniform_range_and_std(factor_type):
    shape = (64, 32, 3, 3)
    fan_in, fan_out = 32 * 9, 64 * 9
    factor = {"avg": (fan_in + fan_out) / 2, "in": fan_in, "out": fan_out}[factor_type]
    scale = np.sqrt(3 / factor)
    a = _fill(init.Xavier(factor_type=factor_type), shape)
    assert np.abs(a).max() <= scale
    assert a.std() == pytest.approx(scale / np.sqrt(3), rel=0.03)


def test_xavier_gaussian_and_msraprelu_std():
    a = _fill(init.Xavier(rnd_type="gaussian", factor_type="in", magnitude=2), (300, 200))
    assert a.std() == pytest.approx(np.sqrt(2 / 200), rel=0.03)
    b = _fill(init.MSRAPrelu(factor_type="out", slope=0.5), (300, 200))
    assert b.std() == pytest.approx(np.sqrt(2 / (1 + 0.25) / 300), rel=0.03)
    assert json.loads(init.MSRAPrelu().dumps()) == ["msraprelu",
                                                      {"factor_type": "avg", "slope": 0.25}]


def test_xavier_needs_two_dimensions_and_names_the_parameter():
    with pytest.raises(InitializerError, match="'dense0_weight'.*\\(5,\\)"):
        _fill(init.Xavier(), (5,), name="dense0_weight")


@pytest.mark.parametrize("shape", [(6, 10), (10, 6), (4, 2, 3, 3)])
@pytest.mark.parametrize("rand_type", ["uniform", "normal"])
def test_orthogonal_rows_or_columns_are_orthonormal(shape, rand_type):
    a = _fill(init.Orthogonal(scale=2.0, rand_type=rand_type), shape).reshape(shape[0], -1)
    gram = a @ a.T if a.shape[0] <= a.shape[1] else a.T @ a
    np.testing.assert_allclose(gram, 4.0 * np.eye(gram.shape[0]), atol=1e-4)


def test_constant_zero_one():
    np.testing.assert_array_equal(_fill(init.Constant(3.5), (2, 3)), np.full((2, 3), 3.5))
    np.testing.assert_array_equal(_fill(init.Constant([1, 2, 3]), (2, 3)), [[1, 2, 3]] * 2)
    np.testing.assert_array_equal(_fill(init.Zero(), (4,), "w_weight"), np.zeros(4))
    np.testing.assert_array_equal(_fill(init.One(), (4,), "w_weight"), np.ones(4))
    with pytest.raises(InitializerError, match="does not broadcast"):
        _fill(init.Constant([1, 2]), (2, 3))
    with pytest.raises(InitializerError, match="number or an array"):
        init.Constant("x")


@pytest.mark.parametrize("name, expected", [
    ("fc1_bias", 0.0), ("bn_gamma", 1.0), ("bn_beta", 0.0), ("bn_moving_mean", 0.0),
    ("bn_moving_var", 1.0), ("features.1.running_mean", 0.0), ("features.1.running_var", 1.0),
])
def test_mxnet_naming_rule(name, expected):
    a = _fill(init.Uniform(1.0), (50,), name=name)
    np.testing.assert_array_equal(a, np.full(50, expected))


@pytest.mark.parametrize("name", ["fc1_weight", "features.0.weight", "alpha"])
def test_weights_and_other_names_get_the_weight_rule(name):
    a = _fill(init.Uniform(1.0), (50,), name=name)
    assert np.unique(a).size > 40 and np.abs(a).max() < 1.0


def test_own_init_attribute_overrides_the_name_rule():
    arr = nbdl.nd.zeros((3,))
    init.Uniform()(InitDesc("fc_bias", {"__init__": "ones"}), arr)
    np.testing.assert_array_equal(arr.asnumpy(), np.ones(3))
    init.Uniform()(InitDesc("fc_bias", {"__init__": init.Constant(2.0).dumps()}), arr)
    np.testing.assert_array_equal(arr.asnumpy(), np.full(3, 2.0))


def test_mixed_matches_patterns_in_order():
    mixed = init.Mixed([".*scale", ".*"], [init.Constant(7.0), init.One()])
    np.testing.assert_array_equal(_fill(mixed, (2,), "fc_scale"), [7.0, 7.0])
    np.testing.assert_array_equal(_fill(mixed, (2,), "fc_weight"), [1.0, 1.0])
    again = init.create(mixed.dumps())
    np.testing.assert_array_equal(_fill(again, (2,), "x_scale"), [7.0, 7.0])
    # as in MXNet, the chosen initializer still applies the naming rule
    np.testing.assert_array_equal(_fill(init.Mixed([".*"], [init.Xavier()]), (2,), "fc_bias"),
                                  [0.0, 0.0])
    with pytest.raises(InitializerError, match="'conv_weight' matches none"):
        _fill(init.Mixed([".*bias"], [init.Zero()]), (2,), "conv_weight")
    with pytest.raises(InitializerError, match="2 patterns but 1"):
        init.Mixed(["a", "b"], [init.Zero()])


@pytest.mark.parametrize("obj", [init.Uniform(0.3), init.Normal(0.02), init.Xavier("gaussian", "in", 2),
                                 init.Orthogonal(1.0, "normal"), init.Constant(1.5), init.Zero(),
                                 init.One(), init.MSRAPrelu("out", 0.1)])
def test_dumps_round_trips_through_create(obj):
    name, kwargs = json.loads(obj.dumps())
    assert name == type(obj).__name__.lower()
    back = init.create(obj.dumps())
    assert type(back) is type(obj) and back.dumps() == obj.dumps()


def test_uniform_dumps_matches_mxnet():
    assert init.Uniform().dumps() == '["uniform", {"scale": 0.07}]'


def test_create_by_name_alias_and_errors():
    assert isinstance(init.create("xavier", magnitude=2), init.Xavier)
    assert isinstance(init.create("zeros"), init.Zero)
    assert isinstance(init.create("ones"), init.One)
    u = init.Uniform()
    assert init.create(u) is u
    with pytest.raises(InitializerError, match="unknown initializer 'glorot'"):
        init.create("glorot")
    with pytest.raises(InitializerError, match="JSON"):
        init.create('["uniform", ')
    with pytest.raises(InitializerError, match="bad arguments"):
        init.create("uniform", sigma=1)
    with pytest.raises(InitializerError, match="scale must be"):
        init.Uniform(-1)
    with pytest.raises(InitializerError, match="rnd_type='cauchy'"):
        init.Xavier(rnd_type="cauchy")


def test_register_a_custom_initializer():
    @init.register
    class HalfTest(init.Initializer):
        def _init_weight(self, _, arr):
            arr[:] = 0.5
    np.testing.assert_array_equal(_fill(init.create("halftest"), (3,)), [0.5] * 3)


def test_base_initializer_without_weight_rule_raises():
    with pytest.raises(InitializerError, match="_init_weight"):
        _fill(init.Initializer(), (2,))


def test_seed_reproduces_draws():
    nbdl.random.seed(11)
    a = _fill(init.Xavier(), (8, 4))
    b = _fill(init.Xavier(), (8, 4))
    nbdl.random.seed(11)
    np.testing.assert_array_equal(_fill(init.Xavier(), (8, 4)), a)
    assert not np.array_equal(a, b)


@pytest.mark.cuda
def test_fills_a_gpu_array_in_the_simulator():
    arr = nbdl.nd.zeros((3, 4), ctx=nbdl.gpu(0))
    init.Uniform(1.0)("w_weight", arr)
    host = arr.asnumpy()
    assert arr.context == nbdl.gpu(0) and np.abs(host).max() < 1.0 and np.unique(host).size > 1


def test_lstm_bias_sets_only_the_forget_gate():
    arr = nbdl.nd.ones((12,))
    nbdl.initializer.LSTMBias(2.5)("lstm_gates", arr)      # a *_bias name gets 0s, as MXNet
    np.testing.assert_array_equal(arr.asnumpy(), [0] * 3 + [2.5] * 3 + [0] * 6)
    assert nbdl.initializer.create("lstmbias") == nbdl.initializer.LSTMBias()
    # as a cell's bias initializer (MXNet 1.x: i2h_bias_initializer=mx.init.LSTMBias(f))
    cell = nbdl.gluon.rnn.LSTMCell(2, input_size=3, i2h_bias_initializer=nbdl.init.LSTMBias(1.0))
    cell.initialize()
    np.testing.assert_array_equal(cell.i2h_bias.data().asnumpy(), [0, 0, 1, 1, 0, 0, 0, 0])
    with pytest.raises(nbdl.initializer.InitializerError, match=r"shape \(6,\); an LSTM bias"):
        nbdl.initializer.LSTMBias()("b", nbdl.nd.zeros((6,)))
    with pytest.raises(nbdl.initializer.InitializerError, match="forget_bias must be a number"):
        nbdl.initializer.LSTMBias("x")


# -- MXNet 1.x's Bilinear, LSTMBias and Load -----------------------------------

def _np_bilinear(shape):
    """Bilinear upsampling kernel per element, as MXNet documents it."""
    f = np.ceil(shape[3] / 2.0)
    c = (2 * f - 1 - f % 2) / (2.0 * f)
    out = np.zeros(shape)
    for idx in np.ndindex(*shape):
        y, x = idx[2], idx[3]
        out[idx] = (1 - abs(x / f - c)) * (1 - abs(y / f - c))
    return out


@pytest.mark.parametrize("shape", [(1, 1, 4, 4), (2, 3, 3, 3), (1, 2, 5, 4), (1, 1, 2, 6)])
def test_bilinear_matches_the_upsampling_kernel(shape):
    got = _fill(init.Bilinear(), shape, name="upsampling0_weight")
    np.testing.assert_allclose(got, _np_bilinear(shape), rtol=1e-6)
    if shape == (1, 1, 4, 4):
        tent = np.array([0.25, 0.75, 0.75, 0.25])
        np.testing.assert_array_equal(got[0, 0], np.outer(tent, tent))


def test_bilinear_needs_a_4d_weight_and_round_trips():
    with pytest.raises(InitializerError, match="Bilinear.*'w'.*4-d"):
        _fill(init.Bilinear(), (3, 4), name="w")
    assert isinstance(init.create(init.Bilinear().dumps()), init.Bilinear)
    assert isinstance(init.create("bilinear"), init.Bilinear)


def test_lstmbias_sets_only_the_forget_gate():
    got = _fill(init.LSTMBias(forget_bias=2.5), (12,), name="lstm_i2h_forget")
    np.testing.assert_array_equal(got, [0] * 3 + [2.5] * 3 + [0] * 6)
    # called directly on a '*bias' name the naming rule wins (zeros), as in MXNet
    np.testing.assert_array_equal(_fill(init.LSTMBias(), (8,), name="l_bias"), [0] * 8)
    # a Gluon parameter's init
    p = nbdl.gluon.Parameter("h2h_bias", shape=(8,), init=init.LSTMBias(forget_bias=3.0))
    p.initialize()
    np.testing.assert_array_equal(p.data().asnumpy(), [0, 0, 3, 3, 0, 0, 0, 0])
    # as a parameter's own init it overrides the bias rule (zeros)
    arr = nbdl.nd.ones((8,))
    init.Uniform()(InitDesc("l0_bias", {"__init__": init.LSTMBias().dumps()}), arr)
    np.testing.assert_array_equal(arr.asnumpy(), [0, 0, 1, 1, 0, 0, 0, 0])
    with pytest.raises(InitializerError, match="4 \\* num_hidden"):
        _fill(init.LSTMBias(), (6,), name="b")
    with pytest.raises(InitializerError, match="forget_bias"):
        init.LSTMBias(forget_bias="big")


def test_load_from_a_dict_and_a_file(tmp_path):
    w = np.arange(6, dtype=np.float32).reshape(2, 3)
    b = np.array([7.0, 8.0], np.float32)
    params = {"arg:fc_weight": nbdl.nd.array(w), "aux:bn_moving_mean": nbdl.nd.array(b)}
    fname = str(tmp_path / "p.params")
    nbdl.nd.save(fname, params)
    for source in (params, fname):
        loader = init.Load(source, default_init=init.Constant(3.0))
        np.testing.assert_array_equal(_fill(loader, (2, 3), name="fc_weight"), w)
        np.testing.assert_array_equal(_fill(loader, (2,), name="bn_moving_mean"), b)
        np.testing.assert_array_equal(_fill(loader, (4,), name="other_weight"), [3.0] * 4)
    with pytest.raises(InitializerError, match="'fc_weight' has shape \\(3, 2\\).*\\(2, 3\\)"):
        _fill(init.Load(params), (3, 2), name="fc_weight")
    with pytest.raises(InitializerError, match="'missing'.*no default_init"):
        _fill(init.Load(params), (2,), name="missing")
    with pytest.raises(InitializerError, match="file name or a dict"):
        init.Load([1, 2])


def test_op_default_init_on_composed_variables():
    data = nbdl.sym.Variable("data")
    prelu = nbdl.sym.LeakyReLU(data=data, act_type="prelu", name="act")
    attrs = prelu.attr_dict()
    assert json.loads(attrs["act_gamma"]["__init__"]) == ["Constant", {"value": 0.25}]
    bn = nbdl.sym.BatchNorm(data=data, name="bn")
    assert bn.attr_dict()["bn_moving_var"]["__init__"] == '["one", {}]'
    assert bn.attr_dict()["bn_moving_mean"]["__init__"] == '["zero", {}]'
    assert "__init__" not in bn.attr_dict().get("bn_gamma", {})
    # an explicit variable without init gets the default; one with init keeps its own
    g = nbdl.sym.Variable("g")
    nbdl.sym.LeakyReLU(data=data, gamma=g, act_type="prelu")
    assert g.attr("__init__") == '["Constant", {"value": 0.25}]'
    g1 = nbdl.sym.Variable("g1", init=init.One())
    nbdl.sym.LeakyReLU(data=data, gamma=g1, act_type="prelu")
    assert json.loads(g1.attr("__init__"))[0] == "one"
    # leaky (no gamma input) adds nothing
    leaky = nbdl.sym.LeakyReLU(data=data, act_type="leaky")
    assert leaky.list_arguments() == ["data"]


def test_module_init_params_uses_the_op_default():
    data = nbdl.sym.Variable("data")
    net = nbdl.sym.LeakyReLU(data=data, act_type="prelu", name="p")
    mod = nbdl.mod.Module(net, label_names=None)
    mod.bind(data_shapes=[("data", (4, 6))])
    mod.init_params(initializer=init.Uniform(1.0))
    np.testing.assert_array_equal(mod.get_params()[0]["p_gamma"].asnumpy(), [0.25] * 6)
