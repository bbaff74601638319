"""The interleaved attention products (BERT's _contrib_interleaved_matmul_*)."""
import numpy as np
import pytest

import nbdl
from nbdl.device import cpu, gpu
from nbdl.testing import (bind_and_run, check_consistency, check_numeric_gradient,
                          check_symbolic_backward, check_symbolic_forward)


# -- numpy references (MXNet's documented equivalents) ---------------------------------

def heads_of(x, heads, parts, part):
    """(S, B, heads * parts * D) -> (B * heads, S, D) of projection ``part``."""
    s, b, e = x.shape
    t = x.reshape(s, b, heads, parts, e // (heads * parts))[:, :, :, part, :]
    return t.transpose(1, 2, 0, 3).reshape(b * heads, s, -1)


def interleave(t, heads):
    """(B * heads, S, D) -> (S, B, heads * D)."""
    bh, s, d = t.shape
    return t.reshape(bh // heads, heads, s, d).transpose(2, 0, 1, 3).reshape(s, bh // heads, -1)


def ref_forward(kind, heads, a, b=None):
    if kind == "selfatt_qk":
        q, k = heads_of(a, heads, 3, 0), heads_of(a, heads, 3, 1)
        return q @ k.transpose(0, 2, 1) / np.sqrt(q.shape[-1])
    if kind == "encdec_qk":
        q, k = heads_of(a, heads, 1, 0), heads_of(b, heads, 2, 0)
        return q @ k.transpose(0, 2, 1) / np.sqrt(q.shape[-1])
    parts = 3 if kind == "selfatt_valatt" else 2
    v = heads_of(a, heads, parts, parts - 1)
    return interleave(b @ v, heads)


def ref_backward(kind, heads, g, a, b=None):
    """Gradients by the chain rule on the references' pieces."""
    def scatter(t, shape, parts, part):
        s, bsz, e = shape
        out = np.zeros((s, bsz, heads, parts, e // (heads * parts)))
        d = t.shape[-1]
        out[:, :, :, part, :] = t.reshape(bsz, heads, s, d).transpose(2, 0, 1, 3)
        return out.reshape(shape)

    if kind in ("selfatt_qk", "encdec_qk"):
        if kind == "selfatt_qk":
            q, k = heads_of(a, heads, 3, 0), heads_of(a, heads, 3, 1)
        else:
            q, k = heads_of(a, heads, 1, 0), heads_of(b, heads, 2, 0)
        sc = 1 / np.sqrt(q.shape[-1])
        dq, dk = sc * g @ k, sc * g.transpose(0, 2, 1) @ q
        if kind == "selfatt_qk":
            return [scatter(dq, a.shape, 3, 0) + scatter(dk, a.shape, 3, 1)]
        return [scatter(dq, a.shape, 1, 0), scatter(dk, b.shape, 2, 0)]
    parts = 3 if kind == "selfatt_valatt" else 2
    v = heads_of(a, heads, parts, parts - 1)
    gh = heads_of(g, heads, 1, 0)
    return [scatter(b.transpose(0, 2, 1) @ gh, a.shape, parts, parts - 1),
            gh @ v.transpose(0, 2, 1)]


KINDS = {"selfatt_qk": ("queries_keys_values",),
         "selfatt_valatt": ("queries_keys_values", "attention"),
         "encdec_qk": ("queries", "keys_values"),
         "encdec_valatt": ("keys_values", "attention")}


def make_inputs(kind, rng, s, bsz, heads, d, sk=None, dtype=np.float32):
    sk = sk or s
    e = heads * d
    if kind == "selfatt_qk":
        vals = [rng.normal(size=(s, bsz, 3 * e))]
    elif kind == "selfatt_valatt":
        vals = [rng.normal(size=(s, bsz, 3 * e)), rng.normal(size=(bsz * heads, s, s))]
    elif kind == "encdec_qk":
        vals = [rng.normal(size=(s, bsz, e)), rng.normal(size=(sk, bsz, 2 * e))]
    else:
        vals = [rng.normal(size=(sk, bsz, 2 * e)), rng.normal(size=(bsz * heads, s, sk))]
    return {n: v.astype(dtype) for n, v in zip(KINDS[kind], vals)}


def graph(kind, heads):
    op = getattr(nbdl.sym.contrib, "interleaved_matmul_" + kind)
    return op(*[nbdl.sym.var(n) for n in KINDS[kind]], heads=heads)


@pytest.mark.parametrize("kind", list(KINDS))
@pytest.mark.parametrize("s,bsz,heads,d,sk", [(3, 2, 2, 4, 5), (1, 1, 1, 1, 2), (4, 3, 3, 2, 4)])
def test_forward_backward_match_reference(kind, s, bsz, heads, d, sk, rng):
    loc = make_inputs(kind, rng, s, bsz, heads, d, sk)
    args = [loc[n].astype(np.float64) for n in KINDS[kind]]
    out = ref_forward(kind, heads, *args)
    check_symbolic_forward(graph(kind, heads), loc, [out], rtol=1e-5, atol=1e-5)
    g = rng.normal(size=out.shape).astype(np.float32)
    expect = ref_backward(kind, heads, g.astype(np.float64), *args)
    check_symbolic_backward(graph(kind, heads), loc, [g], dict(zip(KINDS[kind], expect)),
                            rtol=1e-5, atol=1e-5)


@pytest.mark.parametrize("kind", list(KINDS))
def test_numeric_gradient(kind, rng):
    check_numeric_gradient(graph(kind, 2), make_inputs(kind, rng, 2, 2, 2, 2, 3))


@pytest.mark.parametrize("kind", list(KINDS))
def test_gradients_accumulate_with_grad_req_add(kind, rng):
    loc = make_inputs(kind, rng, 3, 2, 2, 3, 2)
    init = {n: rng.normal(size=v.shape).astype(np.float32) for n, v in loc.items()}
    names = list(KINDS[kind])
    _, outs, _, _ = bind_and_run(graph(kind, 2), loc)
    g = rng.normal(size=outs[0].shape).astype(np.float32)
    _, _, grads, _ = bind_and_run(graph(kind, 2), loc, grad_names=names, grad_req="add",
                                  grad_init=init, out_grads=[g], backward=True)
    expect = ref_backward(kind, 2, g.astype(np.float64), *[loc[n].astype(np.float64)
                                                           for n in names])
    for n, e in zip(names, expect):
        np.testing.assert_allclose(grads[n], init[n] + e, rtol=1e-5, atol=1e-5)


@pytest.mark.parametrize("kind", ["selfatt_qk", "encdec_valatt"])
def test_float16_stores_half_and_computes_in_float32(kind, rng):
    loc = make_inputs(kind, rng, 3, 2, 2, 4, 2, dtype=np.float16)
    want = ref_forward(kind, 2, *[loc[n].astype(np.float32) for n in KINDS[kind]])
    outs = check_symbolic_forward(graph(kind, 2), loc, [want.astype(np.float16)],
                                  rtol=1e-3, atol=1e-3)
    assert outs[0].dtype == np.float16
    g = rng.normal(size=want.shape).astype(np.float16)
    expect = ref_backward(kind, 2, g.astype(np.float64),
                          *[loc[n].astype(np.float64) for n in KINDS[kind]])
    check_symbolic_backward(graph(kind, 2), loc, [g], dict(zip(KINDS[kind], expect)),
                            rtol=1e-2, atol=1e-2)


@pytest.mark.cuda
@pytest.mark.parametrize("kind", list(KINDS))
def test_cuda_matches_cpu(kind, rng):
    check_consistency(graph(kind, 2), make_inputs(kind, rng, 2, 1, 2, 2, 3),
                      devices=[cpu(), gpu()], rtol=1e-4, atol=1e-5)


def test_eager_spellings_and_json_round_trip(rng):
    qkv = rng.normal(size=(2, 1, 6)).astype(np.float32)
    out = nbdl.nd.contrib.interleaved_matmul_selfatt_qk(nbdl.nd.array(qkv), heads=1)
    np.testing.assert_allclose(out.asnumpy(), ref_forward("selfatt_qk", 1, qkv), rtol=1e-5)
    sym = nbdl.sym.load_json(graph("encdec_valatt", 3).tojson())
    _, outs, _ = sym.infer_shape(keys_values=(5, 2, 12), attention=(6, 4, 5))
    assert outs == [(4, 2, 6)]


@pytest.mark.parametrize("kind,shapes,match", [
    ("selfatt_qk", {"queries_keys_values": (2, 3, 10)}, r"selfatt_qk.*10.*3 projection"),
    ("selfatt_qk", {"queries_keys_values": (2, 12)}, r"selfatt_qk.*must be 3-D"),
    ("selfatt_valatt", {"queries_keys_values": (2, 1, 12), "attention": (2, 3, 2)},
     r"selfatt_valatt.*attention.*\(2, 3, 2\).*\(2, 2, 2\)"),
    ("encdec_qk", {"queries": (2, 1, 4), "keys_values": (3, 1, 4)}, r"encdec_qk.*keys_values"),
])
def test_shape_errors_name_the_op_and_shapes(kind, shapes, match):
    with pytest.raises(nbdl.ShapeError, match=match):
        graph(kind, 2).infer_shape(**shapes)


def test_mxnet_names_and_input_names():
    """The names a BERT -symbol.json holds, with MXNet's input names."""
    want = {"_contrib_interleaved_matmul_selfatt_qk": ["queries_keys_values"],
            "_contrib_interleaved_matmul_selfatt_valatt": ["queries_keys_values", "attention"],
            "_contrib_interleaved_matmul_encdec_qk": ["queries", "keys_values"],
            "_contrib_interleaved_matmul_encdec_valatt": ["keys_values", "attention"]}
    for name, inputs in want.items():
        s = getattr(nbdl.sym, name)(*[nbdl.sym.var(n) for n in inputs], heads=2, name="att")
        assert s.list_arguments() == inputs
        assert s.tojson().count(f'"op": "{name}"') == 1
