"""Where a network's convolutions lose, layer shape by layer shape: one
``Convolution`` bound alone (``simple_bind``, gradients written), its forward
and its backward timed in nbdl and in Apache MXNet 1.9.1, side by side, with
the plain GEMM an im2col convolution of that shape costs (numpy's BLAS, same
threads) as the yardstick::

    env -u OPENBLAS_CORETYPE -u OPENBLAS_L2_SIZE PYTHONPATH=<checkout> \\
        python perf/compare/conv_layers.py [--net resnet18_32] [--batch 32] [--threads 2]

Each runtime runs in a process of its own, MXNet with the environment the
user had before nbdl was imported (``side_by_side.CLEAN_ENV``), one after
the other: the machine should be quiet.  Times are medians of ``--reps``
calls after a warm-up long enough for nbdl's parallel kernels to be
compiled.  A layer run alone pays its runtime's per-call overhead (tens of
microseconds), which a whole network's executor also pays per op.

Parameters (command line)
-------------------------
--net : the layer list (``NETS``): ``resnet18_32`` (ResNet-18 v1 on 32x32
    images, one of each distinct convolution), ``resnet18_224``, ``resnet50_224``,
    ``squeezenet11_224`` (one of each kind of layer: squeeze, 1x1 and 3x3
    expand, at each image size).
--batch : images a call.
--threads : threads for each runtime (nbdl's NBDL_NUM_THREADS, MXNet's and
    numpy's OMP/OpenBLAS threads).
--reps : timed calls a layer and direction.
"""
import argparse
import json
import os
import subprocess
import sys
import time

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from _timing import median_time  # noqa: E402
from side_by_side import CLEAN_ENV, nbdl_env  # noqa: E402

# (in channels, out channels, image side, kernel, stride, pad)
NETS = {
    "resnet18_32": [(3, 64, 32, 7, 2, 3), (64, 64, 8, 3, 1, 1), (64, 128, 8, 3, 2, 1),
                    (64, 128, 8, 1, 2, 0), (128, 128, 4, 3, 1, 1), (128, 256, 4, 3, 2, 1),
                    (256, 256, 2, 3, 1, 1), (256, 512, 2, 3, 2, 1), (512, 512, 1, 3, 1, 1)],
    "resnet50_224": [(3, 64, 224, 7, 2, 3), (64, 64, 56, 1, 1, 0), (64, 64, 56, 3, 1, 1),
                     (64, 256, 56, 1, 1, 0), (256, 128, 56, 1, 1, 0), (128, 128, 28, 3, 1, 1),
                     (128, 512, 28, 1, 1, 0), (512, 256, 28, 1, 1, 0), (256, 256, 14, 3, 1, 1),
                     (256, 1024, 14, 1, 1, 0), (1024, 512, 14, 1, 1, 0), (512, 512, 7, 3, 1, 1),
                     (512, 2048, 7, 1, 1, 0)],
    "resnet18_224": [(3, 64, 224, 7, 2, 3), (64, 64, 56, 3, 1, 1), (64, 128, 56, 3, 2, 1),
                     (64, 128, 56, 1, 2, 0), (128, 128, 28, 3, 1, 1), (128, 256, 28, 3, 2, 1),
                     (128, 256, 28, 1, 2, 0), (256, 256, 14, 3, 1, 1), (256, 512, 14, 3, 2, 1),
                     (256, 512, 14, 1, 2, 0), (512, 512, 7, 3, 1, 1)],
    "squeezenet11_224": [(3, 64, 224, 3, 2, 0), (64, 16, 55, 1, 1, 0), (16, 64, 55, 1, 1, 0),
                         (16, 64, 55, 3, 1, 1), (128, 32, 27, 1, 1, 0), (32, 128, 27, 3, 1, 1),
                         (256, 48, 13, 1, 1, 0), (48, 192, 13, 3, 1, 1), (64, 256, 13, 3, 1, 1),
                         (512, 1000, 13, 1, 1, 0)],
}


def worker(runtime, net, batch, reps):
    """Runs in the runtime's own process: ``[(forward ms, backward ms,
    GEMM ms)]`` per layer of ``net``, as JSON on stdout."""
    import numpy as np
    if runtime == "nbdl":
        import nbdl as mx
    else:
        import mxnet as mx
    out = []
    for c, f, h, k, s, p in NETS[net]:
        x = mx.sym.Variable("data")
        y = mx.sym.Convolution(x, num_filter=f, kernel=(k, k), stride=(s, s), pad=(p, p),
                               no_bias=True, name="conv")
        ex = y.simple_bind(mx.cpu(), data=(batch, c, h, h), grad_req="write")
        rng = np.random.RandomState(0)
        for a in ex.arg_arrays:
            a[:] = rng.standard_normal(a.shape).astype("float32") * 0.1
        og = mx.nd.array(rng.standard_normal(ex.outputs[0].shape).astype("float32"))

        def fwd():
            ex.forward(is_train=True)
            ex.outputs[0].wait_to_read()

        def both():
            fwd()
            ex.backward(og)
            for g in ex.grad_arrays:
                g.wait_to_read()

        t = time.time()
        while time.time() - t < 3.0:                 # nbdl compiles its parallel kernels
            both()
        f_ms = median_time(fwd, reps, warmup=0) * 1e3
        b_ms = median_time(both, reps, warmup=0) * 1e3 - f_ms
        o = (h + 2 * p - k) // s + 1
        w = rng.standard_normal((f, c * k * k)).astype("float32")
        cols = rng.standard_normal((c * k * k, batch * o * o)).astype("float32")
        dst = np.empty((f, batch * o * o), "float32")
        g_ms = median_time(lambda: np.dot(w, cols, out=dst), reps, warmup=0) * 1e3
        out.append((f_ms, b_ms, g_ms))
    print(json.dumps(out))


def main():
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--net", default="resnet18_32", choices=sorted(NETS))
    parser.add_argument("--batch", type=int, default=32)
    parser.add_argument("--threads", type=int, default=2)
    parser.add_argument("--reps", type=int, default=30)
    parser.add_argument("--mxnet", default="/work/mxvenv/bin/python")
    parser.add_argument("--worker", choices=["nbdl", "mxnet"], help=argparse.SUPPRESS)
    args = parser.parse_args()
    if args.worker:
        worker(args.worker, args.net, args.batch, args.reps)
        return
    threads = str(args.threads)
    runs = {"nbdl": (sys.executable, nbdl_env(args.threads)),
            "mxnet": (args.mxnet, dict(CLEAN_ENV, OMP_NUM_THREADS=threads,
                                       OPENBLAS_NUM_THREADS=threads))}
    res = {}
    for name, (python, env) in runs.items():
        cmd = [python, os.path.abspath(__file__), "--worker", name, "--net", args.net,
               "--batch", str(args.batch), "--reps", str(args.reps)]
        done = subprocess.run(cmd, env=env, stdout=subprocess.PIPE, text=True, check=True)
        res[name] = json.loads(done.stdout.strip().splitlines()[-1])
    print(f"{args.net}, batch {args.batch}, {args.threads} threads; ms a call "
          f"(load {os.getloadavg()[0]:.1f})")
    print("| layer (C->F, side, kxk/s) | nbdl fwd | MXNet fwd | GEMM | nbdl bwd | MXNet bwd |")
    print("|---|---|---|---|---|---|")
    tot = [0.0] * 5
    for (c, f, h, k, s, _), a, b in zip(NETS[args.net], res["nbdl"], res["mxnet"]):
        row = (a[0], b[0], a[2], a[1], b[1])
        tot = [t + v for t, v in zip(tot, row)]
        print(f"| {c}->{f}, {h}px, {k}x{k}/{s} | " + " | ".join(f"{v:.3f}" for v in row) + " |")
    print("| sum | " + " | ".join(f"{v:.2f}" for v in tot) + " |")


if __name__ == "__main__":
    main()
