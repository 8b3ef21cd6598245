"""What a Node.js checkout declares: package.json, lockfiles, version files, CI's Node versions.

Nothing is executed; malformed files are skipped and contribute nothing.
"""

from __future__ import annotations

import json
import re
from pathlib import Path
from typing import Any, Literal

import yaml
from pydantic import BaseModel, Field

from benchsmith.harness.checkout import missing_files, missing_submodules
from benchsmith.setup.context_model import Hint

__all__ = ["CiJob", "Lockfile", "NodeContext", "is_node_project", "lockfile_of",
           "read_node_context"]

LockKind = Literal["npm", "yarn-classic", "yarn-berry", "pnpm"]
_NODE_TEST = re.compile(r"\b(npm (run )?test|npm t\b|yarn (run )?test|pnpm (run )?test|npx |"
                        r"node --test|jest|mocha|vitest|ava\b|tap\b)")
_PY_TEST = re.compile(r"\b(pytest|tox|nox|python -m unittest|setup\.py test)\b")


class Lockfile(BaseModel):
    """One lockfile at the root: which manager wrote it and its format version."""

    path: str
    kind: LockKind
    version: str = ""  # lockfileVersion, or the berry __metadata version; "1" for yarn classic


class CiJob(BaseModel):
    """A CI job, and whether it sets up Node or Python and runs tests of either."""

    source: str  # ".github/workflows/ci.yml:test" or ".travis.yml"
    node_versions: list[str] = Field(default_factory=list)
    sets_up_node: bool = False
    sets_up_python: bool = False
    runs_node_tests: bool = False
    runs_python_tests: bool = False


class NodeContext(BaseModel):
    """What a checkout says about its Node runtime, package manager and dependencies."""

    repo_root: str = ""
    has_package_json: bool = False
    name: str | None = None
    engines_node: str | None = None
    package_manager: str | None = None  # the packageManager field, "pnpm@8.6.0+sha..."
    scripts: dict[str, str] = Field(default_factory=dict)
    dependencies: dict[str, str] = Field(default_factory=dict)
    dev_dependencies: dict[str, str] = Field(default_factory=dict)
    peer_dependencies: dict[str, str] = Field(default_factory=dict)
    workspaces: list[str] = Field(default_factory=list)  # globs, from package.json or pnpm/lerna
    workspace_sources: list[str] = Field(default_factory=list)
    lockfiles: list[Lockfile] = Field(default_factory=list)
    nvmrc: str | None = None
    node_version_file: str | None = None
    volta_node: str | None = None
    volta_tools: dict[str, str] = Field(default_factory=dict)  # npm/yarn/pnpm pinned by volta
    ci_node_versions: list[Hint] = Field(default_factory=list)
    ci_jobs: list[CiJob] = Field(default_factory=list)
    yarn_path: str | None = None  # .yarnrc.yml yarnPath
    node_linker: str | None = None  # .yarnrc.yml nodeLinker
    npmrc: dict[str, str] = Field(default_factory=dict)
    sources_read: list[str] = Field(default_factory=list)
    missing_submodules: list[str] = Field(default_factory=list)  # declared, but not checked out
    missing_files: list[str] = Field(default_factory=list)  # tracked, but absent from the source

    @property
    def node_test_jobs(self) -> list[str]:
        """The CI jobs that run the Node tests (the evidence that this is a Node project)."""
        return [job.source for job in self.ci_jobs if job.runs_node_tests]

    @property
    def python_test_jobs(self) -> list[str]:
        """The CI jobs that run Python tests."""
        return [job.source for job in self.ci_jobs if job.runs_python_tests]


def _read_json(path: Path) -> Any:
    try:
        return json.loads(path.read_text(encoding="utf-8"))
    except (OSError, ValueError):
        return None


def _read_yaml(path: Path) -> Any:
    try:
        return yaml.safe_load(path.read_text(encoding="utf-8"))
    except (OSError, ValueError, yaml.YAMLError):
        return None


def _first_line(path: Path) -> str | None:
    try:
        lines = [ln.split("#")[0].strip() for ln in path.read_text(encoding="utf-8").splitlines()]
    except (OSError, ValueError):
        return None
    return next((ln for ln in lines if ln), None)


def _str_dict(value: Any) -> dict[str, str]:
    return {str(k): str(v) for k, v in value.items()} if isinstance(value, dict) else {}


def _read_package_json(repo: Path, ctx: NodeContext) -> None:
    data = _read_json(repo / "package.json")
    if not isinstance(data, dict):
        return
    ctx.has_package_json = True
    ctx.sources_read.append("package.json")
    ctx.name = data.get("name") if isinstance(data.get("name"), str) else None
    engines = data.get("engines")
    if isinstance(engines, dict) and isinstance(engines.get("node"), str):
        ctx.engines_node = engines["node"]
    if isinstance(data.get("packageManager"), str):
        ctx.package_manager = data["packageManager"]
    ctx.scripts = _str_dict(data.get("scripts"))
    ctx.dependencies = _str_dict(data.get("dependencies"))
    ctx.dev_dependencies = _str_dict(data.get("devDependencies"))
    ctx.peer_dependencies = _str_dict(data.get("peerDependencies"))
    workspaces = data.get("workspaces")
    if isinstance(workspaces, dict):  # yarn classic's {"packages": [...], "nohoist": [...]}
        workspaces = workspaces.get("packages")
    if isinstance(workspaces, list) and workspaces:
        ctx.workspaces += [str(w) for w in workspaces]
        ctx.workspace_sources.append("package.json")
    volta = _str_dict(data.get("volta"))
    ctx.volta_node = volta.pop("node", None)
    ctx.volta_tools = {k: v for k, v in volta.items() if k in {"npm", "yarn", "pnpm"}}


def _lockfile_version(data: Any, kind: LockKind) -> str:
    if kind in ("npm", "pnpm"):
        default = 1 if kind == "npm" else ""
        return str(data.get("lockfileVersion", default)) if isinstance(data, dict) else ""
    if isinstance(data, dict) and isinstance(data.get("__metadata"), dict):  # berry: YAML
        return str(data["__metadata"].get("version", ""))
    return "1"


def lockfile_of(name: str, text: str) -> Lockfile:
    """The lockfile `name` (at the root) whose content is `text`: the manager that wrote it and
    its format version."""
    kind: LockKind = {"yarn.lock": "yarn-classic", "pnpm-lock.yaml": "pnpm"}.get(  # type: ignore[assignment]
        name, "npm")
    try:
        data = json.loads(text) if kind == "npm" else yaml.safe_load(text)
    except (ValueError, yaml.YAMLError):
        data = None
    version = _lockfile_version(data, kind)
    if name == "yarn.lock" and version != "1":
        kind = "yarn-berry"
    return Lockfile(path=name, kind=kind, version=version)


def _read_lockfiles(repo: Path, ctx: NodeContext) -> None:
    for name in ("npm-shrinkwrap.json", "package-lock.json", "yarn.lock", "pnpm-lock.yaml"):
        path = repo / name
        if not path.is_file():
            continue
        ctx.lockfiles.append(lockfile_of(name, path.read_text(encoding="utf-8", errors="replace")))
        ctx.sources_read.append(name)


def _read_version_files(repo: Path, ctx: NodeContext) -> None:
    for name in (".nvmrc", ".node-version"):
        value = _first_line(repo / name)
        if value:
            setattr(ctx, "nvmrc" if name == ".nvmrc" else "node_version_file", value)
            ctx.sources_read.append(name)
    yarnrc = _read_yaml(repo / ".yarnrc.yml")
    if isinstance(yarnrc, dict):
        ctx.sources_read.append(".yarnrc.yml")
        ctx.yarn_path = str(yarnrc["yarnPath"]) if yarnrc.get("yarnPath") else None
        ctx.node_linker = str(yarnrc["nodeLinker"]) if yarnrc.get("nodeLinker") else None
    try:
        npmrc = (repo / ".npmrc").read_text(encoding="utf-8")
    except (OSError, ValueError):
        npmrc = None
    if npmrc is not None:
        ctx.sources_read.append(".npmrc")
        for line in npmrc.splitlines():
            key, sep, value = line.strip().partition("=")
            if sep and key and not key.startswith(("#", ";")):
                ctx.npmrc[key.strip()] = value.strip()


def _read_workspaces(repo: Path, ctx: NodeContext) -> None:
    pnpm = _read_yaml(repo / "pnpm-workspace.yaml")
    if isinstance(pnpm, dict) and isinstance(pnpm.get("packages"), list):
        ctx.workspaces += [str(p) for p in pnpm["packages"] if str(p) not in ctx.workspaces]
        ctx.workspace_sources.append("pnpm-workspace.yaml")
    lerna = _read_json(repo / "lerna.json")
    if isinstance(lerna, dict):
        listed = lerna.get("packages")
        globs: list[Any] = listed if isinstance(listed, list) else ["packages/*"]
        ctx.workspaces += [str(p) for p in globs if str(p) not in ctx.workspaces]
        ctx.workspace_sources.append("lerna.json")


def _run_lines(steps: list[Any]) -> str:
    return "\n".join(str(s.get("run", "")) for s in steps if isinstance(s, dict))


def _matrix_values(matrix: Any, expression: str) -> list[str]:
    found = re.fullmatch(r"\$\{\{\s*matrix\.([\w-]+)\s*\}\}", expression.strip())
    if not found or not isinstance(matrix, dict):
        return [expression]
    values = matrix.get(found.group(1))
    listed = values if isinstance(values, list) else [values] if values is not None else []
    for extra in matrix.get("include") or []:
        if isinstance(extra, dict) and found.group(1) in extra:
            listed.append(extra[found.group(1)])
    return [str(v) for v in listed]


def _workflow_jobs(source: str, data: Any) -> list[CiJob]:
    jobs = data.get("jobs") if isinstance(data, dict) else None
    found = []
    for job_name, job in (jobs or {}).items() if isinstance(jobs, dict) else ():
        if not isinstance(job, dict) or not isinstance(job.get("steps"), list):
            continue
        strategy = job.get("strategy")
        matrix = strategy.get("matrix") if isinstance(strategy, dict) else None
        ci = CiJob(source=f"{source}:{job_name}")
        for step in job["steps"]:
            uses = str(step.get("uses", "")) if isinstance(step, dict) else ""
            if uses.startswith("actions/setup-node"):
                ci.sets_up_node = True
                version = (step.get("with") or {}).get("node-version")
                if version is not None:
                    ci.node_versions += _matrix_values(matrix, str(version))
            elif uses.startswith("actions/setup-python"):
                ci.sets_up_python = True
        runs = _run_lines(job["steps"])
        ci.runs_node_tests = bool(_NODE_TEST.search(runs))
        ci.runs_python_tests = bool(_PY_TEST.search(runs))
        found.append(ci)
    return found


def _read_ci(repo: Path, ctx: NodeContext) -> None:
    workflows = repo / ".github" / "workflows"
    paths = sorted(workflows.glob("*.yml")) + sorted(workflows.glob("*.yaml")) if workflows.is_dir() else []
    for path in paths:
        source = str(path.relative_to(repo))
        jobs = _workflow_jobs(source, _read_yaml(path))
        if jobs:
            ctx.sources_read.append(source)
        ctx.ci_jobs += jobs
    travis = _read_yaml(repo / ".travis.yml")
    if isinstance(travis, dict):
        ctx.sources_read.append(".travis.yml")
        node_js = travis.get("node_js")
        versions = node_js if isinstance(node_js, list) else [node_js] if node_js is not None else []
        script = travis.get("script")
        script_text = "\n".join(script) if isinstance(script, list) else str(script or "")
        is_node = travis.get("language") == "node_js" or bool(versions)
        ctx.ci_jobs.append(CiJob(
            source=".travis.yml", node_versions=[str(v) for v in versions], sets_up_node=is_node,
            sets_up_python=travis.get("language") == "python",
            runs_node_tests=is_node and (not script_text or bool(_NODE_TEST.search(script_text))),
            runs_python_tests=bool(_PY_TEST.search(script_text))))
    for job in ctx.ci_jobs:
        ctx.ci_node_versions += [Hint(value=v, source=job.source) for v in job.node_versions]


def read_node_context(repo: Path) -> NodeContext:
    """Read every Node-relevant file at the root of the checkout at `repo`."""
    ctx = NodeContext(repo_root=str(repo))
    for read in (_read_package_json, _read_lockfiles, _read_version_files, _read_workspaces,
                 _read_ci):
        read(repo, ctx)
    ctx.missing_submodules = missing_submodules(repo)
    ctx.missing_files = missing_files(repo)
    return ctx


def is_node_project(repo: Path, ctx: NodeContext | None = None) -> bool:
    """Whether `repo` is set up as Node: a package.json, and when the CI tests only one
    ecosystem, that one is Node (a Python project shipping a package.json for its docs is not)."""
    ctx = ctx or read_node_context(repo)
    if not ctx.has_package_json:
        return False
    node_jobs, python_jobs = ctx.node_test_jobs, ctx.python_test_jobs
    if node_jobs or python_jobs:
        return len(node_jobs) > len(python_jobs)
    return bool(ctx.lockfiles or ctx.scripts.get("test")) or not _has_python_project(repo)


def _has_python_project(repo: Path) -> bool:
    return any((repo / name).is_file() for name in ("pyproject.toml", "setup.py", "setup.cfg"))
