"""LLM-assisted repair (optional, off by default): when the rules have no repair for a
diagnosis, a model proposes a change to the structured :class:`Plan` (a JSON object checked
against it, never free shell). The change is recorded as the model's ("model: ...")."""

from __future__ import annotations

import json
import re
import threading
from pathlib import Path
from string import Template
from typing import Any

from pydantic import ValidationError

from benchsmith.core import Diagnosis, ExecResult, Model, Plan, Repairer

PROMPT = Path(__file__).with_name("prompts") / "plan_change.v1.txt"
PROMPT_VERSION = "plan_change.v1"
LISTS = ("packages", "extras", "requirement_files", "build_requirements", "apt_packages",
         "disabled_plugins", "deselect")
MAPPINGS = ("exclude_newer_packages", "ini_overrides")
SCALARS = ("python", "build_isolation", "editable", "install_project", "prerelease")
EVIDENCE_CHARS = 3000
_OBJECT = re.compile(r"\{.*\}", re.DOTALL)


def load_llm(spec: str, base_url: str | None = None) -> Any:
    """The model named by `spec` with its call cache (BENCHSMITH_CACHE/llm.sqlite), checked:
    a missing key or SDK raises one line now."""
    from benchsmith.harness.checkout import cache_dir
    from benchsmith.llm import LLM, CallCache, Prices, parse_model

    llm = LLM(parse_model(spec, base_url=base_url, timeout_s=120, max_retries=4),
              CallCache(cache_dir() / "llm.sqlite"), Prices.load())
    llm.check()
    return llm


class ModelRepairer:
    """A :class:`Repairer`: the rules diagnose and repair first; the model only where they
    have nothing, at most `max_calls` times per setup (setups of a batch run in threads, each
    with its own count)."""

    def __init__(self, rules: Repairer, model: Model, max_calls: int = 4) -> None:
        self.rules, self.model, self.max_calls = rules, model, max_calls
        self.calls = 0  # model calls made in all (each one counts in its record's llm_calls)
        self.problems: list[str] = []  # answers that could not be used, one line each
        self._lock = threading.Lock()
        self._setup = threading.local()

    def begin_setup(self) -> None:
        """A setup starts in this thread: its own budget of calls."""
        self._setup.calls = 0

    @property
    def setup_calls(self) -> int:
        """Calls made by the current setup of this thread."""
        return getattr(self._setup, "calls", 0)

    def diagnose(self, plan: Plan, failed: ExecResult, phase: str, context: Any) -> Diagnosis:
        """The rules' diagnosis."""
        return self.rules.diagnose(plan, failed, phase, context)

    def repair(self, plan: Plan, diagnosis: Diagnosis, context: Any) -> tuple[Plan, str] | None:
        """The rules' repair, else the model's change to the plan (None when it has none)."""
        repaired = self.rules.repair(plan, diagnosis, context)
        if repaired is not None or diagnosis.infrastructure or self.setup_calls >= self.max_calls:
            return repaired
        self._setup.calls = self.setup_calls + 1
        with self._lock:
            self.calls += 1
        answer = self.model.complete(prompt_for(plan, diagnosis))
        try:
            changed, why = apply_change(plan, answer)
        except ValueError as exc:
            self.problems.append(f"{diagnosis.kind}: {exc}")
            return None
        return changed, f"model: {why}"


def prompt_for(plan: Plan, diagnosis: Diagnosis) -> str:
    """The question put to the model about one diagnosis."""
    editable = plan.model_dump(mode="json", include=set(LISTS + MAPPINGS + SCALARS))
    return Template(PROMPT.read_text(encoding="utf-8")).safe_substitute(
        plan=json.dumps(editable, indent=1), kind=diagnosis.kind, reason=diagnosis.reason,
        evidence=diagnosis.evidence[-EVIDENCE_CHARS:] or "(none)")


def apply_change(plan: Plan, answer: str) -> tuple[Plan, str]:
    """(the changed plan, a description) from the model's JSON answer; ValueError when the
    answer is no such object, names a field it may not change, or makes an invalid plan."""
    found = _OBJECT.search(answer)
    try:
        data = json.loads(found.group(0)) if found else None
    except json.JSONDecodeError:
        data = None
    if not isinstance(data, dict):
        raise ValueError("the model's answer holds no JSON object")
    change = data.get("change", {})
    if not isinstance(change, dict):
        raise ValueError("'change' is not an object")
    unknown = sorted(set(change) - set(LISTS + MAPPINGS + SCALARS))
    if unknown:
        raise ValueError(f"the model may not change {', '.join(unknown)}")
    values = plan.model_dump(mode="json")
    for name, value in change.items():
        if name in LISTS:
            items = value if isinstance(value, list) else [value]
            values[name] = list(dict.fromkeys([*values[name], *items]))
        elif name in MAPPINGS:
            if not isinstance(value, dict):
                raise ValueError(f"{name} must be an object")
            values[name] = {**values[name], **value}
        else:
            values[name] = value
    try:
        changed = Plan.model_validate(values)
    except ValidationError as exc:
        error = exc.errors()[0]
        raise ValueError(f"invalid plan change: {'.'.join(map(str, error['loc']))}: {error['msg']}") from None
    if changed == plan:
        raise ValueError("the model's change changes nothing")
    fields = ", ".join(f"{name}={json.dumps(value)}" for name, value in change.items())
    why = str(data.get("why", "")).strip().splitlines()[0][:200] if data.get("why") else ""
    changed.notes = [*changed.notes, f"model ({PROMPT_VERSION}): {fields}"]
    return changed, f"{fields}" + (f" ({why})" if why else "")
