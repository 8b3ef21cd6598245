"""The evaluation fixture's instances with issue texts, a third instance, and model scripts."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from benchsmith.instance import TaskInstance

from .evaluation_fixture import build_instances

ISSUES = {
    "fixture__calc-1": "parse() keeps the spaces around items: parse('a, b') gives ['a', ' b'] "
                       "instead of ['a', 'b'].",
    "fixture__calc-2": "total() raises TypeError when one of the numbers is None; None should "
                       "be skipped.",
    "fixture__calc-3": "The README says nothing about the version string.",
}


def calc_instances(make_repo: Any) -> tuple[Path, dict[str, TaskInstance]]:
    """(repository, instances): calc-1 and -2 with issue texts, and calc-3 (a copy of -2)."""
    repo, instances = build_instances(make_repo)
    instances["fixture__calc-3"] = instances["fixture__calc-2"].model_copy(
        update={"instance_id": "fixture__calc-3"})
    for key, text in ISSUES.items():
        instances[key] = instances[key].model_copy(update={"problem_statement": text})
    return repo, instances


def write_script(path: Path, rules: list[dict[str, Any]], default: str | None = None) -> Path:
    """A scripted model's rules as a JSON file."""
    path.write_text(json.dumps({"rules": rules, **({"default": default} if default else {})}))
    return path


def read_jsonl(path: Path) -> list[dict[str, Any]]:
    """The records of a JSON Lines file."""
    return [json.loads(line) for line in path.read_text().splitlines() if line.strip()]
