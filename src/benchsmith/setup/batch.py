"""setup-batch: many repositories, one JSON line each, resumable after a kill."""

from __future__ import annotations

import re
import statistics
import threading
import traceback
from collections import Counter
from collections.abc import Callable, Iterable
from datetime import date
from pathlib import Path

from pydantic import BaseModel, Field

from benchsmith.core import BenchsmithError
from benchsmith.executor import Executor, ExecutorConfig, Resources, TaskOutcome
from benchsmith.executor.local import LocalExecutor
from benchsmith.harness.checkout import (
    day_not_before_commit,
    repo_name_from,
    resolve_source,
)
from benchsmith.harness.jsonl import JsonlWriter, Resume, load_answers
from benchsmith.sandbox.deadline import DeadlinePassed
from benchsmith.setup.engine import SetupEngine, SetupOptions
from benchsmith.setup.record import SetupRecord
from benchsmith.setup.refdb import ReferenceDB, ReferencePlans, ReferenceSpec

_DATE = re.compile(r"^\d{4}-\d{2}-\d{2}$")


class BatchItem(BaseModel):
    """One line of a list file."""

    line_no: int
    key: str  # normalised input text: what a finished record is matched by on resume
    source: str
    rev: str | None = None
    date: str | None = None
    # a published instance's date: never pinned before its commit's own day (the commit's
    # requirement files may need newer releases; `prepare` pins groups the same way)
    not_before_commit: bool = False
    problem: str | None = None  # set when the line is malformed


def read_list(path: Path, default_date: str | None) -> list[BatchItem]:
    """Parse `SOURCE [REV_OR_DATE]` and `SOURCE REV DATE` lines (a commit pinned to a day, as
    published instances are); malformed lines become items with a problem. A `.json`/`.jsonl`
    file is read as SWE-bench-format instances: each distinct `repo base_commit created_at`."""
    if path.suffix in (".json", ".jsonl"):
        return _instance_items(path)
    try:
        text = path.read_text(encoding="utf-8")
    except (OSError, UnicodeDecodeError) as exc:
        raise BenchsmithError(f"cannot read list file {path}: {exc}") from None
    items: list[BatchItem] = []
    for number, raw in enumerate(text.splitlines(), start=1):
        line = raw.split(" #", 1)[0].strip()
        if not line or line.startswith("#"):
            continue
        words = line.split()
        item = BatchItem(line_no=number, key=" ".join(words), source=words[0], date=default_date)
        if len(words) > 3:
            item.problem = (f"line {number}: expected 'SOURCE [REV_OR_DATE]' or 'SOURCE REV DATE', "
                            f"got {len(words)} fields")
        for position, target in enumerate(words[1:3], start=1):
            wants_date = len(words) == 3 and position == 2
            if _DATE.match(target) and (wants_date or len(words) == 2):
                try:
                    date.fromisoformat(target)
                    item.date = target
                except ValueError:
                    item.problem = f"line {number}: invalid date {target!r}"
            elif wants_date:
                item.problem = f"line {number}: invalid date {target!r}"
            elif re.fullmatch(r"[\w./@^~{}-]+", target):
                item.rev = target
            else:
                item.problem = f"line {number}: invalid revision {target!r}"
        if default_date and len(words) == 1:
            item.key = f"{words[0]} {default_date}"
        items.append(item)
    return items


def _instance_items(path: Path) -> list[BatchItem]:
    """One item per distinct (repo, base_commit) of an instance file, pinned to its creation day."""
    from benchsmith.harness.jsonl import read_records as read_json_records

    items: list[BatchItem] = []
    seen: set[str] = set()
    for number, (where, record) in enumerate(read_json_records(path, "instance"), start=1):
        if not isinstance(record, dict):
            items.append(BatchItem(line_no=number, key=where, source=where,
                                   problem=f"{where}: {record if isinstance(record, str) else 'not an object'}"))
            continue
        repo, commit = record.get("repo"), record.get("base_commit")
        day = str(record.get("created_at") or "")[:10] or None
        if not repo or not commit:
            items.append(BatchItem(line_no=number, key=where, source=str(repo or where),
                                   problem=f"{where}: needs 'repo' and 'base_commit'"))
            continue
        key = " ".join(str(w) for w in (repo, commit, day) if w)
        if key in seen:
            continue
        seen.add(key)
        item = BatchItem(line_no=number, key=key, source=str(repo), rev=str(commit), date=day,
                         not_before_commit=True)
        if day and not _DATE.match(day):
            item.problem = f"{where}: invalid created_at {record.get('created_at')!r}"
        items.append(item)
    return items


def setup_day(item: BatchItem, source: str) -> str | None:
    """The day `item` is pinned to: its date, but a published instance's never before its
    commit's own day."""
    if item.not_before_commit and item.date and item.rev:
        return day_not_before_commit(source, item.rev, item.date)
    return item.date


def infrastructure_error(record: dict[str, object]) -> bool:
    """Whether a results line ended in an error of the machinery (a crash, a lost worker), not
    in a verdict or bad input: a re-run of the batch sets it up again."""
    return record.get("status") == "error" and record.get("failure_category") != "input"


def error_record(item: BatchItem, message: str, category: str) -> SetupRecord:
    """The record for an input that could not be set up at all."""
    return SetupRecord(repo=item.source, source=item.source, commit=item.rev, date=item.date,
                       status="error", failure_category=category, failure_reason=message,
                       input=item.key)


class SetupTask(BaseModel):
    """One repository of a batch as a remote worker receives it: the line, how to reach the
    repository, the engine's options, and the repository's validated plans from the driver's
    reference database."""

    item: BatchItem
    mirrors: str | None = None
    options: SetupOptions
    references: list[ReferenceSpec] = Field(default_factory=list)


class SetupAnswer(BaseModel):
    """What a setup task returns: its record and the plans it validated (for the driver to
    store in the reference database)."""

    record: SetupRecord
    saved: list[ReferenceSpec] = Field(default_factory=list)


def set_up_item(engine: SetupEngine, item: BatchItem, mirrors: str | None) -> SetupRecord:
    """The record of one list line; bad input and crashes become error records."""
    if item.problem:
        return error_record(item, item.problem, "input")
    try:
        source = resolve_source(item.source, mirrors)
        record = engine.setup(source, rev=item.rev, on_date=setup_day(item, source))
    except (KeyboardInterrupt, DeadlinePassed):  # the task's limit is the executor's to record
        raise
    except BenchsmithError as exc:
        return error_record(item, str(exc), "input")
    except Exception as exc:  # a bug must not end the batch; its record says what happened
        last = traceback.extract_tb(exc.__traceback__)[-1]
        return error_record(item, f"internal error: {exc!r} at {last.filename}:{last.lineno}",
                            "crash")
    record.input = item.key
    return record


def setup_task(task: SetupTask, cancelled: threading.Event) -> SetupAnswer:
    """Worker side of a remote batch: an engine of its own that reads and writes the reference
    plans it was handed, never a database."""
    plans = ReferencePlans(task.references) if task.options.use_refdb else None
    engine = SetupEngine(task.options, refdb=plans)
    engine.cancelled = cancelled
    record = set_up_item(engine, task.item, task.mirrors)
    return SetupAnswer(record=record, saved=plans.saved if plans else [])


OnRecord = Callable[[BatchItem, SetupRecord, str], None]  # (line, record, node that ran it)


def run_batch(items: Iterable[BatchItem], engine: SetupEngine, out: Path, jobs: int = 1,
              mirrors: str | None = None, on_record: OnRecord | None = None,
              executor: Executor | None = None, resume: Resume | None = None) -> list[SetupRecord]:
    """Set up every item not already in `out` (on `executor`, default `jobs` local threads);
    the driver alone appends records and stores validated plans. Return this run's records.
    Infrastructure errors are always redone, records not validated with `resume.retry_failed`."""
    resume = resume or Resume()
    writer = JsonlWriter(out)
    finished, failed = load_answers(out, redo=infrastructure_error,
                                    failed=lambda record: record.get("status") != "validated")
    items = list(items)
    answered = [item for item in items if item.key in finished]
    failures = sum(1 for item in answered if item.key in failed)
    resume.skipping(len(answered), failures)
    todo = {str(n): item for n, item in enumerate(items)
            if item.key not in finished or resume.redo(item.key in failed)}
    executor = executor or LocalExecutor(ExecutorConfig(jobs=jobs))
    refdb = engine.refdb if isinstance(engine.refdb, ReferenceDB) else None
    written: list[SetupRecord] = []

    def keep(item: BatchItem, answer: SetupAnswer, node: str) -> None:
        for spec in answer.saved:
            assert refdb is not None
            refdb.store(spec)
        writer.write(answer.record)
        written.append(answer.record)
        if on_record:
            on_record(item, answer.record, node)

    def on_outcome(outcome: TaskOutcome[SetupAnswer]) -> None:
        item = todo[outcome.key]
        if outcome.value is None:  # the task, not the repository, failed: a worker died, ...
            outcome.value = SetupAnswer(record=error_record(item, outcome.error or "no result",
                                                            "infrastructure"))
        keep(item, outcome.value, outcome.node)

    for key, item in list(todo.items()):
        if item.problem:  # bad lines are answered here, without a worker
            keep(todo.pop(key), SetupAnswer(record=set_up_item(engine, item, mirrors)), "driver")
    if executor.remote:
        backend = engine.options.sandbox.type
        payloads: list[tuple[str, object]] = [
            (key, SetupTask(item=item, mirrors=mirrors, options=engine.options,
                            references=refdb.of_repo(_repo_of(item, mirrors), backend) if refdb else []))
            for key, item in todo.items()]
        executor.run(setup_task, payloads, _resources(engine), on_outcome, engine.cancel)
    else:
        def local_task(item: BatchItem, cancelled: threading.Event) -> SetupAnswer:
            return SetupAnswer(record=set_up_item(engine, item, mirrors))

        executor.run(local_task, list(todo.items()), _resources(engine), on_outcome, engine.cancel)
    return written


def _repo_of(item: BatchItem, mirrors: str | None) -> str:
    """The repository name the engine will file the item's plans under."""
    return repo_name_from(resolve_source(item.source, mirrors))


def _resources(engine: SetupEngine) -> Resources:
    return Resources(cpus=1, custom=engine.options.sandbox.node_resources)


class BatchSummary(BaseModel):
    """Counts and times over a results file."""

    total: int
    validated: int
    rate: float
    median_duration_s: float | None
    total_duration_s: float
    median_overhead: float | None  # duration_s / clean_run_s over validated records
    one_round: int  # validated by the first attempt
    failures: dict[str, int]


def summarize(records: list[SetupRecord]) -> BatchSummary:
    """Summarise records as the setup-batch table shows them."""
    validated = [r for r in records if r.status == "validated"]
    durations = [r.duration_s for r in records if r.duration_s]
    ratios = [r.duration_s / r.clean_run_s for r in validated if r.clean_run_s]
    failures = Counter(r.failure_category or r.status for r in records if r.status != "validated")
    return BatchSummary(
        total=len(records), validated=len(validated),
        rate=round(len(validated) / len(records), 4) if records else 0.0,
        median_duration_s=round(statistics.median(durations), 2) if durations else None,
        total_duration_s=round(sum(durations), 2),
        median_overhead=round(statistics.median(ratios), 3) if ratios else None,
        one_round=sum(1 for r in validated if len(r.iterations) == 1),
        failures=dict(failures),
    )


def read_records(path: Path) -> list[SetupRecord]:
    """All complete records of a JSONL results file."""
    records: list[SetupRecord] = []
    if not path.exists():
        return records
    for line in path.read_text(encoding="utf-8").splitlines():
        if line.strip():
            try:
                records.append(SetupRecord.model_validate_json(line))
            except ValueError:
                continue
    return records


def nearby_lines(records: list[SetupRecord], back: int) -> list[str]:
    """List-file lines for the commit `back` first-parent steps before each validated record."""
    from benchsmith.harness.checkout import git

    lines = []
    for record in records:
        if record.status != "validated" or not record.commit or record.commit == "worktree":
            continue
        try:
            older = git("rev-list", "--first-parent", "-n", "1", f"--skip={back}", record.commit,
                        cwd=record.source).strip()
        except BenchsmithError:
            continue
        if older:
            lines.append(f"{record.source} {older}")
    return lines
