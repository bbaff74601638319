"""The GPU's im2col + GEMM road for Convolution and Deconvolution
(nbdl/kernels/cuda/conv_gemm.py), chosen with NBDL_CUDA_CONV=gemm: the same
CPU-vs-CUDA cases as the direct kernels' (groups, strides, padding,
dilation, 1-D to 3-D, bias), the requests, and chunks of fewer images than
the batch (the weight gradient adding the chunks' products).  In the
simulator its GEMMs run on the tiled kernel; on a real GPU on cuBLAS."""
import numpy as np
import pytest

from nbdl.kernels.cuda import conv_gemm
from nbdl.testing import check_consistency

import test_convolution
from test_convolution import CUDA_CASES, conv, conv_inputs, deconv


@pytest.fixture(autouse=True)
def gemm_road(monkeypatch):
    """NBDL_CUDA_CONV=gemm, and every test must have gone down that road both ways."""
    monkeypatch.setenv("NBDL_CUDA_CONV", "gemm")
    used = set()
    for name in ("to_cols", "to_img", "weight_grad"):
        def counted(self, *args, _name=name, _orig=getattr(conv_gemm.Road, name)):
            used.add(_name)
            return _orig(self, *args)
        monkeypatch.setattr(conv_gemm.Road, name, counted)
    yield
    assert used == {"to_cols", "to_img", "weight_grad"}, used


@pytest.mark.cuda
@pytest.mark.parametrize("make,attrs,xs,ws,nb", CUDA_CASES)
def test_gemm_road_matches_cpu(make, attrs, xs, ws, nb, rng):
    check_consistency(make(**attrs), conv_inputs(rng, xs, ws, nb, np.float32),
                      rtol=1e-4, atol=1e-5)


@pytest.mark.cuda
def test_chunks_of_one_image(monkeypatch, rng):
    # scratch for one image only: three chunks, the weight gradient adds them
    monkeypatch.setattr(conv_gemm, "SCRATCH_BYTES", 1)
    check_consistency(conv(kernel=(3, 3), pad=(1, 1), num_filter=3, num_group=1),
                      conv_inputs(rng, (3, 2, 3, 3), (3, 2, 3, 3), 3, np.float32),
                      rtol=1e-4, atol=1e-5)
    check_consistency(deconv(kernel=(2, 2), stride=(2, 2), num_filter=2, num_group=2),
                      conv_inputs(rng, (3, 2, 2, 2), (2, 1, 2, 2), 2, np.float32),
                      rtol=1e-4, atol=1e-5)


@pytest.mark.cuda
@pytest.mark.parametrize("transposed", [False, True])
def test_requests(transposed, rng):
    test_convolution.test_req_null_and_add("gpu", transposed, rng)
