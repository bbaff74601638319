"""One side of a ``side_by_side.py`` row, in its own process: builds row
``ROW`` of the workload module ``MODULE`` (``perf/workloads.py`` for nbdl,
``mxnet_reference.py`` / ``torch_reference.py`` for the peers), then answers
requests on stdin, one JSON object a line:

- ``{"seconds": s, "min": a, "max": b}``: run the step at least ``a`` and at
  most ``b`` times, until ``s`` seconds have passed; reply ``{"times": [...]}``
  (seconds per unit: a step's time divided by the row's ``per``);
- ``{"profile": n}``: run the step ``n`` times under the runtime's own
  profiler (``nbdl.profiler`` / ``mxnet.profiler``, aggregate statistics)
  and reply ``{"ops": {name: [count, total ms]}, "wall": seconds}`` (used by
  ``op_breakdown.py``);
- ``{"quit": true}``.

It imports neither nbdl nor a peer itself (the module does), so it runs
under any of the three interpreters.  Replies go to the original stdout;
whatever the libraries print goes to stderr.

    python worker.py MODULE ROW
"""
import importlib.util
import json
import os
import sys
import time


def main(module_path, row):
    proto = os.fdopen(os.dup(1), "w")
    os.dup2(2, 1)                      # library output away from the replies
    sys.path.insert(0, os.path.dirname(os.path.abspath(module_path)))
    spec = importlib.util.spec_from_file_location("_workloads", module_path)
    mod = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(mod)
    t = time.perf_counter()
    step, per = mod.ROWS[row]()
    step()
    proto.write(json.dumps({"ready": True, "build_s": time.perf_counter() - t}) + "\n")
    proto.flush()
    for line in sys.stdin:
        req = json.loads(line)
        if req.get("quit"):
            break
        if "profile" in req:
            proto.write(json.dumps(_profile(step, req["profile"])) + "\n")
            proto.flush()
            continue
        times, t_end = [], time.perf_counter() + req["seconds"]
        while len(times) < req["max"] and (len(times) < req["min"] or time.perf_counter() < t_end):
            t0 = time.perf_counter()
            step()
            times.append((time.perf_counter() - t0) / per)
        proto.write(json.dumps({"times": times}) + "\n")
        proto.flush()


def _profile(step, n):
    """``n`` steps under the profiler of whichever runtime the workload
    module imported: per operator, its count and total milliseconds."""
    runtime = sys.modules.get("nbdl") or sys.modules.get("mxnet")
    prof = runtime.profiler
    prof.set_config(profile_all=True, aggregate_stats=True, filename=os.devnull)
    prof.dumps(reset=True)
    prof.set_state("run")
    t = time.perf_counter()
    for _ in range(n):
        step()
    wall = time.perf_counter() - t
    prof.set_state("stop")
    doc = json.loads(prof.dumps(reset=True, format="json"))
    # the operator domain only: not the API calls or executor ranges around them
    rows = next((r for d, r in doc.get("Time", {}).items() if d.lower() == "operator"), {})
    return {"ops": {name: (row["Count"], row["Total"]) for name, row in rows.items()},
            "wall": wall}


if __name__ == "__main__":
    main(sys.argv[1], sys.argv[2])
