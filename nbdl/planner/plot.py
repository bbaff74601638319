"""``plot_plan``: the arena as a picture (``nbdl.viz.plot_memory`` draws an
executor's).

Schedule step across, arena offset up: one rectangle per planned entry from
the step that writes it to the last step that reads it, as tall as its bytes,
so the picture is the memory table of ``debug_str`` laid out in time.  The
forward pass, the backward pass, scratch and recomputed entries have their own
colours; a memory budget, the arena without it and the forward/backward
boundary are lines.  Needs matplotlib (``pip install nbdl[plot]``); it is
imported only here, when a picture is asked for.
"""
from __future__ import annotations

from .._docs import shared_doc
from ..errors import OptionalDependencyError
from .types import MemoryPlan, align_up

_MB = float(1 << 20)
_COLOURS = {"forward": "#80b1d3", "backward": "#fdb462", "temp": "#d9d9d9",
            "recomputed": "#e41a1c"}


def _matplotlib():
    try:
        from matplotlib.collections import PatchCollection
        from matplotlib.figure import Figure
        from matplotlib.lines import Line2D
        from matplotlib.patches import Patch, Rectangle
    except ImportError:
        raise OptionalDependencyError(
            "plot_memory needs matplotlib, which is not installed: pip install matplotlib "
            "(or pip install nbdl[plot])") from None
    return Figure, Rectangle, PatchCollection, Patch, Line2D


def _kind(e, temps, recomputed, first_step, n_forward):
    if e in temps:
        return "temp"
    if e in recomputed:
        return "recomputed"
    if n_forward is not None and first_step >= n_forward:
        return "backward"
    return "forward"


FIGURE_ARGS = """
size : (float, float)
    Figure size in inches.
dpi : int
    Resolution of a saved raster picture.

Returns
-------
matplotlib.figure.Figure
"""


@shared_doc(figure_args=FIGURE_ARGS)
def plot_plan(plan: MemoryPlan, path=None, n_forward=None, title=None, size=(10, 5), dpi=100):
    """Draw ``plan``'s arena: offset against schedule step, one rectangle
    per entry, recomputed ones in red.

    Parameters
    ----------
    plan : MemoryPlan
        A plan from ``nbdl.planner.plan`` or ``executor.memory_plan``.
    path : str, optional
        Where to save the picture (its extension picks the format: .png,
        .svg, .pdf); None only returns the figure.
    n_forward : int, optional
        Steps before this one are the forward pass (coloured apart, with a
        line at the boundary).
    title : str, optional
        The figure's title (default: the planned and budget bytes).
    {figure_args}
    """
    Figure, Rectangle, PatchCollection, Patch, Line2D = _matplotlib()
    req = plan.request
    temps = {t for st in req.steps for t in st.temps}
    budget = plan.budget
    recomputed = set(budget.recomputed) if budget is not None else set()
    free = req.unwritten if plan.stats.packer != "naive" else set()
    boxes = {k: [] for k in _COLOURS}
    for e, off in plan.offsets.items():
        n = align_up(req.nbytes.get(e, 0), req.alignment)
        if not n or e in free:
            continue
        first, last = plan.live[e]
        kind = _kind(e, temps, recomputed, first, n_forward)
        boxes[kind].append(Rectangle((first - 0.5, off / _MB), last - first + 1, n / _MB))
    fig = Figure(figsize=size, dpi=dpi)
    ax = fig.add_subplot()
    handles = []
    for kind, rects in boxes.items():
        if rects:
            ax.add_collection(PatchCollection(rects, facecolor=_COLOURS[kind], edgecolor="#404040",
                                              linewidth=0.2, alpha=0.9))
            handles.append(Patch(facecolor=_COLOURS[kind], edgecolor="#404040",
                                 label=f"{kind} ({len(rects)})"))
    steps = max(len(req.steps), 1)
    top = plan.arena_bytes / _MB
    ax.axhline(top, color="black", linewidth=0.8)
    handles.append(Line2D([], [], color="black", linewidth=0.8,
                          label=f"arena {plan.arena_bytes / _MB:,.1f} MB"))
    if budget is not None:
        ax.axhline(budget.budget / _MB, color="#e41a1c", linestyle="--", linewidth=1)
        handles.append(Line2D([], [], color="#e41a1c", linestyle="--",
                              label=f"budget {budget.budget / _MB:,.1f} MB"))
        if budget.unbudgeted_bytes:
            top = max(top, budget.unbudgeted_bytes / _MB)
            ax.axhline(budget.unbudgeted_bytes / _MB, color="#808080", linestyle=":", linewidth=1)
            handles.append(Line2D([], [], color="#808080", linestyle=":",
                                  label=f"without a budget {budget.unbudgeted_bytes / _MB:,.1f} MB"))
    if n_forward is not None:
        ax.axvline(n_forward - 0.5, color="#404040", linestyle="-.", linewidth=0.8)
    ax.set_xlim(-0.5, steps - 0.5)
    ax.set_ylim(0, max(top, 1e-6) * 1.05)
    ax.set_xlabel("schedule step" + (" (forward | backward)" if n_forward is not None else ""))
    ax.set_ylabel("arena offset (MB)")
    if title is None:
        title = f"{len(plan.offsets)} entries in {plan.arena_bytes / _MB:,.1f} MB"
        if budget is not None and budget.recompute_steps:
            title += f", {len(budget.recomputed)} recomputed"
    ax.set_title(title)
    ax.legend(handles=handles, loc="upper right", fontsize="small", framealpha=0.9)
    fig.tight_layout()
    if path is not None:
        fig.savefig(path)
    return fig


__all__ = ["plot_plan"]
