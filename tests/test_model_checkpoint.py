"""Module-style checkpoints: prefix-symbol.json + prefix-%04d.params."""
import json
import os

import numpy as np
import pytest

import nbdl
from nbdl import model
from nbdl.serialization import (CheckpointError, FormatError, MissingFileError, ArgumentError,
                                load, save)

sym = nbdl.sym


def small_mlp():
    data = sym.var("data")
    net = sym.FullyConnected(data, num_hidden=8, name="fc1")
    net = sym.Activation(net, act_type="relu", name="relu1")
    net = sym.FullyConnected(net, num_hidden=3, name="fc2")
    return sym.SoftmaxOutput(net, name="softmax")


def make_params(net, rng):
    arg_shapes, _, _ = net.infer_shape(data=(4, 5))
    args = {n: nbdl.nd.array(rng.randn(*s).astype(np.float32))
            for n, s in zip(net.list_arguments(), arg_shapes)
            if n not in ("data", "softmax_label")}
    # The MLP has no aux states; a BatchNorm-like pair stands in for them.
    aux = {"bn_moving_mean": nbdl.nd.array(rng.randn(8).astype(np.float32)),
           "bn_moving_var": nbdl.nd.array(rng.rand(8).astype(np.float64), dtype=np.float64)}
    return args, aux


def test_checkpoint_round_trip(tmp_path, rng):
    net = small_mlp()
    args, aux = make_params(net, rng)
    prefix = str(tmp_path / "mlp")
    model.save_checkpoint(prefix, 7, net, args, aux)
    assert sorted(os.listdir(tmp_path)) == ["mlp-0007.params", "mlp-symbol.json"]

    raw = load(prefix + "-0007.params")
    assert sorted(raw) == sorted([f"arg:{k}" for k in args] + [f"aux:{k}" for k in aux])

    net2, args2, aux2 = model.load_checkpoint(prefix, 7)
    assert net2.tojson() == net.tojson()
    assert net2.list_arguments() == net.list_arguments()
    assert sorted(args2) == sorted(args) and sorted(aux2) == sorted(aux)
    for src, dst in ((args, args2), (aux, aux2)):
        for k, v in src.items():
            a, b = v.asnumpy(), dst[k].asnumpy()
            assert a.dtype == b.dtype and a.tobytes() == b.tobytes(), k


def test_loaded_checkpoint_binds_and_gives_the_same_output(tmp_path, rng):
    net = small_mlp()
    args, _ = make_params(net, rng)
    model.save_checkpoint(tmp_path / "m", 0, net, args, {})
    net2, args2, aux2 = model.load_checkpoint(tmp_path / "m", 0)
    assert aux2 == {}
    x = nbdl.nd.array(rng.randn(4, 5).astype(np.float32))
    label = nbdl.nd.zeros((4,))

    def run(s, params):
        ex = s.bind(nbdl.cpu(), dict(params, data=x, softmax_label=label), grad_req="null")
        return ex.forward()[0].asnumpy()

    np.testing.assert_array_equal(run(net, args), run(net2, args2))


def test_symbol_json_is_mxnet_schema(tmp_path, rng):
    net = small_mlp()
    model.save_checkpoint(tmp_path / "m", 1, net, *make_params(net, rng))
    doc = json.loads((tmp_path / "m-symbol.json").read_text())
    assert {"nodes", "arg_nodes", "heads"} <= set(doc)
    assert [n["op"] for n in doc["nodes"]].count("FullyConnected") == 2


def test_file_names_and_symbol_none(tmp_path):
    assert model.params_file("a/b", 12) == "a/b-0012.params"
    assert model.params_file("x", 12345) == "x-12345.params"
    assert model.symbol_file("a/b") == "a/b-symbol.json"
    model.save_checkpoint(tmp_path / "p", 3, None, {"w": np.ones(2, np.float32)}, None)
    assert os.listdir(tmp_path) == ["p-0003.params"]
    assert model.load_params(tmp_path / "p", 3)[0]["w"].shape == (2,)


def test_missing_files_are_named(tmp_path, rng):
    with pytest.raises(MissingFileError, match="nothing-symbol.json"):
        model.load_checkpoint(tmp_path / "nothing", 0)
    net = small_mlp()
    model.save_checkpoint(tmp_path / "m", 2, net, *make_params(net, rng))
    with pytest.raises(MissingFileError, match="m-0005.params") as e:
        model.load_checkpoint(tmp_path / "m", 5)
    assert isinstance(e.value, FileNotFoundError)


def test_bad_key_prefix_is_named(tmp_path):
    save(tmp_path / "g-0000.params", {"arg:w": np.ones(1), "fc1.weight": np.ones(2)})
    with pytest.raises(CheckpointError, match=r"g-0000.params.*'fc1.weight'.*'arg:' or 'aux:'"):
        model.load_params(tmp_path / "g", 0)
    save(tmp_path / "h-0000.params", {"opt:w": np.ones(1)})
    with pytest.raises(CheckpointError, match="'opt:w'"):
        model.load_params(tmp_path / "h", 0)
    save(tmp_path / "i-0000.params", {"arg:": np.ones(1)})
    with pytest.raises(CheckpointError, match="'arg:'"):
        model.load_params(tmp_path / "i", 0)


def test_unnamed_and_empty_params_files(tmp_path):
    save(tmp_path / "l-0000.params", [np.ones(1)])
    with pytest.raises(CheckpointError, match="1 unnamed arrays"):
        model.load_params(tmp_path / "l", 0)
    save(tmp_path / "e-0000.params", {})
    assert model.load_params(tmp_path / "e", 0) == ({}, {})


def test_corrupt_params_file_is_a_format_error(tmp_path, rng):
    net = small_mlp()
    model.save_checkpoint(tmp_path / "m", 0, net, *make_params(net, rng))
    f = tmp_path / "m-0000.params"
    f.write_bytes(f.read_bytes()[:-3])
    with pytest.raises(FormatError, match="m-0000.params"):
        model.load_checkpoint(tmp_path / "m", 0)


def test_argument_errors(tmp_path):
    with pytest.raises(CheckpointError, match="epoch"):
        model.save_checkpoint(tmp_path / "m", -1, None, {}, {})
    with pytest.raises(CheckpointError, match="epoch"):
        model.save_checkpoint(tmp_path / "m", 1.5, None, {}, {})
    with pytest.raises(CheckpointError, match="epoch"):
        model.load_checkpoint(tmp_path / "m", True)
    with pytest.raises(ArgumentError, match="symbol must be"):
        model.save_checkpoint(tmp_path / "m", 0, "net.json", {}, {})
    with pytest.raises(ArgumentError, match="arg_params must be a dict"):
        model.save_checkpoint(tmp_path / "m", 0, None, [np.ones(1)], {})
    with pytest.raises(ArgumentError, match="aux_params keys must be str"):
        model.save_checkpoint(tmp_path / "m", 0, None, {}, {0: np.ones(1)})
    assert os.listdir(tmp_path) == []
