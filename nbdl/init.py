"""``nbdl.init``: another name for ``nbdl.initializer`` (MXNet's ``mx.init``),
so that ``import nbdl.init`` and ``nbdl.init.Xavier()`` both work."""
import sys

from . import initializer as _initializer

sys.modules[__name__] = _initializer
