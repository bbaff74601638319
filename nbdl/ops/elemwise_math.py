"""The rest of MXNet's unary math (rules only; the expressions are in
``nbdl.kernels.shared.elemwise_exprs``, the kernels generated from them):
trigonometric and hyperbolic functions and their inverses, rounding, sign,
``expm1``/``log1p``/``log2``/``log10``, ``erf``/``erfinv``,
``gamma``/``gammaln``, ``reciprocal``, ``cbrt``/``rcbrt``,
``degrees``/``radians``, ``logical_not`` and ``hard_sigmoid``.

Gradients are MXNet's: the rounding ops, ``sign`` and ``logical_not`` pass
none (a zero gradient); the others go through a hidden ``_backward_<op>``
reading the forward input (or the output where that is MXNet's formula:
``tan``, ``cbrt``, ``erfinv``).  ``sign``, the rounding ops and
``logical_not`` also take integer arrays (the rounding ops are then the
identity), as MXNet's do."""
from ..dtype import NUMERIC
from .elemwise_grad2 import DERIVATIVES, second_order
from .elemwise_unary import _no_grad, elementwise, via
from .registry import Attr

# name -> (what the backward reads, doc); "none": no gradient
_MATH = {
    "tan": ("output", "tangent"),
    "arcsin": ("data", "inverse sine"),
    "arccos": ("data", "inverse cosine"),
    "arctan": ("data", "inverse tangent"),
    "sinh": ("data", "hyperbolic sine"),
    "cosh": ("data", "hyperbolic cosine"),
    "arcsinh": ("data", "inverse hyperbolic sine"),
    "arccosh": ("data", "inverse hyperbolic cosine"),
    "arctanh": ("data", "inverse hyperbolic tangent"),
    "expm1": ("data", "exp(x) - 1, accurate near 0"),
    "log1p": ("data", "log(1 + x), accurate near 0"),
    "log2": ("data", "base-2 logarithm"),
    "log10": ("data", "base-10 logarithm"),
    "erf": ("data", "the error function"),
    "erfinv": ("output", "the inverse error function (+-inf at +-1, NaN outside [-1, 1])"),
    "gamma": ("data", "the gamma function"),
    "gammaln": ("data", "log |gamma(x)|"),
    "reciprocal": ("data", "1 / x"),
    "cbrt": ("output", "cube root"),
    "rcbrt": ("data", "1 / cbrt(x)"),
    "degrees": ("data", "radians to degrees"),
    "radians": ("data", "degrees to radians"),
}

# Zero-gradient ops that take integer arrays too.
_EXACT = {
    "sign": "-1, 0 or 1 by the sign of x (0 for NaN, as MXNet)",
    "round": "nearest integer, halves away from zero",
    "rint": "nearest integer, a half going to the lower one (MXNet's rint: rint(2.5) = 2, "
            "rint(-2.5) = -3)",
    "fix": "round toward zero",
    "trunc": "round toward zero",
    "floor": "largest integer <= x",
    "ceil": "smallest integer >= x",
    "logical_not": "1 where x is 0, else 0 (NaN counts as true)",
}

# Gluon 2.0 names (MXNet registers erf/erfinv/gamma/gammaln under them too).
_NPX = {"erf": ("_npx_erf",), "erfinv": ("_npx_erfinv",), "gamma": ("_npx_gamma",),
        "gammaln": ("_npx_gammaln",)}

for _name, (_use, _doc) in _MATH.items():
    elementwise(_name, gradient=via(f"_backward_{_name}", _use), aliases=_NPX.get(_name, ()),
                doc=_doc)
    # gamma and gammaln have no second derivative (no digamma op): a second
    # backward through them raises (tests/autograd/test_get_symbol.py)
    elementwise(f"_backward_{_name}", input_names=("ograd", _use), hidden=True,
                gradient=second_order(DERIVATIVES[_name]) if _name in DERIVATIVES else None)

for _name, _doc in _EXACT.items():
    elementwise(_name, gradient=_no_grad, dtypes=NUMERIC, doc=_doc)

_HARD_SIGMOID_ATTRS = {"alpha": Attr("float", 0.2), "beta": Attr("float", 0.5)}
elementwise("hard_sigmoid", attrs=_HARD_SIGMOID_ATTRS,
            gradient=via("_backward_hard_sigmoid", "data", ("alpha", "beta")),
            doc="max(0, min(1, alpha * x + beta)); alpha defaults to 0.2, beta to 0.5.")
elementwise("_backward_hard_sigmoid", input_names=("ograd", "data"), attrs=_HARD_SIGMOID_ATTRS,
            hidden=True, gradient=second_order(None, ("alpha", "beta")))
