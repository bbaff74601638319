"""Inference graph passes: the rewrite a graph bound without gradients gets
before it is scheduled and planned (``nbdl.executor.graph.build``), as
MXNet 1.9.1's MKLDNN backend partitions graphs whose ``grad_req`` are all
``null``.

- A ``Convolution`` followed by a ``BatchNorm`` on its channels, then an
  add of a residual of the same shape, then ReLU (each step optional, in
  this order, each reading the previous one's output and nothing else
  reading that) becomes one ``_nbdl_fused_conv`` node (``ops/conv_fused.py``)
  named as the convolution: the BatchNorm's moving statistics, the residual
  and the ReLU are applied in the convolution's output loop, so the planner
  sees one output where there were up to four, and no pass over memory is
  left for them.
- ``Dropout`` (``mode='training'``) is the identity at inference: dropped.

The user's graph is not changed: nodes downstream of a rewrite are copied.
The rewritten graph computes what the plain one does in inference
(``tests/graph/test_fuse.py`` compares them within 1e-4 relative); a forward
with ``is_train=True`` needs the plain graph (batch statistics, dropout), and
the executor binds it for that (``Executor.forward``).
"""
from dataclasses import dataclass

from ..ops.batch_norm import bn_axis
from ..ops.ir import Node, make_node

_ADDS = ("elemwise_add", "broadcast_add")
_FLOATS = ("float32", "float64")


@dataclass
class Fused:
    """One rewrite, for ``debug_str``: ``node`` the new node's name (``None``
    for a dropped node), ``replaces`` the ``(name, op)`` pairs it stands for."""
    node: object
    replaces: list

    def describe(self):
        parts = " + ".join(f"{n} ({op})" for n, op in self.replaces)
        return f"{parts} -> dropped" if self.node is None else \
            f"{parts} -> {self.node} (_nbdl_fused_conv)"


def fuse_for_inference(heads, order, shapes, dtypes):
    """``(heads, order, fused)`` of the rewritten graph; ``shapes`` and
    ``dtypes`` (Entry -> value, complete for the graph) get the new entries'
    values.  With nothing to rewrite the arguments come back unchanged and
    ``fused`` is empty."""
    readers = {}
    for node in order:
        for e in node.inputs:
            readers.setdefault(e, []).append(node)
    head_set = set(heads)
    groups, dropped = _find(order, readers, head_set, shapes, dtypes)
    if not groups and not dropped:
        return heads, order, []
    tail_of = {id(g[0]): g for g in groups}           # by tail node
    absorbed = {id(n) for g in groups for n, _ in g[1]}
    remap, new_order, fused = {}, [], []

    def mapped(e):
        return remap.get(e, e)
    for node in order:
        if node.op is None:
            new_order.append(node)
            continue
        if id(node) in dropped:
            remap[node.output(0)] = mapped(node.inputs[0])
            fused.append(Fused(None, [(node.name, node.op.name)]))
            continue
        group = tail_of.get(id(node))
        if group is not None:
            new = _fused_node(group, mapped)
            new_order.append(new)
            out, old = new.output(0), node.output(0)
            remap[old] = out
            shapes[out], dtypes[out] = shapes[old], dtypes[old]
            fused.append(Fused(new.name, [(n.name, n.op.name) for n, _ in group[1]]))
            continue
        if id(node) in absorbed:
            continue
        if any(mapped(e) is not e for e in node.inputs):
            copy = Node(node.op, node.name, node.attrs, node.attr_str,
                        [mapped(e) for e in node.inputs], node.user_attrs)
            for old, out in zip(node.outputs(), copy.outputs()):
                remap[old] = out
                shapes[out], dtypes[out] = shapes[old], dtypes[old]
            node = copy
        new_order.append(node)
    return [mapped(h) for h in heads], new_order, fused


def _only_reader(e, readers, heads):
    """The node that alone reads entry ``e`` (once), or None."""
    rs = readers.get(e, ())
    if len(rs) != 1 or e in heads:
        return None
    node = rs[0]
    return node if sum(1 for x in node.inputs if x == e) == 1 else None


def _unread(node, first, readers, heads):
    return all(not readers.get(e) and e not in heads for e in node.outputs()[first:])


def _find(order, readers, heads, shapes, dtypes):
    """Fusion groups ``(tail node, [(node, role)], residual entry or None,
    act)`` and the ids of the Dropout nodes to drop."""
    groups, dropped, taken = [], set(), set()

    def free_reader(e):
        n = _only_reader(e, readers, heads)
        return None if n is None or id(n) in taken else n
    for node in order:
        if node.op is None:
            continue
        name = node.op.name
        if name == "Dropout" and node.attrs["mode"] == "training" \
                and node.output(0) not in heads and _unread(node, 1, readers, heads):
            dropped.add(id(node))
        if name != "Convolution" or str(dtypes[node.output(0)]) not in _FLOATS:
            continue
        members, tail, res, act = [(node, "conv")], node, None, None
        nxt = free_reader(tail.output(0))
        if nxt is not None and nxt.op.name == "BatchNorm" and nxt.inputs[0] == tail.output(0) \
                and _unread(nxt, 1, readers, heads) \
                and bn_axis("BatchNorm", nxt.attrs, shapes[tail.output(0)], None) == 1:
            members.append((nxt, "bn"))
            tail = nxt
            nxt = free_reader(tail.output(0))
        if nxt is not None and nxt.op.name in _ADDS:
            other = nxt.inputs[1] if nxt.inputs[0] == tail.output(0) else nxt.inputs[0]
            if other != tail.output(0) and shapes[other] == shapes[tail.output(0)] \
                    and dtypes[other] == dtypes[tail.output(0)]:
                members.append((nxt, "sum"))
                tail, res = nxt, other
                nxt = free_reader(tail.output(0))
        if nxt is not None and (nxt.op.name == "relu" or (
                nxt.op.name == "Activation" and nxt.attrs["act_type"] == "relu")):
            members.append((nxt, "act"))
            act = "relu_nan" if nxt.op.name == "relu" else "relu"
            tail = nxt
        if len(members) > 1:
            groups.append((tail, members, res, act))
            taken.update(id(n) for n, _ in members)
    return groups, dropped


def _fused_node(group, mapped):
    tail, members, res, act = group
    conv = members[0][0]
    bn = next((n for n, role in members if role == "bn"), None)
    attrs = dict(conv.attrs)
    inputs = [mapped(e) for e in conv.inputs]            # data, weight, [bias]
    if res is not None:
        inputs.append(mapped(res))
        attrs["with_sum"] = True
    if bn is not None:
        d, gamma, beta, mm, mv = (mapped(e) for e in bn.inputs)
        inputs += [gamma, beta, mm, mv]
        attrs.update(with_bn=True, bn_eps=bn.attrs["eps"], bn_fix_gamma=bn.attrs["fix_gamma"])
    if act is not None:
        attrs["act_type"] = act
    return make_node("_nbdl_fused_conv", inputs, attrs, name=conv.name,
                     user_attrs=conv.user_attrs)
