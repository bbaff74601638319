"""The Symbol API (MXNet 1.x): variables, composition, naming, queries,
inference, attributes, copies."""
import copy
import json
import pickle
import re

import numpy as np
import pytest

import nbdl
from nbdl.ops.ir import make_node
from symbol_graphs import MLP_ARGS, mlp

sym = nbdl.sym


# -- variables ------------------------------------------------------------------

def test_var_attributes_are_mxnet_strings():
    v = sym.var("x", shape=(2, 3), lr_mult=2, wd_mult=0.5, dtype="float64",
                init="[\"one\", {}]", __foo__="bar")
    assert v.name == "x"
    assert v.list_outputs() == ["x"] and v.list_arguments() == ["x"]
    assert v.attr("__shape__") == "(2, 3)"
    assert v.attr("__lr_mult__") == "2"
    assert v.attr("lr_mult") == "2"          # hidden keys are found by their plain name too
    assert v.attr("__wd_mult__") == "0.5"
    assert v.attr("__dtype__") == "1"        # MXNet's type flag of float64
    assert v.attr("__init__") == "[\"one\", {}]"
    assert v.attr("__foo__") == "bar"
    assert v.attr("missing") is None
    assert sym.var("y", dtype=np.float32).attr("__dtype__") == "0"
    assert sym.Variable("z", attr={"mood": "angry", "lr_mult": 3}).list_attr() == {
        "mood": "angry", "__lr_mult__": "3", "lr_mult": "3"}
    assert sym.var("s", stype="default").attr("__storage_type__") == "0"


def test_var_errors():
    with pytest.raises(nbdl.GraphError):
        sym.var(3)
    with pytest.raises(nbdl.AttrError, match="foo"):
        sym.var("x", foo=1)
    with pytest.raises(nbdl.GraphError, match="csr"):
        sym.var("x", stype="csr")
    with pytest.raises(nbdl.DTypeError):
        sym.var("x", dtype="complex128")


# -- the MLP -------------------------------------------------------------------

def test_mlp_lists_in_mxnet_order():
    net = mlp()
    assert net.list_arguments() == MLP_ARGS
    assert net.list_outputs() == ["softmax_output"]
    assert net.list_auxiliary_states() == []
    assert net.list_inputs() == MLP_ARGS
    assert net.name == "softmax"
    assert repr(net) == "<Symbol softmax>"
    assert len(net) == 1


def test_mlp_infer_shape_from_data_only():
    arg, out, aux = mlp().infer_shape(data=(32, 100))
    assert arg == [(32, 100), (128, 100), (128,), (64, 128), (64,), (10, 64), (10,), (32,)]
    assert out == [(32, 10)] and aux == []
    # positionally, in list_arguments order
    assert mlp().infer_shape((32, 100))[0] == arg


def test_infer_shape_incomplete_returns_none_with_warning():
    net = mlp()
    with pytest.warns(UserWarning, match="data"):
        assert net.infer_shape() == (None, None, None)


def test_infer_shape_partial():
    net = mlp()
    arg, out, aux = net.infer_shape_partial(fc1_weight=(128, 100))
    shapes = dict(zip(MLP_ARGS, arg))
    assert shapes["fc1_weight"] == (128, 100)
    assert shapes["fc1_bias"] == (128,)
    assert shapes["fc2_bias"] == (64,)
    assert shapes["data"] == ()          # unknown stays (), as MXNet
    assert out == [()] and aux == []
    # a full answer when enough is given
    arg, out, _ = net.infer_shape_partial(data=(4, 7))
    assert out == [(4, 10)] and all(arg)


def test_infer_shape_partial_reads_zero_dims_as_unknown():
    # MXNet 1.x (legacy shapes): a 0 dim is unknown; what depends on it stays 0
    data = nbdl.sym.var("data", shape=(1, 0, 0, 0))
    conv = nbdl.sym.Convolution(nbdl.sym.Cast(data, dtype="float16"), kernel=(7, 7),
                                stride=(2, 2), pad=(3, 3), num_filter=64, no_bias=True,
                                name="convolution0")   # the name the test reads, in any run
    arg, out, _ = conv.infer_shape_partial()
    assert dict(zip(conv.list_arguments(), arg)) == {"data": (1, 0, 0, 0),
                                                     "convolution0_weight": (64, 0, 7, 7)}
    assert out == [(1, 64, 0, 0)]
    fc = nbdl.sym.FullyConnected(nbdl.sym.var("x"), num_hidden=5)
    arg, out, _ = fc.infer_shape_partial(x=(0, 3))
    assert arg == [(0, 3), (5, 3), (5,)] and out == [(0, 5)]
    # two partial shapes of one entry complete each other, dim by dim
    add = nbdl.sym.var("a") + nbdl.sym.var("b")
    arg, out, _ = add.infer_shape_partial(a=(0, 3), b=(2, 0))
    assert arg == [(2, 3), (2, 3)] and out == [(2, 3)]
    assert add.infer_shape(a=(0, 3), b=(2, 0))[1] == [(2, 3)]
    # infer_shape reads a 0 as unknown too: not enough, None with a warning
    with pytest.warns(UserWarning, match="x"):
        assert fc.infer_shape(x=(0, 3)) == (None, None, None)
    # NumPy-shape mode: a 0 is a size, -1 unknown (reported as -1, None when
    # nothing is known)
    with nbdl.util.np_shape(True):
        assert fc.infer_shape_partial(x=(4, 0))[0] == [(4, 0), (5, 0), (5,)]
        assert add.infer_shape_partial(a=(0, 3))[1] == [(0, 3)]
        arg, out, _ = fc.infer_shape_partial(x=(-1, 3))
        assert arg == [(-1, 3), (5, 3), (5,)] and out == [(-1, 5)]
        assert add.infer_shape_partial() == ([None, None], [None], [])


def test_infer_shape_errors_name_the_argument():
    net = mlp()
    with pytest.raises(nbdl.ShapeError, match="bogus"):
        net.infer_shape(bogus=(1, 2))
    with pytest.raises(nbdl.ShapeError, match="data"):
        net.infer_shape(data="(1, 2)")
    with pytest.raises(nbdl.ShapeError):
        net.infer_shape(*[(1, 2)] * 9)  # more positional shapes than arguments
    with pytest.raises(nbdl.ShapeError, match="fc1"):
        net.infer_shape(data=(8, 5), fc1_weight=(3, 5))  # disagrees with num_hidden


def test_infer_shape_uses_declared_variable_shapes():
    x = sym.var("x", shape=(5, 20))
    net = sym.FullyConnected(x, num_hidden=3, name="fc")
    arg, out, _ = net.infer_shape()
    assert arg == [(5, 20), (3, 20), (3,)] and out == [(5, 3)]


def test_infer_type():
    net = mlp()
    arg, out, aux = net.infer_type(data=np.float32)
    assert arg == [np.float32] * len(MLP_ARGS) and out == [np.float32] and aux == []
    arg, out, _ = net.infer_type(data="float64")
    assert out == [np.float64]
    with pytest.raises(nbdl.DTypeError, match="nope"):
        net.infer_type(nope=np.float32)
    arg, out, _ = net.infer_type_partial()
    assert arg == [None] * len(MLP_ARGS) and out == [None]


# -- internals, children, indexing -------------------------------------------------

def test_get_internals_names():
    net = mlp(num_hidden=(8,), num_classes=3)
    internals = net.get_internals()
    assert internals.list_outputs() == [
        "data", "fc1_weight", "fc1_bias", "fc1_output", "relu1_output",
        "fc2_weight", "fc2_bias", "fc2_output", "softmax_label", "softmax_output"]
    fc1 = internals["fc1_output"]
    assert fc1.name == "fc1" and fc1.list_arguments() == ["data", "fc1_weight", "fc1_bias"]
    assert fc1.infer_shape(data=(2, 5))[1] == [(2, 8)]
    assert internals["data"].list_arguments() == ["data"]


def test_get_children():
    net = mlp(num_hidden=(8,), num_classes=3)
    fc1 = net.get_internals()["fc1_output"]
    assert fc1.get_children().list_outputs() == ["data", "fc1_weight", "fc1_bias"]
    assert net.get_children().list_outputs() == ["fc2_output", "softmax_label"]
    assert sym.var("x").get_children() is None


def test_indexing_and_iteration_of_multi_output_ops():
    x = sym.var("x")
    parts = sym.SliceChannel(x, num_outputs=3, axis=1, name="split")
    assert len(parts) == 3
    assert parts.list_outputs() == ["split_output0", "split_output1", "split_output2"]
    assert parts.name == "split"                         # one node, several outputs
    assert parts[1].list_outputs() == ["split_output1"]
    assert parts[-1].list_outputs() == ["split_output2"]
    assert parts["split_output2"].list_outputs() == ["split_output2"]
    assert parts[0:2].list_outputs() == ["split_output0", "split_output1"]
    assert [s.list_outputs()[0] for s in parts] == parts.list_outputs()
    with pytest.raises(IndexError):
        parts[3]
    with pytest.raises(nbdl.GraphError):
        parts[3:]
    with pytest.raises(nbdl.GraphError, match="nope"):
        parts["nope"]
    with pytest.raises(nbdl.GraphError):
        parts[1.5]
    arg, out, _ = parts.infer_shape(x=(2, 6))
    assert out == [(2, 2)] * 3


def test_group():
    a, b = sym.var("a"), sym.var("b")
    fa = sym.FullyConnected(a, num_hidden=2, name="fa")
    fb = sym.FullyConnected(b, num_hidden=3, name="fb")
    g = sym.Group([fa, fb])
    assert g.list_outputs() == ["fa_output", "fb_output"]
    assert g.list_arguments() == ["a", "fa_weight", "fa_bias", "b", "fb_weight", "fb_bias"]
    assert g.name is None and repr(g) == "<Symbol group [fa, fb]>"
    assert g.attr("num_hidden") is None          # not one node
    _, out, _ = g.infer_shape(a=(4, 5), b=(4, 6))
    assert out == [(4, 2), (4, 3)]
    with pytest.raises(nbdl.GraphError):
        sym.Group([])
    with pytest.raises(nbdl.GraphError):
        sym.Group([fa, "fb"])


# -- op creation, naming, operators -------------------------------------------------

def _counter(name, hint):
    m = re.fullmatch(re.escape(hint) + r"(\d+)", name)
    assert m, f"{name!r} is not an automatic {hint!r} name"
    return int(m.group(1))


def test_automatic_names_follow_mxnet():
    x = sym.var("x")
    f1 = sym.FullyConnected(x, num_hidden=4)
    f2 = sym.FullyConnected(x, num_hidden=4)
    n1 = _counter(f1.name, "fullyconnected")
    assert _counter(f2.name, "fullyconnected") == n1 + 1
    assert f1.list_arguments() == ["x", f"{f1.name}_weight", f"{f1.name}_bias"]
    # Symbol operators name their nodes as MXNet's _Plus / _PlusScalar do
    s = x + x
    assert s.attr("op_name") == "elemwise_add"
    _counter(s.name, "_plus")
    t = x + 1
    assert t.attr("op_name") == "_plus_scalar" and t.attr("scalar") == "1"
    _counter(t.name, "_plusscalar")
    u = 2.5 + x
    assert u.attr("op_name") == "_plus_scalar" and u.attr("scalar") == "2.5"


def test_op_inputs_by_keyword_and_missing_inputs_become_variables():
    x, w = sym.var("x"), sym.var("w")
    fc = sym.FullyConnected(data=x, weight=w, num_hidden=3, name="fc")
    assert fc.list_arguments() == ["x", "w", "fc_bias"]
    nb = sym.FullyConnected(x, num_hidden=3, no_bias=True, name="nb")
    assert nb.list_arguments() == ["x", "nb_weight"]
    lone = sym.FullyConnected(num_hidden=3, name="lone")
    assert lone.list_arguments() == ["lone_data", "lone_weight", "lone_bias"]


def test_auto_variables_carry_the_node_attributes_as_in_mxnet():
    fc = sym.FullyConnected(sym.var("x"), num_hidden=3, name="fc", attr={"lr_mult": "0.1"})
    d = fc.attr_dict()
    assert d["fc"]["num_hidden"] == "3" and d["fc"]["__lr_mult__"] == "0.1"
    assert d["fc_weight"]["__lr_mult__"] == "0.1" and d["fc_weight"]["num_hidden"] == "3"
    assert "x" not in d


def test_variadic_op():
    a, b, c = sym.var("a"), sym.var("b"), sym.var("c")
    cat = sym.Concat(a, b, c, dim=1, name="cat")
    assert cat.attr("num_args") == "3" and cat.list_arguments() == ["a", "b", "c"]
    _, out, _ = cat.infer_shape(a=(2, 1), b=(2, 2), c=(2, 3))
    assert out == [(2, 6)]
    with pytest.raises(nbdl.GraphError):
        sym.Concat(a, b, num_args=3)


def test_creation_errors():
    x = sym.var("x")
    with pytest.raises(nbdl.AttrError, match="num_hiden"):
        sym.FullyConnected(x, num_hiden=3)
    with pytest.raises(nbdl.AttrError, match="num_hidden"):
        sym.FullyConnected(x)                       # required attribute
    with pytest.raises(nbdl.AttrError, match="act_type"):
        sym.Activation(x, act_type="nope")
    with pytest.raises(nbdl.GraphError):
        sym.FullyConnected(x, 3)                    # attribute by position
    with pytest.raises(nbdl.GraphError, match="bogus"):
        sym.FullyConnected(x, bogus=sym.var("y"), num_hidden=3)
    with pytest.raises(nbdl.GraphError):
        sym.FullyConnected(x, data=x, num_hidden=3)  # data twice
    with pytest.raises(nbdl.GraphError, match="single output"):
        sym.Activation(sym.Group([x, x]), act_type="relu")
    with pytest.raises(nbdl.AttrError, match="mood"):
        sym.Activation(x, act_type="relu", attr={"mood": "angry"})
    with pytest.raises(AttributeError):
        sym.NoSuchOperator
    with pytest.raises(nbdl.GraphError):
        bool(x + x)


# -- attributes ---------------------------------------------------------------------

def test_attr_list_attr_attr_dict():
    x = sym.var("x", lr_mult=0.5)
    act = sym.Activation(x, act_type="relu", name="r", attr={"__ctx_group__": "dev1"})
    assert act.attr("act_type") == "relu"
    assert act.attr("ctx_group") == "dev1"
    assert act.attr("name") == "r" and act.attr("op_name") == "Activation"
    assert act.list_attr() == {"act_type": "relu", "__ctx_group__": "dev1", "ctx_group": "dev1"}
    assert act.attr_dict() == {
        "x": {"__lr_mult__": "0.5", "lr_mult": "0.5"},
        "r": {"act_type": "relu", "__ctx_group__": "dev1", "ctx_group": "dev1"}}
    assert act.list_attr(recursive=True)["r$act_type"] == "relu"


def test_set_attr():
    x = sym.var("x")
    act = sym.Activation(x, act_type="relu", name="r")
    act._set_attr(lr_mult=2, act_type="tanh")
    assert act.attr("__lr_mult__") == "2" and act.attr("act_type") == "tanh"
    with pytest.raises(nbdl.AttrError, match="nope"):
        act._set_attr(nope=1)
    with pytest.raises(nbdl.GraphError):
        sym.Group([act, x])._set_attr(__a__=1)


# -- composition and copies -----------------------------------------------------------

def test_call_composes_by_name_and_leaves_the_original():
    net = mlp(num_hidden=(8,), num_classes=3)
    pre = sym.Activation(sym.var("img"), act_type="relu", name="pre")
    net2 = net(data=pre)
    assert net2.list_arguments() == ["img"] + MLP_ARGS[1:3] + ["fc2_weight", "fc2_bias", "softmax_label"]
    assert net.list_arguments()[0] == "data"       # the original is untouched
    assert net2.infer_shape(img=(2, 5))[1] == [(2, 3)]
    renamed = net(data=pre, name="head")
    assert renamed.name == "head" and net.name == "softmax"
    with pytest.raises(nbdl.GraphError, match="bogus"):
        net(bogus=pre)
    with pytest.raises(nbdl.GraphError):
        net(data="not a symbol")


def test_call_positional_and_variable_head():
    a, b = sym.var("a"), sym.var("b")
    s = a + b
    t = s(sym.var("p"), sym.var("q"))
    assert t.list_arguments() == ["p", "q"]
    assert sym.var("v")(v=a).list_outputs() == ["a"]


def test_compose_refuses_a_cycle():
    x = sym.var("x")
    act = sym.Activation(x, act_type="relu", name="r")
    with pytest.raises(nbdl.GraphError, match="cycle"):
        act._compose(x=act)


def test_copies_are_independent():
    net = mlp(num_hidden=(8,), num_classes=3)
    for c in (copy.copy(net), copy.deepcopy(net), net.copy()):
        assert c.tojson() == net.tojson()
        c._set_attr(__mark__="1")
        assert net.attr("__mark__") is None


def test_pickle_round_trip():
    net = mlp(num_hidden=(8,), num_classes=3)
    back = pickle.loads(pickle.dumps(net))
    assert back.tojson() == net.tojson()


# -- aux states (with a test-only op) -------------------------------------------------

def test_aux_states_and_hidden_outputs(aux_op):
    x = sym.var("x")
    bn = sym.create(aux_op, x, name="bn")
    assert bn.list_arguments() == ["x", "bn_gamma"]
    assert bn.list_auxiliary_states() == ["bn_moving_mean"]
    assert bn.list_inputs() == ["x", "bn_gamma", "bn_moving_mean"]
    assert bn.list_outputs() == ["bn_output"]            # the hidden output is not listed
    assert bn.get_internals().list_outputs() == ["x", "bn_gamma", "bn_moving_mean", "bn_output"]
    arg, out, aux = bn.infer_shape(x=(2, 3))
    assert arg == [(2, 3), (3,)] and out == [(2, 3)] and aux == [(3,)]
    # aux states are accepted by name
    arg, out, aux = bn.infer_shape_partial(bn_moving_mean=(3,))
    assert aux == [(3,)]
    node = bn._outputs[0].node
    hidden = nbdl.sym.Symbol([node.output(1)])
    assert hidden.list_outputs() == ["bn_mean"]


def test_make_node_symbols_interoperate():
    x = sym.var("x")
    node = make_node("_copy", [x._outputs[0]], name="c")
    s = nbdl.sym.Symbol([node.output(0)])
    assert s.list_arguments() == ["x"] and s.list_outputs() == ["c_output"]
    assert sym.identity(x, name="i").attr("op_name") == "_copy"


def test_hidden_keys_given_to_an_op_are_node_attributes_inherited_by_its_variables():
    from nbdl import optimizer as opt
    data = nbdl.sym.Variable("data")
    bias = nbdl.sym.Variable("fc1_bias", lr_mult=1.0)
    fc1 = nbdl.sym.FullyConnected(data=data, bias=bias, name="fc1", num_hidden=4, lr_mult=0)
    fc2 = nbdl.sym.FullyConnected(data=fc1, name="fc2", num_hidden=3, wd_mult=0.5)
    attrs = fc2.attr_dict()
    assert attrs["fc1"]["__lr_mult__"] == "0" and attrs["fc1_weight"]["__lr_mult__"] == "0"
    assert attrs["fc1_bias"]["__lr_mult__"] == "1.0"     # its own attribute wins
    assert attrs["fc2_weight"]["__wd_mult__"] == "0.5" == attrs["fc2_bias"]["__wd_mult__"]
    # not an operator parameter: the JSON keeps only the __key__ form
    node = [n for n in json.loads(fc2.tojson())["nodes"] if n["name"] == "fc1"][0]
    assert node["attrs"] == {"__lr_mult__": "0", "num_hidden": "4"}
    names = [n for n in fc2.list_arguments() if n != "data"]
    o = opt.SGD(sym=fc2, param_idx2name=dict(enumerate(names)))
    assert o.lr_mult == {"fc1_weight": 0.0, "fc1_bias": 1.0}
    assert o.wd_mult == {"fc1_bias": 0.0, "fc2_weight": 0.5, "fc2_bias": 0.5}


def test_a_node_whose_entries_its_neighbours_set_still_checks_them():
    # x + V gives V (2, 3), and the outer sum gives transpose(V)'s output
    # (2, 3) before transpose runs: its own rule must still refuse them
    v, x = nbdl.sym.var("V"), nbdl.sym.var("x")
    s3 = nbdl.sym.transpose(v, name="tv") + (x + v)
    with pytest.raises(nbdl.ShapeError, match=r"'tv'.*\(3, 2\)"):
        s3.simple_bind(nbdl.cpu(), x=(2, 3), grad_req="null")
    with pytest.raises(nbdl.ShapeError):
        s3.infer_shape(x=(2, 3))


def test_op_and_internal_namespaces():
    """MXNet 1.x's ``mx.sym.op`` / ``mx.sym._internal`` (Gluon 1.x code calls
    ``F._internal._plus_scalar``, ``F._internal._rnn_param_concat``): the same
    node builders as ``nbdl.sym.<op>``; unknown names are AttributeErrors."""
    import sys
    x = nbdl.sym.var("x")
    y = nbdl.sym._internal._plus_scalar(x, scalar=1.0)
    assert y.list_arguments() == ["x"] and y.get_internals()[1].name.startswith("_plus_scalar")
    np.testing.assert_array_equal(y.eval(x=nbdl.nd.array([1.0, 2.0]))[0].asnumpy(), [2, 3])
    assert nbdl.sym.op.FullyConnected is nbdl.sym._internal.FullyConnected
    assert sys.modules["nbdl.symbol._internal"] is nbdl.sym._internal
    assert "_rnn_param_concat" in dir(nbdl.sym._internal)
    with pytest.raises(AttributeError, match="no_such_op"):
        nbdl.sym._internal.no_such_op
