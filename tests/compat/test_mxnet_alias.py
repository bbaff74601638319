"""The ``mxnet`` alias (``nbdl.alias_mxnet``, ``python -m nbdl.mxnet``):
unmodified MXNet 1.x code runs on nbdl in a fresh interpreter, the aliased
modules are nbdl's own objects, missing names fail clearly, and a real
``mxnet`` on the path is never shadowed silently."""
import os
import pathlib
import subprocess
import sys
import textwrap

import pytest

import nbdl
from nbdl.mxnet import RENAMES, _candidates

REPO = str(pathlib.Path(nbdl.__file__).resolve().parents[1])

# An ordinary MXNet 1.x training script: nothing in it knows about nbdl.
TRAIN_SCRIPT = '''
import sys
import numpy as np
import mxnet as mx
from mxnet import nd, autograd, gluon
from mxnet.gluon import nn
import mxnet.ndarray as nd2
from mxnet.test_utils import assert_almost_equal

print("name", __name__)
print("argv", sys.argv[1:])
print("path0", sys.path[0])
rng = np.random.RandomState(0)
X = rng.rand(64, 5).astype("float32")
w_true = rng.rand(5, 1).astype("float32")
Y = X.dot(w_true)
net = nn.Dense(1)
net.initialize(mx.init.Normal(0.1))
loss_fn = gluon.loss.L2Loss()
trainer = gluon.Trainer(net.collect_params(), "sgd", {"learning_rate": 0.5})
data, label = nd.array(X), nd.array(Y)
for step in range(30):
    with autograd.record():
        loss = loss_fn(net(data), label)
    loss.backward()
    trainer.step(64)
    print("loss", float(loss.mean().asscalar()))
pred = net(data).asnumpy()
np.save(sys.argv[1], pred)
assert_almost_equal(nd2.array(X).asnumpy(), X)
try:
    mx.nd.zeros((2, 3)) + mx.nd.zeros((4, 5))
except mx.base.MXNetError as e:
    print("caught", type(e).__name__)
'''

IDENTITY_SCRIPT = '''
import sys, nbdl
nbdl.alias_mxnet()
nbdl.alias_mxnet()          # a second call changes nothing
renamed_attrs = nbdl.numpy is nbdl.np and nbdl.numpy_extension is nbdl.npx
import mxnet as mx
import mxnet.gluon.nn
import mxnet.ndarray as nd
import mxnet.numpy as mnp
import mxnet.numpy_extension as mnpx
from mxnet import numpy as mnp2, gluon, autograd, context, base, name, util, test_utils
from mxnet.gluon import nn
from mxnet.base import MXNetError
import mxnet.nd             # an attribute alias of a module (not a module file) resolves too
checks = {
    "root": mx is nbdl,
    "gluon": sys.modules["mxnet.gluon"] is nbdl.gluon,
    "nn": nn is nbdl.gluon.nn and mxnet.gluon.nn is nbdl.gluon.nn,
    "nd": nd is nbdl.ndarray,
    "numpy": mnp is nbdl.np and mnp2 is nbdl.np and mx.numpy is nbdl.np,
    "npx": mnpx is nbdl.npx,
    "context": context is nbdl.context and mx.Context is nbdl.Device,
    "test_utils": test_utils is nbdl.test_utils,
    "error": MXNetError is nbdl.NbdlError,
    "spec": nbdl.gluon.__spec__.name == "nbdl.gluon" and mx.__spec__.name == "nbdl",
    "isinstance": isinstance(nn.Dense(2), nbdl.gluon.Block),
    "renamed_attrs": renamed_attrs,
    "attr_alias": sys.modules["mxnet.nd"] is nbdl.ndarray,
    "one_finder": sum(type(f).__name__ == "_MXNetFinder" for f in sys.meta_path) == 1,
}
print(sorted(k for k, v in checks.items() if not v))
mx.gluon.nn.Dense.patched_attr = 1           # monkeypatching through the alias
print(hasattr(nbdl.gluon.nn.Dense, "patched_attr"))
for stmt in ["import mxnet.contrib.quantization", "import mxnet.mxnet", "from mxnet import no_such_thing"]:
    try:
        exec(stmt)
        print("imported", stmt)
    except ImportError as e:
        print(type(e).__name__, "|", e)
'''


def _env(extra_path=None):
    env = dict(os.environ)
    paths = ([extra_path] if extra_path else []) + [REPO] + \
        ([env["PYTHONPATH"]] if env.get("PYTHONPATH") else [])
    env["PYTHONPATH"] = os.pathsep.join(paths)
    env.setdefault("NBDL_QUIET", "1")
    return env


def _run(args, cwd, extra_path=None):
    return subprocess.run([sys.executable] + args, cwd=str(cwd), env=_env(extra_path),
                          capture_output=True, text=True, timeout=600)


@pytest.fixture
def no_real_mxnet():
    import importlib.machinery
    if importlib.machinery.PathFinder.find_spec("mxnet") is not None:
        pytest.skip("a real MXNet is installed here; the alias refuses to shadow it")


def test_unmodified_training_script_runs_through_python_m_nbdl_mxnet(tmp_path, no_real_mxnet):
    script = tmp_path / "scripts" / "train.py"
    script.parent.mkdir()
    script.write_text(TRAIN_SCRIPT)
    out_file = tmp_path / "pred.npy"
    r = _run(["-m", "nbdl.mxnet", str(script), str(out_file), "--lr", "0.5"], cwd=tmp_path)
    assert r.returncode == 0, r.stderr
    lines = r.stdout.splitlines()
    assert "name __main__" in lines
    assert f"argv {[str(out_file), '--lr', '0.5']}" in lines
    assert f"path0 {script.parent}" in lines            # as `python train.py` sets it
    losses = [float(ln.split()[1]) for ln in lines if ln.startswith("loss ")]
    assert len(losses) == 30 and losses[-1] < 0.2 * losses[0]
    assert "caught ShapeError" in lines                 # mx.base.MXNetError catches nbdl's errors
    # the script's own prediction is the least-squares fit it was trained towards
    import numpy as np
    rng = np.random.RandomState(0)
    X = rng.rand(64, 5).astype("float32")
    Y = X.dot(rng.rand(5, 1).astype("float32"))
    pred = np.load(out_file)
    assert pred.shape == (64, 1)
    assert np.mean((pred - Y) ** 2) < np.mean((Y - Y.mean()) ** 2)


def test_module_mode_and_exit_status(tmp_path, no_real_mxnet):
    pkg = tmp_path / "mytool"
    pkg.mkdir()
    (pkg / "__init__.py").write_text("")
    (pkg / "run.py").write_text(textwrap.dedent('''
        import sys
        import mxnet as mx
        print("argv", sys.argv)
        print("name", __name__, mx.__name__, mx.nd.ones((2,)).asnumpy().tolist())
        sys.exit(int(sys.argv[1]))
    '''))
    r = _run(["-m", "nbdl.mxnet", "-m", "mytool.run", "3", "x y"], cwd=tmp_path)
    assert r.returncode == 3, r.stderr
    lines = r.stdout.splitlines()
    assert lines[0] == f"argv {[str(pkg / 'run.py'), '3', 'x y']}"
    assert lines[1] == "name __main__ nbdl [1.0, 1.0]"


def test_usage_errors(tmp_path, no_real_mxnet):
    r = _run(["-m", "nbdl.mxnet"], cwd=tmp_path)
    assert r.returncode == 2 and "usage: python -m nbdl.mxnet" in r.stderr
    r = _run(["-m", "nbdl.mxnet", "missing.py"], cwd=tmp_path)
    assert r.returncode == 2 and "can't open file" in r.stderr and "missing.py" in r.stderr
    r = _run(["-m", "nbdl.mxnet", "-m"], cwd=tmp_path)
    assert r.returncode == 2 and "-m needs a module name" in r.stderr
    r = _run(["-m", "nbdl.mxnet", "-m", "no_such_pkg.tool"], cwd=tmp_path)
    assert r.returncode == 1 and "No module named 'no_such_pkg.tool'" in r.stderr


def test_aliased_modules_are_nbdls_objects(tmp_path, no_real_mxnet):
    r = _run(["-c", IDENTITY_SCRIPT], cwd=tmp_path)
    assert r.returncode == 0, r.stderr
    lines = r.stdout.splitlines()
    assert lines[0] == "[]", lines[0]           # no failed identity check
    assert lines[1] == "True"
    contrib, own, missing = lines[2:5]
    assert contrib.startswith("ModuleNotFoundError | No module named 'mxnet.contrib.quantization'")
    assert "nbdl's alias" in contrib and "'nbdl.contrib.quantization'" in contrib
    assert own.startswith("ModuleNotFoundError | No module named 'mxnet.mxnet'")
    assert "nbdl.mxnet" in own
    assert missing.startswith("ImportError | cannot import name 'no_such_thing' from 'nbdl'")


FAKE_CHECK = '''
import sys, warnings, nbdl
from nbdl.mxnet import MXNetAliasError
try:
    nbdl.alias_mxnet()
except MXNetAliasError as e:
    print("refused", isinstance(e, nbdl.NbdlError), isinstance(e, ImportError), "|", e)
import mxnet
print("before", mxnet.FAKE)
with warnings.catch_warnings(record=True) as w:
    warnings.simplefilter("always")
    nbdl.alias_mxnet(force=True)
print("warned", len(w), "|", w[0].message if w else "")
import mxnet
print("after", mxnet is nbdl)
'''


def test_a_real_mxnet_on_the_path_is_not_shadowed(tmp_path):
    fake = tmp_path / "site"
    (fake / "mxnet").mkdir(parents=True)
    (fake / "mxnet" / "__init__.py").write_text("FAKE = 'real mxnet'\n")
    r = _run(["-c", FAKE_CHECK], cwd=tmp_path, extra_path=str(fake))
    assert r.returncode == 0, r.stderr
    refused, before, warned, after = r.stdout.splitlines()
    assert refused.startswith("refused True True |")
    assert "a real MXNet is importable" in refused and str(fake / "mxnet") in refused
    assert "force=True" in refused
    assert before == "before real mxnet"          # it was imported: the refusal saw it as well
    assert warned.startswith("warned 1 |") and "already imported" in warned
    assert after == "after True"
    # the command line refuses too, and --force goes ahead
    script = tmp_path / "s.py"
    script.write_text("import mxnet\nprint(mxnet.__name__)\n")
    r = _run(["-m", "nbdl.mxnet", str(script)], cwd=tmp_path, extra_path=str(fake))
    assert r.returncode != 0 and "MXNetAliasError" in r.stderr
    assert "a real MXNet is importable" in r.stderr
    r = _run(["-m", "nbdl.mxnet", "--force", str(script)], cwd=tmp_path, extra_path=str(fake))
    assert r.returncode == 0, r.stderr
    assert r.stdout.strip() == "nbdl" and "force=True" in r.stderr


def test_a_directory_named_mxnet_without_init_is_not_a_real_mxnet(tmp_path, no_real_mxnet):
    (tmp_path / "mxnet").mkdir()          # e.g. a checkout of MXNet's sources in the cwd
    (tmp_path / "mxnet" / "README").write_text("sources")
    r = _run(["-c", "import nbdl; nbdl.alias_mxnet(); import mxnet; print(mxnet is nbdl)"],
             cwd=tmp_path, extra_path=str(tmp_path))
    assert r.returncode == 0, r.stderr
    assert r.stdout.strip() == "True"


def test_candidate_names():
    assert _candidates("mxnet.gluon.nn") == ["nbdl.gluon.nn"]
    assert _candidates("mxnet.numpy") == ["nbdl.np"]
    assert _candidates("mxnet.numpy.random") == ["nbdl.np.random"]
    assert _candidates("mxnet.module") == ["nbdl.module", "nbdl.mod"]
    assert _candidates("mxnet.kvstore") == ["nbdl.kvstore", "nbdl.kv"]
    assert all(isinstance(v, tuple) and v for v in RENAMES.values())
