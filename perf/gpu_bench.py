"""nbdl's GPU figures, with PyTorch's CUDA figures beside them where torch imports.

Run by perf/gpu_check.sh on a GPU machine (docs/gpu.md); ``--dry-run`` runs
every workload at toy sizes on the CPU (no GPU, no torch needed) so that the
workloads, the timing and the table are tested anywhere.

Workloads (float32, random data, median of timed repetitions after warm-up,
the device synchronised before each clock read):

- ``gemm``: a 4096^3 matrix product through ``dot`` (cuBLAS road and tiled
  kernel, ``NBDL_CUDA_GEMM``), TFLOP/s and the fraction of the chip's
  float32 rate (67 TFLOP/s, H100/H200 SXM datasheet);
- ``conv_gemm``/``conv_direct``: ResNet's 3x3 256->256 convolution at 14x14,
  batch 32, forward and both gradients, TFLOP/s, on each road (``NBDL_CUDA_CONV``);
- ``mlp``: the executor's MLP training step (perf/test_executor_mlp.py's net);
- ``resnet18``/``resnet50`` training (SGD, batch 32) and inference (batch 64), 224x224;
- ``lstm``: the fused 2-layer LSTM training step of perf/test_rnn.py.

    python perf/gpu_bench.py [--dry-run] [--out DIR] [--only gemm,mlp,...] [--budget SECONDS]
"""
import argparse
import json
import os
import statistics
import sys
import time

import numpy as np

PEAK_FP32_TFLOPS = 67.0


def _sync_fn(device):
    if device.device_type == "gpu":
        from numba import cuda
        return cuda.synchronize
    return lambda: None


def timed(fn, sync, reps, warmup, budget):
    """Median seconds of ``fn()`` over up to ``reps`` runs after ``warmup``
    (fewer when the runs pass ``budget`` seconds)."""
    for _ in range(warmup):
        fn()
    sync()
    times, start = [], time.perf_counter()
    for _ in range(reps):
        t = time.perf_counter()
        fn()
        sync()
        times.append(time.perf_counter() - t)
        if time.perf_counter() - start > budget:
            break
    return statistics.median(times), len(times)


# -- nbdl workloads: each returns (step function, work per step, unit) -----------------

def nb_gemm(nbdl, dev, size, road):
    os.environ["NBDL_CUDA_GEMM"] = road
    n = size["gemm"]
    rng = np.random.RandomState(0)
    ex = nbdl.sym.dot(nbdl.sym.var("a"), nbdl.sym.var("b")).simple_bind(
        dev, a=(n, n), b=(n, n), grad_req="null")
    ex.arg_dict["a"][:] = rng.rand(n, n).astype(np.float32)
    ex.arg_dict["b"][:] = rng.rand(n, n).astype(np.float32)
    os.environ.pop("NBDL_CUDA_GEMM")
    return (lambda: ex.forward(is_train=False)), 2 * n ** 3 / 1e12, "TFLOP/s"


def nb_conv(nbdl, dev, size, road):
    os.environ["NBDL_CUDA_CONV"] = road
    n, c, hw = size["conv"]
    rng = np.random.RandomState(0)
    s = nbdl.sym.Convolution(nbdl.sym.var("x"), kernel=(3, 3), pad=(1, 1), num_filter=c,
                             no_bias=True, name="conv")
    ex = s.simple_bind(dev, x=(n, c, hw, hw))
    os.environ.pop("NBDL_CUDA_CONV")
    for k, a in ex.arg_dict.items():
        a[:] = rng.uniform(-0.1, 0.1, a.shape).astype(np.float32)

    def step():
        ex.forward(is_train=True)
        ex.backward()
    # forward, data gradient, weight gradient: 3 products of the same size
    return step, 3 * 2 * n * hw * hw * c * c * 9 / 1e12, "TFLOP/s"


def nb_mlp(nbdl, dev, size):
    batch, feat = size["mlp"]
    x = nbdl.sym.var("data")
    for i, h in enumerate((512, 512)):
        x = nbdl.sym.Activation(nbdl.sym.FullyConnected(x, num_hidden=h, name=f"fc{i + 1}"),
                                act_type="relu")
    x = nbdl.sym.SoftmaxOutput(nbdl.sym.FullyConnected(x, num_hidden=10, name="fc3"), name="softmax")
    ex = x.simple_bind(dev, data=(batch, feat))
    rng = np.random.RandomState(0)
    for k, a in ex.arg_dict.items():
        a[:] = (rng.randint(0, 10, a.shape) if k == "softmax_label"
                else rng.uniform(-0.05, 0.05, a.shape)).astype(np.float32)
    pairs = [(ex.arg_dict[k], ex.grad_dict[k]) for k in ex.grad_dict if k != "data"]

    def step():
        ex.forward(is_train=True)
        ex.backward()
        for w, g in pairs:
            nbdl.nd.sgd_update(w, g, lr=0.01, out=w)
    return step, batch, "samples/s"


def nb_resnet(nbdl, dev, size, name, train):
    from nbdl import autograd
    from nbdl.gluon import Trainer
    from nbdl.gluon.loss import SoftmaxCrossEntropyLoss
    from nbdl.gluon.model_zoo import vision
    batch, hw = size["resnet_train" if train else "resnet_infer"]
    nbdl.random.seed(0)
    net = vision.get_model(name)
    net.initialize(nbdl.init.Xavier(), device=dev)
    net.hybridize(static_alloc=True, static_shape=True)
    rng = np.random.RandomState(0)
    x = nbdl.nd.array(rng.rand(batch, 3, hw, hw).astype(np.float32), ctx=dev)
    if not train:
        return (lambda: net(x)), batch, "images/s"
    y = nbdl.nd.array(rng.randint(0, 1000, batch).astype(np.float32), ctx=dev)
    loss_fn = SoftmaxCrossEntropyLoss()
    trainer = Trainer(net.collect_params(), "sgd", {"learning_rate": 0.01, "momentum": 0.9})

    def step():
        with autograd.record():
            loss = loss_fn(net(x), y)
        loss.backward()
        trainer.step(batch)
    return step, batch, "images/s"


def nb_lstm(nbdl, dev, size):
    from nbdl import autograd, gluon
    from nbdl.gluon import rnn
    seq, batch, width, layers = size["lstm"]
    nbdl.random.seed(0)
    net = rnn.LSTM(width, num_layers=layers, input_size=width)
    net.initialize(nbdl.init.Uniform(0.1), device=dev)
    net.hybridize(static_alloc=True, static_shape=True)
    loss_fn = gluon.loss.L2Loss()
    trainer = gluon.Trainer(net.collect_params(), "sgd", {"learning_rate": 0.01})
    rng = np.random.RandomState(0)
    x = nbdl.nd.array(rng.uniform(-1, 1, (seq, batch, width)).astype(np.float32), ctx=dev)
    y = nbdl.nd.array(rng.uniform(-1, 1, (seq, batch, width)).astype(np.float32), ctx=dev)

    def step():
        with autograd.record():
            loss = loss_fn(net(x), y)
        loss.backward()
        trainer.step(batch)
    return step, seq * batch, "tokens/s"


# -- PyTorch, the same workloads -------------------------------------------------------

def torch_workloads(size):
    import torch
    dev = torch.device("cuda")
    torch.backends.cuda.matmul.allow_tf32 = False      # float32 against float32
    torch.backends.cudnn.allow_tf32 = False
    torch.manual_seed(0)

    def gemm():
        n = size["gemm"]
        a, b = torch.rand(n, n, device=dev), torch.rand(n, n, device=dev)
        return (lambda: a @ b), 2 * n ** 3 / 1e12

    def conv():
        n, c, hw = size["conv"]
        layer = torch.nn.Conv2d(c, c, 3, padding=1, bias=False).to(dev)
        x = torch.rand(n, c, hw, hw, device=dev, requires_grad=True)

        def step():
            layer(x).sum().backward()
        return step, 3 * 2 * n * hw * hw * c * c * 9 / 1e12

    def mlp():
        batch, feat = size["mlp"]
        net = torch.nn.Sequential(torch.nn.Linear(feat, 512), torch.nn.ReLU(), torch.nn.Linear(512, 512),
                                  torch.nn.ReLU(), torch.nn.Linear(512, 10)).to(dev)
        opt = torch.optim.SGD(net.parameters(), lr=0.01)
        x, y = torch.rand(batch, feat, device=dev), torch.randint(0, 10, (batch,), device=dev)

        def step():
            opt.zero_grad()
            torch.nn.functional.cross_entropy(net(x), y).backward()
            opt.step()
        return step, batch

    def resnet(name, train):
        import torchvision                   # only these rows need it (a torch without it keeps the rest)
        batch, hw = size["resnet_train" if train else "resnet_infer"]
        net = getattr(torchvision.models, name)().to(dev)
        x = torch.rand(batch, 3, hw, hw, device=dev)
        if not train:
            net.eval()

            def infer():
                with torch.no_grad():
                    net(x)
            return infer, batch
        opt = torch.optim.SGD(net.parameters(), lr=0.01, momentum=0.9)
        y = torch.randint(0, 1000, (batch,), device=dev)

        def step():
            opt.zero_grad()
            torch.nn.functional.cross_entropy(net(x), y).backward()
            opt.step()
        return step, batch

    def lstm():
        seq, batch, width, layers = size["lstm"]
        net = torch.nn.LSTM(width, width, layers).to(dev)
        opt = torch.optim.SGD(net.parameters(), lr=0.01)
        x = torch.rand(seq, batch, width, device=dev)
        y = torch.rand(seq, batch, width, device=dev)

        def step():
            opt.zero_grad()
            ((net(x)[0] - y) ** 2).mean().backward()
            opt.step()
        return step, seq * batch

    return {"gemm_cublas": gemm, "gemm_tiled": gemm, "conv_gemm": conv, "conv_direct": conv, "mlp": mlp,
            "resnet18_train": lambda: resnet("resnet18", True),
            "resnet18_infer": lambda: resnet("resnet18", False),
            "resnet50_train": lambda: resnet("resnet50", True),
            "resnet50_infer": lambda: resnet("resnet50", False), "lstm": lstm}, torch.cuda.synchronize


FULL = {"gemm": 4096, "conv": (32, 256, 14), "mlp": (128, 784), "resnet_train": (32, 224),
        "resnet_infer": (64, 224), "lstm": (35, 32, 256, 2)}
TOY = {"gemm": 64, "conv": (2, 8, 6), "mlp": (8, 20), "resnet_train": (2, 32),
       "resnet_infer": (2, 32), "lstm": (3, 2, 8, 2)}


def nbdl_workloads(nbdl, dev, size):
    return {
        "gemm_cublas": lambda: nb_gemm(nbdl, dev, size, "auto"),
        "gemm_tiled": lambda: nb_gemm(nbdl, dev, size, "tiled"),
        "conv_gemm": lambda: nb_conv(nbdl, dev, size, "gemm"),
        "conv_direct": lambda: nb_conv(nbdl, dev, size, "direct"),
        "mlp": lambda: nb_mlp(nbdl, dev, size),
        "resnet18_train": lambda: nb_resnet(nbdl, dev, size, "resnet18_v1", True),
        "resnet18_infer": lambda: nb_resnet(nbdl, dev, size, "resnet18_v1", False),
        "resnet50_train": lambda: nb_resnet(nbdl, dev, size, "resnet50_v1", True),
        "resnet50_infer": lambda: nb_resnet(nbdl, dev, size, "resnet50_v1", False),
        "lstm": lambda: nb_lstm(nbdl, dev, size),
    }


def run(args, on_row):
    """Time every workload (nbdl, then PyTorch's same workload where torch
    imports and sees a GPU); ``on_row(rows)`` after each, so a run stopped
    by its time cap keeps what it measured."""
    import nbdl
    dry = args.dry_run
    dev = nbdl.cpu() if dry else nbdl.gpu(0)
    size = TOY if dry else FULL
    reps, warmup = (2, 1) if dry else (20, 2)
    only = set(args.only.split(",")) if args.only else None
    torch_work, torch_sync = (None, None) if dry or args.no_torch else _torch(size)
    rows = []
    sync = _sync_fn(dev)
    for name, make in nbdl_workloads(nbdl, dev, size).items():
        if only and not any(name.startswith(o) for o in only):
            continue
        row = {"workload": name}
        t0 = time.perf_counter()
        try:
            fn, work, unit = make()
            fn()                                 # the first run compiles its kernels
            sync()
            row["first_run_s"] = time.perf_counter() - t0
            sec, n = timed(fn, sync, reps, warmup, args.budget)
            row.update(nbdl_ms=sec * 1e3, runs=n, unit=unit, nbdl_rate=work / sec)
            if unit == "TFLOP/s":
                row["fraction_of_fp32_peak"] = work / sec / PEAK_FP32_TFLOPS
        except Exception as e:                   # a table row says what failed; the rest still runs
            row["nbdl_error"] = f"{type(e).__name__}: {str(e).splitlines()[0][:200] if str(e) else ''}"
        if torch_work is not None and name in torch_work:
            try:
                fn, units = torch_work[name]()
                sec, _ = timed(fn, torch_sync, reps, warmup, args.budget)
                row.update(torch_ms=sec * 1e3, torch_rate=units / sec)
            except Exception as e:
                row["torch_error"] = f"{type(e).__name__}: {str(e)[:200]}"
        rows.append(row)
        print(json.dumps(row), flush=True)
        on_row(rows)
    return rows


def _torch(size):
    """PyTorch's workloads and its synchronise, or (None, None) without a GPU torch."""
    try:
        import torch
        if not torch.cuda.is_available():
            return None, None
        return torch_workloads(size)
    except Exception as e:
        print(f"torch not used: {type(e).__name__}: {e}", flush=True)
        return None, None


def table(rows):
    """The rows as a markdown table (the figures docs/gpu.md asks for)."""
    head = ("| workload | nbdl ms | nbdl rate | unit | % fp32 peak | torch ms | torch rate | "
            "nbdl/torch time | first run s |")
    lines = [head, "|" + "---|" * 9]

    def f(v, fmt):
        return format(v, fmt) if isinstance(v, (int, float)) else "-"
    for r in rows:
        ratio = r["nbdl_ms"] / r["torch_ms"] if "nbdl_ms" in r and "torch_ms" in r else None
        frac = r.get("fraction_of_fp32_peak")
        lines.append(
            f"| {r['workload']} | {f(r.get('nbdl_ms'), '.2f')} | {f(r.get('nbdl_rate'), '.4g')} | "
            f"{r.get('unit', '-')} | {f(frac * 100 if frac is not None else None, '.1f')} | "
            f"{f(r.get('torch_ms'), '.2f')} | {f(r.get('torch_rate'), '.4g')} | {f(ratio, '.1f')} | "
            f"{f(r.get('first_run_s'), '.1f')} |"
            + (f" error: {r['nbdl_error']}" if "nbdl_error" in r else ""))
    return "\n".join(lines)


def main(argv=None):
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--dry-run", action="store_true", help="toy sizes on the CPU (tests the script)")
    p.add_argument("--out", default=os.environ.get("OUT", "."), help="where bench.json and bench.md go")
    p.add_argument("--only", default="", help="comma-separated workload name prefixes")
    p.add_argument("--budget", type=float, default=20.0, help="seconds of timed runs per workload")
    p.add_argument("--no-torch", action="store_true", help="skip PyTorch's figures")
    args = p.parse_args(argv)
    os.makedirs(args.out, exist_ok=True)

    def write(rows):
        with open(os.path.join(args.out, "bench.json"), "w") as f:
            json.dump(rows, f, indent=1)
        with open(os.path.join(args.out, "bench.md"), "w") as f:
            f.write(table(rows) + "\n")
    rows = run(args, write)
    print(table(rows))
    return 1 if any("nbdl_error" in r for r in rows) else 0


if __name__ == "__main__":
    sys.exit(main())
