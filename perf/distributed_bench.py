"""Data-parallel step time of nbdl on MPI against torch.distributed (gloo), in
one run:

    python perf/distributed_bench.py [--torch /work/torchvenv/bin/python] [--ranks 1 2 4]

For each model (the MLP 784-512-512-10 at batch 64 per rank, ResNet-18 v1
with the 32x32 "thumbnail" stem at batch 16 per rank, 10 classes) and each
rank count it starts ``mpiexec -n R`` jobs:

- nbdl, ``Trainer(kvstore='dist_sync')``, hybridized, gradient buckets
  started during backward (``overlap``), and the same with
  ``NBDL_DIST_OVERLAP=0`` (``no overlap``: every bucket starts at
  ``trainer.step``);
- torch 2.13 DistributedDataParallel on gloo (perf/compare/torch_distributed.py,
  run by the ``--torch`` interpreter; torch is never a dependency of nbdl),
  the same model and batch;

and prints per job the median step time (forward, backward, gradient
reduction, update) and, for nbdl, the share of the step spent waiting for
the gradient allreduces (``wait``) and what one allreduce of all the
gradients costs on its own (``comm``): ``comm - wait`` is the communication
hidden behind backward.  The machine's load average is printed with the
figures.  Ranks on one machine pin their threads to their share of the cores
(torch: ``set_num_threads(cores // R)``).

``--worker`` is the per-rank entry point the driver uses.
"""
import argparse
import json
import os
import shutil
import subprocess
import sys
import time

HERE = os.path.dirname(os.path.abspath(__file__))
MODELS = {"mlp": 64, "resnet18": 16}       # batch per rank


def _median(xs):
    xs = sorted(xs)
    return xs[len(xs) // 2]


def worker(model, steps, warmup):
    """One rank of an nbdl job: prints a JSON line of timings on rank 0."""
    import numpy as np

    import nbdl
    from nbdl import autograd, collective, gluon
    from nbdl.gluon import nn
    kv = nbdl.kv.create("dist_sync")
    batch = MODELS[model]
    nbdl.random.seed(0)
    if model == "mlp":
        net = nn.HybridSequential()
        net.add(nn.Dense(512, activation="relu", in_units=784),
                nn.Dense(512, activation="relu", in_units=512), nn.Dense(10, in_units=512))
        shape = (batch, 784)
    else:
        net = gluon.model_zoo.vision.resnet18_v1(classes=10, thumbnail=True)
        shape = (batch, 3, 32, 32)
    net.initialize(nbdl.init.Xavier())
    net.hybridize(static_alloc=True, static_shape=True)
    rng = np.random.RandomState(kv.rank)
    x = nbdl.nd.array(rng.uniform(-1, 1, shape).astype(np.float32))
    y = nbdl.nd.array(rng.randint(0, 10, batch).astype(np.float32))
    net(x)                                   # deferred shapes
    trainer = gluon.Trainer(net.collect_params(), "sgd", {"learning_rate": 0.01,
                                                          "momentum": 0.9}, kvstore=kv)
    loss = gluon.loss.SoftmaxCrossEntropyLoss()
    times = []
    for i in range(warmup + steps):
        if i == warmup:
            trainer._buckets.stats["wait_s"] = 0.0
        collective.barrier("bench step")      # steps start together: times are per step
        t0 = time.perf_counter()
        with autograd.record():
            out = loss(net(x), y)
        out.backward()
        trainer.step(batch * kv.num_workers)
        times.append(time.perf_counter() - t0)
    timed = times[warmup:]
    wait = trainer._buckets.stats["wait_s"] / steps
    stats = dict(trainer._buckets.stats)
    # one allreduce of every gradient on its own: what communication costs
    slabs = [np.zeros(b[1] // 4, np.float32) for b in trainer._buckets.buckets]
    comm = []
    for _ in range(5):
        collective.barrier("bench comm")
        t0 = time.perf_counter()
        for s in slabs:
            collective.allreduce(s, "bench comm", comm=kv._world.grads)
        comm.append(time.perf_counter() - t0)
    if kv.rank == 0:
        print(json.dumps({"step_ms": _median(timed) * 1e3, "wait_ms": wait * 1e3,
                          "comm_ms": _median(comm) * 1e3, "buckets": stats["buckets"],
                          "grad_mb": stats["bytes"] / 2**20, "early": stats["early"],
                          "pinned": kv._world.pinned}), flush=True)


def _mpiexec():
    here = os.path.join(os.path.dirname(sys.executable), "mpiexec")
    return here if os.path.isfile(here) else shutil.which("mpiexec")


def _run(cmd, env):
    out = subprocess.run(cmd, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True,
                         env=env, timeout=1800)
    lines = [ln for ln in out.stdout.splitlines() if ln.startswith("{")]
    if out.returncode or not lines:
        useful = [ln for ln in out.stdout.splitlines() if "Warning" not in ln
                  and "_conversion_method" not in ln]
        return {"error": "\n".join(useful[:30])}
    return json.loads(lines[-1])


def main():
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--worker", choices=sorted(MODELS))
    parser.add_argument("--torch", default="/work/torchvenv/bin/python",
                        help="a Python with torch 2.13 (skipped when missing)")
    parser.add_argument("--ranks", type=int, nargs="+", default=[1, 2, 4])
    parser.add_argument("--models", nargs="+", default=["mlp", "resnet18"])
    parser.add_argument("--steps", type=int, default=10)
    parser.add_argument("--warmup", type=int, default=3)
    parser.add_argument("--runtimes", nargs="+", default=["nbdl", "torch"])
    args = parser.parse_args()
    if args.worker:
        worker(args.worker, args.steps, args.warmup)
        return
    mpiexec = _mpiexec()
    print(f"load average before: {os.getloadavg()}, cores: {os.cpu_count()}", flush=True)
    print("| model | ranks | runtime | step ms | wait ms (share) | comm ms alone | hidden |")
    print("|---|---|---|---|---|---|---|")
    for model in args.models:
        for r in args.ranks:
            rows = []
            for label, overlap in (("nbdl overlap", "1"), ("nbdl no overlap", "0")) \
                    if "nbdl" in args.runtimes else ():
                # parallel kernels from the first step where a rank has several cores
                env = dict(os.environ, NBDL_DIST_OVERLAP=overlap, NBDL_PARALLEL_AFTER_RUNS="0")
                res = _run([mpiexec, "-n", str(r), sys.executable, __file__, "--worker", model,
                            "--steps", str(args.steps), "--warmup", str(args.warmup)], env)
                rows.append((label, res))
            if "torch" in args.runtimes and os.path.exists(args.torch):
                script = os.path.join(HERE, "compare", "torch_distributed.py")
                res = _run([mpiexec, "-n", str(r), args.torch, script, model, str(MODELS[model]),
                            str(args.steps), str(args.warmup)], dict(os.environ))
                rows.append(("torch DDP gloo", res))
            for label, res in rows:
                if "error" in res:
                    print(f"| {model} | {r} | {label} | failed |||||\n{res['error']}")
                    continue
                step = res["step_ms"]
                if "wait_ms" in res:
                    hidden = max(0.0, res["comm_ms"] - res["wait_ms"]) if r > 1 else 0.0
                    print(f"| {model} | {r} | {label} | {step:.1f} | {res['wait_ms']:.1f} "
                          f"({res['wait_ms'] / step:.0%}) | {res['comm_ms']:.1f} | "
                          f"{hidden:.1f} |", flush=True)
                else:
                    print(f"| {model} | {r} | {label} | {step:.1f} | | "
                          f"{res.get('comm_ms', 0):.1f} | |", flush=True)
    print(f"load average after: {os.getloadavg()}", flush=True)


if __name__ == "__main__":
    main()
