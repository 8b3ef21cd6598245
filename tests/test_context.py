"""gather_context on small self-written repository trees."""

from __future__ import annotations

import textwrap
from pathlib import Path

import pytest

from benchsmith.setup.context import gather_context
from benchsmith.setup.context_model import Hint, RepoContext
from benchsmith.setup.sources.commands import classify_line
from benchsmith.setup.sources.poetry import poetry_specifier
from benchsmith.setup.sources.versions import python_minor, split_envlist


def write(root: Path, files: dict[str, str | bytes]) -> Path:
    for rel, content in files.items():
        path = root / rel
        path.parent.mkdir(parents=True, exist_ok=True)
        if isinstance(content, bytes):
            path.write_bytes(content)
        else:
            path.write_text(textwrap.dedent(content).lstrip("\n"))
    return root


def values(hints: list[Hint], source: str | None = None) -> list[str]:
    return [h.value for h in hints if source is None or h.source == source]


SETUP_CFG = """
[metadata]
name = tinylib
classifiers =
    Programming Language :: Python :: 3
    Programming Language :: Python :: 3.8
    Programming Language :: Python :: 3.10

[options]
packages = find:
python_requires = >=3.8
tests_require = pytest; mock

[options.extras_require]
test =
    pytest>=6
    %(cov)s
cov = pytest-cov

[tool:pytest]
addopts = -ra
    --strict-markers
testpaths = tests
"""

TOX_INI = """
[tox]
envlist = py{38,39,310}, lint

[testenv]
deps =
    -r{toxinidir}/requirements/test.txt
    py38: mock  # only on 3.8
extras = test
commands_pre = python -m pip install -U pip
commands =
    pytest {posargs} \\
        --cov tinylib
    pypy3: echo pypy only

[testenv:lint]
deps = flake8
commands = flake8 src
"""

WORKFLOW = """
name: ci
on: [push]
jobs:
  test:
    runs-on: ubuntu-latest
    strategy:
      matrix:
        python-version: [3.8, 3.9, 3.10, "pypy-3.9", "3.11-dev"]
        include:
          - python-version: "3.12.0-beta.1"
    steps:
      - uses: actions/checkout@v4
      - uses: actions/setup-python@v5
        with:
          python-version: ${{ matrix.python-version }}
      - run: |
          # upgrade first
          sudo apt-get install -y libxml2-dev gettext
          python -m pip install --upgrade \\
            pip setuptools
          pip install -e .[test]

          echo done
      - run: pytest -x tests
  lint:
    runs-on: ubuntu-latest
    steps:
      - uses: actions/setup-python@v5
        with:
          python-version: "3.7"
      - run: flake8 src
"""


def test_setuptools_cfg_project_with_tox_and_github_actions(tmp_path: Path) -> None:
    repo = write(
        tmp_path,
        {
            "setup.py": "from setuptools import setup\nsetup()\n",
            "setup.cfg": SETUP_CFG,
            "tox.ini": TOX_INI,
            ".github/workflows/ci.yml": WORKFLOW,
            "requirements/test.txt": "pytest\n",
            "dev-requirements.txt": "tox\n",
            "src/tinylib/__init__.py": "",
            "src/tinylib/tests/__init__.py": "",
            "tests/test_x.py": "def test_x(): pass\n",
        },
    )
    ctx = gather_context(repo)

    assert ctx.has_python_project
    assert ctx.project_name == "tinylib"
    assert values(ctx.requires_python) == [">=3.8"]
    assert ctx.classifier_pythons == ["3.8", "3.10"]
    assert ctx.extras["test"] == ["pytest>=6", "pytest-cov"]
    assert ctx.extras["__tests_require__"] == ["pytest", "mock"]

    workflow = ".github/workflows/ci.yml"
    assert values(ctx.matrix_pythons, workflow) == ["3.8", "3.9", "3.10", "3.11", "3.12", "3.7"]
    assert values(ctx.matrix_pythons, "tox.ini") == ["3.8", "3.9", "3.10"]
    assert values(ctx.install_commands, workflow) == [
        "sudo apt-get install -y libxml2-dev gettext",
        "python -m pip install --upgrade pip setuptools",
        "pip install -e .[test]",
    ]
    assert values(ctx.test_commands, workflow) == ["pytest -x tests"]
    assert values(ctx.apt_packages) == ["libxml2-dev", "gettext"]

    assert values(ctx.test_commands, "tox.ini") == ["pytest --cov tinylib"]
    assert values(ctx.install_commands, "tox.ini") == ["python -m pip install -U pip"]
    assert values(ctx.tox_deps) == ["-r requirements/test.txt", "mock"]
    assert values(ctx.tox_extras) == ["test"]

    assert ctx.requirement_files == ["dev-requirements.txt", "requirements/test.txt"]
    assert ctx.pytest_config_file == "setup.cfg"
    assert ctx.pytest_addopts == "-ra --strict-markers"
    assert ctx.pytest_testpaths == ["tests"]
    assert ctx.pytest_ini_keys == ["addopts", "testpaths"]
    assert ctx.top_level_packages == ["tinylib"]
    assert ctx.test_dirs == ["tests", "src/tinylib/tests"]
    assert not ctx.uses_unittest and not ctx.uses_nose
    assert {"setup.cfg", "setup.py", "tox.ini", workflow} <= set(ctx.sources_read)
    assert ctx.root_files == ["dev-requirements.txt", "setup.cfg", "setup.py", "tox.ini"]


PEP621 = """
[build-system]
requires = ["hatchling>=1.18"]
build-backend = "hatchling.build"

[project]
name = "modernlib"
requires-python = ">=3.9"
classifiers = ["Programming Language :: Python :: 3.11", "Programming Language :: Python :: 3 :: Only"]

[project.optional-dependencies]
test = ["pytest>=7", "hypothesis"]
docs = ["sphinx"]

[dependency-groups]
test = ["pytest>=8", "coverage"]
dev = [{include-group = "test"}, "ruff"]
loop-a = [{include-group = "loop-b"}]
loop-b = [{include-group = "loop-a"}, "x"]

[tool.pdm.dev-dependencies]
lint = ["flake8"]

[tool.setuptools]
packages = ["modernlib", "modernlib.sub"]

[tool.pytest.ini_options]
addopts = ["-ra", "--strict-config"]
testpaths = ["tests", "integration"]

[tool.tox]
legacy_tox_ini = '''
[tox]
envlist = py311,py312
[testenv]
commands = pytest {posargs:tests}
'''
"""


def test_pep621_project_with_optional_deps_and_dependency_groups(tmp_path: Path) -> None:
    ctx = gather_context(write(tmp_path, {"pyproject.toml": PEP621}))

    assert ctx.has_python_project
    assert ctx.project_name == "modernlib"
    assert ctx.build_backend == "hatchling.build"
    assert ctx.build_requires == ["hatchling>=1.18"]
    assert values(ctx.requires_python) == [">=3.9"]
    assert ctx.classifier_pythons == ["3.11"]
    assert ctx.extras == {"test": ["pytest>=7", "hypothesis"], "docs": ["sphinx"]}
    assert ctx.dependency_groups["test"] == ["pytest>=8", "coverage"]
    assert ctx.dependency_groups["dev"] == ["pytest>=8", "coverage", "ruff"]
    assert ctx.dependency_groups["loop-a"] == ["x"]
    assert ctx.dependency_groups["pdm:lint"] == ["flake8"]
    assert ctx.top_level_packages == ["modernlib"]
    assert ctx.pytest_config_file == "pyproject.toml"
    assert ctx.pytest_addopts == "-ra --strict-config"
    assert ctx.pytest_testpaths == ["tests", "integration"]
    assert values(ctx.matrix_pythons, "pyproject.toml") == ["3.11", "3.12"]
    assert values(ctx.test_commands) == ["pytest tests"]
    assert ctx.sources_read == ["pyproject.toml"]


POETRY = """
[tool.poetry]
name = "poetic"
classifiers = ["Programming Language :: Python :: 3.7"]

[tool.poetry.dependencies]
python = "^3.7"
requests = {version = "^2.25", extras = ["socks"]}
pyyaml = {version = "^6.0", optional = true}

[tool.poetry.extras]
yaml = ["pyyaml"]

[tool.poetry.dev-dependencies]
pytest = "^6.2"
mock = "*"
black = {version = "^22.1", python = "^3.8"}
localthing = {path = "../localthing"}
gitthing = {git = "https://example.org/x.git"}

[tool.poetry.group.test.dependencies]
pytest-cov = "~3.0"
zeroth = "^0.3"

[tool.poetry.group.docs.dependencies]
sphinx = "^5"

[build-system]
requires = ["poetry-core>=1.0.0"]
build-backend = "poetry.core.masonry.api"
"""


def test_poetry_project(tmp_path: Path) -> None:
    ctx = gather_context(write(tmp_path, {"pyproject.toml": POETRY}))

    assert ctx.has_python_project
    assert ctx.project_name == "poetic"
    assert ctx.build_backend == "poetry.core.masonry.api"
    assert values(ctx.requires_python) == [">=3.7,<4.0"]
    assert ctx.classifier_pythons == ["3.7"]
    assert ctx.poetry_dev_dependencies == [
        "pytest>=6.2,<7.0",
        "mock",
        'black>=22.1,<23.0; python_version >= "3.8" and python_version < "4.0"',
        "pytest-cov>=3.0,<3.1",
        "zeroth>=0.3,<0.4",
    ]
    assert ctx.extras == {"yaml": ["pyyaml>=6.0,<7.0"]}


@pytest.mark.parametrize(
    ("constraint", "expected"),
    [
        ("^3.7", ">=3.7,<4.0"),
        ("~3.8", ">=3.8,<3.9"),
        (">=3.6,<4.0", ">=3.6,<4.0"),
        (">=3.6 <4.0", ">=3.6,<4.0"),
        ("^0.3", ">=0.3,<0.4"),
        ("^1.2.3", ">=1.2.3,<2.0.0"),
        ("*", ""),
        ("3.8.*", "==3.8.*"),
        ("~2.7 || ^3.5", ">=3.5,<4.0"),
        ("not a version", None),
    ],
)
def test_poetry_specifier(constraint: str, expected: str | None) -> None:
    assert poetry_specifier(constraint) == expected


HATCH = """
[project]
name = "hatched"
dynamic = ["version"]

[tool.hatch.envs.default]
dependencies = ["pytest", "pytest-cov"]

[tool.hatch.envs.default.scripts]
test = "pytest {args:tests}"
cov = ["coverage run -m pytest {args}", "coverage report"]

[tool.hatch.envs.hatch-test]
extra-dependencies = ["pytest-asyncio"]

[tool.hatch.envs.docs]
dependencies = ["mkdocs"]
"""


def test_hatch_project(tmp_path: Path) -> None:
    repo = write(tmp_path, {"pyproject.toml": HATCH, "src/hatched/__init__.py": ""})
    ctx = gather_context(repo)

    assert ctx.has_python_project
    assert ctx.hatch_test_dependencies == ["pytest", "pytest-cov", "pytest-asyncio"]
    assert values(ctx.test_commands) == ["pytest tests", "coverage run -m pytest"]
    assert ctx.top_level_packages == ["hatched"]


SETUP_PY = """
import os
from setuptools import setup, find_packages

TEST_DEPS = ["pytest>=3", "mock"]
DOC_DEPS = ["sphinx"]
EXTRAS = {"docs": DOC_DEPS}
EXTRAS["speed"] = ["ujson"]

setup(
    name="oldlib",
    packages=find_packages(exclude=["tests"]),
    python_requires=">=2.7, !=3.0.*, !=3.1.*",
    classifiers=[
        "Programming Language :: Python :: 2.7",
        "Programming Language :: Python :: 3.6",
        "Programming Language :: Python :: 3",
    ],
    tests_require=TEST_DEPS,
    extras_require=dict(
        test=TEST_DEPS + ["coverage"],
        dynamic=[os.environ.get("X", "y")],
        **EXTRAS
    ),
)
"""


def test_setup_py_only_project(tmp_path: Path) -> None:
    repo = write(tmp_path, {"setup.py": SETUP_PY, "oldlib/__init__.py": "", "test/test_a.py": ""})
    ctx = gather_context(repo)

    assert ctx.has_python_project
    assert ctx.project_name == "oldlib"
    assert values(ctx.requires_python) == [">=2.7, !=3.0.*, !=3.1.*"]
    assert ctx.classifier_pythons == ["2.7", "3.6"]
    assert ctx.extras == {
        "test": ["pytest>=3", "mock", "coverage"],
        "docs": ["sphinx"],
        "speed": ["ujson"],
        "__tests_require__": ["pytest>=3", "mock"],
    }
    assert ctx.top_level_packages == ["oldlib"]
    assert ctx.test_dirs == ["test"]
    assert ctx.sources_read == ["setup.py"]


def test_python2_setup_py_falls_back_to_regex(tmp_path: Path) -> None:
    setup_py = """
    print "building"
    setup(name='ancient', python_requires='>=2.6',
          classifiers=['Programming Language :: Python :: 2.6'])
    """
    ctx = gather_context(write(tmp_path, {"setup.py": setup_py}))
    assert ctx.project_name == "ancient"
    assert values(ctx.requires_python) == [">=2.6"]
    assert ctx.classifier_pythons == ["2.6"]


MAKEFILE = """
PYTHON ?= python3
VENV = .venv

.PHONY: install test docs

install:
\t@$(PYTHON) -m pip install -e .[dev]
\t-$(UNKNOWN) --flag

test: install
\t$(PYTHON) -m pytest \\
\t\t-x tests
\techo "done"

docs:
\tsphinx-build docs build
"""

README_MD = """
# Project

Install it:

```bash
$ pip install -e ".[test]"
Successfully installed project
```

```
pytest -q
```

```python
import pytest
pip install not-a-command
```

~~~console
(venv) $ python -m unittest discover
~~~
"""

CONTRIBUTING_RST = """
Contributing
============

Set up a development environment:

.. code-block:: bash
   :caption: shell

   pip install -r requirements-dev.txt
   tox -e py39

Or the literal way::

    $ make test
    $ git push

.. note::

   pytest is not a command here
"""


def test_makefile_and_readme_code_blocks(tmp_path: Path) -> None:
    repo = write(
        tmp_path,
        {
            "Makefile": MAKEFILE,
            "README.md": README_MD,
            "CONTRIBUTING.rst": CONTRIBUTING_RST,
            "docs/installation.md": "```sh\npip install project\n```\n",
            "docs/usage.md": "```sh\npip install ignored-page\n```\n",
            "requirements.txt": "requests\n",
            "project.py": "x = 1\n",
        },
    )
    ctx = gather_context(repo)

    assert ctx.has_python_project  # requirements.txt plus .py files
    assert values(ctx.install_commands, "Makefile") == ["python3 -m pip install -e .[dev]"]
    assert values(ctx.test_commands, "Makefile") == ["python3 -m pytest -x tests"]
    assert values(ctx.install_commands, "README.md") == ['pip install -e ".[test]"']
    assert values(ctx.test_commands, "README.md") == ["pytest -q", "python -m unittest discover"]
    assert values(ctx.install_commands, "CONTRIBUTING.rst") == [
        "pip install -r requirements-dev.txt"
    ]
    assert values(ctx.test_commands, "CONTRIBUTING.rst") == ["tox -e py39", "make test"]
    assert values(ctx.install_commands, "docs/installation.md") == ["pip install project"]
    assert "docs/usage.md" not in ctx.sources_read
    assert ctx.top_level_packages == ["project"]
    assert not ctx.uses_unittest  # pytest is mentioned too


NOXFILE = """
import nox

PYTHONS = ["3.8", "3.9", "3.10"]
TEST_REQS = ["pytest", "pytest-cov"]


@nox.session(python=PYTHONS)
def tests(session: nox.Session) -> None:
    session.install("-e", ".[test]")
    session.install(*TEST_REQS)
    session.run("pytest", "--cov", "pkg", *session.posargs)


@nox.session(python="3.11")
def lint(session):
    session.install("flake8")
    session.run("flake8", "src")
"""


def test_noxfile_project(tmp_path: Path) -> None:
    repo = write(tmp_path, {"noxfile.py": NOXFILE, "pyproject.toml": "[project]\nname='n'\n"})
    ctx = gather_context(repo)

    assert values(ctx.matrix_pythons, "noxfile.py") == ["3.8", "3.9", "3.10", "3.11"]
    assert values(ctx.install_commands, "noxfile.py") == [
        "pip install -e .[test]",
        "pip install pytest pytest-cov",
        "pip install flake8",
    ]
    assert values(ctx.test_commands, "noxfile.py") == ["pytest --cov pkg"]
    assert "noxfile" not in ctx.top_level_packages


def test_other_ci_services(tmp_path: Path) -> None:
    travis = """
    language: python
    python:
      - 2.7
      - 3.6
      - "3.10"
      - pypy3
    before_install: sudo apt-get update
    install:
      - pip install -r requirements.txt
    script: nosetests -v
    jobs:
      include:
        - python: 3.7
          env: TOXENV=py37
    """
    circleci = """
    version: 2.1
    jobs:
      build:
        docker:
          - image: cimg/python:3.9
        steps:
          - checkout
          - run: pip install tox
          - run:
              name: test
              command: tox -e py39
    """
    azure = """
    strategy:
      matrix:
        py38:
          python.version: '3.8'
    steps:
      - task: UsePythonVersion@0
        inputs:
          versionSpec: '$(python.version)'
      - script: python -m pytest tests
    """
    repo = write(
        tmp_path,
        {".travis.yml": travis, ".circleci/config.yml": circleci, "azure-pipelines.yml": azure},
    )
    ctx = gather_context(repo)

    assert values(ctx.matrix_pythons, ".travis.yml") == ["2.7", "3.6", "3.10", "3.7"]
    assert values(ctx.install_commands, ".travis.yml") == ["pip install -r requirements.txt"]
    assert values(ctx.test_commands, ".travis.yml") == ["nosetests -v"]
    assert values(ctx.matrix_pythons, ".circleci/config.yml") == ["3.9"]
    assert values(ctx.test_commands, ".circleci/config.yml") == ["tox -e py39"]
    assert values(ctx.matrix_pythons, "azure-pipelines.yml") == ["3.8"]
    assert values(ctx.test_commands, "azure-pipelines.yml") == ["python -m pytest tests"]
    assert ctx.uses_nose


def test_unittest_project_detected_from_test_imports(tmp_path: Path) -> None:
    repo = write(
        tmp_path,
        {
            "setup.py": "from distutils.core import setup\nsetup(name='u')\n",
            "tests/test_u.py": "import unittest\n\nclass T(unittest.TestCase):\n    pass\n",
        },
    )
    assert gather_context(repo).uses_unittest


def test_pytest_ini_takes_precedence(tmp_path: Path) -> None:
    repo = write(
        tmp_path,
        {
            "pytest.ini": "[pytest]\naddopts = -q\nmarkers =\n    slow\n",
            "pyproject.toml": "[tool.pytest.ini_options]\naddopts = '-x'\n",
            "setup.cfg": "[tool:pytest]\naddopts = -v\n",
        },
    )
    ctx = gather_context(repo)
    assert ctx.pytest_config_file == "pytest.ini"
    assert ctx.pytest_addopts == "-q"
    assert ctx.pytest_ini_keys == ["addopts", "markers"]


MALFORMED: dict[str, str | bytes] = {
    "pyproject.toml": "[project\nname = 'broken'\n",
    "setup.cfg": "no section header\n[metadata]\nname = x\n",
    "tox.ini": "[tox]\nenvlist = py38\n  [broken\n=\n",
    "pytest.ini": b"[pytest]\naddopts = \xff\xfe\n",
    "Pipfile": "[requires\n",
    ".github/workflows/ci.yml": "jobs: [\n  - run: pip install x\n",
    ".github/workflows/odd.yml": "jobs:\n  a: 3\n  b:\n    steps: 'run: pytest'\n    strategy: {matrix: 5}\n",
    ".travis.yml": "python: [3.8\n",
    ".gitlab-ci.yml": "test:\n  script:\n    - !reference [.setup, script]\n    - pytest\n",
    "appveyor.yml": "- just\n- a list\n",
    "setup.py": b"setup(name='x', python_requires='>=3.\xff')\n",
    "noxfile.py": "@nox.session(python=[\n",
    "Makefile": b"test:\n\t\xff\xfe pytest\n",
    "README.md": b"```bash\npip install \xff\n```\n",
    "CONTRIBUTING.md": "```bash\npip install -e .\n",
    "requirements.txt": b"\xff\xfe\x00r\x00",
}


def test_malformed_files_are_skipped_without_raising(tmp_path: Path) -> None:
    ctx = gather_context(write(tmp_path, MALFORMED))

    skipped = {"pyproject.toml", "setup.cfg", "tox.ini", "pytest.ini", "Pipfile", "setup.py"}
    skipped |= {
        ".github/workflows/ci.yml",
        ".travis.yml",
        "Makefile",
        "README.md",
        "requirements.txt",
    }
    assert not skipped & set(ctx.sources_read)
    assert ctx.project_name is None
    assert ctx.pytest_config_file is None
    assert ctx.requirement_files == []
    assert not ctx.has_python_project
    # A GitLab file with a custom tag is still read; the unclosed fence yields nothing.
    assert values(ctx.test_commands) == ["pytest"]
    assert ctx.sources_read == [".gitlab-ci.yml"]


def test_symlinks_out_of_the_checkout_are_not_read(tmp_path: Path) -> None:
    outside = write(tmp_path / "outside", {"notes.md": "```bash\npip install secret\n```\n"})
    repo = tmp_path / "repo"
    repo.mkdir()
    (repo / "README.md").symlink_to(outside / "notes.md")
    assert gather_context(repo).install_commands == []


def test_directory_without_python_project(tmp_path: Path) -> None:
    repo = write(tmp_path, {"README.md": "# Just notes\n", "index.html": "<p>hi</p>\n"})
    ctx = gather_context(repo)
    assert ctx == RepoContext(root_files=["README.md", "index.html"], repo_root=str(repo))


@pytest.mark.parametrize(
    ("raw", "expected"),
    [("3.10", "3.10"), (3.9, "3.9"), ("3.11-dev", "3.11"), ("3.12.0-beta.1", "3.12")]
    + [("pypy-3.8", None), ("pypy3.9", None), ("${{ matrix.py }}", None), ("3.x", None), (3, None)],
)
def test_python_minor(raw: object, expected: str | None) -> None:
    assert python_minor(raw) == expected


def test_tox_envlist_brace_expansion() -> None:
    envs = split_envlist("py3{8,9}-django{32,40}, py{37,310}\n  lint")
    assert envs == [
        "py38-django32",
        "py38-django40",
        "py39-django32",
        "py39-django40",
        "py37",
        "py310",
        "lint",
    ]


@pytest.mark.parametrize(
    ("line", "expected"),
    [
        ("python -m pip install -e .", [("install", "python -m pip install -e .")]),
        ("poetry run pytest -x", [("test", "poetry run pytest -x")]),
        ("coverage run -m pytest", [("test", "coverage run -m pytest")]),
        ("python setup.py test", [("test", "python setup.py test")]),
        ("python setup.py develop", [("install", "python setup.py develop")]),
        ("tox -e lint,docs", []),
        ("flake8 src", []),
        (
            "cd src && pip install . && pytest",
            [("install", "cd src && pip install ."), ("test", "cd src && pytest")],
        ),
    ],
)
def test_classify_line(line: str, expected: list[tuple[str, str]]) -> None:
    assert classify_line(line) == expected


FACTOR_TOX = """
[tox]
envlist = lint, py{38,39}, dbt0{17,18}-py38, py39-django{32,40}

[testenv]
deps =
    -rrequirements_dev.txt
    dbt017: dbt==0.17.2
    dbt018: dbt==0.18.2
    py38: mock
    !dbt017,!dbt018: hypothesis
commands =
    dbt017,dbt018: dbt deps
    pytest -m "not dbt"
"""
DJANGO_TOX = """
[tox]
envlist = py39-django{32,40}

[testenv]
deps =
    django32: Django>=3.2,<4
    django40: Django>=4.0,<4.1
commands = pytest
"""


def test_factor_conditional_tox_lines_follow_one_env_never_their_union(tmp_path: Path) -> None:
    ctx = gather_context(write(tmp_path / "a", {"tox.ini": FACTOR_TOX, "setup.py": "x = 1\n"}))
    assert values(ctx.tox_deps) == ["-r requirements_dev.txt", "mock", "hypothesis"]
    assert "dbt deps" not in values(ctx.test_commands)
    # Every env names a Django: the first alternative is taken, not both.
    ctx = gather_context(write(tmp_path / "b", {"tox.ini": DJANGO_TOX, "setup.py": "x = 1\n"}))
    assert values(ctx.tox_deps) == ["Django>=3.2,<4"]


def test_requirement_files_without_an_extension_in_a_requirements_directory(tmp_path: Path) -> None:
    """requirements/tests and requirements/bench (falcon's layout) are requirement files; a
    README next to them is not. The planner installs the mentioned ones, benchmarks only when
    asked (a whole setup, not a test environment)."""
    from benchsmith.setup.planner import RulePlanner
    from benchsmith.setup.pyversion import PythonChoice

    repo = write(tmp_path, {
        "setup.py": "from setuptools import setup\nsetup(name='web')\n",
        "requirements/tests": "pytest\nrequests\n",
        "requirements/bench": "django\n",
        "requirements/README": "what these files are\n",
        "CONTRIBUTING.md": "```\npip install -r requirements/bench\npip install -r requirements/tests\n```\n",
        "tests/test_x.py": "def test_x(): pass\n",
    })
    ctx = gather_context(repo)
    assert ctx.requirement_files == ["requirements/bench", "requirements/tests"]
    choice = PythonChoice(version="3.11", reason="test")
    assert RulePlanner().plan(ctx, choice, "2024-01-01T00:00:00Z").requirement_files == [
        "requirements/tests"]
    whole = RulePlanner(skipped=("doc", "lint", "mypy", "typing"))
    assert whole.plan(ctx, choice, "2024-01-01T00:00:00Z").requirement_files == [
        "requirements/bench", "requirements/tests"]


def test_minimum_version_tox_envs_do_not_join_the_default_install(tmp_path: Path) -> None:
    """A `pinned` / `min-deps` env pins the oldest supported versions: its deps are not unioned
    with the default env's (scrapy's [pinned] Protego==0.1.15 once pinned a whole install)."""
    repo = write(tmp_path, {
        "setup.py": "from setuptools import setup\nsetup(name='pinme')\n",
        "tox.ini": ("[tox]\nenvlist = py,pinned,py38-min-deps\n\n[testenv]\ndeps =\n    pytest\n"
                    "    attrs>=22\ncommands = pytest tests\n\n[pinned]\ndeps =\n    attrs==19.1.0\n\n"
                    "[testenv:pinned]\ndeps =\n    {[pinned]deps}\n    six==1.10\ncommands = pytest tests\n\n"
                    "[testenv:min-deps]\ndeps = attrs==20.1\ncommands = pytest -x tests\n"),
        "tests/test_x.py": "def test_x(): pass\n",
    })
    ctx = gather_context(repo)
    assert values(ctx.tox_deps) == ["pytest", "attrs>=22"]
    assert values(ctx.test_commands, "tox.ini") == ["pytest tests"]
