"""The profiler (MXNet 1.x's ``mx.profiler``): per-op times and memory,
written as a Chrome trace (chrome://tracing, Perfetto) and summarised as
aggregate statistics.

    nbdl.profiler.set_config(profile_all=True, aggregate_stats=True,
                             filename="profile.json")
    nbdl.profiler.set_state("run")
    ...                                   # eager ops, executors, Gluon
    nbdl.profiler.set_state("stop")
    nbdl.profiler.dump()                  # writes profile.json
    print(nbdl.profiler.dumps())          # the aggregate table

What is recorded (while running and not paused):

- ``profile_imperative``: every eager op (``nbdl.nd.*``, NDArray operators,
  autograd's backward ops), one complete event per kernel call, category
  ``operator``.  Recording sends each call through the general eager path,
  so the cached fast path's dispatch cost is not what is measured.
- ``profile_symbolic``: every step of an executor's forward and backward
  passes (Gluon's hybridized blocks included), one complete event per step
  named after its op, with the node's name in ``args``; the pass runs as a
  Python loop over the steps instead of the native driver while recording.
- ``profile_memory``: a counter ``Memory: <device>`` (category ``Device
  Storage``) of the bytes allocated on each device while recording that are
  still alive (each allocation adds, each garbage-collected array takes its
  bytes back), and ``Executor arena: <device>``, the planned arena of each
  executor at bind.
- ``profile_api``: each ``Executor.forward`` / ``Executor.backward`` call as
  a whole (category ``api``; nbdl has no C API to profile).

Differences from MXNet: ``pause()`` really stops recording until
``resume()``; ``dump()`` always writes the whole trace recorded so far (so
the file is valid JSON after every dump; ``finished=True`` then forgets the
events); ``continuous_dump`` and ``dump_period`` are accepted and checked but
nbdl does not dump from a background thread; ``profile_process='server'``
is refused (no distributed kvstore).
"""
import json
import os
import warnings

from . import profiler_core as _core
from .errors import ArgumentError
from .profiler_annotations import Counter, Domain, Event, Frame, Marker, Task

__all__ = ["set_config", "profiler_set_config", "set_state", "profiler_set_state",
           "dump", "dump_profile", "dumps", "pause", "resume", "Domain", "Task", "Frame",
           "Event", "Counter", "Marker"]

_BOOL_KEYS = ("profile_all", "profile_symbolic", "profile_imperative", "profile_memory",
              "profile_api", "continuous_dump", "aggregate_stats")
_STATES = ("stop", "run")
_SORT_KEYS = {"total": 1, "avg": 4, "min": 2, "max": 3, "count": 0}


def _as_bool(where, key, value):
    if isinstance(value, bool):
        return value
    if isinstance(value, int) and value in (0, 1):
        return bool(value)
    if isinstance(value, str) and value.strip().lower() in ("true", "false", "1", "0"):
        return value.strip().lower() in ("true", "1")
    raise ArgumentError(f"{where}: {key} must be a boolean, got {value!r}")


def _check_process(where, profile_process):
    if profile_process == "worker":
        return
    if profile_process == "server":
        raise ArgumentError(f"{where}: profile_process='server' profiles a distributed "
                            "kvstore server, which nbdl does not have; use 'worker'")
    raise ArgumentError(f"{where}: profile_process must be 'worker' or 'server', "
                        f"got {profile_process!r}")


def set_config(**kwargs):
    """Configure the profiler (keyword arguments only).  Options not given
    take their defaults.

    Parameters
    ----------
    filename : str
        File that ``dump`` writes (default ``'profile.json'``).
    profile_all : bool
        Turn every kind of recording on (default False).
    profile_symbolic : bool
        Record each step of executor passes (default True).
    profile_imperative : bool
        Record each eager op (default True).
    profile_memory : bool
        Record device storage counters (default True).
    profile_api : bool
        Record whole ``Executor.forward``/``backward`` calls (default True).
    continuous_dump : bool
        Accepted for MXNet compatibility; nbdl dumps only on ``dump()``.
    dump_period : float
        Seconds between dumps in MXNet's continuous mode; must be positive.
    aggregate_stats : bool
        Keep per-name statistics for ``dumps()`` (default False).
    profile_process : str
        ``'worker'`` (the only process nbdl has).
    """
    where = "profiler.set_config"
    unknown = [k for k in kwargs if k not in _core.DEFAULTS]
    if unknown:
        raise ArgumentError(f"{where}: unknown option(s) {', '.join(map(repr, unknown))}; "
                            f"possible options: {', '.join(_core.DEFAULTS)}")
    values = {}
    for k, v in kwargs.items():
        if k in _BOOL_KEYS:
            values[k] = _as_bool(where, k, v)
        elif k == "filename":
            if not isinstance(v, (str, os.PathLike)) or not str(v):
                raise ArgumentError(f"{where}: filename must be a non-empty path, got {v!r}")
            values[k] = os.fspath(v)
        elif k == "dump_period":
            try:
                period = float(v)
            except (TypeError, ValueError):
                period = -1.0
            if not period > 0:
                raise ArgumentError(f"{where}: dump_period must be a positive number of "
                                    f"seconds, got {v!r}")
            values[k] = period
        elif k == "profile_process":
            _check_process(where, v)
            values[k] = v
    _core.set_config(values)


def profiler_set_config(mode="symbolic", filename="profile.json"):
    """Deprecated form of ``set_config``: ``set_config(profile_<mode>=True,
    filename=filename)``.

    Parameters
    ----------
    mode : str
        ``'symbolic'`` or ``'all'``.
    filename : str
        File that ``dump`` writes.
    """
    warnings.warn("profiler.profiler_set_config() is deprecated. "
                  "Please use profiler.set_config() instead", DeprecationWarning, stacklevel=2)
    if mode not in ("symbolic", "all"):
        raise ArgumentError(f"profiler.profiler_set_config: mode must be 'symbolic' or 'all', "
                            f"got {mode!r}")
    set_config(**{"profile_" + mode: True, "filename": filename})


def set_state(state="stop", profile_process="worker"):
    """Start (``'run'``, which also ends a ``pause()``) or stop (``'stop'``)
    recording.

    Parameters
    ----------
    state : str
        ``'run'`` or ``'stop'``.
    profile_process : str
        ``'worker'``.
    """
    if state not in _STATES:
        raise ArgumentError(f"profiler.set_state: state must be 'run' or 'stop', got {state!r}")
    _check_process("profiler.set_state", profile_process)
    _core.set_running(state == "run")


def profiler_set_state(state="stop"):
    """Deprecated form of ``set_state``.

    Parameters
    ----------
    state : str
        ``'run'`` or ``'stop'``.
    """
    warnings.warn("profiler.profiler_set_state() is deprecated. "
                  "Please use profiler.set_state() instead", DeprecationWarning, stacklevel=2)
    set_state(state)


def pause(profile_process="worker"):
    """Stop recording until ``resume()`` (the state stays ``'run'``).

    Parameters
    ----------
    profile_process : str
        ``'worker'``.
    """
    _check_process("profiler.pause", profile_process)
    _core.set_paused(True)


def resume(profile_process="worker"):
    """Resume recording after ``pause()``.

    Parameters
    ----------
    profile_process : str
        ``'worker'``.
    """
    _check_process("profiler.resume", profile_process)
    _core.set_paused(False)


def _trace():
    with _core._lock:
        evs = list(_core.events)
    meta = [{"name": "process_name", "ph": "M", "pid": _core.PID, "tid": 0,
             "args": {"name": "nbdl"}}]
    for tid, name in sorted(_core.thread_names().items()):
        meta.append({"name": "thread_name", "ph": "M", "pid": _core.PID, "tid": tid,
                     "args": {"name": name}})
    return {"traceEvents": meta + evs, "displayTimeUnit": "ms"}


def dump(finished=True, profile_process="worker"):
    """Write the trace recorded so far to the configured ``filename`` as
    Chrome trace JSON (``{"traceEvents": [...], "displayTimeUnit": "ms"}``).

    Parameters
    ----------
    finished : bool
        True: this profile is done; the recorded events are forgotten after
        writing, so the next dump starts a new trace.  False: keep them, so
        later dumps write them again with whatever follows.
    profile_process : str
        ``'worker'``.
    """
    if not isinstance(finished, bool):
        raise ArgumentError(f"profiler.dump: finished must be True or False, got {finished!r}")
    _check_process("profiler.dump", profile_process)
    path = _core.config["filename"]
    tmp = f"{path}.tmp{os.getpid()}"
    with open(tmp, "w") as f:
        json.dump(_trace(), f)
    os.replace(tmp, path)
    if finished:
        _core.clear_events()


def dump_profile():
    """Deprecated form of ``dump(True)``."""
    warnings.warn("profiler.dump_profile() is deprecated. "
                  "Please use profiler.dump() instead", DeprecationWarning, stacklevel=2)
    dump(True)


def _sig4(x):
    return float(f"{x:.4g}")


def _stats():
    """({domain: [(name, count, total, min, max, avg) in ms]},
    {domain: [(name, count, min, max, avg) in kB]})."""
    with _core._lock:
        agg = {k: list(v) for k, v in _core.aggregate.items()}
        mem = {k: list(v) for k, v in _core.memory_stats.items()}
    time_, memory = {}, {}
    for (cat, name), (n, total, lo, hi) in agg.items():
        time_.setdefault(cat, []).append((name, n, total / 1e3, lo / 1e3, hi / 1e3,
                                          total / 1e3 / n))
    for (cat, name), (n, lo, hi, tot) in mem.items():
        memory.setdefault(cat, []).append((name, n, lo / 1e3, hi / 1e3, tot / 1e3 / n))
    return time_, memory


def _sorted(rows, sort_by, ascending, memory):
    if memory:   # (name, count, min, max, avg): no total; sort 'total' by max use
        idx = {"total": 3, "avg": 4, "min": 2, "max": 3, "count": 1}[sort_by]
    else:
        idx = _SORT_KEYS[sort_by] + 1
    return sorted(rows, key=lambda r: r[idx], reverse=not ascending)


def _table(time_, memory, sort_by, ascending):
    out = ["", "Profile Statistics:", "\tNote the difference in units for different entries."]
    domains = sorted(set(time_) | set(memory))
    for d in domains:
        out += [d, "================="]
        if d in memory:
            out.append(f"{'Name':<30}{'Total Count':>11}{'Min Use  (kB)':>17}"
                       f"{'Max Use  (kB)':>17}{'Avg Use  (kB)':>17}")
            out.append(f"{'----':<30}{'-----------':>11}" + f"{'-------------':>17}" * 3)
            for name, n, lo, hi, avg in _sorted(memory[d], sort_by, ascending, True):
                out.append(f"{name:<30}{n:>11}{lo:>17.4f}{hi:>17.4f}{avg:>17.4f}")
        if d in time_:
            out.append(f"{'Name':<30}{'Total Count':>11}{'Time (ms)':>17}{'Min Time (ms)':>17}"
                       f"{'Max Time (ms)':>17}{'Avg Time (ms)':>17}")
            out.append(f"{'----':<30}{'-----------':>11}{'---------':>17}"
                       + f"{'-------------':>17}" * 3)
            for name, n, tot, lo, hi, avg in _sorted(time_[d], sort_by, ascending, False):
                out.append(f"{name:<30}{n:>11}{tot:>17.4f}{lo:>17.4f}{hi:>17.4f}{avg:>17.4f}")
        out.append("")
    return "\n".join(out) + "\n"


def _json(time_, memory, sort_by, ascending):
    doc = {"Time": {}, "Memory": {}, "Unit": {"Time": "ms", "Memory": "kB"}}
    for d in sorted(time_):
        doc["Time"][d] = {name: {"Count": n, "Total": _sig4(tot), "Min": _sig4(lo),
                                 "Max": _sig4(hi), "Avg": _sig4(avg)}
                          for name, n, tot, lo, hi, avg in _sorted(time_[d], sort_by, ascending,
                                                                   False)}
    for d in sorted(memory):
        doc["Memory"][d] = {name: {"Count": n, "Min": _sig4(lo), "Max": _sig4(hi),
                                   "Avg": _sig4(avg)}
                            for name, n, lo, hi, avg in _sorted(memory[d], sort_by, ascending,
                                                                True)}
    return json.dumps(doc, indent=4) + "\n"


def dumps(reset=False, format="table", sort_by="total", ascending=False):
    """The aggregate statistics as text (empty unless ``set_config`` turned
    ``aggregate_stats`` on): per category, each op or annotation's count and
    total, min, max and average time in ms; per storage counter its count
    and min, max and average value in kB.

    Parameters
    ----------
    reset : bool
        Forget the statistics after formatting them.
    format : str
        ``'table'`` (MXNet's console table) or ``'json'`` (``{"Time": {category:
        {name: {"Count", "Total", "Min", "Max", "Avg"}}}, "Memory": {...},
        "Unit": {...}}``).
    sort_by : str
        ``'total'``, ``'avg'``, ``'min'``, ``'max'`` or ``'count'``: the order of
        the rows in each category (memory rows: ``'total'`` sorts by max use).
    ascending : bool
        Smallest first instead of largest first.
    """
    where = "profiler.dumps"
    if format not in ("table", "json"):
        raise ArgumentError(f"{where}: format must be 'table' or 'json', got {format!r}")
    if sort_by not in _SORT_KEYS:
        raise ArgumentError(f"{where}: sort_by must be one of 'total', 'avg', 'min', 'max', "
                            f"'count', got {sort_by!r}")
    for key, v in (("ascending", ascending), ("reset", reset)):
        if not isinstance(v, bool):
            raise ArgumentError(f"{where}: {key} must be True or False, got {v!r}")
    if not _core.config["aggregate_stats"]:
        return ""
    time_, memory = _stats()
    text = (_table if format == "table" else _json)(time_, memory, sort_by, ascending)
    if reset:
        _core.clear_aggregate()
    return text
