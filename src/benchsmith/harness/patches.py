"""Split a pull request's diff into the code patch and the test patch."""

from __future__ import annotations

import re
import sys
from pathlib import PurePosixPath
from typing import Literal

from benchsmith.core import EcosystemName, RunnerKind
from benchsmith.harness.languages import PYTHON_RULES, file_rules
from benchsmith.instance import Language

if sys.version_info >= (3, 11):
    import tomllib
else:
    import tomli as tomllib

# The guard (benchsmith_guard.py) keeps these in step: it trusts what evaluate resets.
_TEST_DIRS = PYTHON_RULES.test_dirs
_TEST_FILE = PYTHON_RULES.test_file
_DIFF_HEADER = re.compile(r"^diff --git a/(.*?) b/(.*)$")
# Files that are test settings as a whole: pytest's own configuration files, and what the
# interpreter runs at start-up (sitecustomize, usercustomize, .pth files).
_SETTINGS_FILES = {"pytest.ini", ".pytest.ini", "pytest.toml", ".pytest.toml",
                   "sitecustomize.py", "usercustomize.py"}
# Files whose pytest section is a test setting (the rest of them is not).
SECTIONED_SETTINGS = ("setup.cfg", "tox.ini", "pyproject.toml")
_PLAIN_HEADER = re.compile(r"^(?:---|\+\+\+) (?:[ab]/)?(?P<path>[^\t\n]+?)(?:\t.*)?$")
_INI_SECTION = re.compile(r"^\[(?P<name>[^\]]*)\]")


def is_test_path(path: str, language: Language | EcosystemName = "python") -> bool:
    """True for test code and test data of `language`'s ecosystem: files under a test
    directory, test modules by their names (test_*.py, conftest.py; *.test.js, *.spec.ts...).

    Only whole path components count, so a source package named ``pytest_plugins`` or
    ``testfixtures`` is not a test directory.
    """
    return file_rules(language).is_test(path)


def is_test_setting(path: str) -> bool:
    """True for a file `evaluate` puts back before grading, whatever the prediction did to it:
    a test file (:func:`is_test_path`; a test directory itself, should a patch replace it with
    a link), pytest's configuration files, sitecustomize/usercustomize and ``.pth`` files.
    setup.cfg, tox.ini and pyproject.toml count when their pytest section changed
    (:func:`pytest_settings`)."""
    parts = PurePosixPath(path).parts
    if not parts:
        return False
    name = parts[-1]
    return (is_test_path(path) or name.lower() in _TEST_DIRS or name in _SETTINGS_FILES
            or name.endswith(".pth"))


def pytest_settings(path: str, text: str | None) -> object:
    """What of the file `path` (setup.cfg, tox.ini, pyproject.toml) with contents `text`
    configures pytest, in a form to compare: the lines of every INI section whose name mentions
    pytest, pyproject's ``[tool.pytest...]`` tables; the whole text when it does not parse."""
    if text is None:
        return None
    if path.rsplit("/", 1)[-1] == "pyproject.toml":
        try:
            return tomllib.loads(text).get("tool", {}).get("pytest")
        except (tomllib.TOMLDecodeError, AttributeError):
            return text
    sections: list[str] = []
    inside = False
    for line in text.splitlines():
        header = _INI_SECTION.match(line)
        if header:
            inside = "pytest" in header["name"].lower()
        if inside:
            sections.append(line.rstrip())
    return sections


def patch_paths(diff: str) -> list[str]:
    """Every path a diff names, in ``diff --git`` headers (old and new names) or in plain
    ``---``/``+++`` headers, as `patch -p1` would write them (more than it touches, never less)."""
    paths: dict[str, None] = {}
    for line in diff.splitlines():
        match = _DIFF_HEADER.match(line)
        if match:
            paths.update(dict.fromkeys(match.groups()))
            continue
        plain = _PLAIN_HEADER.match(line)
        if plain and plain["path"] != "/dev/null":
            paths[plain["path"].strip()] = None
    return list(paths)


def file_diffs(diff: str) -> list[tuple[str, str]]:
    """(path, text) for each file section of a ``git diff`` (the new path for renames)."""
    sections: list[tuple[str, str]] = []
    current: list[str] = []
    path = ""
    for line in diff.splitlines(keepends=True):
        match = _DIFF_HEADER.match(line.rstrip("\n"))
        if match:
            if current:
                sections.append((path, "".join(current)))
            current, path = [line], match.group(2)
        elif current:
            current.append(line)
    if current:
        sections.append((path, "".join(current)))
    return sections


def split_patch(diff: str, language: Language | EcosystemName = "python") -> tuple[str, str]:
    """(patch, test_patch): the diff's non-test file sections and its test file sections, by
    `language`'s rules."""
    code: list[str] = []
    tests: list[str] = []
    for path, text in file_diffs(diff):
        (tests if is_test_path(path, language) else code).append(text)
    return "".join(code), "".join(tests)


def touched_files(diff: str) -> list[str]:
    """Paths a diff changes."""
    return [path for path, _ in file_diffs(diff)]


def runnable_test_files(test_patch: str,
                        language: Language | EcosystemName | RunnerKind = "python") -> list[str]:
    """Test modules the test patch adds or changes (not deleted ones, not data, not helpers
    such as conftest.py, fixtures or mocks), by `language`'s rules."""
    rules = file_rules(language)
    return [path for path in touched_files(test_patch) if rules.is_runnable_test(path)]


# Why a pull request's diff cannot become a task (both miners say it in these words).
PatchProblem = Literal[
    "no test change",
    "only test changes",
    "the test changes touch no test module (only test data, fixtures or helpers)",
    "the code changes touch no source file (only documentation, data or configuration)",
]


def task_patches(diff: str, language: Language | EcosystemName = "python"
                 ) -> tuple[str, str] | PatchProblem:
    """(patch, test_patch) of a pull request's diff that can become a task, or why it cannot:
    by `language`'s rules, it must change a source file and at least one test module (test
    data alone runs nothing)."""
    patch, test_patch = split_patch(diff, language)
    if not test_patch:
        return "no test change"
    if not patch:
        return "only test changes"
    if not runnable_test_files(test_patch, language):
        return "the test changes touch no test module (only test data, fixtures or helpers)"
    if not any(file_rules(language).is_source(path) for path in touched_files(patch)):
        return "the code changes touch no source file (only documentation, data or configuration)"
    return patch, test_patch
