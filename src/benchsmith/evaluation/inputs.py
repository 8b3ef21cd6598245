"""What an evaluation reads: task instances and predictions, each problem reported on one line."""

from __future__ import annotations

import hashlib
import json
from pathlib import Path
from typing import Any

from pydantic import BaseModel, Field, ValidationError, field_validator

from benchsmith.core import BenchsmithError

GOLD = "gold"


class EvalInstance(BaseModel):
    """The fields of a SWE-bench instance an evaluation needs, plus how to install and test it."""

    instance_id: str
    repo: str
    base_commit: str
    patch: str = ""
    test_patch: str = ""
    FAIL_TO_PASS: list[str] = Field(default_factory=list)
    PASS_TO_PASS: list[str] = Field(default_factory=list)
    FAIL_TO_FAIL: list[str] = Field(default_factory=list)  # benchsmith's: fail with the gold fix too
    PASS_TO_FAIL: list[str] = Field(default_factory=list)
    install: list[str] = Field(default_factory=list)
    test: list[str] = Field(default_factory=list)
    python: str = ""
    exclude_newer: str = ""
    runner: str = ""
    image: str | None = None
    created_at: str = ""

    @field_validator("FAIL_TO_PASS", "PASS_TO_PASS", "FAIL_TO_FAIL", "PASS_TO_FAIL", mode="before")
    @classmethod
    def _decode_list(cls, value: Any) -> Any:
        # SWE-bench stores these lists JSON-encoded in a string.
        return json.loads(value) if isinstance(value, str) else value

    @property
    def test_runner(self) -> str:
        """"pytest" or "unittest", from the recorded runner or the test command."""
        if self.runner in {"pytest", "unittest"}:
            return self.runner
        return "unittest" if any("unittest" in c for c in self.test) else "pytest"


class Prediction(BaseModel):
    """One model output in SWE-bench's format."""

    instance_id: str
    model_name_or_path: str = "unknown"
    model_patch: str = ""

    @property
    def model(self) -> str:
        """A file-name-safe model name (the last component of a path-like name)."""
        name = self.model_name_or_path.rstrip("/").rsplit("/", 1)[-1] or "unknown"
        return "".join(c if c.isalnum() or c in "._-" else "_" for c in name)

    def digest(self, *extra: str) -> str:
        """A fingerprint of the prediction (and of anything else that decides its result)."""
        return hashlib.sha256("\0".join([self.model_patch, *extra]).encode()).hexdigest()[:16]


def _records(path: Path, what: str) -> list[tuple[str, Any]]:
    """(where, record) for every JSON record of a JSON list/object or JSONL file."""
    try:
        text = path.read_text(encoding="utf-8")
    except FileNotFoundError:
        raise BenchsmithError(f"{what} file not found: {path}") from None
    except (OSError, UnicodeDecodeError) as exc:
        raise BenchsmithError(f"cannot read {what} file {path}: {exc}") from None
    stripped = text.lstrip()
    if stripped.startswith(("[", "{")):
        try:
            data = json.loads(text)
        except json.JSONDecodeError:
            data = None  # JSONL starts with "{" too
        if isinstance(data, list):
            return [(f"{path.name}[{i}]", item) for i, item in enumerate(data)]
        if isinstance(data, dict):
            if "instance_id" in data:
                return [(path.name, data)]
            # {instance_id: prediction}, as some tools write them
            return [(f"{path.name}[{key!r}]", {"instance_id": key, **item})
                    if isinstance(item, dict) else (f"{path.name}[{key!r}]", item)
                    for key, item in data.items()]
    records: list[tuple[str, Any]] = []
    for number, line in enumerate(text.splitlines(), start=1):
        if not line.strip():
            continue
        try:
            records.append((f"{path.name}:{number}", json.loads(line)))
        except json.JSONDecodeError as exc:
            records.append((f"{path.name}:{number}", f"not JSON ({exc.msg})"))
    return records


def load_instances(path: Path) -> tuple[dict[str, EvalInstance], list[str]]:
    """Instances by ID and one line per problem (bad record, duplicate ID, no test command)."""
    instances: dict[str, EvalInstance] = {}
    problems: list[str] = []
    for where, record in _records(path, "instances"):
        if not isinstance(record, dict):
            problems.append(f"{where}: {record if isinstance(record, str) else 'not a JSON object'}")
            continue
        try:
            instance = EvalInstance.model_validate(record)
        except (ValidationError, json.JSONDecodeError) as exc:
            problems.append(f"{where}: invalid instance: {_first_error(exc)}")
            continue
        if instance.instance_id in instances:
            problems.append(f"{where}: duplicate instance {instance.instance_id}: the first one is used")
        elif not instance.test:
            problems.append(f"{where}: instance {instance.instance_id} has no test command: skipped")
        else:
            instances[instance.instance_id] = instance
    return instances, problems


def load_predictions(source: str, instances: dict[str, EvalInstance],
                     mode: str) -> tuple[list[Prediction], list[str]]:
    """Predictions to evaluate and one line per problem; "gold" makes them from the instances."""
    if source == GOLD:
        return [Prediction(instance_id=i.instance_id, model_name_or_path=GOLD,
                           model_patch=i.patch if mode == "fix" else i.test_patch)
                for i in instances.values()], []
    predictions: dict[str, Prediction] = {}
    problems: list[str] = []
    for where, record in _records(Path(source), "predictions"):
        if not isinstance(record, dict):
            problems.append(f"{where}: {record if isinstance(record, str) else 'not a JSON object'}")
            continue
        patch = record.get("model_patch")
        if patch is None:
            patch = ""
        if not isinstance(patch, str) or "\0" in patch:
            problems.append(f"{where}: model_patch of {record.get('instance_id')} is not text: skipped")
            continue
        try:
            prediction = Prediction.model_validate({**record, "model_patch": patch})
        except ValidationError as exc:
            problems.append(f"{where}: invalid prediction: {_first_error(exc)}")
            continue
        if prediction.instance_id not in instances:
            problems.append(f"{where}: unknown instance {prediction.instance_id}: skipped")
        elif prediction.instance_id in predictions:
            problems.append(f"{where}: duplicate prediction for {prediction.instance_id}: "
                            "the first one is used")
        else:
            predictions[prediction.instance_id] = prediction
    return list(predictions.values()), problems


def _first_error(exc: Exception) -> str:
    if isinstance(exc, ValidationError):
        error = exc.errors()[0]
        where = ".".join(str(p) for p in error["loc"]) or "record"
        return f"{where}: {error['msg']}"
    return str(exc).splitlines()[0]
