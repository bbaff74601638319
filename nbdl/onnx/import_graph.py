"""ONNX models to nbdl Symbols (MXNet 1.9.1's ``mx.contrib.onnx.import_model``).

The model is checked with ``onnx.checker``, its shapes inferred by ONNX's
shape inference (converters that need a static shape read them), and each
node goes through the importer registered for its op type
(``import_ops``).  Initializers a converter uses as values become Symbol
variables with their arrays in ``arg_params`` (``aux_params`` for
BatchNormalization's running statistics); initializers read as constants
(shapes, axes, pads) are folded into attributes.  A model file is data:
loading it never runs code from it.
"""
import numpy as np

from ..errors import NbdlError
from ._common import IMPORTERS, OnnxError, SUPPORTED_OPSETS, _load, numpy_dtype, require_onnx


class ImportContext:
    """What an importer sees: values by ONNX name (Symbols, or numpy arrays
    for constants), static shapes from ONNX's shape inference, and the
    parameter dictionaries being filled.

    Parameters
    ----------
    shapes : dict
        ONNX value name -> shape tuple (None for unknown dims) where known.
    """

    def __init__(self, shapes, opset):
        self.shapes = shapes
        self.opset = opset
        self.consts = {}      # name -> numpy array (initializers, Constant outputs)
        self.symbols = {}     # name -> Symbol
        self.arg_params = {}
        self.aux_params = {}
        self.node_name = None

    def has(self, name):
        return bool(name) and (name in self.symbols or name in self.consts)

    def is_const(self, name):
        return name in self.consts and name not in self.symbols

    def const(self, name, what):
        """The constant value of input ``name`` (an initializer or a folded
        Constant), or an error naming what needed it."""
        if name in self.consts:
            return self.consts[name]
        raise OnnxError(f"import_model: node {self.node_name!r}: {what} must be a constant "
                        f"(initializer or Constant), but {name!r} is computed")

    def sym(self, name, aux=False):
        """The Symbol of value ``name``; a constant becomes a parameter variable."""
        from ..ndarray import array
        from ..symbol import var
        if name in self.symbols:
            return self.symbols[name]
        if name not in self.consts:
            raise OnnxError(f"import_model: node {self.node_name!r}: input {name!r} is neither "
                            f"a graph input, an initializer nor an earlier node's output")
        value = self.consts[name]
        s = var(name, shape=value.shape, dtype=value.dtype)
        (self.aux_params if aux else self.arg_params)[name] = array(value, dtype=value.dtype)
        self.symbols[name] = s
        return s

    def param(self, hint, value):
        """A new parameter variable holding ``value`` (e.g. a re-laid-out weight)."""
        name = hint
        k = 0
        while name in self.symbols or name in self.consts:
            k += 1
            name = f"{hint}_{k}"
        self.consts[name] = np.ascontiguousarray(value)
        return self.sym(name)

    def shape(self, name):
        """The static shape of ``name`` if fully known, else None."""
        if name in self.consts:
            return tuple(self.consts[name].shape)
        s = self.shapes.get(name)
        if s is None or any(d is None for d in s):
            return None
        return tuple(s)

    def rank(self, name):
        if name in self.consts:
            return self.consts[name].ndim
        s = self.shapes.get(name)
        return None if s is None else len(s)


def _load_model(model_file):
    onnx = require_onnx()
    try:
        if isinstance(model_file, (bytes, bytearray)):
            model = onnx.load_from_string(bytes(model_file))
        elif hasattr(model_file, "graph"):
            model = model_file
        else:
            model = onnx.load(model_file, load_external_data=False)
    except FileNotFoundError:
        raise OnnxError(f"import_model: no such file {model_file!r}") from None
    except Exception as e:   # protobuf's DecodeError and friends: a malformed file
        raise OnnxError(f"import_model: cannot parse {model_file!r} as an ONNX model: "
                        f"{type(e).__name__}: {e}") from None
    try:
        onnx.checker.check_model(model)
    except Exception as e:   # onnx.checker.ValidationError (and its C++ errors)
        raise OnnxError(f"import_model: the ONNX model is invalid: {e}") from None
    return model


def _opset(model):
    versions = [o.version for o in model.opset_import if o.domain in ("", "ai.onnx")]
    used = {n.domain for n in model.graph.node if n.domain not in ("", "ai.onnx")}
    if used:
        raise OnnxError(f"import_model: operators of the domains {sorted(used)} are not "
                        f"supported (only the default ONNX domain)")
    if not versions:
        raise OnnxError("import_model: the model imports no default-domain opset")
    v = versions[0]
    if v < SUPPORTED_OPSETS[0]:
        raise OnnxError(f"import_model: opset {v} is older than the oldest nbdl reads "
                        f"({SUPPORTED_OPSETS[0]}); convert it with onnx.version_converter")
    return v


def _value_shapes(model):
    """``{name: shape}`` from ONNX's shape inference (dims None when symbolic)."""
    onnx = require_onnx()
    try:
        inferred = onnx.shape_inference.infer_shapes(model)
    except Exception:   # inference is a help, not a requirement
        inferred = model
    out = {}
    g = inferred.graph
    for vi in list(g.input) + list(g.value_info) + list(g.output):
        t = vi.type.tensor_type
        if not t.HasField("shape"):
            continue
        out[vi.name] = tuple(d.dim_value if d.HasField("dim_value") else None
                             for d in t.shape.dim)
    return out


def _graph(model_file):
    """``(ctx, model, data input value infos)`` after the graph's nodes ran
    through their importers."""
    onnx = require_onnx()
    _load()
    model = _load_model(model_file)
    opset = _opset(model)
    g = model.graph
    ctx = ImportContext(_value_shapes(model), opset)
    for init in g.initializer:
        try:
            ctx.consts[init.name] = onnx.numpy_helper.to_array(init)
        except Exception as e:   # a tensor whose data does not match its dims or type
            raise OnnxError(f"import_model: initializer {init.name!r} is malformed: {e}") from None
    from ..symbol import var
    data_inputs = []
    for vi in g.input:
        if vi.name in ctx.consts:
            continue
        t = vi.type.tensor_type
        dtype = numpy_dtype(t.elem_type, f"input {vi.name!r}")
        ctx.symbols[vi.name] = var(vi.name, dtype=dtype)
        data_inputs.append(vi)
    for node in g.node:
        ctx.node_name = node.name or (node.output[0] if node.output else node.op_type)
        conv = IMPORTERS.get(node.op_type)
        if conv is None:
            raise OnnxError(f"import_model: ONNX operator {node.op_type!r} (node "
                            f"{ctx.node_name!r}) has no nbdl conversion")
        attrs = {a.name: onnx.helper.get_attribute_value(a) for a in node.attribute}
        try:
            outs = conv(ctx, node, attrs)
        except OnnxError:
            raise
        except (NbdlError, ValueError, TypeError, KeyError, IndexError) as e:
            raise OnnxError(f"import_model: {node.op_type} (node {ctx.node_name!r}): {e}") from e
        for name, val in zip(node.output, outs):
            if not name or val is None:
                continue
            if isinstance(val, (np.ndarray, np.generic)):   # a folded constant
                ctx.consts[name] = np.asarray(val)
            else:
                ctx.symbols[name] = val
    return ctx, model, data_inputs


def import_model(model_file):
    """Read an ONNX model as nbdl's ``(sym, arg_params, aux_params)``.

    Parameters
    ----------
    model_file : str, bytes or ModelProto
        The ``.onnx`` file (or its bytes, or a loaded model).

    Returns
    -------
    sym : Symbol
        The graph; its outputs are the model's, in order.
    arg_params, aux_params : dict of str to NDArray
        The initializers the graph uses as arguments and as auxiliary states.
    """
    from ..symbol import Group
    ctx, model, _ = _graph(model_file)
    outs = []
    for vi in model.graph.output:
        if vi.name in ctx.symbols:
            outs.append(ctx.symbols[vi.name])
        elif vi.name in ctx.consts:
            outs.append(ctx.sym(vi.name))
        else:
            raise OnnxError(f"import_model: graph output {vi.name!r} is produced by no node")
    sym = outs[0] if len(outs) == 1 else Group(outs)
    used = set(sym.list_inputs())
    arg = {k: v for k, v in ctx.arg_params.items() if k in used}
    aux = {k: v for k, v in ctx.aux_params.items() if k in used}
    return sym, arg, aux


def import_to_gluon(model_file, device=None, ctx=None):
    """Read an ONNX model as a Gluon ``SymbolBlock`` with its parameters loaded.

    Parameters
    ----------
    model_file : str, bytes or ModelProto
        The ``.onnx`` file.
    device : Device or list of Devices, optional
        Where the parameters live (default: the current device).
    ctx : Device or list of Devices, optional
        MXNet 1.x's name of ``device``.
    """
    from ..gluon import SymbolBlock
    from ..symbol import var
    sym, arg, aux = import_model(model_file)
    names = [n for n in sym.list_inputs() if n not in arg and n not in aux]
    block = SymbolBlock(sym, [var(n) for n in names])
    dev = device if device is not None else ctx
    params = block.collect_params()
    for name, value in list(arg.items()) + list(aux.items()):
        params[name]._load_init(value, dev)
    return block


def get_model_metadata(model_file):
    """The model's inputs and outputs: ``{'input_tensor_data': [(name, shape)],
    'output_tensor_data': [(name, shape)]}`` (MXNet's format; symbolic dims
    are their names).

    Parameters
    ----------
    model_file : str, bytes or ModelProto
        The ``.onnx`` file.
    """
    model = _load_model(model_file)
    inits = {i.name for i in model.graph.initializer}

    def shape(vi):
        t = vi.type.tensor_type
        return tuple(d.dim_value if d.HasField("dim_value") else d.dim_param
                     for d in t.shape.dim)
    return {"input_tensor_data": [(vi.name, shape(vi)) for vi in model.graph.input
                                  if vi.name not in inits],
            "output_tensor_data": [(vi.name, shape(vi)) for vi in model.graph.output]}
