"""``python -m nbdl.mxnet [--force] script.py [args...]`` or
``python -m nbdl.mxnet [--force] -m module [args...]``: run MXNet 1.x code
unchanged on nbdl.

The ``mxnet`` alias (``nbdl.alias_mxnet``) is installed, then the script or
module runs as ``python script.py args...`` / ``python -m module args...``
would run it: as ``__main__``, with ``sys.argv`` set to the script (or the
module's file) followed by its arguments, and ``sys.path[0]`` the script's
directory (the current directory for ``-m``).  ``--force`` installs the alias
even over a real MXNet (with a warning).
"""
import os
import runpy
import sys

USAGE = ("usage: python -m nbdl.mxnet [--force] script.py [args...]\n"
         "       python -m nbdl.mxnet [--force] -m module [args...]\n"
         "Runs MXNet 1.x code with 'import mxnet' resolving to nbdl.")


def main(argv=None):
    """Run a script or module with the ``mxnet`` alias installed.

    Parameters
    ----------
    argv : list of str, optional
        The command line after ``python -m nbdl.mxnet`` (default
        ``sys.argv[1:]``).

    Returns
    -------
    int
        The exit status when nothing was run (usage errors: 2; ``-h``: 0);
        otherwise whatever the script does (its ``SystemExit`` and
        exceptions propagate as under ``python script.py``)."""
    argv = list(sys.argv[1:] if argv is None else argv)
    force = False
    while argv and argv[0] in ("--force", "-h", "--help"):
        if argv[0] != "--force":
            print(USAGE)
            return 0
        force = True
        argv.pop(0)
    if not argv:
        print(USAGE, file=sys.stderr)
        return 2
    if argv[0] == "-m":
        if len(argv) < 2:
            print("python -m nbdl.mxnet: -m needs a module name\n" + USAGE, file=sys.stderr)
            return 2
        module, args = argv[1], argv[2:]
        script = None
    else:
        script, args = argv[0], argv[1:]
        if not os.path.exists(script):
            print(f"python -m nbdl.mxnet: can't open file {os.path.abspath(script)!r}: "
                  f"no such file", file=sys.stderr)
            return 2

    from . import alias_mxnet
    alias_mxnet(force=force)
    if script is None:
        import importlib.util
        try:
            found = importlib.util.find_spec(module) is not None
        except (ImportError, ValueError):     # a missing parent package, or an empty name
            found = False
        if not found:
            print(f"python -m nbdl.mxnet: No module named {module!r}", file=sys.stderr)
            return 1
    if script is not None:
        sys.argv = [script] + args
        sys.path[0] = os.path.dirname(os.path.abspath(script))
        runpy.run_path(script, run_name="__main__")
    else:
        sys.argv = [module] + args      # run_module puts the module's file in argv[0]
        runpy.run_module(module, run_name="__main__", alter_sys=True)
    return 0


if __name__ == "__main__":
    sys.exit(main())
