"""Where a row of issue 14's table loses: per operator, milliseconds per step
in nbdl and in Apache MXNet 1.9.1, each runtime's own profiler with
aggregate statistics over the same number of steps, side by side::

    env -u OPENBLAS_CORETYPE -u OPENBLAS_L2_SIZE PYTHONPATH=<checkout> \\
        python perf/compare/op_breakdown.py resnet18_train [--steps 20] [--threads 2]

Both workers are ``side_by_side.py``'s (the user's environment, nbdl's
steady-state settings; MXNet's engine bulking off, so that its profiler
times each op rather than each bulked segment, which makes MXNet's side a
little slower than in the table); they profile one after the other, so the
machine should be quiet.  Profiling costs each runtime a little per op, so compare
the rows with each other, not the totals with the unprofiled table.  Rows
are MXNet's operator names (nbdl uses the same); an op one runtime fuses
away or splits appears on one side only."""
import argparse
import os
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from side_by_side import CLEAN_ENV, HERE, PERF, Worker, nbdl_env  # noqa: E402


def breakdown(row, steps, threads, mxnet_python):
    """``{runtime: {"ops": {name: (count, total ms)}, "wall": s}}`` for ``row``."""
    sides = {"nbdl": (sys.executable, os.path.join(PERF, "workloads.py"), nbdl_env(threads)),
             "MXNet": (mxnet_python, os.path.join(HERE, "mxnet_reference.py"),
                       dict(CLEAN_ENV, OMP_NUM_THREADS=str(threads),
                            MXNET_EXEC_BULK_EXEC_TRAIN="0",        # one row per op, not
                            MXNET_EXEC_BULK_EXEC_INFERENCE="0"))}  # per bulked segment
    out = {}
    for name, (python, module, env) in sides.items():
        w = Worker(python, module, row, env)
        try:
            w.run(2.0, 3, 50)                                      # warm up
            out[name] = w.profile(steps)
        finally:
            w.close()
    return out


def table(result, steps):
    """Rows ``(op, nbdl ms/step, MXNet ms/step, difference)``, largest
    difference first."""
    a, b = result["nbdl"]["ops"], result["MXNet"]["ops"]
    rows = []
    for op in set(a) | set(b):
        x = a.get(op, (0, 0.0))[1] / steps
        y = b.get(op, (0, 0.0))[1] / steps
        rows.append((op, x, y, x - y))
    return sorted(rows, key=lambda r: -abs(r[3]))


def main():
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("row", help="a row of side_by_side.py with an MXNet peer")
    parser.add_argument("--steps", type=int, default=20)
    parser.add_argument("--threads", type=int, default=2)
    parser.add_argument("--mxnet", default="/work/mxvenv/bin/python")
    args = parser.parse_args()
    result = breakdown(args.row, args.steps, args.threads, args.mxnet)
    rows = table(result, args.steps)
    print(f"{args.row}: ms per step over {args.steps} profiled steps "
          f"(wall: nbdl {result['nbdl']['wall'] / args.steps * 1e3:.1f}, "
          f"MXNet {result['MXNet']['wall'] / args.steps * 1e3:.1f}; load {os.getloadavg()[0]:.1f})")
    print("| op | nbdl | MXNet | difference |\n|---|---|---|---|")
    for op, x, y, d in rows:
        if max(x, y) >= 0.05:
            print(f"| {op} | {x:.2f} | {y:.2f} | {d:+.2f} |")
    tot_a = sum(r[1] for r in rows)
    tot_b = sum(r[2] for r in rows)
    print(f"| all ops | {tot_a:.2f} | {tot_b:.2f} | {tot_a - tot_b:+.2f} |")


if __name__ == "__main__":
    main()
