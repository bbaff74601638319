"""The vision model zoo: every architecture builds with Gluon 2.0's
structural parameter names and MXNet's published parameter counts; eager
and hybridized forwards agree; a training step runs; pretrained files are
read locally (never downloaded).

Inputs are kept small (2 CPU cores): networks ending in global pooling run
at 32x32; squeezenet's 13x13 average pooling needs 224x224; the parameter
counts of the fixed-size networks come from ``infer_shape`` (the deferred
initialization a forward does, without running the kernels)."""
import os

import numpy as np
import pytest

import nbdl
from nbdl import autograd
from nbdl.errors import NbdlError
from nbdl.gluon import Trainer
from nbdl.gluon.loss import SoftmaxCrossEntropyLoss
from nbdl.gluon.model_zoo import PretrainedFileError, get_model, vision
from nbdl.testing import assert_almost_equal

ALL_MODELS = [f"resnet{n}_v{v}" for v in (1, 2) for n in (18, 34, 50, 101, 152)] + \
    [f"vgg{n}{bn}" for n in (11, 13, 16, 19) for bn in ("", "_bn")] + \
    ["alexnet", "densenet121", "densenet161", "densenet169", "densenet201", "squeezenet1.0",
     "squeezenet1.1", "inception_v3", "mobilenet1.0", "mobilenet0.75", "mobilenet0.5",
     "mobilenet0.25", "mobilenetv2_1.0", "mobilenetv2_0.75", "mobilenetv2_0.5",
     "mobilenetv2_0.25"]

# sum(prod(shape)) over collect_params() with classes=1000, BatchNorm running
# statistics included, as Gluon counts them.  Checked against published figures:
# resnet18_v1, resnet50_v1, mobilenet1.0, squeezenet1.1 (MXNet's); the others'
# gamma/beta/weights/biases (running statistics left out) equal torchvision's
# published counts after accounting for Gluon's layout differences (ResNet V1
# bottleneck 1x1 convolutions have biases; MobileNetV2's first block keeps its
# 1x1 expansion and its classifier has no bias).  The ResNet V2 and the
# MobileNet 0.75/0.5/0.25 and MobileNetV2 counts could not be checked against
# an independent figure.
PARAM_COUNTS = {
    "resnet18_v1": 11_699_112, "resnet34_v1": 21_814_696, "resnet50_v1": 25_629_032,
    "resnet101_v1": 44_695_144, "resnet152_v1": 60_404_072,
    "resnet18_v2": 11_695_796, "resnet34_v2": 21_811_380, "resnet50_v2": 25_595_060,
    "resnet101_v2": 44_639_412, "resnet152_v2": 60_329_140,
    "vgg11": 132_863_336, "vgg13": 133_047_848, "vgg16": 138_357_544, "vgg19": 143_667_240,
    "vgg11_bn": 132_874_344, "vgg13_bn": 133_059_624, "vgg16_bn": 138_374_440,
    "vgg19_bn": 143_689_256,
    "alexnet": 61_100_840,
    "densenet121": 8_062_504, "densenet161": 28_900_936, "densenet169": 14_307_880,
    "densenet201": 20_242_984,
    "squeezenet1.0": 1_248_424, "squeezenet1.1": 1_235_496,
    "inception_v3": 23_869_000,
    "mobilenet1.0": 4_253_864, "mobilenet0.75": 2_601_976, "mobilenet0.5": 1_342_536,
    "mobilenet0.25": 475_544,
    "mobilenetv2_1.0": 3_539_136, "mobilenetv2_0.75": 2_653_864, "mobilenetv2_0.5": 1_983_104,
    "mobilenetv2_0.25": 1_526_856,
}

# Counts without the BatchNorm running statistics: torchvision's published figures
# (plus the Gluon-layout differences noted above), an independent check.
TRAINABLE_COUNTS = {
    "resnet34_v1": 21_797_672, "resnet50_v1": 25_557_032 + 18_880,
    "resnet101_v1": 44_549_160 + 40_640, "resnet152_v1": 60_192_808 + 59_840,
    "vgg11_bn": 132_868_840, "vgg13_bn": 133_053_736, "vgg16_bn": 138_365_992,
    "vgg19_bn": 143_678_248,
    "densenet121": 7_978_856, "densenet161": 28_681_000, "densenet169": 14_149_480,
    "densenet201": 20_013_928,
    "inception_v3": 23_834_568,
    "mobilenetv2_1.0": 3_504_872 - 1000 + 32 * 32 + 2 * 32,
}

# Networks whose output size does not depend on the input size can count
# their parameters after a real forward on a 32x32 batch.
GLOBAL_POOL = {n for n in ALL_MODELS if n.startswith(("resnet", "mobilenet"))}


def _count(net, trainable_only=False):
    return sum(int(np.prod(p.shape)) for name, p in net.collect_params().items()
               if not (trainable_only and name.endswith(("running_mean", "running_var"))))


def _batch(size, n=2, seed=0):
    rng = np.random.default_rng(seed)
    return nbdl.nd.array(rng.uniform(-1, 1, (n, 3, size, size)).astype(np.float32))


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


@pytest.mark.parametrize("name", ALL_MODELS)
def test_builds_with_published_parameter_count(name):
    net = get_model(name)
    net.initialize()
    if name in GLOBAL_POOL and name in ("resnet18_v1", "resnet50_v1", "mobilenet1.0",
                                        "mobilenet0.25"):
        out = net(_batch(32))
        assert out.shape == (2, 1000)
    else:
        size = 299 if name == "inception_v3" else 224
        net.infer_shape(nbdl.nd.zeros((1, 3, size, size)))
    assert _count(net) == PARAM_COUNTS[name]
    if name in TRAINABLE_COUNTS:
        assert _count(net, trainable_only=True) == TRAINABLE_COUNTS[name]


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
    inc = get_model("inception_v3")
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


# hybridizing compiles the whole graph once (tens of seconds on 2 cores), so
# only the models the benchmarks use are compared both ways
@pytest.mark.parametrize("name,size", [("resnet18_v1", 32), ("mobilenet0.25", 32),
                                       ("squeezenet1.1", 224)])
def test_eager_and_hybridized_forward_agree(name, size):
    net = get_model(name)
    # He-style scaling keeps activations O(1) through the deep stacks (the
    # default Uniform(0.07) makes MobileNet's outputs vanish to ~1e-26)
    net.initialize(nbdl.initializer.Xavier(rnd_type="gaussian", factor_type="in", magnitude=2))
    x = _batch(size, seed=1)
    eager = net(x).asnumpy()
    assert eager.shape == (2, 1000) and np.isfinite(eager).all()
    assert np.abs(eager).max() > 1e-4
    net.hybridize()
    hybrid = net(x).asnumpy()
    scale = np.abs(eager).max()
    assert_almost_equal(eager / scale, hybrid / scale, rtol=1e-4, atol=1e-5)
    assert not np.allclose(eager[0], eager[1])


def test_inception_v3_forward_at_299():
    net = get_model("inception_v3", classes=10)
    net.initialize()
    out = net(_batch(299, n=1))
    assert out.shape == (1, 10) and np.isfinite(out.asnumpy()).all()


def test_resnet18_v1_training_step():
    net = get_model("resnet18_v1", classes=10)
    net.initialize(nbdl.initializer.Xavier())
    net.hybridize()
    x = _batch(32, seed=2)
    y = nbdl.nd.array(np.array([3, 7], dtype=np.float32))
    loss_fn = SoftmaxCrossEntropyLoss()
    trainer = Trainer(net.collect_params(), "sgd", {"learning_rate": 0.1})
    params = net.collect_params()
    with autograd.record():
        loss = loss_fn(net(x), y)
    loss.backward()
    before = {k: p.data().asnumpy().copy() for k, p in params.items()}
    grad = params["features.0.weight"].grad().asnumpy()
    assert np.isfinite(grad).all() and np.abs(grad).sum() > 0
    trainer.step(2)
    after = {k: p.data().asnumpy() for k, p in params.items()}
    assert not np.allclose(before["features.0.weight"], after["features.0.weight"])
    assert not np.allclose(before["output.weight"], after["output.weight"])
    # BatchNorm's running statistics moved during the training-mode forward
    assert not np.allclose(after["features.1.running_mean"], 0)
    first = float(loss.asnumpy().mean())
    with autograd.record():
        loss2 = loss_fn(net(x), y)
    assert np.isfinite(loss2.asnumpy()).all()
    assert float(loss2.asnumpy().mean()) != first


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
