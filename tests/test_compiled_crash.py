"""A package whose compiled wheel of the date crashes inside the interpreter while the
project builds (sympy-era Cython 0.27.3 under astropy's setup.py: `SystemError: bad argument
to internal function`) is built from its source distribution instead, the same release."""

from __future__ import annotations

import base64
import hashlib
import http.server
import tarfile
import threading
import zipfile
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from benchsmith.core import ExecResult
from benchsmith.sandbox import LocalSandboxConfig
from benchsmith.setup.diagnose import diagnose_install
from benchsmith.setup.engine import SetupEngine, SetupOptions

from .conftest import PIN_DATE
from .test_local_environment_reuse import _Index

TOOL = "benchsmith-fixture-tempita"
MODULE = TOOL.replace("-", "_")
CRASH = "SystemError: Objects/moduleobject.c:470: bad argument to internal function"
# the wheel's module: code compiled from a source path relative to its package, as a compiled
# extension's frames read, that fails in the interpreter
WHEEL_CODE = f'''_SOURCE = """
def sub(template, **names):
    raise SystemError("Objects/moduleobject.c:470: bad argument to internal function")
"""
exec(compile(_SOURCE, "{MODULE}/_tempita.py", "exec"))
'''
SDIST_CODE = '''def sub(template, **names):
    return template.format(**names)
'''
PYPROJECT = f"""
[build-system]
requires = ["setuptools>=61", "{TOOL}"]
build-backend = "setuptools.build_meta"
"""
SETUP_PY = f"""from setuptools import setup

from {MODULE} import sub

setup(name="greeting", version=sub("{{major}}.1", major=0), py_modules=["greeting"],
      extras_require={{"test": ["pytest"]}})
"""
GREETING = """def greet(name):
    return "hello " + name
"""
TESTS = """from greeting import greet


def test_greet():
    assert greet("you") == "hello you"


def test_empty():
    assert greet("") == "hello "
"""


def _wheel(directory: Path) -> None:
    info = f"{MODULE}-1.0.dist-info"
    files = {f"{MODULE}/__init__.py": WHEEL_CODE,
             f"{info}/METADATA": f"Metadata-Version: 2.1\nName: {TOOL}\nVersion: 1.0\n",
             f"{info}/WHEEL": "Wheel-Version: 1.0\nGenerator: fixture\nRoot-Is-Purelib: true\nTag: py3-none-any\n"}
    record = [f"{name},sha256={base64.urlsafe_b64encode(hashlib.sha256(text.encode()).digest()).rstrip(b'=').decode()},"
              f"{len(text.encode())}" for name, text in files.items()] + [f"{info}/RECORD,,"]
    with zipfile.ZipFile(directory / f"{MODULE}-1.0-py3-none-any.whl", "w") as archive:
        for name, text in files.items():
            archive.writestr(name, text)
        archive.writestr(f"{info}/RECORD", "\n".join(record) + "\n")


def _sdist(directory: Path) -> None:
    work = directory / "build" / f"{TOOL}-1.0"
    (work / MODULE).mkdir(parents=True)
    (work / MODULE / "__init__.py").write_text(SDIST_CODE)
    (work / "setup.py").write_text(f"from setuptools import setup\nsetup(name='{TOOL}', version='1.0', "
                                   f"packages=['{MODULE}'])\n")
    (work / "PKG-INFO").write_text(f"Metadata-Version: 2.1\nName: {TOOL}\nVersion: 1.0\n")
    with tarfile.open(directory / f"{TOOL}-1.0.tar.gz", "w:gz") as archive:
        archive.add(work, arcname=f"{TOOL}-1.0")


@pytest.fixture
def index(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Iterator[Path]:
    """A package index on loopback with the build tool's wheel and sdist; the rest from PyPI."""
    files = tmp_path / "index"
    files.mkdir()
    _wheel(files)
    _sdist(files)
    handler = type("Index", (_Index,), {"files": files})
    server = http.server.ThreadingHTTPServer(("127.0.0.1", 0), handler)
    threading.Thread(target=server.serve_forever, daemon=True).start()
    monkeypatch.setenv("UV_EXTRA_INDEX_URL", f"http://127.0.0.1:{server.server_address[1]}/simple/")
    try:
        yield files
    finally:
        server.shutdown()
        server.server_close()


def test_a_crash_in_compiled_code_names_the_package_whose_frame_it_was() -> None:
    log = ("  File \"/venv/lib/python3.6/site-packages/Cython/Compiler/ExprNodes.py\", line 4713, in "
           "SliceIndexNode\n    \"SliceObject\", \"ObjectHandling.c\", context={'access': 'Get'})\n"
           "  File \"Cython/Compiler/Code.py\", line 287, in Cython.Compiler.Code.UtilityCodeBase.load\n"
           "  File \"Cython/Compiler/Code.py\", line 521, in Cython.Compiler.Code.sub_tempita\n"
           f"{CRASH}\n")
    found = diagnose_install(ExecResult(command="python setup.py develop --no-deps", returncode=1,
                                        output=log), ["astropy"])
    assert found.kind == "compiled_dependency_crashed" and found.facts == {"package": ["Cython"]}
    # the same error raised by a pure-Python frame (an absolute path) is no wheel's fault
    plain = log.replace('"Cython/Compiler/Code.py"', '"/venv/lib/python3.6/site-packages/Cython/Compiler/Code.py"')
    assert diagnose_install(ExecResult(command="x", returncode=1, output=plain), []).kind != \
        "compiled_dependency_crashed"


@pytest.mark.slow
def test_a_build_tool_whose_wheel_crashes_is_built_from_source(make_repo: Any, index: Path,
                                                               tmp_path: Path) -> None:
    repo = make_repo("greeting", {"pyproject.toml": PYPROJECT, "setup.py": SETUP_PY,
                                  "greeting.py": GREETING, "tests/test_greeting.py": TESTS})
    engine = SetupEngine(SetupOptions(
        sandbox=LocalSandboxConfig(tmp_dir=str(tmp_path / "boxes")), use_refdb=False))
    record = engine.setup(str(repo.path), on_date=PIN_DATE)
    assert record.status == "validated", (record.failure_reason,
                                          [(i.diagnosis, i.repair) for i in record.iterations])
    first = record.iterations[0]
    assert first.diagnosis is not None and first.diagnosis.kind == "compiled_dependency_crashed"
    assert first.repair == f"build {TOOL} from source (the same release, not its wheel)"
    assert record.plan is not None and record.plan.no_binary == [TOOL]
    assert any(f"--no-binary {TOOL}" in command for command in record.install), record.install
    assert record.tests.PASSED == 2


@pytest.mark.slow
def test_a_reused_plan_that_meets_the_crash_is_repaired_not_dropped(make_repo: Any, index: Path,
                                                                   tmp_path: Path) -> None:
    # the plan of an older commit (no build tool then) meets the crashing wheel at a newer one:
    # building the tool from source fits any plan, so the reused one is repaired in place
    plain = PYPROJECT.replace(f', "{TOOL}"', "")
    repo = make_repo("greeting", {"pyproject.toml": plain, "greeting.py": GREETING,
                                  "setup.py": SETUP_PY.replace(f"from {MODULE} import sub\n", "").replace(
                                      'sub("{major}.1", major=0)', '"0.1"'),
                                  "tests/test_greeting.py": TESTS})
    older = repo.commit({"README.md": "greeting\n"}, date="2023-05-02T12:00:00+00:00")
    newer = repo.commit({"pyproject.toml": PYPROJECT, "setup.py": SETUP_PY}, date="2023-05-10T12:00:00+00:00")
    options = SetupOptions(sandbox=LocalSandboxConfig(tmp_dir=str(tmp_path / "boxes")),
                           refdb=str(tmp_path / "ref.sqlite"))
    assert SetupEngine(options).setup(str(repo.path), rev=older).status == "validated"
    record = SetupEngine(options).setup(str(repo.path), rev=newer)
    assert record.status == "validated", record.failure_reason
    rounds = [(i.origin.split()[0], i.repair) for i in record.iterations]
    assert rounds == [("reference", f"build {TOOL} from source (the same release, not its wheel)"),
                      ("repair", None)], rounds
