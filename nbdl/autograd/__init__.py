"""Imperative autograd: record NDArray ops, then backward through the ops'
own gradient rules (MXNet's ``mxnet.autograd``).

The API over ``nbdl.imperative`` (the flags in ``state``, the tape, the
reverse pass in ``engine``), which works below the NDArray class;
``Function`` and ``get_symbol`` are this layer's own."""
from ..errors import NbdlError
from ..imperative import engine
from ..imperative.engine import as_list as _as_list, backward  # noqa: F401
from ..imperative.invoke import invoke
from ..imperative.state import (is_recording, is_training, pause, predict_mode,  # noqa: F401
                                record, set_recording, set_training, train_mode)
from ..imperative.tape import (Variable, check_req, mark_variables,  # noqa: F401
                               record_custom)
from .function import Function  # noqa: F401
from .tape_symbol import get_symbol  # noqa: F401


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
    out = []
    for v in variables:
        g = results.get(id(v))
        out.append(g if g is not None else invoke("zeros_like", [v]))
    return out
