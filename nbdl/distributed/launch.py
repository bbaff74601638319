"""``python -m nbdl.distributed.launch -n 4 [--hosts a,b | --hostfile f] train.py [args]``:
run ``train.py`` as a job of ``-n`` ranks through MPICH's ``mpiexec`` (the
one the ``mpich`` wheel installed beside this Python, else the first on
``PATH``), for users who do not know MPI.  ``mpiexec -n 4 python train.py``
does the same.

On one machine nothing else is needed.  Across machines every host needs
the same Python environment (same paths) and the script, passwordless
``ssh`` from the first host to the others, and network access between them;
name the hosts with ``--hosts a,b`` (ranks are dealt out round-robin; write
``a:2,b:2`` for two ranks on each) or a hostfile of ``host:ranks`` lines
(``--hostfile hosts.txt``).  ``--dry-run`` prints the command instead.
"""
import argparse
import os
import shutil
import subprocess
import sys

from ..collective import INSTALL


def find_mpiexec():
    """The ``mpiexec`` to use: beside this Python first (a virtual
    environment with the ``mpich`` wheel), then on ``PATH``; None if none."""
    here = os.path.join(os.path.dirname(sys.executable), "mpiexec")
    if os.path.isfile(here) and os.access(here, os.X_OK):
        return here
    return shutil.which("mpiexec")


def build_command(args, mpiexec):
    """The ``mpiexec`` command line for parsed ``args``.

    Parameters
    ----------
    args : argparse.Namespace
        ``num_ranks``, ``hosts``, ``hostfile``, ``script``, ``script_args``,
        ``env`` (``KEY=VALUE`` strings).
    mpiexec : str
        The ``mpiexec`` program.
    """
    cmd = [mpiexec, "-n", str(args.num_ranks)]
    if args.hosts:
        cmd += ["-hosts", args.hosts]
    if args.hostfile:
        cmd += ["-f", args.hostfile]
    for kv in args.env or ():
        key, _, value = kv.partition("=")
        cmd += ["-genv", key, value]
    return cmd + [sys.executable, args.script] + list(args.script_args)


def main(argv=None):
    """Parse ``argv`` (default ``sys.argv[1:]``), run the job and return
    its exit status (non-zero when any rank failed).

    Parameters
    ----------
    argv : list of str, optional
        The arguments.
    """
    parser = argparse.ArgumentParser(
        prog="python -m nbdl.distributed.launch",
        description="Run a training script as an MPI job of N ranks (mpiexec underneath).",
        epilog="Across machines: the same environment on every host, passwordless ssh from "
               "this host, then --hosts a,b (or a:2,b:2) or --hostfile FILE with host:ranks "
               "lines.")
    parser.add_argument("-n", "--num-ranks", type=int, required=True, help="number of ranks")
    parser.add_argument("--hosts", help="comma-separated hosts (host or host:ranks)")
    parser.add_argument("--hostfile", help="a file of host[:ranks] lines")
    parser.add_argument("--env", action="append", metavar="KEY=VALUE",
                        help="an environment variable for every rank (repeatable)")
    parser.add_argument("--dry-run", action="store_true", help="print the command only")
    parser.add_argument("script", help="the Python script to run")
    parser.add_argument("script_args", nargs=argparse.REMAINDER,
                        help="arguments of the script")
    args = parser.parse_args(argv)
    if args.num_ranks < 1:
        parser.error(f"-n must be at least 1, got {args.num_ranks}")
    if args.hosts and args.hostfile:
        parser.error("give --hosts or --hostfile, not both")
    mpiexec = find_mpiexec()
    if mpiexec is None:
        sys.stderr.write(f"nbdl.distributed.launch: no mpiexec found beside {sys.executable} "
                         f"or on PATH; install MPI: {INSTALL}\n")
        return 127
    cmd = build_command(args, mpiexec)
    if args.dry_run:
        print(" ".join(cmd))
        return 0
    return subprocess.call(cmd)


if __name__ == "__main__":
    sys.exit(main())
