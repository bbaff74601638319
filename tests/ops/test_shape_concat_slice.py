"""Concat, SliceChannel (split), slice and slice_axis against numpy references."""
import numpy as np
import pytest

import nbdl
from nbdl.errors import UnknownOpError
from nbdl.executor.interpret import run_op
from nbdl.ops import REQ_ADD, REQ_NULL, REQ_WRITE, get_op
from nbdl.testing import (check_consistency, check_numeric_gradient, check_symbolic_backward,
                          check_symbolic_forward, run_symbol)

sym = nbdl.sym
DTYPES = [np.float32, np.float64]


def data(shape, dtype=np.float64, seed=0):
    return np.random.RandomState(seed).uniform(-1, 1, shape).astype(dtype)


def has_op(name):
    try:
        get_op(name)
        return True
    except UnknownOpError:
        return False


# -- Concat ---------------------------------------------------------------------------------

def test_concat_mxnet_doc_example():
    x = np.array([[1, 1], [2, 2]], np.float32)
    y = np.array([[3, 3], [4, 4], [5, 5]], np.float32)
    z = np.array([[6, 6], [7, 7], [8, 8]], np.float32)
    s = sym.concat(sym.var("x"), sym.var("y"), sym.var("z"), dim=0)
    check_symbolic_forward(s, {"x": x, "y": y, "z": z}, [np.array(
        [[1, 1], [2, 2], [3, 3], [4, 4], [5, 5], [6, 6], [7, 7], [8, 8]], np.float32)])
    s = sym.Concat(sym.var("y"), sym.var("z"), dim=1)
    check_symbolic_forward(s, {"y": y, "z": z}, [np.array(
        [[3, 3, 6, 6], [4, 4, 7, 7], [5, 5, 8, 8]], np.float32)])
    assert s.list_arguments() == ["y", "z"]


@pytest.mark.parametrize("shapes,dim", [
    ([(2, 3), (2, 4)], 1), ([(2, 3), (1, 3), (3, 3)], 0), ([(2, 3, 2), (2, 3, 1)], -1),
    ([(2, 0, 2), (2, 3, 2)], 1), ([(4,)], 0), ([(1, 1), (1, 1), (1, 1), (1, 1)], 1),
    ([(0, 2), (0, 3)], 1),
])
@pytest.mark.parametrize("dtype", DTYPES + [np.int32])
def test_concat_grid(shapes, dim, dtype):
    xs = {f"x{i}": (data(s, seed=i) * 10).astype(dtype) for i, s in enumerate(shapes)}
    s = sym.Concat(*[sym.var(k) for k in xs], dim=dim)
    check_symbolic_forward(s, xs, [np.concatenate(list(xs.values()), axis=dim)])


def test_concat_shape_rules():
    s = sym.Concat(sym.var("a"), sym.var("b"), dim=1)
    assert s.infer_shape(a=(2, 3), b=(2, 5)) == ([(2, 3), (2, 5)], [(2, 8)], [])
    op = get_op("Concat")
    attrs = op.parse_attrs({"num_args": 3, "dim": 1})[0]
    # one missing input is filled in from the output
    ins, outs = op.infer_shape(attrs, [(2, 3), None, (2, 1)], [(2, 10)])
    assert ins == [(2, 3), (2, 6), (2, 1)] and outs == [(2, 10)]
    # two missing: nothing to decide
    ins, _ = op.infer_shape(attrs, [(2, 3), None, None], [(2, 10)])
    assert ins[1] is None
    with pytest.raises(nbdl.ShapeError, match=r"Concat.*arg1 of shape \(3, 5\)"):
        s.infer_shape(a=(2, 3), b=(3, 5))
    with pytest.raises(nbdl.ShapeError, match="Concat.*dim=2"):
        sym.Concat(sym.var("a"), sym.var("b"), dim=2).infer_shape(a=(2, 3), b=(2, 3))
    with pytest.raises(nbdl.ShapeError, match="more than the output"):
        op.infer_shape(attrs, [(2, 3), None, (2, 9)], [(2, 10)])


@pytest.mark.cuda
def test_concat_gradient():
    s = sym.Concat(sym.var("a"), sym.var("b"), sym.var("c"), dim=1)
    loc = {"a": data((2, 1, 2)), "b": data((2, 3, 2), seed=1), "c": data((2, 2, 2), seed=2)}
    check_numeric_gradient(s, loc)
    check_consistency(s, {k: v.astype(np.float32) for k, v in loc.items()})
    g = data((2, 6, 2), seed=3)
    check_symbolic_backward(s, loc, [g], {"a": g[:, :1], "b": g[:, 1:4], "c": g[:, 4:]})


def test_rnn_param_concat_shape_rule():
    """MXNet 1.x's _rnn_param_concat: Concat's rule, plus two inputs of unknown
    size sharing the output's remainder evenly (MXNet's RNNParamConcatShape);
    three is an error."""
    op = get_op("_rnn_param_concat")
    attrs = op.parse_attrs({"num_args": 4, "dim": 0})[0]
    ins, outs = op.infer_shape(attrs, [None, None, (6,), (4,)], [(30,)])
    assert ins == [(10,), (10,), (6,), (4,)] and outs == [(30,)]
    ins, _ = op.infer_shape(attrs, [None, (3,), (6,), (4,)], [(30,)])
    assert ins[0] == (17,)
    assert op.infer_shape(attrs, [(1,), (3,), (6,), (4,)], [None])[1] == [(14,)]
    with pytest.raises(nbdl.ShapeError, match="_rnn_param_concat.*one or two inputs"):
        op.infer_shape(attrs, [None, None, None, (4,)], [(30,)])
    with pytest.raises(nbdl.ShapeError, match="_rnn_param_concat.*more than the output"):
        op.infer_shape(attrs, [None, None, (26,), (5,)], [(30,)])
    assert get_op("_npi_rnn_param_concat") is op


def test_rnn_param_concat_values_and_gradient():
    s = sym._internal._rnn_param_concat(sym.var("a"), sym.var("b"), sym.var("c"), dim=0,
                                        num_args=3)
    loc = {"a": data((5,)), "b": data((3,), seed=1), "c": data((2,), seed=2)}
    check_symbolic_forward(s, loc, [np.concatenate([loc["a"], loc["b"], loc["c"]])])
    check_numeric_gradient(s, loc)
    a, b = (loc[k].astype(np.float32) for k in "ab")
    got = nbdl.nd._internal._rnn_param_concat(nbdl.nd.array(a), nbdl.nd.array(b), dim=0,
                                              num_args=2)
    np.testing.assert_array_equal(got.asnumpy(), np.concatenate([a, b]))


def test_mxnet_1x_exported_lstm_graph_loads(tmp_path):
    """A Gluon 1.x LSTM layer exports its parameters through Reshape and
    _rnn_param_concat into RNN (MXNet 1.9.1's rnn_layer.py): such a file loads
    and gives the nbdl layer's output for the same parameters."""
    from nbdl.gluon import SymbolBlock, rnn
    layer = rnn.LSTM(4, num_layers=2, input_size=3)
    layer.initialize(nbdl.init.Uniform(0.5))
    x = nbdl.nd.array(data((5, 2, 3)).astype(np.float32))
    want = layer(x).asnumpy()
    names = [f"l{i}_{g}_{t}" for t in ("weight", "bias") for i in range(2) for g in ("i2h", "h2h")]
    params = [sym.Reshape(sym.var(n), shape=(-1,)) for n in names]
    flat = sym._internal._rnn_param_concat(*params, dim=0, num_args=len(params))
    h0, c0 = sym.var("data1"), sym.var("data2")
    out = sym.RNN(sym.var("data0"), flat, h0, c0, state_size=4, num_layers=2, mode="lstm",
                  state_outputs=True)[0]
    (tmp_path / "lstm-symbol.json").write_text(out.tojson())
    block = SymbolBlock.imports(str(tmp_path / "lstm-symbol.json"), ["data0", "data1", "data2"])
    block.initialize()
    mine = dict(layer.collect_params().items())
    for n in names:
        block.collect_params()[n].set_data(mine[next(k for k in mine if k.endswith(n))].data())
    z = nbdl.nd.zeros((2, 2, 4))
    np.testing.assert_allclose(block(x, z, z).asnumpy(), want, rtol=1e-5, atol=1e-6)


@pytest.mark.parametrize("device", ["cpu", pytest.param("gpu", marks=pytest.mark.cuda)])
def test_backward_concat_req_per_output(device):
    """REQ_NULL leaves an output alone, REQ_ADD accumulates, per output."""
    dev = nbdl.Device(device)
    op = get_op("_backward_Concat")
    attrs = op.parse_attrs({"num_args": 3, "dim": 0})[0]
    shapes = [(1, 2), (2, 2), (1, 2)]
    g = data((4, 2), np.float32)
    carriers = [dev.from_numpy(np.zeros(s, np.float32)) for s in shapes]
    bases = [data(s, np.float32, seed=5 + i) for i, s in enumerate(shapes)]
    outs = [dev.from_numpy(b.copy()) for b in bases]
    run_op(op, attrs, [dev.from_numpy(g)] + carriers, shapes, [np.float32] * 3, dev,
           outputs=outs, req=[REQ_WRITE, REQ_NULL, REQ_ADD])
    got = [nbdl.Device.to_numpy(o) for o in outs]
    np.testing.assert_allclose(got[0], g[:1])
    np.testing.assert_allclose(got[1], bases[1])
    np.testing.assert_allclose(got[2], bases[2] + g[3:], rtol=1e-6)


@pytest.mark.parametrize("device", ["cpu", pytest.param("gpu", marks=pytest.mark.cuda)])
def test_concat_req_add(device):
    dev = nbdl.Device(device)
    op = get_op("Concat")
    attrs = op.parse_attrs({"num_args": 2, "dim": 1})[0]
    a, b = data((2, 1), np.float32), data((2, 2), np.float32, seed=1)
    base = data((2, 3), np.float32, seed=2)
    out = dev.from_numpy(base.copy())
    run_op(op, attrs, [dev.from_numpy(a), dev.from_numpy(b)], [(2, 3)], [np.float32], dev,
           outputs=[out], req=[REQ_ADD])
    np.testing.assert_allclose(nbdl.Device.to_numpy(out), base + np.concatenate([a, b], 1), rtol=1e-6)


# -- SliceChannel -------------------------------------------------------------------------------

@pytest.mark.parametrize("shape,n,axis,squeeze", [
    ((3, 2, 1), 2, 1, False), ((3, 2, 1), 2, 1, True), ((3, 2, 1), 3, 0, False),
    ((3, 2, 1), 3, 0, True), ((2, 6), 3, -1, False), ((4, 2), 1, 0, False), ((0, 4), 2, 1, False),
    ((2, 3, 4), 4, -1, True),
])
@pytest.mark.parametrize("dtype", DTYPES)
def test_split_grid(shape, n, axis, squeeze, dtype):
    x = data(shape, dtype)
    s = sym.split(sym.var("x"), num_outputs=n, axis=axis, squeeze_axis=squeeze)
    expected = np.split(x, n, axis=axis)
    if squeeze:
        expected = [np.squeeze(e, axis=axis) for e in expected]
    assert len(s.list_outputs()) == n
    check_symbolic_forward(s, {"x": x}, expected)


def test_split_names_and_rules():
    s = sym.SliceChannel(sym.var("x"), num_outputs=2, name="sp")
    assert s.list_outputs() == ["sp_output0", "sp_output1"]
    assert sym.split(sym.var("x"), num_outputs=1, name="s1").list_outputs() == ["s1_output0"]
    _, outs, _ = s.infer_shape(x=(3, 4))
    assert outs == [(3, 2), (3, 2)]
    op = get_op("SliceChannel")
    attrs = op.parse_attrs({"num_outputs": 3, "axis": 1, "squeeze_axis": True})[0]
    assert op.infer_shape(attrs, [None], [(2, 5), None, None])[0] == [(2, 3, 5)]
    attrs = op.parse_attrs({"num_outputs": 3, "axis": -1})[0]
    assert op.infer_shape(attrs, [None], [None, (2, 5), None])[0] == [(2, 15)]
    with pytest.raises(nbdl.ShapeError, match=r"SliceChannel.*size 4.*num_outputs=3.*\(3, 4\)"):
        sym.split(sym.var("x"), num_outputs=3).infer_shape(x=(3, 4))
    with pytest.raises(nbdl.ShapeError, match="squeeze_axis"):
        sym.split(sym.var("x"), num_outputs=2, squeeze_axis=True).infer_shape(x=(3, 4))
    with pytest.raises(nbdl.ShapeError, match="axis=2"):
        sym.split(sym.var("x"), num_outputs=2, axis=2).infer_shape(x=(3, 4))


@pytest.mark.cuda
@pytest.mark.parametrize("n,axis,squeeze", [(2, 1, False), (3, 0, True), (2, -1, True)])
def test_split_gradient(n, axis, squeeze):
    shape = {0: (3, 2, 2), 1: (2, 2, 3), -1: (2, 3, 2)}[axis]
    s = sym.split(sym.var("x"), num_outputs=n, axis=axis, squeeze_axis=squeeze)
    check_numeric_gradient(s, {"x": data(shape)})
    check_consistency(s, {"x": data(shape, np.float32)})


@pytest.mark.skipif(not has_op("zeros_like"), reason="zeros_like (elementwise family) not registered")
def test_split_gradient_with_unused_output():
    x = data((2, 4))
    s = sym.split(sym.var("x"), num_outputs=2)[1]
    g = data((2, 2), seed=1)
    check_symbolic_backward(s, {"x": x}, [g], {"x": np.concatenate([np.zeros((2, 2)), g], 1)})


@pytest.mark.parametrize("device", ["cpu", pytest.param("gpu", marks=pytest.mark.cuda)])
def test_split_req_per_output(device):
    dev = nbdl.Device(device)
    op = get_op("SliceChannel")
    attrs = op.parse_attrs({"num_outputs": 2, "axis": 0})[0]
    x = data((2, 3), np.float32)
    bases = [data((1, 3), np.float32, seed=1 + i) for i in range(2)]
    outs = [dev.from_numpy(b.copy()) for b in bases]
    run_op(op, attrs, [dev.from_numpy(x)], [(1, 3), (1, 3)], [np.float32] * 2, dev,
           outputs=outs, req=[REQ_NULL, REQ_ADD])
    got = [nbdl.Device.to_numpy(o) for o in outs]
    np.testing.assert_allclose(got[0], bases[0])
    np.testing.assert_allclose(got[1], bases[1] + x[1:], rtol=1e-6)


# -- slice ---------------------------------------------------------------------------------------

X34 = np.arange(1, 13, dtype=np.float32).reshape(3, 4)


def test_slice_mxnet_doc_examples():
    check_symbolic_forward(sym.slice(sym.var("x"), begin=(0, 1), end=(2, 4)), {"x": X34},
                           [np.array([[2, 3, 4], [6, 7, 8]], np.float32)])
    check_symbolic_forward(sym.slice(sym.var("x"), begin=(None, 0), end=(None, 3), step=(-1, 2)),
                           {"x": X34}, [np.array([[9, 11], [5, 7], [1, 3]], np.float32)])


SLICE_CASES = [  # (shape, begin, end, step)
    ((3, 4), (1,), (3,), ()),
    ((3, 4), (-2, 1), (None, -1), ()),
    ((3, 4), (None, None), (None, None), (-1, -1)),
    ((3, 4), (0, 3), (3, 0), (2, -2)),
    ((3, 4), (5, 0), (9, 4), ()),          # begin past the end: empty
    ((3, 4), (-9, 0), (9, 4), ()),         # clamped
    ((3, 4), (2, 0), (1, 4), ()),          # end before begin: empty
    ((2, 3, 4), (0, 1, None), (2, 3, None), (1, 1, 3)),
    ((2, 3, 4), (1,), (None,), (None,)),
    ((0, 3), (0, 1), (None, 3), ()),
    ((3, 1, 4), (None, 0, 1), (None, 1, 4), (2, 1, 1)),
]


@pytest.mark.parametrize("shape,begin,end,step", SLICE_CASES)
@pytest.mark.parametrize("dtype", DTYPES)
def test_slice_grid(shape, begin, end, step, dtype):
    x = data(shape, dtype)
    idx = tuple(slice(b, e, (step[i] if step else None)) for i, (b, e) in enumerate(zip(begin, end)))
    s = sym.slice(sym.var("x"), begin=begin, end=end, step=step)
    check_symbolic_forward(s, {"x": x}, [x[idx]])


def test_slice_string_attrs_and_alias():
    s = sym.crop(sym.var("x"), begin="(None, -1)", end="(None, None)")
    check_symbolic_forward(s, {"x": X34}, [X34[:, -1:]])


@pytest.mark.parametrize("attrs,match", [
    ({"begin": (0, 0), "end": (1,)}, "differ in length"),
    ({"begin": (0,), "end": (1,), "step": (0,)}, "step.*cannot be 0"),
    ({"begin": (0, 0, 0), "end": (1, 1, 1)}, "more entries"),
])
def test_slice_errors(attrs, match):
    with pytest.raises(nbdl.ShapeError, match=f"slice.*{match}.*\\(3, 4\\)"):
        sym.slice(sym.var("x"), **attrs).infer_shape(x=(3, 4))


@pytest.mark.cuda
@pytest.mark.parametrize("begin,end,step", [((0, 1), (2, 4), ()), ((None, None), (None, None), (-1, 2))])
def test_slice_gradient(begin, end, step):
    s = sym.slice(sym.var("x"), begin=begin, end=end, step=step)
    check_numeric_gradient(s, {"x": data((3, 4))})
    check_consistency(s, {"x": data((3, 4), np.float32)})


@pytest.mark.parametrize("device", ["cpu", pytest.param("gpu", marks=pytest.mark.cuda)])
@pytest.mark.parametrize("name,attrs", [
    ("_backward_slice", {"begin": (1, None), "end": (3, None), "step": (1, -2)}),
    ("_backward_slice_axis", {"axis": 1, "begin": 1, "end": 3}),
])
def test_backward_slice_req(device, name, attrs):
    dev = nbdl.Device(device)
    op = get_op(name)
    parsed = op.parse_attrs(attrs)[0]
    fwd = sym.slice if name == "_backward_slice" else sym.slice_axis
    x = data((3, 4), np.float32)
    (y,), _, _ = run_symbol(fwd(sym.var("x"), **attrs), {"x": x})
    g = data(y.shape, np.float32, seed=1)
    # the reference: the gradient of sum(slice(x) * g) is g scattered into zeros
    ref = np.zeros_like(x)
    if name == "_backward_slice":
        ref[1:3, ::-2] = g
    else:
        ref[:, 1:3] = g
    base = data((3, 4), np.float32, seed=2)
    for req, want in [(REQ_WRITE, ref), (REQ_ADD, base + ref), (REQ_NULL, base)]:
        out = dev.from_numpy(base.copy())
        run_op(op, parsed, [dev.from_numpy(g), dev.from_numpy(x)], [(3, 4)], [np.float32], dev,
               outputs=[out], req=[req])
        np.testing.assert_allclose(nbdl.Device.to_numpy(out), want, rtol=1e-6)


# -- slice_axis ----------------------------------------------------------------------------------

@pytest.mark.parametrize("axis,begin,end,expected", [
    (0, 1, 3, [[5, 6, 7, 8], [9, 10, 11, 12]]),
    (1, 0, 2, [[1, 2], [5, 6], [9, 10]]),
    (1, -3, -1, [[2, 3], [6, 7], [10, 11]]),
    (-1, 2, None, [[3, 4], [7, 8], [11, 12]]),
])
def test_slice_axis_mxnet_doc_examples(axis, begin, end, expected):
    s = sym.slice_axis(sym.var("x"), axis=axis, begin=begin, end=end)
    check_symbolic_forward(s, {"x": X34}, [np.array(expected, np.float32)])


@pytest.mark.parametrize("shape,axis,begin,end", [
    ((2, 3, 4), 1, 1, 2), ((2, 3, 4), 0, 0, None), ((2, 3, 4), -1, -3, 4), ((1, 5), 1, 4, 5),
    ((2, 0, 3), 1, 0, None),
])
@pytest.mark.parametrize("dtype", DTYPES)
def test_slice_axis_grid(shape, axis, begin, end, dtype):
    x = data(shape, dtype)
    idx = [slice(None)] * len(shape)
    idx[axis] = slice(begin, end)
    s = sym.slice_axis(sym.var("x"), axis=axis, begin=begin, end=end)
    check_symbolic_forward(s, {"x": x}, [x[tuple(idx)]])


@pytest.mark.parametrize("attrs,match", [
    ({"axis": 1, "begin": 2, "end": 2}, "not a non-empty window"),
    ({"axis": 1, "begin": 0, "end": 5}, r"end=5.*size 4"),
    ({"axis": 0, "begin": -4, "end": None}, "begin=-4"),
    ({"axis": 2, "begin": 0, "end": 1}, "axis=2"),
])
def test_slice_axis_errors(attrs, match):
    with pytest.raises(nbdl.ShapeError, match=f"slice_axis.*{match}"):
        sym.slice_axis(sym.var("x"), **attrs).infer_shape(x=(3, 4))


@pytest.mark.cuda
def test_slice_axis_gradient():
    s = sym.slice_axis(sym.var("x"), axis=1, begin=1, end=-1)
    check_numeric_gradient(s, {"x": data((2, 4, 2))})
    check_consistency(s, {"x": data((2, 4, 2), np.float32)})


def test_slice_then_concat_chain():
    """A small graph: the gradient of slice pieces joined back is the identity."""
    x = sym.var("x")
    s = sym.Concat(sym.slice_axis(x, axis=1, begin=0, end=2), sym.slice_axis(x, axis=1, begin=2, end=None),
                   dim=1)
    v = data((2, 5))
    check_symbolic_forward(s, {"x": v}, [v])
    if has_op("add_n"):
        check_numeric_gradient(s, {"x": v})


# -- second order: the backward ops are linear in out_grad ------------------------------------------

@pytest.mark.parametrize("name,attrs,gshape,dshapes", [
    ("_backward_slice", {"begin": (1,), "end": (None,), "step": (1,)}, (2, 4), [(3, 4)]),
    ("_backward_slice_axis", {"axis": 1, "begin": 1, "end": 3}, (3, 2), [(3, 4)]),
    ("_backward_Concat", {"num_args": 2, "dim": 1}, (2, 5), [(2, 2), (2, 3)]),
    ("_backward_tile", {"reps": (2, 1)}, (4, 3), [(2, 3)]),
    ("_backward_repeat", {"repeats": 2}, (12,), [(2, 3)]),
])
def test_backward_ops_gradient(name, attrs, gshape, dshapes):
    carriers = {f"d{i}": data(s, seed=i + 1) for i, s in enumerate(dshapes)}
    s = getattr(sym, name)(sym.var("g"), *[sym.var(k) for k in carriers], **attrs)
    check_numeric_gradient(s, dict(g=data(gshape), **carriers), grad_nodes=["g"])


# -- _split_v2 (nd.split_v2 / sym.split_v2) ------------------------------------------------

@pytest.mark.parametrize("arg,axis,squeeze", [((1, 3), 2, False), (3, 1, True), (2, 0, False),
                                              ((0, 2), 1, False), ((1, 1), 2, False)])
def test_split_v2(arg, axis, squeeze, rng):
    x = rng.normal(size=(2, 3, 4)).astype(np.float32)
    if isinstance(arg, int):
        pieces = np.split(x, arg, axis=axis)
    else:
        pieces = np.split(x, list(arg), axis=axis)
    if squeeze:
        pieces = [p.squeeze(axis) for p in pieces]
    y = nbdl.sym.split_v2(nbdl.sym.var("x"), arg, axis=axis, squeeze_axis=squeeze)
    check_symbolic_forward(y, {"x": x}, pieces)
    got = nbdl.nd.split_v2(nbdl.nd.array(x), arg, axis=axis, squeeze_axis=squeeze)
    got = got if isinstance(got, list) else [got]
    for a, b in zip(got, pieces):
        np.testing.assert_array_equal(a.asnumpy(), b)
    check_numeric_gradient(y, {"x": x.astype(np.float64)})


@pytest.mark.cuda
def test_split_v2_sections_are_near_equal_and_cuda_matches(rng):
    y = nbdl.sym.split_v2(nbdl.sym.var("x"), 3, axis=2)   # sections: 7 -> 3, 2, 2
    assert y.infer_shape(x=(2, 3, 7))[1] == [(2, 3, 3), (2, 3, 2), (2, 3, 2)]
    check_consistency(y, {"x": rng.normal(size=(2, 3, 7)).astype(np.float32)})
    with pytest.raises(nbdl.ArgumentError, match="does not split into 2 equal"):
        nbdl.nd.split_v2(nbdl.nd.zeros((3,)), 2)
    with pytest.raises(nbdl.ShapeError, match="_split_v2: piece 1 runs from 3 to 2"):
        nbdl.sym.split_v2(nbdl.sym.var("x"), (3, 2), axis=0).infer_shape(x=(4,))
