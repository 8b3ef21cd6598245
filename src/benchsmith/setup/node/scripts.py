"""Read package.json scripts as the commands they run: `&&` chains, `npm run x` (with its
`pre` script, npm's and yarn's own options), npm-run-all, `make x` (its recipe), and wrappers
(cross-env, nyc, c8, `istanbul cover`, `node node_modules/x/bin/x`) taken apart."""

from __future__ import annotations

import re
import shlex
from dataclasses import dataclass, field
from typing import Any

from benchsmith.harness.node_render import positionals
from benchsmith.setup.node.makefiles import recipe

# Commands that only start the command after them (their own options are skipped).
WRAPPERS = frozenset({"cross-env", "cross-env-shell", "env", "nyc", "c8", "npx", "dotenv",
                      "env-cmd", "nodemon", "time", "nice", "with-package-json-scripts",
                      "istanbul", "nyc-report"})
# Subcommands of a wrapper that come before the command it starts.
_WRAPPER_SUBCOMMANDS = frozenset({"cover", "test"})
# Coverage tools whose arguments are the test files node runs (`covert test/*.js`).
_NODE_WRAPPERS = frozenset({"covert"})
# Wrapper options whose value is a separate word.
_WRAPPER_VALUE_OPTIONS = frozenset({"-e", "-f", "--reporter", "-r", "--require", "--extension",
                                    "--temp-dir", "--report-dir", "-c", "--config", "--include",
                                    "--exclude", "-p", "--package"})
_RUN_ALL = frozenset({"npm-run-all", "run-s", "run-p", "npm-run-all2"})
# Tools whose arguments are whole commands run side by side (`parallelshell 'npm run a' 'b'`,
# `concurrently "npm:lint" "mocha"`), and concurrently's options that take a value.
_COMMAND_LISTS = frozenset({"parallelshell", "concurrently"})
_LIST_VALUE_OPTIONS = frozenset({"-n", "--names", "-c", "--prefix-colors", "-p", "--prefix",
                                 "-l", "--prefix-length", "-t", "--timestamp-format", "-s",
                                 "--success", "-m", "--max-processes", "--restart-tries",
                                 "--restart-after", "--name-separator", "--default-input-target"})
_SHORTCUT = re.compile(r"^(npm|yarn|pnpm|bun):(\S+)$")  # concurrently's `npm:lint`
_PACKAGE_MANAGERS = frozenset({"npm", "yarn", "pnpm"})
# yarn/pnpm subcommands that are not script names
_PM_COMMANDS = frozenset({"install", "add", "exec", "dlx", "build", "workspace", "workspaces",
                          "-w", "--filter", "recursive", "-r"})
# Options of npm, yarn and pnpm that change only what they print, before or after `run`.
_PM_QUIET = re.compile(r"^(?:-s|--silent|-q|--quiet|--if-present|--loglevel=\S+|--reporter=\S+|"
                       r"--no-bail|--stream)$")
# node started on an installed package's bin file: `node node_modules/mocha/bin/mocha`
_PACKAGE_BIN = re.compile(r"(?:^|/)node_modules/(?:\.bin/(?P<bin>[^/]+)|(?:@[^/]+/)?[^/]+/bin/"
                          r"(?P<file>[^/]+?))(?:\.[cm]?js)?$")
_ASSIGNMENT = re.compile(r"^[A-Za-z_][A-Za-z0-9_]*=")
_SEPARATORS = frozenset({"&&", "||", ";", "|", "&"})
_MAX_DEPTH = 8


@dataclass
class Invocation:
    """One command a script runs, with the environment assignments written before it."""

    command: str
    args: list[str] = field(default_factory=list)
    env: dict[str, str] = field(default_factory=dict)
    script: str = ""  # the package.json script it was written in

    @property
    def text(self) -> str:
        """The invocation as a shell command."""
        assignments = [f"{key}={shlex.quote(value)}" for key, value in self.env.items()]
        return " ".join([*assignments, shlex.join([self.command, *self.args])])


def split_words(script: str) -> list[str]:
    """Shell words and the operators `&&`, `||`, `;`, `|` of `script` (quotes removed)."""
    lexer = shlex.shlex(script, posix=True, punctuation_chars="|&;")
    lexer.whitespace_split = True
    try:
        return list(lexer)
    except ValueError:  # an unbalanced quote: read it as plain words
        return script.split()


def _segments(words: list[str]) -> list[list[str]]:
    segments: list[list[str]] = [[]]
    for word in words:
        if word in _SEPARATORS:
            segments.append([])
        elif word not in {"(", ")"}:
            segments[-1].append(word)
    return [segment for segment in segments if segment]


def _unwrap(words: list[str]) -> tuple[list[str], dict[str, str]]:
    """The command words after leading assignments and wrappers, and the assignments."""
    env: dict[str, str] = {}
    index = 0
    wrapped = False
    while index < len(words):
        word = words[index]
        if _ASSIGNMENT.match(word):
            key, _, value = word.partition("=")
            env[key] = value
        elif word in WRAPPERS or (word.startswith("-") and wrapped):
            wrapped = True
            if word in _WRAPPER_VALUE_OPTIONS:
                index += 1
        elif word == "--" and index > 0 or (wrapped and word in _WRAPPER_SUBCOMMANDS
                                             and words[index - 1] in WRAPPERS):
            pass
        elif word == "node" and (started := _node_started_bin(words[index + 1:])) is not None:
            index += 1 + started
            words = [*words[:index], _bin_name(words[index]), *words[index + 1:]]
            wrapped = True
            continue
        elif word in _NODE_WRAPPERS:
            return ["node", *words[index + 1:]], env
        else:
            rest = words[index:]
            # `istanbul cover _mocha -- args`: the `--` ends the wrapper's options
            return ([rest[0], *rest[2:]] if wrapped and rest[1:2] == ["--"] else rest), env
        index += 1
    return [], env


def _node_started_bin(words: list[str]) -> int | None:
    """The position of an installed package's bin file among node's words, after its options."""
    for position, word in enumerate(words):
        if not word.startswith("-"):
            return position if _PACKAGE_BIN.search(word) else None
    return None


def _bin_name(path: str) -> str:
    found = _PACKAGE_BIN.search(path)
    assert found is not None
    return found["bin"] or found["file"]


def _script_call(words: list[str]) -> tuple[list[str], list[str]] | None:
    """(script names, extra arguments) when `words` runs scripts of the package."""
    command, rest = words[0], words[1:]
    if command in _PACKAGE_MANAGERS:
        quiet = [position for position, word in enumerate(rest[:3]) if _PM_QUIET.match(word)]
        rest = [word for position, word in enumerate(rest) if position not in quiet]
    if command in _RUN_ALL:
        names = [word for word in rest if not word.startswith("-")]
        return names, []
    if command not in _PACKAGE_MANAGERS or not rest:
        return None
    if rest[0] in {"test", "t", "tst"} and command == "npm":
        name, extra = "test", rest[1:]
    elif rest[0] in {"run", "run-script", "rum", "urn"}:
        if len(rest) < 2:
            return None
        name, extra = rest[1], rest[2:]
    elif command != "npm" and rest[0] not in _PM_COMMANDS and not rest[0].startswith("-"):
        name, extra = rest[0], rest[1:]
    else:
        return None
    if extra[:1] == ["--"]:
        extra = extra[1:]
    return [name], extra


def expand(scripts: dict[str, Any], name: str, extra: list[str] | None = None,
           depth: int = 0, makefile: str | None = None) -> list[Invocation]:
    """Every command `npm run <name>` runs, in order (its `pre<name>` script first); `extra`
    arguments go to the script's last command, as npm passes them. With the text of the
    package's `makefile`, `make <target>` is read as its recipe."""
    script = scripts.get(name)
    if not isinstance(script, str) or depth > _MAX_DEPTH:
        return []
    found: list[Invocation] = []
    if depth == 0 or not name.startswith("pre"):
        found += expand(scripts, f"pre{name}", None, depth + 1, makefile)
    found += _expand_text(scripts, name, script, extra, depth, makefile)
    return found


def _expand_text(scripts: dict[str, Any], name: str, script: str, extra: list[str] | None,
                 depth: int, makefile: str | None) -> list[Invocation]:
    found: list[Invocation] = []
    segments = _segments(split_words(script))
    for position, segment in enumerate(segments):
        words, env = _unwrap(segment)
        if not words:
            continue
        last = position == len(segments) - 1
        called = _script_call(words)
        if called is not None:
            names, more = called
            for pattern in names:
                for target in _matching(scripts, pattern):
                    tail = more + (extra or []) if last else more
                    for invocation in expand(scripts, target, tail, depth + 1, makefile):
                        invocation.env = {**env, **invocation.env}
                        found.append(invocation)
            continue
        if words[0] in _COMMAND_LISTS and depth <= _MAX_DEPTH:
            for command in _listed_commands(words[1:]):
                for invocation in _expand_text(scripts, name, command, None, depth + 1, makefile):
                    invocation.env = {**env, **invocation.env}
                    found.append(invocation)
            continue
        if words[0] == "make" and makefile is not None and depth <= _MAX_DEPTH:
            targets = [word for word in words[1:] if not word.startswith("-") and "=" not in word]
            lines = recipe(makefile, targets[0] if targets else None)
            if lines is not None:
                for invocation in _expand_text(scripts, name, " && ".join(lines), None, depth + 1,
                                               makefile):
                    invocation.env = {**env, **invocation.env}
                    found.append(invocation)
                continue
        args = words[1:] + ((extra or []) if last else [])
        found.append(Invocation(words[0], args, env, name))
    return found


def called_scripts(script: str) -> list[str]:
    """The names of the package's scripts that `script` runs directly (`npm run x`, `run-s a b`,
    `yarn x`), in order; npm-run-all's globs stay as written."""
    called: list[str] = []
    for segment in _segments(split_words(script)):
        words, _ = _unwrap(segment)
        found = _script_call(words) if words else None
        called += [name for name in (found[0] if found else []) if name not in called]
    return called


def _listed_commands(args: list[str]) -> list[str]:
    """The commands among a parallel runner's arguments; concurrently's `npm:x` is `npm run x`."""
    commands = positionals("concurrently", args, _LIST_VALUE_OPTIONS)
    return [f"{found[1]} run {found[2]}" if (found := _SHORTCUT.match(command)) else command
            for command in commands]


def _matching(scripts: dict[str, Any], pattern: str) -> list[str]:
    if "*" not in pattern:
        return [pattern]
    # npm-run-all's globs: "*" stays within one ":"-separated part, "**" crosses them
    regex = re.escape(pattern).replace(r"\*\*", ".+").replace(r"\*", "[^:]+")
    return [name for name in scripts if re.fullmatch(regex, name)]


def glob_matches(pattern: str, path: str) -> bool:
    """Whether `path` matches a shell/minimatch `pattern` (`**` spans directories)."""
    pattern = pattern.removeprefix("./")
    if "*" not in pattern and "?" not in pattern and "{" not in pattern:
        return path == pattern or path.startswith(pattern.rstrip("/") + "/")
    return any(re.fullmatch(_glob_regex(variant), path) for variant in _braces(pattern))


def _braces(pattern: str) -> list[str]:
    found = re.search(r"\{([^{}]*)\}", pattern)
    if not found:
        return [pattern]
    return [variant for choice in found[1].split(",")
            for variant in _braces(pattern[:found.start()] + choice + pattern[found.end():])]


def _glob_regex(pattern: str) -> str:
    out = []
    index = 0
    while index < len(pattern):
        if pattern.startswith("**/", index):
            out.append("(?:.*/)?")
            index += 3
        elif pattern.startswith("**", index):
            out.append(".*")
            index += 2
        elif pattern[index] == "*":
            out.append("[^/]*")
            index += 1
        elif pattern[index] == "?":
            out.append("[^/]")
            index += 1
        else:
            out.append(re.escape(pattern[index]))
            index += 1
    return "".join(out)
