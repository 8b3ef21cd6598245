"""Run test commands under coverage.py inside a sandbox, with per-test contexts.

coverage is installed into the instance's virtualenv when missing, pinned to the instance's
date like everything else. pytest-cov and pytest-xdist are neutralised for these runs
(`--no-cov`, `-n 0`): both would take the measurement away from the outer coverage process.
"""

from __future__ import annotations

import json
import posixpath
import shlex
from importlib import resources

from benchsmith.core import Sandbox
from benchsmith.evaluation.changecov import CoverageData, coverage_from_report
from benchsmith.harness.render import render_spec
from benchsmith.instance import TestSpec

COV_DIR = "../benchsmith-cov"
REPORT_SCRIPT = f"{COV_DIR}/covreport.py"
PROBE_CACHE = "../benchsmith-coverage-probe"  # "tools" or "" (own coverage), then the words
_END = "BENCHSMITH_COVREPORT_END"


class CoverageRunner:
    """Wraps test commands so they also write a coverage report of chosen files.

    The project's own coverage is used when it is 5.0 or newer (JSON reports, contexts);
    otherwise a separate copy is installed next to the checkout and put first on PYTHONPATH, so
    the project's environment itself is never changed.
    """

    def __init__(self, sandbox: Sandbox, exclude_newer: str, timeout: float = 600) -> None:
        self.sandbox = sandbox
        self.error = ""
        self.prefix = ""
        tools = posixpath.join(posixpath.dirname(sandbox.workdir.rstrip("/")), "benchsmith-tools")
        # One command clears the run files, writes the report script and reads what an earlier
        # evaluation in this environment found (the environment does not change between them).
        script = (resources.files("benchsmith.evaluation") / "covreport.py").read_text()
        known = sandbox.exec(f"rm -rf {COV_DIR} && mkdir -p {COV_DIR} && cat > {REPORT_SCRIPT} "
                             f"<<'{_END}'\n{script}\n{_END}\ncat {PROBE_CACHE} 2>/dev/null",
                             timeout=60).output.splitlines()
        words = known[1].split() if len(known) == 2 and _usable(known[1].split()) else []
        cached = bool(words)
        if cached:
            self.prefix = known[0] and f"export PYTHONPATH={tools}${{PYTHONPATH:+:$PYTHONPATH}}; "
        else:
            words = self._probe(timeout)
        if not _usable(words):
            # exported, so it reaches python past a service start (`benchsmith-services && ...`)
            self.prefix = f"export PYTHONPATH={tools}${{PYTHONPATH:+:$PYTHONPATH}}; "
            words = self._probe(timeout)
            for pin in (exclude_newer, ""):  # coverage 5 may postdate the instance
                if _usable(words):
                    break
                install = sandbox.exec(
                    f"uv pip install --quiet --target {tools} 'coverage>=5'", timeout=timeout,
                    env={"UV_EXCLUDE_NEWER": pin} if pin else None)
                if not install.ok:
                    self.error = f"installing coverage failed: {install.output.strip()[-200:]}"
                words = self._probe(timeout)
        self.available = _usable(words)
        if self.available:
            self.error = ""
            if not cached:
                found = f"{'tools' if self.prefix else ''}\n{' '.join(words)}\n"
                sandbox.write_file(PROBE_CACHE, found.encode())
        elif not self.error:
            self.error = f"coverage is not usable here: {' '.join(words)[:200]}"
        self.version = words[0] if words else ""
        self.pytest_cov = len(words) >= 3 and words[1] == "True"
        self.xdist = len(words) >= 3 and words[2] == "True"

    def _probe(self, timeout: float) -> list[str]:
        """[coverage version, pytest-cov present, xdist present] as the tests would see them."""
        probe = ("import coverage, importlib.util as u; print(coverage.__version__, "
                 "bool(u.find_spec('pytest_cov')), bool(u.find_spec('xdist')))")
        result = self.sandbox.exec(f"{self.prefix}python -c {shlex.quote(probe)}", timeout=timeout)
        return result.output.split() if result.ok else []

    def command(self, spec: TestSpec, files: list[str], name: str, include: list[str]) -> str:
        """The command running `files` as `spec` says, measured under coverage (data and rc
        file named after `name`, only the `include` files measured)."""
        rc = f"{COV_DIR}/{name}.rc"
        lines = ["[run]", f"data_file = {COV_DIR}/{name}.data", "relative_files = True",
                 "dynamic_context = test_function", "include ="]
        lines += [f"    {path}" for path in include] or ["    __nothing__"]
        self.sandbox.write_file(rc, ("\n".join(lines) + "\n").encode())
        extra = (("--no-cov",) if self.pytest_cov else ()) + (("-n", "0") if self.xdist else ())
        launcher = ("python", "-m", "coverage", "run", f"--rcfile={rc}", "-m")
        return self.prefix + render_spec(spec, files, launcher=launcher, pytest_extra=extra)

    def collect(self, name: str) -> CoverageData:
        """The coverage of run `name` (empty when nothing was measured), read from its data
        file by :mod:`benchsmith.evaluation.covreport` in the sandbox."""
        report = f"{COV_DIR}/{name}.json"
        result = self.sandbox.exec(f"{self.prefix}python {REPORT_SCRIPT} {report} "
                                   f"{COV_DIR}/{name}.rc", timeout=600)
        if not result.ok:
            self.error = f"reading the coverage of {name} failed: {result.output.strip()[-200:]}"
            return CoverageData()
        runs = json.loads(self.sandbox.read_file(report).decode("utf-8", "replace"))
        return coverage_from_report(runs.get(name) or {})


def _usable(words: list[str]) -> bool:
    """A probe answer with coverage 5.0 or newer (JSON reports and dynamic contexts)."""
    if len(words) < 3:
        return False
    major = words[0].split(".", 1)[0]
    return major.isdigit() and int(major) >= 5
