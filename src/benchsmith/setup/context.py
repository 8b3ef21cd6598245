"""Gather what a checkout's own files say about installing and testing it.

Nothing from the repository is executed: setup.py and noxfile.py are read with ``ast``.
Malformed or undecodable files are skipped and contribute nothing.
"""

from __future__ import annotations

from pathlib import Path

from benchsmith.harness.checkout import missing_files, missing_submodules, submodule_paths
from benchsmith.harness.submodule_sources import provided_submodules
from benchsmith.setup.context_model import RepoContext
from benchsmith.setup.sources.ci import read_other_ci
from benchsmith.setup.sources.collector import Collector
from benchsmith.setup.sources.django import read_database_settings, read_django_settings
from benchsmith.setup.sources.docs import read_docs
from benchsmith.setup.sources.frameworks import detect_frameworks
from benchsmith.setup.sources.github_actions import read_github_actions
from benchsmith.setup.sources.layout import read_layout
from benchsmith.setup.sources.legacy_tests import read_legacy_test_config
from benchsmith.setup.sources.makefile import read_makefile
from benchsmith.setup.sources.nox import read_noxfile
from benchsmith.setup.sources.pyproject import read_pyproject
from benchsmith.setup.sources.pytest_config import read_conftest_options, read_pytest_config
from benchsmith.setup.sources.repo_files import RepoFiles
from benchsmith.setup.sources.requirements import (
    find_requirement_files,
    read_conda_environments,
    read_pipfile,
)
from benchsmith.setup.sources.services import read_services
from benchsmith.setup.sources.setuptools_files import read_setup_cfg, read_setup_py
from benchsmith.setup.sources.stand_ins import read_stand_ins
from benchsmith.setup.sources.test_scripts import read_test_scripts
from benchsmith.setup.sources.tox import read_tox

__all__ = ["gather_context"]

# Packaging metadata first (the first project name found wins), then CI and tool
# configuration, docs last; layout and framework detection use what came before.
READERS = (
    read_pyproject,
    read_setup_cfg,
    read_setup_py,
    read_pipfile,
    find_requirement_files,
    read_conda_environments,
    read_github_actions,
    read_services,
    read_stand_ins,
    read_other_ci,
    read_tox,
    read_noxfile,
    read_pytest_config,
    read_conftest_options,
    read_makefile,
    read_django_settings,
    read_database_settings,
    read_test_scripts,
    read_docs,
    read_layout,
    detect_frameworks,
    read_legacy_test_config,
)


def gather_context(repo_dir: Path) -> RepoContext:
    """Read every install/test-relevant file of the checkout at `repo_dir`."""
    collector = Collector(RepoFiles(repo_dir))
    for read in READERS:
        read(collector)
    collector.ctx.repo_root = str(repo_dir)
    collector.ctx.missing_submodules = missing_submodules(repo_dir)
    collector.ctx.provided_submodules = provided_submodules(repo_dir, submodule_paths(repo_dir))
    collector.ctx.missing_files = missing_files(repo_dir)
    return collector.ctx
