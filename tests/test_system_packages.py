"""Debian packages a build needs: read from the build log (a missing header, pkg-config module
or library), installed where the backend may (Docker; the local host with --system-packages),
recorded, and never mistaken for a Python version that does not fit."""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from benchsmith.core import ExecResult, Plan
from benchsmith.sandbox import DockerSandboxConfig, LocalSandboxConfig
from benchsmith.setup.context_model import RepoContext
from benchsmith.setup.diagnose import diagnose_install
from benchsmith.setup.engine import SetupEngine, SetupOptions
from benchsmith.setup.record import SetupRecord
from benchsmith.setup.repair import RuleRepairer
from benchsmith.setup.system_packages import debian_packages_for, missing_system_parts

from .conftest import PIN_DATE

# uv's report of a dependency whose build script asks pkg-config for a library the system lacks
UV_BUILD_FAILURE = """\
Resolved 3 packages in 210ms
  x Failed to build `fusebind==1.3.0`
  |-> The build backend returned an error
  `-> Call to `setuptools.build_meta:__legacy__.build_wheel` failed (exit status: 1)

      [stderr]
      {line}
      Traceback (most recent call last):
        File "<string>", line 14, in <module>
      subprocess.CalledProcessError: Command '['pkg-config', '--cflags', 'fuse3']' returned non-zero exit status 1.

      hint: This usually indicates a problem with the package or the build environment.
"""


# The three shapes: a header (gcc's and clang's words), a pkg-config module (pkg-config's and
# pkgconf's words, or pkg-config itself missing), a library the linker cannot find.
LOG_LINES = [
    ("src/fusebind.c:2:10: fatal error: fuse.h: No such file or directory", ["libfuse-dev"]),
    ("src/fusebind.c:2:10: fatal error: 'fuse3/fuse_lowlevel.h' file not found", ["libfuse3-dev"]),
    ("Package fuse3 was not found in the pkg-config search path.", ["libfuse3-dev"]),
    ("Package 'fuse', required by 'virtual:world', not found", ["libfuse-dev"]),
    ("/bin/sh: 1: pkg-config: not found", ["pkg-config"]),
    ("/usr/bin/ld: cannot find -lfuse3: No such file or directory", ["libfuse3-dev"]),
    ("/usr/bin/ld: cannot find -ljansson", ["libjansson-dev"]),
    ("OSError: Unable to find libfuse", ["libfuse-dev"]),  # ctypes.util.find_library found none
]


def test_a_build_log_names_the_debian_package_of_a_header_module_or_library() -> None:
    for line, packages in LOG_LINES:
        log = UV_BUILD_FAILURE.format(line=line)
        assert debian_packages_for(log) == packages, line
        diagnosis = diagnose_install(ExecResult(command="uv pip install -e .", returncode=1,
                                                output=log, duration_s=1), ["app"])
        assert diagnosis.kind == "system_packages" and diagnosis.facts["apt"] == packages, line
        assert diagnosis.category == "installation"


def _repair(log: str, apt: bool) -> tuple[str, tuple[Plan, str] | None]:
    diagnosis = diagnose_install(ExecResult(command="uv pip install -e .", returncode=1,
                                            output=log, duration_s=1), ["app"])
    plan = Plan(python="3.11", python_fallbacks=["3.10", "3.9"],
                exclude_newer="2023-06-01T00:00:00Z")
    return diagnosis.kind, RuleRepairer(apt=apt).repair(plan, diagnosis, RepoContext())


def test_a_dependency_that_lacks_a_system_library_is_not_blamed_on_python() -> None:
    kind, repaired = _repair(UV_BUILD_FAILURE.format(
        line="Package fuse3 was not found in the pkg-config search path."), apt=True)
    assert kind == "system_packages" and repaired is not None
    assert repaired[0].python == "3.11" and repaired[0].apt_packages == ["libfuse3-dev"]
    # What no Debian package here is known for still names what is missing, and no rule
    # switches Python for it (another interpreter lacks the library as well).
    unknown = UV_BUILD_FAILURE.format(
        line="Package frobnicator-9 was not found in the pkg-config search path.")
    assert missing_system_parts(unknown) == ["pkg-config module frobnicator-9"]
    for apt in (True, False):
        kind, repaired = _repair(unknown, apt=apt)
        assert kind == "system_packages" and repaired is None
    # A log that blames CPython's C API does switch Python.
    for line in ("fusebind.c:5:10: fatal error: longintrepr.h: No such file or directory",
                 "fusebind.c:812:21: error: 'PyThreadState' {aka 'struct _ts'} has no member "
                 "named 'recursion_depth'"):
        kind, repaired = _repair(UV_BUILD_FAILURE.format(line=line), apt=True)
        assert kind == "dependency_build_failed" and repaired is not None
        assert repaired[0].python == "3.10" and "switch Python 3.11 -> 3.10" in repaired[1]


# A C extension that includes jansson's header and links its library: libjansson-dev is
# neither in the Docker base image nor on this host.
JSONC = {
    "pyproject.toml": """\
        [build-system]
        requires = ["setuptools>=61"]
        build-backend = "setuptools.build_meta"

        [project]
        name = "jsonc"
        version = "0.1.0"
        requires-python = ">=3.8"

        [project.optional-dependencies]
        test = ["pytest"]

        [tool.setuptools.packages.find]
        where = ["src"]
        """,
    "setup.py": """\
        from setuptools import Extension, setup

        setup(ext_modules=[Extension("jsonc._jsonc", ["src/jsonc/_jsonc.c"], libraries=["jansson"])])
        """,
    "src/jsonc/__init__.py": "from jsonc._jsonc import dump_int\n",
    "src/jsonc/_jsonc.c": """\
        #define PY_SSIZE_T_CLEAN
        #include <Python.h>
        #include <jansson.h>

        static PyObject *dump_int(PyObject *self, PyObject *args) {
            long value;
            if (!PyArg_ParseTuple(args, "l", &value)) return NULL;
            json_t *number = json_integer(value);
            char *text = json_dumps(number, JSON_ENCODE_ANY);
            json_decref(number);
            PyObject *result = PyUnicode_FromString(text);
            free(text);
            return result;
        }

        static PyMethodDef methods[] = {
            {"dump_int", dump_int, METH_VARARGS, "The JSON text of an integer."},
            {NULL, NULL, 0, NULL}};
        static struct PyModuleDef module = {PyModuleDef_HEAD_INIT, "_jsonc", NULL, -1, methods};

        PyMODINIT_FUNC PyInit__jsonc(void) { return PyModule_Create(&module); }
        """,
    "tests/test_jsonc.py": """\
        from jsonc import dump_int


        def test_dump():
            assert dump_int(42) == "42"


        def test_negative():
            assert dump_int(-7) == "-7"
        """,
}
JANSSON = ["libjansson-dev", "libjansson4"]


def _jsonc_repo(make_repo):
    import textwrap

    return make_repo("jsonc", {path: textwrap.dedent(text) for path, text in JSONC.items()})


def _absent(packages: list[str]) -> list[str]:
    status = subprocess.run(["dpkg-query", "-W", "-f=${Package} ${db:Status-Status}\n", *packages],
                            capture_output=True, text=True).stdout
    return [p for p in packages if f"{p} installed" not in status]


@pytest.mark.slow
@pytest.mark.docker
def test_docker_installs_the_dev_package_a_c_extension_includes(make_repo, tmp_path: Path) -> None:
    repo = _jsonc_repo(make_repo)
    options = SetupOptions(sandbox=DockerSandboxConfig(), use_refdb=False, commit_images=False)
    record = SetupEngine(options).setup(str(repo.path), on_date=PIN_DATE)
    assert record.status == "validated", record.failure_reason
    first = record.iterations[0]
    assert first.diagnosis is not None and first.diagnosis.kind == "system_packages"
    assert first.repair == "install Debian packages libjansson-dev"
    assert record.python == first.python  # no other Python was tried
    assert record.tests.PASSED == 2 and record.system_packages == ["libjansson-dev"]
    assert record.iterations[-1].system_packages == ["libjansson-dev"]


@pytest.mark.slow
def test_local_backend_installs_system_packages_on_the_host_only_when_allowed(
        make_repo, tmp_path: Path) -> None:
    if os.geteuid() != 0 or shutil.which("apt-get") is None:
        pytest.fail("this test installs a Debian package on the host: run it as root on Debian")
    repo = _jsonc_repo(make_repo)
    absent = _absent(JANSSON)
    if "libjansson-dev" not in absent:
        subprocess.run(["apt-get", "purge", "-y", "-qq", "libjansson-dev"], check=True,
                       capture_output=True)
    boxes = str(tmp_path / "boxes")
    refused = SetupEngine(SetupOptions(sandbox=LocalSandboxConfig(tmp_dir=boxes), use_refdb=False))
    failed = refused.setup(str(repo.path), on_date=PIN_DATE)
    assert failed.status == "failed" and len(failed.iterations) == 1
    assert "needs Debian packages: libjansson-dev" in (failed.failure_reason or "")
    assert "--system-packages" in (failed.failure_reason or "") and failed.system_packages == []
    out = tmp_path / "setup.json"
    try:  # allowed from the command line
        result = _cli("setup", str(repo.path), "--date", PIN_DATE, "--system-packages",
                      "--no-refdb", "--out", str(out))
        assert result.returncode == 0, result.stderr
        record = SetupRecord.model_validate_json(out.read_text())
        assert record.status == "validated", record.failure_reason
        assert record.provenance is not None
        assert record.provenance.sandbox["system_packages"] is True
        assert record.iterations[0].repair == "install Debian packages libjansson-dev"
        assert record.tests.PASSED == 2
        assert record.system_packages == ["libjansson-dev"]  # what this host did not have
        assert record.install[0].startswith("apt-get update")
    finally:  # the host as it was
        if absent:
            subprocess.run(["apt-get", "purge", "-y", "-qq", *absent], capture_output=True)


def _cli(*args: str, env: dict[str, str] | None = None, unprivileged: bool = False
         ) -> subprocess.CompletedProcess[str]:
    # a user namespace of its own: the process is not root (its files stay readable)
    prefix = ["unshare", "--user"] if unprivileged else []
    return subprocess.run([*prefix, sys.executable, "-m", "benchsmith.cli", *args],
                          capture_output=True, text=True, env=env, timeout=300)


def test_system_packages_flag_is_refused_where_the_host_cannot(make_repo, tmp_path: Path) -> None:
    repo = _jsonc_repo(make_repo)
    # no apt-get on PATH: not a host that can install Debian packages
    bare = {**os.environ, "PATH": str(Path(sys.executable).parent)}
    result = _cli("setup", str(repo.path), "--date", PIN_DATE, "--system-packages", env=bare)
    lines = [line for line in result.stderr.splitlines() if line.strip()]
    assert result.returncode == 2 and len(lines) == 1 and "Traceback" not in result.stderr
    assert "--system-packages" in lines[0] and "not Debian-like" in lines[0]
    # not root
    batch = tmp_path / "repos.txt"
    batch.write_text(f"{repo.path} {PIN_DATE}\n")
    result = _cli("setup-batch", str(batch), "--out", str(tmp_path / "out.jsonl"),
                  "--system-packages", unprivileged=True)
    lines = [line for line in result.stderr.splitlines() if line.strip()]
    assert result.returncode == 2 and len(lines) == 1, result.stderr
    assert "--system-packages: installing Debian packages needs root" in lines[0]
    assert not (tmp_path / "out.jsonl").exists()
