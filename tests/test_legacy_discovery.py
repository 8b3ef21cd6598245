"""Suites of the nose and `setup.py test` era: modules pytest does not collect by default,
nose's settings and yield tests, setup()'s test_suite. Each ends "ran no tests" when the
tests are looked for the way pytest does by default."""

from __future__ import annotations

from pathlib import Path

import pytest

from benchsmith.setup.context import gather_context
from benchsmith.setup.legacy_discovery import NOSE_DEFAULT_PATTERNS

from .conftest import PIN_DATE
from .test_setup_engine import engine

pytestmark = pytest.mark.slow

SETUP = """
from setuptools import setup

setup(name="{name}", version="1.0", packages=["{name}"]{extra})
"""

LEXER = "def tokens(text):\n    return text.split()\n"

NOSE_PROJECT = {
    "setup.py": SETUP.format(name="lexer", extra=""),
    "setup.cfg": "[nosetests]\nwhere = tests\nverbosity = 2\n",
    ".travis.yml": "language: python\nscript: nosetests\n",
    "lexer/__init__.py": LEXER,
    "tests/parser_tests.py": ("from lexer import tokens\n\n\ndef test_split():\n"
                              "    assert tokens('a b') == ['a', 'b']\n\n\n"
                              "def make_input():\n    raise AssertionError(\"nose collects no such name\")\n"),
    "tests/tests.py": ("import unittest\n\nfrom lexer import tokens\n\n\n"
                       "class TestTokens(object):\n    def test_empty(self):\n        assert tokens('') == []\n\n\n"
                       "class LexerTests(unittest.TestCase):\n    def test_one(self):\n"
                       "        self.assertEqual(tokens('x'), ['x'])\n"),
    "tests/helpers.py": "def test_like_name_in_a_helper():\n    raise AssertionError('not a test module')\n",
}


def test_nose_settings_are_read(make_repo) -> None:
    repo = make_repo("lexer", {**NOSE_PROJECT, "setup.py": SETUP.format(
        name="lexer", extra=", test_suite='lexer.tests'")})
    context = gather_context(repo.path)
    assert context.uses_nose and context.nose_config["where"] == "tests"
    assert context.test_suite is not None and context.test_suite.value == "lexer.tests"


def test_nose_modules_run_under_pytest_with_noses_patterns(make_repo, tmp_path: Path) -> None:
    repo = make_repo("lexer", NOSE_PROJECT)
    record = engine(tmp_path).setup(str(repo.path), on_date=PIN_DATE)
    assert record.status == "validated", record.failure_reason
    assert len(record.iterations) == 1
    assert record.plan.runner == "pytest" and record.plan.test_args == ["tests"]
    assert record.plan.ini_overrides == NOSE_DEFAULT_PATTERNS
    assert record.plan.sources["test"] == ["setup.cfg [nosetests]"]
    names = {t.name for t in record.tests.tests}
    assert names == {"tests/parser_tests.py::test_split", "tests/tests.py::TestTokens::test_empty",
                     "tests/tests.py::LexerTests::test_one"}


def test_yield_tests_run_under_nose_each_generated_test_a_result(make_repo, tmp_path: Path) -> None:
    repo = make_repo("evens", {
        "setup.py": SETUP.format(name="evens", extra=", test_suite='nose.collector', tests_require=['nose']"),
        "evens/__init__.py": "def is_even(n):\n    return n % 2 == 0\n",
        "tests/evens_tests.py": ("from evens import is_even\n\n\ndef test_evens():\n    for n in (0, 2, 4):\n"
                                 "        yield check, n\n\n\ndef check(n):\n    assert is_even(n)\n\n\n"
                                 "def test_odd():\n    assert not is_even(3)\n"),
    })
    record = engine(tmp_path).setup(str(repo.path), on_date=PIN_DATE)
    assert record.status == "validated", record.failure_reason
    assert record.plan.runner == "unittest" and record.plan.entry == ["nose", "-v"]
    assert "pynose" in record.plan.packages  # nose itself no longer imports on Python 3.11
    assert record.test == ["python -m nose -v"]
    names = {t.name for t in record.tests.tests}
    assert names == {"evens_tests.test_evens(0,)", "evens_tests.test_evens(2,)",
                     "evens_tests.test_evens(4,)", "evens_tests.test_odd"}


@pytest.mark.parametrize(("suite", "files", "command"), [
    ("tests", {"tests/__init__.py": "", "tests/basic.py": None},
     "python -m unittest discover -s tests -t . -p '*.py' -v"),
    ("shapes.tests.suite", {"shapes/tests.py": None}, "python -m unittest shapes.tests.suite -v"),
    # a runner module with no tests of its own whose additional_tests() setuptools' loader
    # called: unittest loads that callable too
    ("tests.runtests", {"tests/__init__.py": "", "tests/basic.py": None,
                        "tests/runtests.py": (
                            "from unittest import TestSuite, defaultTestLoader\n\n\n"
                            "def additional_tests():\n    suite = TestSuite()\n"
                            "    suite.addTest(defaultTestLoader.loadTestsFromName('tests.basic'))\n"
                            "    return suite\n")},
     "python -m unittest tests.runtests tests.runtests.additional_tests -v"),
])
def test_setup_py_test_suites_run_the_way_setup_py_test_loaded_them(
        make_repo, tmp_path: Path, suite: str, files: dict[str, str | None], command: str) -> None:
    cases = ("import unittest\n\n\nclass AreaTests(unittest.TestCase):\n    def test_square(self):\n"
             "        self.assertEqual(4, 2 * 2)\n\n    def test_circle(self):\n        self.assertTrue(3 < 3.2)\n")
    if suite.endswith(".suite"):
        cases += ("\n\ndef suite():\n    return unittest.TestSuite([AreaTests('test_square')])\n")
    repo = make_repo("shapes", {
        "setup.py": SETUP.format(name="shapes", extra=f", test_suite={suite!r}"),
        "shapes/__init__.py": "",
        **{path: cases if text is None else text for path, text in files.items()},
    })
    record = engine(tmp_path).setup(str(repo.path), on_date=PIN_DATE)
    assert record.status == "validated", record.failure_reason
    assert record.test == [command]
    assert record.plan.sources["test"] == ["setup.py"]
    names = sorted(t.name for t in record.tests.tests)
    module = "tests.basic" if suite.startswith("tests") else "shapes.tests"
    expected = ["test_square"] if suite.endswith(".suite") else ["test_circle", "test_square"]
    assert names == [f"{module}.AreaTests.{name}" for name in expected], names
