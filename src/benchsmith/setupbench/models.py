"""Typed records of a setup-agent benchmark run: how it is configured and one result per task."""

from __future__ import annotations

from typing import Any, Literal

from pydantic import BaseModel, Field

Verdict = Literal["success", "failed", "error"]


class RunOptions(BaseModel):
    """How tasks are run (recorded with every result)."""

    agent: str
    """The agent: noop, oracle, benchsmith, or a command run inside the container."""
    timeout_s: float = 7200
    """Wall-clock limit of the agent; it is killed (with its whole session) past it."""
    success_timeout_s: float = 300
    """Limit of the success command."""
    pre_runner_timeout_s: float = 1800
    """Limit of the task's pre-runner script."""
    mirrors: str | None = None
    """Folder of local repository mirrors (``owner+name/repo``), tried before `repo_url`."""
    fixtures: str | None = None
    """Root of the fixture folders (default: ``fixtures/`` next to the tasks file)."""
    logs: str | None = None
    """Folder of the per-task logs (default: ``<out>.logs/`` next to the results file)."""


class TaskResult(BaseModel):
    """The outcome of one task: the verdict, its reason, and how it was produced."""

    input: str
    """The task's instance_id (what resuming matches on)."""
    instance_id: str
    task_type: str
    agent: str
    verdict: Verdict
    reason: str = ""
    """One line: why the task failed or could not be run (empty on success)."""
    run: int = 1
    """Which repetition (``check`` runs every task three times)."""
    image: str | None = None
    """The image the container was started from."""
    image_note: str = ""
    """How that image was obtained (local, pulled, a stand-in for the one asked for)."""
    notes: list[str] = Field(default_factory=list)
    """What the harness could not do as asked (files a partial mirror lacks, ...)."""
    agent_exit_code: int | None = None
    timed_out: bool = False
    agent_s: float = 0.0
    """Wall-clock time of the agent."""
    harness_s: float = 0.0
    """Container start to verdict, without the agent's time (and without the removal)."""
    cleanup_s: float = 0.0
    """Removing the container after the verdict."""
    timings: dict[str, float] = Field(default_factory=dict)
    """Seconds per phase: image, testbed (container start, clone, fixtures), pre_runner,
    agent, success_command."""
    total_s: float = 0.0
    success_output: str = ""
    """The tail of the success command's output."""
    logs: dict[str, str] = Field(default_factory=dict)
    """Host paths of the logs: pre_runner, agent, success."""
    metrics: dict[str, Any] = Field(default_factory=dict)
    """Steps, tokens, cost, commands, ... as the agent wrote them to $SETUPBENCH_METRICS_FILE."""
    options: dict[str, Any] = Field(default_factory=dict)
    started_at: str = ""
    benchsmith_version: str = ""
