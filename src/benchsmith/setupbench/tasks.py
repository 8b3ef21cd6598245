"""SetupBench tasks: the published JSONL read unchanged (unknown fields kept), their fixture
folders, pre-runner scripts and reference solutions.

Fields benchsmith reads beyond the published ones, all optional:

- ``fixtures``: a folder (relative to the fixtures root) whose contents are copied into /testbed;
- ``pre_runner``: a script run as root before the agent (it sets up a broken state, ...);
- ``solution``: the reference solution the ``oracle`` agent runs (published tasks without one
  fall back to their ``build_commands``).

``pre_runner`` and ``solution`` name a file relative to the tasks file's folder when one exists
there, else they are the script itself.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

from pydantic import BaseModel, ConfigDict, ValidationError

from benchsmith.core import BenchsmithError
from benchsmith.harness.jsonl import read_records

SUCCESS_MARK = "Setup successful"
FAILURE_MARK = "Setup failed"
DEFAULT_IMAGE = "ubuntu:22.04"


class SetupTask(BaseModel):
    """One SetupBench task; fields not named here are kept as they were read."""

    model_config = ConfigDict(extra="allow")

    instance_id: str
    success_command: str
    problem_statement: str = ""
    task_type: str = "unknown"
    base_image: str = DEFAULT_IMAGE
    repo_url: str | None = None
    base_commit: str | None = None
    fixtures: str | None = None
    pre_runner: str | None = None
    solution: str | None = None
    source_dir: str = ""
    """The folder of the tasks file (set when loading; not written back)."""

    def published(self) -> dict[str, Any]:
        """The task as a JSON record, with the fields it was read with."""
        return self.model_dump(exclude_unset=True, exclude={"source_dir"})

    def script(self, field: str) -> str | None:
        """The text of the `pre_runner` or `solution` script: a file next to the tasks file,
        else the field's own text (None when the task has none)."""
        value = getattr(self, field)
        if field == "solution" and not value:
            commands = (self.model_extra or {}).get("build_commands")
            if isinstance(commands, list) and commands:
                return "set -e\n" + "\n".join(str(command) for command in commands) + "\n"
            return commands if isinstance(commands, str) and commands.strip() else None
        if not value:
            return None
        candidate = Path(self.source_dir or ".") / value
        if "\n" not in value and len(value) < 256 and candidate.is_file():
            return candidate.read_text(encoding="utf-8")
        return str(value)


class TaskProblem(BaseModel):
    """A record that is no usable task: where it is, its id if it has one, and why."""

    where: str
    instance_id: str
    task_type: str = "unknown"
    problem: str


def parse_task(where: str, record: Any, source_dir: str) -> SetupTask | TaskProblem:
    """A task from one JSON record, or the one-line problem with it."""
    if not isinstance(record, dict):
        detail = record if isinstance(record, str) else f"not a JSON object ({type(record).__name__})"
        return TaskProblem(where=where, instance_id=where, problem=detail)
    instance_id = str(record.get("instance_id") or where)
    task_type = str(record.get("task_type") or "unknown")
    if not str(record.get("success_command") or "").strip():
        return TaskProblem(where=where, instance_id=instance_id, task_type=task_type,
                           problem="no success_command")
    try:
        return SetupTask.model_validate({**record, "source_dir": source_dir})
    except ValidationError as exc:
        first = exc.errors()[0]
        field = ".".join(str(part) for part in first["loc"]) or "record"
        return TaskProblem(where=where, instance_id=instance_id, task_type=task_type,
                           problem=f"{field}: {first['msg']}")


def load_tasks(path: Path) -> list[SetupTask | TaskProblem]:
    """Every record of a tasks file (JSONL or JSON list), as a task or a task's problem; an
    unreadable file is a BenchsmithError."""
    if path.is_dir():
        raise BenchsmithError(f"tasks file is a directory: {path} (expected a .jsonl file)")
    source_dir = str(path.resolve().parent)
    found = [parse_task(where, record, source_dir) for where, record in read_records(path, "tasks")]
    if not found:
        raise BenchsmithError(f"no tasks in {path}")
    seen: set[str] = set()
    for index, item in enumerate(found):
        if isinstance(item, SetupTask) and item.instance_id in seen:
            found[index] = TaskProblem(where=item.instance_id, instance_id=item.instance_id,
                                       task_type=item.task_type, problem="duplicate instance_id")
        seen.add(item.instance_id)
    return found


def fixture_folder(task: SetupTask, fixtures_root: Path | None) -> Path | None:
    """The host folder copied into /testbed, None when the task has none; a BenchsmithError
    when the task names one that is missing."""
    root = fixtures_root or Path(task.source_dir or ".") / "fixtures"
    if task.fixtures:
        folder = root / task.fixtures
        if not folder.is_dir():
            raise BenchsmithError(f"fixture folder {folder} not found")
        return folder
    default = root / task.instance_id
    return default if default.is_dir() else None


def repo_slug(repo_url: str) -> str:
    """``owner/name`` of a repository URL (``https://github.com/owner/name[.git]``)."""
    tail = repo_url.rstrip("/").removesuffix(".git").split("://", 1)[-1]
    parts = tail.replace(":", "/").split("/")
    if len(parts) < 3:
        raise BenchsmithError(f"cannot tell owner/name from repo_url {repo_url!r}")
    return f"{parts[-2]}/{parts[-1]}"
