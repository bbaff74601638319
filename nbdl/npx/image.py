"""``nbdl.npx.image``: Gluon 2.0's ``mx.npx.image`` spellings of the
``_image_*`` ops (``npx.image.to_tensor``), eager on NDArrays and graph nodes
on Symbols, with MXNet's arguments (attributes by keyword or by position
after the image)."""
from .. import ndarray as _nd
from .. import symbol as _sym
from ..np._dispatch import is_symbol


def __getattr__(name):
    if name.startswith("__"):
        raise AttributeError(name)
    eager = getattr(_nd.image, name)      # AttributeError naming the op when there is none
    graph = getattr(_sym.image, name)

    def fn(data, *args, **kwargs):
        return (graph if is_symbol(data) else eager)(data, *args, **kwargs)
    fn.__name__ = fn.__qualname__ = name
    fn.__doc__ = eager.__doc__
    globals()[name] = fn
    return fn


def __dir__():
    return dir(_nd.image)
