"""What one model call is and what it cost: messages in, completions out, typed."""

from __future__ import annotations

from typing import Literal

from pydantic import BaseModel, Field

from benchsmith.core import BenchsmithError


class LLMError(BenchsmithError):
    """A model call that failed for good, with a one-line message that never holds a key.

    `retryable` is True for failures of the service (rate limits, 5xx, timeouts, garbage) that
    a later run may not meet; False for a bad key, an unknown model or a rejected request.
    `fatal` when no later call can succeed either (a refused key, an unknown model).
    """

    def __init__(self, message: str, retryable: bool = False, fatal: bool = False) -> None:
        super().__init__(message)
        self.retryable = retryable
        self.fatal = fatal


class Message(BaseModel):
    """One chat message."""

    role: Literal["system", "user", "assistant"]
    content: str


class CallParams(BaseModel):
    """The parameters that decide a completion (all of them are part of the cache key).

    `sample` is never sent: it tells apart k samples drawn with the same prompt.
    """

    temperature: float = 0.0
    max_tokens: int = 4096
    sample: int = 0


class Completion(BaseModel):
    """One completion, its token counts, time and price; `cached` when served from the cache
    (then nothing was paid this time: `cost_usd` is what the original call cost)."""

    text: str
    input_tokens: int = 0
    output_tokens: int = 0
    latency_s: float = 0.0
    cost_usd: float = 0.0
    cached: bool = False
    finish_reason: str = ""


class Usage(BaseModel):
    """Model usage summed over calls: what this run paid (cache hits are free) and the hits."""

    llm_calls: int = 0
    llm_cached_calls: int = 0
    llm_tokens: int = 0
    llm_input_tokens: int = 0
    llm_output_tokens: int = 0
    llm_cost_usd: float = 0.0
    llm_latency_s: float = 0.0
    failed_calls: int = 0

    def add(self, completion: Completion) -> None:
        """Count one completion (a cache hit costs nothing now)."""
        if completion.cached:
            self.llm_cached_calls += 1
            return
        self.llm_calls += 1
        self.llm_input_tokens += completion.input_tokens
        self.llm_output_tokens += completion.output_tokens
        self.llm_tokens = self.llm_input_tokens + self.llm_output_tokens
        self.llm_cost_usd = round(self.llm_cost_usd + completion.cost_usd, 8)
        self.llm_latency_s = round(self.llm_latency_s + completion.latency_s, 3)

    def merge(self, other: Usage) -> None:
        """Add another usage to this one."""
        for name in type(self).model_fields:
            value = getattr(self, name) + getattr(other, name)
            setattr(self, name, round(value, 8) if isinstance(value, float) else value)


class RawCompletion(BaseModel):
    """What a provider answered, before pricing and caching."""

    text: str
    input_tokens: int = 0
    output_tokens: int = 0
    finish_reason: str = ""
    model: str = ""
    extra: dict[str, str] = Field(default_factory=dict)
