"""GitHub Actions workflows and composite actions: Python matrix and ``run:`` steps."""

from __future__ import annotations

from typing import Any

from benchsmith.setup.sources.coerce import as_dict, as_list, as_str
from benchsmith.setup.sources.collector import Collector
from benchsmith.setup.sources.commands import is_non_test_job
from benchsmith.setup.sources.versions import image_python, tox_env_pythons

WORKFLOW_GLOBS = (
    ".github/workflows/*.yml",
    ".github/workflows/*.yaml",
    ".github/actions/*/action.yml",
    ".github/actions/*/action.yaml",
)
PYTHON_KEYS = ("python-version", "python", "python_version", "python-versions", "py")
TOX_KEYS = ("toxenv", "tox-env", "tox_env", "tox")


def read_github_actions(c: Collector) -> None:
    """Python versions of job matrices and setup-python steps; commands of run steps."""
    paths = sorted({path for pattern in WORKFLOW_GLOBS for path in c.files.glob(pattern)})
    for path in paths:
        doc = as_dict(c.files.yaml(path))
        workflow = (path.rsplit("/", 1)[-1].rsplit(".", 1)[0], as_str(doc.get("name")) or "")
        for job_id, job in as_dict(doc.get("jobs")).items():
            job = as_dict(job)
            _matrix(c, as_dict(as_dict(job.get("strategy")).get("matrix")), path)
            container = job.get("container")
            image = as_str(as_dict(container).get("image")) or as_str(container)
            c.python(image_python(image) if image else None, path)
            testing = not any(is_non_test_job(as_str(n) or "") for n in (job_id, job.get("name"), *workflow))
            _steps(c, job.get("steps"), path, testing)
        _steps(c, as_dict(doc.get("runs")).get("steps"), path)


def _python_entries(c: Collector, entry: dict[str, Any], path: str) -> None:
    for key in PYTHON_KEYS:
        for value in as_list(entry.get(key)):
            c.python(value, path)
    for key in TOX_KEYS:
        for value in as_list(entry.get(key)):
            for minor in tox_env_pythons(value) if isinstance(value, str) else []:
                c.python(minor, path)


def _matrix(c: Collector, matrix: dict[str, Any], path: str) -> None:
    _python_entries(c, matrix, path)
    for key, values in matrix.items():
        if key == "exclude":
            continue
        for item in as_list(values):
            if isinstance(item, dict):
                _python_entries(c, as_dict(item), path)


def _steps(c: Collector, steps: Any, path: str, testing: bool = False) -> None:
    for step in as_list(steps):
        step = as_dict(step)
        uses = as_str(step.get("uses")) or ""
        if uses.startswith("actions/setup-python"):
            version = as_dict(step.get("with")).get("python-version")
            for value in version.splitlines() if isinstance(version, str) else as_list(version):
                c.python(value, path)
        run = as_str(step.get("run"))
        if run:
            c.script(run, path, testing)
