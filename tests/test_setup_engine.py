"""The setup engine end to end on self-built repositories, with real uv installs from PyPI."""

from __future__ import annotations

from pathlib import Path

import pytest

from benchsmith.core import BenchsmithError
from benchsmith.sandbox import LocalSandboxConfig
from benchsmith.setup.engine import SetupEngine, SetupOptions
from benchsmith.setup.refdb import ReferenceDB

from .conftest import PIN_DATE

pytestmark = pytest.mark.slow

PYPROJECT_TEST_EXTRA = """
[build-system]
requires = ["setuptools>=61"]
build-backend = "setuptools.build_meta"

[project]
name = "calc"
version = "0.1.0"
requires-python = ">=3.8"

[project.optional-dependencies]
test = ["pytest"]
"""

CALC = """
def add(a, b):
    return a + b
"""

CALC_TESTS = """
import pytest
from calc import add


@pytest.mark.parametrize("a, b, total", [(1, 2, 3), (2, 2, 4), (-1, 1, 0)], ids=["one two", "two [2]", "neg - pos"])
def test_add(a, b, total):
    assert add(a, b) == total


def test_add_strings():
    assert add("a", "b") == "ab"
"""


def engine(tmp_path: Path, **overrides) -> SetupEngine:
    options = SetupOptions(sandbox=LocalSandboxConfig(tmp_dir=str(tmp_path / "boxes")), **overrides)
    return SetupEngine(options)


def test_pytest_project_with_test_extra_validates_first_round(make_repo, tmp_path: Path) -> None:
    repo = make_repo("calc", {"pyproject.toml": PYPROJECT_TEST_EXTRA, "src/calc/__init__.py": CALC,
                              "tests/test_calc.py": CALC_TESTS})
    record = engine(tmp_path).setup(str(repo.path), on_date=PIN_DATE)
    assert record.status == "validated", record.failure_reason
    assert len(record.iterations) == 1
    assert record.python == "3.11"  # newest CPython released before 2023-06-01
    assert "'.[test]'" in record.install[-1] and "--exclude-newer 2023-06-01T00:00:00Z" in record.install[-1]
    names = {t.name for t in record.tests.tests}
    assert "tests/test_calc.py::test_add[two [2]]" in names
    assert "tests/test_calc.py::test_add[neg - pos]" in names
    assert record.tests.PASSED == 4 and record.pass_rate == 1.0
    assert record.clean_run_s and record.duration_s >= record.clean_run_s
    assert record.llm_calls == 0
    assert "extras" in record.sources


def test_unittest_project_runs_with_unittest(make_repo, tmp_path: Path) -> None:
    repo = make_repo("ut", {
        "setup.py": "from setuptools import setup\nsetup(name='ut', version='1.0', py_modules=['ut'])\n",
        "ut.py": "def double(x):\n    return 2 * x\n",
        "tests/__init__.py": "",
        "tests/test_ut.py": """
            import unittest
            import ut

            class TestDouble(unittest.TestCase):
                def test_int(self):
                    self.assertEqual(ut.double(2), 4)

                def test_str(self):
                    self.assertEqual(ut.double("a"), "aa")
        """,
        ".github/workflows/ci.yml": """
            on: [push]
            jobs:
              test:
                runs-on: ubuntu-latest
                steps:
                  - run: pip install .
                  - run: python -m unittest discover -s tests -v
        """,
    })
    record = engine(tmp_path).setup(str(repo.path), on_date=PIN_DATE)
    assert record.status == "validated", record.failure_reason
    assert record.runner == "unittest"
    assert "python -m unittest discover -s tests" in record.test[0]
    assert {t.name for t in record.tests.tests} == {"test_ut.TestDouble.test_int",
                                                    "test_ut.TestDouble.test_str"}


def test_tox_only_project_gets_its_deps(make_repo, tmp_path: Path) -> None:
    repo = make_repo("toxy", {
        "setup.py": "from setuptools import setup\nsetup(name='toxy', version='1.0', py_modules=['toxy'])\n",
        "toxy.py": "import six\n\ndef text(x):\n    return six.text_type(x)\n",
        "tox.ini": """
            [tox]
            envlist = py310,py311

            [testenv]
            deps =
                pytest
                six
            commands = pytest tests {posargs}
        """,
        "tests/test_toxy.py": "import toxy\n\ndef test_text():\n    assert toxy.text(1) == '1'\n",
    })
    record = engine(tmp_path).setup(str(repo.path), on_date=PIN_DATE)
    assert record.status == "validated", record.failure_reason
    assert len(record.iterations) == 1
    assert "six" in record.install[-1]
    assert record.test[0].endswith("tests")


def test_undeclared_import_is_repaired_by_installing_the_distribution(make_repo, tmp_path: Path) -> None:
    repo = make_repo("undeclared", {
        "pyproject.toml": PYPROJECT_TEST_EXTRA,
        "src/calc/__init__.py": CALC,
        "tests/test_yaml.py": "import yaml\n\ndef test_load():\n    assert yaml.safe_load('a: 1') == {'a': 1}\n",
    })
    record = engine(tmp_path).setup(str(repo.path), on_date=PIN_DATE)
    assert record.status == "validated", record.failure_reason
    assert len(record.iterations) == 2
    first = record.iterations[0]
    assert first.diagnosis is not None and first.diagnosis.kind == "missing_modules"
    assert first.diagnosis.category == "installation"
    assert first.repair == "install PyYAML (imported by the tests)"
    assert "PyYAML" in record.install[-1]


def test_plugin_needed_by_config_and_by_fixture(make_repo, tmp_path: Path) -> None:
    repo = make_repo("plugins", {
        "pyproject.toml": PYPROJECT_TEST_EXTRA + '\n[tool.pytest.ini_options]\naddopts = "--timeout=60"\n',
        "src/calc/__init__.py": CALC,
        "tests/test_mock.py": """
            import calc

            def test_with_mocker(mocker):
                mocker.patch.object(calc, "add", return_value=5)
                assert calc.add(1, 1) == 5
        """,
    })
    record = engine(tmp_path).setup(str(repo.path), on_date=PIN_DATE)
    assert record.status == "validated", record.failure_reason
    # pytest-timeout comes from the configured addopts up front; pytest-mock from a repair.
    assert "pytest-timeout" in record.iterations[0].commands[-2].command
    assert record.iterations[0].diagnosis is not None
    assert record.iterations[0].diagnosis.facts["fixtures"] == ["mocker"]
    assert "pytest-mock" in record.install[-1]


def test_code_needing_an_older_python_switches_interpreter(make_repo, tmp_path: Path) -> None:
    repo = make_repo("oldpy", {
        "setup.py": "from setuptools import setup\nsetup(name='oldpy', version='1.0', py_modules=['oldpy'])\n",
        "oldpy.py": "import collections\n\ndef is_mapping(x):\n    return isinstance(x, collections.Mapping)\n",
        "requirements-test.txt": "pytest\n",
        "test_oldpy.py": "import oldpy\n\ndef test_dict():\n    assert oldpy.is_mapping({})\n",
    })
    record = engine(tmp_path).setup(str(repo.path), on_date=PIN_DATE)
    assert record.status == "validated", record.failure_reason
    assert record.iterations[0].python == "3.11"
    assert record.iterations[0].diagnosis is not None
    assert record.iterations[0].diagnosis.category == "python"
    assert record.python == "3.9"


def test_reference_database_makes_a_nearby_commit_one_round(make_repo, tmp_path: Path) -> None:
    repo = make_repo("refdb", {
        "pyproject.toml": PYPROJECT_TEST_EXTRA,
        "src/calc/__init__.py": CALC,
        "tests/test_yaml.py": "import yaml\n\ndef test_load():\n    assert yaml.safe_load('a: 1') == {'a': 1}\n",
    })
    first_commit = repo.commit({"README.md": "calc\n"}, date="2023-05-10T12:00:00+00:00")
    second_commit = repo.commit({"tests/test_more.py": "def test_more():\n    assert True\n"},
                                date="2023-05-20T12:00:00+00:00")
    refdb = tmp_path / "ref.sqlite"
    first = engine(tmp_path, refdb=str(refdb)).setup(str(repo.path), rev=first_commit)
    assert first.status == "validated" and len(first.iterations) == 2
    assert ReferenceDB(refdb).count(first.repo) == 1
    second = engine(tmp_path, refdb=str(refdb)).setup(str(repo.path), rev=second_commit)
    assert second.status == "validated"
    assert len(second.iterations) == 1
    assert second.iterations[0].origin.startswith(f"reference {first_commit[:12]}")
    assert second.exclude_newer is not None and second.exclude_newer.startswith("2023-05-20")


def test_failing_tests_are_not_validated(make_repo, tmp_path: Path) -> None:
    repo = make_repo("broken", {
        "pyproject.toml": PYPROJECT_TEST_EXTRA,
        "src/calc/__init__.py": "def add(a, b):\n    return a - b\n",
        "tests/test_calc.py": CALC_TESTS,
    })
    record = engine(tmp_path, max_iterations=1).setup(str(repo.path), on_date=PIN_DATE)
    assert record.status == "failed"
    assert record.pass_rate is not None and record.pass_rate < 0.95
    assert record.failure_category in {"undecidable", "python"}
    assert len(record.iterations) == 2


def test_unreachable_index_is_an_error_not_a_repo_failure(make_repo, tmp_path: Path) -> None:
    repo = make_repo("offline", {"pyproject.toml": PYPROJECT_TEST_EXTRA, "src/calc/__init__.py": CALC,
                                 "tests/test_calc.py": CALC_TESTS})
    options = SetupOptions(sandbox=LocalSandboxConfig(
        tmp_dir=str(tmp_path / "boxes"),
        env={"UV_DEFAULT_INDEX": "http://127.0.0.1:9/simple", "UV_OFFLINE": "0",
             "UV_CACHE_DIR": str(tmp_path / "empty-cache")}))
    record = SetupEngine(options).setup(str(repo.path), on_date=PIN_DATE)
    assert record.status == "error"
    assert record.failure_category == "infrastructure"
    assert "package index unreachable" in (record.failure_reason or "")
    assert len(record.iterations) == 1


@pytest.mark.parametrize(
    ("source", "kwargs", "message"),
    [
        ("/does/not/exist", {}, "repository path does not exist"),
        ("file:///does/not/exist.git", {}, "cannot clone"),
    ],
)
def test_bad_sources_raise_one_line_errors(source: str, kwargs: dict, message: str, tmp_path: Path) -> None:
    with pytest.raises(BenchsmithError, match=message) as info:
        engine(tmp_path).setup(source, **kwargs)
    assert "\n" not in str(info.value)


def test_date_before_first_commit_and_no_python_project(make_repo, tmp_path: Path) -> None:
    repo = make_repo("docs-only", {"README.md": "just words\n"})
    with pytest.raises(BenchsmithError, match="no commit on the default branch .* before 2001-01-01"):
        engine(tmp_path).setup(str(repo.path), on_date="2001-01-01")
    with pytest.raises(BenchsmithError, match="no Python project"):
        engine(tmp_path).setup(str(repo.path), on_date=PIN_DATE)


def test_source_clone_is_never_modified(make_repo, tmp_path: Path) -> None:
    repo = make_repo("pristine", {"pyproject.toml": PYPROJECT_TEST_EXTRA, "src/calc/__init__.py": CALC,
                                  "tests/test_calc.py": CALC_TESTS})
    before = sorted(p.relative_to(repo.path) for p in repo.path.rglob("*"))
    engine(tmp_path).setup(str(repo.path), on_date=PIN_DATE)
    after = sorted(p.relative_to(repo.path) for p in repo.path.rglob("*"))
    assert before == after


MARKED_PYPROJECT = PYPROJECT_TEST_EXTRA + """
[tool.pytest.ini_options]
markers = ["slow: takes long"]
"""
MARKED_TESTS = """
import pytest
from calc import add


def test_one():
    assert add(1, 1) == 2


def test_two():
    assert add(2, 2) == 4


@pytest.mark.skip(reason="not today")
def test_skipped():
    assert False


@pytest.mark.slow
def test_slow_and_broken():
    assert False
"""
CI_WORKFLOW = """
name: ci
on: [push]
jobs:
  test:
    runs-on: ubuntu-latest
    steps:
      - uses: actions/checkout@v3
      - run: pip install -e .[test]
      - run: pytest -rs -m "not slow" tests
"""


def test_the_projects_report_and_marker_options_are_merged_not_mangled(make_repo, tmp_path: Path) -> None:
    repo = make_repo("marked", {"pyproject.toml": MARKED_PYPROJECT, "src/calc/__init__.py": CALC,
                                "tests/test_marked.py": MARKED_TESTS,
                                ".github/workflows/ci.yml": CI_WORKFLOW})
    record = engine(tmp_path).setup(str(repo.path), on_date=PIN_DATE)
    assert record.status == "validated", record.failure_reason
    command = record.test[0]
    assert "-m 'not slow'" in command and "-rs" not in command and " -rap " in command
    assert record.iterations[0].commands[-1].command == command  # what ran is the plan
    assert (record.tests.PASSED, record.tests.SKIPPED, record.tests.FAILED) == (2, 1, 0)


CLI_APP = """
import argparse


def main(argv=None):
    parser = argparse.ArgumentParser(prog="tool")
    parser.add_argument("--count", type=int, required=True)
    args = parser.parse_args(argv)
    return args.count * 2
"""
CLI_TESTS = """
from calc.cli import main


def test_count():
    assert main(["--count", "2"]) == 4


def test_default_count():  # the CLI changed under these tests: argparse exits with status 2
    assert main([]) == 0


def test_named():
    assert main(["--name", "x"]) == 0


def test_verbose():
    assert main(["-v"]) == 0
"""


def test_a_repair_that_changes_nothing_is_undone_and_not_repeated(make_repo, tmp_path: Path) -> None:
    repo = make_repo("clitool", {"pyproject.toml": PYPROJECT_TEST_EXTRA, "src/calc/__init__.py": CALC,
                                 "src/calc/cli.py": CLI_APP, "tests/test_cli.py": CLI_TESTS})
    record = engine(tmp_path).setup(str(repo.path), on_date=PIN_DATE)
    assert record.status == "failed" and record.pass_rate == 0.25
    rounds = record.iterations
    assert len(rounds) == 2, [(r.python, r.diagnosis and r.diagnosis.kind, r.repair) for r in rounds]
    assert rounds[0].repair and rounds[1].undone and "undone" in rounds[1].undone
    assert record.python == rounds[0].python  # the plan is the one before the vain repair


# Test IDs that carry the checkout's path, as a parametrization over paths of the project does.
PATH_TESTS = """
from pathlib import Path

import pytest

HERE = Path(__file__).resolve().parent


@pytest.mark.parametrize("where", [str(HERE), str(HERE.parent / "src")])
def test_found(where):
    assert (Path(where) / "missing.txt").exists()


def test_fine():
    assert True
"""


def test_a_test_id_with_the_sandbox_path_is_the_same_test_in_every_round(make_repo, tmp_path: Path) -> None:
    repo = make_repo("paths", {"pyproject.toml": PYPROJECT_TEST_EXTRA, "src/calc/__init__.py": CALC,
                               "tests/test_paths.py": PATH_TESTS})
    record = engine(tmp_path).setup(str(repo.path), on_date=PIN_DATE)
    rounds = record.iterations
    assert len(rounds) == 2 and rounds[1].undone, [(r.python, r.repair, r.undone) for r in rounds]
    assert record.status == "failed" and record.pass_rate == pytest.approx(1 / 3, abs=1e-3)


# The suite needs a cache that a script of the repository fills, and a local package server
# that the project's noxfile installs (as pipx's suite has them).
CACHE_CONFTEST = """
import subprocess
from pathlib import Path

import pytest

CACHE = Path(__file__).resolve().parent.parent / ".tests" / "cache"


@pytest.fixture(scope="session", autouse=True)
def filled_cache():
    if not (CACHE / "index.txt").is_file():
        raise Exception(f"Directory {CACHE} is empty. Please run the following command to "
                        f"populate it: python3 scripts/fill_cache.py testdata {CACHE}")
    subprocess.run(["pypi-server", "--version"], check=True, capture_output=True)
"""
FILL_CACHE = """
import shutil
import sys
from pathlib import Path

source, target = Path(sys.argv[1]), Path(sys.argv[2])
shutil.copy(source / "index.txt", target / "index.txt")  # the task runner makes `target`
"""
NOXFILE = """
import nox


@nox.session
def tests(session):
    session.install("-e", ".[test]", "pypiserver")
    session.run("python", "scripts/fill_cache.py", "testdata", ".tests/cache")
    session.run("pytest")
"""


def test_a_step_and_a_program_the_tests_ask_for_are_provided(make_repo, tmp_path: Path) -> None:
    repo = make_repo("cached", {"pyproject.toml": PYPROJECT_TEST_EXTRA, "src/calc/__init__.py": CALC,
                                "tests/test_calc.py": CALC_TESTS, "tests/conftest.py": CACHE_CONFTEST,
                                "scripts/fill_cache.py": FILL_CACHE, "testdata/index.txt": "calc\n",
                                "noxfile.py": NOXFILE})
    record = engine(tmp_path).setup(str(repo.path), on_date=PIN_DATE)
    assert record.status == "validated", (record.failure_reason, [i.repair for i in record.iterations])
    kinds = [i.diagnosis.kind for i in record.iterations if i.diagnosis]
    assert kinds == ["prepare_step", "missing_programs"]
    assert record.plan is not None and record.plan.prepare == [
        "mkdir -p .tests/cache && python3 scripts/fill_cache.py testdata .tests/cache"]
    assert "pypiserver" in record.plan.packages
    assert record.install[-1] == record.plan.prepare[0]


# The cache is filled by pip itself (as `pip download` fills pipx's): uv's environments have
# no pip, while every virtualenv of the project's time had one.
FILL_CACHE_WITH_PIP = """
import subprocess
import sys
from pathlib import Path

source, target = Path(sys.argv[1]), Path(sys.argv[2])
subprocess.run([sys.executable, "-m", "pip", "--version"], check=True)
(target / "index.txt").write_text((source / "index.txt").read_text())
"""


def test_a_setup_step_that_runs_pip_gets_pip(make_repo, tmp_path: Path) -> None:
    conftest = CACHE_CONFTEST.replace('    subprocess.run(["pypi-server", "--version"], '
                                      'check=True, capture_output=True)\n', "")
    repo = make_repo("pipcache", {"pyproject.toml": PYPROJECT_TEST_EXTRA, "src/calc/__init__.py": CALC,
                                  "tests/test_calc.py": CALC_TESTS, "tests/conftest.py": conftest,
                                  "scripts/fill_cache.py": FILL_CACHE_WITH_PIP,
                                  "testdata/index.txt": "calc\n"})
    record = engine(tmp_path).setup(str(repo.path), on_date=PIN_DATE)
    assert record.status == "validated", (record.failure_reason, [i.repair for i in record.iterations])
    diagnoses = [i.diagnosis for i in record.iterations if i.diagnosis]
    assert [d.kind for d in diagnoses] == ["prepare_step", "missing_programs"]
    assert diagnoses[1].facts["programs"] == ["pip"]
    assert record.plan is not None and "pip" in record.plan.packages


def test_submodules_are_checked_out_and_missing_ones_recorded(make_repo, tmp_path: Path) -> None:
    import subprocess

    data = make_repo("tables", {"values.txt": "2 4\n"})
    repo = make_repo("withsub", {"pyproject.toml": PYPROJECT_TEST_EXTRA, "src/calc/__init__.py": CALC,
                                 "tests/test_table.py": (
                                     "from pathlib import Path\nfrom calc import add\n\n\n"
                                     "def test_table():\n"
                                     "    a, b = Path('vendor/tables/values.txt').read_text().split()\n"
                                     "    assert add(int(a), int(a)) == int(b)\n")})
    git = ["git", "-c", "protocol.file.allow=always", "-c", "user.name=F", "-c", "user.email=f@x"]
    subprocess.run([*git, "submodule", "add", "-q", str(data.path), "vendor/tables"], cwd=repo.path,
                   check=True, capture_output=True)
    subprocess.run([*git, "commit", "-q", "-m", "vendor tables"], cwd=repo.path, check=True,
                   env={"GIT_COMMITTER_DATE": "2023-05-02T12:00:00+00:00",
                        "GIT_AUTHOR_DATE": "2023-05-02T12:00:00+00:00", "PATH": "/usr/bin:/bin"})
    record = engine(tmp_path).setup(str(repo.path), on_date=PIN_DATE)
    assert record.status == "validated", record.failure_reason
    assert record.missing_submodules == [] and record.tests.PASSED == 1

    gone = make_repo("gonesub", {"pyproject.toml": PYPROJECT_TEST_EXTRA, "src/calc/__init__.py": CALC,
                                 "tests/test_calc.py": CALC_TESTS,
                                 # a name no project on the package index has: nothing provides it
                                 ".gitmodules": '[submodule "ext"]\n\tpath = ext/calc-vendored-tables\n'
                                                "\turl = https://git.example.invalid/ext/calc-vendored-tables.git\n"})
    record = engine(tmp_path).setup(str(gone.path), on_date=PIN_DATE)
    assert record.status == "validated" and record.missing_submodules == ["ext/calc-vendored-tables"]


def test_an_install_set_that_cannot_be_repaired_gives_way_to_the_next_alternative(make_repo, tmp_path: Path) -> None:
    # CI installs requirements-dev.txt (which names a vendored directory that no longer
    # exists), tox installs requirements-test.txt: the union fails and no rule mends it.
    repo = make_repo("alts", {
        "pyproject.toml": PYPROJECT_TEST_EXTRA, "src/calc/__init__.py": CALC,
        "tests/test_calc.py": CALC_TESTS,
        "requirements-dev.txt": "-e ./vendor/helper\npytest\n",
        "requirements-test.txt": "pytest\niniconfig\n",
        "tox.ini": "[testenv]\ndeps = -rrequirements-test.txt\ncommands = pytest tests\n",
        ".github/workflows/ci.yml": "jobs:\n  t:\n    steps:\n      - run: pip install -r requirements-dev.txt\n"
                                    "      - run: pytest tests\n",
    })
    record = engine(tmp_path).setup(str(repo.path), on_date=PIN_DATE)
    assert record.status == "validated", record.failure_reason
    origins = [i.origin for i in record.iterations]
    assert origins[0] == "rules" and origins[-1].startswith("rules, ")
    assert record.plan is not None and "requirements-dev.txt" not in record.plan.requirement_files
    assert any("start over from the rules, " in (i.repair or "") for i in record.iterations)
    assert any(n.startswith("alternative install set:") for n in record.plan.notes)


def test_a_hosted_submodule_comes_from_the_mirror_directory(make_repo, tmp_path: Path) -> None:
    """`https://github.com/acme/tables.git` in .gitmodules of a mirror `DIR/acme+tool/repo` is
    taken from `DIR/acme+tables/repo` when that exists (GitHub itself is out of reach)."""
    import subprocess

    from benchsmith.harness.checkout import materialize, resolve

    data = make_repo("tables", {"values.txt": "2 4\n"})
    tool = make_repo("tool", {"README.md": "tool\n",
                              ".gitmodules": '[submodule "vendor/tables"]\n\tpath = vendor/tables\n'
                                             "\turl = https://github.com/acme/tables.git\n"})
    head = subprocess.run(["git", "rev-parse", "HEAD"], cwd=data.path, capture_output=True,
                          text=True, check=True).stdout.strip()
    env = {"GIT_COMMITTER_DATE": "2023-05-02T12:00:00+00:00", "GIT_AUTHOR_DATE": "2023-05-02T12:00:00+00:00",
           "PATH": "/usr/bin:/bin"}
    git = ["git", "-c", "user.name=F", "-c", "user.email=f@x"]
    subprocess.run([*git, "update-index", "--add", "--cacheinfo", f"160000,{head},vendor/tables"],
                   cwd=tool.path, check=True)
    subprocess.run([*git, "commit", "-q", "-m", "vendor tables"], cwd=tool.path, check=True, env=env)
    mirrors = tmp_path / "mirrors"
    for name, repo in (("tool", tool), ("tables", data)):
        subprocess.run(["git", "clone", "-q", "--bare", str(repo.path), str(mirrors / f"acme+{name}" / "repo")],
                       check=True)
    checked = materialize(resolve(str(mirrors / "acme+tool" / "repo")), tmp_path / "work")
    assert (checked / "vendor" / "tables" / "values.txt").read_text() == "2 4\n"

    subprocess.run(["rm", "-rf", str(mirrors / "acme+tables")], check=True)
    alone = materialize(resolve(str(mirrors / "acme+tool" / "repo")), tmp_path / "alone")
    assert not (alone / "vendor" / "tables" / "values.txt").exists()


def test_files_the_source_lacks_are_recorded(make_repo, tmp_path: Path) -> None:
    """A partial mirror without a large blob: the checkout lacks that file, the context and the
    failure reason say so (textual's test snapshots were such a file)."""
    import subprocess

    from benchsmith.harness.checkout import materialize, resolve
    from benchsmith.setup.context import gather_context

    repo = make_repo("snap", {"pyproject.toml": PYPROJECT_TEST_EXTRA, "src/calc/__init__.py": CALC,
                              "tests/snapshots/add.txt": "1 + 2 = 3 (snapshot)\n",
                              "tests/test_snap.py": (
                                  "from pathlib import Path\n\n\ndef test_snapshot():\n"
                                  "    assert Path('tests/snapshots/add.txt').read_text().startswith('1 + 2')\n")})
    mirror = tmp_path / "mirrors" / "acme+snap" / "repo"
    subprocess.run(["git", "clone", "-q", "--bare", str(repo.path), str(mirror)], check=True)
    blob = subprocess.run(["git", "rev-parse", "HEAD:tests/snapshots/add.txt"], cwd=mirror,
                          capture_output=True, text=True, check=True).stdout.strip()
    (mirror / "objects" / blob[:2] / blob[2:]).unlink()

    checked = materialize(resolve(str(mirror)), tmp_path / "work")
    assert gather_context(checked).missing_files == ["tests/snapshots/add.txt"]
    record = engine(tmp_path, max_iterations=0).setup(str(mirror), on_date=PIN_DATE)
    assert record.status == "failed" and record.missing_files == ["tests/snapshots/add.txt"]
    assert "the source lacks 1 tracked file(s): tests/snapshots/add.txt" in record.failure_reason


def test_tests_whose_snapshot_file_the_source_lacks_are_recorded_and_not_counted(
        make_repo, tmp_path: Path) -> None:
    """syrupy's `__snapshots__/<module>.ambr` for a test module, absent from a partial mirror:
    that module's failing tests are `missing_input`, like tests that need the network."""
    import subprocess

    from benchsmith.setup.missing_inputs import snapshot_modules

    assert snapshot_modules(["tests/__snapshots__/test_snap.ambr", "web/__snapshots__/a.test.js.snap",
                             "tests/__snapshots__/test_img/one.png", "tests/data/x.txt"]) == {
        "tests/test_snap", "web/a.test.js", "tests/test_img"}
    snapshot = "tests/__snapshots__/test_snap.ambr"
    repo = make_repo("snaps", {"pyproject.toml": PYPROJECT_TEST_EXTRA, "src/calc/__init__.py": CALC,
                               "tests/test_calc.py": CALC_TESTS, snapshot: "3\n",
                               "tests/test_snap.py": (
                                   "from pathlib import Path\n\n\ndef test_snapshot():\n"
                                   f"    assert Path({snapshot!r}).read_text() == '3\\n'\n")})
    mirror = tmp_path / "mirrors" / "acme+snaps" / "repo"
    subprocess.run(["git", "clone", "-q", "--bare", str(repo.path), str(mirror)], check=True)
    blob = subprocess.run(["git", "rev-parse", f"HEAD:{snapshot}"], cwd=mirror,
                          capture_output=True, text=True, check=True).stdout.strip()
    (mirror / "objects" / blob[:2] / blob[2:]).unlink()
    record = engine(tmp_path, max_iterations=0).setup(str(mirror), on_date=PIN_DATE)
    assert record.status == "validated", record.failure_reason
    assert record.missing_input == ["tests/test_snap.py::test_snapshot"]
    assert record.tests.FAILED == 0 and record.tests.PASSED >= 2 and record.missing_files == [snapshot]


def test_a_failed_record_names_its_best_round(make_repo, tmp_path: Path) -> None:
    """Round 1 (Python 3.11) passes 3 of 4; the older Python tried next passes none: the failure
    reason is the last round's, and names the better first one."""
    checks = "import sys\n\n\n" + "".join(
        f"def test_{n}():\n    assert sys.version_info >= (3, 11)\n\n\n" for n in "abc") + \
        "def test_d():\n    assert False\n"
    repo = make_repo("newpy", {"pyproject.toml": PYPROJECT_TEST_EXTRA, "src/calc/__init__.py": CALC,
                               "tests/test_py.py": checks})
    record = engine(tmp_path, max_iterations=1).setup(str(repo.path), on_date=PIN_DATE)
    assert record.status == "failed"
    assert [r.pass_rate for r in record.iterations] == [0.75, 0.0], record.failure_reason
    assert "(best: round 1: " in record.failure_reason and "75.0%" in record.failure_reason
    # The switch made it worse: undone, and the record keeps round 1's plan and pass rate.
    assert (record.iterations[1].undone or "").endswith("fewer tests pass; undone")
    assert record.python == record.iterations[0].python and record.pass_rate == 0.75
