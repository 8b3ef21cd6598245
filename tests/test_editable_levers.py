"""Editable installs on a build backend of a date without PEP 660 hooks, where a newer
backend does not help either (the project pins an old setuptools and uses what newer ones
reject): a regular install with the checkout on the path, then the legacy `setup.py develop`."""

from __future__ import annotations

from pathlib import Path

import pytest

from benchsmith.core import Plan
from benchsmith.harness.render import render, render_reinstall

from .conftest import PIN_DATE
from .test_setup_engine import engine

# setuptools 58 dropped use_2to3 ("use_2to3 is invalid"); projects of that time capped it.
PYPROJECT = """
[build-system]
requires = ["setuptools<58", "wheel"]
build-backend = "setuptools.build_meta"
"""

SETUP = """
from setuptools import Extension, setup

setup(
    name="{name}",
    version="0.3.1",
    packages=["{name}"],
    use_2to3=True,
    ext_modules={ext},
    extras_require={{"test": ["pytest"]}},
)
"""

# The tests must import the checkout (a patch to it is what an instance tests), never a copy.
WHERE_TESTS = """
import os

import {name}


def test_the_checkout_is_imported():
    here = os.path.realpath(os.path.join(os.path.dirname(__file__), os.pardir, "{name}"))
    assert os.path.realpath(os.path.dirname({name}.__file__)) == here


def test_total():
    assert {name}.total([1, 2, 3]) == 6
"""

SPEED_C = """
#include <Python.h>

static PyObject *add(PyObject *self, PyObject *args) {
    long a, b;
    if (!PyArg_ParseTuple(args, "ll", &a, &b)) return NULL;
    return PyLong_FromLong(a + b);
}

static PyMethodDef methods[] = {{"add", add, METH_VARARGS, "a + b"}, {NULL, NULL, 0, NULL}};
static struct PyModuleDef module = {PyModuleDef_HEAD_INIT, "_speed", NULL, -1, methods};
PyMODINIT_FUNC PyInit__speed(void) { return PyModule_Create(&module); }
"""

pytestmark = pytest.mark.slow


def _repairs(record) -> list[str]:
    return [i.repair for i in record.iterations if i.repair]


def test_a_regular_install_with_the_checkout_on_the_path(make_repo, tmp_path: Path) -> None:
    repo = make_repo("twotothree", {
        "pyproject.toml": PYPROJECT, "setup.py": SETUP.format(name="twotothree", ext="[]"),
        "twotothree/__init__.py": "def total(values):\n    return sum(values)\n",
        "tests/test_where.py": WHERE_TESTS.format(name="twotothree"),
    })
    record = engine(tmp_path).setup(str(repo.path), on_date=PIN_DATE)
    assert record.status == "validated", (record.failure_reason, _repairs(record))
    kinds = [i.diagnosis.kind for i in record.iterations if i.diagnosis]
    assert kinds[0] == "no_pep660" and kinds[-1] == "project_build_failed", kinds
    repairs = _repairs(record)
    assert "allow setuptools" in repairs[0] and "without isolation" in repairs[1], repairs
    assert "without -e" in repairs[-1] and "PYTHONPATH=." in repairs[-1], repairs
    assert not record.plan.editable and record.plan.env["PYTHONPATH"] == "."
    assert record.plan.build_isolation  # built as the project's build requirements say
    assert " -e " not in record.install[-1]
    assert record.tests.PASSED == 2


def test_setup_py_develop_when_the_checkout_lacks_its_built_extension(make_repo, tmp_path: Path) -> None:
    """A project of 2018 for Python up to 3.6, whose setuptools never had PEP 660 hooks."""
    setup = SETUP.format(name="fastsum", ext='[Extension("fastsum._speed", ["fastsum/_speed.c"])]')
    repo = make_repo("fastsum", {
        "setup.py": setup.replace("use_2to3=True,", 'python_requires=">=3.5, <3.7",'),
        "fastsum/__init__.py": "from fastsum._speed import add\n\n\ndef total(values):\n"
                               "    result = 0\n    for value in values:\n        result = add(result, value)\n"
                               "    return result\n",
        "fastsum/_speed.c": SPEED_C,
        "tests/test_where.py": WHERE_TESTS.format(name="fastsum"),
    }, date="2018-05-01T12:00:00+00:00")
    record = engine(tmp_path, max_iterations=6).setup(str(repo.path), on_date="2018-06-01")
    assert record.status == "validated", (record.failure_reason, _repairs(record))
    assert record.python == "3.6"
    repairs = _repairs(record)
    # the planner allowed a newer setuptools from the start (the first lever's first half)
    assert any("no PEP 660" in n for n in record.plan.notes)
    assert len(repairs) == 3 and "without isolation next to setuptools" in repairs[0], repairs
    assert "without -e" in repairs[1] and "setup.py develop" in repairs[2], repairs
    kinds = [i.diagnosis.kind for i in record.iterations if i.diagnosis]
    assert kinds[0] == "no_pep660" and kinds[-1] == "project_not_importable", kinds
    assert record.plan.develop and "PYTHONPATH" not in record.plan.env
    assert record.install[-1] == "python setup.py develop --no-deps"
    assert "-r setup.py --extra test" in record.install[-2]
    assert record.tests.PASSED == 2


def test_develop_plans_render_the_dependencies_then_the_link() -> None:
    plan = Plan(python="3.11", exclude_newer="2023-06-01T00:00:00Z", develop=True, editable=False,
                build_requirements=["setuptools<58"],
                build_env={"FAST_NO_EXT": "1"})
    install, _ = render(plan)
    assert install[-1] == "env FAST_NO_EXT=1 python setup.py develop --no-deps"
    assert install[0].endswith("'setuptools<58'") and "--no-build-isolation" not in install[1]
    assert "-r setup.py" in install[-2]
    assert render_reinstall(plan) == "env FAST_NO_EXT=1 python setup.py develop --no-deps"
