"""``autograd.get_symbol``: the recorded history of an array as a Symbol.

The tape (``nbdl.imperative.tape``) keeps, per recorded call, the op, its raw attributes
and its input arrays; walking it back from an array gives the graph that
computed the array.  Marked variables (``attach_grad`` / ``mark_variables``)
become variables named ``var<k>`` and other inputs (constants) ``null<k>``,
the op nodes ``node_<k>`` in topological order, as MXNet names them."""
from ..errors import NbdlError
from ..imperative.engine import taped_order
from ..ops.ir import make_node, make_variable
from ..symbol import Symbol


def _ordered_nodes(root):
    """Taped nodes ``root`` depends on, inputs before their users."""
    def has_op(node):
        if node.freed:
            raise NbdlError(f"autograd.get_symbol: the history through {node.name!r} was "
                            f"freed by a backward pass; record again, or pass "
                            f"retain_graph=True to backward")
        if node.op is None:
            raise NbdlError(f"autograd.get_symbol: the history holds {node.name!r}, a node "
                            f"with a Python backward (an autograd.Function, a hybridized "
                            f"block, or NDArray indexing, '_index'), which has no operator "
                            f"to put in a Symbol")
        return True
    return taped_order([root], has_op)


def get_symbol(x):
    """The graph that computed ``x`` while recording, as a Symbol.

    Parameters
    ----------
    x : NDArray
        An array computed under ``autograd.record()`` from arrays with
        gradients attached (or such an array itself).

    Returns
    -------
    Symbol
        One output (``x``'s); its arguments are the marked variables
        (``var<k>``) and the constant arrays (``null<k>``) the history
        reads, in graph order.
    """
    ag = getattr(x, "_ag", None)
    if ag is None:
        if getattr(x, "_ag_var", None) is not None:
            return Symbol([make_variable("var0").output(0)])
        raise NbdlError(f"autograd.get_symbol: the array (shape {tuple(getattr(x, 'shape', ()))}) "
                        f"is not part of a recorded graph; compute it under autograd.record() "
                        f"from arrays with attach_grad()")
    leaves, built = {}, {}
    counts = [0, 0]             # leaves, op nodes

    def entry(a):
        r = getattr(a, "_ag", None)
        if r is not None:
            return built[id(r[0])].output(r[1])
        v = leaves.get(id(a))
        if v is None:
            prefix = "var" if getattr(a, "_ag_var", None) is not None else "null"
            v = leaves[id(a)] = make_variable(f"{prefix}{counts[0]}")
            counts[0] += 1
        return v.output(0)

    for tn in _ordered_nodes(ag[0]):
        inputs = [entry(a) for a in tn.inputs]
        built[id(tn)] = make_node(tn.op, inputs, tn.attrs or {}, name=f"node_{counts[1]}")
        counts[1] += 1
    return Symbol([built[id(ag[0])].output(ag[1])])
