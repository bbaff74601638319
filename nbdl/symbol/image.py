"""``nbdl.sym.image``: MXNet's ``mx.sym.image`` spellings; ``image.X`` builds a
node of the op ``_image_X`` (``sym.image.to_tensor(x)`` is a
``_image_to_tensor`` node ``to_tensor0``); see docs/ops.md, "Image operators"."""
from ..ops.registry import op_namespace
from .prefixed import short_named

PREFIX = "_image_"
__getattr__, __dir__ = op_namespace(PREFIX, "nbdl.sym.image", short_named(PREFIX), globals())
