"""Docstring blocks shared by several docstrings, written once.

Functions of one family often take the same arguments (a collective's
``what``/``comm``/``world``, a metric's ``name``/``output_names``/
``label_names``).  Their descriptions are written once as a block, and each
docstring names the block on a line of its own, ``{block}``, where the
block's lines go (indented as that line)::

    _JOB = '''
    comm : mpi4py.MPI.Comm, optional
        The communicator.
    '''

    @shared_doc(job=_JOB)
    def barrier(comm=None):
        '''Wait for every rank.

        Parameters
        ----------
        {job}
        '''

The finished docstring is an ordinary one: ``help()`` and the docs show the
block's lines in place.
"""
import textwrap


def shared_doc(**blocks):
    """Decorator putting the named ``blocks`` (parameter descriptions, a
    Returns section) into the docstring of a function or class at its
    ``{name}`` lines.

    Parameters
    ----------
    **blocks : str
        The blocks, by name (indented as they like: they are dedented, then
        indented as the line that names them).
    """
    lines_of = {name: textwrap.dedent(text).strip("\n").split("\n")
                for name, text in blocks.items()}

    def put(obj):
        out, used = [], set()
        for line in obj.__doc__.split("\n"):
            name = line.strip()[1:-1]
            if line.strip() == "{" + name + "}" and name in lines_of:
                indent = line[:len(line) - len(line.lstrip())]
                out.extend(indent + block_line if block_line else ""
                           for block_line in lines_of[name])
                used.add(name)
            else:
                out.append(line)
        if used != set(lines_of):
            raise ValueError(f"shared_doc: the docstring of {obj.__qualname__} has no "
                             f"line for {sorted(set(lines_of) - used)}")
        obj.__doc__ = "\n".join(out)
        return obj
    return put
