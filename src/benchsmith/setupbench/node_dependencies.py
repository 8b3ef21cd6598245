"""The setup engine's Node dependency repairs for the `benchsmith` agent's install: after an
install the engine diagnoses as a git source it cannot fetch or a version the registry answers
404 for, the engine's rule (:mod:`benchsmith.setup.node.dependency_repairs`) decides the
package.json (and npm lockfile) changes, which are made in the container before the install is
tried again unfrozen. Each kind is repaired once; every change is recorded."""

from __future__ import annotations

import json
from pathlib import Path
from typing import TYPE_CHECKING, Any

from benchsmith.core import Diagnosis, NodePlan, NodeTestRun, Plan
from benchsmith.setup.node.context import NodeContext
from benchsmith.setup.node.declared import render_edits
from benchsmith.setup.node.dependency_repairs import repair_git_dependencies, repair_unpublished
from benchsmith.setup.node.diagnose import diagnose_node
from benchsmith.setup.node.managers import ManagerChoice
from benchsmith.setup.node.runners import detect_test_runner

if TYPE_CHECKING:
    from benchsmith.setupbench.engine_agent import _Run

__all__ = ["DEPENDENCY_RULES", "DependencyRepairs"]

DEPENDENCY_RULES = {"direct_url_unreachable": repair_git_dependencies,
                    "not_in_registry": repair_unpublished}


def _test_run(repo: Path) -> NodeTestRun:
    """The project's test runner (a rule never leaves out the dependency that runs the tests);
    a placeholder naming none when nothing says which it is."""
    try:
        package = json.loads((repo / "package.json").read_text(encoding="utf-8", errors="replace"))
    except (OSError, ValueError):
        package = {}
    files = [p.relative_to(repo).as_posix() for p in repo.glob("*") if p.is_file()]

    def read(path: str) -> str | None:
        target = repo / path
        return target.read_text(encoding="utf-8", errors="replace") if target.is_file() else None

    found = detect_test_runner(package if isinstance(package, dict) else {}, files, read)
    return NodeTestRun.model_validate(found.model_dump(include=set(NodeTestRun.model_fields))) \
        if found else NodeTestRun(runner="script", command=[], report_format="console")


class DependencyRepairs:
    """The dependency edits of one agent run, accumulated on one engine plan so that a later
    repair sees what an earlier one changed."""

    def __init__(self, repo: Path, ctx: NodeContext, manager: ManagerChoice, node_version: str,
                 date: str) -> None:
        self.ctx = ctx
        self.done: list[dict[str, Any]] = []
        self.plan = Plan(
            ecosystem="node", runner="node", python="3", exclude_newer=f"{date}T23:59:59Z",
            install_project=False, editable=False, node=NodePlan(
                version=node_version, manager=manager.name, manager_version=manager.version,
                berry=manager.berry, manager_source=manager.source, lockfile=manager.lockfile,
                dating="lockfile" if manager.lockfile else "not-dated", tests=_test_run(repo)))

    @property
    def node(self) -> NodePlan:
        """The engine plan's Node part, holding every edit made so far."""
        assert self.plan.node is not None
        return self.plan.node

    def diagnose(self, run: _Run) -> Diagnosis | None:
        """The engine's diagnosis of the last (failed) install, when a dependency rule answers
        it and its kind has not been repaired yet."""
        if run.last is None:
            return None
        diagnosis = diagnose_node(run.last, "install", self.ctx)
        repaired = {entry["kind"] for entry in self.done}
        return diagnosis if diagnosis.kind in DEPENDENCY_RULES and diagnosis.kind not in repaired \
            else None

    def repair(self, run: _Run) -> str | None:
        """Change package.json (and the npm lockfile) as the engine's rule for the last
        install's failure decides, in the container; the description, None when no rule
        changed anything (or the change could not be made)."""
        diagnosis = self.diagnose(run)
        if diagnosis is None:
            return None
        before = list(self.node.edits)
        notes = len(self.plan.notes)
        description = DEPENDENCY_RULES[diagnosis.kind](self.plan, self.node, diagnosis, self.ctx)
        edits = [e for e in self.node.edits if e not in before]
        entry: dict[str, Any] = {"kind": diagnosis.kind, "diagnosis": diagnosis.reason,
                                 "description": description,
                                 "edits": [e.model_dump() for e in edits], "ok": False}
        self.done.append(entry)
        run.notes.append(f"install failed ({diagnosis.kind}): {diagnosis.reason}")
        if description is None or not edits:
            run.notes.append(f"no dependency repair for {diagnosis.kind}")
            return None
        run.notes += self.plan.notes[notes:]
        entry["ok"] = all(run.step(command) for command in render_edits(edits))
        if not entry["ok"]:
            run.notes.append(f"the dependency changes could not be made: {run.last_output[-200:]}")
            return None
        run.notes.append(f"repair ({diagnosis.kind}): {description}")
        return f"{description} ({diagnosis.reason})"

    def record(self) -> dict[str, Any]:
        """What the repairs changed, for the metrics file."""
        return {"repairs": self.done, "replaced": dict(self.node.replaced),
                "dropped": dict(self.node.dropped)}
