"""Memory budgets (docs/memory-budget.md): planned bytes with and without a
budget, and the training step time a budget costs.

    python perf/memory_budget.py memory [resnet50 resnet152 lstm]   # planned bytes (exact)
    python perf/memory_budget.py time [steps]      # ResNet-50 v1, batch 32, 1,200 MB
    python perf/memory_budget.py picture PATH      # the README's arena picture

``memory`` binds ResNet-50 v1 and ResNet-152 v1 at batch 32, 3x224x224
(training: grad_req write, softmax head) and a 4-layer, 1,024-hidden LSTM
unrolled over 32 steps (batch 64, 50-d input, L2 head), each without a
budget, at the smallest budget nbdl meets, and at a budget in between; it
runs nothing, so its figures do not depend on the machine's load.  ``time``
binds ResNet-50 with and without a 1,200 MB budget in one process and runs
training steps alternately on the two executors (so both see the same load),
reporting the ratio of the median step times and the load average.
"""
import os
import statistics
import sys
import time

import numpy as np

import nbdl
from nbdl.errors import MemoryBudgetError
from nbdl.gluon import nn, rnn
from nbdl.gluon.model_zoo import vision

MB = 1 << 20


def resnet(name, batch=32):
    """(training symbol, input shapes) of a zoo model with a softmax head."""
    net = getattr(vision, name)()
    net.initialize()
    net.hybridize()
    net(nbdl.nd.zeros((1, 3, 224, 224)))       # trace once, infer parameter shapes
    sym = nbdl.sym.SoftmaxOutput(net._cached[0], name="softmax")
    return sym, {"data": (batch, 3, 224, 224)}


class _UnrolledLSTM(nn.HybridBlock):
    def __init__(self, layers, hidden, seq):
        super().__init__()
        self.seq = seq
        self.cells = rnn.HybridSequentialRNNCell()
        for _ in range(layers):
            self.cells.add(rnn.LSTMCell(hidden))

    def forward(self, x):
        out, _ = self.cells.unroll(self.seq, x, layout="TNC", merge_outputs=True)
        return out


def lstm(layers=4, hidden=1024, batch=64, inputs=50, seq=32):
    """(training symbol, input shapes) of a stacked LSTM unrolled over
    ``seq`` steps (one graph node per gate operation), with an L2 head."""
    net = _UnrolledLSTM(layers, hidden, seq)
    net.initialize()
    net.hybridize()
    net(nbdl.nd.zeros((seq, 1, inputs)))
    sym = nbdl.sym.LinearRegressionOutput(net._cached[0], name="l2")
    return sym, {"data": (seq, batch, inputs)}


def smallest_budget(sym, shapes):
    try:
        sym.simple_bind(nbdl.cpu(), memory_budget=1, **shapes)
    except MemoryBudgetError as e:
        return e.smallest
    raise AssertionError("a 1-byte budget was met")


def memory_row(label, sym, shapes, fraction=0.5):
    t = time.perf_counter()
    base = sym.simple_bind(nbdl.cpu(), **shapes).memory_plan
    t_base = time.perf_counter() - t
    t = time.perf_counter()
    smallest = smallest_budget(sym, shapes)
    t_small = time.perf_counter() - t
    rows = []
    budgets = [(f"{fraction:.0%} of unbudgeted", int(base.arena_bytes * fraction))]
    budgets.append(("smallest", smallest))
    for what, budget in budgets:
        if budget < smallest:
            continue
        t = time.perf_counter()
        p = sym.simple_bind(nbdl.cpu(), memory_budget=budget, **shapes).memory_plan
        dt = time.perf_counter() - t
        b = p.budget
        rows.append(f"| {label} | {what}: {budget / MB:,.1f} | {p.arena_bytes / MB:,.1f} | "
                    f"{len(b.recomputed)} | {b.extra_flops / 1e9:,.2f} "
                    f"({100 * b.extra_flops / b.forward_flops:.1f}% of forward) | {dt:.1f} s |")
    print(f"| {label} | none | {base.arena_bytes / MB:,.1f} | 0 | 0 | {t_base:.1f} s |")
    print("\n".join(rows))
    print(f"| {label} | (smallest found in {t_small:.1f} s) | | | | |", flush=True)


def memory(which=("resnet50", "resnet152", "lstm")):
    print("| graph | budget MB | planned MB | entries recomputed | extra GFLOP | bind |")
    print("|---|---|---|---|---|---|")
    if "resnet50" in which:
        memory_row("ResNet-50 v1, batch 32, training", *resnet("resnet50_v1"),
                   fraction=1200 * MB / resnet_base("resnet50_v1"))
    if "resnet152" in which:
        memory_row("ResNet-152 v1, batch 32, training", *resnet("resnet152_v1"))
    if "lstm" in which:
        memory_row("LSTM 4x1024 unrolled 32 steps, batch 64, training", *lstm())


def resnet_base(name):
    sym, shapes = resnet(name)
    return sym.simple_bind(nbdl.cpu(), **shapes).memory_plan.arena_bytes


def _fill(ex, seed=0):
    rng = np.random.RandomState(seed)
    for k, a in ex.arg_dict.items():
        a[:] = rng.uniform(-0.05, 0.05, a.shape).astype(np.float32)
    ex.arg_dict["softmax_label"][:] = rng.randint(0, 1000, 32).astype(np.float32)


def step_times(steps=5, budget=1200 * MB):
    sym, shapes = resnet("resnet50_v1")
    plain = sym.simple_bind(nbdl.cpu(), **shapes)
    fitted = sym.simple_bind(nbdl.cpu(), memory_budget=budget, **shapes)
    b = fitted.memory_plan.budget
    print(f"planned {plain.memory_plan.arena_bytes / MB:,.1f} MB without a budget, "
          f"{fitted.memory_plan.arena_bytes / MB:,.1f} MB with {budget / MB:,.0f} MB; "
          f"{len(b.recomputed)} entries recomputed, {b.extra_flops / 1e9:.2f} GFLOP extra "
          f"({100 * b.extra_flops / b.forward_flops:.1f}% of the forward's "
          f"{b.forward_flops / 1e9:.2f})", flush=True)
    for ex in (plain, fitted):
        _fill(ex)
    times = {"plain": [], "budget": []}
    grads = {}
    print("load before:", open("/proc/loadavg").read().strip(), flush=True)
    for i in range(steps + 1):            # the first pair compiles and is not counted
        for name, ex in (("plain", plain), ("budget", fitted)) if i % 2 == 0 else \
                (("budget", fitted), ("plain", plain)):
            t = time.perf_counter()
            ex.forward(is_train=True)
            ex.backward()
            dt = time.perf_counter() - t
            if i:
                times[name].append(dt)
            print(f"step {i} {name}: {dt:.2f} s  load {open('/proc/loadavg').read().split()[0]}",
                  flush=True)
            grads[name] = ex.grad_dict["resnetv10_conv0_weight"].asnumpy().tobytes() \
                if "resnetv10_conv0_weight" in ex.grad_dict else None
    print("load after:", open("/proc/loadavg").read().strip())
    mp, mb = statistics.median(times["plain"]), statistics.median(times["budget"])
    print(f"median step: {mp:.2f} s without a budget, {mb:.2f} s with it: ratio {mb / mp:.3f}")
    print("first conv's weight gradient bitwise equal:", grads["plain"] == grads["budget"])


def picture(path):
    """The README's picture: a small convolutional network's training arena
    under a budget of 75% of its unbudgeted plan."""
    x = nbdl.sym.var("data")
    h = x
    for i, c in enumerate((16, 16, 32, 32)):
        h = nbdl.sym.Convolution(h, num_filter=c, kernel=(3, 3), pad=(1, 1),
                                 stride=(2, 2) if i == 2 else (1, 1), name=f"conv{i}")
        h = nbdl.sym.BatchNorm(h, name=f"bn{i}")
        h = nbdl.sym.Activation(h, act_type="relu", name=f"relu{i}")
    h = nbdl.sym.Pooling(h, global_pool=True, kernel=(1, 1), pool_type="avg", name="pool")
    h = nbdl.sym.FullyConnected(h, num_hidden=10, name="fc")
    sym = nbdl.sym.SoftmaxOutput(h, name="softmax")
    shapes = {"data": (32, 3, 32, 32)}
    base = sym.simple_bind(nbdl.cpu(), **shapes).memory_plan.arena_bytes
    ex = sym.simple_bind(nbdl.cpu(), memory_budget=int(base * 0.75), **shapes)
    nbdl.viz.plot_memory(ex, path, size=(9, 4.2), dpi=80,
                         title="4 conv-BN-ReLU layers, batch 32, training, budget 75% "
                               "(red: recomputed in backward)")
    print(nbdl.debug_str(ex).split("Memory budget")[1])


if __name__ == "__main__":
    what = sys.argv[1] if len(sys.argv) > 1 else "memory"
    os.environ.setdefault("NBDL_QUIET", "1")
    if what == "memory":
        memory(sys.argv[2:] or ("resnet50", "resnet152", "lstm"))
    elif what == "time":
        step_times(int(sys.argv[2]) if len(sys.argv) > 2 else 5)
    elif what == "picture":
        picture(sys.argv[2])
    else:
        raise SystemExit(__doc__)
