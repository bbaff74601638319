"""Running an executor's schedule under the profiler (``nbdl.profiler``).

With ``profile_symbolic`` recording, a pass runs as a Python loop over its
steps (never through the generated native driver, which runs every kernel
in one call), and each step is recorded as one complete event named after
its op, with the node's name and the pass in the event's ``args``.  On a GPU
each step is followed by a device synchronisation so that its time is the
kernel's.  With ``profile_api`` the whole ``forward``/``backward`` call is
also recorded (category ``api``)."""
from .. import profiler_core as _prof
from .first_run import stand_ins

_API_NAMES = {"fwd_train": "Executor.forward", "fwd_infer": "Executor.forward",
              "backward": "Executor.backward"}


def _calls(ex, which, steps):
    """The (kernel, args) pairs the executor's runner uses for ``steps``:
    its own list when it has one, else the steps' kernels with their stand-ins
    (``first_run.stand_ins``: what a first run would use)."""
    r = ex._runners.get(which)
    calls = getattr(r, "calls", None) if r is not None else None
    if calls is not None and len(calls) == len(steps):
        return calls
    calls = [(s.fn, s.args) for s in steps]
    if ex._device.device_type == "cpu":
        for i, call in stand_ins(steps):
            calls[i] = call
    return calls


def run(ex, which, steps):
    """Run pass ``which`` of executor ``ex`` (``steps``: its schedule),
    recording what the profiler's options ask for."""
    t_api = _prof.now_ns()
    monitored = getattr(ex._runners.get(which), "monitor", False)
    if _prof.symbolic and not monitored:
        sync = None
        if ex._device.device_type != "cpu":
            from numba import cuda
            sync = cuda.synchronize
        for s, (fn, args) in zip(steps, _calls(ex, which, steps)):
            t0 = _prof.now_ns()
            fn(*args)
            if sync is not None:
                sync()
            _prof.complete(s.node.op.name, _prof.CAT_OPERATOR, t0, _prof.now_ns(),
                           {"node": s.node.name, "pass": which})
    elif _prof.symbolic:
        # A monitor callback runs the steps itself: one event for the pass.
        _prof.timed(f"{_API_NAMES[which]} (monitored)", _prof.CAT_OPERATOR, ex._runner(which))
    else:
        ex._runner(which)()
    if _prof.api:
        _prof.complete(_API_NAMES[which], _prof.CAT_API, t_api, _prof.now_ns(),
                       {"symbol": ex._output_names[0] if ex._output_names else ""})
