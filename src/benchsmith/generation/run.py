"""`benchsmith generate`: one prediction per instance, written as soon as it is made, resumable.

A failure of one instance (the service, an answer without a patch, its repository or its
environment) is recorded in its prediction and the run goes on; only a refused key or an
unknown model, which every later call would meet too, stops the run.
"""

from __future__ import annotations

import json
import os
import threading
import time
from collections.abc import Callable
from concurrent.futures import ThreadPoolExecutor, as_completed
from pathlib import Path

from benchsmith import __version__
from benchsmith.core import BenchsmithError, Provenance
from benchsmith.evaluation.environment import Environments
from benchsmith.generation.models import (
    RETRIED_ON_RESUME,
    GenerateOptions,
    GenerationRecord,
)
from benchsmith.generation.repo import RepoSnapshot
from benchsmith.generation.sampling import draw
from benchsmith.generation.selection import libro, pass_at_k
from benchsmith.harness.jsonl import JsonlWriter, Resume, records_by_key
from benchsmith.instance import TaskInstance
from benchsmith.llm import LLM, LLMError, Usage


def finished(out: Path, retry_failed: bool = False) -> dict[str, dict[str, object]]:
    """Predictions already made in `out` that a resumed run keeps; the file is rewritten
    without the others (failures of the service, the budget or an environment; with
    `retry_failed`, every prediction that failed)."""
    try:
        records = records_by_key(out, "instance_id")
    except (KeyError, TypeError, ValueError, UnicodeDecodeError):
        raise BenchsmithError(f"{out} holds lines that are not predictions: choose another --out") from None
    kept = {key: r for key, r in records.items() if r.get("failure") not in RETRIED_ON_RESUME
            and not (retry_failed and r.get("failure"))}
    lines = out.read_text(encoding="utf-8").count("\n") if out.exists() else 0
    if lines != len(kept):
        tmp = out.with_suffix(".tmp")
        tmp.write_text("".join(json.dumps(r, ensure_ascii=False) + "\n" for r in kept.values()),
                       encoding="utf-8")
        os.replace(tmp, out)
    return kept


class Generator:
    """Makes predictions for instances with one model and one method."""

    def __init__(self, llm: LLM, options: GenerateOptions, out: Path, sources: dict[str, str],
                 mirrors: str | None = None, environments: Environments | None = None,
                 progress: Callable[[str], None] | None = None) -> None:
        self.llm, self.options, self.out = llm, options, out
        self.sources, self.mirrors, self.environments = sources, mirrors, environments
        self.progress = progress or (lambda message: None)
        self.work_dir = out.parent / f"{out.stem}.generate"
        self.name = f"{llm.label}+{options.method}"
        self.provenance = Provenance(benchsmith_version=__version__, backend="llm",
                                     options={**options.model_dump(mode="json"),
                                              "model": llm.label, "config": llm.config.model_dump(
                                                  mode="json", exclude={"api_key_env"})})
        self._snapshots: dict[tuple[str, str], RepoSnapshot] = {}
        self._snapshot_lock = threading.Lock()

    def run(self, instances: list[TaskInstance], jobs: int = 1,
            resume: Resume | None = None) -> list[GenerationRecord]:
        """Generate for every instance not finished in the output file (`jobs` at a time);
        return the new records. A refused key or unknown model stops the run (LLMError)."""
        resume = resume or Resume()
        failed = {key for key, r in finished(self.out).items() if r.get("failure")}
        done = finished(self.out, resume.retry_failed)
        wanted = {i.instance_id for i in instances}
        resume.skipping(len(wanted & (set(done) | failed)), len(wanted & failed))
        todo = [i for i in instances if i.instance_id not in done]
        writer = JsonlWriter(self.out)
        records: list[GenerationRecord] = []
        stop = threading.Event()  # set by a fatal error: instances not begun are left for later

        def one(instance: TaskInstance) -> GenerationRecord | None:
            if stop.is_set():
                return None
            record = self.generate_one(instance)
            writer.write(record)
            if record.failure == "provider" and record.error.startswith("fatal: "):
                stop.set()
            return record

        with ThreadPoolExecutor(max_workers=max(1, jobs)) as pool:
            futures = [pool.submit(one, instance) for instance in todo]
            try:
                for number, future in enumerate(as_completed(futures), start=1):
                    record = future.result()
                    if record is not None:
                        records.append(record)
                        self.progress(f"[{number}/{len(todo)}] {record.instance_id}: "
                                      f"{_summary(record)}")
            except KeyboardInterrupt:
                stop.set()
                pool.shutdown(wait=True, cancel_futures=True)
                raise
        fatal = next((r for r in records if r.error.startswith("fatal: ")), None)
        if fatal is not None:
            raise LLMError(fatal.error.removeprefix("fatal: "), fatal=True)
        return records

    def generate_one(self, instance: TaskInstance) -> GenerationRecord:
        """The prediction for one instance (failures recorded in it)."""
        options = self.options
        record = GenerationRecord(instance_id=instance.instance_id, model_name_or_path=self.name,
                                  method=options.method, mode=options.mode, model=self.llm.label,
                                  samples=options.samples, context=options.context,
                                  provenance=self.provenance)
        started = time.monotonic()
        with self.llm.metered() as usage:
            self._generate(instance, record)
        _usage_into(record, usage)
        record.duration_s = round(time.monotonic() - started, 3)
        return record

    def _generate(self, instance: TaskInstance, record: GenerationRecord) -> None:
        options = self.options
        responses = self.work_dir / "responses" / f"{instance.instance_id}.json"
        try:
            if options.max_cost_usd is not None and self.llm.usage.llm_cost_usd >= options.max_cost_usd:
                record.failure = "budget"
                raise BenchsmithError(f"the cost budget of ${options.max_cost_usd:g} is spent")
            record.failure = "context"
            snapshot = self._snapshot(instance)
            record.failure = "provider"
            drawn = draw(self.llm, instance, options, snapshot, responses)
            record.failure = None
            record.raw_responses = str(responses)
            record.prompt_version = drawn.prompt_version
            record.context_files, record.context_truncated = drawn.context.files, drawn.context.truncated
            record.context_tokens = drawn.context.tokens
            record.candidates = drawn.candidates
            record.selected = self._select(instance, drawn.patches, record)
            if record.selected is None:
                record.failure = "response"
                record.error = "; ".join(dict.fromkeys(c.error for c in drawn.candidates if c.error))
            else:
                record.model_patch = drawn.patches[record.selected]
                record.patch_format = drawn.candidates[record.selected].patch_format
        except LLMError as exc:
            record.failure = "provider"
            record.error = f"fatal: {exc}" if exc.fatal else str(exc)
        except BenchsmithError as exc:
            record.failure = record.failure or "environment"
            record.error = str(exc)
        if responses.exists():
            record.raw_responses = str(responses)

    def _select(self, instance: TaskInstance, patches: dict[int, str],
                record: GenerationRecord) -> int | None:
        method, candidates = self.options.method, record.candidates
        if method in ("zeroshot", "zeroshot-plus"):
            return 0 if 0 in patches else None
        if self.environments is None:
            raise BenchsmithError(f"{method} needs the instances' environments")
        record.failure = "environment"
        if method == "pass@k":
            chosen = pass_at_k(instance, self.options.mode, patches, candidates,
                               self.environments, self.work_dir / "oracle",
                               self.options.timeout_s, self.llm.label)
        else:
            record.failure = "provider"  # the judge is the model
            chosen = libro(self.llm, instance, patches, candidates, self.environments,
                           self.work_dir / "libro" / instance.instance_id, self.options.timeout_s)
        record.failure = None
        return chosen

    def _snapshot(self, instance: TaskInstance) -> RepoSnapshot:
        key = (instance.repo, instance.base_commit)
        with self._snapshot_lock:
            if key not in self._snapshots:
                self._snapshots[key] = RepoSnapshot.of(instance, self.sources, self.mirrors)
            return self._snapshots[key]


def _usage_into(record: GenerationRecord, usage: Usage) -> None:
    record.llm_calls, record.llm_cached_calls = usage.llm_calls, usage.llm_cached_calls
    record.llm_tokens, record.llm_cost_usd = usage.llm_tokens, usage.llm_cost_usd
    record.llm_latency_s = usage.llm_latency_s


def _summary(record: GenerationRecord) -> str:
    calls = f"{record.llm_calls} call(s), {record.llm_cached_calls} cached, ${record.llm_cost_usd:.4f}"
    if record.failure:
        return f"failed ({record.failure}): {record.error} [{calls}]"
    chosen = f", sample {record.selected}" if record.samples > 1 else ""
    return f"{record.patch_format} patch of {len(record.model_patch)} chars{chosen} [{calls}]"
