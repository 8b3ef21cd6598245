"""`benchsmith generate`: predictions (tests or fixes) from a language model with one of the
seed papers' baselines. The only command that reaches the LLM layer, and only with --model."""

from __future__ import annotations

from pathlib import Path
from typing import TYPE_CHECKING, Annotated, Any

import typer

from benchsmith.cli.aliases import instances_option
from benchsmith.cli.app import app, fail, invalid, out, read_input, say, warn
from benchsmith.cli.options import (
    TIMEOUT_S,
    InstanceIdsOpt,
    JobsOpt,
    MirrorsOpt,
    RetryFailedOpt,
    SourceOpt,
    TimeoutOpt,
    only_instances,
    parse_sources,
    resume,
    sandbox_options,
)
from benchsmith.core import BenchsmithError

if TYPE_CHECKING:
    from benchsmith.instance import TaskInstance
    from benchsmith.sandbox.config import SandboxConfig

_NEEDS_ENVIRONMENT = ("pass@k", "libro")


def _read_instances(path: Path) -> tuple[list[TaskInstance], list[str]]:
    from pydantic import ValidationError

    from benchsmith.harness.jsonl import read_records
    from benchsmith.instance import TaskInstance

    found: dict[str, TaskInstance] = {}
    problems: list[str] = []
    for where, record in read_records(path, "instances"):
        if isinstance(record, str):  # a line that is not JSON
            problems.append(f"{where}: {record}")
            continue
        try:
            instance = TaskInstance.model_validate(record)
        except (ValidationError, ValueError) as exc:
            problems.append(f"{where}: invalid instance: {invalid(exc)}")
            continue
        if instance.instance_id in found:
            problems.append(f"{where}: duplicate instance {instance.instance_id}: the first one is used")
        else:
            found[instance.instance_id] = instance
    return list(found.values()), problems


@app.command()
@instances_option("instances_file")
@sandbox_options
def generate(
    output: Annotated[Path, typer.Option("--out", help="Predictions file (JSONL), written instance by instance; an existing one is resumed.")],
    instances_file: Annotated[Path | None, typer.Argument(metavar="INSTANCES", show_default=False, help="Task instances (JSONL/JSON/Parquet, SWE-bench format), or --instances FILE.")] = None,
    model: Annotated[str | None, typer.Option("--model", help="PROVIDER:MODEL: openai:NAME (any OpenAI-compatible server), anthropic:NAME, scripted:FILE. Keys come from OPENAI_API_KEY / ANTHROPIC_API_KEY.")] = None,
    method: Annotated[str, typer.Option("--method", help="zeroshot (unified diff), zeroshot-plus (custom diff), pass@k (an evaluation oracle picks among --samples), libro (generated tests run and judged).")] = "zeroshot-plus",
    mode: Annotated[str, typer.Option("--mode", help="test: generate tests that reproduce the issue (SWT-bench); fix: generate a fix (SWE-bench).")] = "test",
    context: Annotated[str, typer.Option("--context", help="Files shown to the model: bm25 (retrieved for the issue) or oracle (those the gold patch touches).")] = "bm25",
    samples: Annotated[int | None, typer.Option("--samples", min=1, help="Samples per instance (default: 1; 5 for pass@k and libro).")] = None,
    base_url: Annotated[str | None, typer.Option("--base-url", help="The provider's URL (e.g. a local vLLM or llama.cpp server's http://HOST:PORT/v1).")] = None,
    temperature: Annotated[float | None, typer.Option("--temperature", min=0.0, help="Sampling temperature (default: 0; 0.7 with several samples).")] = None,
    context_tokens: Annotated[int, typer.Option("--context-tokens", min=0, help="Token budget of the code shown (files are cut between top-level statements).")] = 12000,
    max_tokens: Annotated[int, typer.Option("--max-tokens", min=16, help="Longest answer, in tokens.")] = 4096,
    max_cost: Annotated[float | None, typer.Option("--max-cost", min=0.0, help="Stop calling the model once the run has cost this many USD (the rest is recorded as unfinished).")] = None,
    cache: Annotated[Path | None, typer.Option("--cache", help="SQLite cache of model calls (default: BENCHSMITH_CACHE/llm.sqlite).")] = None,
    no_cache: Annotated[bool, typer.Option("--no-cache", help="Neither read nor write the cache.")] = False,
    request_timeout: Annotated[float, typer.Option("--request-timeout", min=1, help="Seconds one model request may take.")] = 120,
    retries: Annotated[int, typer.Option("--retries", min=0, help="Retries of a rate-limited, failed or timed-out request.")] = 4,
    jobs: JobsOpt = 1,
    timeout: TimeoutOpt = TIMEOUT_S,
    source: SourceOpt = None,
    mirrors: MirrorsOpt = None,
    ids: InstanceIdsOpt = None,
    retry_failed: RetryFailedOpt = False,
    *,
    sandbox: SandboxConfig,
) -> None:
    """Generate a prediction per instance with a language model; resumable, cached, costed."""
    from benchsmith.generation.models import METHODS

    if model is None:
        fail("generate needs a model: --model PROVIDER:MODEL (e.g. openai:gpt-4o-mini)")
    if method not in METHODS:
        fail(f"unknown method {method!r}: use one of {', '.join(METHODS)}")
    if mode not in ("test", "fix"):
        fail(f"unknown mode {mode!r}: use test or fix")
    if context not in ("bm25", "oracle"):
        fail(f"unknown context {context!r}: use bm25 or oracle")
    if method == "libro" and mode != "test":
        fail("libro generates tests: it needs --mode test")
    k = samples or (5 if method in _NEEDS_ENVIRONMENT else 1)
    if k > 1 and method not in _NEEDS_ENVIRONMENT:
        fail(f"{method} uses one sample; --samples is for pass@k and libro")
    sources = parse_sources(source)
    assert instances_file is not None
    instances = read_input(_read_instances, instances_file)
    wanted = only_instances(ids, [i.instance_id for i in instances])
    instances = [i for i in instances if wanted is None or i.instance_id in wanted]
    if not instances:
        fail(f"no usable instance in {instances_file}")
    llm = load_model(model, base_url, request_timeout, retries, None if no_cache else (cache or default_cache()))
    options = _options({"method": method, "mode": mode, "context": context, "samples": k,
                        "temperature": temperature if temperature is not None else (0.7 if k > 1 else 0.0),
                        "max_tokens": max_tokens, "context_tokens": context_tokens,
                        "max_cost_usd": max_cost, "timeout_s": timeout})
    _run(llm, options, output, sources, mirrors, sandbox, instances, timeout, jobs, retry_failed)


def default_cache() -> Path:
    """Where model calls are cached: BENCHSMITH_CACHE/llm.sqlite."""
    from benchsmith.harness.checkout import cache_dir

    return cache_dir() / "llm.sqlite"


def load_model(spec: str, base_url: str | None, timeout: float, retries: int,
               cache: Path | None) -> Any:
    """The configured model (an LLM), checked now; one error line when it cannot be used."""
    from benchsmith.llm import LLM, CallCache, Prices, parse_model

    try:
        config = parse_model(spec, base_url=base_url, timeout_s=timeout, max_retries=retries)
        llm = LLM(config, CallCache(cache) if cache else None, Prices.load())
        llm.check()  # a missing key or SDK: one line now, not one per instance
    except BenchsmithError as exc:
        fail(str(exc))
    if not llm.priced:
        warn(f"no price known for {llm.label}; its cost counts as 0 (see BENCHSMITH_PRICES)")
    return llm


def _options(values: dict[str, Any]) -> Any:
    from benchsmith.generation.models import GenerateOptions

    return GenerateOptions.model_validate(values)


def _run(llm: Any, options: Any, output: Path, sources: dict[str, str], mirrors: str | None,
         sandbox: SandboxConfig, instances: list[TaskInstance], timeout: float, jobs: int,
         retry_failed: bool) -> None:
    from benchsmith.generation.run import Generator

    environments = None
    if options.method in _NEEDS_ENVIRONMENT:
        from benchsmith.evaluation.environment import Environments

        missing = [i.instance_id for i in instances if not i.test]
        if missing:
            fail(f"{options.method} runs the instances' tests, but {missing[0]} has no test command")
        environments = Environments(sandbox, sources, mirrors, timeout, progress=say)
    generator = Generator(llm, options, output, sources, mirrors, environments, progress=say)
    say(f"generating with {llm.label}, method {options.method}, mode {options.mode}, "
        f"context {options.context}, {options.samples} sample(s); predictions: {output}")
    try:
        records = generator.run(instances, jobs=jobs, resume=resume(retry_failed))
    except BenchsmithError as exc:
        fail(str(exc))
    usage = llm.usage
    made = sum(1 for r in records if r.model_patch)
    out.print(f"{len(records)} prediction(s) made, {made} with a patch, "
              f"{len(records) - made} without; model calls: {usage.llm_calls} "
              f"(+{usage.llm_cached_calls} from the cache), {usage.llm_tokens} tokens, "
              f"${usage.llm_cost_usd:.4f}; written to {output}", highlight=False, soft_wrap=True)
    if records and all(r.failure == "provider" for r in records):
        fail("the model could not be called for any instance", code=1)
