"""Write ``nbdl/executor/compile_plan.json``: the callees each kernel compiles
(``nbdl.executor.compile_plan``), recorded from the workloads of
``nbdl.precompile`` and the cases of ``perf/test_cold_start.py``, each in a
fresh process with an empty cache.

    python tools/compile_plan.py            # record everything, write the plan
    python tools/compile_plan.py --check    # compare with the plan on disk

Run it after changing which kernels a kernel calls or their argument types:
a stale plan costs a fresh machine's first run its parallel compilation
(the workers compile callees nobody calls), never a wrong result.
"""
import argparse
import json
import os
import subprocess
import sys
import tempfile
from concurrent.futures import ThreadPoolExecutor

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
sys.path.insert(0, ROOT)

_RECORD = """
import json, sys
from nbdl.executor.compile_plan import Recorder
from nbdl.kernels.shared.jit import set_compile_hook
rec = Recorder()
set_compile_hook(rec)
from nbdl.executor import compile_pool
_start = compile_pool.start
def start(calls, training=False):
    if training:
        rec.graph_started(calls)
    return _start(calls, training)
compile_pool.start = start
kind, name = sys.argv[1], sys.argv[2]
if kind == "workload":
    from nbdl.precompile import WORKLOADS
    WORKLOADS[name]()
else:
    sys.path.insert(0, sys.argv[3])
    from test_cold_start import CASES
    exec(CASES[name], {})
set_compile_hook(None)
print("PLAN" + json.dumps({"plan": rec.plan, "followers": rec.followers()}))
"""


def _record(job):
    kind, name, threads = job
    with tempfile.TemporaryDirectory(prefix="nbdl-plan-") as d:
        env = dict(os.environ, NUMBA_CACHE_DIR=os.path.join(d, "numba"),
                   NBDL_CACHE_DIR=os.path.join(d, "nbdl"), NBDL_COMPILE_WORKERS="0",
                   NBDL_QUIET="1", PYTHONPATH=ROOT)
        env.pop("NBDL_NUM_THREADS", None)
        if threads:
            env["NBDL_NUM_THREADS"] = threads
        r = subprocess.run([sys.executable, "-c", _RECORD, kind, name,
                            os.path.join(ROOT, "perf")], env=env, capture_output=True, text=True)
        if r.returncode:
            raise RuntimeError(f"recording {name} failed:\n{r.stderr[-3000:]}")
        out = r.stdout
    line = [ln for ln in out.splitlines() if ln.startswith("PLAN")][-1]
    return f"{name}{' (1 thread)' if threads else ''}", json.loads(line[4:])


def _merge(tables):
    merged = {}
    for table in tables:
        for key, entries in table.items():
            have = merged.setdefault(key, [])
            for entry in entries:
                if entry not in have:
                    have.append(entry)
    return dict(sorted(merged.items()))


def main():
    p = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    p.add_argument("--jobs", type=int, default=2, help="recording processes at once")
    p.add_argument("--check", action="store_true",
                   help="record, compare with the file, write nothing; exit 1 if they differ")
    a = p.parse_args()
    from nbdl.executor import compile_plan
    from nbdl.precompile import WORKLOADS
    sys.path.insert(0, os.path.join(ROOT, "perf"))
    from test_cold_start import CASES
    # the cold-start cases as perf/README.md runs them (one thread: serial
    # kernels) and as a user does; the workloads with the user's defaults
    jobs = ([("case", n, t) for t in ("1", "") for n in CASES]
            + [("workload", n, "") for n in WORKLOADS])
    plans, followers = [], []
    with ThreadPoolExecutor(a.jobs) as ex:
        for name, rec in ex.map(_record, jobs):
            print(f"  {name:<40} {len(rec['plan']):4d} kernels with callees, "
                  f"{sum(len(v) for v in rec['followers'].values()):3d} followers", flush=True)
            plans.append(rec["plan"])
            followers.append(rec["followers"])
    merged, after = _merge(plans), _merge(followers)
    # every entry must read back as written
    for key, nested in merged.items():
        for _, _, enc in nested:
            assert compile_plan.encode_sig(compile_plan.decode_sig(enc)) == enc, (key, enc)
    for key, entries in after.items():
        for _, enc in entries:
            assert compile_plan.encode_sig(compile_plan.decode_sig(enc)) == enc, (key, enc)
    doc = {"about": "written by tools/compile_plan.py; see nbdl/executor/compile_plan.py",
           "plan": merged, "followers": after}
    if a.check:
        same = (compile_plan.load(compile_plan.PLAN_FILE) == merged
                and compile_plan.load_followers(compile_plan.PLAN_FILE) == after)
        print("plan up to date" if same else "plan differs from the kernels: rerun the tool")
        return 0 if same else 1
    with open(compile_plan.PLAN_FILE, "w") as f:
        json.dump(doc, f, indent=0, sort_keys=False)
        f.write("\n")
    print(f"wrote {compile_plan.PLAN_FILE}: {len(merged)} kernels, "
          f"{sum(len(v) for v in merged.values())} callee entries, "
          f"{sum(len(v) for v in after.values())} followers of {len(after)} training graphs")
    return 0


if __name__ == "__main__":
    sys.exit(main())
