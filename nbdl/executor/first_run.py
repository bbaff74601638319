"""What a bound graph's first runs call in place of kernels not compiled
yet (``Executor``'s runners, the compile pool's list, the profiler's loop)."""
from .. import compile_log, config
from ..ops.registry import serial_twin


def stand_ins(steps):
    """``[(index, (kernel, arguments))]``: what a run makes instead of the
    steps' kernels that are neither compiled for their arguments nor in the
    on-disk cache (none when ``NBDL_PARALLEL_AFTER_RUNS=0``): a parallel
    kernel's serial twin (``declare_serial_twin``), or the step's fallback
    (``Launch.fallback``; itself through its serial twin when that is not
    compiled either).

    Parameters
    ----------
    steps : list of Prepared
        A schedule's steps (``nbdl.executor.schedule``).
    """
    if config.parallel_after_runs() == 0:
        return []
    out = []
    for i, s in enumerate(steps):
        fb = s.fallback
        if fb is None and serial_twin(s.fn) is None:
            continue
        if compile_log.compiled_or_cached(s.fn, s.args):
            continue
        if fb is None:
            out.append((i, (serial_twin(s.fn), s.args)))
            continue
        fn = fb.fn
        if serial_twin(fn) is not None and not compile_log.compiled_or_cached(fn, fb.args):
            fn = serial_twin(fn)
        out.append((i, (fn, fb.args)))
    return out
