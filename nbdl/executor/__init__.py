"""The executor layer: bind -> infer -> plan -> allocate -> compile a schedule."""
from .bind import GRAD_ADD, GRAD_INPLACE, GRAD_NOP, GRAD_WRITE, bind, simple_bind  # noqa: F401
from .executor import Executor  # noqa: F401
