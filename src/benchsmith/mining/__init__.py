"""Task mining: from repositories to validated, SWE-bench-compatible task instances.

``candidates`` (PyPI → permissive GitHub repositories), ``mine`` (GitHub API or local git
history → pull requests resolving issues), ``build`` (set up, run tests before/after → task
instances), ``verify`` (re-check instances from scratch), ``funnel`` (counts per stage).
"""

from benchsmith.mining.models import Outcome, PullRequest

__all__ = ["Outcome", "PullRequest"]
