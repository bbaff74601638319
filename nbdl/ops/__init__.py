"""The op table.  ``get_op(name)`` loads every family on first use."""
from .attrs import Attr  # noqa: F401
from .registry import (REQ_ADD, REQ_INPLACE, REQ_NULL, REQ_WRITE, Call, Launch, OpDef,  # noqa: F401
                       get_op, list_ops, register)
