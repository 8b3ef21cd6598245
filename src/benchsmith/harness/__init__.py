"""How things run, on any sandbox: checkouts, rendering plans and test specs into commands (once),
patches, work trees with checkpoints, test runs with typed results, and JSONL files.

Setup, mining and evaluation all build on this layer; it imports only ``core``, ``instance``,
``sandbox`` and ``parsing``.
"""

from benchsmith.harness.behaviour import Behaviour, classify, run_instance_tests
from benchsmith.harness.checkout import Checkout, materialize, resolve, resolve_source
from benchsmith.harness.jsonl import JsonlWriter, load_finished, read_records
from benchsmith.harness.patches import runnable_test_files, split_patch, touched_files
from benchsmith.harness.prepare import prepare_sandbox
from benchsmith.harness.render import instance_spec, plan_spec, render, render_spec
from benchsmith.harness.testrun import TestRun, run_tests
from benchsmith.harness.worktree import ApplyResult, Worktree

__all__ = [
    "ApplyResult", "Behaviour", "Checkout", "JsonlWriter", "TestRun", "Worktree", "classify",
    "instance_spec", "load_finished", "materialize", "prepare_sandbox", "read_records", "render",
    "plan_spec", "render_spec", "resolve", "resolve_source", "run_instance_tests", "run_tests",
    "runnable_test_files", "split_patch", "touched_files",
]
