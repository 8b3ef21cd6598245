"""The project's own build needs what the sandbox cannot give: a C source that a code generator
writes (a pure-Python switch of the build script is used), or assets a build step downloads from
an unreachable host (they come from the project's published source archive, served here by a
small package index on loopback)."""

from __future__ import annotations

import io
import json
import tarfile
import threading
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path

import pytest

from benchsmith.setup.build_repairs import pure_python_switches

from .conftest import PIN_DATE
from .test_setup_engine import engine

pytestmark = pytest.mark.slow

PYPROJECT = """
[build-system]
requires = ["setuptools>=61"]
build-backend = "setuptools.build_meta"

[project]
name = "{name}"
version = "1.1.0"
requires-python = ">=3.8"

[project.optional-dependencies]
test = ["pytest"]
"""

# The C source is written by a generator (Cython, llhttp's npm build) that is not in the
# repository; a switch in the environment builds the package without it.
SPEEDY_SETUP = """
import os
from setuptools import Extension, setup

NO_EXTENSIONS = bool(os.environ.get("SPEEDY_NO_EXTENSIONS"))
ext = [] if NO_EXTENSIONS else [Extension("speedy._accel", ["speedy/_accel.c"])]
setup(ext_modules=ext)
"""

SPEEDY = """
try:
    from speedy._accel import total
except ImportError:
    def total(values):
        return sum(values)
"""

# A build step that downloads a stylesheet unless it is there already.
THEMED_SETUP = """
import os
import urllib.request
from setuptools import setup

CSS = os.path.join("themed", "static", "theme.css")
if not os.path.exists(CSS):
    url = "http://assets.example.invalid/theme/1.0/theme.css"
    print("Downloading CSS: " + url)
    try:
        data = urllib.request.urlopen(url, timeout=10).read()
    except Exception as exc:
        raise SystemExit("Failed to download css from %s: %s" % (url, exc))
    with open(CSS, "wb") as out:
        out.write(data)
setup(package_data={"themed": ["static/*.css"]})
"""

THEMED = """
from pathlib import Path


def stylesheet():
    return (Path(__file__).parent / "static" / "theme.css").read_text()
"""


def test_pure_python_switches_are_read_from_build_scripts(tmp_path: Path) -> None:
    (tmp_path / "setup.py").write_text(
        'import os\nA = os.environ.get("AIOHTTP_NO_EXTENSIONS")\nB = "MSGPACK_PUREPYTHON" in os.environ\n'
        'C = os.getenv("DISABLE_SQLALCHEMY_CEXT")\nD = os.environ.get("CC")\n'
        'E = os.environ["WITH_CYTHON"] if 0 else os.getenv("HOME")\n')
    assert pure_python_switches(tmp_path) == ["AIOHTTP_NO_EXTENSIONS", "MSGPACK_PUREPYTHON",
                                              "DISABLE_SQLALCHEMY_CEXT"]
    assert pure_python_switches(tmp_path / "nothing-here") == []


def test_a_generated_c_source_missing_builds_the_pure_python_package(make_repo, tmp_path: Path) -> None:
    repo = make_repo("speedy", {
        "pyproject.toml": PYPROJECT.format(name="speedy"), "setup.py": SPEEDY_SETUP,
        "speedy/__init__.py": SPEEDY, ".gitignore": "speedy/_accel.c\n",
        "tests/test_total.py": "from speedy import total\n\n\ndef test_total():\n    assert total([1, 2]) == 3\n",
    })
    record = engine(tmp_path).setup(str(repo.path), on_date=PIN_DATE)
    assert record.status == "validated", record.failure_reason
    assert record.plan.build_env == {"SPEEDY_NO_EXTENSIONS": "1"}
    assert any("SPEEDY_NO_EXTENSIONS=1" in r.repair for r in record.iterations if r.repair)
    assert "env SPEEDY_NO_EXTENSIONS=1 uv pip install" in record.install[-1]
    assert {r.python for r in record.iterations} == {record.python}  # no Python switching


def _archive(files: dict[str, str]) -> bytes:
    buffer = io.BytesIO()
    with tarfile.open(fileobj=buffer, mode="w:gz") as tar:
        for name, text in files.items():
            data = text.encode()
            info = tarfile.TarInfo(f"themed-1.0.0/{name}")
            info.size = len(data)
            tar.addfile(info, io.BytesIO(data))
    return buffer.getvalue()


@pytest.fixture
def index(monkeypatch: pytest.MonkeyPatch):
    """A package index on loopback: the JSON API for `themed`, and its 1.0.0 source archive."""
    archive = _archive({
        "themed/static/theme.css": "body { color: teal; }\n",
        "themed/__init__.py": "raise ImportError('the release archive must not replace tracked files')\n",
        "themed/removed_since.py": "VALUE = 'a module deleted after the release'\n",
        # a licence text a build hook would download (coherent.licensed): no code, so it is taken
        "LICENSE": "Themed licence text\n",
        "PKG-INFO": "Metadata-Version: 2.1\nName: themed\nVersion: 1.0.0\n",
    })
    release = {"releases": {
        "1.0.0": [{"packagetype": "sdist", "url": "/files/themed-1.0.0.tar.gz", "yanked": False,
                   "upload_time_iso_8601": "2023-03-01T10:00:00.000000Z"}],
        "1.2.0": [{"packagetype": "sdist", "url": "/files/themed-1.2.0.tar.gz", "yanked": False,
                   "upload_time_iso_8601": "2024-02-01T10:00:00.000000Z"}],  # after the date
    }}
    served: list[str] = []

    class Index(BaseHTTPRequestHandler):
        def do_GET(self) -> None:  # noqa: N802
            served.append(self.path)
            if self.path == "/pypi/themed/json":
                body, kind = json.dumps(release).encode(), "application/json"
            elif self.path == "/files/themed-1.0.0.tar.gz":
                body, kind = archive, "application/gzip"
            else:
                self.send_error(404)
                return
            self.send_response(200)
            self.send_header("Content-Type", kind)
            self.send_header("Content-Length", str(len(body)))
            self.end_headers()
            self.wfile.write(body)

        def log_message(self, *args: object) -> None:
            return

    server = ThreadingHTTPServer(("127.0.0.1", 0), Index)
    threading.Thread(target=server.serve_forever, daemon=True).start()
    monkeypatch.setenv("BENCHSMITH_PYPI_URL", f"http://127.0.0.1:{server.server_address[1]}")
    yield served
    server.shutdown()
    server.server_close()


def test_assets_a_build_step_downloads_come_from_the_release_archive(make_repo, tmp_path: Path,
                                                                     index: list[str]) -> None:
    repo = make_repo("themed", {
        "pyproject.toml": PYPROJECT.format(name="themed"), "setup.py": THEMED_SETUP,
        "themed/__init__.py": THEMED, "themed/static/.keep": "", ".gitignore": "themed/static/*.css\n",
        "tests/test_theme.py": (
            "import importlib.util\nfrom themed import stylesheet\n\n\n"
            "def test_stylesheet():\n    assert 'teal' in stylesheet()\n\n\n"
            "def test_no_stale_module():\n"
            "    assert importlib.util.find_spec('themed.removed_since') is None\n\n\n"
            "def test_licence_text():\n"
            "    assert open('LICENSE').read() == 'Themed licence text\\n'\n"),
    })
    record = engine(tmp_path).setup(str(repo.path), on_date=PIN_DATE)
    assert record.status == "validated", record.failure_reason
    assert record.plan.release_files.endswith("/files/themed-1.0.0.tar.gz")
    assert record.tests.PASSED == 3
    assert "/files/themed-1.0.0.tar.gz" in index
    kinds = [r.diagnosis.kind for r in record.iterations if r.diagnosis]
    assert kinds[0] == "build_needs_network", kinds


# The C extension is built from a library vendored as a submodule that the mirror lacks; the
# build script documents a switch for the pure-Python package.
VENDORED_SETUP = """
import os
from setuptools import Extension, setup

if os.environ.get("DISABLE_QUICKCSV_EXTENSION"):
    ext = []
else:
    ext = [Extension("quickcsv._parse", ["quickcsv/_parse.c", "vendor/libcsv/libcsv.c"],
                     include_dirs=["vendor/libcsv"])]
setup(ext_modules=ext)
"""


def test_a_c_extension_from_a_missing_submodule_builds_the_pure_python_package(
        make_repo, tmp_path: Path) -> None:
    repo = make_repo("quickcsv", {
        "pyproject.toml": PYPROJECT.format(name="quickcsv"), "setup.py": VENDORED_SETUP,
        ".gitmodules": '[submodule "libcsv"]\n\tpath = vendor/libcsv\n'
                       "\turl = https://git.example.invalid/libcsv.git\n",
        "quickcsv/__init__.py": ("try:\n    from quickcsv._parse import split\nexcept ImportError:\n"
                                 "    def split(line):\n        return line.split(',')\n"),
        "quickcsv/_parse.c": '#include "libcsv.h"\n',
        "tests/test_split.py": "from quickcsv import split\n\n\ndef test_split():\n"
                               "    assert split('a,b') == ['a', 'b']\n",
    })
    record = engine(tmp_path).setup(str(repo.path), on_date=PIN_DATE)
    assert record.status == "validated", record.failure_reason
    assert record.missing_submodules == ["vendor/libcsv"]  # still named as the input's gap
    assert record.plan.build_env == {"DISABLE_QUICKCSV_EXTENSION": "1"}
    assert record.plan.sources["build_env"] == ["setup.py"]
    repairs = [i.repair for i in record.iterations if i.repair]
    assert repairs == ["build without C extensions (DISABLE_QUICKCSV_EXTENSION=1): submodule "
                       "vendor/libcsv (sources it may build from) is not checked out"], repairs
    assert record.tests.PASSED == 1
