"""First-call latency: each case in a fresh Python process, timed from the
process's start to the end of its first result (import included), with
``NUMBA_CACHE_DIR`` / ``NBDL_CACHE_DIR`` pointing at an empty directory
(``cold``) or at a directory the same case filled just before (``warm``);
Python's bytecode as installed (``_run_case``).
And bind time of very large graphs (kernels already compiled).

    env -u OPENBLAS_CORETYPE -u OPENBLAS_L2_SIZE NBDL_NUM_THREADS=1 \\
        pytest perf/test_cold_start.py --benchmark-only

Cold rounds compile everything and take up to a minute each, so they run one
round; the figures go to perf/README.md ("Cold start")."""
import os
import subprocess
import sys
import tempfile
import time

import numpy as np
import pytest

import nbdl

CASES = {
    "mlp_first_step": """
import numpy as np, nbdl
from nbdl import autograd, gluon, nd
net = gluon.nn.HybridSequential()
net.add(gluon.nn.Dense(64, activation="relu"), gluon.nn.Dense(10))
net.initialize(); net.hybridize()
tr = gluon.Trainer(net.collect_params(), "sgd", {"learning_rate": 0.1})
x = nd.array(np.random.rand(32, 64).astype(np.float32))
y = nd.array(np.random.randint(0, 10, 32).astype(np.float32))
with autograd.record():
    loss = gluon.loss.SoftmaxCrossEntropyLoss()(net(x), y)
loss.backward(); tr.step(32); loss.asnumpy()
""",
    "resnet18_first_train_step_32px_b8": """
import numpy as np, nbdl
from nbdl import autograd, gluon, nd
net = gluon.model_zoo.vision.get_model("resnet18_v1", classes=10)
net.initialize(); net.hybridize()
tr = gluon.Trainer(net.collect_params(), "sgd", {"learning_rate": 0.1})
x = nd.array(np.random.rand(8, 3, 32, 32).astype(np.float32))
y = nd.array(np.random.randint(0, 10, 8).astype(np.float32))
with autograd.record():
    loss = gluon.loss.SoftmaxCrossEntropyLoss()(net(x), y)
loss.backward(); tr.step(8); loss.asnumpy()
""",
    "resnet18_first_inference_224": """
import numpy as np, nbdl
net = nbdl.gluon.model_zoo.vision.get_model("resnet18_v1")
net.initialize(); net.hybridize()
net(nbdl.nd.array(np.random.rand(1, 3, 224, 224).astype(np.float32))).asnumpy()
""",
    "resnet50_first_inference_224": """
import numpy as np, nbdl
net = nbdl.gluon.model_zoo.vision.get_model("resnet50_v1")
net.initialize(); net.hybridize()
net(nbdl.nd.array(np.random.rand(1, 3, 224, 224).astype(np.float32))).asnumpy()
""",
}


def _run_case(code, cache):
    # "Cold" is the issue's: empty Numba and nbdl caches.  Python's bytecode
    # is what an installed package has (pip compiles it at install; a
    # checkout's modules are compiled by their first import and kept in their
    # __pycache__): an environment with PYTHONDONTWRITEBYTECODE, as some CI
    # images set, would compile ~200 modules from source in every process.
    # (Until 2026-12-07 the cold column also started from an empty bytecode
    # cache for every package, numpy's, scipy's and Numba's included: 1.4 s
    # of each cold figure that no installed machine pays.)
    env = {k: v for k, v in os.environ.items()
           if k not in ("PYTHONDONTWRITEBYTECODE", "PYTHONPYCACHEPREFIX")}
    env.update(NUMBA_CACHE_DIR=os.path.join(cache, "numba"),
               NBDL_CACHE_DIR=os.path.join(cache, "nbdl"), NBDL_QUIET="1",
               NBDL_DRIVER="auto", NBDL_PARALLEL_AFTER_RUNS="20")  # a user's defaults
    t0 = time.perf_counter()
    subprocess.run([sys.executable, "-c", code], env=env, check=True)
    return time.perf_counter() - t0


@pytest.mark.parametrize("case", list(CASES))
@pytest.mark.parametrize("cache", ["cold", "warm"])
def test_first_call(benchmark, case, cache, tmp_path):
    code = CASES[case]
    if cache == "warm":
        _run_case(code, str(tmp_path))           # fill the cache once
        benchmark.pedantic(_run_case, args=(code, str(tmp_path)), rounds=3, iterations=1)
    else:
        def fresh():
            return (code, tempfile.mkdtemp(dir=tmp_path)), {}
        benchmark.pedantic(_run_case, setup=fresh, rounds=1, iterations=1)


def _chain(n):
    y = nbdl.sym.var("data")
    for i in range(n):
        y = nbdl.sym.relu(y) if i % 2 else y * 1.0001
    return y


@pytest.mark.parametrize("grad_req", ["null", "write"])
def test_bind_chain_20000(benchmark, grad_req):
    sym = _chain(20000)
    sym.simple_bind(nbdl.cpu(), grad_req=grad_req, data=(4, 8)).forward()   # kernels compiled
    benchmark.pedantic(lambda: sym.simple_bind(nbdl.cpu(), grad_req=grad_req, data=(4, 8)),
                       rounds=3, iterations=1)


@pytest.mark.parametrize("n", [2000, 10000])
def test_bind_and_run_add_n(benchmark, n):
    xs = [nbdl.sym.var(f"x{i}") for i in range(n)]
    sym = nbdl.sym.add_n(*xs)
    args = {f"x{i}": nbdl.nd.array(np.full((4, 8), i, np.float32)) for i in range(n)}

    def bind_and_run():
        ex = sym.bind(nbdl.cpu(), args=args)
        ex.forward()
        return ex
    bind_and_run()                                                            # kernels compiled
    benchmark.pedantic(bind_and_run, rounds=3, iterations=1)
