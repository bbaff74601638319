"""gluon.utils.download against a local http.server and file:// urls."""
import hashlib
import http.server
import os
import threading

import pytest

import nbdl
from nbdl.gluon.utils import DownloadError, check_sha1, download

PAYLOAD = b"nbdl download test\n" * 1000


class _Handler(http.server.BaseHTTPRequestHandler):
    fail_first = 0          # answer this many requests with 503 first
    requests = 0

    def do_GET(self):
        cls = type(self)
        cls.requests += 1
        if cls.requests <= cls.fail_first:
            self.send_error(503)
            return
        if self.path != "/data/file.bin":
            self.send_error(404)
            return
        self.send_response(200)
        self.send_header("Content-Length", str(len(PAYLOAD)))
        self.end_headers()
        self.wfile.write(PAYLOAD)

    def log_message(self, *args):
        pass


@pytest.fixture
def server():
    handler = type("H", (_Handler,), {"fail_first": 0, "requests": 0})
    srv = http.server.ThreadingHTTPServer(("127.0.0.1", 0), handler)
    t = threading.Thread(target=srv.serve_forever, daemon=True)
    t.start()
    yield f"http://127.0.0.1:{srv.server_address[1]}", handler
    srv.shutdown()
    srv.server_close()


SHA1 = hashlib.sha1(PAYLOAD).hexdigest()


def test_download_writes_the_file_and_checks_its_sha1(server, tmp_path):
    base, h = server
    out = download(f"{base}/data/file.bin", path=str(tmp_path), sha1_hash=SHA1)
    assert out == os.path.join(str(tmp_path), "file.bin")
    assert open(out, "rb").read() == PAYLOAD and check_sha1(out, SHA1)
    # present and matching: not fetched again; overwrite=True fetches
    download(f"{base}/data/file.bin", path=out, sha1_hash=SHA1)
    assert h.requests == 1
    download(f"{base}/data/file.bin", path=out, overwrite=True)
    assert h.requests == 2
    # present with another SHA-1: fetched again and replaced
    with open(out, "wb") as f:
        f.write(b"stale")
    download(f"{base}/data/file.bin", path=out, sha1_hash=SHA1)
    assert h.requests == 3 and open(out, "rb").read() == PAYLOAD
    assert os.listdir(str(tmp_path)) == ["file.bin"]      # no temporary files left


def test_download_retries_failed_attempts(server, tmp_path):
    base, h = server
    h.fail_first = 2
    out = download(f"{base}/data/file.bin", path=str(tmp_path / "sub" / "f.bin"), retries=3)
    assert h.requests == 3 and open(out, "rb").read() == PAYLOAD
    h.requests, h.fail_first = 0, 5
    with pytest.raises(DownloadError, match="after 2 attempts"):
        download(f"{base}/data/file.bin", path=str(tmp_path / "g.bin"), retries=2)
    assert h.requests == 2 and not (tmp_path / "g.bin").exists()


def test_download_wrong_sha1_keeps_no_file(server, tmp_path):
    base, h = server
    with pytest.raises(DownloadError, match="does not have the SHA-1"):
        download(f"{base}/data/file.bin", path=str(tmp_path / "x.bin"), sha1_hash="0" * 40,
                 retries=2)
    assert h.requests == 2 and os.listdir(str(tmp_path)) == []
    with pytest.raises(DownloadError, match="404"):
        download(f"{base}/missing", path=str(tmp_path / "m"), retries=1)


def test_download_file_url_and_default_name(tmp_path, monkeypatch):
    src = tmp_path / "src.txt"
    src.write_bytes(PAYLOAD)
    monkeypatch.chdir(tmp_path)
    os.mkdir("dst")
    out = download(src.as_uri(), path="dst")
    assert open(out, "rb").read() == PAYLOAD
    (tmp_path / "dst" / "src.txt").unlink()
    os.chdir("dst")
    assert download(src.as_uri()) == "src.txt" and os.path.exists("src.txt")
    with pytest.raises(nbdl.ArgumentError, match="no file name"):
        download("http://127.0.0.1/dir/")
    with pytest.raises(nbdl.ArgumentError, match="retries"):
        download(src.as_uri(), path="y", retries=-1)
    with pytest.warns(UserWarning, match="verify_ssl"):
        download(src.as_uri(), path="z", verify_ssl=False)
