"""Validate a ``PlanRequest`` and compute every planned entry's live interval.

An entry is live from the step that writes it to the last step that reads it;
graph outputs stay live to the last step; an entry nobody reads lives only at
its write step; a temp lives only at its own step.  Intervals are closed:
``(first, last)`` both inclusive, so two entries whose intervals share a step
must not share bytes (a step reads its inputs while it writes its outputs).
"""
from __future__ import annotations

from dataclasses import dataclass

from ..errors import NbdlError
from .types import PlanRequest


@dataclass
class Liveness:
    planned: list[int]                      # planned ids in order of first appearance
    live: dict[int, tuple[int, int]]        # id -> (first step, last step)
    temp_step: dict[int, int]               # temp id -> its step
    last_step: int                          # index of the schedule's last step (-1 if empty)


def _where(request: PlanRequest, s: int) -> str:
    st = request.steps[s]
    return f"step {s} ({st.op} {st.name!r})"


def _name(request: PlanRequest, e: int) -> str:
    return f"entry {e} ({request.names.get(e, '?')!r})"


def check_request_shape(request: PlanRequest) -> None:
    """Reject malformed alignment / sizes before anything is planned."""
    a = request.alignment
    if not isinstance(a, int) or isinstance(a, bool) or a < 1:
        raise NbdlError(f"PlanRequest.alignment must be a positive int, got {a!r}")
    for e, n in request.nbytes.items():
        if not isinstance(n, int) or n < 0:
            raise NbdlError(f"PlanRequest.nbytes[{e}] must be a non-negative int, got {n!r}")


def compute_liveness(request: PlanRequest) -> Liveness:
    """Live intervals of every non-external id; raise ``NbdlError`` on a bad
    schedule (read before write, read of an id nobody writes, an id written
    twice, a temp used outside its step, an id with no size)."""
    check_request_shape(request)
    external = request.external
    first: dict[int, int] = {}
    last: dict[int, int] = {}
    temp_step: dict[int, int] = {}
    planned: list[int] = []
    bad_read: tuple[int, int] | None = None       # (step, id) of the first premature read

    for s, st in enumerate(request.steps):
        for e in st.reads:
            if e in external:
                continue
            if e in temp_step:
                raise NbdlError(f"{_where(request, s)} reads temp {_name(request, e)} "
                                f"of step {temp_step[e]}: temps live only during their step")
            if e not in first:
                if bad_read is None:
                    bad_read = (s, e)
                continue
            last[e] = s
        for e in st.writes:
            if e in external:
                continue
            if e in temp_step:
                raise NbdlError(f"{_where(request, s)} writes temp {_name(request, e)} "
                                f"as an output; temps are scratch only")
            if e in first:
                raise NbdlError(f"{_where(request, s)} writes {_name(request, e)} "
                                f"already written at step {first[e]}; every planned entry "
                                f"has exactly one writer")
            first[e] = last[e] = s
            planned.append(e)
        for e in st.temps:
            if e in external:
                raise NbdlError(f"{_where(request, s)} lists external {_name(request, e)} as a temp")
            if e in temp_step or e in first:
                raise NbdlError(f"{_where(request, s)} reuses {_name(request, e)} as a temp; "
                                f"a temp id must be used by exactly one step")
            temp_step[e] = s
            first[e] = last[e] = s
            planned.append(e)
        for i, o in st.inplace:
            if i not in st.reads or o not in st.writes:
                raise NbdlError(f"{_where(request, s)} has inplace pair ({i}, {o}) but "
                                f"{i} is not among its reads {list(st.reads)} or {o} not "
                                f"among its writes {list(st.writes)}")

    if bad_read is not None:
        s, e = bad_read
        if e in first:
            raise NbdlError(f"{_where(request, s)} reads {_name(request, e)} before it is "
                            f"written (at step {first[e]}); fix the schedule order")
        raise NbdlError(f"{_where(request, s)} reads {_name(request, e)}, which no step "
                        f"writes and which is not external (bind it to an array or "
                        f"schedule its producer)")

    last_step = len(request.steps) - 1
    for e in request.outputs:
        if e in external:
            continue
        if e not in first or e in temp_step:
            raise NbdlError(f"output {_name(request, e)} is never written by the schedule "
                            f"and is not external")
        last[e] = last_step

    for e in planned:
        if e not in request.nbytes:
            raise NbdlError(f"{_name(request, e)} has no size in PlanRequest.nbytes")

    live = {e: (first[e], last[e]) for e in planned}
    return Liveness(planned=planned, live=live, temp_step=temp_step, last_step=last_step)
