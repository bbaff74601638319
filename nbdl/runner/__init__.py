"""nbdl.runner: one op call on device arrays, made ready and run.

``call.prepare`` is the one place an op call (OpDef, attributes, shapes,
dtypes, device, write requests) becomes a ``PreparedCall``: its temps,
in-place pairs, shape-only inputs and launch per training flag.  The
executor's schedule, eager calls (``eager``: one-node schedules with a
cache) and the reference interpreter use it; ``buffers`` holds the plain
functions on device arrays' memory they share."""
