"""Block.load_parameters and the zoo's pretrained=True on files with MXNet 1.x
prefixed parameter names (``resnetv10_stage1_conv0_weight``): what
``net.collect_params().save(f)``, the deprecated ``save_params`` (MXNet's
model-store files) and ``export`` write.  nbdl's blocks have structural names
only, so such files are matched by MXNet 1.x's creation order, reconstructed
from the names (nbdl.gluon._legacy_params).

The files are written here with nbdl's own writer of MXNet's format under the
names MXNet 1.9.1 gives; a check against MXNet itself (its files and outputs)
is not part of the suite, as MXNet is no dependency of nbdl."""
import random

import numpy as np
import pytest

import nbdl
from nbdl.errors import NbdlError
from nbdl.gluon import HybridBlock, SymbolBlock, nn
from nbdl.gluon.model_zoo import PretrainedFileError, get_model
from nbdl.serialization import save
from nbdl.testing import assert_almost_equal

# MXNet 1.9.1's parameter names, in its collect_params() order, printed by
#   net = mx.gluon.model_zoo.vision.get_model(name); net.initialize()
#   net(mx.nd.zeros((1, 3, 224, 224))); print(*net.collect_params().keys())
# (independent of ``classes``; the prefix counter is that of a fresh process)
RESNET18_V1 = """
    resnetv10_conv0_weight resnetv10_batchnorm0_gamma resnetv10_batchnorm0_beta
    resnetv10_batchnorm0_running_mean resnetv10_batchnorm0_running_var
    resnetv10_stage1_conv0_weight resnetv10_stage1_batchnorm0_gamma
    resnetv10_stage1_batchnorm0_beta resnetv10_stage1_batchnorm0_running_mean
    resnetv10_stage1_batchnorm0_running_var resnetv10_stage1_conv1_weight
    resnetv10_stage1_batchnorm1_gamma resnetv10_stage1_batchnorm1_beta
    resnetv10_stage1_batchnorm1_running_mean resnetv10_stage1_batchnorm1_running_var
    resnetv10_stage1_conv2_weight resnetv10_stage1_batchnorm2_gamma
    resnetv10_stage1_batchnorm2_beta resnetv10_stage1_batchnorm2_running_mean
    resnetv10_stage1_batchnorm2_running_var resnetv10_stage1_conv3_weight
    resnetv10_stage1_batchnorm3_gamma resnetv10_stage1_batchnorm3_beta
    resnetv10_stage1_batchnorm3_running_mean resnetv10_stage1_batchnorm3_running_var
    resnetv10_stage2_conv0_weight resnetv10_stage2_batchnorm0_gamma
    resnetv10_stage2_batchnorm0_beta resnetv10_stage2_batchnorm0_running_mean
    resnetv10_stage2_batchnorm0_running_var resnetv10_stage2_conv1_weight
    resnetv10_stage2_batchnorm1_gamma resnetv10_stage2_batchnorm1_beta
    resnetv10_stage2_batchnorm1_running_mean resnetv10_stage2_batchnorm1_running_var
    resnetv10_stage2_conv2_weight resnetv10_stage2_batchnorm2_gamma
    resnetv10_stage2_batchnorm2_beta resnetv10_stage2_batchnorm2_running_mean
    resnetv10_stage2_batchnorm2_running_var resnetv10_stage2_conv3_weight
    resnetv10_stage2_batchnorm3_gamma resnetv10_stage2_batchnorm3_beta
    resnetv10_stage2_batchnorm3_running_mean resnetv10_stage2_batchnorm3_running_var
    resnetv10_stage2_conv4_weight resnetv10_stage2_batchnorm4_gamma
    resnetv10_stage2_batchnorm4_beta resnetv10_stage2_batchnorm4_running_mean
    resnetv10_stage2_batchnorm4_running_var resnetv10_stage3_conv0_weight
    resnetv10_stage3_batchnorm0_gamma resnetv10_stage3_batchnorm0_beta
    resnetv10_stage3_batchnorm0_running_mean resnetv10_stage3_batchnorm0_running_var
    resnetv10_stage3_conv1_weight resnetv10_stage3_batchnorm1_gamma
    resnetv10_stage3_batchnorm1_beta resnetv10_stage3_batchnorm1_running_mean
    resnetv10_stage3_batchnorm1_running_var resnetv10_stage3_conv2_weight
    resnetv10_stage3_batchnorm2_gamma resnetv10_stage3_batchnorm2_beta
    resnetv10_stage3_batchnorm2_running_mean resnetv10_stage3_batchnorm2_running_var
    resnetv10_stage3_conv3_weight resnetv10_stage3_batchnorm3_gamma
    resnetv10_stage3_batchnorm3_beta resnetv10_stage3_batchnorm3_running_mean
    resnetv10_stage3_batchnorm3_running_var resnetv10_stage3_conv4_weight
    resnetv10_stage3_batchnorm4_gamma resnetv10_stage3_batchnorm4_beta
    resnetv10_stage3_batchnorm4_running_mean resnetv10_stage3_batchnorm4_running_var
    resnetv10_stage4_conv0_weight resnetv10_stage4_batchnorm0_gamma
    resnetv10_stage4_batchnorm0_beta resnetv10_stage4_batchnorm0_running_mean
    resnetv10_stage4_batchnorm0_running_var resnetv10_stage4_conv1_weight
    resnetv10_stage4_batchnorm1_gamma resnetv10_stage4_batchnorm1_beta
    resnetv10_stage4_batchnorm1_running_mean resnetv10_stage4_batchnorm1_running_var
    resnetv10_stage4_conv2_weight resnetv10_stage4_batchnorm2_gamma
    resnetv10_stage4_batchnorm2_beta resnetv10_stage4_batchnorm2_running_mean
    resnetv10_stage4_batchnorm2_running_var resnetv10_stage4_conv3_weight
    resnetv10_stage4_batchnorm3_gamma resnetv10_stage4_batchnorm3_beta
    resnetv10_stage4_batchnorm3_running_mean resnetv10_stage4_batchnorm3_running_var
    resnetv10_stage4_conv4_weight resnetv10_stage4_batchnorm4_gamma
    resnetv10_stage4_batchnorm4_beta resnetv10_stage4_batchnorm4_running_mean
    resnetv10_stage4_batchnorm4_running_var resnetv10_dense0_weight resnetv10_dense0_bias
""".split()
SQUEEZENET1_1 = """
    squeezenet0_conv0_weight squeezenet0_conv0_bias squeezenet0_conv1_weight
    squeezenet0_conv1_bias squeezenet0_conv2_weight squeezenet0_conv2_bias
    squeezenet0_conv3_weight squeezenet0_conv3_bias squeezenet0_conv4_weight
    squeezenet0_conv4_bias squeezenet0_conv5_weight squeezenet0_conv5_bias
    squeezenet0_conv6_weight squeezenet0_conv6_bias squeezenet0_conv7_weight
    squeezenet0_conv7_bias squeezenet0_conv8_weight squeezenet0_conv8_bias
    squeezenet0_conv9_weight squeezenet0_conv9_bias squeezenet0_conv10_weight
    squeezenet0_conv10_bias squeezenet0_conv11_weight squeezenet0_conv11_bias
    squeezenet0_conv12_weight squeezenet0_conv12_bias squeezenet0_conv13_weight
    squeezenet0_conv13_bias squeezenet0_conv14_weight squeezenet0_conv14_bias
    squeezenet0_conv15_weight squeezenet0_conv15_bias squeezenet0_conv16_weight
    squeezenet0_conv16_bias squeezenet0_conv17_weight squeezenet0_conv17_bias
    squeezenet0_conv18_weight squeezenet0_conv18_bias squeezenet0_conv19_weight
    squeezenet0_conv19_bias squeezenet0_conv20_weight squeezenet0_conv20_bias
    squeezenet0_conv21_weight squeezenet0_conv21_bias squeezenet0_conv22_weight
    squeezenet0_conv22_bias squeezenet0_conv23_weight squeezenet0_conv23_bias
    squeezenet0_conv24_weight squeezenet0_conv24_bias squeezenet0_conv25_weight
    squeezenet0_conv25_bias
""".split()

# names, input size (ResNet ends in global pooling; 209 is the smallest SqueezeNet
# 1.1 takes), a layer and the kind of it to leave out, and the count that then differs
MODELS = {"resnet18_v1": (RESNET18_V1, 32, "resnetv10_stage1_batchnorm0_", "running_var",
                          "running_var: 19 in the file, 20 in the block"),
          "squeezenet1.1": (SQUEEZENET1_1, 209, "squeezenet0_conv3_", "bias",
                            "bias: 25 in the file, 26 in the block")}


def _batch(size, seed=0):
    rng = np.random.default_rng(seed)
    return nbdl.nd.array(rng.uniform(-1, 1, (1, 3, size, size)).astype(np.float32))


def _random_net(name, seed=0):
    """A built net (shapes inferred) whose every parameter, BatchNorm's
    statistics included, holds distinct random values."""
    size = MODELS[name][1]
    net = get_model(name, classes=10)
    net.initialize()
    net(_batch(size))
    rng = np.random.default_rng(seed)
    for key, p in net.collect_params().items():
        lo, hi = (0.5, 1.5) if key.endswith(("running_var", "gamma")) else (-0.1, 0.1)
        p.set_data(nbdl.nd.array(rng.uniform(lo, hi, p.shape).astype(np.float32)))
    return net


def _values(net):
    return [p.data().asnumpy().copy() for p in net.collect_params().values()]


def _assert_values(net, values):
    params = net.collect_params()
    assert len(params) == len(values)
    for (key, p), v in zip(params.items(), values):
        np.testing.assert_array_equal(p.data().asnumpy(), v, err_msg=key)


def _legacy_file(path, keys, values, order=None, form="prefixed"):
    """Write ``keys[i] -> values[i]`` in ``order`` as MXNet does: ``prefixed``
    (collect_params().save), ``stripped`` (save_params: without the network's
    prefix) or ``arg_aux`` (export)."""
    top = keys[0].split("_")[0] + "_"

    def name(key):
        if form == "stripped":
            return key[len(top):]
        if form == "arg_aux":
            return ("aux:" if "running_" in key else "arg:") + key
        return key
    order = range(len(keys)) if order is None else order
    save(str(path), {name(keys[i]): values[i] for i in order})
    return str(path)


def _refused(tmp_path, target, keys, values, match, order=None, **kwargs):
    """Loading ``keys[i] -> values[i]`` (in ``order``) into ``target`` fails
    with a message holding every text in ``match``, and changes nothing."""
    before = _values(target)
    path = tmp_path / "bad.params"
    save(str(path), {keys[i]: values[i] for i in (range(len(keys)) if order is None else order)})
    with pytest.raises(NbdlError) as err:
        target.load_parameters(str(path), **kwargs)
    for text in match:
        assert text in str(err.value), (text, str(err.value))
    _assert_values(target, before)


@pytest.mark.parametrize("name", sorted(MODELS))
def test_prefixed_names_load_as_structural_names_do(tmp_path, name):
    keys, size, layer, kind, count = MODELS[name]
    src = _random_net(name)
    values = _values(src)
    assert len(keys) == len(values)
    src.save_parameters(str(tmp_path / "struct.params"))
    by_name = get_model(name, classes=10)
    by_name.load_parameters(str(tmp_path / "struct.params"))
    n = len(keys)
    shuffled = list(range(n))
    random.Random(0).shuffle(shuffled)
    # sorted: BatchNorm's beta before gamma, bias before weight, conv10 before conv2
    by_key = sorted(range(n), key=keys.__getitem__)
    assert by_key != list(range(n))
    cases = [("sorted", by_key, "arg_aux"), ("shuffled", shuffled, "stripped")]
    if name == "squeezenet1.1":       # (ResNet-18's files are 45 MB)
        cases += [("mxnet", range(n), "prefixed"), ("shuffled", shuffled, "prefixed")]
    for order_name, order, form in cases:
        path = _legacy_file(tmp_path / f"{order_name}_{form}.params", keys, values, order, form)
        net = get_model(name, classes=10)      # fresh: most shapes not known yet
        net.load_parameters(path)
        _assert_values(net, values)
    x = _batch(size, seed=1)
    assert_almost_equal(net(x).asnumpy(), by_name(x).asnumpy(), rtol=0, atol=0)
    assert_almost_equal(net(x).asnumpy(), src(x).asnumpy(), rtol=0, atol=0)
    # a parameter left out: refused (allow_missing cannot say which), nothing changed
    j = keys.index(layer + kind)
    _refused(tmp_path, net, keys, [np.zeros_like(v) for v in values],
             [f"{n - 1} parameters but the block has {n}", count, repr(layer),
              "allow_missing/ignore_extra cannot apply"],
             order=[k for k in shuffled if k != j], allow_missing=True)


def test_pretrained_reads_mxnet_model_store_file(tmp_path):
    values = _values(_random_net("squeezenet1.1"))
    order = list(range(len(values)))
    random.Random(1).shuffle(order)
    # MXNet's model store: <name>-<first 8 hex digits of its sha1>.params, save_params names
    _legacy_file(tmp_path / "squeezenet1.1-33ba0f93.params", SQUEEZENET1_1, values, order,
                 "stripped")
    net = get_model("squeezenet1.1", classes=10, pretrained=True, root=str(tmp_path))
    _assert_values(net, values)
    # <name>.params, when there, is the one read
    other = get_model("squeezenet1.1", classes=10)
    other.initialize()
    other.load_parameters(_legacy_file(tmp_path / "x.params", SQUEEZENET1_1,
                                       [v + 1 for v in values]))
    other.save_parameters(str(tmp_path / "squeezenet1.1.params"))
    net = get_model("squeezenet1.1", classes=10, pretrained=True, root=str(tmp_path))
    _assert_values(net, [v + 1 for v in values])
    # two model-store files and no <name>.params: no guess
    (tmp_path / "squeezenet1.1.params").unlink()
    _legacy_file(tmp_path / "squeezenet1.1-0123abcd.params", SQUEEZENET1_1, values)
    with pytest.raises(PretrainedFileError, match="several MXNet model-store files"):
        get_model("squeezenet1.1", classes=10, pretrained=True, root=str(tmp_path))


def test_mismatching_file_is_refused_and_block_left_untouched(tmp_path):
    keys = SQUEEZENET1_1
    values = _values(_random_net("squeezenet1.1"))
    target = _random_net("squeezenet1.1", seed=3)
    names = list(target.collect_params())
    shuffled = list(range(len(keys)))
    random.Random(2).shuffle(shuffled)
    # a wrong shape, the file shuffled: named as the file has it and as the block has it
    i = keys.index("squeezenet0_conv10_weight")
    bad = list(values)
    bad[i] = np.zeros((bad[i].shape[0], 7) + bad[i].shape[2:], np.float32)
    _refused(tmp_path, target, keys, bad,
             [repr(names[i]), str(values[i].shape), "'squeezenet0_conv10_weight'",
              str(bad[i].shape)], order=shuffled)
    # the output layer of a 1000-class file
    bad = list(values)
    bad[-2:] = [np.zeros((1000,) + values[-2].shape[1:], np.float32), np.zeros(1000, np.float32)]
    _refused(tmp_path, target, keys, bad, [repr(names[-2]), "'squeezenet0_conv25_weight'",
                                           str(bad[-2].shape)])
    # a key of no kind the block has, even with ignore_extra
    _refused(tmp_path, target, keys + ["squeezenet0_prelu0_alpha"],
             values + [np.zeros(3, np.float32)], ["'squeezenet0_prelu0_alpha'", "cannot apply"],
             ignore_extra=True)
    # another dtype: named both ways
    _refused(tmp_path, target, keys, [v.astype(np.float16) for v in values],
             [f"{names[0]!r} (the file's 'squeezenet0_conv0_weight') is float16"])
    # and the good file loads
    target.load_parameters(_legacy_file(tmp_path / "good.params", keys, values, shuffled))
    _assert_values(target, values)


class _Two(HybridBlock):
    def __init__(self):
        super().__init__()
        self.first = nn.Dense(3, in_units=3)
        self.second = nn.Dense(3, in_units=3)

    def forward(self, x):
        return self.second(self.first(x))


def test_order_the_names_leave_open(tmp_path):
    net = _Two()
    net.initialize()
    rng = np.random.default_rng(0)
    w = [rng.standard_normal(s).astype(np.float32) for s in ((3, 3), (3,), (3, 3), (3,))]
    params = list(net.collect_params().values())
    # counters fix the order of layers of one shape: dense1 after dense0
    save(str(tmp_path / "a.params"), {"two0_dense1_bias": w[3], "two0_dense0_weight": w[0],
                                      "two0_dense1_weight": w[2], "two0_dense0_bias": w[1]})
    net.load_parameters(str(tmp_path / "a.params"))
    for p, v in zip(params, w):
        np.testing.assert_array_equal(p.data().asnumpy(), v)
    # explicit prefixes without counters do not: MXNet's own order decides ...
    named = {"two0_b_weight": w[2], "two0_b_bias": w[3], "two0_a_weight": w[0],
             "two0_a_bias": w[1]}
    save(str(tmp_path / "b.params"), named)
    net.load_parameters(str(tmp_path / "b.params"))
    for p, v in zip(params, [w[2], w[3], w[0], w[1]]):
        np.testing.assert_array_equal(p.data().asnumpy(), v)
    # ... and when it does not fit either (bias before weight), nothing is guessed
    save(str(tmp_path / "c.params"), dict(sorted(named.items())))
    with pytest.raises(NbdlError, match="more than one order"):
        net.load_parameters(str(tmp_path / "c.params"))
    for p, v in zip(params, [w[2], w[3], w[0], w[1]]):
        np.testing.assert_array_equal(p.data().asnumpy(), v)


def test_names_without_dots_that_are_the_blocks_own_load_by_name(tmp_path):
    w, b = np.ones((3, 2), np.float32), np.arange(3, dtype=np.float32)
    dense = nn.Dense(3, in_units=2)
    dense.initialize()
    # a block without children: its structural names have no '.' either
    save(str(tmp_path / "own.params"), {"bias": b, "weight": w, "other": b})
    dense.load_parameters(str(tmp_path / "own.params"), ignore_extra=True)
    np.testing.assert_array_equal(dense.weight.data().asnumpy(), w)
    save(str(tmp_path / "mx.params"), {"dense0_weight": 2 * w, "dense0_bias": 2 * b})
    dense.load_parameters(str(tmp_path / "mx.params"))
    np.testing.assert_array_equal(dense.bias.data().asnumpy(), 2 * b)
    # a SymbolBlock's names are MXNet's own: matched by name, never by order
    data = nbdl.sym.var("data")
    blk = SymbolBlock(nbdl.sym.FullyConnected(data, num_hidden=3, name="fc1"), data)
    blk.initialize()
    save(str(tmp_path / "sym.params"), {"arg:fc1_weight": w, "arg:fc1_bias": b,
                                        "arg:fc9_weight": w})
    blk.load_parameters(str(tmp_path / "sym.params"), ignore_extra=True)
    np.testing.assert_array_equal(blk.collect_params()["fc1_bias"].data().asnumpy(), b)
    save(str(tmp_path / "sym2.params"), {"arg:fc9_weight": w, "arg:fc9_bias": b})
    with pytest.raises(NbdlError, match="missing from the file"):
        blk.load_parameters(str(tmp_path / "sym2.params"))
