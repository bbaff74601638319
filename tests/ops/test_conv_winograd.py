"""Winograd F(4x4, 3x3) / F(2x2, 3x3) forward (``nbdl.kernels.cpu.conv_winograd``):
against a numpy convolution written here and against im2col + GEMM (its
launch's fallback), the rule that picks it (``conv_plan.winograd_plan``),
and a network's inference output with and without it."""
import numpy as np
import pytest

import nbdl
from nbdl.device import cpu
from nbdl.kernels.cpu import conv_plan
from nbdl.ops.registry import REQ_ADD, REQ_WRITE, Call, get_op, pick_args
from nbdl.testing import assert_almost_equal


def ref_conv3x3(x, w, b=None):
    """3x3, stride 1, pad 1: out[n, f, y, x] = sum over c, a, e of
    x[n, c, y + a - 1, x + e - 1] w[f, c, a, e] (+ b[f]), in float64."""
    n, c, h, wd = x.shape
    xp = np.zeros((n, c, h + 2, wd + 2))
    xp[:, :, 1:-1, 1:-1] = x
    out = np.zeros((n, w.shape[0], h, wd))
    for a in range(3):
        for e in range(3):
            out += np.einsum("nchw,fc->nfhw", xp[:, :, a:a + h, e:e + wd],
                             w[:, :, a, e].astype(np.float64))
    if b is not None:
        out += b.reshape(1, -1, 1, 1)
    return out


@pytest.fixture
def any_size(monkeypatch):
    """Winograd for every eligible shape, however small (the rule's size
    limits are about speed, not correctness)."""
    monkeypatch.setattr(conv_plan, "WINO_MIN_TILES", 1)
    monkeypatch.setattr(conv_plan, "WINO_MIN_CHANNELS", 1)
    monkeypatch.setattr(conv_plan, "WINO_MIN_FILTERS", 1)


def _call(xs, nf, dtype, req=REQ_WRITE, is_train=False, op="_nbdl_fused_conv", **attrs):
    """(op, Call) of one convolution (by default the inference graphs'
    ``_nbdl_fused_conv`` with no BatchNorm, residual or activation: a plain
    convolution, the only op that runs Winograd)."""
    o = get_op(op)
    a = dict(kernel=(3, 3), pad=(1, 1), num_filter=nf, no_bias=True)
    a.update(attrs)
    parsed, _ = o.parse_attrs(a)
    k = tuple(parsed["kernel"])
    ws = (nf, xs[1] // parsed["num_group"]) + k
    shapes = [tuple(xs), ws] + ([] if parsed["no_bias"] else [(nf,)])
    out = o.infer_shape(parsed, list(shapes), [None])[1][0]
    return o, Call(o, parsed, shapes, [np.dtype(dtype)] * len(shapes), [out],
                   [np.dtype(dtype)], req=[req], device=cpu(), is_train=is_train)


def _run(launch, op, call, arrays, fallback=False):
    """Call ``launch`` (or its im2col fallback) on the call's arrays (inputs,
    output) and freshly made temps, NaN-filled where they are floats."""
    temps = [np.full(sh, np.nan if np.dtype(dt).kind == "f" else 0, dt)
             for sh, dt in op.temps(call)]
    use = launch.fallback if fallback else launch
    full = list(arrays) + temps
    use.fn(*pick_args(use.args, [a if v is None else a.reshape(v)
                                 for a, v in zip(full, use.views)]), *use.scalars)


# (N, C, F, H, W): odd and even sides, one-pixel and one-row images, a band
# boundary inside an image
SHAPES = [(1, 3, 4, 5, 7), (2, 4, 3, 6, 6), (3, 5, 7, 9, 4), (1, 2, 2, 1, 1), (2, 3, 5, 2, 3),
          (1, 6, 5, 40, 11)]


@pytest.mark.parametrize("bias", [False, True])
@pytest.mark.parametrize("tm", [2, 4])
@pytest.mark.parametrize("dtype,tol", [(np.float32, 1e-5), (np.float64, 1e-12)])
@pytest.mark.parametrize("parallel", [False, "bands", "phases"])
@pytest.mark.parametrize("shape", SHAPES)
def test_winograd_against_numpy(shape, parallel, dtype, tol, tm, bias, any_size, monkeypatch,
                                two_threads, rng):
    import numba
    if not parallel:
        monkeypatch.setattr(numba, "get_num_threads", lambda: 1)
    monkeypatch.setattr(conv_plan, "WINO_PHASES_SLOTS", 10 ** 9 if parallel == "phases" else 0)
    monkeypatch.setattr(conv_plan, "WINO_F4_MIN_SIDE", 1 if tm == 4 else 10 ** 9)
    n, c, f, h, w = shape
    x = rng.uniform(-1, 1, (n, c, h, w)).astype(dtype)
    wt = rng.uniform(-1, 1, (f, c, 3, 3)).astype(dtype)
    b = rng.uniform(-1, 1, f).astype(dtype)
    want = ref_conv3x3(x, wt, b if bias else None)
    for req, start in ((REQ_WRITE, np.nan), (REQ_ADD, 2.0)):
        if bias and req == REQ_ADD:
            continue
        op, call = _call(x.shape, f, dtype, req=req, no_bias=not bias)
        launch = op.prepare(call)
        name = launch.fn.py_func.__name__
        assert name == ("wino_forward_parallel" if parallel else "wino_forward")
        assert launch.scalars[-1] == tm
        assert launch.scalars[-2] == (parallel == "phases")
        out = np.full(want.shape, start, dtype)
        _run(launch, op, call, [x, wt] + ([b] if bias else []) + [out])
        expect = want + (2.0 if req == REQ_ADD else 0.0)
        err = np.abs(out - expect).max() / np.abs(expect).max()
        assert err < tol, (req, err)


def test_winograd_only_in_inference_graphs(any_size, rng):
    """Eager Convolution calls (recorded or not) and plain Convolutions keep
    im2col: no fallback there, so Winograd's compilation would stand before
    an eager first call; both still match numpy."""
    x = rng.uniform(-1, 1, (2, 4, 9, 8)).astype(np.float32)
    w = rng.uniform(-1, 1, (6, 4, 3, 3)).astype(np.float32)
    b = rng.uniform(-1, 1, 6).astype(np.float32)
    want = ref_conv3x3(x, w, b)
    args = [nbdl.nd.array(v) for v in (x, w, b)]
    got = nbdl.nd.Convolution(*args, kernel=(3, 3), pad=(1, 1), num_filter=6).asnumpy()
    assert_almost_equal(got, want, rtol=1e-5, atol=1e-5)
    with nbdl.autograd.record():
        trained = nbdl.nd.Convolution(*args, kernel=(3, 3), pad=(1, 1), num_filter=6).asnumpy()
    assert_almost_equal(trained, want, rtol=1e-5, atol=1e-5)
    for is_train in (False, True):
        op, call = _call(x.shape, 6, np.float32, op="Convolution", is_train=is_train)
        assert op.prepare(call).fn.py_func.__name__.startswith("conv_forward")


@pytest.mark.parametrize("phases", [0, 1])
@pytest.mark.parametrize("tm", [2, 4])
@pytest.mark.parametrize("where", ["input", "weight"])
def test_winograd_nan_and_inf_as_im2col(where, tm, phases, any_size, monkeypatch, two_threads):
    """Infs and NaNs come out where im2col's sums put them: a band of tiles
    that reads one (or every band, for a weight) is summed directly, since
    the transforms would turn ``inf`` into ``inf - inf`` and spread it
    outside its window as ``0 * inf``.  The bands without one stay on the
    Winograd path (their values match to rounding, not bitwise)."""
    x = np.random.RandomState(1).uniform(0.5, 1, (1, 2, 24, 6)).astype(np.float32)
    w = np.ones((3, 2, 3, 3), np.float32)
    if where == "input":
        x[0, 0, 2, 3] = np.inf
        x[0, 1, 0, 0] = np.nan
    else:
        w[1, 0, 0, 0] = np.inf
        w[2, 1, 1, 1] = -np.inf
    monkeypatch.setattr(conv_plan, "WINO_BAND_BYTES", 1)     # bands of one tile row
    monkeypatch.setattr(conv_plan, "WINO_PHASES_SLOTS", 10 ** 9 if phases else 0)
    monkeypatch.setattr(conv_plan, "WINO_F4_MIN_SIDE", 1 if tm == 4 else 10 ** 9)
    op, call = _call(x.shape, 3, np.float32)
    launch = op.prepare(call)
    assert launch.fn.py_func.__name__.startswith("wino_forward")
    got = {}
    for flag, fallback in (("1", False), ("0", True)):     # Winograd, its im2col fallback
        got[flag] = np.full((1, 3, 24, 6), np.nan, np.float32)
        _run(launch, op, call, [x, w, got[flag]], fallback=fallback)
    bad = ~np.isfinite(got["0"])
    assert bad.any()
    np.testing.assert_array_equal(got["1"][bad], got["0"][bad])
    assert_almost_equal(got["1"][~bad], got["0"][~bad], rtol=1e-5, atol=1e-5)
    if where == "input" and not phases:                  # rows 8.. read finite values only
        assert np.isfinite(got["1"][:, :, 8:]).all()


def _plan(xs=(1, 32, 28, 28), nf=16, dtype=np.float32, is_train=False, op="_nbdl_fused_conv",
          **attrs):
    o, call = _call(xs, nf, dtype, is_train=is_train, op=op, **attrs)
    from nbdl.ops.convolution import geometry
    return conv_plan.winograd_plan(call, geometry(call.attrs, call.in_shapes[0], False))


def test_winograd_rule(monkeypatch, two_threads):
    assert _plan() is not None                                   # 28x28: 196 tiles
    assert _plan(xs=(1, 32, 27, 29)) is not None                 # 14 x 15 tiles
    assert _plan(xs=(1, 32, 14, 14)) is not None                 # 49 tiles
    assert _plan(xs=(1, 32, 13, 13)) is not None                 # 7 x 7 tiles, a half-empty row
    assert _plan(xs=(1, 32, 12, 14)) is None                     # short of 49
    assert _plan(xs=(1, 256, 28, 28), nf=256) is not None
    assert _plan(xs=(1, 512, 28, 28), nf=256) is None            # too many channels
    assert _plan(nf=512) is None
    assert _plan(is_train=True) is not None                      # inference by construction
    assert _plan(op="Convolution") is None                       # eager, interpreted, training
    assert _plan(op="Convolution", is_train=True) is None
    assert _plan(dtype=np.float64) is not None
    assert _plan(dtype=np.float16) is None
    assert _plan(xs=(1, 16, 28, 28)) is None                     # too few input channels
    assert _plan(nf=8) is None                                   # too few output channels
    assert _plan(stride=(2, 2)) is None
    assert _plan(pad=(0, 0)) is None
    assert _plan(dilate=(2, 2), pad=(2, 2)) is None
    assert _plan(num_group=2) is None
    assert _plan(kernel=(3, 1), pad=(1, 0)) is None
    assert _plan(xs=(1, 32, 4, 28, 28), kernel=(3, 3, 3), pad=(1, 1, 1)) is None
    monkeypatch.setenv("NBDL_CONV_WINOGRAD", "0")
    assert _plan() is None


@pytest.mark.parametrize("n,th,tw,nt,c", [(1, 28, 28, 2, 64), (16, 28, 28, 2, 64),
                                          (1, 14, 14, 2, 128), (3, 14, 15, 2, 32),
                                          (1, 100, 3, 4, 32), (2, 5, 200, 2, 256),
                                          (1, 3, 4, 1, 32), (1, 1, 1, 2, 32), (1, 7, 7, 2, 256)])
def test_winograd_band_balances_threads(n, th, tw, nt, c):
    """The band keeps a work item's transformed input and products within
    WINO_BAND_BYTES (or is one tile row), and its split over the threads is
    as even as any band's (one image of 7 tile rows on 2 threads: two items)."""
    for tm in (2, 4):
        band = conv_plan._wino_band(n, th, tw, nt, c, c, 4, tm)
        lo, hi = conv_plan._band_range(th, tw, c, c, 4, tm)
        assert lo == 1 and 1 <= band <= hi <= th
        assert hi == 1 or hi * (tm + 2) ** 2 * 2 * c * (tw + 1) * 4 <= conv_plan.WINO_BAND_BYTES
    band = conv_plan._wino_band(n, th, tw, nt, c, c, 4)
    lo, hi = conv_plan._band_range(th, tw, c, c, 4)

    def busiest(b):
        rows = [min(b, th - k * b) for k in range(-(-th // b))] * n
        return max(sum(rows[len(rows) * t // nt:len(rows) * (t + 1) // nt]) for t in range(nt))
    assert all(busiest(band) <= busiest(b) for b in range(lo, hi + 1))
    assert all(busiest(b) > busiest(band) for b in range(band + 1, hi + 1))
    if (n, th, nt) == (1, 7, 2):
        assert busiest(band) == 4


def test_winograd_network_matches_im2col(monkeypatch, rng):
    """A bound inference graph (convolution + BatchNorm + ReLU fused, a
    residual; F(4x4) at 28x28, F(2x2) at 14x14) with Winograd layers gives
    im2col's output within 1e-5 relative; ``debug_str`` names the layers
    that run it and how."""
    x = nbdl.sym.var("data")
    h = x
    for i in range(4):
        if i == 3:
            h = nbdl.sym.Pooling(h, kernel=(2, 2), stride=(2, 2), pool_type="max")
        c = nbdl.sym.Convolution(h, kernel=(3, 3), pad=(1, 1), num_filter=32, name=f"c{i}")
        b = nbdl.sym.BatchNorm(c, fix_gamma=False, name=f"bn{i}")
        h = nbdl.sym.Activation(b + h if i == 2 else b, act_type="relu")
    y = nbdl.sym.Pooling(h, kernel=(2, 2), stride=(2, 2), pool_type="avg")
    shapes = {"data": (4, 32, 28, 28)}
    arg_shapes, _, aux_shapes = y.infer_shape(**shapes)
    args = {n: rng.uniform(-1, 1, s).astype(np.float32)
            for n, s in zip(y.list_arguments(), arg_shapes)}
    aux = {n: rng.uniform(0.5, 1.5, s).astype(np.float32)
           for n, s in zip(y.list_auxiliary_states(), aux_shapes)}
    outs = {}
    for flag in ("1", "0"):
        monkeypatch.setenv("NBDL_CONV_WINOGRAD", flag)
        ex = y.simple_bind(nbdl.cpu(), grad_req="null", **shapes)
        ex.copy_params_from({k: nbdl.nd.array(v) for k, v in args.items() if k != "data"},
                            {k: nbdl.nd.array(v) for k, v in aux.items()})
        ex.arg_dict["data"][:] = args["data"]
        outs[flag] = ex.forward(is_train=False)[0].asnumpy()
        listing = ex.debug_str()
        for name, tm in (("c0", 4), ("c2", 4), ("c3", 2)):
            assert (f"{name}: Winograd F({tm}x{tm}, 3x3)" in listing) == (flag == "1")
    scale = np.abs(outs["0"]).max()
    assert np.abs(outs["1"] - outs["0"]).max() <= 1e-5 * scale
