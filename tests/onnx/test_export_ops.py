"""Export of single ops and small graphs: onnx.checker (full check) accepts
the model and onnxruntime's outputs match nbdl's."""
import numpy as np
import onnx
import pytest

import nbdl
from nbdl.onnx import OnnxError, export_model
from onnx_helpers import assert_close, nbdl_run, ort_run

S = nbdl.sym


def roundtrip(sym, feeds, params=None, opset=None, dynamic=False, rtol=1e-4):
    params = params or {}
    names = [n for n in sym.list_arguments() if n not in params]
    model = export_model(sym, params, [feeds[n].shape for n in names],
                         [feeds[n].dtype for n in names], onnx_file_path=None,
                         opset_version=opset, dynamic=dynamic)
    onnx.checker.check_model(model, full_check=True)
    want = nbdl_run(sym, feeds, params)
    got = ort_run(model, feeds)
    assert len(got) == len(want)
    for g, w in zip(got, want):
        assert_close(g, w, rtol=rtol)
    return model


def test_elementwise_scalar_and_compare(rng):
    a, b = S.var("a"), S.var("b")
    x = S.broadcast_add(a, b) * 2.0 - S.broadcast_maximum(a, b) / 3.0
    y = S.Group([x, S.exp(a * 0.1), S.sqrt(S.abs(a)), S.rsqrt(S.abs(a) + 1.0),
                 S.broadcast_greater(a, b), a >= 0.25, 1.0 / (S.abs(b) + 1.0),
                 S.clip(a, a_min=-0.5, a_max=0.5), S.square(a), S.negative(b),
                 S.log1p(S.abs(a)), S.round(a * 3.0), S.trunc(a * 3.0), S.sign(a),
                 S.sigmoid(a), S.tanh(a), S.relu(a), S.ElementWiseSum(a, a, a),
                 S.where(a > 0, a, a * 2.0), S.zeros_like(a), S.ones_like(b), S.log2(S.abs(a) + 1),
                 S.hard_sigmoid(a), S.erf(a), S.floor(a), S.ceil(a), S.maximum(a, 0.1)])
    feeds = {"a": rng.randn(2, 3, 4).astype(np.float32), "b": rng.randn(1, 3, 1).astype(np.float32)}
    roundtrip(y, feeds)


def test_reductions_and_shape_ops(rng):
    x = S.var("x")
    y = S.Group([S.sum(x, axis=(1, 2)), S.mean(x, axis=1, keepdims=True), S.max(x),
                 S.min(x, axis=0, exclude=True), S.prod(x, axis=-1),
                 S.argmax(x, axis=2), S.Reshape(x, shape=(0, -1)),
                 S.Reshape(x, shape=(-3, -2)), S.Reshape(x, shape=(2, -4, 1, 3, 4)),
                 S.Flatten(x), S.transpose(x, axes=(2, 0, 1)), S.transpose(x),
                 S.slice(x, begin=(0, 1, None), end=(None, 3, None), step=(1, 1, -1)),
                 S.slice_axis(x, axis=2, begin=1, end=3), S.expand_dims(x, axis=1),
                 S.squeeze(S.expand_dims(x, axis=0), axis=0),
                 S.Concat(x, x, dim=2), S.stack(x, x, axis=1), S.SwapAxis(x, dim1=0, dim2=2),
                 S.tile(x, reps=(2, 1)),
                 S.broadcast_to(S.slice_axis(x, axis=1, begin=0, end=1), shape=(0, 3, 0)),
                 S.softmax(x, axis=1), S.log_softmax(x), S.softmax(x, temperature=2.0)])
    split = S.SliceChannel(x, num_outputs=2, axis=2)
    sq = S.split(x, num_outputs=3, axis=1, squeeze_axis=True)
    roundtrip(S.Group([y, split[0], split[1], sq[2]]), {"x": rng.randn(2, 3, 4).astype(np.float32)})


def test_products_take_one_hot_embedding(rng):
    a, b, i, w = S.var("a"), S.var("b"), S.var("i"), S.var("w")
    y = S.Group([S.dot(a, b), S.dot(a, a, transpose_b=True), S.batch_dot(S.expand_dims(a, axis=0),
                                                                         S.expand_dims(b, axis=0)),
                 S.take(a, i), S.take(a, i, axis=1, mode="wrap"), S.one_hot(i, depth=5),
                 S.Embedding(i, w, input_dim=5, output_dim=3)])
    feeds = {"a": rng.randn(3, 4).astype(np.float32), "b": rng.randn(4, 2).astype(np.float32),
             "i": np.array([0, 4, 2, 7], np.float32)}
    roundtrip(y, feeds, params={"w": rng.randn(5, 3).astype(np.float32)})


def test_nn_layers(rng):
    x = S.var("x")
    c = S.Convolution(x, num_filter=4, kernel=(3, 3), pad=(1, 1), dilate=(2, 2), num_group=2,
                      name="conv")
    bn = S.BatchNorm(c, fix_gamma=False, eps=1e-4, name="bn")
    bn2 = S.BatchNorm(c, fix_gamma=True, name="bn2")
    act = S.LeakyReLU(bn, act_type="prelu", name="prelu")
    p1 = S.Pooling(act, kernel=(3, 3), stride=(2, 2), pool_type="max", pooling_convention="full")
    p2 = S.Pooling(act, kernel=(2, 2), stride=(2, 2), pad=(1, 1), pool_type="avg",
                   count_include_pad=False)
    p3 = S.Pooling(act, kernel=(2, 2), pool_type="sum")
    g = S.Pooling(act, kernel=(1, 1), global_pool=True, pool_type="avg")
    fc = S.FullyConnected(g, num_hidden=3, name="fc")
    fc2 = S.FullyConnected(act, num_hidden=2, flatten=False, no_bias=True, name="fc2")
    dc = S.Deconvolution(x, num_filter=2, kernel=(3, 3), stride=(2, 2), pad=(1, 1), adj=(1, 1),
                         name="dc")
    ln = S.LayerNorm(x, name="ln")
    ln1 = S.LayerNorm(x, axis=1, name="ln1")
    inn = S.InstanceNorm(x, name="in")
    gn = S.GroupNorm(x, num_groups=2, name="gn")
    pad = S.Pad(x, mode="reflect", pad_width=(0, 0, 0, 0, 1, 1, 2, 2))
    up = S.UpSampling(x, scale=2, sample_type="nearest")
    bil = S.UpSampling(x, S.var("bil_weight"), scale=2, sample_type="bilinear", num_filter=4,
                       name="bil")
    acts = [S.LeakyReLU(x, act_type=t) for t in ("leaky", "elu", "selu", "gelu")] + \
        [S.Activation(x, act_type=t) for t in ("relu", "sigmoid", "tanh", "softrelu", "softsign")]
    drop = S.Dropout(x, p=0.5)
    lrn = S.LRN(x, nsize=3, alpha=0.01, beta=0.6, knorm=1.5)
    norms = [S.norm(x), S.norm(x, ord=1, axis=(2, 3)), S.norm(x, axis=1, keepdims=True)]
    sym = S.Group([bn2, p1, p2, p3, fc, fc2, dc, ln, ln1, inn, gn, pad, up, bil, drop, lrn] + acts + norms)
    shapes = dict(zip(sym.list_arguments(), sym.infer_shape(x=(2, 4, 6, 6))[0]))
    params = {n: (rng.rand(*s).astype(np.float32) + 0.5) for n, s in shapes.items() if n != "x"}
    aux_shapes = dict(zip(sym.list_auxiliary_states(), sym.infer_shape(x=(2, 4, 6, 6))[2]))
    params.update({n: (rng.rand(*s).astype(np.float32) + 0.5) for n, s in aux_shapes.items()})
    roundtrip(sym, {"x": rng.randn(2, 4, 6, 6).astype(np.float32)}, params)


@pytest.mark.parametrize("gshape", [(4,), (1,), (2, 4), (2,)])
def test_prelu_gamma_broadcast(gshape, rng):
    # gamma on data axes 0 and 1 as MXNet broadcasts it: (C,), (1,), (N, C), (N,)
    y = S.LeakyReLU(S.var("x"), S.var("g"), act_type="prelu")
    roundtrip(y, {"x": rng.randn(2, 4, 3, 3).astype(np.float32)},
              {"g": rng.rand(*gshape).astype(np.float32)})


@pytest.mark.parametrize("opset", [13, 17, 18, 19, 20, 21])
def test_opsets_and_dynamic_batch(opset, rng):
    x = S.var("data")
    h = S.LeakyReLU(S.FullyConnected(x, num_hidden=8, name="fc1"), act_type="gelu")
    y = S.softmax(S.LayerNorm(S.FullyConnected(h, num_hidden=4, name="fc2"), name="ln"))
    y = S.mean(S.Reshape(y, shape=(0, 2, 2)), axis=2)
    shapes = dict(zip(y.list_arguments(), y.infer_shape(data=(3, 5))[0]))
    params = {n: rng.randn(*s).astype(np.float32) for n, s in shapes.items() if n != "data"}
    model = roundtrip(y, {"data": rng.randn(3, 5).astype(np.float32)}, params, opset=opset,
                      dynamic=True)
    assert model.opset_import[0].version == opset
    inp = model.graph.input[0].type.tensor_type.shape.dim
    assert inp[0].dim_param == "batch" and inp[1].dim_value == 5
    feeds = {"data": rng.randn(7, 5).astype(np.float32)}
    assert_close(ort_run(model, feeds)[0], nbdl_run(y, feeds, params)[0])


def test_names_follow_mxnet_and_file_output(tmp_path, rng):
    x = S.var("data")
    y = S.FullyConnected(x, num_hidden=2, name="dense0")
    params = {"dense0_weight": nbdl.nd.array(rng.randn(2, 3)), "arg:dense0_bias": np.zeros(2, np.float32)}
    path = str(tmp_path / "m.onnx")
    assert export_model(y, params, [(1, 3)], onnx_file_path=path) == path
    model = onnx.load(path)
    assert [i.name for i in model.graph.initializer] == ["dense0_weight", "dense0_bias"]
    assert [o.name for o in model.graph.output] == y.list_outputs() == ["dense0_output"]
    sym_path = str(tmp_path / "m-symbol.json")
    y.save(sym_path)
    nbdl.nd.save(str(tmp_path / "m.params"), {"arg:dense0_weight": params["dense0_weight"],
                                              "arg:dense0_bias": nbdl.nd.zeros(2)})
    m2 = export_model(sym_path, str(tmp_path / "m.params"), [(1, 3)], onnx_file_path=None)
    assert [n.op_type for n in m2.graph.node] == ["Gemm"]


def test_export_errors_name_the_problem(rng):
    x = S.var("x")
    with pytest.raises(OnnxError, match="no ONNX conversion for op 'topk'"):
        export_model(S.topk(x, k=1), {}, [(2, 3)], onnx_file_path=None)
    with pytest.raises(OnnxError, match="opset_version 9"):
        export_model(S.relu(x), {}, [(2, 3)], onnx_file_path=None, opset_version=9)
    with pytest.raises(OnnxError, match="1 input shapes for the 2 inputs"):
        export_model(x + S.var("y"), {}, [(2, 3)], onnx_file_path=None)
    with pytest.raises(OnnxError, match="in_shapes is required"):
        export_model(S.relu(x), {}, None, onnx_file_path=None)
    with pytest.raises(OnnxError, match="only axis 0 may be dynamic"):
        export_model(S.relu(x), {}, [(2, 3)], onnx_file_path=None, dynamic=True,
                     dynamic_input_shapes=[(None, None)])
    bn = S.BatchNorm(x, axis=2, name="bn")
    bn_params = {"bn_gamma": np.ones(3, np.float32), "bn_beta": np.zeros(3, np.float32),
                 "bn_moving_mean": np.zeros(3, np.float32), "bn_moving_var": np.ones(3, np.float32)}
    with pytest.raises(OnnxError, match="BatchNorm \\(node 'bn'\\): axis=2"):
        export_model(bn, bn_params, [(1, 2, 3)], onnx_file_path=None)


def test_loss_heads_export_their_inference_part(rng):
    x = S.var("data")
    fc = S.FullyConnected(x, num_hidden=3, name="fc")
    out = S.SoftmaxOutput(fc, name="softmax")      # its label variable is not an input
    params = {"fc_weight": rng.randn(3, 4).astype(np.float32), "fc_bias": np.zeros(3, np.float32)}
    model = export_model(out, params, [(2, 4)], onnx_file_path=None)
    assert [i.name for i in model.graph.input] == ["data"]
    feeds = {"data": rng.randn(2, 4).astype(np.float32)}
    want = nbdl_run(S.softmax(fc), feeds, params)[0]
    assert_close(ort_run(model, feeds)[0], want)
    # the label's shape may be given too, as MXNet users do
    export_model(out, params, [(2, 4), (2,)], onnx_file_path=None)
