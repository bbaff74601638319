"""Gluon's vision model zoo: ``get_model(name)`` with MXNet Gluon's model
names, and one constructor function per model (``resnet18_v1``,
``mobilenet1_0``, ``squeezenet1_1``, ...)."""
from ....errors import NbdlError
from .resnet import *  # noqa: F401,F403
from .vgg import *  # noqa: F401,F403
from .alexnet import *  # noqa: F401,F403
from .densenet import *  # noqa: F401,F403
from .squeezenet import *  # noqa: F401,F403
from .inception import *  # noqa: F401,F403
from .mobilenet import *  # noqa: F401,F403

_models = {}
_models.update({f"resnet{n}_v{v}": globals()[f"resnet{n}_v{v}"]
                for v in (1, 2) for n in (18, 34, 50, 101, 152)})
_models.update({f"vgg{n}{bn}": globals()[f"vgg{n}{bn}"]
                for n in (11, 13, 16, 19) for bn in ("", "_bn")})
_models["alexnet"] = globals()["alexnet"]
_models.update({f"densenet{n}": globals()[f"densenet{n}"] for n in (121, 161, 169, 201)})
_models["squeezenet1.0"] = squeezenet1_0  # noqa: F405
_models["squeezenet1.1"] = squeezenet1_1  # noqa: F405
_models["inceptionv3"] = inception_v3  # noqa: F405
_models.update({f"mobilenet{m}": globals()[f"mobilenet{m.replace('.', '_')}"]
                for m in ("1.0", "0.75", "0.5", "0.25")})
_models.update({f"mobilenetv2_{m}": globals()[f"mobilenet_v2_{m.replace('.', '_')}"]
                for m in ("1.0", "0.75", "0.5", "0.25")})


def get_model(name, **kwargs):
    """The model called ``name`` (Gluon's names: ``resnet50_v1``,
    ``mobilenet0.25``, ``mobilenetv2_1.0``, ``squeezenet1.1``, ``inceptionv3``, ...).
    Keyword arguments go to its constructor: ``pretrained=False``,
    ``classes=1000``, ``device=None``, ``root='~/.nbdl/models'``
    (``pretrained=True`` reads ``<root>/<name>.params``, or MXNet's
    model-store file ``<root>/<name>-<hash>.params``, with structural or
    MXNet 1.x prefixed parameter names; nothing is downloaded)."""
    key = str(name).lower()
    if key not in _models:
        raise NbdlError(f"get_model: no model named {name!r}; available: "
                        f"{', '.join(sorted(_models))}")
    return _models[key](**kwargs)


def list_models():
    """The names ``get_model`` accepts."""
    return sorted(_models)
