"""WHAT: dataset analysis — per-instance characteristics, tables, figures, an HTML report."""

from benchsmith.analysis.characteristics import CHARACTERISTICS, DESCRIPTIONS, characteristics
from benchsmith.analysis.report import analyze

__all__ = ["CHARACTERISTICS", "DESCRIPTIONS", "analyze", "characteristics"]
