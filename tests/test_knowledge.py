"""The repair engine's knowledge tables: lookups, and the tables' own consistency."""

from __future__ import annotations

import re

import pytest
from _pytest.config import get_config
from packaging.utils import canonicalize_name

from benchsmith.setup import knowledge
from benchsmith.setup.knowledge import (
    distribution_for_import,
    plugin_for_module,
    plugin_for_option,
    python_from_tox_env,
    stdlib_removal,
)

# PEP 508 / core metadata rule for a project name.
_VALID_NAME = re.compile(r"^([A-Z0-9]|[A-Z0-9][A-Z0-9._-]*[A-Z0-9])$", re.IGNORECASE)

_DISTRIBUTION_TABLES = {
    "IMPORT_TO_DISTRIBUTION": knowledge.IMPORT_TO_DISTRIBUTION,
    "PYTEST_OPTION_PLUGINS": knowledge.PYTEST_OPTION_PLUGINS,
    "PYTEST_PLUGIN_MODULES": knowledge.PYTEST_PLUGIN_MODULES,
    "PYTEST_INI_KEY_PLUGINS": knowledge.PYTEST_INI_KEY_PLUGINS,
    "PYTEST_FIXTURE_PLUGINS": knowledge.PYTEST_FIXTURE_PLUGINS,
    "PYTEST_MARKER_PLUGINS": knowledge.PYTEST_MARKER_PLUGINS,
}


def _all_distribution_names() -> list[tuple[str, str]]:
    names = [
        (table, value)
        for table, mapping in _DISTRIBUTION_TABLES.items()
        for value in mapping.values()
        if not value.startswith("-p ")
    ]
    names += [("BUILD_TOOLS", name) for name in knowledge.BUILD_TOOLS]
    names += [("PEP660_DATES", name) for name in knowledge.PEP660_DATES]
    names += [("STDLIB_REMOVED", repl) for _, repl in knowledge.STDLIB_REMOVED.values() if repl]
    names.append(("ASYNC_TEST_PLUGIN", knowledge.ASYNC_TEST_PLUGIN))
    return names


@pytest.mark.parametrize(
    ("module", "expected"),
    [
        ("yaml", "PyYAML"),
        ("attr", "attrs"),
        ("PIL.Image", "Pillow"),
        ("cv2", "opencv-python"),
        ("sklearn.linear_model", "scikit-learn"),
        ("google.protobuf.message", "protobuf"),
        ("google.cloud.storage.blob", "google-cloud-storage"),
        ("google.oauth2.credentials", "google-auth"),
        ("ruamel.yaml", "ruamel.yaml"),
        ("ruamel.yaml.comments", "ruamel.yaml"),
        ("zope.interface.verify", "zope.interface"),
        ("_pytest.monkeypatch", "pytest"),
        ("pkg_resources", "setuptools"),
        ("xdist.plugin", "pytest-xdist"),
        ("MySQLdb.cursors", "mysqlclient"),
        ("win32api", "pywin32"),
        # Not in the table: top-level name with "_" -> "-".
        ("numpy.linalg", "numpy"),
        ("pytest_cool_plugin.core", "pytest-cool-plugin"),
        ("  lxml.etree  ", "lxml"),
    ],
)
def test_distribution_for_import(module: str, expected: str) -> None:
    assert distribution_for_import(module) == expected


@pytest.mark.parametrize("module", ["", ".relative", "   "])
def test_distribution_for_import_rejects_non_absolute_names(module: str) -> None:
    with pytest.raises(ValueError):
        distribution_for_import(module)


def test_import_table_is_large_enough() -> None:
    assert len(knowledge.IMPORT_TO_DISTRIBUTION) >= 200


@pytest.mark.parametrize(
    ("module", "expected"),
    [
        ("distutils", ("3.12", "setuptools")),
        ("distutils.core", ("3.12", "setuptools")),
        ("imp", ("3.12", "")),
        ("cgi", ("3.13", "legacy-cgi")),
        ("tkinter.tix", ("3.13", "")),
        ("tkinter", None),
        ("os.path", None),
    ],
)
def test_stdlib_removal(module: str, expected: tuple[str, str] | None) -> None:
    assert stdlib_removal(module) == expected


@pytest.mark.parametrize(
    ("option", "expected"),
    [
        ("-n", "pytest-xdist"),
        ("-n4", "pytest-xdist"),
        ("-nauto", "pytest-xdist"),
        ("-n=auto", "pytest-xdist"),
        ("-n auto", "pytest-xdist"),
        ("--numprocesses=4", "pytest-xdist"),
        ("--cov", "pytest-cov"),
        ("--cov=src", "pytest-cov"),
        ("--cov-report=term-missing", "pytest-cov"),
        ("--cov-fail-under=90", "pytest-cov"),
        ("--no-cov", "pytest-cov"),
        ("--benchmark-disable", "pytest-benchmark"),
        ("--benchmark-skip", "pytest-benchmark"),
        ("--timeout=30", "pytest-timeout"),
        ("--timeout_method=thread", "pytest-timeout"),
        ("--hypothesis-show-statistics", "hypothesis"),
        ("--randomly-seed=1", "pytest-randomly"),
        ("--mypy-ignore-missing-imports", "pytest-mypy"),
        ("--ds=settings", "pytest-django"),
        ("--record-mode=none", "pytest-recording"),
        ("--vcr-record=none", "pytest-vcr"),
        ("--doctest-rst", "pytest-doctestplus"),
        ("  --reruns 3 ", "pytest-rerunfailures"),
    ],
)
def test_plugin_for_option(option: str, expected: str) -> None:
    assert plugin_for_option(option) == expected


@pytest.mark.parametrize(
    "option",
    ["--tb=short", "--strict", "-x", "-ra", "-p", "--doctest-modules", "--co", "--durations=5",
     "--benchmark", "--run-slow", "", "   "],
)
def test_plugin_for_option_returns_none_for_builtin_or_unknown(option: str) -> None:
    assert plugin_for_option(option) is None


def test_no_builtin_pytest_option_maps_to_a_plugin() -> None:
    parser = get_config()._parser
    builtin = {name for group in [parser._anonymous, *parser._groups] for opt in group.options
               for name in opt.names()}
    assert len(builtin) > 50  # sanity: the private API still answers
    assert {opt for opt in builtin if plugin_for_option(opt) is not None} == set()


def test_no_builtin_ini_key_maps_to_a_plugin() -> None:
    registered = set(get_config()._parser._inidict)
    assert "markers" in registered  # sanity: the private API still answers
    # Registered later than get_config(), while the ini file is read.
    late = {"addopts", "minversion", "required_plugins", "pythonpath", "xfail_strict"}
    assert (registered | late) & set(knowledge.PYTEST_INI_KEY_PLUGINS) == set()


@pytest.mark.parametrize("fixture", ["tmp_path", "tmpdir", "monkeypatch", "capsys", "caplog",
                                     "recwarn", "request", "doctest_namespace", "cache"])
def test_builtin_fixtures_are_not_listed(fixture: str) -> None:
    assert fixture not in knowledge.PYTEST_FIXTURE_PLUGINS


def test_pytester_is_enabled_not_installed() -> None:
    assert knowledge.PYTEST_FIXTURE_PLUGINS["pytester"] == "-p pytester"
    assert knowledge.PYTEST_FIXTURE_PLUGINS["testdir"] == "-p pytester"


def test_freezegun_choice_is_consistent() -> None:
    assert (knowledge.PYTEST_FIXTURE_PLUGINS["freezer"]
            == knowledge.PYTEST_MARKER_PLUGINS["freeze_time"])


@pytest.mark.parametrize(
    ("name", "expected"),
    [
        ("xdist", "pytest-xdist"),
        ("randomly", "pytest-randomly"),
        ("pytest_cov", "pytest-cov"),
        ("pytest_httpbin", "pytest-httpbin"),
        ("pytestqt.plugin", "pytest-qt"),
    ],
)
def test_plugin_for_module(name: str, expected: str) -> None:
    assert plugin_for_module(name) == expected


@pytest.mark.parametrize(
    ("env", "expected"),
    [
        ("py38", "3.8"),
        ("py27", "2.7"),
        ("py310", "3.10"),
        ("py3.10", "3.10"),
        ("python3.9", "3.9"),
        ("py310-django32", "3.10"),
        ("django32-py311", "3.11"),
        ("py3", None),
        ("py2", None),
        ("py", None),
        ("pypy3", None),
        ("pypy38", None),
        ("lint", None),
        ("docs-py", None),
    ],
)
def test_python_from_tox_env(env: str, expected: str | None) -> None:
    assert python_from_tox_env(env) == expected


@pytest.mark.parametrize("table", sorted(_DISTRIBUTION_TABLES))
def test_no_table_has_empty_keys_or_values(table: str) -> None:
    mapping = _DISTRIBUTION_TABLES[table]
    assert mapping
    assert all(key.strip() == key and key for key in mapping)
    assert all(value.strip() == value and value for value in mapping.values())


def test_stdlib_removed_entries_are_well_formed() -> None:
    # The replacement may be "" (none exists); the version never is.
    for module, (version, _) in knowledge.STDLIB_REMOVED.items():
        assert module
        assert re.fullmatch(r"3\.\d+", version), module


def test_pep660_dates_are_iso_dates_for_build_tools() -> None:
    for backend, date in knowledge.PEP660_DATES.items():
        assert backend in knowledge.BUILD_TOOLS
        assert re.fullmatch(r"\d{4}-\d{2}-\d{2}", date)


@pytest.mark.parametrize(("table", "name"), _all_distribution_names())
def test_distribution_names_are_valid_pep508_names(table: str, name: str) -> None:
    assert _VALID_NAME.match(name), f"{table}: {name!r}"
    assert canonicalize_name(name)


def test_only_special_values_start_with_dash() -> None:
    for table, mapping in _DISTRIBUTION_TABLES.items():
        for key, value in mapping.items():
            if value.startswith("-"):
                assert table == "PYTEST_FIXTURE_PLUGINS" and value == "-p pytester", key


def test_build_tools_have_no_duplicates() -> None:
    canonical = [canonicalize_name(name) for name in knowledge.BUILD_TOOLS]
    assert len(canonical) == len(set(canonical))
