"""Published datasets: give SWE-bench-format instances that ship no environment a validated,
runnable one, checked against their own labels (`benchsmith prepare`)."""

from benchsmith.datasets.labels import LabelCheck, check_labels, match
from benchsmith.datasets.prepare import Preparer, Published, Verdict, judge, read_published

__all__ = ["LabelCheck", "Preparer", "Published", "Verdict", "check_labels", "judge", "match",
           "read_published"]
