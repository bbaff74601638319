"""nbdl.profiler: real per-op events for eager ops and executor steps, the
Chrome trace file, MXNet's aggregate statistics, memory counters, user
annotations, errors for bad options, and results unchanged by profiling."""
import json

import numpy as np
import pytest

import nbdl
from nbdl import profiler, profiler_core
from nbdl.errors import ArgumentError


@pytest.fixture(autouse=True)
def clean_profiler(tmp_path):
    profiler.set_config(filename=str(tmp_path / "profile.json"))
    profiler_core.clear_events()
    profiler_core.clear_aggregate()
    yield
    profiler.set_state("stop")
    profiler.resume()
    profiler.set_config()
    profiler_core.clear_events()
    profiler_core.clear_aggregate()


def start(tmp_path, **kw):
    opts = dict(profile_all=True, aggregate_stats=True, filename=str(tmp_path / "profile.json"))
    opts.update(kw)
    profiler.set_config(**opts)
    profiler.set_state("run")


def trace(tmp_path):
    profiler.dump(finished=False)
    with open(tmp_path / "profile.json") as f:
        doc = json.load(f)
    assert doc["displayTimeUnit"] == "ms"
    return doc["traceEvents"]


def op_events(events):
    return [e for e in events if e["ph"] == "X" and e["cat"] == "operator"]


def counts(events):
    out = {}
    for e in op_events(events):
        out[e["name"]] = out.get(e["name"], 0) + 1
    return out


def eager_work(x, n):
    y = x
    for _ in range(n):
        y = nbdl.nd.relu(y) * 0.5 + x
    return y


def mlp_executor():
    sym = nbdl.sym
    out = sym.relu(sym.FullyConnected(sym.var("data"), num_hidden=4, name="fc"), name="act")
    ex = out.simple_bind(nbdl.cpu(), data=(2, 3))
    rng = np.random.RandomState(0)
    for name, a in ex.arg_dict.items():
        a[:] = rng.standard_normal(a.shape).astype(np.float32)
    return ex


def test_eager_ops_one_event_per_call(tmp_path):
    x = nbdl.nd.array(np.linspace(-1, 1, 6, dtype=np.float32).reshape(2, 3))
    eager_work(x, 1)           # compile and warm the fast path first
    start(tmp_path)
    eager_work(x, 3)
    profiler.set_state("stop")
    events = trace(tmp_path)
    assert counts(events) == {"relu": 3, "_mul_scalar": 3, "elemwise_add": 3}
    for e in op_events(events):
        assert e["dur"] >= 0 and isinstance(e["ts"], float)
        assert isinstance(e["pid"], int) and isinstance(e["tid"], int)
    stats = json.loads(profiler.dumps(format="json"))
    op = stats["Time"]["operator"]
    assert {k: v["Count"] for k, v in op.items()} == {"relu": 3, "_mul_scalar": 3,
                                                      "elemwise_add": 3}
    for v in op.values():
        assert v["Min"] <= v["Avg"] <= v["Max"] and v["Total"] >= v["Max"]
    assert stats["Unit"] == {"Time": "ms", "Memory": "kB"}


def test_executor_steps_one_event_each(tmp_path):
    ex = mlp_executor()
    ex.forward(is_train=True)
    ex.backward(nbdl.nd.ones((2, 4)))
    start(tmp_path)
    for _ in range(2):
        ex.forward(is_train=True)
        ex.backward(nbdl.nd.ones((2, 4)))
    ex.forward()
    profiler.set_state("stop")
    events = trace(tmp_path)
    ops = op_events(events)
    fwd = [(e["name"], e["args"]["node"], e["args"]["pass"]) for e in ops
           if e["args"]["pass"] != "backward"]
    assert fwd == [("FullyConnected", "fc", "fwd_train"), ("relu", "act", "fwd_train")] * 2 \
        + [("FullyConnected", "fc", "fwd_infer"), ("relu", "act", "fwd_infer")]
    n_back = len(ex._sched.backward)
    assert n_back > 0 and sum(e["args"]["pass"] == "backward" for e in ops) == 2 * n_back
    api = [e["name"] for e in events if e["ph"] == "X" and e["cat"] == "api"]
    assert api == ["Executor.forward", "Executor.backward"] * 2 + ["Executor.forward"]
    assert json.loads(profiler.dumps(format="json"))["Time"]["operator"]["FullyConnected"][
        "Count"] == 3


def test_executor_native_driver_is_replaced_by_timed_steps(tmp_path, monkeypatch):
    monkeypatch.setenv("NBDL_DRIVER", "1")
    monkeypatch.setenv("NBDL_DRIVER_MIN_STEPS", "2")
    ex = mlp_executor()
    ex.forward()
    assert ex._runner("fwd_infer").native
    want = ex.outputs[0].asnumpy().copy()
    start(tmp_path)
    ex.forward()
    profiler.set_state("stop")
    assert [e["name"] for e in op_events(trace(tmp_path))] == ["FullyConnected", "relu"]
    assert ex.outputs[0].asnumpy().tobytes() == want.tobytes()


def test_autograd_backward_ops_are_recorded(tmp_path):
    x = nbdl.nd.array(np.arange(1, 5, dtype=np.float32))
    x.attach_grad()
    start(tmp_path)
    with nbdl.autograd.record():
        y = nbdl.nd.sqrt(x)
    y.backward()
    profiler.set_state("stop")
    names = counts(trace(tmp_path))
    assert names.get("sqrt") == 1 and names.get("_backward_sqrt") == 1
    np.testing.assert_allclose(x.grad.asnumpy(), 0.5 / np.sqrt(np.arange(1, 5)), rtol=1e-6)


def test_stop_and_pause_stop_recording(tmp_path):
    x = nbdl.nd.ones((3,))
    start(tmp_path)
    nbdl.nd.relu(x)
    profiler.pause()
    nbdl.nd.relu(x)
    profiler.resume()
    nbdl.nd.sqrt(x)
    profiler.set_state("stop")
    nbdl.nd.relu(x)
    nbdl.nd.sqrt(x)
    assert counts(trace(tmp_path)) == {"relu": 1, "sqrt": 1}
    assert not (profiler_core.imperative or profiler_core.symbolic or profiler_core.memory)


def test_kinds_follow_the_options(tmp_path):
    ex = mlp_executor()
    x = nbdl.nd.ones((3,))
    start(tmp_path, profile_all=False, profile_imperative=False, profile_symbolic=True,
          profile_memory=False, profile_api=False)
    nbdl.nd.relu(x)
    ex.forward()
    profiler.set_state("stop")
    events = trace(tmp_path)
    assert [e["name"] for e in op_events(events)] == ["FullyConnected", "relu"]
    assert all(e["args"]["pass"] == "fwd_infer" for e in op_events(events))
    assert not [e for e in events if e["ph"] == "C" or e.get("cat") == "api"]


def test_memory_counters(tmp_path):
    start(tmp_path)
    ex = mlp_executor()
    a = nbdl.nd.relu(nbdl.nd.ones((250,)))
    profiler.set_state("stop")
    events = trace(tmp_path)
    arena = [e for e in events if e["ph"] == "C" and e["name"] == "Executor arena: cpu/0"]
    assert ex.memory_plan.arena_bytes > 0
    assert [e["args"]["Executor arena: cpu/0"] for e in arena] == [ex.memory_plan.arena_bytes]
    mem = [e["args"]["Memory: cpu/0"] for e in events
           if e["ph"] == "C" and e["name"] == "Memory: cpu/0"]
    assert mem and all(v >= 0 for v in mem)
    # The relu output: 250 float32 allocated after everything before it.
    assert max(mem) >= 1000 and a.shape == (250,)
    stats = json.loads(profiler.dumps(format="json"))
    row = stats["Memory"]["Device Storage"]["Memory: cpu/0"]
    assert row["Count"] == len(mem)
    assert row["Max"] == pytest.approx(max(mem) / 1e3, rel=1e-3)


def test_dumps_table_and_sorting(tmp_path):
    x = nbdl.nd.ones((4,))
    start(tmp_path)
    for _ in range(3):
        nbdl.nd.relu(x)
    nbdl.nd.sqrt(x)
    profiler.set_state("stop")
    text = profiler.dumps()
    assert text.startswith("\nProfile Statistics:\n\tNote the difference in units")
    lines = text.splitlines()
    i = lines.index("operator")
    assert lines[i + 1] == "================="
    assert lines[i + 2].split() == ["Name", "Total", "Count", "Time", "(ms)", "Min", "Time",
                                    "(ms)", "Max", "Time", "(ms)", "Avg", "Time", "(ms)"]
    body = {ln[:30].strip(): ln[30:41] for ln in lines[i + 4:] if ln[:30].strip()
            and not ln.startswith("=")}
    assert body["relu"].strip() == "3" and body["sqrt"].strip() == "1"
    for asc in (False, True):
        doc = json.loads(profiler.dumps(format="json", sort_by="count", ascending=asc))
        seq = [v["Count"] for v in doc["Time"]["operator"].values()]
        assert seq == sorted(seq, reverse=not asc)
    profiler.dumps(reset=True)
    assert "relu" not in profiler.dumps()


def test_dumps_empty_without_aggregate_stats(tmp_path):
    start(tmp_path, aggregate_stats=False)
    nbdl.nd.relu(nbdl.nd.ones((2,)))
    assert profiler.dumps() == ""
    assert counts(trace(tmp_path)) == {"relu": 1}


def test_dump_finished_starts_a_new_trace(tmp_path):
    x = nbdl.nd.ones((2,))
    start(tmp_path)
    nbdl.nd.relu(x)
    profiler.dump(False)
    size1 = (tmp_path / "profile.json").stat().st_size
    nbdl.nd.relu(x)
    profiler.dump(False)
    assert (tmp_path / "profile.json").stat().st_size > size1
    profiler.dump()                       # finished: written, then forgotten
    assert counts(trace(tmp_path)) == {}


def test_annotations(tmp_path):
    start(tmp_path)
    dom = profiler.Domain("PyDom")
    task = dom.new_task("work")
    task.start()
    task.stop()
    frame = profiler.Frame(dom, "iter")
    frame.start()
    frame.stop()
    ev = profiler.Event("ev")
    ev.start()
    ev.stop()
    c = dom.new_counter("ctr", 5)
    c += 2
    c -= 1
    dom.new_marker("mk").mark("thread")
    profiler.set_state("stop")
    task.start()
    task.stop()                        # not recorded: stopped
    events = trace(tmp_path)
    spans = [(e["name"], e["cat"]) for e in events if e["ph"] == "X"]
    assert spans == [("work", "PyDom"), ("iter", "PyDom,frame"), ("ev", "event")]
    assert [e["args"]["ctr"] for e in events if e["ph"] == "C" and e["name"] == "ctr"] == [5, 7, 6]
    marks = [e for e in events if e["ph"] == "i"]
    assert [(m["name"], m["s"], m["cat"]) for m in marks] == [("mk", "t", "PyDom,instant_marker")]
    assert json.loads(profiler.dumps(format="json"))["Time"]["PyDom"]["work"]["Count"] == 1
    with pytest.raises(ArgumentError, match="scope must be one of"):
        dom.new_marker("m").mark("galaxy")
    with pytest.raises(ArgumentError, match="stop\\(\\) without start\\(\\)"):
        task.stop()
    with pytest.raises(ArgumentError, match="domain must be a profiler.Domain"):
        profiler.Task("PyDom", "t")
    with pytest.raises(ArgumentError, match="must be an integer"):
        c.set_value("many")


def test_bad_options():
    with pytest.raises(ArgumentError, match="unknown option.*'bogus'.*profile_symbolic"):
        profiler.set_config(bogus=1)
    with pytest.raises(ArgumentError, match="profile_memory must be a boolean, got 'maybe'"):
        profiler.set_config(profile_memory="maybe")
    with pytest.raises(ArgumentError, match="dump_period must be a positive"):
        profiler.set_config(dump_period=0)
    with pytest.raises(ArgumentError, match="profile_process='server'"):
        profiler.set_config(profile_process="server")
    with pytest.raises(ArgumentError, match="state must be 'run' or 'stop', got 'go'"):
        profiler.set_state("go")
    with pytest.raises(ArgumentError, match="format must be 'table' or 'json'"):
        profiler.dumps(format="xml")
    with pytest.raises(ArgumentError, match="sort_by must be one of"):
        profiler.dumps(sort_by="name")
    with pytest.raises(ArgumentError, match="finished must be True or False"):
        profiler.dump(finished="yes")
    # MXNet's string forms of booleans are accepted.
    profiler.set_config(profile_all="True", aggregate_stats=0, continuous_dump="false")
    assert profiler_core.config["profile_all"] is True
    assert profiler_core.config["aggregate_stats"] is False


def test_results_bitwise_unchanged(tmp_path):
    rng = np.random.RandomState(1)
    x = nbdl.nd.array(rng.standard_normal((3, 5)).astype(np.float32))
    ex = mlp_executor()
    eager_ref = eager_work(x, 4).asnumpy().tobytes()
    ex.forward(is_train=True)
    ex.backward(nbdl.nd.ones((2, 4)))
    ex_ref = [ex.outputs[0].asnumpy().tobytes(), ex.grad_dict["fc_weight"].asnumpy().tobytes()]
    start(tmp_path)
    eager_on = eager_work(x, 4).asnumpy().tobytes()
    ex.forward(is_train=True)
    ex.backward(nbdl.nd.ones((2, 4)))
    ex_on = [ex.outputs[0].asnumpy().tobytes(), ex.grad_dict["fc_weight"].asnumpy().tobytes()]
    profiler.set_state("stop")
    assert eager_on == eager_ref and ex_on == ex_ref
    assert eager_work(x, 4).asnumpy().tobytes() == eager_ref


def test_deprecated_names_warn(tmp_path):
    with pytest.warns(DeprecationWarning):
        profiler.profiler_set_config(mode="all", filename=str(tmp_path / "old.json"))
    with pytest.warns(DeprecationWarning):
        profiler.profiler_set_state("run")
    nbdl.nd.relu(nbdl.nd.ones((2,)))
    with pytest.warns(DeprecationWarning):
        profiler.dump_profile()
    with open(tmp_path / "old.json") as f:
        assert counts(json.load(f)["traceEvents"]) == {"relu": 1}


def test_monitored_pass_keeps_its_callback(tmp_path):
    ex = mlp_executor()
    seen = []
    ex.set_monitor_callback(lambda name, arr: seen.append(name))
    start(tmp_path)
    ex.forward()
    profiler.set_state("stop")
    assert seen == ["fc_output", "act_output"]
    assert [e["name"] for e in op_events(trace(tmp_path))] == ["Executor.forward (monitored)"]


@pytest.mark.cuda
def test_gpu_eager_and_executor_events(tmp_path):
    """On a GPU (Numba's CUDA simulator in this suite) each timed op is
    followed by a device synchronisation; the events and memory counters
    name the GPU."""
    dev = nbdl.gpu(0)
    sym = nbdl.sym
    ex = sym.relu(sym.var("data"), name="act").simple_bind(dev, data=(2, 3))
    x = nbdl.nd.ones((2, 3), ctx=dev)
    nbdl.nd.relu(x)
    ex.forward()
    start(tmp_path)
    y = nbdl.nd.relu(x)
    ex.forward()
    profiler.set_state("stop")
    events = trace(tmp_path)
    assert [e["name"] for e in op_events(events)] == ["relu", "relu"]
    assert any(e["ph"] == "C" and e["name"] == "Memory: gpu/0" for e in events)
    np.testing.assert_array_equal(y.asnumpy(), np.ones((2, 3), np.float32))


def test_run_ends_a_pause(tmp_path):
    start(tmp_path)
    profiler.pause()
    profiler.set_state("stop")
    profiler.set_state("run")
    nbdl.nd.relu(nbdl.nd.ones((2,)))
    assert counts(trace(tmp_path)) == {"relu": 1}


def test_hybridized_gluon_block_runs_profiled_steps(tmp_path):
    net = nbdl.gluon.nn.Dense(4, in_units=3)
    net.initialize()
    net.hybridize()
    x = nbdl.nd.ones((2, 3))
    want = net(x).asnumpy().tobytes()
    start(tmp_path)
    got = net(x).asnumpy().tobytes()
    profiler.set_state("stop")
    assert got == want
    names = [e["name"] for e in op_events(trace(tmp_path))]
    assert names.count("FullyConnected") == 1
