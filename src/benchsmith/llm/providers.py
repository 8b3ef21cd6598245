"""The two HTTP providers, through their official SDKs (optional extras, imported lazily):
any OpenAI-compatible chat-completions server, and Anthropic's Messages API.

Both share one retry loop: rate limits (429), server errors (5xx), timeouts, lost connections
and garbled answers are retried with exponential backoff, waiting what ``Retry-After`` asks;
a bad key, an unknown model or a rejected request fail at once. Every error is one line, and
no message ever holds the key.
"""

from __future__ import annotations

import os
import time
from collections.abc import Callable
from typing import Any

from benchsmith.llm.calls import CallParams, LLMError, Message, RawCompletion
from benchsmith.llm.config import AnthropicConfig, OpenAIConfig

_SDK = {"openai": "openai", "anthropic": "anthropic"}
_RETRYABLE_STATUS = {408, 409, 425, 429}
Sleep = Callable[[float], None]


def _import(provider: str) -> Any:
    import importlib

    try:
        return importlib.import_module(_SDK[provider])
    except ImportError:
        raise LLMError(f"the {provider} provider needs its SDK: pip install "
                       f"'benchsmith[{provider}]'", fatal=True) from None


class _HTTPProvider:
    """What the two SDK-backed providers share: the key, the retry loop, error lines."""

    name = ""

    def __init__(self, config: OpenAIConfig | AnthropicConfig, sleep: Sleep = time.sleep) -> None:
        self.config = config
        self.model = config.model
        self.sleep = sleep
        self._key = os.environ.get(config.api_key_env, "")
        if not self._key:
            if config.base_url is None:
                raise LLMError(f"no API key for {self.name}: set {config.api_key_env}", fatal=True)
            self._key = "not-needed"  # local servers (vLLM, llama.cpp) accept any key
        self.sdk = _import(self.name)
        self.where = config.base_url or "the default endpoint"
        self.client = self._client()

    def _client(self) -> Any:
        raise NotImplementedError

    def _request(self, messages: list[Message], params: CallParams) -> RawCompletion:
        raise NotImplementedError

    def call(self, messages: list[Message], params: CallParams) -> RawCompletion:
        """One completion, retried while the service's failure is passing."""
        attempt = 0
        while True:
            try:
                return self._request(messages, params)
            except LLMError as exc:
                failure, wait = exc, self._backoff(attempt)
            except Exception as exc:  # the SDK's errors, classified below
                failure, wait = self._classify(exc, attempt)
            if not failure.retryable or attempt >= self.config.max_retries:
                if failure.retryable and attempt:
                    failure = LLMError(f"{failure} (after {attempt + 1} tries)", retryable=True)
                raise failure from None
            if wait > self.config.max_backoff_s:
                raise LLMError(f"{failure}; the server asks to wait {wait:.0f}s, more than "
                               f"{self.config.max_backoff_s:.0f}s", retryable=True) from None
            self.sleep(wait)
            attempt += 1

    def _backoff(self, attempt: int) -> float:
        return min(self.config.max_backoff_s, 0.5 * 2 ** attempt)

    def _classify(self, exc: Exception, attempt: int) -> tuple[LLMError, float]:
        sdk = self.sdk
        label = f"{self.name}:{self.model}"
        if isinstance(exc, sdk.APITimeoutError):
            return LLMError(f"{label}: no answer within {self.config.timeout_s:g}s from "
                            f"{self.where}", retryable=True), self._backoff(attempt)
        if isinstance(exc, sdk.APIConnectionError):
            return LLMError(f"{label}: cannot connect to {self.where}",
                            retryable=True), self._backoff(attempt)
        if isinstance(exc, sdk.APIStatusError):
            status = exc.status_code
            detail = self._scrub(_api_message(exc))
            if status in (401, 403):
                return LLMError(f"{label}: the API key was refused (HTTP {status}); check "
                                f"{self.config.api_key_env}", fatal=True), 0.0
            if status == 404:
                return LLMError(f"{label}: unknown model {self.model!r} at {self.where} "
                                f"(HTTP 404{': ' + detail if detail else ''})", fatal=True), 0.0
            if status in _RETRYABLE_STATUS or status >= 500:
                wait = _retry_after(exc.response.headers)
                return LLMError(f"{label}: HTTP {status} from {self.where}"
                                f"{': ' + detail if detail else ''}", retryable=True), (
                    self._backoff(attempt) if wait is None else wait)
            return LLMError(f"{label}: request rejected (HTTP {status}){': ' + detail if detail else ''}"), 0.0
        if isinstance(exc, sdk.APIError | ValueError):  # e.g. a 200 whose body is not JSON
            return LLMError(f"{label}: unreadable answer from {self.where}: "
                            f"{self._scrub(str(exc))[:200]}", retryable=True), self._backoff(attempt)
        raise exc

    def _scrub(self, text: str) -> str:
        text = " ".join(text.split())[:300]
        return text.replace(self._key, "***") if len(self._key) > 3 else text


def _api_message(exc: Any) -> str:
    body = getattr(exc, "body", None)
    if isinstance(body, dict):
        error = body.get("error", body)
        if isinstance(error, dict) and isinstance(error.get("message"), str):
            return str(error["message"])
    return ""


def _retry_after(headers: Any) -> float | None:
    """Seconds the server asks to wait (``retry-after-ms`` or ``Retry-After`` in seconds)."""
    for name, scale in (("retry-after-ms", 0.001), ("retry-after", 1.0)):
        value = headers.get(name) if headers is not None else None
        if value:
            try:
                return max(0.0, float(value) * scale)
            except ValueError:
                continue  # an HTTP date: fall back to our own backoff
    return None


def _garbled(label: str, what: str) -> LLMError:
    return LLMError(f"{label}: unreadable answer ({what})", retryable=True)


class OpenAIProvider(_HTTPProvider):
    """Chat completions on any OpenAI-compatible server."""

    name = "openai"

    def _client(self) -> Any:
        return self.sdk.OpenAI(api_key=self._key, base_url=self.config.base_url,
                               timeout=self.config.timeout_s, max_retries=0)

    def _request(self, messages: list[Message], params: CallParams) -> RawCompletion:
        response = self.client.chat.completions.create(
            model=self.model, messages=[m.model_dump() for m in messages],
            temperature=params.temperature, max_tokens=params.max_tokens)
        choices = getattr(response, "choices", None)
        if not choices or not hasattr(choices[0], "message"):
            raise _garbled(f"openai:{self.model}", "no choices")
        text = choices[0].message.content
        if not isinstance(text, str):
            raise _garbled(f"openai:{self.model}", "no message content")
        usage = getattr(response, "usage", None)
        return RawCompletion(text=text, input_tokens=getattr(usage, "prompt_tokens", 0) or 0,
                             output_tokens=getattr(usage, "completion_tokens", 0) or 0,
                             finish_reason=choices[0].finish_reason or "",
                             model=getattr(response, "model", "") or self.model)


class AnthropicProvider(_HTTPProvider):
    """Anthropic's Messages API (system messages go into its `system` field)."""

    name = "anthropic"

    def _client(self) -> Any:
        return self.sdk.Anthropic(api_key=self._key, base_url=self.config.base_url,
                                  timeout=self.config.timeout_s, max_retries=0)

    def _request(self, messages: list[Message], params: CallParams) -> RawCompletion:
        system = "\n\n".join(m.content for m in messages if m.role == "system")
        chat = [m.model_dump() for m in messages if m.role != "system"]
        extra = {"system": system} if system else {}
        # Recent SDKs dropped `temperature` from the signature; the API still reads it.
        response = self.client.messages.create(model=self.model, messages=chat,
                                               max_tokens=params.max_tokens,
                                               extra_body={"temperature": params.temperature},
                                               **extra)
        blocks = getattr(response, "content", None)
        if not isinstance(blocks, list):
            raise _garbled(f"anthropic:{self.model}", "no content")
        text = "".join(getattr(b, "text", "") for b in blocks if getattr(b, "type", "") == "text")
        usage = getattr(response, "usage", None)
        return RawCompletion(text=text, input_tokens=getattr(usage, "input_tokens", 0) or 0,
                             output_tokens=getattr(usage, "output_tokens", 0) or 0,
                             finish_reason=getattr(response, "stop_reason", "") or "",
                             model=getattr(response, "model", "") or self.model)
