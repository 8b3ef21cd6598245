"""What `benchsmith generate` writes: one prediction per instance in SWE-bench's format, plus
how it was made (method, samples, prompt version, context, model usage and cost)."""

from __future__ import annotations

from typing import Literal

from pydantic import BaseModel, Field

from benchsmith.core import Provenance
from benchsmith.generation.context import ContextKind
from benchsmith.generation.extract import PatchFormat

Method = Literal["zeroshot", "zeroshot-plus", "pass@k", "libro"]
METHODS: tuple[Method, ...] = ("zeroshot", "zeroshot-plus", "pass@k", "libro")
GenMode = Literal["test", "fix"]
# provider: the service failed (retried on resume); response: the answer held no usable patch;
# budget: the cost budget ran out (retried on resume); context: the repository could not be
# read; environment: the instance's environment could not be used (pass@k, libro)
FailureKind = Literal["provider", "response", "budget", "context", "environment"]
RETRIED_ON_RESUME: frozenset[str] = frozenset({"provider", "budget", "environment"})


class Candidate(BaseModel):
    """One sample: whether it held a patch, and what the selection learnt about it."""

    sample: int
    patch_format: PatchFormat | None = None
    chars: int = 0
    error: str = ""
    verdict: str = ""  # pass@k: the oracle's; libro: its cluster
    judged: bool | None = None  # libro: the model said its failure shows the issue


class GenerationRecord(BaseModel):
    """One line of the predictions file (extra fields are ignored by SWE-bench's tools)."""

    instance_id: str
    model_name_or_path: str
    model_patch: str = ""
    method: Method
    mode: GenMode
    model: str  # provider:model
    samples: int = 1
    selected: int | None = None  # the sample whose patch was kept
    candidates: list[Candidate] = Field(default_factory=list)
    patch_format: PatchFormat | None = None
    prompt_version: str = ""
    context: ContextKind
    context_files: list[str] = Field(default_factory=list)
    context_truncated: list[str] = Field(default_factory=list)
    context_tokens: int = 0
    raw_responses: str = ""  # file with every answer of the model for this instance
    llm_calls: int = 0
    llm_cached_calls: int = 0
    llm_tokens: int = 0
    llm_cost_usd: float = 0.0
    llm_latency_s: float = 0.0
    error: str = ""
    failure: FailureKind | None = None
    duration_s: float = 0.0
    provenance: Provenance | None = None


class GenerateOptions(BaseModel):
    """How a generation run works."""

    method: Method
    mode: GenMode = "test"
    context: ContextKind = "bm25"
    samples: int = 1
    temperature: float = 0.0
    max_tokens: int = 4096
    context_tokens: int = 12000  # budget for the code shown in the prompt
    max_cost_usd: float | None = None  # stop calling the model once the run has cost this
    timeout_s: float = 1800  # per test command (pass@k's oracle, libro's runs)
