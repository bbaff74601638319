"""Higher-order gradients of the elementwise ops: gradient rules for their
hidden ``_backward_<op>(ograd, u) = ograd * f'(u)`` ops.

``u`` is the forward input, or the forward output for the ops whose
backward reads it (``sigmoid``: ``f' = y (1 - y)`` in terms of ``y``).
With ``g`` the head gradient of the backward op's output:

- ``d/d ograd = g * f'(u)``: the same backward op applied to ``g``;
- ``d/d u = g * ograd * D(u)``, ``D`` the derivative of ``f'`` with respect
  to ``u`` (through ``y``, the chain goes on into the forward op's gradient).

Every ``D`` is built from registered ops, which are differentiable
themselves (their backward ops have rules here too), so
``autograd.grad(..., create_graph=True)`` reaches any order.  ``D = 0``
(relu, abs, clip, the scalar comparisons...) gives no gradient to ``u``.
"""
import math

from .ir import backward_node, make_node

_LN2, _LN10 = math.log(2.0), math.log(10.0)


class _Expr:
    """An entry of a gradient expression: arithmetic and ``f(op)`` add
    registered ops to the graph, named after the node being differentiated."""

    __slots__ = ("entry", "_names")

    def __init__(self, entry, names):
        self.entry = entry
        self._names = names

    def _op(self, op, others=(), attrs=None):
        node = make_node(op, [self.entry] + [o.entry for o in others], attrs,
                         name=next(self._names))
        return _Expr(node.output(0), self._names)

    def _binary(self, other, same, scalar):
        if isinstance(other, _Expr):
            return self._op(same, [other])
        return self._op(scalar, attrs={"scalar": float(other)})

    def f(self, op):
        """The unary op ``op`` applied to this entry."""
        return self._op(op)

    def __add__(self, o):
        return self._binary(o, "elemwise_add", "_plus_scalar")

    __radd__ = __add__

    def __sub__(self, o):
        return self._binary(o, "elemwise_sub", "_minus_scalar")

    def __rsub__(self, o):
        return self._op("_rminus_scalar", attrs={"scalar": float(o)})

    def __mul__(self, o):
        return self._binary(o, "elemwise_mul", "_mul_scalar")

    __rmul__ = __mul__

    def __truediv__(self, o):
        return self._binary(o, "elemwise_div", "_div_scalar")

    def __rtruediv__(self, o):
        return self._op("_rdiv_scalar", attrs={"scalar": float(o)})

    def __neg__(self):
        return self._op("negative")

    def __pow__(self, p):
        return self._op("_power_scalar", attrs={"scalar": float(p)})


def _namer(node):
    k = 0
    while True:
        yield f"{node.name}_backward_{k}"
        k += 1


def second_order(derivative, attr_names=()):
    """The gradient rule of a ``_backward_<op>(ograd, u)`` node.

    Parameters
    ----------
    derivative : callable or None
        ``derivative(u, attrs) -> _Expr or number``: the derivative of
        ``f'`` with respect to ``u``; None when it is zero.
    attr_names : tuple of str
        The backward op's attributes (passed on to its copy for ``ograd``).
    """
    def rule(node, out_grads):
        g = out_grads[0]
        ograd, u = node.inputs[0], node.inputs[1]
        attrs = {k: node.attr_str.get(k, node.attrs[k]) for k in attr_names}
        d_ograd = backward_node(node.op, [g, u], node, attrs).output(0)
        if derivative is None:
            return [d_ograd, None]
        names = _namer(node)
        d = derivative(_Expr(u, names), node.attrs)
        gu = _Expr(g, names) * _Expr(ograd, names)
        return [d_ograd, (gu * d).entry]
    return rule


# op -> D(u): the derivative of f' (with respect to the input, or to the output
# for the ops marked "output" in elemwise_unary / elemwise_math).
DERIVATIVES = {
    # u = input
    "sin": lambda x, a: -x.f("sin"),
    "cos": lambda x, a: -x.f("cos"),
    "sinh": lambda x, a: x.f("sinh"),
    "cosh": lambda x, a: x.f("cosh"),
    "square": lambda x, a: 2.0,
    "softsign": lambda x, a: -2.0 * x.f("sign") / (x.f("abs") + 1.0) ** 3,
    "arcsin": lambda x, a: x / (1.0 - x.f("square")) ** 1.5,
    "arccos": lambda x, a: -x / (1.0 - x.f("square")) ** 1.5,
    "arctan": lambda x, a: -2.0 * x / (x.f("square") + 1.0).f("square"),
    "arcsinh": lambda x, a: -x / (x.f("square") + 1.0) ** 1.5,
    "arccosh": lambda x, a: -x / (x.f("square") - 1.0) ** 1.5,
    "arctanh": lambda x, a: 2.0 * x / (1.0 - x.f("square")).f("square"),
    "expm1": lambda x, a: x.f("exp"),
    "log1p": lambda x, a: -1.0 / (x + 1.0).f("square"),
    "log2": lambda x, a: -1.0 / (x.f("square") * _LN2),
    "log10": lambda x, a: -1.0 / (x.f("square") * _LN10),
    "erf": lambda x, a: (-4.0 / math.sqrt(math.pi)) * x * (-x.f("square")).f("exp"),
    "reciprocal": lambda x, a: 2.0 * x.f("reciprocal") ** 3,
    "rcbrt": lambda x, a: (4.0 / 9.0) * x.f("rcbrt") ** 7,
    # u = output y
    "tan": lambda y, a: 2.0 * y,
    "tanh": lambda y, a: -2.0 * y,
    "sigmoid": lambda y, a: 1.0 - 2.0 * y,
    "softrelu": lambda y, a: (-y).f("exp"),
    "sqrt": lambda y, a: -0.5 / y.f("square"),
    "rsqrt": lambda y, a: -1.5 * y.f("square"),
    "cbrt": lambda y, a: (-2.0 / 3.0) / y ** 3,
    "erfinv": lambda y, a: math.sqrt(math.pi) * y * y.f("square").f("exp"),
    # the scalar ops (u = input; ``a["scalar"]`` is s)
    "rdiv_scalar": lambda x, a: 2.0 * a["scalar"] * x.f("reciprocal") ** 3,
    "power_scalar": lambda x, a: (a["scalar"] * (a["scalar"] - 1.0)) * x ** (a["scalar"] - 2.0),
    "rpower_scalar": lambda y, a: math.log(a["scalar"]),
    "hypot_scalar": lambda x, a: a["scalar"] ** 2 / (x.f("square") + a["scalar"] ** 2) ** 1.5,
    # smooth_l1 (s = sigma): f' = s**2 x inside |x| <= 1 / s**2, sign(x) outside
    "smooth_l1": lambda x, a: x.f("abs")._op(
        "_lesser_equal_scalar", attrs={"scalar": 1.0 / a["scalar"] ** 2}) * a["scalar"] ** 2,
    # f' is piecewise constant: no second derivative
    "relu": None, "abs": None, "clip": None, "degrees": None, "radians": None,
    "hard_sigmoid": None, "maximum_scalar": None, "minimum_scalar": None, "rmod_scalar": None,
}
