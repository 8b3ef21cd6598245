"""Which model to call, one config per provider, discriminated by `type`; `--model` specs
such as ``openai:gpt-4o-mini``, ``anthropic:claude-3-5-haiku-latest`` or ``scripted:FILE``."""

from __future__ import annotations

from pathlib import Path
from typing import Annotated, Literal

from pydantic import BaseModel, ConfigDict, Field

from benchsmith.core import BenchsmithError


class _Config(BaseModel):
    model_config = ConfigDict(extra="forbid")

    timeout_s: float = 120.0
    """Seconds one HTTP request may take."""
    max_retries: int = 4
    """Retries after a rate limit (429), a server error (5xx), a timeout or a garbled answer."""
    max_backoff_s: float = 60.0
    """Longest wait between two tries (a longer Retry-After is a failure)."""


class OpenAIConfig(_Config):
    """Any OpenAI-compatible chat-completions server (OpenAI, vLLM, llama.cpp, ...)."""

    type: Literal["openai"] = "openai"
    model: str
    """The model name the server knows."""
    base_url: str | None = None
    """The server's URL up to ``/v1`` (default: OpenAI's, or ``OPENAI_BASE_URL``)."""
    api_key_env: str = "OPENAI_API_KEY"
    """The environment variable holding the key (keys are only ever read from there)."""


class AnthropicConfig(_Config):
    """Anthropic's Messages API."""

    type: Literal["anthropic"] = "anthropic"
    model: str
    """The model name, e.g. claude-3-5-haiku-latest."""
    base_url: str | None = None
    """The API's URL (default: Anthropic's, or ``ANTHROPIC_BASE_URL``)."""
    api_key_env: str = "ANTHROPIC_API_KEY"
    """The environment variable holding the key."""


class ScriptedConfig(_Config):
    """A deterministic model answering from a script file (offline runs and tests)."""

    type: Literal["scripted"] = "scripted"
    file: Path
    """The script: JSON or YAML, see :mod:`benchsmith.llm.scripted`."""

    @property
    def model(self) -> str:
        """The script's file name, as the model's name."""
        return self.file.stem


ModelConfig = Annotated[OpenAIConfig | AnthropicConfig | ScriptedConfig, Field(discriminator="type")]
PROVIDERS = ("openai", "anthropic", "scripted")


def parse_model(spec: str, base_url: str | None = None, timeout_s: float | None = None,
                max_retries: int | None = None) -> OpenAIConfig | AnthropicConfig | ScriptedConfig:
    """The config for a ``PROVIDER:MODEL`` spec; one-line BenchsmithError when it is malformed."""
    provider, sep, name = spec.partition(":")
    if not sep or not name.strip():
        raise BenchsmithError(f"invalid --model {spec!r}: expected PROVIDER:MODEL with a provider "
                              f"of {', '.join(PROVIDERS)} (e.g. openai:gpt-4o-mini)")
    knobs: dict[str, float | int] = {}
    if timeout_s is not None:
        knobs["timeout_s"] = timeout_s
    if max_retries is not None:
        knobs["max_retries"] = max_retries
    if provider == "openai":
        return OpenAIConfig(model=name, base_url=base_url, **knobs)  # type: ignore[arg-type]
    if provider == "anthropic":
        return AnthropicConfig(model=name, base_url=base_url, **knobs)  # type: ignore[arg-type]
    if provider == "scripted":
        if base_url:
            raise BenchsmithError("--base-url has no meaning for a scripted model")
        path = Path(name)
        if not path.is_file():
            raise BenchsmithError(f"script of the scripted model not found: {name}")
        return ScriptedConfig(file=path, **knobs)  # type: ignore[arg-type]
    raise BenchsmithError(f"unknown model provider {provider!r}: use one of {', '.join(PROVIDERS)}")


def model_label(config: OpenAIConfig | AnthropicConfig | ScriptedConfig) -> str:
    """``provider:model``, as predictions and the cache name a model."""
    return f"{config.type}:{config.model}"
