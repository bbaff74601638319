"""optimizer.Updater / get_updater (MXNet 1.x): states per key, updates
against the optimizer by hand, get_states/set_states (no pickle) and their
errors."""
import io
import json

import numpy as np
import pytest

import nbdl
from nbdl import optimizer as opt
from nbdl.optimizer import OptimizerError
from nbdl.optimizer import state_file


def _w(values, device=None):
    return nbdl.nd.array(np.asarray(values, np.float32), ctx=device)


def test_updater_keeps_a_state_per_key_and_matches_the_optimizer():
    upd = opt.get_updater(opt.SGD(learning_rate=0.1, momentum=0.5))
    assert isinstance(upd, opt.Updater)
    w1, w2 = _w([1.0, 2.0]), _w([3.0])
    for _ in range(2):
        upd([1, "b"], [_w([1.0, -1.0]), _w([2.0])], [w1, w2])
    # by hand: mom = 0.5 mom - 0.1 g; w += mom
    m1, r1 = np.zeros(2), np.array([1.0, 2.0])
    for _ in range(2):
        m1 = 0.5 * m1 - 0.1 * np.array([1.0, -1.0])
        r1 = r1 + m1
    np.testing.assert_allclose(w1.asnumpy(), r1, rtol=1e-6)
    np.testing.assert_allclose(w2.asnumpy(), [3.0 - 0.2 - 0.3], rtol=1e-6)
    assert sorted(upd.states, key=str) == [1, "b"]
    with pytest.raises(OptimizerError, match="must be lists of as many arrays"):
        upd([1, 2], [_w([1.0])], [w1])
    with pytest.raises(OptimizerError, match="optimizer must be an nbdl.optimizer.Optimizer, got str"):
        opt.Updater("sgd")


def test_set_states_restores_and_moves_states_to_the_weights_device():
    upd = opt.get_updater(opt.Adam(learning_rate=0.1))
    w = _w([1.0, 2.0], nbdl.cpu(1))
    upd(0, _w([0.5, 0.5], nbdl.cpu(1)), w)
    data = upd.get_states(dump_optimizer=True)
    fresh = opt.get_updater(opt.SGD())
    fresh.set_states(data)
    assert isinstance(fresh.optimizer, opt.Adam) and fresh.optimizer.num_update == 1
    assert fresh.states_synced == {0: False}
    w_again = _w(w.asnumpy(), nbdl.cpu(1))
    g = _w([0.1, -0.3], nbdl.cpu(1))
    fresh(0, g, w_again)
    upd(0, g, w)
    assert all(s.context == nbdl.cpu(1) for s in fresh.states[0])
    np.testing.assert_allclose(w_again.asnumpy(), w.asnumpy(), rtol=1e-6)
    # without dump_optimizer the updater keeps its optimizer
    keep = opt.get_updater(opt.Adam(learning_rate=0.1))
    before = keep.optimizer
    keep.set_states(upd.get_states())
    assert keep.optimizer is before


def _edit(data, change):
    header, arrays = state_file.unpack(data, "x", "container", OptimizerError)
    change(header, arrays)
    return state_file.pack(header, arrays)


@pytest.mark.parametrize("change, words", [
    (lambda h, a: h.update(format="nbdl-trainer-states"), "not an Updater state container"),
    (lambda h, a: a.pop("state0_0"), "array 'state0_0' of key 0 is missing"),
    (lambda h, a: h["states"][0].update(structure=7), "malformed"),
    (lambda h, a: h["states"].append(dict(h["states"][0])), "repeated state key 0"),
    (lambda h, a: h["optimizer"].update(name="nosuch"), "unknown optimizer 'nosuch'"),
])
def test_bad_state_data_raises_and_changes_nothing(change, words):
    upd = opt.get_updater(opt.Adam())
    upd(0, _w([1.0]), _w([2.0]))
    bad = _edit(upd.get_states(dump_optimizer=True), change)
    before_opt, before_states = upd.optimizer, dict(upd.states)
    with pytest.raises(OptimizerError, match=words):
        upd.set_states(bad)
    assert upd.optimizer is before_opt and upd.states == before_states
    with pytest.raises(OptimizerError, match="not a readable optimizer state container"):
        upd.set_states(b"garbage")


def test_states_are_plain_npz_with_a_json_header():
    upd = opt.get_updater(opt.SGD(momentum=0.9))
    upd("w", _w([1.0]), _w([2.0]))

    with np.load(io.BytesIO(upd.get_states()), allow_pickle=False) as npz:
        header = json.loads(npz["__header__"].tobytes())
        assert header["states"] == [{"key": "w", "structure": "a"}]
        np.testing.assert_allclose(npz["state0_0"], upd.states["w"].asnumpy())
    upd.states[(1, 2)] = None
    with pytest.raises(OptimizerError, match=r"key \(1, 2\) is not an int or a str"):
        upd.get_states()
