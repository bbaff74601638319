"""MXNet 1.x's ``mx.contrib.onnx``: the same functions as ``nbdl.onnx``
(docs/onnx.md)."""
from ..onnx import export_model, get_model_metadata, import_model, import_to_gluon  # noqa: F401

__all__ = ["import_model", "import_to_gluon", "get_model_metadata", "export_model"]
