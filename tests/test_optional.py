"""Optional dependencies: a dataset's own tests skipped for want of a package the project's
extras declare get one more round with it (setup/optional.py)."""

from __future__ import annotations

from pathlib import Path

import pytest

from benchsmith.core import Plan
from benchsmith.sandbox import LocalSandboxConfig
from benchsmith.setup.context_model import RepoContext
from benchsmith.setup.engine import SetupEngine, SetupOptions
from benchsmith.setup.environments import Environment, set_up
from benchsmith.setup.optional import optional_requirements, skip_reasons

from .conftest import PIN_DATE, _git

PLAN = Plan(python="3.11", exclude_newer="2023-06-01T00:00:00Z", extras=["test"], packages=["pytest"])
SUMMARY = """
PASSED tests/test_a.py::test_plain
SKIPPED [3] tests/test_a.py:12: requires ephem
SKIPPED [1] tests/test_a.py:30: could not import 'netCDF4': No module named 'netCDF4'
SKIPPED [1] tests/test_a.py:44: needs a display
SKIPPED [2] tests/test_b.py:9: python_dateutil is too old
"""


def test_skip_reasons_name_requirements_of_the_projects_extras_only() -> None:
    reasons = skip_reasons([SUMMARY])
    assert reasons == ["requires ephem", "could not import 'netCDF4': No module named 'netCDF4'",
                       "needs a display", "python_dateutil is too old"]
    extras = RepoContext(extras={"test": ["pytest", "numpy"],
                                 "optional": ["ephem>=3.7; python_version>'3'", "netcdf4", "numba",
                                              "python-dateutil"],
                                 "doc": ["sphinx"]})
    assert optional_requirements(reasons, extras, PLAN) == ["ephem>=3.7", "netcdf4", "python-dateutil"]
    # no reason, an installed extra, a package the plan has, a longer name that merely contains one
    assert optional_requirements([], extras, PLAN) == []
    assert optional_requirements(["requires numpy"], extras, PLAN) == []
    assert optional_requirements(["requires ephem"], extras, PLAN.model_copy(update={"packages": ["ephem"]})) == []
    assert optional_requirements(["requires ephem-data and numbagg"], extras, PLAN) == []
    # a package only the CI's conda environment file lists is the project's too
    conda = RepoContext(conda_packages=["numpy", "sparse", "netcdf4"])
    assert optional_requirements(["requires sparse", "requires netCDF4", "requires zarr"], conda,
                                 PLAN) == ["sparse", "netcdf4"]



DECORATED = """
import pytest
from . import requires_pint_0_15, requires_scipy_or_netCDF4


class TestVariable:
    @pytest.mark.slow
    @requires_pint_0_15(reason="Need __dask_tokenize__")
    def test_tokenize_duck_dask_array(self):
        pass

    @requires_scipy_or_netCDF4
    def test_to_netcdf(self):
        pass

    def test_plain(self):
        pass
"""


def test_a_skipped_tests_requires_decorator_names_what_its_reason_does_not(tmp_path: Path) -> None:
    (tmp_path / "xr" / "tests").mkdir(parents=True)
    (tmp_path / "xr" / "tests" / "test_dask.py").write_text(DECORATED)
    # the decorated function's first line (Python 3.8+), its def, an absolute path; a plain test
    summary = ("SKIPPED [2] xr/tests/test_dask.py:7: Need __dask_tokenize__\n"
               f"SKIPPED [1] {tmp_path}/xr/tests/test_dask.py:13: could not import\n"
               "SKIPPED [1] xr/tests/test_dask.py:16: no reason\n"
               "SKIPPED [1] xr/tests/gone.py:3: elsewhere\n"
               "SKIPPED [1] xr/tests/test_dask.py:3: a module-level skip\n")
    reasons = skip_reasons([summary], tmp_path)
    assert reasons == ["Need __dask_tokenize__", "requires pint", "could not import",
                       "requires scipy or netCDF4", "no reason", "elsewhere", "a module-level skip"]
    assert skip_reasons([summary]) == ["Need __dask_tokenize__", "could not import", "no reason",
                                       "elsewhere", "a module-level skip"]
    conda = RepoContext(conda_packages=["numpy", "pint", "scipy", "dask"])
    assert optional_requirements(reasons, conda, PLAN) == ["pint", "scipy"]


PYPROJECT = """
[build-system]
requires = ["setuptools>=61"]
build-backend = "setuptools.build_meta"

[project]
name = "withsix"
version = "0.1.0"
requires-python = ">=3.11"

[project.optional-dependencies]
test = ["pytest"]
compat = ["six"]
"""
TESTS = """
import pytest

try:
    import six
except ImportError:
    six = None


@pytest.mark.skipif(six is None, reason="requires six")
def test_with_six():
    assert six.PY3


def test_plain():
    assert True
"""


# xarray's shape: CI creates a conda environment from a file that lists what the extras do not
CONDA_ENVIRONMENT = """
name: withsix-tests
channels:
  - conda-forge
dependencies:
  - python=3.11
  - conda-forge::pytest>=7
  - pip
  - pip:
      - six==1.16.0
"""


@pytest.mark.slow
@pytest.mark.parametrize("declared", ["extra", "conda environment file"])
def test_tests_skipped_without_an_extras_package_get_it(make_repo, tmp_path: Path, declared: str) -> None:
    files = {"pyproject.toml": PYPROJECT, "src/withsix/__init__.py": "", "tests/test_six.py": TESTS}
    if declared != "extra":
        files["pyproject.toml"] = PYPROJECT.replace('compat = ["six"]\n', "")
        files["ci/requirements/environment.yml"] = CONDA_ENVIRONMENT
    repo = make_repo("withsix", files)
    options = SetupOptions(sandbox=LocalSandboxConfig(tmp_dir=str(tmp_path / "boxes")),
                           use_refdb=False)
    engine = SetupEngine(options)
    made = set_up(engine, str(repo.path), _git(repo.path, "rev-parse", "HEAD"), PIN_DATE,
                  "fixture/withsix",
                  focus=["tests/test_six.py"])
    assert isinstance(made, Environment), made.failure_reason
    record = made.record
    try:
        assert [i.origin for i in record.iterations] == ["rules", "optional"]
        assert record.iterations[0].optional == ["six"] and record.tests.PASSED == 2
        assert "six" in made.plan.packages and "skip reasons" in made.plan.sources["packages"]
        # the environment handed on is the one with six in it
        assert made.sandbox is not None and made.sandbox.exec("python -c 'import six'").ok
    finally:
        made.close()


# xarray's test_dask.py: the module skips without dask, and once dask is there a test skips
# without pint under a `@requires_pint_0_15` decorator whose reason does not name pint
NESTED_TESTS = """
import pytest

six = pytest.importorskip("six")

try:
    import toolz
except ImportError:
    toolz = None

requires_toolz_0_10 = pytest.mark.skipif(toolz is None, reason="Need __toolz_thing__")


@requires_toolz_0_10
def test_with_both():
    assert six.PY3 and toolz.identity(1) == 1


def test_with_six():
    assert six.PY3
"""


@pytest.mark.slow
def test_what_the_first_optional_round_lets_run_and_skip_gets_a_round_of_its_own(
        make_repo, tmp_path: Path) -> None:
    pyproject = PYPROJECT.replace('compat = ["six"]', 'compat = ["six", "toolz"]')
    repo = make_repo("withsix", {"pyproject.toml": pyproject, "src/withsix/__init__.py": "",
                                 "tests/test_nested.py": NESTED_TESTS, "tests/test_six.py": TESTS})
    engine = SetupEngine(SetupOptions(sandbox=LocalSandboxConfig(tmp_dir=str(tmp_path / "boxes")),
                                      use_refdb=False))
    made = set_up(engine, str(repo.path), _git(repo.path, "rev-parse", "HEAD"), PIN_DATE,
                  "fixture/withsix", focus=["tests/test_nested.py", "tests/test_six.py"])
    assert isinstance(made, Environment), made.failure_reason
    try:
        record = made.record
        assert [i.origin for i in record.iterations] == ["rules", "optional", "optional"]
        assert [i.optional for i in record.iterations] == [["six"], ["toolz"], []]
        assert record.tests.PASSED == 4 and {"six", "toolz"} <= set(made.plan.packages)
    finally:
        made.close()
