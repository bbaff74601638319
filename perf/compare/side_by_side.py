"""Issue 14's speed table, measured side by side: per row, nbdl and its peer
(Apache MXNet 1.9.1 or PyTorch 2.13) each in a worker process of its own
(``worker.py``), timed in alternating rounds (who goes first alternates too);
the figure of a row is the median over the rounds of nbdl's median / the
peer's median in that round, printed with the 1-minute load average seen at
each round (the machine is shared: a ratio from one run is comparable, two
absolute times from different minutes are not)::

    env -u OPENBLAS_CORETYPE -u OPENBLAS_L2_SIZE PYTHONPATH=<checkout> \\
        python perf/compare/side_by_side.py [rows ...] [--rounds 5] [--threads 2]

Every worker starts from the environment this script had when it started
(the user's: nothing here imports nbdl), plus the thread count for its own
runtime (``NBDL_NUM_THREADS``; ``OMP_NUM_THREADS`` for MXNet and PyTorch),
and nbdl's steady-state settings of ``perf/conftest.py`` (native driver and
parallel kernels from the first run).  ``--baseline PATH`` makes the peer
another nbdl checkout (before/after comparisons), ``--baseline-env K=V``
adds to the peer's environment (nbdl against itself with one knob changed).
"""
import argparse
import json
import os
import statistics
import subprocess
import sys
import time

# The user's environment: this script imports no runtime, and every worker starts from it.
CLEAN_ENV = dict(os.environ)

HERE = os.path.dirname(os.path.abspath(__file__))
PERF = os.path.dirname(HERE)
PEER_OF = {"eager_dispatch": "torch", "eager_mlp_train": "torch", "lstm_train": "torch",
           "gru_train": "torch"}
LABELS = {
    "gluon_mlp_train": "Gluon MLP 784-512-512-10 train step, b128, hybridized",
    "eager_mlp_train": "Gluon MLP train step, eager (vs `nn.Module`)",
    "symbol_mlp_train": "Symbol MLP train step (simple_bind)",
    "hybrid_dispatch": "hybridized dispatch, 100 tiny ops (per op)",
    "eager_dispatch": "eager dispatch, 100 tiny ops (per op)",
    "lenet_train": "LeNet-5 train step, b128",
    "resnet18_train": "ResNet-18 v1 train step, 3x32x32, b32",
    "resnet50_infer_b1": "ResNet-50 v1 inference, b1, 224x224",
    "resnet50_infer_b16": "ResNet-50 v1 inference, b16",
    "resnet18_infer_b1": "ResNet-18 v1 inference, b1",
    "resnet18_infer_b16": "ResNet-18 v1 inference, b16",
    "mobilenet_infer_b1": "MobileNet 1.0 inference, b1",
    "mobilenet_infer_b16": "MobileNet 1.0 inference, b16",
    "squeezenet_infer_b1": "SqueezeNet 1.1 inference, b1",
    "squeezenet_infer_b16": "SqueezeNet 1.1 inference, b16",
    "lstm_train": "LSTM 2x256, TNC 35x32, train step (fused `RNN` vs `nn.LSTM`)",
    "gru_train": "GRU 2x256, TNC 35x32, train step (fused `RNN` vs `nn.GRU`)",
}


class Worker:
    """A ``worker.py`` process serving one row."""

    def __init__(self, python, module, row, env):
        self.proc = subprocess.Popen([python, os.path.join(HERE, "worker.py"), module, row],
                                     stdin=subprocess.PIPE, stdout=subprocess.PIPE, env=env,
                                     text=True)
        self.ready = self._read()

    def _read(self):
        line = self.proc.stdout.readline()
        if not line:
            raise RuntimeError(f"worker {self.proc.args} exited ({self.proc.wait()})")
        return json.loads(line)

    def _ask(self, request):
        self.proc.stdin.write(json.dumps(request) + "\n")
        self.proc.stdin.flush()
        return self._read()

    def run(self, seconds, lo, hi):
        return self._ask({"seconds": seconds, "min": lo, "max": hi})["times"]

    def profile(self, steps):
        """``steps`` steps under the runtime's profiler: ``{"ops": {name:
        (count, total ms)}, "wall": seconds}`` (worker.py's ``profile``)."""
        return self._ask({"profile": steps})

    def close(self):
        try:
            self.proc.stdin.write('{"quit": true}\n')
            self.proc.stdin.flush()
        except OSError:
            pass
        self.proc.wait(timeout=60)


def nbdl_env(threads, path=None, extra=()):
    env = dict(CLEAN_ENV, NBDL_NUM_THREADS=str(threads))
    env.setdefault("NBDL_DRIVER", "1")
    env.setdefault("NBDL_PARALLEL_AFTER_RUNS", "0")
    env.setdefault("NBDL_QUIET", "1")
    if path:
        env["PYTHONPATH"] = path
    env.update(dict(kv.split("=", 1) for kv in extra))
    return env


def measure(row, args):
    """The row's per-round figures: a dict for the table and the JSON file."""
    nbdl = ("nbdl", sys.executable, os.path.join(PERF, "workloads.py"), nbdl_env(args.threads))
    if args.baseline or args.baseline_env:
        peer = ("baseline", sys.executable, os.path.join(PERF, "workloads.py"),
                nbdl_env(args.threads, args.baseline, args.baseline_env))
    elif PEER_OF.get(row) == "torch":
        peer = ("PyTorch", args.torch, os.path.join(HERE, "torch_reference.py"),
                dict(CLEAN_ENV, OMP_NUM_THREADS=str(args.threads)))
    else:
        peer = ("MXNet", args.mxnet, os.path.join(HERE, "mxnet_reference.py"),
                dict(CLEAN_ENV, OMP_NUM_THREADS=str(args.threads)))
    workers = {}
    try:
        for name, python, module, env in (nbdl, peer):
            workers[name] = Worker(python, module, row, env)
        rounds = []
        for r in range(args.rounds):
            order = (nbdl[0], peer[0]) if r % 2 == 0 else (peer[0], nbdl[0])
            med, load = {}, os.getloadavg()[0]
            for name in order:
                time.sleep(args.pause)    # let the other runtime's threads go idle
                med[name] = statistics.median(workers[name].run(args.seconds, args.min_reps,
                                                                args.max_reps))
            rounds.append({"load": load, nbdl[0]: med[nbdl[0]], peer[0]: med[peer[0]],
                           "ratio": med[nbdl[0]] / med[peer[0]]})
    finally:
        for w in workers.values():
            w.close()
    return {"row": row, "peer": peer[0], "rounds": rounds,
            "ratio": statistics.median(x["ratio"] for x in rounds),
            "nbdl": statistics.median(x[nbdl[0]] for x in rounds),
            "other": statistics.median(x[peer[0]] for x in rounds),
            "load": (min(x["load"] for x in rounds), max(x["load"] for x in rounds)),
            "when": time.strftime("%Y-%m-%d %H:%M")}


def _ms(s):
    return f"{s * 1e6:.2f} us" if s < 1e-4 else f"{s * 1e3:.3g} ms"


def main():
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("rows", nargs="*", help=f"rows to run (default all): {', '.join(LABELS)}")
    parser.add_argument("--rounds", type=int, default=5)
    parser.add_argument("--seconds", type=float, default=1.5, help="per runtime per round")
    parser.add_argument("--min-reps", type=int, default=3)
    parser.add_argument("--max-reps", type=int, default=2000)
    parser.add_argument("--pause", type=float, default=0.3)
    parser.add_argument("--threads", type=int, default=2)
    parser.add_argument("--mxnet", default="/work/mxvenv/bin/python")
    parser.add_argument("--torch", default="/work/torchvenv/bin/python")
    parser.add_argument("--baseline", help="PYTHONPATH of another nbdl checkout as the peer")
    parser.add_argument("--baseline-env", nargs="*", default=[], metavar="K=V")
    parser.add_argument("--json", help="append each row's figures to this file")
    args = parser.parse_args()
    print("| workload | nbdl / peer | nbdl, peer (medians) | load (1 min) | per-round ratios |")
    print("|---|---|---|---|---|")
    for row in args.rows or list(LABELS):
        res = measure(row, args)
        rr = ", ".join(f"{x['ratio']:.2f}" for x in res["rounds"])
        print(f"| {LABELS.get(row, row)} | {res['ratio']:.2f} x {res['peer']} | "
              f"{_ms(res['nbdl'])} / {_ms(res['other'])} | {res['load'][0]:.1f}-"
              f"{res['load'][1]:.1f} | {rr} |", flush=True)
        if args.json:
            with open(args.json, "a") as f:
                f.write(json.dumps(res) + "\n")


if __name__ == "__main__":
    main()
