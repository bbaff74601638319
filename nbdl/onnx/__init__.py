"""ONNX export and import, as MXNet 1.9.1's ``mx.onnx.export_model`` and
``mx.contrib.onnx.import_model`` (docs/onnx.md).

``onnx`` (and ``onnxruntime`` to run the models) are an optional extra:
``pip install 'nbdl[onnx]'``.  This package imports without them and says
what to install when a conversion is asked for.

- ``export_model(sym, params, in_shapes, ...)``: a Symbol (or -symbol.json)
  with its parameters to an ONNX file; ``export_block(block, path,
  input_shapes)`` for a hybridized Gluon block.
- ``import_model(path)`` -> ``(sym, arg_params, aux_params)``;
  ``import_to_gluon(path, device)`` -> a ``SymbolBlock``;
  ``get_model_metadata(path)`` -> the inputs' and outputs' names and shapes.
"""
from ._common import (DEFAULT_OPSET, SUPPORTED_OPSETS, OnnxError, supported_export_ops,  # noqa: F401
                      supported_import_ops)
from .export_graph import export_block, export_model  # noqa: F401
from .import_graph import get_model_metadata, import_model, import_to_gluon  # noqa: F401

__all__ = ["export_model", "export_block", "import_model", "import_to_gluon",
           "get_model_metadata", "OnnxError", "supported_export_ops", "supported_import_ops",
           "SUPPORTED_OPSETS", "DEFAULT_OPSET"]
