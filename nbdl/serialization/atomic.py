"""Crash-safe writes: write a temporary file in the destination's directory,
flush it to disk, then rename it over the destination.

A crash or an exception in the middle of a save leaves the previous file
untouched (the rename is atomic on POSIX and on Windows' ``os.replace``), and
the temporary file is removed on any Python-level failure.
"""
import os
import secrets
import stat

from .errors import FileError, MissingFileError, ArgumentError


def as_path(fname, what):
    """``fname`` as a str path; a ``ArgumentError`` when it is not a path."""
    if isinstance(fname, bytes):
        return os.fsdecode(fname)
    if not isinstance(fname, (str, os.PathLike)):
        raise ArgumentError(f"{what}: the file name must be a str or os.PathLike, "
                            f"got {type(fname).__name__}")
    path = os.fspath(fname)
    if not isinstance(path, str):
        path = os.fsdecode(path)
    if not path:
        raise ArgumentError(f"{what}: the file name is empty")
    return path


def _create_temp(directory, base, path):
    for _ in range(100):
        tmp = os.path.join(directory, f".{base}.{os.getpid()}.{secrets.token_hex(4)}.tmp")
        try:
            # 0o666 lets the process umask decide the mode, as open() would.
            fd = os.open(tmp, os.O_WRONLY | os.O_CREAT | os.O_EXCL | getattr(os, "O_BINARY", 0),
                         0o666)
        except FileExistsError:
            continue
        except FileNotFoundError as e:
            raise MissingFileError(f"cannot save {path!r}: the directory {directory!r} "
                                   f"does not exist") from e
        except OSError as e:
            raise FileError(f"cannot save {path!r}: cannot create a temporary file in "
                            f"{directory!r}: {e.strerror or e}") from e
        return fd, tmp
    raise FileError(f"cannot save {path!r}: no free temporary file name in {directory!r}")


def atomic_write(path, write):
    """Call ``write(f)`` on a binary file object and move the result to
    ``path`` only once it is complete and flushed to disk."""
    # Write through a symlink to its target, as a plain open() would.
    target = os.path.realpath(path)
    if os.path.isdir(target):
        raise FileError(f"cannot save {path!r}: it is a directory")
    directory, base = os.path.split(target)
    fd, tmp = _create_temp(directory, base, path)
    try:
        with os.fdopen(fd, "wb") as f:
            write(f)
            f.flush()
            os.fsync(f.fileno())
        try:  # keep the mode of the file being replaced
            os.chmod(tmp, stat.S_IMODE(os.stat(target).st_mode))
        except FileNotFoundError:
            pass
        os.replace(tmp, target)
    except BaseException as e:
        try:
            os.unlink(tmp)
        except OSError:
            pass
        if isinstance(e, OSError) and not isinstance(e, FileError):
            raise FileError(f"cannot save {path!r}: {e.strerror or e}") from e
        raise
    _sync_directory(directory)


def _sync_directory(directory):
    """Make the rename itself durable (POSIX only; best effort)."""
    if os.name != "posix":
        return
    try:
        dfd = os.open(directory, os.O_RDONLY)
    except OSError:
        return
    try:
        os.fsync(dfd)
    except OSError:
        pass
    finally:
        os.close(dfd)


def open_for_reading(fname, what):
    """Open an existing regular file for binary reading.  Anything else
    (missing, a directory, a FIFO or device that could block or never end)
    is a ``FileError`` naming the file."""
    path = as_path(fname, what)
    try:
        st = os.stat(path)
    except FileNotFoundError as e:
        raise MissingFileError(f"{what}: file {path!r} does not exist") from e
    except OSError as e:
        raise FileError(f"{what}: cannot access {path!r}: {e.strerror or e}") from e
    if not stat.S_ISREG(st.st_mode):
        kind = "a directory" if stat.S_ISDIR(st.st_mode) else "not a regular file"
        raise FileError(f"{what}: {path!r} is {kind}")
    try:
        return path, open(path, "rb")
    except OSError as e:
        raise FileError(f"{what}: cannot open {path!r}: {e.strerror or e}") from e
