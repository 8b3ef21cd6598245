"""Test-mode runs that do not depend on the prediction, kept once per instance and reused.

Of test mode's six runs, the four without the predicted tests (no test patch and the gold
test patch, each before and after the gold fix) are the same for every prediction that runs
the same test modules: they are stored under the cache, keyed by the instance's environment,
its test spec, the gold patches, the modules run and benchsmith's version, and reused across
predictions, runs and models. Runs with an infrastructure problem are never stored.
"""

from __future__ import annotations

import hashlib
import json
import os
import shutil
from pathlib import Path

from pydantic import BaseModel, ValidationError

from benchsmith import __version__
from benchsmith.evaluation.changecov import CoverageData
from benchsmith.evaluation.environment import environment_key
from benchsmith.harness.checkout import cache_dir
from benchsmith.harness.render import instance_spec
from benchsmith.harness.testrun import TestRun
from benchsmith.instance import TaskInstance


class StoredRuns(BaseModel):
    """One test state's runs before and after the gold fix, with their coverage."""

    before: TestRun
    after: TestRun
    coverage_before: CoverageData
    coverage_after: CoverageData


class RunCache:
    """Prediction-independent runs of test mode, on disk (``BENCHSMITH_CACHE/swt-runs``)."""

    def __init__(self, root: Path | None = None) -> None:
        self.root = root or cache_dir() / "swt-runs"

    def key(self, instance: TaskInstance, state: str, files: list[str], include: list[str],
            coverage: bool) -> str:
        """What the runs of `state` depend on, hashed."""
        parts = [__version__, environment_key(instance).digest, state, instance.patch,
                 instance.test_patch if state == "gold" else "", *instance.test,
                 instance_spec(instance).model_dump_json(), json.dumps(sorted(files)),
                 json.dumps(include), str(coverage)]
        return hashlib.sha256("\0".join(parts).encode()).hexdigest()[:20]

    def get(self, instance: TaskInstance, key: str, log_dir: Path) -> StoredRuns | None:
        """The stored runs (their logs copied into `log_dir`), or None."""
        path = self.root / instance.instance_id / f"{key}.json"
        try:
            stored = StoredRuns.model_validate_json(path.read_text(encoding="utf-8"))
        except (OSError, ValidationError, ValueError):
            return None
        for run in (stored.before, stored.after):
            if run.log and Path(run.log).is_file():
                copy = log_dir / Path(run.log).name
                if not copy.exists():
                    log_dir.mkdir(parents=True, exist_ok=True)
                    shutil.copyfile(run.log, copy)
                run.log = str(copy)
        return stored

    def put(self, instance: TaskInstance, key: str, runs: StoredRuns) -> None:
        """Store the runs unless one of them cannot be trusted."""
        if runs.before.infrastructure or runs.after.infrastructure:
            return
        directory = self.root / instance.instance_id
        directory.mkdir(parents=True, exist_ok=True)
        tmp = directory / f"{key}.tmp"
        tmp.write_text(runs.model_dump_json(), encoding="utf-8")
        os.replace(tmp, directory / f"{key}.json")
