"""``Block.summary``: layers, output shapes and parameter counts."""
import numpy as np


def _shape_of(x):
    if isinstance(x, (list, tuple)):
        return [_shape_of(v) for v in x]
    return tuple(x.shape) if hasattr(x, "shape") else type(x).__name__


def summary(block, *inputs):
    rows, handles, seen = [], [], set()
    counts = {}

    def hook(b, args, out):
        name = f"{type(b).__name__}-{len(rows) + 1}"
        n_params, n_shared = 0, 0
        for p in b._reg_params.values():
            size = int(np.prod(p.shape)) if p.shape else 0
            if id(p) in seen:
                n_shared += size
            n_params += size
            seen.add(id(p))
        rows.append((name, _shape_of(out), n_params))
        counts.setdefault("shared", 0)
        counts["shared"] += n_shared

    def register(b):
        handles.append(b._forward_hooks.append(hook) or (b._forward_hooks, hook))
        for c in b._children.values():
            register(c)
    active = []

    def deactivate(b):
        if getattr(b, "_active", False):
            active.append(b)
            object.__setattr__(b, "_active", False)
        for c in b._children.values():
            deactivate(c)
    deactivate(block)
    register(block)
    try:
        block(*inputs)
    finally:
        for hooks, h in handles:
            if h in hooks:
                hooks.remove(h)
        for b in active:
            object.__setattr__(b, "_active", True)
    line = "-" * 80
    out = [line, f"{'Layer (type)':>20}{'Output Shape':>42}{'Param #':>18}", "=" * 80]
    for x in inputs:
        out.append(f"{'Input':>20}{str(_shape_of(x)):>42}{0:>18}")
    for name, shape, n in rows:
        out.append(f"{name:>20}{str(shape):>42}{n:>18}")
    params = block.collect_params().values()
    total = sum(int(np.prod(p.shape)) for p in params if p.shape)
    trainable = sum(int(np.prod(p.shape)) for p in params if p.shape and p.grad_req != "null")
    out += ["=" * 80, "Parameters in forward computation graph, duplicate included",
            f"   Total params: {sum(r[2] for r in rows)}",
            f"   Trainable params: {trainable}",
            f"   Non-trainable params: {total - trainable}",
            f"Shared params in forward computation graph: {counts.get('shared', 0)}",
            f"Unique parameters in model: {total}", line]
    text = "\n".join(out)
    print(text)
    return text
