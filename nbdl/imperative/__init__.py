"""nbdl.imperative: ops run now, on arrays, and the tape that differentiates them.

The runtime under ``NDArray`` (MXNet's Imperative): ``invoke`` (one op on
arrays, the eager caches of ``nbdl.runner`` behind it; ``invoke_scalars``
for ops with scalar attributes), ``arguments`` (MXNet's calling convention
of ``nd.<op>``), ``state`` (recording and training flags), ``tape`` (what a
recorded call leaves, variables), ``engine`` (the reverse pass through the
ops' gradient rules and the gradient-accumulation policy).  It works on
``base.NDArrayBase`` instances and makes the class of its inputs, so
``nbdl.array.NDArray`` sits above it (docs/architecture.md)."""
