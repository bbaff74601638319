"""nbdl Symbol graphs to ONNX models (MXNet 1.9.1's ``mx.onnx.export_model``).

The graph is walked in topological order; each op node goes through the
converter registered for its op (``export_nn``, ``export_math``), which
emits ONNX nodes through an ``ExportContext``.  Shapes and dtypes come from
nbdl's own inference with the input shapes given, so converters that need a
static shape (MXNet's Reshape codes, axis complements) have it; with a
dynamic batch axis they write shapes that leave that axis to the runtime.
"""
import numpy as np

from ..errors import NbdlError
from ..graph.infer import infer_shapes, infer_types
from ..ops.ir import classify_variables, topo_order
from ._common import DEFAULT_OPSET, EXPORTERS, SUPPORTED_OPSETS, OnnxError, _load, onnx_dtype, \
    require_onnx

# Loss heads: at inference they are their forward part, and their label
# input (position 1) is not a model input.
LABEL_INPUTS = {"SoftmaxOutput": 1, "LinearRegressionOutput": 1, "LogisticRegressionOutput": 1,
                "MAERegressionOutput": 1, "SVMOutput": 1}


class ExportContext:
    """What a converter sees: the ONNX nodes and initializers written so far,
    shapes and dtypes of every entry, and helpers that name things.

    Parameters
    ----------
    opset : int
        The ONNX opset being written.
    shapes, dtypes : dict
        ``{Entry: shape}`` and ``{Entry: numpy dtype}`` from nbdl's inference.
    dynamic_batch : bool
        Whether axis 0 of the inputs is left to the runtime.
    """

    def __init__(self, opset, shapes, dtypes, dynamic_batch):
        self.opset = opset
        self.shapes = shapes
        self.dtypes = dtypes
        self.dynamic_batch = dynamic_batch
        self.nodes = []
        self.initializers = []
        self._names = set()

    def fresh(self, hint):
        """A value name not used yet, from ``hint``."""
        name, k = hint, 0
        while name in self._names:
            k += 1
            name = f"{hint}_{k}"
        self._names.add(name)
        return name

    def claim(self, name):
        """Reserve ``name`` (an MXNet entry or parameter name) as it is."""
        if name in self._names:
            raise OnnxError(f"export: two values are named {name!r}")
        self._names.add(name)
        return name

    def node(self, op_type, inputs, n_out=1, name=None, outputs=None, **attrs):
        """Append an ONNX node; returns its output names (a list)."""
        onnx = require_onnx()
        base = name or op_type.lower()
        if outputs is None:
            outputs = [self.fresh(base if n_out == 1 else f"{base}_out{i}") for i in range(n_out)]
        attrs = {k: v for k, v in attrs.items() if v is not None}
        self.nodes.append(onnx.helper.make_node(op_type, list(inputs), list(outputs),
                                                name=self.fresh(f"{base}_{op_type}"), **attrs))
        return list(outputs)

    def const(self, hint, value, dtype=None):
        """An initializer holding ``value``; returns its name."""
        onnx = require_onnx()
        arr = np.asarray(value, dtype=dtype)
        name = self.fresh(hint)
        self.initializers.append(onnx.numpy_helper.from_array(arr, name))
        return name

    def ints(self, hint, values):
        """An int64 1-D initializer (axes, shapes, pads)."""
        return self.const(hint, np.asarray(list(values), dtype=np.int64).reshape(-1))

    def scalar(self, hint, value, like):
        """A 0-d initializer of ``value`` in the dtype of entry ``like``."""
        return self.const(hint, np.asarray(value, dtype=self.dtype(like)))

    def shape(self, entry):
        return self.shapes[entry]

    def dtype(self, entry):
        return np.dtype(self.dtypes[entry])

    def rank(self, entry):
        return len(self.shapes[entry])

    # Ops whose axes moved from an attribute to an input in some opset.
    def reduce(self, op_type, x, axes, keepdims, name=None):
        """``op_type`` (ReduceSum, ReduceMean, ...) over ``axes`` (None: all)."""
        since = 13 if op_type == "ReduceSum" else 18
        if axes is None:
            return self.node(op_type, [x], name=name, keepdims=int(keepdims))[0]
        if self.opset >= since:
            return self.node(op_type, [x, self.ints("axes", axes)], name=name,
                             keepdims=int(keepdims))[0]
        return self.node(op_type, [x], name=name, axes=list(axes), keepdims=int(keepdims))[0]

    def unsqueeze(self, x, axes, name=None):
        return self.node("Unsqueeze", [x, self.ints("axes", axes)], name=name)[0]

    def squeeze(self, x, axes, name=None):
        return self.node("Squeeze", [x, self.ints("axes", axes)], name=name)[0]

    def reshape(self, x, shape, name=None):
        """Reshape to ``shape``: static, except that with a dynamic batch the
        first axis is written -1 (the runtime works it out)."""
        shape = list(shape)
        if self.dynamic_batch and shape:
            shape[0] = -1
        return self.node("Reshape", [x, self.ints("shape", shape)], name=name)[0]


def _as_symbol(sym):
    from ..symbol import Symbol, load
    if isinstance(sym, str):
        return load(sym)
    if not isinstance(sym, Symbol):
        raise OnnxError(f"export_model: sym must be a Symbol or a -symbol.json path, "
                        f"not {type(sym).__name__}")
    return sym


def _as_params(params):
    """``{name: numpy array}`` from a dict (keys with or without
    ``arg:``/``aux:``), a list of two dicts (arg, aux) or a .params path."""
    from ..ndarray import NDArray
    from ..ndarray.files import load
    if isinstance(params, str):
        params = load(params)
        if isinstance(params, list):
            raise OnnxError("export_model: the params file holds unnamed arrays")
    if isinstance(params, (list, tuple)):
        merged = {}
        for d in params:
            merged.update(d)
        params = merged
    if not isinstance(params, dict):
        raise OnnxError(f"export_model: params must be a dict, a list of dicts or a .params "
                        f"path, not {type(params).__name__}")
    out = {}
    for k, v in params.items():
        name = k.split(":", 1)[1] if k.startswith(("arg:", "aux:")) else k
        out[name] = v.asnumpy() if isinstance(v, NDArray) else np.asarray(v)
    return out


def _labels(order):
    """Ids of variable nodes used only as the label of a loss head."""
    label_uses, other_uses = set(), set()
    for node in order:
        if node.op is None:
            continue
        pos = LABEL_INPUTS.get(node.op.name)
        for i, e in enumerate(node.inputs):
            (label_uses if i == pos else other_uses).add(id(e.node))
    return label_uses - other_uses


def export_model(sym, params, in_shapes=None, in_types=np.float32, onnx_file_path="model.onnx",
                 verbose=False, dynamic=False, dynamic_input_shapes=None,
                 run_shape_inference=False, input_type=None, input_shape=None,
                 opset_version=None):
    """Write ``sym`` with ``params`` as an ONNX model file.

    Parameters
    ----------
    sym : Symbol or str
        The graph, or the path of its ``-symbol.json`` file.
    params : dict, list of two dicts, or str
        Parameter values by name (``arg:``/``aux:`` prefixes allowed), or a
        ``.params`` path.  Every argument not in ``params`` is a model input.
    in_shapes : list of tuples
        Shapes of the model inputs, in ``sym.list_arguments()`` order (labels
        of loss heads may be included or left out).
    in_types : dtype or list of dtypes, default float32
        Their dtypes.
    onnx_file_path : str, default 'model.onnx'
        Where to write the model; ``None`` writes nothing.
    verbose : bool, default False
        Print the ONNX graph.
    dynamic : bool, default False
        Leave the inputs' axes that ``dynamic_input_shapes`` marks ``None``
        (default: the first, batch axis) to the runtime.
    dynamic_input_shapes : list of tuples, optional
        Input shapes with ``None`` for dynamic axes (only axis 0 may be).
    run_shape_inference : bool, default False
        Run ONNX's shape inference on the model before saving.
    input_type, input_shape :
        MXNet 1.8's names of ``in_types`` and ``in_shapes``.
    opset_version : int, optional
        The ONNX opset (13-21; default 17).

    Returns
    -------
    str or ModelProto
        ``onnx_file_path``, or the model itself when it is ``None``.
    """
    onnx = require_onnx()
    _load()
    in_shapes = in_shapes if in_shapes is not None else input_shape
    if input_type is not None:
        in_types = input_type
    opset = DEFAULT_OPSET if opset_version is None else int(opset_version)
    if opset not in SUPPORTED_OPSETS:
        raise OnnxError(f"export_model: opset_version {opset} is not supported "
                        f"(supported: {SUPPORTED_OPSETS[0]}-{SUPPORTED_OPSETS[-1]})")
    sym = _as_symbol(sym)
    params = _as_params(params)
    order = topo_order(sym._outputs)
    args, aux = classify_variables(order)
    labels = _labels(order)
    inputs = [n for n in args if n.name not in params]
    data_inputs = [n for n in inputs if id(n) not in labels]
    missing = [n.name for n in aux if n.name not in params]
    if missing:
        raise OnnxError(f"export_model: no value for the auxiliary states {missing}")
    if in_shapes is None:
        raise OnnxError(f"export_model: in_shapes is required (inputs: "
                        f"{[n.name for n in data_inputs]})")
    in_shapes = [tuple(s) for s in in_shapes]
    given = data_inputs if len(in_shapes) == len(data_inputs) else inputs
    if len(in_shapes) != len(given):
        raise OnnxError(f"export_model: {len(in_shapes)} input shapes for the "
                        f"{len(data_inputs)} inputs {[n.name for n in data_inputs]}")
    types = list(in_types) if isinstance(in_types, (list, tuple)) else [in_types] * len(given)
    if len(types) != len(given):
        raise OnnxError(f"export_model: {len(types)} input types for {len(given)} inputs")
    flags = _dynamic_batch(dynamic, dynamic_input_shapes, in_shapes)
    dyn = {n.name: (0,) for n, d in zip(given, flags) if d}
    known_s = {n.output(0): s for n, s in zip(given, in_shapes)}
    known_t = {n.output(0): np.dtype(t) for n, t in zip(given, types)}
    for n in args + aux:
        if n.name in params:
            known_s[n.output(0)] = params[n.name].shape
            known_t[n.output(0)] = params[n.name].dtype
    try:
        shapes = infer_shapes(order, known_s)
        dtypes = infer_types(order, known_t)
    except NbdlError as e:
        raise OnnxError(f"export_model: shape or type inference failed: {e}") from None
    moved = {}
    if dyn:
        # Infer again with every dynamic batch one larger: the output axes
        # that move with it are the outputs' dynamic axes.
        bumped = dict(known_s)
        for n in given:
            if n.name in dyn:
                s = known_s[n.output(0)]
                bumped[n.output(0)] = (s[0] + 1,) + tuple(s[1:])
        try:
            moved = infer_shapes(order, bumped)
        except NbdlError as e:
            raise OnnxError(f"export_model: the graph does not take another batch size "
                            f"(dynamic=True): {e}") from None
    ctx = ExportContext(opset, shapes, dtypes, bool(dyn))
    names = {}
    graph_inputs = []
    for n in order:
        if n.op is not None:
            continue
        if id(n) in labels and n.name not in params:
            continue
        e = n.output(0)
        names[e] = ctx.claim(n.name)
        if n.name in params:
            ctx.initializers.append(onnx.numpy_helper.from_array(
                np.ascontiguousarray(params[n.name]), n.name))
        else:
            graph_inputs.append(_value_info(onnx, n.name, ctx.dtype(e), ctx.shape(e),
                                            {0: "batch"} if n.name in dyn else {}))
    for node in order:
        if node.op is None:
            continue
        conv = EXPORTERS.get(node.op.name)
        if conv is None:
            raise OnnxError(f"export_model: no ONNX conversion for op {node.op.name!r} "
                            f"(node {node.name!r})")
        ins = [names.get(e) for e in node.inputs]
        outs = conv(ctx, node, ins)
        for i, o in enumerate(outs):
            names[node.output(i)] = o
    outputs = []
    for e in sym._outputs:
        src = names[e]
        want = e.name
        if src != want:
            src = ctx.node("Identity", [src], outputs=[ctx.claim(want)], name=want)[0]
        shape = ctx.shape(e)
        # an axis that grew by one with the batch is the batch; one that grew
        # otherwise (a Reshape merged the batch in) is left unnamed
        axes = {i: ("batch" if b == a + 1 else None)
                for i, (a, b) in enumerate(zip(shape, moved.get(e, shape))) if a != b}
        outputs.append(_value_info(onnx, src, ctx.dtype(e), shape, axes))
    # Parameters no ONNX node reads (BatchNorm's gamma under fix_gamma) are left out.
    used = {i for n in ctx.nodes for i in n.input} | {o.name for o in outputs}
    inits = [t for t in ctx.initializers if t.name in used]
    graph = onnx.helper.make_graph(ctx.nodes, "nbdl_graph", graph_inputs, outputs,
                                   initializer=inits)
    opsets = [onnx.helper.make_opsetid("", opset)]
    model = onnx.helper.make_model(graph, opset_imports=opsets, producer_name="nbdl",
                                   producer_version=_version())
    model.ir_version = onnx.helper.find_min_ir_version_for(opsets)
    if run_shape_inference:
        model = onnx.shape_inference.infer_shapes(model)
    if verbose:
        print(onnx.helper.printable_graph(model.graph))
    if onnx_file_path is None:
        return model
    onnx.save(model, onnx_file_path)
    return onnx_file_path


def export_block(block, path, input_shapes, input_types=np.float32, **kwargs):
    """Export a hybridized Gluon block to ONNX.

    Parameters
    ----------
    block : HybridBlock
        A block hybridized and called at least once (its graph is the last
        call's).
    path : str or None
        The ``.onnx`` file to write (None: return the ModelProto).
    input_shapes : list of tuples
        Shapes of the block's inputs.
    input_types : dtype or list of dtypes, default float32
        Their dtypes.
    **kwargs
        Passed on to ``export_model`` (``dynamic``, ``opset_version``, ...).
    """
    cached = getattr(block, "_cached", None)
    cached_op = getattr(block, "_cached_op", None)
    if cached is None or cached_op is None:
        raise OnnxError("export_block: hybridize() the block and call it once first")
    sym = cached[0]
    params = {name: p.data() for name, p in cached_op.params.items()
              if name in set(sym.list_inputs())}
    return export_model(sym, params, in_shapes=input_shapes, in_types=input_types,
                        onnx_file_path=path, **kwargs)


def _dynamic_batch(dynamic, dynamic_input_shapes, in_shapes):
    """Per input: whether its axis 0 is left to the runtime."""
    if not dynamic:
        return [False] * len(in_shapes)
    shapes = dynamic_input_shapes or [(None,) + tuple(s[1:]) for s in in_shapes]
    if len(shapes) != len(in_shapes):
        raise OnnxError(f"export_model: {len(shapes)} dynamic_input_shapes for "
                        f"{len(in_shapes)} inputs")
    for s in shapes:
        if any(d is None for d in tuple(s)[1:]):
            raise OnnxError(f"export_model: only axis 0 may be dynamic, got {tuple(s)}")
    return [len(s) > 0 and s[0] is None for s in shapes]


def _value_info(onnx, name, dtype, shape, dynamic_axes):
    """A tensor's type; ``dynamic_axes`` maps axis -> symbolic name (None: unknown)."""
    dims = [dynamic_axes[i] if i in dynamic_axes else int(d) for i, d in enumerate(shape)]
    return onnx.helper.make_tensor_value_info(name, onnx_dtype(dtype, name), dims)


def _version():
    """nbdl's installed version (the package's ``__version__`` lives in
    ``nbdl/__init__``, above this layer)."""
    from importlib.metadata import PackageNotFoundError, version
    try:
        return version("nbdl")
    except PackageNotFoundError:   # running from a checkout that is not installed
        return "unknown"
