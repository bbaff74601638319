"""The vision model zoo: every architecture builds with Gluon's structural
parameter names, shapes and MXNet 1.9.1's parameter counts (read from
``summary``); eager and hybridized forwards agree; a hybridized training step
changes the parameters; pretrained files are read locally (never
downloaded).

Inputs are the smallest each architecture accepts (2 CPU cores): the
networks ending in global pooling (ResNet, MobileNet) run at 32x32, VGG at
32x32 and AlexNet at 63x63 (their Dense layers' input sizes, hence their
parameter counts, are fixed at 224x224, where a separate net is counted),
DenseNet at 221x221, SqueezeNet 1.0 at 213x213 and 1.1 at 209x209 (the
smallest sizes their 7x7 and 13x13 average poolings accept; the counts do
not depend on the size) and Inception V3 at its fixed 299x299."""
import hashlib
import io
import os
import re
from contextlib import redirect_stdout

import numpy as np
import pytest

import nbdl
from nbdl import autograd
from nbdl.errors import NbdlError
from nbdl.gluon import Trainer
from nbdl.gluon.loss import SoftmaxCrossEntropyLoss
from nbdl.gluon.model_zoo import PretrainedFileError, get_model, vision
from nbdl.testing import assert_almost_equal

# Figures of MXNet 1.9.1's Gluon model zoo with classes=1000, obtained by
# running MXNet 1.9.1 itself (a reference here, never a dependency of nbdl):
#   net = mx.gluon.model_zoo.vision.get_model(name); net.initialize()
#   net(mx.nd.zeros((1, 3, 224, 224)))                 # 299x299 for inceptionv3
#   total = sum(p.data().size for p in net.collect_params().values())
#   trainable = sum(p.data().size for p in net.collect_params().values()
#                   if p.grad_req != "null")
#   struct = net._collect_params_with_prefix()         # what save_parameters writes
#   digest(lines) = hashlib.sha256("\n".join(lines).encode()).hexdigest()[:16]
#   structural = digest([f"{k}:{'x'.join(map(str, p.shape))}" for k, p in struct.items()])
#   prefixed = digest([f"{kind}:{shape}" ...]) over net.collect_params() in its order
#       (MXNet 1.x's prefixed names, e.g. resnetv10_stage1_batchnorm0_running_mean,
#       reduced to their kind: weight, bias, gamma, beta, running_mean, running_var)
# name: (total, trainable, number of parameters, structural digest, prefixed digest)
MXNET_1_9_1 = {
    "resnet18_v1": (11_699_112, 11_689_512, 102, "5602b8d9915d086e", "cf5220ee67af9cdd"),
    "resnet34_v1": (21_814_696, 21_797_672, 182, "d3536cde843ba386", "c5a953977e822ef0"),
    "resnet50_v1": (25_629_032, 25_575_912, 299, "4c01f76ada211a8c", "6145d65237ca71a2"),
    "resnet101_v1": (44_695_144, 44_589_800, 588, "e3206fa2ab0a307b", "8e649baa013388af"),
    "resnet152_v1": (60_404_072, 60_252_648, 877, "f552cce07a4388c2", "def6fdcb566964d1"),
    "resnet18_v2": (11_695_796, 11_687_848, 98, "6137a25af38b106d", "0b4b0269e33d7987"),
    "resnet34_v2": (21_811_380, 21_796_008, 178, "5f5b8a2b3c22f6a8", "96a4822188d0c587"),
    "resnet50_v2": (25_595_060, 25_549_480, 259, "8e349a7bbd6e4807", "0ecf5c4a50fc2d98"),
    "resnet101_v2": (44_639_412, 44_541_608, 514, "4b9ceb5b7130e9d8", "f6690daa63121180"),
    "resnet152_v2": (60_329_140, 60_185_256, 769, "35821167d9a79170", "a841bf8329e46ce8"),
    "vgg11": (132_863_336, 132_863_336, 22, "e143da626adf86cb", "d70b91398fd445c8"),
    "vgg11_bn": (132_874_344, 132_868_840, 54, "9fc6beb14b90e52f", "8a5168bb92e60dc9"),
    "vgg13": (133_047_848, 133_047_848, 26, "b136b8a3a3a9375f", "6c9f13b064ada46c"),
    "vgg13_bn": (133_059_624, 133_053_736, 66, "dc85112f67789144", "9cf21cc11359be42"),
    "vgg16": (138_357_544, 138_357_544, 32, "ef31143309a88820", "fd2f092a8ae49ddb"),
    "vgg16_bn": (138_374_440, 138_365_992, 84, "8511c59a2add8b8b", "52d2fd4c0a2fe9c2"),
    "vgg19": (143_667_240, 143_667_240, 38, "bdbfe85a4e8499fe", "7849174ecf3c2371"),
    "vgg19_bn": (143_689_256, 143_678_248, 102, "faed7f6eee6442b6", "43a612e2430b5985"),
    "alexnet": (61_100_840, 61_100_840, 16, "50c3f4dd5cede6b1", "dc4d2cc7ead94b6d"),
    "densenet121": (8_062_504, 7_978_856, 606, "25f2f9fd1b38795c", "4a5af2d690f7e657"),
    "densenet161": (28_900_936, 28_681_000, 806, "25e0d64ec1baee40", "04580aba0a75eae2"),
    "densenet169": (14_307_880, 14_149_480, 846, "7bd8e6934e02e21d", "8bd31cd9cb2af3ac"),
    "densenet201": (20_242_984, 20_013_928, 1006, "809a1da6b794b6c9", "9071f1ac6f42cdc1"),
    "squeezenet1.0": (1_248_424, 1_248_424, 52, "d6e6d125ac47a297", "23a8161e50a3ce47"),
    "squeezenet1.1": (1_235_496, 1_235_496, 52, "e6b9661b8fb1ccad", "e20bec03b232528a"),
    "inceptionv3": (23_869_000, 23_834_568, 472, "210c63672b8a662a", "0a56223c3ad5a958"),
    "mobilenet1.0": (4_253_864, 4_231_976, 137, "0af0c30c372e96f2", "6e5053e9ff4db43a"),
    "mobilenet0.75": (2_601_976, 2_585_560, 137, "1a47963a50a7648c", "491443b8fec3dd93"),
    "mobilenet0.5": (1_342_536, 1_331_592, 137, "aa6677250484c227", "0bbd85f8118ad853"),
    "mobilenet0.25": (475_544, 470_072, 137, "d9b6123192deba3c", "14f7bdd55b7058f8"),
    "mobilenetv2_1.0": (3_539_136, 3_504_960, 266, "d6fded48b4e656fd", "dbcd02f961290c0f"),
    "mobilenetv2_0.75": (2_653_864, 2_627_592, 266, "a9402609fe951bff", "9aca14ae467d87d0"),
    "mobilenetv2_0.5": (1_983_104, 1_964_736, 266, "78274b2a4a6e61e6", "a2c57992e5650bce"),
    "mobilenetv2_0.25": (1_526_856, 1_516_392, 266, "ac4b2a6559c08371", "5c4b903c840c5f6d"),
}
ALL_MODELS = list(MXNET_1_9_1)
KINDS = ("running_mean", "running_var", "weight", "bias", "gamma", "beta")

# (size counted at, size run at): see the module docstring
GLOBAL_POOL = {n for n in ALL_MODELS if n.startswith(("resnet", "mobilenet"))}
SIZES = {**{n: (32, 32) for n in GLOBAL_POOL},
         **{n: (224, 32) for n in ALL_MODELS if n.startswith("vgg")},
         "alexnet": (224, 63), "squeezenet1.0": (213, 213), "squeezenet1.1": (209, 209),
         "inceptionv3": (299, 299),
         **{n: (221, 221) for n in ALL_MODELS if n.startswith("densenet")}}


@pytest.fixture(autouse=True)
def _python_loop_executor(monkeypatch):
    # A hybridized zoo model at these sizes is dispatch-bound, so the executor
    # would compile a native driver per architecture and per pass (forward,
    # training forward, backward): 30-140 s each on 2 cores whenever Numba's
    # cache is cold (any kernel file edited).  The drivers are checked in
    # tests/executor; here the schedules run from Python.
    monkeypatch.setenv("NBDL_DRIVER", "0")


def _batch(size, n=2, seed=0):
    rng = np.random.default_rng(seed)
    return nbdl.nd.array(rng.uniform(-1, 1, (n, 3, size, size)).astype(np.float32))


def _initialize(net, init):
    """Every weight from ``init``, overriding the layers' own weight
    initializers (VGG's Normal draws of 120M values take ~10 s); the other
    parameters from their own rules (zeros, ones)."""
    for name, p in net.collect_params().items():
        p.initialize(init=init if name.endswith("weight") else None, default_init=init)


def _summary(net, x):
    """``net.summary(x)``'s counts, and the eager output it computed."""
    captured = []
    handle = net.register_forward_hook(lambda block, args, out: captured.append(out))
    with redirect_stdout(io.StringIO()):
        text = net.summary(x)
    handle.detach()
    counts = {key: int(re.search(rf"{key}: (\d+)", text).group(1))
              for key in ("Total params", "Trainable params", "Non-trainable params",
                          "Shared params in forward computation graph",
                          "Unique parameters in model")}
    assert len(captured) == 1
    return counts, captured[0]


def _digest(lines):
    return hashlib.sha256("\n".join(lines).encode()).hexdigest()[:16]


def _check_counts_names_shapes(name, net, x):
    total, trainable, n_params, structural, prefixed = MXNET_1_9_1[name]
    counts, out = _summary(net, x)
    assert counts["Total params"] == total, (name, counts)
    assert counts["Unique parameters in model"] == total, (name, counts)
    assert counts["Trainable params"] == trainable, (name, counts)
    assert counts["Non-trainable params"] == total - trainable, (name, counts)
    assert counts["Shared params in forward computation graph"] == 0, (name, counts)
    # Names, shapes and their order equal what MXNet 1.9.1's save_parameters
    # writes, so its files load by name; the kinds and shapes also follow
    # MXNet 1.x's prefixed collect_params() one for one, in order.
    params = net.collect_params()
    lines = [f"{k}:{'x'.join(map(str, p.shape))}" for k, p in params.items()]
    assert len(lines) == n_params, (name, len(lines))
    assert _digest(lines) == structural, f"{name}: names/shapes differ from MXNet's: {lines}"
    kinds = [f"{k.rsplit('.', 1)[1]}:{'x'.join(map(str, p.shape))}" for k, p in params.items()]
    assert all(k.split(":")[0] in KINDS for k in kinds), kinds
    assert _digest(kinds) == prefixed, name
    return out


def _check_training_step(name, net, x, lr=0.1):
    params = net.collect_params()
    trainable = [k for k, p in params.items() if p.grad_req != "null"]
    stats = [k for k in params if k.endswith("running_mean")]
    before = {k: p.data().asnumpy().copy() for k, p in params.items()}
    trainer = Trainer(params, "sgd", {"learning_rate": lr})
    y = nbdl.nd.array(np.array([3, 7], dtype=np.float32))
    with autograd.record():
        loss = SoftmaxCrossEntropyLoss()(net(x), y)
    loss.backward()
    assert np.isfinite(loss.asnumpy()).all(), name
    trainer.step(x.shape[0])
    for k in trainable:
        grad = params[k].grad().asnumpy()
        assert np.isfinite(grad).all(), (name, k)
        after = params[k].data().asnumpy()
        # plain SGD: w - lr * grad / batch_size, in float32
        assert_almost_equal(after, before[k] - np.float32(lr / x.shape[0]) * grad,
                            rtol=1e-5, atol=1e-7, names=(k, "SGD step"))
    # The first and last layers move.  (Not every parameter must: at these
    # small sizes some gradients are ~1e-7 and the step is below float32's
    # resolution, e.g. a BatchNorm over a batch of two 1x1 maps, or a gamma
    # whose channel a later BatchNorm normalizes away through ReLU and a
    # depthwise convolution, as in MobileNetV2.)
    for k in (trainable[0], trainable[-2] if trainable[-1].endswith("bias") else trainable[-1]):
        assert k.endswith("weight") or k.endswith("gamma"), k
        assert not np.array_equal(before[k], params[k].data().asnumpy()), (name, k)
    # BatchNorm's running statistics moved during the training-mode forward
    moved = [k for k in stats if not np.array_equal(before[k], params[k].data().asnumpy())]
    assert moved == stats, (name, sorted(set(stats) - set(moved)))


# The heaviest cases (warm Numba cache, 2 busy cores: VGG 3.5-8 s each, mostly
# filling and counting the 133M-parameter net at 224x224; DenseNet 2-7 s and
# Inception V3 3 s at their full input sizes) carry the ``slow`` marker: still
# part of the default run, deselected with ``-m "not slow"``.
HEAVY = {n for n in ALL_MODELS if n.startswith(("vgg", "densenet", "inception"))}


@pytest.mark.parametrize("name", [pytest.param(n, marks=pytest.mark.slow) if n in HEAVY else n
                                  for n in ALL_MODELS])
def test_zoo_model_counts_forward_and_training(name):
    count_size, size = SIZES[name]
    nbdl.random.seed(0)
    if count_size != size:
        # VGG and AlexNet: count a separate net at 224x224, where the first
        # Dense layer's input size is what MXNet's figures assume (values do
        # not matter for a count: zeros are the cheapest fill)
        net = get_model(name)
        _initialize(net, nbdl.initializer.Zero())
        out = _check_counts_names_shapes(name, net, _batch(count_size, n=1))
        assert out.shape == (1, 1000)
        del net
    net = get_model(name)
    # He-style scaling keeps activations O(1) through the deep stacks (the
    # default Uniform(0.07) makes MobileNet's outputs vanish to ~1e-26)
    _initialize(net, nbdl.initializer.Xavier(rnd_type="uniform", factor_type="in", magnitude=6))
    x = _batch(size, seed=1)
    if count_size == size:
        eager = _check_counts_names_shapes(name, net, x).asnumpy()
    else:
        eager = net(x).asnumpy()
    assert eager.shape == (2, 1000) and np.isfinite(eager).all(), name
    scale = np.abs(eager).max()
    assert scale > 1e-4, (name, scale)
    assert not np.allclose(eager[0], eager[1]), name
    net.hybridize()
    hybrid = net(x).asnumpy()
    assert_almost_equal(eager / scale, hybrid / scale, rtol=1e-4, atol=1e-5)
    _check_training_step(name, net, x)


def test_registry_has_gluons_names():
    assert sorted(vision.list_models()) == sorted(ALL_MODELS)
    for fn in ("resnet18_v1", "resnet152_v2", "vgg16_bn", "alexnet", "densenet121",
               "squeezenet1_0", "squeezenet1_1", "inception_v3", "mobilenet1_0",
               "mobilenet0_25", "mobilenet_v2_1_0", "mobilenet_v2_0_25", "get_resnet",
               "get_vgg", "get_densenet", "get_squeezenet", "get_mobilenet",
               "get_mobilenet_v2", "ResNetV1", "ResNetV2", "BasicBlockV1", "BasicBlockV2",
               "BottleneckV1", "BottleneckV2", "VGG", "AlexNet", "DenseNet", "SqueezeNet",
               "Inception3", "MobileNet", "MobileNetV2"):
        assert hasattr(vision, fn), fn
    with pytest.raises(NbdlError, match="no model named 'resnet19_v1'"):
        get_model("resnet19_v1")
    assert isinstance(get_model("ResNet18_V1"), vision.ResNetV1)
    # MXNet's registry name for Inception V3 (the function is inception_v3)
    assert isinstance(get_model("inceptionv3"), vision.Inception3)


def test_structural_parameter_names_match_gluon():
    net = get_model("resnet18_v1")
    net.initialize()
    net(_batch(32))
    names = list(net.collect_params())
    assert names[:5] == ["features.0.weight", "features.1.gamma", "features.1.beta",
                         "features.1.running_mean", "features.1.running_var"]
    for n in ("features.4.0.body.0.weight", "features.4.1.body.4.running_var",
              "features.5.0.downsample.0.weight", "features.5.0.downsample.1.gamma",
              "features.7.1.body.3.weight"):
        assert n in names, n
    assert names[-2:] == ["output.weight", "output.bias"]
    assert net.collect_params()["output.weight"].shape == (1000, 512)

    v2 = get_model("resnet50_v2")
    names = list(v2.collect_params())
    assert names[0] == "features.0.gamma"
    assert "features.5.0.downsample.weight" in names
    assert "features.5.0.conv3.weight" in names and "features.5.0.bn3.beta" in names

    mb2 = get_model("mobilenetv2_0.25")
    names = list(mb2.collect_params())
    assert "features.3.out.0.weight" in names and names[-1] == "output.0.weight"
    sq = get_model("squeezenet1.1")
    names = list(sq.collect_params())
    assert "features.3.0.0.weight" in names and "features.3.1.1.0.bias" in names
    assert names[-2:] == ["output.0.weight", "output.0.bias"]
    inc = get_model("inceptionv3")
    names = list(inc.collect_params())
    # E block: (0) 1x1 branch, (1) 3x3 branch = [1x1 conv branch, concat of 1x3 and 3x1]
    assert "features.17.1.1.1.0.0.weight" in names and "features.17.1.1.1.0.1.beta" in names
    assert names[-2:] == ["output.weight", "output.bias"]


@pytest.mark.parametrize("name", ["resnet18_v2", "resnet50_v2", "mobilenetv2_0.25"])
def test_eager_forward_small_input(name):
    net = get_model(name, classes=10)
    net.initialize()
    out = net(_batch(32))
    assert out.shape == (2, 10) and np.isfinite(out.asnumpy()).all()


def test_pretrained_missing_file_is_a_clear_error(tmp_path):
    root = tmp_path / "models"
    expected = os.path.join(str(root), "resnet18_v1.params")
    with pytest.raises(NbdlError) as err:
        get_model("resnet18_v1", pretrained=True, root=str(root))
    assert expected in str(err.value)
    assert isinstance(err.value, (PretrainedFileError, FileNotFoundError))
    with pytest.raises(PretrainedFileError, match="mobilenetv2_0.5.params"):
        vision.mobilenet_v2_0_5(pretrained=True, root=str(root))
    with pytest.raises(PretrainedFileError, match="squeezenet1.0.params"):
        vision.squeezenet1_0(pretrained=True, root=str(root))
    with pytest.raises(PretrainedFileError, match="inceptionv3.params"):
        vision.inception_v3(pretrained=True, root=str(root))


def test_pretrained_loads_saved_parameters(tmp_path):
    src = get_model("mobilenet0.25", classes=10)
    src.initialize(nbdl.initializer.Xavier())
    x = _batch(32, seed=3)
    ref = src(x).asnumpy()
    src.save_parameters(str(tmp_path / "mobilenet0.25.params"))
    net = get_model("mobilenet0.25", pretrained=True, classes=10, root=str(tmp_path))
    for (k, a), (k2, b) in zip(src.collect_params().items(), net.collect_params().items()):
        assert k == k2
        np.testing.assert_array_equal(a.data().asnumpy(), b.data().asnumpy())
    assert_almost_equal(net(x).asnumpy(), ref, rtol=1e-5, atol=1e-6)
    # a file for a different architecture is refused, naming what is wrong
    os.rename(tmp_path / "mobilenet0.25.params", tmp_path / "mobilenet0.5.params")
    with pytest.raises(NbdlError, match="shape"):
        get_model("mobilenet0.5", pretrained=True, classes=10, root=str(tmp_path))
