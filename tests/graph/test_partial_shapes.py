"""Partial shapes (MXNet 1.x's unknown dims): a 0 dim given to infer_shape /
infer_shape_partial, in a variable's shape= or in a fill's shape is unknown
outside NumPy-shape mode (-1 inside it), and the shape rules written for
partial shapes (nbdl.ops.partial_shape) infer it from either side."""
import numpy as np
import pytest

import nbdl
from nbdl.errors import ShapeError
from nbdl.ops.partial_shape import fill_one_unknown, merge

S = nbdl.sym


def partial_out(sym, **shapes):
    return sym.infer_shape_partial(**shapes)[1][0]


def test_merge_and_fill_one_unknown():
    assert merge((-1, 4, -1), (6, -1, -1)) == (6, 4, -1)
    assert merge(None, (2, -1)) == (2, -1)
    with pytest.raises(ShapeError, match=r"node x: shape of 'y' is inferred as \(3, \?\) but "
                                         r"was already \(2, \?\)"):
        merge((2, -1), (3, -1), "node x", "'y'")
    with pytest.raises(ShapeError):
        merge((2, 3), (2, 3, 1))
    assert fill_one_unknown((4, -1, 5), 60) == (4, 3, 5)
    assert fill_one_unknown((4, -1, -1), 60) == (4, -1, -1)     # two unknown: no answer
    assert fill_one_unknown((4, -1), 6) == (4, -1)              # does not divide


def test_elementwise_partial_shapes_complete_each_other():
    a = S.var("a", shape=(0, 7))
    b = S.var("b", shape=(9, 0))
    args, outs, _ = (S.exp(a) * b).infer_shape()
    assert args == [(9, 7), (9, 7)] and outs == [(9, 7)]
    with pytest.raises(ShapeError, match="elemwise_mul"):
        (a * S.var("c", shape=(9, 6))).infer_shape()


# (input shape, Reshape codes, reverse): the input with one dim held out (0)
# is found back from the output, which an elementwise op with a known shape fixes
RESHAPES = [((3, 4, 5), (0, -1), False), ((3, 4, 5), (-1, 0, 0), False),
            ((3, 4, 5), (-3, 0), False), ((3, 4, 5), (6, -1, -2), False),
            ((24,), (-4, 6, -1), False), ((2, 12, 5), (0, -4, -1, 4, 0), False),
            ((3, 4, 5), (0, -1), True), ((3, 4, 5), (-1, 0), True)]


@pytest.mark.parametrize("src,codes,reverse", RESHAPES)
def test_reshape_finds_a_held_out_input_dim_from_its_output(src, codes, reverse):
    full_out = S.Reshape(S.var("x"), shape=codes, reverse=reverse).infer_shape(x=src)[1][0]
    for i in range(len(src)):
        held = tuple(0 if j == i else d for j, d in enumerate(src))
        net = S.Reshape(S.var("x"), shape=codes, reverse=reverse) + S.ones(shape=full_out)
        args, outs, _ = net.infer_shape(x=held)
        assert args == [src] and outs == [full_out]


def test_reshape_partial_codes():
    x = S.var("x")
    # 0 copies an unknown dim, -1 next to one stays unknown, -3 of an unknown is unknown
    assert partial_out(S.Reshape(x, shape=(0, -1)), x=(0, 6, 2)) == (0, 0)
    assert partial_out(S.Reshape(x, shape=(-1, 0)), x=(0, 6, 2)) == (0, 6)
    assert partial_out(S.Reshape(x, shape=(-3, 0)), x=(4, 0, 2)) == (0, 2)
    assert partial_out(S.Reshape(x, shape=(-4, 2, -1, 0)), x=(0, 5)) == (2, 0, 5)
    with nbdl.np_shape(True):
        assert partial_out(S.Reshape(x, shape=(0, -1)), x=(-1, 6, 2)) == (-1, -1)


def test_transpose_both_ways():
    x = S.var("x")
    t = S.transpose(x, axes=(2, 0, 1))
    assert partial_out(t, x=(0, 3, 5)) == (5, 0, 3)
    args, _, _ = (t + S.var("y", shape=(5, 2, 0))).infer_shape(x=(0, 3, 0))
    assert args == [(2, 3, 5), (5, 2, 3)]


def test_fill_ops_with_unknown_dims_bind_and_run():
    # sym.ones(shape=(-1, -1)) / (k, -1): found from the consumer; the graph then runs
    both = S.ones(shape=(2, 4)) + S.transpose(S.ones(shape=(-1, -1)))
    mixed = S.ones(shape=(2, -1)) * 3.0 + S.transpose(S.zeros(shape=(4, 0)))
    for net, want in ((both, 2.0), (mixed, 3.0)):
        ex = net.bind(nbdl.cpu(), args={})
        out = ex.forward()[0].asnumpy()
        np.testing.assert_array_equal(out, np.full((2, 4), want, np.float32))
    # a fill whose dims nothing gives: unknown (0 outside NumPy-shape mode)
    assert partial_out(S.zeros(shape=(3, 0)) * 2.0) == (3, 0)
    with pytest.warns(UserWarning):
        assert S.zeros(shape=(3, 0)).infer_shape() == (None, None, None)


def test_slice_and_slice_axis_keep_unknown_dims_unknown():
    x = S.var("x", shape=(0, 12))
    assert partial_out(S.slice(x, begin=(None, 2), end=(None, 11), step=(None, 3))) == (0, 3)
    assert partial_out(S.slice(x, begin=(1, 2), end=(4, None))) == (0, 10)
    y = S.var("y", shape=(6, 0))
    assert partial_out(S.slice_axis(y, axis=0, begin=1, end=-1)) == (4, 0)
    assert partial_out(S.slice_axis(y, axis=1, begin=1, end=3)) == (6, 0)
    with nbdl.np_shape(True):
        z = S.var("z", shape=(-1, 12))
        assert partial_out(S.slice(z, begin=(None, 4), end=(None, None))) == (-1, 8)


def test_fully_connected_and_convolution():
    fc = S.FullyConnected(S.var("x", shape=(0, 6)), num_hidden=4, name="fc")
    args, outs, _ = fc.infer_shape_partial()
    assert args == [(0, 6), (4, 6), (4,)] and outs == [(0, 4)]
    # the batch back from the output
    args, _, _ = (fc + S.var("y", shape=(3, 4))).infer_shape()
    assert args[0] == (3, 6)
    conv = S.Convolution(S.var("d", shape=(0, 6, 0, 9)), kernel=(3, 3), pad=(1, 0),
                         num_filter=8, num_group=2, name="c")
    args, outs, _ = conv.infer_shape_partial()
    assert args[1] == (8, 3, 3, 3) and outs == [(0, 8, 0, 7)]
    # stride 1: the spatial dims come back from the output; the batch always does
    args, _, _ = (conv + S.var("o", shape=(2, 8, 5, 7))).infer_shape()
    assert args[0] == (2, 6, 5, 9)
    strided = S.Convolution(S.var("d", shape=(0, 6, 0, 9)), kernel=(3, 3), stride=(2, 2),
                            num_filter=8, no_bias=True)
    args, _, _ = (strided + S.var("o", shape=(2, 8, 5, 4))).infer_shape_partial()
    assert args[0] == (2, 6, 0, 9)


def test_concat_dot_embedding_pick_where():
    a, b = S.var("a", shape=(0, 4)), S.var("b", shape=(0, 2))
    cat = S.Concat(a, b, dim=1)
    assert partial_out(cat) == (0, 6)
    args, _, _ = (cat + S.var("c", shape=(5, 0))).infer_shape()
    assert args == [(5, 4), (5, 2), (5, 6)]
    # one input's size along dim from the output's
    args, _, _ = (S.Concat(S.var("p", shape=(3, 0)), S.var("q", shape=(3, 2)), dim=1)
                  + S.var("r", shape=(3, 7))).infer_shape()
    assert args[0] == (3, 5)
    x, y = S.var("x"), S.var("y")
    assert partial_out(S.dot(x, y), x=(0, 2, 3), y=(3, 4)) == (0, 2, 4)
    assert partial_out(S.dot(x, y, transpose_b=True), x=(2, 0), y=(5, 0)) == (2, 5)
    assert partial_out(S.batch_dot(x, y), x=(0, 2, 3), y=(0, 3, 4)) == (0, 2, 4)
    assert partial_out(S.batch_dot(x, y), x=(0, 2, 3), y=(0, 0, 4)) == ()   # as MXNet
    with pytest.raises(ShapeError, match="inner dimensions"):
        S.dot(x, y).infer_shape_partial(x=(0, 3), y=(4, 2))
    emb = S.Embedding(x, y, input_dim=20, output_dim=3)
    assert partial_out(emb, x=(0, 7), y=(20, 3)) == (0, 7, 3)
    assert partial_out(S.pick(x, y, axis=2), x=(0, 4, 5), y=(0, 4)) == (0, 4)
    cond = S.var("cond")
    where = S.where(cond, x, y)
    assert partial_out(where, cond=(3, 2), x=(0, 2), y=(3, 0)) == (3, 2)
    # a condition known only in part infers nothing, as in MXNet
    assert partial_out(where, cond=(0,), x=(3, 2), y=(3, 2)) == ()


def test_numpy_shape_mode_reports_minus_one_and_none():
    x = S.var("x")
    net = S.transpose(S.var("x")) * 2.0
    with nbdl.np_shape(True):
        assert net.infer_shape_partial(x=(-1, 3)) == ([(-1, 3)], [(3, -1)], [])
        assert net.infer_shape_partial() == ([None], [None], [])
        # a 0 is a size here
        assert net.infer_shape_partial(x=(0, 3))[1] == [(3, 0)]
    assert net.infer_shape_partial() == ([()], [()], [])
    assert S.transpose(x).infer_shape(x=(4, 2))[1] == [(2, 4)]


def test_legacy_symbol_file_read_in_numpy_shape_mode():
    # a file written outside NumPy-shape mode (no is_np_shape attribute): its
    # variables' 0 dims stay unknown when it is read inside the mode, as MXNet
    # converts them; a file written inside the mode keeps 0 as a size
    net = S.FullyConnected(S.var("x"), S.var("w", shape=(5, 0)), num_hidden=5)
    legacy = net.tojson()
    with nbdl.np_shape(True):
        args, _, _ = S.load_json(legacy).infer_shape(x=(2, 7))
        assert args[1] == (5, 7)
        with pytest.raises(ShapeError, match=r"weight.*\(5, 0\)"):
            S.load_json(net.tojson()).infer_shape(x=(2, 7))


def test_deferred_gluon_parameter_in_numpy_shape_mode():
    # Gluon's unknown parameter dims (0) are declared -1 in NumPy-shape mode,
    # as MXNet's Parameter.shape gives them, so the data's shape fills them
    with nbdl.np_shape(True):
        dense = nbdl.gluon.nn.Dense(4)
        dense.initialize()
        out = dense(nbdl.nd.zeros((2, 6)))
        assert out.shape == (2, 4) and dense.weight.shape == (4, 6)
        assert dense.weight.var().attr("__shape__") == "(4, 6)"
        # a symbol file may hold -1 (unknown) in a variable's shape
        net = S.FullyConnected(S.var("x"), S.var("w", shape=(4, -1)), num_hidden=4)
        assert S.load_json(net.tojson()).infer_shape(x=(2, 6))[0][1] == (4, 6)
