"""Failure classes of the setup rules seen on real applications and old commits: a setup.py
that imports its own package, imports an optional extra provides, collection errors behind a
pass rate, and a suite just under the threshold for an environmental reason."""

from __future__ import annotations

from pathlib import Path

import pytest

from benchsmith.sandbox import LocalSandboxConfig
from benchsmith.setup.context import gather_context
from benchsmith.setup.engine import SetupEngine, SetupOptions

from .conftest import PIN_DATE


def engine(tmp_path: Path) -> SetupEngine:
    return SetupEngine(SetupOptions(sandbox=LocalSandboxConfig(tmp_dir=str(tmp_path / "boxes")),
                                    use_refdb=False))


SETUP_IMPORTS_ITSELF = """
from setuptools import setup

from stamp import __version__

setup(
    name="stamp",
    version=__version__,
    packages=["stamp"],
    install_requires=["python-dateutil", "six"],
    extras_require={"test": ["pytest"]},
)
"""
STAMP = """
import six
from dateutil import parser

__version__ = "1.2"


def year(text):
    return parser.parse(six.text_type(text)).year
"""
STAMP_TESTS = """
from stamp import year


def test_year():
    assert year("2020-01-02") == 2020
"""


def test_setup_py_requirements_are_read_statically(make_repo) -> None:
    cfg = """
    [metadata]
    name = cfgpkg

    [options]
    install_requires =
        attrs>=20
        six; python_version < "4"
    """
    repo = make_repo("declared", {"setup.py": SETUP_IMPORTS_ITSELF, "stamp/__init__.py": STAMP})
    assert [(h.value, h.source) for h in gather_context(repo.path).install_requires] == [
        ("python-dateutil", "setup.py"), ("six", "setup.py")]
    reads = make_repo("reads", {
        "setup.py": "from setuptools import setup\nsetup(name='r', install_requires="
                    "open('requirements/base.txt').read().splitlines())\n",
        "requirements/base.txt": "# run time\nattrs==21.4.0\n-e .\n"})
    assert [(h.value, h.source) for h in gather_context(reads.path).install_requires] == [
        ("attrs==21.4.0", "requirements/base.txt")]
    declared = make_repo("cfg", {"setup.cfg": cfg, "setup.py": "from setuptools import setup\nsetup()\n"})
    assert [h.value for h in gather_context(declared.path).install_requires] == [
        "attrs>=20", 'six; python_version < "4"']


@pytest.mark.slow
def test_a_setup_py_that_imports_its_own_package_gets_its_requirements_first(
        make_repo, tmp_path: Path) -> None:
    repo = make_repo("stamp", {"setup.py": SETUP_IMPORTS_ITSELF, "stamp/__init__.py": STAMP,
                               "tests/test_stamp.py": STAMP_TESTS})
    record = engine(tmp_path).setup(str(repo.path), on_date=PIN_DATE)
    assert record.status == "validated", record.failure_reason
    first = record.iterations[0]
    assert first.diagnosis is not None and first.diagnosis.kind == "build_dependency_missing"
    assert first.diagnosis.facts["own_import"] == ["stamp/__init__.py"]
    assert first.repair is not None and "python-dateutil" in first.repair and "six" in first.repair
    assert len(record.iterations) == 2  # every declared requirement at once, not one per round
    assert record.install[0].split()[-4:] == ["python-dateutil", "setuptools", "six", "wheel"]
    assert "--no-build-isolation" in record.install[1]
    assert record.sources["build_requirements"] == ["setup.py"]


NOTES_PYPROJECT = """
[build-system]
requires = ["setuptools>=61"]
build-backend = "setuptools.build_meta"

[project]
name = "notes"
version = "0.1.0"
requires-python = ">=3.8"

[project.optional-dependencies]
test = ["pytest"]
render = ["Markdown<3", "six"]
"""
# Markdown 3 dropped positional extension arguments; the extra pins the 2.x API the code uses.
NOTES_RENDER = """
import markdown


def render(text):
    return markdown.markdown(text, ["markdown.extensions.extra"])
"""
NOTES_TESTS = """
from notes.render import render


def test_emphasis():
    assert render("*a*") == "<p><em>a</em></p>"


def test_table():
    assert "<table>" in render("a | b\\n--- | ---\\n1 | 2")
"""


def test_an_import_one_of_the_projects_extras_provides_names_that_extra() -> None:
    from benchsmith.setup.extra_imports import extra_for_import

    extras = {"test": ["pytest"], "docs": ["Markdown"], "yaml": ["PyYAML>=5"],
              "render": ["Markdown<3"], "lev": ["python-Levenshtein"]}
    assert extra_for_import("markdown.extensions", extras, []) == ("render", "Markdown<3")
    assert extra_for_import("yaml", extras, []) == ("yaml", "PyYAML>=5")
    assert extra_for_import("Levenshtein", extras, []) == ("lev", "python-Levenshtein")
    assert extra_for_import("yaml", extras, ["yaml"]) is None
    assert extra_for_import("requests", extras, []) is None


@pytest.mark.slow
def test_a_module_of_an_optional_extra_installs_the_extra(make_repo, tmp_path: Path) -> None:
    repo = make_repo("notes", {"pyproject.toml": NOTES_PYPROJECT, "src/notes/__init__.py": "",
                               "src/notes/render.py": NOTES_RENDER,
                               "tests/test_render.py": NOTES_TESTS})
    record = engine(tmp_path).setup(str(repo.path), on_date=PIN_DATE)
    assert record.status == "validated", record.failure_reason
    assert len(record.iterations) == 2 and record.tests.PASSED == 2
    assert record.iterations[0].repair == "install the extra render (it provides markdown)"
    assert record.plan is not None and record.plan.extras == ["test", "render"]
    assert "test imports" in record.sources["extras"]
    assert any("Markdown<3" in note for note in record.plan.notes)
