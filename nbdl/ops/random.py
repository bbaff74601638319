"""Random samplers: rules only (kernels in nbdl.kernels.{cpu,cuda}.random, the
distributions' math in nbdl.kernels.shared.random).

MXNet 1.9.1's ops, names and attributes:

- ``_random_<dist>`` (no inputs; parameters, ``shape``, ``ctx``, ``dtype`` as
  attributes): uniform (low, high), normal (loc, scale), gamma (alpha, beta),
  exponential (lam), poisson (lam), negative_binomial (k, p),
  generalized_negative_binomial (mu, alpha), and randint (low, high; int32 or
  int64).  An empty ``shape`` is inferred from the consumer (two-way).
- ``_random_<dist>_like`` (input ``data``, read for its shape only): same
  shape and dtype as ``data``.
- ``_sample_<dist>`` (the parameters as input arrays): one draw of ``shape``
  per parameter element, output shape ``param.shape + shape``.
- ``_sample_multinomial`` (``data``: probabilities on the last axis; ``shape``,
  ``get_prob``, ``dtype``), with a gradient through the log-probability output.
- ``_shuffle``: a random permutation along the first axis.
- ``_sample_unique_zipfian(range_max, shape)``: per row of the 2-D
  ``shape``, ``shape[1]`` distinct int64 classes in ``[0, range_max)`` drawn
  from the approximately log-uniform distribution, and the int64 number of
  draws each row took (MXNet's rejection loop; a byte of scratch per class
  and row).

No sampler has a gradient (MXNet's give zeros) except
``_sample_multinomial``'s log-probability.  Sampler outputs are float32 or
float64, or float16 on the CPU (the CUDA kernels refuse float16 with a
DTypeError).  Every sampler is ``recompute=False``: a memory budget keeps
their outputs rather than drawing new numbers in backward.
"""
import numpy as np

from ..errors import AttrError, DTypeError
from .attrs import Attr
from .elemwise_unary import same_shape
from .ir import backward_node
from .init_ops import shape_attr_output
from .partial_shape import accepts_partial
from .registry import OpDef, register, shape_error
from .rules import same_type

FLOATS = (np.dtype(np.float32), np.dtype(np.float64))
HALF_FLOATS = (np.dtype(np.float16),) + FLOATS
INTS = (np.dtype(np.int32), np.dtype(np.int64))
SAMPLE_DTYPE_CHOICES = ("None", "float16", "float32", "float64")

# distribution -> (parameter names, defaults, kinds) as MXNet's Sample*Param
DISTRIBUTIONS = {
    "uniform": (("low", 0.0, "float"), ("high", 1.0, "float")),
    "normal": (("loc", 0.0, "float"), ("scale", 1.0, "float")),
    "gamma": (("alpha", 1.0, "float"), ("beta", 1.0, "float")),
    "exponential": (("lam", 1.0, "float"),),
    "poisson": (("lam", 1.0, "float"),),
    "negative_binomial": (("k", 1, "int"), ("p", 1.0, "float")),
    "generalized_negative_binomial": (("mu", 1.0, "float"), ("alpha", 1.0, "float")),
}
# the _sample_ ops' input names (MXNet's multisample_op.cc)
SAMPLE_INPUTS = {
    "uniform": ("low", "high"), "normal": ("mu", "sigma"), "gamma": ("alpha", "beta"),
    "exponential": ("lam",), "poisson": ("lam",), "negative_binomial": ("k", "p"),
    "generalized_negative_binomial": ("mu", "alpha"),
}


def _kernels(name):
    return {"cpu": f"nbdl.kernels.cpu.random:{name}", "cuda": f"nbdl.kernels.cuda.random:{name}"}


def _no_grad(node, out_grads):
    return [None] * len(node.inputs)


def _dtype_attr(choices, default="None", doc="Output dtype (None: float32)."):
    return Attr("str", default, choices=choices, doc=doc)


def check_params(opname, dist, attrs):
    """Reject parameter attributes outside the distribution's domain (MXNet
    checks these in its samplers)."""
    a = attrs
    bad = None
    if dist == "uniform" and not a["low"] <= a["high"]:
        bad = f"low={a['low']} must not exceed high={a['high']}"
    elif dist == "normal" and not a["scale"] >= 0:
        bad = f"scale={a['scale']} must be non-negative"
    elif dist == "gamma" and not (a["alpha"] > 0 and a["beta"] > 0):
        bad = f"alpha={a['alpha']} and beta={a['beta']} must be positive"
    elif dist in ("exponential",) and not a["lam"] > 0:
        bad = f"lam={a['lam']} must be positive"
    elif dist == "poisson" and not a["lam"] >= 0:
        bad = f"lam={a['lam']} must be non-negative"
    elif dist == "negative_binomial" and not (a["k"] > 0 and 0 < a["p"] <= 1):
        bad = f"k={a['k']} must be positive and p={a['p']} in (0, 1]"
    elif dist == "generalized_negative_binomial" and not (a["mu"] >= 0 and a["alpha"] >= 0):
        bad = f"mu={a['mu']} and alpha={a['alpha']} must be non-negative"
    if bad:
        raise AttrError(f"{opname}: {bad}")


def _checked_inputs(opname, dist, names=()):
    # the first rule run on parsed attributes: bad values fail at graph build
    def input_names(attrs):
        check_params(opname, dist, attrs)
        return list(names)
    return input_names


def _zero_input_shape(opname, dist):
    @accepts_partial
    def rule(attrs, in_shapes, out_shapes):
        if dist == "randint":
            if not attrs["low"] < attrs["high"]:
                raise AttrError(f"{opname}: low={attrs['low']} must be below "
                                f"high={attrs['high']}")
        else:
            check_params(opname, dist, attrs)
        return in_shapes, [shape_attr_output(opname, tuple(attrs["shape"]), out_shapes[0])]
    return rule


def _resolve_dtype(opname, attr, given, default, allowed_names):
    want = None if attr in (None, "None") else np.dtype(attr)
    if given is not None:
        given = np.dtype(given)
        if want is not None and want != given:
            raise DTypeError(f"{opname}: the output dtype {given} does not match dtype={attr}")
        want = given
    t = want if want is not None else np.dtype(default)
    if t.name not in allowed_names:
        raise DTypeError(f"{opname}: output dtype {t} is not allowed "
                         f"(allowed: {', '.join(allowed_names)})")
    return t


def _zero_input_type(opname, default, allowed):
    def rule(attrs, in_types, out_types):
        return in_types, [_resolve_dtype(opname, attrs["dtype"], out_types[0], default, allowed)]
    return rule


def _param_attrs(dist):
    return {n: Attr(kind, d, doc=f"The distribution's {n} parameter.")
            for n, d, kind in DISTRIBUTIONS[dist]}


_SHAPE = Attr("tuple", (), doc="Shape of the output (inferred from its consumer when empty).")
_CTX = Attr("str", "", doc="Device of the output, as cpu(0) / gpu(1); for imperative calls.")

for _dist in DISTRIBUTIONS:
    _name = f"_random_{_dist}"
    _aliases = (f"random_{_dist}",) + (("uniform",) if _dist == "uniform" else ()) + \
        (("normal",) if _dist == "normal" else ())
    register(OpDef(
        name=_name, input_names=(),
        attrs=dict(_param_attrs(_dist), shape=_SHAPE, ctx=_CTX,
                   dtype=_dtype_attr(SAMPLE_DTYPE_CHOICES)),
        infer_shape=_zero_input_shape(_name, _dist),
        infer_type=_zero_input_type(_name, "float32", SAMPLE_DTYPE_CHOICES[1:]),
        gradient=_no_grad, kernels=_kernels("prepare_random"), dtypes=HALF_FLOATS, recompute=False,
        legacy_unknown_dims="shape",
        doc=f"Samples of the {_dist.replace('_', ' ')} distribution with parameters "
            f"{', '.join(n for n, _, _ in DISTRIBUTIONS[_dist])} (attributes), of shape "
            f"``shape``."), aliases=_aliases)

    _like = f"_random_{_dist}_like"

    def _like_type(attrs, in_types, out_types, _n=_like):
        t = in_types[0] if in_types[0] is not None else out_types[0]
        if t is not None and np.dtype(t) not in FLOATS + (np.dtype(np.float16),):
            raise DTypeError(f"{_n}: data dtype {np.dtype(t)} is not a float dtype")
        return [t], [t]

    def _like_shape(attrs, in_shapes, out_shapes):
        d = in_shapes[0] if in_shapes[0] is not None else out_shapes[0]
        return [d], [d]

    register(OpDef(
        name=_like, input_names=_checked_inputs(_like, _dist, ("data",)),
        attrs=_param_attrs(_dist), infer_shape=_like_shape, infer_type=_like_type,
        gradient=_no_grad, shape_inputs=(0,), kernels=_kernels("prepare_random_like"), recompute=False,
        dtypes=HALF_FLOATS,
        doc=f"Samples of the {_dist.replace('_', ' ')} distribution of ``data``'s shape and "
            f"dtype (``data`` is read for its shape only)."))


# -- _random_randint -------------------------------------------------------------------

register(OpDef(
    name="_random_randint", input_names=(),
    attrs={"low": Attr("int", doc="Lower bound (included)."),
           "high": Attr("int", doc="Upper bound (excluded)."),
           "shape": _SHAPE, "ctx": _CTX,
           "dtype": _dtype_attr(("None", "int32", "int64"), doc="int32 (None) or int64.")},
    infer_shape=_zero_input_shape("_random_randint", "randint"),
    infer_type=_zero_input_type("_random_randint", "int32", ("int32", "int64")),
    gradient=_no_grad, kernels=_kernels("prepare_randint"), dtypes=INTS, recompute=False,
    legacy_unknown_dims="shape",
    doc="Uniform integers in [low, high) of shape ``shape``."),
    aliases=("random_randint",))


# -- _sample_<dist> ------------------------------------------------------------------

def _sample_shape(opname):
    def rule(attrs, in_shapes, out_shapes):
        extra = tuple(attrs["shape"])
        if any(s is None or s <= 0 for s in extra):
            raise shape_error(opname, f"shape={extra} must hold positive sizes", in_shapes)
        base = None
        if out_shapes[0] is not None and len(out_shapes[0]) >= len(extra):
            base = tuple(out_shapes[0])[:len(out_shapes[0]) - len(extra)]
        for s in in_shapes:
            if s is None:
                continue
            if base is not None and tuple(s) != base:
                raise shape_error(opname, f"the parameter arrays' shapes differ (or do not "
                                  f"match the output's leading dimensions {base})", in_shapes)
            base = tuple(s)
        if base is None:
            return in_shapes, out_shapes
        out = base + extra
        if out_shapes[0] is not None and tuple(out_shapes[0]) != out:
            raise shape_error(opname, f"output shape {tuple(out_shapes[0])} differs from "
                              f"{out}", in_shapes)
        return [base] * len(in_shapes), [out]
    return rule


def _sample_type(opname):
    def rule(attrs, in_types, out_types):
        t = next((x for x in in_types if x is not None), None)
        if t is not None:
            t = np.dtype(t)
            if t not in FLOATS + (np.dtype(np.float16),):
                raise DTypeError(f"{opname}: parameter dtype {t} is not a float dtype")
            for x in in_types:
                if x is not None and np.dtype(x) != t:
                    raise DTypeError(f"{opname}: the parameter arrays' dtypes differ "
                                     f"({', '.join(str(np.dtype(y)) for y in in_types if y)})")
        out = _resolve_dtype(opname, attrs["dtype"], out_types[0], "float32",
                             SAMPLE_DTYPE_CHOICES[1:])
        return [t] * len(in_types), [out]
    return rule


for _dist, _inputs in SAMPLE_INPUTS.items():
    _name = f"_sample_{_dist}"
    register(OpDef(
        name=_name, input_names=tuple(_inputs),
        attrs={"shape": Attr("tuple", (), doc="Shape drawn per parameter element."),
               "dtype": _dtype_attr(SAMPLE_DTYPE_CHOICES)},
        infer_shape=_sample_shape(_name), infer_type=_sample_type(_name),
        gradient=_no_grad, kernels=_kernels("prepare_sample"), dtypes=HALF_FLOATS, recompute=False,
        doc=f"Samples of {_dist.replace('_', ' ')} distributions whose parameters "
            f"({', '.join(_inputs)}) are arrays: ``shape`` draws per element, output shape "
            f"``{_inputs[0]}.shape + shape``."), aliases=(f"sample_{_dist}",))


# -- _sample_multinomial -----------------------------------------------------------------

MULTINOMIAL_DTYPES = ("uint8", "int32", "float16", "float32", "float64")


def multinomial_shape(attrs, data_shape):
    extra = tuple(attrs["shape"])
    if len(data_shape) == 1:
        return extra if extra else (1,)
    return tuple(data_shape[:-1]) + extra


def _multinomial_shape(attrs, in_shapes, out_shapes):
    d = in_shapes[0]
    if d is None:
        return in_shapes, out_shapes
    if len(d) == 0:
        raise shape_error("_sample_multinomial", "data must have at least one dimension",
                          in_shapes)
    o = multinomial_shape(attrs, tuple(d))
    return [tuple(d)], [o] * (2 if attrs["get_prob"] else 1)


def _multinomial_type(attrs, in_types, out_types):
    t = in_types[0]
    if t is not None and np.dtype(t) not in HALF_FLOATS:
        raise DTypeError(f"_sample_multinomial: data dtype {np.dtype(t)} is not a float dtype")
    o = np.dtype(attrs["dtype"])
    return [t], ([o, t] if attrs["get_prob"] else [o])


def _multinomial_grad(node, out_grads):
    if not node.attrs["get_prob"] or len(out_grads) < 2 or out_grads[1] is None:
        return [None]
    g = backward_node("_backward_sample_multinomial",
                      [out_grads[1], node.inputs[0], node.output(0)], node)
    return [g.output(0)]


register(OpDef(
    name="_sample_multinomial", input_names=("data",),
    num_outputs=lambda attrs: 2 if attrs["get_prob"] else 1,
    output_names=lambda attrs: ["output", "prob"] if attrs["get_prob"] else ["output"],
    attrs={"shape": Attr("tuple", (), doc="Shape drawn per distribution."),
           "get_prob": Attr("bool", False, doc="Also return the log-probability of each draw."),
           "dtype": Attr("str", "int32", choices=MULTINOMIAL_DTYPES,
                         doc="Dtype of the drawn indices.")},
    infer_shape=_multinomial_shape, infer_type=_multinomial_type,
    gradient=_multinomial_grad, kernels=_kernels("prepare_multinomial"), recompute=False,
    dtypes=HALF_FLOATS + (np.dtype(np.int32), np.dtype(np.uint8)),
    doc="Indices drawn from the categorical distributions on data's last axis "
        "(probabilities), ``shape`` per distribution; with get_prob also log(p) of each draw."),
    aliases=("sample_multinomial",))


def _bw_multinomial_shape(attrs, in_shapes, out_shapes):
    d = in_shapes[1] if in_shapes[1] is not None else out_shapes[0]
    return [in_shapes[0], d, in_shapes[2]], [d]


def _bw_multinomial_type(attrs, in_types, out_types):
    t = in_types[1] if in_types[1] is not None else out_types[0]
    return [t, t, in_types[2]], [t]


register(OpDef(
    name="_backward_sample_multinomial", input_names=("prob_grad", "data", "sample"),
    attrs={"shape": Attr("tuple", ()), "get_prob": Attr("bool", False),
           "dtype": Attr("str", "int32", choices=MULTINOMIAL_DTYPES)},
    infer_shape=_bw_multinomial_shape, infer_type=_bw_multinomial_type,
    kernels=_kernels("prepare_multinomial_backward"), int_inputs=(2,), hidden=True,
    doc="data's gradient through log(data[sample]): prob_grad / data[sample], summed "
        "per category."))


# -- _shuffle ----------------------------------------------------------------------------

ALL_DTYPES = tuple(np.dtype(t) for t in (np.float32, np.float64, np.int32, np.int64,
                                         np.uint8, np.int8))


def shuffle_temp(call):
    """The permutation of the first axis (int64, one per row)."""
    shape = tuple(call.in_shapes[0])
    return [((shape[0] if shape else 1,), np.dtype(np.int64))]


register(OpDef(
    name="_shuffle", input_names=("data",), attrs={},
    half_mirrors=True,
    infer_shape=same_shape, infer_type=same_type, gradient=_no_grad, recompute=False,
    temp=shuffle_temp, kernels=_kernels("prepare_shuffle"), dtypes=ALL_DTYPES,
    doc="data with its first axis randomly permuted (a new order on every call)."),
    aliases=("shuffle",))


# -- _sample_unique_zipfian ---------------------------------------------------------------

def _unique_shape(attrs, in_shapes, out_shapes):
    where = "_sample_unique_zipfian"
    shape = tuple(attrs["shape"])
    if not shape and out_shapes[0] is not None and len(out_shapes[0]) == 2:
        shape = tuple(out_shapes[0])
    if not shape:
        return in_shapes, list(out_shapes)
    if len(shape) != 2 or any(d < 0 for d in shape):
        raise shape_error(where, f"shape={shape} must be 2-D (batch_size, num_sampled)")
    if attrs["range_max"] < 1 or shape[1] > attrs["range_max"]:
        raise AttrError(f"{where}: cannot draw {shape[1]} distinct classes from "
                        f"range_max={attrs['range_max']}")
    return in_shapes, [shape, (shape[0],)]


def unique_zipfian_temp(call):
    """One byte per (row, class): the classes a row has drawn."""
    return [((call.out_shapes[0][0], call.attrs["range_max"]), np.dtype(np.uint8))]


register(OpDef(
    name="_sample_unique_zipfian", input_names=(), num_outputs=2,
    attrs={"range_max": Attr("int", doc="The number of possible classes."),
           "shape": Attr("tuple", (), doc="(batch_size, num_sampled).")},
    infer_shape=_unique_shape,
    infer_type=lambda attrs, i, o: (i, [INTS[1], INTS[1]]),
    gradient=_no_grad, temp=unique_zipfian_temp,
    kernels=_kernels("prepare_unique_zipfian"), dtypes=(INTS[1],),
    doc="Distinct classes drawn from the approximately log-uniform (Zipfian) distribution "
        "``P(c) = log((c + 2) / (c + 1)) / log(range_max + 1)``, per row, and the draws "
        "each row took."))
