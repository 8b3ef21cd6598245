"""Node's rule-based repairer: a diagnosis of :mod:`benchsmith.setup.node.diagnose` in, a
changed plan (its Node release, install relaxations, dating, build steps, memory) out. Every
change is recorded in the plan's notes and sources."""

from __future__ import annotations

import re
import shlex
from collections.abc import Callable
from typing import Any

import nodesemver

from benchsmith.core import BenchsmithError, Diagnosis, DiagnosisKind, ExecResult, NodePlan, Plan
from benchsmith.harness.npm_registry import packument
from benchsmith.setup.node.build_repairs import (
    leave_out_dropped_steps,
    repair_dropped_programs,
    repair_typescript_line,
)
from benchsmith.setup.node.context import NodeContext
from benchsmith.setup.node.crashes import repair_crashed_file
from benchsmith.setup.node.dating import times_trust
from benchsmith.setup.node.dependency_repairs import (
    repair_engine_caps,
    repair_git_dependencies,
    repair_types_of_dropped,
    repair_unpublished,
)
from benchsmith.setup.node.diagnose import BUILD_SCRIPTS, diagnose_node
from benchsmith.setup.node.install_scripts import repair_script_download
from benchsmith.setup.node.managers import ManagerChoice, choose_manager, exact_manager, runs_on
from benchsmith.setup.node.no_tests import repair_task_command
from benchsmith.setup.node.runtime import satisfies, valid_range
from benchsmith.setup.node.type_packages import repair_types_for_compiler
from benchsmith.setup.system_repairs import repair_system_packages

__all__ = ["NODE_RULES", "NodeRepairer"]

Rule = Callable[[Plan, NodePlan, Diagnosis, Any], str | None]

# Node releases that load what a diagnosed module-format error needs: require() of an ES module
# without a flag (20.19, 22.12), and ES module syntax in a .js file of no declared type (20.19,
# 22.7)
MODULE_FEATURES = {"require-esm": ">=22.12.0 || ^20.19.0",
                   "module-detection": ">=22.7.0 || ^20.19.0"}
MEMORY_STEPS_MB = (4096, 8192)
TOOLS_PREFIX = "${HOME:-/tmp}/.benchsmith-tools"
# dependencies that are not the registry's: paths, links, workspaces, git and URLs
_LOCAL_SPEC = re.compile(r"^(?:file:|link:|workspace:|portal:|git[+:]|https?:|github:|[.~/])|"
                         r"^[\w.-]+/[\w.-]+(?:#.*)?$")


def _line_of(version: str) -> str:
    major, minor = (version.split(".") + ["0"])[:2]
    return f"0.{minor}" if major == "0" else major


def _switch_node(plan: Plan, node: NodePlan, ranges: list[str], why: str, context: Any = None,
                 candidates: list[str] | None = None) -> str | None:
    """Move to the first of `candidates` (default: the fallbacks) satisfying every range in
    `ranges`; an npm chosen for the Node it shipped with is chosen again for the new one."""
    for candidate in node.fallbacks if candidates is None else candidates:
        if candidate != node.version and all(satisfies(candidate, r) for r in ranges):
            previous = node.version
            node.fallbacks = [v for v in node.fallbacks if v != candidate]
            node.version, node.line = candidate, _line_of(candidate)
            node.version_source = "repair"
            plan.notes.append(f"Node {previous} -> {candidate}: {why}")
            plan.sources.setdefault("node", []).append(f"repair: {why}")
            if isinstance(context, NodeContext) and node.manager_source.endswith("'s npm"):
                choice = choose_manager(context.model_copy(update={"lockfiles": []}), candidate)
                exact, how = exact_manager(choice, candidate)
                node.manager, node.manager_version, node.berry = choice.name, exact, choice.berry
                node.manager_source = choice.source
                plan.sources["manager"] = [choice.source, how]
                plan.notes.append(f"npm {exact}: {choice.reasons[0]}")
            elif not node.berry and node.manager_version[:1].isdigit() \
                    and not runs_on(node.manager, node.manager_version, candidate):
                major = node.manager_version.split(".")[0]
                exact, how = exact_manager(ManagerChoice(name=node.manager, version=major,
                                                         source=node.manager_source), candidate)
                plan.notes.append(f"{node.manager} {node.manager_version} -> {exact}: it does not "
                                  f"run on Node {candidate}")
                plan.sources["manager"] = [node.manager_source, how]
                node.manager_version = exact
            return f"switch Node {previous} -> {candidate} ({why})"
    return None


def repair_node_version(plan: Plan, node: NodePlan, diagnosis: Diagnosis, context: Any
                        ) -> str | None:
    """The Node release is at fault (newer syntax or globals, a native addon's ABI or headers):
    the newest fallback release newer than it (the one that parses and has the most), or the
    nearest older one (the fewest API changes undone), within engines."""
    newer = diagnosis.facts.get("direction") == ["newer"]
    key = _version_key(node.version)
    ordered = sorted((v for v in node.fallbacks if (_version_key(v) > key) == newer
                      and _version_key(v) != key), key=_version_key, reverse=True)
    engines = getattr(context, "engines_node", None)
    ranges = [engines] if engines and valid_range(engines) else []
    return _switch_node(plan, node, ranges, f"{diagnosis.reason}: a {'newer' if newer else 'older'} "
                        "Node", context, ordered)


def _version_key(version: str) -> tuple[int, ...]:
    return tuple(int(p) if p.isdigit() else 0 for p in version.split("-")[0].split("."))


def repair_engine(plan: Plan, node: NodePlan, diagnosis: Diagnosis, context: Any) -> str | None:
    """A package's engines field excludes the Node: the next fallback release that fits it."""
    ranges = diagnosis.facts.get("ranges", [])
    if not ranges:
        return None
    packages = ", ".join(diagnosis.facts.get("packages", [])) or "a dependency"
    return _switch_node(plan, node, ranges, f"{packages} needs node {' '.join(ranges)}", context)


def repair_module_format(plan: Plan, node: NodePlan, diagnosis: Diagnosis, context: Any
                         ) -> str | None:
    """CommonJS meets an ES module: a release that loads it, within the project's engines."""
    ranges = [MODULE_FEATURES[n] for n in diagnosis.facts.get("needs", []) if n in MODULE_FEATURES]
    if not ranges:
        return None
    engines = getattr(context, "engines_node", None)
    if engines and valid_range(engines):
        ranges.append(engines)
    need = diagnosis.facts["needs"][0]
    return _switch_node(plan, node, ranges, f"{need} (Node {MODULE_FEATURES[need]})", context)


# npm releases with install defects of their own, and the release line that fixed them
_NPM_FIXED = {"3": "6", "4": "6", "5": "6"}


def repair_manager_defect(plan: Plan, node: NodePlan, diagnosis: Diagnosis, context: Any
                          ) -> str | None:
    """npm broke its own install: the newest release of the line that fixed it that runs on
    the Node (npm 6 runs on Node 6 and 8 as npm 3 to 5 do)."""
    fixed = _NPM_FIXED.get(node.manager_version.split(".")[0]) if node.manager == "npm" else None
    if fixed is None:
        return None
    exact, how = exact_manager(ManagerChoice(name="npm", version=fixed, source="repair"),
                               node.version)
    if exact.split(".")[0] != fixed:
        return None
    previous, node.manager_version = node.manager_version, exact
    node.manager_source = f"repair: npm {previous} broke the install"
    plan.notes.append(f"npm {previous} -> {exact}: {diagnosis.reason}")
    plan.sources["manager"] = [node.manager_source, how]
    return f"npm {previous} -> {exact} ({diagnosis.reason})"


def repair_peer_conflict(plan: Plan, node: NodePlan, diagnosis: Diagnosis, context: Any
                         ) -> str | None:
    """Conflicting peer dependencies: install as npm 6 did (peer ranges not enforced)."""
    relaxation = {"npm": "--legacy-peer-deps", "pnpm": "--no-strict-peer-dependencies"}.get(
        node.manager)
    if relaxation is None or relaxation in node.install_args:
        return None
    node.install_args.append(relaxation)
    plan.notes.append(f"relaxed: {relaxation} (peer dependencies conflict: "
                      f"{', '.join(diagnosis.facts.get('packages', [])) or 'see the log'})")
    plan.sources.setdefault("install_args", []).append("repair: peer dependency conflict")
    return f"install with {relaxation} (peer dependencies conflict)"


def _times_trusted(context: Any) -> bool:
    """Whether the registry's publish times of every registry dependency look real."""
    declared = {**(getattr(context, "dependencies", None) or {}),
                **(getattr(context, "dev_dependencies", None) or {})}
    names = sorted(name for name, spec in declared.items() if not _LOCAL_SPEC.match(str(spec)))
    try:
        return all(times_trust(packument(name, full=True)).trustworthy for name in names)
    except BenchsmithError:
        return False


def repair_lockfile(plan: Plan, node: NodePlan, diagnosis: Diagnosis, context: Any) -> str | None:
    """A lockfile the frozen install cannot follow: the next dating method. A lockfile out of
    step is adapted by a non-frozen install; one the manager cannot read is left out, and
    npm resolves as of the date where publish times can be trusted, else nothing dates."""
    unreadable = bool(diagnosis.facts.get("unreadable"))
    previous = node.dating
    if previous == "lockfile" and not unreadable and node.lockfile:
        node.dating = "history-lockfile"  # the commit's own lockfile, adapted (no earlier commit)
        why = f"{node.lockfile} is out of step with package.json: adapted by a non-frozen install"
    elif previous in ("lockfile", "history-lockfile"):
        left_out, node.lockfile, node.history_commit = node.lockfile, None, None
        node.dropped_lockfile = left_out
        day = plan.exclude_newer[:10]
        if node.manager == "npm" and _times_trusted(context):
            node.dating, node.before = "before", day
            why = f"{left_out} left out; npm resolves as of {day}"
        else:
            node.dating = "not-dated"
            why = f"{left_out} left out; the registry's times cannot date the rest: not dated"
    else:
        return None
    plan.notes.append(f"dating {previous} -> {node.dating}: {why}")
    plan.sources.setdefault("dating", []).append(f"repair: {diagnosis.reason}")
    return f"dating {previous} -> {node.dating} ({why})"


def _script_for(dirs: list[str], scripts: dict[str, str]) -> str | None:
    """The script that makes one of `dirs`: the first naming it, else the first build script."""
    present = [name for name in BUILD_SCRIPTS if isinstance(scripts.get(name), str)]
    for name in present:
        if any(re.search(rf"(?<![\w-]){re.escape(d)}(?![\w-])", scripts[name]) for d in dirs):
            return name
    return present[0] if present else None


def repair_build_output(plan: Plan, node: NodePlan, diagnosis: Diagnosis, context: Any
                        ) -> str | None:
    """Tests load a build's output the checkout lacks: run the package.json script first."""
    scripts = getattr(context, "scripts", {}) or {}
    name = _script_for(diagnosis.facts.get("dirs", []), scripts)
    if name is None:
        return None
    step = f"{node.manager} run {name}"
    if step in node.build:
        return None
    node.build.append(step)
    plan.sources.setdefault("build", []).append(
        f"repair: the tests load {', '.join(diagnosis.facts.get('modules', [])[:2])}")
    return f"run `{step}` before the tests (they load {diagnosis.facts['dirs'][0]}/)"


def _version_at(doc: dict[str, Any], program: str, date: str) -> tuple[str, bool] | None:
    """The newest version by `date` whose bin has `program` (dated: True), else the latest;
    None when neither provides it or the package is deprecated."""
    versions = doc.get("versions") or {}
    times = doc.get("time") or {}

    def has_bin(version: str) -> bool:  # a deprecated package is no one's tool any more
        meta = versions.get(version, {})
        bins = meta.get("bin")
        found = program in bins if isinstance(bins, dict) else isinstance(bins, str)
        return found and not meta.get("deprecated")

    dated = [v for v in versions if "-" not in v and str(times.get(v, "9999"))[:10] <= date[:10]]
    if dated:
        best = nodesemver.max_satisfying(dated, "*", loose=True)
        if best and has_bin(best):
            return str(best), True
    latest = (doc.get("dist-tags") or {}).get("latest")
    return (str(latest), False) if latest and has_bin(latest) else None


def repair_programs(plan: Plan, node: NodePlan, diagnosis: Diagnosis, context: Any) -> str | None:
    """Scripts run a program no dependency installs: the registry's package of that name
    providing it as a binary, installed beside the checkout and linked into node_modules/.bin."""
    declared = {*getattr(context, "dependencies", {}), *getattr(context, "dev_dependencies", {})}
    for program in diagnosis.facts.get("programs", []):
        if program in declared or any(program in step for step in node.build):
            continue
        try:
            found = _version_at(packument(program, full=True), program, plan.exclude_newer)
        except BenchsmithError:
            continue
        if found is None:
            continue
        version, dated = found
        spec = shlex.quote(f"{program}@{version}")
        node.build.insert(0, f'npm install --global --prefix "{TOOLS_PREFIX}" {spec} && '
                             f'mkdir -p node_modules/.bin && ln -sf "{TOOLS_PREFIX}/bin/{program}" '
                             f"node_modules/.bin/{program}")
        when = f"the newest by {plan.exclude_newer[:10]}" if dated else \
            "the latest: the registry has none dated by then"
        plan.notes.append(f"added {program}@{version} ({when}): scripts run `{program}`, which no "
                          "dependency installs")
        plan.sources.setdefault("build", []).append(f"repair: `{program}` not found")
        return f"install {program}@{version} for its `{program}` binary ({when})"
    return None


def repair_heap(plan: Plan, node: NodePlan, diagnosis: Diagnosis, context: Any) -> str | None:
    """node ran out of heap: a larger old space (--max-old-space-size through NODE_OPTIONS)."""
    larger = next((mb for mb in MEMORY_STEPS_MB if mb > (node.memory_mb or 0)), None)
    if larger is None:
        return None
    previous, node.memory_mb = node.memory_mb, larger
    plan.notes.append(f"heap limit {previous or 'default'} -> {larger} MB: node ran out of heap")
    return f"raise node's heap limit to {larger} MB (--max-old-space-size)"


def repair_gyp_python(plan: Plan, node: NodePlan, diagnosis: Diagnosis, context: Any) -> str | None:
    """node-gyp of the Python 2 era: build native addons with Python 2.7."""
    wanted = (diagnosis.facts.get("python") or ["2.7"])[0]
    if plan.python == wanted:
        return None
    previous, plan.python = plan.python, wanted
    plan.sources.setdefault("python", []).append("repair: node-gyp needs Python 2")
    plan.notes.append(f"Python {previous} -> {wanted} for node-gyp: {diagnosis.reason}")
    return f"build native addons with Python {wanted} ({diagnosis.reason})"


def _system_packages(plan: Plan, node: NodePlan, diagnosis: Diagnosis, context: Any) -> str | None:
    return repair_system_packages(plan, diagnosis, context)


NODE_RULES: dict[DiagnosisKind, list[Rule]] = {
    "system_packages": [_system_packages],
    "gyp_python": [repair_gyp_python],
    "engine_mismatch": [repair_engine],
    "peer_conflict": [repair_peer_conflict],
    "lockfile_unusable": [repair_lockfile],
    "manager_defect": [repair_manager_defect],
    "module_format": [repair_module_format],
    "node_version": [repair_node_version],
    "build_output_missing": [repair_build_output],
    "missing_programs": [repair_dropped_programs, repair_programs],
    "heap_exhausted": [repair_heap],
    "direct_url_unreachable": [repair_git_dependencies],
    "not_in_registry": [repair_unpublished],
    "missing_modules": [repair_types_of_dropped],
    "test_file_crashed": [repair_crashed_file],
    "script_download_failed": [repair_script_download],
    "project_build_failed": [repair_typescript_line, repair_types_for_compiler],
    "no_tests": [repair_task_command],
}


class NodeRepairer:
    """Diagnoses Node installs and test runs and repairs with :data:`NODE_RULES`; `apt` says
    whether the sandbox may install Debian packages."""

    def __init__(self, apt: bool = False) -> None:
        self.apt = apt

    def diagnose(self, plan: Plan, failed: ExecResult, phase: str, context: Any) -> Diagnosis:
        """Classify the failure of an install or test command."""
        return diagnose_node(failed, phase, context)

    def repair(self, plan: Plan, diagnosis: Diagnosis, context: Any) -> tuple[Plan, str] | None:
        """Apply the first rule for the diagnosis that changes the plan."""
        if plan.node is None or (diagnosis.kind == "system_packages" and not self.apt):
            return None
        for rule in [*NODE_RULES.get(diagnosis.kind, []), repair_engine_caps]:
            candidate = plan.model_copy(deep=True)
            assert candidate.node is not None
            if description := rule(candidate, candidate.node, diagnosis, context):
                if rule is not repair_dropped_programs and \
                        (left := leave_out_dropped_steps(candidate, candidate.node, context)):
                    description = f"{description}; {left}"  # a tool just left out
                return candidate, description
        return None

