import numpy as np
import pytest

import nbdl
from nbdl.device import cpu, gpu
from nbdl.ops.registry import REQ_ADD, REQ_WRITE, Call, get_op
from nbdl.testing import (assert_almost_equal, check_consistency, check_numeric_gradient,
                          check_symbolic_backward, check_symbolic_forward)


def np_embedding(ids, weight):
    j = np.clip(np.trunc(np.asarray(ids, dtype=np.float64)).astype(np.int64), 0,
                weight.shape[0] - 1)
    return weight[j]


def np_embedding_grad(ids, og, input_dim):
    j = np.clip(np.trunc(np.asarray(ids, dtype=np.float64)).astype(np.int64), 0, input_dim - 1)
    g = np.zeros((input_dim, og.shape[-1]), dtype=og.dtype)
    np.add.at(g, j.reshape(-1), og.reshape(-1, og.shape[-1]))
    return g


def emb(input_dim, output_dim, **kw):
    return nbdl.sym.Embedding(nbdl.sym.var("i"), nbdl.sym.var("w"), input_dim=input_dim,
                              output_dim=output_dim, **kw)


@pytest.mark.parametrize("dtype", [np.float32, np.float64])
@pytest.mark.parametrize("id_dtype", [np.float32, np.int32, np.int64])
@pytest.mark.parametrize("shape", [(4,), (2, 3), (1,), (0,), (2, 0, 3)])
def test_forward_grid(dtype, id_dtype, shape, rng):
    w = rng.normal(size=(5, 3)).astype(dtype)
    ids = rng.randint(-2, 8, shape).astype(id_dtype)   # some below 0 and above 4: clipped
    outs = check_symbolic_forward(emb(5, 3), {"i": ids, "w": w}, [np_embedding(ids, w)])
    assert outs[0].dtype == dtype and outs[0].shape == shape + (3,)


def test_float_ids_truncate(rng):
    w = rng.normal(size=(4, 2))
    ids = np.array([0.9, 2.5, 3.99, -0.5])
    check_symbolic_forward(emb(4, 2), {"i": ids, "w": w}, [w[[0, 2, 3, 0]]])


@pytest.mark.parametrize("dtype", [np.float32, np.float64])
def test_backward_scatter_add_repeated_ids(dtype, rng):
    ids = np.array([[1, 3, 1], [0, 1, 7]], dtype=np.int64)  # 1 three times; 7 clipped to 4
    w = rng.normal(size=(5, 2)).astype(dtype)
    og = rng.normal(size=(2, 3, 2)).astype(dtype)
    grads = check_symbolic_backward(emb(5, 2), {"i": ids, "w": w}, [og],
                                    {"w": np_embedding_grad(ids, og, 5)})
    assert grads["w"].dtype == dtype


def test_numeric_gradient(rng):
    ids = np.array([[0, 2], [2, 1]], dtype=np.int32)
    check_numeric_gradient(emb(3, 4), {"i": ids, "w": rng.normal(size=(3, 4))}, grad_nodes=["w"])


def test_no_gradient_to_ids():
    y = emb(3, 2)
    node = y._outputs[0].node
    grads = get_op("Embedding").gradient(node, [y._outputs[0]])
    assert grads[0] is None and grads[1] is not None


def test_shape_and_type_inference():
    args, outs, _ = emb(10, 4).infer_shape(i=(2, 3))
    assert args == [(2, 3), (10, 4)] and outs == [(2, 3, 4)]
    _, touts, _ = emb(10, 4).infer_type(i=np.int64)
    assert touts == [np.float32]
    arg_t, touts, _ = emb(10, 4).infer_type(w=np.float64)
    assert touts == [np.float64] and arg_t == [np.float64, np.float64]
    _, touts, _ = emb(10, 4, dtype="float64").infer_type(i=np.int32)
    assert touts == [np.float64]


def test_default_variable_names():
    y = nbdl.sym.Embedding(nbdl.sym.var("data"), input_dim=3, output_dim=2, name="embed")
    assert y.list_arguments() == ["data", "embed_weight"]


def _prepare(opname, shapes, dtypes, req, attrs):
    op = get_op(opname)
    parsed, _ = op.parse_attrs(attrs)
    out_shape = shapes[2] if opname.startswith("_backward") else shapes[0] + (attrs["output_dim"],)
    call = Call(op, parsed, list(shapes), [np.dtype(d) for d in dtypes], [out_shape],
                [np.dtype(dtypes[-1])], req=[req])
    return op.prepare(call)


def _run(launch, *arrays):
    views = launch.views or [None] * len(arrays)
    launch.fn(*[a if v is None else a.reshape(v) for a, v in zip(arrays, views)], *launch.scalars)


@pytest.mark.parametrize("req", [REQ_WRITE, REQ_ADD])
def test_req_write_and_add(req, rng):
    attrs = {"input_dim": 4, "output_dim": 3}
    ids = np.array([3, 0, 3], dtype=np.int64)
    w = rng.normal(size=(4, 3))
    out = np.ones((3, 3))
    _run(_prepare("Embedding", [(3,), (4, 3)], [np.int64, np.float64], req, attrs), ids, w, out)
    assert_almost_equal(out, w[ids] + (1 if req == REQ_ADD else 0))
    og = rng.normal(size=(3, 3))
    grad = np.ones((4, 3))
    _run(_prepare("_backward_Embedding", [(3, 3), (3,), (4, 3)],
                  [np.float64, np.int64, np.float64], req, attrs), og, ids, w, grad)
    assert_almost_equal(grad, np_embedding_grad(ids, og, 4) + (1 if req == REQ_ADD else 0))


def test_parallel_variant(monkeypatch, rng):
    monkeypatch.setenv("NBDL_PARALLEL_MIN", "1")
    ids = rng.randint(0, 6, (4, 5))
    w = rng.normal(size=(6, 3)).astype(np.float32)
    check_symbolic_forward(emb(6, 3), {"i": ids, "w": w}, [np_embedding(ids, w)])


@pytest.mark.cuda
def test_cuda_matches_cpu(rng):
    ids = np.array([[1, 3, 1], [0, 9, -1]], dtype=np.float32)
    check_consistency(emb(5, 2), {"i": ids, "w": rng.normal(size=(5, 2)).astype(np.float32)},
                      devices=[cpu(), gpu()])


@pytest.mark.cuda
def test_cuda_grad_req_add_and_empty(rng):
    ids = np.array([2, 2, 0], dtype=np.int32)
    w = rng.normal(size=(3, 2))
    og = rng.normal(size=(3, 2))
    grad = gpu().from_numpy(np.ones((3, 2)))
    _prepare_gpu = get_op("_backward_Embedding")
    parsed, _ = _prepare_gpu.parse_attrs({"input_dim": 3, "output_dim": 2})
    call = Call(_prepare_gpu, parsed, [(3, 2), (3,), (3, 2)],
                [np.dtype(np.float64), np.dtype(np.int32), np.dtype(np.float64)], [(3, 2)],
                [np.dtype(np.float64)], device=gpu(), req=[REQ_ADD])
    launch = _prepare_gpu.prepare(call)
    args = [gpu().from_numpy(a) for a in (og, ids, w)] + [grad]
    launch.fn(*[a.reshape(v) for a, v in zip(args, launch.views)], *launch.scalars)
    assert_almost_equal(grad.copy_to_host(), np_embedding_grad(ids, og, 3) + 1)
    check_consistency(emb(3, 2), {"i": np.zeros((0,), np.int32), "w": w}, grad=False)


def test_weight_shape_mismatch():
    with pytest.raises(nbdl.ShapeError, match=r"Embedding.*weight.*\(4, 3\).*\(5, 3\)"):
        emb(5, 3).infer_shape(i=(2,), w=(4, 3))


@pytest.mark.parametrize("attrs,match", [
    ({"input_dim": 3, "output_dim": 2, "sparse_grad": True}, "sparse_grad"),
    ({"input_dim": 0, "output_dim": 2}, "input_dim"),
    ({"input_dim": 3, "output_dim": -1}, "output_dim"),
    ({"input_dim": 3}, "output_dim"),
    ({"input_dim": 3, "output_dim": 2, "dtype": "complex64"}, "dtype"),
])
def test_bad_attrs(attrs, match):
    with pytest.raises(nbdl.AttrError, match=match):
        nbdl.sym.Embedding(nbdl.sym.var("i"), nbdl.sym.var("w"), **attrs)


def test_integer_weight_rejected():
    with pytest.raises(nbdl.DTypeError, match="Embedding"):
        check_symbolic_forward(emb(3, 2), {"i": np.array([0]), "w": np.ones((3, 2), np.int32)},
                               [np.ones((1, 2))])
