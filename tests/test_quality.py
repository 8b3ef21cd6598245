"""Static checks are part of the test suite: ruff and mypy must be clean."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent


def test_ruff_is_clean() -> None:
    result = subprocess.run([sys.executable, "-m", "ruff", "check", "src", "tests"], cwd=ROOT,
                            capture_output=True, text=True)
    assert result.returncode == 0, result.stdout + result.stderr


def test_mypy_is_clean() -> None:
    result = subprocess.run([sys.executable, "-m", "mypy"], cwd=ROOT, capture_output=True, text=True)
    assert result.returncode == 0, result.stdout + result.stderr


def test_public_surface_does_not_drift() -> None:
    import benchsmith

    assert sorted(benchsmith.__all__) == [
        "BenchsmithError", "Diagnosis", "ExecResult", "LogParser", "Model", "Plan", "Planner",
        "Repairer", "Sandbox", "TestResult", "TestStatus", "__version__",
    ]
    for name in benchsmith.__all__:
        assert hasattr(benchsmith, name)
