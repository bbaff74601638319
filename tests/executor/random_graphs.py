"""Random symbols for planner/executor invariant tests (hypothesis strategies)."""
import numpy as np
from hypothesis import strategies as st

import nbdl

UNARY = ["relu", "tanh", "sigmoid", "square", "negative", "abs", "softsign", "_copy"]
BINARY = ["elemwise_add", "elemwise_sub", "elemwise_mul"]
SCALAR = ["_plus_scalar", "_mul_scalar", "_minus_scalar", "_rminus_scalar"]


@st.composite
def random_symbol(draw, max_ops=14):
    """A random DAG over (3, 4) tensors with a few shape-changing ops.
    Returns (symbol, {arg: shape})."""
    shapes = {}
    pool = []  # (symbol, shape)
    for i in range(draw(st.integers(1, 3))):
        v = nbdl.sym.var(f"x{i}")
        shapes[f"x{i}"] = (3, 4)
        pool.append((v, (3, 4)))
    n_ops = draw(st.integers(1, max_ops))
    for k in range(n_ops):
        kind = draw(st.sampled_from(["unary", "binary", "scalar", "bcast", "fc", "sum", "concat_split"]))
        a, sa = pool[draw(st.integers(0, len(pool) - 1))]
        name = f"n{k}"
        if kind == "unary":
            out, so = getattr(nbdl.sym, draw(st.sampled_from(UNARY)))(a, name=name), sa
        elif kind == "binary":
            same = [(s, sh) for s, sh in pool if sh == sa]
            b, _ = same[draw(st.integers(0, len(same) - 1))]
            out, so = getattr(nbdl.sym, draw(st.sampled_from(BINARY)))(a, b, name=name), sa
        elif kind == "scalar":
            op = draw(st.sampled_from(SCALAR))
            out, so = getattr(nbdl.sym, op)(a, scalar=draw(st.sampled_from([0.5, 2.0, -1.0])), name=name), sa
        elif kind == "bcast":
            bname = f"b{k}"
            bshape = (1, sa[1]) if len(sa) == 2 else (1,)
            shapes[bname] = bshape
            out, so = nbdl.sym.broadcast_add(a, nbdl.sym.var(bname), name=name), sa
        elif kind == "fc":
            hidden = draw(st.sampled_from([2, 4, 5]))
            w, b = f"{name}_weight", f"{name}_bias"
            shapes[w] = (hidden, int(np.prod(sa[1:])) if len(sa) > 1 else 1)
            shapes[b] = (hidden,)
            if len(sa) < 2:
                continue
            out, so = nbdl.sym.FullyConnected(a, num_hidden=hidden, name=name), (sa[0], hidden)
        elif kind == "sum":
            if len(sa) < 2:
                continue
            out, so = nbdl.sym.sum(a, axis=1, keepdims=True, name=name), (sa[0], 1)
        else:
            if len(sa) < 2 or sa[1] % 2:
                continue
            parts = nbdl.sym.SliceChannel(a, num_outputs=2, axis=1, name=name)
            out = nbdl.sym.Concat(parts[1], parts[0], dim=1, name=f"{name}_cat")
            so = sa
        pool.append((out, so))
    n_heads = draw(st.integers(1, min(3, len(pool))))
    heads = [pool[-1][0]] + [pool[draw(st.integers(0, len(pool) - 1))][0] for _ in range(n_heads - 1)]
    sym = nbdl.sym.Group(heads) if len(heads) > 1 else heads[0]
    args = sym.list_arguments()
    return sym, {a: shapes[a] for a in args}
