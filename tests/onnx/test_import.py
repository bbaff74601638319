"""Import of ONNX models written with onnx.helper (an MLP, a convnet with
BatchNorm, recurrent layers): nbdl's outputs match onnxruntime's; malformed
files and unsupported operators give OnnxError."""
import numpy as np
import onnx
import pytest
from onnx import TensorProto, helper, numpy_helper

import nbdl
from nbdl.onnx import OnnxError, get_model_metadata, import_model, import_to_gluon
from onnx_helpers import assert_close, nbdl_run, ort_run


def make_model(nodes, inputs, outputs, inits, opset=17):
    graph = helper.make_graph(nodes, "g", inputs, outputs,
                              initializer=[numpy_helper.from_array(v, k) for k, v in inits.items()])
    opsets = [helper.make_opsetid("", opset)]
    model = helper.make_model(graph, opset_imports=opsets)
    model.ir_version = helper.find_min_ir_version_for(opsets)
    onnx.checker.check_model(model)
    return model


def f32(rng, *shape):
    return rng.randn(*shape).astype(np.float32)


def vi(name, shape, t=TensorProto.FLOAT):
    return helper.make_tensor_value_info(name, t, shape)


def check_import(model, feeds):
    sym, arg, aux = import_model(model)
    got = nbdl_run(sym, feeds, {**arg, **aux})
    want = ort_run(model, feeds)
    assert len(got) == len(want)
    for g, w in zip(got, want):
        assert_close(g, w)
    return sym, arg, aux


def test_mlp(rng):
    inits = {"w1": f32(rng, 8, 5), "b1": f32(rng, 8), "w2": f32(rng, 8, 3), "b2": f32(rng, 3),
             "scale": np.array(0.5, np.float32)}
    nodes = [helper.make_node("Gemm", ["x", "w1", "b1"], ["h"], transB=1),
             helper.make_node("Relu", ["h"], ["r"]),
             helper.make_node("Gemm", ["r", "w2", "b2"], ["o"], alpha=2.0, beta=0.5),
             helper.make_node("Mul", ["o", "scale"], ["s"]),
             helper.make_node("Softmax", ["s"], ["y"], axis=-1)]
    model = make_model(nodes, [vi("x", ["N", 5])], [vi("y", ["N", 3])], inits)
    sym, arg, _ = check_import(model, {"x": f32(rng, 4, 5)})
    assert "w1" in arg and sym.list_outputs()[0].startswith("y")
    meta = get_model_metadata(model)
    assert meta == {"input_tensor_data": [("x", ("N", 5))], "output_tensor_data": [("y", ("N", 3))]}


def test_convnet_with_batchnorm(rng):
    c = 4
    inits = {"w": f32(rng, c, 3, 3, 3), "b": f32(rng, c), "g": f32(rng, c), "be": f32(rng, c),
             "m": f32(rng, c), "v": rng.rand(c).astype(np.float32) + 0.5,
             "fw": f32(rng, 2, c), "fb": f32(rng, 2), "shape": np.array([0, -1], np.int64),
             "pads": np.array([0, 0, 1, 0, 0, 0, 0, 1], np.int64)}
    nodes = [helper.make_node("Conv", ["x", "w", "b"], ["c"], kernel_shape=[3, 3],
                              pads=[1, 1, 1, 1], strides=[1, 1]),
             helper.make_node("BatchNormalization", ["c", "g", "be", "m", "v"], ["bn"],
                              epsilon=1e-3),
             helper.make_node("Relu", ["bn"], ["r"]),
             helper.make_node("MaxPool", ["r"], ["p"], kernel_shape=[2, 2], strides=[2, 2],
                              ceil_mode=1),
             helper.make_node("AveragePool", ["r"], ["ap"], kernel_shape=[3, 3],
                              pads=[1, 1, 1, 1], count_include_pad=0),
             helper.make_node("Pad", ["ap", "pads"], ["pp"], mode="edge"),
             helper.make_node("GlobalAveragePool", ["p"], ["gp"]),
             helper.make_node("Reshape", ["gp", "shape"], ["f"]),
             helper.make_node("Gemm", ["f", "fw", "fb"], ["y"], transB=1),
             helper.make_node("Conv", ["x", "w"], ["same"], kernel_shape=[3, 3],
                              auto_pad="SAME_UPPER", strides=[2, 2]),
             helper.make_node("Flatten", ["pp"], ["flat"], axis=2),
             helper.make_node("LRN", ["x"], ["lrn"], size=3, alpha=0.01, beta=0.6, bias=1.5),
             helper.make_node("ReduceL2", ["x"], ["l2"], axes=[2, 3], keepdims=0)]
    model = make_model(nodes, [vi("x", [2, 3, 7, 7])],
                       [vi("y", [2, 2]), vi("same", [None] * 4), vi("flat", [None] * 2),
                        vi("lrn", [None] * 4), vi("l2", [None] * 2)], inits)
    _, _, aux = check_import(model, {"x": f32(rng, 2, 3, 7, 7)})
    assert set(aux) == {"m", "v"}


def lstm_weights(rng, d, g, h, i):
    return {"W": f32(rng, d, g * h, i) * 0.5, "R": f32(rng, d, g * h, h) * 0.5,
            "B": f32(rng, d, 2 * g * h) * 0.5}


@pytest.mark.parametrize("op,gates,direction", [("LSTM", 4, "forward"), ("LSTM", 4, "bidirectional"),
                                                ("GRU", 3, "forward"), ("RNN", 1, "bidirectional")])
def test_recurrent(op, gates, direction, rng):
    d = 2 if direction == "bidirectional" else 1
    h, i, t, n = 3, 4, 5, 2
    inits = lstm_weights(rng, d, gates, h, i)
    extra = {"linear_before_reset": 1} if op == "GRU" else {}
    outs = ["y", "yh"] + (["yc"] if op == "LSTM" else [])
    ins = ["x", "W", "R", "B"]
    if op == "LSTM":
        ins += ["", "h0"]
        inits["h0"] = f32(rng, d, n, h)
    nodes = [helper.make_node(op, ins, outs, hidden_size=h, direction=direction, **extra)]
    out_info = [vi(o, [None] * (4 if o == "y" else 3)) for o in outs]
    model = make_model(nodes, [vi("x", [t, n, i])], out_info, inits)
    check_import(model, {"x": f32(rng, t, n, i)})


def test_constant_folding_of_shape_chains(rng):
    # what exporters of other frameworks write: Shape -> Gather -> Unsqueeze -> Concat -> Reshape
    nodes = [helper.make_node("Shape", ["x"], ["s"]),
             helper.make_node("Constant", [], ["zero"], value=numpy_helper.from_array(
                 np.array(0, np.int64))),
             helper.make_node("Gather", ["s", "zero"], ["n"], axis=0),
             helper.make_node("Constant", [], ["ax"], value_ints=[0]),
             helper.make_node("Unsqueeze", ["n", "ax"], ["n1"]),
             helper.make_node("Constant", [], ["m1"], value_ints=[-1]),
             helper.make_node("Concat", ["n1", "m1"], ["shape"], axis=0),
             helper.make_node("Reshape", ["x", "shape"], ["y"]),
             helper.make_node("Transpose", ["y"], ["yt"], perm=[1, 0]),
             helper.make_node("ReduceMean", ["x"], ["rm"], axes=[1, 2], keepdims=0)]
    model = make_model(nodes, [vi("x", [2, 3, 4])], [vi("yt", [None] * 2), vi("rm", [None])], {},
                       opset=17)
    check_import(model, {"x": f32(rng, 2, 3, 4)})


def test_import_to_gluon(rng):
    inits = {"w": f32(rng, 3, 5), "b": f32(rng, 3)}
    nodes = [helper.make_node("Gemm", ["x", "w", "b"], ["y"], transB=1),
             helper.make_node("Sigmoid", ["y"], ["z"])]
    model = make_model(nodes, [vi("x", [None, 5])], [vi("z", [None, 3])], inits)
    block = import_to_gluon(model, nbdl.cpu())
    x = f32(rng, 6, 5)
    assert_close(block(nbdl.nd.array(x)).asnumpy(), ort_run(model, {"x": x})[0])


def test_unsupported_operator_is_named(rng):
    nodes = [helper.make_node("Det", ["x"], ["y"])]
    model = make_model(nodes, [vi("x", [3, 3])], [vi("y", [])], {})
    with pytest.raises(OnnxError, match="ONNX operator 'Det'.*has no nbdl conversion"):
        import_model(model)
    nodes = [helper.make_node("Resize", ["x", "", "sc"], ["y"], mode="linear")]
    model = make_model(nodes, [vi("x", [1, 1, 2, 2])], [vi("y", [None] * 4)],
                       {"sc": np.array([1, 1, 2, 2], np.float32)})
    with pytest.raises(OnnxError, match="Resize .*mode='linear'"):
        import_model(model)


def test_malformed_files_give_onnx_errors(tmp_path, rng):
    with pytest.raises(OnnxError, match="no such file"):
        import_model(str(tmp_path / "missing.onnx"))
    with pytest.raises(OnnxError, match="cannot parse"):
        import_model(b"\x08\x07\x12garbage\xff\xff\xff")
    inits = {"w": f32(rng, 3, 5), "b": f32(rng, 3)}
    nodes = [helper.make_node("Gemm", ["x", "w", "b"], ["y"], transB=1),
             helper.make_node("Relu", ["y"], ["z"])]
    good = make_model(nodes, [vi("x", [2, 5])], [vi("z", [2, 3])], inits).SerializeToString()
    fuzz = np.random.RandomState(7)
    outcomes = set()
    for _ in range(150):
        data = bytearray(good)
        for _ in range(fuzz.randint(1, 6)):
            data[fuzz.randint(len(data))] = fuzz.randint(256)
        try:
            import_model(bytes(data))
            outcomes.add("ok")
        except OnnxError:
            outcomes.add("OnnxError")
    assert "OnnxError" in outcomes


def test_mxnet_spellings():
    # mx.onnx.export_model and mx.contrib.onnx.import_model (MXNet 1.9.1's homes)
    assert nbdl.contrib.onnx.import_model is nbdl.onnx.import_model
    assert nbdl.contrib.onnx.import_to_gluon is nbdl.onnx.import_to_gluon
    assert nbdl.contrib.onnx.get_model_metadata is nbdl.onnx.get_model_metadata
    assert nbdl.contrib.onnx.export_model is nbdl.onnx.export_model
