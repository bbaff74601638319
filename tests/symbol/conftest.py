"""Fixtures for the Symbol and JSON tests."""
import pytest

from nbdl.ops import registry
from symbol_graphs import AUX_OP, make_aux_op


@pytest.fixture
def aux_op(monkeypatch):
    """Puts the test's aux-state op in the op table for one test only, so that
    no table-wide check elsewhere ever sees it.  Use it through
    ``nbdl.sym.create(aux_op, ...)`` (``nbdl.sym.<name>`` would be cached)."""
    registry.get_op("_copy")  # load the real families first
    monkeypatch.setitem(registry._TABLE, AUX_OP, make_aux_op())
    return AUX_OP
