"""Kernel-level contract of the elementwise family: every layout a prepare can
pick honours req (write / add / null), stays correct when its output aliases
an input the op lists as inplace, and its parallel variant agrees with the
serial one."""
import numpy as np
import pytest

from nbdl.device import cpu, gpu
from nbdl.executor.interpret import run_op
from nbdl.ops.registry import REQ_ADD, REQ_INPLACE, REQ_NULL, REQ_WRITE, get_op

# (op, attrs, input shapes): one row per kernel layout
CASES = [
    ("exp", {}, [(2, 3)]),
    ("clip", {"a_min": -0.5, "a_max": 0.5}, [(2, 3)]),
    ("_mul_scalar", {"scalar": 2.5}, [(2, 3)]),
    ("_backward_relu", {}, [(2, 3), (2, 3)]),
    ("_backward_clip", {"a_min": -0.5, "a_max": 0.5}, [(2, 3), (2, 3)]),
    ("elemwise_mul", {}, [(2, 3), (2, 3)]),
    ("broadcast_sub", {}, [(2, 3), (2, 3)]),
    ("broadcast_sub", {}, [(1,), (2, 3)]),
    ("broadcast_sub", {}, [(2, 3), (1, 1)]),
    ("broadcast_sub", {}, [(2, 1, 3), (1, 2, 1)]),
    ("broadcast_sub", {}, [(2, 3, 4), (3, 1)]),
    ("broadcast_sub", {}, [(3, 1), (2, 3, 4)]),
    ("_reduce_sum_like", {}, [(2, 3), (2, 3)]),
    ("_reduce_sum_like", {}, [(2, 3), (1,)]),
    ("_reduce_sum_like", {}, [(2, 3, 4), (3, 1)]),
    ("_reduce_sum_like", {}, [(2, 3, 4), (2, 1, 4)]),
    ("_reduce_sum_like", {}, [(3, 520), (520,)]),      # long kept inner run: chunked when parallel
    ("_reduce_sum_like", {}, [(0, 3), (1, 3)]),
    ("ElementWiseSum", {"num_args": 3}, [(2, 3)] * 3),
    ("where", {}, [(2, 3), (2, 3), (2, 3)]),
    ("where", {}, [(2,), (2, 3), (2, 3)]),
    ("_backward_where", {}, [(2, 3), (2,)]),
]
IDS = [f"{op}-{'-'.join('x'.join(map(str, s)) for s in shapes)}" for op, _, shapes in CASES]


def make_inputs(op, shapes, seed=0):
    rng = np.random.RandomState(seed)
    arrays = [rng.uniform(-1, 1, s).astype(np.float32) for s in shapes]
    cond = {"where": 0, "_backward_where": 1}.get(op)
    if cond is not None:
        arrays[cond] = (rng.rand(*shapes[cond]) > 0.5).astype(np.float32)
    return arrays


def out_shapes(op, attrs, shapes):
    opdef = get_op(op)
    parsed, _ = opdef.parse_attrs(attrs)
    n_out = opdef.n_outputs(parsed)
    _, outs = opdef.infer_shape(parsed, list(shapes), [None] * n_out)
    return opdef, parsed, outs


def run(op, attrs, arrays, device, req, outputs=None):
    opdef, parsed, shapes = out_shapes(op, attrs, [a.shape for a in arrays])
    dev_in = [device.from_numpy(a) for a in arrays]
    dev_out = None if outputs is None else [device.from_numpy(o.copy()) for o in outputs]
    res = run_op(opdef, parsed, dev_in, shapes, [np.dtype(np.float32)] * len(shapes), device,
                 outputs=dev_out, req=[req] * len(shapes))
    return [r if isinstance(r, np.ndarray) else r.copy_to_host() for r in res]


@pytest.mark.parametrize("device", [cpu(), pytest.param(gpu(), marks=pytest.mark.cuda)], ids=["cpu", "gpu"])
@pytest.mark.parametrize("op,attrs,shapes", CASES, ids=IDS)
def test_req_add_and_null(op, attrs, shapes, device):
    arrays = make_inputs(op, shapes)
    expect = run(op, attrs, arrays, cpu(), REQ_WRITE)
    base = [np.full(e.shape, 0.25, np.float32) for e in expect]
    added = run(op, attrs, arrays, device, REQ_ADD, outputs=base)
    for a, e, b in zip(added, expect, base):
        np.testing.assert_allclose(a, b + e, rtol=1e-6, atol=1e-6)
    skipped = run(op, attrs, arrays, device, REQ_NULL, outputs=base)
    for s, b in zip(skipped, base):
        np.testing.assert_array_equal(s, b)


@pytest.mark.parametrize("op,attrs,shapes", CASES, ids=IDS)
def test_inplace_pairs_are_safe(op, attrs, shapes):
    arrays = make_inputs(op, shapes)
    expect = run(op, attrs, arrays, cpu(), REQ_WRITE)
    opdef, parsed, _ = out_shapes(op, attrs, shapes)
    pairs = [(i, o) for i, o in opdef.inplace(parsed)
             if arrays[i].size == expect[o].size and arrays[i].size > 0]
    for i, o in pairs:
        ins = [a.copy() for a in arrays]
        outs = [np.empty_like(e) for e in expect]
        outs[o] = ins[i].reshape(expect[o].shape)          # the output *is* the input
        run_op(opdef, parsed, ins, [e.shape for e in expect], [e.dtype for e in expect], cpu(),
               outputs=outs, req=[REQ_INPLACE] * len(expect))
        # bit for bit: the serial map kernels store through the aliased input
        # (their in-place loop), which must compute what the plain loop does
        np.testing.assert_array_equal(outs[o], expect[o],
                                      err_msg=f"{op}: output {o} aliasing input {i}")


@pytest.mark.parametrize("op,attrs,shapes", CASES, ids=IDS)
def test_parallel_variant_matches_serial(op, attrs, shapes, monkeypatch):
    arrays = make_inputs(op, shapes, seed=1)
    serial = run(op, attrs, arrays, cpu(), REQ_WRITE)
    monkeypatch.setenv("NBDL_PARALLEL_MIN", "1")
    base = [np.full(e.shape, 0.5, np.float32) for e in serial]
    par_add = run(op, attrs, arrays, cpu(), REQ_ADD, outputs=base)
    par = run(op, attrs, arrays, cpu(), REQ_WRITE)
    for p, pa, s, b in zip(par, par_add, serial, base):
        np.testing.assert_allclose(p, s, rtol=1e-5, atol=1e-6)
        np.testing.assert_allclose(pa, b + s, rtol=1e-5, atol=1e-6)


def test_parallel_variant_is_picked_by_size(monkeypatch):
    from nbdl.ops.registry import Call
    opdef = get_op("exp")
    call = Call(opdef, {}, [(4,)], [np.dtype(np.float32)], [(4,)], [np.dtype(np.float32)])
    monkeypatch.setenv("NBDL_PARALLEL_MIN", "5")
    assert not opdef.prepare(call).fn.targetoptions.get("parallel")
    monkeypatch.setenv("NBDL_PARALLEL_MIN", "4")
    assert opdef.prepare(call).fn.targetoptions.get("parallel")
