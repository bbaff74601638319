"""nbdl._docs.shared_doc: a named block goes into a docstring at its line,
indented as that line; a block the docstring does not name is an error."""
import pytest

from nbdl._docs import shared_doc

_BLOCK = """
comm : Comm, optional
    The communicator.

    (default: the world's)
"""


def test_block_is_put_at_its_line_with_that_lines_indent():
    class Holder:
        @shared_doc(job=_BLOCK)
        def method(self, comm=None):
            """Wait.

            Parameters
            ----------
            x : int
                A number.
            {job}
            """

    assert Holder.method.__doc__ == (
        "Wait.\n\n"
        "            Parameters\n"
        "            ----------\n"
        "            x : int\n"
        "                A number.\n"
        "            comm : Comm, optional\n"
        "                The communicator.\n"
        "\n"
        "                (default: the world's)\n"
        "            ")


def test_a_class_docstring_takes_blocks_too():
    @shared_doc(job=_BLOCK)
    class Thing:
        """A thing.

        {job}
        """

    assert "\n        comm : Comm, optional\n            The communicator.\n" in Thing.__doc__
    assert "{job}" not in Thing.__doc__


def test_a_block_the_docstring_does_not_name_raises():
    with pytest.raises(ValueError, match=r"has no line for \['job'\]"):
        @shared_doc(job=_BLOCK)
        def f():
            """No placeholder here; {job} inside a sentence does not count."""


def test_the_package_docstrings_have_no_placeholder_left():
    from nbdl.collective import ops
    from nbdl.distributed import api
    from nbdl.np import linalg, sorting
    from nbdl import util
    for fn in (ops.allreduce, ops.barrier, api.allreduce, api.broadcast_, linalg.det,
               sorting.argsort, util.use_np):
        assert "{" not in fn.__doc__, fn
        assert "Parameters\n" in fn.__doc__
