"""Every public class, function and method nbdl's namespaces export has a
docstring (``help(nbdl.gluon.nn.Dense)`` is documentation): a method may
inherit its base's, as ``help`` shows it."""
import importlib
import inspect
import warnings

NAMESPACES = (
    "nbdl", "nbdl.gluon", "nbdl.gluon.nn", "nbdl.gluon.rnn", "nbdl.gluon.loss",
    "nbdl.gluon.data", "nbdl.gluon.data.vision", "nbdl.gluon.data.vision.transforms",
    "nbdl.gluon.model_zoo.vision", "nbdl.gluon.contrib", "nbdl.gluon.utils", "nbdl.metric",
    "nbdl.optimizer", "nbdl.initializer", "nbdl.lr_scheduler", "nbdl.io", "nbdl.module",
    "nbdl.ndarray", "nbdl.ndarray.random", "nbdl.symbol", "nbdl.symbol.random", "nbdl.kvstore",
    "nbdl.autograd", "nbdl.test_utils", "nbdl.callback", "nbdl.profiler", "nbdl.np", "nbdl.npx",
    "nbdl.executor", "nbdl.recordio", "nbdl.distributed", "nbdl.util", "nbdl.context",
    "nbdl.name", "nbdl.attribute", "nbdl.model", "nbdl.visualization", "nbdl.rnn", "nbdl.onnx",
    "nbdl.contrib", "nbdl.runtime", "nbdl.random",
)


def _ours(obj):
    return (getattr(obj, "__module__", None) or "").startswith("nbdl")


def _undocumented():
    missing = set()
    for modname in NAMESPACES:
        module = importlib.import_module(modname)
        for name in dir(module):
            if name.startswith("_"):
                continue
            obj = getattr(module, name)
            if inspect.isclass(obj) and _ours(obj):
                if not (obj.__doc__ or "").strip():
                    missing.add(f"{obj.__module__}.{obj.__qualname__}")
                for mname, fn in inspect.getmembers(obj):
                    if mname.startswith("_") or not inspect.isfunction(fn) or not _ours(fn):
                        continue
                    if not (inspect.getdoc(getattr(obj, mname)) or "").strip():
                        missing.add(f"{fn.__module__}.{fn.__qualname__}")
            elif inspect.isfunction(obj) and _ours(obj) and not (obj.__doc__ or "").strip():
                missing.add(f"{obj.__module__}.{obj.__qualname__}")
    return sorted(missing)


def test_public_api_has_docstrings():
    with warnings.catch_warnings():      # reading deprecated properties (Context.default_ctx)
        warnings.simplefilter("ignore", DeprecationWarning)
        missing = _undocumented()
    assert missing == []
