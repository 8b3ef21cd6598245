"""The setup-agent benchmark: run, score and author SetupBench-style tasks.

Tasks (published SetupBench JSONL, or benchsmith's own in :func:`builtin_tasks_file`) run each
in a fresh container from the task's image; an agent sets the task up as a black box, and the
task's `success_command`, run in a fresh login shell, decides the verdict.
"""

from benchsmith.setupbench.agents import BUILTIN_AGENTS, Agent, make_agent
from benchsmith.setupbench.authoring import TASK_TYPES, builtin_tasks_file, scaffold_task
from benchsmith.setupbench.batch import CheckOutcome, check_tasks, run_tasks
from benchsmith.setupbench.models import RunOptions, TaskResult
from benchsmith.setupbench.report import html_page, read_results, summarize, table_lines
from benchsmith.setupbench.runner import run_task, verdict_of
from benchsmith.setupbench.tasks import SetupTask, TaskProblem, load_tasks

__all__ = [
    "BUILTIN_AGENTS", "TASK_TYPES", "Agent", "CheckOutcome", "RunOptions", "SetupTask",
    "TaskProblem", "TaskResult", "builtin_tasks_file", "check_tasks", "html_page", "load_tasks",
    "make_agent", "read_results", "run_task", "run_tasks", "scaffold_task", "summarize",
    "table_lines", "verdict_of",
]
