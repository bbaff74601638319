"""A reference interpreter: runs a graph node by node on freshly allocated
arrays, with no planning, no inplace and no schedule (each node a call
prepared and run by ``nbdl.runner``).  The executor is tested against it."""
import numpy as np

from .._docs import shared_doc
from ..errors import BindError, ShapeError
from ..graph.infer import infer_shapes, infer_types
from ..ops.ir import topo_order
from ..ops.registry import OP_AND_ATTRS
from ..runner.call import prepare, run


@shared_doc(op_and_attrs=OP_AND_ATTRS)
def run_op(op, attrs, inputs, out_shapes, out_dtypes, device, is_train=False,
           node_name="", outputs=None, req=None, node=None, states=None):
    """Run one op on device arrays (``nbdl.runner``'s prepared call);
    allocates the outputs (unless given) and the temps.  Returns the
    outputs.

    Parameters
    ----------
    {op_and_attrs}
    inputs : list
        Device arrays.
    out_shapes, out_dtypes : list
        The outputs' shapes and dtypes.
    device : Device
        Where the arrays live.
    is_train : bool
        The training flag.
    node_name : str
        For error messages.
    outputs : list, optional
        Arrays to write the outputs into.
    req : list of int, optional
        Write requests per output (default all ``REQ_WRITE``).
    node : Node, optional
        The graph node (``Call.node``).
    states : dict, optional
        Per-node state of the graph's stateful ops (``Call.states``).
    """
    prepared = prepare(op, attrs, [tuple(a.shape) for a in inputs],
                       [np.dtype(a.dtype) for a in inputs], out_shapes, out_dtypes, device,
                       req, is_train, node_name, node=node, states=states)
    if outputs is None:
        outputs = [device.empty(s, d) for s, d in zip(out_shapes, out_dtypes)]
    run(prepared, prepared.launch(bool(is_train)), inputs, outputs, device)
    return outputs


def interpret(heads, values, device, is_train=False):
    """``values``: {variable Entry: device array}.  Returns {Entry: array} for
    every entry computed."""
    order = topo_order(heads)
    shapes = infer_shapes(order, {e: tuple(a.shape) for e, a in values.items()})
    dtypes = infer_types(order, {e: np.dtype(a.dtype) for e, a in values.items()})
    env = dict(values)
    states = {}
    for node in order:
        if node.op is None:
            if node.output(0) not in env:
                raise BindError(f"no value for variable {node.name!r}")
            continue
        outs = node.outputs()
        out_shapes = [shapes.get(e) for e in outs]
        if any(s is None for s in out_shapes):
            raise ShapeError(f"{node.op.name} (node {node.name!r}): output shape could not be inferred")
        result = run_op(node.op, node.attrs, [env[e] for e in node.inputs], out_shapes,
                        [dtypes.get(e, np.dtype(np.float32)) for e in outs], device,
                        is_train=is_train, node_name=node.name, node=node, states=states)
        for e, a in zip(outs, result):
            env[e] = a
    return env
