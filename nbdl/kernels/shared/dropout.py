"""Dropout's prepare-time views and plan, shared by the CPU and CUDA kernels."""
from ...errors import ShapeError


RANK = 6


def broadcast_views(shape, axes):
    """6-D views (data, mask) of ``shape`` with ``axes`` broadcast in the mask."""
    nd = len(shape)
    bcast = {a % nd for a in axes} if nd else set()
    groups = []  # [size, is_broadcast] runs
    for k, s in enumerate(shape):
        b = k in bcast
        if groups and groups[-1][1] == b:
            groups[-1][0] *= s
        else:
            groups.append([s, b])
    if len(groups) > RANK:
        raise ShapeError(f"Dropout: axes={tuple(axes)} on a shape {tuple(shape)} alternate "
                         f"broadcast and kept dimensions more than {RANK} times")
    pad = (1,) * (RANK - len(groups))
    data = pad + tuple(int(g[0]) for g in groups)
    mask = pad + tuple(1 if g[1] else int(g[0]) for g in groups)
    return data, mask


def dropout_plan(call):
    """(data view, mask view, pkeep, scale, draw, fill) shared by the CPU and
    CUDA prepares: draw a random mask, or fill it with a constant (1 outside
    training and for p=0; NaN for p=1, MXNet's 0 * (1 / 0): every output
    and gradient is NaN there, as in MXNet)."""
    a = call.attrs
    dview, mview = broadcast_views(call.in_shapes[0], a["axes"])
    p = float(a["p"])
    active = a["mode"] == "always" or bool(call.is_train)
    pkeep = 1.0 - p
    scale = 1.0 / pkeep if pkeep > 0 else 0.0
    draw = active and 0.0 < p < 1.0
    fill = float("nan") if active and p >= 1.0 else 1.0
    return dview, mview, pkeep, scale, draw, fill
