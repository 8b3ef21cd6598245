"""Accumulates findings into a RepoContext, deduplicated, recording which files contributed."""

from __future__ import annotations

from benchsmith.harness.vendored import hosted
from benchsmith.setup.commands import split_install_command
from benchsmith.setup.context_model import Hint, RepoContext
from benchsmith.setup.sources.commands import (
    apt_packages,
    classify_line,
    env_assignments,
    settings_assignments,
    shell_lines,
)
from benchsmith.setup.sources.repo_files import RepoFiles
from benchsmith.setup.sources.versions import python_minor


class Collector:
    """The context being built plus the files it is built from."""

    def __init__(self, files: RepoFiles) -> None:
        self.files = files
        self.ctx = RepoContext()

    def mark(self, source: str) -> None:
        """Record that `source` contributed something."""
        if source not in self.ctx.sources_read:
            self.ctx.sources_read.append(source)

    def hint(self, hints: list[Hint], value: str, source: str) -> None:
        """Append a Hint to one of the context's lists unless already there."""
        value = value.strip()
        if value and not any(h.value == value and h.source == source for h in hints):
            hints.append(Hint(value=value, source=source))
            self.mark(source)

    def python(self, value: object, source: str) -> None:
        """A Python version a CI matrix, tox or nox runs on; ignored unless it is "X.Y"."""
        minor = python_minor(value)
        if minor:
            self.hint(self.ctx.matrix_pythons, minor, source)

    def project_name(self, name: object, source: str) -> None:
        """The distribution name; the first file that names it wins."""
        if isinstance(name, str) and name.strip() and self.ctx.project_name is None:
            self.ctx.project_name = name.strip()
            self.mark(source)

    def requires_python(self, specifier: str, source: str) -> None:
        """A PEP 440 specifier the project declares for its Python."""
        self.hint(self.ctx.requires_python, specifier, source)

    def extend_unique(self, items: list[str], new: list[str], source: str) -> None:
        """Append the new strings not yet in `items`; mark the source when any."""
        for item in new:
            if item and item not in items:
                items.append(item)
                self.mark(source)

    def command(self, line: str, source: str, testing_job: bool = False) -> None:
        """Classify one shell line; keep it as install/test command (apt packages too).
        `testing_job`: the line is a CI job's that tests (not docs, lint, release); the packages
        it installs from a git forge are kept (test data, a fork the index lacks)."""
        for kind, command in classify_line(line):
            target = self.ctx.install_commands if kind == "install" else self.ctx.test_commands
            self.hint(target, command, source)
            if kind == "test":
                for setting in settings_assignments(env_assignments(command)):
                    self.hint(self.ctx.settings_env, setting, source)
            if kind == "install":
                for package in apt_packages(command):
                    self.hint(self.ctx.apt_packages, package, source)
            if kind == "install" and testing_job:
                for package in split_install_command(command).packages:
                    if hosted(package.strip("'\"")):
                        self.hint(self.ctx.hosted_requirements, package.strip("'\""), source)

    def script(self, text: str, source: str, testing_job: bool = False) -> None:
        """Every command line of a (possibly multi-line) shell script."""
        for line in shell_lines(text):
            self.command(line, source, testing_job)
