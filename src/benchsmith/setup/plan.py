"""Render a :class:`~benchsmith.core.Plan` into the shell commands that are run and recorded."""

from __future__ import annotations

import shlex

from benchsmith.core import Plan


def _pin_flags(plan: Plan) -> list[str]:
    flags = ["--exclude-newer", plan.exclude_newer]
    for name, stamp in sorted(plan.exclude_newer_packages.items()):
        flags += ["--exclude-newer-package", f"{name}={stamp}"]
    return flags


def _join(words: list[str]) -> str:
    return " ".join(shlex.quote(w) for w in words)


def render_install(plan: Plan, apt: bool = True) -> list[str]:
    """The install commands: Debian packages, build tools, then one uv resolution for everything."""
    commands: list[str] = []
    if apt and plan.apt_packages:
        commands.append(
            "apt-get update -qq && DEBIAN_FRONTEND=noninteractive apt-get install -y -qq "
            "--no-install-recommends " + _join(sorted(set(plan.apt_packages)))
        )
    base = ["uv", "pip", "install", *_pin_flags(plan)]
    if not plan.build_isolation and plan.build_requirements:
        commands.append(_join(base + sorted(set(plan.build_requirements))))
    words = list(base)
    if not plan.build_isolation:
        words.append("--no-build-isolation")
    if plan.install_project:
        target = "." + (f"[{','.join(plan.extras)}]" if plan.extras else "")
        words += ["-e", target] if plan.editable else [target]
    for path in plan.requirement_files:
        words += ["-r", path]
    for group in plan.groups:
        words += ["--group", group]
    words += list(dict.fromkeys(plan.packages))
    if len(words) > len(base) + (0 if plan.build_isolation else 1):
        commands.append(_join(words))
    return commands


def _env_prefix(plan: Plan) -> str:
    return "".join(f"{k}={shlex.quote(v)} " for k, v in sorted(plan.env.items()))


def render_test(plan: Plan) -> list[str]:
    """The test command, asking the runner for per-test results (-rA, -v)."""
    return [_env_prefix(plan) + _test_words(plan)]


def _test_words(plan: Plan) -> str:
    if plan.runner == "unittest":
        args = plan.test_args or ["discover"]
        words = ["python", "-m", "unittest", *args]
        if "-v" not in words:
            words.append("-v")
        return _join(words)
    words = ["python", "-m", "pytest", "-rA", "-p", "no:cacheprovider"]
    for plugin in plan.disabled_plugins:
        words += ["-p", f"no:{plugin}"]
    for key, value in sorted(plan.ini_overrides.items()):
        words += ["-o", f"{key}={value}"]
    words += plan.test_args
    return _join(words)


def render(plan: Plan, apt: bool = True) -> tuple[list[str], list[str]]:
    """Install and test commands for `plan` (`apt=False` where system packages are off-limits)."""
    return render_install(plan, apt), render_test(plan)
