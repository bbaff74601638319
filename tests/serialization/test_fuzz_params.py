"""Fuzzing the NDArray file reader: mutated and truncated files either load
or raise FormatError, quickly, without allocating much more than their size."""
import os
import struct
import tempfile
import time
import tracemalloc

import hypothesis.strategies as st
import numpy as np
from hypothesis import HealthCheck, given, settings

import mxnet_format as mx
from nbdl.serialization import FormatError, load, load_frombuffer, save_tobuffer

_F32 = np.arange(6, dtype=np.float32).reshape(2, 3)
BASES = [
    save_tobuffer({"fc1_weight": _F32, "fc1_bias": np.ones(3, np.float16),
                   "scalar": np.array(3, np.int64), "empty": np.zeros((0, 2), np.int8),
                   "mask": np.array([True, False])}),
    save_tobuffer([_F32, np.arange(4, dtype=np.float64)]),
    mx.file([mx.array_v1(_F32), mx.array_legacy(np.ones(3, np.int32)), mx.none_legacy(),
             mx.array_v3(np.array(1.5, np.float32)), mx.none_v3()], ["a", "b", "c", "d", "e"]),
    mx.file([mx.row_sparse_v2(np.ones((2, 2)), [0, 3], (5, 2)),
             mx.csr_v2([1.0, 2.0], [0, 1, 2], [1, 0], (2, 2))], ["rs", "csr"]),
]
# Values that turn a count, ndim, dim, flag or length into something absurd.
EXTREMES = [0, 1, 2, 7, 12, 13, 32, 33, 0x112, 0x7FFFFFFF, 0x80000000, 0xFFFFFFFF,
            0xF993FAC8, 0xF993FAC9, 0xF993FACA, 2**32, 2**40, 2**62, 2**63, 2**64 - 1]


@st.composite
def mutated(draw):
    blob = bytearray(draw(st.sampled_from(BASES)))
    # Positions uniform over the file (hypothesis' integers favour the ends),
    # sparing the 24-byte list header most of the time.
    rnd = draw(st.randoms(use_true_random=False))
    for _ in range(draw(st.integers(1, 3))):
        kind = draw(st.sampled_from(["byte", "word", "truncate", "insert", "delete"]))
        if len(blob) <= 24:
            break
        pos = rnd.randrange(0 if rnd.random() < 0.1 else 24, len(blob))
        if kind == "byte":
            blob[pos] = draw(st.integers(0, 255))
        elif kind == "word":
            width = draw(st.sampled_from([4, 8]))
            pos -= pos % 4
            value = draw(st.sampled_from(EXTREMES)) % (1 << (8 * width))
            blob[pos:pos + width] = struct.pack("<I" if width == 4 else "<Q", value)
        elif kind == "truncate":
            del blob[pos:]
        elif kind == "insert":
            blob[pos:pos] = draw(st.binary(min_size=1, max_size=16))
        else:
            del blob[pos:pos + draw(st.integers(1, 16))]
    return bytes(blob)


def _load_measured(loader, arg, size):
    """Run ``loader(arg)``; the result or None (FormatError), the traced
    memory peak and the time taken."""
    tracemalloc.start()
    try:
        start_mem, _ = tracemalloc.get_traced_memory()
        t0 = time.perf_counter()
        try:
            out = loader(arg)
        except FormatError:
            out = None
        elapsed = time.perf_counter() - t0
        _, peak = tracemalloc.get_traced_memory()
    finally:
        tracemalloc.stop()
    # Loaded objects cost more than their bytes (an array per 20-byte
    # record); what must never happen is an allocation driven by a declared
    # size that the file does not back.
    assert peak - start_mem < 64 * size + (256 << 10), (peak - start_mem, size)
    assert elapsed < 2.0, elapsed
    return out


def _check_result(out):
    if out is None:
        return
    values = out if isinstance(out, list) else list(out.values())
    if isinstance(out, dict):
        assert all(isinstance(k, str) for k in out)
    for v in values:
        assert v is None or isinstance(v, np.ndarray)


@settings(max_examples=400, deadline=None, derandomize=True, database=None,
          suppress_health_check=[HealthCheck.too_slow])
@given(mutated())
def test_mutated_buffers_load_or_raise_format_error(blob):
    _check_result(_load_measured(load_frombuffer, blob, len(blob)))


@settings(max_examples=60, deadline=None, derandomize=True, database=None,
          suppress_health_check=[HealthCheck.too_slow])
@given(mutated())
def test_mutated_files_load_or_raise_format_error(blob):
    fd, path = tempfile.mkstemp(suffix=".params")
    try:
        with os.fdopen(fd, "wb") as f:
            f.write(blob)
        _check_result(_load_measured(load, path, len(blob)))
    finally:
        os.unlink(path)


@settings(max_examples=200, deadline=None, derandomize=True, database=None)
@given(st.binary(max_size=256))
def test_random_bytes_after_a_valid_header(tail):
    blob = mx.u64(mx.LIST) + mx.u64(0) + tail
    _check_result(_load_measured(load_frombuffer, blob, len(blob)))


def test_every_single_byte_corruption():
    blob = BASES[2]
    for pos in range(len(blob)):
        for value in (0x00, 0xFF, 0x80):
            bad = blob[:pos] + bytes([value]) + blob[pos + 1:]
            _check_result(_load_measured(load_frombuffer, bad, len(bad)))


def test_declared_sizes_never_drive_allocation():
    # 2**33 float64 elements declared in a 60-byte file; then a million arrays.
    bomb = mx.file([mx.u32(mx.V2) + mx.i32(0) + mx.shape64((2**33,)) + mx.ctx() + mx.i32(1)])
    assert _load_measured(load_frombuffer, bomb, len(bomb)) is None
    many = mx.u64(mx.LIST) + mx.u64(0) + mx.u64(10**6) + mx.none_legacy() * 8
    assert _load_measured(load_frombuffer, many, len(many)) is None
    names = mx.file([mx.none_legacy()])[:-8] + mx.u64(1) + mx.u64(2**40) + b"x"
    assert _load_measured(load_frombuffer, names, len(names)) is None


def test_the_memory_measurement_sees_array_data():
    # Guards the bound above: numpy's allocations are visible to tracemalloc.
    blob = save_tobuffer([np.zeros(1 << 18, np.float32)])
    tracemalloc.start()
    try:
        out = load_frombuffer(blob)
        _, peak = tracemalloc.get_traced_memory()
    finally:
        tracemalloc.stop()
    assert out[0].shape == (1 << 18,) and peak >= 1 << 20
