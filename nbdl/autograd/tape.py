"""The tape: what a recorded op leaves behind.

Each recorded call becomes a ``TapeNode`` holding the op (or a Python
backward function), its input and output NDArrays; each output NDArray
points back to it through ``_ag = (node, index)``.  Arrays marked as
variables carry ``_ag_var = Variable(grad, grad_req)``."""
from ..errors import NbdlError


class TapeNode:
    __slots__ = ("op", "attrs", "inputs", "outputs", "is_train", "backward_fn", "name",
                 "freed", "writes_grads", "__weakref__")

    def __init__(self, op, attrs, inputs, outputs, is_train, backward_fn=None, name=None):
        self.op = op                    # OpDef, or None for a custom node
        self.attrs = attrs              # raw attributes as given to invoke
        self.inputs = list(inputs)
        self.outputs = list(outputs)
        self.is_train = is_train
        self.backward_fn = backward_fn  # custom: f(out_grads) -> in_grads
        self.name = name or (op.name if op is not None else "custom")
        self.freed = False
        self.writes_grads = False       # its backward stores gradients itself (CachedOp)


class Variable:
    __slots__ = ("grad", "grad_req")

    def __init__(self, grad, grad_req):
        self.grad = grad
        self.grad_req = grad_req


_REQS = ("write", "add", "null")


def check_req(req):
    if req == "inplace":
        req = "write"
    if req not in _REQS:
        raise NbdlError(f"grad_req must be one of 'write', 'add', 'null', got {req!r}")
    return req


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
