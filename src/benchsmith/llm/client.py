"""A configured model: provider + cache + prices. It is benchsmith's :class:`core.Model`
(``complete``) and answers chat calls with token, time and cost accounting (``chat``)."""

from __future__ import annotations

import threading
import time
from collections.abc import Iterator
from contextlib import contextmanager
from typing import Any

from benchsmith.llm.cache import CallCache, call_key
from benchsmith.llm.calls import CallParams, Completion, Message, RawCompletion, Usage
from benchsmith.llm.config import (
    AnthropicConfig,
    OpenAIConfig,
    ScriptedConfig,
    model_label,
)
from benchsmith.llm.prices import Prices

AnyConfig = OpenAIConfig | AnthropicConfig | ScriptedConfig


def make_provider(config: AnyConfig) -> Any:
    """The provider for `config`; the SDK behind it is imported only now."""
    if isinstance(config, ScriptedConfig):
        from benchsmith.llm.scripted import ScriptedProvider

        return ScriptedProvider(config.file)
    from benchsmith.llm.providers import AnthropicProvider, OpenAIProvider

    return OpenAIProvider(config) if isinstance(config, OpenAIConfig) else AnthropicProvider(config)


class LLM:
    """Calls one model through the cache; `usage` sums what every call of this object cost."""

    def __init__(self, config: AnyConfig, cache: CallCache | None = None,
                 prices: Prices | None = None, provider: Any = None) -> None:
        self.config = config
        self.label = model_label(config)
        self.cache = cache
        self.prices = prices or Prices.load()
        self._provider = provider
        self._lock = threading.Lock()
        self._scope = threading.local()
        self.usage = Usage()
        price = self.prices.of(config.type, config.model)
        self.priced = price is not None or isinstance(config, ScriptedConfig)

    @property
    def provider(self) -> Any:
        """The provider, made on first use (a re-run served by the cache needs none)."""
        with self._lock:
            if self._provider is None:
                self._provider = make_provider(self.config)
            return self._provider

    def check(self) -> None:
        """Make the provider now: a missing key or SDK fails here, before any work."""
        _ = self.provider

    def chat(self, messages: list[Message], params: CallParams | None = None) -> Completion:
        """One completion of `messages` (from the cache when this exact call was made before)."""
        params = params or CallParams()
        key, request = call_key(self.config.type, self.config.model, messages, params)
        if self.cache is not None and (hit := self.cache.get(key)) is not None:
            self._count(hit)
            return hit
        started = time.monotonic()
        try:
            raw: RawCompletion = self.provider.call(messages, params)
        except Exception:
            with self._lock:
                self.usage.failed_calls += 1
            if (scoped := getattr(self._scope, "usage", None)) is not None:
                scoped.failed_calls += 1
            raise
        completion = self._priced(raw, round(time.monotonic() - started, 3))
        if self.cache is not None:
            self.cache.put(key, self.config.type, self.config.model, request, completion)
        self._count(completion)
        return completion

    @contextmanager
    def metered(self) -> Iterator[Usage]:
        """Usage of the calls this thread makes inside the block (also counted in `usage`)."""
        outer = getattr(self._scope, "usage", None)
        self._scope.usage = Usage()
        try:
            yield self._scope.usage
        finally:
            inner = self._scope.usage
            self._scope.usage = outer
            if outer is not None:
                outer.merge(inner)

    def complete(self, prompt: str) -> str:
        """The answer to one user message (the :class:`benchsmith.core.Model` protocol)."""
        return self.chat([Message(role="user", content=prompt)]).text

    def _priced(self, raw: RawCompletion, latency_s: float) -> Completion:
        price = self.prices.of(self.config.type, self.config.model)
        cost = price.cost(raw.input_tokens, raw.output_tokens) if price else 0.0
        return Completion(text=raw.text, input_tokens=raw.input_tokens,
                          output_tokens=raw.output_tokens, latency_s=latency_s, cost_usd=cost,
                          finish_reason=raw.finish_reason)

    def _count(self, completion: Completion) -> None:
        with self._lock:
            self.usage.add(completion)
        if (scoped := getattr(self._scope, "usage", None)) is not None:
            scoped.add(completion)
