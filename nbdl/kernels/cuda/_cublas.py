"""cuBLAS, through CuPy, for the GPU's matrix products.

nbdl's own ``cuda.jit`` GEMM (``matrix.py``: 16x16 shared-memory tiles, one
output per thread) is simple and right, but a tiled kernel of that kind runs
at a few percent of a Hopper GPU's float32 rate, where cuBLAS runs near it;
the GPU images nbdl targets carry CuPy (and its cuBLAS), so on a real GPU
the products go there (``NBDL_CUDA_GEMM``, ``nbdl.config.cuda_gemm``;
docs/gpu.md says what a GPU run measures to confirm the choice).  The tiled
kernel stays for float16, for machines without CuPy and for the simulator.

CuPy takes numba's device arrays without a copy (``__cuda_array_interface__``;
arrays on the default stream carry no stream, so no synchronisation) and
both launch on the legacy default stream, so a product is ordered with the
kernels around it as any kernel is.  cuBLAS keeps its float32 arithmetic
(CuPy uses TF32 only when ``CUPY_TF32=1``).
"""
from numba import config as numba_config

from ... import config
from ...errors import OptionalDependencyError
from ...ops.registry import REQ_ADD

_module = [None]          # CuPy once imported; the ImportError once its import failed


def cupy_for_gemm():
    """The CuPy module when matrix products go to cuBLAS, else None
    (``NBDL_CUDA_GEMM``: ``auto`` wants a real GPU and an importable CuPy,
    ``cublas`` insists on CuPy, ``tiled`` never uses it)."""
    mode = config.cuda_gemm()
    if mode == "tiled" or (mode == "auto" and numba_config.ENABLE_CUDASIM):
        return None
    if _module[0] is None:
        try:
            import cupy
            _module[0] = cupy
        except ImportError as e:
            _module[0] = e
    if isinstance(_module[0], ImportError):
        if mode == "cublas":
            raise OptionalDependencyError(
                "NBDL_CUDA_GEMM=cublas: CuPy is not importable (install the cupy-cuda12x or "
                f"cupy-cuda13x wheel that matches the CUDA driver): {_module[0]}")
        return None
    return _module[0]


def gemm(cp, a, b, out, bias, ta, tb, has_bias, req):
    """``out[z] = op(a[z]) . op(b[z]) (+ bias)``, or ``+=`` under ``REQ_ADD``,
    for the batched (B, rows, cols) device arrays of ``matrix.py``'s kernel
    (``op`` transposes when ``ta``/``tb``), through CuPy's cuBLAS.

    Parameters
    ----------
    cp : module
        CuPy (``cupy_for_gemm()``).
    a, b, out : device arrays
        ``(B, M, K)`` or ``(B, K, M)`` when ``ta``; ``(B, K, N)`` or
        ``(B, N, K)`` when ``tb``; ``(B, M, N)``.
    bias : device array or None
        ``(N,)``, added to every row when ``has_bias``.
    ta, tb, has_bias : int
        Flags.
    req : int
        ``REQ_ADD`` accumulates into ``out``; other write requests overwrite.
    """
    A, B, C = cp.asarray(a), cp.asarray(b), cp.asarray(out)
    if req == REQ_ADD or C.shape[0] == 1:
        # cuBLAS's beta accumulates in place; a batch of one is one gemm
        opa, opb = ("T" if ta else "N"), ("T" if tb else "N")
        beta = 1.0 if req == REQ_ADD else 0.0
        for z in range(C.shape[0]):
            cp.cublas.gemm(opa, opb, A[z], B[z], out=C[z], beta=beta)
    else:
        # one strided-batched product for the whole batch
        cp.matmul(A.transpose(0, 2, 1) if ta else A, B.transpose(0, 2, 1) if tb else B, out=C)
    if has_bias:
        C += cp.asarray(bias)
