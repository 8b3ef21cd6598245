"""The package's shape, checked: three layers, who may import whom, backend-neutral capability
code, small modules, and a declared public surface for every package."""

from __future__ import annotations

import ast
import importlib
from pathlib import Path

import pytest

SRC = Path(__file__).resolve().parent.parent / "src" / "benchsmith"
MAX_LINES = 400

# component -> the components it may import (besides itself and the root's __version__)
ALLOWED: dict[str, set[str]] = {
    "core": set(),
    "instance": {"core"},
    "parsing": {"core"},
    "sandbox": {"core"},
    "harness": {"core", "instance", "sandbox", "parsing"},
    "executor": {"core", "sandbox"},
    # setup reaches the model layer only given --model, inside setup/model_repair.load_llm
    "setup": {"core", "instance", "sandbox", "parsing", "harness", "executor", "llm"},
    "mining": {"core", "instance", "sandbox", "parsing", "harness", "setup", "executor"},
    "evaluation": {"core", "instance", "sandbox", "parsing", "harness", "executor"},
    "datasets": {"core", "instance", "sandbox", "parsing", "harness", "setup"},
    "analysis": {"core", "instance", "sandbox", "parsing", "harness"},
    "llm": {"core"},
    "generation": {"core", "instance", "sandbox", "parsing", "harness", "evaluation", "llm"},
    "setupbench": {"core", "instance", "sandbox", "harness", "setup"},
    "testing": {"core", "llm"},
    "cli": {"core", "instance", "sandbox", "parsing", "harness", "setup", "mining", "evaluation", "executor",
            "datasets", "analysis", "testing", "llm", "generation", "setupbench"},
}
# Only these may know a backend by name: the backends themselves, and the CLI's docker group.
BACKEND_AWARE = ("sandbox", "cli")


def _modules() -> list[Path]:
    return sorted(SRC.rglob("*.py"))


def _component(path: Path) -> str:
    parts = path.relative_to(SRC).parts
    return parts[0].removesuffix(".py") if parts[0] not in {"__init__.py", "__main__.py"} else "root"


def _imports(path: Path) -> list[tuple[str, int]]:
    """Every benchsmith module `path` imports (also inside functions), with its line."""
    found: list[tuple[str, int]] = []
    package = ".".join(("benchsmith", *path.relative_to(SRC).parent.parts))
    for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
        if isinstance(node, ast.Import):
            found += [(alias.name, node.lineno) for alias in node.names]
        elif isinstance(node, ast.ImportFrom):
            if node.level:
                base = package.rsplit(".", node.level - 1)[0] if node.level > 1 else package
                name = f"{base}.{node.module}" if node.module else base
            else:
                name = node.module or ""
            found.append((name, node.lineno))
            found += [(f"{name}.{alias.name}", node.lineno) for alias in node.names]
    return [(name, line) for name, line in found if name.startswith("benchsmith")]


def _target_component(module: str) -> str | None:
    parts = module.split(".")
    if len(parts) == 1 or parts[1] == "__version__":
        return None  # the root package (its version)
    return parts[1]


def test_layers_import_only_what_they_build_on() -> None:
    problems = []
    for path in _modules():
        component = _component(path)
        if component == "root":
            continue
        allowed = ALLOWED[component] | {component}
        for module, line in _imports(path):
            target = _target_component(module)
            if target is not None and target in ALLOWED and target not in allowed:
                problems.append(f"{path.relative_to(SRC)}:{line} imports {module}")
    assert not problems, "\n".join(problems)


def test_nothing_outside_the_backends_asks_which_backend_it_is() -> None:
    problems = []
    for path in _modules():
        if _component(path) in BACKEND_AWARE:
            continue
        tree = ast.parse(path.read_text(encoding="utf-8"))
        for node in ast.walk(tree):
            if isinstance(node, ast.Compare):
                for operand in [node.left, *node.comparators]:
                    if isinstance(operand, ast.Constant) and operand.value in {"docker", "local"}:
                        problems.append(f"{path.relative_to(SRC)}:{node.lineno} compares with "
                                        f"{operand.value!r}")
        for module, line in _imports(path):
            if module.startswith(("benchsmith.sandbox.docker", "benchsmith.sandbox.local")):
                problems.append(f"{path.relative_to(SRC)}:{line} imports {module}")
    assert not problems, "\n".join(problems)


def test_modules_stay_small() -> None:
    long = {str(p.relative_to(SRC)): n for p in _modules()
            if (n := len(p.read_text(encoding="utf-8").splitlines())) > MAX_LINES}
    assert not long, f"split these modules (over {MAX_LINES} lines): {long}"


@pytest.mark.parametrize("package", sorted(
    ".".join(("benchsmith", *p.parent.relative_to(SRC).parts)) for p in SRC.rglob("__init__.py")))
def test_every_package_declares_its_public_surface(package: str) -> None:
    module = importlib.import_module(package)
    names = getattr(module, "__all__", None)
    assert names, f"{package} has no __all__"
    missing = [name for name in names if not hasattr(module, name)]
    assert not missing, f"{package}.__all__ names what it does not have: {missing}"


def test_every_diagnosis_kind_is_known_and_every_rule_answers_a_kind() -> None:
    from typing import get_args

    from benchsmith.core import DiagnosisKind
    from benchsmith.setup.node.repair import NODE_RULES
    from benchsmith.setup.repair import RULES

    kinds = set(get_args(DiagnosisKind))
    assert set(RULES) <= kinds
    assert set(NODE_RULES) <= kinds
    emitted = set()
    for path in (SRC / "setup").rglob("*.py"):
        for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
            if isinstance(node, ast.keyword) and node.arg == "kind" and isinstance(node.value, ast.Constant):
                emitted.add(node.value.value)
    assert emitted and emitted <= kinds, emitted - kinds
