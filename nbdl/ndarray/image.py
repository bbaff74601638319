"""``nbdl.nd.image``: MXNet's ``mx.nd.image`` spellings.  ``image.X`` is the
op ``_image_X`` of the op table (``nd.image.to_tensor`` runs
``_image_to_tensor``); see docs/ops.md, "Image operators"."""
from ..ops.registry import op_namespace
from . import namespace as _namespace

__getattr__, __dir__ = op_namespace("_image_", "nbdl.nd.image", _namespace.function_for)
