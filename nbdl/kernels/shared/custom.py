"""The launches of ``Custom`` and ``_backward_Custom`` (rules in
``nbdl.ops.custom``), the same on every device: a Python function that
hands the step's device arrays (views of the planned buffers) to the custom
operator's ``forward`` / ``backward``.  Being a Python function, not a
Numba dispatcher, it keeps a schedule on its Python loop (no generated
native driver can call it: docs/ops.md, "prepare and Launch")."""
from ...ops.custom import FORWARD, prop_of
from ...ops.registry import REQ_NULL, Launch

_REQ_NAMES = ("null", "write", "inplace", "add")


def _operator(call, forward_node, in_shapes, in_dtypes):
    """The operator instance of ``forward_node`` in this schedule
    (``call.states``), made on first use; a fresh one when the call has no
    schedule (an eager or interpreted call)."""
    states = call.states
    if states is not None and forward_node is not None:
        op = states.get(forward_node)
        if op is None:
            op = states[forward_node] = prop_of(call.attrs).create_operator(
                call.device, in_shapes, in_dtypes)
        return op
    return prop_of(call.attrs).create_operator(call.device, in_shapes, in_dtypes)


def _outputs_with_scratch(arrays, first, n, req):
    """The ``n`` outputs starting at ``arrays[first]``, each ``REQ_NULL``
    one replaced by its scratch (the temps after the outputs, in order)."""
    outs = list(arrays[first:first + n])
    k = first + n
    for i, r in enumerate(req):
        if r == REQ_NULL:
            outs[i] = arrays[k]
            k += 1
    return outs


def prepare_custom(call):
    """``Custom``: arrays are the arguments, the aux states, the outputs and
    a scratch per output nobody reads."""
    prop = prop_of(call.attrs)
    n_in, n_aux, n_out = len(prop.arguments), len(prop.aux), len(prop.outputs)
    op = _operator(call, call.node, call.in_shapes, call.in_dtypes)
    reqs = [_REQ_NAMES[r] for r in call.req]
    req, is_train, device = list(call.req), bool(call.is_train), call.device

    def custom_forward(*arrays):
        outs = _outputs_with_scratch(arrays, n_in + n_aux, n_out, req)
        op.forward(is_train, reqs, list(arrays[:n_in]), outs,
                   list(arrays[n_in:n_in + n_aux]), device)
    return Launch(custom_forward, (), None)


def prepare_backward_custom(call):
    """``_backward_Custom``: arrays are the out_grads, in_data, out_data
    (the ones the property did not declare are passed as None), the aux
    states, the arguments' gradients and a scratch per gradient not wanted."""
    prop = prop_of(call.attrs)
    n_in, n_aux, n_out = len(prop.arguments), len(prop.aux), len(prop.outputs)
    k = 2 * n_out + n_in
    fwd_shapes = call.in_shapes[n_out:n_out + n_in] + call.in_shapes[k:]
    fwd_dtypes = call.in_dtypes[n_out:n_out + n_in] + call.in_dtypes[k:]
    op = _operator(call, call.attrs.get(FORWARD), fwd_shapes, fwd_dtypes)
    deps = set(prop.backward_deps)
    reqs = [_REQ_NAMES[r] for r in call.req]
    req, device = list(call.req), call.device

    def custom_backward(*arrays):
        slots = [a if i in deps else None for i, a in enumerate(arrays[:k])]
        grads = _outputs_with_scratch(arrays, k + n_aux, n_in, req)
        op.backward(reqs, slots[:n_out], slots[n_out:n_out + n_in], slots[n_out + n_in:],
                    grads, list(arrays[k:k + n_aux]), device)
    return Launch(custom_backward, (), None)
