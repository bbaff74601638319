"""MXNet 1.x's ``mxnet.runtime``: which features this build has.

``Features()`` maps MXNet's feature names to ``Feature`` objects whose
``enabled`` says whether nbdl has the capability here: ``CUDA`` when
``numba.cuda`` finds a GPU, the ``CPU_*`` / ``F16C`` instruction sets from
the host CPU as LLVM reports it, ``INT64_TENSOR_SIZE`` always (nbdl's
kernels index with 64-bit integers), ``PROFILER`` when ``nbdl.profiler``
exists.  The libraries nbdl does not build against (cuDNN, NCCL, TensorRT,
MKL-DNN, OpenCV, OpenMP, the BLAS flavours, TVM, the distributed kvstore,
...) are listed as disabled, so ``is_enabled`` answers for every name 1.x
code asks about.
"""
import collections
import importlib.util

from .errors import ArgumentError

# MXNet 1.9.1's feature names, in its order.
_NAMES = ("CUDA", "CUDNN", "NCCL", "CUDA_RTC", "TENSORRT", "CPU_SSE", "CPU_SSE2", "CPU_SSE3",
          "CPU_SSE4_1", "CPU_SSE4_2", "CPU_SSE4A", "CPU_AVX", "CPU_AVX2", "OPENMP", "SSE",
          "F16C", "JEMALLOC", "BLAS_OPEN", "BLAS_ATLAS", "BLAS_MKL", "BLAS_APPLE", "LAPACK",
          "MKLDNN", "OPENCV", "CAFFE", "PROFILER", "DIST_KVSTORE", "CXX14", "INT64_TENSOR_SIZE",
          "SIGNAL_HANDLER", "DEBUG", "TVM_OP")

# MXNet feature -> LLVM host CPU feature
_CPU_FLAGS = {"CPU_SSE": "sse", "CPU_SSE2": "sse2", "CPU_SSE3": "sse3", "CPU_SSE4_1": "sse4.1",
              "CPU_SSE4_2": "sse4.2", "CPU_SSE4A": "sse4a", "CPU_AVX": "avx", "CPU_AVX2": "avx2",
              "SSE": "sse", "F16C": "f16c"}


class Feature:
    """One feature: ``name`` and whether it is ``enabled``.

    Parameters
    ----------
    name : str
    enabled : bool
    """

    __slots__ = ("name", "enabled")

    def __init__(self, name, enabled):
        self.name = name
        self.enabled = bool(enabled)

    def __repr__(self):
        return f"{'✔' if self.enabled else '✖'} {self.name}"


def _cpu_flags():
    try:
        import llvmlite.binding as llvm
        return {f[1:] for f in llvm.get_host_cpu_features().flatten().split(",") if f.startswith("+")}
    except Exception:   # an llvmlite without the query: report no instruction sets
        return set()


def _has_cuda():
    try:
        from numba import cuda
        return bool(cuda.is_available())
    except Exception:
        return False


def feature_list():
    """Every feature, in MXNet's order.

    Returns
    -------
    list of Feature
    """
    flags = _cpu_flags()
    on = {"CUDA": _has_cuda(), "INT64_TENSOR_SIZE": True,
          "PROFILER": importlib.util.find_spec("nbdl.profiler") is not None}
    on.update({k: v in flags for k, v in _CPU_FLAGS.items()})
    return [Feature(n, on.get(n, False)) for n in _NAMES]


class Features(collections.OrderedDict):
    """Feature name -> ``Feature`` (one shared instance, as in MXNet)."""

    instance = None

    def __new__(cls):
        if cls.instance is None:
            cls.instance = super().__new__(cls)
            super(Features, cls.instance).__init__([(f.name, f) for f in feature_list()])
        return cls.instance

    def __init__(self):   # filled once, in __new__
        pass

    def __repr__(self):
        return str(list(self.values()))

    def is_enabled(self, feature_name):
        """Whether the feature is enabled.

        Parameters
        ----------
        feature_name : str
            A feature name such as ``'CUDA'`` (case-insensitive).

        Returns
        -------
        bool
        """
        name = str(feature_name).upper()
        if name not in self:
            raise ArgumentError(f"Features.is_enabled: feature {feature_name!r} is unknown; "
                                f"known features are {list(self)}")
        return self[name].enabled


__all__ = ["Feature", "Features", "feature_list"]
