"""Moving an installed checkout to another commit reinstalls the project only when the install
could be stale there: an editable install whose build did not change serves every commit, and
one whose declared requirements alone changed is reinstalled only where one is not installed."""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest

from benchsmith.harness.reinstall import Reinstall, move_to, reinstall_between, satisfied
from benchsmith.sandbox import LocalSandboxConfig
from benchsmith.sandbox.config import make_sandbox

SETUP = """
from setuptools import setup
setup(name="calc", version="1.0",
      packages=["calc", "calc.parsing"],
      package_data={"calc": ["*.txt"]})
"""
EDITABLE = "uv pip install --no-deps --reinstall -e ."


def _head(repo: Any) -> str:
    return subprocess.run(["git", "-C", str(repo.path), "rev-parse", "HEAD"], check=True,
                          capture_output=True, text=True).stdout.strip()


@pytest.fixture
def calc(make_repo: Any) -> Any:
    return make_repo("calc", {"setup.py": SETUP, "calc/__init__.py": "", "calc/core.py": "X = 1\n",
                              "calc/parsing/__init__.py": "", "setup.cfg": "[flake8]\nignore = E1\n"})


def _moved(repo: Any, files: dict[str, str | None], reinstall: str = EDITABLE
           ) -> Reinstall | None:
    first = _head(repo)
    second = repo.commit(files)
    return reinstall_between(reinstall, repo.path / ".git", first, second)


@pytest.mark.parametrize("files", [
    {"calc/core.py": "X = 2\n"},  # code
    {"calc/parsing/latex.py": "Y = 1\n", "calc/parsing/sub/__init__.py": ""},  # a subpackage
    {"setup.py": SETUP.replace('"calc.parsing"]', '"calc.parsing", "calc.parsing.sub"]')},
    {"setup.py": SETUP.replace('["*.txt"]', '["*.txt", "*.g4"]')},  # package data
    {"setup.cfg": "[flake8]\nignore = E2\n"},  # another tool's settings
    {"setup.cfg": None},
])
def test_an_editable_install_serves_a_commit_whose_build_did_not_change(
        calc: Any, files: dict[str, str | None]) -> None:
    assert _moved(calc, files) is None


@pytest.mark.parametrize("files", [
    {"setup.py": SETUP.replace('version="1.0"', 'version="1.1"')},
    {"setup.py": SETUP.replace(")\n", ', entry_points={"console_scripts": ["calc=calc.core:main"]})\n')},
    {"setup.cfg": "[options.entry_points]\nconsole_scripts =\n    calc = calc.core:main\n"},
    {"pyproject.toml": '[build-system]\nrequires = ["setuptools", "cython"]\n'},
    {"pyproject.toml": '[project]\nname = "calc"\nscripts = {calc = "calc.core:main"}\n'},
    {"pyproject.toml": '[tool.setuptools]\npackages = ["calc"]\n'},  # a build backend's table
    {"calc/_speedups.pyx": "def f(): pass\n"},  # a compiled source, the first
    {"other/__init__.py": ""},  # a new top-level package
    {"tool.py": "print(1)\n"},  # a new top-level module
    {"setup.py": SETUP.replace("setup(", "setup(**{'install_requires': ['six']}, ")},
    {"setup.py": SETUP.replace("setup(", "setup(install_requires=open('reqs').read().split(), ")},
    {"setup.cfg": "[options]\ninstall_requires = file: requirements.txt\n"},
    {"setup.py": "this is not Python("},
])
def test_a_commit_whose_build_changed_is_reinstalled(calc: Any, files: dict[str, str | None]) -> None:
    assert _moved(calc, files) == Reinstall(EDITABLE)


@pytest.mark.parametrize(("files", "requires"), [
    ({"setup.py": SETUP.replace("setup(", 'setup(install_requires=["six"],')}, ("six",)),
    ({"setup.py": "REQUIRES = ['six>=1.10', 'attrs']\n" + SETUP.replace(
        "setup(", "setup(install_requires=REQUIRES, ")}, ("six>=1.10", "attrs")),
    ({"setup.cfg": "[flake8]\nignore = E1\n[options]\ninstall_requires =\n    six\n"},
     ("six",)),
    ({"setup.cfg": "[options]\ninstall_requires = six; attrs>=20\n"}, ("six", "attrs>=20")),
    ({"pyproject.toml": '[project]\ndependencies = [\n    "six>=1.15",\n]\n'}, ("six>=1.15",)),
])
def test_a_commit_whose_requirements_alone_changed_is_reinstalled_where_one_is_missing(
        calc: Any, files: dict[str, str | None], requires: tuple[str, ...]) -> None:
    assert _moved(calc, files) == Reinstall(EDITABLE, requires)


@pytest.mark.parametrize("files", [
    {"setup.py": "# the calculator\n" + SETUP.replace("version=", "version = ")},  # layout
    {"setup.py": SETUP.replace("setup(", 'setup(description="A calculator", python_requires=">=3.6",'
                                         ' classifiers=["Programming Language :: Python"], ')},
    {"pyproject.toml": "[tool.mypy]\nfiles = ['calc', 'calc/parsing']\n[tool.black]\nline-length = 99\n"},
    {"setup.cfg": "[metadata]\ndescription = a calculator\nlong_description = file: README\n"},
    {"tests/roots/ext/setup.py": "from setuptools import setup\nsetup(name='ext')\n"},  # test data
    {"tests/roots/ext/pyproject.toml": "[project]\ndependencies = ['numpy']\n"},
    {"tests/roots/cython/module.pyx": "def f(): pass\n", "docs/example.h": "int f(void);\n"},
    {"requirements.txt": "six\n"},  # read by nothing this build declares
])
def test_what_does_not_shape_the_install_does_not_count(
        calc: Any, files: dict[str, str | None]) -> None:
    assert _moved(calc, files) is None


def test_compiled_test_data_counts_where_the_project_builds_extensions(calc: Any) -> None:
    calc.commit({"setup.py": SETUP.replace("setup(", "setup(ext_modules=[], ")})
    assert _moved(calc, {"tests/roots/module.pyx": "def f(): pass\n"}) == Reinstall(EDITABLE)


def test_a_requirement_file_that_a_computed_list_may_read_counts(calc: Any) -> None:
    calc.commit({"setup.py": SETUP.replace(
        "setup(", "setup(install_requires=open('requirements.txt').read().split(), "),
        "requirements.txt": "six\n"})
    assert _moved(calc, {"requirements.txt": "six\nattrs\n"}) == Reinstall(EDITABLE)
    assert _moved(calc, {"calc/core.py": "X = 3\n"}) is None


def test_an_install_that_copies_or_leaves_files_in_the_checkout_is_always_reinstalled(
        calc: Any) -> None:
    # copied into site-packages; metadata and extensions left in the checkout, where moving
    # it (git clean) may remove them; a Node build
    for command in ("uv pip install --no-deps --reinstall .", "python setup.py develop --no-deps",
                    "python -m pip install --no-deps -e .", "npm run build"):
        assert _moved(calc, {"calc/core.py": f"X = {len(command)}\n"}, command) == Reinstall(command)
    assert _moved(calc, {"calc/core.py": "X = 0\n"}, "CFLAGS=-O0 " + EDITABLE) is None


def test_a_project_with_compiled_sources_is_always_reinstalled(calc: Any) -> None:
    calc.commit({"calc/_speedups.c": "int f(void) { return 0; }\n"})
    assert _moved(calc, {"calc/core.py": "X = 2\n"}) == Reinstall(EDITABLE)  # .so built in place


def test_what_git_cannot_tell_is_reinstalled(calc: Any, tmp_path: Path) -> None:
    certain = Reinstall(EDITABLE)
    assert reinstall_between(EDITABLE, calc.path / ".git", "0" * 40, _head(calc)) == certain
    assert reinstall_between(EDITABLE, None, _head(calc), _head(calc)) == certain
    assert reinstall_between(None, calc.path / ".git", _head(calc), _head(calc)) is None


@pytest.mark.slow
def test_a_checkout_moved_without_reinstall_imports_the_new_commits_code(
        calc: Any, tmp_path: Path) -> None:
    """Really installed: the venv imports the moved files, and the entry point a later commit
    adds is there only after the reinstall that move asks for."""
    venv = tmp_path / "venv"
    env = {**os.environ, "VIRTUAL_ENV": str(venv)}
    subprocess.run(["uv", "venv", "-q", "--python", sys.executable, str(venv)], check=True, env=env)
    run = lambda *args: subprocess.run(args, cwd=calc.path, env=env, capture_output=True, text=True)  # noqa: E731
    installed = run("uv", "pip", "install", "-q", "--no-deps", "-e", ".")
    if installed.returncode:
        pytest.skip(f"setuptools is not reachable: {installed.stderr[-300:]}")
    first = _head(calc)
    second = calc.commit({"calc/core.py": "X = 2\n\ndef main():\n    print('calc', X)\n"})
    assert reinstall_between(EDITABLE, calc.path / ".git", first, second) is None
    python = str(venv / "bin" / "python")
    assert run(python, "-c", "import calc.core; print(calc.core.X)").stdout.strip() == "2"

    third = calc.commit({"setup.py": SETUP.replace(
        ")\n", ', entry_points={"console_scripts": ["calc=calc.core:main"]})\n')})
    again = reinstall_between(EDITABLE, calc.path / ".git", second, third)
    assert again == Reinstall(EDITABLE) and not (venv / "bin" / "calc").exists()
    assert run(*again.command.split()).returncode == 0
    assert run(str(venv / "bin" / "calc")).stdout.strip() == "calc 2"


@pytest.mark.parametrize(("requires", "met"), [
    (["six"], True),
    (["six>=1.10,<2", "Attrs==20.3.0"], True),  # names compared canonically
    (["six>=2"], False),
    (["missing"], False),
    (["missing; python_version < '3'", "six"], True),  # a marker that does not hold
    (["missing; python_version >= '3'"], False),
    (["missing; extra == 'test'"], True),
    (["six[extra]"], False),  # what an extra adds is not known here
    (["calc @ https://example.invalid/calc.tar.gz"], False),
    (["not a requirement !"], False),
    ([], True),
])
def test_requirements_are_checked_against_what_is_installed(requires: list[str], met: bool) -> None:
    installed = {"six": "1.16.0", "attrs": "20.3.0", "broken": "not-a-version"}
    env = {"python_version": "3.11", "python_full_version": "3.11.7", "sys_platform": "linux"}
    assert satisfied(requires, installed, env) is met
    assert satisfied(["broken>=1"], installed, env) is False


@pytest.mark.slow
def test_a_conditional_reinstall_runs_only_where_a_requirement_is_missing(
        calc: Any, tmp_path: Path) -> None:
    """Really installed in a local sandbox: a move whose new requirement is not installed
    reinstalls, with the network; one whose requirements are all installed keeps the install
    and stays offline."""
    first = _head(calc)
    second = calc.commit({"setup.py": SETUP.replace("setup(", "setup(install_requires=['six'], ")})
    third = calc.commit({"setup.py": SETUP.replace(
        "setup(", "setup(install_requires=['six>=1.0; python_version >= \\'3\\''], ")})
    log = tmp_path / "reinstalls.log"
    command = f"uv pip install -q -e . && echo again >> {log}"
    sandbox = make_sandbox(LocalSandboxConfig(tmp_dir=str(tmp_path / "boxes")))
    try:
        sandbox.upload(calc.path, sandbox.workdir)
        sandbox.setup_python(f"{sys.version_info.major}.{sys.version_info.minor}")
        installed = sandbox.exec(f"git checkout -q -f {first} && {command}", timeout=600)
        if not installed.ok:
            pytest.skip(f"setuptools is not reachable: {installed.output[-300:]}")
        moved = reinstall_between(command, calc.path / ".git", first, second)
        assert moved == Reinstall(command, ("six",))
        sandbox.set_network(False)
        move_to(sandbox, second, moved, {}, 600, connect=True)
        assert log.read_text().count("again") == 2 and sandbox.exec("python -c 'import six'").ok
        assert not sandbox._offline  # type: ignore[attr-defined]

        moved = reinstall_between(command, calc.path / ".git", second, third)
        assert moved is not None and moved.unless is not None
        sandbox.set_network(False)
        move_to(sandbox, third, moved, {}, 600, connect=True)
        assert log.read_text().count("again") == 2  # six is installed: nothing ran
        assert sandbox._offline  # type: ignore[attr-defined]
        head = sandbox.exec("git rev-parse HEAD")
        assert head.output.strip() == third
    finally:
        sandbox.close()


@pytest.mark.parametrize("version", ["2.7", "3.6", f"{sys.version_info.major}.{sys.version_info.minor}"])
def test_the_installed_distributions_are_listed_by_every_python_an_environment_may_have(
        version: str) -> None:
    """The listing runs in the sandbox's own Python, old ones included."""
    from benchsmith.harness.reinstall import _LIST_INSTALLED

    found = sorted(Path("/root/.pyenv/versions").glob(f"{version}.*/bin/python"))
    python = str(found[0]) if found else shutil.which(f"python{version}")
    if python is None:
        pytest.skip(f"no Python {version} on this machine")
    listed = subprocess.run([python, "-c", _LIST_INSTALLED], capture_output=True, text=True,
                            timeout=60)
    line = next(line for line in listed.stdout.splitlines() if line.startswith("BENCHSMITH-INSTALLED "))
    data = json.loads(line.split(" ", 1)[1])
    assert data["env"]["python_version"] == version
    assert "pip" in {name.lower() for name in data["installed"]}, data["installed"]
    assert satisfied(["pip>=1; python_version >= '2.7'"], data["installed"], data["env"])
