"""Node.js (JavaScript and TypeScript) behind the one setup engine: the checkout's package.json,
lockfiles, version files and CI read; Node chosen at the date; the package manager and the
dating of dependencies; the test runner and its machine-readable report."""

from __future__ import annotations

import datetime as dt
import json
import shlex
import subprocess
from pathlib import Path
from typing import Any

from benchsmith.core import (
    BenchsmithError,
    Diagnosis,
    EcosystemEvidence,
    EcosystemName,
    NodePlan,
    Plan,
    Planner,
    Repairer,
    Sandbox,
)
from benchsmith.harness.node_fetch import on_registry
from benchsmith.harness.node_render import render_build_commands
from benchsmith.harness.node_stage import NO_DOWNLOAD_ENV, node_install_env, stage_node
from benchsmith.harness.render import apt_install_command, plan_spec, render_spec, system_packages
from benchsmith.sandbox.pythons import version_key
from benchsmith.setup.ecosystems import ci_testing
from benchsmith.setup.node.context import NodeContext, read_node_context
from benchsmith.setup.node.dating import (
    DatingPlan,
    choose_dating,
    dated_install_command,
    manager_context,
)
from benchsmith.setup.node.declared import programs_of, render_edits
from benchsmith.setup.node.install_scripts import (
    install_line,
    rebuild_command,
    root_lifecycle_steps,
)
from benchsmith.setup.node.managers import ManagerChoice, choose_manager, exact_manager
from benchsmith.setup.node.no_tests import RAN_NO_TESTS, run_task_command
from benchsmith.setup.node.repair import NodeRepairer
from benchsmith.setup.node.runners import detect_test_runner
from benchsmith.setup.node.runtime import (
    NodeChoice,
    choose_node,
    release_lines,
    satisfies,
    valid_range,
)
from benchsmith.setup.node.workspaces import workspace_tests
from benchsmith.setup.pyversion import RELEASE_DATES

__all__ = ["NodeEcosystem"]

MAX_FALLBACKS = 2  # other Node lines tried, as plans of their own, when the first fails


class NodeEcosystem:
    """Node.js projects: the rules of :mod:`benchsmith.setup.node`."""

    name: EcosystemName = "node"

    def __init__(self, apt: bool = False) -> None:
        self.apt = apt

    def evidence(self, repo: Path) -> EcosystemEvidence | None:
        """A package.json at the root."""
        if not (repo / "package.json").is_file():
            return None
        return EcosystemEvidence(ecosystem="node", files=["package.json"],
                                 ci_tests=ci_testing(repo, "node"))

    def context(self, repo: Path) -> NodeContext:
        """What package.json, the lockfiles, version files and CI say."""
        return read_node_context(repo)

    def plans(self, context: Any, pin_day: Any, available: dict[str, str], exclude_newer: str,
              planner: Planner | None) -> list[tuple[str, Plan]]:
        """The rules' plan. The other Node lines allowed at the date are its fallbacks, taken
        by a repair only when a diagnosis puts the fault on the Node release."""
        repo = Path(context.repo_root)
        choice = choose_node(context, pin_day)
        if (found := on_registry(choice.version)) != choice.version:
            choice.reasons.append(f"the registry has no build of {choice.version}: {found}, the "
                                  "newest of its line before it")
            choice.version = found
        dating = choose_dating(repo, context, pin_day, "HEAD")
        manager = choose_manager(manager_context(context, dating), choice.version)
        fallbacks = list(dict.fromkeys(on_registry(v) for v in _fallbacks(context, choice, pin_day)))
        return [("rules", _plan(repo, context, choice, manager, dating,
                                _python_at(pin_day, available), exclude_newer, fallbacks))]

    def adapt(self, plan: Plan, context: Any, pin_day: Any, available: dict[str, str]) -> Plan:
        """This commit's own plan, with the install relaxations and heap a repair recorded."""
        fresh = self.plans(context, pin_day, available, plan.exclude_newer, None)[0][1]
        if plan.node is not None and fresh.node is not None:
            fresh.node.install_args = list(plan.node.install_args)
            fresh.node.memory_mb = plan.node.memory_mb
            if plan.node.scripts_off:  # the project's own install-time scripts still run
                fresh.node.scripts_off = dict(plan.node.scripts_off)
                steps = root_lifecycle_steps(context.scripts, fresh.node.berry)
                fresh.node.build[:0] = [s for s in steps if s not in fresh.node.build]
            if any(s.endswith(RAN_NO_TESTS) for s in plan.sources.get("runner", [])):
                run_task_command(fresh, fresh.node, context)  # the config's runner found none
        return fresh

    def repairer(self) -> Repairer:
        """The Node diagnosis and repair rules (:mod:`benchsmith.setup.node.repair`)."""
        return NodeRepairer(apt=self.apt)

    def render(self, plan: Plan) -> tuple[list[str], list[str]]:
        """The Debian packages a repair added (where apt is allowed), the manager's dated
        install, the build steps the tests need, the test command."""
        node = _node(plan)
        install: list[str] = []
        if system := system_packages(plan, self.apt):  # headers a native addon builds against
            install.append(apt_install_command(system))
        if node.dropped_lockfile:  # a lockfile the install could not follow: resolve without it
            install.append(f"rm -f {shlex.quote(node.dropped_lockfile)}")
        if node.dating == "history-lockfile" and node.history_commit and node.lockfile:
            lock = shlex.quote(node.lockfile)
            install.append(f"git -c safe.directory='*' show {node.history_commit}:{lock} > {lock}")
        dating = DatingPlan(method=node.dating, dated=node.dating != "not-dated",
                            lockfile=node.lockfile, before=node.before)
        manager = ManagerChoice(name=node.manager, berry=node.berry, version=node.manager_version,
                                source=node.manager_source, lockfile=node.lockfile)
        install += render_edits(node.edits)  # package.json changes the dependency rules recorded
        install.append(install_line(node, [*dated_install_command(dating, manager),
                                           *node.install_args]))
        if rebuild := rebuild_command(node):  # scripts off: the native addons they would build
            install.append(rebuild)
        install += render_build_commands(node.build)
        return install, [render_spec(plan_spec(plan, [], services=self.apt))]

    def install_env(self, plan: Plan) -> dict[str, str]:
        """Quiet managers and install scripts kept from downloading binaries (NO_DOWNLOAD_ENV);
        Node and its manager are first on the sandbox's PATH, set up by :meth:`stage`."""
        return node_install_env(_node(plan))

    def stage(self, sandbox: Sandbox, repo_dir: Path, plan: Plan, install: list[str]
              ) -> Diagnosis | None:
        """The checkout, a virtualenv (node-gyp's Python), the plan's Node and manager."""
        return stage_node(sandbox, repo_dir, plan.python, _node(plan))


def _node(plan: Plan) -> NodePlan:
    if plan.node is None:
        raise BenchsmithError("a node plan without its Node part")
    return plan.node


def _line_of(version: str) -> str:
    major, minor = (version.split(".") + ["0"])[:2]
    return f"0.{minor}" if major == "0" else major


def _python_at(day: dt.date, available: dict[str, str]) -> str:
    """The newest Python 3 released by `day` that the sandbox has (node-gyp's), else the
    oldest Python 3 it has."""
    threes = sorted((v for v in available if version_key(v) >= (3, 6)), key=version_key)
    if not threes:
        raise BenchsmithError(f"no Python 3 for node-gyp here (have: {', '.join(available) or 'none'})")
    dated = [v for v in threes if RELEASE_DATES.get(v, dt.date.max) <= day]
    return (dated or threes[:1])[-1]


def _fallbacks(ctx: NodeContext, choice: NodeChoice, day: dt.date) -> list[str]:
    """The newest release at `day` of other LTS lines engines.node allows, newest first."""
    engines = ctx.engines_node
    found: list[str] = []
    for line in reversed(list(release_lines().values())):
        known = [v for v, d in line.versions if d <= day]
        if line.name == choice.line or not known or not line.lts_at(day) or line.end < day:
            continue
        if engines and valid_range(engines) and not satisfies(known[-1], engines):
            continue
        found.append(known[-1])
    return found[:MAX_FALLBACKS]


def own_programs(package: Any, node: NodePlan, ctx: NodeContext) -> dict[str, str]:
    """The project's own programs (package.json ``bin``) that its test command or build steps
    run and no dependency provides: a package manager links its dependencies' programs into
    node_modules/.bin, never the project's own (a test runner testing itself)."""
    used = {node.tests.command[0] if node.tests.command else ""}
    used |= {word for step in node.build for word in step.split()[:1]}
    declared = {*ctx.dependencies, *ctx.dev_dependencies}
    return {name: path.removeprefix("./") for name, path in programs_of(package).items()
            if name in used and name not in declared and ".." not in path and not path.startswith("/")}


def link_own_program(name: str, path: str) -> str:
    """A build step writing node_modules/.bin/`name`, a launcher of the checkout's `path`
    (only node_modules is written: the checkout keeps its files and modes)."""
    launcher = f'#!/bin/sh\nexec node "$(dirname "$0")/../../{path}" "$@"\n'
    target = f"node_modules/.bin/{name}"
    return (f"mkdir -p node_modules/.bin && printf {shlex.quote(launcher)} > {shlex.quote(target)} "
            f"&& chmod +x {shlex.quote(target)}")


def _tracked(repo: Path) -> list[str]:
    result = subprocess.run(["git", "ls-files"], cwd=repo, capture_output=True, text=True)
    if result.returncode == 0:
        return result.stdout.splitlines()
    return [p.relative_to(repo).as_posix() for p in repo.rglob("*")
            if p.is_file() and "node_modules" not in p.parts and ".git" not in p.parts]


def _plan(repo: Path, ctx: NodeContext, choice: NodeChoice, manager: ManagerChoice,
          dating: DatingPlan, python: str, exclude_newer: str, fallbacks: list[str]) -> Plan:
    package = json.loads((repo / "package.json").read_text(encoding="utf-8", errors="replace"))

    def read(path: str) -> str | None:
        target = repo / path
        return target.read_text(encoding="utf-8", errors="replace") if target.is_file() else None

    package = package if isinstance(package, dict) else {}
    tracked = _tracked(repo)
    runner = detect_test_runner(package, tracked, read)
    if runner is None or runner.sources[0].startswith("dependency "):  # nothing better said
        runner = workspace_tests(package, ctx.workspaces, tracked, read, manager.name) or runner
    if runner is None:
        raise BenchsmithError("no JavaScript test runner found (package.json scripts.test, a "
                              "runner's config file or a runner among the dependencies)")
    exact, how = exact_manager(manager, choice.version)
    node = NodePlan(version=choice.version, line=choice.line, version_source=choice.source,
                    fallbacks=fallbacks, manager=manager.name, manager_version=exact,
                    berry=manager.berry, manager_source=manager.source, dating=dating.method,
                    lockfile=dating.lockfile, history_commit=dating.history_commit,
                    before=dating.before, no_download=sorted(NO_DOWNLOAD_ENV),
                    build=list(runner.build_steps), tests=runner.run())
    if own := own_programs(package, node, ctx):
        node.build[:0] = [link_own_program(name, path) for name, path in own.items()]
    sources = {"node": [choice.source], "manager": [manager.source, how],
               "dating": [dating.lockfile or dating.method], "runner": list(runner.sources),
               "python": ["node-gyp: the newest Python 3 at the date"]}
    notes = [*choice.reasons, *manager.reasons, *dating.reasons, *runner.notes]
    notes += [f"{t.package}: {'; '.join(t.reasons)}" for t in dating.untrusted[:5]]
    notes += [f"the project's own `{name}` ({path}) runs as its scripts call it" for name, path in own.items()]
    return Plan(ecosystem="node", runner="node", python=python, exclude_newer=exclude_newer,
                install_project=False, editable=False,
                apt_packages=list(runner.apt_packages), sources=sources, notes=notes, node=node)
