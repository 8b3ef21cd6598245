"""Evaluation: score predicted fixes (SWE-bench) and predicted tests (SWT-bench).

``run`` drives an evaluation over reusable ``environment``s; ``fix``, ``swt`` and ``filtering``
grade one prediction; ``summary`` aggregates reports.
"""

from benchsmith.evaluation.models import InstanceReport, Mode

__all__ = ["InstanceReport", "Mode"]
