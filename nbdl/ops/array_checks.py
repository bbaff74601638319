"""Small ops that describe or check whole arrays (rules only; kernels in
``nbdl.kernels.*.array_checks``):

- ``shape_array(data)``: data's shape as an int64 vector (``_npx_shape_array``);
- ``size_array(data)``: data's size as an int64 ``(1,)`` array;
- ``all_finite(data, init_output=True)``: float32 ``(1,)``, 1 when every
  element is finite (as MXNet, each is cast to float32 first, so a float64
  beyond float32's range counts as infinite), else 0; with
  ``init_output=False`` the output is not set to 1 first, only cleared on a
  non-finite element (MXNet's AMP chains checks through one buffer);
- ``multi_all_finite(array_0, ..., num_arrays=1, init_output=True)``: the
  same over several arrays;
- ``_contrib_allclose(a, b, rtol=1e-5, atol=1e-8, equal_nan=True)``: a 0-d
  uint8, 1 when every ``|a - b| <= atol + rtol * |b|`` (or ``a == b``; NaNs
  equal each other when ``equal_nan``), computed in the inputs' dtype
  (float16: in float32).

None of them has a gradient: shape_array, size_array and allclose pass
none (MXNet's are zero), all_finite has none in MXNet either.
"""
import numpy as np

from ..errors import DTypeError
from .attrs import Attr
from .registry import FLOAT_DTYPES, OpDef, kernel_paths, register, shape_error

ANY_DTYPES = FLOAT_DTYPES + tuple(np.dtype(t) for t in (np.int32, np.int64, np.int8, np.uint8))
# shape_array / size_array read no values: float16 too (through half_mirrors)
SHAPE_DTYPES = ANY_DTYPES + (np.dtype(np.float16),)
ALLCLOSE_DTYPES = FLOAT_DTYPES + tuple(np.dtype(t) for t in (np.int32, np.int64, np.float16))
# all_finite / multi_all_finite: float16 through float32 mirrors (exact: the
# conversion keeps inf and NaN)
FINITE_DTYPES = FLOAT_DTYPES + (np.dtype(np.float16),)
INT64 = np.dtype(np.int64)
FLOAT32 = np.dtype(np.float32)


def _no_grad(node, out_grads):
    return [None] * len(node.inputs)


def _fixed_shape(fn):
    def rule(attrs, in_shapes, out_shapes):
        if any(s is None for s in in_shapes):
            return in_shapes, out_shapes
        return in_shapes, [fn(in_shapes)]
    return rule


def _fixed_type(out, allowed, where):
    def rule(attrs, in_types, out_types):
        for i, t in enumerate(in_types):
            if t is not None and np.dtype(t) not in allowed:
                raise DTypeError(f"{where}: input {i} has dtype {np.dtype(t)}; supported: "
                                 f"{', '.join(str(d) for d in allowed)}")
        return list(in_types), [out]
    return rule


register(OpDef(
    name="shape_array",
    half_mirrors=True,   # float16 arrays: a float32 stand-in, no values read
    infer_shape=_fixed_shape(lambda s: (len(s[0]),)),
    infer_type=_fixed_type(INT64, SHAPE_DTYPES, "shape_array"), gradient=_no_grad,
    kernels=kernel_paths("array_checks", "prepare_shape_array"),
    shape_inputs=(0,), dtypes=ANY_DTYPES,
    doc="The shape of ``data`` as a 1-d int64 array.\n\nParameters\n----------\n"
        "data : NDArray\n    Any array (its values are not read)."),
    aliases=("_npx_shape_array",))

register(OpDef(
    name="size_array",
    half_mirrors=True,   # float16 arrays: a float32 stand-in, no values read
    infer_shape=_fixed_shape(lambda s: (1,)),
    infer_type=_fixed_type(INT64, SHAPE_DTYPES, "size_array"), gradient=_no_grad,
    kernels=kernel_paths("array_checks", "prepare_size_array"),
    shape_inputs=(0,), dtypes=ANY_DTYPES,
    doc="The number of elements of ``data`` as a (1,) int64 array.\n\nParameters\n"
        "----------\ndata : NDArray\n    Any array (its values are not read)."))

_FINITE_DOC = ("1.0 (float32, shape (1,)) when every element of {what} is finite, else 0.0; "
               "``init_output=False`` leaves the output as it is unless an element is not "
               "finite.\n\nParameters\n----------\n{params}init_output : bool\n"
               "    Set the output to 1 before checking.")

register(OpDef(
    name="all_finite", attrs={"init_output": Attr("bool", True)},
    infer_shape=_fixed_shape(lambda s: (1,)),
    infer_type=_fixed_type(FLOAT32, FINITE_DTYPES, "all_finite"), half_mirrors=True,
    kernels=kernel_paths("array_checks", "prepare_all_finite"),
    doc=_FINITE_DOC.format(what="``data``", params="data : NDArray\n    The array.\n")))


def _multi_inputs(attrs):
    n = attrs["num_arrays"]
    if n < 1:
        raise shape_error("multi_all_finite", f"num_arrays={n}; at least 1 array is needed")
    return [f"array_{i}" for i in range(n)]


register(OpDef(
    name="multi_all_finite", input_names=_multi_inputs, key_var_num_args="num_arrays",
    attrs={"num_arrays": Attr("int", 1), "init_output": Attr("bool", True)},
    infer_shape=_fixed_shape(lambda s: (1,)),
    infer_type=_fixed_type(FLOAT32, FINITE_DTYPES, "multi_all_finite"), half_mirrors=True,
    kernels=kernel_paths("array_checks", "prepare_multi_all_finite"),
    doc=_FINITE_DOC.format(what="every array", params="array_0, ... : NDArray\n"
                           "    The arrays.\nnum_arrays : int\n    How many.\n")))


def _allclose_shape(attrs, in_shapes, out_shapes):
    a, b = in_shapes
    if a is not None and b is not None and tuple(a) != tuple(b):
        raise shape_error("_contrib_allclose", f"a and b must have the same shape, got "
                          f"{tuple(a)} and {tuple(b)}", in_shapes)
    known = a if a is not None else b
    return [known, known], [()]


def _allclose_type(attrs, in_types, out_types):
    a, b = in_types
    if a is not None and b is not None and np.dtype(a) != np.dtype(b):
        raise DTypeError(f"_contrib_allclose: a and b must have one dtype, got {np.dtype(a)} "
                         f"and {np.dtype(b)}")
    known = a if a is not None else b
    if known is not None and np.dtype(known) not in ALLCLOSE_DTYPES:
        raise DTypeError(f"_contrib_allclose: dtype {np.dtype(known)} is not supported "
                         f"(supported: {', '.join(str(d) for d in ALLCLOSE_DTYPES)})")
    return [known, known], [np.dtype(np.uint8)]


register(OpDef(
    name="_contrib_allclose", input_names=("a", "b"),
    attrs={"rtol": Attr("float", 1e-05), "atol": Attr("float", 1e-08),
           "equal_nan": Attr("bool", True)},
    infer_shape=_allclose_shape, infer_type=_allclose_type, gradient=_no_grad,
    kernels=kernel_paths("array_checks", "prepare_allclose"),
    dtypes=ALLCLOSE_DTYPES + (np.dtype(np.uint8),),
    doc="1 (a 0-d uint8) when ``a`` and ``b`` are elementwise equal within "
        "``atol + rtol * |b|``, else 0.\n\nParameters\n----------\na, b : NDArray\n"
        "    Arrays of one shape and dtype.\nrtol : float\n    Relative tolerance.\n"
        "atol : float\n    Absolute tolerance.\nequal_nan : bool\n"
        "    NaNs compare equal to NaNs."))
