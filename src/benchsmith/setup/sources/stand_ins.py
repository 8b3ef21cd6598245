"""Public hosts the tests call that a local stand-in can answer for: found by what the test
sources say (``httpbin.org``, ``HTTPBIN_URL``), never by the repository's name. A suite that
serves its own (``pytest-httpbin`` among its requirements or plugins) gets none."""

from __future__ import annotations

import re

from benchsmith.harness.stand_ins import STAND_INS
from benchsmith.setup.sources.collector import Collector

MAX_FILES_READ = 3000
MAX_TEST_HOSTS = 200
_TEST_FILE = re.compile(r"(?:^|/)(?:test_[^/]*|[^/]*_tests?|tests?|conftest)\.py$")
_TEST_DIR = re.compile(r"(?:^|/)tests?(?:ing)?/")
_CONFIG_FILES = ("setup.py", "setup.cfg", "pyproject.toml", "tox.ini", "Pipfile", "noxfile.py")
_URL_HOST = re.compile(r"""["']https?://([\w\-]+(?:\.[\w\-]+)+)""")
_LOOPBACK = frozenset({"localhost", "127.0.0.1", "0.0.0.0"})


def test_sources(c: Collector) -> list[str]:
    """The checkout's test modules and conftest files, by repository-relative path (capped)."""
    found = [path for path in c.files.glob("**/*.py")
             if _TEST_FILE.search(path) or _TEST_DIR.search(path)]
    return found[:MAX_FILES_READ]


def read_stand_ins(c: Collector) -> None:
    """Add the known public hosts the test sources call (the first file that names each), and
    every host their URL literals name (what a failure that does not name its host called)."""
    tests = test_sources(c)
    texts = {path: c.files.text(path) or "" for path in tests}
    for path, text in texts.items():
        for host in dict.fromkeys(_URL_HOST.findall(text)):
            if host not in _LOOPBACK and len(c.ctx.test_hosts) < MAX_TEST_HOSTS:
                c.hint(c.ctx.test_hosts, host, path)
    configs = [*c.ctx.requirement_files, *_CONFIG_FILES, *tests]
    for host, stand_in in STAND_INS.items():
        source = next((path for path, text in texts.items()
                       if any(marker in text for marker in stand_in.markers)), None)
        if source is None:
            continue
        own = [path for path in configs if any(
            name in (texts.get(path) or c.files.text(path) or "").lower()
            for name in stand_in.serves_own)]
        if not own:
            c.hint(c.ctx.stand_ins, host, source)
