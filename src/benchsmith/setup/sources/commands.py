"""Split shell text into command lines and classify each as an install or a test step."""

from __future__ import annotations

import re
import shlex
from typing import Literal

CommandKind = Literal["install", "test"]

_ASSIGNMENT = re.compile(r"^[A-Za-z_][A-Za-z0-9_]*=")
_WRAPPERS = {
    "sudo",
    "time",
    "env",
    "exec",
    "command",
    "travis_retry",
    "travis_wait",
    "xvfb-run",
    "nice",
}
_RUNNERS = {"poetry", "pipenv", "uv", "pdm", "rye"}  # "<tool> run <cmd>"
_INTERPRETER = re.compile(r"(?i)(^|[/:])(python[\d.]*w?|py|\$\{?python\}?|%python%)(\.exe)?$")
_SHELL_SPECIAL = re.compile(r"[\s<>|&;()$`'\"\\*?!]")
_APT_PACKAGE = re.compile(r"^[a-z0-9][a-z0-9+.\-]*$")
_TEST_MAKE_TARGETS = {"test", "tests", "check", "test-all", "unittest", "unittests", "pytest", "ci"}
_INSTALL_SUBCOMMANDS = {
    "pip": {"install"},
    "uv": {"install", "sync", "add"},
    "poetry": {"install", "add"},
    "pipenv": {"install", "sync"},
    "conda": {"install", "create", "env"},
    "mamba": {"install", "create", "env"},
    "micromamba": {"install", "create", "env"},
    "apt-get": {"install"},
    "apt": {"install"},
    "yum": {"install"},
    "dnf": {"install"},
    "apk": {"add"},
    "brew": {"install"},
    "flit": {"install"},
    "pdm": {"install", "sync", "add"},
    "setup.py": {"install", "develop", "build_ext"},
}
_TEST_PROGRAMS = {
    "pytest",
    "py.test",
    "unittest",
    "nose",
    "nosetests",
    "nose2",
    "tox",
    "nox",
    "trial",
    "twisted.trial",
    "green",
    "zope-testrunner",
    "zope.testrunner",
}
# tox/nox environments that lint, type-check, document or release rather than test.
_NON_TEST_ENV = re.compile(
    r"(docs?|lint\w*|flake8|mypy|pre-?commit|style|format|fmt|typing|types?|typecheck|black|isort"
    r"|pylint|ruff|release|build|publish|upload|clean|bandit|safety|pep8|checkqa|qa|quality|spelling"
    r"|(check-)?manifest|readme|packaging|dist|twine\w*|docstyle|pydocstyle|changelog|bumpversion)"
)


# Envs that test the oldest supported dependencies: their pins are one alternative, never the
# plain test run's (a union with the default env's would pin the whole install to them).
_MIN_VERSIONS_ENV = re.compile(r"(pinned|min|minimum|mindeps|min-?(deps|versions?|reqs?)|oldest(-?deps)?"
                               r"|lowest(-?direct)?|lower-?bounds?)")


def is_min_versions_env(name: str) -> bool:
    """Whether a tox env / nox session name (or a factor of it) installs minimum versions."""
    parts = [name.lower(), *name.lower().split("-")]
    return any(_MIN_VERSIONS_ENV.fullmatch(part.strip()) for part in parts)


# CI jobs that document, lint, benchmark or release, or test other projects or the development
# branches of dependencies (a job called "build" often runs the project's own tests).
_NON_TEST_JOB = re.compile(r"(docs?|documentation|sphinx|lint\w*|flake8|mypy|pre-?commit|style|typing|types?"
                           r"|typecheck|ruff|spelling|bench\w*|release|publish|deploy|upload|pypi"
                           r"|downstream|upstream|nightly|dependencies|deps)")


def is_non_test_job(name: str) -> bool:
    """Whether a CI job's id or name (or one of its words) says it does not run the tests."""
    return any(_NON_TEST_JOB.fullmatch(part) for part in re.split(r"[-_\s/:()]+", name.lower()) if part)


def is_non_test_env(name: str) -> bool:
    """Whether a tox env / nox session name (or one of its factors) is a lint/docs/release one."""
    parts = [name.lower(), *name.lower().split("-")]
    return any(_NON_TEST_ENV.fullmatch(part.strip()) for part in parts)


def _selected_envs(tokens: list[str]) -> list[str]:
    envs: list[str] = []
    for index, token in enumerate(tokens):
        if token in ("-e", "--env", "-s", "--session", "--sessions") and index + 1 < len(tokens):
            envs += tokens[index + 1].split(",")
        elif token.startswith(("-e=", "--env=", "-s=", "--session=")):
            envs += token.split("=", 1)[1].split(",")
    return [env for env in envs if env]


def shell_lines(text: str) -> list[str]:
    """Lines of a shell script: backslash continuations joined, comments and blanks dropped."""
    lines: list[str] = []
    pending = ""
    for raw in text.splitlines():
        line = f"{pending} {raw.strip()}".strip() if pending else raw.strip()
        if line.endswith("\\"):
            pending = line[:-1].rstrip()
            continue
        if line.endswith(("&&", "||", "|")) and not line.startswith("#"):
            pending = line
            continue
        pending = ""
        line = _without_comment(line)
        if line:
            lines.append(line)
    if pending:
        lines.append(_without_comment(pending))
    return [line for line in lines if line]


def _without_comment(line: str) -> str:
    """The line without a trailing ``# comment`` (outside quotes); stray `` \\ `` joined."""
    quote = ""
    for index, char in enumerate(line):
        if quote:
            quote = "" if char == quote else quote
        elif char in "'\"":
            quote = char
        elif char == "#" and (index == 0 or line[index - 1].isspace()):
            line = line[:index]
            break
    return re.sub(r"\s\\\s+", " ", line).strip()


def split_segments(line: str) -> list[str]:
    """Split a shell line on ``&&`` and ``;`` outside quotes."""
    segments: list[str] = []
    current: list[str] = []
    quote, i = "", 0
    while i < len(line):
        char = line[i]
        if quote:
            quote = "" if char == quote else quote
        elif char in "'\"":
            quote = char
        elif line.startswith("&&", i) or char == ";":
            segments.append("".join(current).strip())
            current, i = [], i + (2 if char == "&" else 1)
            continue
        current.append(char)
        i += 1
    segments.append("".join(current).strip())
    return [s for s in segments if s]


def _tokens(segment: str) -> list[str]:
    text = segment.replace("\\", "/")
    try:
        tokens = shlex.split(text, comments=True)
    except ValueError:
        tokens = text.split()
    while tokens and (
        tokens[0] in _WRAPPERS or _ASSIGNMENT.match(tokens[0]) or tokens[0].startswith("-")
    ):
        tokens = tokens[1:]
    if len(tokens) > 2 and tokens[0] in _RUNNERS and tokens[1] == "run":
        tokens = tokens[2:]
    if tokens and _INTERPRETER.search(tokens[0]):
        return _after_interpreter(tokens[1:])
    if tokens:
        tokens[0] = tokens[0].rsplit("/", 1)[-1]
    return tokens


def _after_interpreter(args: list[str]) -> list[str]:
    skip = False
    for index, arg in enumerate(args):
        if skip:  # the value of -W / -X
            skip = False
            continue
        if arg in ("-W", "-X"):
            skip = True
            continue
        if arg == "-m" and index + 1 < len(args):
            return args[index + 1 :]
        if arg.startswith("-m") and len(arg) > 2:
            return [arg[2:], *args[index + 1 :]]
        if arg in ("-c", "-"):
            return []
        if not arg.startswith("-"):
            return [arg.rsplit("/", 1)[-1], *args[index + 1 :]]
    return []


def classify(segment: str) -> CommandKind | None:
    """ "install", "test" or None for one simple command."""
    tokens = _tokens(segment)
    if not tokens:
        return None
    program = re.sub(r"^(pip)[\d.]*$", r"\1", tokens[0])
    args = [t for t in tokens[1:] if not t.startswith("-")]
    if program in _INSTALL_SUBCOMMANDS:
        if program == "setup.py" and args[:1] in (["test"], ["pytest"], ["nosetests"]):
            return "test"
        if program == "uv" and args[:1] == ["pip"]:
            args = args[1:]
        return "install" if args[:1] and args[0] in _INSTALL_SUBCOMMANDS[program] else None
    if program in ("easy_install", "pip-sync"):
        return "install"
    if program in ("tox", "nox"):
        envs = _selected_envs(tokens[1:])
        return None if envs and all(is_non_test_env(env) for env in envs) else "test"
    if program in _TEST_PROGRAMS or program.startswith(
        ("pytest", "runtests", "run_tests", "run-tests")
    ):
        return "test"
    if program == "coverage":
        return "test" if args[:1] == ["run"] else None
    if program in ("make", "gmake"):
        return "test" if any(a in _TEST_MAKE_TARGETS for a in args) else None
    if program in ("manage.py", "django-admin", "django"):
        return "test" if args[:1] == ["test"] else None
    if program == "hatch":
        script = args[1] if args[:1] == ["run"] and len(args) > 1 else ""
        return "test" if args[:1] == ["test"] or "test" in script else None
    return None


# Environment variables that name the settings a project's tests run with.
SETTINGS_KEYS = ("DJANGO_SETTINGS_MODULE", "DJANGO_CONFIGURATION")


def settings_assignments(assignments: dict[str, str]) -> list[str]:
    """The ``KEY=value`` settings hints among an environment's assignments."""
    return [f"{key}={value}" for key, value in assignments.items()
            if key in SETTINGS_KEYS and re.fullmatch(r"[\w.]+", value)]


def env_assignments(segment: str) -> dict[str, str]:
    """The ``KEY=value`` words a shell command starts with (its environment prefix)."""
    try:
        words = shlex.split(segment.replace("\\", " "), comments=True)
    except ValueError:
        words = segment.split()
    found: dict[str, str] = {}
    for word in words:
        if word in _WRAPPERS:
            continue
        if not _ASSIGNMENT.match(word):
            break
        key, _, value = word.partition("=")
        found[key] = value
    return found


def classify_line(line: str) -> list[tuple[CommandKind, str]]:
    """(kind, command) pairs for one shell line.

    A line whose parts agree ("pip install -U pip && pip install .") stays whole; a
    mixed one ("pip install . && pytest") is split, keeping leading ``cd`` steps.
    """
    segments = split_segments(line)
    kinds = [classify(segment) for segment in segments]
    present = {kind for kind in kinds if kind}
    if len(present) == 1:
        return [(present.pop(), line)]
    found: list[tuple[CommandKind, str]] = []
    prefix: list[str] = []
    for segment, kind in zip(segments, kinds, strict=True):
        if segment.startswith(("cd ", "pushd ")):
            prefix.append(segment)
        elif kind:
            found.append((kind, " && ".join([*prefix, segment])))
    return found


def apt_packages(line: str) -> list[str]:
    """Package names of ``apt-get install`` / ``apt install`` commands in a line."""
    packages = []
    for segment in split_segments(line):
        tokens = _tokens(segment)
        if tokens[:1] not in (["apt-get"], ["apt"]) or "install" not in tokens:
            continue
        for token in tokens[tokens.index("install") + 1 :]:
            if token[:1] in "|<>&":
                break
            name = token.split("=", 1)[0]
            if not token.startswith("-") and _APT_PACKAGE.match(name):
                packages.append(name)
    return packages


def join_args(args: list[str]) -> str:
    """Argument list as one shell line, quoting only arguments the shell would split or
    interpret (so ``.[test]`` stays as written, ``x>=1`` is quoted)."""
    return " ".join(
        shlex.quote(arg) if _SHELL_SPECIAL.search(arg) or not arg else arg for arg in args
    )
