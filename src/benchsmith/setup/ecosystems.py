"""Ecosystems behind the one setup engine: which one a repository belongs to, and Python's part.

Each ecosystem (:class:`benchsmith.core.Ecosystem`) reads its own files, chooses its runtime at
the date, proposes plans, renders them into commands and repairs them; the engine's loop, the
records, the sandboxes and the reference database are shared. A repository with the files of
two ecosystems is set up for the one its CI tests; where its CI tests both or neither, Python
(the projects benchsmith set up before it knew another ecosystem keep their setup).
"""

from __future__ import annotations

import re
from collections.abc import Callable
from datetime import date
from pathlib import Path
from typing import Any

from benchsmith.core import (
    BenchsmithError,
    Diagnosis,
    Ecosystem,
    EcosystemEvidence,
    EcosystemName,
    Plan,
    Planner,
    Repairer,
    Sandbox,
)
from benchsmith.harness.prepare import install_env, stage
from benchsmith.harness.render import render
from benchsmith.harness.services import listening
from benchsmith.sandbox.pythons import version_key
from benchsmith.setup.context import gather_context
from benchsmith.setup.context_model import RepoContext
from benchsmith.setup.date_rules import apply_date_rules
from benchsmith.setup.editable_repairs import MOVED_FOR_EDITABLE, compat_editable
from benchsmith.setup.hosted import add_hosted
from benchsmith.setup.planner import RulePlanner
from benchsmith.setup.pyversion import LEFT_NEWER, RELEASE_DATES, allows_python, choose_python
from benchsmith.setup.repair import RuleRepairer

__all__ = ["PythonEcosystem", "choose_ecosystem", "ecosystem_of", "ecosystems", "register"]

PYTHON_FILES = ("setup.py", "setup.cfg", "pyproject.toml", "requirements.txt", "Pipfile")
CI_FILES = (".github/workflows/*.yml", ".github/workflows/*.yaml", ".travis.yml",
            ".gitlab-ci.yml", ".circleci/config.yml", "azure-pipelines.yml", "appveyor.yml")
# what a CI file runs when it runs an ecosystem's tests
CI_TEST_COMMANDS: dict[str, re.Pattern[str]] = {
    "python": re.compile(r"\b(pytest|py\.test|tox|nox|unittest|nosetests|manage\.py\s+test|"
                         r"setup\.py\s+test|runtests\.py|bin/test)\b"),
    "node": re.compile(r"\b(npm\s+(run\s+)?(test|t)\b|yarn\s+(run\s+)?test\b|pnpm\s+(run\s+)?test\b|"
                       r"npx\s+(jest|vitest|mocha|ava|tap)\b|jest\b|vitest\b|mocha\b)"),
}


class PythonEcosystem:
    """Python projects: the rules of :mod:`benchsmith.setup` (uv pinned to the date)."""

    name: EcosystemName = "python"

    def __init__(self, apt: bool = False) -> None:
        self.apt = apt

    def evidence(self, repo: Path) -> EcosystemEvidence | None:
        """Packaging files, or a requirements file beside Python sources."""
        files = [name for name in PYTHON_FILES if (repo / name).is_file()]
        if not files:
            return None
        return EcosystemEvidence(ecosystem="python", files=files, ci_tests=ci_testing(repo, "python"))

    def context(self, repo: Path) -> RepoContext:
        """What setup.py, pyproject, CI, tox, docs... say (:func:`gather_context`)."""
        return gather_context(repo)

    def plans(self, context: Any, pin_day: Any, available: dict[str, str], exclude_newer: str,
              planner: Planner | None) -> list[tuple[str, Plan]]:
        """The rules' plan (first without the CI's services where none can be started
        here), then the rules' alternatives."""
        choice = choose_python(context, pin_day, available)
        planner = planner or RulePlanner()
        rules = planner.plan(context, choice, exclude_newer)
        plans: list[tuple[str, Plan]] = []
        if not self.apt and not all(listening(s.kind) for s in rules.services):
            plans.append(("rules, without services", RulePlanner.without_services(context, rules)))
        plans.append(("rules", rules))
        if isinstance(planner, RulePlanner):
            plans += planner.alternatives(context, choice, exclude_newer, rules)
        return plans

    def adapt(self, plan: Plan, context: Any, pin_day: Any, available: dict[str, str]) -> Plan:
        """Another commit's plan at this commit: the date's Python (the plan's own where a
        repair chose it), its fallbacks, the date's rules, and this commit's hosted sources."""
        choice = choose_python(context, pin_day, available)
        usable = plan.python in available and RELEASE_DATES.get(plan.python, date.max) <= pin_day
        # Python 3.7 taken for the editable install only, where this date's Python would
        # need the same move (no setuptools on 3.6 builds editables): kept, as the move
        # from this date's Python, which the way back returns to
        moved = (MOVED_FOR_EDITABLE in plan.sources and plan.editable and plan.python in available
                 and (3, 0) <= version_key(choice.version) < (3, 7) <= version_key(plan.python)
                 and allows_python(context, plan.python))
        if moved:
            plan.sources[MOVED_FOR_EDITABLE] = [choice.version]
        elif not (usable and LEFT_NEWER in plan.sources):
            # the Python its own date's rules chose: this date's choice, as a plan made here
            # would take (a repair's older one, taken after newer ones failed, stays)
            plan.python = choice.version
            plan.sources.pop(LEFT_NEWER, None)
        order = [choice.version, *choice.fallbacks]
        below = (3, 0) if moved else version_key(plan.python)  # 3.6 and older meet that setuptools
        plan.python_fallbacks = [v for v in order if version_key(v) < below]
        apply_date_rules(plan, context)
        compat_editable(context, plan)  # plans stored before it was the rule
        plan.vendored = []  # this commit's CI decides, at this date
        add_hosted(context, plan)
        plan.stand_ins = [h.value for h in context.stand_ins]
        return plan

    def repairer(self) -> Repairer:
        """Python's diagnosis and repair rules."""
        return RuleRepairer(apt=self.apt)

    def render(self, plan: Plan) -> tuple[list[str], list[str]]:
        """uv (pip for Python 2.7) install commands and the runner's test commands."""
        return render(plan, apt=self.apt)

    def install_env(self, plan: Plan) -> dict[str, str]:
        """uv's date pin (a dated index for pip)."""
        return install_env(plan.python, plan.exclude_newer, plan.exclude_newer_packages)

    def stage(self, sandbox: Sandbox, repo_dir: Path, plan: Plan, install: list[str]
              ) -> Diagnosis | None:
        """The checkout (with the sources CI installed from forges) and a virtualenv."""
        return stage(sandbox, repo_dir, plan.python, install)


def _node(apt: bool) -> Ecosystem:
    from benchsmith.setup.node.ecosystem import NodeEcosystem  # it builds on this module

    return NodeEcosystem(apt)


# name -> factory(apt); other ecosystems register themselves beside Python's
_FACTORIES: dict[str, Callable[[bool], Ecosystem]] = {"python": PythonEcosystem, "node": _node}


def register(name: str, factory: Callable[[bool], Ecosystem]) -> None:
    """Make an ecosystem known to setup (its factory takes whether apt is allowed)."""
    _FACTORIES[name] = factory


def ecosystems(apt: bool = False) -> dict[str, Ecosystem]:
    """Every known ecosystem, Python first."""
    return {name: factory(apt) for name, factory in _FACTORIES.items()}


def ecosystem_of(plan: Plan, apt: bool = False) -> Ecosystem:
    """The ecosystem that made `plan` (and renders it)."""
    factory = _FACTORIES.get(plan.ecosystem)
    if factory is None:
        raise BenchsmithError(f"plan of unknown ecosystem {plan.ecosystem!r}")
    return factory(apt)


def choose_ecosystem(repo: Path, apt: bool = False, wanted: str | None = None
                     ) -> tuple[Ecosystem, EcosystemEvidence]:
    """The ecosystem the checkout at `repo` is set up for, and why: the only one whose files
    it has, else the one its CI tests, else Python (also where no ecosystem's files are
    there: Python's own reading of the files says what is missing). `wanted` names one
    (`--ecosystem`)."""
    known = ecosystems(apt)
    if wanted is not None and wanted not in known:
        raise BenchsmithError(f"unknown ecosystem {wanted!r} (known: {', '.join(known)})")
    found = [(e, ev) for e in known.values() if (ev := e.evidence(repo)) is not None]
    if wanted is not None:
        found = [(e, ev) for e, ev in found if e.name == wanted]
        if not found:
            raise BenchsmithError(f"no {wanted} project at the checkout's root")
    if not found:
        return known["python"], EcosystemEvidence(ecosystem="python")
    tested = [pair for pair in found if pair[1].ci_tests]
    if len(tested) == 1:
        return tested[0]
    return found[0]  # Python first: its place in the registry


def ci_testing(repo: Path, ecosystem: str) -> list[str]:
    """The repository's CI files whose commands run `ecosystem`'s tests."""
    pattern = CI_TEST_COMMANDS[ecosystem]
    hits: list[str] = []
    for glob in CI_FILES:
        for path in sorted(repo.glob(glob)):
            try:
                text = path.read_text(encoding="utf-8", errors="replace")
            except OSError:
                continue
            if pattern.search(text):
                hits.append(path.relative_to(repo).as_posix())
    return hits
