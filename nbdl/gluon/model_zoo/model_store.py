"""Where pretrained parameter files are looked up.

nbdl downloads nothing: a pretrained model is ``<root>/<name>.params``, a
file written by ``save_parameters`` (or converted from MXNet's model zoo),
placed there by the user."""
import os

from ...errors import NbdlError

DEFAULT_ROOT = os.path.join("~", ".nbdl", "models")


class PretrainedFileError(NbdlError, FileNotFoundError):
    """A pretrained model was asked for but its parameter file is not there."""


def get_model_file(name, root=DEFAULT_ROOT):
    """The path of ``<root>/<name>.params``; raises ``PretrainedFileError``
    naming the file it expected when it is missing."""
    root = os.path.abspath(os.path.expanduser(root))
    path = os.path.join(root, f"{name}.params")
    if not os.path.isfile(path):
        raise PretrainedFileError(
            f"pretrained parameters for {name!r} not found: expected the file {path} "
            f"(nbdl downloads nothing; save the parameters there with "
            f"net.save_parameters({path!r}), or pass root= the folder that holds "
            f"{name}.params)")
    return path


def load_pretrained(net, name, root=DEFAULT_ROOT, device=None):
    """Load ``<root>/<name>.params`` into ``net`` (see ``get_model_file``)."""
    net.load_parameters(get_model_file(name, root), device=device)
    return net
