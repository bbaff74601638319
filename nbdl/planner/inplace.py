"""Inplace: let an op's output take the storage of an input that dies there.

Walking the schedule in order, a pair ``(i, o)`` of step ``s`` is taken when
``i`` is planned (not external) and not a graph output, nothing stored in
``i``'s storage is read after ``s`` (with chains ``a -> b -> c`` the storage
holds several entries over time), ``i`` and ``o`` have the same byte size, and
no other output of ``s`` already took that storage.  The result is a set of
storage groups: a root entry plus the entries that took its storage, which the
packers then place as one unit.
"""
from __future__ import annotations

from dataclasses import dataclass

from .liveness import Liveness
from .types import PlanRequest


@dataclass
class Groups:
    alias_of: dict[int, int]                # out id -> in id whose storage it took
    root_of: dict[int, int]                 # every planned id -> root of its group
    members: dict[int, list[int]]           # root -> its entries, in order of first use
    interval: dict[int, tuple[int, int]]    # root -> (first step, last step) of the group


def singleton_groups(liveness: Liveness) -> Groups:
    """Every planned id alone (no inplace): what naive mode uses."""
    return groups_from_aliases(liveness, {})


def groups_from_aliases(liveness: Liveness, alias_of: dict[int, int]) -> Groups:
    """Storage groups implied by ``alias_of`` (out -> in, chains allowed)."""
    live = liveness.live
    root_of: dict[int, int] = {}
    members: dict[int, list[int]] = {}
    for e in liveness.planned:              # an input is always written before its alias
        r = root_of[e] = root_of[alias_of[e]] if e in alias_of else e
        members.setdefault(r, []).append(e)
    interval = {r: (live[r][0], max(live[e][1] for e in m)) for r, m in members.items()}
    return Groups(alias_of=dict(alias_of), root_of=root_of, members=members, interval=interval)


def inplace_groups(request: PlanRequest, liveness: Liveness) -> Groups:
    live = liveness.live
    external, outputs, nbytes = request.external, request.outputs, request.nbytes
    alias_of: dict[int, int] = {}
    root_of: dict[int, int] = {}
    group_end: dict[int, int] = {}          # root -> last step any member is read
    group_has_output: set[int] = set()

    for s, st in enumerate(request.steps):
        if not st.inplace:
            continue
        taken: set[int] = set()             # roots handed to an output of this step
        for i, o in st.inplace:
            if i in external or o in external or i in outputs or o in alias_of:
                continue
            r = root_of.get(i, i)
            if r in taken or r in group_has_output:
                continue
            if group_end.get(r, live[r][1]) != s:   # the storage is still read later
                continue
            if nbytes[i] != nbytes[o]:
                continue
            alias_of[o] = i
            root_of[o] = r
            group_end[r] = max(s, live[o][1])
            if o in outputs:
                group_has_output.add(r)
            taken.add(r)

    return groups_from_aliases(liveness, alias_of)
