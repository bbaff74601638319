"""The GPU's two GEMM roads (nbdl/kernels/cuda/matrix.py, _cublas.py) in the simulator.

- The tiled kernel runs the GPU's 16x16 tiles in the simulator too; these
  shapes take several tiles along every dimension (rows, columns and the
  reduced one, whose loop reuses the shared tiles after a barrier).
- The cuBLAS road (a real GPU with CuPy) cannot run here: its translation of
  the products (transposes, batches, ``beta`` for ``REQ_ADD``, bias) runs
  against a numpy stand-in for the three CuPy calls it makes, with CuPy's
  documented semantics.  On a real GPU (NBDL_TEST_CUDA=1) every op test
  runs real cuBLAS instead, and this stand-in is skipped.
"""
import numpy as np
import pytest
from numba import config as numba_config

import nbdl
from nbdl.device import gpu
from nbdl.errors import NbdlError, OptionalDependencyError
from nbdl.kernels.cuda import _cublas
from nbdl.kernels.cuda.matrix import TILE
from nbdl.testing import check_consistency

import test_matrix

sym = nbdl.sym
simulator_only = pytest.mark.skipif(not numba_config.ENABLE_CUDASIM,
                                    reason="the numpy stand-in works on the simulator's arrays")


@pytest.mark.cuda
def test_tiled_gemm_takes_several_tiles_along_every_dimension(monkeypatch, rng):
    monkeypatch.setenv("NBDL_CUDA_GEMM", "tiled")
    m, k, n = TILE + 3, 2 * TILE + 1, TILE + 2          # 2 x 2 blocks, 3 tiles of k
    fc = sym.FullyConnected(sym.var("x"), num_hidden=n, name="fc")
    check_consistency(fc, {"x": rng.normal(size=(m, k)).astype(np.float32),
                           "fc_weight": rng.normal(size=(n, k)).astype(np.float32),
                           "fc_bias": rng.normal(size=(n,)).astype(np.float32)},
                      rtol=1e-4, atol=1e-4)
    dot = sym.dot(sym.var("a"), sym.var("b"), transpose_a=True, transpose_b=True)
    check_consistency(dot, {"a": rng.normal(size=(k, m)), "b": rng.normal(size=(n, k))},
                      rtol=1e-10, atol=1e-10, grad=False)


class _StandInCupy:
    """numpy in place of ``cupy.asarray``, ``cupy.matmul(out=)`` and
    ``cupy.cublas.gemm`` (``out = alpha op(a) op(b) + beta out``; with
    ``beta == 0`` cuBLAS does not read ``out``), on the simulator's device
    arrays (which wrap numpy arrays: the views share memory)."""

    def __init__(self):
        self.calls = []
        self.cublas = self

    def asarray(self, a):
        return a._ary

    def matmul(self, a, b, out):
        self.calls.append("matmul")
        np.matmul(a, b, out=out)

    def gemm(self, transa, transb, a, b, out=None, alpha=1.0, beta=0.0):
        self.calls.append("gemm")
        prod = (a.T if transa == "T" else a) @ (b.T if transb == "T" else b)
        out[...] = alpha * prod + (beta * out if beta else 0)


@pytest.fixture
def standin(monkeypatch):
    cp = _StandInCupy()
    monkeypatch.setenv("NBDL_CUDA_GEMM", "cublas")
    monkeypatch.setattr(_cublas, "_module", [cp])
    return cp


@simulator_only
@pytest.mark.cuda
def test_cublas_road_forward_and_backward(standin, rng):
    test_matrix.test_fc_cuda_matches_cpu(rng)
    for ta in (False, True):
        for tb in (False, True):
            test_matrix.test_dot_cuda_matches_cpu(ta, tb, rng)
    assert "gemm" in standin.calls and "matmul" in standin.calls


@simulator_only
@pytest.mark.cuda
def test_cublas_road_accumulates_and_skips(standin, rng):
    test_matrix.test_forward_req_add(gpu(), rng)
    for no_bias in (False, True):
        test_matrix.test_fc_backward_req(gpu(), no_bias, rng)
    test_matrix.test_dot_backward_req(gpu(), "_backward_batch_dot", (2, 3, 4), (2, 4, 2), rng)
    assert standin.calls


@simulator_only
@pytest.mark.cuda
def test_cublas_road_leaves_empty_products_to_the_kernel(standin, rng):
    test_matrix.test_dot_cuda_vectors_and_empty(rng)      # k == 0: zeros, by the kernel


def test_gemm_setting(monkeypatch):
    monkeypatch.setenv("NBDL_CUDA_GEMM", "tiled")
    assert _cublas.cupy_for_gemm() is None
    monkeypatch.setenv("NBDL_CUDA_GEMM", "auto")
    if numba_config.ENABLE_CUDASIM:
        assert _cublas.cupy_for_gemm() is None              # the simulator runs the kernel
    monkeypatch.setenv("NBDL_CUDA_GEMM", "cublas")
    monkeypatch.setattr(_cublas, "_module", [ImportError("no module named 'cupy'")])
    with pytest.raises(OptionalDependencyError, match="NBDL_CUDA_GEMM=cublas.*cupy"):
        _cublas.cupy_for_gemm()
    monkeypatch.setenv("NBDL_CUDA_GEMM", "fast")
    with pytest.raises(NbdlError, match="NBDL_CUDA_GEMM='fast'"):
        _cublas.cupy_for_gemm()
