import pytest

# The ONNX path needs the optional extra (nbdl[onnx], which nbdl[test] includes).
onnx = pytest.importorskip("onnx")
ort = pytest.importorskip("onnxruntime")
