"""Where pretrained parameter files are looked up.

nbdl downloads nothing: a pretrained model is ``<root>/<name>.params``, a
file written by ``save_parameters``, or MXNet 1.x's model-store file as
MXNet names it, ``<root>/<name>-<8 hex digits>.params`` (the files of
``~/.mxnet/models``, whose MXNet 1.x prefixed names ``load_parameters``
matches by creation order), placed there by the user."""
import os
import re

from ...errors import NbdlError

DEFAULT_ROOT = os.path.join("~", ".nbdl", "models")


class PretrainedFileError(NbdlError, FileNotFoundError):
    """A pretrained model was asked for but its parameter file is not there."""


def get_model_file(name, root=DEFAULT_ROOT):
    """The path of ``<root>/<name>.params``, else of MXNet's model-store
    file ``<root>/<name>-<8 hex digits>.params`` when exactly one is there;
    raises ``PretrainedFileError`` naming the file it expected when neither
    is, or when several model-store files leave the choice open."""
    root = os.path.abspath(os.path.expanduser(root))
    path = os.path.join(root, f"{name}.params")
    if os.path.isfile(path):
        return path
    pattern = re.compile(re.escape(name) + r"-[0-9a-f]{8}\.params")
    store = sorted(f for f in (os.listdir(root) if os.path.isdir(root) else [])
                   if pattern.fullmatch(f) and os.path.isfile(os.path.join(root, f)))
    if len(store) == 1:
        return os.path.join(root, store[0])
    if store:
        raise PretrainedFileError(
            f"pretrained parameters for {name!r}: {root} holds no {name}.params but several "
            f"MXNet model-store files ({', '.join(store)}); keep one, or copy the one to use "
            f"to {path}")
    raise PretrainedFileError(
        f"pretrained parameters for {name!r} not found: expected the file {path} "
        f"(or MXNet's model-store file {name}-<8 hex digits>.params there; nbdl downloads "
        f"nothing: save the parameters there with net.save_parameters({path!r}), or pass "
        f"root= the folder that holds {name}.params)")


def load_pretrained(net, name, root=DEFAULT_ROOT, device=None):
    """Load the file ``get_model_file`` finds into ``net``: structural names
    (``save_parameters``) or MXNet 1.x's prefixed names (its model store,
    ``collect_params().save``, ``save_params``), see ``Block.load_parameters``."""
    net.load_parameters(get_model_file(name, root), device=device)
    return net
