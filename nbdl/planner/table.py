"""``format_plan_table``: the memory table printed by ``debug_str``.

One row per buffer (a byte range of the arena): offset, size, the steps it is
in use and the entries stored there with their own live steps; then the
naive / planned / lower-bound / temp / MXNet-pool totals in bytes and MB.
"""
from __future__ import annotations

from .types import MemoryPlan

_MB = float(1 << 20)


def _steps(span) -> str:
    first, last = span
    return str(first) if first == last else f"{first}-{last}"


def _wrap(items: list[str], width: int) -> list[str]:
    """Join items with ", " into lines of about ``width``, never splitting one."""
    lines, cur = [], ""
    for it in items:
        if cur and len(cur) + 2 + len(it) > width:
            lines.append(cur + ",")
            cur = it
        else:
            cur = f"{cur}, {it}" if cur else it
    lines.append(cur)
    return lines


def _flops(n: int) -> str:
    for scale, unit in ((1e9, "GFLOP"), (1e6, "MFLOP"), (1e3, "kFLOP")):
        if n >= scale:
            return f"{n / scale:,.3f} {unit}"
    return f"{n} FLOP"


def _total(label: str, nbytes: int) -> str:
    return f"  {label:<12}{nbytes:>16,} bytes  {nbytes / _MB:>10.3f} MB"


def format_plan_table(plan: MemoryPlan, width: int = 110) -> str:
    req = plan.request
    st = plan.stats
    temps = {t for s in req.steps for t in s.temps}
    recomputed = plan.budget.recomputed if plan.budget is not None else {}
    head = f"  {'offset':>12}  {'bytes':>12}  {'live':>11}  entries"
    indent = " " * (len(head) - len("entries"))
    lines = [f"Memory plan: {len(plan.offsets)} entries in {len(plan.buffers)} buffers, "
             f"{len(req.steps)} steps, packer {st.packer}, alignment {req.alignment}",
             head]
    for b in plan.buffers:
        names = []
        for e in b.entries:
            label = req.names.get(e, str(e))
            if e in temps:
                label += " (temp)"
            elif e in recomputed:
                label += " (recomputed)"
            elif e in req.unwritten and st.packer != "naive":
                label += " (req null: never written, no bytes of its own)"
            elif e in plan.alias_of:
                label += f" (inplace {req.names.get(plan.alias_of[e], plan.alias_of[e])})"
            names.append(f"{label}[{_steps(plan.live[e])}]")
        row = f"  {b.offset:>12,}  {b.nbytes:>12,}  {_steps(b.live):>11}  "
        text = _wrap(names, max(40, width - len(indent)))
        lines.append(row + text[0])
        lines.extend(indent + t for t in text[1:])
    lines += [_total("naive", st.naive_bytes),
              _total("planned", st.planned_bytes),
              _total("lower bound", st.lower_bound_bytes),
              _total("temp", st.temp_bytes),
              _total("mxnet pool", st.mxnet_pool_bytes)]
    if st.naive_bytes:
        lines.append(f"  planned is {100.0 * st.planned_bytes / st.naive_bytes:.1f}% of naive")
    if plan.budget is not None:
        lines += format_budget(plan, width)
    return "\n".join(lines)


def format_budget(plan: MemoryPlan, width: int = 110) -> list[str]:
    """The lines ``format_plan_table`` adds for a plan made under a memory
    budget: the budget, the bytes planned and without the budget, the
    recomputed entries and their extra FLOPs."""
    b, req = plan.budget, plan.request
    lines = [f"Memory budget {b.budget:,} bytes ({b.budget / _MB:,.1f} MB): "
             f"planned {plan.arena_bytes:,} bytes ({plan.arena_bytes / _MB:,.1f} MB), "
             f"{b.unbudgeted_bytes:,} bytes ({b.unbudgeted_bytes / _MB:,.1f} MB) without it"]
    if not b.recompute_steps:
        lines.append("  nothing recomputed: the schedule fits as it is")
        return lines
    share = f" ({100.0 * b.extra_flops / b.forward_flops:.1f}% of the forward's " \
            f"{_flops(b.forward_flops)})" if b.forward_flops else ""
    lines.append(f"  {len(b.recomputed)} entries recomputed in backward by "
                 f"{len(b.recompute_steps)} steps: {_flops(b.extra_flops)} extra{share}")
    names = [f"{req.names.get(o, o)}[{_steps(plan.live[c])}]"
             for c, o in sorted(b.recomputed.items(), key=lambda co: plan.live[co[0]][0])
             if c in plan.live]
    lines.extend("    " + t for t in _wrap(names, width - 4))
    return lines
