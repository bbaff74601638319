"""Reshape, Flatten, expand_dims, squeeze, reshape_like, transpose, flip,
tile and repeat against numpy references (Concat/split/slice are in
test_shape_concat_slice.py)."""
import itertools

import numpy as np
import pytest

import nbdl
from nbdl.executor.interpret import run_op
from nbdl.ops import REQ_ADD, REQ_NULL, REQ_WRITE, get_op
from nbdl.testing import (check_consistency, check_numeric_gradient, check_symbolic_backward,
                          check_symbolic_forward, run_symbol)

sym = nbdl.sym
DTYPES = [np.float32, np.float64]


def data(shape, dtype=np.float64, seed=0):
    return np.random.RandomState(seed).uniform(-1, 1, shape).astype(dtype)


def out_shape(s, **shapes):
    # NumPy-shape mode: a 0 dim is a size (outside it, MXNet 1.x reads it as unknown)
    with nbdl.np_shape(True):
        _, outs, _ = s.infer_shape(**shapes)
    return outs[0]


# -- Reshape ------------------------------------------------------------------------------

# (input shape, shape, reverse, expected): MXNet's Reshape documentation.
RESHAPE_CASES = [
    ((2, 3, 4), (4, 0, 2), False, (4, 3, 2)),
    ((2, 3, 4), (2, 0, 0), False, (2, 3, 4)),
    ((2, 3, 4), (6, 1, -1), False, (6, 1, 4)),
    ((2, 3, 4), (3, -1, 8), False, (3, 1, 8)),
    ((2, 3, 4), (-1,), False, (24,)),
    ((2, 3, 4), (-2,), False, (2, 3, 4)),
    ((2, 3, 4), (2, -2), False, (2, 3, 4)),
    ((2, 3, 4), (-2, 1, 1), False, (2, 3, 4, 1, 1)),
    ((2, 3, 4), (-3, 4), False, (6, 4)),
    ((2, 3, 4, 5), (-3, -3), False, (6, 20)),
    ((2, 3, 4), (0, -3), False, (2, 12)),
    ((2, 3, 4), (-3, -2), False, (6, 4)),
    ((2, 3, 4), (-4, 1, 2, -2), False, (1, 2, 3, 4)),
    ((2, 3, 4), (2, -4, -1, 3, -2), False, (2, 1, 3, 4)),
    ((10, 5, 4), (-1, 0), False, (40, 5)),
    ((10, 5, 4), (-1, 0), True, (50, 4)),
    # more of the same codes, written out by hand
    ((2, 3, 4), (0, 0, -1), False, (2, 3, 4)),
    ((2, 3, 4), (-1, 0), True, (6, 4)),
    ((2, 3, 4), (0, -1), True, (3, 8)),
    ((6, 4), (-4, 2, 3, 0), False, (2, 3, 4)),
    ((6, 4), (-4, -1, 2, -1), False, (3, 2, 4)),
    ((2, 3, 4), (-3, -1), True, (6, 4)),
    ((2, 12), (0, 3, 4, -4), True, (2, 3, 4)),  # reversed, -4 follows its two dims
    ((0, 3), (-1, 3), False, (0, 3)),
    ((1,), (1, 1, -1), False, (1, 1, 1)),
]


@pytest.mark.parametrize("dshape,codes,reverse,expected", RESHAPE_CASES)
def test_reshape_codes(dshape, codes, reverse, expected):
    s = sym.Reshape(sym.var("x"), shape=codes, reverse=reverse)
    assert out_shape(s, x=dshape) == expected
    x = data(dshape, np.float32)
    check_symbolic_forward(s, {"x": x}, [x.reshape(expected)])


def test_reshape_infer_shape_example():
    s = sym.Reshape(sym.var("x"), shape=(0, -1))
    assert s.infer_shape(x=(2, 3, 4)) == ([(2, 3, 4)], [(2, 12)], [])


@pytest.mark.parametrize("dshape,target,keep_highest,expected", [
    ((2, 3, 4), (4, 6), False, (4, 6)),
    ((2, 3, 4), (0, 4), False, (6, 4)),
    ((2, 3, 4), (9, 0, 4), True, (2, 3, 4)),  # target_shape[0] is replaced by the input's
    ((2, 3, 4), (1, 0), True, (2, 12)),
])
def test_reshape_legacy_target_shape(dshape, target, keep_highest, expected):
    s = sym.Reshape(sym.var("x"), target_shape=target, keep_highest=keep_highest)
    assert out_shape(s, x=dshape) == expected


@pytest.mark.parametrize("attrs,match", [
    ({"shape": (5, -1)}, r"\(2, 3, 4\).*shape=\(5, -1\).*20 elements"),
    ({"shape": (-1, -1)}, "only one dim"),
    ({"shape": (0, 0, 0, 0)}, "no input dim left"),
    ({"shape": (2, 0, -3)}, "-3 .*needs two input dims"),
    ({"shape": (-4, 5, -1, 0, 0)}, "do not multiply"),
    ({"shape": (-4, -1, -1, 0, 0)}, "cannot both be -1"),
    ({"shape": (-4, 2)}, "followed by two dims"),
    ({"shape": (-5,)}, "unknown code -5"),
    ({}, "target shape is missing"),
    ({"shape": (24,), "target_shape": (24,)}, "not both"),
    ({"shape": (24,), "keep_highest": True}, "keep_highest"),
    ({"target_shape": (5, 0, 0)}, "one dim"),
    ({"target_shape": (5, 5)}, r"target_shape=\(5, 5\)"),
])
def test_reshape_errors(attrs, match):
    s = sym.Reshape(sym.var("x"), name="r", **attrs)
    with pytest.raises(nbdl.ShapeError, match=match) as info:
        s.infer_shape(x=(2, 3, 4))
    assert "Reshape" in str(info.value)


def test_reshape_zero_size_infer_error():
    with pytest.raises(nbdl.ShapeError, match="zero-size"), nbdl.np_shape(True):
        sym.Reshape(sym.var("x"), shape=(0, -1)).infer_shape(x=(0, 3))


SHAPES = [(3, 4), (1,), (0, 3), (2, 1, 3), (1, 1)]


@pytest.mark.parametrize("shape", SHAPES)
@pytest.mark.parametrize("dtype", DTYPES + [np.int32])
def test_reshape_flatten_grid(shape, dtype):
    x = data(shape, dtype) if dtype != np.int32 else np.arange(int(np.prod(shape)),
                                                               dtype=dtype).reshape(shape)
    check_symbolic_forward(sym.reshape(sym.var("x"), shape=(-1,)), {"x": x}, [x.reshape(-1)])
    check_symbolic_forward(sym.Reshape(sym.var("x"), shape=(-2, 1)), {"x": x},
                           [x.reshape(shape + (1,))])
    check_symbolic_forward(sym.flatten(sym.var("x")), {"x": x},
                           [x.reshape(shape[0], int(np.prod(shape[1:])))])


@pytest.mark.cuda
def test_reshape_fluent_and_gradient():
    s = sym.var("x").reshape((4, -1))
    assert out_shape(s, x=(2, 3, 2)) == (4, 3)
    check_numeric_gradient(s, {"x": data((2, 3, 2))})
    s = sym.Reshape(sym.var("x"), shape=(0, -1), reverse=True)
    assert out_shape(s, x=(2, 3, 2)) == (3, 4)
    check_numeric_gradient(s, {"x": data((2, 3, 2))})
    check_consistency(sym.Reshape(sym.var("x"), shape=(-1,)), {"x": data((2, 3), np.float32)})


@pytest.mark.cuda
def test_flatten():
    assert out_shape(sym.Flatten(sym.var("x")), x=(2, 3, 4, 5)) == (2, 60)
    assert out_shape(sym.Flatten(sym.var("x")), x=(5,)) == (5, 1)
    with pytest.raises(nbdl.ShapeError, match="Flatten.*0-d"):
        get_op("Flatten").infer_shape({}, [()], [None])
    check_numeric_gradient(sym.Flatten(sym.var("x")), {"x": data((2, 2, 3))})
    check_consistency(sym.Flatten(sym.var("x")), {"x": data((2, 2, 3), np.float32)})


# -- expand_dims / squeeze ---------------------------------------------------------------------

@pytest.mark.parametrize("axis", range(-4, 4))
def test_expand_dims(axis):
    x = data((2, 3, 4), np.float32)
    s = sym.expand_dims(sym.var("x"), axis=axis)
    check_symbolic_forward(s, {"x": x}, [np.expand_dims(x, axis)])


@pytest.mark.cuda
def test_expand_dims_rules():
    op = get_op("expand_dims")
    assert op.infer_shape({"axis": 1}, [None], [(2, 1, 3)]) == ([(2, 3)], [(2, 1, 3)])
    assert op.infer_shape({"axis": -1}, [None], [(2, 3, 1)])[0] == [(2, 3)]
    with pytest.raises(nbdl.ShapeError, match="expand_dims.*axis=4"):
        sym.expand_dims(sym.var("x"), axis=4).infer_shape(x=(2, 3, 4))
    with pytest.raises(nbdl.ShapeError, match="not 1"):
        op.infer_shape({"axis": 0}, [None], [(2, 3)])
    check_numeric_gradient(sym.expand_dims(sym.var("x"), axis=1), {"x": data((2, 3))})
    check_consistency(sym.expand_dims(sym.var("x"), axis=0), {"x": data((3,), np.float32)})


@pytest.mark.parametrize("shape,axis,expected", [
    ((2, 1, 3, 1), None, (2, 3)),
    ((2, 1, 3, 1), (1,), (2, 3, 1)),
    ((2, 1, 3, 1), (-1, 1), (2, 3)),
    ((1, 1), None, (1,)),          # MXNet 1.x keeps one dim
    ((2, 3), None, (2, 3)),
    ((0, 1), None, (0,)),
])
def test_squeeze(shape, axis, expected):
    x = data(shape, np.float32)
    s = sym.squeeze(sym.var("x"), axis=axis)
    assert out_shape(s, x=shape) == expected
    check_symbolic_forward(s, {"x": x}, [x.reshape(expected)])


@pytest.mark.cuda
def test_squeeze_errors_and_gradient():
    with pytest.raises(nbdl.ShapeError, match=r"squeeze.*axis 0 of size 2.*\(2, 1, 3\)"):
        sym.squeeze(sym.var("x"), axis=(0,)).infer_shape(x=(2, 1, 3))
    with pytest.raises(nbdl.ShapeError, match="repeats"):
        sym.squeeze(sym.var("x"), axis=(1, -2)).infer_shape(x=(2, 1, 3))
    check_numeric_gradient(sym.squeeze(sym.var("x")), {"x": data((2, 1, 3))})
    check_consistency(sym.squeeze(sym.var("x")), {"x": data((2, 1, 3), np.float32)})


# -- reshape_like ----------------------------------------------------------------------------

@pytest.mark.cuda
def test_reshape_like():
    a, b = data((2, 6)), data((3, 4))
    s = sym.reshape_like(sym.var("a"), sym.var("b"))
    check_symbolic_forward(s, {"a": a, "b": b}, [a.reshape(3, 4)])
    check_numeric_gradient(s, {"a": a, "b": b}, grad_nodes=["a"])
    check_consistency(s, {"a": a.astype(np.float32), "b": b.astype(np.float32)}, grad=False)
    g = data((3, 4), seed=2)
    check_symbolic_backward(s, {"a": a, "b": b}, [g], {"a": g.reshape(2, 6)}, device=nbdl.gpu())
    # a sub-range of the shapes (MXNet's lhs_begin/lhs_end/rhs_begin/rhs_end)
    s = sym.reshape_like(sym.var("a"), sym.var("b"), lhs_begin=1, lhs_end=2, rhs_begin=0, rhs_end=2)
    assert out_shape(s, a=(30, 12), b=(4, 3, 5)) == (30, 4, 3)
    with pytest.raises(nbdl.ShapeError, match=r"reshape_like.*\(2, 6\).*\(5, 4\)"):
        sym.reshape_like(sym.var("a"), sym.var("b")).infer_shape(a=(2, 6), b=(5, 4))


# -- transpose --------------------------------------------------------------------------------

@pytest.mark.parametrize("axes", list(itertools.permutations(range(3))) + [()])
def test_transpose_3d(axes):
    x = data((2, 3, 4), np.float32)
    s = sym.transpose(sym.var("x"), axes=axes)
    check_symbolic_forward(s, {"x": x}, [np.transpose(x, axes or None)])


@pytest.mark.parametrize("shape,axes", [
    ((37, 70), (1, 0)),            # blocked 2-D path, partial blocks
    ((3, 33, 40), (0, 2, 1)),      # batched 2-D path
    ((2, 3, 4, 5), (2, 0, 3, 1)),  # generic strided walk
    ((2, 3, 4, 5), (0, 1, 3, 2)),  # merges to batched 2-D
    ((2, 3, 4, 5), (-1, 0, -3, 2)),
    ((1, 5, 1), (2, 1, 0)),
    ((4, 0, 3), (2, 0, 1)),
    ((7,), ()),
    ((2, 3, 2, 3, 2, 3, 2), (6, 4, 2, 0, 5, 3, 1)),
])
@pytest.mark.parametrize("dtype", DTYPES + [np.int64])
def test_transpose_grid(shape, axes, dtype):
    x = (data(shape) * 100).astype(dtype)
    s = sym.transpose(sym.var("x"), axes=axes)
    check_symbolic_forward(s, {"x": x}, [np.transpose(x, axes or None)])


def test_transpose_rules_and_errors():
    op = get_op("transpose")
    assert op.infer_shape({"axes": (1, 2, 0)}, [None], [(3, 4, 2)])[0] == [(2, 3, 4)]
    for axes, match in [((0, 1), "2 entries"), ((0, 0, 1), "not a permutation"),
                        ((0, 1, 3), "out of range")]:
        with pytest.raises(nbdl.ShapeError, match=f"transpose.*{match}"):
            sym.transpose(sym.var("x"), axes=axes).infer_shape(x=(2, 3, 4))


@pytest.mark.cuda
@pytest.mark.parametrize("axes", [(1, 0, 2), (2, 0, 1), ()])
def test_transpose_gradient(axes):
    s = sym.transpose(sym.var("x"), axes=axes)
    check_numeric_gradient(s, {"x": data((2, 3, 2))})
    check_consistency(s, {"x": data((2, 3, 2), np.float32)})


@pytest.mark.cuda
def test_transpose_cuda_2d_path():
    check_consistency(sym.transpose(sym.var("x")), {"x": data((3, 5), np.float32)})


# -- flip / tile / repeat ---------------------------------------------------------------------

@pytest.mark.parametrize("axis", [(0,), (1,), (-1,), (0, 2), (0, 1, 2)])
def test_flip(axis):
    x = data((2, 3, 4), np.float32)
    s = sym.flip(sym.var("x"), axis=axis)
    check_symbolic_forward(s, {"x": x}, [np.flip(x, axis)])
    check_symbolic_forward(sym.reverse(sym.var("x"), axis=axis), {"x": x}, [np.flip(x, axis)])


@pytest.mark.cuda
def test_flip_gradient_and_errors():
    check_numeric_gradient(sym.flip(sym.var("x"), axis=(1,)), {"x": data((2, 3))})
    check_consistency(sym.flip(sym.var("x"), axis=(0, 1)), {"x": data((2, 3), np.float32)})
    check_symbolic_forward(sym.flip(sym.var("x"), axis=(0,)), {"x": np.zeros((0, 2))}, [np.zeros((0, 2))])
    with pytest.raises(nbdl.ShapeError, match="reverse.*axis=2"):
        sym.flip(sym.var("x"), axis=(2,)).infer_shape(x=(2, 3))


@pytest.mark.parametrize("shape,reps", [
    ((2, 3), (2, 2)), ((2, 3), (3,)), ((2, 3), (2, 1, 2)), ((3,), ()),
    ((1, 2, 1), (3, 1, 2)), ((0, 2), (2, 2)),
])
@pytest.mark.parametrize("dtype", DTYPES)
def test_tile(shape, reps, dtype):
    x = data(shape, dtype)
    check_symbolic_forward(sym.tile(sym.var("x"), reps=reps), {"x": x}, [np.tile(x, reps)])


@pytest.mark.parametrize("shape,repeats,axis", [
    ((2, 3), 2, None), ((2, 3), 3, 0), ((2, 3), 2, -1), ((2, 1, 3), 1, 1), ((2, 3), 0, 1),
])
@pytest.mark.parametrize("dtype", DTYPES)
def test_repeat(shape, repeats, axis, dtype):
    x = data(shape, dtype)
    s = sym.repeat(sym.var("x"), repeats=repeats, axis=axis)
    check_symbolic_forward(s, {"x": x}, [np.repeat(x, repeats, axis)])


@pytest.mark.cuda
def test_tile_repeat_gradient():
    for s in [sym.tile(sym.var("x"), reps=(2, 1, 2)), sym.repeat(sym.var("x"), repeats=2, axis=1),
              sym.repeat(sym.var("x"), repeats=3)]:
        check_numeric_gradient(s, {"x": data((2, 3))})
        check_consistency(s, {"x": data((2, 3), np.float32)})
    with pytest.raises(nbdl.ShapeError, match="repeats=-1"):
        sym.repeat(sym.var("x"), repeats=-1).infer_shape(x=(2, 3))
    for reps in [(1, 2, -3), (1, 0, 3)]:     # MXNet 1.x's tile refuses a 0 rep too
        with pytest.raises(nbdl.ShapeError, match=r"tile: reps=.*positive"):
            sym.tile(sym.var("x"), reps=reps).infer_shape(x=(2, 3))


# -- req handling and inplace ---------------------------------------------------------------------

REQ_OPS = [
    ("Reshape", {"shape": (3, 2)}),
    ("expand_dims", {"axis": 0}),
    ("transpose", {}),
    ("transpose", {"axes": (0, 1)}),
    ("reverse", {"axis": (1,)}),
    ("tile", {"reps": (1, 2)}),
    ("repeat", {"repeats": 2, "axis": 0}),
]


@pytest.mark.parametrize("device", ["cpu", pytest.param("gpu", marks=pytest.mark.cuda)])
@pytest.mark.parametrize("name,attrs", REQ_OPS)
def test_req_add_and_null(name, attrs, device):
    dev = nbdl.Device(device)
    op = get_op(name)
    parsed, _ = op.parse_attrs(attrs)
    x = data((2, 3), np.float32)
    (expect,), _, _ = run_symbol(getattr(sym, name)(sym.var("x"), **attrs),
                                 {"x": x})
    _, (oshape,) = op.infer_shape(parsed, [x.shape], [None])
    base = data(oshape, np.float32, seed=1)
    for req, want in [(REQ_ADD, base + expect), (REQ_NULL, base), (REQ_WRITE, expect)]:
        out = dev.from_numpy(base.copy())
        run_op(op, parsed, [dev.from_numpy(x)], [oshape], [np.float32], dev, outputs=[out], req=[req])
        np.testing.assert_allclose(nbdl.Device.to_numpy(out), want, rtol=1e-6)


@pytest.mark.parametrize("name,attrs", [("Reshape", {"shape": (-1,)}), ("Flatten", {}),
                                        ("expand_dims", {"axis": 1}), ("squeeze", {})])
def test_inplace_alias(name, attrs):
    """The planner may give the output the input's buffer: the kernel must
    then leave the data as it is."""
    op = get_op(name)
    assert op.inplace(op.parse_attrs(attrs)[0]) == [(0, 0)]
    x = data((4, 1, 3), np.float32)
    keep = x.copy()
    parsed, _ = op.parse_attrs(attrs)
    _, (oshape,) = op.infer_shape(parsed, [x.shape], [None])
    run_op(op, parsed, [x], [oshape], [np.float32], nbdl.cpu(), outputs=[x.reshape(oshape)])
    np.testing.assert_array_equal(x, keep)
