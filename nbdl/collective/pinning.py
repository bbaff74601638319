"""Thread pinning: N ranks on one machine share its cores instead of each
starting a thread per core (4 ranks on 4 cores with 4 Numba threads and 4
BLAS threads each would run 32 threads on 4 cores).

Each rank of a machine gets ``cores // ranks_on_this_machine`` of the cores
it may run on (its ``sched_getaffinity`` set), in rank order; Numba's
parallel kernels and BLAS are limited to that many threads.  With more
ranks than cores, each rank gets one core, shared round-robin."""
import os


def share(cores, local_rank, local_size):
    """The cores of ``cores`` (a sorted list) rank ``local_rank`` of
    ``local_size`` ranks on this machine runs on.

    Parameters
    ----------
    cores : list of int
        The cores the process may run on.
    local_rank : int
        This rank's index among the ranks of its machine.
    local_size : int
        How many ranks run on this machine.
    """
    if not cores:
        return []
    per = max(1, len(cores) // max(1, local_size))
    if local_size > len(cores):
        return [cores[local_rank % len(cores)]]
    return cores[local_rank * per:(local_rank + 1) * per]


def pin_threads(local_rank, local_size):
    """Pin this process to its share of the cores and limit Numba's and
    BLAS's threads to it; returns the cores (None where the platform has no
    affinity calls).  ``NBDL_NUM_THREADS`` is set for the kernels' thread
    rule (``kernels/cpu/_parallel``), which applies it in every thread.

    Parameters
    ----------
    local_rank : int
        This rank's index among the ranks of its machine.
    local_size : int
        How many ranks run on this machine.
    """
    if not hasattr(os, "sched_getaffinity"):
        return None
    cores = share(sorted(os.sched_getaffinity(0)), local_rank, local_size)
    if not cores:
        return None
    os.sched_setaffinity(0, cores)
    n = len(cores)
    os.environ["NBDL_NUM_THREADS"] = str(n)
    import numba
    numba.set_num_threads(min(n, numba.config.NUMBA_NUM_THREADS))
    from threadpoolctl import threadpool_limits
    threadpool_limits(limits=n)
    return cores
