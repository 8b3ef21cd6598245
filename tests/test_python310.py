"""benchsmith runs on the oldest Python it declares (3.10), not only on the one it is tested with."""

from __future__ import annotations

import os
import subprocess
from pathlib import Path

import pytest

from benchsmith.sandbox.pythons import host_pythons
from benchsmith.sandbox.tools import uv_binary

ROOT = Path(__file__).resolve().parent.parent
OLDEST = "3.10"


@pytest.mark.slow
def test_the_cli_installs_imports_and_sets_up_a_repository_on_python_310(tmp_path: Path) -> None:
    interpreter = host_pythons().get(OLDEST)
    assert interpreter, f"CPython {OLDEST} is needed for this test (pyenv has it on these machines)"
    venv = tmp_path / "venv"
    uv = uv_binary()
    subprocess.run([uv, "venv", "--quiet", "-p", interpreter, str(venv)], check=True)
    python = str(venv / "bin" / "python")
    subprocess.run([uv, "pip", "install", "--quiet", "--python", python,
                    "--exclude-newer", "2025-10-01", "-e", str(ROOT)], check=True)
    modules = sorted(".".join(p.relative_to(ROOT / "src").with_suffix("").parts).removesuffix(".__init__")
                     for p in (ROOT / "src" / "benchsmith").rglob("*.py")
                     if p.name != "__main__.py")
    imported = subprocess.run([python, "-c", "import importlib, sys\n"
                               "for m in sys.argv[1:]: importlib.import_module(m)", *modules],
                              capture_output=True, text=True)
    assert imported.returncode == 0, imported.stderr[-2000:]
    env = {**os.environ, "BENCHSMITH_CACHE": str(tmp_path / "cache")}
    result = subprocess.run([str(venv / "bin" / "benchsmith"), "setup", str(ROOT / "examples" / "minicalc"),
                             "--date", "2024-06-01", "--no-refdb", "--out", str(tmp_path / "setup.json")],
                            capture_output=True, text=True, env=env, timeout=900)
    assert result.returncode == 0, result.stdout + result.stderr[-2000:]
    assert result.stdout.startswith("validated:"), result.stdout
