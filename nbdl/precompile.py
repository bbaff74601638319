"""Fill the kernel cache ahead of time: ``python -m nbdl.precompile``.

Numba compiles each kernel the first time it meets new argument types and
keeps the machine code in its on-disk cache (``NUMBA_CACHE_DIR``); a fresh
machine, container image or CI job therefore pays for compilation on its
first runs.  This command runs the float32 workloads the model zoo and the
Gluon layers use once each (forward and backward, eager and hybridized,
with a Trainer step), so that an image built with it, or a CI job that keeps
the cache between runs, pays once.

Usage::

    python -m nbdl.precompile [--jobs N] [--list] [WORKLOAD ...]

``WORKLOAD`` names (default: all) are listed by ``--list``; ``--jobs`` runs
that many workloads at once in worker processes (default: the number of
CPUs), which share the cache directory.  Kernels depend on the CPU they were
compiled for: a cache filled on one machine is only reused on a machine whose
CPU model and features match (Numba checks both)."""
import argparse
import multiprocessing
import os
import sys
import time

import numpy as np


def _train_step(net, x, y, optimizer="sgd", **opt_args):
    """One recorded forward, backward and Trainer step of an initialized ``net``."""
    from . import autograd, gluon
    trainer = gluon.Trainer(net.collect_params(), optimizer, {"learning_rate": 0.01, **opt_args})
    with autograd.record():
        loss = gluon.loss.SoftmaxCrossEntropyLoss()(net(x), y)
    loss.backward()
    trainer.step(x.shape[0])
    loss.asnumpy()


def _batch(shape, classes=10):
    from . import nd
    return (nd.array(np.random.rand(*shape).astype(np.float32)),
            nd.array(np.random.randint(0, classes, shape[0]).astype(np.float32)))


def _mlp():
    from . import gluon
    x, y = _batch((32, 64))
    for hybridize in (True, False):
        for opt in ("sgd", "adam"):
            net = gluon.nn.HybridSequential()
            net.add(gluon.nn.Dense(64, activation="relu"), gluon.nn.Dropout(0.1),
                    gluon.nn.Dense(64, activation="tanh"), gluon.nn.Dense(10))
            net.initialize()
            if hybridize:
                net.hybridize()
            _train_step(net, x, y, opt)


def _zoo(name, train_size, infer_size):
    def run():
        from . import autograd
        from .gluon.model_zoo import vision
        net = vision.get_model(name, classes=10)
        net.initialize()
        net.hybridize()
        with autograd.predict_mode():
            net(_batch(infer_size)[0]).asnumpy()
        if train_size is not None:
            _train_step(net, *_batch(train_size), momentum=0.9)
    return run


def _rnn():
    from . import autograd, gluon, nd
    x = nd.array(np.random.rand(35, 8, 32).astype(np.float32))
    for layer in (gluon.rnn.LSTM(64, num_layers=2), gluon.rnn.GRU(64),
                  gluon.rnn.RNN(64, activation="tanh")):
        layer.initialize()
        for hybridize in (False, True):
            if hybridize:
                layer.hybridize()
            x.attach_grad()
            with autograd.record():
                out = layer(x)
            out.backward()
            out.asnumpy()


WORKLOADS = {
    "mlp": _mlp,
    "resnet18_v1": _zoo("resnet18_v1", (8, 3, 32, 32), (1, 3, 224, 224)),
    "resnet50_v1": _zoo("resnet50_v1", None, (1, 3, 224, 224)),
    "resnet18_v2": _zoo("resnet18_v2", (8, 3, 32, 32), (1, 3, 224, 224)),
    "mobilenet1.0": _zoo("mobilenet1.0", (8, 3, 32, 32), (1, 3, 224, 224)),
    "mobilenetv2_1.0": _zoo("mobilenetv2_1.0", None, (1, 3, 224, 224)),
    "vgg11_bn": _zoo("vgg11_bn", None, (1, 3, 224, 224)),
    "squeezenet1.1": _zoo("squeezenet1.1", None, (1, 3, 224, 224)),
    "densenet121": _zoo("densenet121", None, (1, 3, 224, 224)),
    "rnn": _rnn,
}


def _run_one(name):
    os.environ.setdefault("NBDL_QUIET", "1")
    t0 = time.perf_counter()
    WORKLOADS[name]()
    return name, time.perf_counter() - t0


def main(argv=None):
    """Command-line entry point.

    Parameters
    ----------
    argv : list of str, optional
        Arguments (default: ``sys.argv[1:]``): workload names, ``--jobs N``,
        ``--list``.
    """
    p = argparse.ArgumentParser(prog="python -m nbdl.precompile", description=__doc__.split("\n")[0])
    p.add_argument("workloads", nargs="*", help="workloads to run (default: all)")
    p.add_argument("--jobs", type=int, default=os.cpu_count() or 1,
                   help="worker processes (default: number of CPUs)")
    p.add_argument("--list", action="store_true", help="list the workloads and exit")
    a = p.parse_args(argv)
    if a.list:
        print("\n".join(WORKLOADS))
        return 0
    names = a.workloads or list(WORKLOADS)
    unknown = [n for n in names if n not in WORKLOADS]
    if unknown:
        p.error(f"unknown workload(s) {', '.join(unknown)}; known: {', '.join(WORKLOADS)}")
    from numba import config as numba_config
    print(f"nbdl.precompile: {len(names)} workloads, {a.jobs} at once, cache "
          f"{numba_config.CACHE_DIR or '(next to the sources)'}", flush=True)
    t0 = time.perf_counter()
    if a.jobs <= 1 or len(names) == 1:
        results = map(_run_one, names)
    else:
        ctx = multiprocessing.get_context("spawn")
        pool = ctx.Pool(min(a.jobs, len(names)), maxtasksperchild=1)
        results = pool.imap_unordered(_run_one, names)
    for name, dt in results:
        print(f"  {name:<16} {dt:6.1f} s", flush=True)
    print(f"nbdl.precompile: done in {time.perf_counter() - t0:.1f} s")
    return 0


if __name__ == "__main__":
    sys.exit(main())
