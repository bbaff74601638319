"""User annotations for ``nbdl.profiler`` (MXNet 1.x's ``Domain``, ``Task``,
``Frame``, ``Event``, ``Counter``, ``Marker``): what they record goes into
the same trace and aggregate statistics as the ops.  Nothing is recorded
while the profiler is stopped or paused."""
from . import profiler_core as _core
from .errors import ArgumentError

_SCOPES = {"global": "g", "process": "p", "thread": "t", "task": "t", "marker": "t"}


def _name(where, name):
    if not isinstance(name, str) or not name:
        raise ArgumentError(f"{where}: name must be a non-empty string, got {name!r}")
    return name


def _domain(where, domain):
    if not isinstance(domain, Domain):
        raise ArgumentError(f"{where}: domain must be a profiler.Domain, "
                            f"got {type(domain).__name__}")
    return domain


class Domain:
    """A named group of tasks, frames, counters and markers: the category
    (``cat``) of their trace events and their table in ``dumps()``.

    Parameters
    ----------
    name : str
        Name of the domain.
    """

    def __init__(self, name):
        self.name = _name("profiler.Domain", name)

    def __str__(self):
        return self.name

    def new_task(self, name):
        """A ``Task`` of this domain.

        Parameters
        ----------
        name : str
            Name of the task.
        """
        return Task(self, name)

    def new_frame(self, name):
        """A ``Frame`` of this domain.

        Parameters
        ----------
        name : str
            Name of the frame.
        """
        return Frame(self, name)

    def new_counter(self, name, value=None):
        """A ``Counter`` of this domain.

        Parameters
        ----------
        name : str
            Name of the counter.
        value : int, optional
            Its first value.
        """
        return Counter(self, name, value)

    def new_marker(self, name):
        """A ``Marker`` of this domain.

        Parameters
        ----------
        name : str
            Name of the marker.
        """
        return Marker(self, name)


class _Duration:
    """A span between ``start()`` and ``stop()``, recorded at ``stop()`` as a
    complete event of category ``self._cat``."""

    _kind = "duration"

    def __init__(self, name, cat):
        self.name = _name(f"profiler.{type(self).__name__}", name)
        self._cat = cat
        self._t0 = None

    def start(self):
        """Start timing."""
        self._t0 = _core.now_ns()

    def stop(self):
        """Stop timing and record the span (when the profiler is recording)."""
        if self._t0 is None:
            raise ArgumentError(f"profiler.{type(self).__name__} {self.name!r}: stop() "
                                "without start()")
        t0, self._t0 = self._t0, None
        if _core.recording():
            _core.complete(self.name, self._cat, t0, _core.now_ns())

    def __str__(self):
        return self.name


class Task(_Duration):
    """A logical unit of work; every pass through ``start()``/``stop()`` is
    one event, and ``dumps()`` accumulates them under the domain.

    Parameters
    ----------
    domain : Domain
        The domain it belongs to (the events' category).
    name : str
        Name of the task.
    """

    def __init__(self, domain, name):
        super().__init__(name, _domain("profiler.Task", domain).name)


class Frame(_Duration):
    """A frame: a period such as one training iteration (category
    ``<domain>,frame``, as in MXNet's trace).

    Parameters
    ----------
    domain : Domain
        The domain it belongs to.
    name : str
        Name of the frame.
    """

    def __init__(self, domain, name):
        super().__init__(name, _domain("profiler.Frame", domain).name + ",frame")


class Event(_Duration):
    """A span of code outside any domain (category ``event``).

    Parameters
    ----------
    name : str
        Name of the event.
    """

    def __init__(self, name):
        super().__init__(name, "event")


class Counter:
    """A value tracked over time; every change is a counter event
    (``"ph": "C"``) in the trace.

    Parameters
    ----------
    domain : Domain
        The domain it belongs to.
    name : str
        Name of the counter.
    value : int, optional
        Its first value.
    """

    def __init__(self, domain, name, value=None):
        self.name = _name("profiler.Counter", name)
        self._cat = _domain("profiler.Counter", domain).name
        self.value = 0
        if value is not None:
            self.set_value(value)

    def _int(self, what, v):
        if isinstance(v, bool) or not isinstance(v, int) and not hasattr(v, "__index__"):
            raise ArgumentError(f"profiler.Counter {self.name!r}: {what} must be an integer, "
                                f"got {v!r}")
        return int(v)

    def set_value(self, value):
        """Set the counter.

        Parameters
        ----------
        value : int
            The new value.
        """
        self.value = self._int("value", value)
        if _core.recording():
            _core.counter(self.name, self._cat, self.value)

    def increment(self, delta=1):
        """Add ``delta`` to the counter.

        Parameters
        ----------
        delta : int
            Amount to add.
        """
        self.set_value(self.value + self._int("delta", delta))

    def decrement(self, delta=1):
        """Subtract ``delta`` from the counter.

        Parameters
        ----------
        delta : int
            Amount to subtract.
        """
        self.set_value(self.value - self._int("delta", delta))

    def __iadd__(self, delta):
        self.increment(delta)
        return self

    def __isub__(self, delta):
        self.decrement(delta)
        return self

    def __str__(self):
        return self.name


class Marker:
    """An instant in time (an instant event in the trace, category
    ``<domain>,instant_marker``).

    Parameters
    ----------
    domain : Domain
        The domain it belongs to.
    name : str
        Name of the marker.
    """

    def __init__(self, domain, name):
        self.name = _name("profiler.Marker", name)
        self.domain = _domain("profiler.Marker", domain)

    def mark(self, scope="process"):
        """Record the instant.

        Parameters
        ----------
        scope : str
            ``'global'``, ``'process'``, ``'thread'``, ``'task'`` or ``'marker'``
            (the last three are thread-scoped instants in the trace).
        """
        if scope not in _SCOPES:
            raise ArgumentError(f"profiler.Marker.mark: scope must be one of "
                                f"{', '.join(map(repr, _SCOPES))}, got {scope!r}")
        if _core.recording():
            _core.instant(self.name, self.domain.name + ",instant_marker", _SCOPES[scope])
