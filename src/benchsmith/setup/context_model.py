"""What the repository's own files say about installing and testing it."""

from __future__ import annotations

from typing import Literal

from pydantic import BaseModel, Field

from benchsmith.core import Service, TestScript


class Hint(BaseModel):
    """One command or fact found in a file, with where it came from."""

    value: str
    source: str  # repository-relative path, e.g. ".github/workflows/ci.yml"


class RepoContext(BaseModel):
    """Everything extracted from a checkout; every item records its source file."""

    repo_root: str = ""  # host path of the checkout the context was read from
    missing_submodules: list[str] = Field(default_factory=list)  # declared, but not checked out
    # not checked out, but provided from the package index: path -> "name==version"
    provided_submodules: dict[str, str] = Field(default_factory=dict)
    missing_files: list[str] = Field(default_factory=list)  # tracked, but not in the source's objects
    root_files: list[str] = Field(default_factory=list)
    root_dirs: list[str] = Field(default_factory=list)
    has_python_project: bool = False
    # Packaging metadata
    project_name: str | None = None
    build_backend: str | None = None
    build_requires: list[str] = Field(default_factory=list)
    # what the project declares it needs at run time (setup.py / setup.cfg install_requires,
    # the requirement files setup.py reads), read without running anything
    install_requires: list[Hint] = Field(default_factory=list)
    requires_python: list[Hint] = Field(default_factory=list)  # specifier strings
    classifier_pythons: list[str] = Field(default_factory=list)  # "3.8", ...
    matrix_pythons: list[Hint] = Field(default_factory=list)  # from CI / tox / nox
    extras: dict[str, list[str]] = Field(default_factory=dict)  # extra -> requirements
    dependency_groups: dict[str, list[str]] = Field(default_factory=dict)
    poetry_dev_dependencies: list[str] = Field(default_factory=list)  # PEP 508 strings
    hatch_test_dependencies: list[str] = Field(default_factory=list)
    requirement_files: list[str] = Field(default_factory=list)  # all found, relative paths
    conda_packages: list[str] = Field(default_factory=list)  # names in conda environment files
    # Commands seen in CI, tox, nox, Makefile, docs (raw, one shell line each)
    install_commands: list[Hint] = Field(default_factory=list)
    # packages a testing CI job installs from a git forge (`pip install git+https://...`)
    hosted_requirements: list[Hint] = Field(default_factory=list)
    test_commands: list[Hint] = Field(default_factory=list)
    # tox / nox specifics
    tox_deps: list[Hint] = Field(default_factory=list)  # requirement strings or "-r file"
    tox_extras: list[Hint] = Field(default_factory=list)
    # pytest configuration
    pytest_config_file: str | None = None
    pytest_addopts: str = ""
    pytest_testpaths: list[str] = Field(default_factory=list)
    pytest_ini_keys: list[str] = Field(default_factory=list)
    pytest_value_options: list[str] = Field(default_factory=list)  # conftest addoption, with a value
    uses_unittest: bool = False
    uses_nose: bool = False
    pytest_mentioned: bool = False  # a pytest command, configuration, requirement or conftest.py
    nose_config: dict[str, str] = Field(default_factory=dict)  # setup.cfg [nosetests], lower-case keys
    test_suite: Hint | None = None  # setup()'s test_suite: what `setup.py test` ran
    test_dirs: list[str] = Field(default_factory=list)  # existing dirs like tests/, test/
    top_level_packages: list[str] = Field(default_factory=list)
    apt_packages: list[Hint] = Field(default_factory=list)  # from CI apt-get lines
    services: list[Service] = Field(default_factory=list)  # servers the tests need
    service_env: list[Hint] = Field(default_factory=list)  # "KEY=VALUE" pointing at them
    stand_ins: list[Hint] = Field(default_factory=list)  # public hosts the tests call (stand-ins)
    test_hosts: list[Hint] = Field(default_factory=list)  # hosts in the test sources' URLs
    # "KEY=VALUE" naming the settings the tests need (DJANGO_SETTINGS_MODULE): tox setenv,
    # a test command's environment prefix, manage.py's default
    settings_env: list[Hint] = Field(default_factory=list)
    # the repository's own test script, where it has a shape benchsmith runs (runtests, bin/test)
    test_script: TestScript | None = None
    test_script_runner: Literal["runtests", "bintest"] | None = None
    sources_read: list[str] = Field(default_factory=list)
