"""Every environment knob nbdl reads, read in one place.

Values are read when asked for (not at import), so tests can set them with
``monkeypatch.setenv``.
"""
import os


def apply_thread_defaults():
    """Called first thing by ``import nbdl``: starts Numba's threading layer
    with nbdl's OpenMP wait policy, without leaving it in ``os.environ``.

    Numba's OpenMP threads (GNU libgomp) spin after each parallel region by
    default, and between two parallel kernels BLAS's own threads need those
    cores: on 2 cores ResNet-50 inference at batch 1 took 292 ms with
    spinning threads and 74 ms with a passive wait.  A wait that sleeps at
    once costs a parallel region ~40 us to wake the threads (1.6 us when
    they spin): ``NBDL_OMP_SPINCOUNT`` lets the passive threads spin that
    many iterations first (libgomp's ``GOMP_SPINCOUNT``): 10000 by default
    when nbdl runs one thread pool (``thread_pool``: BLAS's threads are then
    never waiting for the cores the spinning threads hold), none under
    ``NBDL_THREAD_POOL=blas`` (there the fused LSTM/GRU training steps ran
    1.7-1.8x slower with the spin: their BLAS threads waited for the
    cores); ``0`` or empty: no spin.  libgomp reads ``OMP_WAIT_POLICY`` and
    ``GOMP_SPINCOUNT`` once, when it is loaded, so the variables are set
    only while Numba loads its threading layer and are removed again:
    processes the user starts (MXNet or PyTorch runs side by side,
    DataLoader workers) inherit the user's environment, not nbdl's choice.
    ``NBDL_OMP_WAIT_POLICY`` (``PASSIVE`` by default; ``ACTIVE``; empty:
    libgomp's default) picks the policy; an ``OMP_WAIT_POLICY`` the user
    set wins and is left as it is, and so does a ``GOMP_SPINCOUNT``.  The
    threading layer is then started at import (about 5 ms); a libgomp that
    another library loaded earlier keeps the policy it started with."""
    policy = os.environ.get("NBDL_OMP_WAIT_POLICY", "PASSIVE").strip().upper()
    if "OMP_WAIT_POLICY" in os.environ or not policy:
        return
    applied = {"OMP_WAIT_POLICY": policy}
    spin = os.environ.get("NBDL_OMP_SPINCOUNT",
                          "10000" if thread_pool() == "numba" else "").strip()
    if policy == "PASSIVE" and spin not in ("", "0") and "GOMP_SPINCOUNT" not in os.environ:
        applied["GOMP_SPINCOUNT"] = spin
    os.environ.update(applied)
    try:
        from numba.np.ufunc import parallel
        parallel._launch_threads()
    except Exception:   # no threading layer: Numba says so at the first parallel kernel
        pass
    finally:
        for k in applied:
            del os.environ[k]


def exit_collect():
    """``NBDL_EXIT_COLLECT=1``: keep the interpreter's cyclic collections at
    exit (``nbdl.shutdown``); by default nbdl skips them."""
    return _flag("NBDL_EXIT_COLLECT", False)


def _flag(name, default):
    v = os.environ.get(name)
    if v is None or v == "":
        return default
    return v.strip().lower() not in ("0", "false", "no", "off")


def graph_passes():
    """``NBDL_GRAPH_PASSES``: a graph bound without gradients is rewritten for
    inference (convolution + BatchNorm + residual add + ReLU fused, Dropout
    dropped: ``nbdl.graph.fuse``); ``0`` binds the graph as written."""
    return _flag("NBDL_GRAPH_PASSES", True)


def planner_mode():
    """``NBDL_PLANNER``: ``greedy`` (default) packs entries into one arena;
    ``naive`` gives every entry its own region (no sharing, no inplace)."""
    mode = os.environ.get("NBDL_PLANNER", "greedy").strip().lower() or "greedy"
    if mode not in ("greedy", "naive"):
        from .errors import NbdlError
        raise NbdlError(f"NBDL_PLANNER={mode!r}: expected 'greedy' or 'naive'")
    return mode


def cache_dir():
    """``NBDL_CACHE_DIR``: where generated executor drivers are written so that
    Numba's on-disk cache can reuse their compiled code across processes."""
    d = os.environ.get("NBDL_CACHE_DIR") or os.path.join(
        os.path.expanduser("~"), ".cache", "nbdl")
    return d


def num_threads():
    """``NBDL_NUM_THREADS``: threads for parallel kernels (0 = Numba's default)."""
    try:
        return int(os.environ.get("NBDL_NUM_THREADS", "0"))
    except ValueError:
        return 0


def driver_mode():
    """``NBDL_DRIVER``: whether a static executor schedule runs through one
    generated native ``@njit`` driver.

    - ``auto`` (default): the schedule runs from a Python loop; a driver whose
      compiled code is already in the cache is used from the first run, and
      otherwise one is compiled in a background thread once the schedule has
      run ``NBDL_DRIVER_AFTER_RUNS`` times (compiling a driver takes seconds
      and saves about 1 us a kernel, so it never delays a first call).
    - ``1`` / ``on``: compile the driver before the first run.
    - ``0`` / ``off``: always the Python loop."""
    v = (os.environ.get("NBDL_DRIVER") or "auto").strip().lower()
    if v in ("auto", ""):
        return "auto"
    return "now" if v not in ("0", "false", "no", "off") else "off"


def driver_after_runs():
    """``NBDL_DRIVER_AFTER_RUNS``: runs of a schedule from Python after which
    ``NBDL_DRIVER=auto`` compiles its driver in the background (default 200)."""
    try:
        return int(os.environ.get("NBDL_DRIVER_AFTER_RUNS", "200"))
    except ValueError:
        return 200


def parallel_after_runs():
    """``NBDL_PARALLEL_AFTER_RUNS``: a bound schedule whose ``parallel=True``
    kernels are neither compiled nor in the on-disk cache runs their serial
    twins (same arguments, same results) for its first runs; after this many
    runs (default 20) the parallel kernels are compiled in a background thread
    and swapped in, so a short script never compiles them and a long run pays
    for them once, beside its work.  ``0``: compile them before the first run."""
    try:
        return max(0, int(os.environ.get("NBDL_PARALLEL_AFTER_RUNS", "20")))
    except ValueError:
        return 20


def quiet():
    """``NBDL_QUIET=1``: no progress lines for long compilations (the
    ``nbdl.compile`` logger's level does the same)."""
    return _flag("NBDL_QUIET", False)


def driver_min_steps():
    """``NBDL_DRIVER_MIN_STEPS``: schedules shorter than this run from Python;
    compiling a driver costs about a second and pays off only when reused."""
    try:
        return int(os.environ.get("NBDL_DRIVER_MIN_STEPS", "8"))
    except ValueError:
        return 8


def driver_max_steps():
    """``NBDL_DRIVER_MAX_STEPS``: longer schedules run from Python (a driver's
    compile time grows with its length)."""
    try:
        return int(os.environ.get("NBDL_DRIVER_MAX_STEPS", "512"))
    except ValueError:
        return 512


def driver_max_bytes_per_step():
    """``NBDL_DRIVER_MAX_BYTES_PER_STEP``: a driver is compiled only when the
    schedule's kernels touch on average at most this many bytes each, i.e.
    when dispatch, not the kernels, is the cost."""
    try:
        return int(os.environ.get("NBDL_DRIVER_MAX_BYTES_PER_STEP", str(256 << 10)))
    except ValueError:
        return 256 << 10


def parallel_threshold():
    """``NBDL_PARALLEL_MIN``: element count from which the ``parallel=True``
    variant of a kernel is chosen at bind time (each parallel call costs
    1.5-3 us, so small arrays run serially)."""
    try:
        return int(os.environ.get("NBDL_PARALLEL_MIN", str(1 << 17)))
    except ValueError:
        return 1 << 17


def test_engine():
    """``NBDL_TEST_ENGINE``: what ``nbdl.testing``'s check functions run on:
    ``executor`` (default: bind, plan, run) or ``interpreter`` (the reference
    interpreter, no planning)."""
    v = os.environ.get("NBDL_TEST_ENGINE", "executor").strip().lower() or "executor"
    if v not in ("executor", "interpreter"):
        from .errors import NbdlError
        raise NbdlError(f"NBDL_TEST_ENGINE={v!r}: expected 'executor' or 'interpreter'")
    return v


def conv_parallel_min_flops():
    """``NBDL_CONV_PARALLEL_MIN_FLOPS``: convolutions with at least this many
    FLOPs (and enough images) run a prange over the batch with BLAS held to
    one thread; smaller ones run serially with BLAS's own threads."""
    try:
        return int(os.environ.get("NBDL_CONV_PARALLEL_MIN_FLOPS", str(1 << 22)))
    except ValueError:
        return 1 << 22


def conv_winograd():
    """``NBDL_CONV_WINOGRAD``: 3x3 stride-1 "same" convolutions of 32-256
    channels in graphs bound for inference (Gluon's hybridized predictions,
    executors without gradients) run Winograd F(4x4, 3x3) or F(2x2, 3x3)
    on the CPU (``nbdl.kernels.cpu.conv_winograd``; the rule is
    ``conv_plan.winograd_plan``); ``0`` keeps im2col + GEMM for every
    convolution.  Its results differ from im2col's by rounding (~1e-6 of a
    layer's largest output in float32; F(4x4)'s up to ~5e-6)."""
    return _flag("NBDL_CONV_WINOGRAD", True)


def conv_block_cols():
    """``NBDL_CONV_BLOCK_COLS``: the CPU convolution kernels put this many
    output positions (columns) of several images side by side in one GEMM
    when one image has fewer (small images: an 8x8 output is 64 columns)."""
    try:
        return int(os.environ.get("NBDL_CONV_BLOCK_COLS", "512"))
    except ValueError:
        return 512


def conv_chunk_min_cols():
    """``NBDL_CONV_CHUNK_MIN_COLS``: the CPU convolution kernels split the batch
    over threads (each thread its own images, one synchronisation) when every
    thread gets at least this many output positions (columns); below it they
    split each GEMM's rows over the threads (a synchronisation per step)."""
    try:
        return int(os.environ.get("NBDL_CONV_CHUNK_MIN_COLS", "512"))
    except ValueError:
        return 512


def conv_block_bytes():
    """``NBDL_CONV_BLOCK_BYTES``: at most this many bytes of im2col columns per
    thread when several images share a block (one image alone may exceed it)."""
    try:
        return int(os.environ.get("NBDL_CONV_BLOCK_BYTES", str(8 << 20)))
    except ValueError:
        return 8 << 20


def thread_pool():
    """``NBDL_THREAD_POOL``: ``numba`` (default) runs every kernel's work on
    Numba's threads, matrix products large enough for threads split over
    them with BLAS held to one thread (``kernels.cpu.matrix``'s split
    kernels, the fused RNN's input and weight products), so two pools never
    compete for the cores; ``blas`` leaves products above
    ``NBDL_BLAS_SERIAL_MAX_FLOPS`` to BLAS's own threads (and Numba's
    threads do not spin, ``apply_thread_defaults``).  A BLAS whose threads
    nbdl cannot hold (not OpenBLAS or BLIS) runs as under ``blas``."""
    v = os.environ.get("NBDL_THREAD_POOL", "numba").strip().lower()
    return v if v in ("numba", "blas") else "numba"


def blas_serial_max_flops():
    """``NBDL_BLAS_SERIAL_MAX_FLOPS``: matrix products below this many FLOPs
    run with BLAS held to one thread (threads cost more than they save there,
    and on a busy machine a sleeping BLAS thread can stall a small GEMM for
    milliseconds: LeNet's 12-MFLOP FullyConnected products on BLAS's threads
    took its training step from 18 ms to 50-70 ms on 2 shared cores)."""
    try:
        return int(os.environ.get("NBDL_BLAS_SERIAL_MAX_FLOPS", str(1 << 25)))
    except ValueError:
        return 1 << 25


def dist_timeout():
    """``NBDL_DIST_TIMEOUT``: seconds a rank waits for one collective (an
    allreduce, a barrier, a broadcast) before it gives up and aborts the
    whole job (a rank that died or raised would otherwise leave the others
    waiting for ever).  Default 600: the first step of a model may spend
    minutes compiling kernels on one rank while another waits."""
    try:
        return max(0.1, float(os.environ.get("NBDL_DIST_TIMEOUT", "600")))
    except ValueError:
        return 600.0


def dist_bucket_bytes():
    """``NBDL_DIST_BUCKET_MB``: the size of a gradient bucket (one allreduce
    over contiguous memory) in MiB, default 1; the Trainer's
    ``bucket_size_mb`` argument overrides it."""
    try:
        return int(float(os.environ.get("NBDL_DIST_BUCKET_MB", "1")) * (1 << 20))
    except ValueError:
        return 1 << 20


def dist_pin_threads():
    """``NBDL_DIST_PIN``: whether ``nbdl.collective.init`` pins each rank to
    its share of the machine's cores (default on; ``0`` leaves threads and
    affinity alone)."""
    return _flag("NBDL_DIST_PIN", True)


def dist_overlap():
    """``NBDL_DIST_OVERLAP``: whether a gradient bucket's allreduce starts as
    soon as backward has written its gradients (default on); ``0`` starts
    them all at ``Trainer.step`` (what perf/distributed_bench.py compares)."""
    return _flag("NBDL_DIST_OVERLAP", True)


_BYTE_UNITS = {"": 1, "B": 1, "K": 1 << 10, "KB": 1 << 10, "KIB": 1 << 10, "M": 1 << 20,
               "MB": 1 << 20, "MIB": 1 << 20, "G": 1 << 30, "GB": 1 << 30, "GIB": 1 << 30,
               "T": 1 << 40, "TB": 1 << 40, "TIB": 1 << 40}


def parse_bytes(value, what="memory_budget"):
    """A byte count from an int, a float or a string such as ``'1.5GB'``,
    ``'1200MB'``, ``'512 MiB'`` or ``'3000000'``.  K, M, G and T (with or
    without ``B``, or as ``KiB``...) are powers of 1024, as the MB of nbdl's
    memory tables (``debug_str``).  None stays None.

    Parameters
    ----------
    value : int, float, str or None
        The amount.
    what : str
        What it is, for the error message.
    """
    from .errors import ArgumentError
    if value is None:
        return None
    if isinstance(value, bool):
        raise ArgumentError(f"{what}={value!r}: expected a number of bytes or a string such "
                            f"as '1.5GB'")
    given = value
    if isinstance(value, str):
        text = value.strip().upper().replace(",", "").replace("_", "")
        num = text.rstrip("KMGTIB ")
        unit = text[len(num):].strip()
        if unit not in _BYTE_UNITS or not num:
            raise ArgumentError(f"{what}={value!r}: expected a number of bytes or a number with "
                                f"a unit (B, KB, MB, GB, TB; KiB...), such as '1.5GB'")
        try:
            amount = float(num)
        except ValueError:
            raise ArgumentError(f"{what}={value!r}: {num!r} is not a number") from None
        value = amount * _BYTE_UNITS[unit]
    try:
        n = int(value)
    except (TypeError, ValueError, OverflowError):
        raise ArgumentError(f"{what}={value!r}: expected a number of bytes or a string such "
                            f"as '1.5GB'") from None
    if n <= 0:
        raise ArgumentError(f"{what}={given!r}: a memory budget must be a positive number of "
                            f"bytes")
    return n


def memory_budget():
    """``NBDL_MEMORY_BUDGET``: the default memory budget of ``bind``,
    ``simple_bind`` and ``HybridBlock.hybridize`` (bytes, or a string such as
    ``1.5GB``); unset or empty: none.  A budgeted executor's arena stays
    within it: the planner drops forward entries and recomputes them in
    backward (docs/memory-budget.md)."""
    v = os.environ.get("NBDL_MEMORY_BUDGET", "").strip()
    return parse_bytes(v, "NBDL_MEMORY_BUDGET") if v else None


def compile_plan_file():
    """``NBDL_COMPILE_PLAN``: the compile plan the compile pool hands its
    workers from (``nbdl.executor.compile_plan``: recorded kernel callees
    and followers).  Unset (None here): the package's ``compile_plan.json``;
    empty (``""``): none, workers get whole kernels only; else a file."""
    v = os.environ.get("NBDL_COMPILE_PLAN")
    return None if v is None else v.strip()


def compile_workers():
    """``NBDL_COMPILE_WORKERS``: worker processes that compile a graph's
    kernels beside its first run (``nbdl.executor.compile_pool``): ``auto``
    (default, None here: one per idle core beyond the first, at most 4), or a
    number (``0``: none)."""
    v = (os.environ.get("NBDL_COMPILE_WORKERS") or "auto").strip().lower()
    if v == "auto":
        return None
    try:
        return max(0, int(v))
    except ValueError:
        return None


def llvm_lsr():
    """``NBDL_LLVM_LSR``: ``1`` keeps LLVM's loop strength reduction in this
    process; unset or ``0`` (default): ``nbdl.kernels.shared.jit`` turns it
    off when it loads.  That pass was a third of the machine-code generation
    of nbdl's kernels (ResNet-18's first training step: 5.0-5.5 -> 4.4-4.6 s
    of LLVM time) and its loss is not measurable in their run time (issue
    14's rows within 3%); it is an LLVM setting of the process, so Numba
    code of your own compiled in it goes without it too."""
    return _flag("NBDL_LLVM_LSR", False)


def cuda_gemm():
    """``NBDL_CUDA_GEMM``: what runs the GPU's matrix products (FullyConnected,
    dot, batch_dot): ``auto`` (default) cuBLAS through CuPy when CuPy imports
    and a real GPU runs, else nbdl's tiled ``cuda.jit`` kernel; ``cublas``
    insists on cuBLAS (an error without CuPy); ``tiled`` always the kernel."""
    v = os.environ.get("NBDL_CUDA_GEMM", "auto").strip().lower() or "auto"
    if v not in ("auto", "cublas", "tiled"):
        from .errors import NbdlError
        raise NbdlError(f"NBDL_CUDA_GEMM={v!r}: expected 'auto', 'cublas' or 'tiled'")
    return v


def cuda_conv():
    """``NBDL_CUDA_CONV``: how the GPU runs Convolution and Deconvolution:
    ``auto`` (default) im2col + GEMM where the GEMMs go to cuBLAS and each
    group's product is not tiny (depthwise convolutions stay direct), else
    the direct kernels; ``gemm`` or ``direct`` always that road."""
    v = os.environ.get("NBDL_CUDA_CONV", "auto").strip().lower() or "auto"
    if v not in ("auto", "gemm", "direct"):
        from .errors import NbdlError
        raise NbdlError(f"NBDL_CUDA_CONV={v!r}: expected 'auto', 'gemm' or 'direct'")
    return v
