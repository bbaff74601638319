"""``nbdl.np``: Gluon 2.0's numpy-style op namespace (MXNet's ``mx.np``).

Every function works on NDArrays (run eagerly through
``nbdl.ndarray.invoke``, which autograd records) and on Symbols (adding
graph nodes), so one ``HybridBlock.forward`` serves both; numpy arrays and
Python scalars are accepted as numpy does (see ``_dispatch``).  Each is a
thin layer over the op table: ``add`` is ``broadcast_add`` /
``_plus_scalar``, ``sum`` is ``sum``, ``stack`` is ``stack``, ``swapaxes`` is ``SwapAxis``.

Differences from numpy, all inherited from the op table: no implicit type
promotion (operands share one dtype), comparisons give 1.0/0.0 in that
dtype, and on Symbols a result that would be 0-d has shape ``(1,)``.
"""
import numpy as _numpy

from ..ndarray.ndarray import NDArray as ndarray  # noqa: F401  (mx.np.ndarray)
from .creation import (arange, array, asarray, empty, eye, full, full_like, identity,  # noqa: F401
                       linspace, ones, ones_like, zeros, zeros_like)
from .linalg import dot, matmul  # noqa: F401
from .math import (abs, absolute, add, clip, cos, divide, equal, exp, greater,  # noqa: F401,A004
                   greater_equal, less, less_equal, log, maximum, minimum, multiply, negative,
                   not_equal, power, sin, sqrt, square, subtract, tanh, true_divide, where)
from .math import (arccos, arccosh, arcsin, arcsinh, arctan, arctanh, cbrt, ceil,  # noqa: F401
                   cosh, deg2rad, degrees, expm1, fix, floor, hypot, log1p, log2, log10,
                   logical_and, logical_not, logical_or, logical_xor, mod, rad2deg, radians,
                   reciprocal, remainder, sign, sinh, tan, trunc)
from .reduction import amax, amin, argmax, argmin, max, mean, min, prod, sum  # noqa: F401,A004
from .sorting import argsort, cumsum, sort  # noqa: F401
from .shape import (concatenate, diag, diagonal, expand_dims, ravel, reshape, split,  # noqa: F401
                    squeeze, stack, swapaxes, transpose)

# dtype names and constants, as numpy spells them
float32 = _numpy.float32
float64 = _numpy.float64
int8 = _numpy.int8
int32 = _numpy.int32
int64 = _numpy.int64
uint8 = _numpy.uint8
bool_ = _numpy.bool_
pi = _numpy.pi
e = _numpy.e
inf = _numpy.inf
nan = _numpy.nan
newaxis = None

__all__ = [
    "ndarray", "array", "asarray", "empty", "zeros", "ones", "full", "arange", "linspace", "eye",
    "identity", "zeros_like", "ones_like", "full_like",
    "add", "subtract", "multiply", "divide", "true_divide", "power", "maximum", "minimum",
    "negative", "abs", "absolute", "exp", "log", "sqrt", "square", "tanh", "sin", "cos", "clip",
    "where", "equal", "not_equal", "greater", "less", "greater_equal", "less_equal",
    "sum", "mean", "max", "min", "amax", "amin", "prod", "argmax", "argmin",
    "dot", "matmul",
    "reshape", "ravel", "transpose", "swapaxes", "expand_dims", "squeeze", "concatenate", "stack",
    "split", "diag", "diagonal", "sort", "argsort", "cumsum",
    "float32", "float64", "int8", "int32", "int64", "uint8", "bool_", "pi", "e", "inf", "nan",
    "newaxis",
]
