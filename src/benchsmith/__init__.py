"""benchsmith: validated, historically accurate test environments for Python repositories."""

from benchsmith.core import (
    BenchsmithError,
    Diagnosis,
    ExecResult,
    LogParser,
    Model,
    Plan,
    Planner,
    Repairer,
    Sandbox,
    TestResult,
    TestStatus,
)

__version__ = "0.1.0"

__all__ = [
    "BenchsmithError",
    "Diagnosis",
    "ExecResult",
    "LogParser",
    "Model",
    "Plan",
    "Planner",
    "Repairer",
    "Sandbox",
    "TestResult",
    "TestStatus",
    "__version__",
]
