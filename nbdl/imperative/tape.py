"""The tape: what a recorded op leaves behind.

Each recorded call becomes a ``TapeNode`` holding the op (or a Python
backward function), its input NDArrays and views of its outputs; each output
NDArray points back to it through ``_ag = (node, index)`` (the node holds
views, not the outputs themselves, so no reference cycle keeps a tape alive).
Arrays marked as variables (``mark_variables``) carry
``_ag_var = Variable(grad, grad_req)``."""
from ..errors import NbdlError
from .base import NDArrayBase


class TapeNode:
    __slots__ = ("op", "attrs", "inputs", "outputs", "is_train", "backward_fn", "name",
                 "freed", "writes_grads", "akey", "__weakref__")

    def __init__(self, op, attrs, inputs, outputs, is_train, backward_fn=None, name=None,
                 akey=None):
        self.op = op                    # OpDef, or None for a custom node
        self.attrs = attrs              # raw attributes as given to invoke
        self.inputs = list(inputs)
        self.outputs = [_view(o) for o in outputs]    # (see _view)
        self.is_train = is_train
        self.backward_fn = backward_fn  # custom: f(out_grads) -> in_grads
        self.name = name or (op.name if op is not None else "custom")
        self.freed = False
        self.writes_grads = False       # its backward stores gradients itself (CachedOp)
        self.akey = akey                # invoke's hashable key of ``attrs`` (None: not made)


_new = object.__new__


def _view(a):
    """Another NDArray over ``a``'s storage, for a node's ``outputs``: the
    node keeps the values without holding ``a`` itself, so ``a`` -> node ->
    ``a`` is no reference cycle and an unused tape is freed at once."""
    v = _new(type(a))
    v._data = a._data
    v._device = a._device
    return v


def tape_op(op, attrs, akey, inputs, outputs, is_train):
    """``TapeNode(op, attrs, inputs, outputs, is_train, akey=akey)`` for
    ``invoke``'s cached path, which passes a fresh ``inputs`` list the node
    keeps as is; sets the outputs' ``_ag`` as ``record_op`` does."""
    node = _new(TapeNode)
    node.op = op
    node.attrs = attrs
    node.inputs = inputs
    node.outputs = [_view(o) for o in outputs]
    node.is_train = is_train
    node.backward_fn = None
    node.name = op.name
    node.freed = False
    node.writes_grads = False
    node.akey = akey
    if len(outputs) == 1:
        outputs[0]._ag = (node, 0)
    else:
        for i, o in enumerate(outputs):
            o._ag = (node, i)
    return node


class Variable:
    """A leaf of the tape: an array marked for gradients
    (``attach_grad``/``mark_variables``) holds one.

    Parameters
    ----------
    grad : NDArray
        Where its gradient is written (or added).
    grad_req : str
        ``'write'``, ``'add'`` or ``'null'``.
    """
    __slots__ = ("grad", "grad_req")

    def __init__(self, grad, grad_req):
        self.grad = grad
        self.grad_req = grad_req


_REQS = ("write", "add", "null")


def check_req(req):
    """``req`` validated as a gradient request (``'inplace'`` read as
    ``'write'``).

    Parameters
    ----------
    req : str
        ``'write'``, ``'add'``, ``'null'`` or ``'inplace'``.
    """
    if req == "inplace":
        req = "write"
    if req not in _REQS:
        raise NbdlError(f"grad_req must be one of 'write', 'add', 'null', got {req!r}")
    return req


def mark_variables(variables, gradients, grad_reqs="write"):
    """Make ``variables`` leaves whose gradients go to ``gradients``
    (``autograd.mark_variables``, ``NDArray.attach_grad``).

    Parameters
    ----------
    variables : array or list of arrays
        The arrays to differentiate with respect to.
    gradients : array or list of arrays
        Their gradient buffers, of the same shapes.
    grad_reqs : str or list of str
        ``'write'``, ``'add'`` or ``'null'`` (``'inplace'`` is ``'write'``),
        one for all or one per variable.
    """
    if isinstance(variables, NDArrayBase):
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


def record_op(op, attrs, inputs, outputs, is_train):
    """Called by ``invoke`` while recording.  Inputs that are neither
    recorded nor variables are constants and need nothing."""
    if not any(_tracked(a) for a in inputs):
        return
    node = TapeNode(op, attrs, inputs, outputs, is_train)
    for i, o in enumerate(outputs):
        o._ag = (node, i)


def record_custom(inputs, outputs, backward_fn, name="custom", writes_grads=False):
    """Tape a node whose backward is a Python function
    ``backward_fn(out_grads) -> in_grads`` (lists of NDArray or None, one per
    output / input).  Used by ``autograd.Function`` and hybridized blocks."""
    node = TapeNode(None, None, inputs, outputs, True, backward_fn, name)
    node.writes_grads = writes_grads
    for i, o in enumerate(outputs):
        o._ag = (node, i)
    return node


def _tracked(a):
    return getattr(a, "_ag", None) is not None or getattr(a, "_ag_var", None) is not None
