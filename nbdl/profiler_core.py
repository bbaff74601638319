"""The profiler's state and recorder, low in the layers so that the eager
path (``nbdl.imperative.invoke``), the executor and ``Device`` storage can
check it without importing anything above them.  ``nbdl.profiler`` is the
user API (MXNet's ``mx.profiler``) on top of this module.

The hot paths read one module attribute each: ``imperative`` (eager ops),
``symbolic`` (executor steps), ``memory`` (allocations) and ``executor``
(``symbolic`` or ``api``: executor steps and calls).  Each is True only while the profiler runs, is not
paused, and the matching ``profile_*`` option is on, so a stopped
profiler costs one attribute check per op.

Events are kept in memory as Chrome trace events (``traceEvents``: complete
events ``"ph": "X"`` with ``ts``/``dur`` in microseconds, counters ``"C"``,
instant events ``"i"``) until ``nbdl.profiler.dump`` writes them; with
``aggregate_stats`` every timed event also updates per-name statistics
(count, total, min, max) that ``nbdl.profiler.dumps`` prints.
"""
import os
import threading
import time
import weakref

# -- flags the hot paths read (derived; see _refresh) -----------------------
imperative = False
symbolic = False
memory = False
api = False
executor = False            # symbolic or api: the executor's one check

# -- the configuration and the state behind them -----------------------------
DEFAULTS = {
    "profile_all": False,
    "profile_symbolic": True,
    "profile_imperative": True,
    "profile_memory": True,
    "profile_api": True,
    "filename": "profile.json",
    "continuous_dump": True,
    "dump_period": 1.0,
    "aggregate_stats": False,
    "profile_process": "worker",
}
config = dict(DEFAULTS)
running = False
paused = False

_lock = threading.Lock()
events = []                 # Chrome trace event dicts, in recording order
aggregate = {}              # (category, name) -> [count, total_us, min_us, max_us]
memory_stats = {}           # (category, name) -> [count, min_bytes, max_bytes, sum_bytes]
_live = {}                  # device name -> bytes allocated while profiling and still alive
_threads = {}               # tid -> thread name
PID = os.getpid()

CAT_OPERATOR = "operator"
CAT_API = "api"
CAT_STORAGE = "Device Storage"


def _refresh():
    global imperative, symbolic, memory, api, executor
    on = running and not paused
    every = bool(config["profile_all"])
    imperative = on and (every or bool(config["profile_imperative"]))
    symbolic = on and (every or bool(config["profile_symbolic"]))
    memory = on and (every or bool(config["profile_memory"]))
    api = on and (every or bool(config["profile_api"]))
    executor = symbolic or api


def set_config(values):
    """Replace the configuration with ``DEFAULTS`` updated by ``values``
    (already checked by ``nbdl.profiler.set_config``)."""
    global config
    new = dict(DEFAULTS)
    new.update(values)
    config = new
    _refresh()


def set_running(flag):
    """Start (True; a pause ends too) or stop (False) recording."""
    global running, paused
    running = bool(flag)
    if running:
        paused = False
    _refresh()


def set_paused(flag):
    """Pause (True) or resume (False) recording while running."""
    global paused
    paused = bool(flag)
    _refresh()


def clear_events():
    """Forget the recorded trace events (the aggregate stats stay)."""
    with _lock:
        del events[:]


def clear_aggregate():
    """Forget the aggregate statistics."""
    with _lock:
        aggregate.clear()
        memory_stats.clear()


# -- recording ----------------------------------------------------------------
def now_ns():
    """The profiler's clock (``time.perf_counter_ns``)."""
    return time.perf_counter_ns()


def _tid():
    tid = threading.get_native_id()
    if tid not in _threads:
        _threads[tid] = threading.current_thread().name
    return tid


def complete(name, cat, t0_ns, t1_ns, args=None):
    """Record a complete event (``"ph": "X"``) that began at ``t0_ns`` and
    ended at ``t1_ns`` (``now_ns()`` readings)."""
    dur = (t1_ns - t0_ns) / 1000.0
    ev = {"name": name, "cat": cat, "ph": "X", "ts": t0_ns / 1000.0, "dur": dur,
          "pid": PID, "tid": _tid()}
    if args:
        ev["args"] = args
    with _lock:
        events.append(ev)
        if config["aggregate_stats"]:
            st = aggregate.get((cat, name))
            if st is None:
                aggregate[(cat, name)] = [1, dur, dur, dur]
            else:
                st[0] += 1
                st[1] += dur
                if dur < st[2]:
                    st[2] = dur
                if dur > st[3]:
                    st[3] = dur


def timed(name, cat, fn, *args, event_args=None):
    """``fn(*args)``, recorded as a complete event; returns its result."""
    t0 = time.perf_counter_ns()
    res = fn(*args)
    complete(name, cat, t0, time.perf_counter_ns(), event_args)
    return res


def counter(name, cat, value, series=None):
    """Record a counter event (``"ph": "C"``): ``name``'s value is now
    ``value`` (an int or float); ``series`` names the value in the event's
    ``args`` (``name`` by default)."""
    ev = {"name": name, "cat": cat, "ph": "C", "ts": time.perf_counter_ns() / 1000.0,
          "pid": PID, "tid": _tid(), "args": {series or name: value}}
    with _lock:
        events.append(ev)
        if cat == CAT_STORAGE and config["aggregate_stats"]:
            st = memory_stats.get((cat, name))
            if st is None:
                memory_stats[(cat, name)] = [1, value, value, value]
            else:
                st[0] += 1
                st[1] = min(st[1], value)
                st[2] = max(st[2], value)
                st[3] += value


def instant(name, cat, scope="p"):
    """Record an instant event (``"ph": "i"``) with Chrome's scope letter
    (``"g"`` global, ``"p"`` process, ``"t"`` thread)."""
    ev = {"name": name, "cat": cat, "ph": "i", "s": scope, "ts": time.perf_counter_ns() / 1000.0,
          "pid": PID, "tid": _tid()}
    with _lock:
        events.append(ev)


def _device_name(device):
    return f"Memory: {getattr(device, 'device_type', 'cpu')}/{getattr(device, 'device_id', 0)}"


def _freed(key, nbytes):
    with _lock:
        left = _live.get(key, 0) - nbytes
        _live[key] = left
    if memory:
        counter(key, CAT_STORAGE, left)


def allocated(device, array):
    """Count ``array`` (just allocated on ``device``) in the device's storage
    counter until it is garbage-collected; records the new total."""
    nbytes = int(getattr(array, "nbytes", 0) or 0)
    if nbytes <= 0:
        return
    key = _device_name(device)
    try:
        weakref.finalize(array, _freed, key, nbytes)
    except TypeError:         # an array type without weak references: count it, never free
        pass
    with _lock:
        total = _live.get(key, 0) + nbytes
        _live[key] = total
    counter(key, CAT_STORAGE, total)


def thread_names():
    """{tid: thread name} for every thread that recorded an event."""
    return dict(_threads)


def recording():
    """Whether the profiler runs and is not paused (user annotations record
    whatever the ``profile_*`` options say)."""
    return running and not paused
