"""gluon.utils: split_data, split_and_load, clip_global_norm, check_sha1."""
import hashlib
import warnings

import numpy as np
import pytest

import nbdl
from nbdl.errors import DeviceError, DTypeError, ShapeError
from nbdl.gluon import utils


def test_split_data_even_and_uneven():
    x = np.arange(20, dtype=np.float32).reshape(10, 2)
    nx = nbdl.nd.array(x)
    parts = utils.split_data(nx, 5)
    assert [p.shape for p in parts] == [(2, 2)] * 5
    np.testing.assert_array_equal(np.concatenate([p.asnumpy() for p in parts]), x)
    uneven = utils.split_data(nx, 3, even_split=False)
    assert [p.shape[0] for p in uneven] == [4, 3, 3]
    np.testing.assert_array_equal(uneven[1].asnumpy(), x[4:7])
    with pytest.raises(ShapeError, match=r"shape \(10, 2\) cannot be evenly split into 3 slices"):
        utils.split_data(nx, 3)
    with pytest.raises(ShapeError, match=r"too many slices for data with shape \(10, 2\)"):
        utils.split_data(nx, 11, even_split=False)
    with pytest.raises(ShapeError, match="num_slice must be a positive integer"):
        utils.split_data(nx, 0)


def test_split_data_other_axis_and_numpy():
    x = np.arange(24, dtype=np.float32).reshape(2, 6, 2)
    parts = utils.split_data(nbdl.nd.array(x), 3, batch_axis=1)
    assert len(parts) == 3
    for i, p in enumerate(parts):
        np.testing.assert_array_equal(p.asnumpy(), x[:, 2 * i:2 * i + 2])
    np_parts = utils.split_data(x, 2, batch_axis=-2)
    np.testing.assert_array_equal(np_parts[1], x[:, 3:])
    with pytest.raises(ShapeError, match="batch_axis 3 is out of range"):
        utils.split_data(x, 2, batch_axis=3)


def test_split_and_load():
    x = np.arange(12).reshape(6, 2)
    devices = [nbdl.cpu(0), nbdl.cpu(1), nbdl.cpu(2)]
    parts = utils.split_and_load(x, devices)
    assert [p.context for p in parts] == devices
    assert all(p.dtype == np.float32 for p in parts)
    np.testing.assert_array_equal(np.concatenate([p.asnumpy() for p in parts]), x)
    legacy = utils.split_and_load(nbdl.nd.array(x), ctx_list=devices[:2], batch_axis=0)
    np.testing.assert_array_equal(legacy[1].asnumpy(), x[3:])
    assert legacy[1].context == nbdl.cpu(1)
    one = utils.split_and_load(x, [nbdl.cpu(1)])
    assert len(one) == 1 and one[0].shape == (6, 2) and one[0].context == nbdl.cpu(1)
    with pytest.raises(DeviceError, match="not both"):
        utils.split_and_load(x, devices, ctx_list=devices)
    with pytest.raises(DeviceError, match="empty"):
        utils.split_and_load(x, [])
    with pytest.raises(ShapeError, match="evenly split into 4"):
        utils.split_and_load(x, devices + [nbdl.cpu(3)])


def _global_norm(arrays):
    return np.sqrt(sum(float((a.astype(np.float64) ** 2).sum()) for a in arrays))


def test_clip_global_norm_scales_in_place():
    rng = np.random.RandomState(0)
    hosts = [rng.randn(3, 4).astype(np.float32), rng.randn(5).astype(np.float32)]
    arrays = [nbdl.nd.array(h) for h in hosts]
    norm = _global_norm(hosts)
    total = utils.clip_global_norm(arrays, 1.0)
    assert isinstance(total, float)
    np.testing.assert_allclose(total, norm, rtol=1e-5)
    for a, h in zip(arrays, hosts):
        np.testing.assert_allclose(a.asnumpy(), h / (norm + 1e-8), rtol=1e-5)
    np.testing.assert_allclose(_global_norm([a.asnumpy() for a in arrays]), 1.0, rtol=1e-5)


def test_clip_global_norm_leaves_small_gradients_and_returns_ndarray():
    hosts = [np.array([0.3, -0.4], np.float64), np.array([[0.0]], np.float64)]
    arrays = [nbdl.nd.array(h, dtype=np.float64) for h in hosts]
    total = utils.clip_global_norm(arrays, 5.0, check_isfinite=False)
    assert isinstance(total, nbdl.NDArray)
    np.testing.assert_allclose(total.asnumpy(), [0.5])
    np.testing.assert_array_equal(arrays[0].asnumpy(), hosts[0])


def test_clip_global_norm_warns_on_nan_and_rejects_bad_input():
    arrays = [nbdl.nd.array([np.nan, 1.0])]
    with pytest.warns(UserWarning, match="nan or inf"):
        total = utils.clip_global_norm(arrays, 1.0)
    assert np.isnan(total)
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        utils.clip_global_norm([nbdl.nd.array([1.0])], 1.0)
    with pytest.raises(ShapeError, match="non-empty list"):
        utils.clip_global_norm([], 1.0)
    with pytest.raises(DTypeError, match=r"arrays\[1\] is a ndarray"):
        utils.clip_global_norm([nbdl.nd.array([1.0]), np.ones(2)], 1.0)
    with pytest.raises(ShapeError, match="max_norm must be a positive number"):
        utils.clip_global_norm([nbdl.nd.array([1.0])], -1)


def test_check_sha1(tmp_path):
    path = tmp_path / "blob.bin"
    payload = bytes(range(256)) * 5000
    path.write_bytes(payload)
    digest = hashlib.sha1(payload).hexdigest()
    assert utils.check_sha1(str(path), digest)
    assert utils.check_sha1(str(path), digest[:8])
    assert not utils.check_sha1(str(path), "0" * 40)
