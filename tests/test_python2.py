"""Projects that run on Python 2 only: a virtualenv with Python 2.7 and pip, pinned to the date
through a local index that shows PyPI as it was then (real installs from PyPI)."""

from __future__ import annotations

import httpx
import pytest

from benchsmith.core import Plan
from benchsmith.harness.prepare import install_env
from benchsmith.harness.render import render_install
from benchsmith.sandbox import DockerSandboxConfig
from benchsmith.sandbox.dated_index import dated_index_url
from benchsmith.setup.engine import SetupEngine
from benchsmith.setup.options import SetupOptions

from .test_setup_engine import engine

SETUP = """from setuptools import setup

setup(name="oldcalc", version="0.1", py_modules=["oldcalc"], python_requires=">=2.7, <3",
      classifiers=["Programming Language :: Python :: 2.7"])
"""
# `unicode` exists on Python 2 alone; six 1.12.0 was the newest six on 2019-06-01
CODE = "def shout(text):\n    return unicode(text).upper()\n"
TESTS = """import six

from oldcalc import shout


def test_shout():
    assert shout("a") == u"A"


def test_six_of_the_date():
    assert six.__version__ == "1.12.0"
"""
TOX = "[tox]\nenvlist = py27\n\n[testenv]\ndeps =\n    pytest\n    six\ncommands = pytest tests\n"


def test_the_dated_index_lists_only_files_uploaded_by_the_date() -> None:
    url = dated_index_url("2019-06-01T00:00:00Z")
    page = httpx.get(url + "Six/", timeout=60).text  # names are normalised as PEP 503 says
    assert "six-1.12.0.tar.gz" in page and "six-1.13.0" not in page
    assert 'data-requires-python="&gt;=2.6, !=3.0.*' in page
    # a package may be shown at an instant of its own (a relaxed pin)
    relaxed = dated_index_url("2019-06-01T00:00:00Z", {"six": "2020-01-01T00:00:00Z"})
    assert "six-1.13.0.tar.gz" in httpx.get(relaxed + "six/", timeout=60).text
    assert httpx.get(url + "no-such-project-benchsmith/", timeout=60).status_code == 404


def test_python2_plans_install_with_pip_from_the_dated_index() -> None:
    plan = Plan(python="2.7", exclude_newer="2019-06-01T00:00:00Z", packages=["pytest"],
                exclude_newer_packages={"atomicwrites": "2022-07-10T00:00:00Z"})
    assert render_install(plan) == ["python -m pip install -e . pytest"]
    env = install_env(plan.python, plan.exclude_newer, plan.exclude_newer_packages)
    assert env["PIP_INDEX_URL"].endswith("/2019-06-01T00:00:00Z,atomicwrites=2022-07-10T00:00:00Z/simple/")
    assert "PIP_INDEX_URL" not in install_env("3.8", plan.exclude_newer)


@pytest.mark.slow
def test_a_python2_only_project_is_set_up_with_python_27(make_repo, tmp_path) -> None:
    repo = make_repo("oldcalc", {"setup.py": SETUP, "oldcalc.py": CODE, "tests/test_old.py": TESTS,
                                 "tox.ini": TOX}, date="2019-05-20T12:00:00+00:00")
    record = engine(tmp_path).setup(str(repo.path), on_date="2019-06-01")
    assert record.status == "validated", (record.failure_reason, record.iterations[-1].commands)
    assert record.python == "2.7" and record.tests.PASSED == 2
    assert record.install[-1].startswith("python -m pip install")
    # pytest of that date needs atomicwrites, whose files PyPI only has from 2022 (re-uploaded):
    # pip's "no matching distribution" is relaxed like uv's, to the first upload that fits
    assert record.plan is not None and "atomicwrites" in record.plan.exclude_newer_packages


def test_python2_only_projects_are_recognised_and_need_a_27() -> None:
    from datetime import date

    from benchsmith.core import BenchsmithError
    from benchsmith.setup.context_model import Hint, RepoContext
    from benchsmith.setup.pyversion import choose_python

    pythons = {"2.7": "/py27", "3.6": "/py36", "3.11": "/py311"}
    two = RepoContext(requires_python=[Hint(value=">=2.7, <3", source="setup.py")])
    assert choose_python(two, date(2019, 6, 1), pythons).version == "2.7"
    classifiers = RepoContext(classifier_pythons=["2.6", "2.7"])
    assert choose_python(classifiers, date(2015, 1, 1), pythons).version == "2.7"
    # a project that names Python 3 too, or nothing at all, never gets 2.7 (not even as fallback)
    both = RepoContext(classifier_pythons=["2.7", "3.6"])
    assert choose_python(both, date(2019, 6, 1), pythons).version == "3.6"
    old = choose_python(RepoContext(), date(2013, 1, 1), pythons)
    assert old.version == "3.6" and "2.7" not in old.fallbacks
    with pytest.raises(BenchsmithError, match="supports Python 2 only, and this backend has no"):
        choose_python(two, date(2019, 6, 1), {"3.11": "/py311"})


@pytest.mark.docker
def test_a_python2_only_project_is_set_up_with_python_27_in_docker(make_repo, tmp_path) -> None:
    repo = make_repo("oldcalc", {"setup.py": SETUP, "oldcalc.py": CODE, "tests/test_old.py": TESTS,
                                 "tox.ini": TOX}, date="2019-05-20T12:00:00+00:00")
    options = SetupOptions(sandbox=DockerSandboxConfig(), commit_images=False,
                           refdb=str(tmp_path / "ref.sqlite"))
    record = SetupEngine(options).setup(str(repo.path), on_date="2019-06-01")
    assert record.status == "validated", (record.failure_reason, record.iterations[-1].commands)
    assert record.python == "2.7" and record.tests is not None and record.tests.PASSED == 2
    assert record.install[-1].startswith("python -m pip install")
