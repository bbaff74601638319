"""What ONNX export and import share: the optional ``onnx`` import, the error
class, dtype tables, and the two converter registries."""
import numpy as np

from ..errors import NbdlError

# Opsets export writes and import reads (onnxruntime runs each of them).
SUPPORTED_OPSETS = (13, 14, 15, 16, 17, 18, 19, 20, 21)
DEFAULT_OPSET = 17

# nbdl op name -> export converter; ONNX op type -> import converter.
EXPORTERS = {}
IMPORTERS = {}


class OnnxError(NbdlError, ValueError):
    """An ONNX model, operator or attribute nbdl cannot convert, or a
    malformed ONNX file."""


def require_onnx():
    """The ``onnx`` module, or an ``OnnxError`` saying how to install it."""
    try:
        import onnx
    except ImportError as e:   # an optional dependency
        raise OnnxError("nbdl.onnx needs the onnx package: pip install 'nbdl[onnx]' "
                        f"(or pip install onnx onnxruntime); importing it failed: {e}") from None
    return onnx


def _register_in(table, what):
    def register(*names):
        def deco(fn):
            for n in names:
                if n in table:
                    raise ValueError(f"two ONNX {what}s for {n!r}")
                table[n] = fn
            return fn
        return deco
    return register


exporter = _register_in(EXPORTERS, "exporter")
exporter.__doc__ = """``@exporter(*op_names)``: register ``fn(ctx, node, inputs) -> [output
names]`` as the export converter of the nbdl ops ``op_names``."""
importer = _register_in(IMPORTERS, "importer")
importer.__doc__ = """``@importer(*op_types)``: register ``fn(ctx, onnx_node, attrs) ->
[outputs]`` as the import converter of the ONNX op types ``op_types``."""


def onnx_dtype(dtype, where):
    """The ONNX TensorProto element type of a numpy dtype."""
    onnx = require_onnx()
    dt = np.dtype(dtype)
    try:
        return onnx.helper.np_dtype_to_tensor_dtype(dt)
    except (KeyError, TypeError, ValueError):
        raise OnnxError(f"{where}: dtype {dt} has no ONNX element type") from None


def numpy_dtype(elem_type, where):
    """The numpy dtype of an ONNX TensorProto element type."""
    onnx = require_onnx()
    try:
        return np.dtype(onnx.helper.tensor_dtype_to_np_dtype(elem_type))
    except (KeyError, TypeError, ValueError):
        raise OnnxError(f"{where}: ONNX element type {elem_type} has no numpy dtype") from None


def supported_export_ops():
    """Sorted nbdl op names ``export_model`` converts."""
    _load()
    return sorted(EXPORTERS)


def supported_import_ops():
    """Sorted ONNX op types ``import_model`` converts."""
    _load()
    return sorted(IMPORTERS)


def _load():
    from . import (export_math, export_nn, export_rnn, import_nn, import_ops,  # noqa: F401
                   import_rnn)   # fill the registries
