"""Where a first call's time goes: the Numba compilations one case of
``perf/test_cold_start.py`` (or any Python file) triggers, each with its
self time (CPU seconds spent compiling that function, its callees'
compilations excluded), counted through Numba's ``numba:compile`` events.

Run it with empty caches to see what a fresh machine pays::

    D=$(mktemp -d); NUMBA_CACHE_DIR=$D/numba NBDL_CACHE_DIR=$D/nbdl NBDL_COMPILE_WORKERS=0 \\
        python tools/compile_accounting.py resnet18_first_train_step_32px_b8 --top 15
    python tools/compile_accounting.py --file my_script.py

``NBDL_COMPILE_WORKERS=0`` keeps every compilation in this process (the
compile pool's workers would otherwise take some, unseen here).  The first
line gives the case's CPU time, the number of compilations and their summed
self time; then one line per compiled function, the costliest first.
"""
import argparse
import collections
import os
import sys
import time

from numba.core import event

HERE = os.path.dirname(os.path.abspath(__file__))
COLD_START = os.path.join(HERE, "..", "perf", "test_cold_start.py")


def cold_start_cases():
    """``{name: source}`` of perf/test_cold_start.py's first-call cases (read
    from the file's ``CASES`` table without importing its benchmarks)."""
    src = open(COLD_START).read()
    ns = {}
    exec(compile(src.split("def _run_case")[0], COLD_START, "exec"), ns)
    return ns["CASES"]


class CompileListener(event.Listener):
    """Per compiled Python function: ``[compilations, self seconds]``."""

    def __init__(self):
        super().__init__()
        self.stats = collections.defaultdict(lambda: [0, 0.0])
        self._stack = []

    def on_start(self, event):
        self._stack.append((event.data["dispatcher"].py_func, time.process_time(), 0.0))

    def on_end(self, event):
        fn, t0, children = self._stack.pop()
        spent = time.process_time() - t0
        if self._stack:
            outer, t1, c = self._stack[-1]
            self._stack[-1] = (outer, t1, c + spent)
        row = self.stats[f"{fn.__module__}.{fn.__qualname__}"]
        row[0] += 1
        row[1] += spent - children


def account(source, name="<case>"):
    """Run ``source`` with a compile listener; returns ``(cpu seconds,
    {function: [compilations, self seconds]})``."""
    listener = CompileListener()
    event.register("numba:compile", listener)
    t0 = time.process_time()
    exec(compile(source, name, "exec"), {"__name__": "__main__"})
    return time.process_time() - t0, dict(listener.stats)


def main(argv=None):
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("case", nargs="?", help="a case of perf/test_cold_start.py")
    parser.add_argument("--file", help="a Python file to run instead of a case")
    parser.add_argument("--top", type=int, default=30, help="functions listed (default 30)")
    parser.add_argument("--list", action="store_true", help="list the cases and stop")
    args = parser.parse_args(argv)
    cases = cold_start_cases()
    if args.list or (args.case is None and args.file is None):
        print("\n".join(cases))
        return 0
    if args.file:
        name, source = args.file, open(args.file).read()
    elif args.case in cases:
        name, source = args.case, cases[args.case]
    else:
        parser.error(f"unknown case {args.case!r}; --list shows them")
    cpu, stats = account(source, name)
    n = sum(c for c, _ in stats.values())
    total = sum(t for _, t in stats.values())
    print(f"{name}: {cpu:.1f} s CPU, {n} compilations, {total:.1f} s compiling")
    for fn, (count, spent) in sorted(stats.items(), key=lambda kv: -kv[1][1])[:args.top]:
        print(f"  {spent:6.2f} s {count:3d}  {fn}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
