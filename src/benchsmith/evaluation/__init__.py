"""Evaluation: score predicted fixes (SWE-bench) and predicted tests (SWT-bench)."""
