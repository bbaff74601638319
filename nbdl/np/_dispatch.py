"""How an ``nbdl.np`` / ``nbdl.npx`` function runs one op: on Symbols it adds
a graph node (``nbdl.symbol.construct.create``), otherwise it runs the op
eagerly on NDArrays (``nbdl.ndarray.invoke.invoke``, which autograd
records), so one ``HybridBlock.forward`` serves both.

Operands: if any array operand is a Symbol, the call builds a graph, and
every other array operand must be a Symbol too.  Otherwise numpy arrays and
lists are converted to NDArrays on the first NDArray operand's device, in
its dtype (there is no implicit type promotion: the op kernels compute in
one dtype); Python and numpy scalars stay scalars and select the op's
``_*_scalar`` form.
"""
import numbers

import numpy as np

from ..device import as_device
from ..errors import DeviceError, GraphError, ShapeError
from ..graph.infer import infer_shapes
from ..ndarray.invoke import invoke
from ..ndarray.ndarray import NDArray
from ..symbol.construct import create
from ..symbol.symbol import Symbol

_EMPTY = {}   # (device, dtype, shape) -> a zero-size / 0-d NDArray used for its shape only


def is_symbol(x):
    return isinstance(x, Symbol)


def is_scalar(x):
    """A Python or numpy number (or a 0-d numpy array), not an array operand."""
    t = type(x)
    if t is float or t is int:
        return True
    if t is NDArray:
        return False
    if isinstance(x, (bool, np.bool_)):
        return True
    if isinstance(x, numbers.Number):
        return True
    return isinstance(x, np.ndarray) and x.ndim == 0


def scalar_value(x):
    return x.item() if isinstance(x, (np.ndarray, np.generic)) else x


def any_symbol(values):
    return any(isinstance(v, Symbol) for v in values)


def resolve_device(device, ctx, where):
    if device is not None and ctx is not None and as_device(device) != as_device(ctx):
        raise DeviceError(f"{where}: device={device} and ctx={ctx} disagree")
    return as_device(device if device is not None else ctx)


def _reference(values):
    return next((v for v in values if isinstance(v, NDArray)), None)


def to_ndarray(x, like=None, where="nbdl.np"):
    """``x`` as an NDArray: an NDArray as is; a numpy array, list or scalar
    converted on ``like``'s device in ``like``'s dtype (with no ``like``: the
    default device; a numpy array keeps its dtype, anything else is float32)."""
    if isinstance(x, NDArray):
        return x
    if isinstance(x, Symbol):
        raise GraphError(f"{where}: cannot mix a Symbol with NDArrays in one call")
    from .creation import array
    if like is not None:
        return array(x, dtype=like.dtype, device=like.device)
    return array(x)


def operands(values, where):
    """Normalise a call's array operands (None and scalars are kept): all
    Symbols on the symbol path, else all NDArrays.  Returns (values,
    on_symbols)."""
    values = list(values)
    for v in values:
        if type(v) is not NDArray:
            break
    else:
        return values, False
    if any_symbol(values):
        for i, v in enumerate(values):
            if v is None or is_scalar(v) or isinstance(v, Symbol):
                continue
            raise GraphError(f"{where}: operand {i} is a {type(v).__name__} but another operand "
                             f"is a Symbol; a graph can only take Symbols (make it a variable)")
        return values, True
    ref = _reference(values)
    out = [v if v is None or is_scalar(v) else to_ndarray(v, ref, where) for v in values]
    return out, False


def apply(op, inputs, attrs=None, on_symbols=None, name=None):
    """Run op ``op`` on ``inputs`` (all Symbols or all NDArrays).  Returns a
    Symbol / NDArray, or a list when the op has several visible outputs.
    Eagerly, ``invoke`` takes the training flag from
    ``nbdl.autograd.is_training()`` and records the call under
    ``autograd.record()``; in a graph the executor's ``is_train`` decides."""
    if on_symbols is None:
        on_symbols = any_symbol(inputs)
    if on_symbols:
        sym = create(op, *inputs, name=name, **(attrs or {}))
        n = len(sym.list_outputs())
        return sym if n == 1 else [sym[i] for i in range(n)]
    return invoke(op, inputs, {k: v for k, v in attrs.items() if v is not None} if attrs else None)


# -- shapes --------------------------------------------------------------------------

def static_shape(x):
    """The shape of ``x`` if it is known now: an NDArray's shape, or a
    Symbol's as far as its variables' declared shapes (``var(shape=...)``)
    determine it; None when unknown."""
    if isinstance(x, NDArray):
        return tuple(x.shape)
    if not isinstance(x, Symbol) or len(x._outputs) != 1:
        return None
    try:
        table = infer_shapes(x._order(), {})
    except ShapeError:
        return None   # the same error will surface, with context, when the graph is bound
    s = table.get(x._outputs[0])
    return None if s is None else tuple(int(d) for d in s)


def shape_donor(x, shape):
    """An NDArray of ``shape`` on ``x``'s device, read for its shape only
    (``reshape_like``'s rhs): how a result gets a 0-d or zero-size shape,
    which ``Reshape``'s codes cannot spell.  Cached; never written."""
    key = (x.device, np.dtype(x.dtype), tuple(shape))
    a = _EMPTY.get(key)
    if a is None:
        if int(np.prod(shape, dtype=np.int64)) > 1:
            raise ShapeError(f"shape_donor: {tuple(shape)} is neither 0-d nor empty")
        a = NDArray(x.device.zeros(tuple(shape), np.dtype(x.dtype)), x.device)
        _EMPTY[key] = a
    return a


def reshape_nd(x, shape):
    """Differentiable reshape of an NDArray to a fully known ``shape``."""
    shape = tuple(int(d) for d in shape)
    if tuple(x.shape) == shape:
        return x
    if shape == () or 0 in shape:
        return invoke("reshape_like", [x, shape_donor(x, shape)])
    return invoke("Reshape", [x], {"shape": shape})


def broadcast_shapes(shapes, where):
    """numpy's broadcast of ``shapes``; ShapeError naming them when they clash."""
    try:
        return tuple(np.broadcast_shapes(*[tuple(s) for s in shapes]))
    except ValueError:
        raise ShapeError(f"{where}: operands could not be broadcast together with shapes "
                         f"{', '.join(str(tuple(s)) for s in shapes)}") from None


def broadcast_nd(x, shape):
    """Differentiable numpy broadcast of an NDArray to ``shape``."""
    shape = tuple(shape)
    if tuple(x.shape) == shape:
        return x
    padded = (1,) * (len(shape) - x.ndim) + tuple(x.shape)
    if padded != tuple(x.shape):
        x = reshape_nd(x, padded)
    if padded == shape:
        return x
    if 0 in shape:
        # an empty result: nothing to compute and no element to differentiate
        # (broadcast_to's shape codes read 0 as "keep this axis")
        return NDArray(x.device.zeros(shape, np.dtype(x.dtype)), x.device)
    return invoke("broadcast_to", [x], {"shape": shape})


def norm_axis(axis, ndim, where, what="axis"):
    if isinstance(axis, bool) or not isinstance(axis, (int, np.integer)):
        raise ShapeError(f"{where}: {what} must be an integer, got {axis!r}")
    axis = int(axis)
    if not -ndim <= axis < ndim:
        raise ShapeError(f"{where}: {what} {axis} is out of bounds for an array of dimension "
                         f"{ndim}")
    return axis + ndim if axis < 0 else axis

