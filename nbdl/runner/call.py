"""The one place an op call becomes a prepared launch.

``prepare(op, attrs, in_shapes, in_dtypes, out_shapes, out_dtypes, device,
req)`` builds the ``Call`` the op's rules read and asks the op for its temp
space; the ``PreparedCall`` it returns answers, once each, the other
questions a run asks: the in-place pairs and shape-only inputs the planner
needs, and per training flag the ``Launch`` (kernel, scalars, the view shape
of every array argument).  The executor's schedule (one ``PreparedCall`` per
call signature of a bound graph, arguments viewed in its arena), eager calls
(one-node schedules whose arrays are allocated per call, cached per call
signature: ``nbdl.runner.eager``) and the reference interpreter
(``nbdl.executor.interpret``) all come through here; ``run`` is the launch
of one prepared call on given arrays."""
import numpy as np

from .._docs import shared_doc
from ..ops.registry import OP_AND_ATTRS, REQ_WRITE, Call, pick_args
from .buffers import device_scope, prod


@shared_doc(op_and_attrs=OP_AND_ATTRS)
class PreparedCall:
    """One op call made ready: what ``prepare`` returns.

    Attributes
    ----------
    call : nbdl.ops.registry.Call
        What the op's rules were asked with (``is_train`` is the flag of
        the last launch made).
    {op_and_attrs}
    out_shapes, out_dtypes : list
        The outputs' shapes (tuples) and dtypes (``np.dtype``).
    n_visible : int
        How many outputs the caller sees (the rest are hidden).
    temps : list of (tuple, np.dtype)
        The scratch buffers the kernel takes after the outputs.
    nothing_to_do : bool
        No output has an element and the op writes no aux state: there
        is nothing for a kernel to do.
    """
    __slots__ = ("call", "op", "attrs", "out_shapes", "out_dtypes", "n_visible", "temps",
                 "nothing_to_do", "_inplace", "_shape_inputs", "_launches")

    def __init__(self, call):
        op = call.op
        self.call = call
        self.op = op
        self.attrs = call.attrs
        self.out_shapes = call.out_shapes
        self.out_dtypes = call.out_dtypes
        self.n_visible = op.n_visible(call.attrs)
        self.temps = [(tuple(s), np.dtype(d)) for s, d in op.temps(call)]
        self.nothing_to_do = bool(call.out_shapes) and not op.mutates_aux \
            and all(prod(s) == 0 for s in call.out_shapes)
        self._inplace = None
        self._shape_inputs = None
        self._launches = {}

    def inplace(self):
        """The op's ``(input index, output index)`` pairs that may share
        memory (a list; empty when the op declares none)."""
        pairs = self._inplace
        if pairs is None:
            op = self.op
            pairs = self._inplace = list(op.inplace(self.attrs)) if op.inplace else []
        return pairs

    def shape_inputs(self):
        """Indices of the inputs the kernel reads for their shape only."""
        got = self._shape_inputs
        if got is None:
            got = self._shape_inputs = self.op.list_shape_inputs(self.attrs)
        return got

    def launch(self, is_train=True):
        """The ``Launch`` for training (``is_train``) or inference, made once
        per flag: ``fn``, ``scalars`` (a tuple), ``views`` (None, or a shape
        tuple or None per array of the call) and ``args`` (None, or the
        arrays ``fn`` takes: ``Launch.args``)."""
        got = self._launches.get(is_train)
        if got is None:
            call = self.call
            call.is_train = is_train
            got = self._launches[is_train] = _Launch.of(self.op.prepare(call))
        return got


class _Launch:
    """A ``Launch`` with its scalars a tuple and its views tuples (and its
    fallback, if any, likewise)."""
    __slots__ = ("fn", "scalars", "views", "args", "fallback")

    def __init__(self, fn, scalars, views, args, fallback=None):
        self.fn = fn
        self.scalars = scalars
        self.views = views
        self.args = args
        self.fallback = fallback

    @classmethod
    def of(cls, raw):
        views = None if raw.views is None else [None if v is None else tuple(v)
                                                for v in raw.views]
        fb = getattr(raw, "fallback", None)
        return cls(raw.fn, tuple(raw.scalars), views, raw.args,
                   None if fb is None else cls.of(fb))


@shared_doc(op_and_attrs=OP_AND_ATTRS)
def prepare(op, attrs, in_shapes, in_dtypes, out_shapes, out_dtypes, device, req=None,
            is_train=True, node_name="", node=None, states=None):
    """The ``PreparedCall`` of one call of ``op``.

    Parameters
    ----------
    {op_and_attrs}
    in_shapes, in_dtypes, out_shapes, out_dtypes : sequence
        The inputs' (data, then aux) and outputs' shapes and dtypes.
    device : Device
        Where the kernel runs.
    req : sequence of int, optional
        A write request per output (default ``REQ_WRITE`` for all).
    is_train : bool
        The training flag the temp rule sees (launches take their own).
    node_name : str
        The graph node's name, for error messages.
    node : Node, optional
        The graph node (``Call.node``).
    states : dict, optional
        The per-node state of one schedule's stateful ops (``Call.states``).
    """
    call = Call(op, attrs, list(in_shapes), list(in_dtypes), list(out_shapes), list(out_dtypes),
                device=device, req=list(req) if req else [REQ_WRITE] * len(out_shapes),
                is_train=bool(is_train), node_name=node_name, node=node, states=states)
    return PreparedCall(call)


def view_args(arrays, views):
    """``arrays`` each reshaped to its entry of ``views`` (None: as it is)."""
    if views is None:
        return list(arrays)
    out = []
    for a, v in zip(arrays, views):
        out.append(a if v is None or tuple(v) == tuple(a.shape) else a.reshape(v))
    return out


def kernel_args(launch, arrays):
    """The arrays ``launch.fn`` takes: a call's ``arrays`` (inputs, outputs,
    temps) viewed as ``launch.views`` asks, then picked by ``launch.args``.

    Parameters
    ----------
    launch : _Launch
        A ``PreparedCall``'s launch.
    arrays : list
        The call's device arrays.
    """
    return pick_args(launch.args, view_args(arrays, launch.views))


def run(prepared, launch, inputs, outputs, device):
    """Launch ``prepared`` (a ``PreparedCall``) with ``launch`` (one of its
    launches) on device arrays ``inputs`` and ``outputs``; its temps are
    allocated here.  A GPU kernel runs in ``device``'s context.

    Parameters
    ----------
    prepared : PreparedCall
        The call.
    launch : _Launch
        ``prepared.launch(is_train)``.
    inputs, outputs : list
        Device arrays of the call's shapes and dtypes.
    device : Device
        Where they live.
    """
    if prepared.nothing_to_do:
        return
    temps = [device.empty(s, d) for s, d in prepared.temps]
    arrays = kernel_args(launch, list(inputs) + list(outputs) + temps)
    if device.device_type == "cpu":
        launch.fn(*arrays, *launch.scalars)
    else:
        with device_scope(device):
            launch.fn(*arrays, *launch.scalars)
