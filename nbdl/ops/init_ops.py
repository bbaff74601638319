"""Ops with no inputs that fill an array: MXNet 1.9.1's ``_zeros``, ``_ones``,
``_full``, ``_arange``, ``_linspace`` and ``_eye`` (rules only; kernels in
nbdl.kernels.{cpu,cuda}.init_ops).

They are what ``sym.zeros(shape)``, ``sym.ones``, ``sym.full``,
``sym.arange``, ``sym.linspace`` and ``sym.eye`` build (and what MXNet
-symbol.json files hold);
``nd.zeros`` & co. stay host-side creation functions (nbdl.ndarray.creation).
Attributes and their positional order are MXNet's Python front-ends'
(``sym.full(shape, val)``, ``sym.arange(start, stop, step, repeat)``).
``dtype`` is float32 by default; bool, uint8, int8, int32, int64, float16,
float32 and float64 are filled (float16 through a float32 mirror, rounded
once: ``OpDef.half_mirrors``).  ``_linspace`` computes ``start + step * i``
in float64 and casts once, as MXNet's kernel does.  ``_zeros`` / ``_ones`` / ``_full`` with an empty ``shape`` take
their shape from the consumer, as MXNet's do.  ``_arange`` with
``infer_range=True`` takes its length from the consumer.
"""
import math

import numpy as np

from ..errors import AttrError
from .attrs import Attr
from .partial_shape import accepts_partial, show
from .registry import OpDef, register, shape_error

FILL_DTYPES = ("float32", "float64", "uint8", "int8", "int32", "int64", "bool")
RANGE_DTYPES = ("float32", "float64", "uint8", "int8", "int32", "int64")
_CTX = Attr("str", "", doc="Device of the output (imperative calls).")


def _kernels(name):
    return {"cpu": f"nbdl.kernels.cpu.init_ops:{name}",
            "cuda": f"nbdl.kernels.cuda.init_ops:{name}"}


def _no_grad(node, out_grads):
    return []


def _dtype(choices):
    return Attr("str", "float32", choices=choices + ("float16",), doc="Output dtype.")


def _typed(opname):
    def rule(attrs, in_types, out_types):
        want = np.dtype(attrs["dtype"])
        if out_types[0] is not None and np.dtype(out_types[0]) != want:
            from ..errors import DTypeError
            raise DTypeError(f"{opname}: output dtype {np.dtype(out_types[0])} differs from "
                             f"dtype={want}")
        return in_types, [want]
    return rule


def shape_attr_output(opname, shape, out_shape):
    """The output shape of an op with no inputs and a ``shape`` attribute.

    An empty ``shape`` takes the consumer's (``out_shape``), as MXNet's. A
    ``-1`` in ``shape`` is an unknown dim: graph inference passes MXNet 1.x's
    ``0`` dims (outside NumPy-shape mode) as ``-1`` (``OpDef.legacy_unknown_dims``),
    and finds them from the consumers, which pass them in ``out_shape``; the
    result is ``shape`` and ``out_shape`` merged, partial while a dim stays
    unknown (an eager call then fails: its outputs must be known).

    Parameters
    ----------
    opname : str
        For messages.
    shape : tuple of int
        The attribute (``-1`` for an unknown dim).
    out_shape : tuple of int or None
        What the inference knows of the output (``-1`` for an unknown dim).
    """
    if any(s is None or s < -1 for s in shape):
        raise shape_error(opname, f"shape={shape} must hold non-negative sizes")
    if not shape:
        return None if out_shape is None else tuple(out_shape)
    if out_shape is None:
        return shape
    out_shape = tuple(out_shape)
    if len(out_shape) != len(shape) or any(s >= 0 and o >= 0 and s != o
                                           for s, o in zip(shape, out_shape)):
        raise shape_error(opname, f"output shape {show(out_shape)} differs from "
                          f"shape={show(shape)}")
    return tuple(s if s >= 0 else o for s, o in zip(shape, out_shape))


def _filled_shape(opname):
    @accepts_partial
    def rule(attrs, in_shapes, out_shapes):
        return in_shapes, [shape_attr_output(opname, tuple(attrs["shape"]), out_shapes[0])]
    return rule


def arange_length(attrs):
    """Number of values ``_arange`` writes (``repeat`` copies of each)."""
    start, stop, step = attrs["start"], attrs["stop"], attrs["step"]
    if stop is None:
        start, stop = 0.0, start
    if step == 0:
        raise AttrError(f"_arange: step must not be 0 (start={start}, stop={stop})")
    if attrs["repeat"] < 1:
        raise AttrError(f"_arange: repeat={attrs['repeat']} must be at least 1")
    n = max(0, int(math.ceil((stop - start) / step)))
    return n * int(attrs["repeat"])


def arange_start(attrs):
    return 0.0 if attrs["stop"] is None else attrs["start"]


def _arange_shape(attrs, in_shapes, out_shapes):
    if attrs["infer_range"]:
        return in_shapes, [None if out_shapes[0] is None else tuple(out_shapes[0])]
    n = arange_length(attrs)
    if out_shapes[0] is not None and tuple(out_shapes[0]) != (n,):
        raise shape_error("_arange", f"output shape {tuple(out_shapes[0])} differs from the "
                          f"range's ({n},)")
    return in_shapes, [(n,)]


def _linspace_shape(attrs, in_shapes, out_shapes):
    n = attrs["num"]
    if n < 0:
        raise shape_error("_linspace", f"num={n} must be non-negative")
    if out_shapes[0] is not None and tuple(out_shapes[0]) != (n,):
        raise shape_error("_linspace", f"output shape {tuple(out_shapes[0])} differs from "
                          f"({n},)")
    return in_shapes, [(n,)]


def linspace_step(attrs):
    """MXNet's spacing: ``(stop - start) / (num - 1)`` with the endpoint,
    ``/ num`` without, 0 for a single value."""
    steps = attrs["num"] - 1 if attrs["endpoint"] else attrs["num"]
    return (attrs["stop"] - attrs["start"]) / steps if steps > 0 else 0.0


def _eye_shape(attrs, in_shapes, out_shapes):
    n, m = int(attrs["N"]), int(attrs["M"])
    if n < 0 or m < 0:
        raise shape_error("_eye", f"N={n} and M={m} must be non-negative")
    return in_shapes, [(n, m or n)]


_FILL = dict(shape=Attr("tuple", (), doc="Output shape (from the consumer when empty)."))
for _name, _value in (("_zeros", 0.0), ("_ones", 1.0)):
    register(OpDef(
        name=_name, input_names=(),
        attrs=dict(_FILL, dtype=_dtype(FILL_DTYPES), ctx=_CTX),
        infer_shape=_filled_shape(_name), infer_type=_typed(_name), gradient=_no_grad,
        kernels=_kernels("prepare_zeros" if _value == 0 else "prepare_ones"),
        dtypes=tuple(np.dtype(d) for d in FILL_DTYPES), half_mirrors=True,
        legacy_unknown_dims="shape",
        doc=f"An array of {'zeros' if _value == 0 else 'ones'} of ``shape``."),
        aliases=(_name[1:],))

register(OpDef(
    name="_full", input_names=(),
    attrs=dict(_FILL, value=Attr("float", doc="The fill value."), dtype=_dtype(FILL_DTYPES),
               ctx=_CTX),
    infer_shape=_filled_shape("_full"), infer_type=_typed("_full"), gradient=_no_grad,
    kernels=_kernels("prepare_full"), dtypes=tuple(np.dtype(d) for d in FILL_DTYPES),
    half_mirrors=True, legacy_unknown_dims="shape",
    doc="An array of ``shape`` filled with ``value``."), aliases=("full",))

register(OpDef(
    name="_arange", input_names=(),
    attrs={"start": Attr("float", doc="First value (the stop when ``stop`` is None)."),
           "stop": Attr("float", None, optional=True, doc="End of the range (excluded)."),
           "step": Attr("float", 1.0, doc="Spacing between values."),
           "repeat": Attr("int", 1, doc="Times each value is repeated."),
           "infer_range": Attr("bool", False, doc="Take the length from the consumer."),
           "dtype": _dtype(RANGE_DTYPES), "ctx": _CTX},
    infer_shape=_arange_shape, infer_type=_typed("_arange"), gradient=_no_grad,
    kernels=_kernels("prepare_arange"), dtypes=tuple(np.dtype(d) for d in RANGE_DTYPES),
    half_mirrors=True,
    doc="``start, start + step, ...`` below ``stop``, each value ``repeat`` times."),
    aliases=("arange",))

register(OpDef(
    name="_eye", input_names=(),
    attrs={"N": Attr("int", doc="Rows."), "M": Attr("int", 0, doc="Columns (0: N)."),
           "k": Attr("int", 0, doc="Diagonal: 0 the main one, >0 above, <0 below."),
           "dtype": _dtype(RANGE_DTYPES), "ctx": _CTX},
    infer_shape=_eye_shape, infer_type=_typed("_eye"), gradient=_no_grad,
    kernels=_kernels("prepare_eye"), dtypes=tuple(np.dtype(d) for d in RANGE_DTYPES),
    half_mirrors=True,
    doc="An N x M array with ones on diagonal ``k`` and zeros elsewhere."), aliases=("eye",))

register(OpDef(
    name="_linspace", input_names=(),
    attrs={"start": Attr("float", doc="The first value."),
           "stop": Attr("float", doc="The last value (with ``endpoint``)."),
           "num": Attr("int", doc="Number of values (non-negative)."),
           "endpoint": Attr("bool", True, doc="Whether ``stop`` is the last value."),
           "ctx": _CTX, "dtype": _dtype(RANGE_DTYPES)},
    infer_shape=_linspace_shape, infer_type=_typed("_linspace"), gradient=_no_grad,
    kernels=_kernels("prepare_linspace"), dtypes=tuple(np.dtype(d) for d in RANGE_DTYPES),
    half_mirrors=True,
    doc="``num`` evenly spaced values from ``start`` to ``stop`` (excluded without "
        "``endpoint``)."), aliases=("_npi_linspace", "linspace"))
