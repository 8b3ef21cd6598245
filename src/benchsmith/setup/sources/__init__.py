"""Readers for the files a repository uses to describe its install and test steps.

Each module reads one kind of file through :class:`RepoFiles` (which never raises on
malformed or undecodable content) and records what it finds in a :class:`Collector`.
"""

from benchsmith.setup.sources.collector import Collector
from benchsmith.setup.sources.repo_files import RepoFiles

__all__ = ["Collector", "RepoFiles"]
