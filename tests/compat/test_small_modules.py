"""MXNet 1.x's small modules on nbdl: ``nbdl.name`` (NameManager, Prefix),
``nbdl.attribute`` (AttrScope), ``nbdl.util`` (NumPy-semantics flags),
``nbdl.base`` and ``nbdl.context``."""
import threading
import warnings

import numpy as np
import pytest

import nbdl
from nbdl import attribute, base, context, name, util
from nbdl.errors import ArgumentError, AttrError, NbdlError, ShapeError


# -- nbdl.name ----------------------------------------------------------------------

def _fc(x, **kw):
    return nbdl.sym.FullyConnected(x, num_hidden=2, **kw)


def test_name_manager_restarts_the_count_inside_its_block():
    data = nbdl.sym.var("data")
    _fc(data)                                # the default count moves on
    with name.NameManager():
        a = _fc(data)
        b = _fc(a)
        c = nbdl.sym.Activation(b, act_type="relu")
        d = a + b
    assert (a.name, b.name, c.name, d.name) == \
        ("fullyconnected0", "fullyconnected1", "activation0", "_plus0")
    assert b.list_arguments() == ["data", "fullyconnected0_weight", "fullyconnected0_bias",
                                  "fullyconnected1_weight", "fullyconnected1_bias"]
    with name.NameManager():
        assert _fc(data).name == "fullyconnected0"   # a fresh manager, a fresh count
    after = _fc(data).name
    assert after.startswith("fullyconnected") and after != "fullyconnected0"


def test_prefix_prefixes_given_and_automatic_names_but_not_variables():
    data = nbdl.sym.var("data")
    with name.Prefix("mynet_"):
        v = nbdl.sym.var("label")
        fc1 = _fc(data, name="fc1")
        fc2 = _fc(fc1)
        out = nbdl.sym.SoftmaxOutput(fc2, v)
    assert v.name == "label"
    assert fc1.name == "mynet_fc1" and fc2.name == "mynet_fullyconnected0"
    assert out.name == "mynet_softmaxoutput0"
    assert out.list_arguments() == ["data", "mynet_fc1_weight", "mynet_fc1_bias",
                                    "mynet_fullyconnected0_weight", "mynet_fullyconnected0_bias",
                                    "label"]
    # nested: the inner manager names, the outer one is back afterwards
    with name.Prefix("outer_"):
        with name.Prefix("inner_"):
            assert _fc(data, name="x").name == "inner_x"
        assert _fc(data, name="x").name == "outer_x"
    assert _fc(data, name="x").name == "x"


def test_name_scope_does_not_rename_gradient_nodes():
    data = nbdl.sym.var("data")
    with name.Prefix("p_"):
        net = nbdl.sym.sum(_fc(data, name="fc"))
        ex = net.simple_bind(nbdl.cpu(), data=(3, 4))
    ex.arg_dict["data"][:] = np.ones((3, 4))
    ex.forward(is_train=True)
    ex.backward()
    assert sorted(ex.grad_dict) == ["data", "p_fc_bias", "p_fc_weight"]
    np.testing.assert_allclose(ex.grad_dict["p_fc_bias"].asnumpy(), [3.0, 3.0])
    from nbdl.graph.gradient import build_gradient
    from nbdl.ops.ir import make_variable, topo_order
    plain = nbdl.sym.sum(nbdl.sym.tanh(_fc(data, name="g")) * 2.0)     # made outside the scope
    with name.Prefix("p_"):
        hg = make_variable("head_grad").output(0)
        grads = build_gradient(plain._outputs, [hg], [e for e in plain.get_internals()._outputs
                                                      if e.node.is_variable])
    made = [n.name for n in topo_order(grads) if n.op is not None]
    assert made and not any(m.startswith("p_") for m in made), made


def test_name_manager_scopes_are_per_thread_and_subclassable():
    class Upper(name.NameManager):
        def get(self, nm, hint):
            return super().get(nm, hint).upper()
    seen = {}

    def other():
        seen["other"] = _fc(nbdl.sym.var("d")).name
    with Upper():
        t = threading.Thread(target=other)
        t.start()
        t.join()
        mine = _fc(nbdl.sym.var("d")).name
    assert mine == "FULLYCONNECTED0"
    assert seen["other"].startswith("fullyconnected")


def test_name_manager_current_and_errors():
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", DeprecationWarning)
        assert isinstance(name.NameManager.current, name.NameManager)
        with name.Prefix("q_") as p:
            assert name.NameManager.current is p
    with pytest.warns(DeprecationWarning):
        name.NameManager.current
    with pytest.raises(ArgumentError, match="prefix must be a str"):
        name.Prefix(3)
    with pytest.raises(ArgumentError, match="expected a NameManager"):
        name.NameManager.current = "x"


# -- nbdl.attribute -----------------------------------------------------------------

def test_attr_scope_adds_attributes_to_variables_and_operators():
    with attribute.AttrScope(ctx_group="stage1", lr_mult="0.5"):
        w = nbdl.sym.var("w")
        x = nbdl.sym.var("x", attr={"lr_mult": "2"})        # the call's own value wins
        with attribute.AttrScope(ctx_group="stage2", __mood__="ok"):
            fc = _fc(x, weight=w, name="fc")
        y = nbdl.sym.var("y")
    z = nbdl.sym.var("z")
    assert w.attr("ctx_group") == "stage1" and w.attr("lr_mult") == "0.5"
    assert x.attr("lr_mult") == "2" and x.attr("ctx_group") == "stage1"
    assert fc.attr("ctx_group") == "stage2" and fc.attr("lr_mult") == "0.5"
    assert fc.attr("__mood__") == "ok"
    assert y.attr("ctx_group") == "stage1"
    assert z.attr("ctx_group") is None
    assert nbdl.AttrScope is attribute.AttrScope


def test_attr_scope_errors():
    with pytest.raises(AttrError, match="attribute 'lr_mult' must be a string"):
        attribute.AttrScope(lr_mult=0.5)
    with attribute.AttrScope(group="4"):
        assert nbdl.sym.var("v").attr("group") == "4"             # variables take any key
        with pytest.raises(AttrError, match="attr key 'group' is not supported"):
            _fc(nbdl.sym.var("d"))


# -- nbdl.util ----------------------------------------------------------------------

@pytest.fixture
def clean_np_flags():
    util.reset_np()
    yield
    util.reset_np()


def test_np_flags_default_off_and_scopes_restore(clean_np_flags):
    assert not util.is_np_shape() and not util.is_np_array()
    with util.np_shape():
        assert util.is_np_shape()
        with util.np_shape(False):
            assert not util.is_np_shape()
        assert util.is_np_shape()
    assert not util.is_np_shape()
    with util.np_array(True):
        assert util.is_np_array()
    assert not util.is_np_array()
    with util.np_shape(None):
        assert not util.is_np_shape()
    assert util.set_np_shape(True) is False
    assert util.set_np_shape(True) is True
    assert util.set_np_shape(False) is True


def test_set_np_and_reset_np(clean_np_flags):
    util.set_np()
    assert util.is_np_shape() and util.is_np_array()
    with pytest.raises(ArgumentError, match="NumPy-array semantics is still on"):
        util.set_np_shape(False)
    util.reset_np()
    assert not util.is_np_shape() and not util.is_np_array()
    util.set_np(shape=True, array=False)
    assert util.is_np_shape() and not util.is_np_array()
    with pytest.raises(ArgumentError, match="needs NumPy-shape"):
        util.set_np(shape=False, array=True)
    assert nbdl.npx.set_np is util.set_np and nbdl.npx.reset_np is util.reset_np


def test_use_np_decorators_on_functions_and_classes(clean_np_flags):
    @util.use_np_shape
    def shape_only():
        return util.is_np_shape(), util.is_np_array()

    @util.use_np_array
    def array_only():
        return util.is_np_shape(), util.is_np_array()
    assert shape_only() == (True, False) and array_only() == (False, True)

    @util.use_np
    class Net:
        def __init__(self):
            self.at_init = util.is_np_array()

        def forward(self):
            return util.is_np_shape() and util.is_np_array()

        @property
        def prop(self):
            return util.is_np_array()

        @staticmethod
        def stat():
            return util.is_np_shape()
    n = Net()
    assert n.at_init and n.forward() and n.prop and Net.stat()
    assert not util.is_np_shape() and not util.is_np_array()
    with pytest.raises(ArgumentError, match="use_np can only decorate"):
        util.use_np(3)


def test_np_array_flag_is_per_thread(clean_np_flags):
    seen = {}
    with util.np_array():
        t = threading.Thread(target=lambda: seen.setdefault("v", util.is_np_array()))
        t.start()
        t.join()
        assert util.is_np_array()
    assert seen["v"] is False


def test_top_level_exports(clean_np_flags):
    assert nbdl.np_shape is util.np_shape and nbdl.use_np is util.use_np
    assert nbdl.is_np_array is util.is_np_array and nbdl.set_np_shape is util.set_np_shape


# -- nbdl.base / nbdl.context ----------------------------------------------------------

def test_mxnet_error_catches_nbdl_errors():
    assert base.MXNetError is NbdlError and nbdl.MXNetError is NbdlError
    with pytest.raises(base.MXNetError):
        nbdl.nd.zeros((2, 3)) + nbdl.nd.zeros((4, 5))
    with pytest.raises(ShapeError):
        raise ShapeError("x")
    e = base.NotImplementedForSymbol(len, "_plus", 1, "a")
    assert isinstance(e, base.MXNetError)
    assert str(e) == ("Function len (namely operator \"_plus\") with arguments (<class 'int'>, "
                      "<class 'str'>) is not implemented for Symbol and only available in NDArray.")
    assert "not supported for SparseNDArray" in str(base.NotSupportedForSparseNDArray(len))


def test_base_helpers():
    assert base.py_str(b"caf\xc3\xa9") == "café" and base.py_str("x") == "x"
    assert base._as_list(3) == [3] and base._as_list((1, 2)) == (1, 2)
    assert isinstance(np.int64(3), base.integer_types) and isinstance(2.5, base.numeric_types)
    assert isinstance("s", base.string_types) and not isinstance(b"s", base.string_types)
    assert base.mx_real_t is np.float32


def test_context_module():
    assert context.Context is nbdl.Device and context.cpu is nbdl.cpu
    assert context.current_context() == nbdl.cpu(0)
    with context.Context("cpu", 1):
        assert context.current_context() == nbdl.cpu(1)
    assert context.current_context() == nbdl.cpu(0)
    assert context.cpu_pinned(2) == nbdl.cpu(2) and nbdl.cpu_pinned is context.cpu_pinned
    assert isinstance(context.num_gpus(), int)
    assert context.gpu(1).device_type == "gpu" and context.gpu(1).device_id == 1


def test_context_default_ctx_is_the_current_device_with_a_deprecation_warning():
    with pytest.warns(DeprecationWarning, match="default_ctx has been deprecated"):
        assert context.Context.default_ctx == nbdl.cpu(0)
    with nbdl.cpu(3):
        with pytest.warns(DeprecationWarning):
            assert context.Context.default_ctx == nbdl.cpu(3)
            assert nbdl.cpu(0).default_ctx == nbdl.cpu(3)       # also read on an instance


def test_tojson_writes_is_np_shape_under_numpy_shape_semantics(clean_np_flags):
    import json
    net = _fc(nbdl.sym.var("data"), name="fc")
    assert "is_np_shape" not in json.loads(net.tojson())["attrs"]
    with util.np_shape(True):
        doc = json.loads(net.tojson())
    assert doc["attrs"]["is_np_shape"] == ["int", 1]
    back = nbdl.sym.load_json(json.dumps(doc))
    assert back.list_arguments() == ["data", "fc_weight", "fc_bias"]


def test_bool_of_a_symbol_is_not_implemented_for_symbol():
    from nbdl.errors import GraphError
    with pytest.raises(base.NotImplementedForSymbol, match="Function __bool__ is not implemented"):
        bool(nbdl.sym.var("x"))
    assert issubclass(base.NotImplementedForSymbol, GraphError)


def test_runtime_features():
    from nbdl import runtime
    f = runtime.Features()
    assert f is runtime.Features() and list(f)[:2] == ["CUDA", "CUDNN"]
    assert f.is_enabled("INT64_TENSOR_SIZE") and f.is_enabled("int64_tensor_size")
    assert not f.is_enabled("CUDNN") and not f.is_enabled("MKLDNN")
    assert f.is_enabled("CUDA") == (context.num_gpus() > 0)
    assert repr(f["CUDNN"]) == "✖ CUDNN" and repr(f["INT64_TENSOR_SIZE"]) == "✔ INT64_TENSOR_SIZE"
    with pytest.raises(ArgumentError, match="feature 'WARP_DRIVE' is unknown"):
        f.is_enabled("WARP_DRIVE")


def test_ndarray_storage_table_and_py_slice():
    from nbdl.ndarray import ndarray as ndm
    assert ndm._STORAGE_TYPE_STR_TO_ID == {"undefined": -1, "default": 0, "row_sparse": 1, "csr": 2}
    assert ndm.py_slice is slice
