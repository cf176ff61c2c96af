"""Shared fixtures (the embedded model set, the corpus stage's text and a redis-server, once per test
session) and the markers by folder."""
import shutil
import socket
import subprocess
import time
from pathlib import Path

import pytest

from specviz.generator.models import load_embedded


@pytest.fixture(scope="session")
def models():
    return load_embedded()


@pytest.fixture(scope="session")
def corpus(tmp_path_factory):
    """The recipe's corpus stage, run as `python -m specviz train corpus` runs it (apt-get download):
    (the folder it wrote, its facts)."""
    from specviz.training.corpus import build_corpus
    out = tmp_path_factory.mktemp("data")
    return out, build_corpus(out)


@pytest.fixture(scope="session")
def redis_url(tmp_path_factory):
    """A real redis-server on a free port, for the session (classes shared by several server processes)."""
    if shutil.which("redis-server") is None:
        pytest.skip("redis-server is not installed (Debian: apt-get install redis-server; .ci/run installs it)")
    with socket.socket() as s:   # a free port
        s.bind(("127.0.0.1", 0))
        port = s.getsockname()[1]
    server = subprocess.Popen(["redis-server", "--port", str(port), "--bind", "127.0.0.1", "--save", "",
                               "--appendonly", "no", "--dir", str(tmp_path_factory.mktemp("redis"))],
                              stdout=subprocess.DEVNULL)
    url = f"redis://127.0.0.1:{port}/0"
    import redis
    for _ in range(100):
        try:
            redis.Redis.from_url(url).ping()
            break
        except redis.ConnectionError:
            time.sleep(0.05)
    yield url
    server.terminate()
    server.wait(10)


BROWSER = Path(__file__).resolve().parent / "browser"


def pytest_collection_modifyitems(items):
    """Every test under tests/browser/ is a browser test (pytest -m "not browser" leaves them out)."""
    for item in items:
        if BROWSER in Path(str(item.fspath)).parents:
            item.add_marker(pytest.mark.browser)
