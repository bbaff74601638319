"""``import nbdl`` skips the interpreter's cyclic collections at exit
(nbdl.shutdown); ``NBDL_EXIT_COLLECT=1`` keeps them.  Each case runs in a
fresh interpreter and reads what it wrote on the way out."""
import os
import subprocess
import sys

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))

PROBE = """
import atexit, sys
import nbdl
out = sys.argv[1]

class Cycle:
    def __del__(self, _open=open):      # builtins are gone this late in the exit
        with _open(out, "a") as f:
            f.write("cycle-finalised\\n")

c = Cycle(); c.self = c; del c          # garbage only a collection finds
with open(out, "a") as f:               # closed by its own block, before exit
    f.write("with-block\\n")
atexit.register(lambda: open(out, "a").write("atexit-after-import\\n"))
nbdl.shutdown.install()                 # a second call registers no second handler
nbdl.shutdown.install()
import gc; gc.disable()                 # no collection before exit finds the cycle
"""


def _run(tmp_path, **env):
    out = tmp_path / "lines.txt"
    e = {k: v for k, v in os.environ.items() if k != "NBDL_EXIT_COLLECT"}
    e.update(env, PYTHONPATH=ROOT)
    subprocess.run([sys.executable, "-c", PROBE, str(out)], env=e, check=True)
    return out.read_text().splitlines()


def test_exit_skips_the_final_collections(tmp_path):
    lines = _run(tmp_path)
    assert lines == ["with-block", "atexit-after-import"]


def test_exit_collect_keeps_them(tmp_path):
    lines = _run(tmp_path, NBDL_EXIT_COLLECT="1")
    assert lines == ["with-block", "atexit-after-import", "cycle-finalised"]

