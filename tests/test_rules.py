"""Rules without installs: command reading, Python choice, planning, diagnosis, repair, refdb."""

from __future__ import annotations

from datetime import date
from pathlib import Path

import pytest

from benchsmith.core import BenchsmithError, Diagnosis, ExecResult, Plan
from benchsmith.harness.render import render
from benchsmith.setup.commands import (
    clean_pytest_args,
    pytest_args_from_command,
    split_install_command,
)
from benchsmith.setup.context_model import Hint, RepoContext
from benchsmith.setup.diagnose import diagnose_install, diagnose_tests
from benchsmith.setup.planner import RulePlanner
from benchsmith.setup.pyversion import choose_python
from benchsmith.setup.refdb import ReferenceDB
from benchsmith.setup.repair import RuleRepairer

PY = {v: f"/usr/bin/python{v}" for v in ("3.7", "3.8", "3.9", "3.10", "3.11", "3.12")}


def failed(output: str, returncode: int = 1) -> ExecResult:
    return ExecResult(command="x", returncode=returncode, output=output)


def test_split_install_command() -> None:
    parsed = split_install_command("python -m pip install -U -e '.[test,dev]' -r requirements/ci.txt six && pytest")
    assert parsed.editable_extras == ["test", "dev"]
    assert parsed.requirement_files == ["requirements/ci.txt"]
    assert parsed.packages == ["six"]


@pytest.mark.parametrize(
    ("line", "args"),
    [
        ("pytest", []),
        ("python -m pytest -x --cov=src --cov-report term tests/ {posargs}", ["tests/"]),
        ("coverage run -m pytest -m 'not slow' -n auto tests", ["-m", "not slow", "-n", "auto", "tests"]),
        ("cd src && py.test --junitxml=out.xml -k 'a or b'", ["-k", "a or b"]),
        ("pytest -rs -m 'not slow' tests", ["-m", "not slow", "tests"]),  # ours: -rap
        ("pytest -rfE --pyargs pkg", ["--pyargs", "pkg"]),
        ("tox -e py311", None),
        ("make test", None),
    ],
)
def test_pytest_args_from_command(line: str, args: list[str] | None) -> None:
    assert pytest_args_from_command(line) == args


def test_clean_pytest_args_keeps_selection_drops_reports() -> None:
    assert clean_pytest_args(["--cov", "--doctest-modules", "--tb", "short", "-p", "no:warnings"]) == [
        "--doctest-modules", "-p", "no:warnings"]


def context(**fields) -> RepoContext:
    base = {"has_python_project": True, "root_files": ["pyproject.toml"], "root_dirs": ["tests", "src"]}
    return RepoContext(**{**base, **fields})


def test_python_choice_respects_date_constraints_and_named_versions() -> None:
    assert choose_python(context(), date(2023, 6, 1), PY).version == "3.11"
    assert choose_python(context(), date(2021, 6, 1), PY).version == "3.9"
    limited = context(requires_python=[Hint(value=">=3.7,<3.10", source="setup.py")])
    choice = choose_python(limited, date(2023, 6, 1), PY)
    assert choice.version == "3.9" and choice.fallbacks == ["3.8", "3.7"]
    named = context(classifier_pythons=["3.7", "3.8"])
    assert choose_python(named, date(2023, 6, 1), PY).version == "3.8"


def test_python_choice_before_the_oldest_available_python_takes_the_oldest_that_fits() -> None:
    choice = choose_python(context(), date(2013, 5, 1), PY)
    assert choice.version == "3.7" and choice.fallbacks == ["3.8", "3.9", "3.10"]
    assert choice.reason.startswith("fallback:")
    newer = context(requires_python=[Hint(value=">=3.8", source="setup.py")])
    assert choose_python(newer, date(2016, 1, 1), PY).version == "3.8"


def test_python_choice_says_what_is_missing() -> None:
    with pytest.raises(BenchsmithError, match="no available Python fits requires-python >=3.13"):
        choose_python(context(requires_python=[Hint(value=">=3.13", source="x")]), date(2023, 6, 1), PY)


def test_planner_uses_tox_extras_requirement_files_and_ci_test_command() -> None:
    ctx = context(
        extras={"tests": ["pytest"], "docs": ["sphinx"]},
        tox_extras=[Hint(value="tests", source="tox.ini")],
        requirement_files=["requirements/docs.txt", "requirements/test.txt"],
        test_commands=[Hint(value="pytest --cov tests/unit {posargs}", source="tox.ini")],
        pytest_addopts="--strict-markers --timeout=30",
        root_dirs=["tests", "src"],
    )
    choice = choose_python(ctx, date(2023, 6, 1), PY)
    plan = RulePlanner().plan(ctx, choice, "2023-06-01T00:00:00Z")
    install, test = render(plan)
    assert plan.extras == ["tests"]
    assert plan.requirement_files == ["requirements/test.txt"]
    assert "pytest-timeout" in plan.packages
    assert install == ["uv pip install --exclude-newer 2023-06-01T00:00:00Z -e '.[tests]' "
                       "-r requirements/test.txt pytest pytest-timeout setuptools"]
    assert test == ["python -m pytest -rap -v -p no:cacheprovider tests/unit"]
    assert plan.sources["extras"] == ["tox.ini"] and plan.sources["test"] == ["tox.ini"]


def test_planner_allows_a_pep660_setuptools_for_old_dates() -> None:
    ctx = context(root_files=["setup.py"])
    plan = RulePlanner().plan(ctx, choose_python(ctx, date(2021, 6, 1), PY), "2021-06-01T00:00:00Z")
    # wheel goes with it: a 2022 setuptools building a dependency's sdist with a 2021 wheel fails
    assert plan.exclude_newer_packages == {"setuptools": "2022-12-31T00:00:00Z",
                                           "wheel": "2022-12-31T00:00:00Z"}
    assert "--exclude-newer-package setuptools=2022-12-31T00:00:00Z" in render(plan)[0][0]


def test_editable_installs_on_python_36_move_to_37_where_the_project_allows_it() -> None:
    """uv builds editables through PEP 660 only; no setuptools for Python 3.6 has it."""
    no_pep660 = diagnose_install(failed("has no attribute 'build_editable'"), [])
    old = plan(python="3.6", python_fallbacks=[], exclude_newer="2017-05-27T00:00:00Z")
    fixed, what = RuleRepairer().repair(old, no_pep660, context(root_files=["setup.py"])) or (None, "")
    assert fixed is not None and fixed.python == "3.7" and fixed.editable and "setuptools 64" in what
    capped = context(root_files=["setup.py"], requires_python=[Hint(value="<3.7", source="setup.py")])
    fixed, what = RuleRepairer().repair(old, no_pep660, capped) or (None, "")
    assert fixed is not None and fixed.python == "3.6" and "3.7" not in what


def test_python_37_taken_for_an_editable_install_is_left_when_the_code_of_the_date_needs_older(
        ) -> None:
    """A 2018 project on Python 3.6 moves to 3.7 for its editable install; a dependency of its
    date then does not build on 3.7 (a C extension against 3.6's C API): back to 3.6, installed
    without -e, the checkout first on the path. Code older than 3.6 goes on to 2.7."""
    no_pep660 = diagnose_install(failed("has no attribute 'build_editable'"), [])
    old = plan(python="3.6", python_fallbacks=["2.7"], exclude_newer="2018-06-05T00:00:00Z")
    ctx = context(root_files=["setup.py"], root_dirs=["tests"])
    old.exclude_newer_packages = {"setuptools": "2022-12-31T00:00:00Z",  # the planner's, for
                                  "wheel": "2022-12-31T00:00:00Z"}         # PEP 660
    moved, _ = RuleRepairer().repair(old, no_pep660, ctx) or (None, "")
    assert moved is not None and moved.python == "3.7" and moved.editable
    c_api = diagnose_install(failed(
        "Failed to build `pyyaml==3.12`\n  ext/_yaml.c:24143:21: error: 'PyThreadState' has no "
        "member named 'exc_type'\n"), ["tablib"])
    back, what = RuleRepairer().repair(moved, c_api, ctx) or (None, "")
    assert back is not None and back.python == "3.6" and not back.editable, what
    assert back.env["PYTHONPATH"] == "." and what.startswith("back to Python 3.6")
    # no PEP 660 needed: the dependencies' sources build with a setuptools of early 2019 again
    # (the first that uv asks for a source without a build-system table, 40.8.0), not of 2022
    pins = back.exclude_newer_packages
    assert pins["setuptools"].startswith("2019-") and pins["wheel"] == pins["setuptools"], pins
    # tests that fail on 3.7 with nothing a rule names: back too, before any other Python
    failing = Diagnosis(category="undecidable", kind="tests_failing",
                        reason="too many tests fail and no rule explains why (pass rate 94.8%)")
    back, what = RuleRepairer().repair(moved, failing, ctx) or (None, "")
    assert back is not None and back.python == "3.6" and what.startswith("back to Python 3.6")
    locale = diagnose_install(failed(LOCALE_BUILD), ["tablet"])
    older, what = RuleRepairer().repair(moved, locale, ctx) or (None, "")
    assert older is not None and older.python == "2.7", what


def test_diagnose_install_failures() -> None:
    pep660 = diagnose_install(failed("AttributeError: module 'setuptools.build_meta' has no attribute 'build_editable'"), [])
    assert pep660.kind == "no_pep660"
    pin = diagnose_install(failed(
        "error: No solution found when resolving dependencies:\n"
        "  Because there is no version of attrs==23.1.0 and you require attrs==23.1.0, we can conclude..."), [])
    assert (pin.kind, pin.facts) == ("unsatisfiable", {"packages": ["attrs"], "required": ["attrs"],
                                                       "requirements": ["attrs==23.1.0"]})
    python = diagnose_install(failed(
        "Because the current Python version (3.11.7) does not satisfy Python<3.10 and foo==1.0 depends on Python<3.10"), [])
    assert python.category == "python"
    offline = diagnose_install(failed("error: Failed to fetch: `https://pypi.org/simple/six/`\n  Caused by: dns error"), [])
    assert offline.infrastructure
    build = diagnose_install(failed("Failed to build `calc @ file:///tmp/x`\nModuleNotFoundError: No module named 'numpy'"), ["calc"])
    assert build.kind == "build_dependency_missing" and build.facts["modules"] == ["numpy"]
    # `setup.py develop` fetching setup_requires itself, with easy_install, from today's index
    fetched = diagnose_install(failed(
        "running develop\nSearching for jinja2>=2.7\nReading https://pypi.org/simple/jinja2/\n"
        "Best match: Jinja2 3.1.6\nSearching for MarkupSafe>=2.0\n"
        '  File "/tmp/easy_install-hnjpn0yi/markupsafe-3.0.4/setup.py", line 8, in <module>\n'
        "ModuleNotFoundError: No module named 'setuptools.errors'"), ["astropy"])
    assert fetched.kind == "build_dependency_missing" and fetched.facts["modules"] == ["jinja2", "markupsafe"]
    repaired, what = RuleRepairer().repair(Plan(python="3.7", exclude_newer="2018-10-01T00:00:00Z"),
                                           fetched, context(root_files=["setup.py"])) or (None, "")
    assert repaired is not None and not repaired.build_isolation and "Jinja2" in what, what
    assert {"jinja2", "markupsafe"} <= {r.lower() for r in repaired.build_requirements}
    checked = diagnose_install(failed("Failed to build `astropy @ file:///tmp/x`\n  File \"setup.py\", "
                                      "line 9\nImportError: Numpy version 1.13.0 or later must be "
                                      "installed to use Astropy"), ["astropy"])
    assert checked.kind == "build_dependency_missing" and checked.facts["modules"] == ["numpy"]
    # a dependency built without isolation, versioned by setuptools_scm, which is not there
    scm = diagnose_install(failed(
        "error: Failed to download and build `lazy-object-proxy==1.8.0`\n"
        "  Caused by: Package metadata version `0.0.0` does not match given version `1.8.0`"), ["astroid"])
    assert scm.kind == "build_dependency_missing" and scm.facts == {
        "modules": ["setuptools_scm"], "package": ["lazy-object-proxy"]}
    plan = Plan(python="3.11", exclude_newer="2022-11-12T00:00:00Z", build_isolation=False,
                build_requirements=["setuptools", "wheel"])
    fixed, what = RuleRepairer().repair(plan, scm, RepoContext()) or (None, "")
    assert fixed is not None and "setuptools-scm" in fixed.build_requirements, what


def test_diagnose_test_failures() -> None:
    assert diagnose_tests(failed("ERROR: usage: ...\npytest: error: unrecognized arguments: --cov=x --benchmark-skip", 4),
                          [], "pytest").facts == {"options": ["--cov=x", "--benchmark-skip"]}
    removed = diagnose_tests(failed("E   AttributeError: module 'collections' has no attribute 'Mapping'"), [], "pytest")
    assert removed.category == "python" and removed.facts == {"max_python": ["3.9"]}
    missing = diagnose_tests(failed("E   ModuleNotFoundError: No module named 'yaml'\nE   ModuleNotFoundError: No module named 'mypkg'"), ["mypkg"], "pytest")
    assert missing.kind == "missing_modules" and missing.facts == {"modules": ["yaml"]}
    own = diagnose_tests(failed("E   ModuleNotFoundError: No module named 'mypkg.sub'"), ["mypkg"], "pytest")
    assert own.kind == "project_not_importable"
    plugins = diagnose_tests(failed("E       fixture 'mocker' not found\n'asyncio' not found in `markers` configuration option"), [], "pytest")
    assert plugins.facts == {"markers": ["asyncio"], "fixtures": ["mocker"]}
    assert diagnose_tests(failed("no tests ran in 0.01s", 5), [], "pytest").kind == "no_tests"


LOCALE_BUILD = """\
  x Failed to build `tablet @ file:///tmp/repo`
  |-> The build backend returned an error
  `-> Call to `setuptools.build_meta:__legacy__.build_editable` failed (exit status: 1)
      [stderr]
      Traceback (most recent call last):
        File "/tmp/repo/tablet/packages/lexer.py", line 52, in <module>
          VERBOSE+LOCALE+IGNORECASE)
        File "/root/.pyenv/versions/3.7.16/lib/python3.7/sre_parse.py", line 901, in fix_flags
          raise ValueError("cannot use LOCALE flag with a str pattern")
      ValueError: cannot use LOCALE flag with a str pattern
"""


def test_code_older_than_the_python_names_the_newest_python_that_runs_it() -> None:
    """Behaviour a Python release removed, met while building the project (its setup.py
    imports the package) or while running its tests, moves to the newest Python before it:
    re.LOCALE on str patterns is an error from 3.6, a StopIteration leaving a generator from
    3.7 (PEP 479)."""
    build = diagnose_install(failed(LOCALE_BUILD), ["tablet"])
    assert (build.kind, build.facts) == ("removed_api", {"max_python": ["3.5"]}), build
    pep479 = diagnose_tests(failed(
        "    yield next(entries)\nE   RuntimeError: generator raised StopIteration\n"), [], "pytest")
    assert (pep479.kind, pep479.facts) == ("removed_api", {"max_python": ["3.6"]})
    # an editable install had moved a 2016 project from 3.6 to 3.7; 3.6 has the same error,
    # so the next Python is the 2.7 the project also runs on
    moved = plan(python="3.7", python_fallbacks=["2.7"], exclude_newer="2016-02-07T00:00:00Z")
    fixed, what = RuleRepairer().repair(moved, build, context(root_files=["setup.py"])) or (None, "")
    assert fixed is not None and fixed.python == "2.7", what
    assert RuleRepairer().repair(plan(python="3.7", python_fallbacks=["3.6"]), build,
                                 context()) is None  # nothing older than 3.6 to go to


CLASH = """\
collecting ... collected 3013 items / 2 errors / 3011 selected
==================================== ERRORS ====================================
_____ ERROR collecting plugins/templater/test/linter_test.py ______
E   ModuleNotFoundError: No module named 'test.linter_test'
_____ ERROR collecting plugins/templater/test/rules_test.py ______
E   ModuleNotFoundError: No module named 'test.rules_test'
!!!!!!!!!!!!!!!!!!! Interrupted: 2 errors during collection !!!!!!!!!!!!!!!!!!!!
"""


def test_two_test_packages_of_one_name_are_a_collection_clash_not_a_distribution() -> None:
    # Without knowing the repository has a test/ directory, "test" looks like a distribution.
    assert diagnose_tests(failed(CLASH, 2), ["sqlx"], "pytest").kind == "missing_modules"
    clash = diagnose_tests(failed(CLASH, 2), ["sqlx"], "pytest", frozenset({"test", "src"}))
    assert clash.kind == "collection_errors" and clash.facts["files"] == [
        "plugins/templater/test/linter_test.py", "plugins/templater/test/rules_test.py"]
    fixed, what = RuleRepairer().repair(plan(test_args=["test"]), clash, context()) or (None, "")
    assert fixed is not None and fixed.test_args == ["test", "--continue-on-collection-errors"]
    assert "plugins/templater/test/linter_test.py" in what
    assert RuleRepairer().repair(fixed, clash, context()) is None
    unnamed = clash.model_copy(update={"facts": {}})
    _, what = RuleRepairer().repair(plan(test_args=["test"]), unnamed, context()) or (None, "")
    assert what == "run the tests despite collection errors"
    # A missing third-party module next to the clash is still installed first.
    both = diagnose_tests(failed(CLASH + "E   ModuleNotFoundError: No module named 'yaml'\n", 2),
                          ["sqlx"], "pytest", frozenset({"test"}))
    assert both.kind == "missing_modules" and both.facts["modules"] == ["yaml"]


def plan(**fields) -> Plan:
    return Plan(**{"python": "3.11", "python_fallbacks": ["3.10", "3.9", "3.8"],
                   "exclude_newer": "2023-06-01T00:00:00Z", **fields})


def test_repairs_change_the_plan() -> None:
    repairer, ctx = RuleRepairer(), context()
    missing = diagnose_tests(failed("ModuleNotFoundError: No module named 'yaml.loader'"), [], "pytest")
    fixed, what = repairer.repair(plan(), missing, ctx) or (None, "")
    assert fixed is not None and fixed.packages == ["PyYAML"] and "PyYAML" in what
    assert repairer.repair(fixed, missing, ctx) is None  # the same repair twice does not loop

    older = diagnose_tests(failed("module 'collections' has no attribute 'Mapping'"), [], "pytest")
    fixed, _ = repairer.repair(plan(), older, ctx) or (None, "")
    assert fixed is not None and fixed.python == "3.9" and fixed.python_fallbacks == ["3.10", "3.8"]

    distutils = diagnose_tests(failed("ModuleNotFoundError: No module named 'distutils'"), [], "pytest")
    fixed, _ = repairer.repair(plan(python="3.12"), distutils, ctx) or (None, "")
    assert fixed is not None and "setuptools" in fixed.packages

    option = diagnose_tests(failed("error: unrecognized arguments: --weird-flag"), [], "pytest")
    fixed, what = repairer.repair(plan(), option, context(pytest_addopts="-ra --weird-flag")) or (None, "")
    assert fixed is not None and fixed.ini_overrides == {"addopts": "-ra"}
    assert "-o addopts=-ra" in render(fixed)[1][0]

    pep660 = diagnose_install(failed("has no attribute 'build_editable'"), [])
    first, _ = repairer.repair(plan(), pep660, ctx) or (None, "")
    assert first is not None and "setuptools" in first.exclude_newer_packages
    # The project pins an old backend for its builds: build next to a newer one, no isolation.
    pinned = ctx.model_copy(update={"build_requires": ["setuptools~=62.6", "wheel~=0.37.1"]})
    second, what = repairer.repair(first, pep660, pinned) or (None, "")
    assert second is not None and second.editable and not second.build_isolation, what
    assert second.build_requirements == ["setuptools", "wheel~=0.37.1"]
    assert render(second)[0][0].startswith("uv pip install --exclude-newer 2023-06-01T00:00:00Z "
                                           "--exclude-newer-package setuptools=2022-12-31")
    third, _ = repairer.repair(second, pep660, pinned) or (None, "")
    assert third is not None and third.editable is False


def test_repairs_that_touch_test_paths_keep_option_values() -> None:
    from benchsmith.core import Diagnosis
    from benchsmith.setup.repair import repair_no_tests, repair_paths

    selected = plan(test_args=["-m", "not slow", "tests/unit", "-k", "tests/gone"])
    no_tests = Diagnosis(category="testing", kind="no_tests", reason="none")
    assert repair_no_tests(selected, no_tests, context())
    assert selected.test_args == ["-m", "not slow", "-k", "tests/gone"]
    missing = Diagnosis(category="testing", kind="missing_path", reason="gone",
                        facts={"paths": ["tests/gone"]})
    assert repair_paths(selected, missing, context()) is None  # a -k value is not a path
    assert selected.test_args == ["-m", "not slow", "-k", "tests/gone"]


def test_a_spec_for_files_leaves_out_pyargs() -> None:
    from benchsmith.harness.render import plan_spec

    spec = plan_spec(plan(test_args=["--pyargs", "pkg", "-m", "not slow"]), ["pkg/tests/test_a.py"])
    assert spec.args == ["-m", "not slow"]


def test_direct_url_requirement_is_filtered(tmp_path: Path) -> None:
    (tmp_path / "requirements-dev.txt").write_text(
        "pytest\n# tools\nhttps://example.invalid/archive/main.zip\n-e .\nsix>=1.0  # compat\n")
    ctx = context(repo_root=str(tmp_path))
    diagnosis = diagnose_install(failed(
        "Failed to fetch: https://example.invalid/archive/main.zip\n"
        "  cause: error sending request for url (https://example.invalid/archive/main.zip)\n"
        "  cause: dns error"), [])
    assert diagnosis.facts == {"urls": ["https://example.invalid/archive/main.zip"]}
    assert diagnosis.kind == "direct_url_unreachable"
    fixed, _ = RuleRepairer().repair(plan(requirement_files=["requirements-dev.txt"]), diagnosis, ctx) or (None, "")
    assert fixed is not None and fixed.requirement_files == [] and fixed.packages == ["pytest", "six>=1.0"]


def test_refdb_returns_nearest_date_first(tmp_path: Path) -> None:
    db = ReferenceDB(tmp_path / "ref.sqlite")
    for commit, day in (("a" * 40, "2020-01-01"), ("b" * 40, "2022-01-01"), ("c" * 40, "2023-01-01")):
        db.save("o/r", commit, day, plan(), ["i"], ["t"], 1.0)
    db.save("o/other", "d" * 40, "2022-06-01", plan(), ["i"], ["t"], 1.0)
    nearest = db.nearest("o/r", "2022-03-01")
    assert [s.commit[0] for s in nearest] == ["b", "c", "a"]
    assert db.count("o/r") == 3 and db.count() == 4


def test_planner_prefers_a_test_command_that_skips_network_tests() -> None:
    ctx = context(test_commands=[Hint(value="coverage run -m pytest", source="Makefile"),
                                 Hint(value="python -m pytest --skip-tests-requiring-internet",
                                      source="Makefile")])
    plan = RulePlanner().plan(ctx, choose_python(ctx, date(2023, 6, 1), PY), "2023-06-01T00:00:00Z")
    assert plan.test_args == ["--skip-tests-requiring-internet"]


def test_a_ci_job_for_remote_data_is_not_the_test_command() -> None:
    jobs = [Hint(value="pytest --remote-data=any -m 'not slow' tests", source=".github/workflows/ci.yml"),
            Hint(value="pytest -m 'not slow' tests", source=".github/workflows/ci.yml")]
    ctx = context(test_commands=jobs)
    plan = RulePlanner().plan(ctx, choose_python(ctx, date(2023, 6, 1), PY), "2023-06-01T00:00:00Z")
    assert plan.test_args == ["-m", "not slow", "tests"]
    only = context(test_commands=jobs[:1])
    plan = RulePlanner().plan(only, choose_python(only, date(2023, 6, 1), PY), "2023-06-01T00:00:00Z")
    assert "--remote-data=any" not in plan.test_args  # the option that turns network tests on


FILTERED_DEPENDENCY = """\
error: No solution found when resolving dependencies
  cause: Because only geopy[dev-test]==1.18.1 is available and geopy[dev-test]==1.18.1 depends on pytest>=3.10, we can conclude that all versions of geopy[dev-test] depend on pytest>=3.10. (1)
         Because there are no versions of atomicwrites and pytest>=3.10.0 depends on atomicwrites>=1.0, we can conclude that pytest>=3.10.0 cannot be used.
         And because we know from (1) that all versions of geopy[dev-test] depend on pytest>=3.10, we can conclude that all versions of geopy[dev-test] cannot be used.
         And because you require geopy[dev-test], we can conclude that your requirements are unsatisfiable.
hint: `atomicwrites` was filtered by `exclude-newer` to only include packages uploaded before 2019-01-07T00:00:00Z. The latest version satisfying the requirement is v1.4.1, published at 2022-07-08T18:31:40.459Z. Consider using `exclude-newer-package` to override the cutoff for this package.
"""


def test_the_package_the_date_filtered_out_is_named_not_the_project() -> None:
    """uv's explanation starts at the project ("only geopy[dev-test]==1.18.1 is available"); its
    hint names the dependency of a dependency the date pin left without a release (atomicwrites,
    whose old releases were deleted): that one is relaxed, not the project's pre-releases."""
    diagnosis = diagnose_install(failed(FILTERED_DEPENDENCY), ["geopy"])
    assert diagnosis.kind == "unsatisfiable" and diagnosis.facts["packages"] == ["atomicwrites"]
    assert "atomicwrites>=1.0" in diagnosis.facts["requirements"]
    own = context(project_name="geopy")
    fixed, what = RuleRepairer().repair(plan(exclude_newer="2019-01-07T00:00:00Z"), diagnosis,
                                        own) or (None, "")
    assert fixed is not None and not fixed.prerelease, what
    assert "atomicwrites" in fixed.exclude_newer_packages, what


def test_conflicting_added_package_is_dropped_before_relaxing() -> None:
    out = ("error: No solution found when resolving dependencies\n"
           "  cause: Because only the following versions of pyflakes are available:\n"
           "             pyflakes<2.0.0\n             pyflakes>=2.1.0\n"
           "         and flake8==3.6.0 depends on pyflakes>=2.0.0,<2.1.0, we can conclude that flake8==3.6.0 cannot be used.\n"
           "         And because you require flake8==3.6.0, we can conclude that your requirements are unsatisfiable.\n")
    diagnosis = diagnose_install(failed(out), ["pyflakes"])
    # the dependency's own requirement of the package comes too: a relaxation reads it
    assert diagnosis.facts == {"packages": ["pyflakes"], "required": ["flake8"],
                               "requirements": ["flake8==3.6.0", "pyflakes>=2.0.0,<2.1.0"]}
    fixed, what = RuleRepairer().repair(plan(packages=["pytest", "flake8==3.6.0"]), diagnosis, context()) or (None, "")
    assert fixed is not None and fixed.packages == ["pytest"] and "drop flake8==3.6.0" in what
    relaxed, what = RuleRepairer().repair(fixed, diagnosis, context()) or (None, "")
    assert relaxed is not None and "pyflakes" in relaxed.exclude_newer_packages


def test_reused_plan_gets_the_date_rules_of_its_new_date() -> None:
    from benchsmith.setup.date_rules import apply_date_rules

    ctx = context(root_files=["setup.py"])
    reused = plan(exclude_newer="2021-03-01T00:00:00Z")
    apply_date_rules(reused, ctx)
    assert reused.exclude_newer_packages == {"setuptools": "2022-12-31T00:00:00Z", "wheel": "2022-12-31T00:00:00Z"}
    recent = plan()
    apply_date_rules(recent, ctx)
    assert recent.exclude_newer_packages == {}


def test_environments_before_python_312_come_with_setuptools_as_virtualenvs_did() -> None:
    from benchsmith.setup.date_rules import apply_date_rules

    ctx = context(root_files=["setup.py"])
    old = plan(python="3.11")
    apply_date_rules(old, ctx)
    assert old.packages.count("setuptools") == 1 and any("seeded" in n for n in old.notes)
    apply_date_rules(old, ctx)  # reused again: still once
    assert old.packages.count("setuptools") == 1
    pinned = plan(python="3.8", packages=["setuptools<45"])
    apply_date_rules(pinned, ctx)
    assert pinned.packages == ["setuptools<45"]  # the project's own pin stands
    new = plan(python="3.12")
    apply_date_rules(new, ctx)
    assert "setuptools" not in new.packages


def test_a_broken_setup_py_is_not_mistaken_for_missing_pep660() -> None:
    out = ("Failed to build `bib @ file:///x`\n  File \"build_meta.py\", in get_requires_for_build_editable\n"
           "FileNotFoundError: [Errno 2] No such file or directory: 'README.rst'")
    assert diagnose_install(failed(out), ["bib"]).kind == "project_build_failed"


RELEASES = {"releases": {
    "22.2.0": [{"upload_time_iso_8601": "2022-12-21T16:00:00.000Z"}],
    "23.1.0rc1": [{"upload_time_iso_8601": "2023-04-01T10:00:00.000Z"}],
    "23.1.0": [{"upload_time_iso_8601": "2023-04-16T10:48:18.000Z"},
               {"upload_time_iso_8601": "2023-04-16T10:50:02.000Z"}],
    "23.2.0": [{"upload_time_iso_8601": "2023-12-31T06:30:30.000Z"}],
    "24.0.0": [{"upload_time_iso_8601": "2023-05-01T00:00:00.000Z", "yanked": True}],
}}


def test_a_relaxed_pin_moves_to_the_first_release_that_satisfies_the_requirement(monkeypatch) -> None:
    import json
    import threading
    from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

    class Index(BaseHTTPRequestHandler):
        def do_GET(self) -> None:  # noqa: N802
            body = json.dumps(RELEASES).encode() if self.path == "/pypi/attrs/json" else b"{}"
            self.send_response(200 if self.path == "/pypi/attrs/json" else 404)
            self.send_header("Content-Length", str(len(body)))
            self.end_headers()
            self.wfile.write(body)

        def log_message(self, *args: object) -> None:
            return

    server = ThreadingHTTPServer(("127.0.0.1", 0), Index)
    threading.Thread(target=server.serve_forever, daemon=True).start()
    monkeypatch.setenv("BENCHSMITH_PYPI_URL", f"http://127.0.0.1:{server.server_address[1]}")
    try:
        diagnosis = diagnose_install(failed(
            "error: No solution found when resolving dependencies\n  cause: Because only "
            "attrs<=20.3.0 is available and you require attrs>=23.1,<24, we can conclude that "
            "your requirements are unsatisfiable.\n"), [])
        assert diagnosis.facts["requirements"] == ["attrs>=23.1,<24"]
        relaxed, what = RuleRepairer().repair(plan(), diagnosis, context()) or (None, "")
        assert relaxed is not None
        assert relaxed.exclude_newer_packages == {"attrs": "2023-04-17T00:00:00Z"}
        assert "first release with attrs<24,>=23.1" in what
        missing = diagnose_install(failed(
            "  cause: Because there are no versions of ghost>=2 and you require ghost>=2, we can "
            "conclude that your requirements are unsatisfiable.\nNo solution found"), [])
        fallback, what = RuleRepairer().repair(plan(), missing, context()) or (None, "")
        assert fallback is not None and "today (no release date found)" in what
    finally:
        server.shutdown()
        server.server_close()


@pytest.mark.parametrize(("output", "packages"), [
    ("fatal error: libxml/xmlversion.h: No such file or directory", ["libxml2-dev"]),
    ("/usr/bin/ld: cannot find -llz4: No such file or directory", ["liblz4-dev"]),
    ("Package libffi was not found in the pkg-config search path.", ["libffi-dev"]),
    ("Package 'libxml-2.0', required by 'virtual:world', not found", ["libxml2-dev"]),
    ("Exception: Could not find lz4 lib/headers", ["liblz4-dev"]),
    ("error: Unable to find the snappy library", ["libsnappy-dev"]),
    ("libGL.so.1: cannot open shared object file: No such file or directory", ["libgl1"]),
    ("OSError: Could not find the requested file", []),
])
def test_build_failures_name_the_debian_package(output: str, packages: list[str]) -> None:
    from benchsmith.setup.system_packages import debian_packages_for

    assert debian_packages_for(output) == packages
    if packages:
        diagnosis = diagnose_install(failed("  × Failed to build `pkg==1.0`\n" + output), [])
        assert diagnosis.kind == "system_packages" and diagnosis.facts["apt"] == packages


def test_a_projects_own_value_options_keep_their_value(tmp_path) -> None:
    from benchsmith.setup.context import gather_context
    from benchsmith.setup.planner import RulePlanner
    from benchsmith.setup.pyversion import PythonChoice

    (tmp_path / "tests").mkdir()
    (tmp_path / "pyproject.toml").write_text("[project]\nname = 'fmt'\nversion = '1'\n")
    (tmp_path / "tests" / "conftest.py").write_text(
        "def pytest_addoption(parser):\n"
        "    parser.addoption('--run-optional', action='append', default=[])\n"
        "    parser.addoption('--fast', action='store_true')\n"
        "    group = parser.getgroup('x')\n"
        "    group.addoption('--level', dest='level')\n")
    (tmp_path / "tox.ini").write_text(
        "[testenv]\ncommands = pytest tests --run-optional no_jupyter --fast --level 3 -k 'not slow'\n")
    context = gather_context(tmp_path)
    assert context.pytest_value_options == ["--run-optional", "--level"]
    plan = RulePlanner().plan(context, PythonChoice(version="3.11", reason="t"), "2023-06-01T00:00:00Z")
    assert plan.test_args == ["tests", "--run-optional=no_jupyter", "--fast", "--level=3", "-k", "not slow"]
    # Should a value get lost anyway, pytest's usage error names the option: it is dropped.
    lost = diagnose_tests(failed("__main__.py: error: argument --run-optional: expected one argument", 4),
                          [], "pytest")
    assert lost.kind == "unknown_options" and lost.facts == {"options": ["--run-optional"]}


def test_a_process_limit_is_named_not_blamed_on_python() -> None:
    limit = diagnose_tests(failed("E   RuntimeError: can't start new thread"), [], "pytest")
    assert limit.kind == "killed" and "process limit" in limit.reason
    assert RuleRepairer().repair(plan(), limit, context()) is None


def test_no_python_switch_when_no_test_ran() -> None:
    nothing = diagnose_tests(failed("something odd happened"), [], "pytest")
    assert nothing.kind == "tests_failing"
    nothing.facts["tests"] = ["0"]
    assert RuleRepairer().repair(plan(), nothing, context()) is None
    nothing.facts["tests"] = ["40"]
    fixed, what = RuleRepairer().repair(plan(), nothing, context()) or (None, "")
    assert fixed is not None and fixed.python == "3.10"


def test_the_projects_own_dev_version_allows_prereleases_and_is_never_relaxed() -> None:
    from benchsmith.harness.render import render_install

    out = ("error: No solution found when resolving dependencies\n  cause: Because only the following "
           "versions of astroid are available:\n astroid<2.9.0\n astroid>=2.10\n and pylint==2.12.2 "
           "depends on astroid>=2.9.0,<2.10, we can conclude that pylint==2.12.2 cannot be used.\n"
           " And because you require pylint==2.12.2, we can conclude that your requirements are unsatisfiable.")
    diagnosis = diagnose_install(failed(out), ["astroid"])
    assert diagnosis.kind == "unsatisfiable" and diagnosis.facts["packages"] == ["astroid"]
    ctx = context()
    ctx.project_name = "astroid"
    fixed, what = RuleRepairer().repair(plan(), diagnosis, ctx) or (None, "")
    assert fixed is not None and fixed.prerelease and "development version" in what
    assert "--prerelease allow" in render_install(fixed)[-1]
    # Asked again, nothing relaxes the project's own name to a date.
    assert RuleRepairer().repair(fixed, diagnosis, ctx) is None


def test_a_requirement_that_needs_another_version_of_the_project_is_left_out(tmp_path: Path) -> None:
    out = ("error: No solution found when resolving dependencies\n  cause: Because only the following "
           "versions of astroid are available:\n astroid<2.11.6\n astroid>2.12.0.dev0\n and "
           "pylint==2.14.4 depends on astroid>=2.11.6,<=2.12.0.dev0, we can conclude that "
           "pylint==2.14.4 cannot be used.\n And because you require pylint==2.14.4, we can "
           "conclude that your requirements are unsatisfiable.")
    (tmp_path / "requirements_test.txt").write_text("-r requirements_lint.txt\npytest\ncoverage~=6.4\n")
    (tmp_path / "requirements_lint.txt").write_text("pylint==2.14.4\nblack==22.6.0\n")
    ctx = context()
    ctx.project_name, ctx.repo_root = "astroid", str(tmp_path)
    diagnosis = diagnose_install(failed(out), ["astroid"])
    tried = plan(requirement_files=["requirements_test.txt"], prerelease=True)
    fixed, what = RuleRepairer().repair(tried, diagnosis, ctx) or (None, "")
    assert fixed is not None and "pylint" in what and fixed.requirement_files == []
    assert sorted(fixed.packages) == ["black==22.6.0", "coverage~=6.4", "pytest"]
    # Before pre-releases were tried, they come first (a dev version may be all it takes).
    first, what = RuleRepairer().repair(plan(requirement_files=["requirements_test.txt"]),
                                        diagnosis, ctx) or (None, "")
    assert first is not None and first.prerelease and first.requirement_files


def test_a_build_hook_that_downloads_from_an_unreachable_host_is_named() -> None:
    out = """Resolved 12 packages in 1.2s
   Building demo @ file:///work/repo
error: Failed to build `demo @ file:///work/repo`
  cause: The build backend returned an error
  cause: Call to `hatchling.build.build_editable` failed (exit status: 1)
         [stdout]
         Fetching assets: https://assets.example.invalid/theme/index.css
         [stderr]
         Failed to download https://assets.example.invalid/theme/index.css: <urlopen error [Errno -2] Name or service not known>
         OSError: Need the theme to proceed.
hint: Build failures usually indicate a problem with the package or the build environment"""
    diagnosis = diagnose_install(failed(out), [])
    assert diagnosis.kind == "build_needs_network", diagnosis
    assert "https://assets.example.invalid/theme/index.css" in diagnosis.reason


def test_configured_options_that_change_the_exit_status_are_cancelled_and_recorded() -> None:
    ctx = context(pytest_config_file="setup.cfg",
                  pytest_addopts="--cov=calc --cov-report=term --cov-fail-under=99 -x -q --doctest-modules")
    plan = RulePlanner().plan(ctx, choose_python(ctx, date(2023, 6, 1), PY), "2023-06-01T00:00:00Z")
    assert plan.test_args[-3:] == ["--no-cov", "--maxfail=0", "-v"]
    assert "pytest-cov" in plan.packages  # --cov still parses, so --no-cov does too
    assert plan.neutralised == [
        "--cov=calc --cov-report=term --cov-fail-under=99 (setup.cfg addopts): --no-cov",
        "-x (setup.cfg addopts): --maxfail=0", "-q (setup.cfg addopts): -v"]
    # later options win: the rendered command puts them after the configured addopts
    command = render(plan)[1][0]
    assert command.index("--no-cov") > command.index("pytest")
    quiet = context(pytest_addopts="--doctest-modules --maxfail=0")
    plan = RulePlanner().plan(quiet, choose_python(quiet, date(2023, 6, 1), PY), "2023-06-01T00:00:00Z")
    assert plan.neutralised == [] and "--no-cov" not in plan.test_args


def test_the_next_missing_library_counts_as_progress() -> None:
    """Collection errors for libglib, then for libgl1 after libglib was installed: the same
    tests fail, but the repair made progress; a Python switch with the same failures did not."""
    from benchsmith.core import Diagnosis, TestResult
    from benchsmith.harness.testrun import count_tests
    from benchsmith.setup.record import test_outcome

    counts = count_tests([TestResult(name="tests/test_pdf.py", status="ERROR"),
                          TestResult(name="tests/test_a.py::test_a", status="PASSED")])

    def missing(package: str) -> Diagnosis:
        return Diagnosis(category="installation", kind="system_packages",
                         reason=f"needs Debian packages: {package}", facts={"packages": [package]})

    assert test_outcome(counts, 0.5, missing("libglib2.0-0")) != test_outcome(counts, 0.5, missing("libgl1"))
    assert test_outcome(counts, 0.5, missing("libgl1")) == test_outcome(counts, 0.5, missing("libgl1"))
    vain = [Diagnosis(category="undecidable", kind="tests_failing", reason=f"on Python {v}",
                      facts={"python": [v]}) for v in ("3.11", "3.10")]
    assert test_outcome(counts, 0.5, vain[0]) == test_outcome(counts, 0.5, vain[1])


PIPX_LIKE = """\
============================= test session starts ==============================
rootdir: /tmp/benchsmith-h7waj8ja/repo
collected 360 items
ERROR tests/test_list.py::test_cli - Exception: Directory /tmp/benchsmith-h7waj8ja/repo/.tests/package_cache does not contain all package distribution files necessary to run the tests. Please run the following command to populate it: python3 scripts/fill_cache.py testdata/packages /tmp/benchsmith-h7waj8ja/repo/.tests/package_cache
ERROR tests/test_list.py::test_json - Exception: Directory /tmp/benchsmith-h7waj8ja/repo/.tests/package_cache does not contain all package distribution files necessary to run the tests. Please run the following command to populate it: python3 scripts/fill_cache.py testdata/packages /tmp/benchsmith-h7waj8ja/repo/.tests/package_cache
=================== 2 errors in 4.24s ===================
"""


def test_a_step_the_tests_ask_for_runs_after_the_install(tmp_path: Path) -> None:
    """The tests name a script of the repository to run first: it becomes a prepare step,
    with the checkout's path made relative and the cache directory it fills made first."""
    diagnosis = diagnose_tests(failed(PIPX_LIKE), ["calc"], "pytest")
    assert diagnosis.kind == "prepare_step"
    step = "python3 scripts/fill_cache.py testdata/packages .tests/package_cache"
    assert diagnosis.facts["commands"] == [step]
    (tmp_path / "scripts").mkdir()
    (tmp_path / "scripts" / "fill_cache.py").write_text("print('filled')\n")
    repaired = RuleRepairer().repair(plan(), diagnosis, context(repo_root=str(tmp_path)))
    assert repaired is not None
    fixed, description = repaired
    assert fixed.prepare == [f"mkdir -p .tests/package_cache && {step}"]
    assert render(fixed, apt=False)[0][-1] == fixed.prepare[0] and "the tests ask" in description
    # A program that is not a script of the repository is never run.
    elsewhere = diagnose_tests(failed("rootdir: /x/repo\nE   RuntimeError: please run: "
                                      "python3 /usr/local/bin/setup-everything.py --all\n"), [], "pytest")
    assert elsewhere.kind != "prepare_step"
    missing = diagnose_tests(failed("rootdir: /x/repo\nE   please run `./build.sh` first\n"), [], "pytest")
    assert missing.facts["commands"] == ["./build.sh"]
    assert RuleRepairer().repair(plan(), missing, context(repo_root=str(tmp_path))) is None


def test_a_program_the_tests_start_comes_from_the_distribution_the_project_names(tmp_path: Path) -> None:
    output = ("ERROR tests/test_install.py::test_a - FileNotFoundError: [Errno 2] No such file or "
              "directory: 'pypi-server'\n")
    diagnosis = diagnose_tests(failed(output), ["calc"], "pytest")
    assert diagnosis.kind == "missing_programs" and diagnosis.facts["programs"] == ["pypi-server"]
    assert RuleRepairer().repair(plan(), diagnosis, context(repo_root=str(tmp_path))) is None
    (tmp_path / "noxfile.py").write_text('@nox.session\ndef tests(session):\n'
                                         '    session.run("pypiserver", "--help")\n')
    assert RuleRepairer().repair(plan(), diagnosis, context(repo_root=str(tmp_path))) is None
    (tmp_path / "noxfile.py").write_text('@nox.session\ndef tests(session):\n'
                                         '    session.install("pypiserver")\n')
    repaired = RuleRepairer().repair(plan(), diagnosis, context(repo_root=str(tmp_path)))
    assert repaired is not None and repaired[0].packages == ["pypiserver"]
    assert RuleRepairer().repair(repaired[0], diagnosis, context(repo_root=str(tmp_path))) is None


def test_a_setup_step_that_runs_pip_without_pip_installs_pip(tmp_path: Path) -> None:
    import subprocess
    import sys

    # A step after the install runs `pip download` where no pip is on the PATH (an environment
    # made by uv), as a real process reports it.
    step = subprocess.run([sys.executable, "-c", "import subprocess; subprocess.run(['pip', 'download', 'x'])"],
                          env={"PATH": str(tmp_path)}, capture_output=True, text=True)
    diagnosis = diagnose_install(failed(step.stdout + step.stderr, step.returncode), ["calc"])
    assert diagnosis.kind == "missing_programs" and diagnosis.facts["programs"] == ["pip"]
    repaired = RuleRepairer().repair(plan(), diagnosis, context(repo_root=str(tmp_path)))
    assert repaired is not None and repaired[0].packages == ["pip"]
    assert RuleRepairer().repair(repaired[0], diagnosis, context(repo_root=str(tmp_path))) is None


def test_a_stall_after_the_limit_of_hung_tests_names_the_last_one() -> None:
    output = "tests/test_a.py::test_ok PASSED [ 50%]\ntests/test_a.py::test_wait "
    stalled = ExecResult(command="x", returncode=-9, output=output, stalled=True)
    diagnosis = diagnose_tests(stalled, ["calc"], "pytest")
    assert diagnosis.kind == "stalled" and "tests/test_a.py::test_wait" in diagnosis.reason
    collecting = ExecResult(command="x", returncode=-9, output="collecting ... ", stalled=True)
    assert "before any test could be named" in diagnose_tests(collecting, [], "pytest").reason


def test_a_tox_posargs_default_with_substitutions_inside_loses_no_option() -> None:
    from benchsmith.setup.sources.tox import tox_command

    line = ("pytest {posargs: --junitxml {toxworkdir}{/}junit.{envname}.xml "
            "-n={env:WORKERS:auto} tests --durations 5 --run-slow}")
    command = tox_command(line)
    assert command.endswith("tests --durations 5 --run-slow") and "posargs" not in command


INTERNAL_ERROR_IN_A_PLUGIN = """\
INTERNALERROR> Traceback (most recent call last):
INTERNALERROR>   File "/v/lib/python3.7/site-packages/_pytest/main.py", line 103, in wrap_session
INTERNALERROR>     config._do_configure()
INTERNALERROR>   File "/v/lib/python3.7/site-packages/pluggy/callers.py", line 180, in _multicall
INTERNALERROR>     res = hook_impl.function(*args)
INTERNALERROR>   File "/v/lib/python3.7/site-packages/pytestqt/plugin.py", line 218, in pytest_configure
INTERNALERROR>     qt_api.set_qt_api(config.getini("qt_api"))
INTERNALERROR>   File "/v/lib/python3.7/site-packages/pytestqt/qt_compat.py", line 83, in set_qt_api
INTERNALERROR> RuntimeError: pytest-qt requires either PySide, PySide2, PyQt4 or PyQt5 to be installed
"""


def test_a_plugin_that_crashes_pytest_is_left_out_before_another_python_is_tried() -> None:
    crashed = diagnose_tests(failed(INTERNAL_ERROR_IN_A_PLUGIN, returncode=3), ["astropy"], "pytest")
    assert crashed.kind == "pytest_internal_error" and crashed.facts == {"plugin_modules": ["pytestqt"]}
    old = Plan(python="3.7", exclude_newer="2018-10-01T00:00:00Z",
               packages=["pytest-astropy", "pytest-qt>=2", "pytest-doctestplus"])
    fixed, what = RuleRepairer().repair(old, crashed, context()) or (None, "")
    assert fixed is not None and fixed.packages == ["pytest-astropy", "pytest-doctestplus"], what
    assert fixed.python == "3.7" and "pytest-qt>=2" in what
    # pytest itself crashing (no plugin among the frames): another Python, as before
    itself = diagnose_tests(failed(INTERNAL_ERROR_IN_A_PLUGIN.split("INTERNALERROR>   File \"/v/lib/python3.7"
                                                                    "/site-packages/pytestqt")[0], 3),
                            ["astropy"], "pytest")
    assert itself.facts == {}
