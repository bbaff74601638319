"""A reference interpreter: runs a graph node by node on freshly allocated
arrays, with no planning, no inplace and no schedule.  The executor is tested
against it, and eager one-op calls use ``run_node``."""
import numpy as np

from ..graph.infer import infer_shapes, infer_types
from ..ops.ir import topo_order
from ..ops.registry import REQ_WRITE, Call, pick_args


def view_args(arrays, views):
    if views is None:
        return list(arrays)
    out = []
    for a, v in zip(arrays, views):
        out.append(a if v is None or tuple(v) == tuple(a.shape) else a.reshape(v))
    return out


def run_op(op, attrs, inputs, out_shapes, out_dtypes, device, is_train=False,
           node_name="", outputs=None, req=None):
    """Run one op on device arrays; allocates outputs (unless given) and temps."""
    in_shapes = [tuple(a.shape) for a in inputs]
    in_dtypes = [np.dtype(a.dtype) for a in inputs]
    call = Call(op, attrs, in_shapes, in_dtypes, list(out_shapes), list(out_dtypes),
                device=device, req=req or [REQ_WRITE] * len(out_shapes), is_train=is_train,
                node_name=node_name)
    if outputs is None:
        outputs = [device.empty(s, d) for s, d in zip(out_shapes, out_dtypes)]
    temps = [device.empty(s, d) for s, d in op.temps(call)]
    launch = op.prepare(call)
    arrays = view_args(list(inputs) + list(outputs) + temps, launch.views)
    launch.fn(*pick_args(launch.args, arrays), *launch.scalars)
    return outputs


def interpret(heads, values, device, is_train=False):
    """``values``: {variable Entry: device array}.  Returns {Entry: array} for
    every entry computed."""
    order = topo_order(heads)
    shapes = infer_shapes(order, {e: tuple(a.shape) for e, a in values.items()})
    dtypes = infer_types(order, {e: np.dtype(a.dtype) for e, a in values.items()})
    env = dict(values)
    for node in order:
        if node.op is None:
            if node.output(0) not in env:
                from ..errors import BindError
                raise BindError(f"no value for variable {node.name!r}")
            continue
        outs = node.outputs()
        out_shapes = [shapes.get(e) for e in outs]
        if any(s is None for s in out_shapes):
            from ..errors import ShapeError
            raise ShapeError(f"{node.op.name} (node {node.name!r}): output shape could not be inferred")
        result = run_op(node.op, node.attrs, [env[e] for e in node.inputs], out_shapes,
                        [dtypes.get(e, np.dtype(np.float32)) for e in outs], device,
                        is_train=is_train, node_name=node.name)
        for e, a in zip(outs, result):
            env[e] = a
    return env
