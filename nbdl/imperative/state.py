"""Recording and training flags (thread-local), MXNet's autograd scopes."""
import threading

class _State(threading.local):
    # class attributes are the per-thread defaults; reading them is a plain
    # attribute access (the eager hot path reads ``_state`` directly)
    recording = False
    training = False


_state = _State()


def is_recording():
    """Whether operations are being recorded for ``backward`` (inside ``autograd.record()``)."""
    return _state.recording


def is_training():
    """Whether ops run in training mode (Dropout drops, BatchNorm uses batch statistics)."""
    return _state.training


def set_recording(is_recording):  # noqa: F811 - MXNet's parameter name
    """Set the recording flag; returns the previous value."""
    prev = _state.recording
    _state.recording = bool(is_recording)
    return prev


def set_training(train_mode):
    """Set the training flag; returns the previous value."""
    prev = _state.training
    _state.training = bool(train_mode)
    return prev


class _Scope:
    def __init__(self, recording, training):
        self._want = (recording, training)
        self._prev = None

    def __enter__(self):
        rec, train = self._want
        self._prev = (set_recording(rec) if rec is not None else None,
                      set_training(train) if train is not None else None)
        return self

    def __exit__(self, *exc):
        rec, train = self._want
        if rec is not None:
            set_recording(self._prev[0])
        if train is not None:
            set_training(self._prev[1])


def record(train_mode=True):
    """``with autograd.record():`` ops on NDArrays are taped for backward;
    ``train_mode`` sets the training flag (Dropout, BatchNorm)."""
    return _Scope(True, train_mode)


def pause(train_mode=False):
    """``with autograd.pause():`` ops are not taped inside."""
    return _Scope(False, train_mode)


def train_mode():
    """A scope in which ops run in training mode, recording unchanged
    (``with autograd.train_mode():``)."""
    return _Scope(None, True)


def predict_mode():
    """A scope in which ops run in inference mode, recording unchanged
    (``with autograd.predict_mode():``)."""
    return _Scope(None, False)
