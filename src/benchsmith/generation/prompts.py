"""The prompts, kept as versioned files in ``prompts/`` and recorded with every prediction by
name, version and a digest of their text."""

from __future__ import annotations

import hashlib
from functools import cache
from pathlib import Path
from string import Template

from benchsmith.generation.extract import PatchFormat

PROMPTS = Path(__file__).with_name("prompts")
VERSION = "v1"


@cache
def _template(name: str) -> str:
    return (PROMPTS / f"{name}.{VERSION}.txt").read_text(encoding="utf-8")


def _version(*names: str) -> str:
    digest = hashlib.sha256("\0".join(_template(n) for n in names).encode()).hexdigest()[:8]
    return f"{'+'.join(names)}.{VERSION}@{digest}"


def generation_prompt(mode: str, patch_format: PatchFormat, issue: str, code: str) -> tuple[str, str]:
    """(prompt, version) asking for tests (mode "test") or a fix (mode "fix") in `patch_format`."""
    task = "test" if mode == "test" else "fix"
    format_name = "custom_diff_format" if patch_format == "custom" else "unified_diff_format"
    text = Template(_template(task)).safe_substitute(
        issue=issue.strip(), code=code.rstrip() or "(no files)", format=_template(format_name).strip())
    return text, _version(task, format_name)


def judge_prompt(issue: str, output: str) -> tuple[str, str]:
    """(prompt, version) asking whether a failing test's output shows the issue (LIBRO)."""
    text = Template(_template("libro_judge")).safe_substitute(issue=issue.strip(),
                                                              output=output.strip())
    return text, _version("libro_judge")
