"""Gluon's model zoo: the standard vision architectures with Gluon 2.0's
layer layout and parameter names (``nbdl.gluon.model_zoo.vision``).
Pretrained parameters are read from local files only (``model_store``):
nbdl's own (``save_parameters``) or MXNet 1.x's model-store files."""
from . import model_store, vision  # noqa: F401
from .model_store import PretrainedFileError, get_model_file  # noqa: F401
from .vision import get_model  # noqa: F401
