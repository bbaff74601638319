"""Imperative autograd: record NDArray ops, then backward through the ops'
own gradient rules (MXNet's ``mxnet.autograd``)."""
from ..errors import NbdlError
from . import engine
from .function import Function  # noqa: F401
from .state import (is_recording, is_training, pause, predict_mode, record,  # noqa: F401
                    set_recording, set_training, train_mode)
from .tape import Variable, check_req, record_custom  # noqa: F401
from .tape_symbol import get_symbol  # noqa: F401


def mark_variables(variables, gradients, grad_reqs="write"):
    """Make ``variables`` leaves whose gradients go to ``gradients``."""
    from ..ndarray import NDArray
    if isinstance(variables, NDArray):
        variables, gradients = [variables], [gradients]
    if isinstance(grad_reqs, str):
        grad_reqs = [grad_reqs] * len(variables)
    if not (len(variables) == len(gradients) == len(grad_reqs)):
        raise NbdlError(f"mark_variables: {len(variables)} variables, {len(gradients)} "
                        f"gradients and {len(grad_reqs)} grad_reqs")
    for v, g, r in zip(variables, gradients, grad_reqs):
        r = check_req(r)
        if tuple(g.shape) != tuple(v.shape):
            raise NbdlError(f"mark_variables: gradient shape {tuple(g.shape)} differs from the "
                            f"variable's {tuple(v.shape)}")
        v._ag = None
        v._ag_var = Variable(g, r)


def _as_list(x):
    if x is None:
        return None
    return list(x) if isinstance(x, (list, tuple)) else [x]


def backward(heads, head_grads=None, retain_graph=False, train_mode=True):
    """Compute the gradients of ``heads`` for every variable they depend on
    and store them in the variables' gradient buffers (per grad_req)."""
    heads = _as_list(heads)
    head_grads = _as_list(head_grads) or [None] * len(heads)
    if len(head_grads) != len(heads):
        raise NbdlError(f"backward: {len(head_grads)} head gradients for {len(heads)} heads")
    for h, g in zip(heads, head_grads):
        if g is not None and tuple(g.shape) != tuple(h.shape):
            raise NbdlError(f"backward: head gradient shape {tuple(g.shape)} differs from the "
                            f"head's {tuple(h.shape)}")
    if not any(getattr(h, "_ag", None) is not None or getattr(h, "_ag_var", None) is not None
               for h in heads):
        raise NbdlError("backward: the heads were not computed under autograd.record() from "
                        "arrays with attach_grad(); there is nothing to differentiate")
    order = engine._reachable(heads)
    variables = engine.collect_variables(heads, order)
    results = engine.run_backward(heads, head_grads, variables, retain_graph, False, train_mode,
                                  write_into=True, order=order)
    engine.write_grads(variables, results)


def grad(heads, variables, head_grads=None, retain_graph=None, create_graph=False,
         train_mode=True):
    """Gradients of ``heads`` with respect to ``variables``, returned as new
    arrays (the variables' own gradient buffers are left alone).

    Parameters
    ----------
    heads : NDArray or list of NDArray
        Outputs computed under ``record()``.
    variables : NDArray or list of NDArray
        Arrays with gradients attached (``attach_grad`` / ``mark_variables``).
    head_grads : NDArray or list of NDArray, optional
        Gradients of the heads (ones when omitted).
    retain_graph : bool, optional
        Keep the tape for another pass (default: ``create_graph``).
    create_graph : bool
        Record the gradient computation itself, for higher orders.
    train_mode : bool
        Run the gradient ops in training mode.

    Returns
    -------
    list of NDArray
        One gradient per variable -- a list also when ``variables`` is one
        NDArray, as MXNet 1.9.1 returns it (``dx, = grad(y, x)``)."""
    heads = _as_list(heads)
    variables = _as_list(variables)
    head_grads = _as_list(head_grads) or [None] * len(heads)
    for v in variables:
        if getattr(v, "_ag_var", None) is None:
            raise NbdlError("grad: every variable must have attach_grad() (or mark_variables) "
                            "called before recording")
    if retain_graph is None:
        retain_graph = create_graph
    results = engine.run_backward(heads, head_grads, variables, retain_graph, create_graph,
                                  train_mode)
    from ..ndarray.invoke import invoke
    out = []
    for v in variables:
        g = results.get(id(v))
        out.append(g if g is not None else invoke("zeros_like", [v]))
    return out
