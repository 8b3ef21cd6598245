"""The setup engine on the Docker backend: same engine, plus Debian packages via apt."""

from __future__ import annotations

import shutil
from pathlib import Path

import pytest

from benchsmith.sandbox import DockerSandboxConfig, LocalSandboxConfig
from benchsmith.setup.engine import SetupEngine, SetupOptions

from .conftest import PIN_DATE
from .test_setup_engine import CALC, PYPROJECT_TEST_EXTRA

pytestmark = [pytest.mark.slow, pytest.mark.docker]

# The tests shell out to `fossil`, a small Debian package that neither the host nor the base has.
NEEDS_FOSSIL = {
    "pyproject.toml": PYPROJECT_TEST_EXTRA,
    "src/calc/__init__.py": CALC,
    "tests/test_tool.py": """
        import subprocess

        def test_fossil_version():
            result = subprocess.run(["fossil", "version"], capture_output=True, text=True, check=True)
            assert "fossil" in result.stdout.lower()

        def test_plain():
            assert 1 + 1 == 2
    """,
}


def test_debian_package_repair_validates_on_docker_only(make_repo, tmp_path: Path) -> None:
    assert shutil.which("fossil") is None, "this test needs a host without fossil"
    repo = make_repo("needs-fossil", NEEDS_FOSSIL)

    docker = SetupEngine(SetupOptions(sandbox=DockerSandboxConfig(), use_refdb=False))
    record = docker.setup(str(repo.path), on_date=PIN_DATE)
    assert record.status == "validated", record.failure_reason
    assert record.backend == "docker"
    first = record.iterations[0]
    assert first.diagnosis is not None and first.diagnosis.kind == "system_packages"
    assert first.repair == "install Debian packages fossil"
    assert record.install[0].startswith("apt-get update") and "fossil" in record.install[0]

    local = SetupEngine(SetupOptions(sandbox=LocalSandboxConfig(tmp_dir=str(tmp_path / "boxes")),
                                     use_refdb=False))
    failed = local.setup(str(repo.path), on_date=PIN_DATE)
    assert failed.status == "failed"
    assert failed.failure_reason is not None
    assert "needs Debian packages: fossil" in failed.failure_reason
    assert "use --backend docker" in failed.failure_reason
    assert len(failed.iterations) == 1
    assert not any(c.startswith("apt-get") for c in failed.install)
