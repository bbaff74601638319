"""Custom: operators written in Python (MXNet's ``Custom`` and ``_backward_Custom``).

A custom operator is registered by name (``op_type``) with a property
object that says what the op is; ``nbdl.operator`` (MXNet's
``mx.operator``: ``CustomOpProp``, ``CustomOp``, ``register``) is the
user-facing side and registers, per ``op_type``, a ``make_prop(kwargs)``
that returns an object of this protocol:

- ``arguments``, ``outputs``, ``aux``: lists of names (MXNet's
  ``list_arguments()`` / ``list_outputs()`` / ``list_auxiliary_states()``);
- ``backward_deps``: the ids MXNet's ``declare_backward_dependency`` returns
  (out_grad ``0..n_out-1``, in_data ``n_out..``, out_data after them);
- ``infer_shape(in_shapes) -> (in_shapes, out_shapes, aux_shapes)`` and
  ``infer_type(in_dtypes) -> (in_dtypes, out_dtypes, aux_dtypes)``, called
  once every argument is known;
- ``create_operator(device, in_shapes, in_dtypes) -> operator`` whose
  ``forward(is_train, reqs, in_data, out_data, aux, device)`` and
  ``backward(reqs, out_grad, in_data, out_data, in_grad, aux, device)`` take
  device arrays (``None`` for what backward did not declare) and request
  names (``'null'``, ``'write'``, ``'add'``).

The node's parsed attributes hold ``op_type``, the other keyword arguments
as strings (what MXNet passes to the property's constructor and writes to
-symbol.json), and the property object under ``PROP`` (not an attribute
MXNet knows: it is never written out, and a value with no exact key keeps
the inference and prepare caches per node).  Loading a -symbol.json file
never runs code: ``Custom`` nodes resolve ``op_type`` among the operators
this process registered.

One operator instance per node and bound executor (``Call.states``) serves
the node's forward, its training and inference variants, and its
``_backward_Custom``, as MXNet's per-node operator state does.  The
launches are Python functions (``nbdl.kernels.shared.custom``), so a
schedule holding one runs its Python loop, not a generated native driver.
"""
from ..dtype import ALL
from ..errors import AttrError, ShapeError
from .attrs import Attr
from .ir import Node
from .registry import REQ_NULL, OpDef, get_op, register

PROP = "_custom_prop"           # parsed-attribute key of the property object
FORWARD = "_custom_forward"     # _backward_Custom: its forward node

_REGISTRY = {}

_PATHS = {"cpu": "nbdl.kernels.shared.custom:prepare_custom",
          "cuda": "nbdl.kernels.shared.custom:prepare_custom"}
_BACKWARD_PATHS = {"cpu": "nbdl.kernels.shared.custom:prepare_backward_custom",
                   "cuda": "nbdl.kernels.shared.custom:prepare_backward_custom"}


def register_custom(op_type, make_prop):
    """Register custom operator ``op_type`` (a later registration replaces
    an earlier one, as in MXNet).

    Parameters
    ----------
    op_type : str
        The name ``Custom(op_type=...)`` refers to.
    make_prop : callable
        ``make_prop(kwargs) -> property`` (the protocol of this module's
        docstring), given the node's other attributes as strings.
    """
    _REGISTRY[str(op_type)] = make_prop


def registered_types():
    """The ``op_type`` names registered in this process, sorted."""
    return sorted(_REGISTRY)


def _with_prop(parsed):
    """Parsed ``Custom`` attributes with the property object added."""
    op_type = parsed["op_type"]
    make = _REGISTRY.get(op_type)
    if make is None:
        raise AttrError(f"Custom: no custom operator {op_type!r} is registered in this process "
                        f"(register its CustomOpProp with nbdl.operator.register({op_type!r}) "
                        f"first; registered: {', '.join(registered_types()) or 'none'})")
    parsed[PROP] = make({k: v for k, v in parsed.items() if k != "op_type"})
    return parsed


def prop_of(attrs):
    """The property object of a parsed ``Custom`` / ``_backward_Custom``."""
    return attrs[PROP]


def _where(attrs):
    return f"Custom (op_type {attrs['op_type']!r})"


def _custom_shape(attrs, in_shapes, out_shapes):
    prop = prop_of(attrs)
    n_in = len(prop.arguments)
    args = list(in_shapes[:n_in])
    if any(s is None for s in args):
        return in_shapes, out_shapes
    ins, outs, aux = prop.infer_shape([tuple(s) for s in args])
    new_in = list(ins) + list(aux)
    for given, got, name in zip(in_shapes, new_in, prop.arguments + prop.aux):
        if given is not None and tuple(given) != tuple(got):
            raise ShapeError(f"{_where(attrs)}: input {name!r} has shape {tuple(given)}, "
                             f"infer_shape says {tuple(got)}")
    for given, got, name in zip(out_shapes, outs, prop.outputs):
        if given is not None and tuple(given) != tuple(got):
            raise ShapeError(f"{_where(attrs)}: output {name!r} has shape {tuple(given)}, "
                             f"infer_shape says {tuple(got)}")
    return new_in, list(outs)


def _custom_type(attrs, in_types, out_types):
    prop = prop_of(attrs)
    n_in = len(prop.arguments)
    if any(t is None for t in in_types[:n_in]):
        return in_types, out_types
    ins, outs, aux = prop.infer_type(list(in_types[:n_in]))
    return list(ins) + list(aux), list(outs)


def _custom_gradient(node, out_grads):
    """``_backward_Custom`` takes every out_grad, in_data and out_data in
    MXNet's order (those ``declare_backward_dependency`` left out only for
    their shape) and then the aux states; it gives the arguments'
    gradients (aux states get none)."""
    prop = prop_of(node.attrs)
    n_in, n_out = len(prop.arguments), len(prop.outputs)
    ins = (list(out_grads) + list(node.inputs[:n_in]) + list(node.outputs())
           + list(node.inputs[n_in:]))
    # the forward's property object (not a second one made from the strings)
    g = Node(get_op("_backward_Custom"), f"{node.name}_backward", dict(node.attrs, **{FORWARD: node}),
             dict(node.attr_str), ins)
    return [g.output(i) for i in range(n_in)] + [None] * len(prop.aux)


def _backward_names(attrs):
    prop = prop_of(attrs)
    return ([f"out_grad_{n}" for n in prop.outputs] + [f"in_data_{n}" for n in prop.arguments]
            + [f"out_data_{n}" for n in prop.outputs])


def _backward_shape_only(attrs):
    """Slots ``declare_backward_dependency`` did not ask for: passed for
    their shape only (the planner may reuse their bytes before this step)."""
    prop = prop_of(attrs)
    n = 2 * len(prop.outputs) + len(prop.arguments)
    deps = set(prop.backward_deps)
    return tuple(i for i in range(n) if i not in deps)


def _backward_shape(attrs, in_shapes, out_shapes):
    prop = prop_of(attrs)
    n_in, n_out = len(prop.arguments), len(prop.outputs)
    return in_shapes, list(in_shapes[n_out:n_out + n_in])


def _backward_type(attrs, in_types, out_types):
    prop = prop_of(attrs)
    n_in, n_out = len(prop.arguments), len(prop.outputs)
    return in_types, list(in_types[n_out:n_out + n_in])


def null_output_temps(call, first=0):
    """Scratch for each output whose request is ``REQ_NULL``: the Python
    code may write every output whatever its request says, and such an
    output has no bytes of its own in the plan."""
    return [(tuple(s), d) for s, d, r in zip(call.out_shapes[first:], call.out_dtypes[first:],
                                             call.req[first:]) if r == REQ_NULL]


register(OpDef(
    name="Custom",
    input_names=lambda attrs: list(prop_of(attrs).arguments),
    aux_names=lambda attrs: list(prop_of(attrs).aux),
    num_outputs=lambda attrs: len(prop_of(attrs).outputs),
    output_names=lambda attrs: list(prop_of(attrs).outputs),
    attrs={"op_type": Attr("str", doc="The name the operator was registered under.")},
    extra_attrs=_with_prop,
    infer_shape=_custom_shape, infer_type=_custom_type, gradient=_custom_gradient,
    temp=null_output_temps, kernels=_PATHS, train_aware=True, mutates_aux=True,
    recompute=False,        # Python code: a second forward may not give the same outputs
    dtypes=ALL,
    doc="An operator written in Python: ``op_type`` names a ``CustomOpProp`` registered with "
        "``nbdl.operator.register``; other keyword arguments go to its constructor as strings."),
    aliases=("_npi_Custom",))

register(OpDef(
    name="_backward_Custom",
    input_names=_backward_names,
    aux_names=lambda attrs: list(prop_of(attrs).aux),
    num_outputs=lambda attrs: len(prop_of(attrs).arguments),
    output_names=lambda attrs: [f"{n}_grad" for n in prop_of(attrs).arguments],
    attrs={"op_type": Attr("str")},
    extra_attrs=_with_prop,
    infer_shape=_backward_shape, infer_type=_backward_type, shape_inputs=_backward_shape_only,
    temp=null_output_temps, kernels=_BACKWARD_PATHS, supports_add=True, hidden=True,
    dtypes=ALL,
    doc="The gradient of ``Custom``: its operator's ``backward``."))
