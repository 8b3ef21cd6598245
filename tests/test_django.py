"""Django projects whose tests run with Django's own runner: the command read from tox or a
Makefile, the settings module from tox's `setenv`, a command's environment prefix or
`manage.py`'s default, and the runner's unittest-style output counted per test."""

from __future__ import annotations

import subprocess
from datetime import date
from pathlib import Path

import pytest

from benchsmith.harness.behaviour import run_instance_tests
from benchsmith.harness.patches import split_patch
from benchsmith.harness.render import plan_spec, render, render_spec
from benchsmith.setup.context import gather_context
from benchsmith.setup.planner import RulePlanner, django_test_args
from benchsmith.setup.pyversion import choose_python

from .conftest import PIN_DATE
from .test_rules import PY, context
from .test_setup_engine import engine

PYPROJECT = """
[build-system]
requires = ["setuptools>=61"]
build-backend = "setuptools.build_meta"

[project]
name = "shelf"
version = "0.1.0"
requires-python = ">=3.8"
dependencies = ["django>=3.2"]
"""
TOX = """
[tox]
envlist = py311-dj42, docs

[testenv]
deps = dj42: django~=4.2.0
setenv =
    PYTHONPATH = {toxinidir}
    DB_NAME = {env:DB_NAME:shelf}
    DJANGO_SETTINGS_MODULE = tests.settings
commands = python -b -W always -m coverage run -m django test -v2 {posargs:tests}

[testenv:docs]
commands = make -C docs html
"""
SETTINGS = """
SECRET_KEY = "not-secret"
INSTALLED_APPS = ["django.contrib.contenttypes", "shelf"]
DATABASES = {"default": {"ENGINE": "django.db.backends.sqlite3", "NAME": ":memory:"}}
USE_TZ = True
"""
SHELF = "def shelve(title):\n    return title.title()\n"
TESTS = """
from django.conf import settings
from django.test import SimpleTestCase

from shelf import shelve


class ShelveTests(SimpleTestCase):
    def test_title(self):
        self.assertEqual(shelve("dune"), "Dune")

    def test_settings_are_the_projects(self):
        self.assertEqual(settings.SECRET_KEY, "not-secret")
"""


@pytest.mark.parametrize(("command", "args"), [
    ("python -b -W always -m coverage run -m django test -v2 tests", ["tests"]),
    ("DJANGO_SETTINGS_MODULE=tests.settings python -m django test ${TEST_ARGS:-tests}", ["tests"]),
    ("python manage.py test --settings site.settings -v 2 app1 --parallel 4 --noinput",
     ["--settings=site.settings", "app1"]),
    ("django-admin test && coverage report", []),
    ("python -m pytest tests", None),
    ("python manage.py migrate", None),
])
def test_django_test_commands_are_read_as_options_and_labels(command: str, args: list[str] | None) -> None:
    assert django_test_args(command) == args


def test_the_plan_runs_djangos_runner_with_the_settings_from_tox(tmp_path: Path) -> None:
    root = tmp_path / "shelf"
    (root / "tests").mkdir(parents=True)
    for path, text in {"pyproject.toml": PYPROJECT, "tox.ini": TOX, "tests/settings.py": SETTINGS,
                       "tests/__init__.py": "", "tests/test_shelf.py": TESTS}.items():
        (root / path).write_text(text)
    ctx = gather_context(root)
    assert [h.value for h in ctx.settings_env] == ["DJANGO_SETTINGS_MODULE=tests.settings"]
    plan = RulePlanner().plan(ctx, choose_python(ctx, date(2023, 6, 1), PY), "2023-06-01T00:00:00Z")
    assert plan.runner == "unittest" and plan.entry == ["django", "test", "--verbosity=2"]
    assert plan.env["DJANGO_SETTINGS_MODULE"] == "tests.settings" and plan.sources["settings"] == ["tox.ini"]
    assert render(plan, apt=False)[1][0].endswith("python -m django test --verbosity=2 tests")
    # an instance runs its own modules as Django labels
    spec = plan_spec(plan, ["tests/test_shelf.py"], services=False)
    assert render_spec(spec).endswith("python -m django test --verbosity=2 tests.test_shelf")


def test_manage_py_names_the_settings_when_nothing_else_does(tmp_path: Path) -> None:
    root = tmp_path / "site"
    (root / "tests").mkdir(parents=True)
    manage = ('import os, sys\n\nif __name__ == "__main__":\n'
              '    os.environ.setdefault("DJANGO_SETTINGS_MODULE", "site_conf.settings")\n')
    for path, text in {"pyproject.toml": PYPROJECT, "manage.py": manage,
                       "Makefile": "test:\n\tpython manage.py test --noinput\n",
                       "tests/__init__.py": "", "tests/test_shelf.py": TESTS}.items():
        (root / path).write_text(text)
    ctx = gather_context(root)
    plan = RulePlanner().plan(ctx, choose_python(ctx, date(2023, 6, 1), PY), "2023-06-01T00:00:00Z")
    assert plan.entry[:2] == ["django", "test"] and plan.test_args == []
    assert plan.env["DJANGO_SETTINGS_MODULE"] == "site_conf.settings"
    assert plan.sources["settings"] == ["manage.py"]
    # no Django command and no settings: nothing is invented
    plain = context(test_commands=[])
    plan = RulePlanner().plan(plain, choose_python(plain, date(2023, 6, 1), PY), "2023-06-01T00:00:00Z")
    assert not plan.entry and "DJANGO_SETTINGS_MODULE" not in plan.env


@pytest.mark.slow
def test_a_django_project_validates_and_its_instances_run_with_djangos_runner(make_repo, tmp_path: Path) -> None:
    repo = make_repo("shelf", {"pyproject.toml": PYPROJECT, "tox.ini": TOX, "tests/settings.py": SETTINGS,
                               "tests/__init__.py": "", "src/shelf/__init__.py": SHELF,
                               "tests/test_shelf.py": TESTS})
    record = engine(tmp_path).setup(str(repo.path), on_date=PIN_DATE)
    assert record.status == "validated", record.failure_reason
    assert record.plan is not None and record.plan.entry[:2] == ["django", "test"]
    assert record.iterations[-1].tests.get("PASSED") == 2
    # a fix and its test, run the way `build` runs an instance
    fixed = repo.commit({"src/shelf/__init__.py": SHELF.replace("title.title()", "title.strip().title()"),
                         "tests/test_shelf.py": TESTS + "\n    def test_spaces(self):\n"
                                                        "        self.assertEqual(shelve(' dune '), 'Dune')\n"},
                        "strip titles", date="2023-05-02T12:00:00+00:00")
    diff = subprocess.run(["git", "diff", f"{fixed}~1", fixed], cwd=repo.path, check=True,
                          capture_output=True, text=True).stdout
    patch, test_patch = split_patch(diff)
    from benchsmith.harness.checkout import materialize, resolve
    from benchsmith.harness.render import render_install
    from benchsmith.sandbox import LocalSandboxConfig, make_sandbox

    sandbox = make_sandbox(LocalSandboxConfig(tmp_dir=str(tmp_path / "boxes")))
    try:
        sandbox.upload(materialize(resolve(str(repo.path), rev=f"{fixed}~1"), tmp_path / "src" / "repo"),
                       sandbox.workdir)
        sandbox.setup_python(record.plan.python)
        for command in render_install(record.plan, apt=False):
            assert sandbox.exec(command, env={"UV_EXCLUDE_NEWER": record.plan.exclude_newer}).ok
        behaviour = run_instance_tests(sandbox, plan_spec(record.plan, [], services=False), patch,
                                       test_patch, runs=1, timeout=600)
    finally:
        sandbox.close()
    assert behaviour.error is None, behaviour.error
    assert len(behaviour.FAIL_TO_PASS) == 1 and "test_spaces" in behaviour.FAIL_TO_PASS[0]
    assert len(behaviour.PASS_TO_PASS) == 2
