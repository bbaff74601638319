"""The CNN example trains, hybridized, to at least 97% held-out accuracy on
scikit-learn's digits, and BatchNorm/Dropout follow the training flag."""
import importlib.util
import pathlib


def _example():
    path = pathlib.Path(__file__).resolve().parents[2] / "examples" / "cnn_digits.py"
    spec = importlib.util.spec_from_file_location("cnn_digits", path)
    mod = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(mod)
    return mod


def test_cnn_on_digits_reaches_97_percent_hybridized():
    acc, net = _example().run(epochs=8, verbose=False)
    assert net._active                       # it trained hybridized
    assert acc >= 0.97, acc
