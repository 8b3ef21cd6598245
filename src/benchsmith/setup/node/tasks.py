"""What the commands of a test script are, beyond a runner: checks (linters, type checks) that
the test command leaves out, scripts that run the tests in Node when `test` runs a browser, and
node starting a tape test file."""

from __future__ import annotations

import posixpath
import re
from collections.abc import Sequence

from benchsmith.core.node import NodeRunnerName
from benchsmith.harness.node_render import positionals
from benchsmith.setup.node.scripts import Invocation

# Commands of a test script that check rather than build or test: left out of the test command.
CHECKS = frozenset({"eslint", "prettier", "tslint", "standard", "semistandard", "xo", "jshint",
                    "jscs", "stylelint", "markdownlint", "lint-staged", "echo", "rimraf", "del",
                    "del-cli", "tsd", "attw", "publint", "depcheck", "license-checker", "exit",
                    "true", "husky", "simple-git-hooks", "lefthook", "is-ci", "npm-check",
                    "codecov", "coveralls", "nyc", "c8", "check-dts", "size-limit", "cspell",
                    "dtslint", "eclint", "editorconfig-checker", "yaspeller", "api-extractor",
                    "rm", "mkdir", "cat", "clean-publish", "aud", "sort-package-json", "evalmd"})
# Type checkers: a check when they emit nothing.
_TYPE_CHECKERS = frozenset({"tsc", "vue-tsc", "tsc-silent", "glint"})
# Scripts that run the tests in Node when `test` runs them in a browser, those naming Node first.
_NODE_SCRIPT = re.compile(r"(?:^|[:_-])node(?:$|[:_-])")
_UNIT_SCRIPT = re.compile(r"^(?:test[:_-])?(?:unit|units|spec|mocha|jest|vitest|ava|tape)$")
_TEST_PATH = re.compile(r"(?:^|/)(?:tests?|specs?|__tests__)(?:/|\.[cm]?js$|$)|test\.[cm]?js$")


def is_check(invocation: Invocation) -> bool:
    """Whether `invocation` checks (lint, types, formatting, coverage upload) rather than tests."""
    name = posixpath.basename(invocation.command)
    if name in CHECKS or name == "flow":
        return True
    if name == "prettier" or (name == "npx" and invocation.args[:1] == ["prettier"]):
        return True
    return name in _TYPE_CHECKERS and any(arg in {"--noEmit", "-noEmit", "--noEmit=true"}
                                          for arg in invocation.args)


def node_side_scripts(scripts: dict[str, object]) -> list[str]:
    """Scripts that may run the tests in Node (`test:node`, `node-test`, `test:unit`), best first."""
    named = [name for name in scripts if name != "test" and _NODE_SCRIPT.search(name)
             and "browser" not in name]
    unit = [name for name in scripts if _UNIT_SCRIPT.match(name) and name not in named]
    return named + unit


def tape_started_by_node(invocation: Invocation, dependencies: set[str], files: Sequence[str]
                         ) -> tuple[NodeRunnerName, list[str], list[str]] | None:
    """("tape", its command, its test paths) when node runs a test file or directory of a
    package that tests with tape (`node test`, `node test/index.js`)."""
    if posixpath.basename(invocation.command) != "node" or "tape" not in dependencies:
        return None
    if any(arg in {"-e", "--eval", "-p", "--print", "--test"} for arg in invocation.args):
        return None
    targets = positionals("node", invocation.args)
    if not targets:
        return None
    target = targets[0].removeprefix("./").rstrip("/")
    if not _TEST_PATH.search(target):
        return None
    if target in files or f"{target}.js" in files:
        return "tape", ["tape"], [target if target in files else f"{target}.js"]
    if f"{target}/index.js" in files:  # node runs a directory's index.js, which requires the rest
        return "tape", ["tape"], [f"{target}/index.js"]
    if any(path.startswith(target + "/") for path in files):
        return "tape", ["tape"], [f"{target}/**/*.js"]
    return None
