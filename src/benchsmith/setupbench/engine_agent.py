"""The `benchsmith` agent: the setup engine applied to a repository task (placeholder)."""

from __future__ import annotations

from benchsmith.core import BenchsmithError, ExecResult, Sandbox
from benchsmith.setupbench.tasks import SetupTask


class BenchsmithAgent:
    """benchsmith's setup engine as a SetupBench agent."""

    name = "benchsmith"

    def run(self, sandbox: Sandbox, task: SetupTask, timeout: float) -> ExecResult:
        """Set the repository in /testbed up system-wide."""
        raise BenchsmithError("the benchsmith agent is not implemented yet")
