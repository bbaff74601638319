"""Model-zoo networks (one of each family; tools/onnx_zoo_check.py runs all
of them) export with a dynamic batch axis, pass onnx.checker's full check,
match onnxruntime at two batch sizes, and import back."""
import numpy as np
import onnx
import pytest

import nbdl
from nbdl.gluon.model_zoo import vision
from nbdl.onnx import export_block, import_to_gluon
from onnx_helpers import assert_close, ort_run

# the smallest input each family takes (fixed pooling windows need 224 / 299)
FAMILIES = [("resnet18_v1", 32), ("resnet18_v2", 32), ("mobilenet0.25", 32),
            ("mobilenetv2_0.25", 32), ("squeezenet1.1", 224), ("densenet121", 224),
            ("vgg11_bn", 32), ("alexnet", 64), ("inceptionv3", 299)]


@pytest.mark.slow
@pytest.mark.parametrize("name,size", FAMILIES)
def test_zoo_model_exports_and_imports(name, size, tmp_path):
    nbdl.random.seed(0)
    net = vision.get_model(name)
    net.initialize(nbdl.init.Xavier())
    net.hybridize()
    rng = np.random.RandomState(0)
    x1 = rng.uniform(-1, 1, (1, 3, size, size)).astype(np.float32)
    want1 = net(nbdl.nd.array(x1)).asnumpy()
    path = export_block(net, str(tmp_path / "m.onnx"), [(1, 3, size, size)], dynamic=True)
    model = onnx.load(path)
    onnx.checker.check_model(model, full_check=True)
    feed = model.graph.input[0].name
    assert_close(ort_run(path, {feed: x1})[0], want1)
    x2 = rng.uniform(-1, 1, (2, 3, size, size)).astype(np.float32)
    want2 = net(nbdl.nd.array(x2)).asnumpy()
    assert_close(ort_run(path, {feed: x2})[0], want2)
    back = import_to_gluon(path, nbdl.cpu())
    assert_close(back(nbdl.nd.array(x2)).asnumpy(), want2)
