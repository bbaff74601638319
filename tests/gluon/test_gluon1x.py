"""Gluon 1.x blocks on nbdl's Gluon: hybrid_forward(F, ...), name scopes and
prefixed names, ParameterDict, save_params/load_params, params= sharing and
the ctx= synonyms; next to the equivalent Gluon 2.0 blocks.

The expected 1.x names were checked against MXNet 1.9.1."""
import os
import warnings

import numpy as np
import pytest

import nbdl
from nbdl import autograd, gluon
from nbdl.gluon import nn, rnn
from nbdl.gluon._scope import NameCounter
from nbdl.testing import assert_almost_equal


@pytest.fixture(autouse=True)
def fresh_names():
    with NameCounter():
        yield


class MLP1x(gluon.HybridBlock):
    """Gluon 1.x style: name_scope, params.get, hybrid_forward with F."""

    def __init__(self, **kwargs):
        super().__init__(**kwargs)
        with self.name_scope():
            self.hidden = nn.Dense(8, in_units=4)
            self.out_weight = self.params.get("out_weight", shape=(3, 8))
            self.out_bias = self.params.get("out_bias", shape=(3,), init="zeros")

    def hybrid_forward(self, F, x, out_weight, out_bias):
        h = F.relu(self.hidden(x))
        return F.FullyConnected(h, out_weight, out_bias, num_hidden=3)


class MLP2(gluon.HybridBlock):
    """The same network in Gluon 2.0 style."""

    def __init__(self):
        super().__init__()
        self.hidden = nn.Dense(8, in_units=4)
        self.out_weight = gluon.Parameter("out_weight", shape=(3, 8))
        self.out_bias = gluon.Parameter("out_bias", shape=(3,), init="zeros")

    def forward(self, x):
        h = nbdl.npx.relu(self.hidden(x))
        return nbdl.npx.fully_connected(h, self.out_weight.data(), self.out_bias.data(),
                                        num_hidden=3)


def _numpy_mlp(params, x):
    h = np.maximum(x @ params["hidden.weight"].T + params["hidden.bias"], 0)
    return h @ params["out_weight"].T + params["out_bias"]


def _data():
    rng = np.random.RandomState(3)
    return rng.randn(6, 4).astype(np.float32), rng.randn(6, 3).astype(np.float32)


def _same_start(net1, net2):
    """Copy net1's values into net2 by structural name (the names both
    dialects share) and return them as numpy arrays."""
    values = {k: p.data().asnumpy() for k, p in net1._collect_params_with_prefix().items()}
    for k, p in net2._collect_params_with_prefix().items():
        p.set_data(values[k])
    return values


def _train(net, x, y, steps=5):
    trainer = gluon.Trainer(net.collect_params(), "sgd", {"learning_rate": 0.1})
    loss_fn = gluon.loss.L2Loss()
    losses = []
    for _ in range(steps):
        with autograd.record():
            loss = loss_fn(net(nbdl.nd.array(x)), nbdl.nd.array(y))
        loss.backward()
        trainer.step(x.shape[0])
        losses.append(float(loss.mean().asscalar()))
    return losses


@pytest.mark.parametrize("hybridize", [False, True])
def test_1x_and_2x_blocks_train_to_equal_losses(hybridize):
    x, y = _data()
    old, new = MLP1x(), MLP2()
    old.initialize(nbdl.init.Xavier())
    new.initialize()
    start = _same_start(old, new)
    if hybridize:
        old.hybridize(static_alloc=True)
        new.hybridize(static_alloc=True)
    expected = _numpy_mlp(start, x)
    assert_almost_equal(old(nbdl.nd.array(x)).asnumpy(), expected, rtol=1e-5, atol=1e-5)
    first = float((0.5 * ((expected - y) ** 2).mean(axis=1)).mean())
    losses_old, losses_new = _train(old, x, y), _train(new, x, y)
    assert abs(losses_old[0] - first) < 1e-5
    assert_almost_equal(np.array(losses_old), np.array(losses_new), rtol=1e-5, atol=1e-6)
    assert losses_old[-1] < losses_old[0]
    for k, p in old._collect_params_with_prefix().items():
        q = new._collect_params_with_prefix()[k]
        assert_almost_equal(p.data().asnumpy(), q.data().asnumpy(), rtol=1e-5, atol=1e-6)


def test_1x_eager_and_hybridized_agree_with_gradients():
    x, _ = _data()
    net = MLP1x()
    net.initialize()
    outs, grads = [], []
    for hyb in (False, True):
        net.hybridize(hyb)
        xa = nbdl.nd.array(x)
        with autograd.record():
            out = net(xa)
        out.backward()
        outs.append(out.asnumpy())
        grads.append(net.out_weight.grad().asnumpy().copy())
    assert_almost_equal(outs[0], outs[1], rtol=1e-5, atol=1e-6)
    assert_almost_equal(grads[0], grads[1], rtol=1e-5, atol=1e-6)


def test_1x_names_as_mxnet_gives_them():
    net = MLP1x()
    assert net.prefix == "mlp1x0_" and net.name == "mlp1x0"
    assert list(net.collect_params()) == ["mlp1x0_out_weight", "mlp1x0_out_bias",
                                          "mlp1x0_dense0_weight", "mlp1x0_dense0_bias"]
    assert list(net.params) == ["mlp1x0_out_weight", "mlp1x0_out_bias"]
    assert net.hidden.weight.name == "mlp1x0_dense0_weight"
    assert list(MLP1x().collect_params())[0] == "mlp1x1_out_weight"
    assert list(MLP1x(prefix="other_").collect_params())[2] == "other_dense0_weight"
    # save_parameters keeps the structural names in both dialects
    assert list(net._collect_params_with_prefix()) == ["out_weight", "out_bias",
                                                       "hidden.weight", "hidden.bias"]


class Inner(gluon.HybridBlock):
    def __init__(self, **kwargs):
        super().__init__(**kwargs)
        with self.name_scope():
            self.fc = nn.Dense(2, prefix="fc_")
            self.bn = nn.BatchNorm()
            self.act = nn.Activation("relu")
            self.conv = nn.Conv2D(2, 3)
            self.pool = nn.MaxPool2D()

    def hybrid_forward(self, F, x):
        return x


def test_nested_name_scopes_and_aliases():
    seq = nn.HybridSequential()
    with seq.name_scope():
        seq.add(Inner(), Inner(), nn.Dense(3))
    names = list(seq.collect_params())
    assert names[:8] == [
        "hybridsequential0_inner0_fc_weight", "hybridsequential0_inner0_fc_bias",
        "hybridsequential0_inner0_batchnorm0_gamma", "hybridsequential0_inner0_batchnorm0_beta",
        "hybridsequential0_inner0_batchnorm0_running_mean",
        "hybridsequential0_inner0_batchnorm0_running_var",
        "hybridsequential0_inner0_conv0_weight", "hybridsequential0_inner0_conv0_bias"]
    assert names[8] == "hybridsequential0_inner1_fc_weight"
    assert names[-2:] == ["hybridsequential0_dense0_weight", "hybridsequential0_dense0_bias"]
    assert [c.prefix for c in seq[0]._children.values()] == [
        "hybridsequential0_inner0_fc_", "hybridsequential0_inner0_batchnorm0_",
        "hybridsequential0_inner0_relu0_", "hybridsequential0_inner0_conv0_",
        "hybridsequential0_inner0_pool0_"]
    assert list(seq.collect_params(".*fc_weight")) == [
        "hybridsequential0_inner0_fc_weight", "hybridsequential0_inner1_fc_weight"]


def test_top_level_counters_and_rnn_names():
    assert [nn.Activation("relu").prefix, nn.Activation("tanh").prefix,
            nn.Activation("relu").prefix] == ["relu0_", "tanh0_", "relu1_"]
    assert list(rnn.LSTM(4, input_size=3, prefix="lstm0_").collect_params()) == [
        "lstm0_l0_i2h_weight", "lstm0_l0_h2h_weight", "lstm0_l0_i2h_bias", "lstm0_l0_h2h_bias"]
    empty = nn.Dense(2, prefix="")
    assert empty.prefix == "" and list(empty.collect_params()) == ["weight", "bias"]
    assert nn.Dense(2).prefix == "dense0_"      # prefix='' counted nothing
    with NameCounter():
        assert nn.Dense(2).prefix == "dense0_"
    assert nn.Dense(2).prefix == "dense1_"


def test_2x_blocks_keep_structural_names():
    d = nn.Dense(3)
    assert d.prefix == "dense0_"                 # counted as MXNet 1.x does, but not used
    assert list(d.collect_params()) == ["weight", "bias"]
    seq = nn.HybridSequential()
    seq.add(nn.Dense(3))
    assert list(seq.collect_params()) == ["0.weight", "0.bias"]
    assert list(MLP2().collect_params()) == ["out_weight", "out_bias", "hidden.weight",
                                             "hidden.bias"]


class Blk(gluon.Block):
    def __init__(self, **kwargs):
        super().__init__(**kwargs)
        with self.name_scope():
            self.d = nn.Dense(2, in_units=3)

    def forward(self, x):
        return self.d(x) * 2


def test_non_hybrid_1x_block_runs_forward():
    assert list(Blk().collect_params()) == ["blk0_dense0_weight", "blk0_dense0_bias"]
    b = Blk()
    assert list(b.collect_params()) == ["blk1_dense0_weight", "blk1_dense0_bias"]
    b.initialize()
    x = np.ones((1, 3), np.float32)
    w, bias = b.d.weight.data().asnumpy(), b.d.bias.data().asnumpy()
    assert_almost_equal(b(nbdl.nd.array(x)).asnumpy(), 2 * (x @ w.T + bias), rtol=1e-5)


class Deferred(gluon.HybridBlock):
    def __init__(self, **kwargs):
        super().__init__(**kwargs)
        with self.name_scope():
            self.weight = self.params.get("weight", shape=(2, 0), allow_deferred_init=True)

    def hybrid_forward(self, F, x, weight):
        return F.FullyConnected(x, weight, no_bias=True, num_hidden=2)


@pytest.mark.parametrize("hybridize", [False, True])
def test_1x_deferred_initialization(hybridize):
    net = Deferred()
    net.initialize(nbdl.init.One())
    if hybridize:
        net.hybridize()
    out = net(nbdl.nd.ones((3, 5)))
    assert net.weight.shape == (2, 5)
    assert_almost_equal(out.asnumpy(), np.full((3, 2), 5.0, np.float32))


def test_1x_block_called_on_symbols():
    net = MLP1x()
    out = net(nbdl.sym.var("data"))
    assert isinstance(out, nbdl.sym.Symbol)
    assert set(out.list_arguments()) == {"data", "mlp1x0_dense0_weight", "mlp1x0_dense0_bias",
                                         "mlp1x0_out_weight", "mlp1x0_out_bias"}


# -- ParameterDict -----------------------------------------------------------
def test_parameter_dict_get_and_constants():
    pd = gluon.ParameterDict("pre_")
    p = pd.get("w", shape=(2, 3), lr_mult=2.0)
    assert p.name == "pre_w" and pd.prefix == "pre_" and pd["pre_w"] is p
    assert pd.get("w", shape=(2, 0)) is p and p.shape == (2, 3)
    q = gluon.ParameterDict("pre_").get("v", shape=(2, 0), allow_deferred_init=True)
    assert q._allow_deferred_init
    with pytest.raises(gluon.ParameterError, match="attribute 'shape'.*desired.*3, 3"):
        pd.get("w", shape=(3, 3))
    with pytest.raises(gluon.ParameterError, match="lr_mult"):
        pd.get("w", lr_mult=1.0)
    with pytest.raises(gluon.ParameterError, match="unknown Parameter attributes"):
        pd.get("w", colour="red")
    c = pd.get_constant("c", [1.0, 2.0])
    assert isinstance(c, gluon.Constant) and c.name == "pre_c" and c.grad_req == "null"
    assert pd.get_constant("c") is c
    assert pd.get_constant("c", np.array([1.0, 2.0])) is c
    with pytest.raises(gluon.ParameterError, match="another value"):
        pd.get_constant("c", [1.0, 3.0])
    with pytest.raises(KeyError, match="No constant named 'pre_nope'"):
        pd.get_constant("nope")
    assert pd.get("missing", None) is None          # dict.get, as Gluon 2.0 code uses it
    assert repr(pd).splitlines()[0] == "pre_ ("
    assert "Parameter pre_w (shape=(2, 3), dtype=float32)" in repr(pd)


def test_parameter_dict_update_and_bulk_methods():
    a, b = gluon.ParameterDict("a_"), gluon.ParameterDict("b_")
    a.get("w", shape=(2,))
    b.get("w", shape=(3,))
    a.update(b)
    assert list(a) == ["a_w", "b_w"]
    a.update(b)                                     # the same Parameters again: fine
    clash = gluon.ParameterDict("b_")
    clash.get("w", shape=(3,))
    with pytest.raises(gluon.ParameterError, match="same name 'b_w'"):
        a.update(clash)
    a.initialize(nbdl.init.One(), ctx=nbdl.cpu(0))
    assert a.list_ctx() == [nbdl.cpu(0)]
    a.setattr("lr_mult", 0.5)
    assert all(p.lr_mult == 0.5 for p in a.values())
    for p in a.values():
        p.grad()[...] = 3
    a.zero_grad()
    assert all((p.grad().asnumpy() == 0).all() for p in a.values())
    a.reset_ctx([nbdl.cpu(0), nbdl.cpu(1)])
    assert a.list_ctx() == [nbdl.cpu(0), nbdl.cpu(1)]
    assert_almost_equal(a["a_w"].data(ctx=nbdl.cpu(1)).asnumpy(), np.ones(2, np.float32))
    a.setattr("grad_req", "null")
    assert all(p.grad_req == "null" for p in a.values())
    with pytest.raises(gluon.ParameterError, match="no attribute 'colour'"):
        a.setattr("colour", 1)


def test_parameter_dict_save_load(tmp_path):
    net = MLP1x()
    net.initialize()
    params = net.collect_params()
    f = str(tmp_path / "p.params")
    params.save(f, strip_prefix="mlp1x0_")
    assert sorted(nbdl.nd.load(f)) == ["dense0_bias", "dense0_weight", "out_bias", "out_weight"]
    with pytest.raises(gluon.ParameterError, match="does not start with 'zz_'"):
        params.save(f + "x", strip_prefix="zz_")
    other = MLP1x()
    other.collect_params().load(f, ctx=nbdl.cpu(0), restore_prefix="mlp1x1_")
    assert_almost_equal(other.out_weight.data().asnumpy(), net.out_weight.data().asnumpy())
    with pytest.raises(gluon.ParameterError, match="is missing in file"):
        other.collect_params().load(f)              # names without the prefix
    part = gluon.ParameterDict("mlp1x1_")
    part.update({"mlp1x1_out_bias": other.out_bias})
    with pytest.raises(gluon.ParameterError, match="not present in ParameterDict"):
        part.load(f, restore_prefix="mlp1x1_")
    part.load(f, restore_prefix="mlp1x1_", ignore_extra=True)
    with pytest.raises(gluon.ParameterError, match="restore_prefix"):
        part.load(f, restore_prefix="other_")


def test_collect_params_select_and_dict_use():
    net = MLP1x()
    sel = net.collect_params(".*weight|.*bias")
    assert isinstance(sel, gluon.ParameterDict) and isinstance(sel, dict)
    assert list(net.collect_params("mlp1x0_dense0_.*")) == ["mlp1x0_dense0_weight",
                                                            "mlp1x0_dense0_bias"]
    assert list(net.collect_params(".*out_weight")) == ["mlp1x0_out_weight"]
    with pytest.raises(nbdl.NbdlError, match="not a regular expression"):
        net.collect_params("(")
    two = MLP2().collect_params(".*weight")
    assert isinstance(two, gluon.ParameterDict) and list(two) == ["out_weight", "hidden.weight"]


# -- files across dialects ------------------------------------------------------
def test_save_params_load_params_warn_and_cross_load(tmp_path):
    net = MLP1x()
    net.initialize()
    f = str(tmp_path / "old.params")
    with pytest.warns(UserWarning, match="save_params is deprecated"):
        net.save_params(f)
    assert sorted(nbdl.nd.load(f)) == ["dense0_bias", "dense0_weight", "out_bias", "out_weight"]
    again = MLP1x()                                 # another prefix: loaded behind it
    with pytest.warns(UserWarning, match="load_params is deprecated"):
        again.load_params(f, ctx=nbdl.cpu(0))
    assert_almost_equal(again.hidden.weight.data().asnumpy(), net.hidden.weight.data().asnumpy())
    # the 1.x file into the equivalent 2.0 block (matched by order and shape)
    two = MLP2()
    two.load_parameters(f)
    x, _ = _data()
    assert_almost_equal(two(nbdl.nd.array(x)).asnumpy(), net(nbdl.nd.array(x)).asnumpy(),
                        rtol=1e-5, atol=1e-6)
    # and the 2.0 block's file back into a 1.x block (structural names)
    g = str(tmp_path / "new.params")
    two.save_parameters(g)
    back = MLP1x()
    back.load_parameters(g, ctx=nbdl.cpu(0))
    assert_almost_equal(back.out_weight.data().asnumpy(), net.out_weight.data().asnumpy())
    # collect_params().save of the full names loads by name too
    h = str(tmp_path / "full.params")
    net.collect_params().save(h)
    third = MLP1x(prefix="mlp1x0_")
    third.load_parameters(h)
    assert_almost_equal(third.out_bias.data().asnumpy(), net.out_bias.data().asnumpy())


def test_save_params_of_unscoped_children_fails_as_in_mxnet(tmp_path):
    seq = nn.HybridSequential(prefix="net_")
    seq.add(nn.Dense(2, in_units=2))            # made outside net_'s name scope
    seq.initialize()
    with pytest.raises(gluon.ParameterError, match="save_parameters may resolve"):
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            seq.save_params(str(tmp_path / "x.params"))


def test_export_and_imports_of_1x_block(tmp_path):
    net = MLP1x()
    net.initialize()
    net.hybridize(static_alloc=True)
    x, _ = _data()
    out = net(nbdl.nd.array(x)).asnumpy()
    sym_file, params_file = net.export(str(tmp_path / "mlp"))
    assert sorted(nbdl.nd.load(params_file)) == [
        "arg:mlp1x0_dense0_bias", "arg:mlp1x0_dense0_weight", "arg:mlp1x0_out_bias",
        "arg:mlp1x0_out_weight"]
    block = gluon.SymbolBlock.imports(sym_file, ["data"], params_file, ctx=nbdl.cpu(0))
    assert_almost_equal(block(nbdl.nd.array(x)).asnumpy(), out, rtol=1e-5, atol=1e-6)
    assert os.path.exists(sym_file)


# -- sharing ---------------------------------------------------------------------
def test_params_sharing():
    net = MLP1x()
    twin = MLP1x(params=net.collect_params())
    assert twin.prefix == "mlp1x1_"
    assert twin.hidden.weight is net.hidden.weight and twin.out_weight is net.out_weight
    assert list(twin.collect_params()) == list(net.collect_params())
    net.initialize()
    x = nbdl.nd.array(_data()[0])
    assert_almost_equal(twin(x).asnumpy(), net(x).asnumpy())
    d = nn.Dense(8, in_units=4, params=net.hidden.collect_params())
    assert d.weight is net.hidden.weight and d.bias is net.hidden.bias
    plain = nn.Dense(3, in_units=2)
    shared = nn.Dense(3, in_units=2, params=plain.collect_params())   # a 2.0 block's dict
    assert shared.weight is plain.weight
    with pytest.raises(gluon.ParameterError, match="shape"):
        nn.Dense(5, in_units=2, params=plain.collect_params())
    with pytest.raises(gluon.ParameterError, match="ParameterDict"):
        nn.Dense(3, params=[plain.weight])


# -- ctx= synonyms ---------------------------------------------------------------
def test_ctx_synonyms(tmp_path):
    cpus = [nbdl.cpu(0), nbdl.cpu(1)]
    net = MLP1x()
    net.initialize(ctx=cpus)
    assert net.collect_params().list_ctx() == cpus
    assert net.out_weight.list_ctx() == cpus
    assert net.out_weight.data(ctx=nbdl.cpu(1)).context == nbdl.cpu(1)
    assert net.out_weight.grad(ctx=nbdl.cpu(1)).context == nbdl.cpu(1)
    assert len(net.out_weight.list_data()) == 2
    parts = gluon.utils.split_and_load(nbdl.nd.array(_data()[0]), ctx_list=cpus)
    assert [p.context for p in parts] == cpus and parts[0].shape == (3, 4)
    outs = [net(p) for p in parts]
    assert outs[1].context == nbdl.cpu(1)
    net.reset_ctx(nbdl.cpu(0))
    assert net.collect_params().list_ctx() == [nbdl.cpu(0)]
    f = str(tmp_path / "p.params")
    net.save_parameters(f)
    other = MLP1x()
    other.load_parameters(f, ctx=nbdl.cpu(0))
    assert other.out_weight.list_ctx() == [nbdl.cpu(0)]
    with pytest.raises(nbdl.NbdlError, match="disagree"):
        MLP1x().initialize(ctx=nbdl.cpu(0), device=nbdl.cpu(1))
    with pytest.raises(nbdl.NbdlError, match="disagree"):
        net.out_weight.data(device=nbdl.cpu(0), ctx=nbdl.cpu(1))


# -- errors ----------------------------------------------------------------------
class Misnamed(gluon.HybridBlock):
    def __init__(self, **kwargs):
        super().__init__(**kwargs)
        with self.name_scope():
            self.weight = self.params.get("weight", shape=(2,))

    def hybrid_forward(self, F, x, weigth):
        return x


def test_errors():
    net = Misnamed()
    net.initialize()
    with pytest.raises(nbdl.NbdlError, match=r"hybrid_forward\(F, x, weigth\).*\['weight'\]"):
        net(nbdl.nd.ones((2,)))
    with pytest.raises(nbdl.NbdlError, match="all NDArrays or all Symbols"):
        MLP1x().forward(nbdl.nd.ones((1, 4)), nbdl.sym.var("y"))
    with pytest.raises(nbdl.NbdlError, match="prefix must be a str"):
        nn.Dense(2, prefix=3)
    with pytest.raises(TypeError):
        nn.Dense(2, colour="red")
    with pytest.raises(gluon.ParameterError, match="name must be a str"):
        gluon.Constant(3, [1.0])


def test_sequential_of_2x_layers_called_on_a_symbol():
    model = nn.Sequential()
    model.add(nn.Dense(16, activation="tanh", in_units=10, flatten=False), nn.Dropout(0.5),
              nn.Dense(8, activation="tanh", in_units=32), nn.Dense(4, in_units=8),
              nn.Activation("relu"))
    y = model(nbdl.sym.var("data"))
    assert y.list_arguments() == ["data", "0.weight", "0.bias", "2.weight", "2.bias",
                                  "3.weight", "3.bias"]
    model.collect_params().initialize(nbdl.init.Xavier(magnitude=2.24))
    assert model(nbdl.nd.zeros((5, 2, 10))).shape == (5, 4)
    model.collect_params().setattr("grad_req", "null")
    assert list(model.collect_params().values())[0]._grad is None
    model.collect_params().setattr("grad_req", "write")
    assert list(model.collect_params().values())[0]._grad is not None


class WithConstant(gluon.HybridBlock):
    def __init__(self, **kwargs):
        super().__init__(**kwargs)
        self.value = np.asarray([[1, 2], [3, 4]])
        self.const = self.params.get_constant("const", self.value)

    def hybrid_forward(self, F, x, const):
        return x + const


@pytest.mark.parametrize("hybridize", [False, True])
def test_constant_in_hybrid_forward_is_not_trained(hybridize):
    net = WithConstant()
    assert list(net.collect_params()) == ["withconstant0_const"]
    net.initialize()
    if hybridize:
        net.hybridize()
    trainer = gluon.Trainer(net.collect_params(), "sgd", {"learning_rate": 1.0, "momentum": 0.5})
    x = nbdl.nd.ones((2, 2))
    x.attach_grad()
    with autograd.record():
        y = net(x)
    y.backward()
    trainer.step(1)
    assert_almost_equal(y.asnumpy(), np.array([[2, 3], [4, 5]], np.float32))
    assert (net.const.data().asnumpy() == net.value).all()
    assert (x.grad.asnumpy() == 1).all()


def test_reading_params_makes_a_block_1x():
    d = nn.Dense(3, in_units=2)
    assert list(d.collect_params()) == ["weight", "bias"]
    assert list(d.params) == ["dense0_weight", "dense0_bias"]
    assert list(d.collect_params()) == ["dense0_weight", "dense0_bias"]
    assert d.weight.name == "dense0_weight"


def test_parameter_sharing_as_mxnet_tests_it(tmp_path):
    net1 = Blk(prefix="net1_")
    net2 = Blk(prefix="net2_", params=net1.collect_params())
    assert net2.d.weight is net1.d.weight
    net1.collect_params().initialize()
    x = nbdl.nd.ones((3, 3))
    assert_almost_equal(net2(x).asnumpy(), net1(x).asnumpy())
    f = str(tmp_path / "net1.params")
    net1.save_parameters(f)
    net3 = Blk(prefix="net3_")
    net3.load_parameters(f, nbdl.cpu())
    assert_almost_equal(net3(x).asnumpy(), net1(x).asnumpy())
    assert str(net1.collect_params()).splitlines()[0] == "net1_ ("


def test_parameter_dict_load_casts_dtypes(tmp_path):
    f = str(tmp_path / "d.params")
    p0 = gluon.ParameterDict("")
    p0.get("w0", shape=(2, 2), dtype="float32")
    p0.get("w1", shape=(2, 2), dtype="int32")
    p0.initialize(nbdl.init.One())
    p0.save(f)
    p1 = gluon.ParameterDict("")
    p1.get("w0", shape=(2, 2), dtype="float16")
    p1.get("w1", shape=(2, 2), dtype="float64")
    with pytest.raises(gluon.ParameterError, match="cast_dtype=True"):
        p1.load(f)
    p1.load(f, cast_dtype=True, dtype_source="current")
    assert p1["w0"].data().dtype == np.float16 and p1["w1"].data().dtype == np.float64
    p1.load(f, cast_dtype=True, dtype_source="saved")
    assert p1["w0"].data().dtype == np.float32 and p1["w1"].data().dtype == np.int32
    with pytest.raises(gluon.ParameterError, match="dtype_source"):
        p1.load(f, cast_dtype=True, dtype_source="newest")


class Shared(gluon.Block):
    def __init__(self, params=None):
        super().__init__(params=params)
        with self.name_scope():
            self.weight = self.params.get("weight", shape=(3, 3))


class Pair(gluon.Block):
    def __init__(self, b1, b2):
        super().__init__()
        self.b1, self.b2 = b1, b2


@pytest.mark.parametrize("deduplicate,count", [(True, 1), (False, 2)])
def test_save_load_deduplicate_with_shared_params(tmp_path, deduplicate, count):
    b1 = Shared()
    c = Pair(b1, Shared(b1.collect_params()))
    assert c.b2.weight is b1.weight
    c.initialize()
    f = str(tmp_path / "c.params")
    c.save_parameters(f, deduplicate=deduplicate)
    assert len(nbdl.nd.load(f)) == count
    b1 = Shared()
    d = Pair(b1, Shared(b1.collect_params()))
    d.load_parameters(f)
    assert_almost_equal(d.b2.weight.data().asnumpy(), c.b1.weight.data().asnumpy())


def test_legacy_save_params_into_a_symbol_block(tmp_path):
    net = nn.HybridSequential(prefix="")
    with net.name_scope():
        net.add(nn.Dense(5, in_units=4))
        net.add(nn.Dense(3))
    net.initialize()
    x = nbdl.nd.ones((2, 4))
    out = net(x).asnumpy()
    sym = net(nbdl.sym.var("data"))
    assert set(sym.list_arguments()) == {"data", "dense0_weight", "dense0_bias",
                                         "dense1_weight", "dense1_bias"}
    f = str(tmp_path / "legacy.params")
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        net.save_params(f)
        model = gluon.SymbolBlock(outputs=sym, inputs=nbdl.sym.var("data"))
        model.load_params(f, ctx=nbdl.cpu())
    assert_almost_equal(model(x).asnumpy(), out, rtol=1e-5, atol=1e-6)


class ReshapeSlice(gluon.HybridBlock):
    def __init__(self, **kwargs):
        super().__init__(**kwargs)
        with self.name_scope():
            self.dense0 = nn.Dense(3)

    def hybrid_forward(self, F, x):
        y = self.dense0(x.reshape((0, -1)))
        return F.slice_axis(y, axis=1, begin=1, end=3) * 2 + F.slice_axis(y, axis=1, begin=0, end=2)


def test_1x_reshape_and_slicing_eager_equals_hybridized_with_gradients():
    x_np = np.random.RandomState(0).rand(4, 2, 5).astype(np.float32)
    net = ReshapeSlice()
    net.initialize()
    results = []
    for hyb in (False, True):
        net.hybridize(hyb)
        x = nbdl.nd.array(x_np)
        x.attach_grad()
        with autograd.record():
            out = net(x)
        out.backward()
        results.append((out.asnumpy(), x.grad.asnumpy()))
    w, b = net.dense0.weight.data().asnumpy(), net.dense0.bias.data().asnumpy()
    y = x_np.reshape(4, -1) @ w.T + b
    assert_almost_equal(results[0][0], 2 * y[:, 1:3] + y[:, 0:2], rtol=1e-5, atol=1e-6)
    grad_y = np.zeros((4, 3), np.float32)
    grad_y[:, 1:3] += 2
    grad_y[:, 0:2] += 1
    assert_almost_equal(results[0][1], (grad_y @ w).reshape(4, 2, 5), rtol=1e-5, atol=1e-6)
    for a, b_ in zip(results[0], results[1]):
        assert_almost_equal(a, b_, rtol=1e-5, atol=1e-6)


def test_hybrid_lambda_with_F_and_without():
    x = nbdl.nd.array(np.linspace(-2, 2, 12, dtype=np.float32).reshape(3, 4))
    ref = np.where(x.asnumpy() > 0, x.asnumpy(), 0.1 * x.asnumpy())
    old = nn.HybridLambda(lambda F, x, *args: F.LeakyReLU(x, *args, slope=0.1))
    new = nn.HybridLambda(lambda x: nbdl.nd.LeakyReLU(x, slope=0.1)
                          if isinstance(x, nbdl.nd.NDArray) else nbdl.sym.LeakyReLU(x, slope=0.1))
    for block in (old, new):
        assert_almost_equal(block(x).asnumpy(), ref, rtol=1e-6)
        block.hybridize()
        assert_almost_equal(block(x).asnumpy(), ref, rtol=1e-6)


def test_warnings_for_sequential_and_unregistered_containers():
    seq = nn.Sequential()
    seq.add(nn.Dense(2))
    with pytest.warns(UserWarning, match="Consider using HybridSequential"):
        seq.hybridize()

    class Listed(gluon.Block):
        def __init__(self, **kwargs):
            super().__init__(**kwargs)
            with self.name_scope():
                self.layers = [nn.Dense(3), nn.Dense(4)]
                self.data = {"a": "4", "b": 123}
    with pytest.warns(UserWarning, match="Listed.layers.*unregistered container"):
        assert len(Listed().collect_params()) == 0
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        Blk().collect_params()


def test_attribute_type_changes_and_mixed_devices_are_type_and_value_errors():
    b = gluon.Block()
    b.a = None
    b.a = 1                                  # plain attributes may change type
    b.c = gluon.Block()
    with pytest.raises(TypeError, match="cannot replace a Block"):
        b.c = (2,)
    b.p = gluon.Parameter("p", shape=(1,))
    with pytest.raises(TypeError, match="cannot replace a Parameter"):
        b.p = 3
    net = MLP1x()
    net.initialize()
    net.hybridize()
    with pytest.raises(ValueError, match="got Symbol"):
        net(nbdl.nd.ones((2, 4)), nbdl.sym.var("a"))

    class Add(gluon.HybridBlock):
        def hybrid_forward(self, F, a, b):
            return a + b
    add = Add()
    add.hybridize()
    with pytest.raises(ValueError, match="one device"):
        add(nbdl.nd.ones((2,), ctx=nbdl.cpu(1)), nbdl.nd.ones((2,), ctx=nbdl.cpu(2)))
    with pytest.raises(ValueError, match="got neither"):
        Add()(None, None)
    assert_almost_equal(Add()(nbdl.nd.ones((2,)), 1).asnumpy(), np.full(2, 2, np.float32))
    add.hybridize(clear=True, backend=None)
    with pytest.raises(nbdl.NbdlError, match="backend is not supported"):
        add.hybridize(backend="MKLDNN")


def test_exported_params_load_back_into_a_1x_block_by_full_name(tmp_path):
    net = MLP1x()
    net.initialize()
    net.hybridize()
    net(nbdl.nd.ones((1, 4)))
    _, params_file = net.export(str(tmp_path / "m"))
    same = MLP1x(prefix="mlp1x0_")              # the names of the file, with arg: keys
    same.load_parameters(params_file)
    assert_almost_equal(same.hidden.weight.data().asnumpy(), net.hidden.weight.data().asnumpy())
    other = MLP1x()                            # another prefix: matched by order and shape
    other.load_parameters(params_file)
    assert_almost_equal(other.out_weight.data().asnumpy(), net.out_weight.data().asnumpy())


class DroppedMLP1x(gluon.HybridBlock):
    def __init__(self, **kwargs):
        super().__init__(**kwargs)
        with self.name_scope():
            self.hidden = nn.Dense(8, in_units=4, activation="relu")
            self.drop = nn.Dropout(0.5)
            self.out_weight = self.params.get("out_weight", shape=(3, 8))
            self.out_bias = self.params.get("out_bias", shape=(3,), init="zeros")

    def hybrid_forward(self, F, x, out_weight, out_bias):
        h = F.relu(self.drop(self.hidden(x)))
        return F.FullyConnected(h, out_weight, out_bias, num_hidden=3)


def _op_outputs(sym):
    return [n for n in sym.get_internals().list_outputs() if n != "data"
            and not n.endswith(("weight", "bias", "gamma", "beta", "mean", "var"))]


def test_1x_blocks_name_their_graph_nodes_as_mxnet():
    """A 1.x-style block traces under its prefix (MXNet's name_scope around
    hybrid_forward) and the built-in layers name their node ``fwd``; the
    names below are MXNet 1.9.1's for the same code."""
    net = DroppedMLP1x()
    net.initialize()
    net.hybridize()
    net(nbdl.nd.ones((2, 4)))
    want = ["mlp1x0_dense0_fwd_output", "mlp1x0_dense0_relu_fwd_output",
            "mlp1x0_dropout0_fwd_output", "mlp1x0_relu0_output", "mlp1x0_fullyconnected0_output"]
    want = [n.replace("mlp1x0", "droppedmlp1x0") for n in want]
    assert _op_outputs(net._cached[0]) == want
    assert _op_outputs(net(nbdl.sym.var("data"))) == want
    seq = nn.HybridSequential("pool_")          # prefix by position, as 1.x
    with seq.name_scope():
        seq.add(nn.Conv2D(2, 3), nn.BatchNorm(), nn.MaxPool2D(), nn.Activation("relu"),
                nn.LeakyReLU(0.1), nn.Flatten(), nn.Dense(3))
    assert _op_outputs(seq(nbdl.sym.var("data"))) == [
        "pool_conv0_fwd_output", "pool_batchnorm0_fwd_output", "pool_pool0_fwd_output",
        "pool_relu0_fwd_output", "pool_leakyrelu0_fwd_output", "pool_flatten0_flatten0_output",
        "pool_dense0_fwd_output"]
    dense = nn.Dense(128, activation="tanh", in_units=10, flatten=False, prefix="test_")
    assert dense(nbdl.sym.var("data")).list_outputs() == ["test_tanh_fwd_output"]
    # a Gluon 2.0 block keeps automatic names
    assert nn.Dense(4)(nbdl.sym.var("data")).list_outputs()[0].startswith("fullyconnected")
