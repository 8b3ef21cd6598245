"""Authoring tasks: benchsmith's own task set, and `setupbench new`, which scaffolds a task
(its JSONL line, fixture folder, reference solution) that passes `check` as written, for the
author to turn into the real task."""

from __future__ import annotations

import json
import re
from pathlib import Path

from benchsmith.core import BenchsmithError

# As SetupBench publishes them (setupbench/scenarios/*.jsonl).
TASK_TYPES = ("reposetup", "dependency_resolution", "dbsetup", "bgsetup")
_STATEMENT = (
    "You are operating inside a fresh Ubuntu 22.04 environment with no tools or packages "
    "preinstalled, not even python3. Install everything globally (apt or other system-level "
    "installers; no virtual environments), non-interactively.\n\nTask:\n{task}\n")
# Per type: (task sentence, fixture files, solution, success command). Each one works as is.
_TEMPLATES: dict[str, tuple[str, dict[str, str], str, str]] = {
    "dbsetup": (
        "Install SQLite and create /testbed/app.db from /testbed/seed.sql.",
        {"seed.sql": "CREATE TABLE items (id INTEGER PRIMARY KEY, name TEXT);\n"
                     "INSERT INTO items (name) VALUES ('alpha'), ('beta');\n"},
        "set -e\napt-get update -qq\napt-get install -y -qq --no-install-recommends sqlite3\n"
        "sqlite3 /testbed/app.db < /testbed/seed.sql\n",
        "sqlite3 /testbed/app.db 'SELECT COUNT(*) FROM items' 2>/dev/null | grep -qx 2 && "
        "echo \"Setup successful\" || echo \"Setup failed\""),
    "bgsetup": (
        "Serve the folder /testbed/site on http://127.0.0.1:8000/ in the background.",
        {"site/index.html": "Hello from the scaffold\n"},
        "set -e\napt-get update -qq\napt-get install -y -qq --no-install-recommends python3\n"
        "cd /testbed/site\nsetsid python3 -m http.server 8000 --bind 127.0.0.1 "
        ">/var/log/site.log 2>&1 < /dev/null &\nsleep 2\n",
        "python3 -c \"import urllib.request; print(urllib.request.urlopen("
        "'http://127.0.0.1:8000/', timeout=5).read().decode())\" 2>/dev/null | grep -q Hello && "
        "echo \"Setup successful\" || echo \"Setup failed\""),
    "dependency_resolution": (
        "`pip install -r /testbed/requirements.txt` fails with a resolver conflict. Fix the "
        "requirements (keep requests==2.31.0) and install them system-wide.",
        {"requirements.txt": "requests==2.31.0\nurllib3==1.20\n"},
        "set -e\napt-get update -qq\napt-get install -y -qq --no-install-recommends python3-pip\n"
        "sed -i 's/^urllib3==.*/urllib3==2.0.7/' /testbed/requirements.txt\n"
        "pip install --break-system-packages -q -r /testbed/requirements.txt\n",
        "grep -qx 'requests==2.31.0' /testbed/requirements.txt && python3 -c \"import requests; "
        "assert requests.__version__ == '2.31.0'\" 2>/dev/null && python3 -m pip check >/dev/null "
        "2>&1 && echo \"Setup successful\" || echo \"Setup failed\""),
    "reposetup": (
        "Set up the repository in /testbed so that its package can be imported.",
        {},
        "set -e\napt-get update -qq\napt-get install -y -qq --no-install-recommends python3-pip\n"
        "pip install --break-system-packages -q /testbed\n",
        "python3 -c 'import REPLACE_WITH_MODULE' 2>/dev/null && echo \"Setup successful\" || "
        "echo \"Setup failed\""),
}


def builtin_tasks_file() -> Path:
    """benchsmith's own task set, shipped in the package (fixtures and solutions next to it)."""
    return Path(__file__).resolve().parent / "builtin" / "tasks.jsonl"


def scaffold_task(folder: Path, instance_id: str, task_type: str, repo_url: str | None = None,
                  base_commit: str | None = None) -> list[Path]:
    """Append a new task to ``folder/tasks.jsonl`` and write its fixture folder and reference
    solution; return the paths written."""
    if task_type not in TASK_TYPES:
        raise BenchsmithError(f"unknown task type {task_type!r}: use one of {', '.join(TASK_TYPES)}")
    if not re.fullmatch(r"[A-Za-z0-9][\w.+-]*", instance_id):
        raise BenchsmithError(f"instance_id {instance_id!r}: use letters, digits, '.', '_', '+', '-'")
    if task_type == "reposetup" and not (repo_url and base_commit):
        raise BenchsmithError("a reposetup task needs --repo-url and --base-commit")
    tasks = folder / "tasks.jsonl"
    if tasks.is_file() and any(json.loads(line).get("instance_id") == instance_id
                               for line in tasks.read_text(encoding="utf-8").splitlines()
                               if line.strip()):
        raise BenchsmithError(f"{tasks} already has a task {instance_id}")
    sentence, files, solution, success = _TEMPLATES[task_type]
    written = []
    for name, content in files.items():
        path = folder / "fixtures" / instance_id / name
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(content, encoding="utf-8")
        written.append(path)
    solution_path = folder / "solutions" / f"{instance_id}.sh"
    solution_path.parent.mkdir(parents=True, exist_ok=True)
    solution_path.write_text(solution, encoding="utf-8")
    record: dict[str, object] = {
        "instance_id": instance_id, "task_type": task_type, "base_image": "ubuntu:22.04",
        "problem_statement": _STATEMENT.format(task=sentence), "success_command": success,
        "solution": f"solutions/{instance_id}.sh"}
    if files:
        record["fixtures"] = instance_id
    if task_type == "reposetup":
        record.update(repo_url=repo_url, base_commit=base_commit)
    folder.mkdir(parents=True, exist_ok=True)
    with open(tasks, "a", encoding="utf-8") as handle:
        handle.write(json.dumps(record) + "\n")
    return [tasks, solution_path, *written]
