"""_npx_reshape (MXNet 2's ``npx.reshape`` codes) against hand-written
shapes: every code, reverse, errors, eager vs graph vs hybridized, gradients,
-symbol.json round trips; MXNet 1.x's Reshape codes stay on nd/NDArray/Symbol."""
import json

import numpy as np
import pytest

import nbdl
import nbdl.np as mnp
import nbdl.npx as npx
from nbdl import autograd
from nbdl.gluon import HybridBlock, nn
from nbdl.testing import (assert_almost_equal, check_consistency, check_numeric_gradient,
                          check_symbolic_forward)

sym = nbdl.sym


def data(shape, dtype=np.float64, seed=0):
    return np.random.RandomState(seed).uniform(-1, 1, shape).astype(dtype)


def out_shape(s, **shapes):
    with nbdl.np_shape(True):       # npx.reshape's mode: a 0 dim is a size
        _, outs, _ = s.infer_shape(**shapes)
    return outs[0]


# (input shape, newshape, reverse, expected).  The first six are the examples
# in MXNet 2.0's npx.reshape documentation; the others are worked out by hand.
CASES = [
    ((2, 3, 8), (-2, -2, 2, -1), False, (2, 3, 2, 4)),
    ((8, 3, 3, 3, 4, 4), (-6, 2, -1, -4), False, (2, 4, 3, 3, 3, 4, 4)),
    ((8, 3, 3, 3, 4, 4), (-5, -4), False, (24, 3, 3, 4, 4)),
    ((8, 1, 1, 1, 3), (-2, -3, -3, -3, -2), False, (8, 3)),
    ((8, 3, 3, 3, 3, 8), (-4, -5), True, (8, 3, 3, 3, 24)),
    ((8, 3, 2, 4, 8), (-4, -1, 2, -6), True, (8, 3, 2, 4, 4, 2)),
    # sizes and -1 (numpy's meaning); an int newshape
    ((2, 3, 4), (4, 6), False, (4, 6)),
    ((2, 3, 4), (-1,), False, (24,)),
    ((2, 3, 4), (4, -1), False, (4, 6)),
    ((2, 3, 4), 24, False, (24,)),
    # -2 copies one input dim; a size or -1 steps over one input dim
    ((2, 3, 4), (-2, -1), False, (2, 12)),
    ((2, 3, 4), (-2, -2, -2), False, (2, 3, 4)),
    ((2, 3, 4), (-1, -2), False, (8, 3)),
    ((2, 3, 4), (4, -2, -1), False, (4, 3, 2)),
    # -3 drops a size-1 input dim
    ((1, 3, 1, 4), (-3, -2, -3, -2), False, (3, 4)),
    ((2, 1, 4), (-2, -3, -2), False, (2, 4)),
    ((1, 6), (-3, 2, -1), False, (2, 3)),
    # -4 copies all remaining input dims
    ((2, 3, 4), (-4,), False, (2, 3, 4)),
    ((2, 3, 4), (-2, -4), False, (2, 3, 4)),
    ((2, 3, 4), (-4, 1, 1), False, (2, 3, 4, 1, 1)),
    ((2, 3, 4), (2, -4), False, (2, 3, 4)),
    ((2, 3, 4), (-1, -4), False, (2, 3, 4)),
    # -5 merges two input dims
    ((2, 3, 4), (-5, -2), False, (6, 4)),
    ((2, 3, 4, 5), (-5, -5), False, (6, 20)),
    ((2, 3, 4), (-2, -5), False, (2, 12)),
    ((2, 3, 4), (-5, -1), False, (6, 4)),
    # -6 splits one input dim into the two values that follow (one may be -1)
    ((6, 4), (-6, 2, 3, -2), False, (2, 3, 4)),
    ((6, 4), (-6, -1, 2, -2), False, (3, 2, 4)),
    ((6, 4), (-2, -6, 2, -1), False, (6, 2, 2)),
    ((6, 4), (-6, 3, -1, -1), False, (3, 2, 4)),   # the split's -1 is its own
    # reverse: dims and codes right to left, the result reversed back
    ((2, 3, 4), (-1, -2), True, (6, 4)),
    ((2, 3, 4), (-2, -1), True, (3, 8)),
    ((10, 5, 4), (-1, -2), True, (50, 4)),
    ((2, 3, 4), (-2, -5), True, (2, 12)),
    ((2, 12), (-2, 3, 4, -6), True, (2, 3, 4)),    # reversed, -6 comes after its values
    ((2, 3, 1), (-2, -2, -3), True, (2, 3)),
    ((2, 3, 4), (-4, -1), True, (2, 3, 4)),
    # 0 is a zero-length dim (not "copy"); zero-size inputs
    ((0, 3), (3, 0), False, (3, 0)),
    ((0, 3), (-2, -2), False, (0, 3)),
    ((2, 0), (0, 5), False, (0, 5)),
    ((0, 3), (-5,), False, (0,)),
    ((0, 3), (-1, 3), False, (0, 3)),      # -1 next to known sizes: 0 / 3
    # every dim dropped: a 0-d result
    ((1, 1), (-3, -3), False, ()),
]


@pytest.mark.parametrize("dshape,newshape,reverse,expected", CASES)
def test_codes_eager_and_graph(dshape, newshape, reverse, expected):
    x = data(dshape, np.float32)
    want = x.reshape(expected)
    s = npx.reshape(sym.var("x"), newshape, reverse=reverse)
    assert out_shape(s, x=dshape) == expected
    check_symbolic_forward(s, {"x": x}, [want])
    got = npx.reshape(mnp.array(x), newshape, reverse=reverse)
    assert isinstance(got, nbdl.NDArray) and got.shape == expected
    assert np.array_equal(got.asnumpy(), want)


def test_op_attributes_and_alias():
    s = sym.create("_npx_reshape", sym.var("x"), newshape=(-5, -4))
    assert s.list_arguments() == ["x"]
    assert out_shape(s, x=(2, 3, 4)) == (6, 4)
    s = sym.create("_npi_reshape", sym.var("x"), newshape="(-1, -2)", reverse="1")
    assert out_shape(s, x=(2, 3, 4)) == (6, 4)


# (input shape, newshape, reverse, what the message says)
ERRORS = [
    ((2, 3, 4), (5, -1), False, "24 elements do not divide by 5"),
    ((2, 3, 4), (4, 5), False, r"\(4, 5\) has 20 elements, the input has 24"),
    ((2, 3, 4), (-1, -1), False, "only one dim can be inferred"),
    ((2, 3, 4), (-2, -2, -2, -2), False, "-2 at position 3 has no input dim left"),
    ((2, 3, 4), (6, -2), False, "18 elements"),             # 6 steps over the 2
    ((2, 3, 4), (1, -4), False, "12 elements"),             # 1 steps over the 2
    ((2, 3, 4), (-3, -4), False, "skips only a dim of size 1, the input dim is 2"),
    ((2, 3, 4), (-2, -2, -2, -3), False, "-3 at position 3 has no input dim left"),
    ((2, 3, 4), (-2, -2, -5), False, "-5 at position 2 needs two input dims"),
    ((2, 3, 4), (-5,), True, "12 elements"),
    ((6, 4), (-6, 5, -1, -2), False, "split dims 5, 1 do not multiply to input dim 6"),
    ((6, 4), (-6, -1, -1, -2), False, "cannot both be -1"),
    ((6, 4), (-2, -6, 2), False, "-6 at position 1 must be followed by two dims"),
    ((6, 4), (-6, -2, 3, -2), False, "split dims after -6 must be"),
    ((6, 4), (-2, -2, -6, 1, 1), False, "no input dim left to split"),
    ((2, 3, 4), (-7,), False, "unknown code -7"),
    ((0, 3), (0, -1), False, "zero-size"),
]


@pytest.mark.parametrize("dshape,newshape,reverse,match", ERRORS)
def test_errors_name_op_newshape_and_input(dshape, newshape, reverse, match):
    s = npx.reshape(sym.var("x"), newshape, reverse=reverse)
    with pytest.raises(nbdl.ShapeError, match=match) as info, nbdl.np_shape(True):
        s.infer_shape(x=dshape)
    msg = str(info.value)
    assert "_npx_reshape" in msg and str(dshape) in msg and f"newshape={newshape}" in msg
    with pytest.raises(nbdl.ShapeError, match=match):
        npx.reshape(mnp.zeros(dshape), newshape, reverse=reverse)


def test_bad_arguments():
    with pytest.raises(nbdl.AttrError, match="order='F'"):
        npx.reshape(mnp.zeros((2, 3)), (3, 2), order="F")
    with pytest.raises(nbdl.AttrError, match="newshape"):
        npx.reshape(mnp.zeros((2, 3)), "six")
    with pytest.raises(nbdl.AttrError, match="order"):
        sym.create("_npx_reshape", sym.var("x"), newshape=(6,), order="F")


def test_mxnet1_codes_stay_on_nd_ndarray_and_symbol():
    x = nbdl.nd.array(data((2, 3, 4), np.float32))
    assert x.reshape((-3, -2)).shape == (6, 4)             # 1.x: -3 merges, -2 the rest
    assert nbdl.nd.reshape(x, shape=(0, -1)).shape == (2, 12)   # 1.x: 0 copies
    assert out_shape(sym.var("x").reshape((0, -1)), x=(2, 3, 4)) == (2, 12)
    assert out_shape(sym.Reshape(sym.var("x"), shape=(-4, 1, 2, -2)), x=(2, 3, 4)) == (1, 2, 3, 4)
    assert npx.reshape(x, (-5, -4)).shape == (6, 4)        # 2.0: -5 merges, -4 the rest
    with pytest.raises(nbdl.ShapeError, match="zero-size"):  # 2.0: 0 is a length
        npx.reshape(x, (0, -1))


@pytest.mark.parametrize("newshape,reverse,dshape", [
    ((-6, 2, -1, -2), False, (4, 3)),
    ((-2, -5), False, (2, 3, 2)),
    ((-4, -1, 2, -6), True, (2, 4)),
    ((-3, -2, -1), True, (1, 3, 2)),
])
def test_numeric_gradient(newshape, reverse, dshape):
    s = npx.reshape(sym.var("x"), newshape, reverse=reverse)
    check_numeric_gradient(s, {"x": data(dshape)})


def test_eager_autograd_matches_graph_gradient():
    x_np = data((2, 3, 4), np.float32)
    head = data((2, 12), np.float32, seed=1)
    x = mnp.array(x_np)
    x.attach_grad()
    with autograd.record():
        y = npx.reshape(x, (-4, -5), reverse=True)
    y.backward(mnp.array(head))
    assert_almost_equal(x.grad.asnumpy(), head.reshape(2, 3, 4))


@pytest.mark.cuda
def test_cpu_vs_cuda_simulator():
    check_consistency(npx.reshape(sym.var("x"), (-5, -6, 2, -1)), {"x": data((2, 3, 4), np.float32)})


def test_json_round_trip_and_mxnet2_json():
    s = npx.reshape(sym.var("x"), (-6, 2, -1, -4), reverse=False)
    doc = json.loads(s.tojson())
    node = [n for n in doc["nodes"] if n["op"] != "null"][0]
    assert node["op"] == "_npx_reshape"
    assert set(node["attrs"]) == {"newshape", "reverse", "order"}
    back = sym.load_json(s.tojson())
    assert out_shape(back, x=(8, 3)) == (2, 4, 3)
    # a graph in the form MXNet 2 writes (attribute strings, the _npi alias)
    mx2 = {"nodes": [{"op": "null", "name": "data", "inputs": []},
                     {"op": "_npi_reshape", "name": "reshape0",
                      "attrs": {"newshape": "(-4,-1,2,-6)", "reverse": "1", "order": "C"},
                      "inputs": [[0, 0, 0]]}],
           "arg_nodes": [0], "node_row_ptr": [0, 1, 2], "heads": [[1, 0, 0]],
           "attrs": {"mxnet_version": ["int", 20000]}}
    loaded = sym.load_json(json.dumps(mx2))
    assert out_shape(loaded, data=(8, 3, 2, 4, 8)) == (8, 3, 2, 4, 4, 2)


class SplitHeads(HybridBlock):
    """Gluon 2.0 style: project, split the features into heads, mix, merge back."""

    def __init__(self, heads=2, units=8, **kwargs):
        super().__init__(**kwargs)
        self.heads = heads
        self.proj = nn.Dense(units, flatten=False)

    def forward(self, x):                                     # x: (B, T, C)
        h = self.proj(x)                                      # (B, T, units)
        h = npx.reshape(h, (-2, -2, self.heads, -1))          # (B, T, heads, units/heads)
        h = npx.sigmoid(h) * h
        h = npx.reshape(h, (-4, -5), reverse=True)            # (B, T, units)
        return npx.reshape(h, (-5, -4))                       # (B*T, units)


def test_hybridized_block_equals_eager_and_exports(tmp_path):
    x_np = data((2, 3, 5), np.float32)
    eager, hyb = SplitHeads(), SplitHeads()
    eager.initialize()
    hyb.initialize()
    x = mnp.array(x_np)
    eager(x)
    hyb(x)
    for p, q in zip(eager.collect_params().values(), hyb.collect_params().values()):
        q.set_data(p.data())
    hyb.hybridize()
    results = []
    for net in (eager, hyb):
        xi = mnp.array(x_np)
        xi.attach_grad()
        with autograd.record():
            out = net(xi)
            loss = nbdl.nd.sum(out * out)
        loss.backward()
        assert out.shape == (6, 8)
        results.append((out.asnumpy(), xi.grad.asnumpy(),
                        [p.grad().asnumpy().copy() for p in net.collect_params().values()]))
    (o0, g0, p0), (o1, g1, p1) = results
    assert_almost_equal(o0, o1, rtol=1e-5, atol=1e-6)
    assert_almost_equal(g0, g1, rtol=1e-5, atol=1e-6)
    for a, b in zip(p0, p1):
        assert_almost_equal(a, b, rtol=1e-5, atol=1e-6)
    sym_file, params_file = hyb.export(str(tmp_path / "heads"))
    with open(sym_file) as f:
        assert "_npx_reshape" in f.read()
    blk = nbdl.gluon.SymbolBlock.imports(sym_file, ["data"], params_file)
    assert_almost_equal(blk(x).asnumpy(), o1, rtol=1e-5, atol=1e-6)
