import numpy as np
import pytest

import nbdl
from nbdl.device import cpu, gpu
from nbdl.ops.registry import REQ_ADD, REQ_NULL, Call, get_op, pick_args
from nbdl.testing import (assert_almost_equal, check_consistency, check_numeric_gradient,
                          check_symbolic_backward, check_symbolic_forward)


# -- numpy references (MXNet semantics) ------------------------------------------------

def _lengths(x, lens, axis):
    T, N = x.shape[axis], x.shape[1 - axis]
    return [T] * N if lens is None else [int(v) for v in lens]


def np_mask(x, lens=None, axis=0, value=0.0):
    out = x.copy()
    for n, L in enumerate(_lengths(x, lens, axis)):
        for t in range(max(L, 0), x.shape[axis]):
            if axis == 0:
                out[t, n] = value
            else:
                out[n, t] = value
    return out


def np_last(x, lens=None, axis=0):
    T = x.shape[axis]
    rows = []
    for n, L in enumerate(_lengths(x, lens, axis)):
        t = min(max(L, 1), T) - 1
        rows.append(x[t, n] if axis == 0 else x[n, t])
    return np.stack(rows) if rows else np.zeros(
        tuple(d for i, d in enumerate(x.shape) if i != axis), x.dtype)


def np_reverse(x, lens=None):
    out = x.copy()
    for n, L in enumerate(_lengths(x, lens, 0)):
        L = min(max(L, 0), x.shape[0])
        out[:L, n] = x[:L, n][::-1]
    return out


def np_last_grad(og, x, lens=None, axis=0):
    g = np.zeros_like(x)
    T = x.shape[axis]
    for n, L in enumerate(_lengths(x, lens, axis)):
        t = min(max(L, 1), T) - 1
        if axis == 0:
            g[t, n] += og[n]
        else:
            g[n, t] += og[n]
    return g


def sym(opname, use, **kw):
    args = [nbdl.sym.var("x")] + ([nbdl.sym.var("l")] if use else [])
    return getattr(nbdl.sym, opname)(*args, use_sequence_length=use, **kw)


def tol(dtype):
    return dict(rtol=1e-6, atol=1e-7) if dtype == np.float64 else dict(rtol=1e-5, atol=1e-6)


SHAPES = [((4, 3, 2), 0), ((4, 3), 0), ((3, 4, 2, 2), 1), ((1, 1), 0), ((2, 1, 3), 1),
          ((0, 3, 2), 0), ((3, 0), 1), ((2, 0, 2), 0)]


def loc_for(rng, shape, axis, dtype, len_dtype=np.float32):
    T, N = shape[axis], shape[1 - axis]
    return {"x": rng.uniform(-2, 2, shape).astype(dtype),
            "l": rng.randint(0, T + 2, size=N).astype(len_dtype)}


# -- forward -----------------------------------------------------------------------------

@pytest.mark.parametrize("dtype", [np.float32, np.float64])
@pytest.mark.parametrize("shape,axis", SHAPES)
@pytest.mark.parametrize("use", [True, False])
def test_sequence_mask_forward(dtype, shape, axis, use, rng):
    loc = loc_for(rng, shape, axis, dtype)
    if not use:
        del loc["l"]
    want = np_mask(loc["x"], loc.get("l"), axis, value=-1.5)
    outs = check_symbolic_forward(sym("SequenceMask", use, axis=axis, value=-1.5), loc, [want],
                                  **tol(dtype))
    assert outs[0].dtype == dtype


@pytest.mark.parametrize("dtype", [np.float32, np.float64])
@pytest.mark.parametrize("shape,axis", [s for s in SHAPES if s[0][s[1]] > 0 or 0 in
                                        [d for i, d in enumerate(s[0]) if i != s[1]]])
@pytest.mark.parametrize("use", [True, False])
def test_sequence_last_forward(dtype, shape, axis, use, rng):
    loc = loc_for(rng, shape, axis, dtype)
    if not use:
        del loc["l"]
    want = np_last(loc["x"], loc.get("l"), axis)
    outs = check_symbolic_forward(sym("SequenceLast", use, axis=axis), loc, [want], **tol(dtype))
    assert outs[0].shape == want.shape and outs[0].dtype == dtype


@pytest.mark.parametrize("dtype", [np.float32, np.float64])
@pytest.mark.parametrize("shape", [(4, 3, 2), (5, 2), (1, 1), (0, 2), (3, 0, 2)])
@pytest.mark.parametrize("use", [True, False])
def test_sequence_reverse_forward(dtype, shape, use, rng):
    loc = loc_for(rng, shape, 0, dtype)
    if not use:
        del loc["l"]
    check_symbolic_forward(sym("SequenceReverse", use), loc,
                           [np_reverse(loc["x"], loc.get("l"))], **tol(dtype))


@pytest.mark.parametrize("len_dtype", [np.int32, np.int64, np.float64])
def test_integer_and_fractional_lengths(len_dtype, rng):
    x = rng.uniform(-1, 1, (4, 3, 2)).astype(np.float32)
    lens = np.array([2.7, 0, 4] if len_dtype == np.float64 else [2, 0, 4], len_dtype)
    loc = {"x": x, "l": lens}
    check_symbolic_forward(sym("SequenceMask", True), loc, [np_mask(x, lens)])
    check_symbolic_forward(sym("SequenceLast", True), loc, [np_last(x, lens)])
    check_symbolic_forward(sym("SequenceReverse", True), loc, [np_reverse(x, lens)])
    assert np.array_equal(np_last(x, lens)[0], x[1, 0])   # 2.7 truncates to 2


def test_ndarray_calls(rng):
    x = rng.uniform(-1, 1, (3, 2, 4)).astype(np.float32)
    lens = np.array([1, 3], np.float32)
    out = nbdl.nd.SequenceMask(nbdl.nd.array(x), nbdl.nd.array(lens), use_sequence_length=True,
                               value=7.0)
    assert_almost_equal(out.asnumpy(), np_mask(x, lens, value=7.0))
    out = nbdl.nd.SequenceLast(nbdl.nd.array(x.transpose(1, 0, 2)), nbdl.nd.array(lens),
                               use_sequence_length=True, axis=1)
    assert_almost_equal(out.asnumpy(), np_last(x, lens))
    out = nbdl.nd.SequenceReverse(nbdl.nd.array(x))
    assert_almost_equal(out.asnumpy(), x[::-1])


# -- gradients ---------------------------------------------------------------------------

@pytest.mark.parametrize("dtype", [np.float32, np.float64])
@pytest.mark.parametrize("shape,axis", [((4, 3, 2), 0), ((3, 4, 2), 1)])
def test_backward_formulas(dtype, shape, axis, rng):
    loc = loc_for(rng, shape, axis, dtype)
    x, lens = loc["x"], loc["l"]
    og = rng.normal(size=shape).astype(dtype)
    check_symbolic_backward(sym("SequenceMask", True, axis=axis, value=3.0), loc, [og],
                            {"x": np_mask(og, lens, axis, 0.0)}, **tol(dtype))
    og_last = rng.normal(size=np_last(x, lens, axis).shape).astype(dtype)
    check_symbolic_backward(sym("SequenceLast", True, axis=axis), loc, [og_last],
                            {"x": np_last_grad(og_last, x, lens, axis)},
                            **tol(dtype))
    if axis == 0:
        # reversing is a permutation that is its own inverse
        check_symbolic_backward(sym("SequenceReverse", True), loc, [og],
                                {"x": np_reverse(og, lens)}, **tol(dtype))


@pytest.mark.parametrize("opname,axis", [("SequenceMask", 0), ("SequenceMask", 1),
                                         ("SequenceLast", 0), ("SequenceLast", 1),
                                         ("SequenceReverse", 0)])
@pytest.mark.parametrize("use", [True, False])
def test_numeric_gradient(opname, axis, use, rng):
    loc = loc_for(rng, (3, 2, 2), axis, np.float64)
    loc["l"] = np.array([2.0, 3.0]) if axis == 0 else np.array([2.0, 1.0, 0.0])
    if not use:
        del loc["l"]
    check_numeric_gradient(sym(opname, use, axis=axis), loc,
                           grad_nodes=["x"] if use else None)


def test_no_gradient_to_lengths(rng):
    loc = loc_for(rng, (3, 2), 0, np.float64)
    for opname in ("SequenceMask", "SequenceLast", "SequenceReverse"):
        y = sym(opname, True)
        # the lengths get no gradient (the graph builds with them as a plain input)
        og = np.ones(y.infer_shape(x=(3, 2))[1][0])
        check_symbolic_backward(y, loc, [og], {"l": np.zeros(2)})


# -- req handling, cuda ------------------------------------------------------------------

def _call(opname, shapes, req, dtypes, attrs, device):
    op = get_op(opname)
    parsed, _ = op.parse_attrs(attrs)
    ins, outs = op.infer_shape(parsed, list(shapes), [None])
    return op, Call(op, parsed, ins, [np.dtype(d) for d in dtypes], outs,
                    [np.dtype(dtypes[0])], req=list(req), device=device)


def _run(launch, *arrays):
    views = launch.views or [None] * len(arrays)
    viewed = [a if v is None else a.reshape(v) for a, v in zip(arrays, views)]
    launch.fn(*pick_args(launch.args, viewed), *launch.scalars)


@pytest.mark.parametrize("device", ["cpu", pytest.param("gpu", marks=pytest.mark.cuda)])
@pytest.mark.parametrize("opname", ["SequenceMask", "SequenceLast", "SequenceReverse",
                                    "_backward_SequenceLast"])
def test_req_null_and_add(device, opname, rng):
    dev = cpu() if device == "cpu" else gpu()
    x = rng.normal(size=(3, 2, 2))
    lens = np.array([1, 3], np.int32)
    attrs = {"use_sequence_length": True}
    if opname == "_backward_SequenceLast":
        og = rng.normal(size=(2, 2))
        ins, shapes, want = [og, lens, x], [(2, 2), (2,), (3, 2, 2)], np_last_grad(og, x, lens)
    else:
        ref = {"SequenceMask": np_mask, "SequenceLast": np_last,
               "SequenceReverse": np_reverse}[opname]
        ins, shapes, want = [x, lens], [(3, 2, 2), (2,)], ref(x, lens)
    dtypes = [np.float64, np.int32] + [np.float64] * (len(ins) - 2)
    for req, expect in ((REQ_ADD, want + 1), (REQ_NULL, np.ones_like(want))):
        op, call = _call(opname, shapes, [req], dtypes, attrs, dev)
        arrays = [dev.from_numpy(a) for a in ins] + [dev.from_numpy(np.ones_like(want))]
        _run(op.prepare(call), *arrays)
        assert_almost_equal(dev.to_numpy(arrays[-1]), expect)


@pytest.mark.cuda
@pytest.mark.parametrize("opname,axis", [("SequenceMask", 1), ("SequenceLast", 0),
                                         ("SequenceReverse", 0)])
@pytest.mark.parametrize("use", [True, False])
def test_cuda_matches_cpu(opname, axis, use, rng):
    loc = loc_for(rng, (3, 2, 2), axis, np.float32)
    if not use:
        del loc["l"]
    check_consistency(sym(opname, use, axis=axis), loc, devices=[cpu(), gpu()],
                      rtol=1e-6, atol=1e-6)


# -- errors --------------------------------------------------------------------------------

def test_shape_inference_and_names():
    args, outs, _ = sym("SequenceLast", True, axis=1).infer_shape(x=(2, 5, 3))
    assert args == [(2, 5, 3), (2,)] and outs == [(2, 3)]
    assert sym("SequenceMask", False).list_arguments() == ["x"]
    y = nbdl.sym.SequenceMask(nbdl.sym.var("data"), use_sequence_length=True, name="m")
    assert y.list_arguments() == ["data", "m_sequence_length"]


def test_length_shape_mismatch():
    with pytest.raises(nbdl.ShapeError, match=r"SequenceMask.*sequence_length.*\(3,\).*\(2,\)"):
        sym("SequenceMask", True).infer_shape(x=(4, 2, 3), l=(3,))


def test_data_rank_and_empty_time():
    with pytest.raises(nbdl.ShapeError, match=r"SequenceReverse.*at least 2.*\(4,\)"):
        sym("SequenceReverse", False).infer_shape(x=(4,))
    with pytest.raises(nbdl.ShapeError, match=r"SequenceLast.*no time steps.*\(0, 2\)"), \
            nbdl.np_shape(True):
        sym("SequenceLast", False).infer_shape(x=(0, 2))


@pytest.mark.parametrize("opname,axis", [("SequenceMask", 2), ("SequenceLast", -1),
                                         ("SequenceReverse", 1)])
def test_bad_axis(opname, axis):
    with pytest.raises(nbdl.AttrError, match=rf"{opname}.*axis={axis}"):
        sym(opname, False, axis=axis)
