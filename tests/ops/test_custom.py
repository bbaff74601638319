"""Custom operators written in Python (nbdl.operator, ops/custom.py): eager,
bound (planned), under autograd, hybridized, in -symbol.json files."""
import json

import numpy as np
import pytest

import nbdl
from nbdl import autograd, operator
from nbdl.device import cpu, gpu
from nbdl.testing import (bind_and_run, check_consistency, check_numeric_gradient,
                          check_symbolic_backward, check_symbolic_forward)


class Sqr(operator.CustomOp):
    """y = x * x; the aux state is set to 1 by forward and checked by backward."""

    def forward(self, is_train, req, in_data, out_data, aux):
        aux[0][:] = 1
        self.assign(out_data[0], req[0], in_data[0] * in_data[0])

    def backward(self, req, out_grad, in_data, out_data, in_grad, aux):
        assert (aux[0].asnumpy() == 1).all()
        self.assign(in_grad[0], req[0], 2 * in_data[0] * out_grad[0])


@operator.register("test_sqr")
class SqrProp(operator.CustomOpProp):
    def list_auxiliary_states(self):
        return ["aux"]

    def infer_shape(self, in_shape):
        return in_shape, [in_shape[0]], [in_shape[0]]

    def create_operator(self, ctx, shapes, dtypes):
        return Sqr()


class Scale(operator.CustomOp):
    """Two outputs (x * factor, x + factor); backward records what it got."""

    def __init__(self, factor):
        self.factor = factor
        self.seen = []

    def forward(self, is_train, req, in_data, out_data, aux):
        self.seen.append(("forward", is_train, list(req)))
        self.outs = [o._data for o in out_data]
        out_data[0][:] = in_data[0] * self.factor   # req ignored on purpose
        out_data[1][:] = in_data[0] + self.factor

    def backward(self, req, out_grad, in_data, out_data, in_grad, aux):
        self.seen.append(("backward", [g is None for g in out_grad],
                          [d is None for d in in_data], [d is None for d in out_data], list(req)))
        g = out_grad[0] * self.factor + out_grad[1]
        self.assign(in_grad[0], req[0], g)


_made = []


@operator.register("test_scale")
class ScaleProp(operator.CustomOpProp):
    def __init__(self, factor="2"):
        super().__init__(need_top_grad=True)
        self.factor = float(factor)

    def list_outputs(self):
        return ["scaled", "shifted"]

    def declare_backward_dependency(self, out_grad, in_data, out_data):
        return list(out_grad)          # backward reads only the head gradients

    def create_operator(self, ctx, shapes, dtypes):
        op = Scale(self.factor)
        _made.append((op, ctx, shapes, dtypes))
        return op


class Mult(operator.CustomOp):
    def forward(self, is_train, req, in_data, out_data, aux):
        self.assign(out_data[0], req[0], in_data[0] * in_data[1])

    def backward(self, req, out_grad, in_data, out_data, in_grad, aux):
        assert out_grad[0] is None     # need_top_grad=False: a loss-like op
        self.assign(in_grad[0], req[0], in_data[1])
        self.assign(in_grad[1], req[1], in_data[0])


@operator.register("test_mult_loss")
class MultProp(operator.CustomOpProp):
    def __init__(self):
        super().__init__(need_top_grad=False)

    def list_arguments(self):
        return ["lhs", "rhs"]

    def create_operator(self, ctx, shapes, dtypes):
        return Mult()


class Ones(operator.CustomOp):
    def __init__(self, shape):
        self.value = np.ones(shape, np.float32)

    def forward(self, is_train, req, in_data, out_data, aux):
        self.assign(out_data[0], req[0], self.value)


@operator.register("test_ones")
class OnesProp(operator.CustomOpProp):
    def __init__(self, length, depth):
        super().__init__()
        self.shape = (int(length), int(depth))

    def list_arguments(self):
        return []

    def infer_shape(self, in_shape):
        return [], [self.shape], []

    def infer_type(self, in_type):
        return [], [np.float32], []

    def create_operator(self, ctx, shapes, dtypes):
        return Ones(self.shape)


def _var(name="data"):
    return nbdl.sym.var(name)


def test_symbol_forward_backward_and_numeric_gradient(rng):
    x = rng.uniform(-1, 1, (4, 5))
    y = nbdl.sym.Custom(data=_var(), aux=_var("aux"), op_type="test_sqr", name="sqr")
    assert y.list_arguments() == ["data"] and y.list_auxiliary_states() == ["aux"]
    assert y.list_outputs() == ["sqr_output"]
    aux = {"aux": np.zeros((4, 5))}
    check_symbolic_forward(y, {"data": x}, [x * x], aux_states=aux)
    og = rng.normal(size=(4, 5))
    check_symbolic_backward(y, {"data": x}, [og], {"data": 2 * x * og}, aux_states=aux)
    check_numeric_gradient(y, {"data": x}, aux_states=aux)


def test_outputs_are_planned_views_and_aux_is_written(rng):
    y = nbdl.sym.Custom(_var(), _var("aux"), op_type="test_sqr", name="sq") * 3.0
    ex = y.simple_bind(cpu(), data=(2, 3))
    x = rng.uniform(-1, 1, (2, 3)).astype(np.float32)
    ex.forward(is_train=True, data=x)
    np.testing.assert_allclose(ex.outputs[0].asnumpy(), 3 * x * x, rtol=1e-6)
    assert (ex.aux_dict["aux"].asnumpy() == 1).all()
    # the Custom output is an entry of the plan (arena bytes)
    plan = ex.memory_plan
    planned = {plan.request.names[i] for b in plan.buffers for i in b.entries}
    assert "sq_output" in planned
    assert "Op:Custom, Name=sq" in nbdl.debug_str(ex)


def test_one_operator_per_node_keeps_state_between_forward_and_backward(rng):
    _made.clear()
    x = _var()
    a = nbdl.sym.Custom(x, op_type="test_scale", factor=2, name="a")
    b = nbdl.sym.Custom(a[0], op_type="test_scale", factor=3, name="b")
    y = b[0] + b[1] + a[1]
    xv = rng.uniform(-1, 1, (3,)).astype(np.float32)
    ex = y.simple_bind(cpu(), data=(3,))
    ex.forward(is_train=True, data=xv)
    ex.backward(nbdl.nd.ones((3,)))
    assert len(_made) == 2              # one operator per node, shared by its backward
    (op_a, ctx, shapes, dtypes), (op_b, _, _, _) = _made
    assert ctx == cpu() and shapes == [[3]] and dtypes == [0]
    assert {op_a.factor, op_b.factor} == {2.0, 3.0}
    for op in (op_a, op_b):
        kinds = [s[0] for s in op.seen]
        assert kinds == ["forward", "backward"]
        # declared: out_grad only; in_data and out_data come as None
        assert op.seen[1][1:4] == ([False, False], [True], [True, True])
    ex.forward(is_train=False, data=xv)
    assert op_a.seen[-1] == ("forward", False, ["write", "write"])
    a1 = xv * 2
    ref = (a1 * 3) + (a1 + 3) + (xv + 2)
    np.testing.assert_allclose(ex.outputs[0].asnumpy(), ref, rtol=1e-6)
    # dy/dx = 3 * 2 + 2 * 1... through both nodes: (3 + 1) * 2 + 1
    np.testing.assert_allclose(ex.grad_dict["data"].asnumpy(), np.full(3, 9.0), rtol=1e-6)


def test_an_unread_output_gets_scratch_not_someone_elses_bytes(rng):
    # output 1 of "a" is read by nobody (REQ_NULL), but Scale writes it anyway:
    # it must land in scratch, not over another entry
    x = _var()
    a = nbdl.sym.Custom(x, op_type="test_scale", factor=2)
    y = nbdl.sym.exp(a[0]) * 2.0 + 1.0
    xv = rng.uniform(-1, 1, (4, 3))
    _made.clear()
    _, outs, grads, _ = bind_and_run(y, {"data": xv}, grad_names=["data"], backward=True,
                                     out_grads=[np.ones((4, 3))])
    first, second = _made[0][0].outs
    assert first.size and second.size and not np.shares_memory(first, second)
    np.testing.assert_allclose(outs[0], np.exp(2 * xv) * 2 + 1, rtol=1e-6)
    np.testing.assert_allclose(grads["data"], np.exp(2 * xv) * 4, rtol=1e-6)


def test_grad_req_add_accumulates(rng):
    y = nbdl.sym.Custom(_var(), _var("aux"), op_type="test_sqr")
    xv = rng.uniform(-1, 1, (2, 2)).astype(np.float32)
    g0 = np.ones((2, 2), np.float32)
    ex = y.bind(cpu(), {"data": nbdl.nd.array(xv)}, args_grad={"data": nbdl.nd.array(g0)},
                grad_req="add", aux_states={"aux": nbdl.nd.zeros((2, 2))})
    for _ in range(2):
        ex.forward(is_train=True)
        ex.backward(nbdl.nd.ones((2, 2)))
    np.testing.assert_allclose(ex.grad_dict["data"].asnumpy(), g0 + 2 * (2 * xv), rtol=1e-6)


def test_loss_like_op_gets_no_head_gradient(rng):
    lhs, rhs = rng.uniform(-1, 1, (2, 3)), rng.uniform(-1, 1, (2, 3))
    y = nbdl.sym.Custom(_var("lhs"), _var("rhs"), op_type="test_mult_loss")
    check_symbolic_backward(y, {"lhs": lhs, "rhs": rhs}, [np.ones((2, 3))],
                            {"lhs": rhs, "rhs": lhs})


def test_eager_call_and_autograd(rng):
    lhs = nbdl.nd.array(rng.uniform(-1, 1, (2, 3)))
    rhs = nbdl.nd.array(rng.uniform(-1, 1, (2, 3)))
    lhs.attach_grad()
    rhs.attach_grad()
    with autograd.record():
        y = nbdl.nd.Custom(lhs, rhs, op_type="test_mult_loss", name="m")
    y.backward()
    np.testing.assert_allclose(y.asnumpy(), lhs.asnumpy() * rhs.asnumpy(), rtol=1e-6)
    np.testing.assert_allclose(lhs.grad.asnumpy(), rhs.asnumpy(), rtol=1e-6)
    np.testing.assert_allclose(rhs.grad.asnumpy(), lhs.asnumpy(), rtol=1e-6)
    # the Python code runs with recording paused: only the Custom call is taped
    x = nbdl.nd.array(rng.uniform(-1, 1, (3,)))
    x.attach_grad()
    with autograd.record():
        a, b = nbdl.nd.Custom(x, op_type="test_scale", factor="4")
        z = a * b
    z.backward()
    xv = x.asnumpy()
    np.testing.assert_allclose(x.grad.asnumpy(), 4 * (xv + 4) + 4 * xv, rtol=1e-5)


def test_no_inputs_and_keyword_attributes():
    with autograd.record():
        x = nbdl.nd.Custom(length=3, depth=2, op_type="test_ones")
    np.testing.assert_array_equal(x.asnumpy(), np.ones((3, 2), np.float32))
    s = nbdl.sym.Custom(op_type="test_ones", length=2, depth=5)
    assert s.infer_shape()[1] == [(2, 5)]
    assert s.list_attr() == {"op_type": "test_ones", "length": "2", "depth": "5"}


@pytest.mark.parametrize("dtype", [np.float16, np.int32])
def test_dtypes_pass_through(dtype):
    x = np.arange(-3, 3).astype(dtype).reshape(2, 3)
    y = nbdl.sym.Custom(_var(), _var("aux"), op_type="test_sqr")
    outs = check_symbolic_forward(y, {"data": x}, [x * x], aux_states={"aux": np.zeros_like(x)})
    assert outs[0].dtype == dtype


def test_json_round_trip_refers_to_op_type_and_runs_no_code(tmp_path):
    y = nbdl.sym.Custom(_var(), op_type="test_scale", factor=5, name="sc")
    doc = json.loads(y.tojson())
    node = [n for n in doc["nodes"] if n["op"] == "Custom"][0]
    assert node["attrs"] == {"op_type": "test_scale", "factor": "5"}
    back = nbdl.sym.load_json(y.tojson())
    assert back.list_outputs() == ["sc_scaled", "sc_shifted"]
    xv = np.arange(3, dtype=np.float32)
    check_symbolic_forward(back, {"data": xv}, [xv * 5, xv + 5])
    # a file naming an operator this process did not register loads nothing
    node["attrs"]["op_type"] = "no_such_custom_op"
    with pytest.raises(nbdl.AttrError, match="no custom operator 'no_such_custom_op'"):
        nbdl.sym.load_json(json.dumps(doc))


class _SqrBlock(nbdl.gluon.HybridBlock):
    def hybrid_forward(self, F, x):
        a, b = F.Custom(x, op_type="test_scale", factor=3)
        return a * b


def test_hybridized_block_matches_eager_and_exports(rng, tmp_path):
    xv = rng.uniform(-1, 1, (2, 3)).astype(np.float32)
    results = []
    for hybrid in (False, True):
        net = _SqrBlock()
        if hybrid:
            net.hybridize()
        x = nbdl.nd.array(xv)
        x.attach_grad()
        with autograd.record():
            y = net(x)
        y.backward()
        results.append((y.asnumpy(), x.grad.asnumpy()))
    for a, b in zip(*results):
        np.testing.assert_allclose(a, b, rtol=1e-6)
    np.testing.assert_allclose(results[0][0], 3 * xv * (xv + 3), rtol=1e-6)
    net.export(str(tmp_path / "net"))
    doc = json.loads((tmp_path / "net-symbol.json").read_text())
    assert any(n["op"] == "Custom" and n["attrs"]["op_type"] == "test_scale"
               for n in doc["nodes"])


def test_schedule_with_custom_step_keeps_the_python_loop(tmp_path, monkeypatch):
    monkeypatch.setenv("NBDL_CACHE_DIR", str(tmp_path))
    monkeypatch.setenv("NBDL_DRIVER", "1")
    monkeypatch.setenv("NBDL_DRIVER_MIN_STEPS", "1")
    y = nbdl.sym.Custom(_var() * 2.0, op_type="test_scale")[0] + 1.0
    ex = y.simple_bind(cpu(), grad_req="null", data=(3,))
    ex.forward(data=np.arange(3, dtype=np.float32))
    assert not ex._runner("fwd_infer").native
    np.testing.assert_allclose(ex.outputs[0].asnumpy(), np.arange(3) * 4 + 1)


class _Broken(operator.CustomOp):
    def forward(self, is_train, req, in_data, out_data, aux):
        raise ValueError("deliberate")


@operator.register("test_broken")
class _BrokenProp(operator.CustomOpProp):
    def create_operator(self, ctx, shapes, dtypes):
        return _Broken()


@operator.register("test_bad_shape")
class _BadShapeProp(operator.CustomOpProp):
    def infer_shape(self, in_shape):
        return in_shape, [in_shape[0], in_shape[0]]      # one output declared, two shapes


def test_errors_name_the_op_and_method():
    x = nbdl.nd.ones((2,))
    with pytest.raises(nbdl.CustomOpError, match=r"'test_broken': forward raised ValueError: "
                                                  r"deliberate"):
        nbdl.nd.Custom(x, op_type="test_broken")
    with pytest.raises(nbdl.MXNetError, match="'test_broken'"):
        nbdl.sym.Custom(_var(), op_type="test_broken").simple_bind(cpu(), data=(2,)).forward()
    with pytest.raises(nbdl.CustomOpError, match=r"test_bad_shape.*infer_shape: expected 1 "
                                                  r"output shapes, got 2"):
        nbdl.nd.Custom(x, op_type="test_bad_shape")
    with pytest.raises(nbdl.CustomOpError, match=r"unexpected keyword|bogus"):
        nbdl.nd.Custom(x, op_type="test_broken", bogus=1)
    with pytest.raises(nbdl.AttrError, match="no custom operator 'nope'"):
        nbdl.sym.Custom(_var(), op_type="nope")
    with pytest.raises(nbdl.CustomOpError, match="CustomOpProp subclass"):
        operator.register("x")(object)


@pytest.mark.cuda
def test_cuda_matches_cpu(rng):
    y = nbdl.sym.Custom(_var(), _var("aux"), op_type="test_sqr")
    check_consistency(y, {"data": rng.uniform(-1, 1, (2, 3)).astype(np.float32)},
                      aux_states={"aux": np.zeros((2, 3), np.float32)}, devices=[cpu(), gpu()])


def test_mxnet_module_helpers():
    import importlib
    nbdl.alias_mxnet()
    assert importlib.import_module("mxnet.operator") is operator
    assert "Activation" in operator.get_all_registered_operators()
    args = operator.get_operator_arguments("Activation")
    assert args.names == ["data", "act_type"] and args.narg == 2
    assert args.types[1] == "{'relu', 'sigmoid', 'softrelu', 'softsign', 'tanh'}, required"
    assert operator.get_operator_arguments("SwapAxis").types[1] == "int, optional, default=0"


class _NumpySquare(operator.NumpyOp):
    def forward(self, in_data, out_data):
        assert isinstance(in_data[0], np.ndarray)
        out_data[0][:] = in_data[0] ** 2

    def backward(self, out_grad, in_data, out_data, in_grad):
        in_grad[0][:] = 2 * in_data[0] * out_grad[0]


class _NDArrayScale(operator.NDArrayOp):
    def forward(self, in_data, out_data):
        out_data[0][:] = in_data[0] * 3

    def backward(self, out_grad, in_data, out_data, in_grad):
        assert in_data[0] is None            # declared: out_grad only
        in_grad[0][:] = out_grad[0] * 3

    def declare_backward_dependency(self, out_grad, in_data, out_data):
        return list(out_grad)


@pytest.mark.filterwarnings("ignore:.*deprecated")
@pytest.mark.parametrize("op,f,df", [(_NumpySquare, np.square, lambda x: 2 * x),
                                     (_NDArrayScale, lambda x: 3 * x, lambda x: 3 + 0 * x)])
def test_deprecated_python_ops(op, f, df, rng):
    x = rng.uniform(-1, 1, (2, 3)).astype(np.float32)
    og = rng.normal(size=(2, 3)).astype(np.float32)
    y = op()(_var(), name="pyop")
    assert y.list_outputs() == ["pyop_output"]
    check_symbolic_forward(y, {"data": x}, [f(x)])
    check_symbolic_backward(y, {"data": x}, [og], {"data": og * df(x)})
