"""JSON Lines files: appended record by record from many threads, resumable after a kill, and
the JSON/JSONL inputs users hand us, read record by record with one problem line each."""

from __future__ import annotations

import json
import os
import threading
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from pydantic import BaseModel

from benchsmith.core import BenchsmithError


@dataclass
class Resume:
    """How a re-run treats what its output file holds: answered inputs are skipped, those that
    failed too unless `retry_failed`; `announce` receives the one line that says so."""

    retry_failed: bool = False
    announce: Callable[[str], None] | None = None
    skipped: int = 0
    failed: int = 0

    def skipping(self, answered: int, failed: int) -> None:
        """Record and announce what the output file answers already: `answered` inputs, of
        which `failed` failed (skipped too, or redone with `retry_failed`)."""
        skipped = answered - failed if self.retry_failed else answered
        self.skipped, self.failed = skipped, failed
        if self.announce is None or not (skipped or failed):
            return
        if self.retry_failed:
            self.announce(f"skipped {skipped} already done (--retry-failed: redoing the "
                          f"{failed} that failed)")
        else:
            self.announce(f"skipped {skipped} already done (--retry-failed redoes the {failed} "
                          "that failed)")

    def redo(self, failed: bool) -> bool:
        """Whether an answered input is done again."""
        return failed and self.retry_failed


def load_finished(out: Path, redo: Callable[[dict[str, Any]], bool] | None = None) -> set[str]:
    """Inputs already answered in `out` (their last record counts; one for which `redo` is
    true is not an answer); a half-written last line (from a kill) is cut off."""
    return load_answers(out, redo)[0]


def load_answers(out: Path, redo: Callable[[dict[str, Any]], bool] | None = None,
                 failed: Callable[[dict[str, Any]], bool] | None = None) -> tuple[set[str], set[str]]:
    """The inputs answered in `out` (as :func:`load_finished`), and those among them whose last
    record `failed` says failed."""
    if not out.exists():
        return set(), set()
    data = out.read_bytes()
    good_end = 0
    done: set[str] = set()
    failures: set[str] = set()
    offset = 0
    for chunk in data.splitlines(keepends=True):
        offset += len(chunk)
        if not chunk.endswith(b"\n"):
            break
        try:
            record = json.loads(chunk)
        except json.JSONDecodeError:
            break
        good_end = offset
        if isinstance(record, dict) and record.get("input"):
            key = str(record["input"])
            failures.discard(key)
            if redo is not None and redo(record):
                done.discard(key)
            else:
                done.add(key)
                if failed is not None and failed(record):
                    failures.add(key)
    if good_end != len(data):
        with open(out, "r+b") as handle:
            handle.truncate(good_end)
    return done, failures


class JsonlWriter:
    """Appends one record per line, flushed and synced, from many threads."""

    def __init__(self, path: Path) -> None:
        self.path = path
        self._lock = threading.Lock()
        path.parent.mkdir(parents=True, exist_ok=True)

    def write(self, record: BaseModel | dict[str, Any]) -> None:
        """Append `record` (a model, or a JSON-ready dict) as one JSON line."""
        if isinstance(record, BaseModel):
            line = record.model_dump_json() + "\n"
        else:
            line = json.dumps(record, ensure_ascii=False) + "\n"
        with self._lock, open(self.path, "a", encoding="utf-8") as handle:
            handle.write(line)
            handle.flush()
            os.fsync(handle.fileno())


def read_records(path: Path, what: str) -> list[tuple[str, Any]]:
    """(where, record) for every record of a JSON list/object, JSONL or Parquet file, or of a
    Hugging Face dataset (:mod:`benchsmith.harness.hub`)."""
    from benchsmith.harness.hub import hub_records, is_hub_source

    if is_hub_source(path):
        return hub_records(path, what)
    if path.suffix == ".parquet":
        return _parquet_records(path, what)
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
            if "instance_id" in data or not all(isinstance(v, dict) for v in data.values()):
                return [(path.name, data)]  # one record (Multi-SWE-bench's have no instance_id)
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




def records_by_key(path: Path, key: str) -> dict[str, dict[str, Any]]:
    """The JSON lines of `path` by their `key` field (later lines win); a half-written last
    line from a kill is cut off first."""
    load_finished(path)
    found: dict[str, dict[str, Any]] = {}
    if path.exists():
        for line in path.read_text(encoding="utf-8").splitlines():
            if line.strip():
                record = json.loads(line)
                found[str(record[key])] = record
    return found


def _parquet_records(path: Path, what: str) -> list[tuple[str, Any]]:
    """Rows of a Parquet file (as the Hugging Face datasets publish them), via the optional
    pyarrow extra."""
    try:
        import pyarrow.parquet
    except ImportError:
        raise BenchsmithError("reading Parquet needs the optional extra: "
                              "pip install 'benchsmith[parquet]'") from None
    if not path.exists():
        raise BenchsmithError(f"{what} file not found: {path}")
    try:
        rows = pyarrow.parquet.read_table(path).to_pylist()
    except Exception as exc:  # pyarrow raises ArrowInvalid, OSError, ...
        raise BenchsmithError(f"cannot read {what} file {path}: {str(exc).splitlines()[0]}") from None
    return [(f"{path.name}[{i}]", row) for i, row in enumerate(rows)]
